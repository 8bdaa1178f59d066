//! `retro bao-search`: the spec's questions 3 (a line of play from the start that reaches an
//! endless move) and 5 (the most stones in one hole) answered by search, as Markdown:
//! breadth-first as deep as the limits allow (complete to a stated depth), then random games.
//! With `--longest`, question 4 instead: the longest repetition-free game from the start that
//! ends in a loss, exactly when every reachable position fits the limits, else by cooperative
//! random games (a lower bound), and whether a position can repeat on the way to a loss.

use anyhow::Result;
use clap::Args;
use retro_bao::longest::{exact, reachable, returns, walks, Repetition, Stopped, RETURN_SOWINGS};
use retro_bao::record::Record;
use retro_bao::rules::{loss, EndlessRule};
use retro_bao::search::{breadth_first, random_games, EndlessFound, Fullest, Line};
use retro_bao::{Move, Position, Row};
use std::path::PathBuf;
use std::time::{Duration, Instant};

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
    /// Stop the breadth-first search (with `--longest`: the search of every reachable
    /// position) before it keeps more positions than this (about 100 bytes each).
    #[arg(long, default_value_t = 5_000_000, value_name = "N")]
    limit: u64,
    /// Random games to play after the breadth-first search (default 10000; with `--longest`:
    /// cooperative games, when the longest game is not known exactly; by default as many as
    /// the time limit allows).
    #[arg(long, value_name = "N")]
    games: Option<u64>,
    /// Moves at most in one random game (default 1000; with `--longest` no cap).
    #[arg(long, value_name = "N")]
    max_moves: Option<usize>,
    /// Seed of the random games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Question 4 instead: the longest game from the start with no repeated position that ends
    /// in a loss (exact when every reachable position fits `--limit`, else a lower bound from
    /// cooperative random games), and a repeating line if a position can repeat.
    #[arg(long)]
    longest: bool,
    /// With `--longest`: stop after this many seconds (the search of every reachable position
    /// gets at most a quarter, the games up to three quarters in all, the search for a return
    /// the rest).
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    time_limit: f64,
    /// With `--longest`: steps at most of the enumeration of simple paths inside cycles of
    /// positions (beyond it the result is a lower bound, and says so).
    #[arg(long, default_value_t = 100_000_000, value_name = "N")]
    budget: u64,
    /// With `--longest`, when the games met no repetition: search every line of at most this
    /// many plies from positions of the longest game for one that comes back.
    #[arg(long, default_value_t = 6, value_name = "PLIES")]
    return_depth: usize,
    /// With `--longest`: positions expanded at most in the search for a return from one
    /// position.
    #[arg(long, default_value_t = 200_000, value_name = "N")]
    return_budget: u64,
    /// With `--longest`: write the longest game found as a game record (`retro play bao --load
    /// FILE` replays it).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
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

