//! Slice table files: value arrays in independently compressed zstd blocks.
//!
//! Layout of a file:
//!
//! ```text
//! "RETROTB1"                          8-byte magic
//! block, block, ...                   zstd frames, each BLOCK values of one section
//! index                               JSON: label, sections, per block (offset, length, xxh3)
//! index_offset u64 | index_len u64 | xxh3(index) u64 | "RETROEND"      32-byte footer (LE)
//! ```
//!
//! A reader maps the file (memmap2), checks the footer and the index checksum at open, and each
//! block's checksum before decompressing it; so damage anywhere is reported with the file's
//! name, never returned as values. The manifest additionally records the whole file's checksum.
//!
//! A section may be **derived** rather than stored ([`Section::Derived`]): its index entry
//! keeps its length and the histogram of its values but no blocks, and asking for its values
//! is an error ([`StoreError::NotStored`]). Its values are those of the game's defining
//! recurrence over the other section's values, one ply away; the reader of a job directory
//! computes them (Sixteen Musashi's black-to-move values, which no later stage reads, were
//! 62% of the bytes of BOARD33's tables).

use crate::block_cache::{Block, BlockCache};
use crate::{checksum, StoreError};
use memmap2::Mmap;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const MAGIC: &[u8; 8] = b"RETROTB1";
const END_MAGIC: &[u8; 8] = b"RETROEND";
const FOOTER: usize = 32;
/// Values per compressed block: small enough that a random probe decompresses little.
pub const BLOCK: usize = 1 << 14;
/// Decompressed blocks kept per open table before the cache is emptied.
const CACHE_BLOCKS: usize = 256;

#[derive(Serialize, Deserialize, Debug, Clone)]
struct Index {
    label: String,
    block: usize,
    sections: Vec<SectionIndex>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
struct SectionIndex {
    name: String,
    len: u64,
    /// `(offset, compressed length, xxh3 of the compressed bytes)` per block.
    blocks: Vec<(u64, u32, u64)>,
    /// For a derived section (no blocks): the histogram of its values, by byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    derived: Option<BTreeMap<u8, u64>>,
}

/// One section of a table to write.
pub enum Section<'a> {
    /// Values stored in compressed blocks.
    Stored(&'a [u8]),
    /// Values not stored: computed by readers from another section. The table records how
    /// many there are and their histogram (what a manifest rebuilt from the files needs).
    Derived {
        /// Number of values.
        len: u64,
        /// Values by byte.
        histogram: BTreeMap<u8, u64>,
    },
}

/// Encodes slice tables.
pub struct TableWriter;

impl TableWriter {
    /// The bytes of a table file holding `sections` (name, values), compressed at `level`.
    pub fn encode(label: &str, sections: &[(&str, &[u8])], level: i32) -> Vec<u8> {
        let sections: Vec<(&str, Section)> = sections
            .iter()
            .map(|&(name, values)| (name, Section::Stored(values)))
            .collect();
        Self::encode_sections(label, &sections, level)
    }

