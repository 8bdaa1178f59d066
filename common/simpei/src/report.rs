//! The analysis the SIMPEI paper reports, as Markdown (`retro report --tables DIR`; the output
//! is committed in `docs/`): the start positions with their proof trees and winning moves,
//! records per piece count, zugzwang, simple cycles, one-move problems. The numbers are
//! computed by [`crate::analysis`]; this file only writes them down.

use crate::analysis::{analyse, analyse_start, Analysis, Found, Problem, Solved, StartAnalysis};
use crate::game::Simpei;
use crate::job::{describe, StartRule};
use crate::position::Position;
use anyhow::{Context, Result};
use retro_engine::{Game, Side, SliceId};
use retro_pipeline::{GameRules, StoredValues};
use std::fmt::Write;

/// The report of the solved `game` whose tables are `tables`; proof trees are also sized with
/// up to `slack` plies more than the winning distance.
pub fn report(game: &Simpei, tables: &dyn StoredValues, slack: u32) -> Result<String> {
    let mut values = Vec::with_capacity(game.slice_count());
    for id in 0..game.slice_count() {
        let slice = SliceId(id as u32);
        if game.slice_len(slice) == 0 {
            values.push([Vec::new(), Vec::new()]);
            continue;
        }
        values.push([
            tables.section(slice, Side::First)?,
            tables.section(slice, Side::Second)?,
        ]);
    }
    let solved = Solved::new(game, values).context("SIMPEI tables")?;
    let starts: Vec<(StartRule, StartAnalysis)> = [StartRule::Official, StartRule::Free]
        .into_iter()
        .map(|rule| (rule, analyse_start(&solved, rule.position(), slack)))
        .collect();
    let analysis = analyse(&solved);
    Ok(markdown(&game.describe(), &starts, &analysis))
}

/// A position in backticks with its value in words.
fn position_cell(found: &Found) -> String {
    format!(
        "`{}` ({})",
        found.position.notation(),
        describe(found.position.to_move, found.value)
    )
}

fn start_section(out: &mut String, rule: StartRule, a: &StartAnalysis) {
    let title = match rule {
        StartRule::Official => "Official start: white's first piece on the prescribed hole",
        StartRule::Free => "Free first move: the empty board",
    };
    let _ = writeln!(out, "### {title}\n");
    let _ = writeln!(out, "- position: `{}`", a.position.notation());
    let _ = writeln!(
        out,
        "- value: {} ({} legal moves)",
        describe(a.position.to_move, a.value),
        a.moves
    );
    for (budget, size) in &a.proof_trees {
        let _ = writeln!(
            out,
            "- smallest proof tree with every line ending within {budget} plies: {}",
            size.map_or("none".to_string(), |s| format!("{s} positions"))
        );
    }
    let _ = writeln!(
        out,
        "- winning moves up to symmetry: {}\n",
        a.winning_moves.len()
    );
    if a.winning_moves.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "| move | symmetric moves | leads to | value there | smallest proof tree after it (within its distance) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for w in &a.winning_moves {
        let sizes: Vec<String> = w
            .proof_trees
            .iter()
            .map(|(b, s)| {
                let s = s.map_or("-".to_string(), |s| s.to_string());
                format!("{s} ({b} plies)")
            })
            .collect();
        let next = w
            .next
            .map_or("(row made)".to_string(), |n| format!("`{n}`"));
        let mover = a.position.to_move.other();
        let _ = writeln!(
            out,
            "| `{}` | {} | {next} | {} | {} |",
            w.notation,
            w.images,
            describe(mover, w.value),
            sizes.join(", ")
        );
    }
    out.push('\n');
}

fn problems_table(out: &mut String, problems: &[Problem]) {
    let _ = writeln!(out, "| position | value | the winning move | replies |");
    let _ = writeln!(out, "|---|---|---|---|");
    for p in problems {
        let _ = writeln!(
            out,
            "| `{}` | {} | `{}` | {} |",
            p.found.position.notation(),
            describe(p.found.position.to_move, p.found.value),
            p.solution,
            p.replies
        );
    }
    out.push('\n');
}

