//! Stages split into steps (one task per slice and ply, `--split-above 0`) through real
//! coordinator and worker processes: the tables, manifest and count table must be
//! byte-identical to the in-process solve, with any number of workers, with workers and the
//! coordinator killed on the way, and with a damaged step file.

mod support;

use std::time::Duration;
use support::cluster::*;
use support::*;

const BOARD33_6: [&str; 4] = ["--game", "musashi33", "--max-browns", "6"];
const BOARD25_8: [&str; 2] = ["--max-browns", "8"];

/// A coordinator that splits every stage.
fn split_everything(cluster: &Cluster) -> Proc {
    cluster.start_coordinator_with(&["--split-above".into(), "0".into()])
}

/// Events of `kind` about steps (their detail names the step: "... ply N" or "... finish").
fn step_events(cluster: &Cluster, kind: &str) -> u64 {
    cluster
        .db()
        .query_row(
            "SELECT COUNT(*) FROM events WHERE kind = ?1 AND (detail LIKE '%ply %' OR detail LIKE '%finish%')",
            [kind],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn split_stages_through_one_two_and_four_workers_match_the_in_process_solve() {
    for (name, args, workers) in [
        ("board33-6", &BOARD33_6[..], 2),
        ("board25-8", &BOARD25_8[..], 1),
        ("board25-8", &BOARD25_8[..], 4),
    ] {
        let want = reference(name, args);
        let dir = temp_dir(&format!("steps-{name}-{workers}"));
        let cluster = Cluster::new(&dir, 5_000);
        let _coordinator = split_everything(&cluster);
        let _workers: Vec<Proc> = (0..workers)
            .map(|i| cluster.start_worker(&format!("w{i}"), 1))
            .collect();
        let job = cluster.submit(&[args, &["--wait"]].concat());
        assert_eq!(cluster.job_state(job), "done");
        assert_same_results(&want, &cluster.job_dir(job));
        // Every stage was split, solved by steps, and no step file is left.
        let stages = cluster.stages_in(job, "done").len() as u64;
        assert_eq!(cluster.events("split"), stages, "{name}");
        assert!(step_events(&cluster, "completed") > 3 * stages, "{name}");
        assert_eq!(
            step_events(&cluster, "assigned"),
            step_events(&cluster, "completed"),
            "{name}: every step given out once"
        );
        assert!(!cluster.job_dir(job).join("steps").exists(), "{name}");
        if workers == 4 {
            // The steps of one stage ran on several workers.
            let spread: i64 = cluster
                .db()
                .query_row(
                    "SELECT MAX(n) FROM (SELECT COUNT(DISTINCT worker_id) AS n FROM events
                     WHERE kind = 'completed' AND detail LIKE '%ply %' GROUP BY stage)",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert!(spread >= 2, "one stage's steps on {spread} workers");
        }
    }
}

#[test]
fn killed_workers_and_a_killed_coordinator_lose_no_finished_step() {
    let want = reference("board25-8", &BOARD25_8);
    let dir = temp_dir("steps-chaos");
    let cluster = Cluster::new(&dir, 1_000);
    let mut coordinator = split_everything(&cluster);
    let mut workers: Vec<Proc> = (0..2)
        .map(|i| cluster.start_worker(&format!("w{i}"), 1))
        .collect();
    let job = cluster.submit(&BOARD25_8);
    // First SIGKILL the coordinator while stages are being solved by steps, and restart it,
    // until five kills found finished steps (at most ten kills). Each time, the steps already
    // done must never be given out again: the kill may fall between a merge and its reply,
    // and the worker's repeated report must not undo it. Each kill waits for progress, not
    // for a time: for a step done since the last kill (so that the kill has finished steps to
    // lose, unless their stage ended meanwhile), then a few milliseconds more, varied so that
    // the kills fall at different moments of a step's merge. The coordinator goes first
    // because the job's last stages are its bulk: the worker kills below need them.
    let steps_done = || -> Vec<String> {
        let db = cluster.db();
        let mut stmt = db
            .prepare("SELECT name FROM steps WHERE job_id = ?1 AND state = 'done'")
            .unwrap();
        let done = stmt
            .query_map([job], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        done
    };
    // A stage's step rows go when the stage is finished, so a kill that falls just after a
    // stage's last step may find no finished step: such a kill is still a kill (the
    // coordinator restarts), but it is not one of the kills this test counts on.
    let mut done_at_kill: Vec<(i64, Vec<String>)> = Vec::new();
    let kills_with_steps_done = |done_at_kill: &[(i64, Vec<String>)]| {
        done_at_kill.iter().filter(|(_, d)| !d.is_empty()).count()
    };
    for delay_ms in [0, 70, 30, 110, 50, 20, 90, 40, 60, 10] {
        if kills_with_steps_done(&done_at_kill) >= 5 {
            break;
        }
        let before: Vec<String> = done_at_kill
            .last()
            .map(|(_, done)| done.clone())
            .unwrap_or_default();
        wait_until(
            Duration::from_secs(120),
            "a split stage has a step done since the last kill",
            || {
                steps_done().iter().any(|name| !before.contains(name))
                    || cluster.job_state(job) != "running"
            },
        );
        std::thread::sleep(Duration::from_millis(delay_ms));
        if cluster.job_state(job) != "running" {
            break;
        }
        coordinator.kill();
        let last_event = cluster.last_event();
        done_at_kill.push((last_event, steps_done()));
        coordinator = split_everything(&cluster);
    }
    eprintln!(
        "coordinator kills: finished steps at each: {:?}",
        done_at_kill
            .iter()
            .map(|(_, d)| d.len())
            .collect::<Vec<_>>()
    );
    assert!(
        kills_with_steps_done(&done_at_kill) >= 2,
        "the job ended (state {}) after {} coordinator kills, {} of them with finished steps: \
         at least two were needed",
        cluster.job_state(job),
        done_at_kill.len(),
        kills_with_steps_done(&done_at_kill)
    );
    // Then SIGKILL the holder of a running step of a large stage, three times.
    let holder = || -> Option<(String, String, u32)> {
        cluster
            .db()
            .query_row(
                "SELECT w.name, s.name, s.attempt FROM steps s JOIN workers w ON w.id = s.worker_id
                 WHERE s.job_id = ?1 AND s.state = 'running' AND s.stage >= 6 LIMIT 1",
                [job],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .ok()
    };
    let mut kills = 0;
    let mut attempts = 0;
    let mut next = 2;
    let step_state = |name: &str| -> (String, u32) {
        cluster
            .db()
            .query_row(
                "SELECT state, attempt FROM steps WHERE job_id = ?1 AND name = ?2",
                rusqlite::params![job, name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap_or(("gone".into(), 0))
    };
    while kills < 3 && cluster.job_state(job) == "running" {
        if let Some((worker, step, attempt)) = holder() {
            if let Some(i) = workers.iter().position(|w| w.name == worker) {
                let expired = cluster.events("lease_expired");
                workers.swap_remove(i).kill();
                workers.push(cluster.start_worker(&format!("w{next}"), 1));
                next += 1;
                // Steps are short: the worker may have reported its step just before it died.
                // Either the step is merged, or its lease expires and it goes back.
                wait_until(
                    Duration::from_secs(30),
                    "the killed step is settled",
                    || step_state(&step) != ("running".to_string(), attempt),
                );
                attempts += 1;
                if cluster.events("lease_expired") > expired {
                    kills += 1;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "step holders killed: {attempts}, {kills} of them before their step was reported; \
         stages done then: {}",
        cluster.stages_in(job, "done").len()
    );
    assert_eq!(
        kills, 3,
        "could not kill three step holders before the job ended"
    );
    cluster.wait_done(job, Duration::from_secs(300));
    assert_same_results(&want, &cluster.job_dir(job));
    for (last_event, done) in &done_at_kill {
        for name in done {
            let again = cluster.assigned_after(job, Given::Step(name), *last_event);
            assert_eq!(again, 0, "{name}, done at a kill, was computed again");
        }
    }
    assert_eq!(cluster.events("restarted"), 0, "no step file was lost");
    assert!(!cluster.job_dir(job).join("steps").exists());
}

#[test]
fn a_damaged_step_file_is_named_and_its_stage_solved_again() {
    let want = reference("board25-8", &BOARD25_8);
    let dir = temp_dir("steps-damaged");
    let cluster = Cluster::new(&dir, 500);
    let _coordinator = split_everything(&cluster);
    let mut worker = cluster.start_worker("w0", 1);
    let job = cluster.submit(&BOARD25_8);
    // Stop the only worker once a large stage has messages waiting, and flip a byte of one.
    let waiting = || -> Option<String> {
        cluster
            .db()
            .query_row(
                "SELECT f.path FROM step_files f WHERE f.job_id = ?1 AND f.kind = 'message' AND f.stage >= 7
                 AND f.ply = (SELECT MAX(ply) FROM step_files g WHERE g.job_id = f.job_id AND g.stage = f.stage)
                 LIMIT 1",
                [job],
                |r| r.get(0),
            )
            .ok()
    };
    wait_until(Duration::from_secs(120), "messages wait", || {
        waiting().is_some()
    });
    worker.kill();
    // The files recorded once the worker is dead are the ones the next steps read.
    std::thread::sleep(Duration::from_millis(200));
    let path = cluster.job_dir(job).join(waiting().expect("still waiting"));
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[12] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let _worker = cluster.start_worker("w1", 1);
    cluster.wait_done(job, Duration::from_secs(300));
    assert_same_results(&want, &cluster.job_dir(job));
    let detail: String = cluster
        .db()
        .query_row(
            "SELECT detail FROM events WHERE kind = 'restarted'",
            [],
            |r| r.get(0),
        )
        .expect("the stage was restarted");
    let file = path.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        detail.contains(&file) && detail.contains("damaged"),
        "{detail}"
    );
}
