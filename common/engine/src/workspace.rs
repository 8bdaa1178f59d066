//! Where a stage's working data lives: all in memory, or paged through scratch files.
//!
//! A stage whose arrays and lists fit the memory budget is solved in anonymous memory, in one
//! batch of all its slices per ply. A larger stage is solved *out of core*: its frontier and
//! exit lists are written to scratch files as they are produced and mapped back when a ply
//! reads them; as many slices' arrays as the window allows stay in memory, the others are
//! file-backed maps; and every ply walks the slices one at a time, dropping the pages of the
//! least recently used file-backed slices once the resident total exceeds the window. Moves
//! connect a slice only to a few others (in Musashi, a black move reaches the slices of the
//! neighbouring black points; brown moves stay in the slice), so the working set of one step is
//! one slice and its neighbours, not the stage.

use crate::checkpoint::Checkpoints;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes of the kernel's arrays for a slice of `n` positions: a value byte per side and two
/// bitmaps (attacker resolved, defender final), each rounded up to whole 64-bit words.
pub fn slice_array_bytes(n: u64) -> u64 {
    2 * n + 2 * n.div_ceil(64) * 8
}

/// Bytes of the kernel's *compact* arrays for a slice of `n` positions (see
/// [`crate::rules`]): a counter nibble per position for each of the `counted_sides` sides that
/// keep counters, and the two bitmaps of final bits; no value bytes.
pub fn compact_slice_array_bytes(n: u64, counted_sides: u64) -> u64 {
    counted_sides * n.div_ceil(2) + 2 * n.div_ceil(64) * 8
}

/// The resident bytes one out-of-core batch (one slice) may add on top of what stays resident
/// between batches, given the bytes of the largest slice's arrays: the slice itself and the
/// black-to-move halves (counter bytes and final bits) of up to eight neighbouring slices, which
/// an even ply's decrements reach. Drivers size windows with it; the kernel keeps it free.
pub fn batch_reserve(largest_slice_bytes: u64) -> u64 {
    largest_slice_bytes * 9 / 2
}

/// Where the kernel keeps a stage's data.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// Scratch directory for spilled lists and file-backed arrays; `None` = all in memory.
    scratch: Option<PathBuf>,
    /// Bytes of slice arrays the kernel may keep resident (out of core only).
    window: u64,
    /// Where the stage kernel saves its state between plies, and finds it again after a
    /// crash; `None`: no checkpoints inside the stage.
    checkpoints: Option<Arc<dyn Checkpoints>>,
    /// Whether the stage kernel may use compact arrays ([`Workspace::with_compact_arrays`]).
    compact: bool,
}

impl Workspace {
    /// Everything in memory: the fastest mode, for stages that fit.
    pub fn in_memory() -> Workspace {
        Workspace {
            scratch: None,
            window: u64::MAX,
            checkpoints: None,
            compact: false,
        }
    }

    /// Out of core: lists spill to `scratch` (which must exist), and at most about `window`
    /// bytes of slice arrays stay resident.
    pub fn out_of_core(scratch: PathBuf, window: u64) -> Workspace {
        Workspace {
            scratch: Some(scratch),
            window,
            checkpoints: None,
            compact: false,
        }
    }

    /// The same workspace, with the stage kernel taking checkpoints through `keeper` (see
    /// [`crate::checkpoint`]).
    pub fn with_checkpoints(mut self, keeper: Arc<dyn Checkpoints>) -> Workspace {
        self.checkpoints = Some(keeper);
        self
    }

    /// The same workspace without checkpoints: for drivers that run the stage kernel several
    /// times on one stage (a score game's thresholds), whose runs must not resume each other.
    pub fn without_checkpoints(&self) -> Workspace {
        Workspace {
            checkpoints: None,
            ..self.clone()
        }
    }

    /// The same workspace, letting the stage kernel keep the stage on compact arrays if the
    /// game allows it ([`crate::Game::compact_counters`]): about a third of the bytes per
    /// position, at the cost of logging each ply's frontier and building the value tables
    /// from the log at the end (checkpoints then hold the log's blocks).
    pub fn with_compact_arrays(mut self) -> Workspace {
        self.compact = true;
        self
    }

    /// Whether the stage kernel may use compact arrays.
    pub fn compact_arrays(&self) -> bool {
        self.compact
    }