    /// The bytes of a table file holding `sections`, stored or derived, compressed at `level`.
    pub fn encode_sections(label: &str, sections: &[(&str, Section)], level: i32) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        let mut index = Index {
            label: label.to_string(),
            block: BLOCK,
            sections: Vec::new(),
        };
        // The blocks are compressed in parallel runs of GROUP_BLOCKS, one compression context
        // per run: creating one per 16 KiB block cost about as much as compressing it. A
        // frame depends only on its block and the level, so the bytes are the same however
        // the work is divided.
        const GROUP_BLOCKS: usize = 64;
        for (name, section) in sections {
            let values = match section {
                Section::Stored(values) => values,
                Section::Derived { len, histogram } => {
                    index.sections.push(SectionIndex {
                        name: name.to_string(),
                        len: *len,
                        blocks: Vec::new(),
                        derived: Some(histogram.clone()),
                    });
                    continue;
                }
            };
            let frames: Vec<Vec<(Vec<u8>, u64)>> = values
                .par_chunks(BLOCK * GROUP_BLOCKS)
                .map(|group| {
                    let mut compressor = zstd::bulk::Compressor::new(level)
                        .expect("a zstd context for a valid level");
                    group
                        .chunks(BLOCK)
                        .map(|chunk| {
                            let frame = compressor
                                .compress(chunk)
                                .expect("zstd compression of memory");
                            let sum = checksum(&frame);
                            (frame, sum)
                        })
                        .collect()
                })
                .collect();
            let mut blocks = Vec::with_capacity(values.len().div_ceil(BLOCK));
            for (frame, sum) in frames.iter().flatten() {
                blocks.push((out.len() as u64, frame.len() as u32, *sum));
                out.extend_from_slice(frame);
            }
            index.sections.push(SectionIndex {
                name: name.to_string(),
                len: values.len() as u64,
                blocks,
                derived: None,
            });
        }
        let index_bytes = serde_json::to_vec(&index).expect("index serialises");
        let index_offset = out.len() as u64;
        out.extend_from_slice(&index_bytes);
        out.extend_from_slice(&index_offset.to_le_bytes());
        out.extend_from_slice(&(index_bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(&checksum(&index_bytes).to_le_bytes());
        out.extend_from_slice(END_MAGIC);
        out
    }
}

/// An open slice table, read through a memory map with a cache of decompressed blocks: its
/// own small one, or a bounded one shared with other tables ([`SliceTable::open_shared`]).
pub struct SliceTable {
    path: PathBuf,
    map: Mmap,
    index: Index,
    cache: Cached,
}

/// Where a table keeps its decompressed blocks.
enum Cached {
    /// Its own, by `(section, block)`, emptied when it reaches [`CACHE_BLOCKS`].
    Own(Mutex<HashMap<(usize, usize), Block>>),
    /// A cache shared with other tables, under this table's number.
    Shared(Arc<BlockCache>, u64),
}

impl SliceTable {
    /// Opens `path`, checking its footer and index.
    pub fn open(path: &Path) -> Result<SliceTable, StoreError> {
        Self::open_with(path, Cached::Own(Mutex::new(HashMap::new())))
    }

    /// Opens `path` like [`SliceTable::open`], keeping its decompressed blocks in `cache`
    /// (bounded, shared with the other tables opened with it).
    pub fn open_shared(path: &Path, cache: &Arc<BlockCache>) -> Result<SliceTable, StoreError> {
        Self::open_with(path, Cached::Shared(cache.clone(), cache.register()))
    }

