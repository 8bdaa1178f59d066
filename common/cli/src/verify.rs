//! `retro verify`: compare tables with published data and check the defining recurrence.

use crate::counts::count_table_from_tables;
use crate::tables::Tables;
use anyhow::{bail, Context, Result};
use rand::{rngs::StdRng, Rng, SeedableRng};
use rayon::prelude::*;
use retro_engine::Side;
use retro_musashi::Position;
use retro_pipeline::Solved;
use std::path::Path;

/// How many mismatches are listed before the rest are only counted.
const LISTED: usize = 10;

/// Compares the count table of `tables` with the file `expected`, line by line.
pub fn check_counts(tables: &Tables, expected: &Path) -> Result<Vec<String>> {
    let want = std::fs::read_to_string(expected)
        .with_context(|| format!("cannot read count table {}", expected.display()))?;
    let have = count_table_from_tables(tables)?;
    let mut problems = Vec::new();
    let (want_lines, have_lines): (Vec<_>, Vec<_>) =
        (want.lines().collect(), have.lines().collect());
    for i in 0..want_lines.len().max(have_lines.len()) {
        let (w, h) = (want_lines.get(i), have_lines.get(i));
        if w != h {
            problems.push(format!(
                "counts line {}: expected {}, tables give {}",
                i + 1,
                w.unwrap_or(&"(nothing)"),
                h.unwrap_or(&"(nothing)")
            ));
        }
    }
    if problems.is_empty() && want != have {
        problems.push("counts: same lines but different bytes (line endings?)".into());
    }
    Ok(problems)
}

/// Compares stored values with the lines `<position> <side> <value>` of `path`.
pub fn check_values(tables: &Tables, path: &Path) -> Result<(usize, Vec<String>)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read values file {}", path.display()))?;
    let board = tables.musashi()?.board();
    let mut problems = Vec::new();
    let mut checked = 0;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{}: line {}", path.display(), i + 1);
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [rows, side, value] = parts[..] else {
            bail!("{}: expected '<position> <side> <value>'", at());
        };
        let pos = retro_musashi::Side::parse(side)
            .and_then(|s| Position::parse(board, rows, s))
            .with_context(at)?;
        let want: u8 = value
            .parse()
            .with_context(|| format!("{}: '{value}' is not a value", at()))?;
        let have = tables.value(&pos)?;
        checked += 1;
        if have != want {
            problems.push(format!(
                "{rows} {side}: expected {want}, tables give {have}"
            ));
        }
    }
    Ok((checked, problems))
}

/// Checks the defining recurrence on `samples` random slots of every slice (every slot when
/// `samples` is at least the slice's size); also checks that non-canonical markers sit exactly
/// on non-canonical slots.
pub fn check_recurrence(tables: &Tables, samples: u64, seed: u64) -> Result<(u64, Vec<String>)> {
    let game = tables.game();
    let names = game.section_names();
    let slices: Vec<_> = game.stages().into_iter().flat_map(|s| s.slices).collect();
    let results: Vec<(u64, Vec<String>)> = slices
        .par_iter()
        .map(|&slice| {
            let len = game.slice_len(slice);
            let indices: Vec<u64> = if samples >= len {
                (0..len).collect()
            } else {
                let mut rng = StdRng::seed_from_u64(
                    seed ^ u64::from(slice.0).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                );
                (0..samples).map(|_| rng.gen_range(0..len)).collect()
            };
            let table = tables.table(slice)?;
            let mut problems = Vec::new();
            let mut checked = 0u64;
            for index in indices {
                for side in Side::BOTH {
                    let stored = table.value(side.index(), index)?;
                    let mut successor = |s, i| tables.stored_at(s, i, side.other());
                    let name = || game.position_name(slice, index);
                    match game.recurrence(side, slice, index, &mut successor)? {
                        None if game.decode(stored) != Solved::NotCanonical => {
                            problems.push(format!("{}: non-canonical slot holds a value", name()));
                        }
                        None => {}
                        Some(want) => {
                            checked += 1;
                            if want != stored {
                                problems.push(format!(
                                    "{} {}: stored {stored}, recurrence gives {want}",
                                    name(),
                                    names[side.index()]
                                ));
                            }
                        }
                    }
                }
            }
            Ok((checked, problems))
        })
        .collect::<Result<_>>()?;
    let checked = results.iter().map(|r| r.0).sum();
    Ok((checked, results.into_iter().flat_map(|r| r.1).collect()))
}

/// Prints the outcome and the first problems; returns whether the check passed.
pub fn report(what: &str, checked: String, problems: &[String]) -> Result<bool> {
    if problems.is_empty() {
        outln!("{what}: OK ({checked})");
        return Ok(true);
    }
    outln!("{what}: {} MISMATCHES ({checked})", problems.len());
    for p in problems.iter().take(LISTED) {
        outln!("  {p}");
    }
    if problems.len() > LISTED {
        outln!("  ... and {} more", problems.len() - LISTED);
    }
    Ok(false)
}
