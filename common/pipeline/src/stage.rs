//! Solving one stage and turning it into slice tables: the unit of work of every driver.

use crate::checkpoint::StageCheckpoints;
use crate::game::{final_slice, JobGame, Solved};
use anyhow::{Context, Result};
use rayon::prelude::*;
use retro_engine::workspace::{batch_reserve, slice_array_bytes};
use retro_engine::{
    ByteArray, FinalValues, PlyReport, Side, SliceId, SliceSink, SolvedSlice, StageTimes, Value,
    Workspace,
};
use retro_store::{BlockCache, Section, SectionReader, SliceRecord, SliceTable, TableWriter};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One section of a finished slice's values, where a later stage reads it from.
pub enum FinalSection {
    /// Decompressed in memory (or kept from the stage that computed it).
    Resident(ByteArray),
    /// Read block by block from its table file through a bounded cache: a stage whose inputs
    /// do not fit in memory ([`Placement::OutOfCore`] with `paged_inputs`).
    Table(SectionReader),
}

impl FinalSection {
    #[inline]
    fn value(&self, index: u64) -> u8 {
        match self {
            FinalSection::Resident(values) => values[index as usize],
            FinalSection::Table(reader) => reader.value(index),
        }
    }
}

/// The final values of one slice of a finished stage that later stages read: the sections
/// ([`Side::index`]) the game reads (see [`JobGame::reads_sections`]), `None` for the others.
pub struct FinalSlice(pub [Option<FinalSection>; 2]);

impl FinalSlice {
    /// Bytes held in memory (a section read from its table holds none of its own: its blocks
    /// are in the stage's bounded cache).
    pub fn bytes(&self) -> u64 {
        self.0
            .iter()
            .flatten()
            .map(|section| match section {
                FinalSection::Resident(values) => values.len() as u64,
                FinalSection::Table(_) => 0,
            })
            .sum()
    }

    /// Drops the resident pages of file-backed sections and of mapped table files.
    pub fn release(&self) {
        for section in self.0.iter().flatten() {
            match section {
                FinalSection::Resident(values) => values.release(),
                FinalSection::Table(reader) => reader.release(),
            }
        }
    }

    /// The first block of a section read from its table that could not be read, if any.
    fn failure(&self) -> Option<String> {
        self.0.iter().flatten().find_map(|section| match section {
            FinalSection::Table(reader) => reader.failure().map(str::to_string),
            FinalSection::Resident(_) => None,
        })
    }
}

/// The final values of finished slices, indexed by slice id: what a stage reads of the stages
/// it depends on. Shared (`Arc`) so that a driver keeps them for later stages.
#[derive(Clone)]
pub struct Finals(pub Vec<Option<Arc<FinalSlice>>>);

impl Finals {
    /// No slice loaded, for a game of `slice_count` slices.
    pub fn empty(slice_count: usize) -> Finals {
        Finals(vec![None; slice_count])
    }

    /// The sections `read` of the table at `path`: decompressed into memory (every block's
    /// checksum is verified on the way), or with `through` read from the file block by block
    /// through that cache (each block verified when first decompressed).
    pub fn read_table(
        path: &Path,
        read: [bool; 2],
        through: Option<&Arc<BlockCache>>,
    ) -> Result<Arc<FinalSlice>> {
        let values = SliceTable::open(path)
            .map_err(anyhow::Error::from)
            .and_then(|table| Finals::values_of(table, read, through))
            .with_context(|| format!("cannot read {}", path.display()))?;
        Ok(Arc::new(values))
    }

    /// The sections `read` of an open table, in memory or (with `through`) read from the file
    /// through that cache of decompressed blocks.
    pub fn values_of(
        table: SliceTable,
        read: [bool; 2],
        through: Option<&Arc<BlockCache>>,
    ) -> Result<FinalSlice> {
        let table = Arc::new(table);
        let mut sections = [None, None];
        for side in Side::BOTH.into_iter().filter(|s| read[s.index()]) {
            sections[side.index()] = Some(match through {
                Some(cache) => {
                    FinalSection::Table(SectionReader::new(table.clone(), side.index(), cache))
                }
                None => {
                    let len = table.section_len(side.index()) as usize;
                    let mut values = ByteArray::zeroed(len);
                    table.read_section_into(side.index(), &mut values)?;
                    FinalSection::Resident(values)
                }
            });
        }
        Ok(FinalSlice(sections))
    }
}

