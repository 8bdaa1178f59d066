//! The coordinator's brain: jobs, tasks, leases and workers, behind one lock.
//!
//! Every RPC becomes one method call on [`Core`] (the service layer holds it in a mutex).
//! Durable changes go to the database first (one transaction each) and are then mirrored in
//! memory; leases, heartbeats and live progress live only in memory. Nothing here computes
//! positions: compute happens in workers.
//!
//! `Core` is one struct, and its methods are grouped by concept, one file each:
//!
//! * `runtime.rs`: a job in memory (`JobRuntime`) and how a task is named (`TaskKey`).
//! * `refusal.rs`: how a request is refused ([`Refusal`]).
//! * `recovery.rs`: loading a job from the database and making it consistent after a crash.
//! * `jobs.rs`: planning, resuming, cancelling and finishing jobs; the manifest.
//! * `submit.rs`: checking a client's new job.
//! * `workers.rs`: registration, and which workers are alive.
//! * `leases.rs`: heartbeats, and taking tasks back from silent workers.
//! * `scheduling.rs`: which task a polling worker gets.
//! * `completion.rs`: accepting (or refusing) a worker's report; failures.
//! * `barrier.rs`: splitting large stages into steps and moving them ply by ply.
//! * `status.rs`: status reports and metrics.
//!
//! The task life cycle these files follow is in [`crate::task_state`]; the durable state in
//! [`crate::db`]; shard verification and promotion in [`crate::merge`]; what the steps of a
//! split stage read and write in [`crate::steps`].

mod barrier;
mod completion;
mod jobs;
mod leases;
mod ownership;
mod recovery;
mod refusal;
mod runtime;
mod scheduling;
mod status;
mod submit;
mod workers;

pub use jobs::EmbeddedJob;
pub use refusal::Refusal;
pub(crate) use runtime::{JobRuntime, TaskKey};

use crate::db::Db;
use crate::job_state::JobState;
use anyhow::{Context, Result};
use retro_pipeline::lock::DirLock;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use workers::LiveWorker;

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
    /// Opens the game of a job from its name and definition: the registry, given by the
    /// binary (the coordinator never names a game).
    pub open_game: retro_pipeline::OpenGame,
    /// The workers live in this process (the embedded solve): a task found running when the
    /// coordinator starts was held by a worker of the dead process before it, so it goes back
    /// to the queue at once instead of waiting out a lease no one will renew.
    pub workers_in_process: bool,
}

/// The default of `--split-above`: stages of at least 4e9 positions (both sides; on BOARD31
/// and BOARD33 the largest brown counts) are split into steps, smaller ones are one task.
pub const DEFAULT_SPLIT_ABOVE: u64 = 4_000_000_000;

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

/// The coordinator's state: everything a request reads or changes.
pub struct Core {
    /// The data directory's lock, held as long as the coordinator runs.
    _lock: DirLock,
    /// This coordinator as the database's owner (`ownership.rs`).
    owner: crate::db::Owner,
    /// Why this coordinator stopped scheduling: another took the database over (for good).
    deposed: Option<crate::db::Deposed>,
    /// How it runs.
    config: CoreConfig,
    /// The durable state: every change is written here first, then mirrored in memory.
    db: Db,
    /// The jobs loaded in memory (running ones, and those that finished since), by id.
    jobs: BTreeMap<u64, JobRuntime>,
    /// When the lease of each running task runs out unless renewed (see `leases.rs`).
    leases: HashMap<(u64, TaskKey), Instant>,
    /// The latest `(ply, positions done)` each running task's worker reported.
    progress: HashMap<(u64, TaskKey), (u32, u64)>,
    /// The workers heard from by this process, by id.
    workers: HashMap<u64, LiveWorker>,
    /// Which worker merged each task (a worker keeps the values it computed in memory, so
    /// the tasks that read them go preferably to it).
    computed_by: HashMap<(u64, TaskKey), u64>,
    /// Metrics counters.
    pub totals: Totals,
    /// What status reports say of each job that needs its game or its slice records
    /// (`status.rs`): kept until a merge changes it.
    described: std::sync::Mutex<HashMap<u64, status::Described>>,
    /// Opens the storage of each job (its directory, or an object store location).
    storages: retro_objects::Opener,
    /// Since when, and why, the periodic lease check ([`Core::reap`]) has been failing: the
    /// database cannot be written (a full disk), so no task can be taken back or recorded.
    /// Cleared by the next check that succeeds ([`Core::checked`]).
    failing: Option<(std::time::Instant, String)>,
}

impl Core {
    /// Opens the data directory (locking it: one coordinator per data directory), resumes
    /// every running job found in its database, and repairs the manifest (and count table) of
    /// the others if it is missing or damaged.
    pub fn open(config: CoreConfig) -> Result<Core> {
        let lock = DirLock::acquire(&config.data)?;
        Core::open_locked(config, lock)
    }

    /// [`Core::open`] with the data directory already locked by the caller (the embedded
    /// solve locks its output directory before it checks what the directory holds).
    pub fn open_locked(config: CoreConfig, lock: DirLock) -> Result<Core> {
        std::fs::create_dir_all(&config.data)
            .with_context(|| format!("cannot create data directory {}", config.data.display()))?;
        let db = Db::open(&config.data)?;
        let data = config.data.clone();
        let mut core = Core {
            _lock: lock,
            owner: ownership::this_process(),
            deposed: None,
            failing: None,
            config,
            db,
            jobs: BTreeMap::new(),
            leases: HashMap::new(),
            progress: HashMap::new(),
            workers: HashMap::new(),
            computed_by: HashMap::new(),
            totals: Totals::default(),
            described: Default::default(),
            storages: retro_objects::Opener::new(
                config_data_cache(&data),
                retro_objects::DEFAULT_CACHE_BYTES,
            ),
        };
        core.claim_ownership()?;
        for row in core.db.read().jobs()? {
            if row.state == JobState::Running {
                let id = row.id;
                core.load_job(row)?;
                core.recover(id)?;
            } else if let Err(e) = core.repair_idle_job(&row) {
                // A job that no longer runs does not keep the coordinator from starting.
                tracing::warn!(
                    job = row.id,
                    "cannot check the files of the {} job: {}",
                    row.state,
                    retro_pipeline::process::error_text(&e)
                );
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
}

/// Where the coordinator caches objects it downloads from a job's object store (it reads few:
/// its checks ask for checksums), inside its data directory's scratch space.
fn config_data_cache(data: &std::path::Path) -> std::path::PathBuf {
    data.join(retro_pipeline::SCRATCH).join("objects")
}
