//! Checkpoints inside a stage: the stage kernel's whole state at a ply boundary, handed to a
//! keeper that saves it, and read back so that a killed solve resumes at that ply instead of
//! at the start of the stage.
//!
//! At a ply boundary the state is the same whatever the thread schedule was: every position of
//! value up to the ply is final, every counter has lost exactly the successors resolved so far,
//! and the lists hold the same keys (their order differs, which the kernel never depends on).
//! So a stage resumed from a checkpoint ends with tables byte-identical to an uninterrupted
//! solve. The engine defines *what* a checkpoint holds ([`PlySnapshot`], [`RestoredPly`]); a
//! driver decides *where and how* it is stored by implementing [`Checkpoints`] (the job
//! directory's files, checksummed, in `retro-pipeline`).

pub use crate::frontier::{sorted_keys, EncodedKeys, KeyChunk, Narrowing, SortedKeys};
use std::fmt::Debug;
use std::time::Duration;

/// Which of the kernel's lists of keys a list of a checkpoint is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ListId {
    /// The frontier the next ply expands, of section `section` (`2 * slot + side`).
    Frontier {
        /// The section.
        section: u32,
    },
    /// The exits scheduled for ply `ply` (a later one), of section `section`. The initial
    /// sweep fills these lists and nothing changes them until their ply: every checkpoint of
    /// a stage holds the same keys for them, and a keeper may reuse its earlier copy
    /// ([`ListId::fixed`]).
    Exit {
        /// The ply they are applied at.
        ply: u32,
        /// The section.
        section: u32,
    },
}

impl ListId {
    /// Whether the list holds the same keys at every checkpoint of the stage that has it (the
    /// scheduled exits), so that a keeper may keep an earlier checkpoint's copy instead of
    /// writing it again.
    pub fn fixed(self) -> bool {
        matches!(self, ListId::Exit { .. })
    }
}

/// The shape of a stage, which a checkpoint must match to be restored into it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageShape {
    /// The stage's name ("browns=12").
    pub name: String,
    /// Index slots of each slice of the stage, in slot order.
    pub lens: Vec<u64>,
    /// Whether the stage runs on compact arrays (counter nibbles and a value log instead of
    /// value bytes, see [`crate::rules`]): a checkpoint of the other layout does not fit.
    pub compact: bool,
}

/// One block of the value log of a stage on compact arrays: `keys` positions of section
/// `section`, all of value `value`, coded by the kernel (sorted, varint gaps, zstd). A block
/// never changes once logged, so a keeper saves each once and links it into later checkpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedBlock {
    /// The section (`2 * slot + side`).
    pub section: u32,
    /// The value of its positions.
    pub value: u8,
    /// How many positions it holds.
    pub keys: u32,
    /// The coded positions, opaque to keepers.
    pub bytes: Vec<u8>,
}

/// The value log as a checkpoint reads it: its blocks so far, oldest first.
pub trait LogBlocks: Sync {
    /// How many blocks are logged.
    fn blocks(&self) -> usize;

    /// Block `i` (below [`LogBlocks::blocks`]).
    fn block(&self, i: usize) -> Result<LoggedBlock, String>;
}

/// The log of a stage on value bytes: empty.
pub struct NoLog;

impl LogBlocks for NoLog {
    fn blocks(&self) -> usize {
        0
    }

    fn block(&self, i: usize) -> Result<LoggedBlock, String> {
        Err(format!("no value log (block {i} asked)"))
    }
}

/// Kernel times carried over a resume, so that a resumed stage reports all its work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CarriedTimes {
    /// The initial sweep.
    pub init: Duration,
    /// The claim plies so far.
    pub claim_plies: Duration,
    /// The count plies so far.
    pub count_plies: Duration,
    /// The most keys held in lists at once so far ([`crate::StageTimes::peak_list_keys`]).
    pub peak_list_keys: u64,
    /// The stage's wall time from its start to the checkpoint, over every sitting that led
    /// to it: what a resumed stage adds to its own sitting's wall to report the whole stage
    /// ([`crate::StageTimes::earlier_wall`]).
    pub wall: Duration,
}

