//! Score-margin stages in memory, every threshold in one pass over the stage's reversed moves.
//!
//! [`crate::margin`] defines the thresholds: a position is *won at `t`* when the side to move
//! can force a margin of at least `t`, *lost at `t`* when the opponent can force at most `-t`,
//! and its margin is the number of thresholds won minus the number lost. Two facts make one
//! pass enough:
//!
//! * **The sets only grow as `t` falls.** A move that is good for the mover at `t` (a decided
//!   result `>= t`, or a successor lost at `t`) is good at `t - 1`; a move that is bad at `t`
//!   (a decided result `<= -t`, or a successor won at `t`) is bad at `t - 1`. So solving
//!   `t = bound, bound - 1, ..., 1` in turn never takes anything back: a position's counter of
//!   moves not yet bad only goes down, and a position won (lost) at `t` stays won (lost).
//! * **A position's margin is where it first enters a set**: won first at `t` means margin `t`
//!   (won at exactly `1..=t`), lost first at `t` means `-t`, never decided means 0 (endless
//!   play, or no threshold reached) — the same number the threshold runs add up, clamped to the
//!   bound in the same way.
//!
//! So every in-stage move is looked at once over all thresholds, where the threshold solver
//! runs `bound` win/draw/loss kernels, each re-reading every move of every undecided position
//! in every ply of a game without un-moves. The price is the reversed move graph: relay sowing
//! has no practical un-move, so the stage's in-stage moves are generated (twice: counted, then
//! placed) and stored reversed, each predecessor a `u32` position number in one array, per
//! position an offset into it. Decided moves (exits, game ends, no move) are folded into one
//! number per position: the best of them, which wins the position at its level if positive, or
//! is the last of its moves to turn bad (at level `-best`) if negative.
//!
//! In memory only (`bound` threshold runs of the kernel remain for stages out of core and in
//! supersteps, and [`solve_in_memory`] hands a stage back to them when its graph does not fit
//! 32-bit numbers). Memory: 7 bytes per position and side plus 4 per in-stage move
//! ([`graph_bytes`]).

use crate::atomic::ByteArray;
use crate::game::{Game, Side, SliceId, Stage};
use crate::kernel::{KernelError, PlyReport, StageTimes};
use crate::margin::{scored, FinalMargins, Margin, MarginSlice, ScoreGame, ScoredMove};
use crate::meter::{BatchStart, SliceCost, SlotClocks};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Positions per parallel task when generating moves.
const CHUNK: u64 = 1 << 12;
/// Positions per parallel task when scanning for a level's decided moves.
const SCAN_CHUNK: usize = 1 << 16;
/// Frontier entries per parallel task when propagating.
const FRONTIER_CHUNK: usize = 1 << 12;

/// Bytes the one-pass solver holds for a stage of `positions` (both sides) and `moves`
/// in-stage moves: margin, counter and decided level (a byte each), an offset (4 bytes) per
/// position, a predecessor (4 bytes) per move.
pub fn graph_bytes(positions: u64, moves: u64) -> u64 {
    7 * positions + 4 * moves
}

/// How a stage's positions are numbered: the first side's positions slice after slice, then
/// the second side's.
struct Numbering {
    /// Slot of each slice id in the stage (`u32::MAX`: not in it).
    slot_of: Vec<u32>,
    /// Per slot, the number of its first position (first side).
    bases: Vec<u64>,
    /// Positions per side.
    per_side: u64,
}

impl Numbering {
    fn new<G: Game>(game: &G, stage: &Stage) -> Numbering {
        let mut slot_of = vec![u32::MAX; game.slice_count()];
        let mut bases = Vec::with_capacity(stage.slices.len());
        let mut per_side = 0;
        for (slot, &slice) in stage.slices.iter().enumerate() {
            slot_of[slice.0 as usize] = slot as u32;
            bases.push(per_side);
            per_side += game.slice_len(slice);
        }
        Numbering {
            slot_of,
            bases,
            per_side,
        }
    }

    #[inline]
    fn number(&self, side: Side, slot: usize, index: u64) -> u64 {
        side.index() as u64 * self.per_side + self.bases[slot] + index
    }
}

/// One parallel task of a generating pass: a range of one slot's positions with one side to
/// move.
#[derive(Clone, Copy)]
struct Task {
    slot: usize,
    side: Side,
    start: u64,
    end: u64,
}

