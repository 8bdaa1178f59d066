//! Game-agnostic retrograde analysis.
//!
//! A game describes its position space to the engine through the [`Game`] trait: positions are
//! grouped into *slices* (dense arrays, the unit of work and of storage), slices into *stages*
//! (the slices that must be solved together because moves connect them both ways), and stages
//! depend only on earlier stages. The [`kernel`] solves one stage given the final values of the
//! stages it depends on, visiting only the frontier of each ply.
//!
//! Values are one byte per position and side to move; see [`value`].

#![warn(missing_docs)]

pub mod atomic;
mod frontier;
pub mod game;
pub mod kernel;
pub mod meter;
mod position_rules;
pub mod recurrence;
pub mod superstep;
pub mod value;
pub mod workspace;

pub use atomic::ByteArray;
pub use game::{DefenderMove, Game, SliceId, Stage};
pub use kernel::{solve_stage, FinalValues, KernelError, PlyReport, SolvedSlice, StageTimes};
pub use meter::{DiskIo, SliceCost};
pub use value::{Side, Value, NON_CANONICAL, UNRESOLVED, VALUE_MAX};
pub use workspace::Workspace;
