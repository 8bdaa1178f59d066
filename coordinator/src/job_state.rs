//! The life of a job.
//!
//! ```text
//!            every task done (count table, final manifest)
//!  running ───────────────────────────────────────────────► done
//!     │  │
//!     │  └── a task failed for good (not retryable, or too often) ──► failed
//!     └───── cancelled by a client ─────────────────────────────────► cancelled
//! ```
//!
//! Only a running job's tasks are given out. The embedded solve (`retro solve`) brings its own
//! job back to running when it is run again: a failed or cancelled one to carry on, a done one
//! to check its tables again (a damaged table is solved again). A job's state is text only in
//! the database (see `db.rs`) and in status reports.

/// Where a job is in its life (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobState {
    /// Its tasks are being given out, solved and merged.
    Running,
    /// Every table is written and checked; the count table and the manifest are final.
    Done,
    /// Stopped by a client; nothing more is given out.
    Cancelled,
    /// A task failed for good; the note says which and why.
    Failed,
}

impl std::fmt::Display for JobState {
    /// The stored text (for messages and logs; see `db.rs`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
