//! Game-agnostic retrograde analysis.
//!
//! A game describes its position space to the engine through the [`Game`] trait: positions are
//! grouped into *slices* (dense arrays, the unit of work and of storage), slices into *stages*
//! (the slices that must be solved together because moves connect them both ways), and stages
//! depend only on earlier stages. The propagation rules ([`rules`]) are defined once and driven
//! by two kernels: [`kernel`] solves one stage at a time (in memory or out of core), visiting
//! only the frontier of each ply; [`superstep`] solves one slice's ply at a time, so that a
//! stage can be shared by workers.
//!
//! Values are one byte per position and side to move: win, draw or loss with the distance to
//! the end; see [`value`]. (While a stage is solved on compact arrays they are not stored at all
//! until its end: see [`rules`] and the value log.)

#![warn(missing_docs)]

pub mod atomic;
mod bulk;
pub mod checkpoint;
mod distinct;
mod frontier;
pub mod game;
pub mod gaps;
pub mod kernel;
pub mod largest_first;
pub mod margin;
pub mod margin_graph;
pub mod margin_steps;
pub mod meter;
pub mod recurrence;
mod rules;
pub mod spare_maps;
pub mod steps;
pub mod superstep;
pub mod value;
mod value_log;
pub mod workspace;

pub use atomic::{ByteArray, ScratchError};
pub use game::{BulkPlan, Game, Move, Share, Side, SliceId, Stage};
pub use kernel::{
    compact_workspace_slice_bytes, solve_stage, solve_stage_into, FinalValues, KernelError,
    NoFinals, PlyReport, SliceSink, SolvedSlice, StageTimes,
};
pub use meter::{DiskIo, SliceCost};
pub use steps::{Step, StepTimes};
pub use value::{Outcome, Value};
pub use workspace::Workspace;
