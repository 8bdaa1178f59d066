//! The retrograde kernel: solves one stage by frontier propagation.
//!
//! Plies are processed in increasing value order. Only positions that were resolved in the
//! previous ply are expanded (by un-moving), so each position is touched a constant number of
//! times over the whole stage instead of once per ply.
//!
//! * **Odd ply `v`**: defender-to-move positions of value `v` are final. Every attacker-to-move
//!   predecessor that is still unresolved gets value `v + 1` (the attacker takes the fastest
//!   win, and nothing faster can appear later because plies only grow).
//! * **Even ply `v`**: attacker-to-move positions of value `v` are final. Each defender-to-move
//!   predecessor has a counter of its successor orbits not yet known to be attacker wins; the
//!   counter is decremented, and when it reaches zero the defender has no escape left and the
//!   position's value is `v + 1` (the slowest loss is the last successor to resolve).
//!
//! **Exits to earlier stages.** A defender move may capture into a final stage whose value can
//! exceed every value reached so far in this stage. Such moves are *virtual successors*: at
//! initialisation a defender position with exits counts them as one more successor, and one
//! decrement is scheduled at the ply equal to the largest exit value. A single exit to a
//! defender win (value 0) makes the position a defender win outright. This gives exactly
//! `1 + max` over all successors without ever re-scanning a position.
//!
//! Positions never resolved are defender wins ([`crate::value::UNRESOLVED`]).

use crate::atomic::ByteArray;
use crate::frontier::{Frontier, SlotLists};
use crate::game::{Game, SliceId, Stage};
use crate::meter::{BatchStart, SliceCost, SlotClocks};
use crate::position_rules::{
    claim, decrement, defender_predecessors, defender_start, finish_defenders, DefenderStart,
};
use crate::value::{Value, NON_CANONICAL, VALUE_MAX};
use crate::workspace::{batch_reserve, slice_array_bytes, Residency, Workspace};
use arrayvec::ArrayVec;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

/// Read access to the attacker-to-move values of final, earlier stages.
pub trait FinalValues: Sync {
    /// The attacker-to-move value at `index` of `slice` (a slice of a finished stage).
    fn attacker_value(&self, slice: SliceId, index: u64) -> Value;

    /// Called after each batch of initialisation (the only phase that reads final values): an
    /// implementation whose values are paged from disk drops their resident pages here.
    fn release(&self) {}
}

/// The solved arrays of one slice.
#[derive(Debug, PartialEq, Eq)]
pub struct SolvedSlice {
    /// Which slice.
    pub slice: SliceId,
    /// Values with the attacker to move, one per index.
    pub attacker: ByteArray,
    /// Values with the defender to move, one per index.
    pub defender: ByteArray,
}

/// What happened in one ply, for progress display and logs.
#[derive(Clone, Copy, Debug)]
pub struct PlyReport {
    /// The ply (= the value being finalised).
    pub ply: u32,
    /// How many positions were resolved with this value.
    pub resolved: u64,
    /// How many positions were expanded (un-moved from) in this ply.
    pub expanded: u64,
}

/// Where a stage's time went.
#[derive(Clone, Debug, Default)]
pub struct StageTimes {
    /// The initial sweep over defender-to-move positions.
    pub init: std::time::Duration,
    /// Odd plies: expanding defender-to-move frontiers (attacker un-moves).
    pub attacker_plies: std::time::Duration,
    /// Even plies: expanding attacker-to-move frontiers (defender un-moves, counters).
    pub defender_plies: std::time::Duration,
    /// What each slice (by slot in the stage) cost, all plies together.
    pub slices: Vec<SliceCost>,
}

