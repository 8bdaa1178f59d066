//! Bit-parallel claims: a claim ply's predecessors as bit-run copies between bitmaps.
//!
//! A claim ply asks which brown-to-move positions of a slice have a brown move into the set `F`
//! of black-to-move positions lost at this ply. Pushed key by key, every brown un-move of every
//! key of `F` costs a symmetry minimum, a rank and a bit test — and late in a stage 95% of the
//! targets are won already.
//!
//! Colex order gives the question a block structure. Take a brown move `x -> y` (squeezed point
//! numbers, `lo = min(x, y)`, `hi = max(x, y)`) and fix everything at or above `lo`: the other
//! browns above `lo` (the *context* `R`), `x` present and `y` absent. The masks sharing that
//! context differ only in their `a` browns below `lo`, and they are one contiguous run of
//! `C(lo, a)` ranks, in the same order on the source side (`R + x + low`) as on the target side
//! (`R + y + low`). So the move's predecessors of all of `F` at once are the run copies
//! `pre[rank(R + x + lowest a)..][..C(lo, a)] |= F[rank(R + y + lowest a)..][..C(lo, a)]`, one per
//! context: a word per 64 positions, whatever the size of `F`.
//!
//! Moves of low points have many short runs, so a plan ([`BulkPlan`], a bit per brown edge of
//! the slice) says which edges go in bulk; the others are pushed from the keys as before, into
//! the same bitmap (an un-move between two of the lowest points ranked by a table lookup
//! within the member's colex block, see `mark_lost_with`). Symmetry is handled by marking
//! every image of a key in `F` (the bitmap holds the whole orbit), so both parts find every
//! predecessor, canonical or not, with no symmetry minimum at all; the kernel claims only the
//! canonical ones (the others are final from the start).

use super::{find_step, Musashi};
use retro_engine::{BulkPlan, Share, SliceId};
use retro_index::{
    binomial, next_subset, squeeze, BlockCursor, DirectBits, QueuedRuns, ScatteredBits, SetBits,
    BLOCK_STREAMS, LARGE_BITMAP_WORDS,
};

/// Which slices a claim ply finds bit-parallel. The model is the default; the others are for
/// tests and paired benchmarks (`RETRO_BULK_CLAIMS=off|all`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BulkClaims {
    /// Where the cost model says it is cheaper than pushing.
    Model,
    /// Never: every claim is pushed key by key.
    Off,
    /// In every slice with a frontier, every edge copied: the most of the bulk path, for tests.
    All,
}

impl BulkClaims {
    /// The mode named by `RETRO_BULK_CLAIMS` (unset: the model).
    ///
    /// # Errors
    /// A value other than `model`, `off` or `all`, named.
    pub fn from_env() -> Result<BulkClaims, String> {
        match std::env::var("RETRO_BULK_CLAIMS").as_deref() {
            Err(_) | Ok("model") => Ok(BulkClaims::Model),
            Ok("off") => Ok(BulkClaims::Off),
            Ok("all") => Ok(BulkClaims::All),
            Ok(other) => Err(format!(
                "RETRO_BULK_CLAIMS={other:?}: expected model, off or all"
            )),
        }
    }
}

/// Estimated nanoseconds per pushed target (un-move, rank, bit), per run copy (two ranks and
/// the copy's ends), per word of a run copy, per word of the slice for the whole bulk ply (two
/// bitmaps zeroed, the claim pass) and per marked key image. Measured on BOARD33 stages 8-9
/// (see docs/benchmarks.md); only their ratios matter.
const PUSH_NS: f64 = 7.0;
const CONTEXT_NS: f64 = 12.0;
const RUN_WORD_NS: f64 = 0.8;
const SLICE_WORD_NS: f64 = 3.0;
const MARK_NS: f64 = 10.0;

/// The estimated nanoseconds of one direction's run copies of a brown edge whose lower end is
/// squeezed point `lo`, in a slice of `k` browns on `m` points: for each count `a` of browns
/// below `lo`, `C(m - 2 - lo, k - 1 - a)` contexts, and `C(m - 2, k - 1)` bits in all.
fn copy_ns(k: usize, m: usize, lo: usize) -> f64 {
    let contexts: u64 = (0..=lo.min(k - 1))
        .filter(|&a| k - 1 - a <= m - 2 - lo)
        .map(|a| binomial(m - 2 - lo, k - 1 - a))
        .sum();
    contexts as f64 * CONTEXT_NS + binomial(m - 2, k - 1) as f64 / 64.0 * RUN_WORD_NS
}

