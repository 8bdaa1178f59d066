//! Leases: how a task gets back from a worker that went silent.
//!
//! A task given out is held under a lease that the worker renews with every heartbeat (which
//! also carries its progress). [`Core::reap`], run a few times per lease, releases every task
//! whose lease ran out, so that another worker can take it as a new attempt; the silent
//! worker's attempt is fenced by its number and its late report refused. A heartbeat naming a
//! task its worker no longer holds (released, or its job cancelled) tells the worker to
//! abandon it. Leases and progress live in memory only: after a restart, `recovery.rs` grants
//! every running task a fresh lease.

use super::runtime::task_key;
use super::{Core, Refusal, TaskKey};
use crate::job_state::JobState;
use crate::task_state::TaskState;
use anyhow::Result;
use retro_proto as pb;
use std::time::Instant;
use tracing::{info, warn};

impl Core {
    /// A worker's heartbeat: renews the leases of the tasks it still holds, and returns those
    /// it must abandon (lost lease, cancelled job).
    pub fn heartbeat(
        &mut self,
        worker: u64,
        running: &[pb::TaskProgress],
    ) -> Result<Vec<pb::TaskProgress>, Refusal> {
        // A deposed coordinator renews no lease: the worker learns it is not in charge.
        self.check_owner()?;
        self.touch(worker)?;
        let mut abandon = Vec::new();
        for p in running {
            let key = (p.job_id, task_key(p.stage, p.step));
            let held = self.jobs.get(&p.job_id).is_some_and(|j| {
                j.row.state == JobState::Running
                    && j.task(key.1).is_some_and(|t| t.held_by(worker, p.attempt))
            });
            if held {
                self.grant_lease(key.0, key.1);
                self.progress.insert(key, (p.ply, p.positions_done));
            } else {
                abandon.push(*p);
            }
        }
        Ok(abandon)
    }

    /// Records the outcome of a periodic [`Core::reap`]: a failure is remembered from its first
    /// occurrence until a check succeeds.
    pub fn checked(&mut self, outcome: &Result<()>) {
        match outcome {
            Ok(()) => self.failing = None,
            Err(e) if self.failing.is_none() => {
                self.failing = Some((Instant::now(), format!("{e:#}")));
            }
            Err(_) => {}
        }
    }

    /// Why the coordinator cannot make progress, if its lease checks have failed without a
    /// success for at least `persisting` (a database that cannot be written: the embedded
    /// solve stops with this rather than wait for ever).
    pub fn stuck(&self, persisting: std::time::Duration) -> Option<String> {
        self.failing
            .as_ref()
            .filter(|(since, _)| since.elapsed() >= persisting)
            .map(|(_, why)| why.clone())
    }

    /// Takes back the tasks of silent workers and forgets workers gone for good. Called
    /// periodically. A deposed coordinator takes nothing back (the new owner does): its
    /// leases stay as they are.
    pub fn reap(&mut self) -> Result<()> {
        match self.renew_ownership() {
            Ok(()) => {}
            // Logged once, when found; nothing is touched from then on.
            Err(Refusal::Deposed(_)) => return Ok(()),
            Err(refusal) => anyhow::bail!("{refusal}"),
        }
        let now = Instant::now();
        let expired: Vec<(u64, TaskKey)> = self
            .leases
            .iter()
            .filter(|(_, &until)| until < now)
            .map(|(&k, _)| k)
            .collect();
        for (id, key) in expired {
            let Some(mut task) = self.jobs.get(&id).and_then(|j| j.task(key)).cloned() else {
                self.end_lease(id, key);
                continue;
            };
            if task.state != TaskState::Running {
                self.end_lease(id, key);
                continue;
            }
            let worker = task.worker_id;
            task.release()?;
            // Recorded first (the transaction refuses if this coordinator was deposed since
            // the check above), then mirrored in memory.
            self.db.transaction(|tx| {
                tx.record_task(id, &task, task.attempt, worker, "lease_expired", "")
            })?;
            warn!(job = id, stage = %task.name, attempt = task.attempt, worker = worker.unwrap_or_default(), "lease expired: the worker is silent; the task goes back to the queue");
            self.end_lease(id, key);
            self.jobs.get_mut(&id).expect("found above").set_task(task);
        }
        let lease = self.config.lease;
        self.workers.retain(|id, w| {
            let alive = now.duration_since(w.last_seen) < lease * 4;
            if !alive {
                info!(worker = id, name = %w.name, "worker gone");
            }
            alive
        });
        Ok(())
    }

    /// Grants task `key` of job `id` a lease, or renews it: it runs out one lease from now.
    pub(super) fn grant_lease(&mut self, id: u64, key: TaskKey) {
        self.leases
            .insert((id, key), Instant::now() + self.config.lease);
    }

    /// Ends the lease of task `key` of job `id` and forgets its progress: the task was
    /// merged, released or failed, so no heartbeat renews it any more.
    pub(super) fn end_lease(&mut self, id: u64, key: TaskKey) {
        self.leases.remove(&(id, key));
        self.progress.remove(&(id, key));
    }

    /// Ends the leases of every step of `stage` of job `id` (the stage starts again).
    pub(super) fn end_step_leases(&mut self, id: u64, stage: usize) {
        let of_stage = |&(j, (s, step)): &(u64, TaskKey)| j == id && s == stage && step.is_some();
        self.leases.retain(|k, _| !of_stage(k));
        self.progress.retain(|k, _| !of_stage(k));
    }
}

#[cfg(test)]
mod tests {
    use crate::core::{Core, CoreConfig};
    use std::time::Duration;

    #[test]
    fn a_failing_lease_check_is_stuck_only_while_it_persists() {
        let data = std::env::temp_dir().join(format!("retro-stuck-{}", std::process::id()));
        let mut core = Core::open(CoreConfig {
            data: data.clone(),
            lease: Duration::from_secs(1),
            heartbeat: Duration::from_millis(200),
            max_failures: 3,
            split_above: u64::MAX,
            open_game: |_, _| anyhow::bail!("no games in this test"),
            workers_in_process: false,
        })
        .unwrap();
        let now = Duration::ZERO;
        assert_eq!(core.stuck(now), None);
        core.checked(&Err(anyhow::anyhow!("database or disk is full")));
        assert_eq!(
            core.stuck(Duration::from_secs(3600)),
            None,
            "not for that long yet"
        );
        // The first failure is kept while they go on.
        core.checked(&Err(anyhow::anyhow!("another failure")));
        assert_eq!(core.stuck(now).as_deref(), Some("database or disk is full"));
        core.checked(&Ok(()));
        assert_eq!(core.stuck(now), None, "a check that succeeds clears it");
        drop(core);
        std::fs::remove_dir_all(data).unwrap();
    }
}
