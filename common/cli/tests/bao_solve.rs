//! Small Bao variants solved end to end and checked against a brute force (the spec's question
//! 1 on boards the engine can hold).
//!
//! The brute force knows nothing of slices or the kernel: it lists every distribution of the
//! variant's stones over both players' holes (both players to move), computes each position's
//! moves once with the rules crate, and assigns win/draw/loss with distance level by level:
//!
//! ```text
//! level 0:  no move (front row empty, or neither capture nor takata)   -> lost in 0 plies
//! level d:  a move to a position lost in d-1 plies                      -> won in d plies
//!           every move to a position won (in at most d-1 plies)         -> lost in d plies
//! never:    (an endless move cut off, or play that can go on for ever)  -> draw
//! ```
//!
//! Every stored value must be the brute force's, for every driver and both endless-move rules.

mod support;

use retro_bao::game::BaoGame;
use retro_bao::rules::{legal_moves, outcome, EndlessRule, Outcome as MoveOutcome};
use retro_bao::{Board, Position, Row};
use retro_engine::{Outcome, Side, Value};
use retro_pipeline::GameRules;
use retro_store::SliceTable;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use support::{assert_same_results, retro, retro_err, retro_ok, s, temp_dir};

/// Every board of rows of `n` holes holding `total` stones.
fn boards(n: usize, total: u32) -> Vec<Board> {
    fn rec(counts: &mut Vec<u8>, holes: usize, left: u32, out: &mut Vec<Vec<u8>>) {
        if counts.len() == holes - 1 {
            counts.push(left as u8);
            out.push(counts.clone());
            counts.pop();
            return;
        }
        for c in 0..=left {
            counts.push(c as u8);
            rec(counts, holes, left - c, out);
            counts.pop();
        }
    }
    let mut all = Vec::new();
    rec(&mut Vec::new(), 4 * n, total, &mut all);
    all.iter()
        .map(|c| Board::new(&c[..2 * n], &c[2 * n..]).unwrap())
        .collect()
}

/// What a move leads to, for the brute force: a position, or a draw (endless, cut off).
enum Next {
    To(usize),
    Draw,
}

/// The brute force of the variant (rows of `n`, `k` stones a hole) under `rule`.
fn brute_force(n: usize, k: u32, rule: EndlessRule) -> HashMap<Position, Outcome> {
    let positions: Vec<Position> = boards(n, 4 * n as u32 * k)
        .into_iter()
        .flat_map(|board| Side::BOTH.map(|side| Position { board, side }))
        .collect();
    let number: HashMap<Position, usize> =
        positions.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    let moves: Vec<Vec<Next>> = positions
        .iter()
        .map(|p| {
            let legal = legal_moves(p);
            let mut list = Vec::new();
            for mv in legal.moves {
                match outcome(p, mv, legal.kind) {
                    MoveOutcome::Continues { next, .. } => list.push(Next::To(number[&next])),
                    MoveOutcome::Endless(_) if rule == EndlessRule::CutOff => list.push(Next::Draw),
                    MoveOutcome::Endless(_) => {}
                }
            }
            list
        })
        .collect();
    let mut value: Vec<Option<Outcome>> = moves
        .iter()
        .map(|m| m.is_empty().then_some(Outcome::Loss { plies: 0 }))
        .collect();
    for d in 1u32.. {
        let mut changed = Vec::new();
        for (i, list) in moves.iter().enumerate() {
            if value[i].is_some() {
                continue;
            }
            let wins = list.iter().any(
                |m| matches!(m, Next::To(j) if value[*j] == Some(Outcome::Loss { plies: d - 1 })),
            );
            let loses = list.iter().all(
                |m| matches!(m, Next::To(j) if matches!(value[*j], Some(Outcome::Win { .. }))),
            );
            if wins {
                changed.push((i, Outcome::Win { plies: d }));
            } else if loses {
                changed.push((i, Outcome::Loss { plies: d }));
            }
        }
        if changed.is_empty() {
            break;
        }
        for (i, v) in changed {
            value[i] = Some(v);
        }
    }
    positions
        .into_iter()
        .zip(value)
        .map(|(p, v)| (p, v.unwrap_or(Outcome::Draw)))
        .collect()
}

/// Solves the variant with `flags` into a fresh directory.
fn solve(name: &str, n: usize, k: u32, flags: &[&str]) -> PathBuf {
    let dir = temp_dir(&format!("bao-{name}")).join("out");
    let (row, stones) = (n.to_string(), k.to_string());
    let mut args = vec![
        "solve", "--game", "bao", "--row", &row, "--stones", &stones, "--quiet",
    ];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--out", s(&dir)]);
    retro_ok(&args);
    dir
}

/// Asserts that every position's stored value in `dir` is the brute force's.
fn assert_equals_brute_force(dir: &Path, game: &BaoGame, want: &HashMap<Position, Outcome>) {
    let mut tables: BTreeMap<u32, SliceTable> = BTreeMap::new();
    for (position, &outcome) in want {
        let (slice, index) = game.locate(&position.board).unwrap();
        let table = tables
            .entry(slice.0)
            .or_insert_with(|| SliceTable::open(&dir.join(game.table_file_name(slice))).unwrap());
        let stored = table.value(position.side.index(), index).unwrap();
        assert_eq!(Value(stored).outcome(), Some(outcome), "{position}");
    }
}

