//! The coordinator's durable state: an SQLite database in WAL mode inside the data directory.
//!
//! Everything that must survive a crash is here, and every state change is one transaction:
//! jobs, their tasks (state, attempt, worker), the merged slice records, registered workers, and
//! an append-only event log (assigned, completed, expired, rejected, ...) that tells afterwards
//! exactly what happened to every task. Leases, heartbeats and live progress are not durable:
//! after a restart every running task gets a fresh lease, and its worker either renews it or
//! loses it.
//!
//! This is the one boundary where a task's [`TaskState`] and a job's [`JobState`] become text
//! and text becomes a state: the stored words are those of the first schema, so that every
//! existing database still loads (status reports show the same words).

use crate::job_state::JobState;
use crate::task_state::TaskState;
use anyhow::{Context, Result};
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
use rusqlite::{params, Connection, OptionalExtension, ToSql, TransactionBehavior};
use std::path::{Path, PathBuf};

/// File name of the database inside the coordinator's data directory.
pub const DATABASE: &str = "coordinator.sqlite";

/// The files SQLite keeps beside the database; a job directory may contain them.
pub const DATABASE_FILES: [&str; 3] = [
    "coordinator.sqlite",
    "coordinator.sqlite-wal",
    "coordinator.sqlite-shm",
];

