//! The cluster pipeline with real processes on loopback: a coordinator, workers, clients.
//! Every job's tables, manifest and count table must be byte-identical to the in-process
//! solve, whatever is killed on the way.

mod support;

use std::time::Duration;
use support::cluster::*;
use support::*;

const BOARD33_6: [&str; 4] = ["--game", "musashi33", "--max-browns", "6"];

#[test]
fn one_two_and_four_worker_processes_match_the_in_process_solve() {
    let want = reference("board33-6", &BOARD33_6);
    for workers in [1, 2, 4] {
        let dir = temp_dir(&format!("cluster-board33-{workers}"));
        let cluster = Cluster::new(&dir, 5_000);
        let _coordinator = cluster.start_coordinator();
        let _workers: Vec<Proc> = (0..workers)
            .map(|i| cluster.start_worker(&format!("w{i}"), 1))
            .collect();
        let job = cluster.submit(&[&BOARD33_6[..], &["--wait"]].concat());
        assert_eq!(cluster.job_state(job), "done");
        assert_same_results(&want, &cluster.job_dir(job));
        // Each stage was given out once and merged once.
        let stages = cluster.stages_in(job, "done").len() as u64;
        assert_eq!(cluster.events("assigned"), stages);
        assert_eq!(cluster.events("completed"), stages);
    }
}