impl FinalValues for Finals {
    #[inline]
    fn value(&self, side: Side, slice: SliceId, index: u64) -> Value {
        let slice = self.0[slice.0 as usize]
            .as_ref()
            .expect("the driver loads every dependency before solving a stage");
        let section = slice.0[side.index()]
            .as_ref()
            .expect("the driver loads every section the game reads");
        Value(section.value(index))
    }

    fn release(&self) {
        for slice in self.0.iter().flatten() {
            slice.release();
        }
    }

    fn failure(&self) -> Option<String> {
        self.0.iter().flatten().find_map(|slice| slice.failure())
    }
}

/// One encoded slice table and its manifest record.
pub struct EncodedSlice {
    /// The record the manifest will hold (file name relative to the job directory).
    pub record: SliceRecord,
    /// The table file's bytes.
    pub bytes: Vec<u8>,
}

/// A solved, encoded and written stage.
pub struct StageOutput {
    /// The manifest records of the slice tables, in the stage's slice order.
    pub tables: Vec<SliceRecord>,
    /// The sections later stages read, for later stages that read this one; empty when the
    /// stage was solved out of core (its arrays are scratch files: later stages read the
    /// tables).
    pub finals: Vec<(SliceId, FinalSlice)>,
    /// Where the kernel's time went, and what each slice cost (its table's bytes included).
    pub times: StageTimes,
    /// Time spent compressing and writing the tables.
    pub encode: Duration,
}

/// Where a driver puts an encoded table (a file of the job directory, a shard in storage).
pub type WriteTable<'a> = &'a (dyn Fn(&EncodedSlice) -> Result<()> + Sync);

/// Solves stage `stage` of `game` (in the current rayon pool) where `placement` says, encodes
/// its tables and hands each to `write` as soon as it is encoded (so that a stage's tables are
/// never all in memory at once). With `checkpoints` the kernel resumes from the stage's last
/// checkpoint, if any, and takes new ones as they fall due; the caller removes them once the
/// stage's tables are committed. Out of core, scratch files go to `scratch` (created if missing;
/// every file in it is unlinked as soon as it is created, so a killed run leaves nothing there).
#[allow(clippy::too_many_arguments)]
pub fn compute_stage(
    game: &dyn JobGame,
    stage: usize,
    finals: &Finals,
    level: i32,
    placement: Placement,
    scratch: &Path,
    write: WriteTable,
    checkpoints: Option<Arc<StageCheckpoints>>,
    mut on_ply: impl FnMut(PlyReport),
) -> Result<StageOutput> {
    let stages = game.stages();
    let space = match placement {
        Placement::InMemory => Workspace::in_memory(),
        Placement::OutOfCore { window, .. } => {
            std::fs::create_dir_all(scratch).with_context(|| {
                format!("cannot create scratch directory {}", scratch.display())
            })?;
            // Compact arrays where the game allows them and no checkpoints are taken
            // (`Workspace::compact_arrays`): a third of the bytes, so more of the stage stays
            // resident.
            Workspace::out_of_core(scratch.to_path_buf(), window).with_compact_arrays()
        }
    };
    let space = match checkpoints {
        Some(keeper) => space.with_checkpoints(keeper),
        None => space,
    };
    let out_of_core = placement != Placement::InMemory;
    let keep = placement.kept_free_bytes();
    release_free_memory(keep);
    // Out of core, slices the kernel solves one at a time (compact arrays: built from the
    // value log at the end) are encoded and written as they come, never kept.
    let sunk: Mutex<Vec<(usize, SliceRecord)>> = Mutex::new(Vec::new());
    let encode_slot = |slot: usize, solved: SolvedSlice| -> std::result::Result<(), String> {
        let record =
            encode_slice(game, stage, &solved, level, write).map_err(|e| format!("{e:#}"))?;
        sunk.lock()
            .expect("table records lock")
            .push((slot, record));
        Ok(())
    };
    let sink: Option<SliceSink> = if out_of_core {
        Some(&encode_slot)
    } else {
        None
    };
    let (solved, mut times) = game.solve_stage(
        &stages[stage],
        finals,
        &space,
        &mut |report| {
            // Out of core the budget is tight: what a ply's lists freed goes back at once.
            if out_of_core {
                release_free_memory(keep);
            }
            on_ply(report)
        },
        sink,
    )?;
    release_free_memory(keep);
    let clock = Instant::now();
    let mut sunk = sunk.into_inner().expect("table records lock");
    let tables = if sunk.is_empty() {
        encode_stage(game, stage, &solved, level, write)?
    } else {
        // Encoded while the kernel built them (its `build` time).
        sunk.sort_by_key(|&(slot, _)| slot);
        sunk.into_iter().map(|(_, record)| record).collect()
    };
    let encode = clock.elapsed();
    // The tables are in the stage's slice order.
    for (cost, table) in times.slices.iter_mut().zip(&tables) {
        cost.written += table.bytes;
    }
    let finals = match placement {
        Placement::InMemory => {
            let read = game.reads_sections();
            solved
                .into_iter()
                .map(|s| (s.slice, final_slice(s.values, read)))
                .collect()
        }
        Placement::OutOfCore { .. } => Vec::new(),
    };
    Ok(StageOutput {
        tables,
        finals,
        times,
        encode,
    })
}

