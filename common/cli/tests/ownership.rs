//! One owner per directory, and job state that can always be recovered (real processes).
//!
//! * Two solves into one directory: the second is refused at once, naming the holder; the
//!   first finishes with the tables of a clean run.
//! * Two coordinators on one data directory: the second is refused; the first's job finishes
//!   identical.
//! * A SIGKILLed solve leaves no stale lock: the next run resumes at once.
//! * A byte-flipped or deleted `manifest.json` is rebuilt from the intact tables, a damaged
//!   `counts.csv` is recomputed, and the results are identical to a clean run (in-process and
//!   through the embedded cluster).
//! * The database's owner row: a coordinator elsewhere (as on a shared filesystem whose locks
//!   do not reach this machine) deposes a running one, which then writes nothing (submit,
//!   cancel and registration refused, the reaper takes no task back), refuses a new one while
//!   its heartbeat is fresh, and is taken over once stale.
//! * A coordinator restarted on a job whose manifest was damaged or deleted rebuilds it from
//!   its database, byte-identical, with a warning naming it: a running job as it recovers, a
//!   finished one (and its count table) at start.
//! * The disk filling up in the middle of a stage (a small tmpfs): a clear error naming the
//!   file, and after space is freed the solve finishes identical. It needs root to mount the
//!   tmpfs; without root it is skipped with a message saying so.

mod support;

use std::process::{Command, Stdio};
use std::time::Duration;
use support::cluster::{reference, wait_until, Cluster, Proc};
use support::{assert_same_results, retro, retro_err, retro_ok, s, temp_dir};

/// The solve the tests run: long enough (several seconds) to be caught running.
const SOLVE: &[&str] = &["solve", "--max-browns", "11", "--quiet"];

/// A clean in-process run of [`SOLVE`].
fn clean() -> std::path::PathBuf {
    reference("b25-11", &["--max-browns", "11"])
}

