//! `retro probe` on a mancala directory: the board, the margin in words, every move best first
//! (what it captures, whether it never ends and its loop) and a best line. The report is built
//! by `retro_mancala::probe`; this file prints it.

use crate::tables::Tables;
use anyhow::{Context, Result};
use retro_mancala::board::hole_name;
use retro_mancala::probe::{MoveReport, ProbeReport};
use retro_mancala::Position;

/// A mancala position as a person types it on the command line.
pub const EXAMPLE: &str = "0,4,0,4,0,4,0,4 first";

/// Prints the probe of the position `text` (`<board> [first|second]`), or (`json`) one JSON
/// object.
pub fn probe_one(tables: &Tables, text: &str, json: bool) -> Result<()> {
    let game = tables.mancala().context("not a mancala directory")?;
    let pos = Position::parse(text).map_err(|e| {
        anyhow::anyhow!("{e} (a mancala position looks like `{EXAMPLE}`: the stones of holes a, b, c, ... clockwise, then the player to move)")
    })?;
    let report = ProbeReport::of(&pos, game.endless(), &|p| tables.mancala_margin(p))?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    out!("{}", diagram(&pos));
    outln!("{}", report.position);
    outln!("value {}: {}", report.value, report.meaning);
    outln!("moves (best first, {}):", report.moves.len());
    for m in &report.moves {
        outln!("  {}", describe_move(m));
    }
    let line = &report.principal_variation;
    outln!(
        "best line ({} {}):",
        line.len(),
        if line.len() == 1 { "move" } else { "moves" }
    );
    for (i, m) in line.iter().enumerate() {
        outln!("  {:>3}. {}", i + 1, describe_move(m));
    }
    outln!("  {}.", report.line_end);
    Ok(())
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
fn diagram(pos: &Position) -> String {
    let b = &pos.board;
    let n = b.per_side();
    let cell = |i: usize| format!("{}:{:>2}", hole_name(i), b.get(i));
    let top: Vec<String> = (n..2 * n).rev().map(cell).collect();
    let bottom: Vec<String> = (0..n).map(cell).collect();
    format!("  {}\n  {}\n", top.join(" "), bottom.join(" "))
}