/// Hands the memory the allocator keeps in its free lists back to the operating system, when
/// it holds more than `keep` bytes of it.
///
/// A large stage allocates and frees gigabytes of frontier lists in pieces of a few megabytes;
/// glibc's allocator keeps such freed pieces in its arenas, so without this the next stage would
/// start with gigabytes of resident but unused memory (measured: 5 GB after BOARD31's
/// `browns=12`), and the memory budget would be exceeded.
///
/// A little is kept ([`Placement::kept_free_bytes`]): every page handed back is faulted in and
/// zeroed again when next used, and on the virtual machines measured a fresh page costs
/// microseconds. Trimming after each of BOARD25's stages made 110 thousand of its 180 thousand
/// page faults, and 6% of its CPU time went to the kernel zeroing pages (`clear_page_erms`);
/// see docs/benchmarks.md.
///
/// The same allowance bounds the maps of dropped value arrays kept for the next stage's
/// ([`retro_engine::spare_maps`]).
pub fn release_free_memory(keep: usize) {
    retro_engine::spare_maps::keep_spare_maps(keep);
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallinfo2 only reads the allocator's statistics; malloc_trim only returns free
    // memory of the allocator's own arenas to the system.
    unsafe {
        if keep == 0 || libc::mallinfo2().fordblks > keep {
            libc::malloc_trim(0);
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = keep;
}

/// Encodes the tables of a solved stage (in parallel), hands each to `write`, and returns
/// their manifest records.
pub fn encode_stage(
    game: &dyn JobGame,
    stage: usize,
    solved: &[SolvedSlice],
    level: i32,
    write: WriteTable,
) -> Result<Vec<SliceRecord>> {
    solved
        .par_iter()
        .map(|s| encode_slice(game, stage, s, level, write))
        .collect()
}

/// Encodes the table of one solved slice of stage `stage`, hands it to `write`, and returns
/// its manifest record.
fn encode_slice(
    game: &dyn JobGame,
    stage: usize,
    s: &SolvedSlice,
    level: i32,
    write: WriteTable,
) -> Result<SliceRecord> {
    let name = game.slice_name(s.slice);
    let names = game.section_names();
    let histograms: Vec<BTreeMap<u8, u64>> = [&s.values[0][..], &s.values[1][..]]
        .par_iter()
        .map(|values| histogram(game, values))
        .collect();
    // The side no later stage reads is not stored: readers derive it from the other side.
    let derived = game.derived_side();
    let sections: Vec<(&str, Section)> = Side::BOTH
        .iter()
        .map(|&side| {
            let values = &s.values[side.index()][..];
            let section = if derived == Some(side) {
                Section::Derived {
                    len: values.len() as u64,
                    histogram: histograms[side.index()].clone(),
                }
            } else {
                Section::Stored(values)
            };
            (names[side.index()], section)
        })
        .collect();
    let bytes = TableWriter::encode_sections(&name, &sections, level);
    // Out of core, each slice is read once here: drop its pages afterwards.
    s.values[0].release();
    s.values[1].release();
    let encoded = EncodedSlice {
        record: SliceRecord {
            id: s.slice.0,
            stage,
            name,
            file: game.table_file_name(s.slice),
            positions: s.values[0].len() as u64,
            bytes: bytes.len() as u64,
            checksum: format!("{:016x}", retro_store::checksum(&bytes)),
            histograms,
        },
        bytes,
    };
    write(&encoded)?;
    Ok(encoded.record)
}

/// Canonical positions by stored byte (the solver's non-canonical marker is not a value): the
/// histograms a manifest records for each section of a table.
pub fn histogram(game: &dyn JobGame, values: &[u8]) -> BTreeMap<u8, u64> {
    // In parallel pieces: out of core a slice is encoded alone, and this is one of its passes.
    let counts = values
        .par_chunks(1 << 20)
        .fold(
            || [0u64; 256],
            |mut counts, piece| {
                count_bytes(piece, &mut counts);
                counts
            },
        )
        .reduce(
            || [0u64; 256],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                a
            },
        );
    (0..=255u8)
        .filter(|&v| counts[v as usize] > 0 && game.decode(v) != Solved::NotCanonical)
        .map(|v| (v, counts[v as usize]))
        .collect()
}

/// Adds to `counts[v]` the number of bytes `v` in `piece` (at most 2^32 bytes).
///
/// A values array is mostly long runs of one byte (the non-canonical marker, a common value):
/// with one table each increment would wait for the one before it to be stored (2.5% of
/// BOARD25's samples). Four tables, a byte of each group of four to each, keep four
/// independent chains in flight.
fn count_bytes(piece: &[u8], counts: &mut [u64; 256]) {
    debug_assert!(piece.len() as u64 <= u64::from(u32::MAX));
    let mut tables = [[0u32; 256]; 4];
    let mut groups = piece.chunks_exact(4);
    for group in &mut groups {
        for (table, &v) in tables.iter_mut().zip(group) {
            table[v as usize] += 1;
        }
    }
    for &v in groups.remainder() {
        tables[0][v as usize] += 1;
    }
    for table in &tables {
        for (count, &n) in counts.iter_mut().zip(table) {
            *count += u64::from(n);
        }
    }
}

/// Array slots of a stage, both sides to move: the unit of progress and throughput.
pub fn stage_positions(game: &dyn JobGame, stage: &retro_engine::Stage) -> u64 {
    2 * stage.slices.iter().map(|&s| game.slice_len(s)).sum::<u64>()
}

/// Bytes per array slot per side that solving a stage in memory holds at its peak: one byte of
/// attacker value, one of defender counter-then-value, two bitmaps, the frontiers and the
/// scheduled exits (the lists grow with the brown count). Measured: 5.9 on BOARD31 up to 10
/// browns, about 7.5 on BOARD31's `browns=12` (peak RSS over slots); rounded up.
pub const PEAK_BYTES_PER_SLOT: u64 = 8;

/// Fixed overhead of a process solving a stage (code, thread stacks, buffers).
pub const BASE_BYTES: u64 = 64 << 20;

/// Memory an out-of-core stage uses besides its inputs and its window of slice arrays: write
/// buffers of the spilled lists, tasks' output lists, the pages of a list being read.
pub const OUT_OF_CORE_BYTES: u64 = 96 << 20;

/// An out-of-core stage leaves `1 / HEADROOM_DIVISOR` of its allowance out of its window:
/// what the allocator and short-lived buffers take beyond the estimates above. Measured: with
/// the whole rest as window, BOARD33 up to 10 browns in 1 GiB peaked at 1,124-1,127 MiB.
pub const HEADROOM_DIVISOR: u64 = 10;

/// Bytes of the values of the stages that stage `stage` reads (held in memory): the sections
/// the game reads.
fn input_bytes(game: &dyn JobGame, stage: usize) -> u64 {
    let stages = game.stages();
    let sections = read_section_count(game);
    stages[stage]
        .depends_on
        .iter()
        .map(|&d| stage_positions(game, &stages[d]) / 2 * sections)
        .sum()
}

/// How many sections of a table later stages read (1 for Sixteen Musashi).
fn read_section_count(game: &dyn JobGame) -> u64 {
    game.reads_sections().iter().filter(|&&r| r).count() as u64
}

/// An estimate of the memory solving stage `stage` in memory needs: its arrays and lists, plus
/// the values of the stages it reads.
pub fn stage_memory(game: &dyn JobGame, stage: usize) -> u64 {
    let stages = game.stages();
    let working = game
        .in_memory_bytes(&stages[stage])
        .unwrap_or_else(|| stage_positions(game, &stages[stage]) / 2 * PEAK_BYTES_PER_SLOT);
    working + input_bytes(game, stage) + BASE_BYTES
}

/// An estimate of the memory one step of a stage solved in supersteps needs: the state of
/// its slice of `len` positions with the messages in and out (bounded by four times the
/// arrays), plus, for the first step (`reads_inputs`), the values of the stages it reads.
pub fn step_memory(game: &dyn JobGame, stage: usize, len: u64, reads_inputs: bool) -> u64 {
    let inputs = if reads_inputs {
        input_bytes(game, stage)
    } else {
        0
    };
    4 * slice_array_bytes(len) + inputs + BASE_BYTES
}

/// The least memory stage `stage` can be solved in: in memory if that is smaller, else out of
/// core ([`out_of_core_min_memory`]).
pub fn stage_min_memory(game: &dyn JobGame, stage: usize) -> u64 {
    stage_memory(game, stage).min(out_of_core_min_memory(game, stage))
}

/// The least memory stage `stage` can be solved in out of core: inputs read from their tables
/// and a window of one batch.
pub fn out_of_core_min_memory(game: &dyn JobGame, stage: usize) -> u64 {
    out_of_core_fixed(game, stage, true) + batch_window(game, stage)
}

/// The smallest window of an out-of-core stage: what one batch (a slice and the halves of its
/// neighbours) may touch.
fn batch_window(game: &dyn JobGame, stage: usize) -> u64 {
    batch_reserve(largest_out_of_core_slice_bytes(game, stage))
}

/// Bytes of the arrays of the largest slice of stage `stage` as the kernel lays them out out
/// of core (compact where the game allows: [`JobGame::out_of_core_slice_bytes`]).
pub fn largest_out_of_core_slice_bytes(game: &dyn JobGame, stage: usize) -> u64 {
    game.stages()[stage]
        .slices
        .iter()
        .map(|&s| game.out_of_core_slice_bytes(game.slice_len(s)))
        .max()
        .unwrap_or(0)
}

/// Bytes of all the arrays of stage `stage` as the kernel lays them out out of core.
fn out_of_core_array_bytes(game: &dyn JobGame, stage: usize) -> u64 {
    game.stages()[stage]
        .slices
        .iter()
        .map(|&s| game.out_of_core_slice_bytes(game.slice_len(s)))
        .sum()
}

/// Bytes of decompressed blocks that a stage reading its inputs from their tables keeps in its
/// shared cache ([`input_cache`]). Measured on BOARD33: see docs/out-of-core.md.
pub const INPUT_CACHE_BYTES: u64 = 1 << 30;

/// What the threads of such a stage keep of their own besides (each its recently used blocks,
/// [`SectionReader`]), allowing for up to four threads.
const INPUT_RECENT_BYTES: u64 = 64 << 20;

/// The cache of decompressed blocks through which stage `stage` reads its inputs when it does
/// not hold them ([`Placement::OutOfCore`] with `paged_inputs`): at most
/// [`INPUT_CACHE_BYTES`], less if the inputs are smaller.
pub fn input_cache(game: &dyn JobGame, stage: usize) -> Arc<BlockCache> {
    BlockCache::new(input_bytes(game, stage).min(INPUT_CACHE_BYTES))
}

/// What an out-of-core stage holds besides its window: its inputs (all of them, or with
/// `paged_inputs` its cache of their blocks) and fixed overheads.
fn out_of_core_fixed(game: &dyn JobGame, stage: usize, paged_inputs: bool) -> u64 {
    let all = input_bytes(game, stage);
    // The cache and the threads' recent blocks hold blocks of the inputs: never more than all.
    let inputs = if paged_inputs {
        all.min(INPUT_CACHE_BYTES + INPUT_RECENT_BYTES)
    } else {
        all
    };
    inputs + BASE_BYTES + OUT_OF_CORE_BYTES
}

/// Bytes of the arrays (both sides, with bitmaps) of the largest slice of stage `stage`.
pub fn largest_slice_bytes(game: &dyn JobGame, stage: usize) -> u64 {
    game.stages()[stage]
        .slices
        .iter()
        .map(|&s| slice_array_bytes(game.slice_len(s)))
        .max()
        .unwrap_or(0)
}

/// Where a stage's working data lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// All in memory (fastest).
    InMemory,
    /// Lists on disk, slice arrays paged through a resident window of `window` bytes.
    OutOfCore {
        /// Bytes of slice arrays kept resident.
        window: u64,
        /// Whether the inputs (final values of the stages read) are read block by block from
        /// their table files through a bounded cache ([`input_cache`]), rather than held in
        /// memory.
        paged_inputs: bool,
    },
}

