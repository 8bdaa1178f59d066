//! The moves of a position: which holes may be lifted, what each move captures, and when the
//! game ends.

use crate::board::Board;
use crate::sowing::{play, Loop, Play};
use retro_engine::Side;

pub use retro_sowing::EndlessRule;

/// Where a move leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The game goes on from `board` with the opponent to move; the mover captured `captured`
    /// stones (0 keeps the stones on the board, and the position in its slice).
    Continues {
        /// The board after the capture.
        board: Board,
        /// Stones taken from the hole opposite the last one.
        captured: u32,
    },
    /// The move empties one player's holes: the game ends, each player taking the stones left
    /// in their own holes. `gain` is what the mover's margin gains by the move (capture, own
    /// stones left, minus the opponent's).
    GameOver {
        /// The board after the capture, before the stones are taken home.
        board: Board,
        /// The mover's margin over the rest of the game.
        gain: i32,
    },
    /// The move sows forever (and, under [`EndlessRule::CutOff`], ends the game: margin 0).
    Endless(Loop),
}

/// One move: the hole lifted and where it leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MancalaMove {
    /// The hole the move lifts.
    pub hole: usize,
    /// Where it leads.
    pub outcome: Outcome,
}

/// Whether the game is over on `board` before anyone moves: one player's holes are empty.
pub fn is_over(board: &Board) -> bool {
    board.side_stones(Side::First) == 0 || board.side_stones(Side::Second) == 0
}

/// The margin of a finished game for `side`: its stones left minus the opponent's.
pub fn final_margin(board: &Board, side: Side) -> i32 {
    board.side_stones(side) as i32 - board.side_stones(side.other()) as i32
}

/// Calls `visit` with every move `side` can choose on `board` (none when the game is over), in
/// the order of the holes. Endless moves are visited under both rules, marked
/// [`Outcome::Endless`]: the rule decides whether they may be chosen ([`is_choosable`]).
pub fn for_each_move(board: &Board, side: Side, mut visit: impl FnMut(MancalaMove)) {
    if is_over(board) {
        return;
    }
    for hole in board.side_holes(side) {
        if board.get(hole) == 0 {
            continue;
        }
        let outcome = match play(board, hole) {
            Play::Endless(l) => Outcome::Endless(l),
            Play::Ends(end) => {
                let mut after = end.board;
                let opposite = after.opposite(end.last);
                let captured = u32::from(after.get(opposite));
                after.set(opposite, 0);
                if is_over(&after) {
                    Outcome::GameOver {
                        board: after,
                        gain: captured as i32 + final_margin(&after, side),
                    }
                } else {
                    Outcome::Continues {
                        board: after,
                        captured,
                    }
                }
            }
        };
        visit(MancalaMove { hole, outcome });
    }
}

/// Whether a move may be chosen under `rule`.
pub fn is_choosable(mv: &MancalaMove, rule: EndlessRule) -> bool {
    !(rule == EndlessRule::Illegal && matches!(mv.outcome, Outcome::Endless(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worked_example_takes_six_sowings_ends_at_e_and_captures_d() {
        let start = Board::start(8).unwrap();
        let mut moves = Vec::new();
        for_each_move(&start, Side::First, |m| moves.push(m));
        let d = moves.iter().find(|m| m.hole == 3).unwrap();
        let Play::Ends(end) = play(&start, 3) else {
            panic!("the example move ends")
        };
        assert_eq!(end.sowings, 6);
        assert_eq!(end.last, 4, "ends at e");
        assert_eq!(end.board.to_string(), "0,6,0,2,1,6,0,1");
        // What is opposite e is d, two stones, now captured.
        assert_eq!(
            d.outcome,
            Outcome::Continues {
                board: Board::parse("0,6,0,0,1,6,0,1").unwrap(),
                captured: 2
            }
        );
    }

    #[test]
    fn a_move_that_empties_a_side_ends_the_game_and_stones_go_home() {
        // First lifts d (1 stone) into e, which is empty: captures d's opposite... e's opposite
        // is d, now empty. First's holes are all empty: the game ends, second takes its 3.
        let board = Board::parse("0,0,0,1,0,2,0,1").unwrap();
        let mut moves = Vec::new();
        for_each_move(&board, Side::First, |m| moves.push(m));
        assert_eq!(moves.len(), 1);
        assert_eq!(
            moves[0].outcome,
            Outcome::GameOver {
                board: Board::parse("0,0,0,0,1,2,0,1").unwrap(),
                gain: -4
            }
        );
        assert!(is_over(&Board::parse("0,0,0,0,1,2,0,1").unwrap()));
        let mut none = 0;
        for_each_move(
            &Board::parse("0,0,0,0,1,2,0,1").unwrap(),
            Side::Second,
            |_| none += 1,
        );
        assert_eq!(none, 0, "no move once the game is over");
    }
}
