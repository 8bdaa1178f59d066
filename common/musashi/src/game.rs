//! Sixteen Musashi as a retrograde [`Game`].
//!
//! * **Slices**: one per (brown count `k`, black point `b`) with `b` a representative of its
//!   symmetry orbit. The key is the brown mask; the index is the colex rank of the brown set
//!   among the `n - 1` points other than `b` (so a slice has `C(n-1, k)` slots).
//! * **Stages**: one per brown count. Brown moves keep `k` and `b`; black moves keep `k` unless
//!   they capture, which leads to the final stages `k-2`, `k-4`, `k-6`, ...
//! * **Symmetry**: a position is canonical when black stands on its orbit representative and
//!   the brown mask is the smallest of its images under that point's stabiliser. Only
//!   canonical slots are solved and counted; the others hold [`retro_engine::Value::NON_CANONICAL`].

use crate::board::Board;
use crate::position::{Position, Side};
use crate::rules::captures;
use retro_engine::{Game, Move, Side as EngineSide, SliceId, Stage, Value};
use retro_index::{binomial, next_subset, squeeze, unsqueeze, SubsetRanker};
use std::ops::Range;

/// Sixteen Musashi on one board, solved up to `max_browns` brown pieces.
pub struct Musashi {
    board: Board,
    ranker: SubsetRanker,
    max_browns: usize,
    /// `rep_slot[p]`: position of representative `p` in `board.symmetry.reps`.
    rep_slot: Vec<u32>,
    /// The largest number of pairs one black move can capture (bounds stage dependencies).
    max_capture_pairs: usize,
    /// `parts[slice]`: (brown count, black representative point), so that the hot paths need
    /// no division to decode a slice id.
    parts: Vec<(u8, u8)>,
    /// `stabiliser_bits[rep][j * n + p]`: the single-bit mask of the image of point `p` under
    /// the `j`-th stabiliser element of `rep` (so a move's image is two XORs, no lookups chain).
    stabiliser_bits: Vec<Vec<u64>>,
}

impl Musashi {
    /// The game on `board`, with slices for brown counts `0..=max_browns` (capped at n - 1).
    pub fn new(board: Board, max_browns: Option<usize>) -> Musashi {
        let n = board.len();
        let max_browns = max_browns.unwrap_or(n - 1).min(n - 1);
        let mut rep_slot = vec![u32::MAX; n];
        for (i, &r) in board.symmetry.reps.iter().enumerate() {
            rep_slot[r as usize] = i as u32;
        }
        let max_capture_pairs = board.sandwiches.iter().map(Vec::len).max().unwrap_or(0);
        let reps = &board.symmetry.reps;
        let parts = (0..=max_browns)
            .flat_map(|k| reps.iter().map(move |&r| (k as u8, r)))
            .collect();
        let stabiliser_bits = (0..n)
            .map(|p| {
                board.symmetry.stabiliser[p]
                    .iter()
                    .flat_map(|&g| {
                        let g = &board.symmetry.elements[g as usize];
                        (0..n).map(move |q| 1u64 << g.cell(q))
                    })
                    .collect()
            })
            .collect();
        Musashi {
            parts,
            stabiliser_bits,
            ranker: SubsetRanker::new(n as u32 - 1),
            board,
            max_browns,
            rep_slot,
            max_capture_pairs,
        }
    }

    /// The board.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The largest brown count solved.
    pub fn max_browns(&self) -> usize {
        self.max_browns
    }

    /// The slice of brown count `k` with black on representative `rep`.
    #[inline(always)]
    pub fn slice_of(&self, k: usize, rep: usize) -> SliceId {
        SliceId((k * self.board.symmetry.reps.len()) as u32 + self.rep_slot[rep])
    }

    /// `(brown count, black representative point)` of a slice.
    #[inline(always)]
    pub fn slice_parts(&self, slice: SliceId) -> (usize, usize) {
        let (k, rep) = self.parts[slice.0 as usize];
        (k as usize, rep as usize)
    }

