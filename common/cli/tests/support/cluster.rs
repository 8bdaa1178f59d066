//! Real coordinator and worker processes on loopback, for the cluster tests.
#![allow(dead_code)]

use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A child process killed (SIGKILL) when dropped, so a failing test leaves nothing running.
pub struct Proc {
    pub child: Child,
    pub name: String,
}

impl Proc {
    /// SIGKILL now, and reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A free TCP port on loopback, below the kernel's ephemeral range (32768 and up): a port from
/// that range may be taken, while a coordinator restarts, by an outgoing connection (of a
/// worker reconnecting to it, even to itself). Ports are handed out once per test binary.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let start = (std::process::id() % 400) as u16 * 30;
    loop {
        let port = 20_000 + (start + NEXT.fetch_add(1, Ordering::Relaxed)) % 12_000;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// A task as events name it: a stage by number, a step by name.
pub enum Given<'a> {
    /// A stage task.
    Stage(u32),
    /// A step task ("browns=6 black=00 ply 4").
    Step(&'a str),
}

/// A cluster under test: its data directory, port and token file.
pub struct Cluster {
    pub data: PathBuf,
    pub port: u16,
    pub token_file: PathBuf,
    pub lease_ms: u64,
    logs: PathBuf,
}

impl Cluster {
    /// A new cluster in `dir` (nothing started yet).
    pub fn new(dir: &Path, lease_ms: u64) -> Cluster {
        let token_file = dir.join("token");
        std::fs::write(&token_file, "test-token-0123456789\n").unwrap();
        let logs = dir.join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        Cluster {
            data: dir.join("data"),
            port: free_port(),
            token_file,
            lease_ms,
            logs,
        }
    }

    /// The coordinator's URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn spawn(&self, name: &str, args: &[String]) -> Proc {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.logs.join(format!("{name}.log")))
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_retro"))
            .args(args)
            .env("RETRO_LOG", "info")
            .env_remove("RETRO_TOKEN")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        Proc {
            child,
            name: name.to_string(),
        }
    }

    /// Starts the coordinator and waits until it answers.
    pub fn start_coordinator(&self) -> Proc {
        self.start_coordinator_with(&[])
    }

    /// Starts the coordinator with extra flags and waits until it answers.
    pub fn start_coordinator_with(&self, extra: &[String]) -> Proc {
        let p = self.spawn(
            "coordinator",
            &[
                &[
                    "coordinator".into(),
                    "--listen".into(),
                    format!("127.0.0.1:{}", self.port),
                    "--data".into(),
                    self.data.display().to_string(),
                    "--token-file".into(),
                    self.token_file.display().to_string(),
                    "--lease-ms".into(),
                    self.lease_ms.to_string(),
                ][..],
                extra,
            ]
            .concat(),
        );
        wait_until(Duration::from_secs(20), "the coordinator listens", || {
            std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
        });
        p
    }

    /// Starts a worker process named `name`.
    pub fn start_worker(&self, name: &str, threads: u32) -> Proc {
        self.start_worker_with(name, threads, &self.url(), &[])
    }

    /// Starts a worker process named `name` for the coordinator at `url`, with extra flags.
    pub fn start_worker_with(&self, name: &str, threads: u32, url: &str, extra: &[String]) -> Proc {
        self.spawn(
            name,
            &[
                &[
                    "worker".into(),
                    "--coordinator".into(),
                    url.to_string(),
                    "--token-file".into(),
                    self.token_file.display().to_string(),
                    "--threads".into(),
                    threads.to_string(),
                    "--name".into(),
                    name.into(),
                ][..],
                extra,
            ]
            .concat(),
        )
    }

    /// `retro <command> --coordinator URL --token-file F <args>`: output of a client command.
    pub fn client(&self, command: &str, args: &[&str]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_retro"))
            .arg(command)
            .args(args)
            .args(["--coordinator", &self.url(), "--token-file"])
            .arg(&self.token_file)
            .env("RETRO_LOG", "warn")
            .output()
            .unwrap()
    }

    /// Submits a job; returns its id.
    pub fn submit(&self, args: &[&str]) -> u64 {
        let out = self.client("submit", args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "submit failed: {stdout} {}\ncoordinator log:\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.log("coordinator")
        );
        stdout
            .split_whitespace()
            .nth(1)
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("no job id in {stdout}"))
    }

