//! BOARD25 solved once, then checked against the published data, the rules and itself.

mod support;

use retro_musashi::rules::moves;
use retro_musashi::{Board, Position, Side};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use support::*;

/// The BOARD25 output directory, solved by the first test that needs it.
fn solved() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = temp_dir("board25").join("out");
        retro_ok(&["solve", "--game", "musashi25", "--out", s(&dir), "--quiet"]);
        dir
    })
}

#[test]
fn count_table_equals_the_published_one_byte_for_byte() {
    let expected = std::fs::read_to_string(shared("reference/board25-counts.csv")).unwrap();
    let written = std::fs::read_to_string(solved().join("counts.csv")).unwrap();
    assert_eq!(written, expected, "counts.csv written by solve");
    let printed = retro_ok(&["counts", "--out", s(solved())]);
    assert_eq!(
        printed, expected,
        "retro counts (recomputed from the tables)"
    );
}

#[test]
fn every_published_sample_value_through_the_probe_path() {
    let samples = shared("reference/board25-sample-values.txt");
    let expected = std::fs::read_to_string(&samples).unwrap();
    assert_eq!(expected.lines().count(), 20_000);
    let printed = retro_ok(&["probe", "--out", s(solved()), "--file", s(&samples)]);
    assert_eq!(printed, expected);
    let verified = retro_ok(&["verify", "--out", s(solved()), "--values", s(&samples)]);
    assert!(
        verified.contains("values: OK (20000 positions"),
        "{verified}"
    );
}

#[test]
fn start_position_principal_variation_is_legal_and_exact() {
    let board = Board::builtin("BOARD25").unwrap();
    let start = board.start.clone().unwrap();
    let (rows, side) = start.split_once(' ').unwrap();
    let text = retro_ok(&["probe", "--out", s(solved()), rows, side]);
    assert!(text.contains("value 32: brown wins in 31 plies"), "{text}");
    let mut pos = Position::parse_with_side(&board, &start).unwrap();
    let mut plies = 0;
    for line in text
        .lines()
        .skip_while(|l| !l.starts_with("principal variation"))
        .skip(1)
    {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 4 || !fields[0].ends_with('.') {
            continue;
        }
        let (mover, notation, rows_after) = (fields[1], fields[2], fields[3]);
        assert_eq!(
            mover,
            pos.side.name(),
            "ply {}: wrong side moves",
            plies + 1
        );
        let (_, next) = moves(&board, &pos)
            .into_iter()
            .find(|(m, _)| m.notation(&board) == notation)
            .unwrap_or_else(|| panic!("ply {}: {notation} is not legal", plies + 1));
        assert_eq!(next.rows(&board), rows_after, "ply {}", plies + 1);
        pos = next;
        plies += 1;
    }
    assert_eq!(plies, 31, "value 32 means 31 plies");
    assert_eq!(pos.side, Side::Black);
    assert!(
        moves(&board, &pos).is_empty(),
        "black must be left without a move"
    );
}

#[test]
fn symmetric_images_have_the_same_value() {
    let board = Board::builtin("BOARD25").unwrap();
    let samples = std::fs::read_to_string(shared("reference/board25-sample-values.txt")).unwrap();
    let mut lines = String::new();
    for line in samples.lines().step_by(20) {
        let mut parts = line.split_whitespace();
        let (rows, side) = (parts.next().unwrap(), parts.next().unwrap());
        let pos = Position::parse(&board, rows, Side::parse(side).unwrap()).unwrap();
        for g in &board.symmetry.elements {
            let image = Position {
                black: g.cell(pos.black),
                browns: g.apply(pos.browns),
                side: pos.side,
            };
            lines.push_str(&format!("{} {}\n", image.notation(&board), line));
        }
    }
    let dir = temp_dir("symmetry");
    let file = dir.join("images.txt");
    std::fs::write(&file, &lines).unwrap();
    let printed = retro_ok(&["probe", "--out", s(solved()), "--file", s(&file)]);
    let mut checked = 0;
    for (out, input) in printed.lines().zip(lines.lines()) {
        let image_value = out.split_whitespace().nth(2).unwrap();
        let original_value = input.split_whitespace().nth(4).unwrap();
        assert_eq!(image_value, original_value, "{input}");
        checked += 1;
    }
    assert_eq!(checked, 1000 * 8);
}

