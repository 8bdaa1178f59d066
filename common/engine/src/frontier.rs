//! Lists of positions (8-byte keys) grouped by slice slot: the kernel's frontiers and
//! scheduled exits, in memory or spilled to a scratch file.
//!
//! Spilled keys take 4 bytes where they can ([`KeyChunk::Narrow`]): a game's keys rarely use
//! all 64 bits (Sixteen Musashi's are brown masks of at most 33 points, one of which — black's
//! — is empty in every key of a slice), and the scratch disk is what bounds the largest stages.
//! Keys a producer made in order (a sweep's scheduled exits, a slot's bit-parallel claims, a
//! restored checkpoint's lists) take about a byte and a quarter: narrowed, then coded as varint
//! gaps in blocks of [`CHUNK`] keys ([`KeyChunk::Coded`]). On BOARD33 `browns=16` that took the
//! job's disk at the sweep's end from 28,752 to 8,880 MiB, which the page cache, the
//! plies that read the exits back and the first checkpoint all see.
//!
//! A list is filled by parallel tasks (each hands over what it produced for every slot) and,
//! one ply later, read slot by slot. In memory a list a producer made in order (a sweep's
//! exits, a slot's bit-parallel claims) is kept as one *segment*, never copied, and the small
//! per-slot vectors of the tasks that push to targets are copied into the slot's collecting
//! segments (blocks of [`COLLECTED_KEYS`], each thread its own) and used again; out of core a
//! task's keys are appended to the list's scratch file at once and only their offset kept, and
//! the file is mapped read-only when the list is read. Segments of one slot may come from many tasks;
//! their order does not matter to the kernel's results.
//!
//! It matters to its speed: when a list in memory is sealed, each slot's keys are put in order
//! (segments that follow one another in order are kept as they are; others become one sorted
//! segment). Expanding a sorted list visits the targets of one kind of un-move in nearly
//! increasing index order (a key's colex rank grows with its mask), so the target arrays are
//! walked in a few streams the caches follow instead of at random: on BOARD33, whose slices
//! are far larger than the caches, this took 12–27% off a stage (8% off BOARD25; figures in
//! docs/benchmarks.md). Spilled lists are sorted a group at a time as they are read
//! (`kernel::expand`), narrowed to 32 bits where they were spilled so ([`GroupKeys`]).

use crate::atomic::ScratchError;
use crate::gaps::{write_varint, Gaps};
use crate::workspace::Workspace;
use either::Either;
use memmap2::{Mmap, UncheckedAdvice};
use rayon::prelude::*;
use smallvec::SmallVec;
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Mutex;

/// Frontier lists are expanded in chunks of this many keys per parallel task.
pub(crate) const CHUNK: usize = 1 << 12;

/// The keys a collecting segment ([`Frontier::append`]) holds at most (512 KiB).
const COLLECTED_KEYS: usize = 1 << 16;

/// Where one segment's keys are.
enum Segment {
    /// Keys in memory, and whether they ascend: learnt when they were handed over, still in
    /// the caches of the thread that made them, so that sealing the list need not read them
    /// all again from memory to find out (that second pass was 2.8% of BOARD25's samples).
    Memory { keys: Vec<u64>, ascending: bool },
    /// `len` keys at byte `offset` of the scratch file, 8 bytes each or narrowed to 4.
    Spilled {
        offset: usize,
        len: usize,
        narrow: Option<Narrowing>,
    },
    /// `len` ascending keys at byte `offset` of the scratch file, narrowed and coded as the
    /// varint gaps of their narrow forms in `bytes` bytes ([`CodedBlock`]); the first and the
    /// last key (narrow) kept here, so that a reader orders and checks segments without
    /// reading the file.
    Coded {
        offset: usize,
        bytes: u32,
        len: u32,
        first: u32,
        last: u32,
        narrow: Narrowing,
    },
}

/// One coded block of a spilled list's ascending keys ([`Segment::Coded`]): at most [`CHUNK`]
/// keys, so that a block is one chunk of parallel work, coded from zero.
#[derive(Clone, Copy, Debug)]
struct CodedBlock {
    /// Where its bytes begin among those of the keys made ready.
    at: usize,
    bytes: u32,
    len: u32,
    first: u32,
    last: u32,
}

/// How a spilled segment's keys fit in 32 bits: with bit `gap` (clear in all of them) taken
/// out, the bits above it moved down by one. `gap` 63 when the keys fit as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Narrowing {
    gap: u32,
}

impl Narrowing {
    /// The bit taken out, as a byte (63: none), for a coded block to name its narrowing.
    pub fn gap_byte(self) -> u8 {
        self.gap as u8
    }

    /// The narrowing [`Narrowing::gap_byte`] names, if it is one.
    pub fn from_gap_byte(gap: u8) -> Option<Narrowing> {
        (gap < 64).then_some(Narrowing {
            gap: u32::from(gap),
        })
    }

    /// The narrowing of keys whose bits are (within) `union`, if there is one.
    fn of(union: u64) -> Option<Narrowing> {
        if union >> 32 == 0 {
            return Some(Narrowing { gap: 63 });
        }
        // 33 bits wide, with a clear bit below the top one to take out.
        let clear = !union & 0xFFFF_FFFF;
        (union >> 33 == 0 && clear != 0).then(|| Narrowing {
            gap: 63 - clear.leading_zeros(),
        })
    }

    /// `key` in 32 bits.
    fn narrow(self, key: u64) -> u32 {
        let low = (1u64 << self.gap) - 1;
        ((key & low) | (key >> 1 & !low)) as u32
    }

    /// The key `narrow` stands for.
    pub fn widen(self, narrow: u32) -> u64 {
        let low = (1u64 << self.gap) - 1;
        let narrow = u64::from(narrow);
        (narrow & low) | (narrow & !low) << 1
    }
}

/// A piece of a list as read: keys as they are (in memory, or spilled 8 bytes each),
/// narrowed to 4 bytes by [`Narrowing`], or ascending keys narrowed and coded as varint gaps
/// (a spilled list's sorted pieces: a sweep's scheduled exits, bit-parallel claims).
#[derive(Clone, Copy, Debug)]
pub enum KeyChunk<'a> {
    /// The keys.
    Wide(&'a [u64]),
    /// The keys, narrowed.
    Narrow(&'a [u32], Narrowing),
    /// `len` ascending keys, narrowed, as the varint gaps of `bytes`
    /// ([`crate::gaps::encode_gaps`]), with the first and the last key (narrow).
    Coded {
        /// The gaps.
        bytes: &'a [u8],
        /// How many keys.
        len: u32,
        /// The first key, narrow.
        first: u32,
        /// The last key, narrow.
        last: u32,
        /// How the keys were narrowed.
        narrow: Narrowing,
    },
}

impl<'a> KeyChunk<'a> {
    /// Number of keys.
    pub fn len(&self) -> usize {
        match self {
            KeyChunk::Wide(keys) => keys.len(),
            KeyChunk::Narrow(keys, _) => keys.len(),
            KeyChunk::Coded { len, .. } => *len as usize,
        }
    }

    /// Whether the piece holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first key, if any.
    pub fn first(&self) -> Option<u64> {
        match *self {
            KeyChunk::Coded {
                len, first, narrow, ..
            } => (len > 0).then(|| narrow.widen(first)),
            _ => self.iter().next(),
        }
    }

    /// The last key, if any.
    pub fn last(&self) -> Option<u64> {
        match *self {
            KeyChunk::Wide(keys) => keys.last().copied(),
            KeyChunk::Narrow(keys, n) => keys.last().map(|&k| n.widen(k)),
            KeyChunk::Coded {
                len, last, narrow, ..
            } => (len > 0).then(|| narrow.widen(last)),
        }
    }

    /// The keys, in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + 'a {
        match *self {
            KeyChunk::Wide(keys) => Either::Left(keys.iter().copied()),
            KeyChunk::Narrow(keys, n) => {
                Either::Right(Either::Left(keys.iter().map(move |&k| n.widen(k))))
            }
            KeyChunk::Coded { bytes, narrow, .. } => Either::Right(Either::Right(
                Gaps::new(bytes).map(move |k| narrow.widen(k as u32)),
            )),
        }
    }

    /// The keys as a slice: the piece itself, or decoded into `buffer`.
    pub fn keys<'b>(&self, buffer: &'b mut Vec<u64>) -> &'b [u64]
    where
        'a: 'b,
    {
        match *self {
            KeyChunk::Wide(keys) => keys,
            KeyChunk::Narrow(keys, n) => {
                buffer.clear();
                buffer.extend(keys.iter().map(|&k| n.widen(k)));
                buffer
            }
            KeyChunk::Coded { .. } => {
                buffer.clear();
                buffer.extend(self.iter());
                buffer
            }
        }
    }

    /// The narrow keys of a [`KeyChunk::Coded`] or [`KeyChunk::Narrow`] piece written to
    /// `out`, which holds exactly as many (nothing for a wide one).
    fn write_narrow(&self, out: &mut [u32]) {
        match *self {
            KeyChunk::Wide(_) => {}
            KeyChunk::Narrow(keys, _) => out.copy_from_slice(keys),
            KeyChunk::Coded { bytes, .. } => {
                for (o, key) in out.iter_mut().zip(Gaps::new(bytes)) {
                    *o = key as u32;
                }
            }
        }
    }

    /// How the piece's keys are narrowed, if they are.
    fn narrowing(&self) -> Option<Narrowing> {
        match *self {
            KeyChunk::Wide(_) => None,
            KeyChunk::Narrow(_, n) | KeyChunk::Coded { narrow: n, .. } => Some(n),
        }
    }

    /// The piece's bytes in memory (or in a map of its scratch file): where it lies, how long.
    fn byte_range(&self) -> (usize, usize) {
        match self {
            KeyChunk::Wide(keys) => (keys.as_ptr() as usize, keys.len() * 8),
            KeyChunk::Narrow(keys, _) => (keys.as_ptr() as usize, keys.len() * 4),
            KeyChunk::Coded { bytes, .. } => (bytes.as_ptr() as usize, bytes.len()),
        }
    }
}

