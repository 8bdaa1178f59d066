//! A job's life from the coordinator's side: planned, resumed, cancelled, finished.
//!
//! [`Core::create_job`] plans a job as one task per stage (adopting the intact tables of an
//! earlier solve found in its directory); the embedded solve (`retro solve`) finds or creates
//! its own job with [`Core::ensure_embedded_job`]. After every merge the manifest is rewritten
//! from the database ([`Core::write_manifest`]), and when the last task is done the job is
//! finished: count table, final manifest, shards removed ([`Core::finish_if_complete`]).
//! Cancelling only stops handing out tasks; workers learn it at their next heartbeat.

use super::{Core, Refusal};
use crate::db::{JobRow, DATABASE_FILES};
use crate::job_state::JobState;
use crate::merge;
use crate::task_state::TaskState;
use anyhow::{Context, Result};
use retro_pipeline::job_dir::summarise;
use retro_pipeline::process::error_text;
use retro_pipeline::stage::stage_positions;
use retro_pipeline::{job_dir, JobGame, COUNTS_FILE};
use retro_store::manifest::MANIFEST;
use retro_store::{Manifest, SliceRecord};
use std::path::Path;
use std::sync::Arc;
use tracing::{info, warn};

/// What is wrong with the manifest in `dir`, if anything: it is missing, or damaged (the
/// message names the file).
pub(super) fn manifest_fault(dir: &Path) -> Option<String> {
    match Manifest::load(dir) {
        Ok(Some(_)) => None,
        Ok(None) => Some(format!("{}: missing", dir.join(MANIFEST).display())),
        Err(e) => Some(e.to_string()),
    }
}

impl Core {
    /// The job of the embedded solve (`retro solve`): the one whose directory is the data
    /// directory itself. Created (adopting intact tables already there) if missing; resumed if
    /// it was interrupted, cancelled or failed; a smaller solve of the same game is grown (see
    /// [`JobGame::grows_from`]). Fails if the directory holds another solve.
    ///
    /// `storage` is where the tables go (empty: the directory; else an object store location);
    /// a job keeps the storage it was created with.
    pub fn ensure_embedded_job(
        &mut self,
        game: Arc<dyn JobGame>,
        level: i32,
        storage: &str,
    ) -> Result<u64> {
        let rows = self.db.read().jobs()?;
        if let Some(row) = rows.iter().find(|r| r.dir == ".") {
            if row.storage != storage {
                anyhow::bail!(
                    "{}: holds a solve whose tables are in {}, not {}; choose another --out",
                    self.config.data.display(),
                    job_dir::storage_name(&row.storage),
                    job_dir::storage_name(storage)
                );
            }
            let wanted = game.definition();
            let same_game = row.game == game.name();
            if same_game && row.definition != wanted && game.grows_from(&row.definition) {
                // A larger solve of the same board: the old job steps aside (it keeps its
                // history, no longer the directory), and the new one adopts its finished stages.
                let old = row.id;
                self.jobs.remove(&old);
                self.db.transaction(|tx| {
                    tx.set_job_dir(old, "")?;
                    tx.event(
                        Some(old),
                        None,
                        None,
                        None,
                        "grown",
                        "a larger solve took over",
                    )?;
                    tx.set_job_state(old, JobState::Cancelled, "grown into a larger solve")
                })?;
                info!(
                    job = old,
                    "growing the embedded solve: finished stages are adopted"
                );
                return self.create_job(game, level, Some("."), storage);
            }
            if !same_game || row.definition != wanted {
                anyhow::bail!(
                    "{}: holds a different solve ({}: {}); choose another --out",
                    self.config.data.display(),
                    row.game,
                    summarise(&row.definition)
                );
            }
            let id = row.id;
            if row.state != JobState::Running && row.state != JobState::Done {
                self.db
                    .transaction(|tx| tx.set_job_state(id, JobState::Running, ""))?;
                let mut row = row.clone();
                row.state = JobState::Running;
                row.finished_ms = None;
                self.load_job(row)?;
                self.recover(id)?;
            } else if row.state == JobState::Done && !self.jobs.contains_key(&id) {
                // A finished job is checked again: a damaged table is solved again.
                let row = row.clone();
                self.load_job(row)?;
                self.db
                    .transaction(|tx| tx.set_job_state(id, JobState::Running, ""))?;
                self.jobs
                    .get_mut(&id)
                    .expect("loaded")
                    .set_state(JobState::Running);
                self.recover(id)?;
            }
            return Ok(id);
        }
        self.create_job(game, level, Some("."), storage)
    }