/// Why a stage could not be solved.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// A value exceeded the one-byte encoding.
    #[error("stage {stage}: a value exceeds the one-byte limit {VALUE_MAX}")]
    ValueOverflow {
        /// The stage's name.
        stage: String,
    },
    /// A scratch file of an out-of-core solve could not be written or mapped.
    #[error("stage {stage}: scratch file: {source}")]
    Scratch {
        /// The stage's name.
        stage: String,
        /// The I/O error.
        source: std::io::Error,
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

/// A position of the stage: the slice's slot in the stage and the key (used where a handful of
/// positions are collected, e.g. one position's successors).
type Entry = (u32, u64);

/// The most defender moves (or un-moves) one position may have.
pub const MAX_MOVES: usize = 64;
/// Indices are swept in chunks of this many slots per parallel task.
const SWEEP_CHUNK: u64 = 1 << 15;
/// One bucket per possible value.
const BUCKETS: usize = 256;

/// A stage's arrays, per slot: attacker values; defender bytes; one bit per attacker slot set
/// once its value is known; one bit per defender slot set once its byte holds a value.
///
/// A defender-to-move byte holds, until the position is resolved, its *counter* (successor
/// orbits not yet known to be attacker wins) and afterwards its value; the final bit says which.
/// One byte serves both because a counter is decremented exactly once per successor orbit, so
/// once it reaches zero (and the value is written) no decrement ever touches the byte again.
struct StageArrays {
    attacker: Vec<ByteArray>,
    defender: Vec<ByteArray>,
    resolved: Vec<ByteArray>,
    defender_final: Vec<ByteArray>,
}

impl StageArrays {
    /// Allocates the arrays: in memory, or out of core with as many slots in memory as leave
    /// room in the window for one batch's working set ([`batch_reserve`]) and the rest
    /// file-backed. Returns the arrays, the file-backed bytes of each slot and how many bytes
    /// of file-backed pages may stay resident between batches.
    fn allocate(lens: &[u64], space: &Workspace) -> std::io::Result<(StageArrays, Vec<u64>, u64)> {
        let mut arrays = StageArrays {
            attacker: Vec::new(),
            defender: Vec::new(),
            resolved: Vec::new(),
            defender_final: Vec::new(),
        };
        let largest = lens
            .iter()
            .map(|&n| slice_array_bytes(n))
            .max()
            .unwrap_or(0);
        let reserve = batch_reserve(largest);
        let mut in_memory_left = space.window().saturating_sub(reserve);
        let mut in_memory = 0;
        let mut file_bytes = Vec::new();
        for &n in lens {
            let bytes = slice_array_bytes(n);
            let scratch = space.scratch().filter(|_| bytes > in_memory_left);
            let alloc = |len: u64| match scratch {
                Some(dir) => ByteArray::file_backed(dir, len as usize),
                None => Ok(ByteArray::zeroed(len as usize)),
            };
            let words = n.div_ceil(64) * 8;
            arrays.attacker.push(alloc(n)?);
            arrays.defender.push(alloc(n)?);
            arrays.resolved.push(alloc(words)?);
            arrays.defender_final.push(alloc(words)?);
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

    /// Drops the resident pages of slot `s`'s arrays (file-backed ones only).
    fn release(&self, s: usize) {
        self.attacker[s].release();
        self.defender[s].release();
        self.resolved[s].release();
        self.defender_final[s].release();
    }
}

/// List chunks expanded between two releases of a spilled list's pages (4M keys, 32 MB).
const GROUP_CHUNKS: usize = 1 << 10;

/// Runs `work(slot, keys)` in parallel on every chunk of `list` in the slots of `batch`, a
/// group of chunks at a time, and returns the union of the slots the calls touched. Out of core
/// the list's pages are dropped after each group, so a long list is never resident at once.
fn expand(
    list: &Frontier,
    batch: &[usize],
    clocks: &SlotClocks,
    work: impl Fn(u32, &[u64]) -> Vec<bool> + Sync,
) -> Vec<bool> {
    let n = clocks.slots();
    let mut touched = vec![false; n];
    for group in list.chunks(batch).chunks(GROUP_CHUNKS) {
        let t = group
            .par_iter()
            .map(|&(s, keys)| clocks.time(s as usize, || work(s, keys)))
            .reduce(|| vec![false; n], touched_union);
        touched = touched_union(touched, t);
        list.release();
    }
    touched
}

/// Merges the `touched` flags of parallel tasks.
fn touched_union(mut a: Vec<bool>, b: Vec<bool>) -> Vec<bool> {
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
    mut on_ply: impl FnMut(PlyReport),
) -> Result<(Vec<SolvedSlice>, StageTimes), KernelError> {
    let clock = Instant::now();
    let mut slot_of = vec![u32::MAX; game.slice_count()];
    for (slot, slice) in stage.slices.iter().enumerate() {
        slot_of[slice.0 as usize] = slot as u32;
    }
    let slot = |slice: SliceId| -> u32 { slot_of[slice.0 as usize] };
    let lens: Vec<u64> = stage.slices.iter().map(|&s| game.slice_len(s)).collect();
    let n = stage.slices.len();
    let mut times = StageTimes {
        slices: vec![SliceCost::default(); n],
        ..StageTimes::default()
    };
    let clocks = SlotClocks::new(n);
    let scratch_error = |e: std::io::Error| KernelError::Scratch {
        stage: stage.name.clone(),
        source: e,
    };
    let (arrays, file_bytes, resident_limit) =
        StageArrays::allocate(&lens, space).map_err(scratch_error)?;
    let mut residency = Residency::new(resident_limit, file_bytes);
    let mut after_batch = |touched: &[bool]| {
        for s in residency.after_batch(touched) {
            arrays.release(s);
        }
    };
    let batches = space.batches(n);
    let attacker: Vec<_> = arrays.attacker.iter().map(ByteArray::atomics).collect();
    let defender: Vec<_> = arrays.defender.iter().map(ByteArray::atomics).collect();
    let resolved: Vec<&[AtomicU64]> = arrays
        .resolved
        .iter()
        .map(ByteArray::atomic_words)
        .collect();
    let defender_final_bit: Vec<&[AtomicU64]> = arrays
        .defender_final
        .iter()
        .map(ByteArray::atomic_words)
        .collect();
    let mark_defender = |s: usize, i: usize| {
        defender_final_bit[s][i / 64].fetch_or(1 << (i % 64), Relaxed);
    };
    let defender_is_final =
        |s: usize, i: usize| defender_final_bit[s][i / 64].load(Relaxed) & (1 << (i % 64)) != 0;
    let contract = |what: String| KernelError::Contract {
        stage: stage.name.clone(),
        what,
    };

    // Defender-to-move positions whose value becomes final at each ply (odd plies), and
    // scheduled exit decrements (even plies), indexed by ply.
    // During initialisation the tasks add to them directly (out of core they go to disk at once).
    let stalemates = Mutex::new(Frontier::new(n, space));
    let scheduled: Vec<Mutex<Frontier>> = (0..BUCKETS)
        .map(|_| Mutex::new(Frontier::new(n, space)))
        .collect();
    // Canonical attacker-to-move positions not yet resolved.
    let mut attacker_unresolved: u64 = 0;

    // Initialisation: one sweep over the defender-to-move positions, a batch of slots at a time.
    for batch in &batches {
        let batch_start = BatchStart::now();
        let tasks: Vec<(u32, u64)> = batch
            .iter()
            .flat_map(|&s| (0..lens[s].div_ceil(SWEEP_CHUNK)).map(move |c| (s as u32, c)))
            .collect();
        let outcomes: Vec<(u64, Option<String>)> = tasks
            .par_iter()
            .map(|&(s, chunk)| {
                clocks.time(s as usize, || {
                    let slice = stage.slices[s as usize];
                    let start = chunk * SWEEP_CHUNK;
                    let end = (start + SWEEP_CHUNK).min(lens[s as usize]);
                    let mut seeds = Seeds::new(s);
                    let mut in_stage: ArrayVec<Entry, MAX_MOVES> = ArrayVec::new();
                    game.for_each_key(slice, start..end, |index, key| {
                        let i = index as usize;
                        if !game.is_canonical(slice, key) {
                            attacker[s as usize][i].store(NON_CANONICAL, Relaxed);
                            defender[s as usize][i].store(NON_CANONICAL, Relaxed);
                            // Marked resolved, so that a late-ply pull never visits it.
                            resolved[s as usize][i / 64].fetch_or(1 << (i % 64), Relaxed);
                            mark_defender(s as usize, i);
                            return;
                        }
                        seeds.canonical += 1;
                        match defender_start(game, &slot_of, finals, slice, key, &mut in_stage) {
                            Err(what) => seeds.error = Some(what),
                            Ok(DefenderStart::Escapes) => mark_defender(s as usize, i),
                            Ok(DefenderStart::Stalemate) => {
                                defender[s as usize][i].store(1, Relaxed);
                                mark_defender(s as usize, i);
                                seeds.stalemates.push(key);
                            }
                            Ok(DefenderStart::Pending { successors, exit }) => {
                                defender[s as usize][i].store(successors, Relaxed);
                                if let Some(m) = exit {
                                    seeds.exit(m, key);
                                }
                            }
                        }
                    });
                    let slot = seeds.slot as usize;
                    stalemates
                        .lock()
                        .expect("frontier lock")
                        .push(slot, seeds.stalemates);
                    for (v, keys) in seeds.exits {
                        scheduled[v as usize]
                            .lock()
                            .expect("frontier lock")
                            .push(slot, keys);
                    }
                    (seeds.canonical, seeds.error)
                })
            })
            .collect();
        for (canonical, error) in outcomes {
            if let Some(what) = error {
                return Err(contract(what));
            }
            attacker_unresolved += canonical;
        }
        let mut touched = vec![false; n];
        for &s in batch {
            touched[s] = true;
        }
        after_batch(&touched);
        finals.release();
        batch_start.charge(&mut times.slices, batch, &lens);
    }
    let mut defender_final: Vec<Frontier> = (0..BUCKETS).map(|_| Frontier::new(n, space)).collect();
    defender_final[1] = stalemates.into_inner().expect("frontier lock");
    let mut exits: Vec<Frontier> = scheduled
        .into_iter()
        .map(|f| f.into_inner().expect("frontier lock"))
        .collect();
    let last_scheduled =
        |buckets: &[Frontier], from: usize| buckets[from..].iter().any(|b| !b.is_empty());

    times.init = clock.elapsed();
    let mut attacker_final = Frontier::new(n, space);
    let mut ply = 1usize;
    loop {
        let attacker_pending = !attacker_final.is_empty();
        if !attacker_pending
            && !last_scheduled(&defender_final, ply)
            && !last_scheduled(&exits, ply)
        {
            break;
        }
        if ply + 1 > usize::from(VALUE_MAX) {
            return Err(KernelError::ValueOverflow {
                stage: stage.name.clone(),
            });
        }
        let next = (ply + 1) as Value;
        let ply_clock = Instant::now();
        let (expanded, produced) = if ply % 2 == 1 {
            // Defender-to-move positions of value `ply` are final; attacker positions with a
            // move to one of them get `ply + 1`. Early on, few defender positions are final:
            // push from each to its attacker predecessors. Late, the frontier can be far larger
            // than the set of attacker positions still unresolved: then pull, checking each
            // unresolved position's successors for one of value `ply` (the same set results).
            let mut frontier = std::mem::replace(&mut defender_final[ply], Frontier::new(n, space));
            frontier.seal().map_err(scratch_error)?;
            let sink = Mutex::new(Frontier::new(n, space));
            for batch in &batches {
                let batch_start = BatchStart::now();
                let touched = if attacker_unresolved < frontier.len() {
                    pull_ply(
                        game,
                        stage,
                        batch,
                        &lens,
                        &resolved,
                        &sink,
                        &clocks,
                        |s, key, i, out| {
                            let mut found = false;
                            game.attacker_moves(stage.slices[s as usize], key, |to, _, ti| {
                                let (t, ti) = (slot(to), ti as usize);
                                out.touch(t);
                                let t = t as usize;
                                found = found
                                    || (defender_is_final(t, ti)
                                        && defender[t][ti].load(Relaxed) == ply as Value);
                            });
                            if found {
                                attacker[s as usize][i as usize].store(next, Relaxed);
                            }
                            found
                        },
                    )
                } else {
                    expand(&frontier, batch, &clocks, |s, chunk| {
                        let mut out = SlotLists::new(n);
                        for &key in chunk {
                            game.attacker_unmoves(
                                stage.slices[s as usize],
                                key,
                                |to, to_key, i| {
                                    let to_slot = slot(to);
                                    out.touch(to_slot);
                                    let (to_slot, i) = (to_slot as usize, i as usize);
                                    // Most targets are already resolved; the bitmap answers
                                    // that from cache, and only a first visit touches the
                                    // value array.
                                    if claim(resolved[to_slot], i) {
                                        attacker[to_slot][i].store(next, Relaxed);
                                        out.push(to_slot as u32, to_key);
                                    }
                                },
                            );
                        }
                        let touched = std::mem::take(&mut out.touched);
                        sink.lock().expect("frontier lock").absorb(out);
                        touched
                    })
                };
                frontier.release();
                after_batch(&touched);
                batch_start.charge(&mut times.slices, batch, &lens);
            }
            attacker_final = sink.into_inner().expect("frontier lock");
            attacker_unresolved -= attacker_final.len();
            (frontier.len(), attacker_final.len())
        } else {
            // Attacker-to-move positions of value `ply`, plus exit decrements scheduled here.
            let mut frontier = std::mem::replace(&mut attacker_final, Frontier::new(n, space));
            let mut exit_list = std::mem::replace(&mut exits[ply], Frontier::new(n, space));
            frontier.seal().map_err(scratch_error)?;
            exit_list.seal().map_err(scratch_error)?;
            let sink = Mutex::new(std::mem::replace(
                &mut defender_final[ply + 1],
                Frontier::new(n, space),
            ));
            let count_down = |s: u32, key: u64, i: u64, out: &mut SlotLists| {
                out.touch(s);
                let s_ = s as usize;
                if decrement(defender[s_], defender_final_bit[s_], i as usize, next) {
                    out.push(s, key);
                }
            };
            for batch in &batches {
                let batch_start = BatchStart::now();
                let from_frontier = expand(&frontier, batch, &clocks, |s, chunk| {
                    let mut out = SlotLists::new(n);
                    let mut preds: ArrayVec<(u32, u64, u64), MAX_MOVES> = ArrayVec::new();
                    for &key in chunk {
                        defender_predecessors(
                            game,
                            &slot_of,
                            stage.slices[s as usize],
                            key,
                            &mut preds,
                        );
                        for &(ps, pkey, pi) in &preds {
                            count_down(ps, pkey, pi, &mut out);
                        }
                    }
                    let touched = std::mem::take(&mut out.touched);
                    sink.lock().expect("frontier lock").absorb(out);
                    touched
                });
                let from_exits = expand(&exit_list, batch, &clocks, |s, chunk| {
                    let mut out = SlotLists::new(n);
                    for &key in chunk {
                        let i = game.index(stage.slices[s as usize], key);
                        count_down(s, key, i, &mut out);
                    }
                    let touched = std::mem::take(&mut out.touched);
                    sink.lock().expect("frontier lock").absorb(out);
                    touched
                });
                frontier.release();
                exit_list.release();
                after_batch(&touched_union(from_frontier, from_exits));
                batch_start.charge(&mut times.slices, batch, &lens);
            }
            defender_final[ply + 1] = sink.into_inner().expect("frontier lock");
            (
                frontier.len() + exit_list.len(),
                defender_final[ply + 1].len(),
            )
        };
        if ply % 2 == 1 {
            times.attacker_plies += ply_clock.elapsed();
        } else {
            times.defender_plies += ply_clock.elapsed();
        }
        on_ply(PlyReport {
            ply: (ply + 1) as u32,
            resolved: produced,
            expanded,
        });
        ply += 1;
    }

    // Defender positions whose counter never reached zero are defender wins.
    for batch in &batches {
        let batch_start = BatchStart::now();
        batch.par_iter().for_each(|&s| {
            clocks.time(s, || {
                finish_defenders(defender[s], defender_final_bit[s], lens[s])
            })
        });
        let mut touched = vec![false; n];
        for &s in batch {
            touched[s] = true;
        }
        after_batch(&touched);
        batch_start.charge(&mut times.slices, batch, &lens);
    }
    drop((attacker, defender, resolved, defender_final_bit));
    for (s, cost) in times.slices.iter_mut().enumerate() {
        cost.cpu = clocks.total(s);
    }
    let StageArrays {
        attacker, defender, ..
    } = arrays;
    let solved = stage
        .slices
        .iter()
        .zip(attacker.into_iter().zip(defender))
        .map(|(&slice, (attacker, defender))| SolvedSlice {
            slice,
            attacker,
            defender,
        })
        .collect();
    Ok((solved, times))
}

/// A pull ply over the slots of `batch`: every attacker-to-move slot whose resolved bit is
/// clear (canonical and not yet resolved) is offered to `resolves(slot, key, index, out)`; those
/// it resolves get their bit set and are added to `sink`. Returns the slots touched.
///
/// The unresolved positions are found in the bitmap rather than kept in a list (which would
/// cost 16 bytes per unresolved position — most of a large stage's memory, since black wins
/// stay unresolved to the end). Fully resolved bitmap words are skipped; within a word, keys
/// are stepped from the first clear bit to the last, so dense unresolved runs cost one key step
/// each and sparse ones one unrank each.
#[allow(clippy::too_many_arguments)]
fn pull_ply<G: Game>(
    game: &G,
    stage: &Stage,
    batch: &[usize],
    lens: &[u64],
    resolved: &[&[AtomicU64]],
    sink: &Mutex<Frontier>,
    clocks: &SlotClocks,
    resolves: impl Fn(u32, u64, u64, &mut SlotLists) -> bool + Sync,
) -> Vec<bool> {
    const WORDS: usize = 1 << 10;
    let n = lens.len();
    let tasks: Vec<(usize, usize)> = batch
        .iter()
        .flat_map(|&s| (0..resolved[s].len().div_ceil(WORDS)).map(move |c| (s, c)))
        .collect();
    tasks
        .par_iter()
        .map(|&(s, c)| {
            clocks.time(s, || {
                let mut out = SlotLists::new(n);
                out.touch(s as u32);
                let slice = stage.slices[s];
                let first = c * WORDS;
                let words = &resolved[s][first..((c + 1) * WORDS).min(resolved[s].len())];
                let mut found = Vec::new();
                for (w, word) in words.iter().enumerate() {
                    let clear = !word.load(Relaxed);
                    if clear == 0 {
                        continue;
                    }
                    let base = ((first + w) * 64) as u64;
                    let start = base + u64::from(clear.trailing_zeros());
                    let end = (base + 64 - u64::from(clear.leading_zeros())).min(lens[s]);
                    game.for_each_key(slice, start..end, |index, key| {
                        let bit = 1u64 << (index % 64);
                        if clear & bit != 0 && resolves(s as u32, key, index, &mut out) {
                            word.fetch_or(bit, Relaxed);
                            found.push(key);
                        }
                    });
                }
                out.keys[s] = found;
                let touched = std::mem::take(&mut out.touched);
                sink.lock().expect("frontier lock").absorb(out);
                touched
            })
        })
        .reduce(|| vec![false; n], touched_union)
}

/// What one initialisation task (one chunk of one slice) found: positions final at ply 1, and
/// exit decrements by ply.
struct Seeds {
    slot: u32,
    canonical: u64,
    stalemates: Vec<u64>,
    /// (ply, keys), few distinct plies per chunk.
    exits: Vec<(Value, Vec<u64>)>,
    error: Option<String>,
}

impl Seeds {
    fn new(slot: u32) -> Seeds {
        Seeds {
            slot,
            canonical: 0,
            stalemates: Vec::new(),
            exits: Vec::new(),
            error: None,
        }
    }

    /// Schedules an exit decrement of `key` at ply `value`.
    fn exit(&mut self, value: Value, key: u64) {
        match self.exits.iter_mut().find(|(v, _)| *v == value) {
            Some((_, keys)) => keys.push(key),
            None => self.exits.push((value, vec![key])),
        }
    }
}
