//! What a worker keeps in memory between tasks: final values and step states.
//!
//! A task reads the brown-to-move values of the stages it depends on. Reading them means
//! decompressing their tables; a worker that just computed a stage still has its values, and
//! the coordinator prefers to give it the tasks that read them. Likewise a step of a split
//! stage reads its slice's state, which the worker that ran the slice's previous step has just
//! written: it keeps the state it wrote, and the coordinator prefers to give it that slice's
//! next step, which then skips decoding the file.
//!
//! Entries are keyed by what identifies the file's content (job, and the table's or state
//! file's checksum), so a recomputed file never meets stale values; both kinds share one
//! budget and are evicted least recently used first.

use retro_engine::superstep::SlotState;
use retro_pipeline::FinalSlice;
use std::collections::HashMap;
use std::sync::Arc;

/// What an entry holds, and the key that names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// Final values of a slice: job, slice id, checksum of its table file.
    Finals(u64, u32, String),
    /// A slice's state as a step wrote it: job, file path, checksum of the file.
    State(u64, String, String),
}

enum Entry {
    Finals(Arc<FinalSlice>),
    State(SlotState),
}

impl Entry {
    fn bytes(&self) -> u64 {
        match self {
            Entry::Finals(v) => v.bytes(),
            Entry::State(s) => s.bytes(),
        }
    }
}

/// An LRU cache of final values and step states, bounded in bytes.
pub struct MemoryCache {
    capacity: u64,
    used: u64,
    clock: u64,
    entries: HashMap<Key, (Entry, u64)>,
}

impl MemoryCache {
    /// A cache holding at most `capacity` bytes.
    pub fn new(capacity: u64) -> MemoryCache {
        MemoryCache {
            capacity,
            used: 0,
            clock: 0,
            entries: HashMap::new(),
        }
    }

    /// The final values of `slice` of `job` whose table has `checksum`, if cached.
    pub fn finals(&mut self, job: u64, slice: u32, checksum: &str) -> Option<Arc<FinalSlice>> {
        self.clock += 1;
        let clock = self.clock;
        match self
            .entries
            .get_mut(&Key::Finals(job, slice, checksum.to_string()))
        {
            Some((Entry::Finals(v), used)) => {
                *used = clock;
                Some(v.clone())
            }
            _ => None,
        }
    }

    /// Keeps the final values of `slice` of `job` (table checksum `checksum`).
    pub fn keep_finals(&mut self, job: u64, slice: u32, checksum: &str, values: Arc<FinalSlice>) {
        self.insert(
            Key::Finals(job, slice, checksum.to_string()),
            Entry::Finals(values),
        );
    }

    /// Takes out the state written to `path` of `job` with `checksum`, if cached (a state is
    /// read by one step, which writes the next).
    pub fn take_state(&mut self, job: u64, path: &str, checksum: &str) -> Option<SlotState> {
        let key = Key::State(job, path.to_string(), checksum.to_string());
        let (entry, _) = self.entries.remove(&key)?;
        self.used -= entry.bytes();
        match entry {
            Entry::State(s) => Some(s),
            Entry::Finals(_) => None,
        }
    }

    /// Keeps a state just written to `path` of `job` (file checksum `checksum`).
    pub fn keep_state(&mut self, job: u64, path: &str, checksum: &str, state: SlotState) {
        self.insert(
            Key::State(job, path.to_string(), checksum.to_string()),
            Entry::State(state),
        );
    }

    /// Caches `entry` under `key`, evicting the least recently used entries beyond capacity.
    fn insert(&mut self, key: Key, entry: Entry) {
        let size = entry.bytes();
        if size > self.capacity {
            return;
        }
        self.clock += 1;
        if let Some((old, _)) = self.entries.insert(key, (entry, self.clock)) {
            self.used -= old.bytes();
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
            self.used -= v.bytes();
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
        let mut c = MemoryCache::new(10);
        let v = |n| {
            let values = retro_engine::ByteArray::zeroed(n);
            Arc::new(FinalSlice([
                Some(retro_pipeline::FinalSection::Resident(values)),
                None,
            ]))
        };
        c.keep_finals(1, 1, "a", v(4));
        c.keep_finals(1, 2, "b", v(4));
        assert!(c.finals(1, 1, "a").is_some());
        c.keep_finals(1, 3, "c", v(4));
        assert!(c.finals(1, 2, "b").is_none(), "b was least recently used");
        assert!(c.finals(1, 1, "a").is_some());
        assert!(c.finals(1, 1, "other checksum").is_none());
        assert_eq!(c.used(), 8);
        c.keep_finals(1, 4, "d", v(11));
        assert_eq!(c.used(), 8, "too large to cache");
    }

    #[test]
    fn a_state_is_taken_once_and_only_with_its_checksum() {
        let mut c = MemoryCache::new(1 << 20);
        let state = SlotState::zeroed(100);
        let bytes = state.bytes();
        c.keep_state(1, "steps/s", "abc", state);
        assert_eq!(c.used(), bytes);
        assert!(c.take_state(1, "steps/s", "abd").is_none());
        assert!(c.take_state(2, "steps/s", "abc").is_none(), "another job");
        assert!(c.take_state(1, "steps/s", "abc").is_some());
        assert!(c.take_state(1, "steps/s", "abc").is_none(), "taken");
        assert_eq!(c.used(), 0);
    }
}
