//! The superstep kernel: one slice's ply at a time, so that the slices of one stage can be
//! solved by different workers, with plies as supersteps.
//!
//! It computes exactly what [`crate::kernel::solve_stage`] computes — the same rules, defined
//! once in [`crate::rules`] — but a step sees only its own slice's arrays ([`SlotState`]);
//! every update of a position, in its own slice or another, travels as a *message* of the ply
//! that sent it and is applied by the receiving slice's next step:
//!
//! * a step of **odd ply `p`** (positions of value `p` have lost) sends each predecessor a
//!   *claim*: "your value is `p + 1` unless you have one";
//! * a step of **even ply `p`** (positions of value `p` have won) sends each distinct
//!   predecessor a *decrement*; the one that reaches zero makes the position's value `p + 1`;
//! * the **first step** initialises the slice (counters, positions lost at once) and sends the
//!   exits of its captures into earlier stages as messages *to itself*, dated the ply of the
//!   exit's value, then expands ply 1.
//!
//! Step `p` of slice `s` therefore reads the messages of ply `p - 1` addressed to `s`, applies
//! them (what they resolve is `s`'s frontier of value `p`), and expands that frontier into the
//! messages of ply `p`. A stage is done when a ply sends no message and none is dated later;
//! [`finish`] then turns the slice's state into its values. Applying a ply's messages commutes
//! (a claim sets a bit once; decrements add up), so the result does not depend on the order in
//! which messages arrive or are applied.
//!
//! **Double steps.** In a game whose claims stay in their slice
//! ([`Game::claims_stay_in_slice`]: Sixteen Musashi) nobody else can claim a position of `s`, so
//! an odd step `p` applies its own claims at once, with the exits dated `p` (messages `s` sent
//! itself, handed to the step beside its incoming ones), and expands the even ply `p + 1` in the
//! same step ([`is_double`]). The values are the same; the stage needs half the steps.

use crate::atomic::ByteArray;
use crate::distinct::Distinct;
use crate::game::{Game, Side, SliceId, Stage};
use crate::kernel::{FinalValues, KernelError, SolvedSlice};
use crate::meter::SlotClocks;
use crate::rules::{
    apply, finish_section, for_each_target_of, slots_of, Section, Seeds, SideRoles, Sweep, OVERFLOW,
};
use crate::value::Value;
use rayon::prelude::*;

/// Positions per parallel task when a step sweeps or applies.
const CHUNK: usize = 1 << 14;

/// The names of a [`SlotState`]'s four arrays, in [`SlotState::sections`] order.
pub const STATE_SECTIONS: [&str; 4] = ["first", "second", "first final", "second final"];

/// One slice's arrays between steps: what a worker stores after each step and maps for the
/// next. The same arrays as the stage kernel keeps per slice.
#[derive(Debug, PartialEq, Eq)]
pub struct SlotState {
    /// Per side to move: counters, then values.
    pub values: [ByteArray; 2],
    /// Per side to move: one bit per position, set once its byte holds its value.
    pub finals: [ByteArray; 2],
}

impl SlotState {
    /// Empty arrays for a slice of `len` positions.
    pub fn zeroed(len: u64) -> SlotState {
        let words = len.div_ceil(64) as usize * 8;
        SlotState {
            values: [
                ByteArray::zeroed(len as usize),
                ByteArray::zeroed(len as usize),
            ],
            finals: [ByteArray::zeroed(words), ByteArray::zeroed(words)],
        }
    }

    /// Bytes the four arrays occupy in memory.
    pub fn bytes(&self) -> u64 {
        self.sections().iter().map(|(_, a)| a.len() as u64).sum()
    }

    /// The arrays with their names ([`STATE_SECTIONS`]), for storage.
    pub fn sections(&self) -> [(&'static str, &[u8]); 4] {
        [
            (STATE_SECTIONS[0], &self.values[0][..]),
            (STATE_SECTIONS[1], &self.values[1][..]),
            (STATE_SECTIONS[2], &self.finals[0][..]),
            (STATE_SECTIONS[3], &self.finals[1][..]),
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
        let [first, second, first_final, second_final] = sections;
        Ok(SlotState {
            values: [
                ByteArray::from_slice(&first),
                ByteArray::from_slice(&second),
            ],
            finals: [
                ByteArray::from_slice(&first_final),
                ByteArray::from_slice(&second_final),
            ],
        })
    }

    /// The arrays of `side` as the rules update them.
    fn section(&self, side: Side, roles: &SideRoles) -> Section<'_> {
        Section {
            values: self.values[side.index()].atomics(),
            finals: self.finals[side.index()].atomic_words(),
            claimable: roles.claimable[side.index()],
            compact: false,
            // Split stages keep counters in the byte (checked when a slice starts).
            overflow: &[],
        }
    }
}

/// Keys sent to one slice: applied by its step of ply `ply + 1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The ply that sent them (the exits of the first step: the ply of their value).
    pub ply: u32,
    /// The receiving slice's slot in the stage.
    pub to: u32,
    /// Positions of the receiving slice, per side to move, sorted (claims without duplicates;
    /// decrements once per sender, so a key may repeat).
    pub keys: [Vec<u64>; 2],
}

