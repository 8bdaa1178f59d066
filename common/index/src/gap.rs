//! Removing one cell from a bitmask, and putting it back.
//!
//! A slice of Sixteen Musashi fixes the black piece on point `b`; the brown pieces then occupy a
//! subset of the *other* `n - 1` points. Squeezing bit `b` out of the mask turns that subset into
//! an (n-1)-bit mask that can be ranked densely, with no holes for the impossible "brown on b".

/// Removes bit `gap` from `mask` (which must not contain it), shifting higher bits down by one.
#[inline(always)]
pub fn squeeze(mask: u64, gap: u32) -> u64 {
    let low = (1u64 << gap) - 1;
    (mask & low) | ((mask >> 1) & !low)
}

/// Inverse of [`squeeze`]: opens an empty bit at position `gap`.
#[inline(always)]
pub fn unsqueeze(mask: u64, gap: u32) -> u64 {
    let low = (1u64 << gap) - 1;
    (mask & low) | ((mask & !low) << 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for gap in 0..40 {
            for mask in [0u64, 1, 0b1011, 0xdead_beef, (1 << 39) - 1] {
                let m = mask & !(1u64 << gap) & ((1 << 40) - 1);
                assert_eq!(unsqueeze(squeeze(m, gap), gap), m);
                assert_eq!(squeeze(m, gap).count_ones(), m.count_ones());
            }
        }
    }
}
