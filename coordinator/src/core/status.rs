//! What the coordinator tells about its jobs: status reports and metrics.
//!
//! A loaded job's status is computed from memory, with live progress from heartbeats and a
//! rate measured since this coordinator process took the job over; any other job in the
//! database is reported from its rows. Pending tasks are shown as *ready* or *blocked*
//! (derived, never stored). When nothing runs, the note says why: no worker connected, or
//! none with the memory the next task needs. Nothing here changes state.

use super::{Core, JobRuntime, Refusal};
use crate::db::TaskRow;
use crate::job_state::JobState;
use crate::task_state::TaskState;
use retro_pipeline::job_dir;
use retro_pipeline::stage::{human_bytes, task_capacity};
use retro_pipeline::JobGame;
use retro_proto as pb;
use std::collections::BTreeMap;
use std::sync::Arc;

impl Core {
    /// Status of one job (any job in the database).
    pub fn status(&self, id: u64) -> Result<pb::JobStatus, Refusal> {
        if let Some(job) = self.jobs.get(&id) {
            return Ok(self.job_status(job));
        }
        let row = self
            .db
            .read()
            .job(id)?
            .ok_or_else(|| Refusal::NotFound(format!("no job {id}")))?;
        let tasks = self.db.read().tasks(id)?;
        let positions: u64 = tasks.iter().map(|t| t.positions).sum();
        let done: u64 = tasks
            .iter()
            .filter(|t| t.state == TaskState::Done)
            .map(|t| t.positions)
            .sum();
        let elapsed_seconds = row.elapsed_seconds();
        let finished = tasks.iter().filter(|t| t.state == TaskState::Done).count();
        let (description, positions_solved) = match self.described(id, finished, || {
            (self.config.open_game)(&row.game, &row.definition)
        }) {
            Ok(d) => (d.description, d.positions_solved),
            // A game this binary cannot open: its definition as recorded.
            Err(_) => (describe(&row.game, &row.definition), 0),
        };
        Ok(pb::JobStatus {
            job_id: id,
            state: row.state.as_str().into(),
            description,
            // As for a loaded job: where it is on the coordinator's machine.
            job_dir: self.config.data.join(&row.dir).display().to_string(),
            tasks: Vec::new(),
            positions_done: done,
            positions,
            positions_per_second: 0.0,
            eta_seconds: -1.0,
            live_workers: self.live_workers() as u32,
            elapsed_seconds,
            note: row.note,
            positions_solved,
        })
    }

    /// Seconds from a loaded job's submission to its end (or now): a stopped job's as its
    /// database row has them, so that they read the same after a restart.
    fn elapsed_seconds(&self, job: &JobRuntime) -> f64 {
        if job.row.state == JobState::Running {
            return job.row.elapsed_seconds();
        }
        match self.db.read().job(job.row.id) {
            Ok(Some(row)) => row.elapsed_seconds(),
            _ => job.row.elapsed_seconds(),
        }
    }

    /// How job `id` is described and its positions solved so far as the published tables
    /// count them ([`job_dir::published_positions`], as a solve's summary counts them), the
    /// same whether the job is loaded or not; recounted from the database only when
    /// `finished` (its count of finished tasks) changed.
    fn described(
        &self,
        id: u64,
        finished: usize,
        game: impl FnOnce() -> anyhow::Result<Arc<dyn JobGame>>,
    ) -> anyhow::Result<Described> {
        let mut cache = self.described.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = cache.get(&id).filter(|d| d.finished == finished) {
            return Ok(d.clone());
        }
        let game = game()?;
        let d = Described {
            finished,
            description: format!("{}: {}", game.name(), game.describe()),
            positions_solved: job_dir::published_positions(&*game, &self.records(id)?),
        };
        cache.insert(id, d.clone());
        Ok(d)
    }

