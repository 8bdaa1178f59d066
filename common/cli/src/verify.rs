//! `retro verify`: compare tables with published data and check the defining recurrence.

use crate::counts::count_table_from_tables;
use crate::tables::Tables;
use anyhow::{bail, Context, Result};
use rand::{rngs::StdRng, Rng, SeedableRng};
use rayon::prelude::*;
use retro_engine::Side;
use retro_pipeline::{Solved, StoredValues};
use std::path::Path;

/// How many mismatches are listed before the rest are only counted.
const LISTED: usize = 10;

/// Compares the count table of `tables` with the file `expected`, line by line.
pub fn check_counts(tables: &Tables, expected: &Path) -> Result<Vec<String>> {
    let want = std::fs::read_to_string(expected)
        .with_context(|| format!("cannot read count table {}", expected.display()))?;
    let have = count_table_from_tables(tables)?;
    Ok(count_differences(&want, &have))
}

/// The fields in which the count table `have` differs from `want`, one line each: "row k=12,
/// column n31: 1,234 expected, 1,233 found". Rows are named by their first field; columns by
/// the table's header line when it has one, else by the published count table's names (`k`,
/// `B0`, `R0`, then `n1`, `n2`, ...: positions of value `v`).
fn count_differences(want: &str, have: &str) -> Vec<String> {
    let (want_lines, have_lines): (Vec<&str>, Vec<&str>) =
        (want.lines().collect(), have.lines().collect());
    let header: Option<Vec<&str>> = want_lines
        .first()
        .filter(|l| !l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split(',').collect());
    let column = |i: usize| -> String {
        match &header {
            Some(names) => names
                .get(i)
                .map_or(format!("column {}", i + 1), |n| n.to_string()),
            None => match i {
                0 => "k".into(),
                1 => "B0".into(),
                2 => "R0".into(),
                i => format!("n{}", i - 2),
            },
        }
    };
    let row_name = |fields: &[&str]| match &header {
        Some(_) => format!("row {}", fields.first().copied().unwrap_or("?")),
        None => format!("row k={}", fields.first().copied().unwrap_or("?")),
    };
    let mut problems = Vec::new();
    for i in 0..want_lines.len().max(have_lines.len()) {
        match (want_lines.get(i), have_lines.get(i)) {
            (Some(w), Some(h)) if w == h => {}
            (Some(w), Some(h)) => {
                let (wf, hf): (Vec<&str>, Vec<&str>) =
                    (w.split(',').collect(), h.split(',').collect());
                for c in 0..wf.len().max(hf.len()) {
                    let (a, b) = (wf.get(c).copied(), hf.get(c).copied());
                    if a != b {
                        problems.push(format!(
                            "{}, column {}: {} expected, {} found",
                            row_name(&wf),
                            column(c),
                            a.map_or("nothing".into(), thousands),
                            b.map_or("nothing".into(), thousands)
                        ));
                    }
                }
            }
            (Some(w), None) => problems.push(format!(
                "line {}: expected '{w}', the tables give no such row",
                i + 1
            )),
            (None, Some(h)) => problems.push(format!(
                "line {}: the tables give '{h}', not expected",
                i + 1
            )),
            (None, None) => {}
        }
    }
    if problems.is_empty() && want != have {
        problems.push("counts: same lines but different bytes (line endings?)".into());
    }
    problems
}

/// A count field as people read it (`1,234,567`); other text as it is.
fn thousands(field: &str) -> String {
    field
        .parse::<u64>()
        .map_or_else(|_| field.to_string(), crate::output::thousands)
}

