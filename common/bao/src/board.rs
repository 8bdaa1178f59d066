//! The stones of both players, the side to move, and the position notation.
//!
//! **Notation.** One player's holes are written as the spec writes them: the front row left to
//! right as that player sees it (indices `0..n`), a `/`, the back row left to right as that
//! player sees it (indices `2n-1` down to `n`), numbers separated by spaces (or commas). A
//! position is the first player's rows, a `|`, the second player's rows, and the side to move
//! (`first` or `second`; the first player when omitted). The full game's start:
//!
//! ```text
//! 2 2 2 2 2 2 2 2 / 2 2 2 2 2 2 2 2 | 2 2 2 2 2 2 2 2 / 2 2 2 2 2 2 2 2 first
//! ```

use crate::row::{Row, MAX_RING};
use retro_engine::Side;
use std::fmt;

/// The most stones a board may hold: a hole's count is a byte.
pub const MAX_STONES: u32 = 255;

/// The stones in both players' holes (each player's in their own index convention, see
/// [`crate::row`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Board {
    row: Row,
    holes: [[u8; MAX_RING]; 2],
}

impl Board {
    /// The board with these stones (each player's `2n` holes by index). Both players must
    /// have `2n` holes for a row of `n` between 2 and 8, and the stones be at most
    /// [`MAX_STONES`] in all.
    pub fn new(first: &[u8], second: &[u8]) -> Result<Board, String> {
        if first.len() != second.len() || !first.len().is_multiple_of(2) {
            return Err(format!(
                "the players have {} and {} holes: both need two rows of the same length",
                first.len(),
                second.len()
            ));
        }
        let row = Row::new(first.len() / 2)?;
        let total: u32 = first.iter().chain(second).map(|&c| u32::from(c)).sum();
        if total > MAX_STONES {
            return Err(format!("{total} stones: at most {MAX_STONES} fit a board"));
        }
        let mut holes = [[0u8; MAX_RING]; 2];
        holes[0][..first.len()].copy_from_slice(first);
        holes[1][..second.len()].copy_from_slice(second);
        Ok(Board { row, holes })
    }

    /// The start of the variant: `stones` in every hole of rows of `row` holes.
    pub fn start(row: Row, stones: u8) -> Result<Board, String> {
        let own = vec![stones; row.ring()];
        Board::new(&own, &own)
    }

    /// The rows' geometry.
    #[inline(always)]
    pub fn row(&self) -> Row {
        self.row
    }

    /// The stones in `side`'s hole `hole`.
    #[inline(always)]
    pub fn get(&self, side: Side, hole: usize) -> u8 {
        self.holes[side.index()][hole]
    }

    /// Sets the stones in `side`'s hole `hole`.
    #[inline(always)]
    pub fn set(&mut self, side: Side, hole: usize, stones: u8) {
        self.holes[side.index()][hole] = stones;
    }

    /// Drops one stone into `side`'s hole `hole`.
    #[inline(always)]
    pub fn drop_one(&mut self, side: Side, hole: usize) {
        self.holes[side.index()][hole] += 1;
    }

    /// `side`'s holes by index.
    #[inline(always)]
    pub fn holes(&self, side: Side) -> &[u8] {
        &self.holes[side.index()][..self.row.ring()]
    }

    /// `side`'s front row by index.
    #[inline(always)]
    pub fn front(&self, side: Side) -> &[u8] {
        &self.holes[side.index()][..self.row.len()]
    }

    /// Whether `side`'s front row is empty (that player loses at their turn).
    pub fn front_row_empty(&self, side: Side) -> bool {
        self.front(side).iter().all(|&c| c == 0)
    }

    /// The stones in `side`'s holes.
    pub fn stones(&self, side: Side) -> u32 {
        self.holes(side).iter().map(|&c| u32::from(c)).sum()
    }

    /// All stones on the board.
    pub fn total(&self) -> u32 {
        self.stones(Side::First) + self.stones(Side::Second)
    }

    /// The most stones in any one hole.
    pub fn fullest(&self) -> u8 {
        Side::BOTH
            .iter()
            .flat_map(|&s| self.holes(s).iter().copied())
            .max()
            .unwrap_or(0)
    }

    /// Parses one player's rows, `front / back` as that player sees them (the spec's way).
    pub fn parse_rows(text: &str) -> Result<Vec<u8>, String> {
        let Some((front, back)) = text.split_once('/') else {
            return Err(format!(
                "'{}': a player's rows are written 'front row / back row'",
                text.trim()
            ));
        };
        let numbers = |part: &str| -> Result<Vec<u8>, String> {
            part.split(|c: char| c.is_whitespace() || c == ',')
                .filter(|f| !f.is_empty())
                .map(|f| {
                    f.parse::<u8>().map_err(|_| {
                        format!("'{f}' is not a stone count (a whole number from 0 to 255)")
                    })
                })
                .collect()
        };
        let front = numbers(front)?;
        let back = numbers(back)?;
        if front.len() != back.len() {
            return Err(format!(
                "'{}': the front row has {} holes and the back row {}",
                text.trim(),
                front.len(),
                back.len()
            ));
        }
        // The back row is written from the owner's left: indices 2n-1 down to n.
        Ok(front.into_iter().chain(back.into_iter().rev()).collect())
    }