impl Message {
    /// How many keys the message carries.
    pub fn len(&self) -> usize {
        self.keys[0].len() + self.keys[1].len()
    }

    /// Whether it carries none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
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

/// The first step of slot `slot` of `stage`: initialises its arrays from the final values of
/// the earlier stages (`finals`), schedules its exits (as messages to itself) and expands ply 1
/// (its positions lost at once). Runs on the current rayon pool.
pub fn first_step<G: Game, F: FinalValues>(
    game: &G,
    stage: &Stage,
    slot: u32,
    finals: &F,
) -> Result<(SlotState, StepOutput), KernelError> {
    if !game.has_unmoves() {
        return Err(KernelError::Contract {
            stage: stage.name.clone(),
            what: "the game has no un-moves, so its stages cannot be solved in supersteps (a \
                   step sees only its own slice); solve them whole"
                .into(),
        });
    }
    let roles = SideRoles::of(game);
    let slot_of = slots_of(game, stage);
    let slice = stage.slices[slot as usize];
    let len = game.slice_len(slice);
    let state = SlotState::zeroed(len);
    let sections = Side::BOTH.map(|side| state.section(side, &roles));
    let sweep = Sweep {
        game,
        roles,
        slot_of: &slot_of,
        finals,
    };
    let clocks = SlotClocks::new(1);
    let chunks = len.div_ceil(CHUNK as u64);
    let seeds: Vec<Seeds> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            clocks.time(0, || {
                let start = c * CHUNK as u64;
                let end = (start + CHUNK as u64).min(len);
                let mut seeds = Seeds::default();
                sweep.sweep(slice, start..end, sections, &mut seeds);
                seeds
            })
        })
        .collect();
    crate::kernel::input_failure(stage, finals.failure())?;
    let mut out = StepOutput::default();
    let mut frontier: [Vec<u64>; 2] = Default::default();
    let mut exits = Vec::new();
    for s in seeds {
        if let Some(what) = s.error {
            return Err(KernelError::Contract {
                stage: stage.name.clone(),
                what,
            });
        }
        if s.overflow.iter().any(|found| !found.is_empty()) {
            return Err(KernelError::Contract {
                stage: stage.name.clone(),
                what: format!(
                    "a position has more than {} open successors, which split stages cannot \
                     count; solve this stage whole",
                    OVERFLOW - 1
                ),
            });
        }
        out.canonical += s.canonical;
        for side in Side::BOTH {
            frontier[side.index()].extend(&s.lost[side.index()]);
        }
        exits.extend(s.exits);
    }
    exits.sort_unstable_by_key(|&((ply, side), _)| (ply, side));
    for run in exits.chunk_by(|a, b| a.0 .0 == b.0 .0) {
        let mut keys: [Vec<u64>; 2] = Default::default();
        for ((_, side), k) in run {
            keys[side.index()].extend(k);
        }
        for k in &mut keys {
            // Sorted, as every message is (its file stores key differences).
            k.sort_unstable();
        }
        out.messages.push(Message {
            ply: u32::from(run[0].0 .0),
            to: slot,
            keys,
        });
    }
    // A double first step applies the exits dated ply 1 itself.
    let dated: Vec<Message> = if is_double(game, 1) {
        let (now, later) = out.messages.drain(..).partition(|m| m.ply == 1);
        out.messages = later;
        now
    } else {
        Vec::new()
    };
    let (messages, resolved) = advance(
        game,
        stage,
        &slot_of,
        slot,
        1,
        frontier,
        &state,
        &addressed_to(&dated, slot),
        &clocks,
    )?;
    out.messages.extend(messages);
    out.resolved = resolved;
    out.cpu = clocks.total(0);
    Ok((state, out))
}

