//! The distinct elements of a short list: how the kernel removes duplicate successors and
//! predecessors of one position.
//!
//! Most games have a few dozen moves per position, and then a linear scan on insertion, in a
//! buffer on the stack, is the fastest way to keep them distinct. A game whose moves fan out
//! into thousands (SIMPEI: the clipped pieces may be put back on any free holes) would make
//! that scan quadratic, so past [`INLINE`] elements the buffer spills to the heap, takes
//! everything, and is sorted and deduplicated once when read.

use smallvec::SmallVec;

/// Elements kept on the stack and deduplicated on insertion.
pub const INLINE: usize = 64;

/// A set of small `Copy` values, built by [`Distinct::insert`] and read by
/// [`Distinct::items`].
pub struct Distinct<T: Copy + Ord> {
    items: SmallVec<[T; INLINE]>,
    /// Past `INLINE` elements: duplicates are kept until [`Distinct::items`].
    spilled: bool,
}

impl<T: Copy + Ord> Distinct<T> {
    /// An empty set.
    pub fn new() -> Self {
        Distinct {
            items: SmallVec::new(),
            spilled: false,
        }
    }

    /// Empties the set, keeping any heap buffer for the next position.
    #[inline(always)]
    pub fn clear(&mut self) {
        self.items.clear();
        self.spilled = false;
    }

    /// Adds `x` unless it is there already.
    #[inline(always)]
    pub fn insert(&mut self, x: T) {
        if self.spilled {
            self.items.push(x);
        } else if !self.items.contains(&x) {
            self.spilled = self.items.len() == INLINE;
            self.items.push(x);
        }
    }

    /// The distinct elements (in insertion order while few; sorted after a spill).
    #[inline(always)]
    pub fn items(&mut self) -> &[T] {
        if self.spilled {
            self.items.sort_unstable();
            self.items.dedup();
            self.spilled = false;
        }
        &self.items
    }
}

impl<T: Copy + Ord> Default for Distinct<T> {
    fn default() -> Self {
        Distinct::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_element_once_below_and_above_the_inline_size() {
        for n in [0u32, 1, 10, 64, 65, 3000] {
            let mut set = Distinct::new();
            for round in 0..3 {
                for x in (0..n).rev() {
                    set.insert(x);
                }
                let mut items = set.items().to_vec();
                items.sort_unstable();
                assert_eq!(items, (0..n).collect::<Vec<_>>(), "n={n} round {round}");
            }
            set.clear();
            assert!(set.items().is_empty());
        }
    }
}
