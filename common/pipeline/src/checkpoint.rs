//! Checkpoints inside a stage, kept in the job directory: how a long stage survives being
//! killed with at most one checkpoint interval of work lost.
//!
//! The stage kernel hands its state at a ply boundary ([`retro_engine::checkpoint`]); this
//! keeper writes it under `<job>/checkpoints/<stage>/`:
//!
//! * `a<A>-ply-<P>/slot-<s>.table`: the slot's value bytes and final bits, both sides, as a
//!   table file of checksummed zstd blocks (the format of the result tables);
//! * `a<A>-ply-<P>/list-<i>.table`: each non-empty list (a frontier or scheduled exits of one
//!   section), keys sorted and delta-coded (narrowed first where the list's keys share one
//!   narrowing: then the blocks the kernel spilled coded are copied as they are, not decoded
//!   and coded again); scheduled exits do not change until their ply, so
//!   a list the checkpoint before holds already is a hard link to its file (most of a large
//!   stage's keys are scheduled exits); `overflow.table` the large counters;
//! * `a<A>-ply-<P>/state.json`: the ply, the open counts, the times and which list is which, as
//!   a checksummed record;
//! * `CURRENT`: the checksummed name of the complete checkpoint to resume from.
//!
//! `A` is the attempt of the task that wrote it (0 for the in-process driver), `P` the next ply.
//! A checkpoint is written into a directory of its own, every file synced, and only then named
//! in `CURRENT` (an atomic rename): a kill at any moment leaves either the old checkpoint or the
//! new one in force, never a mix. Afterwards the writer removes its own older checkpoints and
//! those of earlier attempts — never a later attempt's, so that a worker that lost its task but
//! still runs cannot delete the checkpoints of the one that took it over. Any complete
//! checkpoint is a correct state, whoever wrote it. Reading verifies every block; a damaged
//! checkpoint is reported by file name and the stage starts afresh.

use crate::log_file::{read_log_file, write_log_file};
use crate::steps::decode_keys;
use rayon::prelude::*;
use retro_engine::checkpoint::{
    sorted_keys, CarriedTimes, Checkpoints, EncodedKeys, KeyChunk, ListId, Narrowing, PlySnapshot,
    RestoreInto, RestoredPly, StageShape,
};
use retro_engine::largest_first::largest_first;
use retro_store::{checked_json, write_atomic, SliceTable, TableWriter};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tracing::{info, warn};

/// The directory of a job's checkpoints.
pub const CHECKPOINTS: &str = "checkpoints";

/// zstd level of checkpoint files: fast, since a checkpoint stops the stage while it is written.
const LEVEL: i32 = 1;

/// The section name of a list file's keys: sorted, as varints of their differences
/// ([`crate::steps::encode_keys`]).
const SORTED_KEYS: &str = "sorted-keys";

/// The section names of a list file whose keys share one narrowing (spilled Sixteen Musashi
/// lists always do, [`Narrowing`]): the narrowing's byte ([`Narrowing::gap_byte`]), then the
/// narrow keys sorted, as varints of their differences ([`EncodedKeys`]).
const NARROWING: &str = "narrowing";
const NARROW_SORTED_KEYS: &str = "narrow-sorted-keys";

/// What `state.json` records of a checkpoint.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct SavedState {
    stage: String,
    lens: Vec<u64>,
    ply: u32,
    open: [u64; 2],
    init_ms: u64,
    claim_plies_ms: u64,
    count_plies_ms: u64,
    peak_list_keys: u64,
    /// The stage's wall time up to this checkpoint, over all its sittings ([`CarriedTimes::wall`];
    /// absent in checkpoints written before it was recorded: 0).
    #[serde(default)]
    wall_ms: u64,
    /// `lists[i]`: which list `list-<i>.table` holds.
    lists: Vec<SavedList>,
    /// Whether the stage runs on compact arrays (absent in checkpoints written before they
    /// existed: value bytes).
    #[serde(default)]
    compact: bool,
    /// On compact arrays, the value log's files in order, with their numbers of blocks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    logs: Vec<SavedLog>,
}

/// One value-log file of a checkpoint ([`crate::log_file`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
struct SavedLog {
    /// Its name in the checkpoint's directory.
    file: String,
    /// The blocks it holds.
    blocks: u64,
}

/// A [`ListId`] as `state.json` records it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
struct SavedList {
    /// Exits scheduled for this ply; `None`: the frontier.
    exit_ply: Option<u32>,
    section: u32,
    /// How many keys it holds (absent in checkpoints written before this was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    keys: Option<u64>,
}

