//! `retro probe`: values, moves and principal variations of positions.

use crate::tables::Tables;
use anyhow::{bail, Context, Result};
use retro_musashi::rules::{moves, Move};
use retro_musashi::values::describe;
use retro_musashi::{Position, Side};
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

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
pub fn ranked_moves(tables: &Tables, pos: &Position) -> Result<Vec<(Move, Position, u8)>> {
    let mut ranked = Vec::new();
    for (mv, next) in moves(tables.musashi()?.board(), pos) {
        ranked.push((mv, next, tables.value(&next)?));
    }
    ranked.sort_by_key(|&(_, _, v)| rank(pos.side, v));
    Ok(ranked)
}

/// The best move for the side to move, if the game goes on along a forced brown win (brown:
/// fastest win; black: slowest loss).
pub fn best_move(tables: &Tables, pos: &Position) -> Result<Option<(Move, Position, u8)>> {
    let best = ranked_moves(tables, pos)?.into_iter().next();
    Ok(best.filter(|&(_, _, v)| pos.side == Side::Black || v != 0))
}

/// The principal variation from `pos`: best moves until black has no move. Empty if `pos` is
/// not a brown win.
pub fn principal_variation(tables: &Tables, pos: &Position) -> Result<Vec<(Move, Position, u8)>> {
    let mut line = Vec::new();
    let mut current = *pos;
    let value = tables.value(&current)?;
    if value == 0 {
        return Ok(line);
    }
    while let Some((mv, next, v)) = best_move(tables, &current)? {
        line.push((mv, next, v));
        current = next;
        if line.len() > 300 {
            bail!("principal variation does not end: tables are inconsistent");
        }
    }
    Ok(line)
}

/// What `retro probe` reports on one position: the fields of its `--json` output, and of the
/// HTTP probe API.
#[derive(serde::Serialize)]
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
#[derive(serde::Serialize)]
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
    pub fn of(tables: &Tables, pos: &Position) -> Result<ProbeReport> {
        let board = tables.musashi()?.board();
        let report = |side: Side, (mv, next, v): (Move, Position, u8)| MoveReport {
            notation: mv.notation(board),
            side: side.name(),
            position: next.notation(board),
            value: v,
            meaning: describe(v, next.side),
        };
        let value = tables.value(pos)?;
        let moves = ranked_moves(tables, pos)?
            .into_iter()
            .map(|m| report(pos.side, m))
            .collect();
        let principal_variation = principal_variation(tables, pos)?
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
}

/// The position and side of `retro probe POSITION SIDE`, also accepted as one argument
/// `"POSITION SIDE"` (as a position is written in files and in the hints).
pub fn split_position(position: &str, side: Option<&str>) -> Result<(String, String)> {
    match (position.split_once(char::is_whitespace), side) {
        (None, Some(side)) => Ok((position.to_string(), side.to_string())),
        (Some((rows, side)), None) => Ok((rows.trim().to_string(), side.trim().to_string())),
        _ => bail!("give a position and a side, e.g. {EXAMPLE} (or --file FILE)"),
    }
}

/// A position as a person types it on the command line.
pub const EXAMPLE: &str = "ooooo,o...o,o.X.o,o...o,ooooo brown";

/// Prints the board, the value, every legal move best first with the value it leads to, and
/// the principal variation; or (`json`) the same as one JSON object.
pub fn probe_one(tables: &Tables, rows: &str, side: &str, json: bool) -> Result<()> {
    let board = tables.musashi()?.board();
    let pos = Position::parse(board, rows, Side::parse(side)?)?;
    let report = ProbeReport::of(tables, &pos)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    out!("{}", pos.diagram(board));
    outln!("{}", report.position);
    outln!("value {}: {}", report.value, report.meaning);
    if report.moves.is_empty() {
        outln!("{} has no legal move.", pos.side.name());
    } else {
        outln!("moves (best first):");
        for m in &report.moves {
            outln!(
                "  {:<14} -> value {:>2}: {}",
                m.notation,
                m.value,
                m.meaning
            );
        }
    }
    let line = &report.principal_variation;
    if !line.is_empty() {
        let plies = line.len();
        outln!(
            "principal variation ({plies} {}):",
            if plies == 1 { "ply" } else { "plies" }
        );
        for (i, m) in line.iter().enumerate() {
            let rows = m.position.split_whitespace().next().unwrap_or_default();
            outln!(
                "  {:>3}. {:<5} {:<14} {rows}  value {}",
                i + 1,
                m.side,
                m.notation,
                m.value
            );
        }
        outln!("  black has no move: brown wins.");
    }
    Ok(())
}

/// The value of a position given as its two words, `<position> <side>`.
type LookUp<'a> = dyn Fn(&str, &str) -> Result<u8> + 'a;

/// Reads lines `<position> <side> [anything]` from `path` (`-`: standard input) and prints
/// `<position> <side> <value>` for each. Blank lines and `#` comments are skipped; a bad line
/// is reported on stderr with its number and the batch goes on; the command fails at the end
/// if any line was bad.
pub fn probe_file(tables: &Tables, path: &Path) -> Result<()> {
    let input: Box<dyn BufRead> = if path == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path)
            .with_context(|| format!("cannot read positions file {}", path.display()))?;
        Box::new(std::io::BufReader::new(file))
    };
    let name = if path == Path::new("-") {
        "standard input".to_string()
    } else {
        path.display().to_string()
    };
    // The value of `<position> <side>` in the directory's game.
    let value_of: Box<LookUp> = if tables.mancala().is_some() {
        Box::new(|board, side| {
            let pos = retro_mancala::Position::parse(&format!("{board} {side}"))
                .map_err(anyhow::Error::msg)?;
            let margin = tables.mancala_margin(&pos)?;
            Ok(margin as i8 as u8)
        })
    } else if tables.simpei().is_some() {
        Box::new(|rows, side| {
            let pos = retro_simpei::Position::parse(&format!("{rows} {side}"))?;
            tables.simpei_value(&pos)
        })
    } else {
        let board = tables.musashi()?.board();
        Box::new(move |rows, side| {
            let pos = Side::parse(side).and_then(|side| Position::parse(board, rows, side))?;
            tables.value(&pos)
        })
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut bad = 0usize;
    for (i, line) in input.lines().enumerate() {
        let line = line.with_context(|| format!("{name}: line {}", i + 1))?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let looked_up = (|| -> Result<String> {
            let mut parts = text.split_whitespace();
            let (Some(rows), Some(side)) = (parts.next(), parts.next()) else {
                bail!("expected '<position> <side>'");
            };
            Ok(format!("{rows} {side} {}", value_of(rows, side)?))
        })();
        match looked_up {
            Ok(result) => writeln!(out, "{result}")?,
            Err(e) => {
                bad += 1;
                out.flush()?;
                eprintln!(
                    "{name}: line {}: {}",
                    i + 1,
                    retro_pipeline::process::error_text(&e)
                );
            }
        }
    }
    out.flush()?;
    if bad > 0 {
        bail!("{name}: {bad} bad line{}", if bad == 1 { "" } else { "s" });
    }
    Ok(())
}
