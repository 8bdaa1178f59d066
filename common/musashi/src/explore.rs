//! Sixteen Musashi seen from the outside ([`Explore`]): positions in the published viewer's
//! notation looked up in solved tables, every move with the value it leads to, and the
//! principal variation. What `retro probe`, `retro verify --values` and the HTTP API say of a
//! Musashi position is built here.

use crate::game::Musashi;
use crate::position::{Position, Side};
use crate::rules::{moves, Move};
use crate::values::describe;
use anyhow::Result;
use retro_engine::Side as EngineSide;
use retro_pipeline::explore::{
    position_and_side, Explore, Extremes, LookupError, Probe, Query, StoredValues,
};
use serde::Serialize;
use std::fmt::Write;

/// A position as a person types it.
pub const EXAMPLE: &str = "ooooo,o...o,o.X.o,o...o,ooooo brown";

/// The engine's side of a Sixteen Musashi side (brown moves first).
pub fn engine_side(side: Side) -> EngineSide {
    match side {
        Side::Brown => EngineSide::First,
        Side::Black => EngineSide::Second,
    }
}

/// The stored value of any position of `game` (its canonical image is looked up); a position
/// with more browns than the tables hold is an error saying so.
pub fn value(game: &Musashi, tables: &dyn StoredValues, pos: &Position) -> Result<u8> {
    let k = pos.browns.count_ones() as usize;
    if k > game.max_browns() {
        return Err(LookupError::NotSolved(format!(
            "position has {k} brown pieces; these tables hold positions with at most {}",
            game.max_browns()
        ))
        .into());
    }
    let (slice, _, index) = game.locate(pos.black, pos.browns);
    tables.canonical(slice, index, engine_side(pos.side))
}

/// How good a move is for `mover`, smaller first, from the value `after` it leads to: the
/// mover's wins fastest first, then its losses slowest first (Sixteen Musashi has no draws).
fn rank(mover: Side, after: u8) -> (u8, u8) {
    match mover {
        // Brown wins when the value after is not 0; the fewer plies the better.
        Side::Brown if after != 0 => (0, after),
        Side::Brown => (1, 0),
        // Black wins when the value after is 0; otherwise it delays the loss.
        Side::Black if after == 0 => (0, 0),
        Side::Black => (1, u8::MAX - after),
    }
}

/// Every legal move of the side to move with the position and value it leads to, best first
/// ([`rank`]; moves of equal value in generation order).
pub fn ranked_moves(
    game: &Musashi,
    tables: &dyn StoredValues,
    pos: &Position,
) -> Result<Vec<(Move, Position, u8)>> {
    let mut ranked = Vec::new();
    for (mv, next) in moves(game.board(), pos) {
        ranked.push((mv, next, value(game, tables, &next)?));
    }
    ranked.sort_by_key(|&(_, _, v)| rank(pos.side, v));
    Ok(ranked)
}

/// The principal variation from `pos`: best moves (brown: fastest win; black: slowest loss)
/// until black has no move. Empty if `pos` is not a brown win.
///
/// A brown win of value `v > 1` has a move to a position of value `v - 1`, and that is a best
/// move for either side (brown's fastest win is `1 +` the least winning value, black's slowest
/// loss `1 +` the largest); the first such move in generation order is the one
/// [`ranked_moves`] lists first. So each ply reads values only until it meets `v - 1`, about
/// half of them, which is what keeps a probe with its whole line cheap for a server.
pub fn principal_variation(
    game: &Musashi,
    tables: &dyn StoredValues,
    pos: &Position,
) -> Result<Vec<(Move, Position, u8)>> {
    let mut line = Vec::new();
    let mut current = *pos;
    let mut v = value(game, tables, &current)?;
    if v == 0 {
        return Ok(line);
    }
    while v > 1 {
        let mut best = None;
        for (mv, next) in moves(game.board(), &current) {
            if value(game, tables, &next)? == v - 1 {
                best = Some((mv, next));
                break;
            }
        }
        let Some((mv, next)) = best else {
            return Err(LookupError::Damaged(format!(
                "no move from {} leads to value {} although it has value {v}: the tables are inconsistent",
                current.notation(game.board()),
                v - 1
            ))
            .into());
        };
        line.push((mv, next, v - 1));
        current = next;
        v -= 1;
    }
    Ok(line)
}

/// What `retro probe` reports on one position: the fields of its `--json` output, and of the
/// HTTP probe API.
#[derive(Serialize)]
pub struct ProbeReport {
    /// The position in notation, `"<rows> <side>"`.
    pub position: String,
    /// The side to move.
    pub turn: &'static str,
    /// The stored value.
    pub value: u8,
    /// The value in words.
    pub meaning: String,
    /// Every legal move, best first.
    pub moves: Vec<MoveReport>,
    /// Best play to the end of the game (empty unless brown wins).
    pub principal_variation: Vec<MoveReport>,
}