impl From<ListId> for SavedList {
    fn from(id: ListId) -> SavedList {
        match id {
            ListId::Frontier { section } => SavedList {
                exit_ply: None,
                section,
                keys: None,
            },
            ListId::Exit { ply, section } => SavedList {
                exit_ply: Some(ply),
                section,
                keys: None,
            },
        }
    }
}

impl From<SavedList> for ListId {
    fn from(saved: SavedList) -> ListId {
        match saved.exit_ply {
            None => ListId::Frontier {
                section: saved.section,
            },
            Some(ply) => ListId::Exit {
                ply,
                section: saved.section,
            },
        }
    }
}

/// What `CURRENT` records: the directory of the checkpoint in force.
#[derive(Debug, Serialize, Deserialize)]
struct Current {
    dir: String,
}

/// The checkpoints of one stage of a job, taken every `every` of solving, and once early: at
/// the first ply after an initial sweep that took a quarter of `every` or more.
///
/// Why early: the sweep writes the stage's scheduled exits, which no ply changes until their
/// own and which are most of a large stage's list keys (5e9 of BOARD33's `browns=17`); every
/// later checkpoint of the stage links the first one's copy of them. Out of core they are in
/// scratch files, and the first checkpoint reads them back: right after the sweep much of them
/// is still in the page cache, ten minutes later the plies' own pages have pushed them out and
/// the checkpoint waits on the disk (BOARD33 `browns=13`: 3.3e9 keys saved in 21 s at ply 2,
/// against 1.7e9 keys in 57 s at ply 26). A sweep of a quarter of the interval marks a stage
/// that runs past the interval and is checkpointed anyway (the sweep is a fifth to a quarter
/// of a stage); a shorter stage is not made to save one.
#[derive(Debug)]
pub struct StageCheckpoints {
    dir: PathBuf,
    every: Duration,
    attempt: u64,
    last: Mutex<Instant>,
    /// Whether the next ply boundary is due regardless of the clock (set by a long sweep).
    early: AtomicBool,
}

impl StageCheckpoints {
    /// The checkpoints of the stage named `stage` of the job in `job_dir`, written by attempt
    /// `attempt` of its task, one due every `every` (zero: after every ply).
    pub fn new(job_dir: &Path, stage: &str, attempt: u64, every: Duration) -> StageCheckpoints {
        StageCheckpoints {
            dir: job_dir.join(CHECKPOINTS).join(file_safe(stage)),
            every,
            attempt,
            last: Mutex::new(Instant::now()),
            early: AtomicBool::new(false),
        }
    }

