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

/// Bits set between a queued bit and its write: how many cache misses may be in flight.
const SCATTER_DEPTH: usize = 8;

/// Bitmaps of at least this many words (2 MiB, one huge page) are *large*: past the private
/// caches, worth huge pages, and set through [`ScatteredBits`]. Smaller ones stay in the
/// caches, where a prefetch queue only adds instructions: their bits are set directly
/// ([`DirectBits`]). Measured on BOARD25, whose bitmaps are at most 338 KB: the queue and a
/// fresh huge-page map per bitmap made the whole solve 1.08x slower.
pub const LARGE_BITMAP_WORDS: usize = (2 << 20) / 8;

/// ORs `word` into bits `at..at + 64` of `bits` (bit `j` of `word` into bit `at + j`). Bits of
/// `word` that would fall past the bitmap's end must be zero.
#[inline(always)]
fn or_word(bits: &mut [u64], at: u64, word: u64) {
    let (w, shift) = ((at / 64) as usize, (at % 64) as u32);
    bits[w] |= word << shift;
    if shift != 0 {
        let spill = word >> (64 - shift);
        if spill != 0 {
            bits[w + 1] |= spill;
        }
    }
}

/// Streams of bits set by block ([`SetBits::enter_block`]): a marking keeps one per image of
/// a key under the slice's symmetries, at most eight.
pub const BLOCK_STREAMS: usize = 8;

/// Sets bits of two bitmaps (0 and 1): the operations bit-parallel marking needs, with or
/// without the latency overlapped.
///
/// Besides single bits anywhere, a marking sets bits in *streams*: each stream's bits fall in
/// runs of ranks (colex blocks) where it stays for a while, and its bits there are given as
/// offsets from the run's start ([`SetBits::enter_block`], [`SetBits::set_in_block`]).
pub trait SetBits {
    /// Sets bit `i` of bitmap `map` (0 or 1); it is written at the latest when `self` is
    /// dropped.
    fn set(&mut self, map: usize, i: u64);

    /// Stream `stream` (below [`BLOCK_STREAMS`]) sets its next bits in the block starting at
    /// rank `start`.
    fn enter_block(&mut self, stream: usize, start: u64);

    /// Sets bit `start + offset` of bitmap `map`, `start` that of `stream`'s block; it is
    /// written at the latest when `self` is dropped.
    fn set_in_block(&mut self, stream: usize, map: usize, offset: u64);
}

/// [`SetBits`] by [`set_bit`], at once: for bitmaps that fit the caches.
pub struct DirectBits<'a> {
    maps: [&'a mut [u64]; 2],
    /// Each stream's block start.
    starts: [u64; BLOCK_STREAMS],
}

impl<'a> DirectBits<'a> {
    /// Setting bits of `first` (bitmap 0) and `second` (bitmap 1).
    pub fn new(first: &'a mut [u64], second: &'a mut [u64]) -> DirectBits<'a> {
        DirectBits {
            maps: [first, second],
            starts: [0; BLOCK_STREAMS],
        }
    }
}

impl SetBits for DirectBits<'_> {
    #[inline(always)]
    fn set(&mut self, map: usize, i: u64) {
        set_bit(self.maps[map], i);
    }

    #[inline(always)]
    fn enter_block(&mut self, stream: usize, start: u64) {
        self.starts[stream] = start;
    }

    #[inline(always)]
    fn set_in_block(&mut self, stream: usize, map: usize, offset: u64) {
        set_bit(self.maps[map], self.starts[stream] + offset);
    }
}

/// Sets scattered bits of two large bitmaps with the memory latency overlapped.
///
/// Setting a bit is a read-modify-write of its word; in a bitmap far larger than the caches,
/// with bits in no order (the predecessors of a frontier), nearly every one misses, and one
/// miss at a time leaves the core waiting. Here a bit's word is prefetched when the bit is
/// queued and written [`SCATTER_DEPTH`] bits later, so that many misses are in flight at
/// once. A stream's bits in its block are gathered in a buffer instead (`BlockBuffer`). The
/// bits set are exactly those of [`set_bit`] on each bitmap; the last queued and gathered ones
/// are written when it is dropped.
pub struct ScatteredBits<'a> {
    maps: [&'a mut [u64]; 2],
    /// Queued bits, `(bitmap, index)`, written in queue order.
    queue: DelayRing<(usize, u64), SCATTER_DEPTH>,
    /// Each stream's bits in its block.
    buffers: Box<[BlockBuffer; BLOCK_STREAMS]>,
}

