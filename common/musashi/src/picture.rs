//! A position drawn as an SVG image: the board's lines and points, the pieces, the side to
//! move. `retro probe --svg` writes it; the web viewer of `retro serve` shows the same image
//! and finds its points by their `data-point` attribute (the point's name, as in moves).

use crate::board::Board;
use crate::position::{Position, Side};
use std::fmt::Write;

/// Pixels between neighbouring grid coordinates.
const UNIT: i32 = 80;
/// Pixels around the board.
const MARGIN: i32 = 50;
/// Height of the caption below the board.
const CAPTION: i32 = 40;

/// The centre of point `p` in the image.
fn centre(board: &Board, p: usize) -> (i32, i32) {
    let (x, y) = board.points[p];
    (MARGIN + UNIT * x as i32, MARGIN + UNIT * y as i32)
}

/// The SVG document of `pos` on `board`.
pub fn svg(board: &Board, pos: &Position) -> String {
    let width = 2 * MARGIN + UNIT * (board.width as i32 - 1);
    let height = 2 * MARGIN + UNIT * (board.height as i32 - 1) + CAPTION;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="board" viewBox="0 0 {width} {height}" width="{width}" height="{height}" data-board="{}" data-turn="{}">"##,
        escape(&board.name),
        pos.side.name()
    );
    let _ = writeln!(
        out,
        r##"<rect x="0" y="0" width="{width}" height="{height}" fill="#f3e3c3"/>"##
    );
    let _ = writeln!(
        out,
        r##"<g class="lines" stroke="#5b4a32" stroke-width="3">"##
    );
    for &(a, b) in &board.edges {
        let ((x1, y1), (x2, y2)) = (centre(board, a as usize), centre(board, b as usize));
        let _ = writeln!(out, r#"<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>"#);
    }
    let _ = writeln!(out, "</g>");
    if let Some(trap) = board.trap {
        // The trap zone: a red square behind each of its points.
        let _ = writeln!(
            out,
            r##"<g class="trap" fill="#e7b3a4" stroke="#b03a2e" stroke-width="3">"##
        );
        for p in (0..board.len()).filter(|&p| trap >> p & 1 == 1) {
            let (cx, cy) = centre(board, p);
            let _ = writeln!(
                out,
                r#"<rect data-trap="{}" x="{}" y="{}" width="64" height="64" rx="8"/>"#,
                board.point_name(p),
                cx - 32,
                cy - 32
            );
        }
        let _ = writeln!(out, "</g>");
    }
    let _ = writeln!(out, r#"<g class="points">"#);
    for p in 0..board.len() {
        let (cx, cy) = centre(board, p);
        let name = board.point_name(p);
        let (class, piece) = if pos.black == p {
            (
                "black",
                r##"<circle r="26" fill="#111" stroke="#eee" stroke-width="3"/>"##,
            )
        } else if pos.browns >> p & 1 == 1 {
            (
                "brown",
                r##"<circle r="24" fill="#9a5b25" stroke="#3b2410" stroke-width="3"/>"##,
            )
        } else {
            ("empty", r##"<circle r="7" fill="#5b4a32"/>"##)
        };
        let _ = writeln!(
            out,
            r#"<g class="point {class}" data-point="{name}" transform="translate({cx},{cy})"><circle class="hit" r="32" fill="transparent"/>{piece}</g>"#
        );
    }
    let _ = writeln!(out, "</g>");
    let caption = match pos.side {
        Side::Brown => "brown to move",
        Side::Black => "black to move",
    };
    let name = match board.trap {
        None => board.name.clone(),
        Some(_) => format!("{} · trap zone", board.name),
    };
    let _ = writeln!(
        out,
        r##"<text class="caption" x="{}" y="{}" text-anchor="middle" font-family="sans-serif" font-size="22" fill="#333">{} · {caption}</text>"##,
        width / 2,
        height - CAPTION / 2,
        escape(&name)
    );
    out.push_str("</svg>\n");
    out
}

/// `text` with the characters XML gives meaning to escaped.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_is_drawn_with_every_line_point_and_piece() {
        let board = Board::builtin("BOARD25").unwrap();
        let pos = Position::parse_with_side(&board, board.start.as_deref().unwrap()).unwrap();
        let svg = svg(&board, &pos);
        assert_eq!(svg.matches("<line ").count(), 56);
        assert_eq!(svg.matches("data-point=").count(), 25);
        assert_eq!(svg.matches("class=\"point brown\"").count(), 16);
        assert_eq!(svg.matches("class=\"point black\"").count(), 1);
        assert!(svg.contains(r#"data-point="22" transform="translate(210,210)""#));
        assert!(svg.contains("brown to move"));
        assert!(!svg.contains("data-trap"));
    }

    #[test]
    fn the_trap_zone_is_marked() {
        let board = Board::builtin("BOARD25").unwrap();
        let board = board
            .clone()
            .with_trap(board.parse_trap("corners").unwrap());
        let pos = Position::parse_with_side(&board, board.start.as_deref().unwrap()).unwrap();
        let svg = svg(&board, &pos);
        assert_eq!(svg.matches("data-trap=").count(), 4);
        assert!(svg.contains(r#"data-trap="44""#));
        assert!(svg.contains("trap zone"));
    }
}
