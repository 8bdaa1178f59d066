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
//! Positions never resolved are defender wins ([`UNRESOLVED`]).

use crate::atomic::ByteArray;
use crate::game::{DefenderMove, Game, SliceId, Stage};
use crate::value::{Value, NON_CANONICAL, UNRESOLVED, VALUE_MAX};
use arrayvec::ArrayVec;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Read access to the attacker-to-move values of final, earlier stages.
pub trait FinalValues: Sync {
    /// The attacker-to-move value at `index` of `slice` (a slice of a finished stage).
    fn attacker_value(&self, slice: SliceId, index: u64) -> Value;
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
#[derive(Clone, Copy, Debug, Default)]
pub struct StageTimes {
    /// The initial sweep over defender-to-move positions.
    pub init: std::time::Duration,
    /// Odd plies: expanding defender-to-move frontiers (attacker un-moves).
    pub attacker_plies: std::time::Duration,
    /// Even plies: expanding attacker-to-move frontiers (defender un-moves, counters).
    pub defender_plies: std::time::Duration,
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

/// Keys of positions grouped by their slice's slot in the stage: `slots[s]` holds the segments
/// the parallel tasks produced for slot `s`, never copied into one vector. Grouping by slot
/// stores 8 bytes per position instead of 16 and keeps each slice's positions together.
#[derive(Clone, Default)]
struct Frontier {
    slots: Vec<Vec<Vec<u64>>>,
}

impl Frontier {
    /// An empty frontier for a stage of `n` slices.
    fn new(n: usize) -> Frontier {
        Frontier {
            slots: vec![Vec::new(); n],
        }
    }

    /// Adds the keys `keys` of slot `slot`.
    fn push(&mut self, slot: usize, keys: Vec<u64>) {
        if !keys.is_empty() {
            self.slots[slot].push(keys);
        }
    }

    /// Adds what one parallel task produced.
    fn absorb(&mut self, out: SlotLists) {
        for (slot, keys) in out.0.into_iter().enumerate() {
            self.push(slot, keys);
        }
    }

    /// Adds every segment of `other`.
    fn extend(&mut self, other: Frontier) {
        for (slot, segments) in other.slots.into_iter().enumerate() {
            self.slots[slot].extend(segments);
        }
    }

    fn len(&self) -> u64 {
        self.slots.iter().flatten().map(|s| s.len() as u64).sum()
    }

    fn is_empty(&self) -> bool {
        self.slots.iter().flatten().all(|s| s.is_empty())
    }

    /// The frontier cut into chunks for parallel expansion, each with its slot.
    fn chunks(&self) -> Vec<(u32, &[u64])> {
        self.slots
            .iter()
            .enumerate()
            .flat_map(|(slot, segments)| {
                segments
                    .iter()
                    .flat_map(|s| s.chunks(FRONTIER_CHUNK))
                    .map(move |c| (slot as u32, c))
            })
            .collect()
    }
}

/// One parallel task's output: keys per slot.
struct SlotLists(Vec<Vec<u64>>);

impl SlotLists {
    fn new(n: usize) -> SlotLists {
        SlotLists(vec![Vec::new(); n])
    }