    /// Where a position is stored: its canonical slice, key and index.
    pub fn locate(&self, black: usize, browns: u64) -> (SliceId, u64, u64) {
        let (rep, key) = self.board.symmetry.canonical(black, browns);
        let slice = self.slice_of(browns.count_ones() as usize, rep);
        (slice, key, self.index(slice, key))
    }

    /// The position stored at `(slice, key)` with the given side to move.
    pub fn position(&self, slice: SliceId, key: u64, side: Side) -> Position {
        let (_, rep) = self.slice_parts(slice);
        Position {
            black: rep,
            browns: key,
            side,
        }
    }

    /// Every brown move from `(slice, key)` (black on the slice's representative), as
    /// `visit(rep, canonical brown mask)`. Shared by the kernel's un-moves and by verification.
    #[inline(always)]
    fn brown_moves(&self, slice: SliceId, key: u64, mut visit: impl FnMut(u32, u64)) {
        let (_, black) = self.slice_parts(slice);
        let symmetry = &self.board.symmetry;
        let n = self.board.len();
        let stabiliser = &symmetry.stabiliser[black];
        let bits = &self.stabiliser_bits[black];
        // Symmetries are bit permutations, hence linear over XOR: the image of
        // `key ^ from ^ to` is `image(key) ^ image(from) ^ image(to)`. Computing `image(key)`
        // once per position keeps permutation lookups out of the per-move loop.
        let mut images = [0u64; 8];
        for (slot, &g) in images.iter_mut().zip(stabiliser) {
            *slot = symmetry.elements[g as usize].apply(key);
        }
        let images = &images[..stabiliser.len().min(8)];
        let empty = self.board.all_points() & !key & !(1u64 << black);
        let mut pieces = key;
        while pieces != 0 {
            let from = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            let mut targets = self.board.neighbours[from] & empty;
            while targets != 0 {
                let to = targets.trailing_zeros() as usize;
                targets &= targets - 1;
                let mut best = key ^ (1u64 << from) ^ (1u64 << to);
                for (j, image) in images.iter().enumerate() {
                    best = best.min(image ^ bits[j * n + from] ^ bits[j * n + to]);
                }
                visit(black as u32, best);
            }
        }
    }

    #[inline(always)]
    fn canonical_slice(&self, k: usize, black: usize, browns: u64) -> (SliceId, u64) {
        let (rep, key) = self.board.symmetry.canonical(black, browns);
        (self.slice_of(k, rep), key)
    }
}

impl Game for Musashi {
    fn stages(&self) -> Vec<Stage> {
        let reps = self.board.symmetry.reps.len();
        (0..=self.max_browns)
            .map(|k| Stage {
                name: format!("browns={k}"),
                slices: (0..reps).map(|r| SliceId((k * reps + r) as u32)).collect(),
                depends_on: (1..=self.max_capture_pairs)
                    .filter(|&pairs| 2 * pairs <= k)
                    .map(|pairs| k - 2 * pairs)
                    .collect(),
            })
            .collect()
    }

    fn slice_count(&self) -> usize {
        (self.max_browns + 1) * self.board.symmetry.reps.len()
    }

    fn slice_len(&self, slice: SliceId) -> u64 {
        let (k, _) = self.slice_parts(slice);
        binomial(self.board.len() - 1, k)
    }

    fn slice_name(&self, slice: SliceId) -> String {
        let (k, rep) = self.slice_parts(slice);
        format!("browns={k} black={}", self.board.point_name(rep))
    }

    fn for_each_key(&self, slice: SliceId, range: Range<u64>, mut visit: impl FnMut(u64, u64)) {
        if range.is_empty() {
            return;
        }
        let (k, rep) = self.slice_parts(slice);
        let mut squeezed = self.ranker.unrank(range.start, k as u32);
        for index in range {
            visit(index, unsqueeze(squeezed, rep as u32));
            squeezed = next_subset(squeezed);
        }
    }

