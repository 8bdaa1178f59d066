//! An embedded solve (coordinator and workers in one process) killed with SIGKILL at arbitrary
//! moments resumes to output byte-identical to an uninterrupted in-process solve.

mod support;

use std::time::Duration;
use support::*;

#[test]
fn killed_solves_resume_to_identical_tables() {
    let args = ["solve", "--max-browns", "11", "--quiet", "--out"];
    let reference = temp_dir("kill-reference").join("out");
    let mut full: Vec<&str> = args.to_vec();
    full.push(s(&reference));
    full.push("--in-process");
    retro_ok(&full);

    let dir = temp_dir("kill-resumed").join("out");
    // Kill at several moments: very early (before the first stage ends), then each time a few
    // more tables have been written (mid-stage or mid-merge, wherever the solve then is).
    let moments = [
        KillMoment::After(Duration::from_millis(30)),
        KillMoment::NewTables(5),
        KillMoment::NewTables(13),
        KillMoment::NewTables(20),
    ];
    let kills = kill_at(&args, &dir, &moments);
    assert!(
        kills >= 3,
        "the solve finished before it could be killed three times"
    );
    // `retro resume` continues the interrupted job from its own records.
    retro_ok(&["resume", "--quiet", s(&dir)]);
    assert_same_results(&reference, &dir);
}

/// Out of core (every stage forced out of core with a window too small for one stage, so lists
/// go to disk and slice arrays are file-backed and paged), killed at arbitrary moments and
/// resumed, the solve writes the same bytes as in memory, stays within its budget, and leaves
/// no scratch file behind.
#[test]
fn out_of_core_solves_resume_to_identical_tables_within_the_budget() {
    let reference = temp_dir("ooc-reference").join("out");
    retro_ok(&["solve", "--in-process", "--quiet", "--out", s(&reference)]);

    let args = [
        "solve",
        "--in-process",
        "--out-of-core",
        "--memory-budget",
        "260MiB",
        "--quiet",
        "--out",
    ];
    // Uninterrupted, within the budget. (Measured on a run of its own: the resumed run below
    // may find the job already finished by its last killed run, and report no figures.)
    let whole = temp_dir("ooc-whole").join("out");
    let stdout = retro_ok(&[&args[..], &[s(&whole)]].concat());
    assert_same_results(&reference, &whole);
    let peak = peak_rss_mib(&stdout);
    assert!(peak <= 286, "peak RSS {peak} MiB exceeds 260 MiB + 10%");

    let dir = temp_dir("ooc-resumed").join("out");
    let moments = [
        KillMoment::After(Duration::from_millis(1000)),
        KillMoment::NewTables(20),
        KillMoment::NewTables(40),
    ];
    let kills = kill_at(&args, &dir, &moments);
    assert!(kills >= 2, "the solve finished before it was killed twice");
    retro_ok(&[&args[..], &[s(&dir)]].concat());
    assert_same_results(&reference, &dir);
    for out in [&whole, &dir] {
        let scratch: Vec<_> = std::fs::read_dir(out.join("scratch")).unwrap().collect();
        assert!(scratch.is_empty(), "scratch files left: {scratch:?}");
    }
}

/// A solve killed after its job's row was written but before the job's stages were planned
/// (a moment a kill 30 ms in once hit: the rerun then took the job for finished, with nothing
/// solved) is planned when it resumes. The state is made exactly: a finished solve's database
/// rewound to the job's row alone, its result files removed.
#[test]
fn a_solve_killed_before_its_stages_were_planned_resumes_from_nothing() {
    let args = ["solve", "--max-browns", "6", "--quiet", "--out"];
    let reference = temp_dir("unplanned-reference").join("out");
    retro_ok(&[&args[..], &[s(&reference), "--in-process"]].concat());

    let dir = temp_dir("unplanned").join("out");
    retro_ok(&[&args[..], &[s(&dir)]].concat());
    let db = rusqlite::Connection::open(dir.join("coordinator.sqlite")).unwrap();
    db.execute_batch(
        "DELETE FROM tasks; DELETE FROM slices; DELETE FROM steps; DELETE FROM step_files; \
         DELETE FROM slice_costs; UPDATE jobs SET state = 'running', finished_ms = NULL;",
    )
    .unwrap();
    drop(db);
    for name in result_files(&dir).keys() {
        std::fs::remove_file(dir.join(name)).unwrap();
    }

    let stdout = retro_ok(&[&args[..], &[s(&dir)]].concat());
    assert!(!stdout.contains("Already solved"), "{stdout}");
    assert_same_results(&reference, &dir);
}
