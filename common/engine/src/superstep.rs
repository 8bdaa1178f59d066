//! The superstep kernel: one slice's ply at a time, so that the slices of one stage can be
//! solved by different workers, with plies as supersteps.
//!
//! It computes exactly what [`crate::kernel::solve_stage`] computes (same rules, shared in
//! `position_rules`), but a step sees only its own slice's arrays ([`SlotState`]); every update
//! of a position — in its own slice or another — travels as a *message* of the ply that sent
//! it and is applied by the receiving slice's next step:
//!
//! * a step of **odd ply `p`** (defender-to-move positions of value `p` are final) sends each
//!   attacker-to-move predecessor a *claim*: "your value is `p + 1` unless you have one";
//! * a step of **even ply `p`** (attacker-to-move positions of value `p` are final) sends each
//!   distinct defender-to-move predecessor a *decrement*; the one that reaches zero makes the
//!   position's value `p + 1`;
//! * the **first step** initialises the slice (counters, stalemates of value 1) and sends the
//!   exit decrements of its captures into earlier stages as messages *to itself*, dated the ply
//!   of the exit's value, then expands ply 1.
//!
//! Step `p` of slice `s` therefore reads the messages of ply `p - 1` addressed to `s`, applies
//! them (what they resolve is `s`'s frontier of value `p`), and expands that frontier into the
//! messages of ply `p`. A stage is done when a ply sends no message and none is dated later;
//! [`finish`] then turns the slice's state into its values. Applying a ply's messages commutes
//! (a claim sets a bit once; decrements add up), so the result does not depend on the order in
//! which messages arrive or are applied.

use crate::atomic::ByteArray;
use crate::game::{Game, Stage};
use crate::kernel::{FinalValues, KernelError, SolvedSlice, MAX_MOVES};
use crate::meter::SlotClocks;
use crate::position_rules::{
    claim, decrement, defender_predecessors, defender_start, finish_defenders, DefenderStart,
};
use crate::value::{Value, NON_CANONICAL, VALUE_MAX};
use arrayvec::ArrayVec;
use rayon::prelude::*;
use std::sync::atomic::Ordering::Relaxed;

/// Positions per parallel task when a step sweeps or applies.
const CHUNK: usize = 1 << 14;

/// The names of a [`SlotState`]'s four arrays, in [`SlotState::sections`] order.
pub const STATE_SECTIONS: [&str; 4] = ["attacker", "defender", "resolved", "defender_final"];

/// One slice's arrays between steps: what a worker stores after each step and maps for the
/// next. The same four arrays as the stage kernel keeps per slice.
#[derive(Debug, PartialEq, Eq)]
pub struct SlotState {
    /// Attacker-to-move values (0 until resolved).
    pub attacker: ByteArray,
    /// Defender-to-move counters, then values (see the `defender_final` bits).
    pub defender: ByteArray,
    /// One bit per attacker-to-move position: resolved (or not canonical).
    pub resolved: ByteArray,
    /// One bit per defender-to-move position: its byte holds its value.
    pub defender_final: ByteArray,
}

impl SlotState {
    /// Empty arrays for a slice of `len` positions.
    pub fn zeroed(len: u64) -> SlotState {
        let words = len.div_ceil(64) as usize * 8;
        SlotState {
            attacker: ByteArray::zeroed(len as usize),
            defender: ByteArray::zeroed(len as usize),
            resolved: ByteArray::zeroed(words),
            defender_final: ByteArray::zeroed(words),
        }
    }

    /// Bytes the four arrays occupy in memory.
    pub fn bytes(&self) -> u64 {
        self.sections().iter().map(|(_, a)| a.len() as u64).sum()
    }

