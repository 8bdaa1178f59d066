//! The stage kernel: solves one stage by frontier propagation, in memory or out of core.
//!
//! Plies are processed in increasing value order. Only positions that became final in the
//! previous ply are expanded (by un-moving), so each position is touched a constant number of
//! times over the whole stage instead of once per ply. What a ply does to one position — claims
//! on odd plies, counter decrements on even ones, scheduled exits — is defined once, in
//! [`crate::rules`]; this module drives those rules over a whole stage at a time:
//!
//! * the **initial sweep** classifies every position of every slice of the stage;
//! * each **ply** expands its frontier (the positions of value `ply`, both sides) in parallel
//!   and applies the exits scheduled for it; in late claim plies, when fewer positions of the
//!   claimed side are open than the frontier holds, it *pulls* instead (each open position
//!   checks its successors for one of value `ply`), which gives the same result with less work
//!   (decided per slot when every claim stays in its slice, per side otherwise);
//! * positions never made final are draws.
//!
//! **Sections.** A slice holds both sides to move; the kernel keeps per slice *slot* (the
//! slice's place in the stage) two sections, each a byte per position and a bitmap of final
//! bits. Lists of positions (frontiers, scheduled exits) are grouped by section
//! (`2 * slot + side`).
//!
//! **Compact arrays.** Where the driver asks for them and the game allows (out of core, in
//! Sixteen Musashi), a section holds counter nibbles instead of bytes and no values: each ply's
//! new frontier goes to the stage's value log ([`crate::value_log`]), pulls read the frontier
//! as bitmaps, and the value tables are built from the log and the final bits at the end (see
//! [`crate::rules`]).

use crate::atomic::{ByteArray, ScratchError};
use crate::bulk::claim_in_bulk;
use crate::checkpoint::{
    CarriedTimes, ListId, LoggedBlock, NoLog, PlySnapshot, RestoreInto, RestoredPly, StageShape,
};
use crate::distinct::Distinct;
use crate::frontier::{Frontier, GroupKeys, KeyChunk, Sink, SlotLists, CHUNK};
use crate::game::{BulkPlan, Game, Side, SliceId, Stage};
use crate::meter::{BatchStart, SliceCost, SlotClocks};
use crate::rules::{
    any_move, apply, count_moves, finish_section, for_each_target_of, overflow_table, slots_of,
    OverflowCounter, Section, Seeds, SideRoles, Sweep, OVERFLOW,
};
use crate::steps::{Step, StepClock, StepTimes};
use crate::value::Value;
use crate::value_log::ValueLog;
use crate::workspace::{
    batch_reserve, compact_slice_array_bytes, slice_array_bytes, Residency, Workspace,
};
use rayon::prelude::*;
use retro_index::DelayRing;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Read access to the values of final, earlier stages.
pub trait FinalValues: Sync {
    /// The value at `index` of `slice` (a slice of a finished stage) with `side` to move.
    fn value(&self, side: Side, slice: SliceId, index: u64) -> Value;

    /// Called after each batch of initialisation (the only phase that reads final values): an
    /// implementation whose values are paged from disk drops their resident pages here.
    fn release(&self) {}

    /// What could not be read, if anything: an implementation reading from files that finds
    /// one damaged answers 0 for what it cannot read and says so here. Checked after each
    /// batch of initialisation; the stage then stops with [`KernelError::Input`].
    fn failure(&self) -> Option<String> {
        None
    }
}

/// No final values: for a stage whose moves never reach a table of an earlier stage (a
/// game's first stage, a thresholded score game whose exits are [`Move::Known`]).
pub struct NoFinals;

impl FinalValues for NoFinals {
    fn value(&self, _: Side, slice: SliceId, _: u64) -> Value {
        unreachable!("a stage without earlier tables read a final value of {slice:?}")
    }
}

/// The solved arrays of one slice.
#[derive(Debug, PartialEq, Eq)]
pub struct SolvedSlice {
    /// Which slice.
    pub slice: SliceId,
    /// Values per side to move ([`Side::index`]), one byte per index.
    pub values: [ByteArray; 2],
}

/// Where the stage kernel may hand each slice's solved values as soon as they exist, as
/// `(slot, slice)`, instead of returning them all at the end: on compact arrays the values are
/// built from the value log one slice at a time, and a driver that encodes each at once (the
/// table writer) never holds more than a slice per thread — no scratch copy of the stage's
/// values (2 bytes per slot: 24 GB for BOARD33's `browns=16`). An error stops the stage.
pub type SliceSink<'a> = &'a (dyn Fn(usize, SolvedSlice) -> Result<(), String> + Sync);

/// What happened in one ply, for progress display and logs.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlyReport {
    /// The ply (= the value being finalised).
    pub ply: u32,
    /// How many positions were resolved with this value.
    pub resolved: u64,
    /// How many positions were expanded (un-moved from) in this ply.
    pub expanded: u64,
    /// Wall time of the ply's work on its slices: every batch, with the paging between them
    /// out of core (zero where not measured).
    pub work: Duration,
    /// Wall time of recording the new frontier in the value log (zero without one).
    pub logging: Duration,
}

/// Where a stage's time went.
#[derive(Clone, Debug, Default)]
pub struct StageTimes {
    /// The initial sweep.
    pub init: std::time::Duration,
    /// Odd plies: expanding losses into claimed wins.
    pub claim_plies: std::time::Duration,
    /// Even plies: expanding wins into counter decrements.
    pub count_plies: std::time::Duration,
    /// What each slice (by slot in the stage) cost, all plies together.
    pub slices: Vec<SliceCost>,
    /// The most keys (8 bytes each) held at once in the stage's lists: the frontier being
    /// expanded, the one being built and the exits still scheduled. With the arrays, this is
    /// the kernel's memory (or, out of core, its scratch disk) per stage.
    pub peak_list_keys: u64,
    /// Bytes of the stage's arrays (values or counter nibbles, and final bits; both sides, all
    /// slices) as the kernel laid them out.
    pub array_bytes: u64,
    /// On compact arrays: the bytes of the value log (the compressed frontiers of every ply)
    /// at the stage's end; 0 on value bytes.
    pub value_log_bytes: u64,
    /// On compact arrays: the positions the value log holds.
    pub value_log_keys: u64,
    /// On compact arrays: building the value tables from the log at the end.
    pub build: std::time::Duration,
    /// Each step's wall and CPU time: where the threads idled (this run's steps only; a
    /// restored checkpoint's earlier work is not in them).
    pub steps: StepTimes,
    /// On a stage resumed from a checkpoint: the wall time of the sittings before, from the
    /// stage's start to the checkpoint (work done after it and lost is not counted); zero on
    /// a stage begun afresh. A caller timing the stage adds it to its own clock, or a stage
    /// cut once would report only its last sitting.
    pub earlier_wall: Duration,
}

impl StageTimes {
    /// Adds the times of another run of the same stage (a score game runs the kernel once per
    /// threshold): durations and traffic add up, peak memory is the larger.
    pub fn add(&mut self, other: &StageTimes) {
        self.init += other.init;
        self.claim_plies += other.claim_plies;
        self.count_plies += other.count_plies;
        self.peak_list_keys = self.peak_list_keys.max(other.peak_list_keys);
        self.array_bytes = self.array_bytes.max(other.array_bytes);
        self.value_log_bytes = self.value_log_bytes.max(other.value_log_bytes);
        self.value_log_keys = self.value_log_keys.max(other.value_log_keys);
        self.build += other.build;
        self.earlier_wall += other.earlier_wall;
        self.steps.add(&other.steps);
        if self.slices.len() < other.slices.len() {
            self.slices.resize(other.slices.len(), SliceCost::default());
        }
        for (mine, theirs) in self.slices.iter_mut().zip(&other.slices) {
            mine.cpu += theirs.cpu;
            mine.wall += theirs.wall;
            mine.read += theirs.read;
            mine.written += theirs.written;
            mine.peak_rss = mine.peak_rss.max(theirs.peak_rss);
        }
    }
}

