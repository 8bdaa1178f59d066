//! Partial solves of BOARD33 and user board files.

mod support;

use support::*;

/// The first `rows` rows of the committed count table of the full BOARD33
/// (`docs/board33-counts.csv`, printed by `retro counts` from the full solve's tables).
fn committed_full_board_rows(rows: usize) -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/board33-counts.csv");
    let table = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the full board's count table {}: {e}", path.display()));
    table.lines().take(rows).map(|l| format!("{l}\n")).collect()
}

#[test]
fn board33_up_to_six_browns_satisfies_the_recurrence() {
    let dir = temp_dir("b33").join("out");
    let solved = retro_ok(&[
        "solve",
        "--game",
        "musashi33",
        "--max-browns",
        "6",
        "--out",
        s(&dir),
        "--quiet",
    ]);
    assert!(
        solved.contains("not covered"),
        "start has 16 browns: {solved}"
    );
    let out = retro_ok(&["verify", "--out", s(&dir), "--recurrence", "4000"]);
    assert!(out.contains("recurrence: OK"), "{out}");
    let counts = retro_ok(&["counts", "--out", s(&dir)]);
    assert_eq!(counts.lines().count(), 7);
    assert_eq!(counts, committed_full_board_rows(7));
    // Position counts up to symmetry: 33 * C(32, k) * 2 raw positions per row, and a mirror
    // group of order 2, so each row holds between half and all of them.
    for (k, line) in counts.lines().enumerate() {
        let total: u64 = line
            .split(',')
            .skip(1)
            .map(|n| n.parse::<u64>().unwrap())
            .sum();
        let raw = 33 * (0..k as u64).fold(1u64, |c, i| c * (32 - i) / (i + 1)) * 2;
        assert!(
            total * 2 >= raw && total <= raw,
            "row {k}: {total} of {raw}"
        );
    }
}

#[test]
fn a_user_board_file_solves_like_the_built_in_board() {
    let file = repo_root().join("common/musashi/boards/board33.txt");
    let builtin = temp_dir("b33-builtin").join("out");
    let user = temp_dir("b33-user").join("out");
    retro_ok(&[
        "solve",
        "--game",
        "musashi33",
        "--max-browns",
        "4",
        "--out",
        s(&builtin),
        "--quiet",
    ]);
    retro_ok(&[
        "solve",
        "--board-file",
        s(&file),
        "--max-browns",
        "4",
        "--out",
        s(&user),
        "--quiet",
    ]);
    assert_eq!(
        retro_ok(&["counts", "--out", s(&builtin)]),
        retro_ok(&["counts", "--out", s(&user)])
    );
}

#[test]
fn a_forty_point_board_is_accepted_and_solved_in_part() {
    // BOARD33 with a mirrored triangle on the left, shifted right by 2 columns.
    let mut points = Vec::new();
    let mut edges = Vec::new();
    let board33 =
        std::fs::read_to_string(repo_root().join("common/musashi/boards/board33.txt")).unwrap();
    for line in board33.lines() {
        let shift = |p: &str| format!("{}{}", p.as_bytes()[0] - b'0' + 2, &p[1..]);
        if let Some(rest) = line.strip_prefix("points:") {
            points.extend(rest.split_whitespace().map(shift));
        }
        if let Some(rest) = line.strip_prefix("edges:") {
            edges.extend(rest.split_whitespace().map(|e| {
                let (a, b) = e.split_once('-').unwrap();
                format!("{}-{}", shift(a), shift(b))
            }));
        }
    }
    // Left triangle: 11 12 13 mirrored from 51 52 53 (shifted 71 72 73), and 00 01 02 03 04.
    points.extend(["11", "12", "13", "00", "02", "04", "01", "03"].map(String::from));
    let left = "22-11 22-12 22-13 11-12 11-00 11-01 11-02 12-13 12-02 13-02 13-03 13-04 00-01 01-02 02-03 03-04";
    edges.extend(left.split_whitespace().map(String::from));
    let text = format!(
        "name: BOARD41\npoints: {}\nedges: {}\n",
        points.join(" "),
        edges.join(" ")
    );
    let dir = temp_dir("b41");
    let file = dir.join("board41.txt");
    std::fs::write(&file, text).unwrap();
    let out = dir.join("out");
    retro_ok(&[
        "solve",
        "--board-file",
        s(&file),
        "--max-browns",
        "3",
        "--out",
        s(&out),
        "--quiet",
    ]);
    let verified = retro_ok(&["verify", "--out", s(&out), "--recurrence", "2000"]);
    assert!(verified.contains("recurrence: OK"), "{verified}");
}