/// The scratch file of a spilled list.
struct Spill {
    writer: BufWriter<File>,
    written: usize,
    map: Option<Mmap>,
}

/// A list of keys grouped by slot.
pub(crate) struct Frontier {
    slots: Vec<Vec<Segment>>,
    /// Per slot, whether its last segment (in memory) collects the keys tasks hand over
    /// ([`Frontier::append`]).
    collecting: Vec<bool>,
    len: u64,
    /// Where to spill (out of core), `None` in memory.
    scratch: Option<PathBuf>,
    spill: Option<Spill>,
    /// The first scratch-file error; reported by [`Frontier::seal`].
    error: Option<ScratchError>,
    /// Whether every slot's keys are one sorted segment (in memory) since the last push.
    sorted: bool,
}

impl Frontier {
    /// An empty list for a stage of `n` slots.
    pub(crate) fn new(n: usize, space: &Workspace) -> Frontier {
        Frontier {
            slots: (0..n).map(|_| Vec::new()).collect(),
            collecting: vec![false; n],
            len: 0,
            scratch: space.scratch().map(PathBuf::from),
            spill: None,
            error: None,
            sorted: true,
        }
    }

    /// Adds the keys `keys` of slot `slot`.
    pub(crate) fn push(&mut self, slot: usize, keys: Vec<u64>) {
        let ready = Ready::of(keys, self.scratch.is_some());
        self.push_ready(slot, ready);
    }

    /// Adds keys of slot `slot` made ready for this list (encoded when it spills).
    fn push_ready(&mut self, slot: usize, ready: Ready) {
        let len = match &ready {
            Ready::Memory { keys, .. } => keys.len(),
            Ready::Encoded { len, .. } => *len,
            Ready::Coded { blocks, .. } => blocks.iter().map(|b| b.len as usize).sum(),
        };
        if len == 0 {
            return;
        }
        self.len += len as u64;
        self.sorted = false;
        self.collecting[slot] = false;
        let appended = match (ready, &self.scratch) {
            (Ready::Memory { keys, ascending }, None) => {
                self.slots[slot].push(Segment::Memory { keys, ascending });
                Ok(())
            }
            (Ready::Memory { .. }, Some(_)) | (_, None) => {
                unreachable!("keys are made ready for the list they go to (`Ready::of`)")
            }
            (ready, Some(dir)) => {
                let appended = append_spill(&mut self.spill, dir, ready.file_bytes());
                if let Ok(offset) = appended {
                    ready.spilled_segments(offset, &mut self.slots[slot]);
                }
                // The keys are in the file now: their vector serves this thread again.
                keep_spare(ready.into_words());
                appended.map(|_| ())
            }
        };
        if let Err(e) = appended {
            self.error.get_or_insert(e);
        }
    }

    /// Adds a copy of the keys `keys` of slot `slot` (whether they ascend: `ascending`) to the
    /// slot's collecting segment, in memory. A task's keys for a slot are often a few hundred:
    /// kept each as a segment, a count ply made a hundred thousand small vectors over BOARD25,
    /// each grown by doubling and freed a ply later (together 5% of its samples); copied here,
    /// the task's vectors are used again ([`SlotLists`]).
    fn append(&mut self, slot: usize, keys: &[u64], ascending: bool) {
        debug_assert!(!self.is_spilled(), "spilled lists take encoded keys");
        let Some(&first) = keys.first() else {
            return;
        };
        self.len += keys.len() as u64;
        self.sorted = false;
        let segments = &mut self.slots[slot];
        match segments.last_mut() {
            Some(Segment::Memory {
                keys: all,
                ascending: all_ascending,
            }) if self.collecting[slot] && all.len() + keys.len() <= COLLECTED_KEYS => {
                *all_ascending &= ascending && all.last().is_none_or(|&end| end <= first);
                all.extend_from_slice(keys);
            }
            last => {
                // A slot's first keys start a small segment, grown by doubling; a full one is
                // followed by a new one of full size (no copy of what is collected already).
                let room = match last {
                    Some(_) if self.collecting[slot] => COLLECTED_KEYS,
                    _ => CHUNK,
                };
                let mut all = Vec::with_capacity(keys.len().max(room));
                all.extend_from_slice(keys);
                segments.push(Segment::Memory {
                    keys: all,
                    ascending,
                });
                self.collecting[slot] = true;
            }
        }
    }

    /// Moves the segments of `other`, a list in memory of as many slots, to the end of this
    /// one's (no key is copied).
    fn join(&mut self, mut other: Frontier) {
        debug_assert!(!other.is_spilled() && other.slots.len() == self.slots.len());
        if other.len == 0 {
            return;
        }
        self.len += other.len;
        self.sorted = false;
        for (slot, segments) in other.slots.iter_mut().enumerate() {
            if !segments.is_empty() {
                self.slots[slot].append(segments);
                self.collecting[slot] = false;
            }
        }
        if let Some(e) = other.error.take() {
            self.error.get_or_insert(e);
        }
    }

    /// Number of keys.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Number of keys of the slots (lists) for which `pick` is true.
    pub(crate) fn len_where(&self, pick: impl Fn(usize) -> bool) -> u64 {
        let segment_len = |s: &Segment| match s {
            Segment::Memory { keys, .. } => keys.len() as u64,
            Segment::Spilled { len, .. } => *len as u64,
            Segment::Coded { len, .. } => u64::from(*len),
        };
        (0..self.slots.len())
            .filter(|&s| pick(s))
            .map(|s| self.slots[s].iter().map(segment_len).sum::<u64>())
            .sum()
    }

    /// Number of lists (sections).
    pub(crate) fn sections(&self) -> usize {
        self.slots.len()
    }

    /// Whether the list is kept in a scratch file (out of core) rather than in memory.
    pub(crate) fn is_spilled(&self) -> bool {
        self.scratch.is_some()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Finishes writing: in memory each slot's keys are sorted into one segment (see the
    /// module's documentation); the spill file (if any) is flushed and mapped for reading.
    /// Reports a write error that happened while the list was filled.
    pub(crate) fn seal(&mut self) -> Result<(), ScratchError> {
        self.seal_sorting(|_| true)
    }

    /// [`Frontier::seal`], sorting in memory only the slots for which `sort` is true: those
    /// whose keys will be expanded one by one. A ply that reads a slot's keys in another way
    /// (marking them in a bitmap, or not at all because the slot pulls) does not need their
    /// order, and a sort of a large frontier costs a measurable share of a ply.
    pub(crate) fn seal_sorting(
        &mut self,
        sort: impl Fn(usize) -> bool + Sync,
    ) -> Result<(), ScratchError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if !self.is_spilled() && !self.sorted {
            // Slots in parallel: a slot's merge and sort need twice its keys at most, so only
            // as many slots as threads are doubled at once.
            self.slots
                .par_iter_mut()
                .enumerate()
                .filter(|(slot, _)| sort(*slot))
                .for_each(|(_, segments)| merge_sorted(segments));
            self.sorted = (0..self.slots.len()).all(&sort);
        }
        if let (Some(spill), Some(dir)) = (&mut self.spill, &self.scratch) {
            if spill.map.is_none() {
                spill
                    .writer
                    .flush()
                    .map_err(|e| ScratchError::new("write a list's scratch file in", dir, e))?;
                // SAFETY: the file is an unlinked scratch file of this process, no longer
                // written to.
                let map = unsafe { Mmap::map(spill.writer.get_ref()) }
                    .map_err(|e| ScratchError::new("map a list's scratch file in", dir, e))?;
                spill.map = Some(map);
            }
        }
        Ok(())
    }

