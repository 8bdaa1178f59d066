//! `retro loops`: the mancala's endless moves and repetitions reachable from the start, as
//! Markdown (the search is `retro_mancala::loops`; this file prints it).

use anyhow::{bail, Result};
use retro_mancala::board::hole_name;
use retro_mancala::loops::{analyse, line_text, start, STUDY_EXAMPLES};
use retro_mancala::sowing::{play, Play};
use retro_mancala::Board;

/// Prints the loop analysis of the ring of `holes` holes: at most `list` endless moves and
/// repetitions in full, and at most `limit` positions searched.
pub fn report(holes: usize, list: usize, limit: u64) -> Result<()> {
    let start = start(holes).map_err(anyhow::Error::msg)?;
    outln!(
        "# Loops of the {}x2 ring from the start {start}\n",
        holes / 2
    );
    if holes == 8 {
        outln!("## The study's examples (sown from a)\n");
        outln!(
            "| board | study: period, shift | retro: period, shift | sowings to shift | cycle |"
        );
        outln!("|---|---|---|---|---|");
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
            outln!(
                "| {text} | {period}, {shift} | {}, {}{agree} | {} | {} |",
                l.period,
                l.shift,
                l.run,
                l.cycle
            );
        }
        outln!();
    }
    let found = analyse(start, limit).map_err(anyhow::Error::msg)?;
    let total: u64 = found.reachable_by_stones.values().sum();
    if let Some(d) = found.complete_to {
        outln!(
            "**Partial search**: more than {limit} positions are reachable; the search stopped \
             and everything below covers the positions within {d} moves of the start (all of \
             them), not the whole game.\n"
        );
    }
    outln!("## Positions reachable from the start\n");
    outln!(
        "{total} positions (board and player to move; a move that ends the game leads to none).\n"
    );
    outln!("| stones on the board | positions |");
    outln!("|---|---|");
    for (stones, n) in found.reachable_by_stones.iter().rev() {
        outln!("| {stones} | {n} |");
    }
    outln!();
    outln!("## Endless moves reachable from the start\n");
    outln!(
        "{} endless moves (position and hole), {} distinct loops (board and starting hole).\n",
        found.endless.len(),
        found.distinct_loops()
    );
    outln!("| period | shift | endless moves |");
    outln!("|---|---|---|");
    for ((period, shift), n) in found.classes() {
        outln!("| {period} | {shift} | {n} |");
    }
    outln!();
    if !found.endless.is_empty() {
        outln!(
            "The first {} by distance from the start (line = holes lifted from the start):\n",
            list.min(found.endless.len())
        );
        outln!("| line | position | hole | loop | lead-in | period | shift |");
        outln!("|---|---|---|---|---|---|---|");
        for e in found.endless.iter().take(list) {
            outln!(
                "| {} | {} | {} | {} from {} | {} | {} | {} |",
                line_text(&e.line),
                e.position,
                hole_name(e.hole),
                e.found.entry.board,
                hole_name(e.found.entry.hole),
                e.found.lead_in,
                e.found.period,
                e.found.shift
            );
        }
        outln!();
    }
    outln!("## Repetitions reachable from the start\n");
    let on_cycles: usize = found.repetitions.iter().map(|r| r.positions).sum();
    outln!(
        "{} sets of positions that can repeat (strongly connected by moves that capture nothing), {on_cycles} positions in all.\n",
        found.repetitions.len()
    );
    if !found.repetitions.is_empty() {
        outln!(
            "The first {} by distance from the start:\n",
            list.min(found.repetitions.len())
        );
        outln!("| line to it | first position | positions | a shortest cycle |");
        outln!("|---|---|---|---|");
        for r in found.repetitions.iter().take(list) {
            outln!(
                "| {} | {} | {} | {} |",
                line_text(&r.line),
                r.first,
                r.positions,
                line_text(&r.cycle)
            );
        }
    }
    Ok(())
}