    /// The directory of this stage's checkpoints.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Removes the stage's checkpoints: called once its tables are committed. The job's
    /// checkpoint directory goes too once no stage has any. A checkpoint that cannot be
    /// removed is only in the way of disk space: a warning names it, and the solve goes on.
    pub fn remove(&self) {
        match std::fs::remove_dir_all(&self.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                warn!(dir = %self.dir.display(), error = %e, "cannot remove checkpoints");
                return;
            }
            _ => {}
        }
        if let Some(parent) = self.dir.parent() {
            // Fails while another stage keeps checkpoints there: then it stays.
            let _ = std::fs::remove_dir(parent);
        }
    }

    /// The fixed lists ([`ListId::fixed`]) of the checkpoint in force, if it is one of the
    /// stage `shape` other than `name`: each with its file and its number of keys, to be linked
    /// into the next checkpoint instead of written again. Anything unreadable gives none.
    fn fixed_lists(&self, shape: &StageShape, name: &str) -> HashMap<ListId, (PathBuf, u64)> {
        let Some((from, state)) = self.in_force(shape, name) else {
            return HashMap::new();
        };
        state
            .lists
            .iter()
            .enumerate()
            .filter_map(|(i, saved)| {
                let id = ListId::from(*saved);
                let keys = saved.keys.filter(|_| id.fixed())?;
                Some((id, (from.join(format!("list-{i}.table")), keys)))
            })
            .collect()
    }

    /// The directory and state of the checkpoint in force, if it is one of the stage `shape`
    /// other than `name` (anything unreadable gives none).
    fn in_force(&self, shape: &StageShape, name: &str) -> Option<(PathBuf, SavedState)> {
        let current: Option<Current> =
            checked_json::load(&self.dir.join("CURRENT"), "current", "checkpoint")
                .ok()
                .flatten();
        let current = current.filter(|c| c.dir != name)?;
        let from = self.dir.join(&current.dir);
        let state: Option<SavedState> =
            checked_json::load(&from.join("state.json"), "checkpoint", "checkpoint")
                .ok()
                .flatten();
        let state = state.filter(|s| fits(s, shape))?;
        Some((from, state))
    }

    /// The value-log files of the checkpoint in force (of the stage `shape`, other than
    /// `name`), each with its path: a new checkpoint links them and writes only the blocks
    /// logged since.
    fn earlier_logs(&self, shape: &StageShape, name: &str) -> Vec<(PathBuf, SavedLog)> {
        let Some((from, state)) = self.in_force(shape, name) else {
            return Vec::new();
        };
        state
            .logs
            .into_iter()
            .map(|log| (from.join(&log.file), log))
            .collect()
    }

    /// Writes the snapshot's value log into `into`: the files of `earlier` linked while they
    /// hold blocks the log still begins with, then a new file of the blocks logged since.
    /// Returns the files in order and the bytes written.
    fn save_log(
        &self,
        snapshot: &PlySnapshot,
        into: &Path,
        earlier: &[(PathBuf, SavedLog)],
    ) -> Result<(Vec<SavedLog>, u64), String> {
        let total = snapshot.log.blocks() as u64;
        let mut logs = Vec::new();
        let mut linked = 0;
        for (path, log) in earlier {
            if linked + log.blocks > total
                || std::fs::hard_link(path, into.join(&log.file)).is_err()
            {
                break;
            }
            linked += log.blocks;
            logs.push(log.clone());
        }
        if linked == total {
            return Ok((logs, 0));
        }
        let file = format!("log-{linked}.bin");
        let blocks = (linked as usize..total as usize).map(|i| snapshot.log.block(i));
        let bytes = write_log_file(&into.join(&file), blocks)?;
        logs.push(SavedLog {
            file,
            blocks: total - linked,
        });
        Ok((logs, bytes))
    }

    /// Writes the checkpoint's files into `into`, linking the fixed lists of `fixed` that hold
    /// as many keys as before; returns its state, how long the arrays took (the rest of the
    /// time is the lists') and how many lists were linked.
    fn save_files(
        &self,
        snapshot: &PlySnapshot,
        into: &Path,
        fixed: &HashMap<ListId, (PathBuf, u64)>,
        earlier: &[(PathBuf, SavedLog)],
    ) -> Result<(SavedState, Duration, usize), String> {
        let clock = Instant::now();
        std::fs::create_dir_all(into).map_err(|e| io_error("create", into, e))?;
        let side_names = [
            "values.first",
            "values.second",
            "finals.first",
            "finals.second",
        ];
        // Slots in parallel (the stage's thread pool): compressing is most of a checkpoint.
        (0..snapshot.values.len())
            .into_par_iter()
            .try_for_each(|slot| {
                let [v0, v1] = snapshot.values[slot];
                let [f0, f1] = snapshot.finals[slot];
                let sections: Vec<(&str, &[u8])> =
                    side_names.iter().copied().zip([v0, v1, f0, f1]).collect();
                let label = format!("{} slot {slot}", snapshot.shape.name);
                let bytes = TableWriter::encode(&label, &sections, LEVEL);
                (snapshot.release)(slot);
                write_synced(&into.join(format!("slot-{slot}.table")), &bytes)
            })?;
        let arrays = clock.elapsed();
        // Lists in parallel too, each sorted and delta-coded (the kernel never depends on a
        // list's order): out of core they are most of a checkpoint — BOARD33 browns=13 held
        // about 2e9 keys — and raw 8-byte keys cost zstd ~25 ns each to compress. Most of those
        // keys are scheduled exits, which stay the same until their ply: a list the checkpoint
        // in force holds already, with as many keys, is linked from there (its file synced when
        // written; the directory is synced below).
        let lens: Vec<usize> = snapshot
            .lists
            .iter()
            .map(|(_, pieces)| pieces.iter().map(KeyChunk::len).sum())
            .collect();
        // The largest lists first, one per task: a large list begun last would end the
        // checkpoint on one thread.
        let linked: usize = largest_first(&lens)
            .map(|i| {
                let ((id, pieces), len) = (&snapshot.lists[i], lens[i]);
                let path = into.join(format!("list-{i}.table"));
                let same = fixed.get(id).filter(|(_, keys)| *keys == len as u64);
                if let Some((earlier, _)) = same {
                    if std::fs::hard_link(earlier, &path).is_ok() {
                        return Ok(1);
                    }
                }
                // Scheduled exits are read from their pieces as they are (sorted over
                // disjoint ranges); the rest are gathered and sorted in 4 bytes a key.
                let keys = sorted_keys(pieces);
                // Out of core the pieces are read through the spilled list's map: its pages
                // are dropped once read (the kernel reads them back when it needs them), or a
                // large stage's checkpoint would hold every list's pages in memory at once.
                let reads_pieces = keys.reads_pieces();
                if !reads_pieces {
                    (snapshot.release_list)(*id);
                }
                let encoded = keys.encode();
                drop(keys);
                if reads_pieces {
                    (snapshot.release_list)(*id);
                }
                let gap_byte;
                let sections: Vec<(&str, &[u8])> = match encoded.narrowing {
                    Some(n) => {
                        gap_byte = [n.gap_byte()];
                        vec![(NARROWING, &gap_byte), (NARROW_SORTED_KEYS, &encoded.gaps)]
                    }
                    None => vec![(SORTED_KEYS, &encoded.gaps)],
                };
                let table = TableWriter::encode(&format!("{id:?}"), &sections, LEVEL);
                write_synced(&path, &table).map(|()| 0)
            })
            .try_reduce(|| 0, |a, b| Ok(a + b))?;
        let lists: Vec<SavedList> = snapshot
            .lists
            .iter()
            .zip(&lens)
            .map(|((id, _), &len)| SavedList {
                keys: Some(len as u64),
                ..SavedList::from(*id)
            })
            .collect();
        let mut overflow = Vec::new();
        for table in &snapshot.overflow {
            overflow.extend_from_slice(&(table.len() as u64).to_le_bytes());
            for &(index, remaining) in table {
                overflow.extend_from_slice(&index.to_le_bytes());
                overflow.extend_from_slice(&remaining.to_le_bytes());
            }
        }
        let table = TableWriter::encode("overflow", &[("counters", &overflow)], LEVEL);
        write_synced(&into.join("overflow.table"), &table)?;
        let (logs, _) = self.save_log(snapshot, into, earlier)?;
        let state = SavedState {
            stage: snapshot.shape.name.clone(),
            lens: snapshot.shape.lens.clone(),
            ply: snapshot.ply,
            open: snapshot.open,
            init_ms: snapshot.times.init.as_millis() as u64,
            claim_plies_ms: snapshot.times.claim_plies.as_millis() as u64,
            count_plies_ms: snapshot.times.count_plies.as_millis() as u64,
            peak_list_keys: snapshot.times.peak_list_keys,
            wall_ms: snapshot.times.wall.as_millis() as u64,
            lists,
            compact: snapshot.shape.compact,
            logs,
        };
        checked_json::save(&into.join("state.json"), "checkpoint", &state)
            .map_err(|e| e.to_string())?;
        Ok((state, arrays, linked))
    }

    /// Reads the checkpoint in `from` into `into`; fails naming the damaged file.
    fn restore_files(
        &self,
        from: &Path,
        shape: &StageShape,
        into: &mut RestoreInto,
    ) -> Result<Option<RestoredPly>, String> {
        let state_path = from.join("state.json");
        let state: SavedState = checked_json::load(&state_path, "checkpoint", "checkpoint")
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{} is missing", state_path.display()))?;
        if !fits(&state, shape) {
            warn!(
                checkpoint = %from.display(),
                "a checkpoint of another stage, board or array layout: not used"
            );
            return Ok(None);
        }
        for (slot, (values, finals)) in into.values.iter_mut().zip(&mut into.finals).enumerate() {
            let path = from.join(format!("slot-{slot}.table"));
            let table = SliceTable::open(&path).map_err(|e| e.to_string())?;
            let targets: [&mut [u8]; 4] = {
                let [v0, v1] = values;
                let [f0, f1] = finals;
                [v0, v1, f0, f1]
            };
            for (section, target) in targets.into_iter().enumerate() {
                if table.section_names().len() != 4
                    || table.section_len(section) != target.len() as u64
                {
                    return Err(format!("{}: sections do not fit the stage", path.display()));
                }
                table
                    .read_section_into(section, target)
                    .map_err(|e| e.to_string())?;
            }
        }
        // One list at a time: the kernel spills each before the next is read.
        for (i, &id) in state.lists.iter().enumerate() {
            let path = from.join(format!("list-{i}.table"));
            (into.lists)(ListId::from(id), read_list(&path)?);
        }
        for log in &state.logs {
            read_log_file(&from.join(&log.file), log.blocks, into.log)?;
        }
        let path = from.join("overflow.table");
        let bytes = read_only_section(&path)?;
        let overflow = parse_overflow(&bytes)
            .ok_or_else(|| format!("{}: malformed overflow counters", path.display()))?;
        Ok(Some(RestoredPly {
            ply: state.ply,
            open: state.open,
            times: CarriedTimes {
                init: Duration::from_millis(state.init_ms),
                claim_plies: Duration::from_millis(state.claim_plies_ms),
                count_plies: Duration::from_millis(state.count_plies_ms),
                peak_list_keys: state.peak_list_keys,
                wall: Duration::from_millis(state.wall_ms),
            },
            overflow,
        }))
    }
}

