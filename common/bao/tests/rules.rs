//! Each rule of Bao la kujifunza on hand-made boards, with the expected results worked out by
//! hand in the comments (not by the code under test).
//!
//! Notation (`retro_bao::board`): the first player's rows `front / back`, a `|`, the second
//! player's, then the side to move; each row from its owner's left, so a back row is written
//! from index `2n-1` down to `n`. Hole names: `f1..f8` = indices 0..7, `b1..b8` = 15..8.

use retro_bao::markers::{is_marker, markers, mtaji, mtaji_target};
use retro_bao::rules::{
    choosable_moves, legal_moves, loss, outcome, refusal, EndlessRule, Loss, Outcome,
};
use retro_bao::sowing::{play, step, trace, Landing, MoveKind, Phase, Play, SowState};
use retro_bao::{Board, Direction, Move, Position, Row};
use retro_engine::Side;

const CW: Direction = Direction::Clockwise;
const ACW: Direction = Direction::Anticlockwise;
const EMPTY_ROWS: &str = "0 0 0 0 0 0 0 0 / 0 0 0 0 0 0 0 0";

fn pos(text: &str) -> Position {
    Position::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn mv(text: &str) -> Move {
    Move::parse(Row::FULL, text).unwrap()
}

fn moves_text(position: &Position) -> Vec<String> {
    legal_moves(position)
        .moves
        .iter()
        .map(|m| m.text(position.board.row()))
        .collect()
}

/// Plays a legal move that ends and returns the next position and the steps it took.
fn play_ok(position: &Position, text: &str) -> (Position, u64) {
    let m = mv(text);
    assert_eq!(refusal(position, m, EndlessRule::CutOff), None, "{text}");
    match outcome(position, m, legal_moves(position).kind) {
        Outcome::Continues { next, steps } => (next, steps),
        Outcome::Endless(e) => panic!("{text} is endless: {e:?}"),
    }
}

#[test]
fn markers_are_front_holes_with_stones_facing_enemy_stones() {
    // First's front 1 0 2 0 0 0 0 3 faces second's front read backwards: f1 (1) faces
    // second's index 7 (1), f3 (2) faces index 5 (5), f8 (3) faces index 0 (1): markers
    // 0, 2, 7; f2 is empty. Seen from second: index 0 faces first's 7, 5 faces 2, 7 faces 0.
    let p = pos(&format!(
        "1 0 2 0 0 0 0 3 / 9 0 0 0 0 0 0 0 | 1 0 0 0 0 5 0 1 / {}",
        "0 0 0 0 0 0 0 0"
    ));
    assert_eq!(markers(&p.board, Side::First), [0, 2, 7]);
    assert_eq!(markers(&p.board, Side::Second), [0, 5, 7]);
    // A back hole is never a marker, however full.
    assert!(!is_marker(&p.board, Side::First, 15));
}

#[test]
fn a_mtaji_holds_2_to_15_stones_and_ends_on_a_marker_either_way() {
    // The only marker is f5 (index 4, 1 stone) facing second's index 3 (1 stone). A hole s
    // holes before it (in the direction of sowing) holding s stones ends there: a mtaji for
    // s = 2..=15. One stone is too few; 17 stones (lapping the ring, ending on index 4 too)
    // too many; 16 would be the marker itself.
    for direction in Direction::BOTH {
        for s in 1..=17usize {
            let hole = Row::FULL.advance(4, s, direction.reversed());
            if hole == 4 {
                continue;
            }
            let mut first = [0u8; 16];
            first[4] = 1;
            first[hole] = s as u8;
            let mut second = [0u8; 16];
            second[3] = 1;
            let board = Board::new(&first, &second).unwrap();
            let expected = (2..=15).contains(&s).then_some(4);
            assert_eq!(
                mtaji_target(&board, Side::First, hole, direction),
                expected,
                "{s} stones in {hole} sown {direction}"
            );
            // The other way it ends elsewhere: on a marker only if that is index 4 again.
            let other = Row::FULL.advance(hole, s, direction.reversed());
            if other != 4 {
                assert_eq!(
                    mtaji_target(&board, Side::First, hole, direction.reversed()),
                    None
                );
            }
            // Without stones facing it, index 4 is no marker and nothing is a mtaji.
            let bare = Board::new(&first, &[0u8; 16]).unwrap();
            assert_eq!(mtaji(&bare, Side::First), []);
        }
    }
}

#[test]
fn the_full_start_has_sixteen_captures() {
    // Every hole holds 2 and every front hole is a marker. A hole captures clockwise when the
    // hole 2 further on is a front hole (indices 14, 15, 0..=5: 8 holes) and anticlockwise when
    // the hole 2 back is (2..=9: 8 holes).
    let start = Position::start(Row::FULL, 2).unwrap();
    let legal = legal_moves(&start);
    assert_eq!(legal.kind, MoveKind::Capture);
    assert_eq!(legal.moves.len(), 16);
    let cw = legal.moves.iter().filter(|m| m.direction == CW).count();
    assert_eq!(cw, 8);
}

#[test]
fn a_capture_at_the_left_end_sows_from_hole_1_clockwise() {
    // First: f2 (index 1) = 1 facing second's index 6 = 3: a marker in the left end.
    // b1 (index 15) = 2 sown clockwise drops into 0 and 1: a mtaji. Anticlockwise it would end
    // on 13 (a back hole). Step 1: 15 -> 0, 0: 0->1, 1: 1->2, last on the marker.
    // Step 2: take second's 3 from index 6, sow from index 0 clockwise: 0: 1->2, 1: 2->3,
    // 2: 0->1, last into an empty hole: the move ends.
    let p = pos("0 1 0 0 0 0 0 0 / 2 0 0 0 0 0 0 0 | 0 0 0 0 0 0 3 0 / 0 0 0 0 0 0 0 2 first");
    assert_eq!(moves_text(&p), ["b1 cw"]);
    let (next, steps) = play_ok(&p, "b1 cw");
    assert_eq!(steps, 2);
    assert_eq!(
        next,
        pos("2 3 1 0 0 0 0 0 / 0 0 0 0 0 0 0 0 | 0 0 0 0 0 0 0 0 / 0 0 0 0 0 0 0 2 second")
    );
    // And the second player, whose front row is now empty, has lost.
    assert_eq!(loss(&next, EndlessRule::CutOff), Some(Loss::EmptyFrontRow));
    assert!(legal_moves(&next).moves.is_empty());
}

#[test]
fn a_capture_at_the_right_end_sows_from_hole_8_anticlockwise() {
    // First: f7 (index 6) = 1 facing second's index 1 = 3. b8 (index 8) = 2 sown anticlockwise
    // drops into 7 and 6. Step 1: 7: 0->1, 6: 1->2 (marker). Step 2: take 3, sow from index 7
    // anticlockwise: 7: 1->2, 6: 2->3, 5: 0->1 (was empty): the move ends.
    let p = pos("0 0 0 0 0 0 1 0 / 0 0 0 0 0 0 0 2 | 0 3 0 0 0 0 0 0 / 1 0 0 0 0 0 0 0 first");
    assert_eq!(moves_text(&p), ["b8 acw"]);
    let (next, steps) = play_ok(&p, "b8 acw");
    assert_eq!(steps, 2);
    assert_eq!(
        next,
        pos("0 0 0 0 0 1 3 2 / 0 0 0 0 0 0 0 0 | 0 0 0 0 0 0 0 0 / 1 0 0 0 0 0 0 0 second")
    );
}

#[test]
fn a_clockwise_capture_at_the_right_end_turns_the_move_anticlockwise() {
    // First: f5 (index 4) = 2, f7 (index 6) = 1 facing second's index 1 = 2. f5 sown clockwise
    // ends on 6. Step 1: 4 -> 0, 5: 0->1, 6: 1->2 (marker). Step 2: take 2 from second's index
    // 1, sow from index 7 anticlockwise: 7: 0->1, 6: 2->3, last on 6, which faces nothing now:
    // no marker, so step 3 lifts its 3 and sows on anticlockwise (the capture's direction):
    // 5: 1->2, 4: 0->1, 3: 0->1 (was empty): the move ends. Clockwise it would have gone
    // into 7, 8, 9 instead.
    let p = pos("0 0 0 0 2 0 1 0 / 0 0 0 0 0 0 0 0 | 0 2 0 0 0 0 0 0 / 0 0 0 0 0 1 0 0 first");
    assert_eq!(moves_text(&p), ["f5 cw"]);
    let start = SowState::start(&p.board, Side::First, mv("f5 cw"), MoveKind::Capture);
    let steps = trace(&start, 100);
    let summary: Vec<(Phase, usize, u8, usize, Direction, usize, Landing)> = steps
        .iter()
        .map(|(s, _)| {
            (
                s.phase,
                s.at,
                s.stones,
                s.first,
                s.direction,
                s.last,
                s.landing,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (Phase::Lift, 4, 2, 5, CW, 6, Landing::Marker),
            (Phase::Capture, 6, 2, 7, ACW, 6, Landing::Stones),
            (Phase::Lift, 6, 3, 5, ACW, 3, Landing::Empty),
        ]
    );
    let (next, _) = play_ok(&p, "f5 cw");
    assert_eq!(
        next,
        pos("0 0 0 1 1 2 0 1 / 0 0 0 0 0 0 0 0 | 0 0 0 0 0 0 0 0 / 0 0 0 0 0 1 0 0 second")
    );
}

#[test]
fn a_capture_in_the_middle_sows_from_the_end_of_the_direction() {
    // Clockwise: f4 (index 3) = 1 facing second's index 4 = 2; f2 (index 1) = 2 sown clockwise
    // ends on 3 (anticlockwise on 15, a back hole). Step 1: 1 -> 0, 2: 0->1, 3: 1->2.
    // Step 2: the middle, clockwise: from index 0: 0: 0->1, 1: 0->1 (was empty): ends.
    let p = pos("0 2 0 1 0 0 0 0 / 0 0 0 0 0 0 0 0 | 0 0 0 0 2 0 0 0 / 0 0 0 0 0 0 0 1 first");
    assert_eq!(moves_text(&p), ["f2 cw"]);
    let (next, steps) = play_ok(&p, "f2 cw");
    assert_eq!(steps, 2);
    assert_eq!(
        next,
        pos("1 1 1 2 0 0 0 0 / 0 0 0 0 0 0 0 0 | 0 0 0 0 0 0 0 0 / 0 0 0 0 0 0 0 1 second")
    );
    // Anticlockwise: f5 (index 4) = 1 facing second's index 3 = 3; f7 (index 6) = 2 sown
    // anticlockwise ends on 4 (clockwise on 8). Step 1: 6 -> 0, 5: 0->1, 4: 1->2. Step 2: the
    // middle, anticlockwise: from index 7: 7: 0->1, 6: 0->1, 5: 1->2, last on 5, facing
    // second's index 2 (empty): no marker. Step 3: lift 5's 2: 4: 2->3, 3: 0->1: ends.
    let p = pos("0 0 0 0 1 0 2 0 / 0 0 0 0 0 0 0 0 | 1 0 0 3 0 0 0 0 / 0 0 0 0 0 0 0 0 first");
    assert_eq!(moves_text(&p), ["f7 acw"]);
    let (next, steps) = play_ok(&p, "f7 acw");
    assert_eq!(steps, 3);
    assert_eq!(
        next,
        pos("0 0 0 1 3 0 1 1 / 0 0 0 0 0 0 0 0 | 1 0 0 0 0 0 0 0 / 0 0 0 0 0 0 0 0 second")
    );
}

#[test]
fn captures_chain_directly_and_through_relays() {
    // First: f2 (1) = 1, f5 (4) = 1, b1 (15) = 2; second: index 6 = 2 (facing 1), index 3 = 4
    // (facing 4), index 4 = 1 (facing 3, empty for now). Only b1 clockwise captures.
    //  1 lift 15 (2): 0: 0->1, 1: 1->2; marker (facing 2).
    //  2 capture at 1 (left end): take 2, from 0 clockwise: 0: 1->2, 1: 2->3; facing now 0.
    //  3 lift 1 (3): 2: 0->1, 3: 0->1, 4: 1->2; marker (facing 4).
    //  4 capture at 4 (middle, clockwise): take 4, from 0: 0: 2->3, 1: 0->1, 2: 1->2, 3: 1->2;
    //    3 faces second's index 4 = 1: a marker.
    //  5 capture at 3 (middle, clockwise): take 1, from 0: 0: 3->4; 0 faces index 7 (empty).
    //  6 lift 0 (4): 1: 1->2, 2: 2->3, 3: 2->3, 4: 2->3; 4's facing hole was taken.
    //  7 lift 4 (3): 5: 0->1, 6: 0->1, 7: 0->1 (was empty): ends.
    // First: 4 stones + 2 + 4 + 1 captured = 11 = 0+2+3+3+0+1+1+1.
    let p = pos("0 1 0 0 1 0 0 0 / 2 0 0 0 0 0 0 0 | 0 0 0 4 1 0 2 0 / 0 0 0 0 0 0 0 0 first");
    assert_eq!(moves_text(&p), ["b1 cw"]);
    let start = SowState::start(&p.board, Side::First, mv("b1 cw"), MoveKind::Capture);
    let phases: Vec<(Phase, usize)> = trace(&start, 100)
        .iter()
        .map(|(s, _)| (s.phase, s.at))
        .collect();
    assert_eq!(
        phases,
        [
            (Phase::Lift, 15),
            (Phase::Capture, 1),
            (Phase::Lift, 1),
            (Phase::Capture, 4),
            (Phase::Capture, 3),
            (Phase::Lift, 0),
            (Phase::Lift, 4),
        ]
    );
    let (next, steps) = play_ok(&p, "b1 cw");
    assert_eq!(steps, 7);
    assert_eq!(
        next,
        pos(&format!(
            "0 2 3 3 0 1 1 1 / 0 0 0 0 0 0 0 0 | {EMPTY_ROWS} second"
        ))
    );
    assert_eq!(
        next.board.total(),
        p.board.total(),
        "stones never leave the board"
    );
}

#[test]
fn takata_has_front_row_priority() {
    // No enemy front stones: no markers, no capture. f2 holds 2, so only front holes with 2 or
    // more may start a takata: f2 both ways; b8 (3) and b4 (2) may not.
    let p = pos("0 2 0 0 0 0 0 1 / 0 0 0 2 0 0 0 3 | 0 0 0 0 0 0 0 0 / 0 0 0 0 0 5 0 0 first");
    let legal = legal_moves(&p);
    assert_eq!(legal.kind, MoveKind::Takata);
    assert_eq!(moves_text(&p), ["f2 cw", "f2 acw"]);
    let why = refusal(&p, mv("b8 cw"), EndlessRule::CutOff).unwrap();
    assert!(why.contains("front-row priority"), "{why}");
    let why = refusal(&p, mv("f8 cw"), EndlessRule::CutOff).unwrap();
    assert!(why.contains("holds 1 stone"), "{why}");
    // With no front hole of 2 or more, the back holes may: b8 (index 8) and b4 (index 12).
    let p = pos("0 1 0 0 0 0 0 1 / 0 0 0 2 0 0 0 3 | 0 0 0 0 0 0 0 0 / 0 0 0 0 0 5 0 0 first");
    assert_eq!(moves_text(&p), ["b8 cw", "b8 acw", "b4 cw", "b4 acw"]);
    // A takata relays: f2 (2) clockwise: 2: 0->1, 3: 1->2 (not empty), lift 3 (2): 4: 0->1,
    // 5: 0->1 (was empty): ends after 2 steps.
    let p = pos("0 2 0 1 0 0 0 0 / 0 0 0 0 0 0 0 0 | 0 0 0 0 0 0 0 0 / 0 0 0 0 0 5 0 0 first");
    let (next, steps) = play_ok(&p, "f2 cw");
    assert_eq!(steps, 2);
    assert_eq!(
        next,
        pos("0 0 1 0 1 1 0 0 / 0 0 0 0 0 0 0 0 | 0 0 0 0 0 0 0 0 / 0 0 0 0 0 5 0 0 second")
    );
}

#[test]
fn a_takata_never_captures() {
    // First: f1 = 2, f3 = 1, f5 = 1; second: index 3 = 1 (facing f5, a marker). No mtaji: f1
    // clockwise ends on f3 (facing second's 5, empty), anticlockwise on a back hole.
    //  1 lift 0 (2): 1: 0->1, 2: 1->2 (not empty);
    //  2 lift 2 (2): 3: 0->1, 4: 1->2: the last stone falls on the marker f5, but a takata
    //    does not capture: lift it;
    //  3 lift 4 (2): 5: 0->1, 6: 0->1 (was empty): ends. Second's stone is still there.
    let p = pos("2 0 1 0 1 0 0 0 / 0 0 0 0 0 0 0 0 | 0 0 0 1 0 0 0 0 / 0 0 0 0 0 0 0 0 first");
    assert_eq!(legal_moves(&p).kind, MoveKind::Takata);
    assert_eq!(moves_text(&p), ["f1 cw", "f1 acw"]);
    let takata = SowState::start(&p.board, Side::First, mv("f1 cw"), MoveKind::Takata);
    let landings: Vec<Landing> = trace(&takata, 100).iter().map(|(s, _)| s.landing).collect();
    assert_eq!(landings, [Landing::Stones, Landing::Stones, Landing::Empty]);
    let (next, _) = play_ok(&p, "f1 cw");
    assert_eq!(
        next,
        pos("0 1 0 1 0 1 1 0 / 0 0 0 0 0 0 0 0 | 0 0 0 1 0 0 0 0 / 0 0 0 0 0 0 0 0 second")
    );
    // The same sowing as a capture move would capture at step 2.
    let mut capture = SowState::start(&p.board, Side::First, mv("f1 cw"), MoveKind::Capture);
    step(&mut capture);
    assert_eq!(step(&mut capture).landing, Landing::Marker);
}

#[test]
fn a_player_with_no_move_or_an_empty_front_row_loses() {
    // Every hole at most 1 stone and no marker: neither capture nor takata.
    let p = pos("1 0 1 0 0 0 0 0 / 1 0 0 0 0 0 0 0 | 0 0 0 0 0 0 0 0 / 0 0 0 3 0 0 0 0 first");
    assert!(legal_moves(&p).moves.is_empty());
    assert_eq!(loss(&p, EndlessRule::CutOff), Some(Loss::NoMove));
    // The second player, to move on the same board: front row empty, whatever the back holds.
    assert_eq!(
        loss(&p.passed(), EndlessRule::CutOff),
        Some(Loss::EmptyFrontRow)
    );
    // Singletons can still capture: 1 stone is never a mtaji, so this is lost too, but with a
    // 2 in b1 (index 15, ending clockwise on f2 facing second's index 6) it is not.
    let p = pos("0 1 0 0 0 0 0 0 / 2 0 0 0 0 0 0 0 | 0 0 0 0 0 0 1 0 / 0 0 0 0 0 0 0 0 first");
    assert_eq!(loss(&p, EndlessRule::CutOff), None);
    let refused = refusal(&p, mv("b1 acw"), EndlessRule::CutOff).unwrap();
    assert!(refused.contains("must capture"), "{refused}");
}

/// The spec's endless examples: a player's rows as the spec writes them (front, back from the
/// left), and the ring they make (the spec's remark checks the index convention).
const EXAMPLES: [(&str, [u8; 16]); 2] = [
    (
        "3 0 1 2 0 1 2 0 / 2 1 0 2 1 0 2 1",
        [3, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2],
    ),
    (
        "5 0 1 2 3 4 0 1 / 4 3 2 1 0 4 3 2",
        [5, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4],
    ),
];

#[test]
fn the_specs_endless_takata_loop_for_ever_as_do_their_rotations_and_mirror_images() {
    for (rows, ring) in EXAMPLES {
        // The opponent has no front stones: no marker, only takata is possible.
        let p = pos(&format!("{rows} | 0 0 0 0 0 0 0 0 / 0 0 0 0 0 0 0 1 first"));
        assert_eq!(
            p.board.holes(Side::First),
            ring,
            "the spec's ring for {rows}"
        );
        let legal = legal_moves(&p);
        assert_eq!(legal.kind, MoveKind::Takata);
        assert!(legal.moves.contains(&mv("f1 cw")));
        let Outcome::Endless(e) = outcome(&p, mv("f1 cw"), MoveKind::Takata) else {
            panic!("{rows}: f1 clockwise should never end");
        };
        assert!(e.cycle >= 1);
        // Under the illegal rule it is refused, and not choosable.
        let why = refusal(&p, mv("f1 cw"), EndlessRule::Illegal).unwrap();
        assert!(why.contains("never ends"), "{why}");
        assert_eq!(refusal(&p, mv("f1 cw"), EndlessRule::CutOff), None);
        let choosable =
            |rule| -> Vec<Move> { choosable_moves(&p, rule).iter().map(|(m, _)| *m).collect() };
        assert!(choosable(EndlessRule::CutOff).contains(&mv("f1 cw")));
        assert!(!choosable(EndlessRule::Illegal).contains(&mv("f1 cw")));
        // Anticlockwise the hole's stones fall on 15, 14, ...; the last into index 16 - s,
        // which holds 0 in both rings (13 and 11): the move ends at once.
        assert!(matches!(
            outcome(&p, mv("f1 acw"), MoveKind::Takata),
            Outcome::Continues { steps: 1, .. }
        ));
        // Every rotation of the ring (the start hole turned with it) and every mirror image
        // (index i to -i, sown anticlockwise) sows for ever too, as a takata of any player.
        for r in 0..16 {
            for mirrored in [false, true] {
                for mover in Side::BOTH {
                    let mut own = [0u8; 16];
                    for (i, &c) in ring.iter().enumerate() {
                        let j = if mirrored { (16 - i) % 16 } else { i };
                        own[(j + r) % 16] = c;
                    }
                    let other = [0u8; 16];
                    let (first, second) = match mover {
                        Side::First => (own, other),
                        Side::Second => (other, own),
                    };
                    let board = Board::new(&first, &second).unwrap();
                    let direction = if mirrored { ACW } else { CW };
                    let m = Move { hole: r, direction };
                    let state = SowState::start(&board, mover, m, MoveKind::Takata);
                    assert!(
                        matches!(play(&state), Play::Endless(_)),
                        "{rows} turned by {r}, mirrored {mirrored}, {mover:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn an_endless_move_is_found_on_its_cycle_and_a_full_lap_is_sown_as_laps() {
    // The endless state repeats: stepping one cycle from the entry comes back to it.
    let (rows, _) = EXAMPLES[0];
    let p = pos(&format!("{rows} | {EMPTY_ROWS} first"));
    let Outcome::Endless(e) = outcome(&p, mv("f1 cw"), MoveKind::Takata) else {
        panic!("endless");
    };
    let mut state = e.entry;
    for _ in 0..e.cycle {
        assert_ne!(step(&mut state).landing, Landing::Empty);
    }
    assert_eq!(state, e.entry);
    // 16 stones in f1 on an otherwise empty ring (a takata: no enemy stones): one per hole,
    // the last into f1 itself, emptied when lifted: it ends after one step with 1 everywhere.
    let p = pos(&format!(
        "16 0 0 0 0 0 0 0 / 0 0 0 0 0 0 0 0 | {EMPTY_ROWS} first"
    ));
    let (next, steps) = play_ok(&p, "f1 cw");
    assert_eq!(steps, 1);
    assert!(next.board.holes(Side::First).iter().all(|&c| c == 1));
}

#[test]
fn small_rows_capture_from_their_one_hole_ends() {
    // n = 3: ends of one hole (index 0 and 2), the middle is index 1. First: f2 (index 1) = 1
    // facing second's index 1 = 2; b3 (index 3, behind f3) = 4 sown clockwise: 4, 5, 0, 1:
    // ends on the middle marker. Step 1: 3 -> 0, 4: 0->1, 5: 0->1, 0: 0->1, 1: 1->2.
    // Step 2: middle, clockwise: from index 0: 0: 1->2, 1: 2->3; last on 1, facing second's
    // index 1, now empty: no marker. Step 3: lift 1 (3): 2: 0->1, 3: 0->1, 4: 1->2 (not
    // empty). Step 4: lift 4 (2): 5: 1->2, 0: 2->3. Step 5: lift 0 (3): 1: 0->1, 2: 1->2,
    // 3: 1->2. Step 6: lift 3 (2): 4: 0->1, 5: 2->3. Step 7: lift 5 (3): 0: 0->1, 1: 1->2,
    // 2: 2->3. Step 8: lift 2 (3): 3: 0->1, 4: 1->2, 5: 0->1 (was empty): ends.
    // First: index 0..5 = 1 2 0 1 2 1, written "1 2 0 / 1 2 1" (back from the left: 5, 4, 3).
    let p = pos("0 1 0 / 0 0 4 | 0 2 0 / 0 0 1 first");
    let row = p.board.row();
    assert_eq!(row.len(), 3);
    let texts: Vec<String> = legal_moves(&p).moves.iter().map(|m| m.text(row)).collect();
    assert_eq!(texts, ["b3 cw"]);
    let m = Move::parse(row, "b3 cw").unwrap();
    let Outcome::Continues { next, steps } = outcome(&p, m, MoveKind::Capture) else {
        panic!("ends");
    };
    assert_eq!(steps, 8);
    assert_eq!(next, pos("1 2 0 / 1 2 1 | 0 0 0 / 0 0 1 second"));
}

#[test]
fn under_the_illegal_rule_a_player_whose_every_move_is_endless_has_lost() {
    // Search small boards for positions whose legal moves all sow for ever (rows of 2 holes:
    // 4 holes a player; the 2x2 start with 2 stones a hole has endless first moves).
    let mut found = 0;
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut random = move |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    for _ in 0..20_000 {
        let mut holes = [[0u8; 4]; 2];
        for _ in 0..(4 + random(12)) {
            holes[random(2) as usize][random(4) as usize] += 1;
        }
        let p = Position {
            board: Board::new(&holes[0], &holes[1]).unwrap(),
            side: Side::First,
        };
        let legal = legal_moves(&p);
        if legal.moves.is_empty() || p.board.front_row_empty(Side::First) {
            continue;
        }
        let all_endless = legal
            .moves
            .iter()
            .all(|&m| matches!(outcome(&p, m, legal.kind), Outcome::Endless(_)));
        if all_endless {
            found += 1;
            assert_eq!(loss(&p, EndlessRule::Illegal), Some(Loss::NoMove), "{p}");
            assert_eq!(loss(&p, EndlessRule::CutOff), None, "{p}");
            assert!(choosable_moves(&p, EndlessRule::Illegal).is_empty());
        } else {
            assert_eq!(loss(&p, EndlessRule::Illegal), None, "{p}");
        }
    }
    assert!(found > 0, "some position has only endless moves");
}