    #[inline(always)]
    fn index(&self, slice: SliceId, key: u64) -> u64 {
        let (_, rep) = self.slice_parts(slice);
        self.ranker.rank(squeeze(key, rep as u32))
    }

    fn key(&self, slice: SliceId, index: u64) -> u64 {
        let (k, rep) = self.slice_parts(slice);
        unsqueeze(self.ranker.unrank(index, k as u32), rep as u32)
    }

    #[inline(always)]
    fn is_canonical(&self, slice: SliceId, key: u64) -> bool {
        let (_, rep) = self.slice_parts(slice);
        self.board.symmetry.is_canonical(rep, key)
    }

    fn can_win(&self, side: EngineSide) -> bool {
        // Brown wins by stalemating black; black only ever wins by brown's failure to.
        side == EngineSide::First
    }

    fn leaves_stage(&self, side: EngineSide) -> bool {
        // Only black captures.
        side == EngineSide::Second
    }

    fn claims_stay_in_slice(&self) -> bool {
        // Claims are brown's un-moves (brown wins), which keep the brown count and the black
        // point: the slice.
        true
    }

    #[inline(always)]
    fn moves(&self, side: EngineSide, slice: SliceId, key: u64, mut visit: impl FnMut(Move)) {
        match side {
            EngineSide::First => self.brown_moves(slice, key, |_, target| {
                visit(Move::InStage(slice, target));
            }),
            EngineSide::Second => self.black_moves(slice, key, visit),
        }
    }

    #[inline(always)]
    fn unmoves(
        &self,
        side: EngineSide,
        slice: SliceId,
        key: u64,
        visit: impl FnMut(SliceId, u64, u64),
    ) {
        match side {
            EngineSide::First => self.black_unmoves(slice, key, visit),
            // Brown moves are reversible and never capture: un-moves are exactly the moves.
            EngineSide::Second => {
                let (_, black) = self.slice_parts(slice);
                let mut visit = visit;
                self.brown_moves(slice, key, |_, target| {
                    visit(
                        slice,
                        target,
                        self.ranker.rank(squeeze(target, black as u32)),
                    )
                });
            }
        }
    }
}

impl Musashi {
    /// Every black move from `(slice, key)`: captures lead to earlier stages. In the trap-zone
    /// variant a black stalemated outside the zone has won: the engine is told so as one move
    /// with a known result that is not a loss for black ([`Value::DRAW`], which in this
    /// one-sided game reads as a black win), so that the position never counts as lost.
    #[inline(always)]
    fn black_moves(&self, slice: SliceId, key: u64, mut visit: impl FnMut(Move)) {
        let (k, black) = self.slice_parts(slice);
        let mut targets = self.board.neighbours[black] & !key;
        if targets == 0 && !self.board.traps(black) {
            visit(Move::Known(Value::DRAW));
            return;
        }
        while targets != 0 {
            let to = targets.trailing_zeros() as usize;
            targets &= targets - 1;
            let captured = captures(&self.board, to, key);
            let browns = key & !captured;
            let (s, kk) = self.canonical_slice(k - captured.count_ones() as usize, to, browns);
            visit(if captured == 0 {
                Move::InStage(s, kk)
            } else {
                Move::Final(s, kk)
            });
        }
    }

    /// The black-to-move positions with a non-capturing black move to the brown-to-move
    /// `(slice, key)`.
    #[inline(always)]
    fn black_unmoves(&self, slice: SliceId, key: u64, mut visit: impl FnMut(SliceId, u64, u64)) {
        let (k, black) = self.slice_parts(slice);
        // Black arrived on `black` without capturing only if no pair sandwiches it now.
        if captures(&self.board, black, key) != 0 {
            return;
        }
        let mut origins = self.board.neighbours[black] & !key;
        while origins != 0 {
            let from = origins.trailing_zeros() as usize;
            origins &= origins - 1;
            let (rep, image) = self.board.symmetry.canonical(from, key);
            let index = self.ranker.rank(squeeze(image, rep as u32));
            visit(self.slice_of(k, rep), image, index);
        }
    }
}
