//! SIMPEI solved once through the embedded cluster, then checked against the published
//! tables, a brute-force minimax over the placement layers, the rules and itself.

mod support;

use retro_engine::{Game, Move, Outcome, Value};
use retro_simpei::game::Simpei;
use retro_simpei::rules::moves;
use retro_simpei::{Colour, Position};
use retro_store::SliceTable;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use support::*;

/// The SIMPEI output directory (default rules), solved by the first test that needs it.
fn solved() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = temp_dir("simpei").join("out");
        retro_ok(&["solve", "--game", "simpei", "--out", s(&dir), "--quiet"]);
        dir
    })
}

/// The numeric rows of the markdown tables of the spec that follow `title`: the cells of each
/// row with the thousands separators removed.
fn spec_table(title: &str) -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(shared("spec/simpei.md")).unwrap();
    let start = text
        .find(title)
        .unwrap_or_else(|| panic!("{title} in the spec"));
    text[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            l.split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(|c| c.replace(',', "").parse::<u64>().ok())
                .collect::<Option<Vec<u64>>>()
        })
        .collect()
}

#[test]
fn counts_reproduce_table_1_and_the_published_rows_of_table_2() {
    let printed = retro_ok(&["counts", "--tables", s(solved())]);
    let rows: Vec<Vec<u64>> = printed
        .lines()
        .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 9, "{printed}");
    let table1 = spec_table("Table 1");
    assert_eq!(table1.len(), 9);
    for (row, published) in rows.iter().zip(&table1) {
        assert_eq!(row[0], published[0]);
        assert_eq!(row[1], published[1], "Table 1, {} pieces", row[0]);
        assert_eq!(row[1], row[2] + row[3] + row[4]);
    }
    let table2 = spec_table("Table 2");
    assert_eq!(table2.len(), 6);
    for published in &table2 {
        let row = &rows[published[0] as usize];
        assert_eq!(row[2..5], published[1..4], "Table 2, {} pieces", row[0]);
    }
    // The count table written by the solve is the one `counts` recomputes.
    let written = std::fs::read_to_string(solved().join("counts.csv")).unwrap();
    assert_eq!(written, printed);
}

/// Reads values straight from the table files (not through the command line).
struct Tables {
    game: Simpei,
    files: HashMap<String, SliceTable>,
}

impl Tables {
    fn open() -> Tables {
        Tables {
            game: Simpei::new(retro_simpei::job::DEFAULT_ROWS)
                .shaped(retro_simpei::job::DEFAULT_SHAPE),
            files: HashMap::new(),
        }
    }

    fn value(&mut self, pos: &Position) -> u8 {
        let (slice, key) = self.game.locate(pos.white, pos.black);
        let name = format!("{}.tbl", self.game.slice_name(slice));
        let table = self
            .files
            .entry(name.clone())
            .or_insert_with(|| SliceTable::open(&solved().join(&name)).unwrap());
        let side = Simpei::side_of(pos.to_move);
        table
            .value(side.index(), self.game.index(slice, key))
            .unwrap()
    }
}

/// The value of `pos` by plain minimax over the placement layers down to the 8-piece table.
fn minimax(tables: &mut Tables, pos: &Position) -> u8 {
    if pos.pieces() == 8 {
        return tables.value(pos);
    }
    let mut plies = Vec::new();
    let game =
        Simpei::new(retro_simpei::job::DEFAULT_ROWS).shaped(retro_simpei::job::DEFAULT_SHAPE);
    game.plies(pos, |mv, target| plies.push((mv, target)));
    let mut best: Option<(u8, i64)> = None; // (class, key) of the best successor value
    let mut best_value = 0u8;
    for (mv, target) in plies {
        let after = match target {
            Move::Known(v) => v.0,
            _ => {
                let mut next = None;
                moves(game.geometry(), pos, |m, n| {
                    if Some(m) == mv {
                        next = Some(n);
                    }
                });
                minimax(tables, &next.unwrap())
            }
        };
        let rank = match Value(after).outcome().unwrap() {
            Outcome::Loss { plies } => (0, i64::from(plies)),
            Outcome::Draw => (1, 0),
            Outcome::Win { plies } => (2, -i64::from(plies)),
        };
        if best.is_none_or(|b| rank < b) {
            best = Some(rank);
            best_value = after;
        }
    }
    match Value(best_value).outcome().unwrap() {
        Outcome::Draw => 0,
        _ => best_value + 1,
    }
}

