//! The coordinator's brain: jobs, tasks, leases and workers, behind one lock.
//!
//! Every RPC becomes one method call here. Durable changes go to the database first (one
//! transaction each) and are mirrored in memory; leases, heartbeats and live progress live only
//! in memory. Nothing here computes positions: compute happens in workers.

use crate::db::{Db, JobRow, StepFileRow, TaskRow, DATABASE_FILES};
use crate::job_state::JobState;
use crate::merge;
use crate::steps::{self, Next};
use crate::task_state::{IllegalTransition, TaskState};
use anyhow::{Context, Result};
use retro_engine::{Game, Stage};
use retro_musashi::Musashi;
use retro_pipeline::stage::{
    human_bytes, stage_min_memory, stage_positions, step_memory, task_capacity,
};
use retro_pipeline::steps::stage_steps_dir;
use retro_pipeline::storage::Storage;
use retro_pipeline::{definition, game_from_definition, job_dir, LocalStorage};
use retro_proto as pb;
use retro_store::SliceRecord;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tracing::{info, info_span, warn};

/// How the coordinator runs.
#[derive(Clone, Debug)]
pub struct CoreConfig {
    /// Data directory: the database, and the directories of submitted jobs.
    pub data: PathBuf,
    /// A running task whose worker is silent this long is given to another worker.
    pub lease: Duration,
    /// How often workers are asked to heartbeat.
    pub heartbeat: Duration,
    /// A task failing (retryably) this many times fails its job.
    pub max_failures: u32,
    /// Stages of at least this many positions (array slots, both sides) are split into one
    /// step task per slice and ply, which any number of workers share; smaller stages are one
    /// task each. `u64::MAX`: never split.
    pub split_above: u64,
}

/// The default of `--split-above`: stages of at least 4e9 positions (both sides; on BOARD31
/// and BOARD33 the largest brown counts) are split into steps, smaller ones are one task.
pub const DEFAULT_SPLIT_ABOVE: u64 = 4_000_000_000;

/// Which task: a stage, or a step `(slot, ply)` of a stage.
pub(crate) type TaskKey = (usize, Option<(u32, u32)>);

impl TaskRow {
    /// This task's key.
    pub(crate) fn key(&self) -> TaskKey {
        (self.stage, self.step)
    }
}

/// A typed failure of a request, mapped to a gRPC status by the service layer.
#[derive(Debug)]
pub enum Refusal {
    /// Unknown job, worker or task.
    NotFound(String),
    /// The request is malformed.
    InvalidArgument(String),
    /// The request is well-formed but stale or out of turn (fencing).
    FailedPrecondition(String),
    /// A shard does not match its descriptor.
    DataLoss(String),
    /// The coordinator itself failed.
    Internal(anyhow::Error),
}

impl From<anyhow::Error> for Refusal {
    fn from(e: anyhow::Error) -> Refusal {
        Refusal::Internal(e)
    }
}

impl From<IllegalTransition> for Refusal {
    fn from(e: IllegalTransition) -> Refusal {
        Refusal::Internal(e.into())
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotFound(m)
            | Refusal::InvalidArgument(m)
            | Refusal::FailedPrecondition(m)
            | Refusal::DataLoss(m) => f.write_str(m),
            Refusal::Internal(e) => write!(f, "{e:#}"),
        }
    }
}

/// A job in memory: its row, its game, and a mirror of its task rows.
pub(crate) struct JobRuntime {
    pub row: JobRow,
    pub game: Musashi,
    pub stages: Vec<Stage>,
    /// Absolute job directory.
    pub dir: PathBuf,
    pub storage: LocalStorage,
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
    pub positions_at_start: u64,
}

