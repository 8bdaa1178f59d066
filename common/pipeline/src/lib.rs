//! What every process of a solve job agrees on.
//!
//! The in-process driver (`retro solve --in-process`), the coordinator and the workers do the
//! same things to a job directory; they do them through this crate so that there is one
//! implementation of each:
//!
//! * [`game`]: the game boundary — what a job records of a game, and the solvers that turn a
//!   game into a [`JobGame`] the rest of the system handles without naming it.
//! * [`choice`]: the game boundary on the command line — `--game` values and game options.
//! * [`explore`]: the game boundary for reading solved tables — positions in a game's
//!   notation, looked up and explained ([`Explore`]).
//! * [`job_dir`]: creating, recognising and checking a job directory (resume, damaged files).
//! * [`checkpoint`]: a stage's state between plies, saved in the job directory so that a
//!   killed stage resumes at its last checkpoint.
//! * [`stage`]: solving one stage and encoding its slice tables and manifest records.
//! * [`steps`]: the state and message files of a stage solved in supersteps.
//! * [`lock`]: one writer per directory (an OS file lock that dies with its process).
//! * [`storage`]: the storage every process sees (a local or shared directory today).
//! * [`process`]: what the commands share when they start (logging, files named by flags).

#![warn(missing_docs)]

pub mod checkpoint;
pub mod choice;
pub mod explore;
pub mod game;
pub mod job_dir;
pub mod lock;
pub mod log_file;
pub mod process;
pub mod stage;
pub mod steps;
pub mod storage;

pub use checkpoint::StageCheckpoints;
pub use choice::{ChosenOptions, GameChoice, GameOption};
pub use explore::{
    Explore, Extreme, ExtremeList, Extremes, LookupError, Probe, Query, StoredValues,
};
pub use game::{
    GameRules, JobGame, OpenGame, ScoreMargin, Solved, Start, StartPosition, WinDrawLoss,
};
pub use stage::{encode_stage, EncodedSlice, FinalSection, FinalSlice, Finals};
pub use storage::{LocalStorage, Storage};

/// The subdirectory of a job directory where out-of-core stages keep their scratch files
/// (unlinked as soon as created: it stays empty to the eye).
pub const SCRATCH: &str = "scratch";

/// File name of the count table written next to the tables when a job completes.
pub const COUNTS_FILE: &str = "counts.csv";
