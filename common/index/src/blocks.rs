//! Colex blocks: the sets that agree above their lowest cells, ranked and unranked by table.
//!
//! The colex rank of a set is a sum of one term per element, `C(element, its place)`. So the
//! sets of one size that share their elements at and above cell `p` (the *high part*) have
//! contiguous ranks — a *block* — ordered by the colex rank of their elements below `p` (the
//! *low part*) among the sets of as many elements there. Within a block, a set's offset is a
//! lookup by its low part, and the set at an offset is a lookup too: two tables of `2^p`
//! entries, where ranking or unranking the whole set takes a lookup per byte or a scan of
//! binomials per element.
//!
//! Three hot paths use this: an un-move between two low cells stays in its set's block (its
//! rank is the block's start plus a lookup); walking the marked slots of a bitmap turns each
//! index back into its set with a lookup while the indices stay in one block, and finds the
//! next block with one [`next_subset`] of its last set (colex order lists each block's sets
//! together, so the next block begins with that set's successor); and a sorted stream of sets
//! is ranked by a [`BlockCursor`], a full rank only where the block changes.

use crate::binomial::binomial;
use crate::subset::{next_subset, SubsetRanker};

/// The largest number of low cells: offsets and low parts are stored in two bytes.
pub const MAX_LOW_CELLS: usize = 16;

/// The offset and set tables of the blocks below `cells` low cells.
#[derive(Clone, Debug)]
pub struct ColexBlocks {
    /// The low cells: `0..cells`.
    cells: usize,
    /// `offsets[low]`: the colex rank of the low part `low` among the sets of as many elements
    /// within the low cells — a set's offset in its block.
    offsets: Vec<u16>,
    /// `lows[starts[a] + offset]`: the low part of `a` elements at `offset`.
    lows: Vec<u16>,
    /// `starts[a]`: where the low parts of `a` elements begin in `lows`.
    starts: Vec<usize>,
}

/// One block: the sets with the high part `high`, at ranks `start..end` (a walk's place, kept
/// inside this module: callers see only offsets and sets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    /// The rank of the block's first set.
    start: u64,
    /// One past the rank of its last set.
    end: u64,
    /// The elements at and above the low cells, shared by every set of the block.
    high: u64,
    /// The number of elements below: every set of the block has this many low elements.
    low_count: u32,
}

impl Block {
    /// No block: every rank lies beyond it, so a walk starts by finding the block of its
    /// first rank.
    const NONE: Block = Block {
        start: 0,
        end: 0,
        high: 0,
        low_count: 0,
    };
}

impl ColexBlocks {
    /// The tables for the `cells` lowest cells.
    ///
    /// # Panics
    /// If `cells` exceeds [`MAX_LOW_CELLS`].
    pub fn new(cells: usize) -> ColexBlocks {
        assert!(
            cells <= MAX_LOW_CELLS,
            "at most {MAX_LOW_CELLS} low cells, not {cells}"
        );
        let ranker = SubsetRanker::new(cells as u32);
        let offsets: Vec<u16> = (0..1u64 << cells)
            .map(|low| ranker.rank(low) as u16)
            .collect();
        let starts: Vec<usize> = (0..=cells + 1)
            .map(|a| (0..a).map(|j| binomial(cells, j) as usize).sum())
            .collect();
        let mut lows = vec![0u16; 1 << cells];
        for (low, &offset) in offsets.iter().enumerate() {
            lows[starts[low.count_ones() as usize] + offset as usize] = low as u16;
        }
        ColexBlocks {
            cells,
            offsets,
            lows,
            starts,
        }
    }

    /// The mask of the low cells.
    #[inline(always)]
    pub fn low_mask(&self) -> u64 {
        (1u64 << self.cells) - 1
    }

    /// The offset of the set with low part `low` (within [`ColexBlocks::low_mask`]) in its
    /// block: its rank is the block's start plus this.
    #[inline(always)]
    pub fn offset(&self, low: u64) -> u64 {
        u64::from(self.offsets[low as usize])
    }

    /// The block of `set`, whose rank is `rank`.
    #[inline(always)]
    fn block_of(&self, set: u64, rank: u64) -> Block {
        let low = set & self.low_mask();
        let low_count = low.count_ones();
        let start = rank - self.offset(low);
        Block {
            start,
            end: start + binomial(self.cells, low_count as usize),
            high: set & !self.low_mask(),
            low_count,
        }
    }

    /// The set at rank `rank` of `block` (`block.start <= rank < block.end`).
    #[inline(always)]
    fn set_at(&self, block: &Block, rank: u64) -> u64 {
        let at = self.starts[block.low_count as usize] + (rank - block.start) as usize;
        block.high | u64::from(self.lows[at])
    }

    /// The block after `block` in colex order (of sets of its size): the one holding the
    /// next set after its last.
    #[inline(always)]
    fn next(&self, block: &Block) -> Block {
        let a = block.low_count as usize;
        // The last set of the block holds its low elements in the highest low cells.
        let last = block.high | ((1u64 << a) - 1) << (self.cells - a);
        let first = next_subset(last);
        let low = first & self.low_mask();
        let low_count = low.count_ones();
        debug_assert_eq!(self.offset(low), 0, "a block begins at offset 0");
        Block {
            start: block.end,
            end: block.end + binomial(self.cells, low_count as usize),
            high: first & !self.low_mask(),
            low_count,
        }
    }

