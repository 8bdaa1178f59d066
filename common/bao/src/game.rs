//! Small Bao variants on the engine: every position of a variant, solved exactly (the spec's
//! question 1 for boards smaller than the full game).
//!
//! * **Stages**: one. Stones never leave the board (captured stones are sown into the
//!   captor's holes), so every position of a variant has its `4n·k` stones and any position can
//!   follow any other: cycles of positions are draws.
//! * **Slices**: the stage cut by the stones in the first player's holes (`c` of the total), so
//!   that captures move positions between slices.
//! * **Key and index**: the key is the position's index in its slice: the first player's `2n`
//!   holes as a composition of `c` stones, the second's of `total - c`, each ranked
//!   ([`retro_index::rank_composition`]), `index = rank(first) · compositions(total - c) +
//!   rank(second)`. No symmetry is used.
//! * **Values**: win/draw/loss with the distance to the end. A player whose front row is empty
//!   at their turn, or who has no move, has lost (the engine's "no move"); an endless move under
//!   the cut-off rule ends the game with no winner (a draw); under the illegal rule it is not a
//!   move.
//! * **No un-moves**: relay sowing is easy forward and hard backward, so the kernel pulls.

use crate::board::{Board, Position};
use crate::row::Row;
use crate::rules::{legal_moves, outcome, EndlessRule, Outcome};
use retro_engine::{Game, Move, Side, SliceId, Stage, Value};
use retro_index::{compositions, rank_composition, unrank_composition};
use std::ops::Range;

/// The most stones a solved variant may hold: a side's compositions are ranked with binomials
/// of at most 64 (stones + holes - 1 <= 64).
pub const MAX_SOLVED_STONES: u32 = 48;

/// A Bao variant solved on the engine: rows of `n` holes, `k` stones a hole at the start, one
/// endless-move rule. Its positions are every distribution of the `4n·k` stones over both
/// players' holes, with either player to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaoGame {
    row: Row,
    stones_per_hole: u8,
    endless: EndlessRule,
}

impl BaoGame {
    /// The variant with rows of `row` holes and `stones_per_hole` stones a hole.
    pub fn new(row: Row, stones_per_hole: u8, endless: EndlessRule) -> Result<BaoGame, String> {
        if stones_per_hole == 0 {
            return Err("a variant needs at least 1 stone a hole".to_string());
        }
        let game = BaoGame {
            row,
            stones_per_hole,
            endless,
        };
        if game.total() > MAX_SOLVED_STONES {
            return Err(format!(
                "{} stones: solved variants hold at most {MAX_SOLVED_STONES}",
                game.total()
            ));
        }
        Ok(game)
    }

    /// The rows' geometry.
    pub fn row(&self) -> Row {
        self.row
    }

    /// Stones a hole at the start.
    pub fn stones_per_hole(&self) -> u8 {
        self.stones_per_hole
    }

    /// The endless-move rule.
    pub fn endless(&self) -> EndlessRule {
        self.endless
    }

    /// All stones of the variant.
    pub fn total(&self) -> u32 {
        2 * self.row.ring() as u32 * u32::from(self.stones_per_hole)
    }

    /// The start position (the first player to move).
    pub fn start(&self) -> Position {
        Position::start(self.row, self.stones_per_hole).expect("a solved variant has a start")
    }

    /// The slice of positions with `first` stones in the first player's holes.
    pub fn slice_of(first: u32) -> SliceId {
        SliceId(first)
    }

    /// Compositions of `stones` into one player's holes.
    fn side_compositions(&self, stones: u32) -> u64 {
        compositions(stones, self.row.ring())
    }

    /// The board at `index` of `slice`.
    pub fn board(&self, slice: SliceId, index: u64) -> Board {
        let first = slice.0;
        let ring = self.row.ring();
        let second = self.side_compositions(self.total() - first);
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        unrank_composition(index / second, first, &mut a[..ring]);
        unrank_composition(index % second, self.total() - first, &mut b[..ring]);
        Board::new(&a[..ring], &b[..ring]).expect("a solved variant's board")
    }

    /// The slice and index of `board`, if it is a board of this variant (same rows, same
    /// stones).
    pub fn locate(&self, board: &Board) -> Option<(SliceId, u64)> {
        if board.row() != self.row || board.total() != self.total() {
            return None;
        }
        Some(self.locate_unchecked(board))
    }

    #[inline]
    fn locate_unchecked(&self, board: &Board) -> (SliceId, u64) {
        let first = board.stones(Side::First);
        let second = self.side_compositions(self.total() - first);
        let index = rank_composition(board.holes(Side::First)) * second
            + rank_composition(board.holes(Side::Second));
        (BaoGame::slice_of(first), index)
    }
}

impl Game for BaoGame {
    fn stages(&self) -> Vec<Stage> {
        vec![Stage {
            name: format!("stones={}", self.total()),
            slices: (0..=self.total()).map(BaoGame::slice_of).collect(),
            depends_on: Vec::new(),
        }]
    }

    fn slice_count(&self) -> usize {
        self.total() as usize + 1
    }

    fn slice_len(&self, slice: SliceId) -> u64 {
        self.side_compositions(slice.0) * self.side_compositions(self.total() - slice.0)
    }

    fn slice_name(&self, slice: SliceId) -> String {
        format!("first={}", slice.0)
    }

    fn for_each_key(&self, _slice: SliceId, range: Range<u64>, mut visit: impl FnMut(u64, u64)) {
        for i in range {
            visit(i, i);
        }
    }

    fn index(&self, _slice: SliceId, key: u64) -> u64 {
        key
    }

    fn key(&self, _slice: SliceId, index: u64) -> u64 {
        index
    }

    fn is_canonical(&self, _slice: SliceId, _key: u64) -> bool {
        true
    }

    fn has_unmoves(&self) -> bool {
        false
    }

    fn moves(&self, side: Side, slice: SliceId, key: u64, mut visit: impl FnMut(Move)) {
        let position = Position {
            board: self.board(slice, key),
            side,
        };
        // Empty when the front row is empty or there is no move: the mover has lost.
        let legal = legal_moves(&position);
        for mv in legal.moves {
            match outcome(&position, mv, legal.kind) {
                Outcome::Continues { next, .. } => {
                    let (to, index) = self.locate_unchecked(&next.board);
                    visit(Move::InStage(to, index));
                }
                Outcome::Endless(_) => match self.endless {
                    EndlessRule::CutOff => visit(Move::Known(Value::DRAW)),
                    EndlessRule::Illegal => {}
                },
            }
        }
    }

    fn unmoves(&self, _: Side, _: SliceId, _: u64, _: impl FnMut(SliceId, u64, u64)) {
        unreachable!("relay sowing has no un-moves: the kernel pulls")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_of_every_slice_round_trips() {
        let game = BaoGame::new(Row::new(2).unwrap(), 1, EndlessRule::CutOff).unwrap();
        let mut total = 0;
        for &slice in &game.stages()[0].slices {
            for i in 0..game.slice_len(slice) {
                let board = game.board(slice, i);
                assert_eq!(board.total(), 8);
                assert_eq!(game.locate(&board), Some((slice, i)));
                total += 1;
            }
        }
        // Every distribution of 8 stones over 8 holes: C(15, 7).
        assert_eq!(total, retro_index::binomial(15, 7));
    }
}
