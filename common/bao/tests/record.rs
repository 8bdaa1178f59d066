//! Game records: text round trip, replay from the start, and refusal of bad records.

use retro_bao::record::Record;
use retro_bao::rules::{legal_moves, outcome, EndlessRule, Outcome};
use retro_bao::{Move, Position, Row};

/// Plays the first legal move `count` times from the start of rows of `n` holes, `k` stones.
fn first_moves(n: usize, k: u8, count: usize) -> (Record, Vec<Position>) {
    let row = Row::new(n).unwrap();
    let mut record = Record::new(row, k, EndlessRule::CutOff);
    let mut position = Position::start(row, k).unwrap();
    let mut positions = vec![position];
    for _ in 0..count {
        let legal = legal_moves(&position);
        let Some(&mv) = legal.moves.first() else {
            break;
        };
        let Outcome::Continues { next, .. } = outcome(&position, mv, legal.kind) else {
            break;
        };
        record.moves.push(mv);
        positions.push(next);
        position = next;
    }
    (record, positions)
}

#[test]
fn a_record_round_trips_through_text_and_replays_to_the_same_positions() {
    let (record, positions) = first_moves(8, 2, 6);
    assert!(record.moves.len() >= 2, "a few moves were played");
    let text = record.text();
    assert!(text.contains("variant 8 2\n"), "{text}");
    let back = Record::parse(&text).unwrap();
    assert_eq!(back, record);
    let replay = back.replay().unwrap();
    assert_eq!(replay.positions, positions);
    assert!(!replay.ended_endless);
}

#[test]
fn bad_records_are_refused_with_the_line_or_move_and_a_reason() {
    for (text, expected) in [
        ("move f1 cw\n", "before the 'variant' line"),
        ("# nothing\n", "no 'variant"),
        ("variant 8\n", "line 1"),
        ("variant 9 2\n", "line 1"),
        ("variant 8 2\nrule sometimes\n", "line 2"),
        ("variant 8 2\nmove f9 cw\n", "line 2"),
        ("variant 8 2\njump f1 cw\n", "line 2"),
    ] {
        let e = Record::parse(text).expect_err(text);
        assert!(e.contains(expected), "{text:?}: {e}");
        assert!(!e.contains('\n'));
    }
    // A takata at the start, where captures exist, is refused on replay (move 1).
    let mut record = Record::new(Row::FULL, 2, EndlessRule::CutOff);
    record.moves.push(Move::parse(Row::FULL, "b5 cw").unwrap());
    let e = record.replay().expect_err("illegal");
    assert!(e.starts_with("move 1 (b5 cw): "), "{e}");
    assert!(e.contains("must capture"), "{e}");
}