    /// Calls `visit(rank, set)` for every rank `first + i` whose bit `i` is set in `marked`
    /// (bit `i % 64` of word `i / 64`), in increasing order, for sets of `k` elements ranked
    /// by `ranker`: a lookup per marked rank within a block, a step per block passed over
    /// (up to a few, then an unrank: a long gap costs one unrank, not a step per block).
    pub fn for_each_marked(
        &self,
        ranker: &SubsetRanker,
        k: u32,
        first: u64,
        marked: &[u64],
        mut visit: impl FnMut(u64, u64),
    ) {
        /// Blocks stepped over before an unrank is cheaper (an unrank scans binomials, a
        /// step is a `next_subset`).
        const STEPS: usize = 8;
        let mut block = Block::NONE;
        for (w, &word) in marked.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let rank = first + w as u64 * 64 + u64::from(bits.trailing_zeros());
                bits &= bits - 1;
                if rank >= block.end {
                    let mut steps = 0;
                    while rank >= block.end && block.end > 0 && steps < STEPS {
                        block = self.next(&block);
                        steps += 1;
                    }
                    if rank >= block.end {
                        let set = ranker.unrank(rank, k);
                        block = self.block_of(set, rank);
                    }
                }
                visit(rank, self.set_at(&block, rank));
            }
        }
    }
}

/// Ranks a stream of sets, each by a lookup while it shares its block with the set before
/// (colex blocks are contiguous ranks, so a sorted stream mostly does): only a set of a new
/// block is ranked in full, and its block's start kept. A stream in no order costs a full rank
/// and a lookup per set — about what ranking each alone costs.
#[derive(Clone, Copy, Debug)]
pub struct BlockCursor {
    /// The high part of the last block ranked (`u64::MAX`, no set's, before the first).
    high: u64,
    /// That block's start.
    start: u64,
}

impl Default for BlockCursor {
    fn default() -> Self {
        BlockCursor::new()
    }
}

impl BlockCursor {
    /// A cursor in no block yet.
    pub const fn new() -> BlockCursor {
        BlockCursor {
            high: u64::MAX,
            start: 0,
        }
    }

    /// The rank of `set` by `ranker` (whose sets `blocks` divides into blocks).
    #[inline(always)]
    pub fn rank(&mut self, blocks: &ColexBlocks, ranker: &SubsetRanker, set: u64) -> u64 {
        let low_mask = blocks.low_mask();
        let offset = blocks.offset(set & low_mask);
        if set & !low_mask != self.high {
            self.high = set & !low_mask;
            self.start = ranker.rank(set) - offset;
        }
        self.start + offset
    }

    /// The start of the block of the set ranked last: the rank of a set sharing its high part
    /// is this plus [`ColexBlocks::offset`] of its low part.
    #[inline(always)]
    pub fn block_start(&self) -> u64 {
        self.start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_rank_and_unrank_like_the_ranker() {
        for (m, cells) in [(24u32, 14usize), (32, 14), (8, 8), (12, 5), (10, 0)] {
            let ranker = SubsetRanker::new(m);
            let blocks = ColexBlocks::new(cells);
            for k in [0u32, 1, 3, m / 2, m - 1] {
                let len = binomial(m as usize, k as usize);
                let mut set = ranker.unrank(0, k);
                let mut block = blocks.block_of(set, 0);
                for rank in 0..len.min(200_000) {
                    if rank == block.end {
                        block = blocks.next(&block);
                    }
                    assert_eq!(block, blocks.block_of(set, rank), "m={m} k={k} rank {rank}");
                    assert_eq!(blocks.set_at(&block, rank), set);
                    assert_eq!(block.start + blocks.offset(set & blocks.low_mask()), rank);
                    set = next_subset(set);
                }
            }
        }
    }

    #[test]
    fn a_cursor_ranks_like_the_ranker_in_any_order() {
        let ranker = SubsetRanker::new(24);
        let blocks = ColexBlocks::new(14);
        let mut cursor = BlockCursor::new();
        let len = binomial(24, 10);
        // Runs of consecutive ranks (mostly one block) between jumps anywhere.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let start = x % len;
            for rank in start..(start + x % 50).min(len) {
                let set = ranker.unrank(rank, 10);
                assert_eq!(cursor.rank(&blocks, &ranker, set), rank, "{set:#x}");
                let offset = blocks.offset(set & blocks.low_mask());
                assert_eq!(cursor.block_start() + offset, rank);
            }
        }
    }

    #[test]
    fn marked_ranks_are_visited_with_their_sets() {
        let (m, k) = (24u32, 10u32);
        let ranker = SubsetRanker::new(m);
        let blocks = ColexBlocks::new(14);
        let len = binomial(m as usize, k as usize);
        // Sparse, dense and clustered marks, from a start inside the slice.
        let first = 64 * 1000;
        let words = 20_000usize;
        let mut marked = vec![0u64; words];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for (w, word) in marked.iter_mut().enumerate() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *word = match w % 1000 {
                0..=99 => x,
                100..=199 => x & x >> 1 & x >> 2,
                200..=209 => u64::MAX,
                _ if w % 97 == 0 => x & x >> 3,
                _ => 0,
            };
        }
        assert!(first + 64 * words as u64 <= len);
        let mut want = Vec::new();
        for (w, &word) in marked.iter().enumerate() {
            for bit in 0..64 {
                if word >> bit & 1 == 1 {
                    let rank = first + 64 * w as u64 + bit;
                    want.push((rank, ranker.unrank(rank, k)));
                }
            }
        }
        let mut have = Vec::new();
        blocks.for_each_marked(&ranker, k, first, &marked, |rank, set| {
            have.push((rank, set))
        });
        assert!(want.len() > 10_000);
        assert_eq!(have, want);
    }
}