impl Checkpoints for StageCheckpoints {
    fn due(&self) -> bool {
        self.early.swap(false, Ordering::Relaxed)
            || self.last.lock().expect("checkpoint clock").elapsed() >= self.every
    }

    fn swept(&self, took: Duration) {
        if took >= self.every / 4 {
            self.early.store(true, Ordering::Relaxed);
        }
    }

    fn save(&self, snapshot: &PlySnapshot) -> Result<(), String> {
        let clock = Instant::now();
        let name = format!("a{}-ply-{}", self.attempt, snapshot.ply);
        let into = self.dir.join(&name);
        let fixed = self.fixed_lists(snapshot.shape, &name);
        let earlier = self.earlier_logs(snapshot.shape, &name);
        // A directory of that name is a leftover of a save that was cut: start it afresh.
        if into.exists() {
            std::fs::remove_dir_all(&into).map_err(|e| io_error("remove", &into, e))?;
        }
        let (state, arrays, linked) = self.save_files(snapshot, &into, &fixed, &earlier)?;
        // Counted once, by `save_files`, into the state.
        let list_keys: u64 = state.lists.iter().filter_map(|l| l.keys).sum();
        let bytes: u64 = std::fs::read_dir(&into)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0);
        sync_dir(&into)?;
        checked_json::save(
            &self.dir.join("CURRENT"),
            "current",
            &Current { dir: name.clone() },
        )
        .map_err(|e| e.to_string())?;
        // This attempt's older checkpoints and earlier attempts' are superseded.
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for entry in entries.flatten() {
                let file = entry.file_name();
                let file = file.to_string_lossy();
                let older = attempt_of(&file).is_some_and(|a| a <= self.attempt);
                if older && file != name {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        *self.last.lock().expect("checkpoint clock") = Instant::now();
        info!(
            stage = %state.stage,
            ply = state.ply,
            seconds = format!("{:.1}", clock.elapsed().as_secs_f64()),
            arrays_seconds = format!("{:.1}", arrays.as_secs_f64()),
            list_keys,
            linked_lists = linked,
            bytes,
            dir = %into.display(),
            "checkpoint saved"
        );
        Ok(())
    }

    fn restore(
        &self,
        shape: &StageShape,
        into: &mut RestoreInto,
    ) -> Result<Option<RestoredPly>, String> {
        let current_path = self.dir.join("CURRENT");
        let current: Option<Current> = checked_json::load(&current_path, "current", "checkpoint")
            .map_err(|e| e.to_string())?;
        let Some(current) = current else {
            return Ok(None);
        };
        let from = self.dir.join(&current.dir);
        let restored = self.restore_files(&from, shape, into);
        match &restored {
            Ok(Some(r)) => info!(
                stage = %shape.name,
                ply = r.ply,
                dir = %from.display(),
                "resuming the stage from a checkpoint"
            ),
            Ok(None) => {}
            Err(e) => warn!(
                stage = %shape.name,
                error = %e,
                "damaged checkpoint not used: the stage starts afresh"
            ),
        }
        *self.last.lock().expect("checkpoint clock") = Instant::now();
        restored
    }
}

/// Whether a checkpoint's state belongs to the stage `shape`: same stage, slices and array
/// layout.
fn fits(state: &SavedState, shape: &StageShape) -> bool {
    state.stage == shape.name && state.lens == shape.lens && state.compact == shape.compact
}

/// The attempt that wrote the checkpoint directory `name` (`a<A>-ply-<P>`), if it is one.
fn attempt_of(name: &str) -> Option<u64> {
    let (attempt, ply) = name.strip_prefix('a')?.split_once("-ply-")?;
    ply.parse::<u32>().ok()?;
    attempt.parse().ok()
}

/// A stage name as a directory name ("browns=12" stays, anything odd becomes `_`).
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '=' | '-' | '.' => c,
            _ => '_',
        })
        .collect()
}

