//! Colex ranking of k-subsets of an m-set, with byte-sized lookup tables.
//!
//! The colex rank of a subset `{p_0 < p_1 < ... < p_{k-1}}` is `sum_i C(p_i, i + 1)`. It orders
//! subsets of one size exactly as their bitmasks order as integers, so enumerating ranks
//! `0, 1, 2, ...` is the same as stepping through masks with Gosper's hack ([`next_subset`]).
//!
//! Ranking is on the hot path of the solver (once per generated move), so it is done with one
//! table lookup per byte of the mask: the contribution of a byte depends only on the byte, its
//! position, and how many set bits lie below it.

use crate::binomial::binomial;

/// Ranks and unranks subsets of `{0, .., m-1}` (m <= 63) in colex order.
#[derive(Clone)]
pub struct SubsetRanker {
    m: u32,
    chunks: usize,
    /// `table[(chunk * (m + 1) + below) * 256 + byte]`: the rank contribution of `byte` at
    /// chunk `chunk` when `below` elements lie in lower chunks.
    table: Vec<u64>,
    /// The same table in 32 bits when every rank fits (m <= 34): half the cache footprint, which
    /// keeps the part a solve touches in L1.
    narrow: Option<Vec<u32>>,
    /// `2^m - 1`.
    cells_mask: u64,
}

impl SubsetRanker {
    /// Builds the tables for subsets of an `m`-element set.
    ///
    /// # Panics
    /// If `m > 63`.
    pub fn new(m: u32) -> Self {
        assert!(m <= 63, "subset ranker supports at most 63 cells, got {m}");
        let chunks = (m as usize).div_ceil(8).max(1);
        let stride = m as usize + 1;
        let mut table = vec![0u64; chunks * stride * 256];
        for chunk in 0..chunks {
            for below in 0..stride {
                for byte in 0..256usize {
                    let mut sum = 0u64;
                    let mut index = below;
                    for bit in 0..8 {
                        if byte >> bit & 1 == 1 {
                            let p = chunk * 8 + bit;
                            index += 1;
                            if p < 64 {
                                sum = sum.wrapping_add(binomial(p, index));
                            }
                        }
                    }
                    table[(chunk * stride + below) * 256 + byte] = sum;
                }
            }
        }
        let max_rank = (0..=m as usize)
            .map(|k| binomial(m as usize, k))
            .max()
            .unwrap_or(1);
        let narrow =
            (max_rank <= u64::from(u32::MAX)).then(|| table.iter().map(|&v| v as u32).collect());
        SubsetRanker {
            m,
            chunks,
            table,
            narrow,
            cells_mask: (1u64 << m) - 1,
        }
    }

    /// The number of cells `m`.
    pub fn cells(&self) -> u32 {
        self.m
    }

    /// Colex rank of `mask` among subsets of the same size. Bits at or above `m` are ignored.
    #[inline(always)]
    pub fn rank(&self, mask: u64) -> u64 {
        // One predictable dispatch on the ranker's constant chunk count, then straight-line
        // lookups: this runs once per generated move in the solver.
        by_chunks!(self.chunks, self.rank_chunks(mask))
    }

    #[inline(always)]
    fn rank_chunks<const CHUNKS: usize>(&self, mask: u64) -> u64 {
        // Clearing bits at or above `m` bounds every index below: `chunk < CHUNKS == chunks`,
        // `below <= m` (set bits of lower chunks), `byte < 256`, so
        // `(chunk * (m + 1) + below) * 256 + byte < chunks * (m + 1) * 256 == table.len()`.
        let mask = mask & self.cells_mask;
        debug_assert_eq!(CHUNKS, self.chunks);
        let chunk_stride = (self.m as usize + 1) * 256;
        let mut rank = 0u64;
        let mut below = 0usize;
        match &self.narrow {
            Some(narrow) => {
                for chunk in 0..CHUNKS {
                    let byte = (mask >> (8 * chunk) & 0xff) as usize;
                    let index = chunk * chunk_stride + below * 256 + byte;
                    // SAFETY: in bounds by the argument above.
                    rank += u64::from(unsafe { *narrow.get_unchecked(index) });
                    below += byte.count_ones() as usize;
                }
            }
            None => {
                for chunk in 0..CHUNKS {
                    let byte = (mask >> (8 * chunk) & 0xff) as usize;
                    let index = chunk * chunk_stride + below * 256 + byte;
                    // SAFETY: in bounds by the argument above.
                    rank += unsafe { *self.table.get_unchecked(index) };
                    below += byte.count_ones() as usize;
                }
            }
        }
        rank
    }

