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

/// The rows of the Markdown table under the `### title` heading of a report: its cells.
fn report_table<'a>(report: &'a str, title: &str) -> Vec<Vec<&'a str>> {
    let start = report
        .find(&format!("### {title}"))
        .unwrap_or_else(|| panic!("section {title}: {report}"));
    report[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect()
}

/// A position in a report cell: the backquoted notation (with `white` to move if the cell
/// gives only the board).
fn cell_position(cell: &str) -> Position {
    let text = cell.split('`').nth(1).unwrap_or(cell);
    let text = if text.contains(' ') {
        text.to_string()
    } else {
        format!("{text} white")
    };
    Position::parse(&text).unwrap_or_else(|e| panic!("{cell}: {e}"))
}

/// Every move of `pos` as (the rules' move, the position after it if play goes on, the value
/// there for its side to move), from the rules and the table files.
fn moves_with_values(tables: &mut Tables, pos: &Position) -> Vec<(String, Option<Position>, u8)> {
    let game =
        Simpei::new(retro_simpei::job::DEFAULT_ROWS).shaped(retro_simpei::job::DEFAULT_SHAPE);
    let mut plies = Vec::new();
    game.plies(pos, |mv, target| plies.push((mv, target)));
    let mut out = Vec::new();
    for (mv, target) in plies {
        let mv = mv.expect("no claims under the default rules");
        match target {
            Move::Known(v) => out.push((mv.notation(), None, v.0)),
            _ => {
                let mut next = None;
                moves(game.geometry(), pos, |m, n| {
                    if m == mv {
                        next = Some(n);
                    }
                });
                let next = next.unwrap();
                out.push((mv.notation(), Some(next), tables.value(&next)));
            }
        }
    }
    out
}

fn is_loss(v: u8) -> bool {
    matches!(Value(v).outcome(), Some(Outcome::Loss { .. }))
}

fn is_win(v: u8) -> bool {
    matches!(Value(v).outcome(), Some(Outcome::Win { .. }))
}

/// The smallest proof tree of `pos` within `budget` plies by plain search (no memory): at
/// the winner's nodes every winning move is tried, at the loser's nodes every reply up to
/// symmetry is proved.
fn naive_proof_tree(tables: &mut Tables, pos: &Position, budget: u32) -> Option<u64> {
    let plies = match Value(tables.value(pos)).outcome()? {
        Outcome::Win { plies } | Outcome::Loss { plies } => plies,
        Outcome::Draw => return None,
    };
    if plies > budget {
        return None;
    }
    let replies = moves_with_values(tables, pos);
    if is_win(tables.value(pos)) {
        replies
            .iter()
            .filter(|(_, _, v)| is_loss(*v))
            .filter_map(|(_, next, _)| match next {
                None => Some(1),
                Some(n) => naive_proof_tree(tables, n, budget - 1),
            })
            .min()
            .map(|m| m + 1)
    } else {
        let mut seen = Vec::new();
        let mut total = 1;
        for (_, next, _) in replies {
            match next {
                None => total += 1,
                Some(n) => {
                    let key = tables.game.locate(n.white, n.black);
                    if !seen.contains(&key) {
                        seen.push(key);
                        total += naive_proof_tree(tables, &n, budget - 1)?;
                    }
                }
            }
        }
        Some(total)
    }
}

