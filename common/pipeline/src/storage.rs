//! The storage every process of a job sees.
//!
//! Workers write result shards into it and read the final tables of earlier stages from it; the
//! coordinator verifies shards and promotes them into final tables. Keys are relative paths
//! inside a job directory (`shards/stage07-attempt2/browns07-blackc3.tbl`). The drivers use a
//! directory ([`LocalStorage`]): local disk in embedded mode, a shared filesystem mounted at
//! the same path on every machine of a cluster. `retro-objects` implements the same trait on
//! an S3-compatible object store (put = upload, promote = copy + delete, open = download to a
//! bounded cache); a job stored there names its location (`s3://bucket/prefix`) in the job's
//! record and in its manifest, and every process opens it with `retro_objects::Opener`.

use anyhow::{bail, Context, Result};
use retro_store::table::file_checksum;
use retro_store::{write_atomic, SliceTable};
use std::path::{Component, Path, PathBuf};

/// Durable, shared storage of one job directory.
pub trait Storage: Send + Sync {
    /// Stores `bytes` under `key`, atomically (readers see the old object or the new one).
    fn put(&self, key: &str, bytes: &[u8]) -> Result<()>;
    /// XXH3 checksum and size of the object at `key` (read in full).
    fn checksum(&self, key: &str) -> Result<(u64, u64)>;
    /// A local file holding the object at `key`, checked against its checksum where the
    /// storage keeps one: the file itself in a directory, a cached download in a bucket.
    /// Tables are memory-mapped, so they are read through such a file.
    fn local_copy(&self, key: &str) -> Result<PathBuf>;
    /// Opens the slice table at `key` for reading (through [`Storage::local_copy`]).
    fn open_table(&self, key: &str) -> Result<SliceTable> {
        Ok(SliceTable::open(&self.local_copy(key)?)?)
    }
    /// Names of the entries directly inside the directory `prefix` (`shards` lists the
    /// attempts' shard directories; `""` the job directory itself); empty if there is none.
    fn children(&self, prefix: &str) -> Result<Vec<String>>;
    /// Moves the object at `from` to `to`, replacing `to` atomically.
    fn promote(&self, from: &str, to: &str) -> Result<()>;
    /// Removes every object whose key starts with the directory `prefix`.
    fn remove_prefix(&self, prefix: &str) -> Result<()>;
    /// Human-readable location of `key`, for messages.
    fn describe(&self, key: &str) -> String;
}

/// Checks that `key` is a relative path that stays inside the job directory.
pub fn check_key(key: &str) -> Result<()> {
    let path = Path::new(key);
    if key.is_empty() || !path.components().all(|c| matches!(c, Component::Normal(_))) {
        bail!("'{key}' is not a relative path inside the job directory");
    }
    Ok(())
}

/// A job directory on a local or shared filesystem.
#[derive(Clone, Debug)]
pub struct LocalStorage {
    root: PathBuf,
}

impl LocalStorage {
    /// Storage rooted at the job directory `root`.
    pub fn new(root: impl Into<PathBuf>) -> LocalStorage {
        LocalStorage { root: root.into() }
    }

    fn path(&self, key: &str) -> Result<PathBuf> {
        check_key(key)?;
        Ok(self.root.join(key))
    }
}

impl Storage for LocalStorage {
    fn put(&self, key: &str, bytes: &[u8]) -> Result<()> {
        let path = self.path(key)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        Ok(write_atomic(&path, bytes)?)
    }

    fn checksum(&self, key: &str) -> Result<(u64, u64)> {
        let path = self.path(key)?;
        let len = std::fs::metadata(&path)
            .with_context(|| format!("{}: cannot stat", path.display()))?
            .len();
        Ok((file_checksum(&path)?, len))
    }

    fn local_copy(&self, key: &str) -> Result<PathBuf> {
        self.path(key)
    }

    fn children(&self, prefix: &str) -> Result<Vec<String>> {
        let path = match prefix {
            "" => self.root.clone(),
            _ => self.path(prefix)?,
        };
        let entries = match std::fs::read_dir(&path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot read {}", path.display()))?;
            names.push(entry.file_name().to_string_lossy().to_string());
        }
        names.sort();
        Ok(names)
    }

    fn promote(&self, from: &str, to: &str) -> Result<()> {
        let (from, to) = (self.path(from)?, self.path(to)?);
        std::fs::rename(&from, &to)
            .with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
        let dir = to.parent().unwrap_or(&self.root);
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .with_context(|| format!("cannot sync {}", dir.display()))?;
        Ok(())
    }

    fn remove_prefix(&self, prefix: &str) -> Result<()> {
        let path = self.path(prefix)?;
        match std::fs::remove_dir_all(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
        }
    }

    fn describe(&self, key: &str) -> String {
        self.root.join(key).display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_stay_inside_the_job_directory() {
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "./x"] {
            assert!(check_key(bad).is_err(), "{bad}");
        }
        check_key("shards/stage01-attempt1/browns01-blacka1.tbl").unwrap();
    }

    #[test]
    fn put_checksum_promote_remove() {
        let root = std::env::temp_dir().join(format!("retro-storage-{}", std::process::id()));
        let s = LocalStorage::new(&root);
        s.put("shards/a/x.bin", b"hello").unwrap();
        let (sum, len) = s.checksum("shards/a/x.bin").unwrap();
        assert_eq!((sum, len), (retro_store::checksum(b"hello"), 5));
        assert_eq!(s.children("shards").unwrap(), ["a"]);
        assert!(s.children("nothing").unwrap().is_empty());
        s.promote("shards/a/x.bin", "x.bin").unwrap();
        assert_eq!(std::fs::read(root.join("x.bin")).unwrap(), b"hello");
        s.remove_prefix("shards").unwrap();
        assert!(!root.join("shards").exists());
        s.remove_prefix("shards").unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }
}