    /// The subset of size `k` whose colex rank is `rank`.
    ///
    /// # Panics
    /// If `rank >= C(m, k)`.
    pub fn unrank(&self, mut rank: u64, k: u32) -> u64 {
        assert!(
            rank < binomial(self.m as usize, k as usize),
            "rank {rank} out of range for C({}, {k})",
            self.m
        );
        // The elements from the largest down: the `i`-th from the top is the largest `p`
        // below the one above it with `C(p, i) <= rank`. `C(p, i)` grows with `p`, so one
        // downward scan over all elements finds them (at most `m + k` predictable steps, where
        // a binary search per element took `k log m` unpredictable ones).
        let mut mask = 0u64;
        let mut p = self.m as usize;
        for i in (1..=k as usize).rev() {
            p -= 1;
            // Stops at `p = i - 1` at the latest, where `C(p, i) = 0`.
            while binomial(p, i) > rank {
                p -= 1;
            }
            mask |= 1u64 << p;
            rank -= binomial(p, i);
        }
        mask
    }
}

/// The next larger integer with the same number of set bits (Gosper's hack); this is the subset
/// of next colex rank. Returns a value `>= 2^m` after the last subset of an m-set.
#[inline(always)]
pub fn next_subset(mask: u64) -> u64 {
    if mask == 0 {
        return u64::MAX; // the empty set is the only subset of size 0
    }
    let lowest = mask & mask.wrapping_neg();
    let ripple = mask.wrapping_add(lowest);
    if ripple == 0 {
        return u64::MAX;
    }
    // `lowest` is a power of two: divide by shifting (a 64-bit division costs tens of cycles,
    // and this runs once per slot of every sweep).
    (((ripple ^ mask) >> 2) >> lowest.trailing_zeros()) | ripple
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bijection_on_small_sets() {
        for m in 0..=12u32 {
            let ranker = SubsetRanker::new(m);
            for k in 0..=m {
                let count = binomial(m as usize, k as usize);
                let mut mask = (1u64 << k) - 1;
                for expected in 0..count {
                    assert!(mask < 1 << m);
                    assert_eq!(ranker.rank(mask), expected, "m={m} k={k} mask={mask:b}");
                    assert_eq!(ranker.unrank(expected, k), mask);
                    mask = next_subset(mask);
                }
                assert!(
                    k == 0 || mask >= 1 << m,
                    "enumeration did not stop, m={m} k={k}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn round_trip_large(m in 1u32..=63, seed in any::<u64>()) {
            let ranker = SubsetRanker::new(m);
            let mask = seed & ((1u64 << m) - 1);
            let k = mask.count_ones();
            let rank = ranker.rank(mask);
            prop_assert!(rank < binomial(m as usize, k as usize));
            prop_assert_eq!(ranker.unrank(rank, k), mask);
        }

        #[test]
        fn rank_is_monotone(m in 2u32..=63, a in any::<u64>(), b in any::<u64>()) {
            let ranker = SubsetRanker::new(m);
            let full = (1u64 << m) - 1;
            let (a, b) = (a & full, b & full);
            if a.count_ones() == b.count_ones() {
                prop_assert_eq!(a.cmp(&b), ranker.rank(a).cmp(&ranker.rank(b)));
            }
        }
    }
}
