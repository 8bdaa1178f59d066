//! `retro loops`: the endless moves and repetitions reachable from the start, as Markdown
//! (the search is [`crate::loops`]; this file writes it down).

use crate::board::{hole_name, Board};
use crate::loops::{analyse, line_text, start, STUDY_EXAMPLES};
use crate::reach::{search, Layer};
use crate::sowing::{play, Play};
use anyhow::{bail, Result};
use std::fmt::Write;

/// What `retro loops` searches and how much of it it lists.
#[derive(Clone, Copy, Debug)]
pub struct LoopOptions {
    /// Endless moves and repetitions listed in full.
    pub list: usize,
    /// The most positions the search holds before it stops.
    pub limit: u64,
    /// Count the reachable positions layer by layer ([`crate::reach`]) instead of the
    /// analysis by distance.
    pub layers: bool,
}

/// The loop analysis of the game of `definition` (its ring; no tables needed), as `options`
/// say.
pub fn report(definition: &serde_json::Value, options: &LoopOptions) -> Result<String> {
    let game = <crate::game::Mancala as retro_pipeline::GameRules>::from_definition(definition)?;
    if options.layers {
        layers_markdown(game.holes(), options.limit)
    } else {
        markdown(game.holes(), options.list, options.limit)
    }
}

/// The positions reachable from the start of the ring of `holes` holes, counted layer by
/// layer (stones on the board) with at most `limit` keys held, as Markdown. Progress goes to
/// standard error, a line every few seconds.
pub fn layers_markdown(holes: usize, limit: u64) -> Result<String> {
    let mut out = String::new();
    let start = start(holes).map_err(anyhow::Error::msg)?;
    let started = std::time::Instant::now();
    let mut said = started;
    let found = search(start, limit, |layer: &Layer| {
        // A line every few seconds: small layers pass in a blink.
        if said.elapsed().as_secs() < 5 {
            return;
        }
        said = std::time::Instant::now();
        eprintln!(
            "loops: {} stones, round {}: {} positions ({:.0} s)",
            layer.stones,
            layer.growth.len(),
            layer.growth.last().copied().unwrap_or(0),
            started.elapsed().as_secs_f64()
        );
    })
    .map_err(anyhow::Error::msg)?;
    writeln!(
        out,
        "# Positions reachable from the start {start} of the {}x2 ring, layer by layer\n",
        holes / 2
    )?;
    writeln!(
        out,
        "A layer is the positions with so many stones on the board (board and player to move; \
         a move that ends the game leads to none). Seeds: the positions of the layer that a \
         capture from above (or the start) reaches; rounds: breadth-first steps of moves that \
         capture nothing from the seeds.\n"
    )?;
    if let Some(stopped) = &found.stopped {
        writeln!(
            out,
            "**Partial search**: the search stopped in the layer of {} stones, holding more \
             than {limit} positions ({} in that layer, {} captures waiting in the layers \
             below); the layers listed above it are complete.\n",
            stopped.layer.stones,
            stopped.layer.positions(),
            stopped.waiting_below
        )?;
    }
    writeln!(
        out,
        "| stones on the board | positions | first to move | second to move | seeds | rounds |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for layer in &found.layers {
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            layer.stones,
            layer.positions(),
            layer.first_to_move,
            layer.second_to_move,
            layer.seeds,
            layer.growth.len()
        )?;
    }
    match &found.stopped {
        None => writeln!(out, "| all | {} | | | | |", found.positions())?,
        Some(stopped) => {
            let layer = &stopped.layer;
            writeln!(
                out,
                "| {} (incomplete) | more than {} | | | {} | {} so far |",
                layer.stones,
                layer.positions(),
                layer.seeds,
                layer.growth.len()
            )?;
            writeln!(
                out,
                "\nGrowth of the incomplete layer (positions known after each round, and the \
                 ratio to the round before):\n"
            )?;
            writeln!(out, "| round | positions | ratio |")?;
            writeln!(out, "|---|---|---|")?;
            for (i, n) in layer.growth.iter().enumerate() {
                let ratio = match i {
                    0 => String::new(),
                    _ => format!("{:.3}", *n as f64 / layer.growth[i - 1] as f64),
                };
                writeln!(out, "| {} | {n} | {ratio} |", i + 1)?;
            }
        }
    }
    Ok(out)
}

