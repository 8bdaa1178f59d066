//! The board file format (documented in the README):
//!
//! ```text
//! # comment
//! name: BOARD33
//! points: 00 01 02 ...          (xy: column digit, row digit; may repeat over several lines)
//! edges: 00-01 00-10 ...        (may repeat over several lines)
//! start: ooooo..,o...o..,o.X.o..,o...o..,ooooo.. brown     (optional)
//! ```

use crate::board::{Board, MAX_POINTS};
use std::collections::HashSet;

/// A problem in a board file, with the line it was found on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("board file line {line}: {problem}")]
pub struct BoardFileError {
    /// 1-based line number (0 for problems of the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub problem: String,
}

fn error(line: usize, problem: impl Into<String>) -> BoardFileError {
    BoardFileError {
        line,
        problem: problem.into(),
    }
}

fn parse_point(token: &str, line: usize) -> Result<(u8, u8), BoardFileError> {
    let bytes = token.as_bytes();
    if bytes.len() != 2 || !bytes.iter().all(u8::is_ascii_digit) {
        return Err(error(
            line,
            format!("'{token}' is not a point: write a column digit then a row digit, like 42"),
        ));
    }
    Ok((bytes[0] - b'0', bytes[1] - b'0'))
}

/// Parses and validates a board file.
pub fn parse_board_file(text: &str) -> Result<Board, BoardFileError> {
    let mut name = None;
    let mut points: Vec<(u8, u8)> = Vec::new();
    let mut point_line: Vec<usize> = Vec::new();
    let mut raw_edges: Vec<(String, String, usize)> = Vec::new();
    let mut start = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let Some((key, value)) = content.split_once(':') else {
            return Err(error(
                line,
                format!("expected 'name:', 'points:', 'edges:' or 'start:', found '{content}'"),
            ));
        };
        match key.trim() {
            "name" => {
                if name.is_some() {
                    return Err(error(line, "second 'name:' line"));
                }
                let v = value.trim();
                if v.is_empty() || v.chars().any(char::is_whitespace) {
                    return Err(error(line, "the name must be one word"));
                }
                name = Some(v.to_string());
            }
            "points" => {
                for token in value.split_whitespace() {
                    let p = parse_point(token, line)?;
                    if let Some(first) = points.iter().position(|&q| q == p) {
                        return Err(error(
                            line,
                            format!(
                                "duplicate point {token} (first on line {})",
                                point_line[first]
                            ),
                        ));
                    }
                    points.push(p);
                    point_line.push(line);
                    if points.len() > MAX_POINTS {
                        return Err(error(
                            line,
                            format!("too many points: at most {MAX_POINTS} are supported"),
                        ));
                    }
                }
            }
            "edges" => {
                for token in value.split_whitespace() {
                    let Some((a, b)) = token.split_once('-') else {
                        return Err(error(line, format!("'{token}' is not an edge like 00-01")));
                    };
                    raw_edges.push((a.to_string(), b.to_string(), line));
                }
            }
            "start" => {
                if start.is_some() {
                    return Err(error(line, "second 'start:' line"));
                }
                start = Some((value.trim().to_string(), line));
            }
            other => {
                return Err(error(
                    line,
                    format!("unknown key '{other}' (expected name, points, edges or start)"),
                ))
            }
        }
    }
    let name = name.ok_or_else(|| error(0, "missing 'name:' line"))?;
    if points.len() < 2 {
        return Err(error(0, "a board needs at least two points"));
    }
    let mut edges = Vec::with_capacity(raw_edges.len());
    let mut seen = HashSet::new();
    for (a, b, line) in raw_edges {
        let index = |token: &str| -> Result<u8, BoardFileError> {
            let p = parse_point(token, line)?;
            points
                .iter()
                .position(|&q| q == p)
                .map(|i| i as u8)
                .ok_or_else(|| error(line, format!("edge {a}-{b}: unknown point {token}")))
        };
        let (ia, ib) = (index(&a)?, index(&b)?);
        if ia == ib {
            return Err(error(line, format!("edge {a}-{b} joins a point to itself")));
        }
        let key = (ia.min(ib), ia.max(ib));
        if !seen.insert(key) {
            return Err(error(line, format!("duplicate edge {a}-{b}")));
        }
        edges.push(key);
    }
    for (i, &(x, y)) in points.iter().enumerate() {
        if !edges
            .iter()
            .any(|&(a, b)| a as usize == i || b as usize == i)
        {
            return Err(error(
                point_line[i],
                format!("isolated point {x}{y}: no edge touches it"),
            ));
        }
    }
    let board = Board::assemble(
        name,
        points,
        edges,
        start.as_ref().map(|(s, _)| s.clone()),
        text.to_string(),
    );
    if let Some((s, line)) = start {
        if let Err(e) = crate::position::Position::parse_with_side(&board, &s) {
            return Err(error(line, format!("start position: {e}")));
        }
    }
    Ok(board)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_board_file(text).unwrap_err().to_string()
    }

    #[test]
    fn reports_problems_with_their_line() {
        let ok = "name: T\npoints: 00 10 20\nedges: 00-10 10-20\n";
        assert!(parse_board_file(ok).is_ok());
        assert_eq!(
            err("name: T\npoints: 00 10\nedges: 00-10 10-30\n"),
            "board file line 3: edge 10-30: unknown point 30"
        );
        assert_eq!(
            err("name: T\npoints: 00 10\npoints: 00\nedges: 00-10\n"),
            "board file line 3: duplicate point 00 (first on line 2)"
        );
        assert_eq!(
            err("name: T\npoints: 00 10\nedges: 00-10\nedges: 10-00\n"),
            "board file line 4: duplicate edge 10-00"
        );
        assert_eq!(
            err("name: T\npoints: 00 10 20\nedges: 00-10\n"),
            "board file line 2: isolated point 20: no edge touches it"
        );
        assert!(err("name: T\npoints: 0\n").contains("line 2: '0' is not a point"));
        assert!(err("points: 00 10\nedges: 00-10\n").contains("missing 'name:'"));
        assert!(err("name: T\nfoo: 1\n").contains("line 2: unknown key 'foo'"));
        assert!(
            err("name: T\npoints: 00 10\nedges: 00-10\nstart: X.. black\n")
                .contains("line 4: start position")
        );
        let many: Vec<String> = (0..64).map(|i| format!("{}{}", i % 10, i / 10)).collect();
        assert!(err(&format!("name: T\npoints: {}\n", many.join(" "))).contains("too many points"));
    }
}
