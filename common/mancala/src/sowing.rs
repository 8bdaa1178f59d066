//! Relay sowing: one move, sowing by sowing, with exact detection of moves that never end.
//!
//! A move is a sequence of *sowings*. The state between two sowings is the board and the hole
//! the next sowing starts from; a sowing lifts that hole's stones and drops them one by one into
//! the following holes, clockwise. If the last stone falls into a hole that was empty, the move
//! ends; otherwise the next sowing starts from that hole. The states are finitely many (the
//! stones are conserved during a move), so a move either ends or enters a cycle of states and
//! sows forever. [`play`] finds out which with Brent's cycle detection (`retro_sowing`, shared
//! with Bao): exact, no step cap, and memory for two states.
//!
//! **Loops, period and shift** (the SPIN study's terms, made precise; `docs/mancala.md`).
//! The *loop* of an endless move is the first state of its sowing sequence that lies on the
//! cycle (the board-and-hole where the endless part starts; the study's examples start on the
//! cycle). Sowing goes on the same way from a board turned around the ring, so the cycle is
//! made of repetitions of a shorter run: the first `k >= 1` sowings after which the state is
//! the loop's state turned clockwise by `r` holes (the board turned by `r`, the next sowing
//! `r` holes further on). Then `r` is the **shift** (0 when the loop's board itself comes
//! back first) and the number of stones dropped into the loop's starting hole during those `k`
//! sowings (the passes over that fixed hole) is the **period**. Every one of the study's listed
//! examples has exactly the period and shift it states under this definition (tested).

use crate::board::Board;
use retro_sowing::{Flow, Run};

/// The state between two sowings: the board and the hole the next sowing lifts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SowingState {
    /// The stones, before the next sowing.
    pub board: Board,
    /// The hole the next sowing starts from (it holds stones).
    pub hole: usize,
}

/// What one sowing did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sowing {
    /// The hole lifted.
    pub from: usize,
    /// How many stones it held.
    pub stones: u8,
    /// Where the last stone fell.
    pub last: usize,
    /// Whether that hole was empty before (the move ends there).
    pub ends: bool,
}

/// Sows the stones of `state.hole` once, in place. If the move goes on, `state.hole` becomes
/// the hole the next sowing starts from.
#[inline]
pub fn sow(state: &mut SowingState) -> Sowing {
    let holes = state.board.holes();
    let from = state.hole;
    let stones = state.board.get(from);
    state.board.set(from, 0);
    // Whole laps first: every hole gets one stone per lap (the lifted hole too: it is passed).
    let laps = stones as usize / holes;
    if laps > 0 {
        for i in 0..holes {
            state.board.set(i, state.board.get(i) + laps as u8);
        }
    }
    let rest = stones as usize % holes;
    let mut last = from;
    for step in 1..=rest {
        last = (from + step) % holes;
        state.board.set(last, state.board.get(last) + 1);
    }
    if rest == 0 {
        // The last stone of the last lap fell into the lifted hole itself.
        last = from;
    }
    let ends = state.board.get(last) == 1;
    state.hole = last;
    Sowing {
        from,
        stones,
        last,
        ends,
    }
}

/// How many of `stones` stones sown from `from` on a ring of `holes` holes fall into `watch`.
fn drops_into(watch: usize, from: usize, stones: usize, holes: usize) -> u64 {
    let first = match (watch + holes - from) % holes {
        0 => holes,
        d => d,
    };
    if stones >= first {
        1 + ((stones - first) / holes) as u64
    } else {
        0
    }
}

/// A move that ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    /// The board when the last stone fell, before any capture.
    pub board: Board,
    /// The hole the last stone fell into (it was empty).
    pub last: usize,
    /// How many sowings the move took.
    pub sowings: u64,
}

/// A move that never ends, classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loop {
    /// The loop: the first state of the move on its cycle.
    pub entry: SowingState,
    /// Sowings before the loop is reached (0 when the move starts on it).
    pub lead_in: u64,
    /// Sowings in one turn of the cycle (until the loop's state itself comes back).
    pub cycle: u64,
    /// Sowings until the loop's state comes back turned by [`Loop::shift`].
    pub run: u64,
    /// Stones dropped into the loop's starting hole during those sowings.
    pub period: u64,
    /// By how many holes the state has turned clockwise then.
    pub shift: usize,
}

