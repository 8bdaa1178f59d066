//! Loading a job from the database and making it consistent again.
//!
//! A coordinator can stop at any instant: between a worker writing its shards and reporting
//! them, in the middle of a merge, after a step merged but before the barrier looked at it.
//! Every durable change is one transaction, so the database is always consistent (a job
//! planned only halfway, its row without tasks, is planned again on loading); what may be
//! left over is on disk (temporaries, shards and step files of attempts that will never
//! report) or in memory only (leases). [`Core::recover`] removes the former, re-checks every
//! merged table against its checksum (a damaged one reopens its task), gives running tasks a
//! fresh lease (their workers either renew it or lose it), decides the step barrier again,
//! and rewrites the manifest. Running it twice is harmless.

use super::{Core, JobRuntime, TaskKey};
use crate::db::JobRow;
use crate::merge;
use crate::steps;
use crate::task_state::TaskState;
use anyhow::{Context, Result};
use retro_pipeline::stage::stage_min_memory;
use retro_pipeline::{job_dir, JobGame};
use std::sync::Arc;
use std::time::Instant;
use tracing::{info, info_span, warn};

impl Core {
    /// Loads job `row` from the database into memory (its tasks, steps and step files, its
    /// game and the memory estimates of its stages), as it is: [`Core::recover`] then makes
    /// it consistent.
    pub(super) fn load_job(&mut self, row: JobRow) -> Result<()> {
        let game = (self.config.open_game)(&row.game, &row.definition)
            .with_context(|| format!("job {}", row.id))?;
        if self.db.read().tasks(row.id)?.is_empty() {
            warn!(
                job = row.id,
                "the job was created but its stages were never planned (interrupted); planning them now"
            );
            return self.plan_job(row.id, game);
        }
        self.load_job_with(row, game)
    }

    /// [`Core::load_job`] with the job's game already opened.
    pub(super) fn load_job_with(&mut self, row: JobRow, game: Arc<dyn JobGame>) -> Result<()> {
        let dir = self.config.data.join(&row.dir);
        let tasks = self.db.read().tasks(row.id)?;
        let steps = self
            .db
            .read()
            .steps(row.id)?
            .into_iter()
            .map(|t| {
                let (slot, ply) = t.step.expect("a step row");
                ((t.stage, slot, ply), t)
            })
            .collect();
        let step_files = self.db.read().step_files(row.id)?;
        let memory = (0..game.stages().len())
            .map(|i| stage_min_memory(&*game, i))
            .collect();
        let mut job = JobRuntime {
            memory,
            stages: game.stages(),
            storage: self.storages.open(&row.storage, &dir)?,
            dir,
            tasks,
            steps,
            step_files,
            started: Instant::now(),
            positions_at_start: 0,
            game,
            row,
        };
        job.positions_at_start = job.positions_done();
        self.jobs.insert(job.row.id, job);
        Ok(())
    }

    /// Brings a job loaded from the database back to a consistent state: temporaries and
    /// shards of dead attempts removed, every merged table checked against its checksum
    /// (damaged ones reopen their task), running tasks given a fresh lease, the manifest
    /// rewritten from the database (with a warning naming it if it was missing or damaged).
    pub(super) fn recover(&mut self, id: u64) -> Result<()> {
        let _span = info_span!("job", job = id).entered();
        let job = &self.jobs[&id];
        let manifest_fault = super::jobs::manifest_fault(&job.dir);
        if !job.dir.is_dir() {
            std::fs::create_dir_all(&job.dir)
                .with_context(|| format!("cannot create {}", job.dir.display()))?;
        }
        job_dir::remove_stale_temporaries(&job.dir)?;
        merge::remove_dead_shards(job)?;
        for dir in steps::dead_step_dirs(job) {
            job.storage.remove_prefix(&dir)?;
        }
        let records = self.records(id)?;
        let damaged = merge::damaged_stages(&self.jobs[&id], &records);
        for (stage, why) in damaged {
            warn!(
                job = id,
                "{why}; solving {} again", self.jobs[&id].tasks[stage].name
            );
            let mut task = self.jobs[&id].tasks[stage].clone();
            task.reopen()?;
            self.db.transaction(|tx| {
                tx.delete_stage_slices(id, stage)?;
                tx.record_task(id, &task, task.attempt, None, "table_damaged", &why)
            })?;
            self.jobs.get_mut(&id).expect("loaded").tasks[stage] = task;
        }
        let running: Vec<_> = self.jobs[&id]
            .all_tasks()
            .filter(|t| t.state == TaskState::Running)
            .map(|t| t.key())
            .collect();
        let orphans = self.config.workers_in_process;
        for key in running {
            if orphans {
                self.release_orphan(id, key)?;
            } else {
                self.grant_lease(id, key);
            }
        }
        // A step merged just before a crash may have completed its ply: the barrier is checked
        // again (deciding it twice is harmless: it reads only merged steps and their files).
        let stepping: Vec<usize> = self.jobs[&id]
            .tasks
            .iter()
            .filter(|t| t.state == TaskState::Stepping)
            .map(|t| t.stage)
            .collect();
        for stage in stepping {
            self.advance_steps(id, stage)?;
        }
        let job = self.jobs.get_mut(&id).expect("loaded");
        job.positions_at_start = job.positions_done();
        self.write_manifest(id)?;
        if let Some(fault) = manifest_fault {
            warn!(
                job = id,
                "{fault}; manifest rebuilt from the coordinator's database ({} tables)",
                self.records(id)?.len()
            );
        }
        self.finish_if_complete(id)?;
        Ok(())
    }
}

impl Core {
    /// Puts back in the queue task `key` of job `id`, found running although its worker died
    /// with the process before this one (workers in process).
    fn release_orphan(&mut self, id: u64, key: TaskKey) -> Result<()> {
        let job = self.jobs.get_mut(&id).expect("loaded");
        let Some(mut task) = job.task(key).cloned() else {
            return Ok(());
        };
        let worker = task.worker_id;
        task.release()?;
        info!(job = id, stage = %task.name, attempt = task.attempt, "task of the interrupted run goes back to the queue");
        self.db
            .transaction(|tx| tx.record_task(id, &task, task.attempt, worker, "worker_gone", ""))?;
        job.set_task(task);
        Ok(())
    }
}
