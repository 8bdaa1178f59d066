//! `retro bao-search`: the spec's questions 3 (a line of play from the start that reaches an
//! endless move) and 5 (the most stones in one hole) answered by search, as Markdown:
//! breadth-first as deep as the limits allow (complete to a stated depth), then random games.

use anyhow::Result;
use clap::Args;
use retro_bao::search::{breadth_first, random_games, EndlessFound, Fullest, Line};
use retro_bao::{Position, Row};
use std::time::Instant;

/// `retro bao-search` arguments.
#[derive(Args)]
pub struct BaoSearchArgs {
    /// Holes a row (2 to 8; the full game has 8).
    #[arg(long = "row", default_value_t = 8, value_name = "N")]
    holes: usize,
    /// Stones a hole at the start.
    #[arg(long, default_value_t = 2, value_name = "K")]
    stones: u8,
    /// Deepest breadth-first search, in plies.
    #[arg(long, default_value_t = 6, value_name = "PLIES")]
    depth: u32,
    /// Stop the breadth-first search before it keeps more positions than this (about 100
    /// bytes each).
    #[arg(long, default_value_t = 5_000_000, value_name = "N")]
    limit: u64,
    /// Random games to play after the breadth-first search.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    games: u64,
    /// Moves at most in one random game.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    max_moves: usize,
    /// Seed of the random games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// A line as moves `1. f1 cw 2. b8 acw ...` (each move numbered by ply).
fn moves_text(line: &Line, row: Row) -> String {
    if line.moves.is_empty() {
        return "(the start)".to_string();
    }
    line.moves
        .iter()
        .enumerate()
        .map(|(i, m)| format!("{}. {}", i + 1, m.text(row)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn endless_text(found: &EndlessFound, row: Row) -> String {
    format!(
        "{} plies: {}\n\n  from `{}`, the last move repeats every {} sowing(s) after {}",
        found.line.moves.len(),
        moves_text(&found.line, row),
        found.line.before,
        found.endless.cycle,
        found.endless.lead_in
    )
}

fn fullest_text(f: &Fullest, row: Row) -> String {
    format!(
        "**{}** stones, line of {} plies: {}",
        f.stones,
        f.line.moves.len(),
        moves_text(&f.line, row)
    )
}

/// Runs the searches and prints the report.
pub fn run(a: BaoSearchArgs) -> Result<()> {
    let row = Row::new(a.holes).map_err(anyhow::Error::msg)?;
    let start = Position::start(row, a.stones).map_err(anyhow::Error::msg)?;
    outln!(
        "# Bao la kujifunza from the start: {} holes a row, {} stones a hole ({} stones)\n",
        row.len(),
        a.stones,
        start.board.total()
    );
    let clock = Instant::now();
    let bfs = breadth_first(start, a.depth, a.limit);
    outln!(
        "## Breadth-first (at most {} plies, {} positions kept; {:.1} s)\n",
        a.depth,
        a.limit,
        clock.elapsed().as_secs_f64()
    );
    outln!("| plies | new positions | of which lost | endless moves ending here |");
    outln!("| ---: | ---: | ---: | ---: |");
    for l in &bfs.layers {
        outln!(
            "| {} | {} | {} | {} |",
            l.depth,
            l.positions,
            l.lost,
            l.endless_moves
        );
    }
    outln!();
    if bfs.truncated {
        outln!(
            "The position limit ({}) was reached at {} plies: that depth's lines were all played, but its count of new positions is short and the search stopped there.\n",
            a.limit,
            bfs.complete_to
        );
    }
    if bfs.exhausted {
        outln!(
            "Every reachable position was searched ({} plies at most).",
            bfs.complete_to
        );
    } else {
        outln!(
            "Complete to **{} plies**: every line of play of at most {} plies was searched.",
            bfs.complete_to,
            bfs.complete_to
        );
    }
    match &bfs.first_endless {
        Some(found) => outln!(
            "\n- Shortest line to an endless move: {}",
            endless_text(found, row)
        ),
        None => outln!(
            "\n- No endless move within {} plies: a line that reaches one has more plies.",
            bfs.complete_to
        ),
    }
    outln!(
        "- Fullest hole between moves within {} plies: {}",
        bfs.complete_to,
        fullest_text(&bfs.fullest_between, row)
    );
    if bfs.complete_to > 0 {
        outln!(
            "- Fullest hole during a move within {} plies: {}",
            bfs.complete_to,
            fullest_text(&bfs.fullest_during, row)
        );
    }
    if a.games > 0 {
        let clock = Instant::now();
        let r = random_games(start, a.games, a.max_moves, a.seed);
        outln!(
            "\n## Random games ({} games of at most {} moves, seed {}; {:.1} s)\n",
            a.games,
            a.max_moves,
            a.seed,
            clock.elapsed().as_secs_f64()
        );
        outln!(
            "{} moves played; {} games ended with a loss, {} with an endless move, {} at the move limit.\n",
            r.moves,
            r.lost,
            r.endless,
            r.cut
        );
        match &r.shortest_endless {
            Some(found) => outln!(
                "- Shortest endless line found (an upper bound): {}",
                endless_text(found, row)
            ),
            None => outln!("- No endless move found."),
        }
        if let Some(f) = &r.fullest_between {
            outln!("- Fullest hole between moves: {}", fullest_text(f, row));
        }
        if let Some(f) = &r.fullest_during {
            outln!("- Fullest hole during a move: {}", fullest_text(f, row));
        }
    }
    Ok(())
}