/// The tables, created if missing. Never change a column: databases already hold them.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS jobs (
    id          INTEGER PRIMARY KEY,
    game        TEXT NOT NULL,
    definition  TEXT NOT NULL,
    level       INTEGER NOT NULL,
    dir         TEXT NOT NULL,
    state       TEXT NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    created_ms  INTEGER NOT NULL,
    finished_ms INTEGER
);
CREATE TABLE IF NOT EXISTS job_storage (
    job_id   INTEGER PRIMARY KEY REFERENCES jobs(id),
    location TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tasks (
    job_id        INTEGER NOT NULL REFERENCES jobs(id),
    stage         INTEGER NOT NULL,
    name          TEXT NOT NULL,
    state         TEXT NOT NULL,
    attempt       INTEGER NOT NULL DEFAULT 0,
    worker_id     INTEGER,
    failures      INTEGER NOT NULL DEFAULT 0,
    positions     INTEGER NOT NULL,
    compute_ms    INTEGER NOT NULL DEFAULT 0,
    read_ms       INTEGER NOT NULL DEFAULT 0,
    write_ms      INTEGER NOT NULL DEFAULT 0,
    bytes_read    INTEGER NOT NULL DEFAULT 0,
    bytes_written INTEGER NOT NULL DEFAULT 0,
    wait_ms       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, stage)
);
CREATE TABLE IF NOT EXISTS slices (
    job_id   INTEGER NOT NULL REFERENCES jobs(id),
    slice_id INTEGER NOT NULL,
    stage    INTEGER NOT NULL,
    record   TEXT NOT NULL,
    PRIMARY KEY (job_id, slice_id)
);
CREATE TABLE IF NOT EXISTS slice_costs (
    job_id        INTEGER NOT NULL REFERENCES jobs(id),
    slice_id      INTEGER NOT NULL,
    cpu_us        INTEGER NOT NULL,
    wall_us       INTEGER NOT NULL,
    bytes_read    INTEGER NOT NULL,
    bytes_written INTEGER NOT NULL,
    peak_rss      INTEGER NOT NULL,
    PRIMARY KEY (job_id, slice_id)
);
CREATE TABLE IF NOT EXISTS steps (
    job_id    INTEGER NOT NULL REFERENCES jobs(id),
    stage     INTEGER NOT NULL,
    slot      INTEGER NOT NULL,
    ply       INTEGER NOT NULL,
    name      TEXT NOT NULL,
    state     TEXT NOT NULL,
    attempt   INTEGER NOT NULL DEFAULT 0,
    worker_id INTEGER,
    failures  INTEGER NOT NULL DEFAULT 0,
    positions INTEGER NOT NULL,
    PRIMARY KEY (job_id, stage, slot, ply)
);
CREATE TABLE IF NOT EXISTS step_files (
    job_id   INTEGER NOT NULL REFERENCES jobs(id),
    stage    INTEGER NOT NULL,
    path     TEXT NOT NULL,
    kind     TEXT NOT NULL,
    slot     INTEGER NOT NULL,
    ply      INTEGER NOT NULL,
    bytes    INTEGER NOT NULL,
    checksum TEXT NOT NULL,
    keys     INTEGER NOT NULL,
    PRIMARY KEY (job_id, path)
);
CREATE TABLE IF NOT EXISTS workers (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    threads       INTEGER NOT NULL,
    memory_budget INTEGER NOT NULL,
    registered_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS owner (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    pid          INTEGER NOT NULL,
    host         TEXT NOT NULL,
    heartbeat_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    id        INTEGER PRIMARY KEY,
    at_ms     INTEGER NOT NULL,
    job_id    INTEGER,
    stage     INTEGER,
    attempt   INTEGER,
    worker_id INTEGER,
    kind      TEXT NOT NULL,
    detail    TEXT NOT NULL DEFAULT ''
);
";

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The text a state enum is stored as, and its conversions at the SQLite boundary: one
/// definition for task and job states. `$what` names the kind in the error for an unknown word.
macro_rules! stored_state {
    ($state:ident, $what:literal, $doc:literal, { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $state {
            #[doc = $doc]
            /// Never change a word: databases already hold them.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($state::$variant => $text,)+
                }
            }

            /// The state stored as `text`, if it is one.
            fn from_stored(text: &str) -> Option<$state> {
                [$($state::$variant),+].into_iter().find(|s| s.as_str() == text)
            }
        }

        impl ToSql for $state {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $state {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<$state> {
                let text = value.as_str()?;
                $state::from_stored(text).ok_or_else(|| {
                    FromSqlError::Other(format!(concat!("unknown ", $what, " state '{}'"), text).into())
                })
            }
        }
    };
}

stored_state!(TaskState, "task",
    "The text stored in the `state` column of `tasks` and `steps`, also shown in status reports and metrics.",
    { Pending => "pending", Running => "running", Done => "done", Stepping => "stepping" });

stored_state!(JobState, "job",
    "The text stored in the `state` column of `jobs`, also shown in status reports.",
    { Running => "running", Done => "done", Cancelled => "cancelled", Failed => "failed" });

/// A job as stored.
#[derive(Clone, Debug)]
pub struct JobRow {
    /// Job id.
    pub id: u64,
    /// Game name ("musashi").
    pub game: String,
    /// The game's definition (JSON).
    pub definition: serde_json::Value,
    /// zstd level of the tables.
    pub level: i32,
    /// Job directory, relative to the data directory ("." for an embedded solve).
    pub dir: String,
    /// Where its tables and shards are: empty for the job directory, else an object store
    /// location (`s3://bucket/prefix`; the `job_storage` table, added after `jobs`).
    pub storage: String,
    /// Where the job is in its life.
    pub state: JobState,
    /// Why the job failed, or other operator-facing remarks.
    pub note: String,
    /// When it was submitted (ms since the epoch).
    pub created_ms: i64,
    /// When it last stopped running (done, failed, cancelled), if it did.
    pub finished_ms: Option<i64>,
}

impl JobRow {
    /// Seconds from submission to the end (or to now, while it runs).
    pub fn elapsed_seconds(&self) -> f64 {
        let end = match (self.state, self.finished_ms) {
            (JobState::Running, _) | (_, None) => now_ms(),
            (_, Some(end)) => end,
        };
        (end - self.created_ms).max(0) as f64 / 1000.0
    }
}

/// A task as stored: a whole stage, or one step of a stage solved in supersteps.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskRow {
    /// Stage index.
    pub stage: usize,
    /// `(slot, ply)` of a step (ply 0: the finish); `None` for a whole stage.
    pub step: Option<(u32, u32)>,
    /// Stage name ("browns=7"), or step name ("browns=7 black=c3 ply 5").
    pub name: String,
    /// Where the task is in its life; moved only by [`TaskRow::apply`].
    pub state: TaskState,
    /// Attempts given out so far (the fencing token of the current one).
    pub attempt: u32,
    /// The worker of the current attempt.
    pub worker_id: Option<u64>,
    /// Retryable failures so far.
    pub failures: u32,
    /// Array slots of the stage (both sides).
    pub positions: u64,
}

