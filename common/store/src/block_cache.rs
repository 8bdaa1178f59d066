//! A bounded cache of decompressed blocks shared by many open tables and many threads: what a
//! server answering probes from several solved directories at once keeps in memory.
//!
//! Each [`SliceTable`](crate::SliceTable) opened with [`SliceTable::open_shared`] gets its own
//! number in the cache, so blocks of different files never collide; the cache holds at most
//! its byte budget of decompressed values (evicting the least useful blocks, `quick_cache`'s
//! CLOCK-Pro), whatever the number of tables. Tables are never loaded whole.
//!
//! [`SliceTable::open_shared`]: crate::SliceTable::open_shared

use quick_cache::sync::{Cache, DefaultLifecycle};
use quick_cache::{DefaultHashBuilder, OptionsBuilder, Weighter};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A decompressed block: one section's values `[block * BLOCK, (block + 1) * BLOCK)`.
pub type Block = Arc<Vec<u8>>;

/// `(table number, section, block)`.
type Key = (u64, u32, u32);

/// Weighs a block by its decompressed bytes (at least 1, as the cache requires).
#[derive(Clone, Copy)]
struct Bytes;

impl Weighter<Key, Block> for Bytes {
    fn weight(&self, _: &Key, block: &Block) -> u64 {
        (block.len() as u64).max(1)
    }
}

/// A byte-bounded cache of decompressed blocks, shared by the tables opened with it.
pub struct BlockCache {
    blocks: Cache<Key, Block, Bytes>,
    next_table: AtomicU64,
    capacity: u64,
    loads: AtomicU64,
}

impl BlockCache {
    /// A cache holding at most `bytes` of decompressed values (at least one block).
    pub fn new(bytes: u64) -> Arc<BlockCache> {
        let bytes = bytes.max(crate::table::BLOCK as u64);
        let items = (bytes / crate::table::BLOCK as u64).max(1) as usize;
        // Half the space for blocks read once (quick_cache's default keeps 3% for them, less
        // than one block in a small cache, so that nothing read once would stay).
        let options = OptionsBuilder::new()
            .estimated_items_capacity(items)
            .weight_capacity(bytes)
            .hot_allocation(0.5)
            .build()
            .expect("valid cache options");
        Arc::new(BlockCache {
            blocks: Cache::with_options(
                options,
                Bytes,
                DefaultHashBuilder::default(),
                DefaultLifecycle::default(),
            ),
            next_table: AtomicU64::new(0),
            capacity: bytes,
            loads: AtomicU64::new(0),
        })
    }

    /// A fresh table number (each table opened with the cache takes one).
    pub(crate) fn register(&self) -> u64 {
        self.next_table.fetch_add(1, Ordering::Relaxed)
    }

    /// Block `block` of `section` of table `table`, decompressed by `load` when not cached
    /// (concurrent misses of one block decompress it once).
    pub(crate) fn get_or_load<E>(
        &self,
        table: u64,
        section: usize,
        block: usize,
        load: impl FnOnce() -> Result<Block, E>,
    ) -> Result<Block, E> {
        self.blocks
            .get_or_insert_with(&(table, section as u32, block as u32), || {
                self.loads.fetch_add(1, Ordering::Relaxed);
                load()
            })
    }

    /// Empties the cache (a benchmark's cold start).
    pub fn clear(&self) {
        self.blocks.clear();
    }

    /// Decompressed bytes held now.
    pub fn bytes(&self) -> u64 {
        self.blocks.weight()
    }

    /// The byte budget.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Blocks held now.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Blocks decompressed so far (lookups the cache could not answer; hits are not counted,
    /// to keep a shared counter out of the hot path).
    pub fn misses(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }
}
