//! The published Sixteen Musashi viewer's URL parameters, and the board as a drawing program
//! needs it.
//!
//! The published viewer opens a position from `?size=33&turn=brown&init=ooooo..,o...o..,...`:
//! `size` is the board's number of points (25, 31, 33; a user board's own count), `init` the
//! rows of the position notation, `turn` the side to move (`brown` when absent, the viewer's
//! default). The same parameters, read here, let links of the published viewer open the same
//! positions in `retro serve`'s, and its links open in the published one.

use crate::board::Board;
use crate::position::{Position, Side};
use anyhow::{bail, Context, Result};
use retro_pipeline::Query;
use serde_json::json;

/// Whether `query` addresses `board`: its `size` is the board's number of points, and its
/// `trap` (absent for the base game) names the board's trap zone.
pub fn answers(board: &Board, query: &Query) -> bool {
    let size = query
        .get("size")
        .and_then(|s| s.trim().parse::<usize>().ok());
    let trap = match query.get("trap").map(|t| t.trim()) {
        None | Some("") => None,
        Some(text) => match board.parse_trap(text) {
            Ok(mask) => Some(mask),
            Err(_) => return false,
        },
    };
    size == Some(board.len()) && trap == board.trap
}

/// The position `"<rows> <side>"` that `query` (`init`, `turn`) describes on `board`, checked.
pub fn position(board: &Board, query: &Query) -> Result<String> {
    if let Some(size) = query.get("size") {
        if !answers(board, query) {
            let zone = match board.trap {
                None => String::new(),
                Some(trap) => format!(" and the trap zone {}", board.point_list(trap)),
            };
            let asked = match query.get("trap") {
                None => String::new(),
                Some(trap) => format!("&trap={trap}"),
            };
            bail!(
                "size={size}{asked} is not this board ({} has {} points{zone})",
                board.name,
                board.len()
            );
        }
    }
    let rows = query.get("init").with_context(|| {
        format!(
            "give the position as init=<rows>, e.g. size={}&turn=brown&init={}",
            board.len(),
            board
                .start
                .as_deref()
                .and_then(|s| s.split_whitespace().next())
                .unwrap_or("...")
        )
    })?;
    let side = match query.get("turn").map(|t| t.trim()) {
        None | Some("") => Side::Brown,
        Some(turn) => Side::parse(turn)?,
    };
    let pos = Position::parse(board, rows.trim(), side)?;
    Ok(pos.notation(board))
}

/// The viewer parameters of `pos` on `board` (`size`, `turn`, `init`, and `trap` with the
/// zone's points in the trap-zone variant, a parameter the published viewer does not have).
pub fn query(board: &Board, pos: &Position) -> Query {
    let mut query = Query::from([
        ("size".to_string(), board.len().to_string()),
        ("turn".to_string(), pos.side.name().to_string()),
        ("init".to_string(), pos.rows(board)),
    ]);
    if let Some(trap) = board.trap {
        query.insert("trap".to_string(), board.point_list(trap));
    }
    query
}

/// The board for a drawing program: its name and size, the notation's columns and rows,
/// every point (`name` as in moves, `x`, `y`), every line (two point names), the start
/// position, the trap zone's points (`null` for the base game).
pub fn board_json(board: &Board) -> serde_json::Value {
    let points: Vec<_> = board
        .points
        .iter()
        .enumerate()
        .map(|(p, &(x, y))| json!({"name": board.point_name(p), "x": x, "y": y}))
        .collect();
    let edges: Vec<_> = board
        .edges
        .iter()
        .map(|&(a, b)| json!([board.point_name(a as usize), board.point_name(b as usize)]))
        .collect();
    json!({
        "game": <crate::game::Musashi as retro_pipeline::GameRules>::NAME,
        "name": board.name,
        "size": board.len(),
        "width": board.width,
        "height": board.height,
        "points": points,
        "edges": edges,
        "start": board.start,
        "trap": board.trap.map(|trap| board.point_names(trap)),
        "pieces": {"o": "brown", "X": "black", ".": "empty"},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> Query {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn published_viewer_parameters_round_trip() {
        let board = Board::builtin("BOARD33").unwrap();
        let query = q(&[
            ("size", "33"),
            ("turn", "black"),
            ("init", "ooooo..,o...o..,o.X.o..,o...o..,ooooo.."),
        ]);
        assert!(answers(&board, &query));
        let text = position(&board, &query).unwrap();
        assert_eq!(text, "ooooo..,o...o..,o.X.o..,o...o..,ooooo.. black");
        let pos = Position::parse_with_side(&board, &text).unwrap();
        assert_eq!(super::query(&board, &pos), query);
    }

    #[test]
    fn the_trap_zone_is_a_parameter() {
        let board = Board::builtin("BOARD25").unwrap();
        let trapped = board
            .clone()
            .with_trap(board.parse_trap("corners").unwrap());
        let init = ("init", "ooooo,o...o,o.X.o,o...o,ooooo");
        let with = q(&[("size", "25"), ("trap", "00,04,40,44"), init]);
        let without = q(&[("size", "25"), init]);
        assert!(answers(&trapped, &with) && !answers(&trapped, &without));
        assert!(answers(&board, &without) && !answers(&board, &with));
        assert!(answers(
            &trapped,
            &q(&[("size", "25"), ("trap", "corners")])
        ));
        assert!(!answers(&trapped, &q(&[("size", "25"), ("trap", "99")])));
        let pos = Position::parse_with_side(&trapped, &position(&trapped, &with).unwrap()).unwrap();
        assert_eq!(
            query(&trapped, &pos),
            with.into_iter()
                .chain([("turn".into(), "brown".into())])
                .collect()
        );
        assert_eq!(
            board_json(&trapped)["trap"],
            serde_json::json!(["00", "04", "40", "44"])
        );
        assert!(board_json(&board)["trap"].is_null());
    }

    #[test]
    fn bad_parameters_are_errors_naming_the_problem() {
        let board = Board::builtin("BOARD25").unwrap();
        assert!(!answers(&board, &q(&[("size", "33")])));
        assert!(!answers(&board, &q(&[("size", "x")])));
        let e = position(&board, &q(&[("size", "25")])).unwrap_err();
        assert!(e.to_string().contains("init="), "{e}");
        let e = position(&board, &q(&[("size", "25"), ("init", "ooooo")])).unwrap_err();
        assert!(e.to_string().contains("rows"), "{e}");
        let bad_turn = q(&[("init", "ooooo,o...o,o.X.o,o...o,ooooo"), ("turn", "red")]);
        assert!(position(&board, &bad_turn).is_err());
        let default_turn = q(&[("init", "ooooo,o...o,o.X.o,o...o,ooooo")]);
        assert!(position(&board, &default_turn).unwrap().ends_with(" brown"));
    }

    #[test]
    fn the_board_lists_its_points_and_lines() {
        let board = Board::builtin("BOARD31").unwrap();
        let j = board_json(&board);
        assert_eq!(j["size"], 31);
        assert_eq!(j["points"].as_array().unwrap().len(), 31);
        assert_eq!(j["edges"].as_array().unwrap().len(), 59);
        assert_eq!(j["width"], 7);
    }
}
