//! `retro solve`: the single-process driver.
//!
//! Stages are solved in order. After each stage its slice tables are written (atomically) and
//! the manifest is rewritten, so an interrupted solve continues from the last finished stage.
//! At start every recorded slice file is checked against its checksum: a missing or damaged
//! file is named and its stage recomputed. Final values of earlier stages stay in memory for
//! as long as a later stage can read them, and are loaded from their tables when a resumed
//! solve needs them.

use crate::tables::Tables;
use anyhow::{bail, Context, Result};
use indicatif::ProgressBar;
use retro_engine::{DiskIo, SliceCost};
use retro_pipeline::lock::DirLock;
use retro_pipeline::stage::{
    compute_stage, input_cache, plan_stage, stage_positions, too_large, Placement, StagePlan,
};
use retro_pipeline::{
    job_dir, FinalSlice, Finals, JobGame, StageCheckpoints, Start, COUNTS_FILE, SCRATCH,
};
use retro_store::{write_atomic, Manifest};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use tracing::{debug, info};

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
    /// Bytes the solve may use: two stages run at once only if both fit; a stage that does not
    /// fit in memory is solved out of core, alone; one that cannot fit even so is refused
    /// before anything starts.
    pub memory_budget: u64,
    /// Solve every stage out of core, even those that would fit in memory.
    pub out_of_core: bool,
    /// Take a checkpoint inside a stage whenever this long has passed since the last one (zero:
    /// after every ply), so that a killed solve loses at most that much of a stage; `None`:
    /// none (a killed stage starts over).
    pub checkpoint_every: Option<Duration>,
}

/// What a finished solve reports.
pub struct SolveSummary {
    /// Array slots (both sides) solved by this run (excludes stages found finished).
    pub solved_positions: u64,
    /// Array slots (both sides) of the whole solve.
    pub total_positions: u64,
    /// Wall time of the whole run, including checks, writing and the count table.
    pub seconds: f64,
    /// The start position's value in words, if the board has a start position.
    pub start: String,
    /// What each slice solved by this run cost, in the order the stages finished (the
    /// in-process driver; the embedded cluster keeps them in its job database).
    pub slices: Vec<SliceReport>,
}

/// What solving one slice cost.
#[derive(Clone, Debug)]
pub struct SliceReport {
    /// The slice's stage ("browns=12").
    pub stage: String,
    /// The slice ("browns=12 black=22").
    pub name: String,
    /// Array slots, both sides.
    pub positions: u64,
    /// Thread time, wall time, disk traffic and peak memory.
    pub cost: SliceCost,
}

/// Solves `game` into `opts.out`, resuming what is already there.
///
/// Stages are solved as soon as the stages they read are finished, two at a time when there are
/// several threads: in Musashi a capture removes an even number of browns, so the even and the
/// odd brown counts form two independent chains, and running one stage of each fills the cores
/// when one stage's plies run out of parallel work. Each finished stage's tables are written and
/// the manifest saved before the stage counts as finished.
pub fn run(game: &dyn JobGame, opts: &SolveOptions) -> Result<SolveSummary> {
    run_with_bar(game, opts, crate::progress::positions_bar(opts.quiet))
}

