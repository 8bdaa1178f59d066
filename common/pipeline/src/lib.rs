//! What every process of a solve job agrees on.
//!
//! The in-process driver (`retro solve --in-process`), the coordinator and the workers do the
//! same things to a job directory; they do them through this crate so that there is one
//! implementation of each:
//!
//! * [`definition`]: which game and board a job solves, as recorded in manifests and tasks.
//! * [`job_dir`]: creating, recognising and checking a job directory (resume, damaged files).
//! * [`stage`]: solving one stage and encoding its slice tables and manifest records.
//! * [`counts`]: the count table from the manifest's histograms.
//! * [`steps`]: the state and message files of a stage solved in supersteps.
//! * [`storage`]: the storage every process sees (a local or shared directory today).
//! * [`process`]: what the commands share when they start (logging, files named by flags).

#![warn(missing_docs)]

pub mod counts;
pub mod definition;
pub mod job_dir;
pub mod process;
pub mod stage;
pub mod steps;
pub mod storage;

pub use definition::{definition, game_from_definition, game_of, grows_into};
pub use stage::{encode_stage, EncodedSlice, Finals};
pub use storage::{LocalStorage, Storage};

/// The subdirectory of a job directory where out-of-core stages keep their scratch files
/// (unlinked as soon as created: it stays empty to the eye).
pub const SCRATCH: &str = "scratch";

/// File name of the count table written next to the tables when a job completes.
pub const COUNTS_FILE: &str = "counts.csv";