    fn open_with(path: &Path, cache: Cached) -> Result<SliceTable, StoreError> {
        let file = File::open(path).map_err(|e| StoreError::io("open", path, e))?;
        // SAFETY: table files are immutable once renamed into place; they are replaced only by
        // rename, which leaves this mapping on the old inode.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| StoreError::io("map", path, e))?;
        let damaged = |what: &str| StoreError::damaged(path, what);
        if map.len() < MAGIC.len() + FOOTER || &map[..8] != MAGIC {
            return Err(damaged("not a retro table file (bad header)"));
        }
        let footer = &map[map.len() - FOOTER..];
        if &footer[24..] != END_MAGIC {
            return Err(damaged("truncated (no end marker)"));
        }
        let word = |i: usize| u64::from_le_bytes(footer[i * 8..i * 8 + 8].try_into().unwrap());
        let (offset, len, sum) = (word(0) as usize, word(1) as usize, word(2));
        if offset.checked_add(len) != Some(map.len() - FOOTER) {
            return Err(damaged("index location out of range"));
        }
        let index_bytes = &map[offset..offset + len];
        if checksum(index_bytes) != sum {
            return Err(damaged("index checksum mismatch"));
        }
        let index: Index = serde_json::from_slice(index_bytes)
            .map_err(|e| damaged(&format!("index unreadable: {e}")))?;
        for s in &index.sections {
            for &(o, l, _) in &s.blocks {
                if (o as usize).saturating_add(l as usize) > offset {
                    return Err(damaged("block outside the data area"));
                }
            }
        }
        Ok(SliceTable {
            path: path.to_path_buf(),
            map,
            index,
            cache,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The label written with the table.
    pub fn label(&self) -> &str {
        &self.index.label
    }

    /// The section names, in order.
    pub fn section_names(&self) -> Vec<&str> {
        self.index
            .sections
            .iter()
            .map(|s| s.name.as_str())
            .collect()
    }

    /// Number of values in section `section`.
    pub fn section_len(&self, section: usize) -> u64 {
        self.index.sections[section].len
    }

    /// Whether section `section` exists and its values are stored (not derived).
    pub fn is_stored(&self, section: usize) -> bool {
        self.index
            .sections
            .get(section)
            .is_some_and(|s| s.derived.is_none())
    }

    /// The histogram recorded for section `section` if it is derived ([`Section::Derived`]).
    pub fn derived_histogram(&self, section: usize) -> Option<&BTreeMap<u8, u64>> {
        self.index.sections.get(section)?.derived.as_ref()
    }

    /// `Err` naming the file unless section `section` exists and is stored.
    fn check_stored(&self, section: usize) -> Result<(), StoreError> {
        match self.index.sections.get(section) {
            None => Err(StoreError::damaged(
                &self.path,
                format!("no section {section} in this table"),
            )),
            Some(s) if s.derived.is_some() => Err(StoreError::NotStored {
                path: self.path.clone(),
                section: s.name.clone(),
            }),
            Some(_) => Ok(()),
        }
    }

    /// Decompresses block `block` of `section`, verifying its checksum and length.
    pub(crate) fn block(&self, section: usize, block: usize) -> Result<Vec<u8>, StoreError> {
        let s = &self.index.sections[section];
        let &(offset, len, sum) = s
            .blocks
            .get(block)
            .ok_or_else(|| StoreError::damaged(&self.path, "block index out of range"))?;
        let frame = &self.map[offset as usize..offset as usize + len as usize];
        if checksum(frame) != sum {
            return Err(StoreError::damaged(
                &self.path,
                format!("checksum mismatch in block {block} of section {}", s.name),
            ));
        }
        let expected = (s.len as usize - block * self.index.block).min(self.index.block);
        let values = decompress(frame, expected).map_err(|e| {
            StoreError::damaged(
                &self.path,
                format!("block {block} does not decompress: {e}"),
            )
        })?;
        if values.len() != expected {
            return Err(StoreError::damaged(
                &self.path,
                format!(
                    "block {block} has {} values, expected {expected}",
                    values.len()
                ),
            ));
        }
        Ok(values)
    }

    /// The value at `index` of `section`.
    pub fn value(&self, section: usize, index: u64) -> Result<u8, StoreError> {
        self.check_stored(section)?;
        if index >= self.section_len(section) {
            return Err(StoreError::damaged(
                &self.path,
                format!(
                    "index {index} beyond section length {}",
                    self.section_len(section)
                ),
            ));
        }
        let block = index as usize / self.index.block;
        let at = index as usize % self.index.block;
        match &self.cache {
            Cached::Shared(cache, table) => {
                let values = cache.get_or_load(*table, section, block, || {
                    self.block(section, block).map(Arc::new)
                })?;
                Ok(values[at])
            }
            Cached::Own(cache) => {
                let key = (section, block);
                if let Some(b) = cache.lock().expect("cache lock").get(&key) {
                    return Ok(b[at]);
                }
                let values = Arc::new(self.block(section, block)?);
                let value = values[at];
                let mut cache = cache.lock().expect("cache lock");
                if cache.len() >= CACHE_BLOCKS {
                    cache.clear();
                }
                cache.insert(key, values);
                Ok(value)
            }
        }
    }

    /// The whole of `section`, decompressed and verified.
    pub fn read_section(&self, section: usize) -> Result<Vec<u8>, StoreError> {
        self.check_stored(section)?;
        let mut out = vec![0; self.section_len(section) as usize];
        self.read_section_into(section, &mut out)?;
        Ok(out)
    }

    /// Decompresses and verifies `section` into `out`, which must have its length (used to fill
    /// a file-backed array one block at a time, without a copy of the section in memory).
    pub fn read_section_into(&self, section: usize, out: &mut [u8]) -> Result<(), StoreError> {
        self.check_stored(section)?;
        if out.len() as u64 != self.section_len(section) {
            return Err(StoreError::damaged(
                &self.path,
                format!(
                    "section {section} has {} values, the destination {}",
                    self.section_len(section),
                    out.len()
                ),
            ));
        }
        // Blocks in parallel: a driver loading a stage's inputs decompresses gigabytes.
        out.par_chunks_mut(self.index.block)
            .enumerate()
            .with_min_len(16)
            .try_for_each(|(block, chunk)| {
                chunk.copy_from_slice(&self.block(section, block)?);
                Ok(())
            })
    }

    /// Compressed bytes on disk.
    pub fn file_len(&self) -> u64 {
        self.map.len() as u64
    }

    /// Lets the operating system drop the mapped file's resident pages (they are read back
    /// from the file when touched again): a reader of many large tables keeps its resident
    /// memory to what it uses at the time.
    pub fn release(&self) {
        // SAFETY: the mapping is of an immutable file, read-only; MADV_DONTNEED only unmaps its
        // pages, which are read back from the file on the next touch. Failing is harmless.
        let _ = unsafe {
            self.map
                .unchecked_advise(memmap2::UncheckedAdvice::DontNeed)
        };
    }
}

thread_local! {
    /// One zstd decompression context per thread, kept between blocks: creating one costs
    /// more than decompressing a 16 KiB block (a server's cold probes decompress hundreds).
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Decompresses one frame of at most `capacity` bytes with this thread's context.
fn decompress(frame: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let decompressor = match slot.as_mut() {
            Some(d) => d,
            None => slot.insert(zstd::bulk::Decompressor::new()?),
        };
        decompressor.decompress(frame, capacity)
    })
}

/// The checksum of a whole file, as recorded in manifests.
pub fn file_checksum(path: &Path) -> Result<u64, StoreError> {
    let file = File::open(path).map_err(|e| StoreError::io("open", path, e))?;
    // SAFETY: see `SliceTable::open`.
    let map = unsafe { Mmap::map(&file) }.map_err(|e| StoreError::io("map", path, e))?;
    Ok(checksum(&map))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("retro-table-{}-{name}", std::process::id()))
    }

