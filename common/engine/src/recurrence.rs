//! The defining recurrence of values, evaluated for one position from its successors' values.
//!
//! The kernel never evaluates this directly (it propagates from frontiers); verification does,
//! to check stored tables independently of how they were produced:
//!
//! * defender to move: no move → 1; some move reaches a defender win → 0; else `1 + max`;
//! * attacker to move: no move reaches an attacker win → 0; else `1 + min` over those that do.

use crate::game::{DefenderMove, Game, SliceId};
use crate::value::{Value, UNRESOLVED};

/// The value the recurrence gives the defender-to-move position `(slice, key)`, reading the
/// attacker-to-move values of its successors through `attacker_value(slice, key)`.
pub fn defender_value<G: Game, E>(
    game: &G,
    slice: SliceId,
    key: u64,
    mut attacker_value: impl FnMut(SliceId, u64) -> Result<Value, E>,
) -> Result<Value, E> {
    let mut moves = Vec::new();
    game.defender_moves(slice, key, |mv| moves.push(mv));
    let mut worst = 0u32;
    for mv in moves {
        let (DefenderMove::InStage(s, k) | DefenderMove::Final(s, k)) = mv;
        let v = attacker_value(s, k)?;
        if v == UNRESOLVED {
            return Ok(UNRESOLVED);
        }
        worst = worst.max(u32::from(v));
    }
    Ok((worst + 1).min(255) as Value)
}

/// The value the recurrence gives the attacker-to-move position `(slice, key)`, reading the
/// defender-to-move values of its successors through `defender_value(slice, key)`.
pub fn attacker_value<G: Game, E>(
    game: &G,
    slice: SliceId,
    key: u64,
    mut defender_value: impl FnMut(SliceId, u64) -> Result<Value, E>,
) -> Result<Value, E> {
    let mut moves = Vec::new();
    game.attacker_moves(slice, key, |s, k, _| moves.push((s, k)));
    let mut best: Option<Value> = None;
    for (s, k) in moves {
        let v = defender_value(s, k)?;
        if v != UNRESOLVED {
            best = Some(best.map_or(v, |b| b.min(v)));
        }
    }
    Ok(best.map_or(UNRESOLVED, |b| b.saturating_add(1)))
}
