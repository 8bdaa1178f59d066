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

mod bulk_claims;
mod capture_lines;

/// How many of the lowest (squeezed) points the colex block tables cover ([`ColexBlocks`]):
/// 2^14 two-byte entries (32 KB) per table stay in the first-level cache. The bulk claims'
/// marking ranks un-moves between two of them by a lookup (on BOARD25 nine in ten pushed
/// un-moves move a brown between two of the 12 lowest: docs/benchmarks.md, nineteenth
/// session), and claimed or open slots are turned back into keys by a lookup.
const LOW_POINTS: usize = 14;
const _: () = assert!(LOW_POINTS <= MAX_LOW_CELLS);

pub use bulk_claims::BulkClaims;

use crate::board::Board;
use crate::position::{Position, Side};
use crate::rules::captures;
use capture_lines::CaptureLines;
use retro_engine::game::listed_move_reaching;
use retro_engine::{BulkPlan, Game, Move, Share, Side as EngineSide, SliceId, Stage, Value};
use retro_index::{
    binomial, next_subset, squeeze, unsqueeze, BlockCursor, ColexBlocks, SubsetRanker,
    MAX_LOW_CELLS,
};
use std::ops::Range;

/// Whether a step of a brown of `pieces` to an `empty` neighbour along `adjacent`
/// (`adjacent[p]`: the points joined to point `p`) satisfies `stop`, which gets the two points'
/// bits (the mask after the step is the mask XOR them). Steps are tried piece by piece, lowest
/// first, and each piece's targets lowest first; the first that satisfies `stop` ends the walk.
/// Brown's moves are reversible, so its moves and un-moves are the same steps: the pull plies
/// and the bulk claims' marking walk them here.
#[inline(always)]
fn find_step(pieces: u64, adjacent: &[u64], empty: u64, mut stop: impl FnMut(u64) -> bool) -> bool {
    let mut pieces = pieces;
    while pieces != 0 {
        let from = pieces.trailing_zeros() as usize;
        pieces &= pieces - 1;
        let mut targets = adjacent[from] & empty;
        while targets != 0 {
            let to = targets.trailing_zeros() as usize;
            targets &= targets - 1;
            if stop(1u64 << from | 1u64 << to) {
                return true;
            }
        }
    }
    false
}

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
    /// `twin_origins[b][p]`: for a black un-move from `b` back to its neighbour `p`, the
    /// earlier neighbours `q` (in increasing order) with a group element `g` taking `q` to `p`:
    /// when `g` fixes the brown mask and `q` is free too, the two un-moves reach one position
    /// (and two black moves from `b`, to `q` and to `p`, one orbit).
    twin_origins: Vec<Vec<Vec<(u8, u8)>>>,
    /// `black_images[b]`: the non-identity group elements (a bit each) taking a neighbour of `b`
    /// to its representative (`Symmetry::to_rep_all`): the images a black move from `b` needs.
    black_images: Vec<u8>,
    /// `unmove_images[b]`: those of `black_images[b]` and the elements of `twin_origins[b]`:
    /// the images black's un-moves back from `b` need.
    unmove_images: Vec<u8>,
    /// The colex blocks below the [`LOW_POINTS`] lowest (squeezed) points: a mask's offset
    /// in its block, and the mask at an offset, by table.
    low_blocks: ColexBlocks,
    /// `squeezed_neighbours[b][p]`: with black on `b`, the neighbours of squeezed point `p`
    /// other than `b`, squeezed (brown moves on the slices' own numbering).
    squeezed_neighbours: Vec<Vec<u64>>,
    /// Where claim plies go bit-parallel ([`BulkClaims`]).
    bulk_claims: BulkClaims,
    /// Which of black's moves capture, all of a point's at once (the sweep's test).
    capture_lines: CaptureLines,
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
        let symmetry = &board.symmetry;
        let twin_origins: Vec<Vec<Vec<(u8, u8)>>> = (0..n)
            .map(|b| {
                let around = |p: usize| board.neighbours[b] >> p & 1 == 1;
                (0..n)
                    .map(|p| {
                        let mut twins = Vec::new();
                        if around(p) {
                            for q in (0..p).filter(|&q| around(q)) {
                                for (g, e) in symmetry.elements.iter().enumerate() {
                                    if e.cell(q) == p {
                                        twins.push((q as u8, g as u8));
                                    }
                                }
                            }
                        }
                        twins
                    })
                    .collect()
            })
            .collect();
        let black_images: Vec<u8> = (0..n)
            .map(|b| {
                (0..n)
                    .filter(|&p| board.neighbours[b] >> p & 1 == 1)
                    .flat_map(|p| symmetry.to_rep_all[p].iter().copied())
                    .filter(|&g| g != 0)
                    .fold(0u8, |set, g| set | 1 << g)
            })
            .collect();
        let unmove_images = (0..n)
            .map(|b| {
                twin_origins[b]
                    .iter()
                    .flatten()
                    .fold(black_images[b], |set, &(_, g)| set | 1 << g)
            })
            .collect();
        let ranker = SubsetRanker::new(n as u32 - 1);
        let low_blocks = ColexBlocks::new(LOW_POINTS.min(n - 1));
        let squeezed_neighbours = (0..n)
            .map(|b| {
                (0..n)
                    .filter(|&p| p != b)
                    .map(|p| squeeze(board.neighbours[p] & !(1u64 << b), b as u32))
                    .collect()
            })
            .collect();
        let capture_lines = CaptureLines::new(&board);
        Musashi {
            capture_lines,
            // An invalid value is reported by the command line before any game is built.
            bulk_claims: BulkClaims::from_env().unwrap_or(BulkClaims::Model),
            black_images,
            unmove_images,
            parts,
            stabiliser_bits,
            twin_origins,
            ranker,
            low_blocks,
            squeezed_neighbours,
            board,
            max_browns,
            rep_slot,
            max_capture_pairs,
        }
    }

    /// The same game with claim plies bit-parallel where `mode` says (the default is read from
    /// `RETRO_BULK_CLAIMS`, see [`BulkClaims`]). The values do not depend on it.
    pub fn with_bulk_claims(mut self, mode: BulkClaims) -> Musashi {
        self.bulk_claims = mode;
        self
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
    /// `visit(canonical brown mask)`. Shared by the kernel's un-moves and by verification.
    #[inline(always)]
    fn brown_moves(&self, slice: SliceId, key: u64, mut visit: impl FnMut(u64)) {
        self.brown_move_until(slice, key, |target| {
            visit(target);
            false
        });
    }

    /// Brown's moves from `(slice, key)` as canonical brown masks, in [`Musashi::brown_moves`]
    /// order, until `stop` says so: true if it did. A pull stops at its first hit, before the
    /// canonical forms of the moves after it.
    #[inline(always)]
    fn brown_move_until(
        &self,
        slice: SliceId,
        key: u64,
        mut stop: impl FnMut(u64) -> bool,
    ) -> bool {
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
                if stop(best) {
                    return true;
                }
            }
        }
        false
    }

    /// [`Game::any_move_reaching`] for brown from `(slice, key)` at `index`. A brown move keeps
    /// the slice. Where black's point has no symmetry (most slices) every target is canonical
    /// as it is, and one between two of the [`LOW_POINTS`] lowest points keeps everything
    /// above them: its index is in the position's own colex block, `index - offset(low)`, at
    /// the offset of its low browns — a lookup instead of a rank of the whole mask (as in the
    /// bulk claims' marking). Elsewhere each target is canonicalised and ranked.
    #[inline(always)]
    fn brown_move_reaching(
        &self,
        slice: SliceId,
        key: u64,
        index: u64,
        mut hit: impl FnMut(SliceId, u64) -> bool,
    ) -> bool {
        let (_, black) = self.slice_parts(slice);
        if !self.board.symmetry.stabiliser[black].is_empty() {
            return self.brown_move_until(slice, key, |target| {
                hit(slice, self.ranker.rank(squeeze(target, black as u32)))
            });
        }
        let squeezed = squeeze(key, black as u32);
        let blocks = &self.low_blocks;
        let low_mask = blocks.low_mask();
        let low = squeezed & low_mask;
        let block = index - blocks.offset(low);
        let neighbours = &self.squeezed_neighbours[black];
        find_step(squeezed, neighbours, !squeezed, |moved| {
            let to_index = if moved & !low_mask == 0 {
                block + blocks.offset(low ^ moved)
            } else {
                self.ranker.rank(squeezed ^ moved)
            };
            hit(slice, to_index)
        })
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

    fn for_each_marked_key(
        &self,
        slice: SliceId,
        first: u64,
        marked: &[u64],
        mut visit: impl FnMut(u64, u64),
    ) {
        let (k, rep) = self.slice_parts(slice);
        self.low_blocks.for_each_marked(
            &self.ranker,
            k as u32,
            first,
            marked,
            |index, squeezed| visit(index, unsqueeze(squeezed, rep as u32)),
        );
    }

    #[inline(always)]
    fn index(&self, slice: SliceId, key: u64) -> u64 {
        let (_, rep) = self.slice_parts(slice);
        self.ranker.rank(squeeze(key, rep as u32))
    }

    /// A brown mask's rank is the rank of its block (its points above the [`LOW_POINTS`]
    /// lowest, given the count below) plus its offset in the block ([`ColexBlocks`]): sorted
    /// keys mostly share their block with the key before, and then cost one table lookup.
    fn for_each_index(&self, slice: SliceId, keys: &[u64], mut visit: impl FnMut(u64)) {
        let (_, black) = self.slice_parts(slice);
        let mut cursor = BlockCursor::new();
        for &key in keys {
            visit(cursor.rank(&self.low_blocks, &self.ranker, squeeze(key, black as u32)));
        }
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

    fn compact_counters(&self) -> bool {
        // Black has at most 8 moves in the stage (plus one counter for its exits), so its
        // counters fit a nibble; brown keeps none (black cannot win).
        true
    }

    fn claims_stay_in_slice(&self) -> bool {
        // Claims are brown's un-moves (brown wins), which keep the brown count and the black
        // point: the slice.
        true
    }

    #[inline(always)]
    fn moves(&self, side: EngineSide, slice: SliceId, key: u64, mut visit: impl FnMut(Move)) {
        match side {
            EngineSide::First => self.brown_moves(slice, key, |target| {
                visit(Move::InStage(slice, target));
            }),
            EngineSide::Second => self.black_moves(slice, key, visit),
        }
    }

    #[inline(always)]
    fn counted_moves(
        &self,
        side: EngineSide,
        slice: SliceId,
        key: u64,
        exits: impl FnMut(Move),
    ) -> Option<u32> {
        match side {
            // Brown is never swept: it keeps no counters and never leaves the stage.
            EngineSide::First => None,
            EngineSide::Second => self.black_counted_moves(slice, key, exits),
        }
    }

    #[inline(always)]
    fn any_move_reaching(
        &self,
        side: EngineSide,
        slice: SliceId,
        key: u64,
        index: u64,
        hit: impl FnMut(SliceId, u64) -> bool,
    ) -> bool {
        match side {
            EngineSide::First => self.brown_move_reaching(slice, key, index, hit),
            EngineSide::Second => listed_move_reaching(self, side, slice, key, hit),
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
                self.brown_moves(slice, key, |target| {
                    visit(
                        slice,
                        target,
                        self.ranker.rank(squeeze(target, black as u32)),
                    )
                });
            }
        }
    }
    fn distinct_unmoves_of_all(
        &self,
        side: EngineSide,
        slice: SliceId,
        keys: &[u64],
        visit: impl FnMut(SliceId, u64, u64),
    ) -> bool {
        match side {
            EngineSide::First => {
                self.black_unmoves_of_all(slice, keys, visit);
                true
            }
            // Brown's un-moves stay key by key: measured, one kind at a time over a block of
            // keys was slower (their targets share the slice, whose bitmap is small).
            EngineSide::Second => false,
        }
    }

    fn bulk_claim_plan(&self, side: EngineSide, slice: SliceId, frontier: u64) -> Option<BulkPlan> {
        // Claims are brown's, from black's lost positions.
        match side {
            EngineSide::Second => self.plan_bulk_claims(slice, frontier),
            EngineSide::First => None,
        }
    }

    fn mark_frontier(
        &self,
        plan: BulkPlan,
        side: EngineSide,
        slice: SliceId,
        keys: &[u64],
        members: &mut [u64],
        pre: &mut [u64],
    ) {
        debug_assert_eq!(side, EngineSide::Second, "only brown claims");
        self.mark_lost(plan, slice, keys, (members, pre));
    }

    fn bulk_predecessors(
        &self,
        plan: BulkPlan,
        side: EngineSide,
        slice: SliceId,
        members: &[u64],
        pre: &mut [u64],
        share: Share,
    ) {
        debug_assert_eq!(side, EngineSide::Second, "only brown claims");
        self.copy_runs(plan, slice, members, pre, share);
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
        if targets == 0 {
            if let Some(result) = self.blocked_black(black) {
                visit(result);
            }
            return;
        }
        // The key's images under the group elements the targets' canonical forms need,
        // computed once for all the moves (a non-capturing move's canonical mask is the
        // smallest of a few of them, see `Symmetry::to_rep_all`).
        let symmetry = &self.board.symmetry;
        let mut images = [key; 8];
        let mut needed = self.black_images[black];
        while needed != 0 {
            let g = needed.trailing_zeros() as usize;
            needed &= needed - 1;
            images[g] = symmetry.elements[g].apply(key);
        }
        while targets != 0 {
            let to = targets.trailing_zeros() as usize;
            targets &= targets - 1;
            let captured = captures(&self.board, to, key);
            if captured == 0 {
                let image = self.canonical_from_images(to, &images);
                visit(Move::InStage(
                    self.slice_of(k, symmetry.rep[to] as usize),
                    image,
                ));
            } else {
                visit(self.capture(to, key, captured));
            }
        }
    }

    /// What a black without a move on `black` is told: nothing (it has lost) where brown may
    /// trap it, else a move with a known result that is not a loss for black (see
    /// [`Musashi::black_moves`]). One rule for listing and counting.
    #[inline(always)]
    fn blocked_black(&self, black: usize) -> Option<Move> {
        (!self.board.traps(black)).then_some(Move::Known(Value::DRAW))
    }

    /// Black's capturing move to `to`, taking `captured` from the browns `key`: a move into
    /// the earlier stage of the browns left, at its canonical slice and key.
    #[inline(always)]
    fn capture(&self, to: usize, key: u64, captured: u64) -> Move {
        let browns = key & !captured;
        let (s, kk) = self.canonical_slice(browns.count_ones() as usize, to, browns);
        Move::Final(s, kk)
    }

    /// [`Game::counted_moves`] for black: the captures as [`Move::Final`] (or the trap-zone
    /// win as [`Move::Known`]) and the number of non-capturing moves, which are distinct
    /// successors unless a symmetry fixes the brown mask and maps one target onto another
    /// (then `None`: [`Musashi::black_moves`] lists them and the sweep removes the duplicate).
    /// Most masks have no symmetry, so most positions need no canonical forms of their
    /// non-capturing moves at all.
    #[inline(always)]
    fn black_counted_moves(
        &self,
        slice: SliceId,
        key: u64,
        mut exits: impl FnMut(Move),
    ) -> Option<u32> {
        let (_, black) = self.slice_parts(slice);
        let targets = self.board.neighbours[black] & !key;
        if targets == 0 {
            if let Some(result) = self.blocked_black(black) {
                exits(result);
            }
            return Some(0);
        }
        // Board files may give a point more than eight neighbours: those go the listing way.
        if targets.count_ones() > 8 {
            return None;
        }
        let capturing = self.capture_lines.capturing(black, key) & targets;
        let quiet = targets & !capturing;
        if quiet.count_ones() >= 2 && self.quiet_twins(black, quiet, key) {
            return None;
        }
        let mut rest = capturing;
        while rest != 0 {
            let to = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            exits(self.capture(to, key, captures(&self.board, to, key)));
        }
        Some(quiet.count_ones())
    }

    /// Whether two of black's non-capturing moves from `black` to the points of `quiet` (the
    /// browns `key`) reach one orbit: a symmetry takes one target `q` to another `p` and fixes
    /// the mask (black's origin is empty after either move, so the mask is all it must keep).
    /// Those symmetries are the pairs of [`Musashi::twin_origins`], precomputed per pair of
    /// neighbours: a target usually has none, where testing every group element on the mask
    /// was a third of the sweep's symmetry work.
    #[inline(always)]
    fn quiet_twins(&self, black: usize, quiet: u64, key: u64) -> bool {
        let twins = &self.twin_origins[black];
        let elements = &self.board.symmetry.elements;
        let mut rest = quiet;
        while rest != 0 {
            let p = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let twin = twins[p]
                .iter()
                .any(|&(q, g)| quiet >> q & 1 == 1 && elements[g as usize].fixes(key));
            if twin {
                return true;
            }
        }
        false
    }

    /// The canonical brown mask of "black on `black`, browns `key`", from `images[g]`, the
    /// images of `key` under the group elements (at least those of
    /// `Symmetry::to_rep_all[black]`).
    #[inline(always)]
    fn canonical_from_images(&self, black: usize, images: &[u64]) -> u64 {
        self.board.symmetry.to_rep_all[black]
            .iter()
            .map(|&g| images[g as usize])
            .min()
            .expect("at least the element to the representative")
    }

    /// [`Musashi::black_unmoves`] of every key of `keys`, one direction at a time, each key's
    /// positions once. For one origin point the targets all lie in one slice and their masks
    /// are the keys under one symmetry (or the smaller of a few images), so a sorted list sends
    /// its decrements through the target slice in a few rising streams. A key's un-moves from
    /// two origins reach the same position only when a symmetry maps one origin to the other
    /// and fixes the mask: the later one is skipped then ([`Musashi::twin_origins`]).
    fn black_unmoves_of_all(
        &self,
        slice: SliceId,
        keys: &[u64],
        mut visit: impl FnMut(SliceId, u64, u64),
    ) {
        let (k, black) = self.slice_parts(slice);
        let symmetry = &self.board.symmetry;
        // The buffers below are kept per thread between calls (a call takes one chunk of a
        // list): allocating them anew cost a malloc, fresh pages and, for the rows, a memcpy
        // call per key.
        thread_local! {
            static BUFFERS: std::cell::Cell<(Vec<u64>, Vec<[u64; 8]>)> =
                const { std::cell::Cell::new((Vec::new(), Vec::new())) };
        }
        let (mut kept, mut images) = BUFFERS.take();
        // Black arrived without capturing only if no pair sandwiches it now.
        kept.clear();
        kept.extend(
            keys.iter()
                .copied()
                .filter(|&key| captures(&self.board, black, key) == 0),
        );
        // Each kept key's images under the group elements the directions need (the others
        // are never read: on BOARD25 black's corner needs one of seven), computed once for all
        // directions, one row of (at most) eight per key. Every entry a direction reads is
        // written (the key itself where no image is needed).
        let needed = self.unmove_images[black];
        images.clear();
        images.extend(kept.iter().map(|&key| {
            let mut row = [key; 8];
            let mut rest = needed;
            while rest != 0 {
                let g = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                row[g] = symmetry.elements[g].apply(key);
            }
            row
        }));
        let twins = &self.twin_origins[black];
        let mut origins = self.board.neighbours[black];
        while origins != 0 {
            let from = origins.trailing_zeros() as usize;
            origins &= origins - 1;
            let from_bit = 1u64 << from;
            let rep = symmetry.rep[from] as usize;
            let to = self.slice_of(k, rep);
            let twins = &twins[from];
            // The keys are sorted: where the origin needs no symmetry their images are the keys
            // themselves, and consecutive ones mostly share a colex block (elsewhere they rise
            // in a few streams, and a cursor costs little more than a rank).
            let mut cursor = BlockCursor::new();
            for (&key, row) in kept.iter().zip(&images) {
                if key & from_bit != 0 {
                    continue;
                }
                let twin = twins
                    .iter()
                    .any(|&(q, g)| key >> q & 1 == 0 && row[g as usize] == key);
                if twin {
                    continue;
                }
                let image = self.canonical_from_images(from, row);
                let squeezed = squeeze(image, rep as u32);
                let index = cursor.rank(&self.low_blocks, &self.ranker, squeezed);
                visit(to, image, index);
            }
        }
        BUFFERS.set((kept, images));
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Brown masks of every slice of `game` with `k` browns: pseudo-random ones and ones fixed
    /// by a symmetry (the masks whose black un-moves can coincide).
    fn sample_keys(game: &Musashi, slice: SliceId, count: u64) -> Vec<u64> {
        let symmetry = &game.board().symmetry;
        let len = game.slice_len(slice);
        let mut keys: Vec<u64> = (0..count)
            .map(|i| game.key(slice, i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % len))
            .collect();
        let (k, black) = game.slice_parts(slice);
        for g in &symmetry.elements {
            for &key in &keys.clone() {
                let fixed = key | g.apply(key);
                if fixed.count_ones() as usize == k && fixed >> black & 1 == 0 {
                    keys.push(fixed);
                }
            }
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    #[test]
    fn counted_black_moves_are_the_listed_moves_counted() {
        let corners = {
            let board = Board::builtin("BOARD25").unwrap();
            let trap = board.parse_trap("corners").unwrap();
            board.with_trap(trap)
        };
        let boards = [
            Board::builtin("BOARD25").unwrap(),
            Board::builtin("BOARD33").unwrap(),
            corners,
        ];
        for board in boards {
            let game = Musashi::new(board, Some(10));
            let (mut counted, mut listed) = (0, 0);
            for stage in game.stages() {
                for &slice in &stage.slices {
                    for key in sample_keys(&game, slice, 100) {
                        if !game.is_canonical(slice, key) {
                            continue;
                        }
                        let mut exits = Vec::new();
                        let count =
                            game.counted_moves(EngineSide::Second, slice, key, |mv| exits.push(mv));
                        let mut successors = BTreeSet::new();
                        let mut all_exits = Vec::new();
                        game.moves(EngineSide::Second, slice, key, |mv| match mv {
                            Move::InStage(to, to_key) => {
                                successors.insert((to, to_key));
                            }
                            exit => all_exits.push(exit),
                        });
                        let Some(count) = count else {
                            assert!(exits.is_empty(), "{slice:?} {key:#x}: visited, then None");
                            listed += 1;
                            continue;
                        };
                        counted += 1;
                        assert_eq!(count as usize, successors.len(), "{slice:?} {key:#x}");
                        exits.sort_by_key(|mv| format!("{mv:?}"));
                        all_exits.sort_by_key(|mv| format!("{mv:?}"));
                        assert_eq!(exits, all_exits, "{slice:?} {key:#x}");
                    }
                }
            }
            // Both ways were taken: symmetric masks list their moves.
            assert!(
                counted > 1000 && listed > 10,
                "{counted} counted, {listed} listed"
            );
            assert!(
                game.counted_moves(EngineSide::First, game.slice_of(3, 0), 0b1110, |_| {})
                    .is_none(),
                "brown's moves are never counted"
            );
        }
    }

    #[test]
    fn marked_keys_are_the_keys_of_the_marked_indices() {
        let nine = "name: B9\npoints: 00 01 02 10 11 12 20 21 22\n\
                    edges: 00-01 01-02 10-11 11-12 20-21 21-22 00-10 10-20 01-11 11-21\n";
        for (name, k) in [("BOARD25", 9), ("BOARD33", 6), ("B9", 4)] {
            let board = Board::builtin(name).unwrap_or_else(|| Board::from_text(nine).unwrap());
            let game = Musashi::new(board, Some(k));
            for &slice in &game.stages()[k].slices {
                let len = game.slice_len(slice);
                // Marks from word 3 on (a walk that starts inside the slice): runs of dense
                // words, sparse ones and gaps, none past the slice's end.
                let first = (3 * 64).min(len / 64 * 64);
                let words = (len - first).div_ceil(64) as usize;
                let mut marked: Vec<u64> = (0..words as u64)
                    .map(|w| {
                        let x = (w + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                        match w % 50 {
                            0..=4 => u64::MAX,
                            5..=19 => x & x >> 7,
                            _ if w % 7 == 0 => x & x >> 5 & x >> 11,
                            _ => 0,
                        }
                    })
                    .collect();
                if let Some(last) = marked.last_mut() {
                    let used = len - first - 64 * (words as u64 - 1);
                    *last &= u64::MAX >> (64 - used);
                }
                let mut want = Vec::new();
                game.for_each_key(slice, first..len, |index, key| {
                    let i = index - first;
                    if marked[(i / 64) as usize] >> (i % 64) & 1 == 1 {
                        want.push((index, key));
                    }
                });
                let mut have = Vec::new();
                game.for_each_marked_key(slice, first, &marked, |index, key| {
                    have.push((index, key))
                });
                assert!(!want.is_empty() || len <= first + 64, "{name} {slice:?}");
                assert_eq!(have, want, "{name} {slice:?}");
            }
        }
    }

    #[test]
    fn indices_of_a_list_are_those_of_its_keys() {
        // Sparse and dense runs, sorted (blocks shared) and not, on slices of every black
        // point, with brown counts below, at and above the block tables' 14 points.
        for (name, k) in [
            ("BOARD25", 3),
            ("BOARD25", 12),
            ("BOARD33", 16),
            ("BOARD33", 25),
        ] {
            let game = Musashi::new(Board::builtin(name).unwrap(), Some(k));
            for &slice in &game.stages()[k].slices {
                let len = game.slice_len(slice);
                let dense: Vec<u64> = (len / 2..(len / 2 + 5000).min(len))
                    .map(|i| game.key(slice, i))
                    .collect();
                let mut shuffled = sample_keys(&game, slice, 2000);
                shuffled.reverse();
                shuffled.extend_from_slice(&dense[..dense.len().min(100)]);
                for keys in [sample_keys(&game, slice, 2000), dense, shuffled] {
                    let mut have = Vec::new();
                    game.for_each_index(slice, &keys, |index| have.push(index));
                    let want: Vec<u64> = keys.iter().map(|&key| game.index(slice, key)).collect();
                    assert_eq!(have, want, "{name} {slice:?}");
                }
            }
        }
    }

    #[test]
    fn moves_reaching_visit_the_ranked_moves_until_a_hit() {
        // Every slice of a stage of each board: black on points with and without symmetries,
        // brown moves between low points, high points and across the two.
        for (name, k) in [("BOARD25", 9), ("BOARD33", 7)] {
            let game = Musashi::new(Board::builtin(name).unwrap(), Some(k));
            let mut low_moves = 0;
            for &slice in &game.stages()[k].slices {
                for key in sample_keys(&game, slice, 300) {
                    let index = game.index(slice, key);
                    for side in [EngineSide::First, EngineSide::Second] {
                        let mut want = Vec::new();
                        game.moves(side, slice, key, |mv| {
                            if let Move::InStage(to, to_key) = mv {
                                want.push((to, game.index(to, to_key)));
                            }
                        });
                        // Never hit: every in-stage move is visited, ranked, in order.
                        let mut have = Vec::new();
                        let found = game.any_move_reaching(side, slice, key, index, |to, i| {
                            have.push((to, i));
                            false
                        });
                        assert!(!found);
                        assert_eq!(have, want, "{name} {slice:?} {key:#x} {side:?}");
                        // A hit on the j-th stops there and is reported.
                        for j in [0, want.len() / 2, want.len().saturating_sub(1)] {
                            if j >= want.len() {
                                continue;
                            }
                            let mut seen = 0;
                            let found = game.any_move_reaching(side, slice, key, index, |to, i| {
                                seen += 1;
                                (to, i) == want[j]
                            });
                            assert!(found);
                            let first = want.iter().position(|&t| t == want[j]).unwrap();
                            assert_eq!(seen, first + 1, "{name} {slice:?} {key:#x}");
                        }
                    }
                    let (_, black) = game.slice_parts(slice);
                    if game.board.symmetry.stabiliser[black].is_empty() {
                        let squeezed = squeeze(key, black as u32);
                        let low = game.low_blocks.low_mask();
                        game.brown_moves(slice, key, |target| {
                            let moved = squeezed ^ squeeze(target, black as u32);
                            low_moves += usize::from(moved & !low == 0);
                        });
                    }
                }
            }
            assert!(low_moves > 0, "{name}: no move within a colex block tested");
        }
    }

    #[test]
    fn black_unmoves_in_bulk_are_each_keys_distinct_unmoves() {
        for name in ["BOARD25", "BOARD33"] {
            let game = Musashi::new(Board::builtin(name).unwrap(), Some(8));
            let mut symmetric = 0;
            for stage in game.stages().iter().skip(3) {
                for &slice in &stage.slices {
                    let keys = sample_keys(&game, slice, 200);
                    let mut all_bulk = Vec::new();
                    for &key in &keys {
                        let mut one = BTreeSet::new();
                        game.unmoves(EngineSide::First, slice, key, |s, k, i| {
                            one.insert((s, k, i));
                        });
                        let mut bulk = Vec::new();
                        assert!(game.distinct_unmoves_of_all(
                            EngineSide::First,
                            slice,
                            &[key],
                            |s, k, i| bulk.push((s, k, i)),
                        ));
                        let distinct: BTreeSet<_> = bulk.iter().copied().collect();
                        assert_eq!(
                            distinct.len(),
                            bulk.len(),
                            "{name} key {key:#x}: a duplicate"
                        );
                        assert_eq!(distinct, one, "{name} {slice:?} key {key:#x}");
                        symmetric += usize::from(
                            game.board()
                                .symmetry
                                .elements
                                .iter()
                                .skip(1)
                                .any(|g| g.apply(key) == key),
                        );
                        all_bulk.extend(bulk);
                    }
                    let mut together = Vec::new();
                    game.distinct_unmoves_of_all(EngineSide::First, slice, &keys, |s, k, i| {
                        together.push((s, k, i))
                    });
                    together.sort_unstable();
                    all_bulk.sort_unstable();
                    assert_eq!(together, all_bulk, "{name} {slice:?}: a whole list");
                }
            }
            assert!(symmetric > 0, "{name}: no symmetric mask was tried");
        }
    }
}
