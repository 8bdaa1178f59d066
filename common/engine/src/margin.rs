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
//! move ends the game with the game's final margin, thresholded the same way. Each threshold is
//! solved by the win/draw/loss kernel ([`crate::kernel::solve_stage`]: in memory or out of
//! core, pushing or, for games without un-moves, pulling), and
//!
//! ```text
//! margin = #{t in 1..=bound : won at t} - #{t in 1..=bound : lost at t}
//! ```
//!
//! because a margin `m > 0` is won at exactly `t = 1..=m` and never lost, and symmetrically.
//! Moves inside a stage must gain nothing (in sowing games a capture removes stones, so it
//! leaves the stage); gains come with exits and game ends.
//!
//! The cost is `bound` kernel runs per stage (`bound`: the most a side can still gain, e.g. the
//! stones in play). Distances are computed by each run and dropped: a margin game stores one
//! signed byte per position and side.

use crate::atomic::ByteArray;
use crate::game::{Game, Move, Side, SliceId, Stage};
use crate::kernel::{solve_stage, FinalValues, KernelError, PlyReport, StageTimes};
use crate::meter::SliceCost;
use crate::value::Value;
use crate::workspace::Workspace;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

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

    /// The most moves a position has, if the solver should compute a stage's moves once for
    /// all its threshold runs (in memory, up to [`MOVE_CACHE_BYTES`] a stage); 0 (the default)
    /// to regenerate them in every run, for games whose moves are cheap.
    fn max_moves(&self) -> usize {
        0
    }
}

/// Margins of final, earlier stages.
pub trait FinalMargins: Sync {
    /// The margin at `index` of `slice` (a finished stage) with `side` to move.
    fn margin(&self, side: Side, slice: SliceId, index: u64) -> Margin;
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
    /// The stage's moves computed once for every threshold, when they were worth keeping.
    pub(crate) moves: Option<&'a StageMoves>,
}

/// A move as the thresholded games see it: in the stage, or decided by a number (the margin it
/// is worth to the mover: an exit's gain minus the final margin it reaches, a game end's gain,
/// or the final margin of a position without a move).
#[derive(Clone, Copy, Debug)]
pub(crate) enum ScoredMove {
    InStage(SliceId, u64),
    Decided(i32),
}

/// A [`ScoredMove`] in 8 bytes, as the move cache keeps it: a decided move is the top bit and
/// the margin; an in-stage move the slice (15 bits) and the key (48 bits).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PackedMove(u64);

impl PackedMove {
    const DECIDED: u64 = 1 << 63;
    const KEY_BITS: u32 = 48;

    /// The packed move, or `None` if its slice or key does not fit.
    fn pack(m: ScoredMove) -> Option<PackedMove> {
        match m {
            ScoredMove::InStage(s, k) => (s.0 < 1 << 15 && k < 1 << Self::KEY_BITS)
                .then_some(PackedMove(u64::from(s.0) << Self::KEY_BITS | k)),
            ScoredMove::Decided(v) => Some(PackedMove(Self::DECIDED | u64::from(v as u32))),
        }
    }

    #[inline]
    fn unpack(self) -> ScoredMove {
        if self.0 & Self::DECIDED != 0 {
            ScoredMove::Decided(self.0 as u32 as i32)
        } else {
            ScoredMove::InStage(
                SliceId((self.0 >> Self::KEY_BITS) as u32),
                self.0 & ((1 << Self::KEY_BITS) - 1),
            )
        }
    }
}

/// Every position's moves of one stage, computed once and read by all `bound` threshold runs:
/// games whose moves are costly to generate (relay sowing simulates every sowing of a move)
/// then pay for them once per stage instead of once per run and ply. Kept only in memory and
/// only while it is small ([`MOVE_CACHE_BYTES`]); otherwise the runs regenerate moves.
pub(crate) struct StageMoves {
    /// Slot of each slice id in the stage (`u32::MAX`: not in it).
    slot_of: Vec<u32>,
    /// Per slot and side: where each index's moves start in `moves` (one more entry than
    /// indices).
    starts: Vec<[Vec<u32>; 2]>,
    /// Per slot and side: the moves, index after index.
    moves: Vec<[Vec<PackedMove>; 2]>,
}

/// The most bytes the move cache of one stage may take ([`ScoreGame::max_moves`] decides how
/// many a position may need).
pub const MOVE_CACHE_BYTES: u64 = 4 << 30;