/// Where a finished task spent its time (see `tasks` and the event log).
#[derive(Clone, Debug)]
pub struct TaskTimesRow {
    /// Stage index.
    pub stage: usize,
    /// Stage name.
    pub name: String,
    /// Array slots (both sides).
    pub positions: u64,
    /// Kernel time.
    pub compute_ms: u64,
    /// Reading inputs.
    pub read_ms: u64,
    /// Encoding and writing shards.
    pub write_ms: u64,
    /// The worker's idle time before it got the task.
    pub wait_ms: u64,
    /// Input bytes read from storage.
    pub bytes_read: u64,
    /// Shard bytes written.
    pub bytes_written: u64,
    /// When the merged attempt was assigned and completed (ms since the epoch).
    pub assigned_ms: u64,
    /// See `assigned_ms`.
    pub completed_ms: u64,
}

/// A file written by an accepted step of a stage solved in supersteps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepFileRow {
    /// Stage index.
    pub stage: usize,
    /// Path relative to the job directory.
    pub path: String,
    /// "state" or "message".
    pub kind: String,
    /// The slot the state belongs to, or the message is addressed to.
    pub slot: u32,
    /// The ply after which the state was taken, or which sent the message.
    pub ply: u32,
    /// Length in bytes.
    pub bytes: u64,
    /// XXH3-64 of the file, 16 hex digits.
    pub checksum: String,
    /// Keys of a message.
    pub keys: u64,
}

/// What solving one merged slice cost its worker (see [`retro_proto::SliceCost`]).
#[derive(Clone, Debug)]
pub struct SliceCostRow {
    /// The slice's manifest record (JSON, as in `slices`).
    pub record: String,
    /// Thread time, wall time (microseconds), bytes read and written, peak resident bytes.
    pub cost: [u64; 5],
}

/// A task from a row of `stage, slot, ply, name, state, attempt, worker_id, failures,
/// positions` (slot and ply NULL for a stage's task).
fn task_row(r: &rusqlite::Row) -> rusqlite::Result<TaskRow> {
    let slot: Option<u32> = r.get(1)?;
    let ply: Option<u32> = r.get(2)?;
    Ok(TaskRow {
        stage: r.get::<_, i64>(0)? as usize,
        step: slot.zip(ply),
        name: r.get(3)?,
        state: r.get(4)?,
        attempt: r.get(5)?,
        worker_id: r.get::<_, Option<i64>>(6)?.map(|w| w as u64),
        failures: r.get(7)?,
        positions: r.get::<_, i64>(8)? as u64,
    })
}

/// A coordinator found the database owned by another (see `core/ownership.rs`): the typed
/// error of every write it attempts from then on.
#[derive(Debug, Clone)]
pub struct Deposed {
    /// The data directory.
    pub data: PathBuf,
    /// Who owns the database now, if anyone.
    pub by: Option<Owner>,
}

impl std::fmt::Display for Deposed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let by = match &self.by {
            Some(o) => format!("pid {} on {}", o.pid, o.host),
            None => "nobody".into(),
        };
        write!(
            f,
            "{}: the database is now owned by another coordinator ({by}); this one stops scheduling and changes nothing",
            self.data.display()
        )
    }
}

impl std::error::Error for Deposed {}

/// The database connection.
pub struct Db {
    conn: Connection,
    /// The data directory.
    data: PathBuf,
    /// Once set ([`Db::guard`]), every transaction first checks that the owner row still
    /// names this coordinator, and refuses with [`Deposed`] otherwise.
    owner: Option<Owner>,
}