    /// The embedded solve's job, if the database has one.
    pub fn embedded_job(&self) -> Result<Option<EmbeddedJob>> {
        let rows = self.db.read().jobs()?;
        let Some(row) = rows.into_iter().find(|r| r.dir == ".") else {
            return Ok(None);
        };
        let game = (self.config.open_game)(&row.game, &row.definition)
            .with_context(|| format!("job {}", row.id))?;
        Ok(Some(EmbeddedJob {
            game,
            level: row.level,
            storage: row.storage,
        }))
    }

    /// Plans a new job: creates its directory (or adopts the intact tables of an earlier solve
    /// of the same definition in it) and its tasks, one per stage. Its tables go to `storage`
    /// (empty: the directory; else an object store location, checked by the caller).
    pub fn create_job(
        &mut self,
        game: Arc<dyn JobGame>,
        level: i32,
        dir: Option<&str>,
        storage: &str,
    ) -> Result<u64> {
        let def = game.definition();
        let id = self.db.transaction(|tx| {
            let id = tx.insert_job(game.name(), &def, level, dir.unwrap_or(""), storage)?;
            if dir.is_none() {
                tx.set_job_dir(id, &format!("jobs/{id:06}"))?;
            }
            Ok(id)
        })?;
        self.plan_job(id, game)?;
        Ok(id)
    }

    /// Plans job `id`'s tasks, one per stage, adopting the intact tables found in its
    /// directory, and loads it. The job's row and its tasks are written by two transactions
    /// with the directory prepared between them, so a coordinator killed in between leaves a
    /// job without tasks: [`Core::load_job`] plans such a job again (a job without tasks
    /// would otherwise look finished, with nothing solved). Its tables go to the storage its
    /// row records (empty: the directory).
    pub(super) fn plan_job(&mut self, id: u64, game: Arc<dyn JobGame>) -> Result<()> {
        let row = self.db.read().job(id)?.context("job not in the database")?;
        let storage = &row.storage.clone();
        let job_path = self.config.data.join(&row.dir);
        let planned = (|| {
            let mut manifest = job_dir::prepare(&job_path, &*game, storage, &DATABASE_FILES)?;
            let tables = self.storages.open(storage, &job_path)?;
            if !storage.is_empty() {
                tables
                    .children("")
                    .with_context(|| format!("cannot reach the job's storage {storage}"))?;
            }
            let intact = job_dir::check_finished(&*tables, &*game, &mut manifest);
            let stages = game.stages();
            self.db.transaction(|tx| {
                for (i, stage) in stages.iter().enumerate() {
                    let state = if intact[i] {
                        TaskState::Done
                    } else {
                        TaskState::Pending
                    };
                    tx.insert_task(id, i, &stage.name, state, stage_positions(&*game, stage))?;
                    if intact[i] {
                        tx.event(
                            Some(id),
                            Some(i),
                            Some(0),
                            None,
                            "adopted",
                            "intact tables found",
                        )?;
                    }
                }
                for r in &manifest.slices {
                    tx.put_slice(id, r.id, r.stage, &serde_json::to_string(r)?)?;
                }
                tx.event(Some(id), None, None, None, "submitted", &row.dir)
            })
        })();
        if let Err(e) = planned {
            self.db
                .transaction(|tx| tx.set_job_state(id, JobState::Failed, &error_text(&e)))?;
            return Err(e);
        }
        info!(job = id, dir = %job_path.display(), "job planned: {} stages", game.stages().len());
        self.load_job_with(row, game)?;
        self.write_manifest(id)?;
        self.finish_if_complete(id)
    }

    /// Cancels a job: no more tasks are given out, running ones are abandoned.
    pub fn cancel(&mut self, id: u64) -> Result<(), Refusal> {
        self.check_owner()?;
        let job = self
            .jobs
            .get(&id)
            .ok_or_else(|| Refusal::NotFound(format!("job {id} is not running here")))?;
        if job.row.state != JobState::Running {
            return Err(Refusal::FailedPrecondition(format!(
                "job {id} is {}, not running",
                job.row.state
            )));
        }
        self.db.transaction(|tx| {
            tx.set_job_state(id, JobState::Cancelled, "cancelled by request")?;
            tx.event(Some(id), None, None, None, "cancelled", "")
        })?;
        self.jobs
            .get_mut(&id)
            .expect("found above")
            .set_state(JobState::Cancelled);
        info!(job = id, "job cancelled");
        Ok(())
    }

