//! Applying a permutation of cells to a bitmask, one table lookup per byte.
//!
//! Symmetry reduction maps every position to a canonical image; that means permuting the bits
//! of a piece mask many times per generated move, so it must be cheap.

/// A permutation of up to 64 cells, applied to bitmasks with one lookup per input byte.
#[derive(Clone, Debug)]
pub struct BitPermutation {
    map: Vec<u32>,
    chunks: usize,
    /// `table[chunk * 256 + byte]`: the image of `byte << (8 * chunk)`.
    table: Vec<u64>,
}

impl BitPermutation {
    /// Builds the permutation that sends cell `i` to cell `map[i]`.
    ///
    /// # Panics
    /// If `map` is longer than 64 or is not a permutation of `0..map.len()`.
    pub fn new(map: &[u32]) -> Self {
        assert!(map.len() <= 64);
        let mut seen = vec![false; map.len()];
        for &m in map {
            assert!(
                (m as usize) < map.len() && !seen[m as usize],
                "not a permutation: {map:?}"
            );
            seen[m as usize] = true;
        }
        let chunks = map.len().div_ceil(8).max(1);
        let mut table = vec![0u64; chunks * 256];
        for chunk in 0..chunks {
            for byte in 0..256usize {
                let mut image = 0u64;
                for bit in 0..8 {
                    let cell = chunk * 8 + bit;
                    if byte >> bit & 1 == 1 && cell < map.len() {
                        image |= 1u64 << map[cell];
                    }
                }
                table[chunk * 256 + byte] = image;
            }
        }
        BitPermutation {
            map: map.to_vec(),
            chunks,
            table,
        }
    }

    /// Where cell `i` goes.
    #[inline]
    pub fn cell(&self, i: usize) -> usize {
        self.map[i] as usize
    }

    /// The cell map.
    pub fn map(&self) -> &[u32] {
        &self.map
    }

    /// The image of `mask` (bits beyond the permutation's size must be clear).
    #[inline(always)]
    pub fn apply(&self, mask: u64) -> u64 {
        by_chunks!(self.chunks, self.apply_chunks(mask))
    }

    /// Whether the permutation maps `mask` onto itself (bits beyond its size must be clear).
    /// Checked a byte at a time, stopping at the first byte whose image leaves `mask`: a
    /// random mask is usually rejected after one or two lookups, where [`Self::apply`] always
    /// takes one per byte.
    #[inline(always)]
    pub fn fixes(&self, mask: u64) -> bool {
        (0..self.chunks).all(|chunk| {
            self.table[chunk * 256 + (mask >> (8 * chunk) & 0xff) as usize] & !mask == 0
        })
    }

    #[inline(always)]
    fn apply_chunks<const CHUNKS: usize>(&self, mask: u64) -> u64 {
        let mut image = 0u64;
        for chunk in 0..CHUNKS {
            image |= self.table[chunk * 256 + (mask >> (8 * chunk) & 0xff) as usize];
        }
        image
    }
}

/// Several permutations of the same cells with their tables side by side, for one question
/// asked of all of them at once: does any map a mask below itself (is the mask not the
/// smallest of its images)? Asked of a symmetry group's stabiliser for every slot of a sweep,
/// through [`BitPermutation::apply`] it cost an indirection and a dispatch on the table size
/// per permutation; here the size is dispatched once and the tables are read in a row.
#[derive(Clone, Debug, Default)]
pub struct PermutationSet {
    chunks: usize,
    /// The permutations' tables ([`BitPermutation`]'s `table`), one after another.
    tables: Vec<u64>,
}

