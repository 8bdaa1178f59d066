//! The rules: legal moves and their results.
//!
//! The solver's inner loops do not call these (they work on masks directly in [`crate::game`]);
//! these are the readable definitions used for probing, principal variations and tests, and the
//! kernel's move generators are checked against them.

use crate::board::Board;
use crate::position::{Position, Side};

/// A move: a piece goes from `from` to the adjacent empty `to`; `captured` lists the brown
/// pieces removed (black moves only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// Origin point.
    pub from: usize,
    /// Destination point.
    pub to: usize,
    /// Mask of captured brown pieces.
    pub captured: u64,
}

impl Move {
    /// Notation `xy-xy`, followed by `x` and the captured points, e.g. `21-22x1133`.
    pub fn notation(&self, board: &Board) -> String {
        let mut s = format!(
            "{}-{}",
            board.point_name(self.from),
            board.point_name(self.to)
        );
        if self.captured != 0 {
            s.push('x');
            for p in 0..board.len() {
                if self.captured >> p & 1 == 1 {
                    s.push_str(&board.point_name(p));
                }
            }
        }
        s
    }
}

/// The brown pieces captured when black arrives on `to` with browns `browns`: every pair that
/// sandwiches `to`.
#[inline(always)]
pub fn captures(board: &Board, to: usize, browns: u64) -> u64 {
    let mut captured = 0;
    for &pair in &board.sandwiches[to] {
        if browns & pair == pair {
            captured |= pair;
        }
    }
    captured
}

/// Every legal move of the side to move, with the resulting position.
pub fn moves(board: &Board, pos: &Position) -> Vec<(Move, Position)> {
    let mut out = Vec::new();
    match pos.side {
        Side::Black => {
            let mut targets = board.neighbours[pos.black] & !pos.browns;
            while targets != 0 {
                let to = targets.trailing_zeros() as usize;
                targets &= targets - 1;
                let captured = captures(board, to, pos.browns);
                let mv = Move {
                    from: pos.black,
                    to,
                    captured,
                };
                let next = Position {
                    black: to,
                    browns: pos.browns & !captured,
                    side: Side::Brown,
                };
                out.push((mv, next));
            }
        }
        Side::Brown => {
            let empty = board.all_points() & !pos.browns & !(1u64 << pos.black);
            let mut pieces = pos.browns;
            while pieces != 0 {
                let from = pieces.trailing_zeros() as usize;
                pieces &= pieces - 1;
                let mut targets = board.neighbours[from] & empty;
                while targets != 0 {
                    let to = targets.trailing_zeros() as usize;
                    targets &= targets - 1;
                    let mv = Move {
                        from,
                        to,
                        captured: 0,
                    };
                    let next = Position {
                        black: pos.black,
                        browns: pos.browns & !(1 << from) | 1 << to,
                        side: Side::Black,
                    };
                    out.push((mv, next));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(board: &Board, s: &str) -> Position {
        Position::parse_with_side(board, s).unwrap()
    }

    #[test]
    fn captures_of_one_two_and_three_pairs() {
        let b = Board::builtin("BOARD25").unwrap();
        // Black 12 -> 22: pairs 21-23 (vertical) and 11-33, 13-31 (diagonals) are full.
        let p = pos(&b, ".....,.ooo.,.X...,.ooo.,..... black");
        let to = b.point_at(2, 2).unwrap();
        let mv = moves(&b, &p).into_iter().find(|(m, _)| m.to == to).unwrap();
        assert_eq!(mv.0.captured.count_ones(), 6, "three pairs");
        assert_eq!(mv.1.browns, 0);
        // One pair only: 21 and 23 around 22, arriving from 12.
        let p = pos(&b, ".....,..o..,.X...,..o..,..... black");
        let mv = moves(&b, &p).into_iter().find(|(m, _)| m.to == to).unwrap();
        assert_eq!(mv.0.captured.count_ones(), 2);
        // Two pairs.
        let p = pos(&b, ".....,.oo..,.X...,..oo.,..... black");
        let mv = moves(&b, &p).into_iter().find(|(m, _)| m.to == to).unwrap();
        assert_eq!(mv.0.captured.count_ones(), 4);
        // No capture along a line without an edge: 21 (odd) has no diagonals, so 10-32 is no pair.
        let to21 = b.point_at(2, 1).unwrap();
        assert!(b.sandwiches[to21].iter().all(|m| m.count_ones() == 2));
        assert_eq!(b.sandwiches[to21].len(), 2);
    }

    #[test]
    fn brown_moves_never_capture() {
        let b = Board::builtin("BOARD25").unwrap();
        let p = pos(&b, ".....,.o.o.,..X..,.o.o.,..... brown");
        for (m, next) in moves(&b, &p) {
            assert_eq!(m.captured, 0);
            assert_eq!(next.browns.count_ones(), 4);
            assert_eq!(next.black, p.black);
        }
    }

    #[test]
    fn stalemates() {
        let b = Board::builtin("BOARD25").unwrap();
        // Black in the corner 00 with 01, 10, 11 occupied and no capture possible: no move.
        let p = pos(&b, "Xo...,oo...,.....,.....,..... black");
        assert!(moves(&b, &p).is_empty());
        // Brown with no piece has no move.
        let p = pos(&b, "X....,.....,.....,.....,..... brown");
        assert!(moves(&b, &p).is_empty());
    }
}