/// What a move does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Play {
    /// The move ends.
    Ends(Ending),
    /// The move sows forever.
    Endless(Loop),
}

/// Plays the sowings of a move that starts by lifting `hole` (which must hold stones) on
/// `board`, until it ends or is known to sow forever (exactly: [`retro_sowing::run`]).
pub fn play(board: &Board, hole: usize) -> Play {
    debug_assert!(board.get(hole) > 0, "a move lifts a hole with stones");
    let start = SowingState {
        board: *board,
        hole,
    };
    let step = |state: &mut SowingState| {
        if sow(state).ends {
            Flow::Ended
        } else {
            Flow::GoesOn
        }
    };
    match retro_sowing::run(&start, step) {
        // After the last sowing the state's hole is where the last stone fell.
        Run::Ends { state, steps } => Play::Ends(Ending {
            board: state.board,
            last: state.hole,
            sowings: steps,
        }),
        Run::Cycles {
            entry,
            lead_in,
            cycle,
        } => Play::Endless(classify(entry, lead_in, cycle)),
    }
}

/// The period and shift of the loop starting at `entry` (on a cycle of `cycle` sowings).
fn classify(entry: SowingState, lead_in: u64, cycle: u64) -> Loop {
    let holes = entry.board.holes();
    let mut state = entry;
    let mut period = 0;
    for run in 1..=cycle {
        let s = sow(&mut state);
        period += drops_into(entry.hole, s.from, s.stones as usize, holes);
        let shift = (state.hole + holes - entry.hole) % holes;
        if state.board.is_rotation_of(&entry.board, shift) {
            return Loop {
                entry,
                lead_in,
                cycle,
                run,
                period,
                shift,
            };
        }
    }
    unreachable!("after a whole cycle the loop's own state is back (shift 0)")
}

/// Every sowing of a move, with the state after it, for showing a move step by step. Stops
/// when the move ends, or after `limit` sowings.
pub fn trace(board: &Board, hole: usize, limit: usize) -> Vec<(Sowing, Board)> {
    let mut state = SowingState {
        board: *board,
        hole,
    };
    let mut out = Vec::new();
    while out.len() < limit {
        let s = sow(&mut state);
        out.push((s, state.board));
        if s.ends {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(text: &str) -> Board {
        Board::parse(text).unwrap()
    }

    #[test]
    fn one_sowing_drops_stones_clockwise_and_laps_the_ring() {
        let mut s = SowingState {
            board: board("0,4,0,4,0,4,0,4"),
            hole: 3,
        };
        let sowing = sow(&mut s);
        assert_eq!(s.board.to_string(), "0,4,0,0,1,5,1,5");
        assert_eq!((sowing.last, sowing.ends), (7, false));
        // Ten stones on eight holes: a lap (the lifted hole gets one) and two more.
        let mut s = SowingState {
            board: board("0,10,0,0,0,0,0,0"),
            hole: 1,
        };
        let sowing = sow(&mut s);
        assert_eq!(s.board.to_string(), "1,1,2,2,1,1,1,1");
        assert_eq!((sowing.last, sowing.ends), (3, false));
        // Exactly a lap: the last stone falls into the lifted, now empty, hole.
        let mut s = SowingState {
            board: board("0,8,0,0,0,0,0,0"),
            hole: 1,
        };
        let sowing = sow(&mut s);
        assert_eq!(s.board.to_string(), "1,1,1,1,1,1,1,1");
        assert_eq!((sowing.last, sowing.ends), (1, true));
    }

    #[test]
    fn drops_into_a_hole_count_laps() {
        for holes in [4, 8, 10] {
            for from in 0..holes {
                for stones in 0..40 {
                    for watch in 0..holes {
                        let plain = (1..=stones).filter(|t| (from + t) % holes == watch).count();
                        assert_eq!(drops_into(watch, from, stones, holes), plain as u64);
                    }
                }
            }
        }
    }
}
