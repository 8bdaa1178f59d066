//! The mancala seen from the outside ([`Explore`]): boards in this crate's notation looked up
//! in solved tables, the probe report of [`crate::probe`] (every move with its margin, endless
//! moves with their loops, a best line) printed for a person.

use crate::board::{hole_name, Position};
use crate::game::Mancala;
use crate::probe::{MoveReport, ProbeReport};
use anyhow::{bail, Result};
use retro_pipeline::explore::{Explore, Probe, StoredValues};
use std::fmt::Write;

/// A mancala position as a person types it.
pub const EXAMPLE: &str = "0,4,0,4,0,4,0,4 first";

/// The stored margin of a position for its player to move; a board the tables do not hold
/// (another ring, more stones than solved) is an error saying why.
pub fn margin(game: &Mancala, tables: &dyn StoredValues, pos: &Position) -> Result<i32> {
    if pos.board.holes() != game.holes() {
        bail!(
            "{} has {} holes; these tables are of a ring of {}",
            pos.board,
            pos.board.holes(),
            game.holes()
        );
    }
    let Some((slice, index)) = game.locate(&pos.board) else {
        bail!(
            "{} holds {} stones; these tables hold up to {}",
            pos.board,
            pos.board.total(),
            game.max_stones()
        );
    };
    // Margins are stored as signed bytes.
    Ok(tables.stored(slice, index, pos.side)? as i8 as i32)
}

/// The explorer of a mancala game (one ring, up to its stone count, one endless-move rule).
pub struct MancalaExplorer(pub Mancala);

impl MancalaExplorer {
    fn parse(&self, text: &str) -> Result<Position> {
        Position::parse(text).map_err(|e| {
            anyhow::anyhow!("{e} (a mancala position looks like `{EXAMPLE}`: the stones of holes a, b, c, ... clockwise, then the player to move)")
        })
    }
}

impl Explore for MancalaExplorer {
    fn example(&self) -> &'static str {
        EXAMPLE
    }

    /// The signed margin for the player to move.
    fn value(&self, text: &str, tables: &dyn StoredValues) -> Result<String> {
        let pos = self.parse(text)?;
        Ok(margin(&self.0, tables, &pos)?.to_string())
    }

    fn probe(&self, text: &str, tables: &dyn StoredValues) -> Result<Probe> {
        let pos = self.parse(text)?;
        let report = ProbeReport::of(&pos, self.0.endless(), &|p| margin(&self.0, tables, p))?;
        Ok(Probe {
            json: serde_json::to_value(&report)?,
            text: text_of(&report, &pos),
        })
    }
}

/// The probe for a person: the board, the margin in words, every move best first (what it
/// captures, whether it never ends and its loop) and a best line.
fn text_of(report: &ProbeReport, pos: &Position) -> String {
    let mut out = diagram(pos);
    let _ = writeln!(out, "{}", report.position);
    let _ = writeln!(out, "value {}: {}", report.value, report.meaning);
    let _ = writeln!(out, "moves (best first, {}):", report.moves.len());
    for m in &report.moves {
        let _ = writeln!(out, "  {}", describe_move(m));
    }
    let line = &report.principal_variation;
    let _ = writeln!(
        out,
        "best line ({} {}):",
        line.len(),
        if line.len() == 1 { "move" } else { "moves" }
    );
    for (i, m) in line.iter().enumerate() {
        let _ = writeln!(out, "  {:>3}. {}", i + 1, describe_move(m));
    }
    let _ = writeln!(out, "  {}.", report.line_end);
    out
}

/// One move on one line: hole, value, what it does.
fn describe_move(m: &MoveReport) -> String {
    let what = match (&m.endless, &m.position) {
        (Some(l), _) => format!(
            "endless (loop {}, period {}, shift {}){}",
            l.loop_state,
            l.period,
            l.shift,
            if m.legal { "" } else { ", illegal" }
        ),
        (None, Some(p)) if m.captured > 0 => format!("captures {} -> {p}", m.captured),
        (None, Some(p)) => format!("-> {p}"),
        (None, None) => format!("captures {}, game over", m.captured),
    };
    format!("{} value {:>3}  {what}", m.hole, m.value)
}

/// The ring as two rows, the second player's holes on top (right to left, as they face the
/// first player's), hole names beside the counts.
pub fn diagram(pos: &Position) -> String {
    let b = &pos.board;
    let n = b.per_side();
    let cell = |i: usize| format!("{}:{:>2}", hole_name(i), b.get(i));
    let top: Vec<String> = (n..2 * n).rev().map(cell).collect();
    let bottom: Vec<String> = (0..n).map(cell).collect();
    format!("  {}\n  {}\n", top.join(" "), bottom.join(" "))
}