/// Every un-move of a brown of `pieces` to an `empty` point along `pushed` (`pushed[p]`: the
/// points joined to point `p`), as `visit(the two points' bits)`: the un-moved mask is the
/// mask XOR that.
#[inline(always)]
fn each_unmove(pieces: u64, pushed: &[u64; 64], empty: u64, mut visit: impl FnMut(u64)) {
    find_step(pieces, pushed, empty, |moved| {
        visit(moved);
        false
    });
}

impl Musashi {
    /// The brown edges of the slice with black on `black`, as squeezed point numbers
    /// `(lo, hi)`, `lo < hi`.
    fn squeezed_edges(&self, black: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let squeezed = move |p: u8| p as usize - usize::from(p as usize > black);
        self.board
            .edges
            .iter()
            .filter(move |&&(u, v)| u as usize != black && v as usize != black)
            .map(move |&(u, v)| {
                let (u, v) = (squeezed(u), squeezed(v));
                (u.min(v), u.max(v))
            })
    }

    /// [`retro_engine::Game::bulk_claim_plan`] for Musashi: a bit per brown edge (in
    /// [`Musashi::squeezed_edges`] order) whose run copies, both directions, cost less than
    /// pushing its un-moves from the frontier's members (keys and images); if the savings pay
    /// for the bitmaps.
    ///
    /// An edge `lo - hi` makes, for each count `a` of browns below `lo`,
    /// `C(m - 2 - lo, k - 1 - a)` run copies of `C(lo, a)` positions: `C(m - 2, k - 1)` bits
    /// in all, whatever `lo`, but the fewer copies the higher `lo`. Its pushed un-moves are
    /// estimated as if the members were spread evenly (they are not: lost positions cluster,
    /// which is why the plan goes by whole edges — splitting an edge's blocks by run length
    /// pushed more un-moves than that saved, measured).
    pub(super) fn plan_bulk_claims(&self, slice: SliceId, frontier: u64) -> Option<BulkPlan> {
        if self.bulk_claims == BulkClaims::Off {
            return None;
        }
        let (k, black) = self.slice_parts(slice);
        let m = self.board.len() - 1;
        if k == 0 || k + 1 >= m || frontier == 0 {
            return None;
        }
        if self.bulk_claims == BulkClaims::All {
            return Some(BulkPlan((1 << self.squeezed_edges(black).count()) - 1));
        }
        let members = frontier as f64 * (1 + self.board.symmetry.stabiliser[black].len()) as f64;
        // A member's expected un-moves along one direction of one edge: it holds `y`, not `x`.
        let share = (k * (m - k)) as f64 / (m * (m - 1)) as f64;
        let push = members * share * PUSH_NS;
        let mut plan = 0u128;
        let mut saving = 0.0;
        for (e, (lo, _)) in self.squeezed_edges(black).enumerate() {
            let copy = copy_ns(k, m, lo);
            if copy < push {
                plan |= 1 << e;
                saving += 2.0 * (push - copy);
            }
        }
        let slots = binomial(m, k) as f64;
        let fixed = slots / 64.0 * SLICE_WORD_NS + members * MARK_NS;
        (saving > fixed).then_some(BulkPlan(plan))
    }

    /// [`retro_engine::Game::mark_frontier`] for Musashi, for black's lost `keys` (claims are
    /// brown's): members marked, their un-moves along the edges the plan does not copy pushed.
    pub(super) fn mark_lost(
        &self,
        plan: BulkPlan,
        slice: SliceId,
        keys: &[u64],
        (members, pre): (&mut [u64], &mut [u64]),
    ) {
        // Bits of large bitmaps fall all over memory far larger than the caches: their writes
        // are queued behind prefetches. Small bitmaps stay cached: set at once.
        if members.len() >= LARGE_BITMAP_WORDS {
            self.mark_lost_with(plan, slice, keys, ScatteredBits::new(members, pre));
        } else {
            self.mark_lost_with(plan, slice, keys, DirectBits::new(members, pre));
        }
    }

