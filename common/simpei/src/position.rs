//! A position: where the white and the black pieces stand, and who is to move.
//!
//! **Notation.** The four rows of the upper world, top row first, then `/`, then the three rows
//! of the lower world, rows separated by commas; one character per hole, `w` white, `b` black,
//! `.` empty; then a space and the side to move, `white` or `black`:
//!
//! ```text
//! w...,.b..,....,..../...,.w.,... white
//! ```
//!
//! The `c`-th character of row `r` of a world is the hole named `u{c}{r}` or `l{c}{r}`.
//! Pieces in hand are not written: they are what is left of each side's four.

use crate::board::{holes, Geometry, Hole, World, ALL, HOLES};

/// Pieces per side.
pub const PIECES: u32 = 4;

/// A side. White moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Colour {
    /// The first player.
    White,
    /// The second player.
    Black,
}

impl Colour {
    /// The other side.
    pub fn other(self) -> Colour {
        match self {
            Colour::White => Colour::Black,
            Colour::Black => Colour::White,
        }
    }

    /// Its name in notation: `white` or `black`.
    pub fn name(self) -> &'static str {
        match self {
            Colour::White => "white",
            Colour::Black => "black",
        }
    }

    /// The side named `name`.
    pub fn parse(name: &str) -> Result<Colour, PositionError> {
        match name {
            "white" | "w" => Ok(Colour::White),
            "black" | "b" => Ok(Colour::Black),
            other => Err(PositionError(format!(
                "unknown side '{other}': use 'white' or 'black'"
            ))),
        }
    }

    /// The side to move when `pieces` pieces are on the board during placement (white
    /// places first, so white is to move when the count is even).
    pub fn placing(pieces: u32) -> Colour {
        if pieces.is_multiple_of(2) {
            Colour::White
        } else {
            Colour::Black
        }
    }
}

/// Why a position was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PositionError(pub String);

/// A position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// Holes of the white pieces.
    pub white: u32,
    /// Holes of the black pieces.
    pub black: u32,
    /// The side to move.
    pub to_move: Colour,
}

impl Position {
    /// The empty board, white to place.
    pub const START: Position = Position {
        white: 0,
        black: 0,
        to_move: Colour::White,
    };

    /// A checked position: disjoint colours, at most four pieces each, and the counts (and,
    /// during placement, the side to move) that alternate placement leaves: after `n`
    /// placements white has `ceil(n/2)` pieces and black `floor(n/2)`.
    pub fn new(white: u32, black: u32, to_move: Colour) -> Result<Position, PositionError> {
        if white & black != 0 || (white | black) & !ALL != 0 {
            return Err(PositionError("two pieces on one hole".into()));
        }
        let (w, b) = (white.count_ones(), black.count_ones());
        if w > PIECES || b > PIECES {
            return Err(PositionError(format!(
                "{w} white and {b} black pieces: each side has {PIECES}"
            )));
        }
        let n = w + b;
        if w != n.div_ceil(2) || b != n / 2 {
            return Err(PositionError(format!(
                "{w} white and {b} black pieces cannot arise: pieces are placed alternately, white first, and never captured"
            )));
        }
        if n < 2 * PIECES && to_move != Colour::placing(n) {
            return Err(PositionError(format!(
                "with {n} pieces on the board it is {} to place",
                Colour::placing(n).name()
            )));
        }
        Ok(Position {
            white,
            black,
            to_move,
        })
    }

    /// Pieces on the board.
    pub fn pieces(&self) -> u32 {
        (self.white | self.black).count_ones()
    }

    /// Whether the game is still placing pieces.
    pub fn placing(&self) -> bool {
        self.pieces() < 2 * PIECES
    }

    /// The holes of `colour`.
    pub fn of(&self, colour: Colour) -> u32 {
        match colour {
            Colour::White => self.white,
            Colour::Black => self.black,
        }
    }

    /// The position with the holes of `colour` set to `own` and the other side's to `other`,
    /// and `to_move` to move (unchecked: the rules only build legal positions).
    pub fn from_sides(colour: Colour, own: u32, other: u32, to_move: Colour) -> Position {
        match colour {
            Colour::White => Position {
                white: own,
                black: other,
                to_move,
            },
            Colour::Black => Position {
                white: other,
                black: own,
                to_move,
            },
        }
    }

    /// The same position with the colours exchanged, and the side to move with them.
    pub fn colours_exchanged(&self) -> Position {
        Position {
            white: self.black,
            black: self.white,
            to_move: self.to_move.other(),
        }
    }

    /// Its image under symmetry `g` of `geometry`.
    pub fn image(&self, geometry: &Geometry, g: usize) -> Position {
        Position {
            white: geometry.apply(g, self.white),
            black: geometry.apply(g, self.black),
            to_move: self.to_move,
        }
    }