impl<'a> ScatteredBits<'a> {
    /// Setting bits of `first` (bitmap 0) and `second` (bitmap 1).
    pub fn new(first: &'a mut [u64], second: &'a mut [u64]) -> ScatteredBits<'a> {
        ScatteredBits {
            maps: [first, second],
            queue: DelayRing::new(),
            buffers: Box::new(std::array::from_fn(|_| BlockBuffer::new())),
        }
    }
}

impl SetBits for ScatteredBits<'_> {
    /// Queues bit `i` of bitmap `map` (0 or 1), writing the bit queued [`SCATTER_DEPTH`]
    /// before it.
    ///
    /// # Panics
    /// If `map` is not 0 or 1, or `i` is past its bitmap (at once: the prefetch indexes it).
    #[inline(always)]
    fn set(&mut self, map: usize, i: u64) {
        prefetch(&self.maps[map][(i / 64) as usize]);
        if let Some((due_map, due)) = self.queue.push((map, i)) {
            set_bit(self.maps[due_map], due);
        }
    }

    /// Writes the stream's bits gathered in another block, if it was in one.
    #[inline(always)]
    fn enter_block(&mut self, stream: usize, start: u64) {
        self.buffers[stream].move_to(start, &mut self.maps);
    }

    #[inline(always)]
    fn set_in_block(&mut self, stream: usize, map: usize, offset: u64) {
        let buffer = &mut self.buffers[stream];
        if !buffer.set(map, offset, &self.maps) {
            let i = buffer.start + offset;
            self.set(map, i);
        }
    }
}

impl Drop for ScatteredBits<'_> {
    /// Writes the bits still queued and gathered.
    fn drop(&mut self) {
        for (map, i) in self.queue.drain() {
            set_bit(self.maps[map], i);
        }
        for buffer in self.buffers.iter_mut() {
            buffer.flush(&mut self.maps);
        }
    }
}

/// Words of a [`BlockBuffer`]: blocks of up to 4,096 sets are gathered whole (below 14 low
/// cells a block holds at most `C(14, 7)` = 3,432 sets).
const BLOCK_WORDS: usize = 64;

/// The bits of one run of ranks (a colex block) of two large bitmaps, gathered in a buffer of
/// its own before they are written.
///
/// A sorted stream of sets mostly stays in one block, and the bits its marking sets there (a
/// member and the un-moves between its lowest points) fall within a few lines of the
/// bitmaps. Each through the prefetch queue was a prefetch, a queue slot and a
/// read-modify-write of a large bitmap's word (measured on BOARD33 `browns=10` out of core:
/// 69% of the marking's samples, most on the queue's waits for its lines). Here a bit is an
/// OR into this buffer, which stays in L1; a word's line of the bitmap is prefetched when the
/// word gets its first bit, and the gathered words are OR-ed in when the buffer moves to
/// another block or is flushed — a write per word, not per bit. (Bitmaps that stay in the
/// caches gain nothing from it: BOARD25 was 1.15x slower through buffers, measured.)
struct BlockBuffer {
    /// The rank of the block's first set: bit `j` of the buffer is bit `start + j` of its
    /// bitmap.
    start: u64,
    /// The gathered bits of each bitmap.
    words: [[u64; BLOCK_WORDS]; 2],
    /// Which of `words` hold bits, per bitmap (bit `w`: word `w`).
    dirty: [u64; 2],
}

impl BlockBuffer {
    /// An empty buffer (in the block at 0, which it has no bits of).
    fn new() -> BlockBuffer {
        BlockBuffer {
            start: 0,
            words: [[0; BLOCK_WORDS]; 2],
            dirty: [0; 2],
        }
    }

    /// Gathers the bits of the block starting at rank `start` from now on; the bits gathered
    /// in another block before are written to `maps` first.
    #[inline(always)]
    fn move_to(&mut self, start: u64, maps: &mut [&mut [u64]; 2]) {
        if start != self.start {
            self.flush(maps);
            self.start = start;
        }
    }

    /// Gathers bit `start + offset` of bitmap `map` (0 or 1), prefetching its line of `maps`
    /// if it is the first of its word; false (nothing done) if it lies past the buffer's words.
    #[inline(always)]
    fn set(&mut self, map: usize, offset: u64, maps: &[&mut [u64]; 2]) -> bool {
        let w = (offset / 64) as usize;
        if w >= BLOCK_WORDS {
            return false;
        }
        if self.dirty[map] >> w & 1 == 0 {
            self.dirty[map] |= 1 << w;
            prefetch(&maps[map][((self.start + offset) / 64) as usize]);
        }
        self.words[map][w] |= 1 << (offset % 64);
        true
    }