#[test]
fn report_gives_the_analysis_and_its_figures_check_out() {
    let report = retro_ok(&["report", "--tables", s(solved())]);
    let mut tables = Tables::open();
    // The start positions: the second player wins the official start, the first the free one
    // (as the paper reports).
    let official = &report[report.find("### Official start").unwrap()..];
    assert!(
        official.contains("- value: black to move wins in"),
        "{report}"
    );
    let free = &report[report.find("### Free first move").unwrap()..];
    assert!(free.contains("- value: white to move wins in"), "{report}");

    // A start's smallest tree is one node more than its winning move's smallest tree.
    for (title, rule) in [("Official start", "official"), ("Free first move", "free")] {
        let section = &report[report.find(&format!("### {title}")).unwrap()..];
        let start_size: u64 = section
            .lines()
            .find_map(|l| l.strip_prefix("- smallest proof tree with every line ending within "))
            .and_then(|l| l.split(": ").nth(1))
            .and_then(|l| l.strip_suffix(" positions"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{rule}: {section}"));
        let best_move: u64 = report_table(&report, title)
            .iter()
            .filter_map(|row| row[4].split(' ').next()?.parse().ok())
            .min()
            .unwrap();
        assert_eq!(start_size, best_move + 1, "{rule}");
    }

    // The longest win is the one the paper quotes.
    let longest = report_table(&report, "Longest wins")
        .iter()
        .map(|r| r[1].parse::<u32>().unwrap())
        .max()
        .unwrap();
    assert_eq!(longest, 49, "the spec quotes a longest win of 49 plies");

    // Zugzwang: the pass image of a zugzwang is one too, so the positions that are not
    // their own image pair up; 4 pieces counted again by plain lookups.
    let zugzwang = report_table(&report, "Zugzwang");
    assert_eq!(zugzwang.len(), 5);
    for row in &zugzwang {
        let (n, own): (u64, u64) = (row[1].parse().unwrap(), row[2].parse().unwrap());
        assert_eq!((n - own) % 2, 0, "{row:?}");
    }
    let geometry = retro_simpei::board::Geometry::new();
    let index = retro_simpei::index::Index::new();
    let mut layer4 = Vec::new();
    index.for_each(4, |_, white, black| {
        if retro_simpei::index::is_canonical(&geometry, white, black) {
            layer4.push(Position::new(white, black, Colour::White).unwrap());
        }
    });
    let count4 = layer4
        .iter()
        .filter(|p| {
            is_loss(tables.value(p))
                && is_loss(tables.value(&Position::new(p.black, p.white, Colour::White).unwrap()))
        })
        .count();
    assert_eq!(zugzwang[2][1], count4.to_string(), "{:?}", zugzwang[2]);

    // Every example cycle: each position's side to move has exactly one move that does not
    // lose, and it leads to the next position (up to symmetry and colour exchange).
    let cycles = report_table(&report, "Simple cycles");
    assert!(!cycles.is_empty());
    for row in &cycles {
        let period: usize = row[0].parse().unwrap();
        let positions: Vec<Position> = row[2].split('→').map(cell_position).collect();
        assert_eq!(positions.len(), period, "{row:?}");
        for (i, pos) in positions.iter().enumerate() {
            assert_eq!(tables.value(pos), 0, "a draw: {pos}");
            let not_losing: Vec<Position> = moves_with_values(&mut tables, pos)
                .into_iter()
                .filter(|(_, _, v)| !is_win(*v))
                .map(|(_, n, _)| n.unwrap())
                .collect();
            assert_eq!(not_losing.len(), 1, "{pos}");
            let next = not_losing[0].colours_exchanged();
            let expected = positions[(i + 1) % period];
            assert_eq!(
                tables.game.locate(next.white, next.black),
                tables.game.locate(expected.white, expected.black),
                "{pos} -> {next}"
            );
        }
    }

    // Every listed one-move problem has exactly its one winning move and the listed replies.
    let problems = &report[report.find("### One-move problems").unwrap()..];
    let rows: Vec<Vec<&str>> = problems
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            l.split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 20, "{problems}");
    for row in rows {
        let pos = cell_position(row[0]);
        let winning: Vec<(String, Option<Position>, u8)> = moves_with_values(&mut tables, &pos)
            .into_iter()
            .filter(|(_, _, v)| is_loss(*v))
            .collect();
        assert_eq!(winning.len(), 1, "{row:?}");
        assert_eq!(format!("`{}`", winning[0].0), row[2], "{row:?}");
        let mut replies = 0;
        if let Some(next) = winning[0].1 {
            moves(&geometry, &next, |_, _| replies += 1);
        }
        assert_eq!(replies.to_string(), row[3], "{row:?}");
    }
}

#[test]
fn smallest_proof_trees_agree_with_a_plain_search() {
    use retro_simpei::analysis::{ProofTrees, Solved};
    let game =
        Simpei::new(retro_simpei::job::DEFAULT_ROWS).shaped(retro_simpei::job::DEFAULT_SHAPE);
    let values = (0..game.slice_count() as u32)
        .map(|id| {
            let slice = retro_engine::SliceId(id);
            if game.slice_len(slice) == 0 {
                return [Vec::new(), Vec::new()];
            }
            let file = solved().join(format!("{}.tbl", game.slice_name(slice)));
            let table = SliceTable::open(&file).unwrap();
            [
                table.read_section(0).unwrap(),
                table.read_section(1).unwrap(),
            ]
        })
        .collect();
    let solved_values = Solved::new(&game, values).unwrap();
    let mut trees = ProofTrees::new(&solved_values);
    let mut tables = Tables::open();
    let geometry = retro_simpei::board::Geometry::new();
    let index = retro_simpei::index::Index::new();
    // Positions of the 4- to 6-piece layers won or lost within 4 plies (every 4999th slot),
    // sized within their distance and within 2 plies more (up to 4).
    let mut checked = [0; 2];
    for layer in [4, 5, 6] {
        let mut sample = Vec::new();
        index.for_each(layer, |i, white, black| {
            if i % 4999 == 0 && retro_simpei::index::is_canonical(&geometry, white, black) {
                sample.push(Position::new(white, black, Colour::placing(layer)).unwrap());
            }
        });
        for pos in sample {
            let plies = match Value(tables.value(&pos)).outcome().unwrap() {
                Outcome::Win { plies } | Outcome::Loss { plies } if plies <= 4 => plies,
                _ => continue,
            };
            for budget in (plies..=4).step_by(2) {
                let naive = naive_proof_tree(&mut tables, &pos, budget).map(u128::from);
                assert_eq!(trees.size(&pos, budget), naive, "{pos} within {budget}");
                assert!(naive.is_some(), "{pos}");
                checked[usize::from(is_win(tables.value(&pos)))] += 1;
            }
        }
    }
    assert!(checked[0] >= 5 && checked[1] >= 50, "{checked:?}");
    eprintln!("proof trees checked (lost, won): {checked:?}");
}

#[test]
fn probe_file_looks_up_every_line_and_names_the_bad_ones() {
    let file = temp_dir("simpei-probe-file").join("positions.txt");
    std::fs::write(
        &file,
        "# the empty board, then the official start\n\
         ....,....,....,..../...,...,... white\n\
         \n\
         ....,....,....,..../...,.w.,... black\n\
         ....,....,....,..../...,...,... green\n",
    )
    .unwrap();
    let out = retro(&["probe", "--tables", s(solved()), "--file", s(&file)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a bad line fails the batch");
    let mut tables = Tables::open();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for line in lines {
        let (position, value) = line.rsplit_once(' ').unwrap();
        let pos = Position::parse(position).unwrap();
        assert_eq!(value, tables.value(&pos).to_string(), "{line}");
    }
    assert!(
        stderr.contains("line 5") && stderr.contains("green"),
        "{stderr}"
    );
}

#[test]
fn in_process_solve_killed_and_resumed_writes_the_same_bytes_as_the_embedded_cluster() {
    // Killed early in the 8-piece layer, then about when it ends; the re-run finishes.
    let args = [
        "solve",
        "--quiet",
        "--game",
        "simpei",
        "--in-process",
        "--out",
    ];
    let dir = temp_dir("simpei-killed").join("out");
    let moments = [5u64, 52].map(|s| KillMoment::After(std::time::Duration::from_secs(s)));
    let kills = kill_at(&args, &dir, &moments);
    assert!(kills >= 1, "the solve finished before it could be killed");
    let mut full: Vec<&str> = args.to_vec();
    full.push(s(&dir));
    retro_ok(&full);
    assert_same_results(solved(), &dir);
}