    /// Read-only view of the coordinator's database.
    pub fn db(&self) -> Connection {
        Connection::open_with_flags(
            self.data.join("coordinator.sqlite"),
            OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap()
    }

    /// A job's state ("running", "done", ...).
    pub fn job_state(&self, job: u64) -> String {
        self.db()
            .query_row("SELECT state FROM jobs WHERE id = ?1", [job], |r| r.get(0))
            .unwrap()
    }

    /// Stages of a job in state `state`.
    pub fn stages_in(&self, job: u64, state: &str) -> Vec<u32> {
        let db = self.db();
        let mut stmt = db
            .prepare("SELECT stage FROM tasks WHERE job_id = ?1 AND state = ?2 ORDER BY stage")
            .unwrap();
        stmt.query_map(rusqlite::params![job, state], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    }

    /// The id of the latest event.
    pub fn last_event(&self) -> i64 {
        self.db()
            .query_row("SELECT MAX(id) FROM events", [], |r| r.get(0))
            .unwrap()
    }

    /// How many times `task` of `job` was given out after event `after`.
    pub fn assigned_after(&self, job: u64, task: Given, after: i64) -> i64 {
        let (sql, key) = match task {
            Given::Stage(stage) => ("stage = ?2", rusqlite::types::Value::from(stage)),
            Given::Step(name) => (
                "detail = ?2",
                rusqlite::types::Value::from(name.to_string()),
            ),
        };
        self.db()
            .query_row(
                &format!(
                    "SELECT COUNT(*) FROM events WHERE job_id = ?1 AND kind = 'assigned' AND {sql} AND id > ?3"
                ),
                rusqlite::params![job, key, after],
                |r| r.get(0),
            )
            .unwrap()
    }

    /// Count of events of `kind`.
    pub fn events(&self, kind: &str) -> u64 {
        self.db()
            .query_row("SELECT COUNT(*) FROM events WHERE kind = ?1", [kind], |r| {
                r.get(0)
            })
            .unwrap()
    }

    /// The job's directory.
    pub fn job_dir(&self, job: u64) -> PathBuf {
        self.data.join(format!("jobs/{job:06}"))
    }

    /// Waits until the job is done (fails on failure, cancel or timeout).
    pub fn wait_done(&self, job: u64, timeout: Duration) {
        wait_until(timeout, "the job finishes", || {
            let state = self.job_state(job);
            assert!(
                state == "running" || state == "done",
                "job {job} is {state}"
            );
            state == "done"
        });
    }

    /// The coordinator's log so far.
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.logs.join(format!("{name}.log"))).unwrap_or_default()
    }
}

/// Polls `condition` every 50 ms until it holds; panics after `timeout`.
pub fn wait_until(timeout: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < timeout, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Reference output of an in-process solve with `args` (e.g. `--max-browns 6`), computed once
/// per test binary.
pub fn reference(name: &str, args: &[&str]) -> PathBuf {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    static DONE: OnceLock<std::sync::Mutex<Vec<String>>> = OnceLock::new();
    let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("reference-{name}"));
    let done = DONE.get_or_init(Default::default);
    if !done.lock().unwrap().contains(&name.to_string()) {
        let _ = std::fs::remove_dir_all(&dir);
        let mut full = vec![
            "solve",
            "--in-process",
            "--quiet",
            "--out",
            dir.to_str().unwrap(),
        ];
        full.extend_from_slice(args);
        super::retro_ok(&full);
        done.lock().unwrap().push(name.to_string());
    }
    dir
}