/// Starts `retro SOLVE --out dir` (plus `extra`) in the background.
fn start_solve(dir: &std::path::Path, extra: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_retro"))
        .args(SOLVE)
        .args(extra)
        .arg("--out")
        .arg(dir)
        .env("RETRO_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits until the solve writing `dir` holds its lock (the lock file names it).
fn wait_for_lock(dir: &std::path::Path, pid: u32) {
    wait_until(Duration::from_secs(20), "the solve holds its lock", || {
        std::fs::read_to_string(dir.join(".retro.lock"))
            .is_ok_and(|holder| holder.contains(&format!("pid {pid} ")))
    });
}

#[test]
fn a_second_solve_into_a_directory_in_use_is_refused_and_the_first_finishes_identical() {
    for driver in [&[][..], &["--in-process"][..]] {
        let dir = temp_dir(&format!("two-solves{}", driver.len()));
        let mut first = start_solve(&dir, driver);
        wait_for_lock(&dir, first.id());
        for second in [&[][..], &["--in-process"][..]] {
            let args = [SOLVE, second, &["--out", s(&dir)]].concat();
            let refused = retro_err(&args);
            assert!(
                refused.contains("in use by another retro process")
                    && refused.contains(&format!("pid {}", first.id())),
                "{refused}"
            );
        }
        // A reader beside the writer takes no lock and never sees half-written state: it
        // answers from the stages finished so far, or says what is missing.
        let reader = retro(&["counts", "--tables", s(&dir)]);
        let said = String::from_utf8_lossy(&reader.stderr).to_string();
        assert!(
            reader.status.success()
                || said.contains("not solved yet")
                || said.contains("no manifest"),
            "{said}"
        );
        assert!(
            !said.contains("damaged") && !said.contains("panicked"),
            "{said}"
        );
        assert!(first.wait().unwrap().success());
        assert_same_results(&clean(), &dir);
    }
}

#[test]
fn a_second_coordinator_on_a_data_directory_is_refused_and_the_first_finishes_its_job() {
    let dir = temp_dir("two-coordinators");
    let cluster = Cluster::new(&dir, 5_000);
    let _coordinator = cluster.start_coordinator();
    let second = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(["--listen", "127.0.0.1:0", "--data", s(&cluster.data)])
        .args(["--token-file", s(&cluster.token_file)])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    assert!(
        stderr.contains("in use by another retro process"),
        "{stderr}"
    );
    let _worker = cluster.start_worker("w", 2);
    let job = cluster.submit(&["--max-browns", "9"]);
    cluster.wait_done(job, Duration::from_secs(120));
    assert_same_results(
        &reference("b25-9", &["--max-browns", "9"]),
        &cluster.job_dir(job),
    );
}

#[test]
fn a_killed_solve_leaves_no_stale_lock() {
    let dir = temp_dir("killed-holder");
    let mut first = start_solve(&dir, &[]);
    wait_for_lock(&dir, first.id());
    std::thread::sleep(Duration::from_millis(1500));
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    // The lock file is still there, naming the dead process; the lock is not.
    assert!(dir.join(".retro.lock").exists());
    retro_ok(&[SOLVE, &["--out", s(&dir)]].concat());
    assert_same_results(&clean(), &dir);
}

/// Flips one byte of `path`.
fn flip_byte(path: &std::path::Path, at: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at] ^= 0x20;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn damaged_or_missing_manifests_and_count_tables_are_rebuilt() {
    for driver in [&["--in-process"][..], &[][..]] {
        let dir = temp_dir(&format!("rebuilt{}", driver.len()));
        let args = [
            &["solve", "--max-browns", "11", "--quiet"][..],
            driver,
            &["--out", s(&dir)],
        ]
        .concat();
        retro_ok(&args);
        // A byte flipped in the manifest: readers name it and say how to repair it.
        flip_byte(&dir.join("manifest.json"), 300);
        let refused = retro_err(&["counts", "--out", s(&dir)]);
        assert!(
            refused.contains("manifest.json")
                && refused.contains("re-run the `retro solve`")
                && refused.contains("restart the coordinator"),
            "{refused}"
        );
        let out = retro(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_same_results(&clean(), &dir);
        // The manifest deleted, a table damaged too: the table's stage is solved again.
        std::fs::remove_file(dir.join("manifest.json")).unwrap();
        flip_byte(&dir.join("browns10-black11.tbl"), 100);
        let out = retro(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_same_results(&clean(), &dir);
        // A damaged count table is written again.
        std::fs::write(dir.join("counts.csv"), "0,1,2\n").unwrap();
        retro_ok(&args);
        assert_same_results(&clean(), &dir);
    }
    // A directory holding anything but a job's files is still refused.
    let foreign = temp_dir("foreign");
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let refused = retro_err(&[
        "solve",
        "--max-browns",
        "3",
        "--quiet",
        "--out",
        s(&foreign),
    ]);
    assert!(refused.contains("notes.txt"), "{refused}");
}

/// Runs `mount` with `args`; whether it worked.
fn mount(args: &[&str]) -> bool {
    Command::new("mount")
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether this process runs as root.
fn root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

#[test]
fn a_full_disk_fails_clearly_and_the_solve_finishes_identical_once_space_is_freed() {
    if !root() {
        // Mounting a tmpfs needs root (CAP_SYS_ADMIN). Only then is the test skipped: as root
        // (as in CI) a failed mount fails it. Written to stderr itself, not through
        // `eprintln!`, so that the test harness shows it although the test passes.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED a_full_disk_fails_clearly_and_the_solve_finishes_identical_once_space_is_freed: \
             it mounts a small tmpfs, which needs root; run the tests as root to run it"
        );
        return;
    }
    let dir = temp_dir("disk-full");
    let point = dir.join("mnt");
    std::fs::create_dir_all(&point).unwrap();
    // A 2 MiB filesystem: BOARD25 up to 11 browns needs about 3 MiB of tables.
    assert!(
        mount(&["-t", "tmpfs", "-o", "size=2m", "tmpfs", s(&point)]),
        "running as root, yet a small tmpfs cannot be mounted at {}",
        point.display()
    );
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(point.clone());
    let drivers = [("cluster", &[][..]), ("in-process", &["--in-process"][..])];
    for (name, driver) in drivers {
        let out_dir = point.join(name);
        let args = [SOLVE, driver, &["--out", s(&out_dir)]].concat();
        let error = retro_err(&args);
        // The disk fills while a table or (through the cluster) the job's database is written:
        // either way the cause is said, once.
        let cause = ["No space left on device", "disk is full"]
            .into_iter()
            .find(|cause| error.contains(cause))
            .unwrap_or_else(|| panic!("{name}: no cause: {error}"));
        assert_eq!(
            error.matches(cause).count(),
            1,
            "{name}: the cause is said once: {error}"
        );
        assert!(
            error.contains(s(&out_dir)),
            "{name}: the file is named: {error}"
        );
    }
    assert!(mount(&["-o", "remount,size=64m", s(&point)]));
    for (name, driver) in drivers {
        let out_dir = point.join(name);
        retro_ok(&[SOLVE, driver, &["--out", s(&out_dir)]].concat());
        assert_same_results(&clean(), &out_dir);
    }
}

/// Writes the database's owner row as another coordinator would (on a shared filesystem whose
/// locks do not reach this machine): `host`, a heartbeat `age_ms` old.
fn claim_as(cluster: &Cluster, host: &str, age_ms: i64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let db = rusqlite::Connection::open(cluster.data.join("coordinator.sqlite")).unwrap();
    db.execute(
        "INSERT OR REPLACE INTO owner (id, pid, host, heartbeat_ms) VALUES (1, 4242, ?1, ?2)",
        rusqlite::params![host, now - age_ms],
    )
    .unwrap();
}

/// Waits until process `p` exits (it must, within 30 s).
fn wait_exit(p: &mut Proc) {
    wait_until(
        Duration::from_secs(30),
        &format!("{} exits", p.name),
        || p.child.try_wait().unwrap().is_some(),
    );
}

#[test]
fn the_database_names_its_coordinator_and_a_second_one_elsewhere_is_refused_or_deposes_it() {
    let dir = temp_dir("owner-row");
    // Lease 3 s: heartbeats and lease checks every 0.75 s.
    let cluster = Cluster::new(&dir, 3_000);
    let mut first = cluster.start_coordinator();
    // A job with a task running whose worker is then killed: its lease will run out.
    let job = cluster.submit(&["--max-browns", "9"]);
    let mut running = Vec::new();
    for attempt in 0..5 {
        let mut worker = cluster.start_worker(&format!("w{attempt}"), 2);
        wait_until(Duration::from_secs(60), "a task runs", || {
            !cluster.stages_in(job, "running").is_empty()
        });
        worker.kill();
        // A report or poll it sent just before it died may still be served: let it settle.
        // (Killed between two tasks, it holds none: try again.)
        std::thread::sleep(Duration::from_millis(300));
        running = cluster.stages_in(job, "running");
        if !running.is_empty() {
            break;
        }
    }
    assert!(!running.is_empty(), "no worker was caught running a task");
    // At once (long before the lease runs out), another machine takes the database over:
    // this coordinator stops scheduling, and writes nothing more.
    claim_as(&cluster, "elsewhere", 0);
    let events = cluster.last_event();
    let owned_elsewhere = "now owned by another coordinator (pid 4242 on elsewhere)";
    wait_until(Duration::from_secs(20), "the coordinator notices", || {
        cluster.log("coordinator").contains(owned_elsewhere)
    });
    // Every request that would write is refused, naming the new owner...
    let submitted = cluster.client("submit", &["--max-browns", "6"]);
    let cancelled = cluster.client("cancel", &[&job.to_string()]);
    for (what, out) in [("submit", submitted), ("cancel", cancelled)] {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what} accepted: {stderr}");
        assert!(
            stderr.contains("FailedPrecondition") && stderr.contains(owned_elsewhere),
            "{what}: {stderr}"
        );
    }
    let mut late = cluster.start_worker("late", 1);
    wait_exit(&mut late);
    assert!(
        cluster.log("late").contains(owned_elsewhere),
        "{}",
        cluster.log("late")
    );
    // ... read-only ones are still answered ...
    let status = cluster.client("status", &[&job.to_string()]);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    // ... and the reaper takes no task back, although their leases ran out long ago.
    std::thread::sleep(Duration::from_millis(3 * cluster.lease_ms));
    assert_eq!(cluster.events("lease_expired"), 0);
    assert_eq!(cluster.stages_in(job, "running"), running);
    assert_eq!(cluster.job_state(job), "running");
    assert_eq!(
        cluster.last_event(),
        events,
        "a deposed coordinator writes no event"
    );
    assert!(
        !cluster.log("coordinator").contains("lease expired"),
        "{}",
        cluster.log("coordinator")
    );
    first.kill();
    // A coordinator starting while the other machine's heartbeat is fresh is refused...
    claim_as(&cluster, "elsewhere", 0);
    let refused = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(["--listen", "127.0.0.1:0", "--data", s(&cluster.data)])
        .args(["--token-file", s(&cluster.token_file)])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains("owned by another coordinator (pid 4242 on elsewhere"),
        "{stderr}"
    );
    // ... and takes over once it is stale (a crashed coordinator). It recovers the running
    // job, rebuilding its manifest (deleted meanwhile) from the database with a warning; its
    // requests are served: a cancel, a new job solved.
    claim_as(&cluster, "elsewhere", 600_000);
    let manifest = cluster.job_dir(job).join("manifest.json");
    std::fs::remove_file(&manifest).unwrap();
    let _coordinator = cluster.start_coordinator();
    wait_until(Duration::from_secs(20), "the manifest is rebuilt", || {
        cluster.log("coordinator").contains(&format!(
            "{}: missing; manifest rebuilt from the coordinator's database",
            manifest.display()
        ))
    });
    assert!(manifest.exists());
    let cancelled = cluster.client("cancel", &[&job.to_string()]);
    assert!(
        cancelled.status.success(),
        "{}",
        String::from_utf8_lossy(&cancelled.stderr)
    );
    let _worker = cluster.start_worker("w", 2);
    let job = cluster.submit(&["--max-browns", "6"]);
    cluster.wait_done(job, Duration::from_secs(120));
    assert_same_results(
        &reference("b25-6", &["--max-browns", "6"]),
        &cluster.job_dir(job),
    );
}

#[test]
fn a_coordinator_restarted_on_a_finished_job_rebuilds_its_damaged_or_missing_manifest() {
    let dir = temp_dir("finished-manifest");
    let cluster = Cluster::new(&dir, 5_000);
    let mut coordinator = cluster.start_coordinator();
    let _worker = cluster.start_worker("w", 2);
    let job = cluster.submit(&["--max-browns", "6"]);
    cluster.wait_done(job, Duration::from_secs(120));
    let job_dir = cluster.job_dir(job);
    let manifest = job_dir.join("manifest.json");
    let original = std::fs::read(&manifest).unwrap();
    let counts = job_dir.join("counts.csv");
    let original_counts = std::fs::read(&counts).unwrap();
    let rebuilt = "manifest rebuilt from the coordinator's database";
    for (round, damage) in ["flipped", "deleted"].into_iter().enumerate() {
        coordinator.kill();
        match damage {
            "flipped" => flip_byte(&manifest, 300),
            _ => std::fs::remove_file(&manifest).unwrap(),
        }
        // Readers name the file and say how to rebuild it, for either kind of job.
        let refused = retro_err(&["counts", "--out", s(&job_dir)]);
        assert!(
            refused.contains(s(&job_dir))
                && refused.contains("manifest.json")
                && refused.contains("re-run the `retro solve`")
                && refused.contains("restart the coordinator"),
            "{damage}: {refused}"
        );
        coordinator = cluster.start_coordinator();
        wait_until(Duration::from_secs(20), "the manifest is rebuilt", || {
            cluster.log("coordinator").matches(rebuilt).count() == round + 1
        });
        let log = cluster.log("coordinator");
        let warning = log.lines().rfind(|l| l.contains(rebuilt)).unwrap();
        assert!(
            warning.contains("WARN") && warning.contains(s(&manifest)),
            "{damage}: {warning}"
        );
        if damage == "deleted" {
            assert!(warning.contains(": missing;"), "{warning}");
        } else {
            assert!(warning.contains("damaged"), "{warning}");
        }
        assert!(
            std::fs::read(&manifest).unwrap() == original,
            "{damage}: the rebuilt manifest differs from the original"
        );
        retro_ok(&["counts", "--out", s(&job_dir)]);
    }
    // A damaged count table of the finished job is written again as well.
    coordinator.kill();
    std::fs::write(&counts, "0,1,2\n").unwrap();
    let _coordinator = cluster.start_coordinator();
    wait_until(
        Duration::from_secs(20),
        "the count table is rewritten",
        || std::fs::read(&counts).unwrap() == original_counts,
    );
    assert!(cluster
        .log("coordinator")
        .contains(&format!("{}: missing or damaged", counts.display())));
    // Nothing else changed: the job's results are those of a clean run, and it stays done.
    assert_eq!(cluster.job_state(job), "done");
    assert_same_results(&reference("b25-6", &["--max-browns", "6"]), &job_dir);
}