/// Whether step `ply` of a split stage of `game` is a double step: an odd ply whose claims
/// the step applies itself, followed by the even ply `ply + 1` (see the module documentation).
/// The coordinator's barrier and [`drive_steps`] ask the same question.
pub fn is_double<G: Game>(game: &G, ply: u32) -> bool {
    ply % 2 == 1 && game.claims_stay_in_slice()
}

/// Step `ply` (at least 2) of slot `slot`: applies the messages of ply `ply - 1` addressed to
/// it (`incoming`, one key list per sender and side to move) to `state`, and expands what they
/// resolved (the slice's positions of value `ply`) into the messages of ply `ply`. A double
/// step ([`is_double`]) also applies the claims of ply `ply` itself, with `dated` (the exits
/// the slice sent itself for ply `ply`), and expands ply `ply + 1`; other steps take no
/// `dated`. Runs on the current rayon pool.
pub fn step<G: Game>(
    game: &G,
    stage: &Stage,
    slot: u32,
    ply: u32,
    state: &SlotState,
    incoming: &[(Side, &[u64])],
    dated: &[(Side, &[u64])],
) -> Result<StepOutput, KernelError> {
    if ply < 2 {
        return Err(KernelError::Contract {
            stage: stage.name.clone(),
            what: format!("step {ply}: the first step initialises, later steps start at 2"),
        });
    }
    let last = ply + u32::from(is_double(game, ply));
    if last > u32::from(Value::MAX.0) {
        return Err(KernelError::ValueOverflow {
            stage: stage.name.clone(),
        });
    }
    let slot_of = slots_of(game, stage);
    let clocks = SlotClocks::new(1);
    let frontier = apply_messages(game, stage, slot, ply - 1, state, incoming, &clocks)?;
    let (messages, resolved) = advance(
        game, stage, &slot_of, slot, ply, frontier, state, dated, &clocks,
    )?;
    Ok(StepOutput {
        messages,
        resolved,
        canonical: 0,
        cpu: clocks.total(0),
    })
}

/// Applies to `state` the keys of slot `slot` that ply `sent` sends it (`keys`, per side to
/// move); returns the keys that became final (with value `sent + 1`), per side.
fn apply_messages<G: Game>(
    game: &G,
    stage: &Stage,
    slot: u32,
    sent: u32,
    state: &SlotState,
    keys: &[(Side, &[u64])],
    clocks: &SlotClocks,
) -> Result<[Vec<u64>; 2], KernelError> {
    let roles = SideRoles::of(game);
    let slice = stage.slices[slot as usize];
    let len = game.slice_len(slice);
    let chunks: Vec<(Side, &[u64])> = keys
        .iter()
        .flat_map(|&(side, keys)| keys.chunks(CHUNK).map(move |c| (side, c)))
        .collect();
    let found: Vec<Result<(Side, Vec<u64>), String>> = chunks
        .par_iter()
        .map(|&(side, chunk)| {
            clocks.time(0, || {
                let section = state.section(side, &roles);
                let mut found = Vec::new();
                for &key in chunk {
                    let index = game.index(slice, key);
                    if index >= len {
                        return Err(format!("message key {key:#x} is outside {}", slice.0));
                    }
                    if apply(&section, index as usize, sent) {
                        found.push(key);
                    }
                }
                Ok((side, found))
            })
        })
        .collect();
    let mut frontier: [Vec<u64>; 2] = Default::default();
    for f in found {
        let (side, keys) = f.map_err(|what| KernelError::Contract {
            stage: stage.name.clone(),
            what,
        })?;
        frontier[side.index()].extend(keys);
    }
    Ok(frontier)
}

/// Expands `frontier` (the slice's positions of value `ply`) into the step's messages; a
/// double step first applies the claims of ply `ply` and `dated` itself and expands the
/// positions they resolve (value `ply + 1`) instead. Returns the messages and how many
/// positions became final here (the claimed ones; those of `frontier` are counted by whoever
/// resolved them).
#[allow(clippy::too_many_arguments)]
fn advance<G: Game>(
    game: &G,
    stage: &Stage,
    slot_of: &[u32],
    slot: u32,
    ply: u32,
    frontier: [Vec<u64>; 2],
    state: &SlotState,
    dated: &[(Side, &[u64])],
    clocks: &SlotClocks,
) -> Result<(Vec<Message>, u64), KernelError> {
    let resolved = (frontier[0].len() + frontier[1].len()) as u64;
    if !is_double(game, ply) {
        if dated.iter().any(|(_, keys)| !keys.is_empty()) {
            return Err(KernelError::Contract {
                stage: stage.name.clone(),
                what: format!(
                    "step {ply} is not a double step, yet was given messages of its own ply"
                ),
            });
        }
        let messages = expand(game, stage, slot_of, slot, ply, &frontier, clocks)?;
        return Ok((messages, resolved));
    }
    let mut claimed = claim_in_slice(game, stage, slot_of, slot, ply, &frontier, state, clocks)?;
    let exits = apply_messages(game, stage, slot, ply, state, dated, clocks)?;
    for side in Side::BOTH {
        claimed[side.index()].extend(&exits[side.index()]);
    }
    let messages = expand(game, stage, slot_of, slot, ply + 1, &claimed, clocks)?;
    Ok((
        messages,
        resolved + (claimed[0].len() + claimed[1].len()) as u64,
    ))
}

