//! The relay-sowing mancala solved end to end and checked against a brute force.
//!
//! The brute force knows nothing of stages, thresholds or the engine: it takes every position
//! of the 4x2 ring with up to 8 stones (both players to move) and iterates the margin's
//! defining equation from all zeros until nothing changes,
//!
//! ```text
//! V(p) = max over the mover's moves of: captured - V(next)   (the game goes on)
//!                                       gain                  (the move ends the game)
//!                                       0                     (endless, cut off)
//!        own stones - opponent's stones                        (no move: the game is over)
//! ```
//!
//! The k-th iterate is the value of the game cut off after k moves (the cut counting 0); once
//! an iterate repeats, it is the fixpoint, and it is the value with endless play worth 0: a
//! margin of at least t that a player can force is forced within as many moves as there are
//! positions, and one it cannot force, the opponent avoids until the cut as well. Every
//! position's stored margin must equal it, for every driver and both endless-move rules.

mod support;

use retro_engine::Side;
use retro_mancala::board::Board;
use retro_mancala::rules::{final_margin, for_each_move, is_choosable, EndlessRule, Outcome};
use retro_mancala::Mancala;
use retro_pipeline::GameRules;
use retro_store::SliceTable;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use support::{assert_same_results, retro, retro_err, retro_ok, s, temp_dir};

const HOLES: usize = 8;
const STONES: u32 = 8;

/// Every board of `HOLES` holes with at most `STONES` stones.
fn every_board() -> Vec<Board> {
    fn rec(counts: &mut Vec<u8>, left: u32, out: &mut Vec<Board>) {
        if counts.len() == HOLES {
            out.push(Board::new(counts).unwrap());
            return;
        }
        for c in 0..=left {
            counts.push(c as u8);
            rec(counts, left - c, out);
            counts.pop();
        }
    }
    let mut out = Vec::new();
    rec(&mut Vec::new(), STONES, &mut out);
    out
}

/// The brute-force margins of every position under `rule`.
fn brute_force(rule: EndlessRule) -> HashMap<(Board, Side), i32> {
    // Each position's moves, once: (captured or gain, next position or none).
    type Edge = (i32, Option<(Board, Side)>);
    let mut edges: HashMap<(Board, Side), Vec<Edge>> = HashMap::new();
    for board in every_board() {
        for side in Side::BOTH {
            let mut list = Vec::new();
            for_each_move(&board, side, |mv| {
                if !is_choosable(&mv, rule) {
                    return;
                }
                list.push(match mv.outcome {
                    Outcome::Continues { board, captured } => {
                        (captured as i32, Some((board, side.other())))
                    }
                    Outcome::GameOver { gain, .. } => (gain, None),
                    Outcome::Endless(_) => (0, None),
                });
            });
            edges.insert((board, side), list);
        }
    }
    let mut value: HashMap<(Board, Side), i32> = edges.keys().map(|&p| (p, 0)).collect();
    for _round in 0.. {
        let next: HashMap<(Board, Side), i32> = edges
            .iter()
            .map(|(&(board, side), list)| {
                let v = if list.is_empty() {
                    final_margin(&board, side)
                } else {
                    list.iter()
                        .map(|&(gain, to)| match to {
                            Some(p) => gain - value[&p],
                            None => gain,
                        })
                        .max()
                        .unwrap()
                };
                ((board, side), v)
            })
            .collect();
        if next == value {
            break;
        }
        value = next;
    }
    value
}

/// Solves the 4x2 ring up to `STONES` stones with `flags` into a fresh directory.
fn solve(name: &str, flags: &[&str]) -> PathBuf {
    let dir = temp_dir(&format!("mancala-{name}")).join("out");
    let stones = STONES.to_string();
    let mut args = vec![
        "solve",
        "--game",
        "mancala4",
        "--max-stones",
        &stones,
        "--quiet",
    ];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--out", s(&dir)]);
    retro_ok(&args);
    dir
}

