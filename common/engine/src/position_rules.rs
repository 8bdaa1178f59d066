//! What the solvers do to one position, shared by the stage kernel ([`crate::kernel`]) and
//! the superstep kernel ([`crate::superstep`]) so that the two can never disagree.
//!
//! * [`defender_start`]: a defender-to-move position's state before the first ply (how many
//!   successors it waits for, whether it is stalemated or escapes into an earlier stage);
//! * [`defender_predecessors`]: the distinct defender-to-move predecessors an attacker-to-move
//!   position decrements;
//! * [`claim`] and [`decrement`]: the two atomic updates of a ply;
//! * [`finish_defenders`]: counters that never reached zero become defender wins.

use crate::game::{DefenderMove, Game, SliceId};
use crate::kernel::{FinalValues, MAX_MOVES};
use crate::value::{Value, UNRESOLVED};
use arrayvec::ArrayVec;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

/// A defender-to-move position before the first ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DefenderStart {
    /// A capture reaches a defender win of an earlier stage: final, value [`UNRESOLVED`].
    Escapes,
    /// No move at all: the defender has lost, value 1.
    Stalemate,
    /// Waits for `successors` successor orbits to be attacker wins. `exit` is the largest value
    /// of its captures into earlier stages (counted as one more successor, decremented at that
    /// ply).
    Pending {
        /// The counter's start.
        successors: u8,
        /// The ply of the exit decrement, if the position has exits.
        exit: Option<Value>,
    },
}

/// Classifies the canonical defender-to-move position `(slice, key)`. `slot_of` maps a slice
/// id to its slot in the stage (`u32::MAX` outside); `scratch` is reused between calls. Fails
/// with a description when the game breaks a contract of [`Game`].
pub(crate) fn defender_start<G: Game, F: FinalValues>(
    game: &G,
    slot_of: &[u32],
    finals: &F,
    slice: SliceId,
    key: u64,
    scratch: &mut ArrayVec<(u32, u64), MAX_MOVES>,
) -> Result<DefenderStart, String> {
    scratch.clear();
    let mut exit_max: Option<Value> = None;
    let mut escapes = false;
    let mut problem = None;
    game.defender_moves(slice, key, |mv| match mv {
        DefenderMove::InStage(to, to_key) => {
            let to_slot = slot_of[to.0 as usize];
            if to_slot == u32::MAX {
                problem = Some(format!("defender move to {to:?} outside the stage"));
            } else if !scratch.contains(&(to_slot, to_key))
                && scratch.try_push((to_slot, to_key)).is_err()
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
    if let Some(what) = problem {
        return Err(what);
    }
    if escapes {
        return Ok(DefenderStart::Escapes);
    }
    let successors = scratch.len() + usize::from(exit_max.is_some());
    if successors == 0 {
        return Ok(DefenderStart::Stalemate);
    }
    Ok(DefenderStart::Pending {
        successors: successors as u8,
        exit: exit_max,
    })
}

/// The distinct defender-to-move predecessors `(slot, key, index)` of the attacker-to-move
/// position `(slice, key)`, into `out` (cleared first). Each gets exactly one decrement.
pub(crate) fn defender_predecessors<G: Game>(
    game: &G,
    slot_of: &[u32],
    slice: SliceId,
    key: u64,
    out: &mut ArrayVec<(u32, u64, u64), MAX_MOVES>,
) {
    out.clear();
    game.defender_unmoves(slice, key, |to, to_key, i| {
        let p = (slot_of[to.0 as usize], to_key, i);
        if !out.contains(&p) {
            // The game's contract bounds un-moves per position by MAX_MOVES.
            out.try_push(p).expect("at most MAX_MOVES un-moves");
        }
    });
}

/// Sets bit `i` of `bits`; true if this call set it (the caller owns the position now). Most
/// bits are already set late in a stage: the plain load answers those from cache.
#[inline]
pub(crate) fn claim(bits: &[AtomicU64], i: usize) -> bool {
    let word = &bits[i / 64];
    let bit = 1u64 << (i % 64);
    word.load(Relaxed) & bit == 0 && word.fetch_or(bit, Relaxed) & bit == 0
}

/// Decrements the counter of defender-to-move position `i`; when it reaches zero the position
/// is final with value `value` (its final bit set in `final_bits`) and true is returned. A zero
/// byte is a value already, never a counter, and is left alone.
#[inline]
pub(crate) fn decrement(
    defender: &[AtomicU8],
    final_bits: &[AtomicU64],
    i: usize,
    value: Value,
) -> bool {
    let cell = &defender[i];
    if cell.load(Relaxed) != 0 && cell.fetch_sub(1, Relaxed) == 1 {
        final_bits[i / 64].fetch_or(1 << (i % 64), Relaxed);
        cell.store(value, Relaxed);
        return true;
    }
    false
}

/// Writes [`UNRESOLVED`] (a defender win) into every one of the first `len` defender bytes
/// whose final bit is clear: their counters never reached zero.
pub(crate) fn finish_defenders(defender: &[AtomicU8], final_bits: &[AtomicU64], len: u64) {
    for (w, word) in final_bits.iter().enumerate() {
        let mut open = !word.load(Relaxed);
        while open != 0 {
            let i = w * 64 + open.trailing_zeros() as usize;
            open &= open - 1;
            if (i as u64) < len {
                defender[i].store(UNRESOLVED, Relaxed);
            }
        }
    }
}
