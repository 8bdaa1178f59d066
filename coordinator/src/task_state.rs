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
//!
//! Every arrow above is a [`Transition`], and [`TaskRow::apply`] is the one place that moves a
//! task along one: it checks the state the arrow starts from, refuses any other with a typed
//! [`IllegalTransition`], and makes the arrow's side effects (attempt, worker). The named
//! methods ([`TaskRow::assign`], [`TaskRow::release`], ...) only name the arrows for callers.
//! A state is text only in the database (see `db.rs`, which keeps the stored text unchanged so
//! that existing databases load).

use crate::db::TaskRow;

/// Where a task is in its life (see the module documentation for the arrows between them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// Waiting to be given out (ready or blocked, depending on the stages it reads).
    Pending,
    /// Given to a worker under a lease, as the attempt `TaskRow::attempt`.
    Running,
    /// Merged into the final tables (a stage or a finish step), or its files recorded (a step
    /// of ply 1 or more).
    Done,
    /// A split stage: solved by its step tasks, which live beside it.
    Stepping,
}

impl std::fmt::Display for TaskState {
    /// The stored text (for messages and logs; see `db.rs`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An arrow of the life of a task: what may happen to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// pending → running: the task goes to this worker as a new attempt (`attempt += 1`).
    Assign(u64),
    /// running → pending: the current attempt is abandoned (lease expired, worker failed,
    /// shard damaged); a later one starts afresh.
    Release,
    /// running → done: the current attempt's results are merged.
    Finish,
    /// done → pending: a final table of the task was found damaged; solve it again.
    Reopen,
    /// pending → stepping: the stage is solved by step tasks from now on, as a new try
    /// (`attempt += 1`; the try names the step directories, so a late worker of an earlier try
    /// never touches the files of this one).
    Split,
    /// stepping → done: every slice's finish step is merged.
    FinishSteps,
    /// stepping → pending: a step file is damaged; the stage starts again.
    Restart,
}

impl Transition {
    /// The state this arrow starts from and the state it ends in.
    pub const fn states(self) -> (TaskState, TaskState) {
        use TaskState::*;
        match self {
            Transition::Assign(_) => (Pending, Running),
            Transition::Release => (Running, Pending),
            Transition::Finish => (Running, Done),
            Transition::Reopen => (Done, Pending),
            Transition::Split => (Pending, Stepping),
            Transition::FinishSteps => (Stepping, Done),
            Transition::Restart => (Stepping, Pending),
        }
    }

    /// The arrow as a verb, for messages ("cannot assign task ...").
    fn verb(self) -> &'static str {
        match self {
            Transition::Assign(_) => "assign",
            Transition::Release => "release",
            Transition::Finish => "finish",
            Transition::Reopen => "reopen",
            Transition::Split => "split",
            Transition::FinishSteps => "finish the steps of",
            Transition::Restart => "restart",
        }
    }
}

/// A transition refused because the task is not in the state its arrow starts from: a bug or
/// a report out of turn, never applied half-way (the task is left as it was).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot {} task {task} in state {from} (expected {})", .transition.verb(), .transition.states().0)]
pub struct IllegalTransition {
    /// The task's name.
    pub task: String,
    /// The refused arrow.
    pub transition: Transition,
    /// The state the task is in.
    pub from: TaskState,
}

impl TaskRow {
    /// Moves the task along `transition`: the one place a task changes state. Refused, with
    /// the task unchanged, unless the task is in the state the arrow starts from.
    pub fn apply(&mut self, transition: Transition) -> Result<(), IllegalTransition> {
        let (from, to) = transition.states();
        if self.state != from {
            return Err(IllegalTransition {
                task: self.name.clone(),
                transition,
                from: self.state,
            });
        }
        match transition {
            Transition::Assign(worker) => {
                self.attempt += 1;
                self.worker_id = Some(worker);
            }
            Transition::Release | Transition::Reopen => self.worker_id = None,
            Transition::Split => self.attempt += 1,
            Transition::Finish | Transition::FinishSteps | Transition::Restart => {}
        }
        self.state = to;
        Ok(())
    }

