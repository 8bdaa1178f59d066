//! Dense indexing of stone counts: "s identical stones in n holes".
//!
//! Sowing games store a side's holes as a *composition* of its stones into `n` ordered parts
//! (zeros allowed). Written as stars and bars, a composition is the `n - 1` bar positions
//! among `s + n - 1` places, i.e. an `(n - 1)`-subset; its rank is the colex rank of that
//! subset, so the compositions of `s` into `n` holes are numbered `0..C(s + n - 1, n - 1)`.

use crate::binomial::binomial;

/// How many compositions `stones` has into `holes` parts (zeros allowed).
///
/// # Panics
/// If `stones + holes - 1 > 64` (beyond the binomial table), or `holes == 0`.
#[inline]
pub fn compositions(stones: u32, holes: usize) -> u64 {
    binomial(stones as usize + holes - 1, holes - 1)
}

/// The colex rank of the composition `holes` (its stones per hole) among the compositions of
/// its total into `holes.len()` parts.
#[inline]
pub fn rank_composition(holes: &[u8]) -> u64 {
    let mut rank = 0;
    let mut position = 0usize;
    for (j, &c) in holes[..holes.len() - 1].iter().enumerate() {
        position += c as usize;
        rank += binomial(position + j, j + 1);
    }
    rank
}

/// Writes into `out` the composition of `stones` into `out.len()` parts (at most 64) of colex
/// rank `rank`: the inverse of [`rank_composition`].
pub fn unrank_composition(mut rank: u64, stones: u32, out: &mut [u8]) {
    let n = out.len();
    // Bars j = n-2 down to 0 at positions p_j (strictly decreasing), p_j < stones + j + 1.
    let mut high = stones as usize + n - 1; // every remaining bar position is < high
    let mut bars = [0usize; 64];
    for j in (0..n - 1).rev() {
        let mut p = high - 1;
        while binomial(p, j + 1) > rank {
            p -= 1;
        }
        rank -= binomial(p, j + 1);
        bars[j] = p;
        high = p;
    }
    // Stones before bar j: p_j - j; hole j holds the stones between bars j-1 and j.
    let mut before = 0usize;
    for j in 0..n - 1 {
        let upto = bars[j] - j;
        out[j] = (upto - before) as u8;
        before = upto;
    }
    out[n - 1] = (stones as usize - before) as u8;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_composition_round_trips_and_ranks_are_dense() {
        for holes in 1..=5usize {
            for stones in 0..=7u32 {
                let n = compositions(stones, holes);
                let mut seen = vec![false; n as usize];
                let mut out = vec![0u8; holes];
                for r in 0..n {
                    unrank_composition(r, stones, &mut out);
                    assert_eq!(out.iter().map(|&c| c as u32).sum::<u32>(), stones);
                    let back = rank_composition(&out);
                    assert_eq!(back, r, "{out:?}");
                    seen[back as usize] = true;
                }
                assert!(seen.iter().all(|&s| s));
            }
        }
    }
}
