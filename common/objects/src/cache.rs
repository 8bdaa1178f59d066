//! The local copies of tables read from the object store, bounded in bytes.
//!
//! A copy is named by its key and its checksum (`<key>.<xxh3>`): objects never change once
//! published, and a key written again with other bytes gets another file, so a copy is never
//! stale and the cache needs no invalidation. Copies are written atomically (temporary name,
//! fsync, rename). When the copies exceed the bound, the least recently used are removed
//! (their modification time is their last use); a table open at that moment stays readable,
//! its mapping outlives the name.

use anyhow::{Context, Result};
use retro_pipeline::storage::check_key;
use retro_store::write_atomic;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Local copies of downloaded tables in one directory, at most `limit` bytes of them (plus the
/// one being added, if it alone is larger).
pub struct TableCache {
    dir: PathBuf,
    limit: u64,
}

impl TableCache {
    /// A cache in `dir` (created if missing) of at most `limit` bytes.
    pub fn new(dir: PathBuf, limit: u64) -> Result<TableCache> {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the table cache {}", dir.display()))?;
        Ok(TableCache { dir, limit })
    }

    /// The directory of the copies.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str, checksum: &str) -> Result<PathBuf> {
        check_key(key)?;
        Ok(self.dir.join(format!("{key}.{checksum}")))
    }

    /// The copy of `key` with `checksum`, if the cache holds it (marked as just used).
    pub fn lookup(&self, key: &str, checksum: &str) -> Result<Option<PathBuf>> {
        let path = self.path(key, checksum)?;
        match std::fs::File::open(&path) {
            Ok(file) => {
                let _ = file.set_modified(SystemTime::now());
                Ok(Some(path))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot open {}", path.display())),
        }
    }

    /// Stores `bytes` as the copy of `key` with `checksum`, then removes the least recently
    /// used copies beyond the bound; the new copy's path.
    pub fn insert(&self, key: &str, checksum: &str, bytes: &[u8]) -> Result<PathBuf> {
        let path = self.path(key, checksum)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        write_atomic(&path, bytes)?;
        self.evict(&path)?;
        Ok(path)
    }

    /// Bytes held by the copies.
    pub fn size(&self) -> Result<u64> {
        Ok(self.copies()?.iter().map(|c| c.1).sum())
    }

    /// Every copy: path, size, last use.
    fn copies(&self) -> Result<Vec<(PathBuf, u64, SystemTime)>> {
        let mut found = Vec::new();
        let mut dirs = vec![self.dir.clone()];
        while let Some(dir) = dirs.pop() {
            let entries = std::fs::read_dir(&dir)
                .with_context(|| format!("cannot list {}", dir.display()))?;
            for entry in entries {
                let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
                let meta = match entry.metadata() {
                    Ok(meta) => meta,
                    Err(_) => continue, // removed meanwhile
                };
                let name = entry.file_name().to_string_lossy().to_string();
                if meta.is_dir() {
                    dirs.push(entry.path());
                } else if name.starts_with('.') && name.ends_with(".tmp") {
                    // A copy being written (`write_atomic`'s temporary): not the cache's yet.
                } else {
                    let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                    found.push((entry.path(), meta.len(), used));
                }
            }
        }
        Ok(found)
    }

    /// Removes the least recently used copies other than `keep` until at most `limit` bytes
    /// are held (or only `keep` is left).
    fn evict(&self, keep: &Path) -> Result<()> {
        let mut copies = self.copies()?;
        let mut total: u64 = copies.iter().map(|c| c.1).sum();
        copies.sort_by_key(|c| c.2);
        for (path, len, _) in copies {
            if total <= self.limit {
                break;
            }
            if path == keep {
                continue;
            }
            match std::fs::remove_file(&path) {
                Ok(()) => total -= len,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => total -= len,
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot remove {}", path.display()))
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_found_by_checksum_and_the_oldest_evicted() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TableCache::new(dir.path().join("cache"), 2500).unwrap();
        assert!(cache.lookup("a.tbl", "01").unwrap().is_none());
        cache.insert("a.tbl", "01", &[1; 1000]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        cache.insert("sub/b.tbl", "02", &[2; 1000]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        // `a` used again: `b` is now the least recently used.
        assert!(cache.lookup("a.tbl", "01").unwrap().is_some());
        assert!(
            cache.lookup("a.tbl", "99").unwrap().is_none(),
            "another checksum"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        cache.insert("c.tbl", "03", &[3; 1000]).unwrap();
        assert!(
            cache.lookup("sub/b.tbl", "02").unwrap().is_none(),
            "evicted"
        );
        assert!(cache.lookup("a.tbl", "01").unwrap().is_some());
        assert!(cache.lookup("c.tbl", "03").unwrap().is_some());
        assert_eq!(cache.size().unwrap(), 2000);
        // A copy larger than the bound is kept alone.
        cache.insert("d.tbl", "04", &[4; 4000]).unwrap();
        assert_eq!(cache.size().unwrap(), 4000);
        assert!(cache.insert("../x", "05", &[0]).is_err());
    }
}