    /// Parses the notation (see the module documentation).
    pub fn parse(text: &str) -> Result<Position, PositionError> {
        let mut parts = text.split_whitespace();
        let (Some(board), Some(side), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(PositionError(format!(
                "expected '<upper rows>/<lower rows> <side>', e.g. '....,....,....,..../...,...,... white'; found '{text}'"
            )));
        };
        let to_move = Colour::parse(side)?;
        let Some((upper, lower)) = board.split_once('/') else {
            return Err(PositionError(
                "the upper and lower worlds are separated by '/'".into(),
            ));
        };
        let mut white = 0;
        let mut black = 0;
        for (world, rows) in [(World::Upper, upper), (World::Lower, lower)] {
            let rows: Vec<&str> = rows.split(',').collect();
            let n = world.size();
            let name = match world {
                World::Upper => "upper",
                World::Lower => "lower",
            };
            if rows.len() != n {
                return Err(PositionError(format!(
                    "the {name} world has {n} rows, found {}",
                    rows.len()
                )));
            }
            for (r, row) in rows.iter().enumerate() {
                if row.chars().count() != n {
                    return Err(PositionError(format!(
                        "row {r} of the {name} world ('{row}') needs {n} holes (rows count from 0 at the top)"
                    )));
                }
                for (c, ch) in row.chars().enumerate() {
                    let bit = Hole::at(world, r, c).bit();
                    match ch {
                        'w' | 'W' => white |= bit,
                        'b' | 'B' => black |= bit,
                        '.' => {}
                        other => {
                            return Err(PositionError(format!(
                                "unexpected '{other}' at {}: use 'w', 'b' or '.'",
                                Hole::at(world, r, c).name()
                            )))
                        }
                    }
                }
            }
        }
        Position::new(white, black, to_move)
    }

    /// The notation (see the module documentation).
    pub fn notation(&self) -> String {
        let mut out = String::new();
        for world in [World::Upper, World::Lower] {
            if world == World::Lower {
                out.push('/');
            }
            let n = world.size();
            for r in 0..n {
                if r > 0 {
                    out.push(',');
                }
                for c in 0..n {
                    out.push(self.symbol(Hole::at(world, r, c)));
                }
            }
        }
        format!("{out} {}", self.to_move.name())
    }

    /// The board drawn on its 7x7 lattice, with the lower world between the upper holes and
    /// column and row numbers of the upper world.
    pub fn diagram(&self) -> String {
        let mut out = String::from("  0   1   2   3\n");
        for y in 0..7 {
            if y % 2 == 0 {
                out.push_str(&format!("{} ", y / 2));
            } else {
                out.push_str("  ");
            }
            for x in 0..7 {
                let hole = match (x % 2, y % 2) {
                    (0, 0) => Some(Hole::at(World::Upper, y / 2, x / 2)),
                    (1, 1) => Some(Hole::at(World::Lower, y / 2, x / 2)),
                    _ => None,
                };
                out.push_str(&match hole {
                    Some(h) => format!("{}", self.symbol(h)),
                    None => " ".into(),
                });
                if x < 6 {
                    out.push(' ');
                }
            }
            out.truncate(out.trim_end().len());
            out.push('\n');
        }
        out
    }

    fn symbol(&self, hole: Hole) -> char {
        if self.white & hole.bit() != 0 {
            'w'
        } else if self.black & hole.bit() != 0 {
            'b'
        } else {
            '.'
        }
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.notation())
    }
}

/// The holes a position leaves empty.
pub fn empty(pos: &Position) -> u32 {
    ALL & !(pos.white | pos.black)
}

/// Names of the holes of a mask, comma-separated.
pub fn hole_list(mask: u32) -> String {
    holes(mask).map(|h| h.name()).collect::<Vec<_>>().join(",")
}

const _: () = assert!(HOLES <= 32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation_round_trips_and_bad_input_is_named() {
        let text = "w...,.b..,....,...w/...,.b.,... white";
        let pos = Position::parse(text).unwrap();
        assert_eq!(pos.notation(), text);
        assert_eq!(pos.pieces(), 4);
        let bad = |s: &str| Position::parse(s).unwrap_err().0;
        assert!(bad("w...,....,....,..../...,...,... white").contains("black to place"));
        assert!(bad("w...,....,....,..../...,... black").contains("3 rows"));
        assert!(bad("w...,....,....,.../...,...,... black").contains("row 3"));
        assert!(bad("w...,....,....,..x./...,...,... black").contains("u23"));
        assert!(bad("ww..,....,....,..../...,...,... black").contains("cannot arise"));
        assert!(bad("w...,....,....,.... black").contains("'/'"));
        assert!(bad("w...,....,....,..../...,...,... red").contains("unknown side"));
    }

    #[test]
    fn the_diagram_puts_lower_holes_between_upper_ones() {
        let pos = Position::parse("ww..,....,....,..../b..,...,..w black").unwrap_err();
        assert!(pos.0.contains("cannot arise"), "{pos}");
        let pos = Position::parse("w...,....,....,..../b..,...,... white").unwrap();
        let text = pos.diagram();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "  0   1   2   3");
        assert_eq!(lines[1], "0 w   .   .   .");
        assert_eq!(lines[2], "    b   .   .");
        assert_eq!(lines.len(), 8);
    }
}
