//! `retro probe` on a SIMPEI directory: the board, the value in words, every legal move best
//! first (with where clipped pieces are put) and a principal variation to the end or into a
//! draw cycle. The report itself is built by `retro_simpei::probe`; this file prints it.

use crate::tables::Tables;
use anyhow::{Context, Result};
use retro_simpei::probe::ProbeReport;
use retro_simpei::Position;

/// A SIMPEI position as a person types it on the command line.
pub const EXAMPLE: &str = "w...,.b..,....,..../...,.w.,... black";

/// Prints the probe of the position `text` (`<board> <side>`), or (`json`) one JSON object.
pub fn probe_one(tables: &Tables, text: &str, json: bool) -> Result<()> {
    let game = tables.simpei().context("not a SIMPEI directory")?;
    let pos = Position::parse(text).map_err(|e| {
        anyhow::anyhow!("{e} (a SIMPEI position looks like `{EXAMPLE}`: the four upper rows, `/`, the three lower rows, then the side to move)")
    })?;
    let report = ProbeReport::of(game, &pos, &|p| tables.simpei_value(p))?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    out!("{}", pos.diagram());
    outln!("{}", report.position);
    outln!("value {}: {}", report.value, report.meaning);
    outln!("moves (best first, {}):", report.moves.len());
    for m in &report.moves {
        outln!(
            "  {:<28} -> value {:>2}: {}",
            m.notation,
            m.value,
            m.meaning
        );
    }
    let line = &report.principal_variation;
    let plies = line.len();
    outln!(
        "principal variation ({plies} {}):",
        if plies == 1 { "ply" } else { "plies" }
    );
    for (i, m) in line.iter().enumerate() {
        let board = m
            .position
            .as_deref()
            .and_then(|p| p.split_whitespace().next())
            .unwrap_or("");
        outln!(
            "  {:>3}. {:<28} {board:<32} {}",
            i + 1,
            m.notation,
            m.meaning
        );
    }
    outln!("  {}.", report.line_end);
    Ok(())
}