impl Db {
    /// Opens (creating if needed) the database in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<Db> {
        let path = data_dir.join(DATABASE);
        let conn = Connection::open(&path)
            .with_context(|| format!("cannot open database {}", path.display()))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .and_then(|_| conn.pragma_update(None, "synchronous", "FULL"))
            .and_then(|_| conn.pragma_update(None, "foreign_keys", "ON"))
            .and_then(|_| conn.execute_batch(SCHEMA))
            .with_context(|| format!("{}: cannot set up the database", path.display()))?;
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .with_context(|| format!("{}: cannot check the database", path.display()))?;
        if check != "ok" {
            anyhow::bail!("{}: database is damaged: {check}", path.display());
        }
        Ok(Db {
            conn,
            data: data_dir.to_path_buf(),
            owner: None,
        })
    }

    /// From now on, every transaction is this coordinator's only while the owner row names
    /// `owner` (checked inside the transaction, so a coordinator deposed at any moment, even
    /// one that stalled and resumes, writes nothing).
    pub fn guard(&mut self, owner: &Owner) {
        self.owner = Some(owner.clone());
    }

    /// Whether `row` names `me` (the heartbeat aside).
    pub fn same_owner(row: &Owner, me: &Owner) -> bool {
        row.pid == me.pid && row.host == me.host
    }

    /// Fails with [`Deposed`] if `owner` is set and the owner row names another.
    fn check_owner(owner: Option<&Owner>, data: &Path, tx: &Tx) -> Result<()> {
        let Some(me) = owner else {
            return Ok(());
        };
        match tx.owner()? {
            Some(row) if Db::same_owner(&row, me) => Ok(()),
            by => Err(Deposed {
                data: data.to_path_buf(),
                by,
            }
            .into()),
        }
    }

    /// Runs `f` in one transaction, which takes the database's write lock at once (`BEGIN
    /// IMMEDIATE`) and, once [guarded](Db::guard), first checks that this coordinator still
    /// owns the database: nothing is written by a deposed one.
    ///
    /// An SQLite error (a full disk, say, which may strike any statement or the commit) names
    /// the database file, so that the operator knows which disk to free.
    pub fn transaction<T>(&mut self, f: impl FnOnce(&Tx) -> Result<T>) -> Result<T> {
        let Db { conn, data, owner } = self;
        let named = |e: anyhow::Error| name_database(e, data);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .context("cannot start a transaction")
            .map_err(named)?;
        Db::check_owner(owner.as_ref(), data, &Tx(&tx)).map_err(named)?;
        let value = f(&Tx(&tx)).map_err(named)?;
        tx.commit()
            .context("cannot commit a transaction")
            .map_err(named)?;
        Ok(value)
    }

    /// Renews `owner`'s heartbeat, on its own (no transaction: see [`Tx::renew_owner`]); an
    /// SQLite error names the database file, as in [`Db::transaction`].
    pub fn renew_owner(&self, owner: &Owner, now: i64) -> Result<bool> {
        self.read()
            .renew_owner(owner, now)
            .map_err(|e| name_database(e, &self.data))
    }

    /// Checks, without writing, that this coordinator still owns the database (see
    /// [`Db::guard`]).
    pub fn owned(&self) -> Result<()> {
        Db::check_owner(self.owner.as_ref(), &self.data, &self.read())
    }

    /// Read-only access (no transaction needed for single statements).
    pub fn read(&self) -> Tx<'_> {
        Tx(&self.conn)
    }
}

/// `error` with the path of the database in `data` put before it when SQLite raised it (and
/// not already named there); other errors (a deposed coordinator, a missing job) as they are.
fn name_database(error: anyhow::Error, data: &Path) -> anyhow::Error {
    let path = data.join(DATABASE);
    let from_sqlite = error.chain().any(|e| e.is::<rusqlite::Error>());
    if from_sqlite && !format!("{error:#}").contains(&*path.to_string_lossy()) {
        error.context(path.display().to_string())
    } else {
        error
    }
}

/// The coordinator that owns a database (see `core/ownership.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Its process id.
    pub pid: u32,
    /// Its host name.
    pub host: String,
    /// When it last renewed its claim (ms since the epoch).
    pub heartbeat_ms: i64,
}

/// Statements, run inside a transaction or on their own.
pub struct Tx<'a>(&'a Connection);