/// The one section of a one-section table file, checksums verified.
/// The keys of a list file: narrow keys sorted and delta-coded after their narrowing
/// ([`NARROW_SORTED_KEYS`]); keys sorted and delta-coded ([`SORTED_KEYS`]: lists that do not
/// narrow, and every list of checkpoints written before narrow ones); or, in checkpoints written
/// before that, 8-byte little-endian keys (`keys`).
fn read_list(path: &Path) -> Result<Vec<u64>, String> {
    let table = SliceTable::open(path).map_err(|e| e.to_string())?;
    let bytes = table.read_section(0).map_err(|e| e.to_string())?;
    let damaged = |e: &dyn std::fmt::Display| format!("{}: damaged keys: {e}", path.display());
    match table.section_names()[..] {
        [NARROWING, NARROW_SORTED_KEYS] => {
            let narrowing = match bytes[..] {
                [gap] => Narrowing::from_gap_byte(gap),
                _ => None,
            }
            .ok_or_else(|| format!("{}: not a narrowing of keys", path.display()))?;
            let gaps = table.read_section(1).map_err(|e| e.to_string())?;
            EncodedKeys::decode(Some(narrowing), &gaps).map_err(|e| damaged(&e))
        }
        [SORTED_KEYS, ..] => decode_keys(&bytes).map_err(|e| damaged(&e)),
        ["keys", ..] if bytes.len() % 8 == 0 => Ok(bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect()),
        _ => Err(format!("{}: not a list of keys", path.display())),
    }
}