    fn push(&mut self, slot: u32, key: u64) {
        self.0[slot as usize].push(key);
    }
}

/// The most defender moves (or un-moves) one position may have.
pub const MAX_MOVES: usize = 64;
/// Indices are swept in chunks of this many slots per parallel task.
const SWEEP_CHUNK: u64 = 1 << 15;
/// Frontier lists are expanded in chunks of this many entries per parallel task.
const FRONTIER_CHUNK: usize = 1 << 12;
/// One bucket per possible value.
const BUCKETS: usize = 256;

/// A stage's values. A defender-to-move byte holds, until the position is resolved, its
/// *counter* (successor orbits not yet known to be attacker wins) and afterwards its value; the
/// `defender_final` bit says which. One byte serves both because a counter is decremented
/// exactly once per successor orbit, so once it reaches zero (and the value is written) no
/// decrement ever touches the byte again. This saves one byte per position.
struct StageArrays {
    attacker: Vec<ByteArray>,
    defender: Vec<ByteArray>,
}

/// Solves `stage` of `game`, reading earlier stages through `finals`, and reports each ply to
/// `on_ply`. Runs on the current rayon thread pool.
pub fn solve_stage<G: Game, F: FinalValues>(
    game: &G,
    stage: &Stage,
    finals: &F,
    mut on_ply: impl FnMut(PlyReport),
) -> Result<(Vec<SolvedSlice>, StageTimes), KernelError> {
    let mut times = StageTimes::default();
    let clock = Instant::now();
    let mut slot_of = vec![u32::MAX; game.slice_count()];
    for (slot, slice) in stage.slices.iter().enumerate() {
        slot_of[slice.0 as usize] = slot as u32;
    }
    let slot = |slice: SliceId| -> u32 { slot_of[slice.0 as usize] };
    let lens: Vec<u64> = stage.slices.iter().map(|&s| game.slice_len(s)).collect();
    let zeroed = || {
        lens.iter()
            .map(|&n| ByteArray::zeroed(n as usize))
            .collect()
    };
    let arrays = StageArrays {
        attacker: zeroed(),
        defender: zeroed(),
    };
    let attacker: Vec<_> = arrays.attacker.iter().map(ByteArray::atomics).collect();
    let defender: Vec<_> = arrays.defender.iter().map(ByteArray::atomics).collect();
    let bitmap = || -> Vec<ByteArray> {
        lens.iter()
            .map(|&n| ByteArray::zeroed(n.div_ceil(64) as usize * 8))
            .collect()
    };
    // One bit per attacker-to-move slot: set once the slot's value is known.
    let bitmaps = bitmap();
    let resolved: Vec<&[AtomicU64]> = bitmaps.iter().map(ByteArray::atomic_words).collect();
    // One bit per defender-to-move slot: set once its byte holds a value, not a counter.
    let defender_bitmaps = bitmap();
    let defender_final_bit: Vec<&[AtomicU64]> = defender_bitmaps
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

    // Initialisation: one sweep over the defender-to-move positions.
    let tasks: Vec<(u32, u64)> = lens
        .iter()
        .enumerate()
        .flat_map(|(s, &n)| (0..n.div_ceil(SWEEP_CHUNK)).map(move |c| (s as u32, c)))
        .collect();
    let seeds: Vec<Seeds> = tasks
        .par_iter()
        .map(|&(s, chunk)| {
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
                in_stage.clear();
                let mut exit_max: Option<Value> = None;
                let mut escapes = false;
                let mut problem = None;
                game.defender_moves(slice, key, |mv| match mv {
                    DefenderMove::InStage(to, to_key) => {
                        let to_slot = slot(to);
                        if to_slot == u32::MAX {
                            problem = Some(format!("defender move to {to:?} outside the stage"));
                        } else if !in_stage.contains(&(to_slot, to_key))
                            && in_stage.try_push((to_slot, to_key)).is_err()
                        {
                            problem = Some(format!("a position has more than {MAX_MOVES} moves"));
                        }
                    }
                    DefenderMove::Final(to, to_key) => {
                        let v = finals.attacker_value(to, game.index(to, to_key));
                        if v == UNRESOLVED {
                            escapes = true;
                        } else {
                            exit_max = Some(exit_max.map_or(v, |m| m.max(v)));
                        }
                    }
                });
                if problem.is_some() {
                    seeds.error = problem;
                    return;
                }
                if escapes {
                    // A capture reaches a defender win: the value is final, UNRESOLVED (0), and
                    // the zero byte means no decrement ever applies.
                    mark_defender(s as usize, i);
                    return;
                }
                let pending = in_stage.len() + usize::from(exit_max.is_some());
                if pending == 0 {
                    defender[s as usize][i].store(1, Relaxed);
                    mark_defender(s as usize, i);
                    seeds.stalemates.push(key);
                    return;
                }
                defender[s as usize][i].store(pending as u8, Relaxed);
                if let Some(m) = exit_max {
                    seeds.exit(m, key);
                }
            });
            seeds
        })
        .collect();
    // Defender-to-move positions whose value becomes final at each ply (odd plies), and
    // scheduled exit decrements (even plies), indexed by ply.
    let n = stage.slices.len();
    let mut defender_final: Vec<Frontier> = vec![Frontier::new(n); BUCKETS];
    let mut exits: Vec<Frontier> = vec![Frontier::new(n); BUCKETS];
    // Canonical attacker-to-move positions not yet resolved.
    let mut attacker_unresolved: u64 = seeds.iter().map(|s| s.canonical).sum();
    for seed in seeds {
        if let Some(what) = seed.error {
            return Err(contract(what));
        }
        let slot = seed.slot as usize;
        defender_final[1].push(slot, seed.stalemates);
        for (v, keys) in seed.exits {
            exits[v as usize].push(slot, keys);
        }
    }
    let last_scheduled =
        |buckets: &[Frontier], from: usize| buckets[from..].iter().any(|b| !b.is_empty());