    /// Writes the gathered bits to `maps`; the buffer is empty afterwards (and stays in its
    /// block).
    fn flush(&mut self, maps: &mut [&mut [u64]; 2]) {
        for (map, bits) in maps.iter_mut().enumerate() {
            let mut dirty = self.dirty[map];
            while dirty != 0 {
                let w = dirty.trailing_zeros() as usize;
                dirty &= dirty - 1;
                or_word(bits, self.start + w as u64 * 64, self.words[map][w]);
                self.words[map][w] = 0;
            }
            self.dirty[map] = 0;
        }
    }
}

/// Runs queued between a run's prefetch and its copy: how many runs' first lines may be in
/// flight at once.
const RUN_DEPTH: usize = 8;

/// OR-s runs of one bitmap into another ([`or_run`]), with the latency of their first words
/// overlapped when the bitmaps are large.
///
/// A claim ply's run copies start at ranks all over two bitmaps far larger than the caches,
/// and most runs are a word or two: each copy waited for a miss on its source word and another
/// on its target word (measured on BOARD33 `browns=12`: 68% of the copies' time at those two
/// loads). Here a run's first words are prefetched when it is queued and the run is copied
/// [`RUN_DEPTH`] runs later, so that many misses are in flight at once. The bits written are
/// exactly those of [`or_run`] run by run in order; the last queued runs are copied when it is
/// dropped. Small bitmaps (below [`LARGE_BITMAP_WORDS`]) stay in the caches: their runs are
/// copied at once.
pub struct QueuedRuns<'a> {
    dst: &'a mut [u64],
    src: &'a [u64],
    /// Whether runs are queued (large bitmaps) or copied at once.
    overlapped: bool,
    /// Queued runs, `(to, from, len)`, copied in queue order.
    queue: DelayRing<(u64, u64, u64), RUN_DEPTH>,
}

impl<'a> QueuedRuns<'a> {
    /// Copying runs of `src` into `dst`.
    pub fn new(dst: &'a mut [u64], src: &'a [u64]) -> QueuedRuns<'a> {
        let overlapped = dst.len().max(src.len()) >= LARGE_BITMAP_WORDS;
        QueuedRuns {
            dst,
            src,
            overlapped,
            queue: DelayRing::new(),
        }
    }

    /// `dst[to..to + len] |= src[from..from + len]`, now or a few runs later (at the latest
    /// when `self` is dropped).
    ///
    /// # Panics
    /// If either run reaches past its bitmap (at once, not when the run is copied).
    #[inline(always)]
    pub fn or_run(&mut self, to: u64, from: u64, len: u64) {
        assert!(to + len <= self.dst.len() as u64 * 64 && from + len <= self.src.len() as u64 * 64);
        if !self.overlapped || len == 0 {
            or_run(self.dst, to, self.src, from, len);
            return;
        }
        prefetch(&self.src[(from / 64) as usize]);
        prefetch(&self.dst[(to / 64) as usize]);
        if let Some((to, from, len)) = self.queue.push((to, from, len)) {
            or_run(self.dst, to, self.src, from, len);
        }
    }
}

impl Drop for QueuedRuns<'_> {
    /// Copies the runs still queued.
    fn drop(&mut self) {
        for (to, from, len) in self.queue.drain() {
            or_run(self.dst, to, self.src, from, len);
        }
    }
}

/// The queue behind [`ScatteredBits`] and [`QueuedRuns`] (and the solver's count plies): a
/// ring of `N` items that hands each one back `N` pushes after it came in, the time its
/// prefetched line needs to arrive.
pub struct DelayRing<T, const N: usize> {
    items: [T; N],
    /// Items pushed so far (the ring holds the last `N` of them).
    pushed: usize,
}

impl<T: Copy + Default, const N: usize> DelayRing<T, N> {
    /// An empty ring.
    #[allow(clippy::new_without_default)]
    pub fn new() -> DelayRing<T, N> {
        DelayRing {
            items: [T::default(); N],
            pushed: 0,
        }
    }

    /// Queues `item`; returns the item queued `N` pushes before it, now due, if there is one.
    #[inline(always)]
    pub fn push(&mut self, item: T) -> Option<T> {
        let slot = self.pushed % N;
        let due = (self.pushed >= N).then(|| self.items[slot]);
        self.items[slot] = item;
        self.pushed += 1;
        due
    }

    /// The items still queued, oldest first; the ring is empty afterwards.
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        let pending = self.pushed.min(N);
        let first = self.pushed - pending;
        self.pushed = 0;
        let items = &self.items;
        (first..first + pending).map(move |k| items[k % N])
    }
}

