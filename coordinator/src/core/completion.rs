//! A worker's report: accepting a finished task, or its failure.
//!
//! A completion is accepted only from the attempt that holds the task (the fencing token);
//! the same report again after a lost reply is answered as merged, any other is refused as
//! stale. An accepted report's files are verified before anything changes: a malformed report
//! changes nothing (the attempt may report again), a damaged file releases the task to be
//! solved again. Only then are shards promoted to tables (or step files recorded), and the
//! task marked done in the same transaction that records them. A merged step may complete its
//! ply (`barrier.rs`); a merged stage may complete the job (`jobs.rs`).
//!
//! A failure releases the task for another attempt, or fails the job when it is not retryable
//! or has failed too often; a step that found one of its inputs damaged restarts its stage.

use super::runtime::task_key;
use super::{Core, Refusal};
use crate::job_state::JobState;
use crate::merge;
use crate::steps;
use retro_proto as pb;
use tracing::{info, info_span, warn};

impl Core {
    /// A worker reports a finished task: fenced by attempt, its shards (or step files)
    /// verified and merged.
    pub fn complete(&mut self, req: &pb::CompleteTaskRequest) -> Result<(), Refusal> {
        self.check_owner()?;
        let _span = info_span!(
            "task",
            job = req.job_id,
            stage = req.stage,
            attempt = req.attempt
        )
        .entered();
        self.touch(req.worker_id)?;
        let id = req.job_id;
        let key = task_key(req.stage, req.step);
        let task = self.task(id, key)?;
        let job = &self.jobs[&id];
        if task.merged_from(req.worker_id, req.attempt) {
            // The same report again: the worker did not hear that it was merged (a lost reply,
            // a coordinator restarted after the merge). It is told so; were it refused, the
            // worker would remove files that are now the task's results.
            info!(job = id, task = %task.name, attempt = req.attempt, worker = req.worker_id, "report already merged");
            return Ok(());
        }
        if !task.held_by(req.worker_id, req.attempt) {
            self.totals.completions_refused += 1;
            let why = format!(
                "stale report for {} attempt {} from worker {}: the task is {} at attempt {}{}",
                task.name,
                req.attempt,
                req.worker_id,
                task.state,
                task.attempt,
                task.worker_id
                    .map(|w| format!(" on worker {w}"))
                    .unwrap_or_default()
            );
            warn!(job = id, "{why}; rejected");
            self.db.transaction(|tx| {
                tx.event(
                    Some(id),
                    Some(task.stage),
                    Some(req.attempt),
                    Some(req.worker_id),
                    "rejected_stale",
                    &why,
                )
            })?;
            return Err(Refusal::FailedPrecondition(why));
        }
        // A step of ply 1 or more reports files; a stage or a finish step, shards.
        let writes_files = task.step.is_some_and(|(_, ply)| ply > 0);
        let verified = if writes_files {
            steps::verify_outputs(job, &task, req).map(|files| (Vec::new(), files))
        } else {
            merge::verify_shards(job, &task, req).map(|records| (records, Vec::new()))
        };
        let (records, files) = match verified {
            Ok(v) => v,
            Err(Refusal::InvalidArgument(why)) => {
                // A malformed report changes nothing: the attempt may still report properly.
                self.totals.completions_refused += 1;
                warn!(job = id, task = %task.name, attempt = task.attempt, "{why}; rejected");
                self.db.transaction(|tx| {
                    tx.event(
                        Some(id),
                        Some(task.stage),
                        Some(req.attempt),
                        Some(req.worker_id),
                        "rejected_malformed",
                        &why,
                    )
                })?;
                return Err(Refusal::InvalidArgument(why));
            }
            Err(refusal) => {
                self.totals.completions_refused += 1;
                let why = refusal.to_string();
                warn!(job = id, task = %task.name, attempt = task.attempt, "{why}; the task will be solved again");
                let mut released = task.clone();
                released.release()?;
                self.db.transaction(|tx| {
                    tx.record_task(
                        id,
                        &released,
                        req.attempt,
                        Some(req.worker_id),
                        "shards_refused",
                        &why,
                    )
                })?;
                self.end_lease(id, key);
                self.jobs.get_mut(&id).expect("exists").set_task(released);
                return Err(refusal);
            }
        };
        if !writes_files {
            merge::promote(job, &task, req)?;
        }
        let mut finished = task.clone();
        finished.finish()?;
        let times = req.times.unwrap_or_default();
        self.db.transaction(|tx| {
            for r in &records {
                tx.put_slice(id, r.id, r.stage, &serde_json::to_string(r)?)?;
            }
            for f in &files {
                tx.insert_step_file(id, f)?;
            }
            let costs = req
                .shards
                .iter()
                .filter_map(|d| d.cost.map(|c| (d.slice_id, c)));
            let step_cost = task.step.zip(req.step_cost).map(|((slot, _), c)| {
                (job.stages[task.stage].slices[slot as usize].0, c)
            });
            for (slice, c) in costs.chain(step_cost) {
                let cost = [c.cpu_us, c.wall_us, c.bytes_read, c.bytes_written, c.peak_rss];
                // A split stage's slice adds up the costs of its steps.
                tx.add_slice_cost(id, slice, cost, task.step.is_some())?;
            }
            tx.add_task_times(
                id,
                task.stage,
                [
                    times.compute_ms,
                    times.read_ms,
                    times.write_ms,
                    times.wait_ms,
                    times.bytes_read,
                    times.bytes_written,
                ],
                task.step.is_some(),
            )?;
            tx.record_task(
                id,
                &finished,
                req.attempt,
                Some(req.worker_id),
                "completed",
                &format!(
                    "compute {} ms, read {} ms, write {} ms, waited {} ms, {} bytes read, {} bytes written",
                    times.compute_ms,
                    times.read_ms,
                    times.write_ms,
                    times.wait_ms,
                    times.bytes_read,
                    times.bytes_written
                ),
            )
        })?;
        self.totals.tasks_completed += 1;
        self.totals.bytes_read += times.bytes_read;
        self.totals.bytes_written += times.bytes_written;
        self.end_lease(id, key);
        self.computed_by.insert((id, key), req.worker_id);
        let job = self.jobs.get_mut(&id).expect("exists");
        job.set_task(finished);
        job.step_files.extend(files);
        info!(
            job = id,
            task = %task.name,
            attempt = req.attempt,
            worker = req.worker_id,
            compute_ms = times.compute_ms,
            read_ms = times.read_ms,
            write_ms = times.write_ms,
            wait_ms = times.wait_ms,
            bytes_read = times.bytes_read,
            bytes_written = times.bytes_written,
            "task merged"
        );
        if task.step.is_some() {
            self.advance_steps(id, task.stage)?;
        }
        // Steps of ply 1 or more change no table: the manifest stays as it is.
        if !writes_files {
            self.write_manifest(id)?;
        }
        self.finish_if_complete(id)?;
        Ok(())
    }