    times.init = clock.elapsed();
    let mut attacker_final = Frontier::new(n);
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
            let frontier = std::mem::take(&mut defender_final[ply]);
            if attacker_unresolved < frontier.len() {
                attacker_final = pull_ply(game, stage, &lens, &resolved, |s, key, i| {
                    let mut found = false;
                    game.attacker_moves(stage.slices[s as usize], key, |to, _, ti| {
                        let (t, ti) = (slot(to) as usize, ti as usize);
                        found = found
                            || (defender_is_final(t, ti)
                                && defender[t][ti].load(Relaxed) == ply as Value);
                    });
                    if found {
                        attacker[s as usize][i as usize].store(next, Relaxed);
                    }
                    found
                });
            } else {
                attacker_final = Frontier::new(n);
                let outputs: Vec<SlotLists> = frontier
                    .chunks()
                    .into_par_iter()
                    .map(|(s, chunk)| {
                        let mut out = SlotLists::new(n);
                        for &key in chunk {
                            game.attacker_unmoves(
                                stage.slices[s as usize],
                                key,
                                |to, to_key, i| {
                                    let to_slot = slot(to) as usize;
                                    let i = i as usize;
                                    // Most targets are already resolved; the bitmap answers that
                                    // from cache, and only a first visit touches the value array.
                                    let word = &resolved[to_slot][i / 64];
                                    let bit = 1u64 << (i % 64);
                                    if word.load(Relaxed) & bit == 0
                                        && word.fetch_or(bit, Relaxed) & bit == 0
                                    {
                                        attacker[to_slot][i].store(next, Relaxed);
                                        out.push(to_slot as u32, to_key);
                                    }
                                },
                            );
                        }
                        out
                    })
                    .collect();
                for out in outputs {
                    attacker_final.absorb(out);
                }
            }
            attacker_unresolved -= attacker_final.len();
            (frontier.len(), attacker_final.len())
        } else {
            // Attacker-to-move positions of value `ply`, plus exit decrements scheduled here.
            let frontier = std::mem::replace(&mut attacker_final, Frontier::new(n));
            let exit_list = std::mem::take(&mut exits[ply]);
            let decrement = |s: u32, key: u64, i: u64, out: &mut SlotLists| {
                let i = i as usize;
                let cell = &defender[s as usize][i];
                if cell.load(Relaxed) != 0 && cell.fetch_sub(1, Relaxed) == 1 {
                    mark_defender(s as usize, i);
                    cell.store(next, Relaxed);
                    out.push(s, key);
                }
            };
            let from_frontier: Vec<SlotLists> = frontier
                .chunks()
                .into_par_iter()
                .map(|(s, chunk)| {
                    let mut out = SlotLists::new(n);
                    let mut preds: ArrayVec<(u32, u64, u64), MAX_MOVES> = ArrayVec::new();
                    for &key in chunk {
                        preds.clear();
                        game.defender_unmoves(stage.slices[s as usize], key, |to, to_key, i| {
                            let p = (slot(to), to_key, i);
                            if !preds.contains(&p) {
                                // The game's contract bounds un-moves per position by MAX_MOVES.
                                preds.try_push(p).expect("at most MAX_MOVES un-moves");
                            }
                        });
                        for &(ps, pkey, pi) in &preds {
                            decrement(ps, pkey, pi, &mut out);
                        }
                    }
                    out
                })
                .collect();
            let from_exits: Vec<SlotLists> = exit_list
                .chunks()
                .into_par_iter()
                .map(|(s, chunk)| {
                    let mut out = SlotLists::new(n);
                    for &key in chunk {
                        let i = game.index(stage.slices[s as usize], key);
                        decrement(s, key, i, &mut out);
                    }
                    out
                })
                .collect();
            let mut resolved_now = Frontier::new(n);
            for out in from_frontier.into_iter().chain(from_exits) {
                resolved_now.absorb(out);
            }
            let produced = resolved_now.len();
            defender_final[ply + 1].extend(resolved_now);
            (frontier.len() + exit_list.len(), produced)
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
    defender
        .par_iter()
        .zip(&defender_final_bit)
        .zip(&lens)
        .for_each(|((values, bits), &n)| {
            for (w, word) in bits.iter().enumerate() {
                let mut open = !word.load(Relaxed);
                while open != 0 {
                    let i = w * 64 + open.trailing_zeros() as usize;
                    open &= open - 1;
                    if (i as u64) < n {
                        values[i].store(UNRESOLVED, Relaxed);
                    }
                }
            }
        });
    drop((attacker, defender));
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

/// A pull ply: every attacker-to-move slot whose resolved bit is clear (canonical and not yet
/// resolved) is offered to `resolves(slot, key, index)`; those it resolves get their bit set
/// and are returned as the next frontier.
///
/// The unresolved positions are found in the bitmap rather than kept in a list (which would
/// cost 16 bytes per unresolved position — most of a large stage's memory, since black wins
/// stay unresolved to the end). Fully resolved bitmap words are skipped; within a word, keys
/// are stepped from the first clear bit to the last, so dense unresolved runs cost one key step
/// each and sparse ones one unrank each.
fn pull_ply<G: Game>(
    game: &G,
    stage: &Stage,
    lens: &[u64],
    resolved: &[&[AtomicU64]],
    resolves: impl Fn(u32, u64, u64) -> bool + Sync,
) -> Frontier {
    const WORDS: usize = 1 << 10;
    let tasks: Vec<(usize, usize)> = resolved
        .iter()
        .enumerate()
        .flat_map(|(s, words)| (0..words.len().div_ceil(WORDS)).map(move |c| (s, c)))
        .collect();
    let outputs: Vec<(usize, Vec<u64>)> = tasks
        .par_iter()
        .map(|&(s, c)| {
            let mut out = Vec::new();
            let slice = stage.slices[s];
            let first = c * WORDS;
            let words = &resolved[s][first..((c + 1) * WORDS).min(resolved[s].len())];
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
                    if clear & bit != 0 && resolves(s as u32, key, index) {
                        word.fetch_or(bit, Relaxed);
                        out.push(key);
                    }
                });
            }
            (s, out)
        })
        .collect();
    let mut frontier = Frontier::new(lens.len());
    for (s, out) in outputs {
        frontier.push(s, out);
    }
    frontier
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