    /// The keys of the slots in `slots`, cut into chunks for parallel work, each with its slot.
    /// The list must be sealed.
    pub(crate) fn chunks(&self, slots: &[usize]) -> Vec<(u32, KeyChunk<'_>)> {
        let map = self.spill.as_ref().and_then(|s| s.map.as_deref());
        let mut chunks = Vec::new();
        for &slot in slots {
            for segment in &self.slots[slot] {
                let tag = slot as u32;
                match segment {
                    Segment::Memory { keys, .. } => {
                        chunks.extend(keys.chunks(CHUNK).map(|c| (tag, KeyChunk::Wide(c))));
                    }
                    Segment::Spilled {
                        offset,
                        len,
                        narrow,
                    } => {
                        let map = map.expect("a spilled list is sealed before it is read");
                        let width = if narrow.is_some() { 4 } else { 8 };
                        let bytes = &map[*offset..*offset + len * width];
                        match *narrow {
                            None => chunks.extend(
                                as_keys::<u64>(bytes)
                                    .chunks(CHUNK)
                                    .map(|c| (tag, KeyChunk::Wide(c))),
                            ),
                            Some(n) => chunks.extend(
                                as_keys::<u32>(bytes)
                                    .chunks(CHUNK)
                                    .map(|c| (tag, KeyChunk::Narrow(c, n))),
                            ),
                        }
                    }
                    &Segment::Coded {
                        offset,
                        bytes,
                        len,
                        first,
                        last,
                        narrow,
                    } => {
                        let map = map.expect("a spilled list is sealed before it is read");
                        let bytes = &map[offset..offset + bytes as usize];
                        chunks.push((
                            tag,
                            KeyChunk::Coded {
                                bytes,
                                len,
                                first,
                                last,
                                narrow,
                            },
                        ));
                    }
                }
            }
        }
        chunks
    }

    /// Drops from the resident set the spill file's pages that lie wholly within `chunks`
    /// (chunks of this list): what one task has read and is done with, while other tasks read
    /// other chunks. Pages shared with other chunks stay until [`Frontier::release`].
    pub(crate) fn release_chunks(&self, chunks: &[(u32, KeyChunk)]) {
        let Some(map) = self.spill.as_ref().and_then(|s| s.map.as_ref()) else {
            return;
        };
        let base = map.as_ptr() as usize;
        // Byte ranges of the chunks within the map, adjacent ones merged.
        let mut ranges: Vec<(usize, usize)> = chunks
            .iter()
            .filter_map(|(_, chunk)| {
                let (start, bytes) = chunk.byte_range();
                let inside = start >= base && start + bytes <= base + map.len();
                inside.then(|| (start - base, start - base + bytes))
            })
            .collect();
        ranges.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (start, end) in ranges {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        const PAGE: usize = 4096;
        for (start, end) in merged {
            let (first, last) = (start.div_ceil(PAGE) * PAGE, end / PAGE * PAGE);
            if first < last {
                // SAFETY: a read-only file mapping: dropped pages are read back from the file.
                let _ = unsafe {
                    map.unchecked_advise_range(UncheckedAdvice::DontNeed, first, last - first)
                };
            }
        }
    }

    /// Drops the pages of the spill file read so far from the resident set.
    pub(crate) fn release(&self) {
        if let Some(map) = self.spill.as_ref().and_then(|s| s.map.as_ref()) {
            // SAFETY: a read-only file mapping: dropped pages are read back from the file.
            let _ = unsafe { map.unchecked_advise(UncheckedAdvice::DontNeed) };
        }
    }
}

/// Puts the in-memory keys of one slot in order: its segments as they are when they follow
/// one another in order, else one segment, sorted.
fn merge_sorted(segments: &mut Vec<Segment>) {
    /// A segment's keys, and whether they ascend.
    fn keys_of(segment: &Segment) -> (&[u64], bool) {
        match segment {
            Segment::Memory { keys, ascending } => (keys, *ascending),
            Segment::Spilled { .. } | Segment::Coded { .. } => {
                unreachable!("only lists in memory are merged")
            }
        }
    }
    let total: usize = segments.iter().map(|s| keys_of(s).0.len()).sum();
    if total < 2 {
        return;
    }
    // One segment (the keys a ply's tasks handed over, collected): sorted where it is.
    if let [Segment::Memory { keys, ascending }] = segments.as_mut_slice() {
        if !*ascending {
            sort_for_locality(keys);
            *ascending = true;
        }
        return;
    }
    // Taken in the order of their first keys, segments each sorted over disjoint ranges of
    // keys (a sweep's scheduled exits, one segment per swept range; a slot's claims found
    // bit-parallel, one segment per thread's piece of the slot) are the slot's keys in order
    // already: read chunk by chunk as they are, they need no copy into one vector. (Other
    // segments are copied together and sorted.)
    segments.sort_by_key(|s| keys_of(s).0.first().copied());
    let mut last = 0;
    let in_order = segments.iter().all(|segment| {
        let (keys, ascending) = keys_of(segment);
        let follows = keys.first().is_none_or(|&first| first >= last) && ascending;
        last = keys.last().copied().unwrap_or(last);
        follows
    });
    if in_order {
        return;
    }
    let mut all = Vec::with_capacity(total);
    for segment in segments.drain(..) {
        if let Segment::Memory { keys, .. } = segment {
            all.extend_from_slice(&keys);
        }
    }
    sort_for_locality(&mut all);
    segments.push(Segment::Memory {
        keys: all,
        ascending: true,
    });
}

/// The keys of a group of chunks read from a list, gathered for sorting: narrowed to 32 bits
/// when every chunk is narrowed the same way (spilled Sixteen Musashi lists always are), since
/// a radix sort of 4-byte keys moves half the bytes of 8-byte ones in one pass fewer, and
/// narrowing keeps the keys' order.
pub(crate) enum GroupKeys {
    /// The keys, narrowed by the one narrowing of the group.
    Narrow(Vec<u32>, Narrowing),
    /// The keys as they are.
    Wide(Vec<u64>),
}

/// The keys of `chunks` in their order, each chunk written by `write` into its own part of
/// the result, the chunks in parallel.
fn gather<T: Copy + Default + Send>(
    chunks: &[&KeyChunk],
    write: impl Fn(&KeyChunk, &mut [T]) + Sync,
) -> Vec<T> {
    let mut keys = vec![T::default(); chunks.iter().map(|c| c.len()).sum()];
    let mut rest = &mut keys[..];
    let mut parts = Vec::with_capacity(chunks.len());
    for &chunk in chunks {
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(chunk.len());
        parts.push((chunk, part));
        rest = tail;
    }
    parts
        .into_par_iter()
        .with_min_len(GATHER_CHUNKS)
        .for_each(|(chunk, part)| write(chunk, part));
    keys
}

/// Chunks a task of [`gather`] copies at least (a chunk is `CHUNK` keys at most: a task below
/// this would cost rayon more than its copy).
const GATHER_CHUNKS: usize = 8;

impl GroupKeys {
    /// The keys of `group`, gathered for sorting.
    ///
    /// The chunks are taken in the order of their first keys: chunks each sorted over
    /// disjoint ranges of keys (a sweep's scheduled exits: one range of slots per segment)
    /// then come out sorted, and [`GroupKeys::sort_runs`] finds nothing to do. (Other chunks
    /// are sorted by it whatever their order.)
    pub(crate) fn of(group: &[(u32, KeyChunk)]) -> GroupKeys {
        GroupKeys::of_chunks(group.iter().map(|(_, c)| c).collect())
    }

    /// [`GroupKeys::of`] for chunks without their slots.
    ///
    /// The chunks are copied (and decoded) in parallel, each into its own part of the keys: a
    /// group is prepared while the one before is expanded, and where that expansion is cheap
    /// (a ply's scheduled exits) one thread decoding the next group alone held the other up.
    fn of_chunks(mut chunks: Vec<&KeyChunk>) -> GroupKeys {
        chunks.sort_by_key(|c| c.first());
        let narrowing = chunks.first().and_then(|c| c.narrowing());
        let same = |c: &KeyChunk| narrowing.is_some() && c.narrowing() == narrowing;
        match narrowing.filter(|_| chunks.iter().all(|c| same(c))) {
            Some(n) => GroupKeys::Narrow(gather(&chunks, |c, out| c.write_narrow(out)), n),
            None => GroupKeys::Wide(gather(&chunks, |chunk, out| {
                for (o, key) in out.iter_mut().zip(chunk.iter()) {
                    *o = key;
                }
            })),
        }
    }

    /// Number of keys.
    pub(crate) fn len(&self) -> usize {
        match self {
            GroupKeys::Narrow(keys, _) => keys.len(),
            GroupKeys::Wide(keys) => keys.len(),
        }
    }

