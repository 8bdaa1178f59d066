//! Which task a polling worker gets.
//!
//! Only tasks of running jobs that fit the worker's memory budget are candidates: pending
//! steps of split stages, and pending stages whose inputs are all done. Steps go first: the
//! lowest stage, then the oldest job, then the lowest ply; among equals, a step whose slice
//! state this worker wrote (it still holds it in memory). Then stages: those reading most of
//! what this worker computed itself (it still holds those values too), then the oldest job,
//! then the lowest stage. Ready stages large enough to split are split before choosing
//! (`barrier.rs`). The chosen task is assigned as a new attempt under a fresh lease, and its
//! message names the final tables it reads.

use super::{Core, Refusal, TaskKey};
use crate::job_state::JobState;
use crate::merge;
use crate::steps;
use crate::task_state::TaskState;
use retro_pipeline::stage::{step_memory, task_capacity};
use retro_proto as pb;
use tracing::info;

impl Core {
    /// Gives `worker` the best ready task, if any: a step of a stage already split (lowest
    /// stage and ply first), else the stage reading most of what this worker computed itself,
    /// then the lowest stage of the oldest job. Ready stages large enough are split first.
    pub fn poll(&mut self, worker: u64) -> Result<Option<pb::Task>, Refusal> {
        self.check_owner()?;
        self.touch(worker)?;
        self.split_ready_stages()?;
        let capacity = task_capacity(self.workers[&worker].memory_budget);
        // Stages: (true, -affinity, job, stage, false); steps: (false, stage, job, ply, not
        // affine). The smallest wins.
        type Rank = (bool, usize, u64, u32, bool);
        let mut best: Option<(Rank, TaskKey)> = None;
        for (&id, job) in &self.jobs {
            if job.row.state != JobState::Running {
                continue;
            }
            for t in &job.tasks {
                if t.state != TaskState::Pending
                    || !job.ready(t.stage)
                    || job.memory[t.stage] > capacity
                {
                    continue;
                }
                let affinity = job.stages[t.stage]
                    .depends_on
                    .iter()
                    .filter(|&&d| self.computed_by.get(&(id, (d, None))) == Some(&worker))
                    .count();
                let rank = (true, usize::MAX - affinity, id, t.stage as u32, false);
                if best.as_ref().is_none_or(|(b, _)| rank < *b) {
                    best = Some((rank, t.key()));
                }
            }
            for t in job.steps.values() {
                let (slot, ply) = t.step.expect("a step");
                let stage = &job.stages[t.stage];
                let len = job
                    .game
                    .state_len(stage, stage.slices[slot as usize])
                    .unwrap_or(0);
                if t.state != TaskState::Pending
                    || step_memory(&*job.game, t.stage, len, ply == 1) > capacity
                {
                    continue;
                }
                // A step preferably goes to the worker that wrote its slice's state (it still
                // holds it in memory): the last merged step of the slot before this one.
                let affine = job
                    .steps
                    .range(
                        (t.stage, slot, 1)..(t.stage, slot, if ply == 0 { u32::MAX } else { ply }),
                    )
                    .rev()
                    .find(|(_, s)| s.state == TaskState::Done)
                    .is_some_and(|(_, s)| self.computed_by.get(&(id, s.key())) == Some(&worker));
                let rank = (false, t.stage, id, ply, !affine);
                if best.as_ref().is_none_or(|(b, _)| rank < *b) {
                    best = Some((rank, t.key()));
                }
            }
        }
        let Some(((_, _, id, _, _), key)) = best else {
            return Ok(None);
        };
        let mut task = self.jobs[&id].task(key).expect("found above").clone();
        task.assign(worker)?;
        self.db.transaction(|tx| {
            tx.record_task(id, &task, task.attempt, Some(worker), "assigned", "")
        })?;
        self.grant_lease(id, key);
        self.progress.insert((id, key), (0, 0));
        let job = self.jobs.get_mut(&id).expect("exists");
        job.set_task(task.clone());
        info!(job = id, task = %task.name, attempt = task.attempt, worker, "task assigned");
        // Only a stage and a step of ply 1 read final tables.
        let records = match task.step {
            Some((_, ply)) if ply != 1 => Vec::new(),
            _ => self.records(id)?,
        };
        let job = &self.jobs[&id];
        Ok(Some(match task.step {
            Some(_) => steps::step_message(job, &task, &records),
            None => merge::task_message(job, &task, &records),
        }))
    }
}