#[test]
fn board25_through_two_worker_processes_matches_and_reports_status_and_metrics() {
    let want = reference("board25", &[]);
    let dir = temp_dir("cluster-board25");
    let cluster = Cluster::new(&dir, 5_000);
    let metrics_port = free_port();
    let _coordinator = {
        // The coordinator with a metrics endpoint.
        let log = std::fs::File::create(dir.join("coordinator.log")).unwrap();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_retro"))
            .args([
                "coordinator",
                "--listen",
                &format!("127.0.0.1:{}", cluster.port),
            ])
            .args(["--metrics", &format!("127.0.0.1:{metrics_port}"), "--data"])
            .arg(&cluster.data)
            .arg("--token-file")
            .arg(&cluster.token_file)
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        wait_until(Duration::from_secs(20), "the coordinator listens", || {
            std::net::TcpStream::connect(("127.0.0.1", cluster.port)).is_ok()
        });
        Proc {
            child,
            name: "coordinator".into(),
        }
    };
    let job = cluster.submit(&[]);
    // No worker yet: the status says what the job waits for.
    let status = cluster.client("status", &[&job.to_string()]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success());
    assert!(
        text.contains("running") && text.contains("waiting for a worker"),
        "{text}"
    );
    let _w1 = cluster.start_worker("w1", 1);
    let _w2 = cluster.start_worker("w2", 1);
    cluster.wait_done(job, Duration::from_secs(300));
    assert_same_results(&want, &cluster.job_dir(job));
    let status = cluster.client("status", &[&job.to_string(), "--all"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains(&format!("job {job}: done")), "{text}");
    let jobs = String::from_utf8_lossy(&cluster.client("jobs", &[]).stdout).to_string();
    assert!(jobs.contains("done") && jobs.contains("100.0%"), "{jobs}");
    // Prometheus metrics.
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", metrics_port)).unwrap();
    conn.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut body = String::new();
    conn.read_to_string(&mut body).unwrap();
    for metric in [
        "retro_tasks{state=\"done\"} 25",
        "retro_workers",
        "retro_bytes_written_total",
        "retro_tasks_completed_total 25",
    ] {
        assert!(body.contains(metric), "metrics lack {metric}: {body}");
    }
    // The jobs table has a header with the state and the elapsed time.
    let header = jobs.lines().next().unwrap_or_default();
    for column in ["job", "state", "done", "elapsed", "game"] {
        assert!(header.contains(column), "no {column} column: {jobs}");
    }
    // A job followed to its end says how long it took.
    let quick = cluster.client(
        "submit",
        &[
            "--game", "ring-hop", "--cells", "6", "--tokens", "2", "--wait",
        ],
    );
    let text = String::from_utf8_lossy(&quick.stdout);
    assert!(quick.status.success(), "{text}");
    assert!(
        text.lines()
            .last()
            .unwrap_or_default()
            .contains(" done in "),
        "{text}"
    );
    // A cancelled job's waiting tasks are neither ready nor blocked: not in its status, not
    // in the metrics.
    let cancelled = cluster.submit(&[]);
    assert!(cluster
        .client("cancel", &[&cancelled.to_string()])
        .status
        .success());
    let status = cluster.client("status", &[&cancelled.to_string(), "--all"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("cancelled"), "{text}");
    assert!(
        !text.contains(" ready") && !text.contains(" blocked"),
        "{text}"
    );
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", metrics_port)).unwrap();
    conn.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut body = String::new();
    conn.read_to_string(&mut body).unwrap();
    assert!(
        !body.contains("state=\"ready\"") && !body.contains("state=\"blocked\""),
        "{body}"
    );
}

#[test]
fn embedded_solves_with_one_and_four_workers_match_the_in_process_solve() {
    let want = reference("board25", &[]);
    for workers in ["1", "4"] {
        let out = temp_dir(&format!("embedded-{workers}")).join("out");
        retro_ok(&["solve", "--quiet", "--workers", workers, "--out", s(&out)]);
        assert_same_results(&want, &out);
    }
}

#[test]
fn killed_workers_lose_their_tasks_and_the_job_still_matches() {
    let want = reference("board25", &[]);
    let dir = temp_dir("chaos-workers");
    let cluster = Cluster::new(&dir, 1_000);
    let _coordinator = cluster.start_coordinator();
    let mut workers: Vec<Proc> = (0..2)
        .map(|i| cluster.start_worker(&format!("w{i}"), 1))
        .collect();
    let job = cluster.submit(&[]);
    let mut kills = 0;
    let mut next = 2;
    // Kill the holder of a running task (a large stage, so that it dies mid-slice) three times.
    let holder = |job: u64| -> Option<(String, u32, u32)> {
        cluster
            .db()
            .query_row(
                "SELECT w.name, t.stage, t.attempt FROM tasks t JOIN workers w ON w.id = t.worker_id
                 WHERE t.job_id = ?1 AND t.state = 'running' AND t.stage BETWEEN 8 AND 18 LIMIT 1",
                [job],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .ok()
    };
    while kills < 3 && cluster.job_state(job) == "running" {
        if let Some(first) = holder(job) {
            // Let it compute a little, then kill it if it still holds the same attempt.
            std::thread::sleep(Duration::from_millis(150));
            if holder(job).as_ref() == Some(&first) {
                if let Some(i) = workers.iter().position(|w| w.name == first.0) {
                    workers.swap_remove(i).kill();
                    kills += 1;
                    workers.push(cluster.start_worker(&format!("w{next}"), 1));
                    next += 1;
                    // The dead worker's attempt is taken back once its lease runs out.
                    wait_until(Duration::from_secs(30), "the lease expires", || {
                        cluster.events("lease_expired") >= kills
                    });
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        kills, 3,
        "could not kill three task holders before the job ended"
    );
    cluster.wait_done(job, Duration::from_secs(300));
    assert_same_results(&want, &cluster.job_dir(job));
    assert!(
        cluster.events("lease_expired") >= 3,
        "the killed attempts were taken back"
    );
    assert!(
        !cluster.job_dir(job).join("shards").exists(),
        "no shard left behind"
    );
}

#[test]
fn a_restarted_coordinator_continues_without_recomputing_finished_slices() {
    let want = reference("board25", &[]);
    let dir = temp_dir("chaos-coordinator");
    let cluster = Cluster::new(&dir, 3_000);
    let mut coordinator = cluster.start_coordinator();
    let _w1 = cluster.start_worker("w1", 1);
    let _w2 = cluster.start_worker("w2", 1);
    let job = cluster.submit(&[]);
    wait_until(Duration::from_secs(120), "a few stages are done", || {
        cluster.stages_in(job, "done").len() >= 12
    });
    coordinator.kill();
    let done_before = cluster.stages_in(job, "done");
    let last_event = cluster.last_event();
    assert!(done_before.len() < 25, "the job finished before the kill");
    let _coordinator = cluster.start_coordinator();
    cluster.wait_done(job, Duration::from_secs(300));
    assert_same_results(&want, &cluster.job_dir(job));
    // No stage finished before the kill was given out again afterwards.
    let db = cluster.db();
    for stage in done_before {
        let reassigned = cluster.assigned_after(job, Given::Stage(stage), last_event);
        assert_eq!(
            reassigned, 0,
            "stage {stage} was computed again after the restart"
        );
        let completions: i64 = db
            .query_row(
                "SELECT COUNT(*) FROM events WHERE job_id = ?1 AND stage = ?2 AND kind = 'completed'",
                rusqlite::params![job, stage],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(completions, 1, "stage {stage} merged once");
    }
}

#[test]
fn a_job_without_workers_waits_and_continues_when_one_joins() {
    let want = reference("board25", &[]);
    let dir = temp_dir("no-workers");
    let cluster = Cluster::new(&dir, 500);
    let _coordinator = cluster.start_coordinator();
    let job = cluster.submit(&[]);
    let mut w = cluster.start_worker("w1", 1);
    wait_until(Duration::from_secs(60), "a stage is done", || {
        !cluster.stages_in(job, "done").is_empty()
    });
    w.kill();
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(
        cluster.job_state(job),
        "running",
        "the job neither failed nor finished"
    );
    let status = cluster.client("status", &[&job.to_string()]);
    assert!(status.status.success());
    let text = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(
        text.contains("0 live") && text.contains("waiting for a worker"),
        "{text}"
    );
    let _w2 = cluster.start_worker("w2", 2);
    cluster.wait_done(job, Duration::from_secs(300));
    assert_same_results(&want, &cluster.job_dir(job));
}

#[test]
fn tls_coordinator_serves_tls_clients_and_refuses_plain_text() {
    let want = reference("board33-6", &BOARD33_6);
    let dir = temp_dir("tls");
    let cluster = Cluster::new(&dir, 5_000);
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let _coordinator = cluster.start_coordinator_with(&[
        "--tls-cert".into(),
        s(&cert).into(),
        "--tls-key".into(),
        s(&key).into(),
    ]);
    let url = format!("https://localhost:{}", cluster.port);
    let ca = ["--tls-ca".to_string(), s(&cert).to_string()];
    let _worker = cluster.start_worker_with("w1", 1, &url, &ca);
    let submit = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_retro"))
            .arg("submit")
            .args(BOARD33_6)
            .args(["--wait", "--token-file", s(&cluster.token_file)])
            .args(extra)
            .env("RETRO_LOG", "warn")
            .output()
            .unwrap()
    };
    let plain = submit(&["--coordinator", &cluster.url()]);
    assert!(!plain.status.success(), "a plain-text client is refused");
    let secure = submit(&["--coordinator", &url, "--tls-ca", s(&cert)]);
    assert!(
        secure.status.success(),
        "{}",
        String::from_utf8_lossy(&secure.stderr)
    );
    assert_same_results(&want, &cluster.job_dir(1));
}

#[test]
fn tasks_go_only_to_workers_whose_memory_budget_fits() {
    let want = reference("board33-6", &BOARD33_6);
    let dir = temp_dir("small-worker");
    let cluster = Cluster::new(&dir, 2_000);
    let _coordinator = cluster.start_coordinator();
    let _small = cluster.start_worker_with(
        "small",
        1,
        &cluster.url(),
        &["--memory-budget".into(), "40MiB".into()],
    );
    let job = cluster.submit(&BOARD33_6);
    wait_until(Duration::from_secs(60), "the small worker is stuck", || {
        let text = String::from_utf8_lossy(&cluster.client("status", &[&job.to_string()]).stdout)
            .to_string();
        text.contains("waiting for a worker with a larger memory budget")
    });
    let _big = cluster.start_worker("big", 1);
    cluster.wait_done(job, Duration::from_secs(120));
    assert_same_results(&want, &cluster.job_dir(job));
}

#[test]
fn jobs_and_status_count_published_positions_and_a_finished_jobs_elapsed_time_stays() {
    const BOARD33_4: [&str; 4] = ["--game", "musashi33", "--max-browns", "4"];
    // What a solve's summary says the job solves: "Solved 1,370,764 positions into ...".
    let alone = temp_dir("cluster-client-alone");
    let summary = retro_ok(
        &[
            &["solve", "--in-process", "--quiet", "--out", s(&alone)],
            &BOARD33_4[..],
        ]
        .concat(),
    );
    let solved = summary
        .strip_prefix("Solved ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("{summary}"))
        .to_string();
    assert!(solved.contains(','), "{summary}");
    let dir = temp_dir("cluster-client-output");
    let cluster = Cluster::new(&dir, 5_000);
    let mut coordinator = cluster.start_coordinator();
    let _worker = cluster.start_worker("w1", 1);
    let job = cluster.submit(&[&BOARD33_4[..], &["--wait"]].concat());
    let stdout = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    // The status counts positions as the summary does, with thousands separators.
    let status = stdout(cluster.client("status", &[&job.to_string()]));
    println!("{status}");
    assert!(
        status.starts_with(&format!("job {job}: done — musashi: ")),
        "{status}"
    );
    assert!(
        status.contains(&format!(" stages done, {solved} positions)")),
        "the status should count {solved} positions: {status}"
    );
    assert!(status.contains("\n  elapsed: "), "{status}");
    // A finished job's elapsed time is submission to finish: it does not grow, and a
    // restarted coordinator (which has not loaded the job) shows the same.
    let jobs = || stdout(cluster.client("jobs", &[]));
    let first = jobs();
    println!("{first}");
    std::thread::sleep(Duration::from_millis(2_200));
    assert_eq!(jobs(), first, "a finished job's elapsed time grew");
    coordinator.kill();
    let _coordinator = cluster.start_coordinator();
    assert_eq!(
        jobs(),
        first,
        "a restarted coordinator shows another elapsed time"
    );
    // The columns line up whatever the directory's length: it comes last.
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(lines.len(), 2, "{first}");
    assert!(lines[0].ends_with("  directory"), "{first}");
    let game_at = lines[0].find("  game").unwrap() + 2;
    assert!(lines[1][game_at..].starts_with("musashi: "), "{first}");
    assert!(
        lines[1].ends_with(&format!("  {}", cluster.job_dir(job).display())),
        "{first}"
    );
    for column in ["done", "elapsed"] {
        let end = lines[0].find(column).unwrap() + column.len();
        assert_eq!(
            &lines[1][end..end + 2],
            "  ",
            "{column} misaligned: {first}"
        );
    }
}