/// One move of a [`ProbeReport`].
#[derive(Serialize)]
pub struct MoveReport {
    /// The move, `xy-xy` with `x` and the captured points after it.
    #[serde(rename = "move")]
    pub notation: String,
    /// The side that makes the move.
    pub side: &'static str,
    /// The position it leads to.
    pub position: String,
    /// The value of that position.
    pub value: u8,
    /// That value in words.
    pub meaning: String,
}

impl ProbeReport {
    /// Looks `pos` up: its value, its moves best first, its principal variation.
    pub fn of(game: &Musashi, tables: &dyn StoredValues, pos: &Position) -> Result<ProbeReport> {
        let board = game.board();
        let report = |side: Side, (mv, next, v): (Move, Position, u8)| MoveReport {
            notation: mv.notation(board),
            side: side.name(),
            position: next.notation(board),
            value: v,
            meaning: describe(v, next.side),
        };
        let value = value(game, tables, pos)?;
        let moves = ranked_moves(game, tables, pos)?
            .into_iter()
            .map(|m| report(pos.side, m))
            .collect();
        let principal_variation = principal_variation(game, tables, pos)?
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                let side = if i % 2 == 0 {
                    pos.side
                } else {
                    pos.side.other()
                };
                report(side, m)
            })
            .collect();
        Ok(ProbeReport {
            position: pos.notation(board),
            turn: pos.side.name(),
            value,
            meaning: describe(value, pos.side),
            moves,
            principal_variation,
        })
    }

    /// The report for a person: the board, the value, every legal move best first with the
    /// value it leads to, and the principal variation.
    pub fn text(&self, game: &Musashi, pos: &Position) -> String {
        let mut out = pos.diagram(game.board());
        let _ = writeln!(out, "{}", self.position);
        let _ = writeln!(out, "value {}: {}", self.value, self.meaning);
        if self.moves.is_empty() {
            let why = if pos.side == Side::Black && !game.board().traps(pos.black) {
                " outside the trap zone: black wins"
            } else {
                ""
            };
            let _ = writeln!(out, "{} has no legal move{why}.", pos.side.name());
        } else {
            let _ = writeln!(out, "moves (best first):");
            for m in &self.moves {
                let _ = writeln!(
                    out,
                    "  {:<14} -> value {:>2}: {}",
                    m.notation, m.value, m.meaning
                );
            }
        }
        let line = &self.principal_variation;
        if !line.is_empty() {
            let plies = line.len();
            let _ = writeln!(
                out,
                "principal variation ({plies} {}):",
                if plies == 1 { "ply" } else { "plies" }
            );
            for (i, m) in line.iter().enumerate() {
                let rows = m.position.split_whitespace().next().unwrap_or_default();
                let _ = writeln!(
                    out,
                    "  {:>3}. {:<5} {:<14} {rows}  value {}",
                    i + 1,
                    m.side,
                    m.notation,
                    m.value
                );
            }
            let _ = writeln!(out, "  black has no move: brown wins.");
        }
        out
    }
}

/// The explorer of a Sixteen Musashi game (one board, up to its brown count).
pub struct MusashiExplorer(pub Musashi);

impl MusashiExplorer {
    /// Parses `"<rows> <side>"` on this board (the side is read first, so that a line with
    /// two words of which the second is no side says so).
    fn parse(&self, text: &str) -> Result<Position> {
        let (rows, side) = position_and_side(text, EXAMPLE)?;
        let side = Side::parse(side)?;
        Ok(Position::parse(self.0.board(), rows, side)?)
    }
}

impl Explore for MusashiExplorer {
    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn value(&self, text: &str, tables: &dyn StoredValues) -> Result<String> {
        let pos = self.parse(text)?;
        Ok(value(&self.0, tables, &pos)?.to_string())
    }

    fn probe(&self, text: &str, tables: &dyn StoredValues) -> Result<Probe> {
        let pos = self.parse(text)?;
        let report = ProbeReport::of(&self.0, tables, &pos)?;
        Ok(Probe {
            json: serde_json::to_value(&report)?,
            text: report.text(&self.0, &pos),
        })
    }

    fn probe_json(&self, text: &str, tables: &dyn StoredValues) -> Result<String> {
        let pos = self.parse(text)?;
        Ok(serde_json::to_string(&ProbeReport::of(
            &self.0, tables, &pos,
        )?)?)
    }

    fn answers_query(&self, query: &Query) -> bool {
        crate::viewer::answers(self.0.board(), query)
    }

    fn position_from_query(&self, query: &Query) -> Result<String> {
        crate::viewer::position(self.0.board(), query)
    }

    fn query_of_position(&self, text: &str) -> Result<Query> {
        Ok(crate::viewer::query(self.0.board(), &self.parse(text)?))
    }

    fn extremes(&self, tables: &dyn StoredValues, limit: usize) -> Result<Extremes> {
        crate::extremes::extremes(&self.0, tables, limit)
    }

    fn board(&self) -> Option<serde_json::Value> {
        Some(crate::viewer::board_json(self.0.board()))
    }

    fn svg(&self, text: &str) -> Result<String> {
        Ok(crate::picture::svg(self.0.board(), &self.parse(text)?))
    }
}