impl JobRuntime {
    /// Whether every stage `stage` reads is done.
    fn ready(&self, stage: usize) -> bool {
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
    fn all_tasks(&self) -> impl Iterator<Item = &TaskRow> {
        self.tasks.iter().chain(self.steps.values())
    }

    fn positions_done(&self) -> u64 {
        self.tasks
            .iter()
            .filter(|t| t.state == TaskState::Done)
            .map(|t| t.positions)
            .sum()
    }
}

/// A worker that registered with this coordinator process.
struct LiveWorker {
    name: String,
    last_seen: Instant,
    /// Its memory budget: it gets only tasks whose estimate fits.
    memory_budget: u64,
}

/// Counters exported as metrics.
#[derive(Default, Clone, Copy, Debug)]
pub struct Totals {
    /// Bytes workers read (reported with completions).
    pub bytes_read: u64,
    /// Bytes workers wrote.
    pub bytes_written: u64,
    /// Tasks merged.
    pub tasks_completed: u64,
    /// Completions refused (stale attempt, damaged shard, malformed descriptor).
    pub completions_refused: u64,
}

/// The coordinator's state.
pub struct Core {
    config: CoreConfig,
    db: Db,
    pub(crate) jobs: BTreeMap<u64, JobRuntime>,
    leases: HashMap<(u64, TaskKey), Instant>,
    progress: HashMap<(u64, TaskKey), (u32, u64)>,
    workers: HashMap<u64, LiveWorker>,
    /// Which worker merged each task (a worker keeps the values it computed in memory, so
    /// the tasks that read them go preferably to it).
    computed_by: HashMap<(u64, TaskKey), u64>,
    /// Metrics counters.
    pub totals: Totals,
}

impl Core {
    /// Opens the data directory and resumes every running job found in its database.
    pub fn open(config: CoreConfig) -> Result<Core> {
        std::fs::create_dir_all(&config.data)
            .with_context(|| format!("cannot create data directory {}", config.data.display()))?;
        let db = Db::open(&config.data)?;
        let mut core = Core {
            config,
            db,
            jobs: BTreeMap::new(),
            leases: HashMap::new(),
            progress: HashMap::new(),
            workers: HashMap::new(),
            computed_by: HashMap::new(),
            totals: Totals::default(),
        };
        for row in core.db.read().jobs()? {
            if row.state == JobState::Running {
                let id = row.id;
                core.load_job(row)?;
                core.recover(id)?;
            }
        }
        Ok(core)
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.config.data
    }

    /// Heartbeat interval and lease.
    pub fn timing(&self) -> (Duration, Duration) {
        (self.config.heartbeat, self.config.lease)
    }

