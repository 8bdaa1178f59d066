//! The direction of a sowing.

use std::fmt;

/// Which way stones are sown round a player's ring: clockwise is index + 1 (rightwards along
/// the front row as the owner sees it, leftwards along the back row).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Index + 1.
    Clockwise,
    /// Index - 1.
    Anticlockwise,
}

impl Direction {
    /// Both directions, clockwise first.
    pub const BOTH: [Direction; 2] = [Direction::Clockwise, Direction::Anticlockwise];

    /// The short name used in moves and records: `cw` or `acw`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Clockwise => "cw",
            Direction::Anticlockwise => "acw",
        }
    }

    /// The other direction.
    pub fn reversed(self) -> Direction {
        match self {
            Direction::Clockwise => Direction::Anticlockwise,
            Direction::Anticlockwise => Direction::Clockwise,
        }
    }

    /// Parses `cw`/`clockwise` or `acw`/`ccw`/`anticlockwise`/`counterclockwise`.
    pub fn parse(text: &str) -> Result<Direction, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "cw" | "clockwise" => Ok(Direction::Clockwise),
            "acw" | "ccw" | "anticlockwise" | "counterclockwise" => Ok(Direction::Anticlockwise),
            _ => Err(format!(
                "'{}' is not a direction: 'cw' (clockwise) or 'acw' (anticlockwise)",
                text.trim()
            )),
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