/// Asks the cache for the line of `item`, without waiting for it.
#[inline(always)]
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults, even on an invalid address (and
    // this one is a valid reference).
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (item as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn get(bits: &[u64], i: u64) -> bool {
        bits[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    #[test]
    fn the_delay_ring_hands_every_item_back_in_order_n_pushes_later() {
        for pushes in 0..20usize {
            let mut ring = DelayRing::<usize, 8>::new();
            for i in 0..pushes {
                assert_eq!(ring.push(i), i.checked_sub(8), "push {i}");
            }
            let rest: Vec<usize> = ring.drain().collect();
            assert_eq!(rest, (pushes.saturating_sub(8)..pushes).collect::<Vec<_>>());
            assert_eq!(ring.drain().count(), 0, "drained twice");
        }
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

        #[test]
        fn scattered_bits_are_the_bits_set_one_by_one(
            sets in proptest::collection::vec((0usize..2, 0u64..1000), 0..3 * SCATTER_DEPTH),
        ) {
            // Fewer bits than the queue holds, and several times more: all are written.
            let (mut first, mut second) = (vec![0u64; 16], vec![0u64; 16]);
            let mut scattered = ScatteredBits::new(&mut first, &mut second);
            for &(map, i) in &sets {
                scattered.set(map, i);
            }
            drop(scattered);
            let mut slow = [vec![0u64; 16], vec![0u64; 16]];
            for &(map, i) in &sets {
                set_bit(&mut slow[map], i);
            }
            prop_assert_eq!([first, second], slow);
        }

        #[test]
        fn bits_set_by_block_are_the_bits_set_one_by_one(
            sets in proptest::collection::vec((0usize..3, 0u64..6, 0usize..2, 0u64..5000), 0..200),
            scattered in any::<bool>(),
        ) {
            // Three streams moving between blocks at six starts (word-aligned or not,
            // overlapping), offsets within a buffer's words and past them, mixed with bits
            // set anywhere (stream 2), through either way of setting bits.
            let starts = [0u64, 3, 64, 700, 4100, 9000];
            let words = 16384 / 64 + 64;
            let (mut first, mut second) = (vec![0u64; words], vec![0u64; words]);
            let run = |bits: &mut dyn SetBits| {
                for &(stream, block, map, offset) in &sets {
                    let at = starts[block as usize];
                    if stream == 2 {
                        bits.set(map, at + offset);
                    } else {
                        bits.enter_block(stream, at);
                        bits.set_in_block(stream, map, offset);
                    }
                }
            };
            if scattered {
                run(&mut ScatteredBits::new(&mut first, &mut second));
            } else {
                run(&mut DirectBits::new(&mut first, &mut second));
            }
            let mut slow = [vec![0u64; words], vec![0u64; words]];
            for &(_, block, map, offset) in &sets {
                set_bit(&mut slow[map], starts[block as usize] + offset);
            }
            prop_assert!([first, second] == slow);
        }

        #[test]
        fn or_word_is_bit_by_bit_or(word in any::<u64>(), at in 0u64..192, dst in any::<u64>()) {
            // Into three words, the bits past the end dropped from `word`.
            let word = if at > 128 { word & (u64::MAX >> (at - 128)) } else { word };
            let mut fast = vec![dst; 3];
            or_word(&mut fast, at, word);
            let mut slow = vec![dst; 3];
            for j in 0..64 {
                if word >> j & 1 == 1 {
                    set_bit(&mut slow, at + j);
                }
            }
            prop_assert_eq!(fast, slow);
        }

        #[test]
        fn queued_runs_are_the_runs_copied_one_by_one(
            runs in proptest::collection::vec((0u64..1 << 14, 0u64..1 << 14, 0u64..200), 0..3 * RUN_DEPTH),
            spread in 0u64..2,
        ) {
            // Large bitmaps (the queue in use) with runs near both ends, fewer than the queue
            // holds and several times more: all are copied.
            let words = LARGE_BITMAP_WORDS;
            let src: Vec<u64> = (0..words as u64).map(|w| w.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
            let far = |at: u64| if spread == 1 { words as u64 * 64 - 256 - at % 4096 } else { at };
            let runs: Vec<(u64, u64, u64)> = runs.iter().map(|&(to, from, len)| (far(to), from, len)).collect();
            let mut queued = vec![0u64; words];
            let mut copier = QueuedRuns::new(&mut queued, &src);
            for &(to, from, len) in &runs {
                copier.or_run(to, from, len);
            }
            drop(copier);
            let mut slow = vec![0u64; words];
            for &(to, from, len) in &runs {
                or_run(&mut slow, to, &src, from, len);
            }
            prop_assert!(queued == slow);
        }
    }
}