impl PermutationSet {
    /// The set of `permutations`, in that order (the order in which they are tried).
    ///
    /// # Panics
    /// If the permutations do not all have the same number of table chunks.
    pub fn new<'a>(permutations: impl IntoIterator<Item = &'a BitPermutation>) -> Self {
        let mut set = PermutationSet::default();
        for p in permutations {
            assert!(
                set.tables.is_empty() || p.chunks == set.chunks,
                "permutations of different sizes"
            );
            set.chunks = p.chunks;
            set.tables.extend_from_slice(&p.table);
        }
        set
    }

    /// Whether some permutation of the set maps `mask` to a smaller mask (bits beyond the
    /// permutations' size must be clear). False for an empty set. Stops at the first.
    #[inline(always)]
    pub fn maps_below(&self, mask: u64) -> bool {
        if self.chunks == 0 {
            return false;
        }
        by_chunks!(self.chunks, self.maps_below_chunks(mask))
    }

    /// The smallest image of `mask` under the set's permutations (bits beyond their size must
    /// be clear); `u64::MAX` for an empty set.
    #[inline(always)]
    pub fn smallest_image(&self, mask: u64) -> u64 {
        if self.chunks == 0 {
            return u64::MAX;
        }
        by_chunks!(self.chunks, self.smallest_image_chunks(mask))
    }

    #[inline(always)]
    fn smallest_image_chunks<const CHUNKS: usize>(&self, mask: u64) -> u64 {
        let mut smallest = u64::MAX;
        for table in self.tables.chunks_exact(CHUNKS * 256) {
            let mut image = 0u64;
            for chunk in 0..CHUNKS {
                image |= table[chunk * 256 + (mask >> (8 * chunk) & 0xff) as usize];
            }
            smallest = smallest.min(image);
        }
        smallest
    }

    #[inline(always)]
    fn maps_below_chunks<const CHUNKS: usize>(&self, mask: u64) -> bool {
        for table in self.tables.chunks_exact(CHUNKS * 256) {
            let mut image = 0u64;
            for chunk in 0..CHUNKS {
                image |= table[chunk * 256 + (mask >> (8 * chunk) & 0xff) as usize];
            }
            if image < mask {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_maps_below_when_one_of_its_permutations_does_and_finds_the_smallest_image() {
        // Permutations of 25 cells (four table chunks): a reflection, a rotation by 5, a swap.
        let n = 25u32;
        let maps: [Vec<u32>; 3] = [
            (0..n).map(|i| n - 1 - i).collect(),
            (0..n).map(|i| (i + 5) % n).collect(),
            (0..n).map(|i| if i < 2 { 1 - i } else { i }).collect(),
        ];
        let perms: Vec<BitPermutation> = maps.iter().map(|m| BitPermutation::new(m)).collect();
        assert!(!PermutationSet::new([]).maps_below(0b1010));
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mask = state & ((1 << n) - 1);
            for take in 0..=perms.len() {
                let set = PermutationSet::new(&perms[..take]);
                let want = perms[..take].iter().any(|p| p.apply(mask) < mask);
                assert_eq!(set.maps_below(mask), want, "{mask:#x} with {take}");
                let smallest = perms[..take].iter().map(|p| p.apply(mask)).min();
                assert_eq!(set.smallest_image(mask), smallest.unwrap_or(u64::MAX));
            }
        }
    }

    #[test]
    fn reverses_bits() {
        let n = 25u32;
        let map: Vec<u32> = (0..n).map(|i| n - 1 - i).collect();
        let p = BitPermutation::new(&map);
        for mask in [0u64, 1, 0b101, 0x1ff_ffff, 0x0a5_5a5a] {
            let mut expected = 0u64;
            for i in 0..n {
                if mask >> i & 1 == 1 {
                    expected |= 1 << (n - 1 - i);
                }
            }
            assert_eq!(p.apply(mask), expected);
        }
    }

    #[test]
    fn fixes_exactly_the_masks_it_maps_onto_themselves() {
        // A reflection of 20 cells (three bytes) and a 5-cycle with a fixed rest.
        let reflection: Vec<u32> = (0..20).map(|i| 19 - i).collect();
        let cycle: Vec<u32> = (0..20)
            .map(|i| if i < 5 { (i + 1) % 5 } else { i })
            .collect();
        for map in [reflection, cycle] {
            let p = BitPermutation::new(&map);
            let mut fixed = 0;
            for mask in (0u64..1 << 20)
                .step_by(7)
                .chain([0, 0b11111, 0xf_ffff, 0x8_0001])
            {
                assert_eq!(p.fixes(mask), p.apply(mask) == mask, "{map:?} {mask:#x}");
                fixed += usize::from(p.fixes(mask));
            }
            assert!(fixed > 3, "{map:?}: too few fixed masks tried");
        }
    }
}
