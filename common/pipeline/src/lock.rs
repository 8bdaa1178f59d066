//! One writer per directory: an exclusive OS file lock on `DIR/.retro.lock`.
//!
//! Every process that writes a job directory or a coordinator's data directory (`retro
//! solve`, `retro resume`, a coordinator) holds this lock for as long as it runs. The lock is
//! an `flock` on an open file: the kernel releases it when the process ends, however it ends,
//! so a SIGKILLed writer never leaves a stale lock behind. A second writer is refused at once,
//! with the holder's PID and host read from the file. Readers (`probe`, `counts`, `verify`)
//! take no lock: every file is replaced atomically, so they never see half-written state.
//!
//! On a shared filesystem the lock is only as good as the filesystem's `flock` (NFSv4 and
//! Lustre with `-o flock` honour it across machines; some older setups do not): see the
//! README's "What survives what".

use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The lock file's name inside a locked directory.
pub const LOCK_FILE: &str = ".retro.lock";

/// A held lock on a directory; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct DirLock {
    /// The open, locked file (the lock lives as long as it is open).
    _file: File,
    /// The lock file's path.
    path: PathBuf,
    /// Whether this process created the lock file (it did not exist before).
    created: bool,
}

impl DirLock {
    /// Locks `dir` (created if missing) for this process, or fails at once naming the
    /// directory and the process holding it.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        if dir.exists() && !dir.is_dir() {
            bail!("{}: exists and is not a directory", dir.display());
        }
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create directory {}", dir.display()))?;
        let path = dir.join(LOCK_FILE);
        let created = !path.exists();
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                let holder = holder.trim();
                bail!(
                    "{}: in use by another retro process ({}); wait for it to finish or stop it",
                    dir.display(),
                    if holder.is_empty() {
                        "holder unknown"
                    } else {
                        holder
                    }
                );
            }
            Err(TryLockError::Error(e)) => {
                bail!("cannot lock {}: {e}", path.display())
            }
        }
        // Who holds it, for the refusal a second writer prints.
        let host = std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "localhost".into());
        let holder = format!("pid {} on {}", std::process::id(), host.trim());
        file.set_len(0)
            .and_then(|()| file.write_all(holder.as_bytes()))
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write the lock file {}", path.display()))?;
        Ok(DirLock {
            _file: file,
            path,
            created,
        })
    }

    /// Removes the lock file if this process created it: for a directory found not to be a
    /// job's (someone else's files), which must be left exactly as it was.
    pub fn remove_if_created(&self) {
        if self.created {
            let _ = std::fs::remove_file(&self.path);
        }
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path()).unwrap();
        let e = DirLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(e.contains("in use by another retro process"), "{e}");
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        drop(first);
        DirLock::acquire(dir.path()).unwrap();
    }
}