impl StageMoves {
    /// The moves of every position of `stage`, if the game asks for a cache and it fits.
    fn build<G: ScoreGame, F: FinalMargins>(
        game: &G,
        stage: &Stage,
        finals: &F,
        space: &Workspace,
    ) -> Option<StageMoves> {
        use rayon::prelude::*;
        let per_position = game.max_moves() as u64;
        if per_position == 0 || space.scratch().is_some() {
            return None;
        }
        let positions: u64 = stage.slices.iter().map(|&s| game.slice_len(s)).sum();
        let bytes = positions * 2 * (per_position * std::mem::size_of::<PackedMove>() as u64 + 4);
        if bytes > MOVE_CACHE_BYTES {
            return None;
        }
        let mut slot_of = vec![u32::MAX; game.slice_count()];
        for (slot, &slice) in stage.slices.iter().enumerate() {
            slot_of[slice.0 as usize] = slot as u32;
        }
        const CHUNK: u64 = 1 << 12;
        let unpackable = AtomicBool::new(false);
        let (mut starts, mut moves) = (Vec::new(), Vec::new());
        for &slice in &stage.slices {
            let len = game.slice_len(slice);
            let per_side = Side::BOTH.map(|side| {
                let chunks: Vec<(Vec<u32>, Vec<PackedMove>)> =
                    (0..len.div_ceil(CHUNK))
                        .into_par_iter()
                        .map(|c| {
                            let range = c * CHUNK..((c + 1) * CHUNK).min(len);
                            let mut counts = Vec::with_capacity((range.end - range.start) as usize);
                            let mut list = Vec::new();
                            game.for_each_key(slice, range, |_, key| {
                                let before = list.len();
                                if game.is_canonical(slice, key) {
                                    scored(game, finals, side, slice, key, |m| {
                                        match PackedMove::pack(m) {
                                            Some(p) => list.push(p),
                                            None => unpackable.store(true, Ordering::Relaxed),
                                        }
                                    });
                                }
                                counts.push((list.len() - before) as u32);
                            });
                            (counts, list)
                        })
                        .collect();
                let total: usize = chunks.iter().map(|(_, l)| l.len()).sum();
                let mut start = Vec::with_capacity(len as usize + 1);
                let mut all = Vec::with_capacity(total);
                start.push(0u32);
                for (counts, list) in chunks {
                    for n in counts {
                        start.push(start.last().unwrap() + n);
                    }
                    all.extend(list);
                }
                (start, all)
            });
            let [(s0, m0), (s1, m1)] = per_side;
            if m0.len().max(m1.len()) > u32::MAX as usize || unpackable.load(Ordering::Relaxed) {
                return None;
            }
            starts.push([s0, s1]);
            moves.push([m0, m1]);
        }
        Some(StageMoves {
            slot_of,
            starts,
            moves,
        })
    }

    /// The cached moves of `index` of `slice` with `side` to move, if the slice is cached.
    #[inline]
    fn of(&self, side: Side, slice: SliceId, index: u64) -> Option<&[PackedMove]> {
        let slot = *self.slot_of.get(slice.0 as usize)? as usize;
        let starts = &self.starts.get(slot)?[side.index()];
        let (a, b) = (starts[index as usize], starts[index as usize + 1]);
        Some(&self.moves[slot][side.index()][a as usize..b as usize])
    }
}

/// The moves of `(side, slice, key)` as [`ScoredMove`]s: exits and game ends decided by what
/// they are worth to the mover, no move at all by the final margin.
fn scored<G: ScoreGame, F: FinalMargins>(
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
        let mut visit_scored = |m: ScoredMove| match m {
            ScoredMove::InStage(s, k) => visit(Move::InStage(s, k)),
            ScoredMove::Decided(margin) => visit(self.decided(margin)),
        };
        if let Some(cache) = self.moves {
            let index = self.game.index(slice, key);
            if let Some(list) = cache.of(side, slice, index) {
                list.iter().for_each(|&m| visit_scored(m.unpack()));
                return;
            }
        }
        scored(self.game, self.finals, side, slice, key, visit_scored);
    }

    fn unmoves(&self, side: Side, slice: SliceId, key: u64, visit: impl FnMut(SliceId, u64, u64)) {
        self.game.unmoves(side, slice, key, visit)
    }
}

/// No final values: a thresholded game never reads a table (its exits are [`Move::Known`]).
pub(crate) struct NoFinals;

impl FinalValues for NoFinals {
    fn value(&self, _: Side, _: SliceId, _: u64) -> Value {
        unreachable!("a thresholded score game has no table exits")
    }
}

/// Solves the margins of `stage` of `game`, reading earlier stages through `finals`, with the
/// kernel's data where `space` says: one win/draw/loss run per threshold. `on_ply` hears every
/// ply of every run; the times returned are those of all runs together.
pub fn solve_margin_stage<G: ScoreGame, F: FinalMargins>(
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
    let cache = StageMoves::build(game, stage, finals, space);
    for t in 1..=bound {
        let at = AtThreshold {
            game,
            finals,
            t,
            moves: cache.as_ref(),
        };
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