    /// Sorts the keys in runs of `run` keys, the runs in parallel (one sort of the whole when
    /// `run` is at least their number).
    /// (A run already in order is left as it is: checked by the run's own task, not by one
    /// thread over the whole group first.)
    pub(crate) fn sort_runs(&mut self, run: usize) {
        match self {
            GroupKeys::Narrow(keys, _) => keys.par_chunks_mut(run).for_each(|run| {
                if !run.is_sorted() {
                    radsort::sort(run);
                }
            }),
            GroupKeys::Wide(keys) => keys.par_chunks_mut(run).for_each(|run| {
                if !run.is_sorted() {
                    sort_for_locality(run);
                }
            }),
        }
    }

    /// The keys in pieces of `size` keys (the last one shorter), as chunks of a list.
    pub(crate) fn chunks(&self, size: usize) -> impl Iterator<Item = KeyChunk<'_>> {
        match self {
            GroupKeys::Narrow(keys, n) => {
                Either::Left(keys.chunks(size).map(|c| KeyChunk::Narrow(c, *n)))
            }
            GroupKeys::Wide(keys) => Either::Right(keys.chunks(size).map(KeyChunk::Wide)),
        }
    }

    /// The keys, widened back where narrowed.
    #[cfg(test)]
    pub(crate) fn into_wide(self) -> Vec<u64> {
        match self {
            GroupKeys::Wide(keys) => keys,
            narrow => narrow.iter().collect(),
        }
    }

    /// The keys in order, each widened as it is read (no second copy of the list).
    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        match self {
            GroupKeys::Narrow(keys, n) => Either::Left(keys.iter().map(|&k| n.widen(k))),
            GroupKeys::Wide(keys) => Either::Right(keys.iter().copied()),
        }
    }
}

/// A list's keys sorted by [`sorted_keys`]: its pieces themselves when they are already in
/// order, else gathered and sorted, held 4 bytes a key where the list was spilled narrowed so
/// that encoding them needs no 8-byte copy.
pub struct SortedKeys<'a>(Sorted<'a>);

/// How [`SortedKeys`] holds its keys.
enum Sorted<'a> {
    /// Pieces each sorted, in order, none starting below the last key of the one before: read
    /// as they are, with no copy (a sweep's scheduled exits, most of a first checkpoint's keys).
    InOrder(Vec<KeyChunk<'a>>),
    /// The keys gathered and sorted.
    Gathered(GroupKeys),
}

impl SortedKeys<'_> {
    /// Number of keys.
    pub fn len(&self) -> usize {
        match &self.0 {
            Sorted::InOrder(pieces) => pieces.iter().map(KeyChunk::len).sum(),
            Sorted::Gathered(keys) => keys.len(),
        }
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the keys are read from the list's pieces (no copy): their memory must stay
    /// mapped until the keys are read.
    pub fn reads_pieces(&self) -> bool {
        matches!(self.0, Sorted::InOrder(..))
    }

    /// The keys in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        match &self.0 {
            Sorted::InOrder(pieces) => Either::Left(pieces.iter().flat_map(KeyChunk::iter)),
            Sorted::Gathered(keys) => Either::Right(keys.iter()),
        }
    }

    /// The one narrowing of all the keys, if they were all narrowed the same way (spilled
    /// Sixteen Musashi lists always are).
    fn narrowing(&self) -> Option<Narrowing> {
        match &self.0 {
            Sorted::InOrder(pieces) => {
                let n = pieces.first()?.narrowing()?;
                pieces.iter().all(|p| p.narrowing() == Some(n)).then_some(n)
            }
            Sorted::Gathered(GroupKeys::Narrow(_, n)) => Some(*n),
            Sorted::Gathered(GroupKeys::Wide(_)) => None,
        }
    }

    /// The keys coded for a checkpoint: the varint gaps ([`crate::gaps::encode_gaps`]) of
    /// their narrow forms where they share one narrowing, else of the keys themselves. Coded in
    /// parallel runs of at least [`ENCODE_RUN`] keys, each after the last key of the run
    /// before: the bytes of one pass over the keys. (One pass was a checkpoint's tail: the last
    /// large lists encoded by one thread while the other idled.)
    ///
    /// Narrow, the pieces a sweep or a bulk claim spilled coded ([`KeyChunk::Coded`]) are
    /// copied as they are: only each one's first gap, which its block takes from zero, is
    /// coded again, from the last key of the piece before. Decoding and coding them again key
    /// by key was half of a first checkpoint's time (BOARD33 `browns=13`).
    pub fn encode(&self) -> EncodedKeys {
        let narrowing = self.narrowing();
        let gathered;
        let pieces: &[KeyChunk] = match &self.0 {
            Sorted::InOrder(pieces) => pieces,
            Sorted::Gathered(keys) => {
                gathered = keys.chunks(CHUNK).collect::<Vec<_>>();
                &gathered
            }
        };
        // Runs of whole pieces, about a quarter of a thread's share each (so that a thread
        // that ends early takes the next), none below ENCODE_RUN keys.
        let len = self.len();
        let target = (len / (4 * rayon::current_num_threads().max(1))).max(ENCODE_RUN);
        let mut runs = Vec::new();
        let (mut start, mut keys) = (0, 0);
        for (i, piece) in pieces.iter().enumerate() {
            keys += piece.len();
            if keys >= target || i + 1 == pieces.len() {
                runs.push(start..i + 1);
                (start, keys) = (i + 1, 0);
            }
        }
        let encoded: Vec<Vec<u8>> = runs
            .into_par_iter()
            .map(|run| {
                let keys: usize = pieces[run.clone()].iter().map(KeyChunk::len).sum();
                let mut out = Vec::with_capacity(keys * 2);
                let before = pieces[..run.start].iter().rev().find(|p| !p.is_empty());
                match narrowing {
                    Some(n) => {
                        let last_key = before.and_then(KeyChunk::last);
                        let mut last = last_key.map_or(0, |k| u64::from(n.narrow(k)));
                        for piece in &pieces[run] {
                            last = encode_narrow_after(last, piece, &mut out);
                        }
                    }
                    None => {
                        let last = before.and_then(KeyChunk::last).unwrap_or(0);
                        let run_keys = pieces[run].iter().flat_map(KeyChunk::iter);
                        crate::gaps::encode_gaps_after(last, run_keys, &mut out);
                    }
                }
                out
            })
            .collect();
        let gaps = if encoded.len() == 1 {
            encoded.into_iter().next().expect("one run")
        } else {
            let mut out = Vec::with_capacity(encoded.iter().map(Vec::len).sum());
            for run in encoded {
                out.extend_from_slice(&run);
            }
            out
        };
        EncodedKeys { narrowing, gaps }
    }
}

/// A list's sorted keys coded by [`SortedKeys::encode`].
#[derive(Debug, PartialEq, Eq)]
pub struct EncodedKeys {
    /// The narrowing the keys share, if any: then the gaps are those of the narrow keys.
    pub narrowing: Option<Narrowing>,
    /// The varint gaps ([`crate::gaps::encode_gaps`]).
    pub gaps: Vec<u8>,
}

impl EncodedKeys {
    /// The keys `gaps` hold, widened by `narrowing` where there is one; fails on a damaged
    /// coding (a narrow key past 32 bits is damage too).
    pub fn decode(
        narrowing: Option<Narrowing>,
        gaps: &[u8],
    ) -> Result<Vec<u64>, crate::gaps::GapError> {
        let mut keys = Vec::with_capacity(gaps.len());
        let mut wide = true;
        crate::gaps::decode_gaps(gaps, |key| match narrowing {
            None => keys.push(key),
            Some(n) => {
                wide &= key <= u64::from(u32::MAX);
                keys.push(n.widen(key as u32));
            }
        })?;
        if !wide {
            return Err(crate::gaps::GapError::KeyOverflow);
        }
        Ok(keys)
    }
}

/// Appends the narrow gaps of `piece` (narrowed, its keys from `last` on) to `out`; returns
/// its last key, narrow (`last` for an empty piece).
fn encode_narrow_after(last: u64, piece: &KeyChunk, out: &mut Vec<u8>) -> u64 {
    match *piece {
        KeyChunk::Narrow(keys, _) => {
            crate::gaps::encode_gaps_after(last, keys.iter().map(|&k| u64::from(k)), out);
            keys.last().map_or(last, |&k| u64::from(k))
        }
        KeyChunk::Coded {
            bytes,
            len,
            first,
            last: piece_last,
            ..
        } => {
            if len == 0 {
                return last;
            }
            // The block's first gap is its first key, from zero: coded again from `last`.
            let mut head = [0u8; 10];
            let skip = crate::gaps::write_varint(u64::from(first), &mut head);
            let used = crate::gaps::write_varint(u64::from(first) - last, &mut head);
            out.extend_from_slice(&head[..used]);
            out.extend_from_slice(&bytes[skip..]);
            u64::from(piece_last)
        }
        KeyChunk::Wide(_) => unreachable!("only narrowed pieces are coded narrow"),
    }
}

/// The fewest keys [`SortedKeys::encode`] codes in one parallel run.
pub const ENCODE_RUN: usize = 1 << 20;

