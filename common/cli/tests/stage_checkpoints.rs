//! Checkpoints inside a stage: a solve killed (SIGKILL) in the middle of a stage resumes at the
//! stage's last checkpoint, not at its start, and writes tables byte-identical to an
//! uninterrupted solve — in memory and out of core; a damaged checkpoint is reported by name
//! and not used.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};
use support::*;

/// The stage checkpoints in force under `out`, as `(stage directory, checkpoint directory)`.
fn checkpoints_in_force(out: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(stages) = std::fs::read_dir(out.join("checkpoints")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for stage in stages.flatten() {
        let current = stage.path().join("CURRENT");
        let Ok(text) = std::fs::read_to_string(&current) else {
            continue;
        };
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let dir = json["current"]["dir"].as_str().unwrap().to_string();
        found.push((stage.path(), stage.path().join(dir)));
    }
    found
}

fn start(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_retro"))
        .args(args)
        .env("RETRO_LOG", "warn")
        .spawn()
        .unwrap()
}

/// Waits until a checkpoint at ply `ply` or later of a stage of at least `browns` browns is in
/// force (one the current run saved: none was there before it), then kills the solve.
fn kill_mid_stage(child: &mut Child, out: &Path, browns: u32, ply: u32) {
    kill_at(child, out, browns, ply, |_| true)
}

/// Whether the checkpoint in `dir` holds compact arrays (and a value log).
fn compact(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("state.json")) else {
        return false;
    };
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    json["checkpoint"]["compact"] == true
}

