//! Score-margin games: the value of a position is the best score margin the side to move can
//! force over the rest of the game (what it will still gain minus what its opponent will), with
//! endless play counting 0 — the value sowing games need.
//!
//! **How they are solved: one win/draw/loss game per threshold.** For a threshold `t >= 1`,
//! call a position *won at `t`* when the side to move can force a margin of at least `t` (in
//! finitely many moves: endless play counts 0 < t) and *lost at `t`* when the opponent can force
//! it to at most `-t`. Thresholding commutes with max and min, so "won at `t`" is exactly the
//! win of a win/draw/loss game in which a move's result is thresholded: an exit into an earlier
//! stage with gain `g` to a position of margin `v` (opponent to move) is worth `g - v` to the
//! mover, a win if `g - v >= t`, a loss if `g - v <= -t`, a draw otherwise; a position without a
//! move ends the game with the game's final margin, thresholded the same way. Out of core each
//! threshold is solved by the win/draw/loss kernel ([`crate::kernel::solve_stage`], pushing
//! or, for games without un-moves, pulling), and
//!
//! ```text
//! margin = #{t in 1..=bound : won at t} - #{t in 1..=bound : lost at t}
//! ```
//!
//! because a margin `m > 0` is won at exactly `t = 1..=m` and never lost, and symmetrically.
//! Moves inside a stage must gain nothing (in sowing games a capture removes stones, so it
//! leaves the stage); gains come with exits and game ends.
//!
//! In memory, [`crate::margin_graph`] settles every threshold in one pass over the stage's
//! reversed moves (the sets only grow as `t` falls). Out of core, the cost is `bound` kernel
//! runs per stage (`bound`: the most a side can still gain, e.g. the stones in play);
//! distances are computed by each run and dropped. Either way a margin game stores one signed
//! byte per position and side.

use crate::atomic::ByteArray;
use crate::game::{Game, Move, Side, SliceId, Stage};
use crate::kernel::{solve_stage, KernelError, NoFinals, PlyReport, StageTimes};
use crate::meter::SliceCost;
use crate::value::Value;
use crate::workspace::Workspace;
use std::ops::Range;

/// A margin from the side to move's point of view, stored as one signed byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Margin(pub i8);

impl Margin {
    /// Marks a slot whose position is a symmetric duplicate of a canonical one.
    pub const NON_CANONICAL: Margin = Margin(i8::MIN);
    /// The largest margin a byte holds.
    pub const MAX: i32 = i8::MAX as i32;
}

/// A game scored by margins, on top of the positions of [`Game`]. Its [`Game::moves`] are not
/// used by the margin solver (only [`ScoreGame::scored_moves`] are); [`Game::unmoves`] and
/// [`Game::has_unmoves`] are, for the in-stage moves.
pub trait ScoreGame: Game {
    /// The most either side can still gain from a position of `stage` (e.g. the stones in
    /// play): every margin lies in `-bound..=bound`. At most [`Margin::MAX`].
    fn margin_bound(&self, stage: &Stage) -> i32;

    /// Every move of `side` from `(slice, key)` with what the mover gains by it. In-stage moves
    /// must gain 0; exits ([`Move::Final`]) carry their gain (a capture's stones); a move that
    /// ends the game is [`Move::Known`] (its value ignored) with the mover's final gain.
    fn scored_moves(&self, side: Side, slice: SliceId, key: u64, visit: impl FnMut(Move, i32));

    /// The margin of a position whose side to move has no move (the game ends). Default: 0.
    fn final_margin(&self, side: Side, slice: SliceId, key: u64) -> i32 {
        let _ = (side, slice, key);
        0
    }
}

/// Margins of final, earlier stages.
pub trait FinalMargins: Sync {
    /// The margin at `index` of `slice` (a finished stage) with `side` to move.
    fn margin(&self, side: Side, slice: SliceId, index: u64) -> Margin;

    /// What could not be read, if anything (as [`FinalValues::failure`]): checked when a stage
    /// is solved, before its margins are returned.
    fn failure(&self) -> Option<String> {
        None
    }
}

/// The solved margins of one slice.
#[derive(Debug, PartialEq, Eq)]
pub struct MarginSlice {
    /// Which slice.
    pub slice: SliceId,
    /// Per side to move ([`Side::index`]), one `i8` per index as a byte.
    pub margins: [ByteArray; 2],
}

