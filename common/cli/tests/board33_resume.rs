//! A BOARD33 partial solve (up to 8 browns) killed with SIGKILL at three random moments and
//! resumed gives the same tables as an uninterrupted solve, and every slice satisfies the
//! defining recurrence.

mod support;

use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};
use support::*;

#[test]
fn board33_killed_three_times_at_random_resumes_to_identical_tables() {
    let args = [
        "solve",
        "--quiet",
        "--game",
        "musashi33",
        "--max-browns",
        "8",
        "--out",
    ];
    let reference = temp_dir("b33-resume-reference").join("out");
    let started = Instant::now();
    let mut full: Vec<&str> = args.to_vec();
    full.extend([s(&reference), "--in-process"]);
    retro_ok(&full);
    let solve_time = started.elapsed();

    // Random kill times within the first 80% of an uninterrupted run (the seed is printed so
    // that a failure can be replayed).
    let seed: u64 = rand::random();
    println!("kill-time seed {seed}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let dir = temp_dir("b33-resume").join("out");
    let moments: Vec<KillMoment> = (0..3)
        .map(|_| {
            KillMoment::After(Duration::from_secs_f64(
                rng.gen_range(0.05..0.8) * solve_time.as_secs_f64() / 3.0,
            ))
        })
        .collect();
    let kills = kill_at(&args, &dir, &moments);
    assert_eq!(
        kills, 3,
        "seed {seed}: the solve ended before it was killed three times"
    );
    retro_ok(&["resume", "--quiet", s(&dir)]);
    assert_same_results(&reference, &dir);
    let report = retro_ok(&["verify", "--out", s(&dir), "--recurrence", "300"]);
    assert!(report.contains("recurrence"), "{report}");
}
