//! `retro probe`: values, moves and principal variations of positions.

use crate::tables::Tables;
use anyhow::{bail, Context, Result};
use retro_musashi::rules::{moves, Move};
use retro_musashi::values::describe;
use retro_musashi::{Position, Side};
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

/// The best move for the side to move (brown: fastest win; black: slowest loss), if the game
/// goes on along a forced win.
pub fn best_move(tables: &Tables, pos: &Position) -> Result<Option<(Move, Position, u8)>> {
    let mut best: Option<(Move, Position, u8)> = None;
    for (mv, next) in moves(tables.musashi()?.board(), pos) {
        let v = tables.value(&next)?;
        let better = match (pos.side, &best) {
            (_, None) => pos.side == Side::Black || v != 0,
            (Side::Brown, Some((_, _, b))) => v != 0 && v < *b,
            (Side::Black, Some((_, _, b))) => v == 0 || (*b != 0 && v > *b),
        };
        if better {
            best = Some((mv, next, v));
        }
    }
    Ok(best)
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

/// Prints the value, every legal move with the value it leads to, and the principal variation.
pub fn probe_one(tables: &Tables, rows: &str, side: &str) -> Result<()> {
    let board = tables.musashi()?.board();
    let pos = Position::parse(board, rows, Side::parse(side)?)?;
    let value = tables.value(&pos)?;
    outln!("{}", pos.notation(board));
    outln!("value {value}: {}", describe(value, pos.side));
    let legal = moves(board, &pos);
    if legal.is_empty() {
        outln!("{} has no legal move.", pos.side.name());
    } else {
        outln!("moves:");
        for (mv, next) in legal {
            let v = tables.value(&next)?;
            outln!(
                "  {:<14} -> value {v:>2}: {}",
                mv.notation(board),
                describe(v, next.side)
            );
        }
    }
    let line = principal_variation(tables, &pos)?;
    if !line.is_empty() {
        outln!("principal variation ({} plies):", line.len());
        for (i, (mv, next, v)) in line.iter().enumerate() {
            let mover = if i % 2 == 0 {
                pos.side
            } else {
                pos.side.other()
            };
            outln!(
                "  {:>3}. {:<5} {:<14} {}  value {v}",
                i + 1,
                mover.name(),
                mv.notation(board),
                next.rows(board)
            );
        }
        outln!("  black has no move: brown wins.");
    }
    Ok(())
}

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
    let board = tables.musashi()?.board();
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
            let pos = Side::parse(side).and_then(|side| Position::parse(board, rows, side))?;
            Ok(format!("{rows} {side} {}", tables.value(&pos)?))
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