    /// [`Musashi::mark_lost`] through `bits` (0: members, 1: predecessors).
    ///
    /// Most pushed un-moves move a brown between two of the [`super::LOW_POINTS`] lowest points
    /// (the low edges are the ones whose run copies are shortest, so the plan pushes them).
    /// Such an un-move keeps everything above them: its predecessor lies in the member's own
    /// colex block, `rank(member) - low_rank(member's low browns)`, at the low rank of its own
    /// low browns: a lookup in a table of `2^LOW_POINTS` offsets instead of a rank of the whole
    /// mask, and a bit near the member's instead of one anywhere in the slice: the member's
    /// and these bits are set by block, a stream per image ([`SetBits::set_in_block`]; in
    /// large bitmaps gathered and written a word at a time).
    fn mark_lost_with(&self, plan: BulkPlan, slice: SliceId, keys: &[u64], mut bits: impl SetBits) {
        let (_, black) = self.slice_parts(slice);
        let m = self.board.len() - 1;
        let blocks = &self.low_blocks;
        let low_mask = blocks.low_mask();
        // `pushed_low[p]`, `pushed_high[p]`: the squeezed neighbours of squeezed point `p`
        // along pushed edges between two low points, and along the other pushed edges.
        let mut pushed_low = [0u64; 64];
        let mut pushed_high = [0u64; 64];
        for (e, (lo, hi)) in self.squeezed_edges(black).enumerate() {
            if plan.0 >> e & 1 == 0 {
                let pushed = if (1u64 << hi) & low_mask != 0 {
                    &mut pushed_low
                } else {
                    &mut pushed_high
                };
                pushed[lo] |= 1 << hi;
                pushed[hi] |= 1 << lo;
            }
        }
        // The points with a pushed edge of each kind: the walks below visit only the pieces
        // on them (the plan copies most edges, so most pieces have nothing to push).
        let sources = |pushed: &[u64; 64]| {
            (0..64)
                .filter(|&p| pushed[p] != 0)
                .fold(0u64, |s, p| s | 1 << p)
        };
        let (low_sources, high_sources) = (sources(&pushed_low), sources(&pushed_high));
        let symmetry = &self.board.symmetry;
        let stabiliser = &symmetry.stabiliser[black];
        let all = (1u64 << m) - 1;
        let mut images = [0u64; BLOCK_STREAMS];
        let count = 1 + stabiliser.len().min(BLOCK_STREAMS - 1);
        // A cursor per image: the keys come sorted, so the keys themselves (and, in a few
        // rising streams, their images) mostly share a colex block with the one before. The
        // bits in that block (the member, its low un-moves) are set in the image's stream.
        let mut cursors = [BlockCursor::new(); BLOCK_STREAMS];
        for &key in keys {
            images[0] = key;
            for (image, &g) in images[1..count].iter_mut().zip(stabiliser) {
                *image = symmetry.elements[g as usize].apply(key);
            }
            for (stream, (&image, cursor)) in images[..count].iter().zip(&mut cursors).enumerate() {
                let image = squeeze(image, black as u32);
                let rank = cursor.rank(blocks, &self.ranker, image);
                let block = cursor.block_start();
                bits.enter_block(stream, block);
                bits.set_in_block(stream, 0, rank - block);
                let empty = all & !image;
                let low = image & low_mask;
                each_unmove(low & low_sources, &pushed_low, empty, |moved| {
                    bits.set_in_block(stream, 1, blocks.offset(low ^ moved));
                });
                each_unmove(image & high_sources, &pushed_high, empty, |moved| {
                    bits.set(1, self.ranker.rank(image ^ moved));
                });
            }
        }
        // Dropping `bits` writes any bits still queued or gathered.
    }

