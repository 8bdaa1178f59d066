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