/// `retro bench --report` through both drivers: per-slice lines and rows (positions, CPU time,
/// bytes written including the table, memory) that add up to the run's total, the same slices
/// from both, the samples and the plot.
#[test]
fn bench_report_prints_per_slice_figures_and_draws_a_plot() {
    let mut slice_rows = Vec::new();
    for mode in ["cluster", "in-process"] {
        let dir = temp_dir(&format!("bench-report-{mode}"));
        let prefix = dir.join("run");
        let out = retro_ok(&[
            "bench",
            "--game",
            "musashi33",
            "--max-browns",
            "5",
            "--mode",
            mode,
            "--memory-budget",
            "2GiB",
            "--scratch",
            s(&dir),
            "--report",
            s(&prefix),
        ]);
        assert!(
            out.contains("M pos/s/core") && out.contains("browns=5 black=22"),
            "{out}"
        );
        assert!(out.contains("peak RSS"), "{out}");
        if mode == "cluster" {
            assert!(out.contains("compute s"), "per-task lines: {out}");
        }
        let csv = std::fs::read_to_string(dir.join("run.csv")).unwrap();
        assert!(csv.starts_with("seconds,positions_done,rss_bytes\n") && csv.lines().count() > 2);
        let png = std::fs::read(dir.join("run.png")).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // One row per slice: positions, CPU time, its table among the bytes written, memory.
        let slices = std::fs::read_to_string(dir.join("run-slices.csv")).unwrap();
        let mut rows: Vec<(String, u64)> = Vec::new();
        for line in slices.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f.len(), 9, "{line}");
            let positions: u64 = f[2].parse().unwrap();
            let cpu: f64 = f[3].parse().unwrap();
            let written: u64 = f[7].parse().unwrap();
            let rss: u64 = f[8].parse().unwrap();
            assert!(
                positions > 0 && cpu >= 0.0 && written > 0 && rss > 0,
                "{line}"
            );
            rows.push((f[1].to_string(), positions));
        }
        let total: u64 = rows.iter().map(|r| r.1).sum();
        assert!(
            out.contains(&format!("total: {total} positions")),
            "the slices add up to the total: {out}"
        );
        rows.sort();
        slice_rows.push(rows);
        assert!(
            !dir.join("report-run").exists(),
            "the scratch solve is removed"
        );
    }
    assert_eq!(
        slice_rows[0], slice_rows[1],
        "both drivers report every slice"
    );
    assert!(slice_rows[0].len() > 30);
}

/// The memory-budget test of the out-of-core issue: BOARD33 up to 9 browns in 512 MiB (the
/// stages from 8 browns up are solved out of core), peak RSS within the budget + 10%, and every
/// slice satisfies the recurrence; the embedded cluster (two workers sharing 1 GiB) does the
/// same up to 8 browns; a budget too small even out of core is refused in one line up front.
/// (Up to 10 browns in 1 GiB, a benchmark: `docs/out-of-core.md`.)
#[test]
fn solves_stay_within_the_memory_budget_or_refuse_up_front() {
    let dir = temp_dir("memory-budget");
    for (mode, browns, budget_mib) in [(&["--in-process"][..], "9", 512), (&[][..], "8", 1024)] {
        let args = |browns: &str, budget: &str, out: &std::path::Path| -> Vec<String> {
            let mut args: Vec<String> = ["solve", "--quiet", "--game", "musashi33"]
                .into_iter()
                .map(String::from)
                .collect();
            for a in [
                "--max-browns",
                browns,
                "--memory-budget",
                budget,
                "--out",
                s(out),
            ] {
                args.push(a.to_string());
            }
            args.extend(mode.iter().map(|m| m.to_string()));
            args
        };
        let run_ok = |v: Vec<String>| retro_ok(&v.iter().map(String::as_str).collect::<Vec<_>>());
        let run_err = |v: Vec<String>| retro_err(&v.iter().map(String::as_str).collect::<Vec<_>>());
        // Fits: peak RSS within the budget + 10%.
        let out = dir.join(format!("fits{}", mode.len()));
        let stdout = run_ok(args(browns, &format!("{budget_mib}MiB"), &out));
        let peak = peak_rss_mib(&stdout);
        assert!(
            peak <= budget_mib + budget_mib / 10,
            "peak RSS {peak} MiB exceeds {budget_mib} MiB + 10%"
        );
        let report = retro_ok(&["verify", "--out", s(&out), "--recurrence", "200"]);
        assert!(report.contains("recurrence"), "{report}");
        // Positions with at most k browns never reach more, so the rows solved here are the
        // full board's rows (solved out of core on compact arrays here, by the full run there).
        let rows: usize = browns.parse::<usize>().unwrap() + 1;
        assert_eq!(
            retro_ok(&["counts", "--out", s(&out)]),
            committed_full_board_rows(rows)
        );
        // Cannot fit even out of core: one clear line before any work, naming the stage.
        let out = dir.join(format!("refused{}", mode.len()));
        let e = run_err(args("8", "120MiB", &out));
        assert!(
            e.contains("needs at least") && e.contains("memory budget is 120 MiB"),
            "{e}"
        );
        assert!(!out.join("browns08-black00.tbl").exists());
    }
    let e = retro_err(&[
        "solve",
        "--memory-budget",
        "lots",
        "--out",
        s(&dir.join("x")),
    ]);
    assert!(e.contains("lots"), "{e}");
}
