//! The life of a task, with every transition spelled out.
//!
//! ```text
//!            assign (attempt += 1)            finish (shards verified and merged)
//!  pending ────────────────────────► running ─────────────────────────────────► done
//!     ▲                                 │                                          │
//!     └──── release: lease expired, ────┘                                          │
//!           worker failed (retryable),                                             │
//!           shard damaged                                                          │
//!     ▲                                                                            │
//!     └──────────────────── reopen: final table found damaged ─────────────────────┘
//! ```
//!
//! A stage solved in supersteps does not run as one task: it is *split* into step tasks (one
//! per slice and ply, each with the life above), and is done when the finish steps of all its
//! slices are merged. A step that finds an input of an earlier step damaged *restarts* it.
//!
//! ```text
//!            split (a new try: attempt += 1;              finish steps all merged
//!                   steps of ply 1 created)
//!  pending ───────────────────────────────► stepping ──────────────────────────► done
//!     ▲                                         │
//!     └───────── restart: a step file damaged ──┘
//! ```
//!
//! A pending task is *ready* when every stage it depends on is done, *blocked* otherwise; that
//! is derived, not stored. The attempt number is the fencing token: only the worker holding the
//! current attempt of a running task may complete it.

use crate::db::TaskRow;
use anyhow::{bail, Result};

/// Stored state: waiting to be given out.
pub const PENDING: &str = "pending";
/// Stored state: given to a worker under a lease.
pub const RUNNING: &str = "running";
/// Stored state: merged into the final tables.
pub const DONE: &str = "done";
/// Stored state of a stage: solved by its step tasks.
pub const STEPPING: &str = "stepping";

impl TaskRow {
    /// pending → running: the task goes to `worker` as a new attempt.
    pub fn assign(&mut self, worker: u64) -> Result<()> {
        self.expect(PENDING, "assign")?;
        self.state = RUNNING.into();
        self.attempt += 1;
        self.worker_id = Some(worker);
        Ok(())
    }

    /// running → pending: the current attempt is abandoned; a later one starts afresh.
    pub fn release(&mut self) -> Result<()> {
        self.expect(RUNNING, "release")?;
        self.state = PENDING.into();
        self.worker_id = None;
        Ok(())
    }

    /// running → done: the current attempt's shards are merged.
    pub fn finish(&mut self) -> Result<()> {
        self.expect(RUNNING, "finish")?;
        self.state = DONE.into();
        Ok(())
    }

    /// done → pending: a final table of the task was found damaged; solve it again.
    pub fn reopen(&mut self) -> Result<()> {
        self.expect(DONE, "reopen")?;
        self.state = PENDING.into();
        self.worker_id = None;
        Ok(())
    }

    /// pending → stepping: the stage is solved by step tasks from now on, as a new try
    /// (`attempt += 1`; the try names the step directories, so a late worker of an earlier
    /// try never touches the files of this one).
    pub fn split(&mut self) -> Result<()> {
        self.expect(PENDING, "split")?;
        self.attempt += 1;
        self.state = STEPPING.into();
        Ok(())
    }

    /// stepping → done: every slice's finish step is merged.
    pub fn finish_steps(&mut self) -> Result<()> {
        self.expect(STEPPING, "finish the steps of")?;
        self.state = DONE.into();
        Ok(())
    }

    /// stepping → pending: a step file is damaged; the stage starts again.
    pub fn restart(&mut self) -> Result<()> {
        self.expect(STEPPING, "restart")?;
        self.state = PENDING.into();
        Ok(())
    }

    /// Whether the task is running as `attempt` on `worker`.
    pub fn held_by(&self, worker: u64, attempt: u32) -> bool {
        self.state == RUNNING && self.attempt == attempt && self.worker_id == Some(worker)
    }

    /// Whether `attempt` on `worker` is the attempt whose results were merged (a repeated
    /// report of it is answered as merged, not refused).
    pub fn merged_from(&self, worker: u64, attempt: u32) -> bool {
        self.state == DONE && self.attempt == attempt && self.worker_id == Some(worker)
    }

    fn expect(&self, state: &str, transition: &str) -> Result<()> {
        if self.state != state {
            bail!(
                "cannot {transition} task {} in state {} (expected {state})",
                self.name,
                self.state
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> TaskRow {
        TaskRow {
            stage: 3,
            step: None,
            name: "browns=3".into(),
            state: PENDING.into(),
            attempt: 0,
            worker_id: None,
            failures: 0,
            positions: 10,
        }
    }

    #[test]
    fn attempts_count_up_and_fence_old_holders() {
        let mut t = task();
        t.assign(7).unwrap();
        assert!(t.held_by(7, 1));
        t.release().unwrap();
        assert!(!t.held_by(7, 1));
        t.assign(8).unwrap();
        assert_eq!(t.attempt, 2);
        assert!(!t.held_by(7, 1), "the first attempt is fenced");
        t.finish().unwrap();
        assert!(!t.held_by(8, 2), "a done task is held by nobody");
        assert!(t.merged_from(8, 2), "its merged attempt is known");
        assert!(!t.merged_from(7, 1) && !t.merged_from(8, 1));
        assert!(t.finish().is_err());
        assert!(t.assign(9).is_err());
        t.reopen().unwrap();
        t.assign(9).unwrap();
        assert_eq!(t.attempt, 3);
    }

    #[test]
    fn a_split_stage_is_done_by_its_steps_or_starts_again() {
        let mut t = task();
        t.split().unwrap();
        assert!(
            t.assign(1).is_err(),
            "a split stage is never given out whole"
        );
        assert_eq!(t.attempt, 1, "the first try");
        t.restart().unwrap();
        t.split().unwrap();
        assert_eq!(t.attempt, 2, "a restarted stage is a new try");
        t.finish_steps().unwrap();
        assert_eq!(t.state, DONE);
        assert!(t.restart().is_err());
    }
}
