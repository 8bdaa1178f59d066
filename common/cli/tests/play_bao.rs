//! `retro play bao`, the referee, driven through its standard input: a scripted game to its
//! end, illegal moves refused with a reason, an endless move under both rules, save and load.
//!
//! The expected results come from the rules crate (`retro_bao`), played here move by move; the
//! referee must show and announce the same.

mod support;

use retro_bao::board::side_name;
use retro_bao::moves::Move;
use retro_bao::record::Record;
use retro_bao::rules::{legal_moves, loss, outcome, EndlessRule, Outcome};
use retro_bao::{Position, Row};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use support::{s, temp_dir};

/// Runs `retro play bao ARGS` with `input` on standard input; returns success and stdout.
fn referee(args: &[&str], input: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_retro"))
        .arg("play")
        .arg("bao")
        .args(args)
        .env("RETRO_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("retro runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        stderr,
    )
}

/// The last board the referee drew before a turn's "markers:" line (its 9 lines).
fn last_turn_board(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let at = lines
        .iter()
        .rposition(|l| l.starts_with("markers:"))
        .expect("a turn was shown");
    lines[at - 9..at].join("\n")
}

/// A game played by the rules crate: the mover always takes the first legal move that ends,
/// until someone loses (or `limit` moves).
fn scripted_game(row: Row, stones: u8, limit: usize) -> (Record, Position) {
    let mut record = Record::new(row, stones, EndlessRule::CutOff);
    let mut position = Position::start(row, stones).unwrap();
    while record.moves.len() < limit && loss(&position, EndlessRule::Illegal).is_none() {
        let legal = legal_moves(&position);
        let (mv, next) = legal
            .moves
            .iter()
            .find_map(|&mv| match outcome(&position, mv, legal.kind) {
                Outcome::Continues { next, .. } => Some((mv, next)),
                Outcome::Endless(_) => None,
            })
            .expect("a move that ends");
        record.moves.push(mv);
        position = next;
    }
    (record, position)
}

fn moves_input(record: &Record) -> String {
    record
        .moves
        .iter()
        .map(|m| format!("{}\n", m.text(record.row)))
        .collect()
}

#[test]
fn a_scripted_game_is_played_to_its_end_and_the_loss_announced() {
    // Rows of 3 holes, 2 stones: short games.
    let row = Row::new(3).unwrap();
    let (record, last) = scripted_game(row, 2, 400);
    let lost = loss(&last, EndlessRule::CutOff).expect("the scripted game ends with a loss");
    let (ok, out, _) = referee(&["--row", "3"], &moves_input(&record));
    assert!(ok);
    // Every move was accepted, by the right player, in order.
    let played: Vec<&str> = out.lines().filter(|l| l.contains(" plays ")).collect();
    assert_eq!(played.len(), record.moves.len(), "{out}");
    for (i, (line, mv)) in played.iter().zip(&record.moves).enumerate() {
        let mover = if i % 2 == 0 { "first" } else { "second" };
        assert!(
            line.starts_with(&format!("{mover} plays {} (", mv.text(row))),
            "move {}: {line}",
            i + 1
        );
    }
    assert!(!out.contains("illegal:"), "{out}");
    let announced = format!(
        "Game over: {} loses ({lost}), {} wins.",
        side_name(last.side),
        side_name(last.side.other())
    );
    assert!(
        out.contains(&announced),
        "expected '{announced}' in:\n{out}"
    );
    // Each sowing was shown (a numbered step per sowing), and the input's end ends the game.
    assert!(out.contains("  1. lift "), "{out}");
    assert!(out.trim_end().ends_with("(end of input)"), "{out}");
    // With --fast only the results.
    let (ok, fast, _) = referee(&["--row", "3", "--fast"], &moves_input(&record));
    assert!(ok);
    assert!(!fast.contains("  1. lift "));
    assert!(fast.contains(&announced));
}

#[test]
fn illegal_moves_are_refused_with_a_reason_and_the_same_player_moves_again() {
    // At the full start captures exist: b5 (index 11, 2 stones) ends on a back hole either way.
    let input = "b5 cw\nf9 cw\nf1 up\nhello\nf1 acw\nf1 cw\n";
    let (ok, out, _) = referee(&[], input);
    assert!(ok);
    let refusals: Vec<&str> = out.lines().filter(|l| l.contains("illegal: ")).collect();
    assert_eq!(refusals.len(), 5, "{out}");
    assert!(refusals[0].contains("must capture"), "{}", refusals[0]);
    assert!(
        refusals[1].contains("'f9' is not a hole"),
        "{}",
        refusals[1]
    );
    assert!(
        refusals[2].contains("'up' is not a direction"),
        "{}",
        refusals[2]
    );
    assert!(refusals[3].contains("is not a move"), "{}", refusals[3]);
    // f1 anticlockwise ends on b7 (index 14), a back hole: not a capture.
    assert!(refusals[4].contains("must capture"), "{}", refusals[4]);
    // Then f1 clockwise is played by the first player, and the second is to move.
    assert!(out.contains("first plays f1 cw (a capture)"), "{out}");
    assert_eq!(out.matches("first> ").count(), 6, "{out}");
    assert!(out.contains("second> "), "{out}");
}

