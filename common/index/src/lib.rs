//! Dense indexing of piece sets.
//!
//! A retrograde solver stores one value per position in flat arrays, so it needs a bijection
//! between the positions of a slice and `0..len`. For games whose positions are "k identical
//! pieces on m cells", the natural bijection is the *colex rank* of the k-subset: the subsets of
//! size k, ordered by their bitmask read as an integer, numbered from 0. This crate provides that
//! rank and its inverse ([`SubsetRanker`]), sequential enumeration in rank order
//! ([`next_subset`]), offsets and sets within colex blocks by table ([`ColexBlocks`]), the
//! removal of one cell from a bitmask ([`squeeze`]/[`unsqueeze`]), fast permutation of bitmasks
//! ([`BitPermutation`]) for symmetry reduction, and bit-run copies between bitmaps
//! ([`or_run`]). Sowing games, whose holes hold any number of stones, rank a side's stones as a
//! composition ([`rank_composition`]).
//!
//! Everything here is game-agnostic and allocation-free on the hot path.

#![warn(missing_docs)]

/// `$this.$method::<C>($arg)` with `C` the constant for the table chunk count `$chunks` (1 to
/// 8; larger counts take 8): the one predictable dispatch before straight-line lookups that the
/// rankers and permutations of this crate make on their constant chunk count.
macro_rules! by_chunks {
    ($chunks:expr, $this:ident.$method:ident($arg:expr)) => {
        match $chunks {
            1 => $this.$method::<1>($arg),
            2 => $this.$method::<2>($arg),
            3 => $this.$method::<3>($arg),
            4 => $this.$method::<4>($arg),
            5 => $this.$method::<5>($arg),
            6 => $this.$method::<6>($arg),
            7 => $this.$method::<7>($arg),
            _ => $this.$method::<8>($arg),
        }
    };
}

mod binomial;
mod bits;
mod blocks;
mod composition;
mod gap;
mod permutation;
mod subset;

pub use binomial::binomial;
pub use bits::{
    or_run, prefetch, set_bit, DelayRing, DirectBits, QueuedRuns, ScatteredBits, SetBits,
    BLOCK_STREAMS, LARGE_BITMAP_WORDS,
};
pub use blocks::{BlockCursor, ColexBlocks, MAX_LOW_CELLS};
pub use composition::{compositions, rank_composition, unrank_composition};
pub use gap::{squeeze, unsqueeze};
pub use permutation::{BitPermutation, PermutationSet};
pub use subset::{next_subset, SubsetRanker};