    /// [`retro_engine::Game::bulk_predecessors`] for Musashi: the run copies of the plan's
    /// edges, both directions; of them, those of `share` (see [`Musashi::copy_shares`]).
    pub(super) fn copy_runs(
        &self,
        plan: BulkPlan,
        slice: SliceId,
        members: &[u64],
        pre: &mut [u64],
        share: Share,
    ) {
        let (k, black) = self.slice_parts(slice);
        let m = self.board.len() - 1;
        if k == 0 || k >= m {
            return;
        }
        let shares = self.copy_shares(plan, black, k, share.of);
        let edges = self.squeezed_edges(black).enumerate();
        // Consecutive contexts' runs lie far apart: their first words are prefetched a few
        // runs ahead (the queue copies every run by the time it is dropped).
        let mut runs = QueuedRuns::new(pre, members);
        for ((e, (lo, hi)), share_of) in edges.zip(shares) {
            if plan.0 >> e & 1 == 0 {
                continue;
            }
            // The points above `lo` other than `hi`, numbered from 0: `gap` of them lie below
            // `hi`.
            let above = m - 2 - lo;
            let gap = hi - lo - 1;
            for (direction, (x, y)) in [(lo, hi), (hi, lo)].into_iter().enumerate() {
                if share_of[direction] != share.index {
                    continue;
                }
                for a in 0..=lo.min(k - 1) {
                    let rest = k - 1 - a;
                    let len = binomial(lo, a);
                    if rest > above {
                        continue;
                    }
                    let low = (1u64 << a) - 1;
                    let mut context = (1u64 << rest) - 1;
                    while context >> above == 0 {
                        let spread = (context & ((1 << gap) - 1)) | (context >> gap) << (gap + 1);
                        let others = spread << (lo + 1) | low;
                        let to = self.ranker.rank(others | 1 << x);
                        let from = self.ranker.rank(others | 1 << y);
                        runs.or_run(to, from, len);
                        if rest == 0 {
                            break;
                        }
                        context = next_subset(context);
                    }
                }
            }
        }
    }

