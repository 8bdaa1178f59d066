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
use std::sync::{Arc, Condvar, Mutex};
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

/// Attacker-to-move arrays of finished slices, indexed by slice id (shared, so that a stage
/// reads them without holding the scheduler's lock).
struct Finals(Vec<Option<Arc<ByteArray>>>);

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
        // The manifest comes first: a solve killed before its first stage finishes still
        // leaves a directory that a rerun recognises as its own and resumes.
        fresh.save(out)?;
        return Ok(fresh);
    }
    if !out.is_dir() {
        bail!("{}: exists and is not a directory", out.display());
    }
    match Manifest::load(out)? {
        Some(m) if m.game == fresh.game && m.definition == fresh.definition => {
            remove_stale_temporaries(out)?;
            Ok(m)
        }
        Some(m) => bail!(
            "{}: holds a different solve ({} on {}, max browns {}); choose another --out",
            out.display(),
            m.game,
            m.definition["board"].as_str().unwrap_or("?"),
            m.definition["max_browns"]
        ),
        None => {
            // An empty directory is taken over; so is one holding only temporaries of a solve
            // killed before it wrote its manifest.
            remove_stale_temporaries(out)?;
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

/// Removes the temporary files an interrupted solve left behind (`.NAME.PID.tmp`, see
/// `retro_store::write_atomic`); they were never renamed into place, so nothing refers to them.
fn remove_stale_temporaries(out: &Path) -> Result<()> {
    let entries =
        std::fs::read_dir(out).with_context(|| format!("cannot read {}", out.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", out.display()))?;
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') && name.ends_with(".tmp") {
            warn!(
                "{}: removing a temporary file left by an interrupted solve",
                entry.path().display()
            );
            std::fs::remove_file(entry.path())
                .with_context(|| format!("cannot remove {}", entry.path().display()))?;
        }
    }
    Ok(())
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
///
/// Stages are solved as soon as the stages they read are finished, two at a time when there are
/// several threads: in Musashi a capture removes an even number of browns, so the even and the
/// odd brown counts form two independent chains, and running one stage of each fills the cores
/// when one stage's plies run out of parallel work. Each finished stage's tables are written and
/// the manifest saved before the stage counts as finished.
pub fn run(game: Musashi, opts: &SolveOptions) -> Result<SolveSummary> {
    let started = Instant::now();
    let out = &opts.out;
    let mut manifest = open_output(out, &game)?;
    let stages = game.stages();
    let done = check_finished(out, &game, &mut manifest);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .context("cannot start worker threads")?;
    let slots = |i: usize| stage_positions(&game, &stages[i]) / 2;
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
    for (i, _) in done.iter().enumerate().filter(|(_, &d)| d) {
        bar.inc(2 * slots(i));
    }
    // How many unfinished stages still read each stage: when it reaches 0, its values leave
    // memory.
    let mut readers = vec![0usize; stages.len()];
    for (_, s) in stages.iter().enumerate().filter(|(i, _)| !done[*i]) {
        for &d in &s.depends_on {
            readers[d] += 1;
        }
    }
    let state = Mutex::new(Schedule {
        manifest,
        running: vec![false; stages.len()],
        done,
        finals: (0..game.slice_count()).map(|_| None).collect(),
        readers,
        solved_positions: 0,
        error: None,
    });
    let wake = Condvar::new();
    let parallel_stages = if opts.threads > 1 { 2 } else { 1 };
    std::thread::scope(|scope| {
        for _ in 0..parallel_stages {
            scope.spawn(|| {
                if let Err(e) = stage_worker(&game, &stages, opts, &pool, &bar, &state, &wake) {
                    let mut st = state.lock().expect("schedule lock");
                    st.error.get_or_insert(e);
                    wake.notify_all();
                }
            });
        }
    });
    bar.finish_and_clear();
    let st = state.into_inner().expect("schedule lock");
    if let Some(e) = st.error {
        return Err(e);
    }
    let table = format_count_table(&count_rows_from_manifest(&game, &st.manifest));
    write_atomic(&out.join(COUNTS_FILE), table.as_bytes())?;
    Ok(SolveSummary {
        solved_positions: st.solved_positions,
        seconds: started.elapsed().as_secs_f64(),
        start: start_value(&game, out)?,
    })
}

/// Array slots of a stage, both sides to move: the unit of progress and throughput.
fn stage_positions(game: &Musashi, stage: &retro_engine::Stage) -> u64 {
    2 * stage.slices.iter().map(|&s| game.slice_len(s)).sum::<u64>()
}

/// The driver's shared state: which stages are finished or running, and the final values
/// later stages read.
struct Schedule {
    manifest: Manifest,
    done: Vec<bool>,
    running: Vec<bool>,
    finals: Vec<Option<Arc<ByteArray>>>,
    readers: Vec<usize>,
    solved_positions: u64,
    error: Option<anyhow::Error>,
}

/// Takes ready stages (all they read finished) one at a time, until none is left or another
/// worker failed.
fn stage_worker(
    game: &Musashi,
    stages: &[retro_engine::Stage],
    opts: &SolveOptions,
    pool: &rayon::ThreadPool,
    bar: &ProgressBar,
    state: &Mutex<Schedule>,
    wake: &Condvar,
) -> Result<()> {
    let out = &opts.out;
    loop {
        // Pick a ready stage, and note which finished tables it needs loaded from disk.
        let mut st = state.lock().expect("schedule lock");
        let (i, mut finals, to_load) = loop {
            if st.error.is_some() || st.done.iter().all(|&d| d) {
                return Ok(());
            }
            let ready = (0..stages.len()).find(|&i| {
                !st.done[i] && !st.running[i] && stages[i].depends_on.iter().all(|&d| st.done[d])
            });
            if let Some(i) = ready {
                st.running[i] = true;
                let mut to_load = Vec::new();
                for &d in &stages[i].depends_on {
                    for &s in &stages[d].slices {
                        if st.finals[s.0 as usize].is_none() {
                            let record = st.manifest.slices.iter().find(|r| r.id == s.0);
                            let record = record.expect("finished stages have records");
                            to_load.push((s, out.join(&record.file)));
                        }
                    }
                }
                break (i, Finals(st.finals.clone()), to_load);
            }
            st = wake.wait(st).expect("schedule lock");
        };
        drop(st);
        for (slice, path) in to_load {
            let values = SliceTable::open(&path)?.read_section(0)?;
            let values = Arc::new(ByteArray::from_slice(&values));
            finals.0[slice.0 as usize] = Some(values.clone());
            state.lock().expect("schedule lock").finals[slice.0 as usize] = Some(values);
        }
        let stage = &stages[i];
        let stage_started = Instant::now();
        let stage_slots = stage_positions(game, stage);
        let mut shown = 0u64;
        let (solved, times) = pool.install(|| {
            solve_stage(game, stage, &finals, |report| {
                let step = report.resolved.min(stage_slots - shown);
                shown += step;
                bar.inc(step);
                bar.set_message(format!("{} ply {}", stage.name, report.ply));
            })
        })?;
        drop(finals);
        bar.inc(stage_slots - shown);
        let compute = stage_started.elapsed();
        let records = pool.install(|| write_stage(out, game, i, &solved, opts.level))?;
        let write = stage_started.elapsed() - compute;
        let mut st = state.lock().expect("schedule lock");
        st.manifest.slices.retain(|r| r.stage != i);
        st.manifest.slices.extend(records);
        st.manifest.slices.sort_by_key(|r| r.id);
        st.done[i] = true;
        st.running[i] = false;
        st.manifest.complete = st.done.iter().all(|&d| d);
        st.manifest.save(out)?;
        st.solved_positions += stage_slots;
        if st.readers[i] > 0 {
            for s in solved {
                st.finals[s.slice.0 as usize] = Some(Arc::new(s.attacker));
            }
        }
        for &d in &stage.depends_on {
            st.readers[d] -= 1;
            if st.readers[d] == 0 {
                for &slice in &stages[d].slices {
                    st.finals[slice.0 as usize] = None;
                }
            }
        }
        wake.notify_all();
        drop(st);
        bar.suspend(|| {
            info!(
                stage = %stage.name,
                slots = stage_slots,
                compute_ms = compute.as_millis() as u64,
                init_ms = times.init.as_millis() as u64,
                attacker_plies_ms = times.attacker_plies.as_millis() as u64,
                defender_plies_ms = times.defender_plies.as_millis() as u64,
                write_ms = write.as_millis() as u64,
                "stage finished"
            )
        });
    }
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
