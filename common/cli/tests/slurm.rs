//! `deploy/slurm/retro.sbatch` on a real one-node Slurm cluster (Debian's slurmctld, slurmd
//! and munge, set up by `deploy/slurm/local-cluster.sh` in a temporary directory): BOARD33 up
//! to 7 browns through `sbatch` must give tables byte-identical to the in-process solve, also
//! when the Slurm job is cancelled mid-way (`scancel`) and the same command is submitted
//! again (it resumes the same coordinator job); a job that cannot be solved makes the Slurm
//! job fail.
//!
//! The set-up installs the Debian packages with apt-get when they are missing (as root); the
//! test is skipped, with a message saying why, only when that is impossible (not root, no
//! apt-get). The daemons are stopped when the test ends, also when it fails.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use support::cluster::{free_port, reference};
use support::*;

const BOARD33_7: [&str; 4] = ["--game", "musashi33", "--max-browns", "7"];

fn script(name: &str) -> PathBuf {
    repo_root().join("deploy/slurm").join(name)
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A one-node Slurm cluster in `dir`, stopped (jobs cancelled, daemons killed) when dropped.
struct Slurm {
    dir: PathBuf,
}

impl Slurm {
    fn start(dir: &Path) -> Slurm {
        let out = Command::new(script("local-cluster.sh"))
            .arg("start")
            .arg(dir)
            .env("SLURMCTLD_PORT", free_port().to_string())
            .env("SLURMD_PORT", free_port().to_string())
            .output()
            .unwrap();
        // Stopped even if it started only in part.
        let slurm = Slurm {
            dir: dir.to_path_buf(),
        };
        assert!(
            out.status.success(),
            "the Slurm cluster did not start: {}\nslurmctld log:\n{}\nslurmd log:\n{}",
            text(&out),
            slurm.log("slurmctld"),
            slurm.log("slurmd")
        );
        slurm
    }

    fn log(&self, daemon: &str) -> String {
        std::fs::read_to_string(self.dir.join(format!("log/{daemon}.log"))).unwrap_or_default()
    }

    /// A Slurm command against this cluster.
    fn run(&self, command: &str, args: &[&str]) -> Output {
        Command::new(command)
            .args(args)
            .env("SLURM_CONF", self.dir.join("slurm.conf"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run {command}: {e}"))
    }

    /// `sbatch retro.sbatch <args>` with the data directory `data`; returns the Slurm job id.
    fn sbatch(&self, data: &Path, port: u16, resources: &[&str], args: &[&str]) -> u64 {
        self.sbatch_with(data, port, "", resources, args)
    }

    /// `sbatch` with more environment (`,NAME=VALUE...`) for the batch script.
    fn sbatch_with(
        &self,
        data: &Path,
        port: u16,
        env: &str,
        resources: &[&str],
        args: &[&str],
    ) -> u64 {
        let output = data.join("slurm-%j.out");
        let export = format!(
            "--export=ALL,RETRO_DATA={},RETRO={},RETRO_PORT={port},RETRO_START_TIMEOUT=60{env}",
            data.display(),
            env!("CARGO_BIN_EXE_retro")
        );
        let sbatch_script = script("retro.sbatch");
        let mut all = vec![
            "--parsable",
            "--time=10:00",
            &export,
            "--output",
            s(&output),
        ];
        all.extend_from_slice(resources);
        all.push(s(&sbatch_script));
        all.extend_from_slice(args);
        std::fs::create_dir_all(data).unwrap();
        let out = self.run("sbatch", &all);
        assert!(out.status.success(), "sbatch failed: {}", text(&out));
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .split(';')
            .next()
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("no job id from sbatch: {}", text(&out)))
    }

    /// `JobState` and `ExitCode` of a Slurm job.
    fn job(&self, id: u64) -> (String, String) {
        let out = self.run("scontrol", &["show", "job", &id.to_string(), "--oneliner"]);
        let line = text(&out);
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|f| f.strip_prefix(&format!("{name}=")))
                .unwrap_or("?")
                .to_string()
        };
        (field("JobState"), field("ExitCode"))
    }

    /// Waits until Slurm job `id` has ended; returns its state and exit code.
    fn wait(&self, id: u64, data: &Path, timeout: Duration) -> (String, String) {
        let start = Instant::now();
        loop {
            let (state, code) = self.job(id);
            if !matches!(
                state.as_str(),
                "PENDING" | "CONFIGURING" | "RUNNING" | "COMPLETING" | "?"
            ) {
                return (state, code);
            }
            assert!(
                start.elapsed() < timeout,
                "Slurm job {id} still {state} after {timeout:?}; its output:\n{}",
                batch_output(data, id)
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        let out = Command::new(script("local-cluster.sh"))
            .arg("stop")
            .arg(&self.dir)
            .output();
        if let Ok(out) = out {
            if !out.status.success() {
                eprintln!("stopping the Slurm cluster: {}", text(&out));
            }
        }
    }
}

/// The batch script's output of Slurm job `id` and the logs beside it.
fn batch_output(data: &Path, id: u64) -> String {
    let mut all = std::fs::read_to_string(data.join(format!("slurm-{id}.out"))).unwrap_or_default();
    if let Ok(entries) = std::fs::read_dir(data.join("slurm/logs")) {
        for entry in entries.flatten() {
            let body = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let tail: Vec<&str> = body.lines().rev().take(5).collect();
            all += &format!("\n--- {} (last lines)\n", entry.path().display());
            for line in tail.into_iter().rev() {
                all += line;
                all.push('\n');
            }
        }
    }
    all
}

/// The coordinator job the batch script submitted for its one run in `data`.
fn retro_job(data: &Path) -> u64 {
    let runs: Vec<_> = std::fs::read_dir(data.join("slurm"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".job"))
        .collect();
    assert_eq!(runs.len(), 1, "one run file in {}/slurm", data.display());
    std::fs::read_to_string(runs[0].path())
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// One number from the coordinator's database in `data`, if it can be read.
fn db_try(data: &Path, sql: &str) -> Option<i64> {
    let db = rusqlite::Connection::open_with_flags(
        data.join("coordinator.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .ok()?;
    db.query_row(sql, [], |r| r.get(0)).ok()
}

/// One number from the coordinator's database in `data`.
fn db_query(data: &Path, sql: &str) -> i64 {
    db_try(data, sql).unwrap_or_else(|| panic!("cannot read {sql} in {}", data.display()))
}

fn root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Slurm and munge are there, or installed now; `Err` says why they cannot be.
fn slurm_installed() -> Result<(), String> {
    if !root() {
        return Err("a Slurm cluster's slurmd needs root (it starts jobs as their user)".into());
    }
    let out = Command::new(script("local-cluster.sh"))
        .arg("install")
        .output()
        .map_err(|e| format!("cannot run local-cluster.sh: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(text(&out))
    }
}

#[test]
fn a_slurm_batch_job_matches_the_in_process_solve_and_resumes_after_scancel() {
    if let Err(why) = slurm_installed() {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED a_slurm_batch_job_matches_the_in_process_solve_and_resumes_after_scancel: \
             Slurm (slurmctld, slurmd, munge) cannot be installed here: {}",
            why.trim()
        );
        return;
    }
    let want = reference("board33-7", &BOARD33_7);
    let dir = temp_dir("slurm");
    let slurm = Slurm::start(&dir.join("cluster"));
    let port = free_port();

    // 1. Two workers (two tasks on the node), memory from --mem, two threads each (so that the
    //    largest stage, one task, uses both cores): done, byte-identical.
    let data = dir.join("run1");
    let id = slurm.sbatch_with(
        &data,
        port,
        ",RETRO_THREADS=2",
        &["--nodes=1", "--ntasks-per-node=2", "--mem=3000"],
        &BOARD33_7,
    );
    let (state, code) = slurm.wait(id, &data, Duration::from_secs(300));
    let output = batch_output(&data, id);
    assert_eq!(
        (state.as_str(), code.as_str()),
        ("COMPLETED", "0:0"),
        "{output}"
    );
    // The memory budget is 85% of --mem shared by the two tasks.
    assert!(
        output.contains("2 worker(s) per node, each --memory-budget 1275MiB --threads 2"),
        "{output}"
    );
    let job = retro_job(&data);
    assert_same_results(&want, &data.join(format!("jobs/{job:06}")));
    assert_eq!(
        db_query(
            &data,
            "SELECT COUNT(DISTINCT w.name) FROM workers w WHERE w.name LIKE 'slurm-%'"
        ),
        2,
        "two workers registered: {output}"
    );

    // 2. Cancelled once stage browns=6 runs, half a second in (stages 0, 2 and 4 done; a stage
    //    needs the one two browns below), then submitted again.
    let data = dir.join("run2");
    let resources = ["--nodes=1", "--ntasks-per-node=1", "--cpus-per-task=2"];
    let first = slurm.sbatch(&data, port, &resources, &BOARD33_7);
    let start = Instant::now();
    loop {
        // (The database may not exist yet, or not have its tables yet.)
        let running = db_try(
            &data,
            "SELECT COUNT(*) FROM tasks WHERE stage = 6 AND state = 'running'",
        )
        .is_some_and(|n| n > 0);
        if running {
            break;
        }
        let (state, _) = slurm.job(first);
        assert!(
            matches!(state.as_str(), "PENDING" | "RUNNING" | "CONFIGURING"),
            "Slurm job {first} is {state} before stage 6 started:\n{}",
            batch_output(&data, first)
        );
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "stage 6 did not start within 3 minutes:\n{}",
            batch_output(&data, first)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Some of the stage's compute (it may also end first: the check below does not depend on
    // which stages were done when the cancel landed, only on their being done).
    std::thread::sleep(Duration::from_millis(500));
    let out = slurm.run("scancel", &[&first.to_string()]);
    assert!(out.status.success(), "scancel: {}", text(&out));
    let (state, _) = slurm.wait(first, &data, Duration::from_secs(60));
    assert_eq!(state, "CANCELLED", "{}", batch_output(&data, first));
    let job = retro_job(&data);
    let done_before = db_query(&data, "SELECT COUNT(*) FROM tasks WHERE state = 'done'");
    assert!(
        (1..8).contains(&done_before),
        "cancelled mid-way: {done_before} of 8 stages done"
    );
    // The stages done before the cancel (a bit each) and the last event before the resume.
    let done_mask = db_query(
        &data,
        "SELECT COALESCE(SUM(1 << stage), 0) FROM tasks WHERE state = 'done'",
    );
    let last_event = db_query(&data, "SELECT COALESCE(MAX(id), 0) FROM events");
    // The same command again: it follows the same coordinator job, which resumes.
    let second = slurm.sbatch(&data, port, &resources, &BOARD33_7);
    let (state, code) = slurm.wait(second, &data, Duration::from_secs(300));
    let output = batch_output(&data, second);
    assert_eq!(
        (state.as_str(), code.as_str()),
        ("COMPLETED", "0:0"),
        "{output}"
    );
    assert!(
        output.contains(&format!(
            "job {job} (submitted by an earlier run) is running: following it"
        )),
        "{output}"
    );
    assert_eq!(retro_job(&data), job);
    assert_eq!(db_query(&data, "SELECT COUNT(*) FROM jobs"), 1, "{output}");
    assert_same_results(&want, &data.join(format!("jobs/{job:06}")));
    // What was finished before the cancel was not computed again.
    assert_eq!(
        db_query(
            &data,
            &format!(
                "SELECT COUNT(*) FROM events WHERE kind = 'assigned' AND id > {last_event} \
                 AND ((1 << stage) & {done_mask}) != 0"
            )
        ),
        0,
        "a stage done before the cancel was assigned again: {output}"
    );

    // 3. A job that cannot be submitted fails the Slurm job, with the reason in its output.
    let data = dir.join("run3");
    let id = slurm.sbatch(
        &data,
        port,
        &["--nodes=1", "--ntasks-per-node=1"],
        &["--game", "no-such-game"],
    );
    let (state, code) = slurm.wait(id, &data, Duration::from_secs(120));
    let output = batch_output(&data, id);
    assert_eq!(
        (state.as_str(), code.as_str()),
        ("FAILED", "1:0"),
        "{output}"
    );
    assert!(output.contains("retro.sbatch: error:"), "{output}");
}