impl Placement {
    /// Free memory the allocator may keep between stages ([`release_free_memory`]): 256 MiB in
    /// memory (BOARD25 then keeps all it frees, for about 3% more memory at its peak); none out
    /// of core, where the budget is tight and what a ply frees goes back at once, as before.
    pub fn kept_free_bytes(self) -> usize {
        match self {
            Placement::InMemory => 256 << 20,
            Placement::OutOfCore { .. } => 0,
        }
    }

    /// Whether the stage reads its inputs from their table files rather than holding them.
    pub fn pages_inputs(self) -> bool {
        matches!(
            self,
            Placement::OutOfCore {
                paged_inputs: true,
                ..
            }
        )
    }
}

/// How a stage runs within a memory allowance: where its data lives, and how much of the
/// allowance it takes (an out-of-core stage takes all of it, so it runs alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagePlan {
    /// Where the data lives.
    pub placement: Placement,
    /// Bytes reserved while the stage runs.
    pub memory: u64,
}

/// The plan for stage `stage` when `usable` bytes may go to it: in memory if it fits (and
/// `force_out_of_core` is false); else out of core with its inputs in memory and the rest of
/// `usable`, less a headroom ([`HEADROOM_DIVISOR`]), as its window; else out of core with paged inputs too; `None` if even that cannot
/// fit. Forced, the stage is planned out of core with paged inputs and the smallest window (one
/// slice), so that everything pages: the configuration the tests use on small boards.
pub fn plan_stage(
    game: &dyn JobGame,
    stage: usize,
    usable: u64,
    force_out_of_core: bool,
) -> Option<StagePlan> {
    let in_memory = stage_memory(game, stage);
    if in_memory <= usable && !force_out_of_core {
        return Some(StagePlan {
            placement: Placement::InMemory,
            memory: in_memory,
        });
    }
    let smallest_window = batch_window(game, stage);
    // Inputs are read only by the initial sweep, the arrays by every ply: inputs are paged
    // when they would leave no room for the smallest window, or when paging them lets every
    // slice's arrays stay resident and holding them would not.
    let headroom = usable / HEADROOM_DIVISOR;
    let resident = out_of_core_array_bytes(game, stage) + smallest_window + headroom;
    let all_resident = |paged: bool| out_of_core_fixed(game, stage, paged) + resident <= usable;
    let paged_inputs = force_out_of_core
        || out_of_core_fixed(game, stage, false) + smallest_window > usable
        || (!all_resident(false) && all_resident(true));
    let fixed = out_of_core_fixed(game, stage, paged_inputs);
    if fixed + smallest_window > usable {
        return None;
    }
    let window = if force_out_of_core {
        smallest_window
    } else {
        (usable - fixed)
            .saturating_sub(headroom)
            .max(smallest_window)
    };
    Some(StagePlan {
        placement: Placement::OutOfCore {
            window,
            paged_inputs,
        },
        memory: usable,
    })
}