fn tasks<G: Game>(game: &G, stage: &Stage) -> Vec<Task> {
    let mut all = Vec::new();
    for (slot, &slice) in stage.slices.iter().enumerate() {
        let len = game.slice_len(slice);
        for side in Side::BOTH {
            for c in 0..len.div_ceil(CHUNK) {
                all.push(Task {
                    slot,
                    side,
                    start: c * CHUNK,
                    end: ((c + 1) * CHUNK).min(len),
                });
            }
        }
    }
    all
}

/// The stage's state while it is solved: see the module documentation.
struct Graph<'a> {
    /// Per position: 0 while undecided, else its margin as an `i8`.
    margins: &'a [AtomicU8],
    /// Per position: moves not yet known to be bad for the mover; 0 if it cannot lose.
    counters: &'a [AtomicU8],
    /// Per position, after placing: where its predecessors start in `preds` (one more entry
    /// than positions: the last is the number of moves).
    starts: &'a [AtomicU32],
    /// Predecessors, position after position.
    preds: &'a [AtomicU32],
}

impl Graph<'_> {
    /// Marks undecided position `p` won at `t`; true if this call did.
    #[inline]
    fn claim(&self, p: usize, t: i32) -> bool {
        self.margins[p]
            .compare_exchange(0, t as i8 as u8, Relaxed, Relaxed)
            .is_ok()
    }

    /// One more of `p`'s moves is bad at `t`: true if that was its last, so that this call
    /// marked it lost at `t`.
    #[inline]
    fn decrement(&self, p: usize, t: i32) -> bool {
        if self.margins[p].load(Relaxed) != 0 || self.counters[p].load(Relaxed) == 0 {
            return false;
        }
        self.counters[p].fetch_sub(1, Relaxed) == 1
            && self.margins[p]
                .compare_exchange(0, (-t) as i8 as u8, Relaxed, Relaxed)
                .is_ok()
    }

    /// The predecessors of `p`.
    #[inline]
    fn preds_of(&self, p: usize) -> &[AtomicU32] {
        let (a, b) = (
            self.starts[p].load(Relaxed),
            self.starts[p + 1].load(Relaxed),
        );
        &self.preds[a as usize..b as usize]
    }
}