/// Asserts that every position's stored margin in `dir` is the brute force's.
fn assert_equals_brute_force(dir: &Path, rule: EndlessRule, want: &HashMap<(Board, Side), i32>) {
    let game = Mancala::new(HOLES, STONES, rule).unwrap();
    let mut tables: BTreeMap<u32, SliceTable> = BTreeMap::new();
    let mut checked = 0;
    for (&(board, side), &margin) in want {
        let (slice, index) = game.locate(&board).unwrap();
        let table = tables
            .entry(slice.0)
            .or_insert_with(|| SliceTable::open(&dir.join(game.table_file_name(slice))).unwrap());
        let stored = table.value(side.index(), index).unwrap() as i8 as i32;
        assert_eq!(stored, margin, "{board} {side:?}");
        checked += 1;
    }
    assert_eq!(
        checked,
        2 * 12_870,
        "every board of up to 8 stones, both sides to move"
    );
}

#[test]
fn every_driver_solves_small_boards_as_the_brute_force_does() {
    let want = brute_force(EndlessRule::CutOff);
    // The brute force itself is not trivial: wins, losses and draws of several sizes.
    let mut margins: Vec<i32> = want.values().copied().collect();
    margins.sort();
    margins.dedup();
    assert!(margins.len() > 10, "{margins:?}");
    let reference = solve("in-process", &["--in-process"]);
    assert_equals_brute_force(&reference, EndlessRule::CutOff, &want);
    for (name, flags) in [
        ("1-worker", &["--workers", "1"][..]),
        ("4-workers", &["--workers", "4"][..]),
        ("out-of-core", &["--in-process", "--out-of-core"][..]),
        ("split", &["--workers", "2", "--split-above", "0"][..]),
    ] {
        let dir = solve(name, flags);
        assert_same_results(&reference, &dir);
    }
    let out = retro_ok(&[
        "verify",
        "--tables",
        s(&reference),
        "--recurrence",
        "100000",
    ]);
    assert!(out.contains("OK"), "{out}");
}

#[test]
fn the_illegal_rule_is_solved_as_its_brute_force() {
    let want = brute_force(EndlessRule::Illegal);
    let dir = solve("illegal", &["--in-process", "--endless", "illegal"]);
    assert_equals_brute_force(&dir, EndlessRule::Illegal, &want);
    // The rules differ somewhere: an endless move is a real choice.
    let cut_off = brute_force(EndlessRule::CutOff);
    assert!(want.iter().any(|(p, v)| cut_off[p] != *v));
}

#[test]
fn verify_recurrence_catches_a_corrupted_margin() {
    let dir = solve("corrupt", &["--in-process"]);
    let file = dir.join("stones-6-first-3.tbl");
    let table = SliceTable::open(&file).unwrap();
    let mut first = table.read_section(0).unwrap();
    let second = table.read_section(1).unwrap();
    first[17] = (first[17] as i8 + 1) as u8;
    let bytes = retro_store::TableWriter::encode(
        table.label(),
        &[("first to move", &first), ("second to move", &second)],
        3,
    );
    drop(table);
    std::fs::write(&file, bytes).unwrap();
    let out = retro(&["verify", "--tables", s(&dir), "--recurrence", "100000"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "corruption not detected: {stdout}");
    assert!(stdout.contains("MISMATCH"), "{stdout}");
}

#[test]
fn the_4x2_start_and_counts_are_reported() {
    // Up to 8 stones the start (16 stones) is not covered: said, not guessed.
    let dir = solve("counts", &["--in-process"]);
    let counts = retro_ok(&["counts", "--tables", s(&dir)]);
    let mut lines = counts.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("stones,positions,win,draw,loss,m-8,"));
    // One row per stone count; positions are every board of that many stones, both sides.
    for (stones, line) in lines.enumerate() {
        let cells: Vec<u64> = line.split(',').map(|c| c.parse().unwrap()).collect();
        assert_eq!(cells[0], stones as u64);
        let boards = retro_index::binomial(stones + HOLES - 1, HOLES - 1);
        assert_eq!(cells[1], 2 * boards, "{line}");
        assert_eq!(cells[2] + cells[3] + cells[4], cells[1], "{line}");
        assert_eq!(cells[5..].iter().sum::<u64>(), cells[1], "{line}");
    }
}