/// [`run`], counting solved positions on `bar` (which an observer may read meanwhile).
pub fn run_with_bar(
    game: &dyn JobGame,
    opts: &SolveOptions,
    bar: ProgressBar,
) -> Result<SolveSummary> {
    let started = Instant::now();
    let out = &opts.out;
    let lock = DirLock::acquire(out)?;
    let mut manifest =
        job_dir::prepare(out, game, "", &[]).inspect_err(|_| lock.remove_if_created())?;
    // The directory is this job's: its log lines go to its log file from here on.
    retro_pipeline::process::log_to_job_file(out)?;
    let stages = game.stages();
    let done =
        job_dir::check_finished(&retro_pipeline::LocalStorage::new(out), game, &mut manifest);
    let kept = done.iter().filter(|&&d| d).count();
    if kept > 0 && kept < done.len() {
        bar.suspend(|| {
            println!(
                "Resuming {}: {kept} of {} stages done and kept.",
                out.display(),
                done.len()
            )
        });
    }
    let plans: Vec<Option<StagePlan>> = (0..stages.len())
        .map(|i| plan_stage(game, i, opts.memory_budget, opts.out_of_core))
        .collect();
    if let Some(i) = (0..stages.len()).find(|&i| !done[i] && plans[i].is_none()) {
        bail!(
            "{}",
            too_large(
                game,
                i,
                opts.memory_budget,
                opts.memory_budget,
                opts.out_of_core
            )
        );
    }
    let plans: Vec<StagePlan> = plans
        .into_iter()
        .map(|p| {
            p.unwrap_or(StagePlan {
                placement: Placement::InMemory,
                memory: 0,
            })
        })
        .collect();
    // One pool per stage in flight (see `embedded` for why the two do not share one).
    let parallel_stages = if opts.threads > 1 { 2 } else { 1 };
    let pools = (0..parallel_stages)
        .map(|_| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(opts.threads)
                .build()
                .context("cannot start worker threads")
        })
        .collect::<Result<Vec<_>>>()?;
    let slots = |i: usize| stage_positions(game, &stages[i]) / 2;
    let total_slots: u64 = (0..stages.len()).map(|i| 2 * slots(i)).sum();
    bar.set_length(total_slots);
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
        finals: Finals::empty(game.slice_count()).0,
        readers,
        plans,
        running_memory: 0,
        solved_positions: 0,
        slices: Vec::new(),
        error: None,
    });
    let wake = Condvar::new();
    std::thread::scope(|scope| {
        for pool in &pools {
            let (stages, bar, state, wake) = (&stages, &bar, &state, &wake);
            scope.spawn(move || {
                if let Err(e) = stage_worker(game, stages, opts, pool, bar, state, wake) {
                    let mut st = state.lock().expect("schedule lock");
                    st.error.get_or_insert(e);
                    wake.notify_all();
                }
            });
        }
    });
    crate::progress::finish(&bar);
    let mut st = state.into_inner().expect("schedule lock");
    if let Some(e) = st.error {
        return Err(e);
    }
    if !st.manifest.complete {
        // Every stage was found finished (e.g. in a rebuilt manifest): the solve is complete.
        st.manifest.complete = true;
        st.manifest.save(out)?;
    }
    let table = game.count_table(&st.manifest)?;
    write_atomic(&out.join(COUNTS_FILE), table.as_bytes())?;
    Ok(SolveSummary {
        solved_positions: st.solved_positions,
        total_positions: total_slots,
        seconds: started.elapsed().as_secs_f64(),
        start: start_value(game, out)?,
        slices: std::mem::take(&mut st.slices),
    })
}

/// The driver's shared state: which stages are finished or running, and the final values
/// later stages read.
struct Schedule {
    manifest: Manifest,
    done: Vec<bool>,
    running: Vec<bool>,
    finals: Vec<Option<Arc<FinalSlice>>>,
    readers: Vec<usize>,
    /// Where each stage's data lives and the bytes it reserves while it is solved.
    plans: Vec<StagePlan>,
    /// Estimated bytes of the stages running now.
    running_memory: u64,
    solved_positions: u64,
    slices: Vec<SliceReport>,
    error: Option<anyhow::Error>,
}

