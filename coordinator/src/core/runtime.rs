//! A job in memory, and how a task is named.
//!
//! The database is the truth; a [`JobRuntime`] mirrors one running job's rows (its tasks, the
//! steps of its split stages, their files) next to what is costly to rebuild per request: the
//! game, its stages and their memory estimates. Every change is written to the database
//! first and then mirrored here with [`JobRuntime::set_task`], so the two never disagree.
//!
//! A task is named by a [`TaskKey`]: its stage, and for a step of a split stage its `(slot,
//! ply)`. Requests name tasks the same way on the wire (stage and optional step).

use super::{Core, Refusal};
use crate::db::{JobRow, StepFileRow, TaskRow};
use crate::job_state::JobState;
use crate::task_state::TaskState;
use retro_engine::Stage;
use retro_pipeline::{JobGame, Storage};
use retro_proto as pb;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

/// Which task: a stage, or a step `(slot, ply)` of a stage.
pub(crate) type TaskKey = (usize, Option<(u32, u32)>);

impl TaskRow {
    /// This task's key.
    pub(crate) fn key(&self) -> TaskKey {
        (self.stage, self.step)
    }
}

/// A job in memory: its row, its game, and a mirror of its task rows.
pub(crate) struct JobRuntime {
    /// The job's row (state, definition, directory relative to the data directory).
    pub row: JobRow,
    /// The game the job solves, rebuilt from its definition.
    pub game: std::sync::Arc<dyn JobGame>,
    /// The game's stages, by index: what each task solves and which stages it reads.
    pub stages: Vec<Stage>,
    /// Absolute job directory.
    pub dir: PathBuf,
    /// Where the job's shards, tables and step files are: its directory, or the object store
    /// location of its row (`row.storage`).
    pub storage: std::sync::Arc<dyn Storage>,
    /// The task of every stage, by stage index.
    pub tasks: Vec<TaskRow>,
    /// The step tasks of split stages, by (stage, slot, ply).
    pub steps: BTreeMap<(usize, u32, u32), TaskRow>,
    /// The files of accepted steps that later steps still read.
    pub step_files: Vec<StepFileRow>,
    /// The least memory each stage's task needs, out of core if need be (see
    /// `retro_pipeline::stage::stage_min_memory`).
    pub memory: Vec<u64>,
    /// When this coordinator process started (or resumed) the job, and how many positions
    /// were done then: the base of positions/s and ETA.
    pub started: Instant,
    /// See `started`.
    pub positions_at_start: u64,
}

impl JobRuntime {
    /// Mirrors [`crate::db::Db::set_job_state`]: the job's state, and its finish time (none
    /// while it runs), which status reports count its elapsed time to.
    pub(super) fn set_state(&mut self, state: JobState) {
        self.row.state = state;
        self.row.finished_ms = (state != JobState::Running).then(crate::db::now_ms);
    }

    /// Whether every stage `stage` reads is done.
    pub(super) fn ready(&self, stage: usize) -> bool {
        self.stages[stage]
            .depends_on
            .iter()
            .all(|&d| self.tasks[d].state == TaskState::Done)
    }

    /// The task `key`, if it exists.
    pub(crate) fn task(&self, key: TaskKey) -> Option<&TaskRow> {
        match key {
            (stage, None) => self.tasks.get(stage),
            (stage, Some((slot, ply))) => self.steps.get(&(stage, slot, ply)),
        }
    }

    /// Stores `task` (a stage's or a step's) in memory.
    pub(crate) fn set_task(&mut self, task: TaskRow) {
        match task.step {
            None => {
                let stage = task.stage;
                self.tasks[stage] = task;
            }
            Some((slot, ply)) => {
                self.steps.insert((task.stage, slot, ply), task);
            }
        }
    }

    /// Every task: stages, then steps.
    pub(super) fn all_tasks(&self) -> impl Iterator<Item = &TaskRow> {
        self.tasks.iter().chain(self.steps.values())
    }

    /// Positions (both sides) of the stages that are done.
    pub(super) fn positions_done(&self) -> u64 {
        self.tasks
            .iter()
            .filter(|t| t.state == TaskState::Done)
            .map(|t| t.positions)
            .sum()
    }
}

impl Core {
    /// The task `key` in the loaded job `id` (NOT_FOUND / INVALID_ARGUMENT otherwise).
    pub(super) fn task(&self, id: u64, key: TaskKey) -> Result<TaskRow, Refusal> {
        let job = self
            .jobs
            .get(&id)
            .ok_or_else(|| Refusal::NotFound(format!("job {id} is not running here")))?;
        job.task(key).cloned().ok_or_else(|| {
            Refusal::InvalidArgument(match key {
                (stage, None) => format!("job {id} has no stage {stage}"),
                (stage, Some((slot, ply))) => {
                    format!("job {id} has no step (slot {slot}, ply {ply}) of stage {stage}")
                }
            })
        })
    }
}

/// The key of the task a request names: its stage and, for a step, the step.
pub(super) fn task_key(stage: u32, step: Option<pb::Step>) -> TaskKey {
    (stage as usize, step.map(|s| (s.slot, s.ply)))
}