/// Why a stage could not be solved.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// A value exceeded the one-byte encoding.
    #[error("stage {stage}: a value exceeds the one-byte limit {}", Value::MAX.0)]
    ValueOverflow {
        /// The stage's name.
        stage: String,
    },
    /// A scratch file of an out-of-core solve could not be created, written or mapped.
    #[error("stage {stage}: {error}")]
    Scratch {
        /// The stage's name.
        stage: String,
        /// The operation, the scratch directory and the I/O error (in the message, not a
        /// separate link of the error chain).
        error: ScratchError,
    },
    /// A checkpoint of the stage could not be saved, or a restored one does not fit the stage.
    #[error("stage {stage}: checkpoint: {what}")]
    Checkpoint {
        /// The stage's name.
        stage: String,
        /// What went wrong (the keeper names its files).
        what: String,
    },
    /// A solved slice could not be handed over ([`SliceSink`]).
    #[error("stage {stage}: {what}")]
    Tables {
        /// The stage's name.
        stage: String,
        /// What the sink reported.
        what: String,
    },
    /// The final values of an earlier stage could not be read ([`FinalValues::failure`]).
    #[error("stage {stage}: cannot read an earlier stage's values: {what}")]
    Input {
        /// The stage's name.
        stage: String,
        /// What the reader reported (naming the file).
        what: String,
    },
    /// The game broke a contract of the [`Game`] trait.
    #[error("stage {stage}: game contract violated: {what}")]
    Contract {
        /// The stage's name.
        stage: String,
        /// What went wrong.
        what: String,
    },
}

/// `Err(KernelError::Input)` naming `stage` if a reader of earlier stages' values reported
/// `failure` ([`FinalValues::failure`], [`crate::margin::FinalMargins::failure`]): the one check
/// every entry point that reads final values makes before it trusts what it read.
pub(crate) fn input_failure(stage: &Stage, failure: Option<String>) -> Result<(), KernelError> {
    match failure {
        Some(what) => Err(KernelError::Input {
            stage: stage.name.clone(),
            what,
        }),
        None => Ok(()),
    }
}

/// Bytes of the arrays the stage kernel lays out for a slice of `n` positions of `game` in a
/// workspace that asks for compact arrays ([`Workspace::with_compact_arrays`], as out-of-core
/// drivers do): what a driver sizes its windows with.
pub fn compact_workspace_slice_bytes<G: Game>(game: &G, n: u64) -> u64 {
    let space = Workspace::in_memory().with_compact_arrays();
    Layout::of(game, &space).slice_bytes(n)
}

/// Indices are swept in chunks of this many slots per parallel task.
const SWEEP_CHUNK: u64 = 1 << 15;

/// Bytes of a value table filled from its final bits per parallel task (16,384 bit words).
const FILL_PIECE: usize = 1 << 20;
/// One bucket per possible value.
const BUCKETS: usize = 256;

/// How many targets a count ply's decrement follows the prefetch of its counter by
/// ([`retro_index::DelayRing`]).
const COUNTER_DEPTH: usize = 16;

/// The section list index of `side` in slot `slot`.
#[inline(always)]
pub(crate) fn section_of(slot: u32, side: Side) -> usize {
    2 * slot as usize + side.index()
}

/// The slot and side of a section list index.
#[inline(always)]
fn slot_side(section: usize) -> (usize, Side) {
    let side = if section.is_multiple_of(2) {
        Side::First
    } else {
        Side::Second
    };
    (section / 2, side)
}

/// The section lists of the slots in `batch`.
fn sections_of(batch: &[usize]) -> Vec<usize> {
    batch.iter().flat_map(|&s| [2 * s, 2 * s + 1]).collect()
}

/// A stage's arrays, per slot and side: a byte per position (counter, then value) and a final
/// bit per position; or, compact, a counter nibble per position of a side that keeps counters
/// and the final bits.
struct StageArrays {
    values: Vec<[ByteArray; 2]>,
    finals: Vec<[ByteArray; 2]>,
}

/// How a stage's arrays are laid out: a byte per position and side, or compact (`counted`:
/// the sides that keep counter nibbles).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Bytes,
    Compact { counted: [bool; 2] },
}

impl Layout {
    /// The layout the kernel uses for `game` in `space`: compact arrays need un-moves (a pull
    /// count ply would read and write whole counters of another kind of position), a game
    /// that allows them and a workspace that asks for them.
    fn of<G: Game>(game: &G, space: &Workspace) -> Layout {
        if space.compact_arrays() && game.has_unmoves() && game.compact_counters() {
            Layout::Compact {
                counted: SideRoles::of(game).counted,
            }
        } else {
            Layout::Bytes
        }
    }

    /// Bytes of a slice's arrays.
    fn slice_bytes(self, n: u64) -> u64 {
        match self {
            Layout::Bytes => slice_array_bytes(n),
            Layout::Compact { counted } => {
                compact_slice_array_bytes(n, counted.iter().filter(|&&c| c).count() as u64)
            }
        }
    }

    /// Bytes of one side's counter-or-value array of a slice.
    fn value_bytes(self, n: u64, side: Side) -> u64 {
        match self {
            Layout::Bytes => n,
            Layout::Compact { counted } if counted[side.index()] => n.div_ceil(2),
            Layout::Compact { .. } => 0,
        }
    }
}

impl StageArrays {
    /// Allocates the arrays: in memory, or out of core with as many slots in memory as leave
    /// room in the window for one batch's working set ([`batch_reserve`]) and the rest
    /// file-backed. Returns the arrays, the file-backed bytes of each slot and how many bytes
    /// of file-backed pages may stay resident between batches.
    fn allocate(
        lens: &[u64],
        layout: Layout,
        space: &Workspace,
    ) -> Result<(StageArrays, Vec<u64>, u64), ScratchError> {
        let mut arrays = StageArrays {
            values: Vec::new(),
            finals: Vec::new(),
        };
        let largest = lens
            .iter()
            .map(|&n| layout.slice_bytes(n))
            .max()
            .unwrap_or(0);
        // Compact stages build their tables at the end, a slice (two bytes a slot) at a time:
        // that much is kept free too.
        let build = match layout {
            Layout::Bytes => 0,
            Layout::Compact { .. } => 2 * lens.iter().copied().max().unwrap_or(0),
        };
        let reserve = batch_reserve(largest) + build;
        let mut in_memory_left = space.window().saturating_sub(reserve);
        let mut in_memory = 0;
        let mut file_bytes = Vec::new();
        for &n in lens {
            let bytes = layout.slice_bytes(n);
            let scratch = space.scratch().filter(|_| bytes > in_memory_left);
            let alloc = |len: u64| match scratch {
                Some(dir) => ByteArray::file_backed(dir, len as usize),
                None => Ok(ByteArray::zeroed(len as usize)),
            };
            let words = n.div_ceil(64) * 8;
            arrays.values.push([
                alloc(layout.value_bytes(n, Side::First))?,
                alloc(layout.value_bytes(n, Side::Second))?,
            ]);
            arrays.finals.push([alloc(words)?, alloc(words)?]);
            if scratch.is_some() {
                file_bytes.push(bytes);
            } else {
                in_memory_left = in_memory_left.saturating_sub(bytes);
                in_memory += bytes;
                file_bytes.push(0);
            }
        }
        let resident = space.window().saturating_sub(in_memory + reserve);
        Ok((arrays, file_bytes, resident))
    }