    /// A worker could not finish a task. A step that found an input damaged restarts its
    /// stage.
    pub fn fail(&mut self, req: &pb::FailTaskRequest) -> Result<(), Refusal> {
        self.check_owner()?;
        self.touch(req.worker_id)?;
        let id = req.job_id;
        let key = task_key(req.stage, req.step);
        let mut task = self.task(id, key)?;
        if !task.held_by(req.worker_id, req.attempt) {
            return Err(Refusal::FailedPrecondition(format!(
                "stale failure report for {} attempt {}",
                task.name, req.attempt
            )));
        }
        if req.input_damaged && task.step.is_some() {
            return self.restart_stage(id, task.stage, &req.reason);
        }
        task.release()?;
        task.failures += 1;
        let fatal = !req.retryable || task.failures >= self.config.max_failures;
        warn!(job = id, task = %task.name, attempt = req.attempt, worker = req.worker_id, retryable = req.retryable, "task failed: {}", req.reason);
        self.db.transaction(|tx| {
            tx.record_task(
                id,
                &task,
                req.attempt,
                Some(req.worker_id),
                "failed",
                &req.reason,
            )?;
            if fatal {
                tx.set_job_state(
                    id,
                    JobState::Failed,
                    &format!("{}: {}", task.name, req.reason),
                )?;
            }
            Ok(())
        })?;
        self.end_lease(id, key);
        let job = self.jobs.get_mut(&id).expect("exists");
        job.set_task(task);
        if fatal {
            job.set_state(JobState::Failed);
            job.row.note = req.reason.clone();
        }
        Ok(())
    }
}
