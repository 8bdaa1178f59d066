//! Crash-safe file replacement: temporary name, fsync, rename, fsync of the directory.

use crate::StoreError;
use std::fs::{self, File};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to `path` atomically: readers (and a process restarted after a crash) see the
/// previous content or the new one, never a partial file. Writers of the same path at the same
/// time (threads of one process included) each use a temporary name of their own; the last
/// rename wins.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let name = path
        .file_name()
        .ok_or_else(|| StoreError::damaged(path, "not a file name"))?;
    let tmp = path.with_file_name(format!(
        ".{}.{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = File::create(&tmp).map_err(|e| StoreError::io("create", path, e))?;
        file.write_all(bytes)
            .map_err(|e| StoreError::io("write", path, e))?;
        file.sync_all()
            .map_err(|e| StoreError::io("sync", path, e))?;
        fs::rename(&tmp, path).map_err(|e| StoreError::io("rename into", path, e))?;
        if let Some(dir) = dir {
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| StoreError::io("sync directory", dir, e))?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("retro-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("file.bin");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn threads_writing_one_path_at_once_all_succeed() {
        let dir = std::env::temp_dir().join(format!("retro-atomic-threads-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("same.bin");
        std::thread::scope(|scope| {
            for t in 0..8u8 {
                let path = &path;
                scope.spawn(move || {
                    for _ in 0..50 {
                        write_atomic(path, &[t; 4096]).unwrap();
                    }
                });
            }
        });
        let bytes = fs::read(&path).unwrap();
        assert!(bytes.len() == 4096 && bytes.iter().all(|&b| b == bytes[0]));
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "no temporary left");
        fs::remove_dir_all(&dir).unwrap();
    }
}