/// The claims of odd ply `ply` from `frontier` (positions of slot `slot` of value `ply`),
/// applied to `state` at once, as the stage kernel does: returns the positions they made final
/// (value `ply + 1`). Every claim must land in the slot itself ([`is_double`]).
#[allow(clippy::too_many_arguments)]
fn claim_in_slice<G: Game>(
    game: &G,
    stage: &Stage,
    slot_of: &[u32],
    slot: u32,
    ply: u32,
    frontier: &[Vec<u64>; 2],
    state: &SlotState,
    clocks: &SlotClocks,
) -> Result<[Vec<u64>; 2], KernelError> {
    let roles = SideRoles::of(game);
    let slice = stage.slices[slot as usize];
    let len = game.slice_len(slice);
    let found = targets_by_chunk(
        game,
        slot_of,
        slice,
        ply,
        frontier,
        clocks,
        |side| {
            let target = side.other();
            (target, state.section(target, &roles), Vec::new(), false)
        },
        |(_, section, found, strays), t, to_key, index| {
            if t != slot || index >= len {
                *strays = true;
            } else if apply(section, index as usize, ply) {
                found.push(to_key);
            }
        },
    );
    let mut claimed: [Vec<u64>; 2] = Default::default();
    for (target, _, keys, strays) in found {
        if strays {
            return Err(KernelError::Contract {
                stage: stage.name.clone(),
                what: format!(
                    "a claim from {} leaves its slice, but the game says claims stay in it",
                    game.slice_name(slice)
                ),
            });
        }
        claimed[target.index()].extend(keys);
    }
    Ok(claimed)
}

/// Visits the targets of ply `ply` from every position of `frontier` (positions of `slice`,
/// per side to move) in parallel chunks: each chunk starts an accumulator with `start(side)`
/// and calls `visit(accumulator, slot, key, index)` per target ([`for_each_target_of`]).
/// Returns the accumulators in chunk order.
#[allow(clippy::too_many_arguments)]
fn targets_by_chunk<G: Game, A: Send>(
    game: &G,
    slot_of: &[u32],
    slice: SliceId,
    ply: u32,
    frontier: &[Vec<u64>; 2],
    clocks: &SlotClocks,
    start: impl Fn(Side) -> A + Sync,
    visit: impl Fn(&mut A, u32, u64, u64) + Sync,
) -> Vec<A> {
    let tasks: Vec<(Side, &[u64])> = Side::BOTH
        .iter()
        .flat_map(|&side| frontier[side.index()].chunks(CHUNK).map(move |c| (side, c)))
        .collect();
    tasks
        .par_iter()
        .map(|&(side, chunk)| {
            clocks.time(0, || {
                let mut acc = start(side);
                let mut scratch = Distinct::new();
                for_each_target_of(
                    game,
                    slot_of,
                    ply,
                    side,
                    slice,
                    chunk,
                    &mut scratch,
                    |t, k, i| visit(&mut acc, t, k, i),
                );
                acc
            })
        })
        .collect()
}

