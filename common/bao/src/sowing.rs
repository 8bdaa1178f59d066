//! One move, sowing by sowing, with exact detection of moves that never end.
//!
//! A move is a sequence of *steps*. Between two steps the state is the board, a hole, the
//! direction and the phase:
//!
//! * [`Phase::Lift`]: lift all the stones of the mover's `hole` and sow them one per hole from
//!   the next hole on, in the direction;
//! * [`Phase::Capture`]: `hole` is a marker the last stone fell on: take all the stones of the
//!   facing enemy hole and sow them into the mover's holes from the capture start
//!   ([`crate::row::Row::capture_start`]), whose direction becomes the move's.
//!
//! After a step, where the last stone fell decides: into a hole that was empty, the move ends;
//! on a marker during a capture move (never during a takata), the next step captures there;
//! otherwise the next step lifts that hole. "Was empty" and "marker" are read when the last
//! stone falls, on the board as it is then (a sowing of a lap or more may already have dropped
//! a stone into that hole).
//!
//! The states are finitely many, so a move either ends or cycles; [`play`] decides which exactly
//! with [`retro_sowing::run`] (no step cap).

use crate::board::Board;
use crate::direction::Direction;
use crate::markers::is_marker;
use crate::moves::Move;
use retro_engine::Side;
use retro_sowing::{Flow, Run};

/// What the next step of a move does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Lift the hole's stones and sow them from the next hole on.
    Lift,
    /// Capture the stones facing the hole (a marker) and sow them from the capture start.
    Capture,
}

/// The kind of a move, fixed for the whole move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    /// A mtaji move: it starts on a mtaji and captures whenever a last stone falls on a marker.
    Capture,
    /// A takata: it never captures.
    Takata,
}

/// The state of a move between two steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SowState {
    /// The stones, before the next step.
    pub board: Board,
    /// The player moving.
    pub mover: Side,
    /// The mover's hole the next step lifts or captures at; after the last step, where the
    /// last stone fell.
    pub hole: usize,
    /// The direction of the next sowing (a capture may change it).
    pub direction: Direction,
    /// What the next step does.
    pub phase: Phase,
    /// The move's kind.
    pub kind: MoveKind,
}

impl SowState {
    /// The state before the first step of `mv` (of the given kind) by `mover` on `board`.
    pub fn start(board: &Board, mover: Side, mv: Move, kind: MoveKind) -> SowState {
        SowState {
            board: *board,
            mover,
            hole: mv.hole,
            direction: mv.direction,
            phase: Phase::Lift,
            kind,
        }
    }
}

/// Where the last stone of a step fell, and so what comes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Landing {
    /// Into an empty hole: the move ends.
    Empty,
    /// On a marker during a capture move: the next step captures there.
    Marker,
    /// Into a hole with stones: the next step lifts them.
    Stones,
}

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Lift or capture.
    pub phase: Phase,
    /// The mover's hole lifted, or the marker captured at.
    pub at: usize,
    /// The stones sown (lifted, or taken from the enemy hole facing the marker).
    pub stones: u8,
    /// The mover's hole the first stone fell into.
    pub first: usize,
    /// The direction of the sowing.
    pub direction: Direction,
    /// The mover's hole the last stone fell into.
    pub last: usize,
    /// What that means.
    pub landing: Landing,
}

/// Plays one step of the move in place and says what it did. `state.hole` becomes where the
/// last stone fell, `state.phase` what the next step does (meaningless once the move ends).
#[inline]
pub fn step(state: &mut SowState) -> Step {
    let row = state.board.row();
    let mover = state.mover;
    let at = state.hole;
    let phase = state.phase;
    let (stones, first) = match phase {
        Phase::Lift => {
            let stones = state.board.get(mover, at);
            state.board.set(mover, at, 0);
            (stones, row.next(at, state.direction))
        }
        Phase::Capture => {
            let enemy = row.facing(at);
            let stones = state.board.get(mover.other(), enemy);
            state.board.set(mover.other(), enemy, 0);
            let (first, direction) = row.capture_start(at, state.direction);
            state.direction = direction;
            (stones, first)
        }
    };
    let direction = state.direction;
    let mut hole = first;
    for dropped in 0..stones {
        if dropped > 0 {
            hole = row.next(hole, direction);
        }
        state.board.drop_one(mover, hole);
    }
    // `stones` is at least 1: a lift takes a hole with stones (the first, the mover's choice;
    // later ones are where a last stone fell into a non-empty hole), a capture a non-empty hole.
    let last = hole;
    let landing = if state.board.get(mover, last) == 1 {
        Landing::Empty
    } else if state.kind == MoveKind::Capture && is_marker(&state.board, mover, last) {
        Landing::Marker
    } else {
        Landing::Stones
    };
    state.hole = last;
    state.phase = match landing {
        Landing::Marker => Phase::Capture,
        Landing::Empty | Landing::Stones => Phase::Lift,
    };
    Step {
        phase,
        at,
        stones,
        first,
        direction,
        last,
        landing,
    }
}

/// A move that sows for ever.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endless {
    /// The first state of the move on its cycle.
    pub entry: SowState,
    /// Steps before the cycle is reached (0 when the move starts on it).
    pub lead_in: u64,
    /// Steps in one turn of the cycle.
    pub cycle: u64,
}

/// What a move does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Play {
    /// The move ends after `steps` steps with `board`, the last stone in the mover's `last`.
    Ends {
        /// The stones after the move.
        board: Board,
        /// Where the last stone fell (into an empty hole).
        last: usize,
        /// Steps taken.
        steps: u64,
    },
    /// The move never ends.
    Endless(Endless),
}

/// Plays a move from `start` until it ends or is known to sow for ever (exactly, no step cap).
/// The move's first hole must hold stones; legality is the caller's ([`crate::rules`]).
pub fn play(start: &SowState) -> Play {
    let next = |state: &mut SowState| {
        if step(state).landing == Landing::Empty {
            Flow::Ended
        } else {
            Flow::GoesOn
        }
    };
    match retro_sowing::run(start, next) {
        Run::Ends { state, steps } => Play::Ends {
            board: state.board,
            last: state.hole,
            steps,
        },
        Run::Cycles {
            entry,
            lead_in,
            cycle,
        } => Play::Endless(Endless {
            entry,
            lead_in,
            cycle,
        }),
    }
}

/// Every step of a move with the board after it, for showing the move step by step: until the
/// move ends, or after `limit` steps.
pub fn trace(start: &SowState, limit: u64) -> Vec<(Step, Board)> {
    let mut state = *start;
    let mut out = Vec::new();
    while (out.len() as u64) < limit {
        let s = step(&mut state);
        out.push((s, state.board));
        if s.landing == Landing::Empty {
            break;
        }
    }
    out
}