#[test]
fn every_driver_solves_small_variants_as_the_brute_force_does() {
    for (n, k) in [(2, 1), (2, 2)] {
        let want = brute_force(n, k, EndlessRule::CutOff);
        // Not degenerate: wins, losses and draws, some of them long.
        let longest = want
            .values()
            .filter_map(|o| match o {
                Outcome::Win { plies } | Outcome::Loss { plies } => Some(*plies),
                Outcome::Draw => None,
            })
            .max()
            .unwrap();
        assert!(want.values().any(|o| *o == Outcome::Draw), "{n}x{k}");
        assert!(longest >= 3, "{n}x{k}: longest {longest}");
        let game = BaoGame::new(Row::new(n).unwrap(), k as u8, EndlessRule::CutOff).unwrap();
        let reference = solve(&format!("{n}-{k}-in-process"), n, k, &["--in-process"]);
        assert_equals_brute_force(&reference, &game, &want);
        if k == 1 {
            for (name, flags) in [
                ("1-worker", &["--workers", "1"][..]),
                ("4-workers", &["--workers", "4"][..]),
                ("out-of-core", &["--in-process", "--out-of-core"][..]),
            ] {
                let dir = solve(&format!("{n}-{k}-{name}"), n, k, flags);
                assert_same_results(&reference, &dir);
            }
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
}

#[test]
fn the_illegal_rule_is_solved_as_its_brute_force() {
    let want = brute_force(2, 2, EndlessRule::Illegal);
    let game = BaoGame::new(Row::new(2).unwrap(), 2, EndlessRule::Illegal).unwrap();
    let dir = solve("illegal", 2, 2, &["--in-process", "--endless", "illegal"]);
    assert_equals_brute_force(&dir, &game, &want);
    // The rules differ somewhere: an endless move is a real choice.
    let cut_off = brute_force(2, 2, EndlessRule::CutOff);
    assert!(want.iter().any(|(p, v)| cut_off[p] != *v));
}

#[test]
fn the_full_game_and_bad_variants_are_refused_with_one_line() {
    let out = temp_dir("bao-bad").join("out");
    let out = s(&out);
    for (args, expect) in [
        (vec!["--row", "8", "--stones", "2"], "at most 48"),
        (vec!["--row", "9"], "row"),
        (vec!["--stones", "0"], "at least 1 stone"),
        (vec!["--stones", "x"], "--stones x"),
        (vec!["--endless", "sometimes"], "sometimes"),
    ] {
        let mut all = vec!["solve", "--game", "bao", "--in-process", "--out", out];
        all.extend(args.iter().copied());
        let e = retro_err(&all);
        assert!(e.contains(expect) && !e.contains('\n'), "{args:?}: {e}");
    }
}

#[test]
fn probe_values_every_move_as_the_brute_force_does() {
    let want = brute_force(2, 2, EndlessRule::CutOff);
    let dir = solve("probe", 2, 2, &["--in-process"]);
    // A position with a real choice: the start, and a few others with several moves.
    let mut probed = 0;
    for (position, &outcome) in want
        .iter()
        .filter(|(p, _)| legal_moves(p).moves.len() >= 3)
        .take(40)
    {
        let json = retro_ok(&[
            "probe",
            "--tables",
            s(&dir),
            &position.to_string(),
            "--json",
        ]);
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        let (result, plies) = match outcome {
            Outcome::Win { plies } => (1, Some(plies)),
            Outcome::Draw => (0, None),
            Outcome::Loss { plies } => (-1, Some(plies)),
        };
        assert_eq!(report["result"], result, "{position}");
        assert_eq!(
            report["plies"].as_u64().map(|p| p as u32),
            plies,
            "{position}"
        );
        // Every move's value is what the brute force gives the position it leads to, turned
        // round; the best move is worth the position's value.
        let moves = report["moves"].as_array().unwrap();
        assert_eq!(moves.len(), legal_moves(position).moves.len());
        for m in moves {
            if let Some(next) = m["position"].as_str() {
                let next = Position::parse(next).unwrap();
                let expect = match want[&next] {
                    Outcome::Win { .. } => -1,
                    Outcome::Draw => 0,
                    Outcome::Loss { .. } => 1,
                };
                assert_eq!(m["result"], expect, "{position}: {m}");
            }
        }
        assert_eq!(moves[0]["result"], result, "{position}");
        probed += 1;
    }
    assert_eq!(probed, 40);
    // The text form and a bad position.
    let text = retro_ok(&["probe", "--tables", s(&dir), "2 2 / 2 2 | 2 2 / 2 2 first"]);
    assert!(text.contains("first to move wins in 1 ply"), "{text}");
    let e = retro_err(&["probe", "--tables", s(&dir), "2 2 / 2 | 2 2 / 2 2 first"]);
    assert!(e.contains("a Bao position looks like"), "{e}");

    // A file of positions (spaces inside them; anything after the side is ignored): each
    // value as the brute force gives it, a bad line reported by number and the rest go on.
    let chosen: Vec<(&Position, &Outcome)> = want.iter().take(30).collect();
    let mut file = String::from("# Bao positions\n");
    for (position, _) in &chosen {
        file.push_str(&format!("{position} expected-anything\n"));
    }
    file.push_str("2 2 / 2 2 | 2 2 / 2 2\n");
    let path = dir.join("positions.txt");
    std::fs::write(&path, file).unwrap();
    let out = retro(&["probe", "--tables", s(&dir), "--file", s(&path)]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("line 32: no side to move"), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), chosen.len(), "{stdout}");
    for ((position, outcome), line) in chosen.iter().zip(&lines) {
        let word = match outcome {
            Outcome::Win { plies } => format!("win{plies}"),
            Outcome::Loss { plies } => format!("loss{plies}"),
            Outcome::Draw => "draw".to_string(),
        };
        assert_eq!(*line, format!("{position} {word}"));
    }
}