    /// Every array as bytes to be overwritten by a restored checkpoint, whose lists go to
    /// `lists` and value log blocks to `log`.
    fn restore_into<'a>(
        &'a mut self,
        lists: &'a mut dyn FnMut(ListId, Vec<u64>),
        log: &'a mut dyn FnMut(LoggedBlock) -> Result<(), String>,
    ) -> RestoreInto<'a> {
        RestoreInto {
            lists,
            log,
            values: self
                .values
                .iter_mut()
                .map(|[a, b]| [&mut a[..], &mut b[..]])
                .collect(),
            finals: self
                .finals
                .iter_mut()
                .map(|[a, b]| [&mut a[..], &mut b[..]])
                .collect(),
        }
    }

    /// Drops the resident pages of slot `s`'s arrays (file-backed ones only).
    fn release(&self, s: usize) {
        for a in self.values[s].iter().chain(&self.finals[s]) {
            a.release();
        }
    }
}

/// List chunks expanded between two releases of a spilled list's pages (4M keys, 32 MB).
const GROUP_CHUNKS: usize = 1 << 10;

/// Runs `work(section, keys)` in parallel on every chunk of `list` in the sections of `batch`
/// (slots) picked by `pick`, a group of chunks at a time, and returns the union of the slots the
/// calls touched. Out of core the list's pages are dropped after each group, so a long list is
/// never resident at once.
fn expand(
    list: &Frontier,
    batch: &[usize],
    pick: impl Fn(usize) -> bool,
    clocks: &SlotClocks,
    work: impl Fn(usize, &[u64]) -> Vec<bool> + Sync,
) -> Vec<bool> {
    let n = clocks.slots();
    let mut touched = vec![false; n];
    let sections: Vec<usize> = sections_of(batch)
        .into_iter()
        .filter(|&s| pick(s))
        .collect();
    // Expands pieces (section, keys) in parallel; returns the slots they touched. One piece
    // per rayon job (see `pull_ply`): late in a stage most keys reach final targets and cost
    // little, the rest cluster.
    // A narrowed piece is widened by its task into the task's own small buffer (a piece holds
    // `CHUNK` keys), not the whole group at once by one thread.
    let run = |pieces: Vec<(usize, KeyChunk)>| {
        pieces
            .par_iter()
            .with_max_len(1)
            .map(|(sec, chunk)| {
                let mut widened = Vec::new();
                let keys = chunk.keys(&mut widened);
                clocks.time(sec / 2, || work(*sec, keys))
            })
            .reduce(|| vec![false; n], touched_union)
    };
    if !list.is_spilled() {
        // Sealed lists in memory are sorted already (at least the sections expanded here).
        for group in list.chunks(&sections).chunks(GROUP_CHUNKS) {
            let pieces = group.iter().map(|&(sec, c)| (sec as usize, c));
            touched = touched_union(touched, run(pieces.collect()));
        }
        return touched;
    }
    // A spilled list holds its keys in the order they were produced: each group is copied and
    // sorted before it is expanded, for the locality sorted lists give (see `frontier`). The
    // next group is prepared (copied out of the scratch file and sorted) while the current one
    // is expanded. The groups of all sections form one sequence, so that a section's first
    // group is prepared during the last one of the section before (most sections hold one
    // group: pipelined per section, each was prepared while the other threads idled). That
    // costs two groups' keys in memory at most (and the sort's buffer), 4 bytes a key where
    // they were spilled narrowed: each piece is widened only by the task that expands it.
    //
    // The sort is cut into one run per thread, sorted in parallel: a thread whose expansion
    // ends first helps with it instead of idling in the join (measured on BOARD33 `browns=9`
    // out of core: a thread waited 8% of the time while the other sorted). Each thread's
    // share of the chunks is then about one sorted run, as local as one sort of the whole.
    let parts = rayon::current_num_threads().max(1);
    let prepare = |&(sec, group): &(usize, &[(u32, KeyChunk)])| -> (usize, GroupKeys) {
        let mut keys = GroupKeys::of(group);
        keys.sort_runs(keys.len().div_ceil(parts).max(CHUNK));
        (sec, keys)
    };
    let chunks: Vec<(usize, Vec<(u32, KeyChunk)>)> = sections
        .iter()
        .map(|&sec| (sec, list.chunks(&[sec])))
        .collect();
    let groups: Vec<(usize, &[(u32, KeyChunk)])> = chunks
        .iter()
        .flat_map(|(sec, chunks)| chunks.chunks(GROUP_CHUNKS).map(|group| (*sec, group)))
        .collect();
    let mut later = groups.iter();
    let mut next = later.next().map(prepare);
    while let Some((sec, keys)) = next.take() {
        // The pages read so far are copied: dropped before more are read.
        list.release();
        let (expanded, prepared) = rayon::join(
            || run(keys.chunks(CHUNK).map(|c| (sec, c)).collect()),
            || later.next().map(prepare),
        );
        touched = touched_union(touched, expanded);
        next = prepared;
    }
    touched
}

/// Merges the `touched` flags of parallel tasks.
pub(crate) fn touched_union(mut a: Vec<bool>, b: Vec<bool>) -> Vec<bool> {
    for (x, y) in a.iter_mut().zip(b) {
        *x |= y;
    }
    a
}

/// Solves `stage` of `game`, reading earlier stages through `finals`, keeping its data where
/// `space` says, and reports each ply to `on_ply`. Runs on the current rayon thread pool.
pub fn solve_stage<G: Game, F: FinalValues>(
    game: &G,
    stage: &Stage,
    finals: &F,
    space: &Workspace,
    on_ply: impl FnMut(PlyReport),
) -> Result<(Vec<SolvedSlice>, StageTimes), KernelError> {
    solve_stage_into(game, stage, finals, space, on_ply, None)
}