    /// The pending stage of job `id` that needs the most memory, with that estimate.
    pub fn largest_pending_stage(&self, id: u64) -> Result<Option<(usize, u64)>> {
        let job = self.jobs.get(&id).context("job not loaded")?;
        Ok(job
            .tasks
            .iter()
            .filter(|t| t.state != TaskState::Done)
            .map(|t| (t.stage, job.memory[t.stage]))
            .max_by_key(|&(_, m)| m))
    }

    /// The merged slice records of a job.
    pub(super) fn records(&self, job: u64) -> Result<Vec<SliceRecord>> {
        self.db
            .read()
            .slices(job)?
            .iter()
            .map(|r| serde_json::from_str(r).context("slice record in the database"))
            .collect()
    }

    /// Rewrites the job's manifest from the database.
    pub(super) fn write_manifest(&self, id: u64) -> Result<()> {
        let job = &self.jobs[&id];
        let mut manifest = job_dir::fresh_manifest(&*job.game, &job.row.storage);
        manifest.slices = self.records(id)?;
        manifest.complete = job.tasks.iter().all(|t| t.state == TaskState::Done);
        manifest.save(&job.dir)?;
        Ok(())
    }

    /// A job that is not running (done, cancelled, failed) is not loaded, but its directory's
    /// manifest must still be readable: a missing or damaged one is rebuilt from the database
    /// (exactly as the job left it), with a warning naming it; for a finished job the count
    /// table is written again if it is missing or differs from the one the manifest makes.
    ///
    /// The embedded solve checks its one job itself ([`Core::ensure_embedded_job`]).
    pub(super) fn repair_idle_job(&self, row: &JobRow) -> Result<()> {
        let dir = self.config.data.join(&row.dir);
        if self.config.workers_in_process || row.dir.is_empty() || !dir.is_dir() {
            return Ok(());
        }
        let fault = manifest_fault(&dir);
        let done = row.state == JobState::Done;
        if fault.is_none() && !done {
            return Ok(());
        }
        let game = (self.config.open_game)(&row.game, &row.definition)
            .with_context(|| format!("job {}", row.id))?;
        let mut manifest = job_dir::fresh_manifest(&*game, &row.storage);
        manifest.slices = self.records(row.id)?;
        manifest.complete = self
            .db
            .read()
            .tasks(row.id)?
            .iter()
            .all(|t| t.state == TaskState::Done);
        if let Some(fault) = fault {
            manifest.save(&dir)?;
            warn!(
                job = row.id,
                "{fault}; manifest rebuilt from the coordinator's database ({} tables of the {} job)",
                manifest.slices.len(),
                row.state
            );
        }
        if done && manifest.complete {
            let counts = dir.join(COUNTS_FILE);
            let table = game.count_table(&manifest)?;
            if std::fs::read(&counts).ok().as_deref() != Some(table.as_bytes()) {
                retro_store::write_atomic(&counts, table.as_bytes())?;
                warn!(
                    job = row.id,
                    "{}: missing or damaged; written again from the manifest",
                    counts.display()
                );
            }
        }
        Ok(())
    }

    /// When every task is done: count table, final manifest, shards removed, job done.
    pub(super) fn finish_if_complete(&mut self, id: u64) -> Result<()> {
        let job = &self.jobs[&id];
        if job.row.state != JobState::Running
            || !job.tasks.iter().all(|t| t.state == TaskState::Done)
        {
            return Ok(());
        }
        let records = self.records(id)?;
        merge::finalize(job, records)?;
        self.db.transaction(|tx| {
            tx.set_job_state(id, JobState::Done, "")?;
            tx.event(Some(id), None, None, None, "job_done", "")
        })?;
        self.jobs
            .get_mut(&id)
            .expect("loaded")
            .set_state(JobState::Done);
        info!(job = id, "job done");
        Ok(())
    }
}

/// What `retro resume` needs to know of the embedded solve's job.
pub struct EmbeddedJob {
    /// The game it solves.
    pub game: Arc<dyn JobGame>,
    /// The zstd level of its tables.
    pub level: i32,
    /// Where its tables are (empty: its directory; else an object store location).
    pub storage: String,
}