/// The loop analysis, as Markdown, of the ring of `holes` holes: at most `list` endless moves and
/// repetitions in full, and at most `limit` positions searched.
pub fn markdown(holes: usize, list: usize, limit: u64) -> Result<String> {
    let mut out = String::new();
    let start = start(holes).map_err(anyhow::Error::msg)?;
    writeln!(
        out,
        "# Loops of the {}x2 ring from the start {start}\n",
        holes / 2
    )?;
    if holes == 8 {
        writeln!(out, "## The study's examples (sown from a)\n")?;
        writeln!(
            out,
            "| board | study: period, shift | retro: period, shift | sowings to shift | cycle |"
        )?;
        writeln!(out, "|---|---|---|---|---|")?;
        for &(text, period, shift) in STUDY_EXAMPLES {
            let board = Board::parse(text).map_err(anyhow::Error::msg)?;
            let Play::Endless(l) = play(&board, 0) else {
                bail!("{text}: the study's loop ends here (this build's sowing is wrong)");
            };
            let agree = if (l.period, l.shift) == (period, shift) {
                ""
            } else {
                " (differs)"
            };
            writeln!(
                out,
                "| {text} | {period}, {shift} | {}, {}{agree} | {} | {} |",
                l.period, l.shift, l.run, l.cycle
            )?;
        }
        writeln!(out)?;
    }
    let found = analyse(start, limit).map_err(anyhow::Error::msg)?;
    let total: u64 = found.reachable_by_stones.values().sum();
    if let Some(d) = found.complete_to {
        writeln!(
            out,
            "**Partial search**: more than {limit} positions are reachable; the search stopped \
             and everything below covers the positions within {d} moves of the start (all of \
             them), not the whole game.\n"
        )?;
    }
    writeln!(out, "## Positions reachable from the start\n")?;
    writeln!(
        out,
        "{total} positions (board and player to move; a move that ends the game leads to none).\n"
    )?;
    writeln!(out, "| stones on the board | positions |")?;
    writeln!(out, "|---|---|")?;
    for (stones, n) in found.reachable_by_stones.iter().rev() {
        writeln!(out, "| {stones} | {n} |")?;
    }
    writeln!(out)?;
    writeln!(out, "## Endless moves reachable from the start\n")?;
    writeln!(
        out,
        "{} endless moves (position and hole), {} distinct loops (board and starting hole).\n",
        found.endless.len(),
        found.distinct_loops()
    )?;
    writeln!(out, "| period | shift | endless moves |")?;
    writeln!(out, "|---|---|---|")?;
    for ((period, shift), n) in found.classes() {
        writeln!(out, "| {period} | {shift} | {n} |")?;
    }
    writeln!(out)?;
    if !found.endless.is_empty() {
        writeln!(
            out,
            "The first {} by distance from the start (line = holes lifted from the start):\n",
            list.min(found.endless.len())
        )?;
        writeln!(
            out,
            "| line | position | hole | loop | lead-in | period | shift |"
        )?;
        writeln!(out, "|---|---|---|---|---|---|---|")?;
        for e in found.endless.iter().take(list) {
            writeln!(
                out,
                "| {} | {} | {} | {} from {} | {} | {} | {} |",
                line_text(&e.line),
                e.position,
                hole_name(e.hole),
                e.found.entry.board,
                hole_name(e.found.entry.hole),
                e.found.lead_in,
                e.found.period,
                e.found.shift
            )?;
        }
        writeln!(out)?;
    }
    writeln!(out, "## Repetitions reachable from the start\n")?;
    let on_cycles: usize = found.repetitions.iter().map(|r| r.positions).sum();
    writeln!(
        out,
        "{} sets of positions that can repeat (strongly connected by moves that capture nothing), {on_cycles} positions in all.\n",
        found.repetitions.len()
    )?;
    if !found.repetitions.is_empty() {
        writeln!(
            out,
            "The first {} by distance from the start:\n",
            list.min(found.repetitions.len())
        )?;
        writeln!(
            out,
            "| line to it | first position | positions | a shortest cycle |"
        )?;
        writeln!(out, "|---|---|---|---|")?;
        for r in found.repetitions.iter().take(list) {
            writeln!(
                out,
                "| {} | {} | {} | {} |",
                line_text(&r.line),
                r.first,
                r.positions,
                line_text(&r.cycle)
            )?;
        }
    }
    Ok(out)
}
