//! The step barrier of split stages: split, advance ply by ply, finish or start again.
//!
//! A ready stage at least `split_above` positions large is *split* into step tasks, one per
//! slice, for ply 1 ([`Core::split_ready_stages`]). Each time a step merges,
//! [`Core::advance_steps`] asks `steps::next` whether its ply is complete (the barrier): if
//! so, it creates the steps of the next ply (for the slices that were sent messages) and
//! forgets the files no step will read again; when no message is left, the finish steps that
//! write the tables; when those are merged, the stage is done and its step directory removed.
//! A damaged step file restarts the stage from ply 1 as a new try ([`Core::restart_stage`]).
//! What a step computes and which files it reads are in `steps.rs`; this file only moves the
//! stage along.

use super::{Core, Refusal};
use crate::job_state::JobState;
use crate::steps::{self, Next};
use crate::task_state::TaskState;
use anyhow::Result;
use retro_pipeline::steps::stage_steps_dir;
use tracing::{info, warn};

impl Core {
    /// Splits every ready stage of at least `split_above` positions into the step tasks of
    /// its first ply (one per slice), in one transaction per stage.
    pub(super) fn split_ready_stages(&mut self) -> Result<()> {
        let mut ready = Vec::new();
        for (&id, job) in &self.jobs {
            if job.row.state == JobState::Running {
                ready.extend(
                    job.tasks
                        .iter()
                        .filter(|t| {
                            t.state == TaskState::Pending
                                && t.positions >= self.config.split_above
                                && job.game.splits()
                                && job.ready(t.stage)
                        })
                        .map(|t| (id, t.stage)),
                );
            }
        }
        for (id, stage) in ready {
            let job = &self.jobs[&id];
            let mut task = job.tasks[stage].clone();
            task.split()?;
            let first = steps::first_steps(job, stage);
            // Leftovers of an earlier, restarted try of the stage.
            job.storage.remove_prefix(&stage_steps_dir(stage))?;
            self.db.transaction(|tx| {
                tx.delete_stage_steps(id, stage)?;
                for step in &first {
                    tx.insert_step(id, step)?;
                }
                tx.record_task(
                    id,
                    &task,
                    task.attempt,
                    None,
                    "split",
                    &format!("{} steps of ply 1", first.len()),
                )
            })?;
            info!(job = id, stage = %task.name, steps = first.len(), "stage split into steps");
            let job = self.jobs.get_mut(&id).expect("exists");
            job.steps.retain(|&(s, _, _), _| s != stage);
            job.step_files.retain(|f| f.stage != stage);
            job.set_task(task);
            for step in first {
                job.set_task(step);
            }
        }
        Ok(())
    }

    /// After a step of `stage` merged: when its ply is complete (the barrier), creates the
    /// next ply's steps or the finish steps, or ends the stage.
    pub(super) fn advance_steps(&mut self, id: u64, stage: usize) -> Result<()> {
        let job = &self.jobs[&id];
        match steps::next(job, stage) {
            Next::Wait => Ok(()),
            Next::Steps(next, dead) => {
                self.db.transaction(|tx| {
                    for step in &next {
                        tx.insert_step(id, step)?;
                    }
                    for path in &dead {
                        tx.delete_step_file(id, path)?;
                    }
                    Ok(())
                })?;
                let job = self.jobs.get_mut(&id).expect("exists");
                info!(job = id, stage = %job.tasks[stage].name, steps = next.len(), first = %next[0].name, "next ply");
                job.step_files.retain(|f| !dead.contains(&f.path));
                for step in next {
                    job.set_task(step);
                }
                let job = &self.jobs[&id];
                for dir in steps::dead_step_dirs(job) {
                    job.storage.remove_prefix(&dir)?;
                }
                Ok(())
            }
            Next::Finish(finish) => {
                self.db.transaction(|tx| {
                    for step in &finish {
                        tx.insert_step(id, step)?;
                    }
                    Ok(())
                })?;
                let job = self.jobs.get_mut(&id).expect("exists");
                info!(job = id, stage = %job.tasks[stage].name, "no message left: finish steps");
                for step in finish {
                    job.set_task(step);
                }
                Ok(())
            }
            Next::Done => {
                let mut task = job.tasks[stage].clone();
                task.finish_steps()?;
                let plies = job
                    .steps
                    .values()
                    .filter(|t| t.stage == stage)
                    .filter_map(|t| t.step.map(|(_, p)| p))
                    .max()
                    .unwrap_or(0);
                let count = job.steps.values().filter(|t| t.stage == stage).count();
                self.db.transaction(|tx| {
                    tx.delete_stage_steps(id, stage)?;
                    tx.record_task(
                        id,
                        &task,
                        task.attempt,
                        None,
                        "completed",
                        &format!("{count} steps, {plies} plies"),
                    )
                })?;
                info!(job = id, stage = %task.name, steps = count, plies, "stage solved by steps");
                let job = self.jobs.get_mut(&id).expect("exists");
                job.steps.retain(|&(s, _, _), _| s != stage);
                job.step_files.retain(|f| f.stage != stage);
                job.set_task(task);
                let job = &self.jobs[&id];
                job.storage.remove_prefix(&stage_steps_dir(stage))?;
                Ok(())
            }
        }
    }

    /// A step file of `stage` is damaged: the stage's steps and files are dropped and the
    /// stage is solved again from its first ply.
    pub(super) fn restart_stage(
        &mut self,
        id: u64,
        stage: usize,
        why: &str,
    ) -> Result<(), Refusal> {
        let job = &self.jobs[&id];
        let mut task = job.tasks[stage].clone();
        task.restart()?;
        warn!(job = id, stage = %task.name, "{why}; the stage starts again");
        self.db.transaction(|tx| {
            tx.delete_stage_steps(id, stage)?;
            tx.record_task(id, &task, task.attempt, None, "restarted", why)
        })?;
        self.end_step_leases(id, stage);
        let job = self.jobs.get_mut(&id).expect("exists");
        job.steps.retain(|&(s, _, _), _| s != stage);
        job.step_files.retain(|f| f.stage != stage);
        job.set_task(task);
        self.jobs[&id]
            .storage
            .remove_prefix(&stage_steps_dir(stage))?;
        Ok(())
    }
}
