//! SIMPEI (シンペイ), the 2006 GPCC problem: a two-player game on two "worlds" of holes, a
//! 4x4 upper world and a 3x3 lower world, with placement, movement between the worlds,
//! reversi-like clipping whose clipped pieces the mover puts back anywhere, and "exactly
//! three in a row" wins. The rules are `../shared/spec/simpei.md`; this crate is their one
//! implementation:
//!
//! * [`board`]: the 25 holes, which holes a piece moves between, the lines inside a world, the
//!   8 symmetries;
//! * [`position`]: a position (both colours' holes and the side to move) and its notation;
//! * [`rules`]: rows, clipping, and every legal move with where clipped pieces are put;
//! * [`command_line`]: the `--game` value and the options that choose a reading of the rules;
//! * [`analysis`]: the analysis the paper reports, from solved tables, and [`report`] that
//!   writes it as Markdown;
//! * [`explore`]: positions looked up in solved tables (`retro probe`, `retro report`);
//! * [`index`]: the layers by piece count, a dense index of each, and canonical positions
//!   under the symmetries (the published Table 1 counts them).

#![warn(missing_docs)]

pub mod analysis;
pub mod board;
pub mod command_line;
pub mod explore;
pub mod game;
pub mod index;
pub mod job;
pub mod position;
pub mod probe;
pub mod report;
pub mod rules;

pub use board::Hole;
pub use position::{Colour, Position, PositionError};