/// Compares stored values with the lines `<position> <side> <value>` of `path`, positions and
/// values in the notation of the directory's game (as `retro probe --file` prints them).
pub fn check_values(tables: &Tables, path: &Path) -> Result<(usize, Vec<String>)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read values file {}", path.display()))?;
    let explorer = tables.explorer()?;
    let mut problems = Vec::new();
    let mut checked = 0;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{}: line {}", path.display(), i + 1);
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [rows, side, want] = parts[..] else {
            bail!("{}: expected '<position> <side> <value>'", at());
        };
        let have = explorer
            .value(&format!("{rows} {side}"), tables)
            .with_context(at)?;
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
                sample_indices(slice, len, samples, seed)
            };
            let table = tables.table(slice)?;
            let mut problems = Vec::new();
            let mut checked = 0u64;
            // A side the table derives holds the recurrence's bytes by construction: its
            // values are checked through the stored side's recurrence, which reads them.
            let sides: Vec<Side> = Side::BOTH
                .into_iter()
                .filter(|&side| table.is_stored(side.index()))
                .collect();
            for index in indices {
                for &side in &sides {
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

/// Compares the values of `tables` with `other` (a directory of the same game and definition),
/// stored or derived in either: every slot of every slice and side, or with `sample` that many
/// random slots of each (seeded by `seed`). Returns the slots compared and a line per slice and
/// side that differs (how many slots, and the first).
pub fn check_against(
    tables: &Tables,
    other: &Tables,
    sample: Option<u64>,
    seed: u64,
) -> Result<(u64, Vec<String>)> {
    let game = tables.game();
    if other.game().name() != game.name() || other.game().definition() != game.definition() {
        bail!(
            "{} and {} hold different games or definitions",
            tables.dir().display(),
            other.dir().display()
        );
    }
    let names = game.section_names();
    let slices: Vec<_> = game.stages().into_iter().flat_map(|s| s.slices).collect();
    let mut compared = 0;
    let mut problems = Vec::new();
    for slice in slices {
        let len = game.slice_len(slice);
        for side in Side::BOTH {
            // (index, mine, theirs) of the slots that differ, and how many were compared.
            let (n, differ): (u64, Vec<(u64, u8, u8)>) = match sample {
                Some(samples) if samples < len => {
                    let indices = sample_indices(slice, len, samples, seed);
                    let differ = indices
                        .par_iter()
                        .map(|&i| {
                            let (a, b) = (
                                tables.stored_at(slice, i, side)?,
                                other.stored_at(slice, i, side)?,
                            );
                            Ok((i, a, b))
                        })
                        .collect::<Result<Vec<_>>>()?
                        .into_iter()
                        .filter(|(_, a, b)| a != b)
                        .collect();
                    (samples, differ)
                }
                // Whole sections, one slice at a time (two sections in memory).
                _ => {
                    let mine = StoredValues::section(tables, slice, side)?;
                    let theirs = StoredValues::section(other, slice, side)?;
                    let differ = (0..len)
                        .zip(mine.iter().zip(&theirs))
                        .filter(|(_, (a, b))| a != b)
                        .map(|(i, (&a, &b))| (i, a, b))
                        .collect();
                    (len, differ)
                }
            };
            compared += n;
            if let Some(&(first, a, b)) = differ.first() {
                problems.push(format!(
                    "{} {}: {} of {n} slots differ, first {} ({a} against {b})",
                    game.slice_name(slice),
                    names[side.index()],
                    differ.len(),
                    game.position_name(slice, first)
                ));
            }
        }
    }
    Ok((compared, problems))
}

/// `samples` random slots of a slice of `len` slots, the same for every run with `seed`.
fn sample_indices(slice: retro_engine::SliceId, len: u64, samples: u64, seed: u64) -> Vec<u64> {
    let mut rng =
        StdRng::seed_from_u64(seed ^ u64::from(slice.0).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    (0..samples).map(|_| rng.gen_range(0..len)).collect()
}

/// Prints the outcome and the first problems; returns whether the check passed.
pub fn report(what: &str, checked: String, problems: &[String]) -> Result<bool> {
    if problems.is_empty() {
        outln!("{what}: OK ({checked})");
        return Ok(true);
    }
    let n = problems.len();
    outln!(
        "{what}: {n} {} ({checked})",
        if n == 1 { "MISMATCH" } else { "MISMATCHES" }
    );
    for p in problems.iter().take(LISTED) {
        outln!("  {p}");
    }
    if problems.len() > LISTED {
        outln!("  ... and {} more", problems.len() - LISTED);
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_mismatch_names_its_row_and_column() {
        let want = "11,5,7,1234\n12,0,0,9\n";
        let have = "11,5,7,1233\n12,0,0,9\n";
        assert_eq!(
            count_differences(want, have),
            ["row k=11, column n1: 1,234 expected, 1,233 found"]
        );
        let want = "stage,side,positions,win\ns1,first,10,4\n";
        let have = "stage,side,positions,win\ns1,first,10,5\n";
        assert_eq!(
            count_differences(want, have),
            ["row s1, column win: 4 expected, 5 found"]
        );
        assert!(count_differences(want, want).is_empty());
        assert_eq!(thousands("1234567"), "1,234,567");
        assert_eq!(thousands("999"), "999");
    }
}