/// [`solve_stage`], handing each slice to `sink` as soon as it is solved where the kernel can
/// (on compact arrays: see [`SliceSink`]); returns the slices not handed over.
pub fn solve_stage_into<G: Game, F: FinalValues>(
    game: &G,
    stage: &Stage,
    finals: &F,
    space: &Workspace,
    mut on_ply: impl FnMut(PlyReport),
    sink: Option<SliceSink>,
) -> Result<(Vec<SolvedSlice>, StageTimes), KernelError> {
    let clock = Instant::now();
    let mut lap = StepClock::start();
    let roles = SideRoles::of(game);
    let push = game.has_unmoves();
    let layout = Layout::of(game, space);
    let compact = layout != Layout::Bytes;
    let slot_of = slots_of(game, stage);
    let lens: Vec<u64> = stage.slices.iter().map(|&s| game.slice_len(s)).collect();
    let n = stage.slices.len();
    let lists = 2 * n;
    let mut times = StageTimes {
        slices: vec![SliceCost::default(); n],
        array_bytes: lens.iter().map(|&n| layout.slice_bytes(n)).sum(),
        ..StageTimes::default()
    };
    let clocks = SlotClocks::new(n);
    let scratch_error = |e: ScratchError| KernelError::Scratch {
        stage: stage.name.clone(),
        error: e,
    };
    let (mut arrays, file_bytes, resident_limit) =
        StageArrays::allocate(&lens, layout, space).map_err(scratch_error)?;
    lap.lap(&mut times.steps, Step::Paging);
    let shape = StageShape {
        name: stage.name.clone(),
        lens: lens.clone(),
        compact,
    };
    let keeper = space.checkpoints();
    // On compact arrays, the values resolved so far (in a checkpoint too).
    let new_log = || {
        if compact {
            ValueLog::new(lists, space).map(Some)
        } else {
            Ok(None)
        }
    };
    let mut log = new_log().map_err(scratch_error)?;
    let checkpoint_error = |what: String| KernelError::Checkpoint {
        stage: stage.name.clone(),
        what,
    };
    // A checkpoint of this stage, if the keeper has one: its arrays go straight into ours, its
    // lists into lists of ours as they are read.
    let mut lists_read = RestoredLists::new(lists, space);
    let restored = match keeper {
        Some(keeper) => {
            let mut take = |id, keys| lists_read.take(id, keys);
            let mut take_block = |block| match &mut log {
                Some(log) => log.restore_block(block),
                None => Err("a value log block for a stage on value bytes".to_string()),
            };
            let restored =
                keeper.restore(&shape, &mut arrays.restore_into(&mut take, &mut take_block));
            for s in 0..n {
                arrays.release(s);
            }
            match restored {
                Ok(restored) => restored,
                // A damaged checkpoint (the keeper has reported it) may have been read in
                // part: the stage starts afresh, on fresh arrays and lists.
                Err(_) => {
                    drop(arrays);
                    let (fresh, ..) =
                        StageArrays::allocate(&lens, layout, space).map_err(scratch_error)?;
                    arrays = fresh;
                    lists_read = RestoredLists::new(lists, space);
                    log = new_log().map_err(scratch_error)?;
                    None
                }
            }
        }
        None => None,
    };
    lap.lap(&mut times.steps, Step::Checkpoint);
    let ply_batches = space.ply_batches(&file_bytes);
    let mut residency = Residency::new(resident_limit, file_bytes);
    let mut after_batch = |touched: &[bool]| {
        for s in residency.after_batch(touched) {
            arrays.release(s);
        }
    };
    let batches = space.batches(n);
    let values: Vec<[&[AtomicU8]; 2]> = arrays
        .values
        .iter()
        .map(|[a, b]| [a.atomics(), b.atomics()])
        .collect();
    let final_bits: Vec<[&[AtomicU64]; 2]> = arrays
        .finals
        .iter()
        .map(|[a, b]| [a.atomic_words(), b.atomic_words()])
        .collect();
    // Every section's arrays, by section list index, so that a target costs one lookup. The
    // overflow tables (counters past a byte) are only known after initialisation, which only
    // writes them: it runs on sections without them.
    fn sections_with<'a>(
        values: &[[&'a [AtomicU8]; 2]],
        final_bits: &[[&'a [AtomicU64]; 2]],
        roles: &SideRoles,
        compact: bool,
        overflow: &'a [Vec<OverflowCounter>],
    ) -> Vec<Section<'a>> {
        (0..values.len())
            .flat_map(|slot| {
                Side::BOTH.map(|side| Section {
                    values: values[slot][side.index()],
                    finals: final_bits[slot][side.index()],
                    claimable: roles.claimable[side.index()],
                    compact,
                    overflow: overflow
                        .get(section_of(slot as u32, side))
                        .map_or(&[], Vec::as_slice),
                })
            })
            .collect()
    }
    let sections = sections_with(&values, &final_bits, &roles, compact, &[]);
    // By reference: a pushed target reads only the fields its rule needs (a copy of the
    // whole section per target was measurable in the push loops).
    let section = |slot: usize, side: Side| &sections[2 * slot + side.index()];
    let contract = |what: String| KernelError::Contract {
        stage: stage.name.clone(),
        what,
    };

    // The state at the first ply to run: a restored checkpoint's, or the initial sweep's.
    let (mut frontier, mut exits, overflow, mut open, first_ply) = if let Some(r) = restored {
        let state = restored_state(r, lists_read, &shape).map_err(checkpoint_error)?;
        // The open positions per slot are the clear final bits; their sums must be the
        // checkpoint's, or it does not belong to these arrays.
        let open: Vec<[u64; 2]> = (0..n)
            .map(|s| Side::BOTH.map(|side| open_in(final_bits[s][side.index()], lens[s])))
            .collect();
        let sums = Side::BOTH.map(|side| open.iter().map(|o| o[side.index()]).sum::<u64>());
        if sums != state.open {
            return Err(checkpoint_error(format!(
                "it counts {:?} open positions, its arrays hold {sums:?}",
                state.open
            )));
        }
        times.init = state.times.init;
        times.claim_plies = state.times.claim_plies;
        times.count_plies = state.times.count_plies;
        times.peak_list_keys = state.times.peak_list_keys;
        times.earlier_wall = state.times.wall;
        (state.frontier, state.exits, state.overflow, open, state.ply)
    } else {
        // Positions lost at once (the frontier of ply 1), and scheduled exits by ply. During
        // initialisation the tasks add to them directly (out of core they go to disk at once).
        let lost = Sink::new(lists, space);
        let overflow_found: Vec<Mutex<Vec<(u64, u32)>>> =
            (0..lists).map(|_| Mutex::new(Vec::new())).collect();
        let scheduled: Vec<Sink> = (0..BUCKETS).map(|_| Sink::new(lists, space)).collect();
        // Canonical positions per slot and side not yet final (decide between push and pull).
        let mut open = vec![[0u64; 2]; n];
        let sweep = Sweep {
            game,
            roles,
            slot_of: &slot_of,
            finals,
        };

        // Initialisation: one sweep over the slices, a batch of slots at a time.
        for batch in &batches {
            let batch_start = BatchStart::now();
            let tasks: Vec<(u32, u64)> = batch
                .iter()
                .flat_map(|&s| (0..lens[s].div_ceil(SWEEP_CHUNK)).map(move |c| (s as u32, c)))
                .collect();
            let outcomes: Vec<(u64, Option<String>)> = tasks
                .par_iter()
                .with_max_len(1) // one chunk per rayon job (see `pull_ply`)
                .map(|&(s, chunk)| {
                    clocks.time(s as usize, || {
                        let slice = stage.slices[s as usize];
                        let start = chunk * SWEEP_CHUNK;
                        let end = (start + SWEEP_CHUNK).min(lens[s as usize]);
                        let mut seeds = Seeds::for_lists(lost.spills());
                        let sections = Side::BOTH.map(|side| *section(s as usize, side));
                        sweep.sweep(slice, start..end, sections, &mut seeds);
                        for side in Side::BOTH {
                            let keys = std::mem::take(&mut seeds.lost[side.index()]);
                            lost.push(section_of(s, side), keys);
                        }
                        for side in Side::BOTH {
                            let found = std::mem::take(&mut seeds.overflow[side.index()]);
                            if !found.is_empty() {
                                overflow_found[section_of(s, side)]
                                    .lock()
                                    .expect("overflow lock")
                                    .extend(found);
                            }
                        }
                        for ((ply, side), keys) in seeds.exits {
                            scheduled[ply as usize].push(section_of(s, side), keys);
                        }
                        (seeds.canonical, seeds.error)
                    })
                })
                .collect();
            for (&(s, _), (canonical, error)) in tasks.iter().zip(outcomes) {
                if let Some(what) = error {
                    return Err(contract(what));
                }
                open[s as usize] = open[s as usize].map(|o| o + canonical);
            }
            lap.lap(&mut times.steps, Step::Sweep);
            let mut touched = vec![false; n];
            for &s in batch {
                touched[s] = true;
            }
            after_batch(&touched);
            finals.release();
            input_failure(stage, finals.failure())?;
            batch_start.charge(&mut times.slices, batch, &lens);
            lap.lap(&mut times.steps, Step::Paging);
        }
        let mut frontier = lost.into_inner();
        if let Some(log) = &mut log {
            frontier.seal().map_err(scratch_error)?;
            log.record(Value::LOST_NOW.0, &frontier)
                .map_err(scratch_error)?;
        }
        lap.lap(&mut times.steps, Step::ValueLog);
        let exits: Vec<Frontier> = scheduled.into_iter().map(Sink::into_inner).collect();
        close(&mut open, &frontier);

        let overflow: Vec<Vec<OverflowCounter>> = overflow_found
            .into_iter()
            .map(|found| overflow_table(found.into_inner().expect("overflow lock")))
            .collect();
        times.init = clock.elapsed();
        lap.lap(&mut times.steps, Step::Sweep);
        if let Some(keeper) = keeper {
            keeper.swept(times.init);
        }
        (frontier, exits, overflow, open, 1u32)
    };
    let sections = sections_with(&values, &final_bits, &roles, compact, &overflow);
    let section = |slot: usize, side: Side| &sections[2 * slot + side.index()];

    let mut ply = first_ply;
    loop {
        if frontier.is_empty() && !exits[ply as usize..].iter().any(|b| !b.is_empty()) {
            break;
        }
        if ply + 1 > u32::from(Value::MAX.0) {
            return Err(KernelError::ValueOverflow {
                stage: stage.name.clone(),
            });
        }
        let ply_clock = Instant::now();
        let claims = ply % 2 == 1;
        let mut exit_list = std::mem::replace(&mut exits[ply as usize], Frontier::new(0, space));
        exit_list.seal().map_err(scratch_error)?;
        // Late in a stage a claim ply's frontier can be far larger than the set of positions
        // of the claimed side still open: then those positions pull (check their successors
        // for one of value `ply`) instead of the frontier pushing.
        //
        // A game without un-moves always pulls, in count plies too: each open position counts
        // its successors of value `ply` and takes that many off its counter.
        //
        // When every claim stays in its slice, the choice is made per slot: a slot whose open
        // positions are fewer than the keys its own frontier would push pulls, the others push
        // (late in a stage the slots get there at different plies).
        let per_slot = claims && push && game.claims_stay_in_slice();
        // `sent_to[s][t]`: the frontier keys whose targets are in slot `s` with side `t` to
        // move; `sent[t]` those in every slot.
        let sent_to: Vec<[u64; 2]> = (0..n)
            .map(|s| {
                Side::BOTH.map(|t| frontier.len_where(|sec| sec == section_of(s as u32, t.other())))
            })
            .collect();
        let sent = Side::BOTH.map(|t| sent_to.iter().map(|to| to[t.index()]).sum::<u64>());
        let open_total = Side::BOTH.map(|t| open.iter().map(|o| o[t.index()]).sum::<u64>());
        let pull: Vec<[bool; 2]> = (0..n)
            .map(|s| {
                Side::BOTH.map(|t| {
                    if claims {
                        let fewer_open = if per_slot {
                            open[s][t.index()] < sent_to[s][t.index()]
                        } else {
                            open_total[t.index()] < sent[t.index()]
                        };
                        roles.claimable[t.index()] && (!push || fewer_open)
                    } else {
                        !push && roles.counted[t.index()] && sent[t.index()] > 0
                    }
                })
            })
            .collect();
        // Of the slots that push their claims, those whose game finds them cheaper
        // bit-parallel ([`Game::bulk_claim_plan`]), with the plan, per claimed side. (A batch
        // with fewer slots than threads — out of core with file-backed slices, one — splits
        // each slot's bulk work between the threads.)
        let bulk: Vec<[Option<BulkPlan>; 2]> = (0..n)
            .map(|s| {
                Side::BOTH.map(|t| {
                    if !per_slot || pull[s][t.index()] || !roles.claimable[t.index()] {
                        return None;
                    }
                    game.bulk_claim_plan(t.other(), stage.slices[s], sent_to[s][t.index()])
                })
            })
            .collect();
        // The frontier's sides whose targets are neither pulled nor claimed in bulk push to
        // them: only their keys need sorting.
        let pushes = |sec: usize| {
            let (slot, side) = slot_side(sec);
            !pull[slot][side.other().index()] && bulk[slot][side.other().index()].is_none()
        };
        frontier.seal_sorting(pushes).map_err(scratch_error)?;
        let sink = Sink::new(lists, space);
        lap.lap(&mut times.steps, Step::Seal);
        let work_clock = Instant::now();
        for batch in &ply_batches {
            let batch_start = BatchStart::now();
            let pushed = expand(&frontier, batch, pushes, &clocks, |sec, chunk| {
                let (slot, side) = slot_side(sec);
                let slice = stage.slices[slot];
                let mut out = SlotLists::new(lists, n);
                let mut scratch = Distinct::new();
                let target = side.other();
                // Consecutive targets mostly share a slot (a claim's always do in a game
                // whose claims stay in the slice; a count ply's do when the game un-moves
                // a list one kind at a time): the target's section is looked up, and its
                // slot noted as touched, once per change of slot.
                let mut last: Option<(u32, &Section)> = None;
                // A count ply's decrements wait on their counters, in no order in the slice:
                // each target's counter is prefetched when it is found and decremented
                // `COUNTER_DEPTH` targets later, so that several misses are in flight.
                let counts = ply % 2 == 0;
                let mut due: DelayRing<(u32, u64, u64), COUNTER_DEPTH> = DelayRing::new();
                let apply_to = |out: &mut SlotLists, into: &Section, t: u32, t_key: u64, i: u64| {
                    // Most targets are already final late in a stage; the bitmap answers that
                    // from cache, and only a first visit touches the value array.
                    if apply(into, i as usize, ply) {
                        out.push(section_of(t, target), t_key);
                    }
                };
                for_each_target_of(
                    game,
                    &slot_of,
                    ply,
                    side,
                    slice,
                    chunk,
                    &mut scratch,
                    // Inlined into the game's un-move generator: one call per target.
                    #[inline(always)]
                    |t, t_key, i| {
                        let into = match last {
                            Some((slot, into)) if slot == t => into,
                            _ => {
                                out.touch(t);
                                let into = section(t as usize, target);
                                last = Some((t, into));
                                into
                            }
                        };
                        if !counts {
                            apply_to(&mut out, into, t, t_key, i);
                            return;
                        }
                        into.prefetch_counter(i as usize);
                        if let Some((t, t_key, i)) = due.push((t, t_key, i)) {
                            apply_to(&mut out, section(t as usize, target), t, t_key, i);
                        }
                    },
                );
                for (t, t_key, i) in due.drain() {
                    apply_to(&mut out, section(t as usize, target), t, t_key, i);
                }
                let touched = std::mem::take(&mut out.touched);
                sink.absorb(out);
                touched
            });
            lap.lap(&mut times.steps, Step::Pushes);
            let from_exits = expand(
                &exit_list,
                batch,
                |_| true,
                &clocks,
                |sec, chunk| {
                    let (slot, side) = slot_side(sec);
                    let slice = stage.slices[slot];
                    let mut out = SlotLists::new(lists, n);
                    out.touch(slot as u32);
                    for &key in chunk {
                        let i = game.index(slice, key);
                        if apply(section(slot, side), i as usize, ply) {
                            out.push(sec, key);
                        }
                    }
                    let touched = std::mem::take(&mut out.touched);
                    sink.absorb(out);
                    touched
                },
            );
            lap.lap(&mut times.steps, Step::Exits);
            let mut touched = touched_union(pushed, from_exits);
            for side in Side::BOTH {
                let plans: Vec<(usize, BulkPlan)> = batch
                    .iter()
                    .filter_map(|&s| bulk[s][side.index()].map(|plan| (s, plan)))
                    .collect();
                if !plans.is_empty() {
                    let bulked = claim_in_bulk(
                        game, stage, side, &plans, &frontier, &lens, &sections, ply, &sink, &clocks,
                    );
                    touched = touched_union(touched, bulked);
                }
            }
            lap.lap(&mut times.steps, Step::BulkClaims);
            // On compact arrays, which hold no values, the positions that got the value `ply`
            // are the frontier's: marked in bitmaps for the slots a pull may reach.
            let resolved = if compact {
                frontier_bitmaps(game, stage, &frontier, batch, &pull, &lens)
            } else {
                Vec::new()
            };
            lap.lap(&mut times.steps, Step::Bitmaps);
            // Whether the position at `ti` of slice `to`, with `side` to move, got the value
            // `ply`.
            let has_ply_value = |side: Side, out: &mut SlotLists, to: SliceId, ti: u64| {
                let t = slot_of[to.0 as usize];
                out.touch(t);
                let ti = ti as usize;
                if compact {
                    let bits = resolved[section_of(t, side)]
                        .as_ref()
                        .expect("a pull reaches only slots whose frontier is marked");
                    return bits[ti / 64] >> (ti % 64) & 1 == 1;
                }
                let target = section(t as usize, side);
                target.is_final(ti) && u32::from(target.values[ti].load(Relaxed)) == ply
            };
            let value = (ply + 1) as u8;
            for side in Side::BOTH {
                let batch: Vec<usize> = batch
                    .iter()
                    .copied()
                    .filter(|&s| pull[s][side.index()])
                    .collect();
                if batch.is_empty() {
                    continue;
                }
                let batch = &batch[..];
                let pulled = if claims {
                    pull_ply(
                        game,
                        stage,
                        side,
                        batch,
                        &lens,
                        &final_bits,
                        &sink,
                        &clocks,
                        |s, key, i, out| {
                            let slice = stage.slices[s as usize];
                            let found = any_move(game, side, slice, key, i, &mut |to, ti| {
                                has_ply_value(side.other(), out, to, ti)
                            });
                            if found {
                                section(s as usize, side).store_value(i as usize, value);
                            }
                            found
                        },
                    )
                } else {
                    pull_ply(
                        game,
                        stage,
                        side,
                        batch,
                        &lens,
                        &final_bits,
                        &sink,
                        &clocks,
                        |s, key, i, out| {
                            // Only this task touches the position in this phase of the ply.
                            let target = section(s as usize, side);
                            let cell = &target.values[i as usize];
                            let counter = cell.load(Relaxed);
                            if counter == 0 {
                                return false; // cannot lose
                            }
                            let slice = stage.slices[s as usize];
                            let won = count_moves(game, side, slice, key, &mut |to, k| {
                                has_ply_value(side.other(), out, to, game.index(to, k))
                            });
                            if counter == OVERFLOW {
                                if won > 0 && target.take_overflow(i as usize, won) {
                                    cell.store(value, Relaxed);
                                    return true;
                                }
                                return false;
                            }
                            let counter = u32::from(counter);
                            if won >= counter {
                                cell.store(value, Relaxed);
                                return true;
                            }
                            cell.store((counter - won) as u8, Relaxed);
                            false
                        },
                    )
                };
                touched = touched_union(touched, pulled);
            }
            lap.lap(&mut times.steps, Step::Pulls);
            frontier.release();
            exit_list.release();
            after_batch(&touched);
            batch_start.charge(&mut times.slices, batch, &lens);
            lap.lap(&mut times.steps, Step::Paging);
        }
        let work = work_clock.elapsed();
        let expanded = frontier.len() + exit_list.len();
        frontier = sink.into_inner();
        lap.lap(&mut times.steps, Step::Paging);
        let log_clock = Instant::now();
        if let Some(log) = &mut log {
            frontier.seal().map_err(scratch_error)?;
            log.record((ply + 1) as u8, &frontier)
                .map_err(scratch_error)?;
        }
        let logging = log_clock.elapsed();
        lap.lap(&mut times.steps, Step::ValueLog);
        let scheduled: u64 = exits[ply as usize + 1..].iter().map(Frontier::len).sum();
        times.peak_list_keys = times
            .peak_list_keys
            .max(expanded + frontier.len() + scheduled);
        close(&mut open, &frontier);
        if claims {
            times.claim_plies += ply_clock.elapsed();
        } else {
            times.count_plies += ply_clock.elapsed();
        }
        on_ply(PlyReport {
            ply: ply + 1,
            resolved: frontier.len(),
            expanded,
            work,
            logging,
        });
        lap.lap(&mut times.steps, Step::Paging);
        ply += 1;
        if let Some(keeper) = keeper.filter(|k| k.due()) {
            frontier.seal().map_err(scratch_error)?;
            for later in &mut exits[ply as usize..] {
                later.seal().map_err(scratch_error)?;
            }
            let release = |s: usize| arrays.release(s);
            let release_list = |id: ListId| match id {
                ListId::Frontier { .. } => frontier.release(),
                ListId::Exit { ply, .. } => exits[ply as usize].release(),
            };
            let snapshot = PlySnapshot {
                shape: &shape,
                ply,
                open: Side::BOTH.map(|side| open.iter().map(|o| o[side.index()]).sum()),
                times: CarriedTimes {
                    init: times.init,
                    claim_plies: times.claim_plies,
                    count_plies: times.count_plies,
                    peak_list_keys: times.peak_list_keys,
                    wall: times.earlier_wall + clock.elapsed(),
                },
                values: arrays
                    .values
                    .iter()
                    .map(|[a, b]| [&a[..], &b[..]])
                    .collect(),
                finals: arrays
                    .finals
                    .iter()
                    .map(|[a, b]| [&a[..], &b[..]])
                    .collect(),
                overflow: overflow
                    .iter()
                    .map(|table| {
                        table
                            .iter()
                            .map(|c| (c.index, c.remaining.load(Relaxed)))
                            .collect()
                    })
                    .collect(),
                lists: snapshot_lists(&frontier, &exits, ply),
                log: match &log {
                    Some(log) => log,
                    None => &NoLog,
                },
                release: &release,
                release_list: &release_list,
            };
            keeper.save(&snapshot).map_err(checkpoint_error)?;
            lap.lap(&mut times.steps, Step::Checkpoint);
        }
    }

    // Positions whose counter never reached zero are draws.
    for batch in &batches {
        let batch_start = BatchStart::now();
        batch.par_iter().for_each(|&s| {
            clocks.time(s, || {
                for side in Side::BOTH {
                    if roles.counted[side.index()] {
                        finish_section(*section(s, side), lens[s]);
                    }
                }
            })
        });
        let mut touched = vec![false; n];
        for &s in batch {
            touched[s] = true;
        }
        after_batch(&touched);
        batch_start.charge(&mut times.slices, batch, &lens);
    }
    lap.lap(&mut times.steps, Step::Draws);
    let solved = match &log {
        None => {
            drop((values, final_bits));
            stage
                .slices
                .iter()
                .zip(arrays.values)
                .map(|(&slice, values)| SolvedSlice { slice, values })
                .collect()
        }
        Some(log) => {
            let build = Instant::now();
            times.value_log_bytes = log.bytes();
            times.value_log_keys = log.keys();
            // The counters are done with: their memory goes to the tables being built (one
            // slice per thread, two bytes a slot); and the final bits are dropped from memory
            // but for the slices being built (out of core they may be file-backed).
            drop(values);
            drop(std::mem::take(&mut arrays.values));
            let release = |s: usize| {
                for bits in &arrays.finals[s] {
                    bits.release();
                }
            };
            // The window's file-backed pages kept resident for the plies are no use now.
            (0..n).for_each(release);
            let solved = build_from_log(
                game,
                stage,
                &lens,
                &final_bits,
                log,
                space,
                &clocks,
                sink,
                &release,
            )
            .map_err(|e| match e {
                Built::Scratch(e) => scratch_error(e),
                Built::Sink(what) => KernelError::Tables {
                    stage: stage.name.clone(),
                    what,
                },
            })?;
            times.build = build.elapsed();
            solved
        }
    };
    lap.lap(&mut times.steps, Step::Build);
    for (s, cost) in times.slices.iter_mut().enumerate() {
        cost.cpu = clocks.total(s);
    }
    Ok((solved, times))
}

/// Takes the positions of `resolved` (a ply's new frontier) off the open counts of their slots.
fn close(open: &mut [[u64; 2]], resolved: &Frontier) {
    for (s, counts) in open.iter_mut().enumerate() {
        for side in Side::BOTH {
            counts[side.index()] -= resolved.len_where(|sec| sec == section_of(s as u32, side));
        }
    }
}

/// The positions among the first `len` of a section whose final bit is clear.
fn open_in(bits: &[AtomicU64], len: u64) -> u64 {
    let clear: u64 = bits
        .iter()
        .map(|w| u64::from((!w.load(Relaxed)).count_ones()))
        .sum();
    // The last word's bits past `len` are never set.
    clear - (bits.len() as u64 * 64 - len)
}

/// The non-empty lists a checkpoint after ply `ply - 1` holds (all sealed): the frontier the
/// next ply expands and the exits scheduled for plies from `ply` on.
fn snapshot_lists<'a>(
    frontier: &'a Frontier,
    exits: &'a [Frontier],
    ply: u32,
) -> Vec<(ListId, Vec<KeyChunk<'a>>)> {
    let pieces = |list: &'a Frontier, section: usize| -> Vec<KeyChunk<'a>> {
        list.chunks(&[section])
            .into_iter()
            .map(|(_, c)| c)
            .collect()
    };
    let mut lists = Vec::new();
    for section in 0..frontier.sections() {
        let keys = pieces(frontier, section);
        if !keys.is_empty() {
            let id = ListId::Frontier {
                section: section as u32,
            };
            lists.push((id, keys));
        }
    }
    for (at, list) in exits.iter().enumerate().skip(ply as usize) {
        for section in 0..list.sections() {
            let keys = pieces(list, section);
            if !keys.is_empty() {
                let id = ListId::Exit {
                    ply: at as u32,
                    section: section as u32,
                };
                lists.push((id, keys));
            }
        }
    }
    lists
}

/// The lists of a checkpoint being restored, as they are read: each list goes into the
/// kernel's frontier or its exits by ply (out of core: spilled at once); ids that fit no list
/// are kept to be reported once the checkpoint's ply is known.
struct RestoredLists {
    frontier: Frontier,
    exits: Vec<Frontier>,
    ids: Vec<ListId>,
    misfits: Vec<ListId>,
}

impl RestoredLists {
    fn new(lists: usize, space: &Workspace) -> RestoredLists {
        RestoredLists {
            frontier: Frontier::new(lists, space),
            exits: (0..BUCKETS).map(|_| Frontier::new(lists, space)).collect(),
            ids: Vec::new(),
            misfits: Vec::new(),
        }
    }

    /// Takes one list of the checkpoint.
    fn take(&mut self, id: ListId, keys: Vec<u64>) {
        let lists = self.frontier.sections();
        match id {
            ListId::Frontier { section } if (section as usize) < lists => {
                self.frontier.push(section as usize, keys)
            }
            ListId::Exit { ply, section }
                if (section as usize) < lists && (ply as usize) < BUCKETS =>
            {
                self.exits[ply as usize].push(section as usize, keys)
            }
            _ => self.misfits.push(id),
        }
        self.ids.push(id);
    }
}

/// The kernel's state from a restored checkpoint and its lists, checked against the stage.
struct ResumedState {
    ply: u32,
    open: [u64; 2],
    times: CarriedTimes,
    frontier: Frontier,
    exits: Vec<Frontier>,
    overflow: Vec<Vec<OverflowCounter>>,
}

/// Turns a restored checkpoint into the kernel's lists and tables; fails (naming the problem)
/// on one that cannot be a state of `shape`.
fn restored_state(
    restored: RestoredPly,
    lists_read: RestoredLists,
    shape: &StageShape,
) -> Result<ResumedState, String> {
    let lists = 2 * shape.lens.len();
    let ply = restored.ply;
    if ply == 0 || ply as usize >= BUCKETS {
        return Err(format!("ply {ply} is out of range"));
    }
    if restored.overflow.len() != lists {
        return Err(format!(
            "{} overflow tables for {lists} sections",
            restored.overflow.len()
        ));
    }
    let stale = |id: &ListId| matches!(id, ListId::Exit { ply: at, .. } if *at < ply);
    if let Some(other) = lists_read
        .misfits
        .first()
        .or(lists_read.ids.iter().find(|id| stale(id)))
    {
        return Err(format!(
            "list {other:?} does not fit the stage at ply {ply}"
        ));
    }
    Ok(ResumedState {
        ply,
        open: restored.open,
        times: restored.times,
        frontier: lists_read.frontier,
        exits: lists_read.exits,
        overflow: restored.overflow.into_iter().map(overflow_table).collect(),
    })
}

/// A pull ply over the sections of `side` in the slots of `batch`: every position whose final
/// bit is clear (canonical and not yet final) is offered to `resolves(slot, key, index, out)`;
/// those it resolves get their bit set and are added to `sink`. Returns the slots touched.
///
/// The open positions are found in the bitmap rather than kept in a list (which would cost 16
/// bytes per open position — most of a large stage's memory, since draws stay open to the
/// end). Fully final bitmap words are skipped; within a word, keys are stepped from the first
/// clear bit to the last, so dense open runs cost one key step each and sparse ones one unrank
/// each.
#[allow(clippy::too_many_arguments)]
fn pull_ply<G: Game>(
    game: &G,
    stage: &Stage,
    side: Side,
    batch: &[usize],
    lens: &[u64],
    final_bits: &[[&[AtomicU64]; 2]],
    sink: &Sink,
    clocks: &SlotClocks,
    resolves: impl Fn(u32, u64, u64, &mut SlotLists) -> bool + Sync,
) -> Vec<bool> {
    const WORDS: usize = 1 << 10;
    let n = lens.len();
    let tasks: Vec<(usize, usize)> = batch
        .iter()
        .flat_map(|&s| (0..final_bits[s][side.index()].len().div_ceil(WORDS)).map(move |c| (s, c)))
        .collect();
    // One task per rayon job. Left to itself, rayon cuts an indexed iterator into a few
    // ranges per thread and splits a range further only when a thread steals it: a thread
    // that finishes early finds nothing to steal while the other walks its whole range. Late
    // in a stage the open positions cluster in a few ranges, and one thread pulled alone for
    // seconds (profiled: BOARD33 `browns=10` out of core, a claim ply near the stage's end).
    tasks
        .par_iter()
        .with_max_len(1)
        .map(|&(s, c)| {
            clocks.time(s, || {
                let bits = final_bits[s][side.index()];
                let mut out = SlotLists::new(2 * n, n);
                out.touch(s as u32);
                let slice = stage.slices[s];
                let first = c * WORDS;
                let words = &bits[first..((c + 1) * WORDS).min(bits.len())];
                // The open positions of the words (none past the slice's end), walked by the
                // game from index to key; this task alone sets their final bits.
                let len = lens[s];
                let open: Vec<u64> = words
                    .iter()
                    .enumerate()
                    .map(|(w, word)| {
                        let base = ((first + w) * 64) as u64;
                        let inside = if base + 64 <= len {
                            u64::MAX
                        } else {
                            (1u64 << len.saturating_sub(base)) - 1
                        };
                        !word.load(Relaxed) & inside
                    })
                    .collect();
                let mut found = Vec::new();
                game.for_each_marked_key(slice, (first * 64) as u64, &open, |index, key| {
                    if resolves(s as u32, key, index, &mut out) {
                        let w = (index / 64) as usize - first;
                        words[w].fetch_or(1u64 << (index % 64), Relaxed);
                        found.push(key);
                    }
                });
                out.keys[section_of(s as u32, side)] = found;
                let touched = std::mem::take(&mut out.touched);
                sink.absorb(out);
                touched
            })
        })
        .reduce(|| vec![false; n], touched_union)
}

/// The bitmaps of the frontier's positions (all of value `ply`) in the sections a pull of the
/// slots of `batch` may read, by section list index (`None` elsewhere): on compact arrays they
/// answer "did this successor get the ply's value?". A pulled side's successors have the other
/// side to move, in the same slot when claims stay in their slice, else in any slot.
fn frontier_bitmaps<G: Game>(
    game: &G,
    stage: &Stage,
    frontier: &Frontier,
    batch: &[usize],
    pull: &[[bool; 2]],
    lens: &[u64],
) -> Vec<Option<Vec<u64>>> {
    let n = lens.len();
    let mut wanted = vec![false; 2 * n];
    for &s in batch {
        for side in Side::BOTH {
            if !pull[s][side.index()] {
                continue;
            }
            if game.claims_stay_in_slice() {
                wanted[section_of(s as u32, side.other())] = true;
            } else {
                for t in 0..n {
                    wanted[section_of(t as u32, side.other())] = true;
                }
            }
        }
    }
    let marked = (0..2 * n)
        .into_par_iter()
        .with_max_len(1) // one section per rayon job (see `pull_ply`)
        .map(|sec| {
            if !wanted[sec] {
                return None;
            }
            let (slot, _) = slot_side(sec);
            let slice = stage.slices[slot];
            let mut bits = vec![0u64; lens[slot].div_ceil(64) as usize];
            let mut buffer = Vec::new();
            for (_, chunk) in frontier.chunks(&[sec]) {
                for &key in chunk.keys(&mut buffer) {
                    let i = game.index(slice, key) as usize;
                    bits[i / 64] |= 1 << (i % 64);
                }
            }
            Some(bits)
        })
        .collect();
    frontier.release();
    marked
}

/// Why the value tables could not be built from the log.
enum Built {
    Scratch(ScratchError),
    Sink(String),
}

impl From<ScratchError> for Built {
    fn from(e: ScratchError) -> Built {
        Built::Scratch(e)
    }
}

/// The value tables of a stage solved on compact arrays: per slot and side, every position
/// whose final bit is clear is a draw, every final one is non-canonical unless the value log
/// holds it with its value (the log holds exactly the positions the plies resolved). With a
/// `sink`, each slice goes to it as soon as it is built (in anonymous memory, one slice per
/// thread) and none is returned; else out of core the tables are file-backed scratch arrays,
/// their pages dropped once built.
#[allow(clippy::too_many_arguments)]
fn build_from_log<G: Game>(
    game: &G,
    stage: &Stage,
    lens: &[u64],
    final_bits: &[[&[AtomicU64]; 2]],
    log: &ValueLog,
    space: &Workspace,
    clocks: &SlotClocks,
    sink: Option<SliceSink>,
    release: &(dyn Fn(usize) + Sync),
) -> Result<Vec<SolvedSlice>, Built> {
    // One slice: its two sides filled from the final bits, then every logged block of its two
    // sections replayed, each step in parallel pieces (the CPU time of each piece charged to
    // the slice where it runs); then handed over (or kept).
    let one = |s: usize, slice: SliceId| -> Result<Option<SolvedSlice>, Built> {
        let n = lens[s] as usize;
        let table = || -> Result<ByteArray, ScratchError> {
            Ok(match space.scratch().filter(|_| sink.is_none()) {
                Some(dir) => ByteArray::file_backed(dir, n)?,
                None => ByteArray::zeroed(n),
            })
        };
        let mut values = [table()?, table()?];
        for side in Side::BOTH {
            let bits = final_bits[s][side.index()];
            values[side.index()]
                .par_chunks_mut(FILL_PIECE)
                .enumerate()
                .for_each(|(p, piece)| {
                    clocks.time(s, || {
                        let words = &bits[p * (FILL_PIECE / 64)..];
                        for (chunk, word) in piece.chunks_mut(64).zip(words) {
                            let word = word.load(Relaxed);
                            for (b, byte) in chunk.iter_mut().enumerate() {
                                *byte = if word >> b & 1 == 1 {
                                    Value::NON_CANONICAL.0
                                } else {
                                    Value::DRAW.0
                                };
                            }
                        }
                    })
                });
        }
        {
            let targets = [values[0].atomics(), values[1].atomics()];
            let sections = Side::BOTH.map(|side| section_of(s as u32, side));
            log.replay(&sections, |i, keys, value| {
                clocks.time(s, || {
                    game.for_each_index(slice, keys, |index| {
                        targets[i][index as usize].store(value, Relaxed);
                    })
                })
            })?;
        }
        for side in &values {
            side.release();
        }
        let solved = SolvedSlice { slice, values };
        release(s);
        match sink {
            // Charged with the share of the encoding this thread does (it too runs in pieces).
            Some(sink) => clocks
                .time(s, || sink(s, solved))
                .map(|()| None)
                .map_err(Built::Sink),
            None => Ok(Some(solved)),
        }
    };
    // Handed over, the slices go one at a time (each in parallel pieces): a slice's values are
    // the only memory the build adds, within what the window left free. Kept, they are built
    // in parallel (in scratch files out of core).
    let solved: Vec<Option<SolvedSlice>> = if sink.is_some() {
        stage
            .slices
            .iter()
            .enumerate()
            .map(|(s, &slice)| one(s, slice))
            .collect::<Result<_, Built>>()?
    } else {
        stage
            .slices
            .par_iter()
            .enumerate()
            .with_max_len(1)
            .map(|(s, &slice)| one(s, slice))
            .collect::<Result<_, Built>>()?
    };
    Ok(solved.into_iter().flatten().collect())
}