    /// The keeper of the stage's checkpoints, if any.
    pub fn checkpoints(&self) -> Option<&dyn Checkpoints> {
        self.checkpoints.as_deref()
    }

    /// The scratch directory, when out of core.
    pub fn scratch(&self) -> Option<&Path> {
        self.scratch.as_deref()
    }

    /// The resident window for slice arrays.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// How a ply walks the `n` slices of a stage: all in one parallel batch in memory, one slice
    /// per batch out of core (so that pages can be dropped between batches).
    pub(crate) fn batches(&self, n: usize) -> Vec<Vec<usize>> {
        if self.scratch.is_some() {
            (0..n).map(|s| vec![s]).collect()
        } else {
            vec![(0..n).collect()]
        }
    }

    /// How a ply walks the slices, given each slice's bytes of file-backed arrays: as
    /// [`Workspace::batches`], except that out of core a stage none of whose arrays is
    /// file-backed (the window holds them all) is walked in one batch too. Then only its lists
    /// go to scratch, nothing is paged between batches, and every thread has work until the
    /// ply ends. (The sweep still goes slice by slice: it reads the paged inputs, whose pages
    /// are dropped after each batch; plies never read them.)
    pub(crate) fn ply_batches(&self, file_bytes: &[u64]) -> Vec<Vec<usize>> {
        if file_bytes.iter().all(|&bytes| bytes == 0) {
            vec![(0..file_bytes.len()).collect()]
        } else {
            self.batches(file_bytes.len())
        }
    }
}

/// Which file-backed slices are resident, and when each was last used: after every batch the
/// least recently used are released until the resident bytes fit the limit.
pub(crate) struct Residency {
    limit: u64,
    clock: u64,
    /// Bytes of file-backed arrays per slice slot (0 for slices in memory).
    bytes: Vec<u64>,
    last_use: Vec<u64>,
    resident: Vec<bool>,
}

impl Residency {
    pub(crate) fn new(limit: u64, bytes: Vec<u64>) -> Residency {
        let n = bytes.len();
        Residency {
            limit,
            clock: 0,
            bytes,
            last_use: vec![0; n],
            resident: vec![false; n],
        }
    }

    /// Records that a batch touched the slots flagged in `touched`, then returns the slots to
    /// release (least recently used first) so that the rest fits the limit.
    pub(crate) fn after_batch(&mut self, touched: &[bool]) -> Vec<usize> {
        self.clock += 1;
        for (s, &t) in touched.iter().enumerate() {
            if t && self.bytes[s] > 0 {
                self.resident[s] = true;
                self.last_use[s] = self.clock;
            }
        }
        let mut total: u64 = (0..self.bytes.len())
            .filter(|&s| self.resident[s])
            .map(|s| self.bytes[s])
            .sum();
        let mut by_age: Vec<usize> = (0..self.bytes.len())
            .filter(|&s| self.resident[s])
            .collect();
        by_age.sort_by_key(|&s| self.last_use[s]);
        let mut release = Vec::new();
        for s in by_age {
            if total <= self.limit {
                break;
            }
            total -= self.bytes[s];
            self.resident[s] = false;
            release.push(s);
        }
        release
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residency_releases_least_recently_used_first() {
        let mut r = Residency::new(250, vec![100, 100, 100, 0]);
        assert!(r.after_batch(&[true, false, false, true]).is_empty());
        assert!(r.after_batch(&[false, true, false, false]).is_empty());
        // Slot 0 is the oldest: releasing it brings 300 down to 200.
        assert_eq!(r.after_batch(&[false, false, true, false]), vec![0]);
        // Touching 0 again evicts 1, now the oldest.
        assert_eq!(r.after_batch(&[true, false, false, false]), vec![1]);
    }

    #[test]
    fn batches_are_one_slice_each_out_of_core() {
        assert_eq!(Workspace::in_memory().batches(3), vec![vec![0, 1, 2]]);
        let w = Workspace::out_of_core(PathBuf::from("/tmp"), 1);
        assert_eq!(w.batches(2), vec![vec![0], vec![1]]);
        // Plies go slice by slice only when some slice's arrays are file-backed.
        assert_eq!(w.ply_batches(&[0, 0]), vec![vec![0, 1]]);
        assert_eq!(w.ply_batches(&[0, 5]), vec![vec![0], vec![1]]);
        assert_eq!(
            Workspace::in_memory().ply_batches(&[0, 0]),
            vec![vec![0, 1]]
        );
    }
}
