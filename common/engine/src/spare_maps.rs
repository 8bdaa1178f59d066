//! Anonymous memory maps kept between stages for the next stage's arrays.
//!
//! A stage's value arrays and final bits are anonymous maps ([`crate::ByteArray::zeroed`]),
//! dropped when the stage ends. On the virtual machines measured a page the process has not
//! touched yet costs microseconds to fault in (the hypervisor backs it anew: 6% of BOARD25's
//! samples were the kernel clearing such pages, `clear_page_erms`, two fifths of them the
//! stages' arrays), where clearing a page the process holds already costs a fraction of that.
//! So a dropped map is kept here, up to an allowance the driver sets per stage
//! ([`keep_spare_maps`]: none out of core, where the memory budget is tight), and a new array
//! takes the smallest kept map that fits it well, zeroed.

use memmap2::MmapMut;
use std::sync::Mutex;

/// Maps smaller than this are not kept (a fresh one costs little).
const SMALLEST: usize = 1 << 16;

/// Kept maps and the allowance they stay within.
struct Spare {
    maps: Vec<MmapMut>,
    /// Bytes of `maps`.
    bytes: usize,
    /// Bytes that may be kept.
    allowance: usize,
}

impl Spare {
    const fn new() -> Spare {
        Spare {
            maps: Vec::new(),
            bytes: 0,
            allowance: 0,
        }
    }

    /// See [`keep_spare_maps`].
    fn keep(&mut self, allowance: usize) {
        self.allowance = allowance;
        self.maps.sort_by_key(|map| map.len());
        while self.bytes > allowance {
            let map = self.maps.pop().expect("kept bytes are those of kept maps");
            self.bytes -= map.len();
        }
    }

    /// See [`take`].
    fn take(&mut self, len: usize) -> Option<MmapMut> {
        if len < SMALLEST {
            return None;
        }
        let at = (0..self.maps.len())
            .filter(|&i| (len..=2 * len).contains(&self.maps[i].len()))
            .min_by_key(|&i| self.maps[i].len())?;
        let map = self.maps.swap_remove(at);
        self.bytes -= map.len();
        Some(map)
    }

    /// See [`give`].
    fn give(&mut self, map: MmapMut) {
        if map.len() >= SMALLEST && self.bytes + map.len() <= self.allowance {
            self.bytes += map.len();
            self.maps.push(map);
        }
    }
}

/// The process's kept maps.
static SPARE: Mutex<Spare> = Mutex::new(Spare::new());

fn spare() -> std::sync::MutexGuard<'static, Spare> {
    // A panic while the lock was held leaves only a list of maps: still usable.
    SPARE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sets how many bytes of dropped maps are kept for later arrays, dropping kept ones (largest
/// first) beyond it.
pub fn keep_spare_maps(allowance: usize) {
    spare().keep(allowance);
}

/// A kept map of at least `len` bytes and at most twice as many, if there is one: the smallest
/// such. Its bytes are not cleared.
pub(crate) fn take(len: usize) -> Option<MmapMut> {
    spare().take(len)
}

/// Keeps `map` (an anonymous map no longer used) if the allowance has room for it.
pub(crate) fn give(map: MmapMut) {
    spare().give(map);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_maps_fit_within_half_and_the_allowance_bounds_them() {
        let mut spare = Spare::new();
        let map = |len: usize| MmapMut::map_anon(len).unwrap();
        // Nothing is kept without an allowance.
        spare.give(map(2 << 20));
        assert!(spare.take(2 << 20).is_none());
        spare.keep(5 << 20);
        spare.give(map(2 << 20));
        spare.give(map(3 << 20));
        // Over the allowance: not kept.
        spare.give(map(1 << 20));
        // Too small to be kept at all, and too small to be asked for.
        spare.give(map(4096));
        assert!(spare.take(4096).is_none());
        assert_eq!(spare.bytes, 5 << 20);
        // 1.5 MiB takes 2 MiB (the smallest that fits); 3 MiB would fit it too, not 1 MiB.
        assert_eq!(spare.take(3 << 19).map(|m| m.len()), Some(2 << 20));
        assert!(spare.take(1 << 20).is_none());
        assert_eq!(spare.take(3 << 20).map(|m| m.len()), Some(3 << 20));
        assert_eq!(spare.bytes, 0);
        spare.give(map(4 << 20));
        spare.give(map(1 << 20));
        // A smaller allowance drops the largest beyond it.
        spare.keep(1 << 20);
        assert!(spare.take(4 << 20).is_none());
        assert_eq!(spare.take(1 << 20).map(|m| m.len()), Some(1 << 20));
    }
}