/// All the keys of `chunks` (a list's pieces, as a checkpoint holds them), sorted. Pieces that
/// are each sorted and, taken in the order of their first keys, follow one another — a sweep's
/// scheduled exits, one range of slots per piece — are read in that order as they are: no copy
/// of the list, which a first checkpoint made of billions of keys (a tenth of its time in the
/// copy and as much in the page faults of its new memory). Other lists are gathered as a group
/// is before it is expanded ([`GroupKeys`]) and sorted, in 4-byte keys where they can be.
pub fn sorted_keys<'a>(chunks: &[KeyChunk<'a>]) -> SortedKeys<'a> {
    let mut pieces: Vec<KeyChunk<'a>> = chunks.iter().copied().filter(|c| !c.is_empty()).collect();
    // A large list has hundreds of thousands of pieces: sorted and checked in parallel.
    pieces.par_sort_by_key(|c| c.first());
    if in_order(&pieces) {
        return SortedKeys(Sorted::InOrder(pieces));
    }
    let mut keys = GroupKeys::of_chunks(pieces.iter().collect());
    keys.sort_runs(usize::MAX);
    SortedKeys(Sorted::Gathered(keys))
}

/// Whether non-empty `pieces` are each sorted and none starts below the last key of the one
/// before.
fn in_order(pieces: &[KeyChunk]) -> bool {
    let each_sorted = pieces.par_iter().all(|piece| match piece {
        KeyChunk::Wide(keys) => keys.is_sorted(),
        // Narrowing keeps the keys' order.
        KeyChunk::Narrow(keys, _) => keys.is_sorted(),
        // Coded from ascending keys (gaps are never negative).
        KeyChunk::Coded { .. } => true,
    });
    let mut last = 0u64;
    each_sorted
        && pieces.iter().all(|piece| {
            let first = piece.first().expect("pieces are not empty");
            let follows = first >= last;
            last = piece.last().expect("pieces are not empty");
            follows
        })
}

/// Sorts `keys` for the locality of the ply that expands them (see the module documentation):
/// a radix sort (sorting on the 24 highest bits only, three passes instead of up to five, was
/// measured: no faster).
fn sort_for_locality(keys: &mut [u64]) {
    radsort::sort(keys);
}

/// Keys made ready for a list outside its lock: in memory as they are; for a spilled list
/// narrowed if they can be and encoded as the scratch file's bytes, so that only the append
/// is done under the lock (see [`Sink`]).
enum Ready {
    Memory {
        keys: Vec<u64>,
        ascending: bool,
    },
    Encoded {
        /// The file's bytes, as native-endian words (segments start at multiples of 8 bytes).
        words: Vec<u64>,
        len: usize,
        narrow: Option<Narrowing>,
    },
    /// Ascending keys for a spilled list, narrowed and coded in blocks ([`Segment::Coded`]).
    Coded {
        /// The file's bytes, as native-endian words (padded to whole words).
        words: Vec<u64>,
        /// The blocks, in order; a list of a task's keys for one slot is mostly one.
        blocks: SmallVec<[CodedBlock; 1]>,
        narrow: Narrowing,
    },
}

impl Ready {
    /// `keys` ready for a list that `spills` or not. The keys are encoded in their own buffer:
    /// a narrowed key takes 4 of the 8 bytes it is read from, so word `i` is written only
    /// after keys `2i` and `2i + 1` are read. (A new buffer per task's list was fresh memory:
    /// 1.2% of an out-of-core stage's time went to faulting it in.)
    ///
    /// In memory, whether the keys ascend is checked here, while the task that made them
    /// most likely still has them in its caches (a merge reads only what this finds; an
    /// unsorted list stops the check at its first descent).
    ///
    /// Spilled, ascending keys that narrow (a sweep's scheduled exits, a slot's bit-parallel
    /// claims, a restored checkpoint's lists) are coded as varint gaps ([`Ready::coded`]):
    /// about a byte and a quarter a key instead of four, for the scratch file, the page cache
    /// and a first checkpoint that reads them all back.
    fn of(mut keys: Vec<u64>, spills: bool) -> Ready {
        let ascending = keys.is_sorted();
        if !spills {
            return Ready::Memory { keys, ascending };
        }
        let len = keys.len();
        let narrow = Narrowing::of(keys.iter().fold(0, |union, &key| union | key));
        if let (Some(n), true) = (narrow, ascending) {
            return Ready::coded(keys, n);
        }
        if let Some(n) = narrow {
            for i in 0..len.div_ceil(2) {
                let low = n.narrow(keys[2 * i]);
                // An odd count ends with 4 zero bytes.
                let high = keys.get(2 * i + 1).map_or(0, |&key| n.narrow(key));
                keys[i] = bytemuck::cast([low, high]);
            }
            keys.truncate(len.div_ceil(2));
        }
        Ready::Encoded {
            words: keys,
            len,
            narrow,
        }
    }

    /// The scratch file's bytes of keys made ready for a spilled list.
    fn file_bytes(&self) -> &[u8] {
        match self {
            Ready::Encoded { words, .. } | Ready::Coded { words, .. } => {
                bytemuck::cast_slice(words)
            }
            Ready::Memory { .. } => unreachable!("keys in memory have no file bytes"),
        }
    }

    /// Adds to `segments` the segments of keys made ready for a spilled list, once their
    /// [`Ready::file_bytes`] are at `offset` of the scratch file.
    fn spilled_segments(&self, offset: usize, segments: &mut Vec<Segment>) {
        match *self {
            Ready::Encoded { len, narrow, .. } => segments.push(Segment::Spilled {
                offset,
                len,
                narrow,
            }),
            Ready::Coded {
                ref blocks, narrow, ..
            } => segments.extend(blocks.iter().map(|b| Segment::Coded {
                offset: offset + b.at,
                bytes: b.bytes,
                len: b.len,
                first: b.first,
                last: b.last,
                narrow,
            })),
            Ready::Memory { .. } => unreachable!("keys in memory are not spilled"),
        }
    }

    /// The vector that held the keys, for its thread's next list ([`keep_spare`]).
    fn into_words(self) -> Vec<u64> {
        match self {
            Ready::Encoded { words, .. } | Ready::Coded { words, .. } => words,
            Ready::Memory { keys, .. } => keys,
        }
    }

    /// Ascending `keys`, narrowed by `n`, coded in their own buffer in blocks of at most
    /// [`CHUNK`] keys, each block's gaps taken from zero. In place: key `i` is read from bytes
    /// `8i..8i + 8` before its gap (at most 5 bytes: narrow keys have 32 bits) is written at
    /// or below byte `5i`, so no key is overwritten before it is read.
    fn coded(mut keys: Vec<u64>, n: Narrowing) -> Ready {
        let len = keys.len();
        let mut blocks = SmallVec::new();
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut keys[..]);
        let key_at = |bytes: &[u8], i: usize| {
            let word: [u8; 8] = bytes[8 * i..8 * i + 8].try_into().expect("8 bytes");
            n.narrow(u64::from_ne_bytes(word))
        };
        let mut used = 0;
        for start in (0..len).step_by(CHUNK) {
            let end = (start + CHUNK).min(len);
            let at = used;
            let first = key_at(bytes, start);
            let mut last = 0;
            for i in start..end {
                let key = key_at(bytes, i);
                used += write_varint(u64::from(key - last), &mut bytes[used..]);
                last = key;
            }
            blocks.push(CodedBlock {
                at,
                bytes: (used - at) as u32,
                len: (end - start) as u32,
                first,
                last,
            });
        }
        keys.truncate(used.div_ceil(8));
        Ready::Coded {
            words: keys,
            blocks,
            narrow: n,
        }
    }
}

/// Appends encoded keys to the spill file (created on first use in `dir`); returns their
/// offset.
fn append_spill(
    spill: &mut Option<Spill>,
    dir: &PathBuf,
    bytes: &[u8],
) -> Result<usize, ScratchError> {
    if spill.is_none() {
        let file = tempfile::tempfile_in(dir)
            .map_err(|e| ScratchError::new("create a list's scratch file in", dir, e))?;
        *spill = Some(Spill {
            writer: BufWriter::with_capacity(1 << 18, file),
            written: 0,
            map: None,
        });
    }
    let spill = spill.as_mut().expect("created above");
    let offset = spill.written;
    spill
        .writer
        .write_all(bytes)
        .map_err(|e| ScratchError::new("write a list's scratch file in", dir, e))?;
    spill.written += bytes.len();
    Ok(offset)
}

