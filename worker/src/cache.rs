//! Final values kept in memory between tasks.
//!
//! A task reads the brown-to-move values of the stages it depends on. Reading them means
//! decompressing their tables; a worker that just computed a stage still has its values, and
//! the coordinator prefers to give it the tasks that read them. Entries are keyed by job, slice
//! and table checksum (so a recomputed table never meets stale values) and evicted least
//! recently used first when they exceed the cache's share of the memory budget.

use retro_engine::ByteArray;
use std::collections::HashMap;
use std::sync::Arc;

/// Key of a cached slice: job, slice id, checksum of its table file.
pub type CacheKey = (u64, u32, String);

/// An LRU cache of slice values bounded in bytes.
pub struct FinalsCache {
    capacity: u64,
    used: u64,
    clock: u64,
    entries: HashMap<CacheKey, (Arc<ByteArray>, u64)>,
}

impl FinalsCache {
    /// A cache holding at most `capacity` bytes.
    pub fn new(capacity: u64) -> FinalsCache {
        FinalsCache {
            capacity,
            used: 0,
            clock: 0,
            entries: HashMap::new(),
        }
    }

    /// The values of `key`, if cached.
    pub fn get(&mut self, key: &CacheKey) -> Option<Arc<ByteArray>> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(key).map(|(v, used)| {
            *used = clock;
            v.clone()
        })
    }

    /// Caches `values` under `key`, evicting the least recently used entries beyond capacity.
    pub fn insert(&mut self, key: CacheKey, values: Arc<ByteArray>) {
        let size = values.len() as u64;
        if size > self.capacity {
            return;
        }
        self.clock += 1;
        if let Some((old, _)) = self.entries.insert(key, (values, self.clock)) {
            self.used -= old.len() as u64;
        }
        self.used += size;
        while self.used > self.capacity {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, (_, t))| *t)
                .map(|(k, _)| k.clone())
                .expect("used > 0 means an entry exists");
            let (v, _) = self.entries.remove(&oldest).expect("present");
            self.used -= v.len() as u64;
        }
    }

    /// Bytes held.
    pub fn used(&self) -> u64 {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_within_capacity() {
        let mut c = FinalsCache::new(10);
        let v = |n| Arc::new(ByteArray::zeroed(n));
        c.insert((1, 1, "a".into()), v(4));
        c.insert((1, 2, "b".into()), v(4));
        assert!(c.get(&(1, 1, "a".into())).is_some());
        c.insert((1, 3, "c".into()), v(4));
        assert!(
            c.get(&(1, 2, "b".into())).is_none(),
            "b was least recently used"
        );
        assert!(c.get(&(1, 1, "a".into())).is_some());
        assert_eq!(c.used(), 8);
        c.insert((1, 4, "d".into()), v(11));
        assert_eq!(c.used(), 8, "too large to cache");
    }
}