    /// Writes `side`'s rows as [`Board::parse_rows`] reads them.
    pub fn rows_text(&self, side: Side) -> String {
        let n = self.row.len();
        let own = self.holes(side);
        let join = |it: &mut dyn Iterator<Item = &u8>| -> String {
            it.map(|c| c.to_string()).collect::<Vec<_>>().join(" ")
        };
        format!(
            "{} / {}",
            join(&mut own[..n].iter()),
            join(&mut own[n..].iter().rev())
        )
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "({} | {})",
            self.rows_text(Side::First),
            self.rows_text(Side::Second)
        )
    }
}

/// The name of a side in this game's words: `first` or `second`.
pub fn side_name(side: Side) -> &'static str {
    match side {
        Side::First => "first",
        Side::Second => "second",
    }
}

/// A position: the stones and the player to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// The stones.
    pub board: Board,
    /// Who moves.
    pub side: Side,
}

impl Position {
    /// The start of the variant with rows of `row` holes and `stones` stones a hole; the first
    /// player moves.
    pub fn start(row: Row, stones: u8) -> Result<Position, String> {
        Ok(Position {
            board: Board::start(row, stones)?,
            side: Side::First,
        })
    }

    /// Parses `FIRST'S ROWS | SECOND'S ROWS [first|second]` (see the module documentation).
    pub fn parse(text: &str) -> Result<Position, String> {
        let text = text.trim();
        let Some((first, rest)) = text.split_once('|') else {
            return Err(format!(
                "'{text}': a position is the first player's rows '|' the second player's rows, then the side to move"
            ));
        };
        let rest = rest.trim();
        let (second, side) = match rest.rsplit_once(char::is_whitespace) {
            Some((rows, word)) if word.chars().all(|c| c.is_ascii_alphabetic()) => {
                let side = match word {
                    "first" => Side::First,
                    "second" => Side::Second,
                    _ => {
                        return Err(format!(
                            "'{word}' is not a side to move ('first' or 'second') in '{text}'"
                        ))
                    }
                };
                (rows, side)
            }
            _ => (rest, Side::First),
        };
        let first = Board::parse_rows(first).map_err(|e| format!("first player: {e}"))?;
        let second = Board::parse_rows(second).map_err(|e| format!("second player: {e}"))?;
        Ok(Position {
            board: Board::new(&first, &second)?,
            side,
        })
    }

    /// The same stones with the other player to move.
    pub fn passed(self) -> Position {
        Position {
            board: self.board,
            side: self.side.other(),
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} | {} {}",
            self.board.rows_text(Side::First),
            self.board.rows_text(Side::Second),
            side_name(self.side)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation_round_trips_and_follows_the_index_convention() {
        let start = Position::start(Row::FULL, 2).unwrap();
        let text = "2 2 2 2 2 2 2 2 / 2 2 2 2 2 2 2 2 | 2 2 2 2 2 2 2 2 / 2 2 2 2 2 2 2 2 first";
        assert_eq!(start.to_string(), text);
        assert_eq!(Position::parse(text).unwrap(), start);
        // The back row is written from the owner's left: its first number is index 2n-1.
        let p = Position::parse("1 2 3 / 4 5 6 | 0 0 1 / 0 0 0 second").unwrap();
        assert_eq!(p.board.holes(Side::First), [1, 2, 3, 6, 5, 4]);
        assert_eq!(p.board.holes(Side::Second), [0, 0, 1, 0, 0, 0]);
        assert_eq!(p.side, Side::Second);
        assert_eq!(p.to_string(), "1 2 3 / 4 5 6 | 0 0 1 / 0 0 0 second");
        assert_eq!(
            Position::parse("1,2 / 3,4 | 0 0 / 0 0").unwrap().side,
            Side::First
        );
    }

    #[test]
    fn bad_notation_is_refused_with_a_reason() {
        for bad in [
            "",
            "1 2 / 3 4",
            "1 2 3 / 4 5 | 1 2 3 / 4 5 6",
            "1 2 / 3 4 | 1 2 3 / 4 5 6",
            "1 / 2 | 1 / 2",
            "1 2 / 3 x | 1 2 / 3 4",
            "1 2 / 3 4 | 1 2 / 3 4 third",
            "1 2 / 3 4 | 1 2 3 4",
            "1 2 3 4 5 6 7 8 9 / 1 2 3 4 5 6 7 8 9 | 1 2 3 4 5 6 7 8 9 / 1 2 3 4 5 6 7 8 9",
            "200 0 / 0 0 | 100 0 / 0 0",
            "-1 0 / 0 0 | 0 0 / 0 0",
        ] {
            let e = Position::parse(bad).expect_err(bad);
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
