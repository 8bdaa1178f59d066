//! The game on the engine: positions sliced by stones on the board, scored by margin.
//!
//! * **Stages**: the stones on the board, `0..=max_stones`. A capture lowers the count, a move
//!   that captures nothing keeps it (such moves can cycle), so stage `s` reads every smaller
//!   stage (a capture may take any number of stones).
//! * **Slices**: a stage cut by the stones in the first player's holes (`c` of the `s`), so
//!   that moves cross slices as stones cross the middle of the ring.
//! * **Key and index**: the key is the position's index in its slice. The first player's
//!   holes are a composition of `c` stones into `n` parts, the second's of `s - c`; each is
//!   ranked in colex order of its "stars and bars" (the bar positions of the composition), and
//!   `index = rank(first) * compositions(s - c) + rank(second)`.
//! * **No symmetry within a section** (sowing is clockwise, so mirror images are other games);
//!   the two sections (first and second to move) are each other's images under turning the
//!   ring by `n` holes, which the tests check but the tables do not use.
//! * **No un-moves**: relay sowing is easy forward and hard backward, so the kernel pulls.

use crate::board::Board;
use crate::rules::{final_margin, for_each_move, is_choosable, EndlessRule, Outcome};
use retro_engine::margin::ScoreGame;
use retro_engine::{Game, Move, Side, SliceId, Stage, Value};
use retro_index::{compositions, next_subset, rank_composition, unrank_composition};
use std::cell::Cell;
use std::ops::Range;

/// The relay-sowing mancala on a ring of `2n` holes, all positions with up to `max_stones`
/// stones on the board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mancala {
    per_side: usize,
    max_stones: u32,
    endless: EndlessRule,
}

/// The most stones a solve may hold: margins are one signed byte, and a slice's keys must
/// fit the ranker (stars and bars of one side in 64 bits).
pub const MAX_SOLVED_STONES: u32 = 48;

impl Mancala {
    /// The game on `holes` holes (even, 4 to 16) with up to `max_stones` stones on the board.
    pub fn new(holes: usize, max_stones: u32, endless: EndlessRule) -> Result<Mancala, String> {
        if !holes.is_multiple_of(2) || !(4..=16).contains(&holes) {
            return Err(format!(
                "a solved ring has an even number of holes from 4 to 16, not {holes}"
            ));
        }
        if max_stones > MAX_SOLVED_STONES {
            return Err(format!(
                "{max_stones} stones: solves hold at most {MAX_SOLVED_STONES}"
            ));
        }
        Ok(Mancala {
            per_side: holes / 2,
            max_stones,
            endless,
        })
    }

    /// The number of holes, `2n`.
    pub fn holes(&self) -> usize {
        2 * self.per_side
    }

    /// The most stones on the board of a solved position.
    pub fn max_stones(&self) -> u32 {
        self.max_stones
    }

    /// The endless-move rule.
    pub fn endless(&self) -> EndlessRule {
        self.endless
    }

    /// The slice of positions with `stones` on the board, `first` of them in the first
    /// player's holes.
    pub fn slice_of(stones: u32, first: u32) -> SliceId {
        SliceId(stones * (stones + 1) / 2 + first)
    }

    /// The stones on the board and in the first player's holes of `slice`.
    pub fn slice_stones(slice: SliceId) -> (u32, u32) {
        // The largest s with s (s + 1) / 2 <= id.
        let id = u64::from(slice.0);
        let s = (((8 * id + 1).isqrt() - 1) / 2) as u32;
        (s, slice.0 - s * (s + 1) / 2)
    }

    /// Compositions of `stones` into `n` holes.
    fn compositions(&self, stones: u32) -> u64 {
        compositions(stones, self.per_side)
    }

