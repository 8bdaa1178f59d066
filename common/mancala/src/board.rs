//! The ring of holes, a board of stones on it, and the board notation.
//!
//! Holes are numbered `0..2n` clockwise and named `a, b, c, ...`. The first player owns holes
//! `0..n`, the second `n..2n`; hole `i` faces hole `2n - 1 - i`. A board is written as its
//! stone counts from hole `a` on, separated by commas: the 4x2 start is `0,4,0,4,0,4,0,4`.

use retro_engine::Side;
use std::fmt;

/// The most holes a ring may have (32: a 16x2 board).
pub const MAX_HOLES: usize = 32;

/// The most stones a board may hold: a hole's count is a byte.
pub const MAX_STONES: u32 = 255;

/// Stones in the holes of a ring of `2n` holes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Board {
    holes: u8,
    stones: [u8; MAX_HOLES],
}

impl Board {
    /// The board of the given hole counts. The number of holes must be even, between 4 and
    /// [`MAX_HOLES`], and the stones at most [`MAX_STONES`] in all.
    pub fn new(counts: &[u8]) -> Result<Board, String> {
        let holes = counts.len();
        if !holes.is_multiple_of(2) || !(4..=MAX_HOLES).contains(&holes) {
            return Err(format!(
                "a ring has an even number of holes between 4 and {MAX_HOLES}, not {holes}"
            ));
        }
        let total: u32 = counts.iter().map(|&c| u32::from(c)).sum();
        if total > MAX_STONES {
            return Err(format!("{total} stones: at most {MAX_STONES} fit a board"));
        }
        let mut stones = [0u8; MAX_HOLES];
        stones[..holes].copy_from_slice(counts);
        Ok(Board {
            holes: holes as u8,
            stones,
        })
    }

    /// The empty board of `holes` holes.
    pub fn empty(holes: usize) -> Result<Board, String> {
        Board::new(&vec![0; holes])
    }

    /// The start: four stones in every other hole, beginning with an empty one.
    pub fn start(holes: usize) -> Result<Board, String> {
        let counts: Vec<u8> = (0..holes).map(|i| if i % 2 == 1 { 4 } else { 0 }).collect();
        Board::new(&counts)
    }

    /// Parses the notation `0,4,0,4,0,4,0,4` (spaces allowed around the numbers).
    pub fn parse(text: &str) -> Result<Board, String> {
        let counts = text
            .split(',')
            .map(|field| {
                let field = field.trim();
                field.parse::<u8>().map_err(|_| {
                    format!(
                        "'{field}' is not a stone count (a whole number from 0 to 255) in '{text}'"
                    )
                })
            })
            .collect::<Result<Vec<u8>, String>>()?;
        Board::new(&counts).map_err(|e| format!("'{text}': {e}"))
    }

    /// The number of holes, `2n`.
    #[inline(always)]
    pub fn holes(&self) -> usize {
        self.holes as usize
    }

    /// The holes of one player, `n`.
    #[inline(always)]
    pub fn per_side(&self) -> usize {
        self.holes as usize / 2
    }

    /// The stone counts, hole by hole.
    #[inline(always)]
    pub fn counts(&self) -> &[u8] {
        &self.stones[..self.holes as usize]
    }

    /// The stones in hole `i`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> u8 {
        self.stones[i]
    }

    /// Sets the stones in hole `i`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, stones: u8) {
        self.stones[i] = stones;
    }

    /// The hole facing hole `i`.
    #[inline(always)]
    pub fn opposite(&self, i: usize) -> usize {
        self.holes() - 1 - i
    }

    /// The holes of `side` (the first player's are `0..n`).
    #[inline(always)]
    pub fn side_holes(&self, side: Side) -> std::ops::Range<usize> {
        let n = self.per_side();
        match side {
            Side::First => 0..n,
            Side::Second => n..2 * n,
        }
    }

    /// The stones in the holes of `side`.
    #[inline(always)]
    pub fn side_stones(&self, side: Side) -> u32 {
        // The side's `n <= 16` counts are the low bytes of the 16 bytes from its first hole
        // (a ring has at most 32 holes, so they are in the array). A board holds at most 255
        // stones, so the bytes' sum fits a byte and the multiply-and-shift adds them.
        let n = self.per_side();
        let from = match side {
            Side::First => 0,
            Side::Second => n,
        };
        let bytes: [u8; 16] = self.stones[from..from + 16]
            .try_into()
            .expect("sixteen bytes");
        let word = u128::from_le_bytes(bytes) & (u128::MAX >> (8 * (16 - n)));
        const ONES: u64 = 0x0101_0101_0101_0101;
        let sum = |w: u64| (w.wrapping_mul(ONES) >> 56) as u32;
        sum(word as u64) + sum((word >> 64) as u64)
    }

    /// All stones on the board.
    pub fn total(&self) -> u32 {
        self.counts().iter().map(|&c| u32::from(c)).sum()
    }

    /// Whether this board is `other` turned clockwise by `r` holes: `self[i + r] == other[i]`.
    #[inline]
    pub fn is_rotation_of(&self, other: &Board, r: usize) -> bool {
        let h = self.holes();
        (0..h).all(|i| self.stones[(i + r) % h] == other.stones[i])
    }

    /// This board turned clockwise by `r` holes.
    pub fn rotated(&self, r: usize) -> Board {
        let h = self.holes();
        let mut out = *self;
        for i in 0..h {
            out.stones[(i + r) % h] = self.stones[i];
        }
        out
    }
}

