//! This process's disk traffic, for per-stage I/O figures.
//!
//! Out of core, a stage's bytes go to disk through three paths: spilled lists (written with
//! `write`), file-backed arrays (written back from the page cache by the kernel) and tables. The
//! kernel's per-process counters in `/proc/self/io` see all three, which no counter kept by
//! the program could.

/// Bytes this process has caused to be read from and written to storage so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskIo {
    /// Bytes read from storage (page-cache hits are not counted).
    pub read: u64,
    /// Bytes sent to storage, including write-back of dirtied file-backed pages.
    pub written: u64,
}

impl DiskIo {
    /// The counters now, or zeros where `/proc/self/io` is not available.
    pub fn now() -> DiskIo {
        let text = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        DiskIo {
            read: field("read_bytes:"),
            written: field("write_bytes:"),
        }
    }

    /// What happened between `earlier` and `self`.
    pub fn since(self, earlier: DiskIo) -> DiskIo {
        DiskIo {
            read: self.read.saturating_sub(earlier.read),
            written: self.written.saturating_sub(earlier.written),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_never_go_backwards() {
        let before = DiskIo::now();
        std::fs::write(std::env::temp_dir().join("retro-disk-io-test"), [0u8; 4096]).unwrap();
        let after = DiskIo::now();
        assert!(after.written >= before.written && after.read >= before.read);
        assert_eq!(before.since(after), DiskIo::default());
    }
}
