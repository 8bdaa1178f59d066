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
    // Kill at several moments: very early (before the first stage ends), mid-run, later.
    let delays = [30u64, 700, 1500, 2500].map(Duration::from_millis);
    let kills = kill_after(&args, &dir, &delays);
    assert!(
        kills >= 2,
        "the solve finished before it could be killed twice"
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
    let delays = [1000u64, 3000, 6000].map(Duration::from_millis);
    let kills = kill_after(&args, &dir, &delays);
    assert!(kills >= 2, "the solve finished before it was killed twice");
    retro_ok(&[&args[..], &[s(&dir)]].concat());
    assert_same_results(&reference, &dir);
    for out in [&whole, &dir] {
        let scratch: Vec<_> = std::fs::read_dir(out.join("scratch")).unwrap().collect();
        assert!(scratch.is_empty(), "scratch files left: {scratch:?}");
    }
}
