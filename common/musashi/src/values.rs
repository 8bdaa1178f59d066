//! What a stored value means, in words.

use crate::position::Side;

/// The meaning of `value` for a position with `side` to move, e.g. "brown wins in 31 plies".
pub fn describe(value: u8, side: Side) -> String {
    match value {
        0 => "black wins".to_string(),
        1 if side == Side::Black => "black has no move: brown has won".to_string(),
        2 => "brown wins in 1 ply".to_string(),
        v => format!("brown wins in {} plies", v - 1),
    }
}

/// Whether `value` is consistent with the side to move (odd values have black to move).
pub fn parity_ok(value: u8, side: Side) -> bool {
    value == 0 || (value % 2 == 1) == (side == Side::Black)
}