    /// The board at `index` of `slice`.
    ///
    /// Solvers walk a slice index after index, so the board after the one this thread built
    /// last is stepped from it (the next composition of a side is the next subset of its bars,
    /// [`next_subset`]) instead of unranked.
    pub fn board(&self, slice: SliceId, index: u64) -> Board {
        thread_local! {
            /// The last board this thread built: (holes per side, slice, index, bars of the
            /// first and second player's compositions).
            static LAST: Cell<(usize, u32, u64, [u64; 2])> =
                const { Cell::new((0, u32::MAX, 0, [0, 0])) };
        }
        let (stones, first) = Mancala::slice_stones(slice);
        let n = self.per_side;
        let second = self.compositions(stones - first);
        let bars = LAST.with(|last| {
            let (last_n, last_slice, last_index, last_bars) = last.get();
            let bars = if last_n == n && last_slice == slice.0 && last_index + 1 == index {
                if index.is_multiple_of(second) {
                    // The second player's compositions start again; the first's moves on.
                    [next_subset(last_bars[0]), first_bars(n)]
                } else {
                    [last_bars[0], next_subset(last_bars[1])]
                }
            } else {
                let mut counts = [0u8; 16];
                unrank_composition(index / second, first, &mut counts[..n]);
                unrank_composition(index % second, stones - first, &mut counts[n..2 * n]);
                [bars_of(&counts[..n]), bars_of(&counts[n..2 * n])]
            };
            last.set((n, slice.0, index, bars));
            bars
        });
        let mut counts = [0u8; 16];
        counts_of(bars[0], first, &mut counts[..n]);
        counts_of(bars[1], stones - first, &mut counts[n..2 * n]);
        Board::new(&counts[..2 * n]).expect("a solved ring is a board")
    }

    /// The slice and index of `board`, if a solve of this game holds it.
    pub fn locate(&self, board: &Board) -> Option<(SliceId, u64)> {
        if board.holes() != self.holes() || board.total() > self.max_stones {
            return None;
        }
        Some(self.locate_unchecked(board))
    }

    #[inline]
    fn locate_unchecked(&self, board: &Board) -> (SliceId, u64) {
        let n = self.per_side;
        let first = board.side_stones(Side::First);
        let second = board.side_stones(Side::Second);
        let slice = Mancala::slice_of(first + second, first);
        let counts = board.counts();
        let index = rank_composition(&counts[..n]) * self.compositions(second)
            + rank_composition(&counts[n..]);
        (slice, index)
    }

    /// The stones of the stage `stage` (its name is `stones=S`).
    fn stage_stones(stage: &Stage) -> u32 {
        Mancala::slice_stones(stage.slices[0]).0
    }
}

/// The bars of the first composition (all stones in the last hole) of `n` holes.
fn first_bars(n: usize) -> u64 {
    (1 << (n - 1)) - 1
}

/// A composition written as stars and bars: bar `j` (after hole `j`) at place
/// `stones in holes 0..=j` + `j`. Colex order of these subsets is rank order.
fn bars_of(counts: &[u8]) -> u64 {
    let mut bars = 0;
    let mut place = 0;
    for &c in &counts[..counts.len() - 1] {
        place += usize::from(c);
        bars |= 1 << place;
        place += 1;
    }
    bars
}

/// The composition of `stones` into `out.len()` holes whose bars are `bars`.
fn counts_of(mut bars: u64, stones: u32, out: &mut [u8]) {
    let n = out.len();
    let mut next = 0;
    for hole in out[..n - 1].iter_mut() {
        let place = bars.trailing_zeros() as usize;
        bars &= bars - 1;
        *hole = (place - next) as u8;
        next = place + 1;
    }
    out[n - 1] = (stones as usize + n - 1 - next) as u8;
}

impl Game for Mancala {
    fn stages(&self) -> Vec<Stage> {
        (0..=self.max_stones)
            .map(|s| Stage {
                name: format!("stones={s}"),
                slices: (0..=s).map(|c| Mancala::slice_of(s, c)).collect(),
                depends_on: (0..s as usize).collect(),
            })
            .collect()
    }

    fn slice_count(&self) -> usize {
        let s = self.max_stones as usize;
        (s + 1) * (s + 2) / 2
    }