#[test]
fn a_game_saved_and_loaded_is_the_same_game() {
    let dir = temp_dir("play_bao_save_load");
    let saved = dir.join("game.txt");
    let (record, _) = scripted_game(Row::FULL, 2, 3);
    let input = format!("{}save {}\n", moves_input(&record), s(&saved));
    let (ok, first_session, _) = referee(&[], &input);
    assert!(ok);
    assert!(first_session.contains(&format!("Saved 3 moves to {}", s(&saved))));
    let text = std::fs::read_to_string(&saved).unwrap();
    assert_eq!(Record::parse(&text).unwrap(), record);
    // Loaded at the start (--load) and saved again: the same record, the same board, the
    // same player to move.
    let again = dir.join("again.txt");
    let (ok, second_session, _) = referee(&["--load", s(&saved)], &format!("save {}\n", s(&again)));
    assert!(ok);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);
    assert_eq!(
        last_turn_board(&second_session),
        last_turn_board(&first_session)
    );
    assert!(second_session.contains("second> "));
    // Loaded during a game (after a move of another game): the same board again; a file that
    // cannot be read leaves the game as it was.
    let missing = dir.join("missing.txt");
    let input = format!("f1 cw\nload {}\nload {}\nboard\n", s(&missing), s(&saved));
    let (ok, third_session, _) = referee(&[], &input);
    assert!(ok);
    assert!(
        third_session.contains("error: cannot read"),
        "{third_session}"
    );
    assert!(third_session.contains("Loaded 3 moves"), "{third_session}");
    assert_eq!(
        last_turn_board(&third_session),
        last_turn_board(&first_session)
    );
    // A record with an illegal move is refused with the move and the reason.
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "variant 8 2\nmove b5 cw\n").unwrap();
    let (ok, _, stderr) = referee(&["--load", s(&bad)], "");
    assert!(!ok);
    assert!(
        stderr.contains("error: ") && stderr.contains("move 1 (b5 cw)"),
        "{stderr}"
    );
}

#[test]
fn an_endless_move_ends_the_game_or_is_refused_by_the_rule() {
    // Rows of 2 holes, 2 stones: find a first move that never ends, by the rules crate.
    let row = Row::new(2).unwrap();
    let start = Position::start(row, 2).unwrap();
    let legal = legal_moves(&start);
    let endless: Vec<Move> = legal
        .moves
        .iter()
        .copied()
        .filter(|&mv| matches!(outcome(&start, mv, legal.kind), Outcome::Endless(_)))
        .collect();
    let mv = endless
        .first()
        .expect("an endless first move on 2x2, 2 stones");
    let input = format!("{}\n{}\n", mv.text(row), mv.text(row));
    let (ok, out, _) = referee(&["--row", "2"], &input);
    assert!(ok);
    assert!(
        out.contains(&format!("{} never ends: after ", mv.text(row))),
        "{out}"
    );
    assert!(out.contains("Game over: an endless move ends the game with no winner."));
    assert!(
        out.contains("(never ends)"),
        "the turn marks endless moves: {out}"
    );
    // No move after the end.
    assert!(out.contains("illegal: the game is over"), "{out}");
    // Under the illegal rule the same move is refused, with the reason.
    let (ok, out, _) = referee(&["--row", "2", "--endless", "illegal"], &input);
    assert!(ok);
    assert!(out.contains("never ends") && out.contains("endless moves are illegal"));
    assert!(!out.contains(" plays "), "{out}");
}

#[test]
fn a_player_without_a_move_loses_at_once_and_bad_arguments_are_one_line_errors() {
    // One stone a hole: no mtaji, no hole to start a takata.
    let (ok, out, _) = referee(&["--row", "3", "--stones", "1"], "f1 cw\n");
    assert!(ok);
    assert!(
        out.contains("Game over: first loses (there is no move), second wins."),
        "{out}"
    );
    for args in [
        &["--row", "9"][..],
        &["--endless", "sometimes"],
        &["--load", "/nonexistent/game.txt"],
    ] {
        let (ok, _, stderr) = referee(args, "");
        assert!(!ok, "{args:?}");
        let errors = stderr.lines().filter(|l| l.starts_with("error:")).count();
        assert_eq!(errors, 1, "{args:?}: {stderr}");
    }
    assert!(Path::new(env!("CARGO_BIN_EXE_retro")).exists());
}