/// The win/draw/loss game of a score game at threshold `t`: see the module documentation.
pub(crate) struct AtThreshold<'a, G, F> {
    pub(crate) game: &'a G,
    pub(crate) finals: &'a F,
    pub(crate) t: i32,
}

/// A move as the thresholded games see it: in the stage, or decided by a number (the margin it
/// is worth to the mover: an exit's gain minus the final margin it reaches, a game end's gain,
/// or the final margin of a position without a move).
#[derive(Clone, Copy, Debug)]
pub(crate) enum ScoredMove {
    InStage(SliceId, u64),
    Decided(i32),
}

/// The moves of `(side, slice, key)` as [`ScoredMove`]s: exits and game ends decided by what
/// they are worth to the mover, no move at all by the final margin.
pub(crate) fn scored<G: ScoreGame, F: FinalMargins>(
    game: &G,
    finals: &F,
    side: Side,
    slice: SliceId,
    key: u64,
    mut visit: impl FnMut(ScoredMove),
) {
    let mut any = false;
    game.scored_moves(side, slice, key, |mv, gain| {
        any = true;
        visit(match mv {
            // In-stage moves gain nothing (checked by `solve_margin_stage`'s recurrence test in
            // the toys; a gain here would be lost).
            Move::InStage(s, k) => ScoredMove::InStage(s, k),
            Move::Final(to, to_key) => {
                let v = finals.margin(side.other(), to, game.index(to, to_key));
                ScoredMove::Decided(gain - i32::from(v.0))
            }
            // The game ends with this move, the mover gaining `gain`.
            Move::Known(_) => ScoredMove::Decided(gain),
        });
    });
    if !any {
        visit(ScoredMove::Decided(game.final_margin(side, slice, key)));
    }
}

impl<G: ScoreGame, F: FinalMargins> AtThreshold<'_, G, F> {
    /// The move that stands for a result worth `margin` to the mover: the position it reaches
    /// has, for the opponent, the value of the mover's outcome reversed.
    fn decided(&self, margin: i32) -> Move {
        Move::Known(if margin >= self.t {
            Value::LOST_NOW
        } else if margin <= -self.t {
            Value(2) // the opponent wins at once
        } else {
            Value::DRAW
        })
    }
}

impl<G: ScoreGame, F: FinalMargins> Game for AtThreshold<'_, G, F> {
    fn stages(&self) -> Vec<Stage> {
        self.game.stages()
    }
    fn slice_count(&self) -> usize {
        self.game.slice_count()
    }
    fn slice_len(&self, slice: SliceId) -> u64 {
        self.game.slice_len(slice)
    }
    fn slice_name(&self, slice: SliceId) -> String {
        self.game.slice_name(slice)
    }
    fn for_each_key(&self, slice: SliceId, range: Range<u64>, visit: impl FnMut(u64, u64)) {
        self.game.for_each_key(slice, range, visit)
    }
    fn index(&self, slice: SliceId, key: u64) -> u64 {
        self.game.index(slice, key)
    }
    fn key(&self, slice: SliceId, index: u64) -> u64 {
        self.game.key(slice, index)
    }
    fn is_canonical(&self, slice: SliceId, key: u64) -> bool {
        self.game.is_canonical(slice, key)
    }
    fn has_unmoves(&self) -> bool {
        self.game.has_unmoves()
    }

    fn moves(&self, side: Side, slice: SliceId, key: u64, mut visit: impl FnMut(Move)) {
        let visit_scored = |m: ScoredMove| match m {
            ScoredMove::InStage(s, k) => visit(Move::InStage(s, k)),
            ScoredMove::Decided(margin) => visit(self.decided(margin)),
        };
        scored(self.game, self.finals, side, slice, key, visit_scored);
    }

    fn unmoves(&self, side: Side, slice: SliceId, key: u64, visit: impl FnMut(SliceId, u64, u64)) {
        self.game.unmoves(side, slice, key, visit)
    }
}

/// Solves the margins of `stage` of `game`, reading earlier stages through `finals`, with the
/// data where `space` says: in memory in one pass ([`crate::margin_graph`]; `on_ply` hears each
/// threshold as a ply), out of core (or when the stage's graph does not fit 32-bit numbers)
/// one win/draw/loss run per threshold (`on_ply` hears every ply of every run; the times
/// returned are those of all runs together).
pub fn solve_margin_stage<G: ScoreGame, F: FinalMargins>(
    game: &G,
    stage: &Stage,
    finals: &F,
    space: &Workspace,
    on_ply: impl FnMut(PlyReport),
) -> Result<(Vec<MarginSlice>, StageTimes), KernelError> {
    let solved = solve_margins(game, stage, finals, space, on_ply)?;
    crate::kernel::input_failure(stage, finals.failure())?;
    Ok(solved)
}