/// What a worker with a memory budget of `budget` bytes may spend on one task: three quarters
/// (the last quarter holds its cache of final values).
pub fn task_capacity(budget: u64) -> u64 {
    budget - budget / 4
}

/// `bytes` for messages: "1.5 GiB".
pub fn human_bytes(bytes: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    if bytes as f64 >= GIB {
        format!("{:.1} GiB", bytes as f64 / GIB)
    } else {
        format!("{:.0} MiB", bytes as f64 / MIB)
    }
}

/// The refusal when stage `stage` cannot fit even out of core: `usable` of the `budget` bytes
/// can go to one stage. With `force_out_of_core` (no stage may run in memory) the minimum named
/// is the out-of-core one, else the smaller of the two.
pub fn too_large(
    game: &dyn JobGame,
    stage: usize,
    budget: u64,
    usable: u64,
    force_out_of_core: bool,
) -> String {
    let least = if force_out_of_core {
        out_of_core_min_memory(game, stage)
    } else {
        stage_min_memory(game, stage)
    };
    let share = if usable < budget {
        format!(" ({} of it for one stage)", human_bytes(usable))
    } else {
        String::new()
    };
    format!(
        "{} needs at least {} even out of core (its inputs and one slice) but the memory budget is {}{share}: raise --memory-budget or solve a smaller part of the game",
        game.stages()[stage].name,
        human_bytes(least),
        human_bytes(budget),
    )
}

#[cfg(test)]
mod tests {
    use super::count_bytes;

    #[test]
    fn bytes_counted_in_four_tables_are_counted_once_each() {
        // Runs of one byte (as in a values array) and scattered bytes, a length that is not a
        // multiple of four, counted onto counts already there.
        let mut bytes = vec![7u8; 1001];
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for b in bytes.iter_mut().skip(300) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = (x % 5 * 50) as u8;
        }
        let mut want = [3u64; 256];
        for &b in &bytes {
            want[b as usize] += 1;
        }
        let mut counts = [3u64; 256];
        count_bytes(&bytes, &mut counts);
        assert_eq!(counts, want);
    }
}