/// Solves `stage` of `game` in memory in one pass, or returns `None` when its graph does not
/// fit the 32-bit numbers (more than `u32::MAX` positions or moves, or more than 255 moves of
/// one position): the caller then runs the thresholds one by one.
pub(crate) fn solve_in_memory<G: ScoreGame, F: FinalMargins>(
    game: &G,
    stage: &Stage,
    finals: &F,
    bound: i32,
    on_ply: &mut impl FnMut(PlyReport),
) -> Result<Option<(Vec<MarginSlice>, StageTimes)>, KernelError> {
    let numbering = Numbering::new(game, stage);
    let positions = 2 * numbering.per_side;
    if positions >= u64::from(u32::MAX) {
        return Ok(None);
    }
    let n = positions as usize;
    let lens: Vec<u64> = stage.slices.iter().map(|&s| game.slice_len(s)).collect();
    let clocks = SlotClocks::new(stage.slices.len());
    let mut costs = vec![SliceCost::default(); stage.slices.len()];
    let started = Instant::now();
    let batch = BatchStart::now();

    let margin_bytes = ByteArray::zeroed(n);
    let counter_bytes = ByteArray::zeroed(n);
    let level_bytes = ByteArray::zeroed(n);
    let start_bytes = ByteArray::zeroed(4 * (n + 1));
    let levels = level_bytes.atomics();
    let starts = start_bytes.atomic_u32s();

    // Pass 1: counters, decided levels, and how many predecessors each position has.
    let problem: Mutex<Option<String>> = Mutex::new(None);
    let too_many_moves = AtomicBool::new(false);
    let work = tasks(game, stage);
    let target = |side: Side, s: SliceId, k: u64| -> Result<usize, String> {
        match numbering.slot_of.get(s.0 as usize) {
            Some(&slot) if slot != u32::MAX => {
                Ok(numbering.number(side.other(), slot as usize, game.index(s, k)) as usize)
            }
            _ => Err(format!("a move to {s:?} leaves the stage")),
        }
    };
    work.par_iter().for_each(|task| {
        clocks.time(task.slot, || {
            let slice = stage.slices[task.slot];
            let margins = margin_bytes.atomics();
            let counters = counter_bytes.atomics();
            game.for_each_key(slice, task.start..task.end, |index, key| {
                let p = numbering.number(task.side, task.slot, index) as usize;
                if !game.is_canonical(slice, key) {
                    margins[p].store(Margin::NON_CANONICAL.0 as u8, Relaxed);
                    return;
                }
                let mut in_stage = 0u32;
                let mut best: Option<i32> = None;
                scored(game, finals, task.side, slice, key, |m| match m {
                    ScoredMove::InStage(s, k) => {
                        in_stage += 1;
                        match target(task.side, s, k) {
                            Ok(q) => {
                                starts[q].fetch_add(1, Relaxed);
                            }
                            Err(what) => *problem.lock().unwrap() = Some(what),
                        }
                    }
                    ScoredMove::Decided(v) => best = Some(best.map_or(v, |b| b.max(v))),
                });
                let counter = match best {
                    Some(b) if b >= 0 => 0,
                    _ => in_stage + u32::from(best.is_some()),
                };
                if counter > u32::from(u8::MAX) {
                    too_many_moves.store(true, Relaxed);
                }
                counters[p].store(counter as u8, Relaxed);
                let level = best.unwrap_or(0).clamp(-bound, bound);
                levels[p].store(level as i8 as u8, Relaxed);
            });
        })
    });
    if let Some(what) = problem.into_inner().unwrap() {
        return Err(KernelError::Contract {
            stage: stage.name.clone(),
            what,
        });
    }
    if too_many_moves.load(Relaxed) {
        return Ok(None);
    }
    // Counts to ends: `starts[q]` becomes the end of q's predecessors; placing moves each end
    // back to its start.
    let mut moves: u64 = 0;
    for s in &starts[..n] {
        moves += u64::from(s.load(Relaxed));
        if moves > u64::from(u32::MAX) {
            return Ok(None);
        }
        s.store(moves as u32, Relaxed);
    }
    starts[n].store(moves as u32, Relaxed);

    // Pass 2: place every in-stage move as a predecessor of its target.
    let pred_bytes = ByteArray::zeroed(4 * moves as usize);
    let preds = pred_bytes.atomic_u32s();
    work.par_iter().for_each(|task| {
        clocks.time(task.slot, || {
            let slice = stage.slices[task.slot];
            let margins = margin_bytes.atomics();
            game.for_each_key(slice, task.start..task.end, |index, key| {
                let p = numbering.number(task.side, task.slot, index);
                if margins[p as usize].load(Relaxed) == Margin::NON_CANONICAL.0 as u8 {
                    return;
                }
                scored(game, finals, task.side, slice, key, |m| {
                    if let ScoredMove::InStage(s, k) = m {
                        if let Ok(q) = target(task.side, s, k) {
                            let at = starts[q].fetch_sub(1, Relaxed) - 1;
                            preds[at as usize].store(p as u32, Relaxed);
                        }
                    }
                });
            });
        })
    });
    drop(work);
    let built = started.elapsed();

    // The levels, from the bound down.
    let graph = Graph {
        margins: margin_bytes.atomics(),
        counters: counter_bytes.atomics(),
        starts,
        preds,
    };
    let propagating = Instant::now();
    let propagation_cpu = SlotClocks::new(1);
    for t in (1..=bound).rev() {
        // Decided moves reaching this level: the best is a win at `t`, or the last move
        // turning bad at `t`.
        let mut frontier: Vec<u32> = (0..n.div_ceil(SCAN_CHUNK))
            .into_par_iter()
            .flat_map_iter(|c| {
                propagation_cpu.time(0, || {
                    let mut found = Vec::new();
                    let first = c * SCAN_CHUNK;
                    let chunk = &levels[first..(first + SCAN_CHUNK).min(n)];
                    for (p, level) in (first..).zip(chunk) {
                        let level = i32::from(level.load(Relaxed) as i8);
                        if (level == t && graph.claim(p, t))
                            || (level == -t && graph.decrement(p, t))
                        {
                            found.push(p as u32);
                        }
                    }
                    found
                })
            })
            .collect();
        let (mut resolved, mut expanded) = (frontier.len() as u64, 0u64);
        while !frontier.is_empty() {
            expanded += frontier.len() as u64;
            frontier = frontier
                .par_chunks(FRONTIER_CHUNK)
                .flat_map_iter(|chunk| {
                    propagation_cpu.time(0, || {
                        let mut found = Vec::new();
                        for &p in chunk {
                            let won = (graph.margins[p as usize].load(Relaxed) as i8) > 0;
                            for q in graph.preds_of(p as usize) {
                                let q = q.load(Relaxed) as usize;
                                // A successor won at `t` is one more bad move; one lost at
                                // `t` wins its predecessors.
                                let decided = if won {
                                    graph.decrement(q, t)
                                } else {
                                    graph.claim(q, t)
                                };
                                if decided {
                                    found.push(q as u32);
                                }
                            }
                        }
                        found
                    })
                })
                .collect();
            resolved += frontier.len() as u64;
        }
        on_ply(PlyReport {
            ply: (bound - t + 1) as u32,
            resolved,
            expanded,
            ..PlyReport::default()
        });
    }
    let propagated = propagating.elapsed();
    // Charged here, while the graph is resident: the slices' peak memory is the stage's.
    let every_slot: Vec<usize> = (0..costs.len()).collect();
    batch.charge(&mut costs, &every_slot, &lens);
    // Only the margins are left to read: free the rest before the tables are copied out.
    drop((pred_bytes, start_bytes, counter_bytes, level_bytes));

    // Tables: undecided canonical positions are worth 0, which is what their byte holds.
    let solved = stage
        .slices
        .iter()
        .enumerate()
        .map(|(slot, &slice)| {
            let len = lens[slot] as usize;
            let margins = Side::BOTH.map(|side| {
                let from = numbering.number(side, slot, 0) as usize;
                ByteArray::from_slice(&margin_bytes[from..from + len])
            });
            MarginSlice { slice, margins }
        })
        .collect();
    let total: u64 = lens.iter().sum::<u64>().max(1);
    let shared = propagation_cpu.total(0);
    for (slot, cost) in costs.iter_mut().enumerate() {
        let share = shared.as_nanos() * u128::from(lens[slot]) / u128::from(total);
        cost.cpu = clocks.total(slot) + Duration::from_nanos(share as u64);
    }
    let times = StageTimes {
        init: built,
        claim_plies: propagated,
        count_plies: Duration::ZERO,
        slices: costs,
        // Its queue is part of the graph it builds, not a list of the stage kernel's.
        peak_list_keys: 0,
        ..StageTimes::default()
    };
    Ok(Some((solved, times)))
}