/// Moves numbered by ply from `first` on.
fn numbered(moves: &[Move], row: Row, first: usize) -> String {
    moves
        .iter()
        .enumerate()
        .map(|(i, m)| format!("{}. {}", first + i, m.text(row)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Replays `moves` from the start of the variant; the position reached.
fn replayed(row: Row, stones: u8, moves: &[Move]) -> Result<Position> {
    let mut record = Record::new(row, stones, EndlessRule::CutOff);
    record.moves = moves.to_vec();
    let replay = record.replay().map_err(anyhow::Error::msg)?;
    anyhow::ensure!(
        !replay.ended_endless,
        "a searched game ends in an endless move"
    );
    Ok(*replay.positions.last().expect("a replay has a position"))
}

/// The longest game found, as the report writes it.
fn longest_text(moves: &[Move], row: Row, stones: u8) -> Result<String> {
    let end = replayed(row, stones, moves)?;
    let why = loss(&end, EndlessRule::CutOff).expect("a searched game ends in a loss");
    Ok(format!(
        "**{} plies**: {}\n\n  It ends in `{end}`: {} to move has lost ({why}).",
        moves.len(),
        if moves.is_empty() {
            "no move".to_string()
        } else {
            numbered(moves, row, 1)
        },
        retro_bao::board::side_name(end.side)
    ))
}

fn repetition_text(r: &Repetition, row: Row) -> String {
    let (k, c, m) = (r.to.len(), r.cycle.len(), r.to_loss.len());
    let to = if r.to.is_empty() {
        "At the start".to_string()
    } else {
        format!("After {}", numbered(&r.to, row, 1))
    };
    format!(
        "{to} ({k} plies) the position is `{}`; it comes back after {} ({c} plies), and from it {} ({m} plies) ends in a loss. So {}, the cycle t times and the ending make a game of {k} + {c}·t + {m} plies ending in a loss for every t = 0, 1, 2, ...: **with no rule against repetition the longest game is unbounded.** With t = 1: {}",
        r.position,
        numbered(&r.cycle, row, k + 1),
        numbered(&r.to_loss, row, k + c + 1),
        if r.to.is_empty() { "the start" } else { "the line to it" },
        numbered(&r.game(1), row, 1)
    )
}

const DEFINITION: &str = "Counted: games from the start in which no position (the stones and the player to move) occurs twice, and which end in a loss (the player to move has an empty front row or no move). A move that never ends is never played: under the default cut-off rule it would end the game with no winner, which is not a loss.";

/// Searches positions of the longest game found for a line that comes back to them.
fn return_search(a: &BaoSearchArgs, row: Row, moves: &[Move], deadline: Instant) -> Result<()> {
    let mut record = Record::new(row, a.stones, EndlessRule::CutOff);
    record.moves = moves.to_vec();
    let positions = record.replay().map_err(anyhow::Error::msg)?.positions;
    // From the end of the game backwards (fewer stones in play, fewer moves), every position
    // but the lost one.
    let roots: Vec<Position> = positions[..positions.len() - 1]
        .iter()
        .rev()
        .copied()
        .collect();
    let clock = Instant::now();
    let r = returns(&roots, a.return_depth, a.return_budget, Some(deadline));
    match &r.cycle {
        Some((i, cycle)) => {
            let at = positions.len() - 2 - i;
            let (to, to_loss) = moves.split_at(at);
            outln!(
                "- A search for lines that come back found one from ply {at} of the longest game ({:.1} s):",
                clock.elapsed().as_secs_f64()
            );
            let repetition = Repetition {
                to: to.to_vec(),
                position: positions[at],
                cycle: cycle.clone(),
                to_loss: to_loss.to_vec(),
            };
            outln!("- {}", repetition_text(&repetition, row));
        }
        None => outln!(
            "- No line of at most {} plies comes back to its position, from {} ({} of them searched in full, the others to {} positions or the time limit; {} positions expanded; {} moves that had not ended after {} sowings not followed; {:.1} s).",
            a.return_depth,
            if r.roots as usize == roots.len() {
                format!("each of the {} positions of the longest game but the lost one", r.roots)
            } else {
                format!("each of the last {} positions of the longest game", r.roots)
            },
            r.complete,
            a.return_budget,
            r.expanded,
            r.cut,
            RETURN_SOWINGS,
            clock.elapsed().as_secs_f64()
        ),
    }
    Ok(())
}

/// Cooperative random games (and, when they meet no repetition, the search for a return):
/// their report; the longest game found.
fn games_section(
    a: &BaoSearchArgs,
    row: Row,
    start: Position,
    walks_until: Instant,
    until: Instant,
) -> Result<Option<Vec<Move>>> {
    let started = Instant::now();
    let w = walks(
        start,
        a.games.unwrap_or(u64::MAX),
        a.max_moves.unwrap_or(usize::MAX),
        a.seed,
        Some(walks_until),
    );
    outln!(
        "\n### Cooperative random games ({} games, {} of them extending the best so far, {} plies in all, seed {}; {:.1} s)\n",
        w.games,
        w.extended,
        w.moves,
        a.seed,
        started.elapsed().as_secs_f64()
    );
    outln!(
        "Each player plays a random move among those that end, do not lose at once and repeat no position of the game; a move that loses at once marks where the game could end. {}; {} moves that never end were met and not played{}.\n",
        match a.max_moves {
            Some(cap) => format!("{} games reached the cap of {cap} plies", w.capped),
            None => "The games had no cap on their length".to_string(),
        },
        w.endless_moves,
        if w.timed_out { "; the time limit stopped the games" } else { "" }
    );
    match &w.repetition {
        Some(r) => outln!("- {}", repetition_text(r, row)),
        None => outln!("- No position of a game came back in it (no move led to an earlier position of its game)."),
    }
    if let (None, Some(moves)) = (&w.repetition, &w.longest) {
        return_search(a, row, moves, until)?;
    }
    match &w.longest {
        Some(moves) => outln!(
            "- Longest repetition-free game ending in a loss found (a lower bound): {}",
            longest_text(moves, row, a.stones)?
        ),
        None => outln!("- No game ending in a loss was found."),
    }
    Ok(w.longest)
}

/// Question 4: the longest repetition-free game that ends in a loss.
fn run_longest(a: &BaoSearchArgs, row: Row, start: Position) -> Result<()> {
    anyhow::ensure!(
        a.time_limit.is_finite() && a.time_limit > 0.0,
        "--time-limit must be a positive number of seconds, not {}",
        a.time_limit
    );
    anyhow::ensure!(
        a.return_depth >= 2,
        "--return-depth must be at least 2 plies (a position comes back after an even number)"
    );
    let clock = Instant::now();
    let total = Duration::from_secs_f64(a.time_limit.min(1e9));
    let (walks_until, until) = (clock + total * 3 / 4, clock + total);
    outln!("## Longest game (question 4)\n");
    outln!("{DEFINITION}\n");
    let found = reachable(start, a.limit, Some(clock + total / 4));
    let graph_secs = clock.elapsed().as_secs_f64();
    let best = match found {
        Ok(graph) => {
            let e = exact(&graph, a.budget);
            outln!(
                "### Every reachable position ({:.1} s)\n",
                clock.elapsed().as_secs_f64()
            );
            outln!(
                "- {} positions are reachable from the start ({} lost, {} moves that never end; searched in {graph_secs:.1} s).",
                e.positions,
                e.lost,
                e.endless_moves
            );
            if e.cyclic_components == 0 {
                outln!("- No position can repeat: the graph of moves is acyclic, and the longest game is its longest path.");
            } else {
                outln!(
                    "- Positions can repeat: {} sets of positions reachable from one another (the largest holds {}); inside them the simple paths were {} ({} steps).",
                    e.cyclic_components,
                    e.largest_component,
                    if e.complete { "all enumerated" } else { "**not** all enumerated (the budget ran out)" },
                    e.steps
                );
                match &e.repetition {
                    Some(r) => outln!("- {}", repetition_text(r, row)),
                    None => outln!("- No repeating position can still lead to a loss: the repetitions do not lengthen a game that ends in a loss."),
                }
            }
            match &e.longest {
                Some(moves) if e.complete => outln!(
                    "- **Exact**: the longest repetition-free game ending in a loss: {}",
                    longest_text(moves, row, a.stones)?
                ),
                Some(moves) => outln!(
                    "- Not exact: the longest repetition-free game ending in a loss that the enumeration found (a lower bound): {}",
                    longest_text(moves, row, a.stones)?
                ),
                None => outln!("- No game from the start ends in a loss."),
            }
            if let (false, Some(bound)) = (e.complete, e.upper_bound) {
                outln!("- Upper bound: no such game has more than **{bound} plies** (along the sets of positions a game passes through, each set's positions less one, and the moves between sets).");
            }
            if e.complete {
                e.longest
            } else {
                let w = games_section(a, row, start, walks_until, until)?;
                match (e.longest, w) {
                    (Some(x), Some(y)) => Some(if y.len() > x.len() { y } else { x }),
                    (x, y) => x.or(y),
                }
            }
        }
        Err(stopped) => {
            let (why, positions) = match stopped {
                Stopped::Limit { positions } => ("the position limit", positions),
                Stopped::Time { positions } => ("a quarter of the time limit", positions),
            };
            outln!("### Every reachable position: not searched in full ({graph_secs:.1} s)\n");
            outln!(
                "The search of every reachable position stopped at {why} ({positions} positions kept): the answer below is not exact, and no upper bound is known."
            );
            games_section(a, row, start, walks_until, until)?
        }
    };
    if let Some(path) = &a.record {
        let mut record = Record::new(row, a.stones, EndlessRule::CutOff);
        record.moves = best.unwrap_or_default();
        std::fs::write(path, record.text())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        outln!(
            "\nThe longest game found is written to `{}`.",
            path.display()
        );
    }
    Ok(())
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
    if a.longest {
        return run_longest(&a, row, start);
    }
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
    let games = a.games.unwrap_or(10_000);
    if games > 0 {
        let clock = Instant::now();
        let max_moves = a.max_moves.unwrap_or(1000);
        let r = random_games(start, games, max_moves, a.seed);
        outln!(
            "\n## Random games ({} games of at most {} moves, seed {}; {:.1} s)\n",
            games,
            max_moves,
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
