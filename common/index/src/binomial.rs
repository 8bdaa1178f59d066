//! Binomial coefficients for n <= 64, computed once at compile time.

/// The largest `n` for which [`binomial`] is tabulated.
pub const MAX_N: usize = 64;

const fn build() -> [[u64; MAX_N + 1]; MAX_N + 1] {
    let mut t = [[0u64; MAX_N + 1]; MAX_N + 1];
    let mut n = 0;
    while n <= MAX_N {
        t[n][0] = 1;
        let mut k = 1;
        while k <= n {
            // C(64, 32) < 2^64, so no row of this table overflows.
            t[n][k] = t[n - 1][k - 1].wrapping_add(if k < n { t[n - 1][k] } else { 0 });
            k += 1;
        }
        n += 1;
    }
    t
}

static TABLE: [[u64; MAX_N + 1]; MAX_N + 1] = build();

/// `C(n, k)`, the number of k-subsets of an n-set; 0 when `k > n`.
///
/// # Panics
/// If `n > 64`.
#[inline]
pub fn binomial(n: usize, k: usize) -> u64 {
    if k > n {
        0
    } else {
        TABLE[n][k]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(binomial(24, 12), 2_704_156);
        assert_eq!(binomial(32, 16), 601_080_390);
        assert_eq!(binomial(64, 32), 1_832_624_140_942_590_534);
        assert_eq!(binomial(5, 7), 0);
        assert_eq!(binomial(0, 0), 1);
    }

    #[test]
    fn rows_sum_to_powers_of_two() {
        for n in 0..=40 {
            let sum: u64 = (0..=n).map(|k| binomial(n, k)).sum();
            assert_eq!(sum, 1u64 << n, "row {n}");
        }
    }
}
