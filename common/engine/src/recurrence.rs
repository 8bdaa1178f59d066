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
    let mut successors = Vec::new();
    let mut known = Vec::new();
    game.moves(side, slice, key, |mv| match mv {
        Move::InStage(s, k) | Move::Final(s, k) => successors.push((s, k)),
        Move::Known(v) => known.push(v),
    });
    if successors.is_empty() && known.is_empty() {
        return Ok(if game.can_win(side.other()) {
            Value::LOST_NOW
        } else {
            Value::DRAW
        });
    }
    let mut fastest_loss: Option<u8> = None;
    let mut slowest_win: Option<u8> = None;
    let mut all_won = true;
    let mut values = known;
    for (s, k) in successors {
        values.push(value_of(s, k)?);
    }
    for v in values {
        match v.0 {
            0 => all_won = false,
            v if v % 2 == 1 => {
                all_won = false;
                fastest_loss = Some(fastest_loss.map_or(v, |m| m.min(v)));
            }
            v => slowest_win = Some(slowest_win.map_or(v, |m| m.max(v))),
        }
    }
    Ok(match (fastest_loss, slowest_win) {
        (Some(v), _) => Value(v.saturating_add(1)),
        (None, Some(v)) if all_won => Value(v.saturating_add(1)),
        _ => Value::DRAW,
    })
}
