//! Bit runs between bitmaps: the one primitive of bit-parallel move generation.
//!
//! In colex order the positions that differ only in their pieces below some cell form one
//! contiguous run of ranks, ordered the same way whatever the pieces above. So a move that
//! only touches cells at or above that one maps a run of source ranks onto a run of target
//! ranks of the same length and order, and the predecessors of a whole set of positions under
//! it are a list of run copies between bitmaps ([`or_run`]).

/// `dst[to..to + len] |= src[from..from + len]`, bits numbered from the least significant bit
/// of word 0. Any alignment; a word of `dst` is written once per 64 bits of the run (at most
/// two partial words at its ends), the whole words in a shift-and-or loop.
///
/// # Panics
/// If either run reaches past its bitmap.
#[inline]
pub fn or_run(dst: &mut [u64], to: u64, src: &[u64], from: u64, len: u64) {
    assert!(to + len <= dst.len() as u64 * 64 && from + len <= src.len() as u64 * 64);
    // The head: up to the next word boundary of `dst`.
    let head = ((64 - to % 64) % 64).min(len);
    if head > 0 {
        dst[(to / 64) as usize] |= read(src, from, head) << (to % 64);
    }
    let (to, from, len) = (to + head, from + head, len - head);
    // Whole words of `dst`: each the same two source words shifted (a loop the compiler
    // unrolls and vectorises).
    let words = (len / 64) as usize;
    let at = (to / 64) as usize;
    let word = (from / 64) as usize;
    let shift = (from % 64) as u32;
    let out = &mut dst[at..at + words];
    if shift == 0 {
        for (d, s) in out.iter_mut().zip(&src[word..word + words]) {
            *d |= s;
        }
    } else {
        // The last whole word reads into `src[word + words]`, which exists: the run's bits
        // reach past word `word + words - 1` of `src` when `shift > 0`.
        for (d, s) in out.iter_mut().zip(src[word..word + words + 1].windows(2)) {
            *d |= s[0] >> shift | s[1] << (64 - shift);
        }
    }
    // The tail.
    let tail = len % 64;
    if tail > 0 {
        dst[at + words] |= read(src, from + words as u64 * 64, tail);
    }
}

/// The `len` (1..=64) bits of `src` from bit `from`, as the low bits of a word.
#[inline(always)]
fn read(src: &[u64], from: u64, len: u64) -> u64 {
    let word = (from / 64) as usize;
    let shift = (from % 64) as u32;
    let mut bits = src[word] >> shift;
    if u64::from(shift) + len > 64 {
        bits |= src[word + 1] << (64 - shift);
    }
    if len < 64 {
        bits &= (1u64 << len) - 1;
    }
    bits
}

/// Sets bit `i` of `bits`.
#[inline(always)]
pub fn set_bit(bits: &mut [u64], i: u64) {
    bits[(i / 64) as usize] |= 1 << (i % 64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn get(bits: &[u64], i: u64) -> bool {
        bits[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    proptest! {
        #[test]
        fn or_run_is_bit_by_bit_or(
            src in proptest::collection::vec(any::<u64>(), 4),
            dst in proptest::collection::vec(any::<u64>(), 4),
            to in 0u64..256,
            from in 0u64..256,
            len in 0u64..256,
        ) {
            let len = len.min(256 - to).min(256 - from);
            let mut fast = dst.clone();
            or_run(&mut fast, to, &src, from, len);
            let mut slow = dst.clone();
            for j in 0..len {
                if get(&src, from + j) {
                    set_bit(&mut slow, to + j);
                }
            }
            prop_assert_eq!(fast, slow);
        }
    }
}
