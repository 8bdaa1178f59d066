//! The defining recurrence of values, evaluated for one position from its successors' values.
//!
//! The kernels never evaluate this directly (they propagate from frontiers); verification
//! does, to check stored tables independently of how they were produced. With `side` to move:
//!
//! * no move: lost now ([`Value::LOST_NOW`]) if the opponent can win, else a draw;
//! * some successor is lost for the opponent: a win, one ply more than the fastest such loss;
//! * every successor is won by the opponent: a loss, one ply more than the slowest such win;
//! * otherwise: a draw.

use crate::game::{Game, Move, Side, SliceId};
use crate::value::Value;

/// The value the recurrence gives the position `(slice, key)` with `side` to move, reading the
/// values of its successors (with the other side to move) through `value_of(slice, key)`.
pub fn value<G: Game, E>(
    game: &G,
    side: Side,
    slice: SliceId,
    key: u64,
    mut value_of: impl FnMut(SliceId, u64) -> Result<Value, E>,
) -> Result<Value, E> {
    // Each successor's value is folded in as the move is generated (no list of moves: a sweep
    // evaluates this for billions of positions); the first failure to read one is kept.
    let mut any_move = false;
    let mut failure = None;
    let mut fastest_loss: Option<u8> = None;
    let mut slowest_win: Option<u8> = None;
    let mut all_won = true;
    game.moves(side, slice, key, |mv| {
        any_move = true;
        if failure.is_some() {
            return;
        }
        let v = match mv {
            Move::InStage(s, k) | Move::Final(s, k) => match value_of(s, k) {
                Ok(v) => v,
                Err(e) => {
                    failure = Some(e);
                    return;
                }
            },
            Move::Known(v) => v,
        };
        match v.0 {
            0 => all_won = false,
            v if v % 2 == 1 => {
                all_won = false;
                fastest_loss = Some(fastest_loss.map_or(v, |m| m.min(v)));
            }
            v => slowest_win = Some(slowest_win.map_or(v, |m| m.max(v))),
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    if !any_move {
        return Ok(if game.can_win(side.other()) {
            Value::LOST_NOW
        } else {
            Value::DRAW
        });
    }
    Ok(match (fastest_loss, slowest_win) {
        (Some(v), _) => Value(v.saturating_add(1)),
        (None, Some(v)) if all_won => Value(v.saturating_add(1)),
        _ => Value::DRAW,
    })
}
