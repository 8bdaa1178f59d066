//! `retro solve`: the single-process driver.
//!
//! Stages are solved in order. After each stage its slice tables are written (atomically) and
//! the manifest is rewritten, so an interrupted solve continues from the last finished stage.
//! At start every recorded slice file is checked against its checksum: a missing or damaged
//! file is named and its stage recomputed. Final values of earlier stages stay in memory for
//! as long as a later stage can read them, and are loaded from their tables when a resumed
//! solve needs them.

use crate::counts::count_rows_from_manifest;
use crate::game_choice::definition;
use crate::tables::{Tables, SECTION_NAMES};
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use retro_engine::{solve_stage, ByteArray, FinalValues, Game, SliceId, Value, NON_CANONICAL};
use retro_musashi::counts::format_count_table;
use retro_musashi::values::describe;
use retro_musashi::{Musashi, Position};
use retro_store::manifest::FORMAT;
use retro_store::table::file_checksum;
use retro_store::{write_atomic, Manifest, SliceRecord, SliceTable, TableWriter};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tracing::{info, warn};

/// How to run a solve.
pub struct SolveOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Worker threads.
    pub threads: usize,
    /// zstd level of the tables.
    pub level: i32,
    /// Hide the progress bar.
    pub quiet: bool,
}

/// File name of the count table written next to the tables.
pub const COUNTS_FILE: &str = "counts.csv";

/// Attacker-to-move arrays of finished slices, indexed by slice id.
struct Finals(Vec<Option<ByteArray>>);

impl FinalValues for Finals {
    fn attacker_value(&self, slice: SliceId, index: u64) -> Value {
        self.0[slice.0 as usize]
            .as_ref()
            .expect("the driver loads every dependency before solving a stage")[index as usize]
    }
}

/// Prepares `out`: creates it, or checks that it holds a solve of the same definition.
fn open_output(out: &Path, game: &Musashi) -> Result<Manifest> {
    let fresh = Manifest {
        format: FORMAT.into(),
        game: "musashi".into(),
        definition: definition(game),
        stages: game.stages().len(),
        slices: Vec::new(),
        complete: false,
    };
    if !out.exists() {
        std::fs::create_dir_all(out)
            .with_context(|| format!("cannot create output directory {}", out.display()))?;
        return Ok(fresh);
    }
    if !out.is_dir() {
        bail!("{}: exists and is not a directory", out.display());
    }
    match Manifest::load(out)? {
        Some(m) if m.game == fresh.game && m.definition == fresh.definition => Ok(m),
        Some(m) => bail!(
            "{}: holds a different solve ({} on {}, max browns {}); choose another --out",
            out.display(),
            m.game,
            m.definition["board"].as_str().unwrap_or("?"),
            m.definition["max_browns"]
        ),
        None => {
            let foreign = std::fs::read_dir(out)
                .with_context(|| format!("cannot read {}", out.display()))?
                .next()
                .is_some();
            if foreign {
                bail!(
                    "{}: is not empty and has no retro manifest; refusing to write into it",
                    out.display()
                );
            }
            Ok(fresh)
        }
    }
}

/// Which stages are finished with intact files. Records of damaged stages are dropped from the
/// manifest (with a warning naming the file) so that they are recomputed.
fn check_finished(out: &Path, game: &Musashi, manifest: &mut Manifest) -> Vec<bool> {
    let stages = game.stages();
    let mut intact = vec![true; stages.len()];
    let mut present = vec![false; game.slice_count()];
    for r in &manifest.slices {
        let path = out.join(&r.file);
        let ok = match file_checksum(&path) {
            Ok(sum) if format!("{sum:016x}") == r.checksum => true,
            Ok(_) => {
                warn!(
                    "{}: damaged (checksum mismatch); recomputing {}",
                    path.display(),
                    r.name
                );
                false
            }
            Err(e) => {
                warn!("{e}; recomputing {}", r.name);
                false
            }
        };
        if ok && (r.id as usize) < present.len() {
            present[r.id as usize] = true;
        } else {
            intact[r.stage.min(stages.len() - 1)] = false;
        }
    }
    for (i, stage) in stages.iter().enumerate() {
        if !stage.slices.iter().all(|s| present[s.0 as usize]) {
            intact[i] = false;
        }
    }
    manifest.slices.retain(|r| intact[r.stage]);
    intact
}

/// Encodes and writes the tables of a solved stage; returns their manifest records.
fn write_stage(
    out: &Path,
    game: &Musashi,
    stage: usize,
    solved: &[retro_engine::SolvedSlice],
    level: i32,
) -> Result<Vec<SliceRecord>> {
    solved
        .par_iter()
        .map(|s| {
            let (k, rep) = game.slice_parts(s.slice);
            let file = format!("browns{k:02}-black{}.tbl", game.board().point_name(rep));
            let name = game.slice_name(s.slice);
            let bytes = TableWriter::encode(
                &name,
                &[
                    (SECTION_NAMES[0], &s.attacker[..]),
                    (SECTION_NAMES[1], &s.defender[..]),
                ],
                level,
            );
            write_atomic(&out.join(&file), &bytes)?;
            let histograms = [&s.attacker[..], &s.defender[..]]
                .iter()
                .map(|values| {
                    let mut counts = [0u64; 256];
                    for &v in values.iter() {
                        counts[v as usize] += 1;
                    }
                    (0..=255u8)
                        .filter(|&v| v != NON_CANONICAL && counts[v as usize] > 0)
                        .map(|v| (v, counts[v as usize]))
                        .collect::<BTreeMap<_, _>>()
                })
                .collect();
            Ok(SliceRecord {
                id: s.slice.0,
                stage,
                name,
                file,
                positions: s.attacker.len() as u64,
                bytes: bytes.len() as u64,
                checksum: format!("{:016x}", retro_store::checksum(&bytes)),
                histograms,
            })
        })
        .collect()
}

