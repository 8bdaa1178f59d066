//! Lists of positions (8-byte keys) grouped by slice slot: the kernel's frontiers and
//! scheduled exits, in memory or spilled to a scratch file.
//!
//! A list is filled by parallel tasks (each hands over what it produced for every slot) and,
//! one ply later, read slot by slot. In memory a task's vector is kept as one *segment*, never
//! copied; out of core it is appended to the list's scratch file at once and only its offset
//! kept, and the file is mapped read-only when the list is read. Segments of one slot may come
//! from many tasks; their order does not matter to the kernel's results.
//!
//! It matters to its speed: when a list in memory is sealed, each slot's segments become one,
//! sorted by key. Expanding a sorted list visits the targets of one kind of un-move in nearly
//! increasing index order (a key's colex rank grows with its mask), so the target arrays are
//! walked in a few streams the caches follow instead of at random: on BOARD33, whose slices
//! are far larger than the caches, this took 12–27% off a stage (8% off BOARD25; figures in
//! docs/benchmarks.md). Spilled lists are sorted a group at a time as they are read
//! (`kernel::expand`).

use crate::atomic::ScratchError;
use crate::workspace::Workspace;
use memmap2::{Mmap, UncheckedAdvice};
use rayon::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Frontier lists are expanded in chunks of this many keys per parallel task.
pub(crate) const CHUNK: usize = 1 << 12;

/// Where one segment's keys are.
enum Segment {
    Memory(Vec<u64>),
    /// `len` keys at byte `offset` of the scratch file.
    Spilled {
        offset: usize,
        len: usize,
    },
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
            len: 0,
            scratch: space.scratch().map(PathBuf::from),
            spill: None,
            error: None,
            sorted: true,
        }
    }

    /// Adds the keys `keys` of slot `slot`.
    pub(crate) fn push(&mut self, slot: usize, keys: Vec<u64>) {
        if keys.is_empty() {
            return;
        }
        self.len += keys.len() as u64;
        self.sorted = false;
        let Some(dir) = &self.scratch else {
            self.slots[slot].push(Segment::Memory(keys));
            return;
        };
        match spill_keys(&mut self.spill, dir, &keys) {
            Ok(offset) => self.slots[slot].push(Segment::Spilled {
                offset,
                len: keys.len(),
            }),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }

    /// Adds what one parallel task produced.
    pub(crate) fn absorb(&mut self, out: SlotLists) {
        for (slot, keys) in out.keys.into_iter().enumerate() {
            self.push(slot, keys);
        }
    }

    /// Number of keys.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Number of keys of the slots (lists) for which `pick` is true.
    pub(crate) fn len_where(&self, pick: impl Fn(usize) -> bool) -> u64 {
        let segment_len = |s: &Segment| match s {
            Segment::Memory(keys) => keys.len() as u64,
            Segment::Spilled { len, .. } => *len as u64,
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
    pub(crate) fn chunks(&self, slots: &[usize]) -> Vec<(u32, &[u64])> {
        let map = self.spill.as_ref().and_then(|s| s.map.as_deref());
        let mut chunks = Vec::new();
        for &slot in slots {
            for segment in &self.slots[slot] {
                let keys: &[u64] = match segment {
                    Segment::Memory(keys) => keys,
                    Segment::Spilled { offset, len } => {
                        let bytes = &map.expect("a spilled list is sealed before it is read")
                            [*offset..*offset + len * 8];
                        as_keys(bytes)
                    }
                };
                chunks.extend(keys.chunks(CHUNK).map(|c| (slot as u32, c)));
            }
        }
        chunks
    }

    /// Drops the pages of the spill file read so far from the resident set.
    pub(crate) fn release(&self) {
        if let Some(map) = self.spill.as_ref().and_then(|s| s.map.as_ref()) {
            // SAFETY: a read-only file mapping: dropped pages are read back from the file.
            let _ = unsafe { map.unchecked_advise(UncheckedAdvice::DontNeed) };
        }
    }
}

/// Makes the in-memory segments of one slot a single segment sorted by key.
fn merge_sorted(segments: &mut Vec<Segment>) {
    let total: usize = segments
        .iter()
        .map(|s| match s {
            Segment::Memory(keys) => keys.len(),
            Segment::Spilled { .. } => unreachable!("only lists in memory are merged"),
        })
        .sum();
    if total < 2 {
        return;
    }
    // A slot's claims found bit-parallel come as one segment in index order: sorted already.
    if let [Segment::Memory(keys)] = &segments[..] {
        if keys.is_sorted() {
            return;
        }
    }
    let mut all = Vec::with_capacity(total);
    for segment in segments.drain(..) {
        if let Segment::Memory(keys) = segment {
            all.extend_from_slice(&keys);
        }
    }
    // Sorted segments absorbed in order need no sort either (a check costs a read).
    if !all.is_sorted() {
        sort_for_locality(&mut all);
    }
    segments.push(Segment::Memory(all));
}

/// Sorts `keys` for the locality of the ply that expands them (see the module documentation):
/// a radix sort (sorting on the 24 highest bits only, three passes instead of up to five, was
/// measured: no faster).
pub(crate) fn sort_for_locality(keys: &mut [u64]) {
    radsort::sort(keys);
}

/// Appends `keys` to the spill file (created on first use in `dir`); returns their offset.
fn spill_keys(
    spill: &mut Option<Spill>,
    dir: &PathBuf,
    keys: &[u64],
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
    let mut bytes = Vec::with_capacity(keys.len() * 8);
    for key in keys {
        bytes.extend_from_slice(&key.to_ne_bytes());
    }
    spill
        .writer
        .write_all(&bytes)
        .map_err(|e| ScratchError::new("write a list's scratch file in", dir, e))?;
    spill.written += bytes.len();
    Ok(offset)
}

/// Bytes written by [`spill_keys`] seen as keys again.
fn as_keys(bytes: &[u8]) -> &[u64] {
    assert!(
        (bytes.as_ptr() as usize).is_multiple_of(8) && bytes.len().is_multiple_of(8),
        "spilled keys are 8-aligned (page-aligned map, offsets multiples of 8)"
    );
    // SAFETY: alignment and length checked above; every bit pattern is a valid u64; the keys
    // were written with `to_ne_bytes` by this process.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<u64>(), bytes.len() / 8) }
}

/// One parallel task's output: keys per list (a stage's lists are its sections: two per
/// slot), and which slots' arrays it touched (so that the out-of-core kernel knows which slices
/// were just used).
pub(crate) struct SlotLists {
    pub(crate) keys: Vec<Vec<u64>>,
    pub(crate) touched: Vec<bool>,
}

impl SlotLists {
    /// Empty lists for `lists` lists and `slots` slots.
    pub(crate) fn new(lists: usize, slots: usize) -> SlotLists {
        SlotLists {
            keys: vec![Vec::new(); lists],
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

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(space: &Workspace) -> Vec<(u32, Vec<u64>)> {
        let mut f = Frontier::new(3, space);
        let mut out = SlotLists::new(3, 3);
        for k in 0..10_000u64 {
            out.push((k % 3) as usize, k * 7);
        }
        f.absorb(out);
        f.push(1, vec![u64::MAX, 5]);
        f.seal().unwrap();
        assert_eq!(f.len(), 10_002);
        f.chunks(&[2, 1])
            .into_iter()
            .map(|(s, c)| (s, c.to_vec()))
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
