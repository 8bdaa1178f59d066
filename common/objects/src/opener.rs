//! Opening a job's storage from its location, the one way every process does it.
//!
//! A job records where its tables live: nothing (the job directory itself, on a local or
//! shared filesystem) or an object store location (`s3://bucket/prefix`). The coordinator,
//! the workers and the readers (`retro probe`, `serve`, `verify`) each hold one [`Opener`]
//! and ask it for the storage of a job; an object store is opened once per location and
//! process, so its table cache and connections are shared by every task that reads it.

use crate::{ObjectStorage, StorageUrl};
use anyhow::Result;
use retro_pipeline::{LocalStorage, Storage};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Bytes of downloaded tables a process keeps by default (`retro worker --object-cache`).
pub const DEFAULT_CACHE_BYTES: u64 = 4 << 30;

/// Checks a job's storage location as a user typed it: empty (the job directory) or
/// `s3://bucket/prefix`. Returns it normalised (`s3://bucket/prefix`, no trailing `/`).
pub fn check_location(location: &str) -> Result<String> {
    if location.is_empty() {
        return Ok(String::new());
    }
    Ok(StorageUrl::parse(location)?.to_string())
}

/// Where a process keeps downloaded tables when it is not told: `$XDG_CACHE_HOME/retro/objects`,
/// else `~/.cache/retro/objects`, else the system's temporary directory.
pub fn default_cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("retro").join("objects")
}

/// Opens job storages from their locations, keeping each object store it opened.
pub struct Opener {
    cache_dir: PathBuf,
    cache_bytes: u64,
    stores: Mutex<HashMap<String, Arc<ObjectStorage>>>,
}

impl Opener {
    /// An opener whose object stores cache downloaded tables in `cache_dir` (one
    /// subdirectory per bucket and prefix), at most `cache_bytes` each.
    pub fn new(cache_dir: PathBuf, cache_bytes: u64) -> Opener {
        Opener {
            cache_dir,
            cache_bytes,
            stores: Mutex::new(HashMap::new()),
        }
    }

    /// The storage of a job at `location` (see [`check_location`]); an empty location is the
    /// job directory `job_dir`. Credentials and endpoint of an object store come from the
    /// usual `AWS_*` environment variables.
    pub fn open(&self, location: &str, job_dir: &Path) -> Result<Arc<dyn Storage>> {
        if location.is_empty() {
            return Ok(Arc::new(LocalStorage::new(job_dir)));
        }
        let url = StorageUrl::parse(location)?;
        let mut stores = self.stores.lock().expect("stores lock");
        if let Some(store) = stores.get(&url.to_string()) {
            return Ok(store.clone());
        }
        let cache = self.cache_dir.join(&url.bucket).join(&url.prefix);
        let store = Arc::new(ObjectStorage::from_env(
            &url.to_string(),
            cache,
            self.cache_bytes,
        )?);
        stores.insert(url.to_string(), store.clone());
        Ok(store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_checked_and_the_empty_one_is_the_job_directory() {
        assert_eq!(check_location("").unwrap(), "");
        assert_eq!(check_location("s3://jobs/b33/").unwrap(), "s3://jobs/b33");
        assert!(check_location("/data/jobs").is_err());
        let dir = std::env::temp_dir();
        let opener = Opener::new(dir.join("retro-opener-test"), 1 << 20);
        let storage = opener.open("", &dir).unwrap();
        assert_eq!(
            storage.describe("a.tbl"),
            dir.join("a.tbl").display().to_string()
        );
    }
}