/// The kernel's state after a ply, borrowed from the kernel while it is saved.
pub struct PlySnapshot<'a> {
    /// The stage.
    pub shape: &'a StageShape,
    /// The next ply to run.
    pub ply: u32,
    /// Canonical positions per side not yet final.
    pub open: [u64; 2],
    /// The kernel's times so far.
    pub times: CarriedTimes,
    /// Per slot and side: the value bytes (counters of open positions); on compact arrays the
    /// counter nibbles (empty for a side without counters).
    pub values: Vec<[&'a [u8]; 2]>,
    /// Per slot and side: the final bits, as bytes.
    pub finals: Vec<[&'a [u8]; 2]>,
    /// Per section: the counters too large for a byte, as `(index, remaining)`.
    pub overflow: Vec<Vec<(u64, u32)>>,
    /// The non-empty lists, each in pieces.
    pub lists: Vec<(ListId, Vec<KeyChunk<'a>>)>,
    /// On compact arrays, the value log so far ([`NoLog`] on value bytes).
    pub log: &'a dyn LogBlocks,
    /// Drops the resident pages of a slot's arrays once they are saved (out of core the arrays
    /// are file-backed, and reading them all would otherwise fill memory).
    pub release: &'a (dyn Fn(usize) + Sync),
    /// Drops the resident pages of the spilled list a list of [`PlySnapshot::lists`] is in,
    /// once its keys are gathered (out of core; nothing in memory). Other lists of the same
    /// spill file lose their pages too and are read back from it.
    pub release_list: &'a (dyn Fn(ListId) + Sync),
}

/// What a checkpoint gives back besides the arrays (which [`Checkpoints::restore`] writes in
/// place).
#[derive(Debug, Default)]
pub struct RestoredPly {
    /// The next ply to run.
    pub ply: u32,
    /// Canonical positions per side not yet final.
    pub open: [u64; 2],
    /// The kernel's times before the checkpoint.
    pub times: CarriedTimes,
    /// Per section: the overflow counters.
    pub overflow: Vec<Vec<(u64, u32)>>,
}

/// Where a restored checkpoint goes: its arrays into the kernel's freshly allocated arrays,
/// per slot and side; its lists to `lists`, one at a time as they are read.
pub struct RestoreInto<'a> {
    /// Value bytes.
    pub values: Vec<[&'a mut [u8]; 2]>,
    /// Final bits, as bytes.
    pub finals: Vec<[&'a mut [u8]; 2]>,
    /// Takes each list of the checkpoint. Out of core the kernel spills it at once: the lists
    /// of a large stage do not fit in memory together (BOARD33 browns=14 held ~2.6e9 keys,
    /// 21 GB, when the restore read them all first and was killed for lack of memory).
    pub lists: &'a mut dyn FnMut(ListId, Vec<u64>),
    /// Takes each block of the value log, oldest first (compact arrays only).
    pub log: &'a mut dyn FnMut(LoggedBlock) -> Result<(), String>,
}

/// A keeper of one stage's checkpoints. The kernel asks it once, before initialising, for a
/// checkpoint to resume from, and after every ply whether one is due.
pub trait Checkpoints: Send + Sync + Debug {
    /// Whether a checkpoint should be taken now (after the ply just finished).
    fn due(&self) -> bool;

    /// Told once the initial sweep of a stage started afresh is done (not of a resumed one),
    /// with how long it took. The sweep has just written the stage's scheduled exits, most of
    /// the keys of its first checkpoint; out of core they are in scratch files, cheapest to
    /// read back while the page cache still holds them, so a keeper may make its first
    /// checkpoint due at once (see `retro_pipeline::checkpoint`). Nothing by default.
    fn swept(&self, _took: Duration) {}

    /// Saves `snapshot` durably, replacing the previous checkpoint only once it is complete.
    fn save(&self, snapshot: &PlySnapshot) -> Result<(), String>;

    /// Restores the latest checkpoint of the stage `shape` into `into` and returns the rest of
    /// its state; `None` when there is none to resume from (or only one of another stage),
    /// with `into` untouched. An error means a damaged checkpoint, which the keeper reports
    /// (naming the file): `into` may have been partly overwritten, and the kernel starts the
    /// stage afresh on new arrays.
    fn restore(
        &self,
        shape: &StageShape,
        into: &mut RestoreInto,
    ) -> Result<Option<RestoredPly>, String>;
}