/// A section with one row per piece count: a record figure, how many positions reach it, and
/// the first of them (layers without one are left out).
fn record_table(
    out: &mut String,
    title: &str,
    columns: &str,
    rows: impl Iterator<Item = (u64, u64, Option<Found>)>,
) {
    let _ = writeln!(out, "### {title}\n");
    let _ = writeln!(out, "| pieces | {columns} | first of them |");
    let _ = writeln!(out, "|---|---|---|---|");
    for (layer, (figure, count, example)) in rows.enumerate() {
        if let Some(found) = &example {
            let _ = writeln!(
                out,
                "| {layer} | {figure} | {count} | {} |",
                position_cell(found)
            );
        }
    }
    out.push('\n');
}

/// The report in Markdown.
fn markdown(title: &str, starts: &[(StartRule, StartAnalysis)], a: &Analysis) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## The analysis by `retro report` ({title})\n");
    let _ = writeln!(
        out,
        "Produced by `retro report`; the definitions are in `retro_simpei::analysis`.\n"
    );
    for (rule, s) in starts {
        start_section(&mut out, *rule, s);
    }

    record_table(
        &mut out,
        "Most legal moves",
        "most moves | positions with as many",
        a.layers.iter().map(|f| {
            (
                f.most_moves as u64,
                f.most_moves_count,
                f.most_moves_example,
            )
        }),
    );
    record_table(
        &mut out,
        "Longest wins",
        "longest win (plies) | positions",
        a.layers.iter().map(|f| {
            (
                u64::from(f.longest_win),
                f.longest_win_count,
                f.longest_win_example,
            )
        }),
    );

    let _ = writeln!(out, "### Zugzwang\n");
    let _ = writeln!(
        out,
        "| pieces | zugzwang positions | self-symmetric | the longest loss among them |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    for (layer, f) in a.layers.iter().enumerate().step_by(2) {
        let example = f
            .zugzwang_example
            .as_ref()
            .map_or("-".to_string(), position_cell);
        let _ = writeln!(
            out,
            "| {layer} | {} | {} | {example} |",
            f.zugzwang, f.zugzwang_self_symmetric
        );
    }
    out.push('\n');

    let _ = writeln!(out, "### Simple cycles\n");
    let _ = writeln!(
        out,
        "8-piece draws whose side to move has exactly one move that does not lose: {}.\n",
        a.forced_draws
    );
    let _ = writeln!(
        out,
        "| period (plies) | cycles | the cycle through the smallest position |"
    );
    let _ = writeln!(out, "|---|---|---|");
    for c in &a.cycles {
        let positions: Vec<String> = c.example.iter().map(board_only).collect();
        let _ = writeln!(
            out,
            "| {} | {} | `{}` |",
            c.period,
            c.count,
            positions.join("` → `")
        );
    }
    if a.cycles.is_empty() {
        let _ = writeln!(out, "| - | 0 | - |");
    }
    out.push('\n');

    let _ = writeln!(out, "### One-move problems\n");
    let _ = writeln!(
        out,
        "| pieces | won positions with exactly one winning move |"
    );
    let _ = writeln!(out, "|---|---|");
    for (layer, f) in a.layers.iter().enumerate() {
        let _ = writeln!(out, "| {layer} | {} |", f.one_move_problems);
    }
    out.push('\n');
    let _ = writeln!(out, "The longest:\n");
    problems_table(&mut out, &a.longest_problems);
    let _ = writeln!(out, "The most replies after the winning move:\n");
    problems_table(&mut out, &a.most_replies);
    out
}

/// The board part of a position's notation (the cycle's positions all have white to move).
fn board_only(pos: &Position) -> String {
    pos.notation()
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}
