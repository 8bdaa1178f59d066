//! Score-margin stages in supersteps: every threshold at once, as one win/draw/loss game.
//!
//! [`crate::margin`] solves a stage by one kernel run per threshold `t = 1..=bound`. A split
//! stage cannot run its thresholds one after another (the coordinator's barrier knows plies,
//! not rounds), so here they run side by side: [`AllThresholds`] is the win/draw/loss game
//! whose slice `s` holds `bound` copies of the score game's slice `s`, copy `t - 1` being the
//! thresholded game at `t` (the same moves, exits and game ends decided at `t`). Its key is
//! the score game's key with `t - 1` in bits 48 and up, its index `(t - 1) · len + index`.
//! Moves never change the threshold, so the copies are independent games sharing one
//! superstep protocol; [`finish`] folds a slot's copies into margins exactly as
//! [`crate::margin::solve_margin_stage`] does (thresholds won minus thresholds lost), so a split
//! stage's tables are byte-identical to a whole one's.
//!
//! A slot's state is `bound` times a slice's: the price of splitting a score stage. Score games
//! split this way need keys below 2^48 (checked).

use crate::atomic::ByteArray;
use crate::game::{Game, Move, Side, SliceId, Stage};
use crate::kernel::NoFinals;
use crate::kernel::{KernelError, SolvedSlice};
use crate::margin::{AtThreshold, FinalMargins, Margin, MarginSlice, ScoreGame};
use crate::superstep::{self, SlotState, StepOutput};
use crate::value::{Outcome, Value};
use std::ops::Range;

/// Where the threshold sits in a key of [`AllThresholds`].
const TAG_SHIFT: u32 = 48;
/// The score game's key within a key of [`AllThresholds`].
const KEY_MASK: u64 = (1 << TAG_SHIFT) - 1;

/// The thresholds `1..=bound` of a score game side by side: see the module documentation.
struct AllThresholds<'a, G, F> {
    game: &'a G,
    finals: &'a F,
    bound: u64,
}

impl<G: ScoreGame, F: FinalMargins> AllThresholds<'_, G, F> {
    /// `(copy, score game key)` of a key.
    #[inline]
    fn split(key: u64) -> (u64, u64) {
        (key >> TAG_SHIFT, key & KEY_MASK)
    }
}

impl<G: ScoreGame, F: FinalMargins> Game for AllThresholds<'_, G, F> {
    fn stages(&self) -> Vec<Stage> {
        self.game.stages()
    }
    fn slice_count(&self) -> usize {
        self.game.slice_count()
    }
    fn slice_len(&self, slice: SliceId) -> u64 {
        self.game.slice_len(slice) * self.bound
    }
    fn slice_name(&self, slice: SliceId) -> String {
        self.game.slice_name(slice)
    }
    fn for_each_key(&self, slice: SliceId, range: Range<u64>, mut visit: impl FnMut(u64, u64)) {
        let len = self.game.slice_len(slice);
        for copy in 0..self.bound {
            let (lo, hi) = (copy * len, (copy + 1) * len);
            let (start, end) = (range.start.max(lo), range.end.min(hi));
            if start < end {
                self.game
                    .for_each_key(slice, start - lo..end - lo, |index, key| {
                        visit(lo + index, key | copy << TAG_SHIFT)
                    });
            }
        }
    }
    fn index(&self, slice: SliceId, key: u64) -> u64 {
        let (copy, key) = Self::split(key);
        copy * self.game.slice_len(slice) + self.game.index(slice, key)
    }
    fn key(&self, slice: SliceId, index: u64) -> u64 {
        let len = self.game.slice_len(slice);
        self.game.key(slice, index % len) | (index / len) << TAG_SHIFT
    }
    fn is_canonical(&self, slice: SliceId, key: u64) -> bool {
        self.game.is_canonical(slice, key & KEY_MASK)
    }
    fn has_unmoves(&self) -> bool {
        self.game.has_unmoves()
    }
    fn moves(&self, side: Side, slice: SliceId, key: u64, mut visit: impl FnMut(Move)) {
        let (copy, key) = Self::split(key);
        let at = AtThreshold {
            game: self.game,
            finals: self.finals,
            t: copy as i32 + 1,
        };
        at.moves(side, slice, key, |mv| {
            visit(match mv {
                Move::InStage(s, k) => Move::InStage(s, k | copy << TAG_SHIFT),
                other => other,
            })
        });
    }
    fn unmoves(
        &self,
        side: Side,
        slice: SliceId,
        key: u64,
        mut visit: impl FnMut(SliceId, u64, u64),
    ) {
        let (copy, key) = Self::split(key);
        self.game.unmoves(side, slice, key, |s, k, index| {
            visit(
                s,
                k | copy << TAG_SHIFT,
                copy * self.game.slice_len(s) + index,
            )
        });
    }
}

/// No margins: a step after the first reads none (only the first step sweeps exits).
struct NoMargins;