#[test]
fn a_brute_force_minimax_over_the_placement_layers_agrees_with_the_tables() {
    let mut tables = Tables::open();
    let geometry = retro_simpei::board::Geometry::new();
    let index = retro_simpei::index::Index::new();
    // Every 2999th position of the 6- and 7-piece layers, searched down to the 8-piece table.
    let mut checked = 0;
    for layer in [6, 7] {
        let mut sample = Vec::new();
        index.for_each(layer, |i, white, black| {
            if i % 2999 == 0 && retro_simpei::index::is_canonical(&geometry, white, black) {
                sample.push((white, black));
            }
        });
        for (white, black) in sample {
            let pos = Position::new(white, black, Colour::placing(layer)).unwrap();
            assert_eq!(minimax(&mut tables, &pos), tables.value(&pos), "{pos}");
            checked += 1;
        }
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn values_are_the_same_for_every_image_of_a_position() {
    let mut tables = Tables::open();
    let g = retro_simpei::board::Geometry::new();
    let index = retro_simpei::index::Index::new();
    index.for_each(8, |i, white, black| {
        if i % 100_003 == 0 {
            for to_move in [Colour::White, Colour::Black] {
                let pos = Position::new(white, black, to_move).unwrap();
                let v = tables.value(&pos);
                for s in 1..8 {
                    assert_eq!(tables.value(&pos.image(&g, s)), v, "{pos} image {s}");
                }
                // Exchanging the colours and the side to move keeps the value.
                assert_eq!(tables.value(&pos.colours_exchanged()), v, "{pos}");
            }
        }
    });
}

#[test]
fn probe_of_the_empty_board_lists_every_first_move_and_plays_the_win_out() {
    let text = retro_ok(&[
        "probe",
        "--tables",
        s(solved()),
        "....,....,....,..../...,...,... white",
    ]);
    assert!(text.contains("moves (best first, 25):"), "{text}");
    let value_line = text.lines().find(|l| l.starts_with("value ")).unwrap();
    let plies: usize = value_line
        .split("wins in ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a win for white: {value_line}"));
    // The principal variation is legal, has exactly that many plies and ends in a win.
    let line: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("principal variation"))
        .skip(1)
        .collect();
    assert_eq!(line.len(), plies + 1, "{text}");
    assert!(line[plies].contains("white has won"), "{text}");
    let g = retro_simpei::board::Geometry::new();
    let mut pos = Position::START;
    for l in &line[..plies - 1] {
        let board = l.split_whitespace().find(|t| t.contains('/')).unwrap();
        let mut found = None;
        moves(&g, &pos, |_, next| {
            if next.notation().starts_with(board) {
                found = Some(next);
            }
        });
        pos = found.unwrap_or_else(|| panic!("{l} does not follow from {pos}"));
    }
    // The same probe as JSON.
    let json = retro_ok(&[
        "probe",
        "--tables",
        s(solved()),
        "--json",
        "....,....,....,..../...,...,...",
        "white",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["moves"].as_array().unwrap().len(), 25);
    assert_eq!(
        report["principal_variation"].as_array().unwrap().len(),
        plies
    );
}

#[test]
fn verify_recurrence_passes_on_the_solved_tables() {
    let text = retro_ok(&["verify", "--tables", s(solved()), "--recurrence", "20000"]);
    assert!(text.contains("recurrence: OK"), "{text}");
}

#[test]
fn malformed_positions_get_one_clear_line() {
    for (position, names) in [
        ("....,....,..../...,...,... white", "upper world has 4 rows"),
        ("wwwww...,....,....,..../...,...,... white", "row"),
        ("wwww,w...,....,..../bbb,...,... white", "pieces"),
        ("....,....,....,..../...,...,... green", "green"),
    ] {
        let e = retro_err(&["probe", "--tables", s(solved()), position]);
        assert!(e.contains(names), "{position}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
    }
}

#[test]
fn verify_recurrence_catches_a_corrupted_value() {
    // Rewrite one small slice with one wrong value but valid checksums: only the recurrence
    // check can notice.
    let dir = temp_dir("simpei-corrupt").join("out");
    copy_dir(solved(), &dir);
    corrupt_one_value(
        &dir.join("pieces2-upper0.tbl"),
        ["white to move", "black to move"],
    );
    let out = retro(&["verify", "--tables", s(&dir), "--recurrence", "20000"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "corruption not detected: {stdout}");
    assert!(stdout.contains("MISMATCH"), "{stdout}");
    assert!(stdout.contains("white to move: stored"), "{stdout}");
}
