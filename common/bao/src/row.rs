//! The geometry of one player's holes: a front row and a back row of `n` holes each, as a ring
//! of `2n` holes, and the named holes of the capture rules.
//!
//! Index convention (the spec's, the referee program's): front row `0..n` from the player's left
//! to right, back row `n..2n` from right to left, so that index + 1 (mod `2n`) is the clockwise
//! neighbour. Front hole `i` faces the opponent's front hole `n - 1 - i`. The full game has
//! `n = 8`.
//!
//! **The ends** (the spec: holes 1-2 and 7-8 of 8, i.e. indices `0..=1` and `6..=7`). For `n`
//! holes a row each end is the first (last) [`Row::end_width`] front holes: [`END_HOLES`] = 2,
//! but at most half the row, so that the two ends never overlap: `n = 2` and `n = 3` have ends
//! of one hole (`n = 3` keeps one middle hole), `n = 4` has two ends of two and no middle.
//!
//! **Where captured stones go** ([`Row::capture_start`]): from the left end hole (index 0)
//! clockwise, or from the right end hole (index `n - 1`) anticlockwise: for a marker in the
//! left end, the right end, or in the middle by the direction of the move.

use crate::direction::Direction;

/// The most holes a row may have (the full game).
pub const MAX_ROW: usize = 8;

/// The fewest holes a row may have.
pub const MIN_ROW: usize = 2;

/// The most holes one player owns (two rows of [`MAX_ROW`]).
pub const MAX_RING: usize = 2 * MAX_ROW;

/// Front holes in each end of the row (the spec's holes 1-2 and 7-8), when the row has at least
/// twice as many holes ([`Row::end_width`]).
pub const END_HOLES: usize = 2;

/// The front hole captured stones start from when sown clockwise: the left end hole (the spec's
/// hole 1).
pub const LEFT_START: usize = 0;

/// The fewest stones a mtaji holds.
pub const MIN_MTAJI: u8 = 2;

/// The number of holes in a row, `n` (between [`MIN_ROW`] and [`MAX_ROW`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Row(u8);

/// Which part of the front row a hole is in, for the start of a capture's sowing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The left end (the spec's holes 1-2).
    LeftEnd,
    /// Between the ends (the spec's holes 3-6).
    Middle,
    /// The right end (the spec's holes 7-8).
    RightEnd,
}

impl Row {
    /// The full game's row of 8 holes.
    pub const FULL: Row = Row(MAX_ROW as u8);

    /// A row of `n` holes, refused outside `MIN_ROW..=MAX_ROW`.
    pub fn new(n: usize) -> Result<Row, String> {
        if (MIN_ROW..=MAX_ROW).contains(&n) {
            Ok(Row(n as u8))
        } else {
            Err(format!("a row has {MIN_ROW} to {MAX_ROW} holes, not {n}"))
        }
    }

    /// `n`, the holes of one row.
    #[inline(always)]
    pub fn len(self) -> usize {
        self.0 as usize
    }

    /// Never true: a row has at least [`MIN_ROW`] holes (for the `len` convention).
    pub fn is_empty(self) -> bool {
        false
    }

    /// `2n`, the holes of one player (the ring sowing goes round).
    #[inline(always)]
    pub fn ring(self) -> usize {
        2 * self.0 as usize
    }

    /// Whether own hole `hole` is in the front row.
    #[inline(always)]
    pub fn is_front(self, hole: usize) -> bool {
        hole < self.len()
    }

    /// The opponent's front hole facing own front hole `hole`.
    #[inline(always)]
    pub fn facing(self, hole: usize) -> usize {
        self.len() - 1 - hole
    }

    /// The hole next to `hole` in `direction`.
    #[inline(always)]
    pub fn next(self, hole: usize, direction: Direction) -> usize {
        let ring = self.ring();
        match direction {
            Direction::Clockwise => (hole + 1) % ring,
            Direction::Anticlockwise => (hole + ring - 1) % ring,
        }
    }