    /// Which of `shares` threads copies each direction of each brown edge of the slice with
    /// `k` browns and black on `black` (in [`Musashi::squeezed_edges`] order): the plan's
    /// copies, costliest first, each to the share with the least estimated work so far.
    fn copy_shares(
        &self,
        plan: BulkPlan,
        black: usize,
        k: usize,
        shares: usize,
    ) -> Vec<[usize; 2]> {
        let m = self.board.len() - 1;
        let edges: Vec<(usize, usize)> = self.squeezed_edges(black).collect();
        let mut owner = vec![[0; 2]; edges.len()];
        if shares <= 1 {
            return owner;
        }
        let mut copies: Vec<(f64, usize, usize)> = edges
            .iter()
            .enumerate()
            .filter(|&(e, _)| plan.0 >> e & 1 == 1)
            .flat_map(|(e, &(lo, _))| [0, 1].map(|d| (copy_ns(k, m, lo), e, d)))
            .collect();
        copies.sort_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
        let mut load = vec![0.0f64; shares];
        for (cost, e, d) in copies {
            let least = (0..shares)
                .min_by(|&a, &b| load[a].total_cmp(&load[b]))
                .expect("at least one share");
            load[least] += cost;
            owner[e][d] = least;
        }
        owner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;
    use retro_engine::{Game, Move, Side as EngineSide};
    use std::collections::HashSet;

    /// The canonical brown-to-move positions of `slice` with a brown move into `lost`, by
    /// brown's moves one position at a time.
    fn claims_by_moves(game: &Musashi, slice: SliceId, lost: &HashSet<u64>) -> Vec<u64> {
        let mut claims = Vec::new();
        game.for_each_key(slice, 0..game.slice_len(slice), |index, key| {
            if !game.is_canonical(slice, key) {
                return;
            }
            let mut found = false;
            game.moves(EngineSide::First, slice, key, |m| {
                found |= matches!(m, Move::InStage(s, k) if s == slice && lost.contains(&k));
            });
            if found {
                claims.push(index);
            }
        });
        claims
    }

    #[test]
    fn bulk_claims_are_the_claims_of_brown_moves_under_any_plan() {
        // A board smaller than `LOW_POINTS` too: every edge lies between low points.
        let nine = "name: B9\npoints: 00 01 02 10 11 12 20 21 22\n\
                    edges: 00-01 01-02 10-11 11-12 20-21 21-22 00-10 10-20 01-11 11-21 02-12\n\
                    edges: 12-22 00-11 11-22 02-11 11-20\n";
        for (name, k) in [("BOARD33", 5), ("BOARD33", 7), ("BOARD25", 6), ("B9", 4)] {
            let board = Board::builtin(name).unwrap_or_else(|| Board::from_text(nine).unwrap());
            let game = Musashi::new(board, Some(k));
            let stage = &game.stages()[k];
            let mut symmetric = 0;
            // Every slice of the small stages; of the largest the first with black on a
            // point with symmetries and the first without.
            let fixes = |slice: &SliceId| {
                let (_, black) = game.slice_parts(*slice);
                !game.board.symmetry.stabiliser[black].is_empty()
            };
            let slices: Vec<SliceId> = if name != "BOARD33" || k < 7 {
                stage.slices.clone()
            } else {
                let with = stage.slices.iter().copied().find(fixes);
                let without = stage.slices.iter().copied().find(|s| !fixes(s));
                with.into_iter().chain(without).collect()
            };
            for (i, &slice) in slices.iter().enumerate() {
                let (_, black) = game.slice_parts(slice);
                symmetric += usize::from(fixes(&slice));
                let len = game.slice_len(slice);
                // Lost positions: canonical keys spread over the slice.
                let mut lost: Vec<u64> = (0..3000u64)
                    .map(|j| game.key(slice, j.wrapping_mul(0x9E37_79B9_7F4A_7C15) % len))
                    .map(|key| game.board.symmetry.minimise(black, key))
                    .collect();
                lost.sort_unstable();
                lost.dedup();
                let set: HashSet<u64> = lost.iter().copied().collect();
                let want = claims_by_moves(&game, slice, &set);
                let mut canonical = Vec::new();
                game.for_each_key(slice, 0..len, |i, key| {
                    if game.is_canonical(slice, key) {
                        canonical.push(i);
                    }
                });
                assert!(!want.is_empty());
                let edges = game.squeezed_edges(black).count();
                let all = (1u128 << edges) - 1;
                let mixed = 0x5A5A_5A5A_5A5A_5A5A_5A5A_5A5A_5A5A_5A5Au128.rotate_left(i as u32);
                for (j, plan) in [0, all, mixed & all, !mixed & all].into_iter().enumerate() {
                    let words = len.div_ceil(64) as usize;
                    let (mut members, mut pre) = (vec![0u64; words], vec![0u64; words]);
                    let plan = BulkPlan(plan);
                    for chunk in lost.chunks(100) {
                        game.mark_lost(plan, slice, chunk, (&mut members, &mut pre));
                    }
                    // These bitmaps are small (bits set directly); the queue behind
                    // prefetches, which large ones use, sets the same bits.
                    assert!(words < LARGE_BITMAP_WORDS);
                    let (mut queued_members, mut queued_pre) = (vec![0; words], vec![0; words]);
                    for chunk in lost.chunks(100) {
                        let queue = ScatteredBits::new(&mut queued_members, &mut queued_pre);
                        game.mark_lost_with(plan, slice, chunk, queue);
                    }
                    assert_eq!((&queued_members, &queued_pre), (&members, &pre));
                    // The copies split three ways (each share into its own bitmap) set the
                    // same bits as one share.
                    let shared = [1, 3][(i + j) % 2];
                    let mut pres = vec![pre; shared];
                    for (index, pre) in pres.iter_mut().enumerate() {
                        let share = Share { index, of: shared };
                        game.copy_runs(plan, slice, &members, pre, share);
                    }
                    let pre: Vec<u64> = (0..words)
                        .map(|w| pres.iter().fold(0, |acc, pre| acc | pre[w]))
                        .collect();
                    let have: Vec<u64> = canonical
                        .iter()
                        .copied()
                        .filter(|&i| pre[(i / 64) as usize] >> (i % 64) & 1 == 1)
                        .collect();
                    assert_eq!(
                        have, want,
                        "{name} k={k} {slice:?} plan {:#x}, {shared} shares",
                        plan.0
                    );
                }
            }
            assert!(
                symmetric > 0,
                "{name}: no slice with a symmetric black point"
            );
        }
    }
}