    /// pending → running: the task goes to `worker` as a new attempt.
    pub fn assign(&mut self, worker: u64) -> Result<(), IllegalTransition> {
        self.apply(Transition::Assign(worker))
    }

    /// running → pending: the current attempt is abandoned; a later one starts afresh.
    pub fn release(&mut self) -> Result<(), IllegalTransition> {
        self.apply(Transition::Release)
    }

    /// running → done: the current attempt's results are merged.
    pub fn finish(&mut self) -> Result<(), IllegalTransition> {
        self.apply(Transition::Finish)
    }

    /// done → pending: a final table of the task was found damaged; solve it again.
    pub fn reopen(&mut self) -> Result<(), IllegalTransition> {
        self.apply(Transition::Reopen)
    }

    /// pending → stepping: the stage is solved by step tasks from now on, as a new try.
    pub fn split(&mut self) -> Result<(), IllegalTransition> {
        self.apply(Transition::Split)
    }

    /// stepping → done: every slice's finish step is merged.
    pub fn finish_steps(&mut self) -> Result<(), IllegalTransition> {
        self.apply(Transition::FinishSteps)
    }

    /// stepping → pending: a step file is damaged; the stage starts again.
    pub fn restart(&mut self) -> Result<(), IllegalTransition> {
        self.apply(Transition::Restart)
    }

    /// Whether the task is running as `attempt` on `worker`.
    pub fn held_by(&self, worker: u64, attempt: u32) -> bool {
        self.state == TaskState::Running
            && self.attempt == attempt
            && self.worker_id == Some(worker)
    }

    /// Whether `attempt` on `worker` is the attempt whose results were merged (a repeated
    /// report of it is answered as merged, not refused).
    pub fn merged_from(&self, worker: u64, attempt: u32) -> bool {
        self.state == TaskState::Done && self.attempt == attempt && self.worker_id == Some(worker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATES: [TaskState; 4] = [
        TaskState::Pending,
        TaskState::Running,
        TaskState::Done,
        TaskState::Stepping,
    ];

    const TRANSITIONS: [Transition; 7] = [
        Transition::Assign(7),
        Transition::Release,
        Transition::Finish,
        Transition::Reopen,
        Transition::Split,
        Transition::FinishSteps,
        Transition::Restart,
    ];

    fn task() -> TaskRow {
        TaskRow {
            stage: 3,
            step: None,
            name: "browns=3".into(),
            state: TaskState::Pending,
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
        assert_eq!(t.state, TaskState::Done);
        assert!(t.restart().is_err());
    }

    #[test]
    fn every_illegal_transition_is_refused_with_a_typed_error_and_changes_nothing() {
        let mut refused = 0;
        for state in STATES {
            for transition in TRANSITIONS {
                let mut t = task();
                t.state = state;
                t.attempt = 4;
                t.worker_id = Some(5);
                let before = t.clone();
                let (from, to) = transition.states();
                let result = t.apply(transition);
                if state == from {
                    assert_eq!(result, Ok(()), "{transition:?} from {state}");
                    assert_eq!(t.state, to);
                } else {
                    refused += 1;
                    let err = result.expect_err("an illegal transition is refused");
                    assert_eq!(
                        err,
                        IllegalTransition {
                            task: "browns=3".into(),
                            transition,
                            from: state,
                        }
                    );
                    assert_eq!(t, before, "a refused {transition:?} changes nothing");
                    assert!(
                        err.to_string()
                            .contains(&format!("in state {state} (expected {from})")),
                        "{err}"
                    );
                }
            }
        }
        // Each transition starts from exactly one of the four states.
        assert_eq!(refused, TRANSITIONS.len() * (STATES.len() - 1));
    }
}
