//! Toy games, small enough that a test can solve them by brute force, yet with everything the
//! engine must handle: several stages and slices, moves between slices, captures by both sides
//! into earlier stages, symmetry, cycles and draws.
//!
//! They are the worked examples of how to add a game: read [`ring::RingHop`] first.

#![warn(missing_docs)]

pub mod command_line;
pub mod job;
pub mod ring;

pub use ring::{RingHop, RingValue};
