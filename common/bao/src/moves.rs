//! Moves as people write them: a hole and a direction, `f3 cw`.
//!
//! A player's holes are named from that player's seat: the front row `f1..fn` from left to
//! right (indices `0..n`), the back row `b1..bn` from left to right (indices `2n-1` down to
//! `n`, so `b1` is behind `f1`). The direction is `cw` (clockwise, rightwards along the front
//! row) or `acw`.

use crate::direction::Direction;
use crate::row::Row;

/// A move: the hole lifted first and the direction it is sown in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    /// The mover's hole (an index in the mover's convention).
    pub hole: usize,
    /// The direction of the first sowing.
    pub direction: Direction,
}

impl Move {
    /// The move written as `f3 cw`.
    pub fn text(self, row: Row) -> String {
        format!("{} {}", hole_name(row, self.hole), self.direction)
    }

    /// Parses `HOLE DIRECTION` (`f3 cw`, `b1 acw`) for rows of `row` holes.
    pub fn parse(row: Row, text: &str) -> Result<Move, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let [hole, direction] = words[..] else {
            return Err(format!(
                "'{}' is not a move: write a hole and a direction, e.g. 'f3 cw' or 'b1 acw'",
                text.trim()
            ));
        };
        Ok(Move {
            hole: parse_hole(row, hole)?,
            direction: Direction::parse(direction)?,
        })
    }
}

/// The name of own hole `hole`: `f1..fn` in the front row, `b1..bn` in the back row (both from
/// the owner's left).
pub fn hole_name(row: Row, hole: usize) -> String {
    if row.is_front(hole) {
        format!("f{}", hole + 1)
    } else {
        format!("b{}", row.ring() - hole)
    }
}

/// The hole named `name` (see [`hole_name`]).
pub fn parse_hole(row: Row, name: &str) -> Result<usize, String> {
    let name = name.trim();
    let n = row.len();
    let refuse = || {
        format!(
            "'{name}' is not a hole: f1..f{n} (front row) or b1..b{n} (back row), from your left"
        )
    };
    let mut chars = name.chars();
    let letter = chars.next().map(|c| c.to_ascii_lowercase());
    let number: usize = chars.as_str().parse().map_err(|_| refuse())?;
    if !(1..=n).contains(&number) {
        return Err(refuse());
    }
    match letter {
        Some('f') => Ok(number - 1),
        Some('b') => Ok(row.ring() - number),
        _ => Err(refuse()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hole_names_round_trip_and_back_holes_count_from_the_left() {
        for n in 2..=8 {
            let row = Row::new(n).unwrap();
            for hole in 0..row.ring() {
                assert_eq!(parse_hole(row, &hole_name(row, hole)), Ok(hole));
            }
        }
        let row = Row::FULL;
        assert_eq!(hole_name(row, 15), "b1");
        assert_eq!(hole_name(row, 8), "b8");
        assert_eq!(
            Move::parse(row, " F3  acw ").unwrap(),
            Move {
                hole: 2,
                direction: Direction::Anticlockwise
            }
        );
        for bad in [
            "f9 cw",
            "f0 cw",
            "x1 cw",
            "f1",
            "f1 up",
            "f1 cw now",
            "",
            "f cw",
        ] {
            assert!(Move::parse(row, bad).is_err(), "{bad}");
        }
    }
}