/// [`kill_mid_stage`], for a checkpoint whose directory also satisfies `pick`.
fn kill_at(child: &mut Child, out: &Path, browns: u32, ply: u32, pick: impl Fn(&Path) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let late = checkpoints_in_force(out).into_iter().any(|(stage, dir)| {
            let k: u32 = stage
                .to_string_lossy()
                .rsplit('=')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let p: u32 = dir
                .to_string_lossy()
                .rsplit('-')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            k >= browns && p >= ply && pick(&dir)
        });
        if late {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the solve finished before a checkpoint of browns >= {browns} at ply >= {ply}"
        );
        assert!(Instant::now() < deadline, "no checkpoint appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An uninterrupted in-process solve up to `max_browns` browns, without checkpoints: the
/// tables every interrupted solve must reproduce.
fn reference(name: &str, max_browns: &str) -> PathBuf {
    let out = temp_dir(name).join("out");
    retro_ok(&[
        "solve",
        "--in-process",
        "--max-browns",
        max_browns,
        "--quiet",
        "--no-checkpoints",
        "--out",
        s(&out),
    ]);
    out
}

/// `retro solve --in-process` up to `max_browns` into `out`, with a checkpoint after every ply.
fn checkpointed(max_browns: &'static str, out: &Path) -> Vec<String> {
    [
        "solve",
        "--in-process",
        "--max-browns",
        max_browns,
        "--quiet",
        "--checkpoint-minutes",
        "0",
        "--out",
    ]
    .iter()
    .map(|a| a.to_string())
    .chain([s(out).to_string()])
    .collect()
}

fn log_of(out: &Path) -> String {
    std::fs::read_to_string(out.join("retro.log")).unwrap()
}

/// The latest ply of the checkpoints in force.
fn latest_ply(out: &Path) -> u32 {
    checkpoints_in_force(out)
        .iter()
        .map(|(_, d)| {
            d.to_string_lossy()
                .rsplit('-')
                .next()
                .unwrap()
                .parse::<u32>()
                .unwrap()
        })
        .max()
        .expect("a checkpoint in force")
}

#[test]
fn stages_killed_mid_way_resume_from_their_checkpoints_to_identical_tables() {
    let reference = reference("checkpoint-reference", "11");
    let out = temp_dir("checkpoint-resumed").join("out");
    let args = checkpointed("11", &out);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Killed in memory in the middle of a large stage...
    let mut child = start(&args);
    kill_mid_stage(&mut child, &out, 10, 10);

    // ...resumed in memory, and killed again later in the stage...
    let mut child = start(&args);
    kill_mid_stage(&mut child, &out, 10, latest_ply(&out) + 2);

    // ...continued out of core, on compact arrays (counter nibbles, lists on disk, a value
    // log): a checkpoint of value bytes does not fit them, so that stage starts afresh there
    // and saves checkpoints of its own (arrays, lists and the log so far), and is killed once
    // one is in force...
    let mut ooc: Vec<&str> = args.to_vec();
    ooc.extend(["--out-of-core", "--memory-budget", "260MiB"]);
    let mut child = start(&ooc);
    kill_at(&mut child, &out, 10, 6, compact);
    // ...then resumed out of core, killed again after a later checkpoint (which links the log
    // blocks the one before saved)...
    let mut child = start(&ooc);
    let later = latest_ply(&out) + 2;
    kill_at(&mut child, &out, 10, later, compact);

    // ...and finished out of core.
    retro_ok(&ooc);
    let log = log_of(&out);
    let resumes = log.matches("resuming the stage from a checkpoint").count();
    assert!(
        resumes >= 3,
        "{resumes} resumes from checkpoints in the log:\n{log}"
    );
    // The stage resumed last reports the wall of the sittings before it, up to the
    // checkpoint it resumed from, inside its compute time.
    let finished = log
        .lines()
        .rfind(|l| l.contains("stage finished") && l.contains("stage=browns=10 "))
        .unwrap_or_else(|| panic!("browns=10 did not finish:\n{log}"));
    let field = |name: &str| -> u64 {
        let value = finished.split(&format!(" {name}=")).nth(1).unwrap_or("");
        let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
        digits
            .parse()
            .unwrap_or_else(|_| panic!("no {name} in {finished}"))
    };
    let (earlier, compute) = (field("earlier_sittings_ms"), field("compute_ms"));
    assert!(earlier > 0 && compute > earlier, "{finished}");
    assert!(
        log.contains("array layout: not used"),
        "a checkpoint of value bytes offered to compact arrays is set aside:\n{log}"
    );
    // Scheduled exits stay the same until their ply: checkpoints after the first link them
    // from the one in force instead of writing them again (and the tables stay identical).
    let linked: u64 = log
        .lines()
        .filter(|l| l.contains("checkpoint saved"))
        .filter_map(|l| {
            l.split("linked_lists=")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert!(linked > 0, "no checkpoint linked a list:\n{log}");
    // The last run's step times: checkpoints were saved after every ply, so they took time,
    // each step given as `name=wall s/cores/idle core-s`.
    let steps = log
        .lines()
        .rfind(|l| l.contains("stage steps") && l.contains("stage=browns=10 "))
        .and_then(|l| l.split(" steps=").nth(1))
        .unwrap_or_else(|| panic!("no step times for browns=10:\n{log}"));
    assert!(steps.contains("checkpoint="), "{steps}");
    for step in steps.split_whitespace() {
        let (_, figures) = step.split_once('=').expect("name=figures");
        let figures: Vec<&str> = figures.split('/').collect();
        assert_eq!(figures.len(), 3, "{step}");
        assert!(figures[0].ends_with('s'), "{step}");
        let cores: f64 = figures[1].parse().expect("cores");
        assert!(cores.is_finite() && cores >= 0.0, "{step}");
    }
    assert_same_results(&reference, &out);
    assert!(
        !out.join("checkpoints").exists(),
        "checkpoints are removed once their stages are committed"
    );
}

#[test]
fn a_damaged_checkpoint_is_reported_by_name_and_not_used() {
    let reference = reference("checkpoint-damage-reference", "10");
    let out = temp_dir("checkpoint-damaged").join("out");
    let args = checkpointed("10", &out);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = start(&args);
    kill_mid_stage(&mut child, &out, 9, 8);
    // Flip one byte in the middle of a slice's arrays in every checkpoint in force.
    let mut damaged = Vec::new();
    for (_, dir) in checkpoints_in_force(&out) {
        let file = dir.join("slot-0.table");
        let mut bytes = std::fs::read(&file).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x10;
        std::fs::write(&file, bytes).unwrap();
        damaged.push(file);
    }
    assert!(!damaged.is_empty());
    retro_ok(&args);
    let log = log_of(&out);
    for file in &damaged {
        assert!(
            log.lines()
                .any(|l| l.contains("damaged checkpoint not used")
                    && l.contains(&*file.to_string_lossy())),
            "the log names {}:\n{log}",
            file.display()
        );
    }
    assert_same_results(&reference, &out);
}

#[test]
fn an_embedded_cluster_solve_killed_mid_stage_resumes_from_the_checkpoint() {
    let reference = reference("checkpoint-cluster-reference", "11");
    let out = temp_dir("checkpoint-cluster").join("out");
    // The default driver: a coordinator and workers in one process; the worker's task
    // checkpoints into the job directory.
    let mut child = start(&[
        "solve",
        "--max-browns",
        "11",
        "--quiet",
        "--checkpoint-minutes",
        "0",
        "--out",
        s(&out),
    ]);
    kill_mid_stage(&mut child, &out, 10, 10);
    // `retro resume` continues the job; the task's next attempt finds the checkpoint.
    retro_ok(&["resume", "--quiet", "--checkpoint-minutes", "0", s(&out)]);
    let log = log_of(&out);
    assert!(
        log.contains("resuming the stage from a checkpoint"),
        "no resume from a checkpoint in the log:\n{log}"
    );
    assert_same_results(&reference, &out);
    assert!(!out.join("checkpoints").exists(), "checkpoints left behind");
}