impl Tx<'_> {
    /// The owner row, if any.
    pub fn owner(&self) -> Result<Option<Owner>> {
        self.0
            .query_row(
                "SELECT pid, host, heartbeat_ms FROM owner WHERE id = 1",
                [],
                |r| {
                    Ok(Owner {
                        pid: r.get(0)?,
                        host: r.get(1)?,
                        heartbeat_ms: r.get(2)?,
                    })
                },
            )
            .optional()
            .context("cannot read the owner row")
    }

    /// Makes `owner` the owner.
    pub fn set_owner(&self, owner: &Owner) -> Result<()> {
        self.0
            .execute(
                "INSERT OR REPLACE INTO owner (id, pid, host, heartbeat_ms) VALUES (1, ?1, ?2, ?3)",
                params![owner.pid, owner.host, owner.heartbeat_ms],
            )
            .context("cannot write the owner row")?;
        Ok(())
    }

    /// Renews `owner`'s heartbeat; false if the row names another owner.
    pub fn renew_owner(&self, owner: &Owner, now: i64) -> Result<bool> {
        let changed = self
            .0
            .execute(
                "UPDATE owner SET heartbeat_ms = ?3 WHERE id = 1 AND pid = ?1 AND host = ?2",
                params![owner.pid, owner.host, now],
            )
            .context("cannot renew the owner row")?;
        Ok(changed == 1)
    }

    /// Creates a job; returns its id.
    pub fn insert_job(
        &self,
        game: &str,
        definition: &serde_json::Value,
        level: i32,
        dir: &str,
        storage: &str,
    ) -> Result<u64> {
        self.0.execute(
            "INSERT INTO jobs (game, definition, level, dir, state, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![game, definition.to_string(), level, dir, JobState::Running, now_ms()],
        )?;
        let id = self.0.last_insert_rowid();
        if !storage.is_empty() {
            self.0.execute(
                "INSERT INTO job_storage (job_id, location) VALUES (?1, ?2)",
                params![id, storage],
            )?;
        }
        Ok(id as u64)
    }

    /// Sets a job's directory (decided from its id).
    pub fn set_job_dir(&self, job: u64, dir: &str) -> Result<()> {
        self.0
            .execute("UPDATE jobs SET dir = ?2 WHERE id = ?1", params![job, dir])?;
        Ok(())
    }

    /// All jobs, oldest first.
    pub fn jobs(&self) -> Result<Vec<JobRow>> {
        let mut stmt = self.0.prepare(
            "SELECT id, game, definition, level, dir, state, note, created_ms, finished_ms, location
             FROM jobs LEFT JOIN job_storage ON job_storage.job_id = jobs.id ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(JobRow {
                id: r.get::<_, i64>(0)? as u64,
                game: r.get(1)?,
                definition: serde_json::from_str(&r.get::<_, String>(2)?)
                    .unwrap_or(serde_json::Value::Null),
                level: r.get(3)?,
                dir: r.get(4)?,
                state: r.get(5)?,
                note: r.get(6)?,
                created_ms: r.get(7)?,
                finished_ms: r.get(8)?,
                storage: r.get::<_, Option<String>>(9)?.unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One job.
    pub fn job(&self, id: u64) -> Result<Option<JobRow>> {
        Ok(self.jobs()?.into_iter().find(|r| r.id == id))
    }

    /// Sets a job's state and note.
    pub fn set_job_state(&self, job: u64, state: JobState, note: &str) -> Result<()> {
        let finished = (state != JobState::Running).then(now_ms);
        self.0.execute(
            "UPDATE jobs SET state = ?2, note = ?3, finished_ms = ?4 WHERE id = ?1",
            params![job, state, note, finished],
        )?;
        Ok(())
    }

    /// Creates a task.
    pub fn insert_task(
        &self,
        job: u64,
        stage: usize,
        name: &str,
        state: TaskState,
        positions: u64,
    ) -> Result<()> {
        self.0.execute(
            "INSERT INTO tasks (job_id, stage, name, state, positions) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![job, stage as i64, name, state, positions as i64],
        )?;
        Ok(())
    }

    /// The tasks of a job, by stage.
    pub fn tasks(&self, job: u64) -> Result<Vec<TaskRow>> {
        let mut stmt = self.0.prepare(
            "SELECT stage, NULL, NULL, name, state, attempt, worker_id, failures, positions FROM tasks WHERE job_id = ?1 ORDER BY stage",
        )?;
        let rows = stmt.query_map([job], task_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Creates the step task `task` (its `step` is set).
    pub fn insert_step(&self, job: u64, task: &TaskRow) -> Result<()> {
        let (slot, ply) = task.step.context("a step task has a step")?;
        self.0.execute(
            "INSERT OR REPLACE INTO steps (job_id, stage, slot, ply, name, state, attempt, worker_id, failures, positions) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                job,
                task.stage as i64,
                slot,
                ply,
                task.name,
                task.state,
                task.attempt,
                task.worker_id.map(|w| w as i64),
                task.failures,
                task.positions as i64
            ],
        )?;
        Ok(())
    }

    /// The step tasks of a job.
    pub fn steps(&self, job: u64) -> Result<Vec<TaskRow>> {
        let mut stmt = self.0.prepare(
            "SELECT stage, slot, ply, name, state, attempt, worker_id, failures, positions FROM steps WHERE job_id = ?1 ORDER BY stage, ply, slot",
        )?;
        let rows = stmt.query_map([job], task_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Records a file of an accepted step.
    pub fn insert_step_file(&self, job: u64, f: &StepFileRow) -> Result<()> {
        self.0.execute(
            "INSERT OR REPLACE INTO step_files (job_id, stage, path, kind, slot, ply, bytes, checksum, keys) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                job,
                f.stage as i64,
                f.path,
                f.kind,
                f.slot,
                f.ply,
                f.bytes as i64,
                f.checksum,
                f.keys as i64
            ],
        )?;
        Ok(())
    }

    /// Forgets a step file (superseded or consumed).
    pub fn delete_step_file(&self, job: u64, path: &str) -> Result<()> {
        self.0.execute(
            "DELETE FROM step_files WHERE job_id = ?1 AND path = ?2",
            params![job, path],
        )?;
        Ok(())
    }

    /// The recorded step files of a job.
    pub fn step_files(&self, job: u64) -> Result<Vec<StepFileRow>> {
        let mut stmt = self.0.prepare(
            "SELECT stage, path, kind, slot, ply, bytes, checksum, keys FROM step_files WHERE job_id = ?1 ORDER BY stage, ply, slot, path",
        )?;
        let rows = stmt.query_map([job], |r| {
            Ok(StepFileRow {
                stage: r.get::<_, i64>(0)? as usize,
                path: r.get(1)?,
                kind: r.get(2)?,
                slot: r.get(3)?,
                ply: r.get(4)?,
                bytes: r.get::<_, i64>(5)? as u64,
                checksum: r.get(6)?,
                keys: r.get::<_, i64>(7)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Forgets every step and step file of a stage (it is done, or starts again).
    pub fn delete_stage_steps(&self, job: u64, stage: usize) -> Result<()> {
        for table in ["steps", "step_files"] {
            self.0.execute(
                &format!("DELETE FROM {table} WHERE job_id = ?1 AND stage = ?2"),
                params![job, stage as i64],
            )?;
        }
        Ok(())
    }

    /// Updates a task's state, attempt, worker and failure count.
    pub fn update_task(&self, job: u64, task: &TaskRow) -> Result<()> {
        if task.step.is_some() {
            return self.insert_step(job, task);
        }
        self.0.execute(
            "UPDATE tasks SET state = ?3, attempt = ?4, worker_id = ?5, failures = ?6 WHERE job_id = ?1 AND stage = ?2",
            params![
                job,
                task.stage as i64,
                task.state,
                task.attempt,
                task.worker_id.map(|w| w as i64),
                task.failures
            ],
        )?;
        Ok(())
    }

    /// Stores a task's new state and logs the event that caused it (in the caller's
    /// transaction): every task transition goes through here.
    pub fn record_task(
        &self,
        job: u64,
        task: &TaskRow,
        attempt: u32,
        worker: Option<u64>,
        kind: &str,
        detail: &str,
    ) -> Result<()> {
        self.update_task(job, task)?;
        let detail = match task.step {
            Some(_) if detail.is_empty() => task.name.clone(),
            Some(_) => format!("{}: {detail}", task.name),
            None => detail.to_string(),
        };
        self.event(
            Some(job),
            Some(task.stage),
            Some(attempt),
            worker,
            kind,
            &detail,
        )
    }

    /// Records where a finished task's time went: compute, read, write and wait ms, bytes
    /// read and written; with `accumulate` (a step), added to the stage's figures.
    pub fn add_task_times(
        &self,
        job: u64,
        stage: usize,
        times: [u64; 6],
        accumulate: bool,
    ) -> Result<()> {
        let sql = if accumulate {
            "UPDATE tasks SET compute_ms = compute_ms + ?3, read_ms = read_ms + ?4, write_ms = write_ms + ?5, wait_ms = wait_ms + ?6, bytes_read = bytes_read + ?7, bytes_written = bytes_written + ?8 WHERE job_id = ?1 AND stage = ?2"
        } else {
            "UPDATE tasks SET compute_ms = ?3, read_ms = ?4, write_ms = ?5, wait_ms = ?6, bytes_read = ?7, bytes_written = ?8 WHERE job_id = ?1 AND stage = ?2"
        };
        self.0.execute(
            sql,
            params![
                job,
                stage as i64,
                times[0] as i64,
                times[1] as i64,
                times[2] as i64,
                times[3] as i64,
                times[4] as i64,
                times[5] as i64
            ],
        )?;
        Ok(())
    }

    /// Records what a merged slice cost: thread and wall microseconds, bytes read and
    /// written, peak resident bytes; with `accumulate`, added to what its earlier steps cost
    /// (the peak is the largest).
    pub fn add_slice_cost(
        &self,
        job: u64,
        slice: u32,
        cost: [u64; 5],
        accumulate: bool,
    ) -> Result<()> {
        if !accumulate {
            return self.put_slice_cost(job, slice, cost);
        }
        self.0.execute(
            "INSERT INTO slice_costs (job_id, slice_id, cpu_us, wall_us, bytes_read, bytes_written, peak_rss) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (job_id, slice_id) DO UPDATE SET cpu_us = cpu_us + excluded.cpu_us,
                 wall_us = wall_us + excluded.wall_us, bytes_read = bytes_read + excluded.bytes_read,
                 bytes_written = bytes_written + excluded.bytes_written,
                 peak_rss = MAX(peak_rss, excluded.peak_rss)",
            params![
                job,
                slice,
                cost[0] as i64,
                cost[1] as i64,
                cost[2] as i64,
                cost[3] as i64,
                cost[4] as i64
            ],
        )?;
        Ok(())
    }

    /// Records what a merged slice cost (replacing an earlier record).
    pub fn put_slice_cost(&self, job: u64, slice: u32, cost: [u64; 5]) -> Result<()> {
        self.0.execute(
            "INSERT OR REPLACE INTO slice_costs (job_id, slice_id, cpu_us, wall_us, bytes_read, bytes_written, peak_rss) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                job,
                slice,
                cost[0] as i64,
                cost[1] as i64,
                cost[2] as i64,
                cost[3] as i64,
                cost[4] as i64
            ],
        )?;
        Ok(())
    }

    /// What each merged slice of a job cost, by slice id (slices merged before costs were
    /// recorded, or found finished on disk, have none).
    pub fn slice_costs(&self, job: u64) -> Result<Vec<SliceCostRow>> {
        let mut stmt = self.0.prepare(
            "SELECT s.record, c.cpu_us, c.wall_us, c.bytes_read, c.bytes_written, c.peak_rss
             FROM slice_costs c JOIN slices s ON s.job_id = c.job_id AND s.slice_id = c.slice_id
             WHERE c.job_id = ?1 ORDER BY c.slice_id",
        )?;
        let rows = stmt.query_map([job], |r| {
            let get = |i| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
            Ok(SliceCostRow {
                record: r.get(0)?,
                cost: [get(1)?, get(2)?, get(3)?, get(4)?, get(5)?],
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Where each finished task of a job spent its time, by stage.
    pub fn task_times(&self, job: u64) -> Result<Vec<TaskTimesRow>> {
        let mut stmt = self.0.prepare(
            "SELECT t.stage, t.name, t.positions, t.compute_ms, t.read_ms, t.write_ms, t.wait_ms,
                    t.bytes_read, t.bytes_written,
                    (SELECT MAX(at_ms) FROM events e WHERE e.job_id = t.job_id AND e.stage = t.stage AND e.kind = 'assigned'),
                    (SELECT MAX(at_ms) FROM events e WHERE e.job_id = t.job_id AND e.stage = t.stage AND e.kind = 'completed')
             FROM tasks t WHERE t.job_id = ?1 AND t.state = ?2 ORDER BY t.stage",
        )?;
        let rows = stmt.query_map(params![job, TaskState::Done], |r| {
            let get = |i| {
                r.get::<_, Option<i64>>(i)
                    .map(|v| v.unwrap_or(0).max(0) as u64)
            };
            Ok(TaskTimesRow {
                stage: r.get::<_, i64>(0)? as usize,
                name: r.get(1)?,
                positions: get(2)?,
                compute_ms: get(3)?,
                read_ms: get(4)?,
                write_ms: get(5)?,
                wait_ms: get(6)?,
                bytes_read: get(7)?,
                bytes_written: get(8)?,
                assigned_ms: get(9)?,
                completed_ms: get(10)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Stores the manifest record of a merged slice.
    pub fn put_slice(&self, job: u64, slice: u32, stage: usize, record: &str) -> Result<()> {
        self.0.execute(
            "INSERT OR REPLACE INTO slices (job_id, slice_id, stage, record) VALUES (?1, ?2, ?3, ?4)",
            params![job, slice, stage as i64, record],
        )?;
        Ok(())
    }

    /// Forgets the merged slices of a stage (their tables are damaged).
    pub fn delete_stage_slices(&self, job: u64, stage: usize) -> Result<()> {
        self.0.execute(
            "DELETE FROM slices WHERE job_id = ?1 AND stage = ?2",
            params![job, stage as i64],
        )?;
        Ok(())
    }

    /// The merged slice records of a job (JSON), by slice id.
    pub fn slices(&self, job: u64) -> Result<Vec<String>> {
        let mut stmt = self
            .0
            .prepare("SELECT record FROM slices WHERE job_id = ?1 ORDER BY slice_id")?;
        let rows = stmt.query_map([job], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Registers a worker; returns its id.
    pub fn insert_worker(&self, name: &str, threads: u32, memory_budget: u64) -> Result<u64> {
        self.0.execute(
            "INSERT INTO workers (name, threads, memory_budget, registered_ms) VALUES (?1, ?2, ?3, ?4)",
            params![name, threads, memory_budget as i64, now_ms()],
        )?;
        Ok(self.0.last_insert_rowid() as u64)
    }

    /// A registered worker's name and memory budget.
    pub fn worker(&self, id: u64) -> Result<Option<(String, u64)>> {
        Ok(self
            .0
            .query_row(
                "SELECT name, memory_budget FROM workers WHERE id = ?1",
                [id as i64],
                |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)),
            )
            .optional()?)
    }

    /// Appends to the event log.
    pub fn event(
        &self,
        job: Option<u64>,
        stage: Option<usize>,
        attempt: Option<u32>,
        worker: Option<u64>,
        kind: &str,
        detail: &str,
    ) -> Result<()> {
        self.0.execute(
            "INSERT INTO events (at_ms, job_id, stage, attempt, worker_id, kind, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                now_ms(),
                job.map(|j| j as i64),
                stage.map(|s| s as i64),
                attempt,
                worker.map(|w| w as i64),
                kind,
                detail
            ],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sqlite_error_in_a_transaction_names_the_database_file() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let mut db = Db::open(data).unwrap();
        let error = db
            .transaction(|tx| {
                tx.0.execute("INSERT INTO no_such_table VALUES (1)", [])
                    .context("cannot insert")?;
                Ok(())
            })
            .unwrap_err();
        let message = format!("{error:#}");
        let path = data.join(DATABASE).display().to_string();
        assert!(
            message.starts_with(&format!("{path}: cannot insert: ")),
            "{message}"
        );
        // An error of the transaction's own (not SQLite's) is left as it is.
        let error = db
            .transaction(|_| -> Result<()> { anyhow::bail!("no such job") })
            .unwrap_err();
        assert_eq!(format!("{error:#}"), "no such job");
    }
}