/// A list that parallel tasks add to. Out of core a task's keys are narrowed and encoded
/// before the lock is taken, which then covers only the append to the scratch file (with the
/// encoding under it, threads of an out-of-core BOARD33 stage waited for this lock 4.5% of
/// their time).
///
/// In memory each thread copies its tasks' keys into collecting segments of its own
/// ([`Sink::absorb`]), joined to the list's by [`Sink::into_inner`]: the copies (and the
/// first touches of the segments' new pages) are most of a task's hand-over, and with one
/// lock for both threads a thread of BOARD33 `browns=11`'s plies waited for the other's
/// copy 13.6% of its time (off-CPU profile, `docs/benchmarks.md`).
pub(crate) struct Sink {
    list: Mutex<Frontier>,
    /// In memory, one collecting list per thread of the pool (by
    /// [`rayon::current_thread_index`]) and a last one for threads outside it; out of core
    /// none.
    collected: Vec<Mutex<Frontier>>,
    spills: bool,
}

impl Sink {
    /// An empty list for a stage of `n` slots.
    pub(crate) fn new(n: usize, space: &Workspace) -> Sink {
        let list = Frontier::new(n, space);
        let spills = list.is_spilled();
        let collectors = if spills {
            0
        } else {
            rayon::current_num_threads() + 1
        };
        Sink {
            spills,
            list: Mutex::new(list),
            collected: (0..collectors)
                .map(|_| Mutex::new(Frontier::new(n, space)))
                .collect(),
        }
    }

    /// Whether the list spills (out of core).
    pub(crate) fn spills(&self) -> bool {
        self.spills
    }

    /// Adds the keys `keys` of slot `slot`.
    pub(crate) fn push(&self, slot: usize, keys: Vec<u64>) {
        let ready = Ready::of(keys, self.spills);
        self.lock().push_ready(slot, ready);
    }

    /// Adds what one parallel task produced: in memory copied into each slot's collecting
    /// segment (the task's vectors then serve its thread's next task), out of core encoded
    /// and appended to the scratch file.
    pub(crate) fn absorb(&self, mut out: SlotLists) {
        if !self.spills {
            // This thread's own collecting list: no other thread waits for the copy.
            let last = self.collected.len() - 1;
            let own = rayon::current_thread_index().map_or(last, |i| i.min(last));
            let mut list = self.collected[own].lock().expect("collecting list lock");
            for (slot, keys) in out.keys.iter_mut().enumerate() {
                list.append(slot, keys, keys.is_sorted());
                keys.clear();
            }
            return;
        }
        let ready: Vec<(usize, Ready)> = std::mem::take(&mut out.keys)
            .into_iter()
            .enumerate()
            .filter(|(_, keys)| !keys.is_empty())
            .map(|(slot, keys)| (slot, Ready::of(keys, self.spills)))
            .collect();
        let mut list = self.lock();
        for (slot, ready) in ready {
            list.push_ready(slot, ready);
        }
    }

    /// The list: what was pushed, and the threads' collected keys.
    pub(crate) fn into_inner(self) -> Frontier {
        let mut list = self.list.into_inner().expect("frontier lock");
        for collected in self.collected {
            list.join(collected.into_inner().expect("collecting list lock"));
        }
        list
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Frontier> {
        self.list.lock().expect("frontier lock")
    }
}

/// Bytes written by [`append_spill`] seen as keys again (`u64` or `u32`). Panics if they are
/// not aligned to the key size: the map is page-aligned and segments start at multiples of 8.
fn as_keys<K: bytemuck::Pod>(bytes: &[u8]) -> &[K] {
    bytemuck::cast_slice(bytes)
}

/// One parallel task's output: keys per list (a stage's lists are its sections: two per
/// slot), and which slots' arrays it touched (so that the out-of-core kernel knows which slices
/// were just used).
pub(crate) struct SlotLists {
    pub(crate) keys: Vec<Vec<u64>>,
    pub(crate) touched: Vec<bool>,
}

thread_local! {
    /// Emptied key vectors of this thread's finished tasks, with their room, for its next
    /// ones (see [`Frontier::append`]).
    static SPARE_KEYS: RefCell<Vec<Vec<u64>>> = const { RefCell::new(Vec::new()) };
}

/// The most keys of room a spare vector keeps ([`SPARE_KEYS`]): a task's list of a slot
/// rarely holds more, and a thread keeps at most [`SPARE_VECTORS`] of them (16 MiB).
const SPARE_ROOM: usize = 1 << 13;

/// The most spare vectors a thread keeps.
const SPARE_VECTORS: usize = 256;

impl SlotLists {
    /// Empty lists for `lists` lists and `slots` slots, taken from this thread's spare vectors
    /// where it has some.
    pub(crate) fn new(lists: usize, slots: usize) -> SlotLists {
        let mut keys = SPARE_KEYS.with_borrow_mut(|spare| {
            let from = spare.len().saturating_sub(lists);
            spare.split_off(from)
        });
        keys.resize_with(lists, Vec::new);
        SlotLists {
            keys,
            touched: vec![false; slots],
        }
    }

    /// Adds `key` to list `list`.
    pub(crate) fn push(&mut self, list: usize, key: u64) {
        self.keys[list].push(key);
    }

    /// Notes that slot `slot`'s arrays were read or written.
    pub(crate) fn touch(&mut self, slot: u32) {
        self.touched[slot as usize] = true;
    }
}

impl Drop for SlotLists {
    /// Keeps the vectors (emptied) for this thread's next task ([`keep_spare`]).
    fn drop(&mut self) {
        for keys in self.keys.drain(..) {
            keep_spare(keys);
        }
    }
}

/// Keeps `keys`'s vector, emptied, among this thread's spare vectors if it has room for at
/// most [`SPARE_ROOM`] keys and the thread keeps fewer than [`SPARE_VECTORS`]; else frees it.
fn keep_spare(mut keys: Vec<u64>) {
    if keys.capacity() == 0 || keys.capacity() > SPARE_ROOM {
        return;
    }
    SPARE_KEYS.with_borrow_mut(|spare| {
        if spare.len() < SPARE_VECTORS {
            keys.clear();
            spare.push(keys);
        }
    });
}

/// An empty vector with room for `room` keys: one of this thread's spare vectors where it has
/// one. The initial sweep's scheduled exits take theirs here: a stage's sweep makes tens of
/// millions of them, and out of core each is freed once appended to its scratch file — new
/// ones from glibc's allocator, in a heap of gigabytes, were an eighth of BOARD33 `browns=16`'s
/// sweep (`_int_malloc` sorting its unsorted bin, and the pages of the new memory faulted in).
pub(crate) fn spare_vector(room: usize) -> Vec<u64> {
    let mut keys = SPARE_KEYS
        .with_borrow_mut(|spare| spare.pop())
        .unwrap_or_default();
    keys.reserve(room);
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spilled_lists_vector_serves_its_thread_again_and_a_kept_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let spilled = Sink::new(1, &Workspace::out_of_core(dir.path().into(), 0));
        let mut keys = Vec::with_capacity(1000);
        keys.extend([5u64, 9, 12]);
        let held = keys.as_ptr();
        spilled.push(0, keys);
        // The same allocation, emptied, for the thread's next list.
        let again = spare_vector(10);
        assert_eq!(
            (again.as_ptr(), again.len(), again.capacity()),
            (held, 0, 1000)
        );
        // One larger than a spare keeps is freed; a list kept in memory keeps its vector.
        spilled.push(0, vec![1; SPARE_ROOM + 1]);
        let kept = Sink::new(1, &Workspace::in_memory());
        kept.push(0, again);
        kept.push(0, vec![7; 100]);
        assert_eq!(spare_vector(10).capacity(), 10, "no spare left");
        let mut f = spilled.into_inner();
        f.seal().unwrap();
        assert_eq!(f.len(), 3 + SPARE_ROOM as u64 + 1);
    }

    fn roundtrip(space: &Workspace) -> Vec<(u32, Vec<u64>)> {
        // Through a sink (keys encoded before its lock, out of core) and directly.
        let sink = Sink::new(3, space);
        let mut out = SlotLists::new(3, 3);
        for k in 0..10_000u64 {
            out.push((k % 3) as usize, k * 7);
        }
        sink.absorb(out);
        sink.push(1, vec![u64::MAX, 5]);
        let mut f = sink.into_inner();
        // 33 bits with bits 12 to 31 clear: narrowed by taking bit 31 out.
        f.push(2, vec![1 << 32 | 3, 1 << 32 | 1 << 11, 1 << 9]);
        f.push(0, Vec::new());
        f.seal().unwrap();
        assert_eq!(f.len(), 10_005);
        f.chunks(&[2, 1])
            .into_iter()
            .map(|(s, c)| (s, c.iter().collect()))
            .collect()
    }

    /// The keys of each slot, in the order read, concatenated.
    fn by_slot(chunks: &[(u32, Vec<u64>)]) -> Vec<(u32, Vec<u64>)> {
        let mut slots: Vec<(u32, Vec<u64>)> = Vec::new();
        for (slot, keys) in chunks {
            match slots.last_mut() {
                Some((s, all)) if s == slot => all.extend(keys),
                _ => slots.push((*slot, keys.clone())),
            }
        }
        slots
    }