    /// The arrays with their names ([`STATE_SECTIONS`]), for storage.
    pub fn sections(&self) -> [(&'static str, &[u8]); 4] {
        [
            (STATE_SECTIONS[0], &self.attacker[..]),
            (STATE_SECTIONS[1], &self.defender[..]),
            (STATE_SECTIONS[2], &self.resolved[..]),
            (STATE_SECTIONS[3], &self.defender_final[..]),
        ]
    }

    /// Rebuilds a slice's state of `len` positions from its stored arrays (in
    /// [`STATE_SECTIONS`] order); fails if a length does not fit the slice.
    pub fn from_sections(len: u64, sections: [Vec<u8>; 4]) -> Result<SlotState, String> {
        let words = len.div_ceil(64) * 8;
        let expected = [len, len, words, words];
        for ((name, bytes), want) in STATE_SECTIONS.iter().zip(&sections).zip(expected) {
            if bytes.len() as u64 != want {
                return Err(format!(
                    "section {name} holds {} bytes, the slice needs {want}",
                    bytes.len()
                ));
            }
        }
        let [attacker, defender, resolved, defender_final] = sections;
        Ok(SlotState {
            attacker: ByteArray::from_slice(&attacker),
            defender: ByteArray::from_slice(&defender),
            resolved: ByteArray::from_slice(&resolved),
            defender_final: ByteArray::from_slice(&defender_final),
        })
    }
}

/// Keys sent to one slice: applied by its step of ply `ply + 1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The ply that sent them (the exit decrements of the first step: the ply of their value).
    pub ply: u32,
    /// The receiving slice's slot in the stage.
    pub to: u32,
    /// Positions of the receiving slice, sorted (claims without duplicates; decrements once
    /// per sender, so a key may repeat).
    pub keys: Vec<u64>,
}

/// What one step did.
#[derive(Debug, Default)]
pub struct StepOutput {
    /// Messages to send, one per (ply, receiving slot) with at least one key.
    pub messages: Vec<Message>,
    /// Positions of this slice whose value became final in this step.
    pub resolved: u64,
    /// Canonical positions of the slice (first step only; 0 otherwise).
    pub canonical: u64,
    /// CPU time of the step's threads.
    pub cpu: std::time::Duration,
}

/// Slot of every slice id in `stage` (`u32::MAX` for slices outside it).
fn slots_of<G: Game>(game: &G, stage: &Stage) -> Vec<u32> {
    let mut slot_of = vec![u32::MAX; game.slice_count()];
    for (slot, slice) in stage.slices.iter().enumerate() {
        slot_of[slice.0 as usize] = slot as u32;
    }
    slot_of
}

/// The first step of slot `slot` of `stage`: initialises its arrays from the final values of
/// the earlier stages (`finals`), schedules its exit decrements (as messages to itself) and
/// expands ply 1 (its stalemates). Runs on the current rayon pool.
pub fn first_step<G: Game, F: FinalValues>(
    game: &G,
    stage: &Stage,
    slot: u32,
    finals: &F,
) -> Result<(SlotState, StepOutput), KernelError> {
    let slot_of = slots_of(game, stage);
    let slice = stage.slices[slot as usize];
    let len = game.slice_len(slice);
    let state = SlotState::zeroed(len);
    let (attacker, defender) = (state.attacker.atomics(), state.defender.atomics());
    let (resolved, final_bits) = (
        state.resolved.atomic_words(),
        state.defender_final.atomic_words(),
    );
    struct Seeds {
        canonical: u64,
        stalemates: Vec<u64>,
        exits: Vec<(Value, u64)>,
        error: Option<String>,
    }
    let clocks = SlotClocks::new(1);
    let chunks = len.div_ceil(CHUNK as u64);
    let seeds: Vec<Seeds> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            clocks.time(0, || {
                let start = c * CHUNK as u64;
                let end = (start + CHUNK as u64).min(len);
                let mut seeds = Seeds {
                    canonical: 0,
                    stalemates: Vec::new(),
                    exits: Vec::new(),
                    error: None,
                };
                let mut scratch = ArrayVec::<(u32, u64), MAX_MOVES>::new();
                game.for_each_key(slice, start..end, |index, key| {
                    let i = index as usize;
                    if !game.is_canonical(slice, key) {
                        attacker[i].store(NON_CANONICAL, Relaxed);
                        defender[i].store(NON_CANONICAL, Relaxed);
                        resolved[i / 64].fetch_or(1 << (i % 64), Relaxed);
                        final_bits[i / 64].fetch_or(1 << (i % 64), Relaxed);
                        return;
                    }
                    seeds.canonical += 1;
                    match defender_start(game, &slot_of, finals, slice, key, &mut scratch) {
                        Err(what) => seeds.error = Some(what),
                        Ok(DefenderStart::Escapes) => {
                            final_bits[i / 64].fetch_or(1 << (i % 64), Relaxed);
                        }
                        Ok(DefenderStart::Stalemate) => {
                            defender[i].store(1, Relaxed);
                            final_bits[i / 64].fetch_or(1 << (i % 64), Relaxed);
                            seeds.stalemates.push(key);
                        }
                        Ok(DefenderStart::Pending { successors, exit }) => {
                            defender[i].store(successors, Relaxed);
                            if let Some(v) = exit {
                                seeds.exits.push((v, key));
                            }
                        }
                    }
                });
                seeds
            })
        })
        .collect();
    let contract = |what: String| KernelError::Contract {
        stage: stage.name.clone(),
        what,
    };
    let mut out = StepOutput::default();
    let mut frontier = Vec::new();
    let mut exits: Vec<(Value, u64)> = Vec::new();
    for s in seeds {
        if let Some(what) = s.error {
            return Err(contract(what));
        }
        out.canonical += s.canonical;
        frontier.extend(s.stalemates);
        exits.extend(s.exits);
    }
    out.resolved = frontier.len() as u64;
    exits.sort_unstable();
    for run in exits.chunk_by(|a, b| a.0 == b.0) {
        out.messages.push(Message {
            ply: u32::from(run[0].0),
            to: slot,
            keys: run.iter().map(|&(_, k)| k).collect(),
        });
    }
    out.messages
        .extend(expand(game, stage, &slot_of, slot, 1, &frontier, &clocks)?);
    out.cpu = clocks.total(0);
    Ok((state, out))
}

