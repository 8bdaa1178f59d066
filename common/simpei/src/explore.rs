//! SIMPEI seen from the outside ([`Explore`]): positions in this crate's notation looked up in
//! solved tables (their canonical image), the probe report of [`crate::probe`] and the paper's
//! analysis of [`crate::report`].

use crate::game::Simpei;
use crate::position::Position;
use crate::probe::ProbeReport;
use anyhow::Result;
use retro_pipeline::explore::{Explore, Probe, StoredValues};
use std::fmt::Write;

/// A SIMPEI position as a person types it.
pub const EXAMPLE: &str = "w...,.b..,....,..../...,.w.,... black";

/// The stored value of any SIMPEI position (its canonical image is looked up).
pub fn value(game: &Simpei, tables: &dyn StoredValues, pos: &Position) -> Result<u8> {
    let (slice, key) = game.locate(pos.white, pos.black);
    let index = retro_engine::Game::index(game, slice, key);
    tables.canonical(slice, index, Simpei::side_of(pos.to_move))
}

/// The explorer of a SIMPEI game (one reading of the rules).
pub struct SimpeiExplorer(pub Simpei);

impl SimpeiExplorer {
    fn parse(&self, text: &str) -> Result<Position> {
        Position::parse(text).map_err(|e| {
            anyhow::anyhow!("{e} (a SIMPEI position looks like `{EXAMPLE}`: the four upper rows, `/`, the three lower rows, then the side to move)")
        })
    }
}

impl Explore for SimpeiExplorer {
    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn value(&self, text: &str, tables: &dyn StoredValues) -> Result<String> {
        let pos = self.parse(text)?;
        Ok(value(&self.0, tables, &pos)?.to_string())
    }

    fn probe(&self, text: &str, tables: &dyn StoredValues) -> Result<Probe> {
        let pos = self.parse(text)?;
        let report = ProbeReport::of(&self.0, &pos, &|p| value(&self.0, tables, p))?;
        Ok(Probe {
            json: serde_json::to_value(&report)?,
            text: text_of(&report, &pos),
        })
    }

    fn report(&self, tables: &dyn StoredValues, slack: u32) -> Result<String> {
        crate::report::report(&self.0, tables, slack)
    }
}

/// The probe for a person: the board, the value in words, every legal move best first (with
/// where clipped pieces are put) and the principal variation to the end or into a draw cycle.
fn text_of(report: &ProbeReport, pos: &Position) -> String {
    let mut out = pos.diagram();
    let _ = writeln!(out, "{}", report.position);
    let _ = writeln!(out, "value {}: {}", report.value, report.meaning);
    let _ = writeln!(out, "moves (best first, {}):", report.moves.len());
    for m in &report.moves {
        let _ = writeln!(
            out,
            "  {:<28} -> value {:>2}: {}",
            m.notation, m.value, m.meaning
        );
    }
    let line = &report.principal_variation;
    let plies = line.len();
    let _ = writeln!(
        out,
        "principal variation ({plies} {}):",
        if plies == 1 { "ply" } else { "plies" }
    );
    for (i, m) in line.iter().enumerate() {
        let board = m
            .position
            .as_deref()
            .and_then(|p| p.split_whitespace().next())
            .unwrap_or("");
        let _ = writeln!(
            out,
            "  {:>3}. {:<28} {board:<32} {}",
            i + 1,
            m.notation,
            m.meaning
        );
    }
    let _ = writeln!(out, "  {}.", report.line_end);
    out
}