/// [`solve_margin_stage`] before the check that every final margin could be read.
fn solve_margins<G: ScoreGame, F: FinalMargins>(
    game: &G,
    stage: &Stage,
    finals: &F,
    space: &Workspace,
    mut on_ply: impl FnMut(PlyReport),
) -> Result<(Vec<MarginSlice>, StageTimes), KernelError> {
    let bound = game.margin_bound(stage);
    if !(0..=Margin::MAX).contains(&bound) {
        return Err(KernelError::Contract {
            stage: stage.name.clone(),
            what: format!("margin bound {bound} is outside 0..={}", Margin::MAX),
        });
    }
    if space.scratch().is_none() {
        if let Some(solved) =
            crate::margin_graph::solve_in_memory(game, stage, finals, bound, &mut on_ply)?
        {
            return Ok(solved);
        }
    }
    let mut margins: Vec<[Vec<i32>; 2]> = stage
        .slices
        .iter()
        .map(|&s| {
            let n = game.slice_len(s) as usize;
            [vec![0; n], vec![0; n]]
        })
        .collect();
    let mut canonical: Vec<Vec<bool>> = Vec::new();
    let mut times = StageTimes {
        slices: vec![SliceCost::default(); stage.slices.len()],
        ..StageTimes::default()
    };
    // One stage, one kernel run per threshold: a checkpoint of one run is no state of another.
    let space = &space.without_checkpoints();
    for t in 1..=bound {
        let at = AtThreshold { game, finals, t };
        let (solved, run) = solve_stage(&at, stage, &NoFinals, space, &mut on_ply)?;
        times.add(&run);
        for (slot, s) in solved.iter().enumerate() {
            for side in Side::BOTH {
                let m = &mut margins[slot][side.index()];
                for (i, &v) in s.values[side.index()].iter().enumerate() {
                    match Value(v).outcome() {
                        Some(crate::Outcome::Win { .. }) => m[i] += 1,
                        Some(crate::Outcome::Loss { .. }) => m[i] -= 1,
                        _ => {}
                    }
                }
            }
            if canonical.len() <= slot {
                canonical.push(
                    s.values[0]
                        .iter()
                        .map(|&v| v != Value::NON_CANONICAL.0)
                        .collect(),
                );
            }
        }
    }
    let solved = stage
        .slices
        .iter()
        .zip(margins)
        .enumerate()
        .map(|(slot, (&slice, per_side))| {
            let n = game.slice_len(slice) as usize;
            let margins = per_side.map(|m| {
                let mut bytes = ByteArray::zeroed(n);
                for (i, &v) in m.iter().enumerate() {
                    let is_canonical = match canonical.get(slot) {
                        Some(c) => c[i],
                        None => game.is_canonical(slice, game.key(slice, i as u64)),
                    };
                    bytes[i] = if is_canonical {
                        v as i8 as u8
                    } else {
                        Margin::NON_CANONICAL.0 as u8
                    };
                }
                bytes
            });
            MarginSlice { slice, margins }
        })
        .collect();
    Ok((solved, times))
}

/// The margin the local recurrence gives `(side, slice, key)`, reading successors' margins
/// through `margin_of`: the best of `gain - successor`, or the final margin without a move.
/// Every solved table satisfies it; it does not by itself decide endless play (a cycle could
/// satisfy it with other values), which the solver settles as 0.
pub fn recurrence<G: ScoreGame, E>(
    game: &G,
    side: Side,
    slice: SliceId,
    key: u64,
    mut margin_of: impl FnMut(SliceId, u64) -> Result<Margin, E>,
) -> Result<i32, E> {
    let mut moves = Vec::new();
    game.scored_moves(side, slice, key, |mv, gain| moves.push((mv, gain)));
    if moves.is_empty() {
        return Ok(game.final_margin(side, slice, key));
    }
    let mut best = i32::MIN;
    for (mv, gain) in moves {
        let v = match mv {
            Move::InStage(s, k) | Move::Final(s, k) => gain - i32::from(margin_of(s, k)?.0),
            Move::Known(_) => gain,
        };
        best = best.max(v);
    }
    Ok(best)
}