    #[test]
    fn spilled_lists_read_back_what_memory_lists_hold() {
        let dir = tempfile::tempdir().unwrap();
        let spilled = by_slot(&roundtrip(&Workspace::out_of_core(dir.path().into(), 0)));
        let memory = by_slot(&roundtrip(&Workspace::in_memory()));
        // Spilled keys come back in the order pushed, slot by slot in the order asked.
        assert_eq!(spilled.len(), 2);
        assert_eq!(spilled[0].0, 2);
        assert_eq!(spilled[1].0, 1);
        assert_eq!(spilled[1].1[spilled[1].1.len() - 2..], [u64::MAX, 5]);
        // In memory the same keys, sorted within each slot.
        for ((s, mut keys), (m, memory_keys)) in spilled.into_iter().zip(memory) {
            assert_eq!(s, m);
            keys.sort_unstable();
            assert_eq!(keys, memory_keys);
        }
    }

    #[test]
    fn keys_narrow_to_32_bits_exactly_when_one_clear_bit_makes_room() {
        assert_eq!(Narrowing::of(0xFFFF_FFFF), Some(Narrowing { gap: 63 }));
        assert_eq!(
            Narrowing::of(1 << 32 | 0xFFFF_FF7F),
            Some(Narrowing { gap: 7 })
        );
        assert_eq!(
            Narrowing::of(1 << 32 | 0x7FFF_FFFF),
            Some(Narrowing { gap: 31 })
        );
        assert_eq!(Narrowing::of(0x1_FFFF_FFFF), None);
        assert_eq!(Narrowing::of(1 << 33), None);
        assert_eq!(Narrowing::of(u64::MAX), None);
        // Every key within the union comes back.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for union in [
            0xFFFF_FFFFu64,
            1 << 32 | 0xFFFF_FF7F,
            1 << 32 | 0x7FFF_FFFF,
            1 << 32 | 1,
        ] {
            let n = Narrowing::of(union).unwrap();
            for _ in 0..1000 {
                x = x.rotate_left(17).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ 0x94D0_49BB;
                let key = x & union;
                assert_eq!(n.widen(n.narrow(key)), key, "{key:#x} in {union:#x}");
            }
        }
    }

    #[test]
    fn spilled_lists_take_four_bytes_a_key_when_the_keys_narrow_and_about_one_when_they_ascend() {
        let dir = tempfile::tempdir().unwrap();
        let space = Workspace::out_of_core(dir.path().into(), 0);
        let mut f = Frontier::new(3, &space);
        let unsorted: Vec<u64> = (0..1001u64).rev().map(|k| k << 22 | 1 << 32).collect();
        f.push(0, unsorted.clone());
        f.push(1, vec![1 << 40, 1]);
        // Ascending keys of 33 bits, gaps of 3: coded in blocks of CHUNK keys, each from zero.
        let ascending: Vec<u64> = (0..10_000u64).map(|k| 1 << 32 | (k * 3 + 1)).collect();
        f.push(2, ascending.clone());
        f.seal().unwrap();
        let written = f.spill.as_ref().map(|s| s.written);
        // 1001 narrow keys padded to 8 bytes, two wide ones; then three blocks: a first key
        // of 5 bytes (narrowed, its bit 32 moves down to bit 31), then a byte a gap.
        let first = |k: u64| crate::gaps::write_varint(k, &mut [0; 10]);
        let coded: usize = [0, CHUNK as u64, 2 * CHUNK as u64]
            .iter()
            .map(|&k| first(1 << 31 | (k * 3 + 1)))
            .sum::<usize>()
            + (10_000 - 3);
        assert_eq!(written, Some(4008 + 16 + coded.div_ceil(8) * 8));
        let chunks = f.chunks(&[0, 1, 2]);
        assert!(matches!(chunks[0].1, KeyChunk::Narrow(..)));
        assert!(matches!(chunks[1].1, KeyChunk::Wide(..)));
        let blocks: Vec<usize> = chunks[2..].iter().map(|(_, c)| c.len()).collect();
        assert_eq!(blocks, [CHUNK, CHUNK, 10_000 - 2 * CHUNK]);
        for (_, chunk) in &chunks[2..] {
            assert!(matches!(chunk, KeyChunk::Coded { .. }));
            let keys: Vec<u64> = chunk.iter().collect();
            assert_eq!(
                (chunk.first(), chunk.last()),
                (keys.first().copied(), keys.last().copied())
            );
            assert_eq!(chunk.keys(&mut Vec::new()), keys);
        }
        let keys: Vec<u64> = chunks.iter().flat_map(|(_, c)| c.iter()).collect();
        let want: Vec<u64> = unsorted
            .into_iter()
            .chain([1 << 40, 1])
            .chain(ascending.iter().copied())
            .collect();
        assert_eq!(keys, want);
        // Gathered for sorting, 4 bytes a key; and sorted as a checkpoint reads them: the
        // blocks as they are.
        let group: Vec<(u32, KeyChunk)> = chunks[2..].to_vec();
        assert_eq!(GroupKeys::of(&group).into_wide(), ascending);
        let pieces: Vec<KeyChunk> = group.iter().rev().map(|(_, c)| *c).collect();
        let sorted = sorted_keys(&pieces);
        assert!(sorted.reads_pieces());
        assert_eq!(sorted.iter().collect::<Vec<u64>>(), ascending);
        // Coded for a checkpoint: the blocks copied, each first gap coded again, give the
        // bytes of the narrow keys coded in one pass; decoded, the keys.
        let n = Narrowing::of(1 << 32 | 0x7FFF).unwrap();
        let mut one_pass = Vec::new();
        crate::gaps::encode_gaps(
            ascending.iter().map(|&k| u64::from(n.narrow(k))),
            &mut one_pass,
        );
        let encoded = sorted.encode();
        assert_eq!(
            encoded,
            EncodedKeys {
                narrowing: Some(n),
                gaps: one_pass
            }
        );
        assert_eq!(
            EncodedKeys::decode(encoded.narrowing, &encoded.gaps).unwrap(),
            ascending
        );
        // A narrow key past 32 bits is damage.
        let mut wide = Vec::new();
        crate::gaps::encode_gaps([1u64 << 33].into_iter(), &mut wide);
        assert!(EncodedKeys::decode(Some(n), &wide).is_err());
    }

    #[test]
    fn sorted_keys_encode_in_parallel_runs_to_the_bytes_of_one_pass() {
        // Pieces in order (read as they are) and overlapping pieces (gathered, 4 bytes a key),
        // both long enough for several runs; gaps of every varint length up to three bytes.
        let keys: Vec<u64> = (0..3 * ENCODE_RUN as u64 + 777)
            .map(|k| match k % 100_000 {
                0 => 1 << 20,
                _ => (k % 1000) * (k % 1000) * 17 % 1000,
            })
            .scan(0u64, |sum, gap| {
                *sum += gap;
                Some(*sum)
            })
            .collect();
        assert!(keys.last().unwrap() >> 32 == 0, "keys narrow");
        let narrowing = Narrowing::of(u64::from(u32::MAX)).unwrap();
        let narrow: Vec<u32> = keys.iter().map(|&k| narrowing.narrow(k)).collect();
        let mut one_pass = Vec::new();
        crate::gaps::encode_gaps(keys.iter().copied(), &mut one_pass);
        let in_order: Vec<KeyChunk> = keys.chunks(CHUNK).rev().map(KeyChunk::Wide).collect();
        let (a, b) = narrow.split_at(narrow.len() / 2);
        let overlapping: Vec<KeyChunk> = [b, a, &narrow[5..9]]
            .into_iter()
            .map(|k| KeyChunk::Narrow(k, narrowing))
            .collect();
        for (pieces, gathered) in [(in_order, false), (overlapping, true)] {
            let sorted = sorted_keys(&pieces);
            assert_eq!(sorted.reads_pieces(), !gathered);
            let mut want = one_pass.clone();
            if gathered {
                // The four repeated keys: gaps of zero after each.
                want = Vec::new();
                let mut all = keys.clone();
                all.extend(&keys[5..9]);
                all.sort_unstable();
                crate::gaps::encode_gaps(all.into_iter(), &mut want);
            }
            // Narrowed pieces are coded narrow (here the narrow keys are the keys).
            let narrowing = gathered.then_some(narrowing);
            let encoded = sorted.encode();
            assert_eq!(
                encoded,
                EncodedKeys {
                    narrowing,
                    gaps: want
                },
                "gathered: {gathered}"
            );
        }
    }

    /// Segments each sorted, over disjoint ranges, pushed in a shuffled order (as a sweep's
    /// parallel tasks hand over their scheduled exits), and one more segment that overlaps.
    fn push_ranges(f: &mut Frontier, overlapping: bool) -> Vec<u64> {
        let mut pushed = Vec::new();
        for range in [3u64, 0, 4, 1, 2] {
            let keys: Vec<u64> = (0..5000).map(|k| (range << 20) | (k * 3)).collect();
            pushed.extend(&keys);
            f.push(0, keys);
        }
        if overlapping {
            let keys: Vec<u64> = (0..100).map(|k| (2 << 20) | (k * 3 + 1)).collect();
            pushed.extend(&keys);
            f.push(0, keys);
        }
        pushed.sort_unstable();
        pushed
    }

    #[test]
    fn sorted_disjoint_segments_come_out_sorted_without_a_sort() {
        for overlapping in [false, true] {
            // Spilled: the group of chunks is gathered in the order of their first keys.
            let dir = tempfile::tempdir().unwrap();
            let space = Workspace::out_of_core(dir.path().into(), 0);
            let mut f = Frontier::new(1, &space);
            let want = push_ranges(&mut f, overlapping);
            f.seal().unwrap();
            let chunks = f.chunks(&[0]);
            let mut keys = GroupKeys::of(&chunks);
            let gathered = match &keys {
                GroupKeys::Narrow(k, _) => k.is_sorted(),
                GroupKeys::Wide(k) => k.is_sorted(),
            };
            assert_eq!(gathered, !overlapping, "gathered sorted");
            keys.sort_runs(usize::MAX);
            assert_eq!(keys.into_wide(), want);
            // A checkpoint reads disjoint sorted pieces as they are, and gathers the others.
            let pieces: Vec<KeyChunk> = chunks.iter().map(|&(_, c)| c).collect();
            let sorted = sorted_keys(&pieces);
            assert_eq!(matches!(sorted.0, Sorted::InOrder(..)), !overlapping);
            assert_eq!(sorted.len(), want.len());
            assert_eq!(sorted.iter().collect::<Vec<_>>(), want);
            // In memory: sealed into one sorted segment either way.
            let mut f = Frontier::new(1, &Workspace::in_memory());
            let want = push_ranges(&mut f, overlapping);
            f.seal().unwrap();
            let keys: Vec<u64> = f.chunks(&[0]).iter().flat_map(|(_, c)| c.iter()).collect();
            assert_eq!(keys, want);
        }
    }

    #[test]
    fn a_group_sorted_narrowed_gives_its_keys_sorted_wide() {
        let dir = tempfile::tempdir().unwrap();
        let space = Workspace::out_of_core(dir.path().into(), 0);
        let mut f = Frontier::new(3, &space);
        // 33-bit keys with bit 20 clear (narrowed), pushed out of order in several segments;
        // slot 1 also gets keys that do not narrow.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut pushed = Vec::new();
        for _ in 0..5 {
            let keys: Vec<u64> = (0..3000)
                .map(|_| {
                    x = x.rotate_left(17).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ 0x94D0_49BB;
                    x & (1 << 32 | 0xFFEF_FFFF)
                })
                .collect();
            pushed.extend(&keys);
            f.push(0, keys);
        }
        f.push(1, vec![9, 1 << 40, 3]);
        f.seal().unwrap();
        let chunks = f.chunks(&[0]);
        let mut keys = GroupKeys::of(&chunks);
        assert!(matches!(keys, GroupKeys::Narrow(..)));
        keys.sort_runs(usize::MAX);
        pushed.sort_unstable();
        assert_eq!(keys.into_wide(), pushed);
        // Sorted in runs, each run is sorted and together they hold the keys.
        let mut keys = GroupKeys::of(&chunks);
        keys.sort_runs(4096);
        let runs = keys.into_wide();
        assert!(runs.chunks(4096).all(|run| run.is_sorted()));
        let mut all = runs.clone();
        all.sort_unstable();
        assert_eq!(all, pushed);
        // Keys of another width stay wide.
        let mut wide = GroupKeys::of(&f.chunks(&[1]));
        assert!(matches!(wide, GroupKeys::Wide(..)));
        wide.sort_runs(usize::MAX);
        assert_eq!(wide.into_wide(), vec![3, 9, 1 << 40]);
        // A checkpoint's `sorted_keys` reads the same keys in order without widening them
        // first, narrowed or not.
        let pieces: Vec<KeyChunk> = chunks.iter().map(|&(_, c)| c).collect();
        let sorted = sorted_keys(&pieces);
        assert_eq!(sorted.len(), pushed.len());
        assert!(matches!(sorted.0, Sorted::Gathered(GroupKeys::Narrow(..))));
        assert_eq!(sorted.iter().collect::<Vec<_>>(), pushed);
        let pieces: Vec<KeyChunk> = f.chunks(&[1]).iter().map(|&(_, c)| c).collect();
        assert_eq!(
            sorted_keys(&pieces).iter().collect::<Vec<_>>(),
            [3, 9, 1 << 40]
        );
    }

    #[test]
    fn keys_handed_over_are_collected_and_sealed_in_order() {
        // Tasks' keys in memory: slot 0 gets ascending runs that follow one another (kept as
        // collected, in order), slot 1 shuffled keys (sorted when sealed), slot 2 a run that
        // ascends but starts below the last one; together more than two collecting segments.
        let sink = Sink::new(3, &Workspace::in_memory());
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut shuffled = Vec::new();
        let per_task = 1000u64;
        let tasks = 3 * COLLECTED_KEYS as u64 / per_task;
        for task in 0..tasks {
            let mut out = SlotLists::new(3, 3);
            for k in 0..per_task {
                out.push(0, task * per_task + k);
                x = x.rotate_left(17).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ 0x94D0_49BB;
                out.push(1, x >> 20);
                shuffled.push(x >> 20);
            }
            sink.absorb(out);
        }
        let mut out = SlotLists::new(3, 3);
        for k in [5, 6, 7] {
            out.push(2, k);
        }
        sink.absorb(out);
        let mut out = SlotLists::new(3, 3);
        for k in [1, 9] {
            out.push(2, k);
        }
        sink.absorb(out);
        let mut f = sink.into_inner();
        assert_eq!(f.len(), 2 * tasks * per_task + 5);
        assert!(f.slots[0].len() > 2 && f.slots[1].len() > 2);
        f.seal().unwrap();
        let keys = |f: &Frontier, slot: usize| -> Vec<u64> {
            f.chunks(&[slot])
                .iter()
                .flat_map(|(_, c)| c.iter())
                .collect()
        };
        // Slot 0: its segments as they were collected (no copy), in order.
        assert!(f.slots[0].len() > 2);
        assert_eq!(keys(&f, 0), (0..tasks * per_task).collect::<Vec<_>>());
        shuffled.sort_unstable();
        assert_eq!(keys(&f, 1), shuffled);
        assert_eq!(keys(&f, 2), [1, 5, 6, 7, 9]);
        // The tasks' emptied vectors serve this thread's next lists.
        let out = SlotLists::new(3, 3);
        assert!(out.keys.iter().all(|keys| keys.is_empty()));
        assert!(out.keys.iter().any(|keys| keys.capacity() > 0));
    }

    #[test]
    fn each_pool_thread_collects_its_own_keys_and_the_list_gets_them_all() {
        // Tasks on a pool of two threads hand keys over in memory: each thread's go to its own
        // collecting list (so that no thread waits for the other's copy), a pushed list goes to
        // the shared one, and the list taken out holds them all.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let (f, by_thread) = pool.install(|| {
            let sink = Sink::new(2, &Workspace::in_memory());
            assert_eq!(
                sink.collected.len(),
                3,
                "two threads and one outside the pool"
            );
            (0..64u64).into_par_iter().for_each(|task| {
                let mut out = SlotLists::new(2, 2);
                for k in 0..1000 {
                    out.push((k % 2) as usize, task * 1000 + k);
                }
                sink.absorb(out);
            });
            sink.push(1, vec![u64::MAX]);
            let by_thread: Vec<u64> = sink
                .collected
                .iter()
                .map(|list| list.lock().unwrap().len())
                .collect();
            (sink.into_inner(), by_thread)
        });
        assert_eq!(by_thread.iter().sum::<u64>(), 64_000);
        assert_eq!(by_thread[2], 0, "no task ran outside the pool");
        let mut f = f;
        assert_eq!(f.len(), 64_001);
        f.seal().unwrap();
        let keys = |slot: usize| -> Vec<u64> {
            f.chunks(&[slot])
                .iter()
                .flat_map(|(_, c)| c.iter())
                .collect()
        };
        assert_eq!(keys(0), (0..64_000).step_by(2).collect::<Vec<_>>());
        let mut odd: Vec<u64> = (1..64_000).step_by(2).collect();
        odd.push(u64::MAX);
        assert_eq!(keys(1), odd);
    }

    #[test]
    fn a_scratch_error_names_the_operation_and_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone");
        let mut f = Frontier::new(2, &Workspace::out_of_core(missing.clone(), 0));
        f.push(1, vec![1, 2, 3]);
        let e = f.seal().unwrap_err().to_string();
        let wanted = format!(
            "cannot create a list's scratch file in {}: ",
            missing.display()
        );
        assert!(e.starts_with(&wanted), "{e}");
        assert!(e.ends_with("No such file or directory (os error 2)"), "{e}");
    }
}
