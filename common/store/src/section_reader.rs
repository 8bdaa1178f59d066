//! One section of a table read value by value, as a stage's initial sweep reads the final
//! values of the stages below it, without decompressing the section anywhere first.
//!
//! A large stage reads tens of gigabytes of lower-stage values, far more than it can hold,
//! and only some of them (the successors of its captures). Decompressing them all into
//! scratch files cost as much disk as the tables themselves; a [`SectionReader`] instead
//! decompresses a block (16 Ki values) the first time a value of it is asked for, into a
//! [`BlockCache`] of bounded size shared by all the sections a stage reads.
//!
//! The sweep asks for a value per capture, billions of times, from every thread: a lookup in
//! the shared cache (a hash and a lock) would cost more than the rest of the work. So each
//! thread keeps the blocks it used last in a small direct-mapped array of its own, consulted
//! first without any lock; the shared cache is reached only on a miss there.

use crate::block_cache::{Block, BlockCache};
use crate::table::{SliceTable, BLOCK};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Blocks each thread keeps of its own (a power of two): 16 MiB of values at most.
const RECENT_BLOCKS: usize = 1 << 10;

/// Numbers readers so that a thread's recent blocks of different readers never collide
/// (0 marks an empty entry).
static NEXT_READER: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's recently used blocks: `(reader << 32 | block, values)`, direct-mapped.
    static RECENT: RefCell<Vec<(u64, Option<Block>)>> =
        RefCell::new(vec![(0, None); RECENT_BLOCKS]);
}

/// Section `section` of an open table, read value by value through `cache`.
pub struct SectionReader {
    table: Arc<SliceTable>,
    section: usize,
    cache: Arc<BlockCache>,
    /// This reader's number in `cache` (blocks are cached under it).
    in_cache: u64,
    /// This reader's number in the threads' recent blocks.
    reader: u64,
    /// The first failure to read a block (a damaged file): values asked for after it are 0.
    failure: OnceLock<String>,
}

impl SectionReader {
    /// Reads section `section` of `table` through `cache`. The section must exist.
    pub fn new(table: Arc<SliceTable>, section: usize, cache: &Arc<BlockCache>) -> SectionReader {
        SectionReader {
            table,
            section,
            in_cache: cache.register(),
            cache: cache.clone(),
            reader: NEXT_READER.fetch_add(1, Ordering::Relaxed),
            failure: OnceLock::new(),
        }
    }

    /// Number of values in the section.
    pub fn len(&self) -> u64 {
        self.table.section_len(self.section)
    }

    /// Whether the section has no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at `index` (which must be below [`SectionReader::len`]). A block that cannot
    /// be read (checksum mismatch, truncation) yields 0 and is recorded: the caller must check
    /// [`SectionReader::failure`] before it trusts what it computed from the values.
    #[inline]
    pub fn value(&self, index: u64) -> u8 {
        let block = index / BLOCK as u64;
        let at = (index % BLOCK as u64) as usize;
        let key = self.reader << 32 | block;
        // Fibonacci hashing spreads a reader's consecutive blocks and different readers.
        let slot =
            (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - RECENT_BLOCKS.ilog2())) as usize;
        RECENT.with(|recent| {
            let mut recent = recent.borrow_mut();
            let entry = &mut recent[slot];
            if entry.0 == key {
                if let Some(values) = &entry.1 {
                    return values[at];
                }
            }
            match self.load(block as usize) {
                Some(values) => {
                    let value = values[at];
                    *entry = (key, Some(values));
                    value
                }
                None => 0,
            }
        })
    }

    /// Block `block` from the shared cache (decompressed and verified on a miss); `None`, with
    /// the failure recorded, if it cannot be read.
    #[cold]
    fn load(&self, block: usize) -> Option<Block> {
        let loaded = self
            .cache
            .get_or_load(self.in_cache, self.section, block, || {
                self.table.block(self.section, block).map(Arc::new)
            });
        match loaded {
            Ok(values) => Some(values),
            Err(e) => {
                let _ = self.failure.set(e.to_string());
                None
            }
        }
    }

    /// What could not be read, if anything (the first failure, naming the file).
    pub fn failure(&self) -> Option<&str> {
        self.failure.get().map(String::as_str)
    }

    /// Lets the operating system drop the table file's resident pages (the cache of
    /// decompressed blocks is bounded on its own).
    pub fn release(&self) {
        self.table.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TableWriter;

    #[test]
    fn reads_every_value_through_a_cache_smaller_than_the_section() {
        let first: Vec<u8> = (0..3 * BLOCK as u64 + 5)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let second: Vec<u8> = (0..BLOCK as u64 / 2).map(|i| (i % 13) as u8).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("values.tbl");
        let bytes = TableWriter::encode("t", &[("a", &first), ("b", &second)], 3);
        std::fs::write(&path, bytes).unwrap();
        // Room for one block in the shared cache; the thread's own recent blocks hold the rest.
        let cache = BlockCache::new(BLOCK as u64);
        let a = SectionReader::new(Arc::new(SliceTable::open(&path).unwrap()), 0, &cache);
        let b = SectionReader::new(Arc::new(SliceTable::open(&path).unwrap()), 1, &cache);
        assert_eq!(
            (a.len(), b.len()),
            (first.len() as u64, second.len() as u64)
        );
        // Backwards and interleaved between the sections.
        for i in (0..first.len()).rev() {
            assert_eq!(a.value(i as u64), first[i], "a[{i}]");
            let j = i % second.len();
            assert_eq!(b.value(j as u64), second[j], "b[{j}]");
        }
        assert!(a.failure().is_none() && b.failure().is_none());
    }

    #[test]
    fn a_damaged_block_yields_zero_and_names_the_file() {
        let values: Vec<u8> = (0..2 * BLOCK as u64).map(|i| (i % 200) as u8 + 1).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("damaged.tbl");
        let mut bytes = TableWriter::encode("t", &[("a", &values)], 3);
        bytes[12] ^= 0xff; // inside the first block's frame
        std::fs::write(&path, bytes).unwrap();
        let cache = BlockCache::new(1 << 20);
        let reader = SectionReader::new(Arc::new(SliceTable::open(&path).unwrap()), 0, &cache);
        assert_eq!(
            reader.value(BLOCK as u64),
            values[BLOCK],
            "an intact block reads"
        );
        assert!(reader.failure().is_none());
        assert_eq!(reader.value(3), 0);
        let failure = reader.failure().expect("the damaged block is recorded");
        assert!(
            failure.contains("damaged.tbl") && failure.contains("block 0"),
            "{failure}"
        );
    }
}
