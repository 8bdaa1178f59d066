//! Sorted keys as LEB128 varints of their gaps (each key's difference from the one before,
//! the first from zero): how the value log codes its blocks and how a checkpoint and a split
//! stage's messages store lists, before zstd.
//!
//! Dense lists have gaps below 128, one byte each, so the encoder keeps the output out of its
//! per-key work: it writes a run of keys into a stack buffer sized for the worst case (10 bytes
//! a key) and appends the run to the output at once.

/// Keys encoded into the stack buffer before it is appended to the output.
const RUN: usize = 1024;

/// The most bytes a gap takes (64 bits in 7-bit groups).
const MAX_VARINT: usize = 10;

/// Appends the varint gaps of `keys` (ascending; equal keys give gaps of zero) to `out`.
pub fn encode_gaps(keys: impl Iterator<Item = u64>, out: &mut Vec<u8>) {
    encode_gaps_after(0, keys, out);
}

/// [`encode_gaps`] of keys that follow `last` (the first gap is taken from it): the encoding
/// of a list cut into runs is the runs' encodings, each after the last key of the one before,
/// one after the other — so the runs can be encoded in parallel.
pub fn encode_gaps_after(mut last: u64, keys: impl Iterator<Item = u64>, out: &mut Vec<u8>) {
    let mut buffer = [0u8; RUN * MAX_VARINT];
    let mut used = 0;
    let mut in_run = 0;
    // Internal iteration: chained pieces of a list are folded piece by piece.
    keys.for_each(|key| {
        debug_assert!(key >= last, "keys are sorted");
        used += write_varint(key - last, &mut buffer[used..]);
        last = key;
        in_run += 1;
        if in_run == RUN {
            out.extend_from_slice(&buffer[..used]);
            used = 0;
            in_run = 0;
        }
    });
    out.extend_from_slice(&buffer[..used]);
}

/// Writes `gap` as a LEB128 varint at the start of `out` (which must have room: up to 10
/// bytes, 5 for a gap of 32 bits); returns the bytes written.
#[inline]
pub fn write_varint(mut gap: u64, out: &mut [u8]) -> usize {
    let mut used = 0;
    while gap >= 0x80 {
        out[used] = gap as u8 | 0x80;
        used += 1;
        gap >>= 7;
    }
    out[used] = gap as u8;
    used + 1
}

/// Reads the varint at `bytes[*at..]` and moves `at` past it.
#[inline]
fn read_varint(bytes: &[u8], at: &mut usize) -> Result<u64, GapError> {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let Some(&byte) = bytes.get(*at) else {
            return Err(GapError::CutOff);
        };
        if shift > 63 {
            return Err(GapError::Overlong);
        }
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
        shift += 7;
    }
}

/// The keys whose gaps [`encode_gaps`] wrote to some bytes, decoded as they are read: for
/// bytes this process wrote itself (a spilled list's scratch file), which cannot be damaged
/// short of the hardware; a damaged encoding ends the keys early (in debug builds it panics).
#[derive(Clone, Debug)]
pub struct Gaps<'a> {
    bytes: &'a [u8],
    at: usize,
    key: u64,
}

impl<'a> Gaps<'a> {
    /// The keys of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Gaps<'a> {
        Gaps {
            bytes,
            at: 0,
            key: 0,
        }
    }
}

impl Iterator for Gaps<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.at == self.bytes.len() {
            return None;
        }
        let gap = read_varint(self.bytes, &mut self.at);
        debug_assert!(gap.is_ok(), "a damaged gap in bytes of this process");
        self.key = self.key.checked_add(gap.ok()?)?;
        Some(self.key)
    }
}

/// Why gaps could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GapError {
    /// A varint runs past 64 bits.
    Overlong,
    /// A key would exceed 64 bits.
    KeyOverflow,
    /// The bytes end inside a varint.
    CutOff,
}

impl std::fmt::Display for GapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GapError::Overlong => "a varint is longer than 64 bits",
            GapError::KeyOverflow => "a key is larger than 64 bits",
            GapError::CutOff => "the last varint is cut off",
        })
    }
}

impl std::error::Error for GapError {}

/// Calls `visit` with each key whose gaps [`encode_gaps`] wrote to `bytes`, in order; fails on
/// a damaged encoding (after visiting the keys before the damage).
pub fn decode_gaps(bytes: &[u8], mut visit: impl FnMut(u64)) -> Result<(), GapError> {
    let mut key = 0u64;
    let mut at = 0;
    while at < bytes.len() {
        let gap = read_varint(bytes, &mut at)?;
        key = key.checked_add(gap).ok_or(GapError::KeyOverflow)?;
        visit(key);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(bytes: &[u8]) -> Result<Vec<u64>, GapError> {
        let mut keys = Vec::new();
        decode_gaps(bytes, |k| keys.push(k)).map(|()| keys)
    }

    #[test]
    fn gaps_round_trip_across_runs_and_widths() {
        // Gaps of every varint width, equal keys, the largest key, and more keys than a run.
        let mut keys = vec![0u64, 0, 1, 127, 128, 16_511, 1 << 40, (1 << 40) + 3];
        keys.extend((0..3 * RUN as u64).map(|k| (1 << 41) + k * 200));
        keys.push(u64::MAX);
        let mut bytes = Vec::new();
        encode_gaps(keys.iter().copied(), &mut bytes);
        assert_eq!(decoded(&bytes).unwrap(), keys);
        // A gap below 128 is one byte; 128 takes two.
        let mut small = Vec::new();
        encode_gaps([5u64, 133].into_iter(), &mut small);
        assert_eq!(small, [5, 0x80, 0x01]);
        // Appends after what `out` holds.
        let mut after = vec![9u8];
        encode_gaps([3u64].into_iter(), &mut after);
        assert_eq!(after, [9, 3]);
    }

    #[test]
    fn damaged_gaps_are_errors() {
        assert_eq!(decoded(&[0x80]), Err(GapError::CutOff));
        assert_eq!(decoded(&[0xFF; 11]), Err(GapError::Overlong));
        let mut near_max = Vec::new();
        encode_gaps([u64::MAX].into_iter(), &mut near_max);
        near_max.push(1);
        assert_eq!(decoded(&near_max), Err(GapError::KeyOverflow));
    }
}
