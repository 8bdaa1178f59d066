//! What a stored value means, in words.

use crate::position::Side;

/// The meaning of `value` for a position with `side` to move, e.g. "brown wins in 31 plies".
pub fn describe(value: u8, side: Side) -> String {
    match value {
        0 => "black wins (brown cannot force a win)".to_string(),
        1 => "brown has won: black is to move and has no move".to_string(),
        v => {
            let plies = v - 1;
            let who = match side {
                Side::Brown => "brown to move",
                Side::Black => "black to move",
            };
            format!(
                "brown wins in {plies} plies ({who}; black is left without a move after {plies} more plies)"
            )
        }
    }
}

/// Whether `value` is consistent with the side to move (odd values have black to move).
pub fn parity_ok(value: u8, side: Side) -> bool {
    value == 0 || (value % 2 == 1) == (side == Side::Black)
}