/// The name of hole `i`: `a`, `b`, ... (then `A`, `B`, ... past 26 holes).
pub fn hole_name(i: usize) -> char {
    if i < 26 {
        (b'a' + i as u8) as char
    } else {
        (b'A' + (i - 26) as u8) as char
    }
}

/// The hole named `name` on a board of `holes` holes.
pub fn parse_hole(name: &str, holes: usize) -> Result<usize, String> {
    let mut chars = name.trim().chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return Err(format!(
            "'{name}' is not a hole name (a letter, a = the first hole)"
        ));
    };
    let i = match c {
        'a'..='z' => c as usize - 'a' as usize,
        'A'..='Z' => c as usize - 'A' as usize + 26,
        _ => usize::MAX,
    };
    if i >= holes {
        return Err(format!(
            "'{name}' is not a hole of this board (a..{})",
            hole_name(holes - 1)
        ));
    }
    Ok(i)
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.counts().iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({self})")
    }
}

/// The name of a side in this game's words.
pub fn side_name(side: Side) -> &'static str {
    match side {
        Side::First => "first",
        Side::Second => "second",
    }
}

/// A position: a board and the player to move, written `0,4,0,4,0,4,0,4 first`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// The stones.
    pub board: Board,
    /// Who moves.
    pub side: Side,
}

impl Position {
    /// Parses `BOARD SIDE` with side `first` or `second` (the first player if omitted).
    pub fn parse(text: &str) -> Result<Position, String> {
        let text = text.trim();
        let (board, side) = match text.rsplit_once(char::is_whitespace) {
            Some((board, word)) if word.chars().all(|c| c.is_ascii_alphabetic()) => {
                let side = match word {
                    "first" => Side::First,
                    "second" => Side::Second,
                    _ => {
                        return Err(format!(
                            "'{word}' is not a side to move ('first' or 'second') in '{text}'"
                        ))
                    }
                };
                (board, side)
            }
            _ => (text, Side::First),
        };
        Ok(Position {
            board: Board::parse(board)?,
            side,
        })
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.board, side_name(self.side))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation_round_trips_and_bad_boards_are_refused() {
        let b = Board::parse("0,4,0,4,0,4,0,4").unwrap();
        assert_eq!(b, Board::start(8).unwrap());
        assert_eq!(b.to_string(), "0,4,0,4,0,4,0,4");
        let p = Position::parse("0, 4, 0, 4, 0, 4, 0, 4 second").unwrap();
        assert_eq!(p.side, Side::Second);
        assert_eq!(p.to_string(), "0,4,0,4,0,4,0,4 second");
        for bad in [
            "0,4,0",
            "0,4,0,4,0,4,0,-4",
            "0,4,0,4,x,4,0,4",
            "1,2,3,4,5,6,7",
            "",
        ] {
            assert!(Board::parse(bad).is_err(), "{bad}");
        }
        assert!(Position::parse("0,4,0,4,0,4,0,4 third").is_err());
        assert!(Board::parse("200,100,0,0").is_err());
    }

    #[test]
    fn opposite_holes_and_rotation() {
        let b = Board::parse("3,1,0,2,1,0,2,1").unwrap();
        assert_eq!(b.opposite(0), 7);
        assert_eq!(b.opposite(3), 4);
        let r = b.rotated(3);
        assert_eq!(r.to_string(), "0,2,1,3,1,0,2,1");
        assert!(r.is_rotation_of(&b, 3));
        assert_eq!(parse_hole("d", 8), Ok(3));
        assert!(parse_hole("i", 8).is_err());
    }
}
