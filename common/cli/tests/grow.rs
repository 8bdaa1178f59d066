//! Growing a partial solve: a directory holding a finished solve up to `k` browns, solved again
//! with a larger limit, keeps its finished stages (their tables are not rewritten) and solves
//! only the new ones; the result is byte-identical to a fresh solve of the larger limit. A
//! smaller limit, another board or another game is still refused.

mod support;

use std::collections::BTreeMap;
use std::time::SystemTime;
use support::*;

/// Modification times of the tables of stages with at most `k` browns.
fn table_times(dir: &std::path::Path, k: usize) -> BTreeMap<String, SystemTime> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let browns: usize = name.strip_prefix("browns")?.get(..2)?.parse().ok()?;
            (browns <= k).then(|| (name, e.metadata().unwrap().modified().unwrap()))
        })
        .collect()
}

fn grow(in_process: bool) {
    let base = temp_dir(if in_process {
        "grow-in-process"
    } else {
        "grow"
    });
    let (grown, fresh) = (base.join("grown"), base.join("fresh"));
    let solve = |k: &str, out: &std::path::Path| {
        let mut args = vec!["solve", "--quiet", "--game", "musashi33", "--max-browns", k];
        args.extend(["--out", s(out)]);
        if in_process {
            args.push("--in-process");
        }
        retro_ok(&args)
    };
    solve("5", &grown);
    let before = table_times(&grown, 5);
    assert_eq!(
        before.len(),
        6 * 20,
        "BOARD33 has 20 slices per brown count"
    );
    solve("6", &grown);
    assert_eq!(
        table_times(&grown, 5),
        before,
        "the finished stages' tables were not rewritten"
    );
    solve("6", &fresh);
    assert_same_results(&fresh, &grown);
    let counts = retro_ok(&["counts", "--out", s(&grown)]);
    assert_eq!(counts.lines().count(), 7, "{counts}");

    // Shrinking, another board and another game are refused, and change nothing.
    for args in [
        vec!["--game", "musashi33", "--max-browns", "4"],
        vec!["--game", "musashi31", "--max-browns", "7"],
        vec!["--game", "musashi25", "--max-browns", "7"],
    ] {
        let mut full = vec!["solve", "--quiet"];
        full.extend(args);
        full.extend(["--out", s(&grown)]);
        let e = retro_err(&full);
        assert!(e.contains("holds a different solve"), "{e}");
    }
    assert_same_results(&fresh, &grown);
}

#[test]
fn a_finished_partial_solve_grows_through_the_embedded_cluster() {
    grow(false);
}

#[test]
fn a_finished_partial_solve_grows_in_process() {
    grow(true);
}