#[test]
fn bad_mancala_input_gets_one_clear_line() {
    let dir = temp_dir("mancala-bad");
    let out = s(&dir);
    for (args, expect) in [
        (vec!["solve", "--game", "mancala", "--out", out], "--holes"),
        (
            vec!["solve", "--game", "mancala", "--holes", "7", "--out", out],
            "even number of holes",
        ),
        (
            vec![
                "solve",
                "--game",
                "mancala4",
                "--max-stones",
                "300",
                "--out",
                out,
            ],
            "at most",
        ),
        (
            vec![
                "solve",
                "--game",
                "mancala4",
                "--endless",
                "forever",
                "--out",
                out,
            ],
            "cut-off",
        ),
        (
            vec![
                "solve",
                "--game",
                "mancala4",
                "--max-browns",
                "3",
                "--out",
                out,
            ],
            "option of --game musashi25",
        ),
        (
            vec![
                "solve",
                "--game",
                "musashi25",
                "--max-stones",
                "3",
                "--out",
                out,
            ],
            "mancala",
        ),
    ] {
        let e = retro_err(&args);
        assert!(e.contains(expect), "{args:?}: {e}");
    }
}

#[test]
fn probe_values_every_move_and_the_best_is_the_position_value() {
    // Ten stones, for the study's first loop.
    let dir = temp_dir("mancala-probe").join("out");
    retro_ok(&[
        "solve",
        "--game",
        "mancala4",
        "--max-stones",
        "10",
        "--in-process",
        "--quiet",
        "--out",
        s(&dir),
    ]);
    let want = brute_force(EndlessRule::CutOff);
    let board = Board::parse("1,0,2,0,0,1,0,3").unwrap();
    let json = retro_ok(&[
        "probe",
        "--tables",
        s(&dir),
        "1,0,2,0,0,1,0,3 second",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["value"], want[&(board, Side::Second)]);
    // The study's first loop: lifting a never ends (cut off: worth 0).
    let json = retro_ok(&[
        "probe",
        "--tables",
        s(&dir),
        "3,1,0,2,1,0,2,1",
        "first",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let moves = report["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 3, "{json}");
    let a = moves.iter().find(|m| m["move"] == "a").unwrap();
    assert_eq!(a["endless"]["period"], 0);
    assert_eq!(a["endless"]["shift"], 3);
    assert_eq!(a["value"], 0);
    // Best first, and the best move is worth the position's value.
    let values: Vec<i64> = moves.iter().map(|m| m["value"].as_i64().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[0] >= w[1]), "{values:?}");
    assert_eq!(values[0], report["value"].as_i64().unwrap());
    let text = retro_ok(&["probe", "--tables", s(&dir), "1,0,2,0,0,1,0,3", "second"]);
    assert!(text.contains("best line"), "{text}");
    assert!(text.contains("h:"), "the board diagram names holes: {text}");
    // Boards the tables do not hold, or not boards at all: one line each.
    for (bad, expect) in [
        ("4,4,4,0,0,0,0,0", "up to 10"),
        ("1,1,1,1,1,1", "holes"),
        ("1,x,1,1,1,1,1,1", "not a stone count"),
        ("1,1,1,1,1,1,1,1 third", "side to move"),
    ] {
        let e = retro_err(&["probe", "--tables", s(&dir), bad]);
        assert!(e.contains(expect), "{bad}: {e}");
    }
}

#[test]
fn loops_reports_the_study_examples_and_consistent_counts() {
    let out = retro_ok(&["loops", "--game", "mancala4", "--list", "1000"]);
    assert!(!out.contains("differs"), "{out}");
    let examples = &out[out.find("## The study's examples").unwrap()..];
    let examples = &examples[..examples.find("## Positions").unwrap()];
    let rows = examples
        .lines()
        .filter(|l| l.starts_with("| ") && l.as_bytes()[2].is_ascii_digit())
        .count();
    assert_eq!(rows, 11, "{examples}");
    // Endless moves: the class counts add up to the total, and every listed line is
    // replayed from the start to the position named, whose hole then never ends.
    let total: usize = out
        .lines()
        .find(|l| l.contains("endless moves (position and hole)"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(total > 0);
    let section = &out[out.find("| period | shift | endless moves |").unwrap()..];
    let classes: usize = section
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.split('|')
                .nth(3)
                .unwrap()
                .trim()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(classes, total);
    let table = &out[out.find("| line | position | hole |").unwrap()..];
    let mut replayed = 0;
    for row in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let mut at = retro_mancala::Position {
            board: Board::start(8).unwrap(),
            side: Side::First,
        };
        for hole in cells[1].split_whitespace() {
            let hole = retro_mancala::board::parse_hole(hole, 8).unwrap();
            let mut next = None;
            for_each_move(&at.board, at.side, |mv| {
                if mv.hole == hole {
                    if let Outcome::Continues { board, .. } = mv.outcome {
                        next = Some(board);
                    }
                }
            });
            at = retro_mancala::Position {
                board: next.expect("each move of the line goes on"),
                side: at.side.other(),
            };
        }
        assert_eq!(at.to_string(), cells[2], "{row}");
        let hole = retro_mancala::board::parse_hole(cells[3], 8).unwrap();
        assert!(matches!(
            retro_mancala::sowing::play(&at.board, hole),
            retro_mancala::sowing::Play::Endless(_)
        ));
        replayed += 1;
    }
    assert_eq!(replayed, total, "every endless move listed");
    let e = retro_err(&["loops", "--game", "musashi25"]);
    assert!(e.contains("mancala"), "{e}");
}

/// The rows of a Markdown table whose first cell is a number, split into cells.
fn numbered_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with("| ") && l.as_bytes()[2].is_ascii_digit())
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect()
}

#[test]
fn loops_by_layers_count_what_the_distance_search_counts() {
    // 4x2: the distance search and the layer search both finish; their counts per stone
    // count must agree, and the layers' sides add up.
    let by_distance = retro_ok(&["loops", "--game", "mancala4"]);
    let section = &by_distance[by_distance.find("## Positions reachable").unwrap()..];
    let section = &section[..section.find("## Endless").unwrap()];
    let expected: std::collections::BTreeMap<u32, u64> = numbered_rows(section)
        .iter()
        .map(|r| (r[1].parse().unwrap(), r[2].parse().unwrap()))
        .collect();
    let by_layers = retro_ok(&["loops", "--game", "mancala4", "--layers"]);
    assert!(!by_layers.contains("Partial"), "{by_layers}");
    let mut total = 0;
    for row in numbered_rows(&by_layers) {
        let stones: u32 = row[1].parse().unwrap();
        let positions: u64 = row[2].parse().unwrap();
        let first: u64 = row[3].parse().unwrap();
        let second: u64 = row[4].parse().unwrap();
        assert_eq!(first + second, positions, "{stones} stones");
        assert_eq!(
            positions,
            expected.get(&stones).copied().unwrap_or(0),
            "{stones} stones"
        );
        total += positions;
    }
    assert_eq!(total, expected.values().sum::<u64>());
    assert!(
        by_layers.contains(&format!("| all | {total} |")),
        "{by_layers}"
    );

    // A limit stops the search in a layer and says so, with that layer's growth.
    let partial = retro_ok(&["loops", "--game", "mancala4", "--layers", "--limit", "500"]);
    assert!(partial.contains("**Partial search**"), "{partial}");
    assert!(partial.contains("(incomplete) | more than"), "{partial}");
    assert!(
        partial.contains("| round | positions | ratio |"),
        "{partial}"
    );
}