/// What a finished solve reports.
pub struct SolveSummary {
    /// Array slots (both sides) solved by this run (excludes stages found finished).
    pub solved_positions: u64,
    /// Wall time of the whole run, including checks, writing and the count table.
    pub seconds: f64,
    /// The start position's value in words, if the board has a start position.
    pub start: String,
}

/// Solves `game` into `opts.out`, resuming what is already there.
pub fn run(game: Musashi, opts: &SolveOptions) -> Result<SolveSummary> {
    let started = Instant::now();
    let out = &opts.out;
    let mut manifest = open_output(out, &game)?;
    let stages = game.stages();
    let mut done = check_finished(out, &game, &mut manifest);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .context("cannot start worker threads")?;
    // The last stage that reads each stage's values: after it, they can leave memory.
    let mut last_use: Vec<usize> = (0..stages.len()).collect();
    for (i, s) in stages.iter().enumerate() {
        for &d in &s.depends_on {
            last_use[d] = last_use[d].max(i);
        }
    }
    let slots = |i: usize| -> u64 { stages[i].slices.iter().map(|&s| game.slice_len(s)).sum() };
    let total_slots: u64 = (0..stages.len()).map(|i| 2 * slots(i)).sum();
    let bar = if opts.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(total_slots), ProgressDrawTarget::stderr())
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {percent:>3}% {msg} {human_pos}/{human_len} positions, {per_sec}, ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let mut finals = Finals((0..game.slice_count()).map(|_| None).collect());
    let mut solved_positions = 0u64;
    for (i, stage) in stages.iter().enumerate() {
        if done[i] {
            bar.inc(2 * slots(i));
            continue;
        }
        for &d in &stage.depends_on {
            for &s in &stages[d].slices {
                if finals.0[s.0 as usize].is_none() {
                    let record = manifest
                        .slices
                        .iter()
                        .find(|r| r.id == s.0)
                        .expect("dependencies are finished");
                    let table = SliceTable::open(&out.join(&record.file))?;
                    let values = table.read_section(0)?;
                    finals.0[s.0 as usize] = Some(ByteArray::from_slice(&values));
                }
            }
        }
        let stage_started = Instant::now();
        let stage_slots = 2 * slots(i);
        let mut shown = 0u64;
        let (solved, times) = pool.install(|| {
            solve_stage(&game, stage, &finals, |report| {
                let step = report.resolved.min(stage_slots - shown);
                shown += step;
                bar.inc(step);
                bar.set_message(format!("{} ply {}", stage.name, report.ply));
            })
        })?;
        bar.inc(stage_slots - shown);
        let compute = stage_started.elapsed();
        let records = pool.install(|| write_stage(out, &game, i, &solved, opts.level))?;
        manifest.slices.retain(|r| r.stage != i);
        manifest.slices.extend(records);
        manifest.slices.sort_by_key(|r| r.id);
        done[i] = true;
        manifest.complete = done.iter().all(|&d| d);
        manifest.save(out)?;
        solved_positions += stage_slots;
        bar.suspend(|| {
            info!(
                stage = %stage.name,
                slots = stage_slots,
                compute_ms = compute.as_millis() as u64,
                init_ms = times.init.as_millis() as u64,
                attacker_plies_ms = times.attacker_plies.as_millis() as u64,
                defender_plies_ms = times.defender_plies.as_millis() as u64,
                write_ms = (stage_started.elapsed() - compute).as_millis() as u64,
                "stage finished"
            )
        });
        for s in solved {
            finals.0[s.slice.0 as usize] = Some(s.attacker);
        }
        for (j, s) in stages.iter().enumerate().take(i + 1) {
            if last_use[j] <= i {
                for &slice in &s.slices {
                    finals.0[slice.0 as usize] = None;
                }
            }
        }
    }
    bar.finish_and_clear();
    let table = format_count_table(&count_rows_from_manifest(&game, &manifest));
    write_atomic(&out.join(COUNTS_FILE), table.as_bytes())?;
    Ok(SolveSummary {
        solved_positions,
        seconds: started.elapsed().as_secs_f64(),
        start: start_value(&game, out)?,
    })
}

/// The start position's value in words, when the board has one within the solve.
fn start_value(game: &Musashi, out: &Path) -> Result<String> {
    let Some(start) = game.board().start.clone() else {
        return Ok("The board defines no start position.".into());
    };
    let pos = Position::parse_with_side(game.board(), &start)?;
    if pos.browns.count_ones() as usize > game.max_browns() {
        return Ok(format!(
            "Start position {start}: not covered (it has {} browns; solved up to {}).",
            pos.browns.count_ones(),
            game.max_browns()
        ));
    }
    let value = Tables::open(out)?.value(&pos)?;
    Ok(format!(
        "Start position {start}: value {value}: {}",
        describe(value, pos.side)
    ))
}