    fn slice_len(&self, slice: SliceId) -> u64 {
        let (stones, first) = Mancala::slice_stones(slice);
        self.compositions(first) * self.compositions(stones - first)
    }

    fn slice_name(&self, slice: SliceId) -> String {
        let (stones, first) = Mancala::slice_stones(slice);
        format!("stones={stones} first={first}")
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
        self.scored_moves(side, slice, key, |mv, _| {
            visit(match mv {
                Move::Known(_) => Move::Known(Value::DRAW),
                other => other,
            })
        });
    }

    fn unmoves(&self, _: Side, _: SliceId, _: u64, _: impl FnMut(SliceId, u64, u64)) {
        unreachable!("relay sowing has no un-moves: the kernel pulls")
    }
}

impl ScoreGame for Mancala {
    fn margin_bound(&self, stage: &Stage) -> i32 {
        // Every stone on the board is won by someone at most once.
        Mancala::stage_stones(stage) as i32
    }

    fn scored_moves(&self, side: Side, slice: SliceId, key: u64, mut visit: impl FnMut(Move, i32)) {
        let board = self.board(slice, key);
        for_each_move(&board, side, |mv| {
            if !is_choosable(&mv, self.endless) {
                return;
            }
            match mv.outcome {
                Outcome::Endless(_) => visit(Move::Known(Value::DRAW), 0),
                Outcome::GameOver { gain, .. } => visit(Move::Known(Value::DRAW), gain),
                Outcome::Continues { board, captured } => {
                    let (to, index) = self.locate_unchecked(&board);
                    if captured == 0 {
                        visit(Move::InStage(to, index), 0);
                    } else {
                        visit(Move::Final(to, index), captured as i32);
                    }
                }
            }
        });
    }

    fn final_margin(&self, side: Side, slice: SliceId, key: u64) -> i32 {
        // Over (one side empty), or under the illegal rule every move is endless: each player
        // takes the stones in their own holes.
        final_margin(&self.board(slice, key), side)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_of_every_slice_round_trips() {
        for holes in [4, 8] {
            let game = Mancala::new(holes, 9, EndlessRule::CutOff).unwrap();
            let mut total = 0;
            for stage in game.stages() {
                for &slice in &stage.slices {
                    let (stones, first) = Mancala::slice_stones(slice);
                    assert_eq!(Mancala::slice_of(stones, first), slice);
                    for i in 0..game.slice_len(slice) {
                        let board = game.board(slice, i);
                        assert_eq!(board.total(), stones);
                        assert_eq!(board.side_stones(Side::First), first);
                        assert_eq!(game.locate(&board), Some((slice, i)), "{board}");
                        total += 1;
                    }
                }
            }
            // Every distribution of at most 9 stones over the holes: C(9 + holes, holes).
            assert_eq!(total, retro_index::binomial(9 + holes, holes));
        }
    }

    #[test]
    fn a_board_stepped_from_the_last_is_the_board_unranked() {
        // `board` steps from the board this thread built last when the index follows it:
        // walking a slice in order must give what out-of-order lookups (unranked) give, for
        // both rings (4 and 8 holes per side) alternating on one thread.
        let games = [
            Mancala::new(8, 7, EndlessRule::CutOff).unwrap(),
            Mancala::new(16, 7, EndlessRule::CutOff).unwrap(),
        ];
        for stones in [1, 5, 7] {
            for first in [0, stones / 2, stones] {
                let slice = Mancala::slice_of(stones, first);
                let walked: Vec<Vec<Board>> = games
                    .iter()
                    .map(|g| (0..g.slice_len(slice)).map(|i| g.board(slice, i)).collect())
                    .collect();
                for (g, boards) in games.iter().zip(&walked) {
                    // Backwards: never a successor of the last index, so always unranked.
                    for i in (0..g.slice_len(slice)).rev() {
                        assert_eq!(g.board(slice, i), boards[i as usize]);
                    }
                }
            }
        }
    }
}