/// Positions sampled per stage by [`estimated_bytes`].
const SAMPLES: u64 = 1 << 12;

/// An estimate of what [`solve_in_memory`] holds for `stage`: [`graph_bytes`] with the number
/// of in-stage moves extrapolated from up to 4,096 positions spread evenly over the stage
/// (both sides), plus a tenth for the sample's error. Cheap: it generates the sample's moves
/// only. What the memory planner uses for score games.
pub fn estimated_bytes<G: ScoreGame>(game: &G, stage: &Stage) -> u64 {
    let lens: Vec<u64> = stage.slices.iter().map(|&s| game.slice_len(s)).collect();
    let per_side: u64 = lens.iter().sum();
    if per_side == 0 {
        return 0;
    }
    let stride = per_side.div_ceil(SAMPLES).max(1);
    let (mut sampled, mut moves) = (0u64, 0u64);
    let mut at = 0u64;
    while at < per_side {
        // The slot and index of stage-wide position `at`.
        let (mut slot, mut index) = (0, at);
        while index >= lens[slot] {
            index -= lens[slot];
            slot += 1;
        }
        let slice = stage.slices[slot];
        let key = game.key(slice, index);
        if game.is_canonical(slice, key) {
            for side in Side::BOTH {
                game.scored_moves(side, slice, key, |m, _| {
                    if matches!(m, crate::game::Move::InStage(..)) {
                        moves += 1;
                    }
                });
            }
        }
        sampled += 1;
        at += stride;
    }
    let estimated_moves = (moves as f64 / sampled as f64 * per_side as f64 * 1.1) as u64;
    graph_bytes(2 * per_side, estimated_moves)
}