/// Takes ready stages (all they read finished) one at a time, until none is left or another
/// worker failed.
fn stage_worker(
    game: &dyn JobGame,
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
                !st.done[i]
                    && !st.running[i]
                    && stages[i].depends_on.iter().all(|&d| st.done[d])
                    && st.running_memory + st.plans[i].memory <= opts.memory_budget
            });
            if let Some(i) = ready {
                st.running[i] = true;
                st.running_memory += st.plans[i].memory;
                // Values kept for later stages count against the budget too, unless a running
                // stage (or this one) reads them: those are in its estimate. When they do not
                // fit, or when this stage is out of core (it has the whole budget), they leave
                // memory; they are read from their tables again when needed. An out-of-core
                // stage that pages its inputs drops its in-memory copies as well.
                let paged = st.plans[i].placement.pages_inputs();
                let needed: Vec<bool> = {
                    let mut needed = vec![false; st.finals.len()];
                    let readers = (0..stages.len()).filter(|&j| st.running[j]);
                    for j in readers.filter(|&j| !(paged && j == i)) {
                        for &d in &stages[j].depends_on {
                            for s in &stages[d].slices {
                                needed[s.0 as usize] = true;
                            }
                        }
                    }
                    needed
                };
                let extra: u64 = (0..st.finals.len())
                    .filter(|&s| !needed[s])
                    .filter_map(|s| st.finals[s].as_ref().map(|v| v.bytes()))
                    .sum();
                if st.plans[i].placement != Placement::InMemory
                    || st.running_memory + extra > opts.memory_budget
                {
                    for (s, kept) in st.finals.iter_mut().enumerate() {
                        if !needed[s] {
                            *kept = None;
                        }
                    }
                }
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
                // The stage holds only what it reads, so that evicting other kept values
                // frees their memory.
                let mut finals = Finals::empty(game.slice_count());
                for &d in &stages[i].depends_on {
                    for s in &stages[d].slices {
                        finals.0[s.0 as usize] = st.finals[s.0 as usize].clone();
                    }
                }
                break (i, finals, to_load);
            }
            st = wake.wait(st).expect("schedule lock");
        };
        let placement = st.plans[i].placement;
        drop(st);
        let scratch = out.join(SCRATCH);
        // Too large to hold its inputs: each is read block by block from its table through a
        // bounded cache, and none is kept for later stages.
        let inputs_started = Instant::now();
        let block_cache = placement.pages_inputs().then(|| input_cache(game, i));
        if let Some(cache) = &block_cache {
            finals = Finals::empty(game.slice_count());
            let records = state.lock().expect("schedule lock").manifest.slices.clone();
            for &d in &stages[i].depends_on {
                for &s in &stages[d].slices {
                    let record = records.iter().find(|r| r.id == s.0);
                    let record = record.expect("finished stages have records");
                    finals.0[s.0 as usize] = Some(Finals::read_table(
                        &out.join(&record.file),
                        game.reads_sections(),
                        Some(cache),
                    )?);
                }
            }
        } else {
            for (slice, path) in to_load {
                let values = Finals::read_table(&path, game.reads_sections(), None)?;
                finals.0[slice.0 as usize] = Some(values.clone());
                state.lock().expect("schedule lock").finals[slice.0 as usize] = Some(values);
            }
        }
        let inputs_read = inputs_started.elapsed();
        let stage = &stages[i];
        let stage_started = Instant::now();
        let io_before = DiskIo::now();
        let stage_slots = stage_positions(game, stage);
        let mut shown = 0u64;
        let write_table = |t: &retro_pipeline::EncodedSlice| -> Result<()> {
            Ok(write_atomic(&out.join(&t.record.file), &t.bytes)?)
        };
        let keeper = opts
            .checkpoint_every
            .map(|every| Arc::new(StageCheckpoints::new(out, &stage.name, 0, every)));
        let output = pool.install(|| {
            compute_stage(
                game,
                i,
                &finals,
                opts.level,
                placement,
                &scratch,
                &write_table,
                keeper.clone(),
                |report| {
                    // Per ply, for profiles: the log's timestamps give each ply's wall time
                    // (`RETRO_LOG=info,retro::solve=debug`).
                    debug!(
                        stage = %stage.name,
                        ply = report.ply,
                        resolved = report.resolved,
                        expanded = report.expanded,
                        work_ms = report.work.as_millis() as u64,
                        logging_ms = report.logging.as_millis() as u64,
                        "ply finished"
                    );
                    let step = report.resolved.min(stage_slots - shown);
                    shown += step;
                    bar.inc(step);
                    bar.set_message(format!("{} ply {}", stage.name, report.ply));
                },
            )
        })?;
        drop(finals);
        bar.inc(stage_slots - shown);
        // A stage resumed from a checkpoint reports its earlier sittings' wall too.
        let compute = stage_started.elapsed() + output.times.earlier_wall;
        let times = output.times.clone();
        let records = output.tables;
        let write = output.encode;
        let io = DiskIo::now().since(io_before);
        let mut st = state.lock().expect("schedule lock");
        st.manifest.slices.retain(|r| r.stage != i);
        st.manifest.slices.extend(records);
        st.manifest.slices.sort_by_key(|r| r.id);
        st.done[i] = true;
        st.running[i] = false;
        st.running_memory -= st.plans[i].memory;
        st.manifest.complete = st.done.iter().all(|&d| d);
        st.manifest.save(out)?;
        // The stage is committed: its checkpoints are of no more use.
        if let Some(keeper) = &keeper {
            keeper.remove();
        }
        st.solved_positions += stage_slots;
        let reports: Vec<SliceReport> = stage
            .slices
            .iter()
            .zip(&times.slices)
            .map(|(&slice, &cost)| SliceReport {
                stage: stage.name.clone(),
                name: game.slice_name(slice),
                positions: 2 * game.slice_len(slice),
                cost,
            })
            .collect();
        st.slices.extend(reports.iter().cloned());
        if st.readers[i] > 0 {
            for (slice, values) in output.finals {
                st.finals[slice.0 as usize] = Some(Arc::new(values));
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
        // Log lines go around the progress bar by themselves (the log writer suspends it):
        // suspending it here too would take its lock twice.
        // What each slice cost (all its plies together): logged for out-of-core stages,
        // where slices are solved one at a time and the lines show the progress.
        for r in reports.iter().filter(|_| placement != Placement::InMemory) {
            info!(
                slice = %r.name,
                positions = r.positions,
                seconds = format!("{:.1}", r.cost.wall.as_secs_f64()),
                positions_per_s_per_core = r.positions_per_core_second() as u64,
                disk_read_mb = r.cost.read >> 20,
                disk_written_mb = r.cost.written >> 20,
                rss_mb = r.cost.peak_rss >> 20,
                "slice solved"
            );
        }
        info!(
            stage = %stage.name,
            slots = stage_slots,
            compute_ms = compute.as_millis() as u64,
            earlier_sittings_ms = times.earlier_wall.as_millis() as u64,
            inputs_ms = inputs_read.as_millis() as u64,
            // Blocks of the inputs decompressed (each is 16 Ki values), for a stage that reads
            // them from their tables: how well its bounded cache served.
            input_blocks_decompressed = block_cache.as_ref().map_or(0, |c| c.misses()),
            init_ms = times.init.as_millis() as u64,
            claim_plies_ms = times.claim_plies.as_millis() as u64,
            count_plies_ms = times.count_plies.as_millis() as u64,
            write_ms = write.as_millis() as u64,
            out_of_core = placement != Placement::InMemory,
            disk_read_mb = io.read >> 20,
            disk_written_mb = io.written >> 20,
            array_bits_per_position = format!(
                "{:.2}",
                8.0 * times.array_bytes as f64 / stage_slots.max(1) as f64
            ),
            value_log_mb = times.value_log_bytes >> 20,
            value_log_bytes_per_logged = format!(
                "{:.3}",
                times.value_log_bytes as f64 / times.value_log_keys.max(1) as f64
            ),
            build_ms = times.build.as_millis() as u64,
            peak_list_bytes_per_position = format!(
                "{:.2}",
                8.0 * times.peak_list_keys as f64 / stage_slots.max(1) as f64
            ),
            "stage finished"
        );
        // Where the stage's threads idled: each kernel step's wall seconds, the cores it kept
        // busy and the core-seconds it left idle (`sweep=85.1s/1.97/2.6`).
        info!(
            stage = %stage.name,
            steps = %times.steps.summary(opts.threads),
            "stage steps"
        );
    }
}

impl SliceReport {
    /// Positions solved per second of thread time: the throughput of one core.
    pub fn positions_per_core_second(&self) -> f64 {
        self.positions as f64 / self.cost.cpu.as_secs_f64().max(1e-9)
    }
}

/// The start position's value in words, when the game has one within the solve.
pub(crate) fn start_value(game: &dyn JobGame, out: &Path) -> Result<String> {
    Ok(match game.start() {
        Start::None => "The game defines no start position.".into(),
        Start::NotCovered { notation, why } => {
            format!("Start position {notation}: not covered ({why}).")
        }
        Start::At(start) => {
            let byte = Tables::open(out)?.stored_at(start.slice, start.index, start.side)?;
            format!(
                "Start position {}: value {byte}: {}",
                start.notation,
                game.describe_value(start.side, byte)
            )
        }
    })
}
