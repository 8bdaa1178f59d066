//! The value stored for every position.
//!
//! The engine solves games in which one side, the *attacker*, wins by forcing the *defender*
//! into a terminal position (in Sixteen Musashi brown is the attacker and wins by leaving black
//! without a move); every position the attacker cannot force is a defender win (in Musashi
//! repetition wins for black, so "cannot force" is a black win). One byte per position encodes:
//!
//! * `0` ([`UNRESOLVED`]): the attacker cannot force a win.
//! * `v` in `1..=VALUE_MAX`: the attacker wins and the defender is left without a move after
//!   exactly `v - 1` more plies with best play (attacker fastest, defender slowest). `v` is odd
//!   when the defender is to move.
//! * [`NON_CANONICAL`]: this array slot is a symmetric duplicate of another position; read the
//!   canonical image instead. Such slots never enter counts.
//!
//! A game with draws (both sides able to win) needs a second distance and a draw code; the byte
//! leaves room for it (codes above `VALUE_MAX`), but that solver is not built yet.

/// One stored value; see the module documentation.
pub type Value = u8;

/// The attacker cannot force a win (in Musashi: black wins).
pub const UNRESOLVED: Value = 0;
/// The largest distance value the kernel will produce before reporting an overflow.
pub const VALUE_MAX: Value = 0xFE;
/// Marks a slot whose position is a symmetric duplicate of a canonical one.
pub const NON_CANONICAL: Value = 0xFF;

/// Who is to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The side that wins by forcing a terminal position (Musashi: brown).
    Attacker,
    /// The side that must avoid it (Musashi: black).
    Defender,
}
