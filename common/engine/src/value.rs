//! The value stored for every position: win, draw or loss for the side to move, with the
//! number of plies to the end of the game under best play.
//!
//! One byte per position and side to move. The stored byte is a [`Value`]; what it means is an
//! [`Outcome`]:
//!
//! * `0`: a draw (neither side can force a win; endless play is a draw);
//! * `v` odd: the side to move loses, and is left without a move after exactly `v - 1` plies
//!   (the winner fastest, the loser slowest);
//! * `v` even: the side to move wins, and the opponent is left without a move after exactly
//!   `v - 1` plies;
//! * [`Value::NON_CANONICAL`]: the slot is a symmetric duplicate of another position; read the
//!   canonical image instead. Such slots never enter counts.
//!
//! A game in which one side cannot win stores the same bytes with a narrower reading: in
//! Sixteen Musashi (brown first) `0` is "black wins", odd values occur only with black to move
//! and even ones only with brown to move, which is exactly Musashi's published encoding.

/// One stored byte; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Value(pub u8);

impl Value {
    /// A draw: neither side can force a win.
    pub const DRAW: Value = Value(0);
    /// The value of a position whose side to move has no move left: lost now.
    pub const LOST_NOW: Value = Value(1);
    /// The largest value the kernel produces before reporting an overflow.
    pub const MAX: Value = Value(0xFE);
    /// Marks a slot whose position is a symmetric duplicate of a canonical one.
    pub const NON_CANONICAL: Value = Value(0xFF);

    /// What the byte means; `None` for [`Value::NON_CANONICAL`].
    pub fn outcome(self) -> Option<Outcome> {
        match self.0 {
            0 => Some(Outcome::Draw),
            0xFF => None,
            v if v % 2 == 1 => Some(Outcome::Loss {
                plies: u32::from(v) - 1,
            }),
            v => Some(Outcome::Win {
                plies: u32::from(v) - 1,
            }),
        }
    }
}

/// The meaning of a [`Value`] for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The side to move wins: its opponent has no move after `plies` plies (odd).
    Win {
        /// Plies to the end of the game.
        plies: u32,
    },
    /// Neither side can force a win.
    Draw,
    /// The side to move loses: it has no move after `plies` plies (even).
    Loss {
        /// Plies to the end of the game.
        plies: u32,
    },
}

impl Outcome {
    /// The stored byte; `None` if the distance does not fit or has the wrong parity.
    pub fn value(self) -> Option<Value> {
        let byte = |plies: u32| u8::try_from(plies + 1).ok().filter(|&b| b < 0xFF);
        match self {
            Outcome::Draw => Some(Value::DRAW),
            Outcome::Win { plies } if plies % 2 == 1 => byte(plies).map(Value),
            Outcome::Loss { plies } if plies % 2 == 0 => byte(plies).map(Value),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_but_the_marker_round_trips() {
        for b in 0..=0xFEu8 {
            let o = Value(b).outcome().unwrap();
            assert_eq!(o.value(), Some(Value(b)), "{o:?}");
        }
        assert_eq!(Value::NON_CANONICAL.outcome(), None);
        assert_eq!(Value::LOST_NOW.outcome(), Some(Outcome::Loss { plies: 0 }));
        assert_eq!(Value(32).outcome(), Some(Outcome::Win { plies: 31 }));
        assert_eq!(Outcome::Win { plies: 2 }.value(), None);
    }
}