    /// The status of a loaded job: its tasks with live progress, the rate since this process
    /// took it over, and a note on why nothing runs when nothing does.
    fn job_status(&self, job: &JobRuntime) -> pb::JobStatus {
        let id = job.row.id;
        let mut tasks = Vec::new();
        let mut done = 0u64;
        for t in &job.tasks {
            let (mut ply, progress) = self.progress.get(&(id, t.key())).copied().unwrap_or((0, 0));
            let steps = || job.steps.values().filter(|s| s.stage == t.stage);
            let positions_done = match t.state {
                TaskState::Done => t.positions,
                TaskState::Running => progress.min(t.positions),
                // A split stage: the slices whose finish step is merged.
                TaskState::Stepping => steps()
                    .filter(|s| s.state == TaskState::Done && s.step.is_some_and(|(_, p)| p == 0))
                    .map(|s| s.positions)
                    .sum(),
                TaskState::Pending => 0,
            };
            if t.state == TaskState::Stepping {
                ply = steps()
                    .filter_map(|s| s.step.map(|(_, p)| p))
                    .max()
                    .unwrap_or(0);
            }
            done += positions_done;
            tasks.push(pb::TaskStatus {
                stage: t.stage as u32,
                name: t.name.clone(),
                state: shown_state(job, t).into(),
                attempt: t.attempt,
                worker_id: t.worker_id.unwrap_or(0),
                ply,
                positions_done,
                positions: t.positions,
                slices: job.stages[t.stage].slices.len() as u32,
            });
        }
        let positions: u64 = job.tasks.iter().map(|t| t.positions).sum();
        let finished = job
            .all_tasks()
            .filter(|t| t.state == TaskState::Done)
            .count();
        let positions_solved = self
            .described(id, finished, || Ok(job.game.clone()))
            .map_or(0, |d| d.positions_solved);
        // The rate counts only what this process saw solved; the elapsed time is the job's,
        // from submission to its end (or now), as recorded.
        let rate = done.saturating_sub(job.positions_at_start) as f64
            / job.started.elapsed().as_secs_f64().max(1e-3);
        let eta = if job.row.state == JobState::Done {
            0.0
        } else if rate > 0.0 {
            (positions - done) as f64 / rate
        } else {
            -1.0
        };
        let live = self.live_workers();
        let largest_capacity = self
            .workers
            .values()
            .filter(|w| w.last_seen.elapsed() < self.config.lease)
            .map(|w| task_capacity(w.memory_budget))
            .max()
            .unwrap_or(0);
        let smallest_ready = job
            .tasks
            .iter()
            .filter(|t| t.state == TaskState::Pending && job.ready(t.stage))
            .map(|t| job.memory[t.stage])
            .min();
        let note = if job.row.state == JobState::Running && live == 0 {
            "waiting for a worker: none is connected (start one with `worker --coordinator URL`)"
                .to_string()
        } else if job.row.state == JobState::Running
            && !job.all_tasks().any(|t| t.state == TaskState::Running)
            && smallest_ready.is_some_and(|need| need > largest_capacity)
        {
            format!(
                "waiting for a worker with a larger memory budget: the next task needs about {} to run, live workers offer at most {} (three quarters of --memory-budget)",
                human_bytes(smallest_ready.unwrap_or(0)),
                human_bytes(largest_capacity)
            )
        } else {
            job.row.note.clone()
        };
        pb::JobStatus {
            job_id: id,
            state: job.row.state.as_str().into(),
            description: format!("{}: {}", job.game.name(), job.game.describe()),
            job_dir: job.dir.display().to_string(),
            tasks,
            positions_done: done,
            positions,
            positions_per_second: rate,
            eta_seconds: eta,
            live_workers: live as u32,
            note,
            elapsed_seconds: self.elapsed_seconds(job),
            positions_solved,
        }
    }

    /// Every job in the database, oldest first.
    pub fn list(&self) -> Result<Vec<pb::JobStatus>, Refusal> {
        let ids: Vec<u64> = self.db.read().jobs()?.iter().map(|r| r.id).collect();
        ids.into_iter().map(|id| self.status(id)).collect()
    }

    /// Counts of tasks by state over all loaded jobs, for metrics.
    pub fn task_counts(&self) -> BTreeMap<String, u64> {
        let mut counts = BTreeMap::new();
        for job in self.jobs.values() {
            for t in job.all_tasks() {
                *counts.entry(shown_state(job, t).to_string()).or_insert(0) += 1;
            }
        }
        counts
    }

    /// Positions per second over running jobs.
    pub fn throughput(&self) -> f64 {
        self.jobs
            .values()
            .filter(|j| j.row.state == JobState::Running)
            .map(|j| self.job_status(j).positions_per_second)
            .sum()
    }
}

/// A job that is not loaded, from its recorded game and definition:
/// "musashi: board=BOARD25, max_browns=16".
fn describe(game: &str, definition: &serde_json::Value) -> String {
    format!("{game}: {}", retro_pipeline::job_dir::summarise(definition))
}

/// What a status report and the metrics call a task's state: its stored state, except that a
/// pending task is "ready" (a step, or a stage whose inputs are all done) or "blocked".
fn shown_state(job: &JobRuntime, t: &TaskRow) -> &'static str {
    match t.state {
        // A stopped job's waiting tasks wait for nothing: they show the job's state.
        TaskState::Pending if job.row.state != JobState::Running => job.row.state.as_str(),
        TaskState::Pending if t.step.is_some() || job.ready(t.stage) => READY,
        TaskState::Pending => BLOCKED,
        state => state.as_str(),
    }
}

/// The shown state of a pending task that can be given out now.
const READY: &str = "ready";
/// The shown state of a pending stage that reads a stage not done yet.
const BLOCKED: &str = "blocked";

/// What a status report says of a job that takes its game or its slice records to know.
#[derive(Clone)]
pub(super) struct Described {
    /// Finished tasks when this was worked out.
    finished: usize,
    /// "musashi: BOARD33, up to 6 browns".
    description: String,
    /// Positions of the finished slices as the published tables count them.
    positions_solved: u64,
}