    fn load_job(&mut self, row: JobRow) -> Result<()> {
        let game = game_from_definition(&row.game, &row.definition)
            .with_context(|| format!("job {}", row.id))?;
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
            .map(|i| stage_min_memory(&game, i))
            .collect();
        let mut job = JobRuntime {
            memory,
            stages: game.stages(),
            storage: LocalStorage::new(&dir),
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
    /// rewritten from the database.
    fn recover(&mut self, id: u64) -> Result<()> {
        let _span = info_span!("job", job = id).entered();
        let job = &self.jobs[&id];
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
        let now = Instant::now();
        for t in self.jobs[&id].all_tasks() {
            if t.state == TaskState::Running {
                self.leases.insert((id, t.key()), now + self.config.lease);
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
        self.finish_if_complete(id)?;
        Ok(())
    }

    /// The job of the embedded solve (`retro solve`): the one whose directory is the data
    /// directory itself. Created (adopting intact tables already there) if missing; resumed if
    /// it was interrupted, cancelled or failed. Fails if the directory holds another solve.
    pub fn ensure_embedded_job(&mut self, game: &Musashi, level: i32) -> Result<u64> {
        let rows = self.db.read().jobs()?;
        if let Some(row) = rows.iter().find(|r| r.dir == ".") {
            if row.definition != definition(game) {
                anyhow::bail!(
                    "{}: holds a different solve ({} on {}, max browns {}); choose another --out",
                    self.config.data.display(),
                    row.game,
                    row.definition["board"].as_str().unwrap_or("?"),
                    row.definition["max_browns"]
                );
            }
            let id = row.id;
            if row.state != JobState::Running && row.state != JobState::Done {
                self.db.read().set_job_state(id, JobState::Running, "")?;
                let mut row = row.clone();
                row.state = JobState::Running;
                self.load_job(row)?;
                self.recover(id)?;
            } else if row.state == JobState::Done && !self.jobs.contains_key(&id) {
                // A finished job is checked again: a damaged table is solved again.
                let row = row.clone();
                self.load_job(row)?;
                self.jobs.get_mut(&id).expect("loaded").row.state = JobState::Running;
                self.db.read().set_job_state(id, JobState::Running, "")?;
                self.recover(id)?;
            }
            return Ok(id);
        }
        self.create_job(game, level, Some("."))
    }

    /// The game and zstd level of the embedded solve's job, if the database has one.
    pub fn embedded_job(&self) -> Result<Option<(Musashi, i32)>> {
        let rows = self.db.read().jobs()?;
        let Some(row) = rows.into_iter().find(|r| r.dir == ".") else {
            return Ok(None);
        };
        let game = game_from_definition(&row.game, &row.definition)
            .with_context(|| format!("job {}", row.id))?;
        Ok(Some((game, row.level)))
    }

    /// Plans a new job: creates its directory (or adopts the intact tables of an earlier solve
    /// of the same definition in it) and its tasks, one per stage.
    pub fn create_job(&mut self, game: &Musashi, level: i32, dir: Option<&str>) -> Result<u64> {
        let def = definition(game);
        let id = self.db.transaction(|tx| {
            let id = tx.insert_job("musashi", &def, level, dir.unwrap_or(""))?;
            if dir.is_none() {
                tx.set_job_dir(id, &format!("jobs/{id:06}"))?;
            }
            Ok(id)
        })?;
        let row = self.db.read().job(id)?.expect("just inserted");
        let job_path = self.config.data.join(&row.dir);
        let planned = (|| {
            let mut manifest = job_dir::prepare(&job_path, game, &DATABASE_FILES)?;
            let intact = job_dir::check_finished(&job_path, game, &mut manifest);
            let stages = game.stages();
            self.db.transaction(|tx| {
                for (i, stage) in stages.iter().enumerate() {
                    let state = if intact[i] {
                        TaskState::Done
                    } else {
                        TaskState::Pending
                    };
                    tx.insert_task(id, i, &stage.name, state, stage_positions(game, stage))?;
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
                .read()
                .set_job_state(id, JobState::Failed, &format!("{e:#}"))?;
            return Err(e);
        }
        info!(job = id, dir = %job_path.display(), "job planned: {} stages", game.stages().len());
        self.load_job(row)?;
        self.write_manifest(id)?;
        self.finish_if_complete(id)?;
        Ok(id)
    }

    /// The merged slice records of a job.
    fn records(&self, job: u64) -> Result<Vec<SliceRecord>> {
        self.db
            .read()
            .slices(job)?
            .iter()
            .map(|r| serde_json::from_str(r).context("slice record in the database"))
            .collect()
    }

    /// Rewrites the job's manifest from the database.
    fn write_manifest(&self, id: u64) -> Result<()> {
        let job = &self.jobs[&id];
        let mut manifest = job_dir::fresh_manifest(&job.game);
        manifest.slices = self.records(id)?;
        manifest.complete = job.tasks.iter().all(|t| t.state == TaskState::Done);
        manifest.save(&job.dir)?;
        Ok(())
    }

    /// When every task is done: count table, final manifest, shards removed, job done.
    fn finish_if_complete(&mut self, id: u64) -> Result<()> {
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
        self.jobs.get_mut(&id).expect("loaded").row.state = JobState::Done;
        info!(job = id, "job done");
        Ok(())
    }

    /// A worker joins.
    pub fn register(&mut self, req: &pb::RegisterRequest) -> Result<u64, Refusal> {
        if req.protocol_version != pb::PROTOCOL_VERSION {
            return Err(Refusal::FailedPrecondition(format!(
                "protocol version {} is not supported (this coordinator speaks {})",
                req.protocol_version,
                pb::PROTOCOL_VERSION
            )));
        }
        let id = self
            .db
            .transaction(|tx| {
                let id = tx.insert_worker(&req.name, req.threads, req.memory_budget)?;
                tx.event(None, None, None, Some(id), "registered", &req.name)?;
                Ok(id)
            })
            .map_err(Refusal::Internal)?;
        info!(worker = id, name = %req.name, threads = req.threads, "worker registered");
        self.workers.insert(
            id,
            LiveWorker {
                name: req.name.clone(),
                last_seen: Instant::now(),
                memory_budget: req.memory_budget,
            },
        );
        Ok(id)
    }

    /// Marks a worker alive; fails if it never registered.
    fn touch(&mut self, worker: u64) -> Result<(), Refusal> {
        if let Some(w) = self.workers.get_mut(&worker) {
            w.last_seen = Instant::now();
            return Ok(());
        }
        // Registered with an earlier run of this coordinator: welcome back.
        match self.db.read().worker(worker)? {
            Some((name, memory_budget)) => {
                self.workers.insert(
                    worker,
                    LiveWorker {
                        name,
                        last_seen: Instant::now(),
                        memory_budget,
                    },
                );
                Ok(())
            }
            None => Err(Refusal::NotFound(format!(
                "worker {worker} is not registered; register first"
            ))),
        }
    }

    /// A worker's heartbeat: renews the leases of the tasks it still holds, and returns those
    /// it must abandon (lost lease, cancelled job).
    pub fn heartbeat(
        &mut self,
        worker: u64,
        running: &[pb::TaskProgress],
    ) -> Result<Vec<pb::TaskProgress>, Refusal> {
        self.touch(worker)?;
        let mut abandon = Vec::new();
        for p in running {
            let key = (p.job_id, task_key(p.stage, p.step));
            let held = self.jobs.get(&p.job_id).is_some_and(|j| {
                j.row.state == JobState::Running
                    && j.task(key.1).is_some_and(|t| t.held_by(worker, p.attempt))
            });
            if held {
                self.leases.insert(key, Instant::now() + self.config.lease);
                self.progress.insert(key, (p.ply, p.positions_done));
            } else {
                abandon.push(*p);
            }
        }
        Ok(abandon)
    }

    /// Gives `worker` the best ready task, if any: a step of a stage already split (lowest
    /// stage and ply first), else the stage reading most of what this worker computed itself,
    /// then the lowest stage of the oldest job. Ready stages large enough are split first.
    pub fn poll(&mut self, worker: u64) -> Result<Option<pb::Task>, Refusal> {
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
                let len = job
                    .game
                    .slice_len(job.stages[t.stage].slices[slot as usize]);
                if t.state != TaskState::Pending
                    || step_memory(&job.game, t.stage, len, ply == 1) > capacity
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
        self.leases
            .insert((id, key), Instant::now() + self.config.lease);
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

    /// Splits every ready stage of at least `split_above` positions into the step tasks of
    /// its first ply (one per slice), in one transaction per stage.
    fn split_ready_stages(&mut self) -> Result<()> {
        let mut ready = Vec::new();
        for (&id, job) in &self.jobs {
            if job.row.state == JobState::Running {
                ready.extend(
                    job.tasks
                        .iter()
                        .filter(|t| {
                            t.state == TaskState::Pending
                                && t.positions >= self.config.split_above
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

    /// The task `key` in the loaded job `id` (NOT_FOUND / INVALID_ARGUMENT otherwise).
    fn task(&self, id: u64, key: TaskKey) -> Result<TaskRow, Refusal> {
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

    /// A worker reports a finished task: fenced by attempt, its shards (or step files)
    /// verified and merged.
    pub fn complete(&mut self, req: &pb::CompleteTaskRequest) -> Result<(), Refusal> {
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
            self.db.read().event(
                Some(id),
                Some(task.stage),
                Some(req.attempt),
                Some(req.worker_id),
                "rejected_stale",
                &why,
            )?;
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
                self.db.read().event(
                    Some(id),
                    Some(task.stage),
                    Some(req.attempt),
                    Some(req.worker_id),
                    "rejected_malformed",
                    &why,
                )?;
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
                self.leases.remove(&(id, key));
                self.progress.remove(&(id, key));
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
        self.leases.remove(&(id, key));
        self.progress.remove(&(id, key));
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

    /// After a step of `stage` merged: when its ply is complete (the barrier), creates the
    /// next ply's steps or the finish steps, or ends the stage.
    fn advance_steps(&mut self, id: u64, stage: usize) -> Result<()> {
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

    /// A worker could not finish a task. A step that found an input damaged restarts its
    /// stage.
    pub fn fail(&mut self, req: &pb::FailTaskRequest) -> Result<(), Refusal> {
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
        self.leases.remove(&(id, key));
        self.progress.remove(&(id, key));
        let job = self.jobs.get_mut(&id).expect("exists");
        job.set_task(task);
        if fatal {
            job.row.state = JobState::Failed;
            job.row.note = req.reason.clone();
        }
        Ok(())
    }

    /// A step file of `stage` is damaged: the stage's steps and files are dropped and the
    /// stage is solved again from its first ply.
    fn restart_stage(&mut self, id: u64, stage: usize, why: &str) -> Result<(), Refusal> {
        let job = &self.jobs[&id];
        let mut task = job.tasks[stage].clone();
        task.restart()?;
        warn!(job = id, stage = %task.name, "{why}; the stage starts again");
        self.db.transaction(|tx| {
            tx.delete_stage_steps(id, stage)?;
            tx.record_task(id, &task, task.attempt, None, "restarted", why)
        })?;
        self.leases
            .retain(|&(j, (s, step)), _| !(j == id && s == stage && step.is_some()));
        self.progress
            .retain(|&(j, (s, step)), _| !(j == id && s == stage && step.is_some()));
        let job = self.jobs.get_mut(&id).expect("exists");
        job.steps.retain(|&(s, _, _), _| s != stage);
        job.step_files.retain(|f| f.stage != stage);
        job.set_task(task);
        self.jobs[&id]
            .storage
            .remove_prefix(&stage_steps_dir(stage))?;
        Ok(())
    }

    /// Takes back the tasks of silent workers and forgets workers gone for good. Called
    /// periodically.
    pub fn reap(&mut self) -> Result<()> {
        let now = Instant::now();
        let expired: Vec<(u64, TaskKey)> = self
            .leases
            .iter()
            .filter(|(_, &until)| until < now)
            .map(|(&k, _)| k)
            .collect();
        for (id, key) in expired {
            self.leases.remove(&(id, key));
            self.progress.remove(&(id, key));
            let Some(job) = self.jobs.get_mut(&id) else {
                continue;
            };
            let Some(mut task) = job.task(key).cloned() else {
                continue;
            };
            if task.state != TaskState::Running {
                continue;
            }
            let worker = task.worker_id;
            task.release()?;
            warn!(job = id, stage = %task.name, attempt = task.attempt, ?worker, "lease expired: the worker is silent; the task goes back to the queue");
            self.db.transaction(|tx| {
                tx.record_task(id, &task, task.attempt, worker, "lease_expired", "")
            })?;
            job.set_task(task);
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

    /// Workers heard from within one lease.
    pub fn live_workers(&self) -> usize {
        let now = Instant::now();
        self.workers
            .values()
            .filter(|w| now.duration_since(w.last_seen) < self.config.lease)
            .count()
    }

    /// Cancels a job: no more tasks are given out, running ones are abandoned.
    pub fn cancel(&mut self, id: u64) -> Result<(), Refusal> {
        let job = self
            .jobs
            .get_mut(&id)
            .ok_or_else(|| Refusal::NotFound(format!("job {id} is not running here")))?;
        if job.row.state != JobState::Running {
            return Err(Refusal::FailedPrecondition(format!(
                "job {id} is {}, not running",
                job.row.state
            )));
        }
        job.row.state = JobState::Cancelled;
        self.db.transaction(|tx| {
            tx.set_job_state(id, JobState::Cancelled, "cancelled by request")?;
            tx.event(Some(id), None, None, None, "cancelled", "")
        })?;
        info!(job = id, "job cancelled");
        Ok(())
    }

    /// A new job from a client.
    pub fn submit(&mut self, req: &pb::SubmitRequest) -> Result<(u64, String), Refusal> {
        if req.game != "musashi" {
            return Err(Refusal::InvalidArgument(format!(
                "unknown game '{}' (known: musashi)",
                req.game
            )));
        }
        let board = retro_musashi::Board::from_text(&req.board_file)
            .map_err(|e| Refusal::InvalidArgument(format!("board file: {e:#}")))?;
        let max = (req.max_browns > 0).then_some(req.max_browns as usize);
        if let Some(k) = max {
            if k >= board.len() {
                return Err(Refusal::InvalidArgument(format!(
                    "max_browns {k}: {} has {} points",
                    board.name,
                    board.len()
                )));
            }
        }
        if !(1..=19).contains(&req.zstd_level) {
            return Err(Refusal::InvalidArgument(format!(
                "zstd_level {} is not in 1..=19",
                req.zstd_level
            )));
        }
        let game = Musashi::new(board, max);
        let id = self.create_job(&game, req.zstd_level, None)?;
        Ok((id, self.jobs[&id].row.dir.clone()))
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
        Ok(pb::JobStatus {
            job_id: id,
            state: row.state.as_str().into(),
            description: describe(&row.definition),
            job_dir: row.dir,
            tasks: Vec::new(),
            positions_done: done,
            positions,
            positions_per_second: 0.0,
            eta_seconds: -1.0,
            live_workers: self.live_workers() as u32,
            note: row.note,
            elapsed_seconds: 0.0,
        })
    }

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
        let elapsed = job.started.elapsed().as_secs_f64();
        let rate = done.saturating_sub(job.positions_at_start) as f64 / elapsed.max(1e-3);
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
            description: describe(&job.row.definition),
            job_dir: job.dir.display().to_string(),
            tasks,
            positions_done: done,
            positions,
            positions_per_second: rate,
            eta_seconds: eta,
            live_workers: live as u32,
            note,
            elapsed_seconds: elapsed,
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
        for (&id, job) in &self.jobs {
            for t in job.all_tasks() {
                let state = shown_state(job, t);
                *counts.entry(state.to_string()).or_insert(0) += 1;
            }
            let _ = id;
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

/// The key of the task a request names: its stage and, for a step, the step.
fn task_key(stage: u32, step: Option<pb::Step>) -> TaskKey {
    (stage as usize, step.map(|s| (s.slot, s.ply)))
}

/// "BOARD25, max browns 16".
fn describe(definition: &serde_json::Value) -> String {
    format!(
        "musashi on {}, max browns {}",
        definition["board"].as_str().unwrap_or("?"),
        definition["max_browns"]
    )
}

/// What a status report and the metrics call a task's state: its stored state, except that a
/// pending task is "ready" (a step, or a stage whose inputs are all done) or "blocked".
fn shown_state(job: &JobRuntime, t: &TaskRow) -> &'static str {
    match t.state {
        TaskState::Pending if t.step.is_some() || job.ready(t.stage) => READY,
        TaskState::Pending => BLOCKED,
        state => state.as_str(),
    }
}

/// The shown state of a pending task that can be given out now.
const READY: &str = "ready";
/// The shown state of a pending stage that reads a stage not done yet.
const BLOCKED: &str = "blocked";