/// Expands `frontier` (positions of slot `slot` of value `ply`, per side to move) into the
/// messages of ply `ply`: claims on odd plies, decrements on even ones.
fn expand<G: Game>(
    game: &G,
    stage: &Stage,
    slot_of: &[u32],
    slot: u32,
    ply: u32,
    frontier: &[Vec<u64>; 2],
    clocks: &SlotClocks,
) -> Result<Vec<Message>, KernelError> {
    let n = stage.slices.len();
    let slice = stage.slices[slot as usize];
    // Per target slot (and one more for targets outside the stage), per target side.
    let empty = || vec![[Vec::new(), Vec::new()]; n + 1];
    let chunks = targets_by_chunk(
        game,
        slot_of,
        slice,
        ply,
        frontier,
        clocks,
        |side| (side.other().index(), empty()),
        |(target, out), t, to_key, _| out[t.min(n as u32) as usize][*target].push(to_key),
    );
    let per_target = chunks.into_iter().fold(empty(), |mut all, (_, chunk)| {
        for (x, y) in all.iter_mut().zip(chunk) {
            for side in 0..2 {
                x[side].extend(&y[side]);
            }
        }
        all
    });
    if per_target[n].iter().any(|keys| !keys.is_empty()) {
        return Err(KernelError::Contract {
            stage: stage.name.clone(),
            what: format!("an un-move from {} leaves the stage", slice.0),
        });
    }
    Ok(per_target
        .into_iter()
        .take(n)
        .enumerate()
        .filter(|(_, keys)| keys.iter().any(|k| !k.is_empty()))
        .map(|(to, mut keys)| {
            for k in &mut keys {
                // A radix sort: comparison sorting was a tenth of a split stage's time.
                radsort::sort(k);
                if ply % 2 == 1 {
                    // A claim is applied once whoever sends it.
                    k.dedup();
                }
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
/// reached zero are draws.
pub fn finish<G: Game>(game: &G, stage: &Stage, slot: u32, state: SlotState) -> SolvedSlice {
    let roles = SideRoles::of(game);
    let slice = stage.slices[slot as usize];
    for side in Side::BOTH {
        if roles.counted[side.index()] {
            finish_section(state.section(side, &roles), game.slice_len(slice));
        }
    }
    SolvedSlice {
        slice,
        values: state.values,
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
    let states = drive_steps(
        stage.slices.len() as u32,
        |ply| is_double(game, ply),
        |slot| first_step(game, stage, slot, finals),
        |slot, ply, state, incoming, dated| step(game, stage, slot, ply, state, incoming, dated),
    )?;
    Ok(states
        .into_iter()
        .enumerate()
        .map(|(slot, state)| finish(game, stage, slot as u32, state))
        .collect())
}

/// The key lists of `messages` addressed to `slot` (of any ply), per side to move.
fn addressed_to(messages: &[Message], slot: u32) -> Vec<(Side, &[u64])> {
    messages
        .iter()
        .filter(|m| m.to == slot)
        .flat_map(|m| Side::BOTH.map(|side| (side, &m.keys[side.index()][..])))
        .filter(|(_, keys)| !keys.is_empty())
        .collect()
}

/// The superstep protocol of one stage of `slots` slots in this process: every slot's first
/// step, then ply after ply each slot's step with the messages of the ply before addressed to
/// it (and, for a double step — `double(ply)` — those of its own ply), until no message is
/// left; returns the slots' final states (to be finished). The one place, besides the
/// coordinator's barrier, that moves steps; shared by the solvers whose stages can be split.
pub fn drive_steps(
    slots: u32,
    double: impl Fn(u32) -> bool,
    first: impl Fn(u32) -> Result<(SlotState, StepOutput), KernelError>,
    step: impl Fn(
        u32,
        u32,
        &SlotState,
        &[(Side, &[u64])],
        &[(Side, &[u64])],
    ) -> Result<StepOutput, KernelError>,
) -> Result<Vec<SlotState>, KernelError> {
    let mut states = Vec::new();
    let mut mail: Vec<Message> = Vec::new();
    for slot in 0..slots {
        let (state, out) = first(slot)?;
        states.push(state);
        mail.extend(out.messages);
    }
    let mut ply = 1;
    while mail.iter().any(|m| m.ply >= ply) {
        let (now, later): (Vec<Message>, Vec<Message>) =
            mail.into_iter().partition(|m| m.ply == ply);
        mail = later;
        ply += 1;
        // A double step applies the messages of its own ply too: its exits.
        let (dated, later): (Vec<Message>, Vec<Message>) = if double(ply) {
            mail.into_iter()
                .partition(|m| m.ply == ply && now.iter().any(|n| n.to == m.to && !n.is_empty()))
        } else {
            (Vec::new(), mail)
        };
        mail = later;
        for slot in 0..slots {
            let incoming = addressed_to(&now, slot);
            if incoming.is_empty() {
                continue;
            }
            let out = step(
                slot,
                ply,
                &states[slot as usize],
                &incoming,
                &addressed_to(&dated, slot),
            )?;
            mail.extend(out.messages);
        }
    }
    Ok(states)
}