    /// The hole `steps` holes from `hole` in `direction`.
    #[inline(always)]
    pub fn advance(self, hole: usize, steps: usize, direction: Direction) -> usize {
        let ring = self.ring();
        let steps = steps % ring;
        match direction {
            Direction::Clockwise => (hole + steps) % ring,
            Direction::Anticlockwise => (hole + ring - steps) % ring,
        }
    }

    /// The most stones a mtaji may hold: `2n - 1`, less than one lap of the player's ring (the
    /// spec's 15 for `n = 8`), so that its last stone falls on another hole and no hole is
    /// passed twice.
    #[inline(always)]
    pub fn max_mtaji(self) -> u8 {
        (self.ring() - 1) as u8
    }

    /// Front holes in each end: [`END_HOLES`], at most half the row.
    #[inline(always)]
    pub fn end_width(self) -> usize {
        END_HOLES.min(self.len() / 2)
    }

    /// The part of the front row front hole `hole` is in.
    pub fn part(self, hole: usize) -> Part {
        if hole < self.end_width() {
            Part::LeftEnd
        } else if hole >= self.len() - self.end_width() {
            Part::RightEnd
        } else {
            Part::Middle
        }
    }

    /// The front hole captured stones start from when sown anticlockwise: the right end hole
    /// (the spec's hole 8).
    #[inline(always)]
    pub fn right_start(self) -> usize {
        self.len() - 1
    }

    /// Where the stones captured at `marker` are sown: the first hole and the direction (which
    /// becomes the move's direction). `direction` is the move's direction so far.
    pub fn capture_start(self, marker: usize, direction: Direction) -> (usize, Direction) {
        let direction = match self.part(marker) {
            Part::LeftEnd => Direction::Clockwise,
            Part::RightEnd => Direction::Anticlockwise,
            Part::Middle => direction,
        };
        match direction {
            Direction::Clockwise => (LEFT_START, direction),
            Direction::Anticlockwise => (self.right_start(), direction),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_row_has_the_specs_ends_and_starts() {
        let row = Row::FULL;
        let parts: Vec<Part> = (0..8).map(|h| row.part(h)).collect();
        use Part::*;
        assert_eq!(
            parts,
            [LeftEnd, LeftEnd, Middle, Middle, Middle, Middle, RightEnd, RightEnd]
        );
        assert_eq!(row.max_mtaji(), 15);
        assert_eq!(row.facing(0), 7);
        assert_eq!(row.facing(5), 2);
        assert_eq!(row.next(15, Direction::Clockwise), 0);
        assert_eq!(row.next(0, Direction::Anticlockwise), 15);
        assert_eq!(row.advance(14, 5, Direction::Clockwise), 3);
        assert_eq!(row.advance(2, 5, Direction::Anticlockwise), 13);
        let cw = Direction::Clockwise;
        let acw = Direction::Anticlockwise;
        assert_eq!(row.capture_start(1, acw), (0, cw));
        assert_eq!(row.capture_start(6, cw), (7, acw));
        assert_eq!(row.capture_start(3, cw), (0, cw));
        assert_eq!(row.capture_start(4, acw), (7, acw));
    }

    #[test]
    fn small_rows_have_ends_that_do_not_overlap() {
        use Part::*;
        let parts = |n: usize| -> Vec<Part> {
            let row = Row::new(n).unwrap();
            (0..n).map(|h| row.part(h)).collect()
        };
        assert_eq!(parts(2), [LeftEnd, RightEnd]);
        assert_eq!(parts(3), [LeftEnd, Middle, RightEnd]);
        assert_eq!(parts(4), [LeftEnd, LeftEnd, RightEnd, RightEnd]);
        assert_eq!(parts(5), [LeftEnd, LeftEnd, Middle, RightEnd, RightEnd]);
        assert!(Row::new(1).is_err());
        assert!(Row::new(9).is_err());
    }
}