/// Step `ply` (at least 2) of slot `slot`: applies the messages of ply `ply - 1` addressed to
/// it (`incoming`, one key list per sender) to `state`, and expands what they resolved (the
/// slice's positions of value `ply`) into the messages of ply `ply`. Runs on the current rayon
/// pool.
pub fn step<G: Game>(
    game: &G,
    stage: &Stage,
    slot: u32,
    ply: u32,
    state: &SlotState,
    incoming: &[&[u64]],
) -> Result<StepOutput, KernelError> {
    if ply < 2 {
        return Err(KernelError::Contract {
            stage: stage.name.clone(),
            what: format!("step {ply}: the first step initialises, later steps start at 2"),
        });
    }
    if ply > u32::from(VALUE_MAX) {
        return Err(KernelError::ValueOverflow {
            stage: stage.name.clone(),
        });
    }
    let value = ply as Value;
    let slot_of = slots_of(game, stage);
    let slice = stage.slices[slot as usize];
    let len = game.slice_len(slice);
    let (attacker, defender) = (state.attacker.atomics(), state.defender.atomics());
    let (resolved, final_bits) = (
        state.resolved.atomic_words(),
        state.defender_final.atomic_words(),
    );
    let claims = (ply - 1) % 2 == 1;
    let clocks = SlotClocks::new(1);
    let chunks: Vec<&[u64]> = incoming
        .iter()
        .flat_map(|keys| keys.chunks(CHUNK))
        .collect();
    let found: Vec<Result<Vec<u64>, String>> = chunks
        .par_iter()
        .map(|chunk| {
            clocks.time(0, || {
                let mut found = Vec::new();
                for &key in *chunk {
                    let index = game.index(slice, key);
                    if index >= len {
                        return Err(format!("message key {key:#x} is outside {}", slice.0));
                    }
                    let i = index as usize;
                    let resolves = if claims {
                        let first = claim(resolved, i);
                        if first {
                            attacker[i].store(value, Relaxed);
                        }
                        first
                    } else {
                        decrement(defender, final_bits, i, value)
                    };
                    if resolves {
                        found.push(key);
                    }
                }
                Ok(found)
            })
        })
        .collect();
    let mut frontier = Vec::new();
    for f in found {
        frontier.extend(f.map_err(|what| KernelError::Contract {
            stage: stage.name.clone(),
            what,
        })?);
    }
    let messages = expand(game, stage, &slot_of, slot, ply, &frontier, &clocks)?;
    Ok(StepOutput {
        messages,
        resolved: frontier.len() as u64,
        canonical: 0,
        cpu: clocks.total(0),
    })
}

