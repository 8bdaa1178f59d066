//! The trap-zone variant of Sixteen Musashi on the command line: solved by both drivers with
//! identical results, checked by its recurrence, probed (a stalemate off the zone is a black
//! win), kept apart from the base game's directories, and bad zones refused. The values
//! themselves are checked against a brute force in `common/musashi/tests/brute_force.rs`.

mod support;

use support::*;

/// A black stalemated in the centre of BOARD25 (every neighbour brown, no capture possible).
const CENTRE_STALEMATE: &str = ".....,.ooo.,.oXo.,.ooo.,..... black";

/// `retro solve` of BOARD25 up to 8 browns into `out`, with `extra` flags.
fn solve_args<'a>(out: &'a std::path::Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "solve",
        "--quiet",
        "--game",
        "musashi25",
        "--max-browns",
        "8",
    ];
    args.extend(extra);
    args.extend(["--out", s(out)]);
    args
}

#[test]
fn the_trap_zone_is_solved_by_both_drivers_probed_and_verified() {
    let base = temp_dir("trap-zone");
    let (cluster, in_process, plain) = (base.join("cluster"), base.join("in"), base.join("plain"));
    let solve = |out: &std::path::Path, extra: &[&str]| retro_ok(&solve_args(out, extra));
    solve(&cluster, &["--trap-points", "corners"]);
    solve(
        &in_process,
        &["--trap-points", "00,04,40,44", "--in-process"],
    );
    assert_same_results(&cluster, &in_process);
    solve(&plain, &[]);

    let manifest = std::fs::read_to_string(cluster.join("manifest.json")).unwrap();
    assert!(
        manifest.contains(r#""trap_points": "00,04,40,44""#),
        "{manifest}"
    );
    let verified = retro_ok(&["verify", "--tables", s(&cluster), "--recurrence", "100000"]);
    assert!(
        verified.contains("OK") && !verified.contains("MISMATCH"),
        "{verified}"
    );

    let probe = |dir: &std::path::Path, position: &str| -> serde_json::Value {
        let (rows, side) = position.split_once(' ').unwrap();
        let text = retro_ok(&["probe", "--tables", s(dir), rows, side, "--json"]);
        serde_json::from_str(&text).unwrap()
    };
    // Off the zone a stalemated black has won; in the base game it has lost.
    assert_eq!(probe(&cluster, CENTRE_STALEMATE)["value"], 0);
    assert_eq!(probe(&plain, CENTRE_STALEMATE)["value"], 1);
    // In a corner of the zone it has lost in both.
    let corner = "Xo...,oo...,.....,.....,..... black";
    assert_eq!(probe(&cluster, corner)["value"], 1);
    assert_eq!(probe(&plain, corner)["value"], 1);
    let (rows, side) = CENTRE_STALEMATE.split_once(' ').unwrap();
    let text = retro_ok(&["probe", "--tables", s(&cluster), rows, side]);
    assert!(text.contains("outside the trap zone: black wins"), "{text}");
    // Brown wins fewer positions when it must drive black into a corner.
    let wins = |dir: &std::path::Path| -> u64 {
        let counts = std::fs::read_to_string(dir.join("counts.csv")).unwrap();
        counts
            .lines()
            .flat_map(|l| l.split(',').skip(3).map(|n| n.parse::<u64>().unwrap()))
            .sum()
    };
    assert!(
        wins(&cluster) < wins(&plain),
        "{} vs {}",
        wins(&cluster),
        wins(&plain)
    );

    // A directory holds one variant: the base game, another zone are refused, nothing changes.
    for extra in [&[][..], &["--trap-points", "edge"]] {
        let e = retro_err(&solve_args(&cluster, extra));
        assert!(e.contains("holds a different solve"), "{e}");
    }
    assert_same_results(&in_process, &cluster);
}

#[test]
fn bad_trap_zones_are_refused_in_one_line() {
    let out = temp_dir("trap-zone-bad").join("out");
    for (zone, words) in [
        ("99", "'99' is not a point of BOARD25"),
        ("00,00", "listed twice"),
        ("", "no point given"),
    ] {
        let e = retro_err(&[
            "solve",
            "--game",
            "musashi25",
            "--trap-points",
            zone,
            "--out",
            s(&out),
        ]);
        assert!(e.contains(words), "{zone}: {e}");
    }
    let e = retro_err(&[
        "solve",
        "--game",
        "mancala4",
        "--trap-points",
        "corners",
        "--out",
        s(&out),
    ]);
    assert!(e.contains("trap-points"), "{e}");
}
