//! Positions and their text notation.
//!
//! A position is written as the board's rows, top row first, separated by commas; each row has
//! one character per column: `o` brown, `X` black, `.` empty point or no point. The side to move
//! follows after a space: `brown` or `black`.

use crate::board::Board;

/// Who is to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Brown, the many pieces; brown moves first and wins by stalemating black.
    Brown,
    /// Black, the single piece; black captures, and wins by never being stalemated.
    Black,
}

impl Side {
    /// `"brown"` or `"black"`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Brown => "brown",
            Side::Black => "black",
        }
    }

    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::Brown => Side::Black,
            Side::Black => Side::Brown,
        }
    }

    /// Parses `brown` or `black`.
    pub fn parse(text: &str) -> Result<Side, PositionError> {
        match text {
            "brown" => Ok(Side::Brown),
            "black" => Ok(Side::Black),
            other => Err(PositionError(format!(
                "unknown side '{other}': write 'brown' or 'black'"
            ))),
        }
    }
}

/// A position: where the black piece is, which points hold brown pieces, who moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// The black piece's point.
    pub black: usize,
    /// Bitmask of brown pieces (never contains `black`).
    pub browns: u64,
    /// Side to move.
    pub side: Side,
}

/// Why a position string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PositionError(pub String);

impl Position {
    /// Parses the board part of the notation (rows only) with the given side.
    pub fn parse(board: &Board, rows: &str, side: Side) -> Result<Position, PositionError> {
        let rows: Vec<&str> = rows.split(',').collect();
        if rows.len() != board.height {
            return Err(PositionError(format!(
                "position has {} rows, {} needs {}",
                rows.len(),
                board.name,
                board.height
            )));
        }
        let mut black = None;
        let mut browns = 0u64;
        for (y, row) in rows.iter().enumerate() {
            if row.chars().count() != board.width {
                return Err(PositionError(format!(
                    "row {y} ('{row}') has {} characters, {} needs {} (rows count from 0 at the top)",
                    row.chars().count(),
                    board.name,
                    board.width
                )));
            }
            for (x, c) in row.chars().enumerate() {
                if c == '.' {
                    continue;
                }
                let point = board.point_at(x, y);
                match (c, point) {
                    ('o' | 'X', None) => {
                        return Err(PositionError(format!(
                            "'{c}' at {x}{y} is not on a point of {} (points are named column then row, from 0, as in moves and board files)",
                            board.name
                        )))
                    }
                    ('o', Some(p)) => browns |= 1 << p,
                    ('X', Some(p)) => {
                        if black.is_some() {
                            return Err(PositionError("position has two black pieces 'X'".into()));
                        }
                        black = Some(p);
                    }
                    _ => {
                        return Err(PositionError(format!(
                            "unexpected character '{c}' at {x}{y}: use 'o', 'X' or '.'"
                        )))
                    }
                }
            }
        }
        let black = black.ok_or_else(|| PositionError("position has no black piece 'X'".into()))?;
        Ok(Position {
            black,
            browns,
            side,
        })
    }

    /// Parses `"<rows> <side>"`.
    pub fn parse_with_side(board: &Board, text: &str) -> Result<Position, PositionError> {
        let mut parts = text.split_whitespace();
        let (Some(rows), Some(side), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(PositionError(format!(
                "expected '<rows> <side>', found '{text}'"
            )));
        };
        Position::parse(board, rows, Side::parse(side)?)
    }

    /// The rows part of the notation.
    pub fn rows(&self, board: &Board) -> String {
        // Every row is `width` characters and a comma (none after the last); the points are
        // written into it (a server writes this for every move and ply it reports).
        let stride = board.width + 1;
        let mut out = vec![b'.'; board.height * stride - 1];
        for y in 1..board.height {
            out[y * stride - 1] = b',';
        }
        for (p, &(x, y)) in board.points.iter().enumerate() {
            out[y as usize * stride + x as usize] = if p == self.black {
                b'X'
            } else if self.browns >> p & 1 == 1 {
                b'o'
            } else {
                continue;
            };
        }
        String::from_utf8(out).expect("the notation is ASCII")
    }

    /// The board as text: one line per row with `o`, `X`, `.` on points and blanks elsewhere,
    /// columns and rows numbered from 0 so that a point reads `xy` as in moves and board files.
    pub fn diagram(&self, board: &Board) -> String {
        let mut out = String::from("   ");
        for x in 0..board.width {
            out.push_str(&format!(" {x}"));
        }
        out.push('\n');
        for y in 0..board.height {
            out.push_str(&format!("{y:>2} "));
            for x in 0..board.width {
                out.push(' ');
                out.push(match board.point_at(x, y) {
                    Some(p) if p == self.black => 'X',
                    Some(p) if self.browns >> p & 1 == 1 => 'o',
                    Some(_) => '.',
                    None => ' ',
                });
            }
            out.push('\n');
        }
        out
    }

    /// The full notation, `"<rows> <side>"`.
    pub fn notation(&self, board: &Board) -> String {
        format!("{} {}", self.rows(board), self.side.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_bad_input() {
        let b = Board::builtin("BOARD25").unwrap();
        let start = b.start.clone().unwrap();
        let p = Position::parse_with_side(&b, &start).unwrap();
        assert_eq!(p.notation(&b), start);
        assert_eq!(p.browns.count_ones(), 16);
        let bad = |s: &str| Position::parse_with_side(&b, s).unwrap_err().0;
        assert!(bad("ooooo,o...o,o.X.o,o...o brown").contains("4 rows"));
        assert!(bad("ooooo,o...o,o.X.o,o...o,oooo brown").contains("row 4"));
        assert!(bad("ooooo,o...o,o.X.o,o...o,ooooX brown").contains("two black"));
        assert!(bad("ooooo,o...o,o...o,o...o,ooooo brown").contains("no black"));
        assert!(bad("ooooo,o...o,o.X.o,o...o,ooooo white").contains("unknown side"));
        assert!(bad("ooooo,o...o,o.X.o,o...o,oooo? brown").contains("unexpected character"));
        let b33 = Board::builtin("BOARD33").unwrap();
        let e = Position::parse_with_side(&b33, "oooooo.,o...o..,o.X.o..,o...o..,ooooo.. brown");
        assert!(e.unwrap_err().0.contains("not on a point"));
    }
}