fn read_only_section(path: &Path) -> Result<Vec<u8>, String> {
    let table = SliceTable::open(path).map_err(|e| e.to_string())?;
    table.read_section(0).map_err(|e| e.to_string())
}

/// The overflow tables: per section a count, then `(index u64, remaining u32)` pairs.
fn parse_overflow(mut bytes: &[u8]) -> Option<Vec<Vec<(u64, u32)>>> {
    let mut tables = Vec::new();
    while !bytes.is_empty() {
        let (count, rest) = bytes.split_first_chunk::<8>()?;
        bytes = rest;
        let mut table = Vec::new();
        for _ in 0..u64::from_le_bytes(*count) {
            let (index, rest) = bytes.split_first_chunk::<8>()?;
            let (remaining, rest) = rest.split_first_chunk::<4>()?;
            table.push((u64::from_le_bytes(*index), u32::from_le_bytes(*remaining)));
            bytes = rest;
        }
        tables.push(table);
    }
    Some(tables)
}

fn io_error(op: &str, path: &Path, e: std::io::Error) -> String {
    format!("cannot {op} {}: {e}", path.display())
}

/// Writes `bytes` to `path` (a file of a directory not yet in force) and syncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_atomic(path, bytes).map_err(|e| e.to_string())
}

/// Syncs a directory's entries to disk.
fn sync_dir(dir: &Path) -> Result<(), String> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("sync", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::encode_keys;
    use retro_engine::checkpoint::{LogBlocks, LoggedBlock};

    /// Writes a list file with one section `name` holding `bytes`.
    fn list_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let path = dir.join(format!("{name}.table"));
        let table = TableWriter::encode("list", &[(name, bytes)], LEVEL);
        std::fs::write(&path, table).unwrap();
        path
    }

    #[test]
    fn list_files_read_back_sorted_keys_and_the_older_raw_keys() {
        let dir = tempfile::tempdir().unwrap();
        let keys = vec![3u64, 9, 9, 1 << 40, u64::MAX];
        let sorted = list_file(dir.path(), SORTED_KEYS, &encode_keys(&keys));
        assert_eq!(read_list(&sorted).unwrap(), keys);
        let raw: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()).collect();
        let older = list_file(dir.path(), "keys", &raw);
        assert_eq!(read_list(&older).unwrap(), keys);
        // Anything else is named, not read as keys.
        let other = list_file(dir.path(), "counters", &raw);
        let e = read_list(&other).unwrap_err();
        assert!(e.contains("counters.table: not a list of keys"), "{e}");
        let cut = list_file(dir.path(), SORTED_KEYS, &[0x80]);
        let e = read_list(&cut).unwrap_err();
        assert!(e.contains("damaged keys"), "{e}");
        // Narrow keys after their narrowing: bit 31 taken out, so 1 << 32 is narrow 1 << 31.
        let narrow_file = |gap: &[u8], gaps: &[u8]| {
            let path = dir.path().join("narrow.table");
            let sections = [(NARROWING, gap), (NARROW_SORTED_KEYS, gaps)];
            std::fs::write(&path, TableWriter::encode("list", &sections, LEVEL)).unwrap();
            path
        };
        let narrow = narrow_file(&[31], &encode_keys(&[5, 7, 1 << 31 | 2]));
        assert_eq!(read_list(&narrow).unwrap(), [5, 7, 1 << 32 | 2]);
        let e = read_list(&narrow_file(&[64], &[5])).unwrap_err();
        assert!(e.contains("narrow.table: not a narrowing of keys"), "{e}");
        let e = read_list(&narrow_file(&[31], &encode_keys(&[1 << 32]))).unwrap_err();
        assert!(e.contains("narrow.table: damaged keys"), "{e}");
    }

    #[test]
    fn a_long_sweep_makes_the_next_ply_due_once_a_short_one_does_not() {
        let job = tempfile::tempdir().unwrap();
        let hour = Duration::from_secs(3600);
        let keeper = StageCheckpoints::new(job.path(), "browns=3", 0, hour);
        assert!(!keeper.due(), "the clock has not run an hour");
        keeper.swept(hour / 4 - Duration::from_millis(1));
        assert!(
            !keeper.due(),
            "a sweep under a quarter of the interval changes nothing"
        );
        keeper.swept(hour / 4);
        assert!(keeper.due(), "the first ply after a long sweep is due");
        assert!(!keeper.due(), "once: then the clock decides again");
    }

    /// A checkpoint of `lists` (one slot of ten positions) at `ply` of the stage `browns=3`;
    /// returns the lists whose pages the keeper released (those it read), in order.
    fn save_lists(keeper: &StageCheckpoints, ply: u32, lists: &[(ListId, &[u64])]) -> Vec<ListId> {
        let released = Mutex::new(Vec::new());
        let shape = StageShape {
            name: "browns=3".into(),
            lens: vec![10],
            compact: false,
        };
        let (values, finals) = ([7u8; 10], [0u8; 8]);
        let snapshot = PlySnapshot {
            shape: &shape,
            ply,
            open: [1, 1],
            // The stage's wall so far: a second per ply, read back by `restore_lists`.
            times: CarriedTimes {
                wall: Duration::from_secs(ply.into()),
                ..CarriedTimes::default()
            },
            values: vec![[&values[..], &values[..]]],
            finals: vec![[&finals[..], &finals[..]]],
            overflow: vec![Vec::new(), Vec::new()],
            lists: lists
                .iter()
                .map(|&(id, keys)| (id, vec![KeyChunk::Wide(keys)]))
                .collect(),
            log: &retro_engine::checkpoint::NoLog,
            release: &|_| {},
            release_list: &|id| released.lock().unwrap().push(id),
        };
        keeper.save(&snapshot).unwrap();
        let mut released = released.into_inner().unwrap();
        released.sort();
        released
    }

    /// The lists of the checkpoint in force, and the inode of each list file by list.
    fn restore_lists(keeper: &StageCheckpoints) -> Vec<(ListId, Vec<u64>, u64)> {
        use std::os::unix::fs::MetadataExt;
        let shape = StageShape {
            name: "browns=3".into(),
            lens: vec![10],
            compact: false,
        };
        let (mut values, mut finals) = ([[0u8; 10]; 2], [[0u8; 8]; 2]);
        let mut lists = Vec::new();
        let mut take = |id, keys| lists.push((id, keys));
        let [v0, v1] = &mut values;
        let [f0, f1] = &mut finals;
        let mut into = RestoreInto {
            values: vec![[&mut v0[..], &mut v1[..]]],
            finals: vec![[&mut f0[..], &mut f1[..]]],
            lists: &mut take,
            log: &mut |_| Err("no log expected".into()),
        };
        let restored = keeper.restore(&shape, &mut into).unwrap().unwrap();
        assert_eq!(values, [[7u8; 10]; 2]);
        assert_eq!(
            restored.times.wall,
            Duration::from_secs(restored.ply.into())
        );
        let current: Current = checked_json::load(&keeper.dir.join("CURRENT"), "current", "x")
            .unwrap()
            .unwrap();
        let dir = keeper.dir.join(current.dir);
        assert!(dir.ends_with(format!("a0-ply-{}", restored.ply)));
        lists
            .into_iter()
            .enumerate()
            .map(|(i, (id, keys))| {
                let inode = std::fs::metadata(dir.join(format!("list-{i}.table")))
                    .unwrap()
                    .ino();
                (id, keys, inode)
            })
            .collect()
    }

    #[test]
    fn scheduled_exits_are_linked_from_the_checkpoint_in_force_only_while_unchanged() {
        let job = tempfile::tempdir().unwrap();
        let keeper = StageCheckpoints::new(job.path(), "browns=3", 0, Duration::ZERO);
        let frontier = ListId::Frontier { section: 0 };
        let exits = ListId::Exit { ply: 9, section: 1 };
        let released = save_lists(&keeper, 2, &[(frontier, &[4, 2]), (exits, &[5, 1, 3])]);
        assert_eq!(
            released,
            vec![frontier, exits],
            "both lists read, then released"
        );
        let first = restore_lists(&keeper);
        assert_eq!(first[1].1, vec![1, 3, 5]);
        // The next checkpoint links the exits' file (the same inode: the old checkpoint
        // was removed, the file it shares was not); the frontier's is written anew.
        let released = save_lists(&keeper, 3, &[(frontier, &[4, 2]), (exits, &[5, 1, 3])]);
        assert_eq!(released, vec![frontier], "a linked list is not read");
        let second = restore_lists(&keeper);
        assert_eq!(second[0].1, vec![2, 4]);
        assert_eq!(second[1].1, vec![1, 3, 5]);
        assert_ne!(second[0].2, first[0].2, "the frontier is written again");
        assert_eq!(second[1].2, first[1].2, "the exits are linked");
        // A list that is not the one saved before (another key count) is written.
        save_lists(&keeper, 4, &[(exits, &[5, 1])]);
        let third = restore_lists(&keeper);
        assert_eq!(third[0].1, vec![1, 5]);
        assert_ne!(third[0].2, second[1].2);
        // Nor is anything linked from another stage's checkpoint.
        let other = StageCheckpoints::new(job.path(), "browns=3", 0, Duration::ZERO);
        assert_eq!(
            other.fixed_lists(
                &StageShape {
                    name: "browns=3".into(),
                    lens: vec![11],
                    compact: false,
                },
                "a0-ply-5"
            ),
            HashMap::new()
        );
    }

    /// A value log of the blocks `0..n`, block `i` of section `i % 2` and value `i`.
    struct Blocks(usize);

    impl LogBlocks for Blocks {
        fn blocks(&self) -> usize {
            self.0
        }

        fn block(&self, i: usize) -> Result<LoggedBlock, String> {
            Ok(LoggedBlock {
                section: i as u32 % 2,
                value: i as u8,
                keys: 1,
                bytes: vec![i as u8; 3],
            })
        }
    }

    #[test]
    fn value_log_blocks_are_saved_once_and_linked_into_later_checkpoints() {
        use std::os::unix::fs::MetadataExt;
        let job = tempfile::tempdir().unwrap();
        let keeper = StageCheckpoints::new(job.path(), "browns=3", 0, Duration::ZERO);
        let shape = StageShape {
            name: "browns=3".into(),
            lens: vec![10],
            compact: true,
        };
        // Compact arrays: a nibble per position of one side, none of the other.
        let (counters, finals) = ([3u8; 5], [0u8; 8]);
        let save = |ply, blocks| {
            let snapshot = PlySnapshot {
                shape: &shape,
                ply,
                open: [1, 1],
                times: CarriedTimes::default(),
                values: vec![[&[][..], &counters[..]]],
                finals: vec![[&finals[..], &finals[..]]],
                overflow: vec![Vec::new(), Vec::new()],
                lists: Vec::new(),
                log: &Blocks(blocks),
                release: &|_| {},
                release_list: &|_| {},
            };
            keeper.save(&snapshot).unwrap();
        };
        let restore = |shape: &StageShape| {
            let (mut second, mut f0, mut f1) = ([0u8; 5], [0u8; 8], [0u8; 8]);
            let mut blocks = Vec::new();
            let mut into = RestoreInto {
                values: vec![[&mut [][..], &mut second[..]]],
                finals: vec![[&mut f0[..], &mut f1[..]]],
                lists: &mut |_, _| {},
                log: &mut |b| {
                    blocks.push(b);
                    Ok(())
                },
            };
            let restored = keeper.restore(shape, &mut into).unwrap();
            restored.map(|_| blocks)
        };
        let inode = |ply: u32, file: &str| {
            let path = job.path().join(CHECKPOINTS).join("browns=3");
            let path = path.join(format!("a0-ply-{ply}")).join(file);
            std::fs::metadata(path).unwrap().ino()
        };
        save(2, 2);
        let first = inode(2, "log-0.bin");
        save(4, 5);
        assert_eq!(inode(4, "log-0.bin"), first, "the first blocks are linked");
        let blocks = restore(&shape).unwrap();
        let expected: Vec<LoggedBlock> = (0..5).map(|i| Blocks(5).block(i).unwrap()).collect();
        assert_eq!(blocks, expected);
        // Nothing new: nothing written, the files linked as they are.
        save(6, 5);
        assert_eq!(restore(&shape).unwrap(), expected);
        assert!(!job
            .path()
            .join(CHECKPOINTS)
            .join("browns=3/a0-ply-6/log-5.bin")
            .exists());
        // A stage on value bytes does not take a checkpoint of compact arrays.
        let bytes = StageShape {
            compact: false,
            ..shape.clone()
        };
        assert!(restore(&bytes).is_none());
    }
}