#[test]
fn recurrence_holds_and_a_corrupted_value_is_caught() {
    let ok = retro_ok(&["verify", "--out", s(solved()), "--recurrence", "300"]);
    assert!(ok.contains("recurrence: OK"), "{ok}");

    // Rewrite one slice with one wrong value but valid checksums: only the recurrence check
    // can notice. A solve up to 4 browns is small enough to check every position.
    let dir = temp_dir("corrupt").join("out");
    retro_ok(&["solve", "--max-browns", "4", "--out", s(&dir), "--quiet"]);
    let ok = retro_ok(&["verify", "--out", s(&dir), "--recurrence", "20000"]);
    assert!(ok.contains("recurrence: OK"), "{ok}");
    corrupt_one_value(
        &dir.join("browns04-black00.tbl"),
        ["brown to move", "black to move"],
    );
    let out = retro(&["verify", "--out", s(&dir), "--recurrence", "20000"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "corruption not detected: {stdout}");
    assert!(stdout.contains("recurrence: 1 MISMATCH "), "{stdout}");
    assert!(stdout.contains("brown to move: stored"), "{stdout}");
}

#[test]
fn black_to_move_is_derived_exactly_and_compared_value_by_value() {
    // Black-to-move values are not stored (no later stage reads them): each table keeps their
    // count and histogram only, and readers derive them by one ply over brown-to-move values.
    let table = retro_store::SliceTable::open(&solved().join("browns12-black22.tbl")).unwrap();
    assert!(table.is_stored(0) && !table.is_stored(1));
    assert_eq!(table.section_len(1), table.section_len(0));
    assert!(table.derived_histogram(1).is_some());
    drop(table);

    // Two solves compare equal value by value, both sides, whatever each stores.
    let dir = temp_dir("against").join("out");
    let other = temp_dir("against").join("other");
    for d in [&dir, &other] {
        retro_ok(&["solve", "--max-browns", "5", "--out", s(d), "--quiet"]);
    }
    let ok = retro_ok(&["verify", "--tables", s(&dir), "--against", s(&other)]);
    assert!(
        ok.contains("values: OK (665,460 slots compared with"),
        "{ok}"
    );
    // Or 1,000 random slots of every slice and side (all of the smaller ones).
    let ok = retro_ok(&[
        "verify",
        "--tables",
        s(&dir),
        "--against",
        s(&other),
        "--sample",
        "1000",
    ]);
    assert!(ok.contains("values: OK ("), "{ok}");
    assert!(!ok.contains("(665,460 slots"), "{ok}");

    // One brown-to-move value moved two plies: found, by slice, side and position.
    corrupt_one_value(
        &dir.join("browns05-black00.tbl"),
        ["brown to move", "black to move"],
    );
    let out = retro(&["verify", "--tables", s(&dir), "--against", s(&other)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "difference not found: {stdout}");
    assert!(
        stdout.contains("values: 1 MISMATCH")
            && stdout.contains("browns=5 black=00 brown to move: 1 of "),
        "{stdout}"
    );

    // A damaged block of brown-to-move values is reported by the file's name, never counted
    // (whichever reads it first: its own slice, or the sweep deriving another's black to move).
    let path = other.join("browns05-black00.tbl");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[20] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let error = retro_err(&["counts", "--tables", s(&other)]);
    assert!(
        error.contains("browns05-black00.tbl") && error.contains("checksum mismatch"),
        "{error}"
    );
}

#[test]
fn rerun_is_a_no_op_and_damaged_or_missing_slices_are_recomputed() {
    let dir = temp_dir("resume").join("out");
    copy_dir(solved(), &dir);
    let mtime = |name: &str| {
        std::fs::metadata(dir.join(name))
            .unwrap()
            .modified()
            .unwrap()
    };
    let before = mtime("browns12-black22.tbl");
    let again = retro_ok(&["solve", "--game", "musashi25", "--out", s(&dir), "--quiet"]);
    assert!(again.contains("value 32"), "{again}");
    assert_eq!(
        mtime("browns12-black22.tbl"),
        before,
        "a finished solve must not be redone"
    );

    // Flip a byte of one table and delete another.
    let damaged = dir.join("browns10-black11.tbl");
    let mut bytes = std::fs::read(&damaged).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&damaged, bytes).unwrap();
    std::fs::remove_file(dir.join("browns07-black00.tbl")).unwrap();
    let out = retro(&["solve", "--game", "musashi25", "--out", s(&dir), "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("browns10-black11.tbl") && stderr.contains("damaged"),
        "{stderr}"
    );
    assert!(stderr.contains("browns07-black00.tbl"), "{stderr}");
    let expected = std::fs::read_to_string(shared("reference/board25-counts.csv")).unwrap();
    assert_eq!(retro_ok(&["counts", "--out", s(&dir)]), expected);
}

#[test]
fn stalemates_have_their_defined_values() {
    // Black in the corner, all three neighbours brown, no capture possible: brown has won.
    let text = retro_ok(&[
        "probe",
        "--out",
        s(solved()),
        "Xo...,oo...,.....,.....,.....",
        "black",
    ]);
    assert!(text.contains("value 1: black has no move"), "{text}");
    assert!(text.contains("black has no legal move"), "{text}");
    // Brown without a legal move (no pieces at all, or a full board): black wins.
    let text = retro_ok(&[
        "probe",
        "--out",
        s(solved()),
        "X....,.....,.....,.....,.....",
        "brown",
    ]);
    assert!(text.contains("value 0: black wins"), "{text}");
    let text = retro_ok(&[
        "probe",
        "--out",
        s(solved()),
        "Xoooo,ooooo,ooooo,ooooo,ooooo",
        "brown",
    ]);
    assert!(text.contains("value 0: black wins"), "{text}");
}

/// `retro probe` lists moves best first: for brown, its wins fastest first and then its
/// losses; for black, its wins and then brown's wins slowest first. Checked on every position
/// of the start's principal variation and on a position where black can escape.
#[test]
fn probe_lists_moves_best_first_with_a_board_diagram_and_as_json() {
    let board = Board::builtin("BOARD25").unwrap();
    let start = board.start.clone().unwrap();
    let json = retro_ok(&["probe", "--tables", s(solved()), &start, "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["value"], 32, "{json}");
    assert_eq!(report["meaning"], "brown wins in 31 plies");
    assert_eq!(report["turn"], "brown");
    let pv = report["principal_variation"].as_array().unwrap();
    assert_eq!(pv.len(), 31);
    // Every position along the line, probed as JSON: moves ranked as the rules of ranking say,
    // and each move's value equal to what probing its position gives.
    let mut checked = 0;
    for step in std::iter::once(&report["position"]).chain(pv.iter().map(|m| &m["position"])) {
        let here: serde_json::Value = serde_json::from_str(&retro_ok(&[
            "probe",
            "--tables",
            s(solved()),
            step.as_str().unwrap(),
            "--json",
        ]))
        .unwrap();
        let brown = here["turn"] == "brown";
        let rank = |v: u64| -> (u64, u64) {
            match (brown, v) {
                (true, 0) => (1, 0),
                (true, v) => (0, v),
                (false, 0) => (0, 0),
                (false, v) => (1, 255 - v),
            }
        };
        let values: Vec<u64> = here["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["value"].as_u64().unwrap())
            .collect();
        let ranks: Vec<_> = values.iter().map(|&v| rank(v)).collect();
        assert!(ranks.is_sorted(), "{}: {values:?}", here["position"]);
        checked += 1;
    }
    assert_eq!(checked, 32);
    // A black-to-move position where black escapes: the escaping moves come first.
    let text = retro_ok(&[
        "probe",
        "--tables",
        s(solved()),
        "o....,.....,..X..,.....,.....",
        "black",
    ]);
    let first = text
        .lines()
        .skip_while(|l| !l.starts_with("moves (best first)"))
        .nth(1)
        .unwrap();
    assert!(first.contains("value  0: black wins"), "{text}");
    // The board diagram: column and row numbers from 0, the pieces where the notation says.
    assert!(
        text.starts_with("    0 1 2 3 4\n 0  o . . . .\n 1  . . . . .\n 2  . . X . .\n"),
        "{text}"
    );
    // One ply, singular; the hint's form (position and side in one argument) accepted.
    let text = retro_ok(&[
        "probe",
        "--tables",
        s(solved()),
        "Xo...,o....,.o...,.....,..... brown",
    ]);
    assert!(text.contains("brown wins in 1 ply\n"), "{text}");
    assert!(text.contains("principal variation (1 ply):"), "{text}");
}

/// A count table differing in one field: `verify` names the row and column and both numbers.
#[test]
fn verify_names_a_count_mismatch_by_row_and_column() {
    let reference = std::fs::read_to_string(shared("reference/board25-counts.csv")).unwrap();
    let altered = reference.replacen("1,85,85,", "1,85,84,", 1);
    assert_ne!(altered, reference, "row k=1 of the published table changed");
    let file = temp_dir("verify-mismatch").join("counts.csv");
    std::fs::write(&file, altered).unwrap();
    let out = retro(&["verify", "--tables", s(solved()), "--counts", s(&file)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("counts: 1 MISMATCH "), "{stdout}");
    assert!(stdout.contains("row k=1, column "), "{stdout}");
    assert!(stdout.contains(": 84 expected, 85 found"), "{stdout}");
}