/// Expands `frontier` (positions of slot `slot` of value `ply`) into the messages of ply
/// `ply`: claims on odd plies, decrements on even ones.
fn expand<G: Game>(
    game: &G,
    stage: &Stage,
    slot_of: &[u32],
    slot: u32,
    ply: u32,
    frontier: &[u64],
    clocks: &SlotClocks,
) -> Result<Vec<Message>, KernelError> {
    let n = stage.slices.len();
    let slice = stage.slices[slot as usize];
    let odd = ply % 2 == 1;
    let per_target: Vec<Vec<u64>> = frontier
        .par_chunks(CHUNK)
        .map(|chunk| {
            clocks.time(0, || {
                let mut out = vec![Vec::new(); n + 1];
                let mut preds = ArrayVec::<(u32, u64, u64), MAX_MOVES>::new();
                for &key in chunk {
                    if odd {
                        game.attacker_unmoves(slice, key, |to, to_key, _| {
                            let t = slot_of[to.0 as usize].min(n as u32) as usize;
                            out[t].push(to_key);
                        });
                    } else {
                        defender_predecessors(game, slot_of, slice, key, &mut preds);
                        for &(t, to_key, _) in &preds {
                            out[t.min(n as u32) as usize].push(to_key);
                        }
                    }
                }
                out
            })
        })
        .reduce(
            || vec![Vec::new(); n + 1],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    x.extend(y);
                }
                a
            },
        );
    if !per_target[n].is_empty() {
        return Err(KernelError::Contract {
            stage: stage.name.clone(),
            what: format!("an un-move from {} leaves the stage", slice.0),
        });
    }
    Ok(per_target
        .into_iter()
        .take(n)
        .enumerate()
        .filter(|(_, keys)| !keys.is_empty())
        .map(|(to, mut keys)| {
            keys.par_sort_unstable();
            if odd {
                // A claim is applied once whoever sends it.
                keys.dedup();
            }
            Message {
                ply,
                to: to as u32,
                keys,
            }
        })
        .collect())
}

/// The values of slot `slot` once the stage is done (no message left): counters that never
/// reached zero are defender wins.
pub fn finish<G: Game>(game: &G, stage: &Stage, slot: u32, state: SlotState) -> SolvedSlice {
    let slice = stage.slices[slot as usize];
    finish_defenders(
        state.defender.atomics(),
        state.defender_final.atomic_words(),
        game.slice_len(slice),
    );
    SolvedSlice {
        slice,
        attacker: state.attacker,
        defender: state.defender,
    }
}

/// Solves `stage` by supersteps in this process, slot after slot and ply after ply, exactly as
/// a cluster would with one task per (slot, ply): the reference the distributed driver is
/// tested against, and a way to test the superstep rules without a cluster.
pub fn solve_stage_by_steps<G: Game, F: FinalValues>(
    game: &G,
    stage: &Stage,
    finals: &F,
) -> Result<Vec<SolvedSlice>, KernelError> {
    let n = stage.slices.len() as u32;
    let mut states = Vec::new();
    let mut mail: Vec<Message> = Vec::new();
    for slot in 0..n {
        let (state, out) = first_step(game, stage, slot, finals)?;
        states.push(state);
        mail.extend(out.messages);
    }
    let mut ply = 1;
    while mail.iter().any(|m| m.ply >= ply) {
        let (now, later): (Vec<Message>, Vec<Message>) =
            mail.into_iter().partition(|m| m.ply == ply);
        mail = later;
        ply += 1;
        for slot in 0..n {
            let incoming: Vec<&[u64]> = now
                .iter()
                .filter(|m| m.to == slot)
                .map(|m| &m.keys[..])
                .collect();
            if incoming.is_empty() {
                continue;
            }
            let out = step(game, stage, slot, ply, &states[slot as usize], &incoming)?;
            mail.extend(out.messages);
        }
    }
    Ok(states
        .into_iter()
        .enumerate()
        .map(|(slot, state)| finish(game, stage, slot as u32, state))
        .collect())
}