impl FinalMargins for NoMargins {
    fn margin(&self, _: Side, _: SliceId, _: u64) -> Margin {
        unreachable!("only the first step of a split score stage reads earlier stages")
    }
}

/// The margin bound of `stage`, checked as [`crate::margin::solve_margin_stage`] checks it.
fn bound<G: ScoreGame>(game: &G, stage: &Stage) -> Result<u64, KernelError> {
    let bound = game.margin_bound(stage);
    if !(0..=Margin::MAX).contains(&bound) {
        return Err(KernelError::Contract {
            stage: stage.name.clone(),
            what: format!("margin bound {bound} is outside 0..={}", Margin::MAX),
        });
    }
    Ok(bound as u64)
}

/// Slots of a slot's state: the slice's length times the stage's margin bound.
pub fn state_len<G: ScoreGame>(
    game: &G,
    stage: &Stage,
    slice: SliceId,
) -> Result<u64, KernelError> {
    Ok(game.slice_len(slice) * bound(game, stage)?)
}

/// The first step of slot `slot` of a score stage ([`superstep::first_step`] of every threshold
/// at once), reading earlier stages' margins through `finals`.
pub fn first_step<G: ScoreGame, F: FinalMargins>(
    game: &G,
    stage: &Stage,
    slot: u32,
    finals: &F,
) -> Result<(SlotState, StepOutput), KernelError> {
    let slice = stage.slices[slot as usize];
    let mut too_large = None;
    game.for_each_key(slice, 0..game.slice_len(slice), |_, key| {
        if key > KEY_MASK {
            too_large.get_or_insert(key);
        }
    });
    if let Some(key) = too_large {
        return Err(KernelError::Contract {
            stage: stage.name.clone(),
            what: format!("key {key:#x} does not fit 48 bits, so the stage cannot be split"),
        });
    }
    let all = AllThresholds {
        game,
        finals,
        bound: bound(game, stage)?,
    };
    let first = superstep::first_step(&all, stage, slot, &NoFinals)?;
    crate::kernel::input_failure(stage, finals.failure())?;
    Ok(first)
}

/// Whether step `ply` of a score stage is a double step ([`superstep::is_double`]): never,
/// since [`AllThresholds`] keeps the default [`Game::claims_stay_in_slice`] (a score game's
/// claims travel as messages).
pub fn is_double(ply: u32) -> bool {
    let _ = ply;
    false
}

/// A later step of slot `slot` of a score stage ([`superstep::step`] of every threshold).
pub fn step<G: ScoreGame>(
    game: &G,
    stage: &Stage,
    slot: u32,
    ply: u32,
    state: &SlotState,
    incoming: &[(Side, &[u64])],
    dated: &[(Side, &[u64])],
) -> Result<StepOutput, KernelError> {
    let all = AllThresholds {
        game,
        finals: &NoMargins,
        bound: bound(game, stage)?,
    };
    superstep::step(&all, stage, slot, ply, state, incoming, dated)
}

/// The margins of slot `slot` once its stage is done: each threshold's outcome folded in.
pub fn finish<G: ScoreGame>(
    game: &G,
    stage: &Stage,
    slot: u32,
    state: SlotState,
) -> Result<MarginSlice, KernelError> {
    let bound = bound(game, stage)?;
    let all = AllThresholds {
        game,
        finals: &NoMargins,
        bound,
    };
    let SolvedSlice { slice, values } = superstep::finish(&all, stage, slot, state);
    let len = game.slice_len(slice) as usize;
    let margins = values.map(|copies| {
        let mut margins = ByteArray::zeroed(len);
        for i in 0..len {
            margins[i] = if game.is_canonical(slice, game.key(slice, i as u64)) {
                let mut m = 0i32;
                for copy in 0..bound as usize {
                    match Value(copies[copy * len + i]).outcome() {
                        Some(Outcome::Win { .. }) => m += 1,
                        Some(Outcome::Loss { .. }) => m -= 1,
                        _ => {}
                    }
                }
                m as i8 as u8
            } else {
                Margin::NON_CANONICAL.0 as u8
            };
        }
        margins
    });
    Ok(MarginSlice { slice, margins })
}

/// Solves a score stage by supersteps in this process, as a cluster would with one task per
/// (slot, ply): the reference the split score stages are tested against.
pub fn solve_stage_by_steps<G: ScoreGame, F: FinalMargins>(
    game: &G,
    stage: &Stage,
    finals: &F,
) -> Result<Vec<MarginSlice>, KernelError> {
    let states = superstep::drive_steps(
        stage.slices.len() as u32,
        is_double,
        |slot| first_step(game, stage, slot, finals),
        |slot, ply, state, incoming, dated| step(game, stage, slot, ply, state, incoming, dated),
    )?;
    states
        .into_iter()
        .enumerate()
        .map(|(slot, state)| finish(game, stage, slot as u32, state))
        .collect()
}
