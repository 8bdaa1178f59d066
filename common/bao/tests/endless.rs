//! Endless-move detection against the obvious method: remember every state of the move and
//! stop at the first repeat. Random small boards of every row length, both move kinds.

use retro_bao::rules::legal_moves;
use retro_bao::sowing::{play, step, Landing, MoveKind, Play, SowState};
use retro_bao::{Board, Direction, Move, Row};
use retro_engine::Side;
use std::collections::HashSet;

/// Whether the move ends, by remembering every state.
fn ends_by_memory(start: &SowState) -> Option<u64> {
    let mut seen = HashSet::new();
    let mut state = *start;
    let mut steps = 0;
    loop {
        if !seen.insert(state) {
            return None;
        }
        steps += 1;
        if step(&mut state).landing == Landing::Empty {
            return Some(steps);
        }
    }
}

#[test]
fn detection_agrees_with_remembering_every_state() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = move |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    let (mut endless, mut ending) = (0, 0);
    for _ in 0..4000 {
        let n = 2 + random(7) as usize;
        let row = Row::new(n).unwrap();
        let mut holes = [vec![0u8; row.ring()], vec![0u8; row.ring()]];
        let stones = 2 + random(4 * n as u64);
        for _ in 0..stones {
            let side = random(2) as usize;
            let hole = random(row.ring() as u64) as usize;
            holes[side][hole] += 1;
        }
        let board = Board::new(&holes[0], &holes[1]).unwrap();
        for hole in 0..row.ring() {
            if board.get(Side::First, hole) < 1 {
                continue;
            }
            for direction in Direction::BOTH {
                for kind in [MoveKind::Capture, MoveKind::Takata] {
                    let start =
                        SowState::start(&board, Side::First, Move { hole, direction }, kind);
                    let expected = ends_by_memory(&start);
                    match (play(&start), expected) {
                        (Play::Ends { steps, .. }, Some(s)) => {
                            assert_eq!(steps, s);
                            ending += 1;
                        }
                        (Play::Endless(_), None) => endless += 1,
                        (got, want) => panic!("{board:?} {hole} {direction}: {got:?} vs {want:?}"),
                    }
                }
            }
        }
        // Legal moves never lift fewer than 2 stones.
        let position = retro_bao::Position {
            board,
            side: Side::First,
        };
        for m in legal_moves(&position).moves {
            assert!(board.get(Side::First, m.hole) >= 2);
        }
    }
    assert!(
        endless > 0 && ending > 0,
        "both kinds seen: {endless} endless, {ending} ending"
    );
}
