//! What work costs: this process's disk traffic and resident memory, and each slice's share.
//!
//! Out of core, a stage's bytes go to disk through three paths: spilled lists (written with
//! `write`), file-backed arrays (written back from the page cache by the kernel) and tables. The
//! kernel's per-process counters in `/proc/self/io` see all three, which no counter kept by
//! the program could. The kernel solver samples them around each batch of slices, and times
//! every parallel task by the slice it works on, so that each slice's cost is known
//! ([`SliceCost`]).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

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

/// A field of `/proc/self/status` in bytes (reported there in KiB), if available.
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Resident memory of this process now (Linux `VmRSS`), or 0 where unknown.
pub fn resident_bytes() -> u64 {
    status_bytes("VmRSS:").unwrap_or(0)
}

/// Peak resident memory of this process so far (Linux `VmHWM`), if known.
pub fn peak_resident_bytes() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// What solving one slice cost, all plies of its stage together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SliceCost {
    /// CPU time of the parallel tasks that worked on the slice: its positions divided by this
    /// is its throughput per core.
    pub cpu: Duration,
    /// Wall time of the batches that held the slice. Out of core a batch is one slice; in
    /// memory every ply is one batch of all slices, shared out in proportion to their sizes.
    pub wall: Duration,
    /// Bytes this process read from storage during those batches (shared out likewise).
    pub read: u64,
    /// Bytes this process wrote to storage during those batches (shared out likewise), plus
    /// the slice's table once the driver has written it.
    pub written: u64,
    /// The largest resident memory of the process seen at the end of one of its batches.
    pub peak_rss: u64,
}

/// CPU time the calling thread has used so far, in nanoseconds.
///
/// CPU time rather than elapsed time, because two stages may run at once, each with a pool of
/// as many threads as there are cores: a task's elapsed time then includes the time its
/// thread waited for a core.
fn thread_cpu_nanos() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer it is given.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    if ok {
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    } else {
        0
    }
}

/// Per-slot CPU time, added to by the parallel tasks of a stage.
pub(crate) struct SlotClocks(Vec<AtomicU64>);

impl SlotClocks {
    /// Zero time for each of `slots` slots.
    pub(crate) fn new(slots: usize) -> SlotClocks {
        SlotClocks((0..slots).map(|_| AtomicU64::new(0)).collect())
    }

    /// How many slots there are.
    pub(crate) fn slots(&self) -> usize {
        self.0.len()
    }

    /// Runs `work`, charging the CPU time this thread spent on it to `slot`.
    pub(crate) fn time<R>(&self, slot: usize, work: impl FnOnce() -> R) -> R {
        let started = thread_cpu_nanos();
        let result = work();
        let spent = thread_cpu_nanos().saturating_sub(started);
        self.0[slot].fetch_add(spent, Relaxed);
        result
    }

    /// The time charged to `slot` so far.
    pub(crate) fn total(&self, slot: usize) -> Duration {
        Duration::from_nanos(self.0[slot].load(Relaxed))
    }
}

/// The start of a batch: when, and the disk counters then.
pub(crate) struct BatchStart {
    clock: Instant,
    io: DiskIo,
}

impl BatchStart {
    /// Starts measuring a batch now.
    pub(crate) fn now() -> BatchStart {
        BatchStart {
            clock: Instant::now(),
            io: DiskIo::now(),
        }
    }

    /// Charges the batch's wall time and disk traffic to its slots in `costs`, in proportion
    /// to their sizes `lens`, and the resident memory now to each slot's peak.
    pub(crate) fn charge(self, costs: &mut [SliceCost], batch: &[usize], lens: &[u64]) {
        let wall = self.clock.elapsed();
        let io = DiskIo::now().since(self.io);
        let rss = resident_bytes();
        let total: u64 = batch.iter().map(|&s| lens[s]).sum::<u64>().max(1);
        for &s in batch {
            let share = |x: u64| (u128::from(x) * u128::from(lens[s]) / u128::from(total)) as u64;
            let cost = &mut costs[s];
            cost.wall += Duration::from_nanos(share(wall.as_nanos() as u64));
            cost.read += share(io.read);
            cost.written += share(io.written);
            cost.peak_rss = cost.peak_rss.max(rss);
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

    #[test]
    fn resident_memory_is_known_and_below_its_peak() {
        let now = resident_bytes();
        assert!(now > 0);
        assert!(peak_resident_bytes().unwrap() >= now);
    }

    #[test]
    fn a_batch_is_shared_by_size_and_a_slot_clock_adds_up() {
        let mut costs = vec![SliceCost::default(); 3];
        let start = BatchStart::now();
        std::thread::sleep(Duration::from_millis(20));
        start.charge(&mut costs, &[0, 2], &[1, 5, 3]);
        assert_eq!(costs[1], SliceCost::default());
        assert!(costs[0].wall > Duration::ZERO && costs[2].wall >= 2 * costs[0].wall);
        assert!(costs[0].peak_rss > 0 && costs[0].peak_rss == costs[2].peak_rss);
        let clocks = SlotClocks::new(2);
        let answer = clocks.time(1, || {
            // Busy for at least 5 ms of CPU time (sleeping would not count).
            let started = thread_cpu_nanos();
            let mut x = 0u64;
            while thread_cpu_nanos() - started < 5_000_000 {
                x = std::hint::black_box(x + 1);
            }
            42
        });
        assert_eq!(answer, 42);
        assert!(clocks.total(1) >= Duration::from_millis(5));
        assert_eq!(clocks.total(0), Duration::ZERO);
    }
}