    #[test]
    fn round_trip_and_random_access() {
        let a: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 71) as u8).collect();
        let b: Vec<u8> = vec![3; 5];
        let bytes = TableWriter::encode("test", &[("attacker", &a), ("defender", &b)], 3);
        let path = temp("ok.tbl");
        crate::write_atomic(&path, &bytes).unwrap();
        let t = SliceTable::open(&path).unwrap();
        assert_eq!(t.section_names(), ["attacker", "defender"]);
        assert_eq!(t.read_section(0).unwrap(), a);
        assert_eq!(t.read_section(1).unwrap(), b);
        for i in [0u64, 1, 16383, 16384, 99_999] {
            assert_eq!(t.value(0, i).unwrap(), a[i as usize]);
        }
        assert!(t.value(1, 5).is_err());
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_derived_section_keeps_its_length_and_histogram_but_no_values() {
        // Values that do not compress away, so that the sizes below compare blocks.
        let a: Vec<u8> = (0..40_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        let histogram = BTreeMap::from([(1u8, 30_000u64), (2, 10_000)]);
        let bytes = TableWriter::encode_sections(
            "test",
            &[
                ("attacker", Section::Stored(&a)),
                (
                    "defender",
                    Section::Derived {
                        len: 40_000,
                        histogram: histogram.clone(),
                    },
                ),
            ],
            3,
        );
        let stored = TableWriter::encode("test", &[("attacker", &a), ("defender", &a)], 3);
        assert!(
            bytes.len() * 3 < stored.len() * 2,
            "the derived section takes no blocks"
        );
        let path = temp("derived.tbl");
        crate::write_atomic(&path, &bytes).unwrap();
        let t = SliceTable::open(&path).unwrap();
        assert_eq!(t.section_names(), ["attacker", "defender"]);
        assert!(t.is_stored(0) && !t.is_stored(1) && !t.is_stored(2));
        assert_eq!(t.section_len(1), 40_000);
        assert_eq!(t.derived_histogram(1), Some(&histogram));
        assert_eq!(t.derived_histogram(0), None);
        assert_eq!(t.read_section(0).unwrap(), a);
        for e in [
            t.value(1, 0).unwrap_err(),
            t.read_section(1).unwrap_err(),
            t.read_section_into(1, &mut vec![0; 40_000]).unwrap_err(),
        ] {
            assert!(matches!(e, StoreError::NotStored { .. }), "{e}");
            let e = e.to_string();
            assert!(e.contains("derived.tbl") && e.contains("defender"), "{e}");
        }
        std::fs::remove_file(path).unwrap();
    }

    /// Reads every 997th value of two 7-block tables twice through one cache of `blocks`
    /// blocks; returns the blocks decompressed.
    fn shared_reads(blocks: usize) -> u64 {
        let a: Vec<u8> = (0..100_000u32).map(|i| (i % 7) as u8).collect();
        let b: Vec<u8> = (0..100_000u32).map(|i| (i % 11) as u8).collect();
        let cache = BlockCache::new((blocks * BLOCK) as u64);
        let paths = [
            temp(&format!("shared-a-{blocks}.tbl")),
            temp(&format!("shared-b-{blocks}.tbl")),
        ];
        let mut tables = Vec::new();
        for (path, values) in paths.iter().zip([&a, &b]) {
            let bytes = TableWriter::encode("test", &[("attacker", values)], 3);
            crate::write_atomic(path, &bytes).unwrap();
            tables.push(SliceTable::open_shared(path, &cache).unwrap());
        }
        for round in 0..2 {
            for i in (0..100_000u64).step_by(997) {
                assert_eq!(tables[0].value(0, i).unwrap(), a[i as usize], "{round} {i}");
                assert_eq!(tables[1].value(0, i).unwrap(), b[i as usize], "{round} {i}");
                assert!(cache.bytes() <= cache.capacity());
            }
        }
        assert!(tables[0].value(1, 0).is_err(), "no such section");
        let loads = cache.misses();
        cache.clear();
        assert_eq!(cache.blocks(), 0);
        for path in paths {
            std::fs::remove_file(path).unwrap();
        }
        loads
    }

    #[test]
    fn tables_sharing_a_bounded_cache_read_their_own_values() {
        // Room for all 14 blocks: each is decompressed once.
        assert_eq!(shared_reads(64), 14);
        // Room for 8: blocks come and go, but each is read many times per load (404 reads).
        let loads = shared_reads(8);
        assert!((14..=56).contains(&loads), "{loads}");
    }

    #[test]
    fn damage_is_detected_and_named() {
        let a: Vec<u8> = (0..50_000u32).map(|i| (i % 13) as u8).collect();
        let bytes = TableWriter::encode("test", &[("attacker", &a)], 3);
        let path = temp("bad.tbl");
        // A flipped bit inside a block: open succeeds (index intact), the block read fails.
        let mut flipped = bytes.clone();
        flipped[20] ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        let t = SliceTable::open(&path).unwrap();
        let e = t.read_section(0).unwrap_err().to_string();
        assert!(
            e.contains("bad.tbl") && e.contains("checksum mismatch"),
            "{e}"
        );
        // Truncation: open fails.
        std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
        let e = SliceTable::open(&path).err().unwrap().to_string();
        assert!(e.contains("bad.tbl") && e.contains("truncated"), "{e}");
        std::fs::remove_file(path).unwrap();
    }
}
