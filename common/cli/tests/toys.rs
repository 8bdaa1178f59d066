//! Ring hop, the toy game of "how to add a game", solved end to end through `retro solve` by
//! every driver, and every value checked against a brute-force solver written from the rules
//! alone (`common/toys/tests/support`: plain fixpoints over all raw positions).
//!
//! Two games on one set of rules: win/draw/loss (cycles and draws) and score margin (a point
//! per capture, captures by both sides leaving the stage, cycles worth 0). Each is solved by
//! the embedded coordinator with 1, 2 and 4 workers, in-process, in-process out of core, and
//! with every stage split into supersteps (`--split-above 0`), and the tables must be byte
//! for byte the same.

mod support;

#[path = "../../toys/tests/support/mod.rs"]
mod ring;

use retro_engine::Game;
use retro_store::SliceTable;
use retro_toys::{RingHop, RingValue};
use std::collections::BTreeMap;
use std::path::Path;
use support::{retro_ok, temp_dir};

const CELLS: u32 = 8;
const TOKENS: u32 = 3;

/// Every driver configuration: its name and its `retro solve` flags.
const DRIVERS: &[(&str, &[&str])] = &[
    ("1 worker", &["--workers", "1"]),
    ("2 workers", &["--workers", "2"]),
    ("4 workers", &["--workers", "4"]),
    ("in-process", &["--in-process"]),
    ("out of core", &["--in-process", "--out-of-core"]),
    ("supersteps", &["--workers", "2", "--split-above", "0"]),
];

/// Solves `game` with `flags` into a fresh directory and returns it.
fn solve(game: &str, driver: &str, flags: &[&str]) -> std::path::PathBuf {
    let dir = temp_dir(&format!("toys-{game}-{}", driver.replace(' ', "-")));
    let (cells, tokens) = (CELLS.to_string(), TOKENS.to_string());
    let mut args = vec![
        "solve", "--game", game, "--cells", &cells, "--tokens", &tokens, "--quiet", "--out",
    ];
    let out = dir.to_str().unwrap().to_string();
    args.push(&out);
    args.extend_from_slice(flags);
    retro_ok(&args);
    dir
}

/// The bytes of every table file of a solved directory, by file name.
fn tables(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tbl"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// The stored byte of every raw position, read from the tables in `dir`.
fn stored(dir: &Path, game: &RingHop, raw: &[ring::Raw]) -> Vec<u8> {
    use retro_pipeline::GameRules;
    let mut open: BTreeMap<u32, SliceTable> = BTreeMap::new();
    raw.iter()
        .map(|&(white, black, side)| {
            let (slice, key) = game.locate(RingHop::key_of(white, black));
            let table = open.entry(slice.0).or_insert_with(|| {
                SliceTable::open(&dir.join(game.table_file_name(slice))).unwrap()
            });
            table.value(side.index(), game.index(slice, key)).unwrap()
        })
        .collect()
}

/// Solves `game` by every driver; checks that every driver wrote the same tables and that
/// every position's value is `expected`'s.
fn every_driver(game: &str, value: RingValue, expected: &BTreeMap<ring::Raw, u8>) {
    let rules = RingHop::new(CELLS, TOKENS).unwrap().valued_by(value);
    let raw: Vec<ring::Raw> = expected.keys().copied().collect();
    let want: Vec<u8> = expected.values().copied().collect();
    let mut first: Option<(&str, BTreeMap<String, Vec<u8>>)> = None;
    for &(driver, flags) in DRIVERS {
        let dir = solve(game, driver, flags);
        let have = stored(&dir, &rules, &raw);
        let wrong = raw
            .iter()
            .zip(have.iter().zip(&want))
            .filter(|(_, (h, w))| h != w)
            .count();
        let example = raw
            .iter()
            .zip(have.iter().zip(&want))
            .find(|(_, (h, w))| h != w);
        assert_eq!(
            wrong, 0,
            "{game} {driver}: {wrong} positions differ, e.g. {example:?}"
        );
        let files = tables(&dir);
        match &first {
            None => first = Some((driver, files)),
            Some((reference, theirs)) => {
                assert!(
                    files == *theirs,
                    "{game}: {driver} and {reference} wrote different tables"
                )
            }
        }
        // The defining recurrence holds on every slot.
        let verified = retro_ok(&[
            "verify",
            "--out",
            dir.to_str().unwrap(),
            "--recurrence",
            "100000",
        ]);
        assert!(
            verified.contains("recurrence: OK"),
            "{game} {driver}: {verified}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn ring_hop_win_draw_loss_by_every_driver_equals_the_brute_force() {
    let expected: BTreeMap<ring::Raw, u8> =
        ring::win_draw_loss(CELLS, TOKENS).into_iter().collect();
    // Not degenerate: wins, draws and losses after some play all occur.
    assert!(expected.values().any(|&v| v == 0));
    assert!(expected.values().any(|&v| v > 2 && v % 2 == 0));
    assert!(expected.values().any(|&v| v > 2 && v % 2 == 1));
    every_driver("ring-hop", RingValue::WinDrawLoss, &expected);
}

#[test]
fn ring_hop_score_margin_by_every_driver_equals_the_brute_force() {
    let expected: BTreeMap<ring::Raw, u8> = ring::margins(CELLS, TOKENS)
        .into_iter()
        .map(|(p, m)| (p, m as i8 as u8))
        .collect();
    // Not degenerate: both signs, and margins beyond one capture.
    assert!(expected.values().any(|&m| (m as i8) > 1));
    assert!(expected.values().any(|&m| (m as i8) < -1));
    every_driver("ring-hop-score", RingValue::ScoreMargin, &expected);
}

#[test]
fn a_toy_directory_is_refused_by_position_commands_with_a_clear_error() {
    // Ring hop has no position notation (no explorer): probing it says so, naming the game.
    let dir = solve("ring-hop", "refusal", &["--in-process"]);
    let out = support::retro_err(&["probe", "--out", dir.to_str().unwrap(), "o", "brown"]);
    assert!(
        out.contains("ring-hop") && out.contains("no position notation"),
        "{out}"
    );
    // Another game into the same directory is refused.
    let other = support::retro_err(&[
        "solve",
        "--game",
        "musashi25",
        "--max-browns",
        "3",
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(other.contains("holds a different solve"), "{other}");
    let counts = retro_ok(&["counts", "--out", dir.to_str().unwrap()]);
    assert_eq!(
        counts,
        std::fs::read_to_string(dir.join("counts.csv")).unwrap()
    );
    assert!(
        counts.starts_with("stage,side,positions,win,draw,loss\n"),
        "{counts}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
