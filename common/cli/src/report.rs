//! `retro bench --report PREFIX`: where a solve's time, I/O and memory go, slice by slice.
//!
//! One solve (through the embedded coordinator and workers, or the in-process driver) is
//! sampled while it runs (positions done, resident memory: every 0.1 s for the first minute,
//! then every second). Afterwards it prints, per slice (one brown count and black point),
//! positions/s per core (positions over the CPU time the kernel spent on the slice), bytes read
//! and written and the largest resident memory seen while the slice was worked on; through the
//! cluster also one line per task (a stage). It writes `PREFIX.csv` (the samples),
//! `PREFIX-slices.csv` (the slices) and `PREFIX.png` (throughput and memory over the run).

use crate::embedded::{run_observed, EmbeddedOptions};
use crate::solve::{self, SliceReport, SolveOptions, SolveSummary};
use anyhow::{Context, Result};
use indicatif::ProgressBar;
use plotters::prelude::*;
use retro_coordinator::db::{Db, TaskTimesRow};
use retro_engine::meter::resident_bytes;
use retro_pipeline::JobGame;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One sample of a running solve.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Seconds since the start.
    pub seconds: f64,
    /// Array slots solved so far.
    pub positions: u64,
    /// Resident memory of this process (bytes).
    pub rss: u64,
}

/// The samples of one run, thinned to one per 0.1 s for the first minute and one per second
/// after (a long run's file stays small).
struct Samples {
    started: Instant,
    samples: Vec<Sample>,
}

impl Samples {
    fn new() -> Samples {
        let mut samples = Samples {
            started: Instant::now(),
            samples: Vec::new(),
        };
        samples.offer(0);
        samples
    }

    /// Records `positions` done now, if enough time has passed since the last sample.
    fn offer(&mut self, positions: u64) {
        let seconds = self.started.elapsed().as_secs_f64();
        let spacing = if seconds < 60.0 { 0.1 } else { 1.0 };
        if self
            .samples
            .last()
            .is_some_and(|last| seconds - last.seconds < spacing)
        {
            return;
        }
        self.samples.push(Sample {
            seconds,
            positions,
            rss: resident_bytes(),
        });
    }
}

/// Which driver the report runs.
pub enum ReportRun {
    /// The single-process driver: one line per slice.
    InProcess(SolveOptions),
    /// A coordinator and workers in this process: one line per task and one per slice.
    Cluster(EmbeddedOptions),
}

/// Solves `game` as `run` says, then prints and draws the report under `prefix`.
pub fn report(game: Arc<dyn JobGame>, run: &ReportRun, prefix: &Path) -> Result<()> {
    let label = game.describe();
    let mut samples = Samples::new();
    let (summary, threads, tasks): (SolveSummary, usize, Vec<TaskTimesRow>) = match run {
        ReportRun::Cluster(opts) => {
            let summary = run_observed(Some(game), opts, &mut |status| {
                samples.offer(status.positions_done)
            })?;
            let db = Db::open(&opts.out)?;
            let job = db
                .read()
                .jobs()?
                .into_iter()
                .find(|j| j.dir == ".")
                .context("the job database has no embedded job")?;
            let tasks = db.read().task_times(job.id)?;
            (summary, opts.threads, tasks)
        }
        ReportRun::InProcess(opts) => {
            let bar = ProgressBar::hidden();
            let finished = AtomicBool::new(false);
            let summary = std::thread::scope(|scope| {
                scope.spawn(|| {
                    while !finished.load(Ordering::Relaxed) {
                        samples.offer(bar.position());
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    samples.offer(bar.position());
                });
                let summary = solve::run_with_bar(&*game, opts, bar.clone());
                finished.store(true, Ordering::Relaxed);
                summary
            })?;
            (summary, opts.threads, Vec::new())
        }
    };
    let samples = samples.samples;
    if !tasks.is_empty() {
        print_tasks(&tasks, threads)?;
        outln!();
    }
    print_slices(&summary.slices)?;
    let peak = samples.iter().map(|s| s.rss).max().unwrap_or(0);
    let mut rates: Vec<f64> = summary
        .slices
        .iter()
        .map(SliceReport::positions_per_core_second)
        .collect();
    rates.sort_by(f64::total_cmp);
    outln!(
        "total: {} positions in {:.2} s = {:.1} M positions/s, {:.1} M per core ({} threads); per slice median {:.1} M positions/s per core; peak RSS {:.0} MiB",
        summary.solved_positions,
        summary.seconds,
        summary.solved_positions as f64 / summary.seconds / 1e6,
        summary.solved_positions as f64 / summary.seconds / 1e6 / threads as f64,
        threads,
        rates.get(rates.len() / 2).copied().unwrap_or(0.0) / 1e6,
        peak as f64 / (1 << 20) as f64
    );
    if let Some(dir) = prefix.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let csv = prefix.with_extension("csv");
    let mut text = String::from("seconds,positions_done,rss_bytes\n");
    for s in &samples {
        text.push_str(&format!("{:.3},{},{}\n", s.seconds, s.positions, s.rss));
    }
    retro_store::write_atomic(&csv, text.as_bytes())?;
    let slices_csv = sibling(prefix, "-slices.csv");
    let mut text = String::from(
        "stage,slice,positions,cpu_seconds,wall_seconds,positions_per_s_per_core,bytes_read,bytes_written,peak_rss_bytes\n",
    );
    for r in &summary.slices {
        text.push_str(&format!(
            "{},{},{},{:.3},{:.3},{:.0},{},{},{}\n",
            r.stage,
            r.name,
            r.positions,
            r.cost.cpu.as_secs_f64(),
            r.cost.wall.as_secs_f64(),
            r.positions_per_core_second(),
            r.cost.read,
            r.cost.written,
            r.cost.peak_rss
        ));
    }
    retro_store::write_atomic(&slices_csv, text.as_bytes())?;
    let png = prefix.with_extension("png");
    let driver = match run {
        ReportRun::InProcess(_) => "in-process",
        ReportRun::Cluster(_) => "cluster",
    };
    draw(
        &samples,
        &png,
        &format!("{label}, {driver}, {threads} threads"),
    )?;
    outln!(
        "samples: {}; slices: {}; plot: {}",
        csv.display(),
        slices_csv.display(),
        png.display()
    );
    Ok(())
}

/// `prefix` with `suffix` appended to its file name ("docs/run" → "docs/run-slices.csv").
fn sibling(prefix: &Path, suffix: &str) -> PathBuf {
    let mut name = prefix.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    prefix.with_file_name(name)
}

/// One line per slice, in the order they were solved.
fn print_slices(slices: &[SliceReport]) -> Result<()> {
    outln!(
        "{:<22} {:>13} {:>9} {:>9} {:>12} {:>10} {:>10} {:>9}",
        "slice",
        "positions",
        "cpu s",
        "wall s",
        "M pos/s/core",
        "read MB",
        "written MB",
        "peak MiB"
    );
    for r in slices {
        outln!(
            "{:<22} {:>13} {:>9.2} {:>9.2} {:>12.1} {:>10.1} {:>10.1} {:>9.0}",
            r.name,
            r.positions,
            r.cost.cpu.as_secs_f64(),
            r.cost.wall.as_secs_f64(),
            r.positions_per_core_second() / 1e6,
            r.cost.read as f64 / 1e6,
            r.cost.written as f64 / 1e6,
            r.cost.peak_rss as f64 / (1 << 20) as f64
        );
    }
    Ok(())
}

/// One line per task.
fn print_tasks(tasks: &[TaskTimesRow], threads: usize) -> Result<()> {
    outln!(
        "{:<10} {:>13} {:>9} {:>9} {:>8} {:>8} {:>12} {:>10} {:>10}",
        "stage",
        "positions",
        "wall s",
        "compute s",
        "read s",
        "write s",
        "M pos/s/core",
        "read MB",
        "written MB"
    );
    for t in tasks {
        let wall = t.completed_ms.saturating_sub(t.assigned_ms) as f64 / 1e3;
        let compute = t.compute_ms as f64 / 1e3;
        // Tasks share the pool: a task's compute time is spent on up to `threads` cores.
        let per_core = if compute > 0.0 {
            t.positions as f64 / compute / threads as f64 / 1e6
        } else {
            0.0
        };
        outln!(
            "{:<10} {:>13} {:>9.2} {:>9.2} {:>8.2} {:>8.2} {:>12.1} {:>10.1} {:>10.1}",
            t.name,
            t.positions,
            wall,
            compute,
            t.read_ms as f64 / 1e3,
            t.write_ms as f64 / 1e3,
            per_core,
            t.bytes_read as f64 / 1e6,
            t.bytes_written as f64 / 1e6
        );
    }
    Ok(())
}

/// Throughput and resident memory against time, one panel each. Throughput is averaged over
/// windows of 1/60 of the run (at least 1 s): the kernel reports progress once per ply, and a
/// ply of a large stage takes seconds.
fn draw(samples: &[Sample], path: &Path, title: &str) -> Result<()> {
    static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
    // Registering twice (a second report in one process) is harmless.
    let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    let end = samples.last().map_or(1.0, |s| s.seconds).max(1.0);
    let window = (end / 60.0).max(1.0);
    let mut rate = Vec::new();
    let mut j = 0;
    for (i, s) in samples.iter().enumerate() {
        while samples[j].seconds < s.seconds - window {
            j += 1;
        }
        if i > j {
            let dt = s.seconds - samples[j].seconds;
            rate.push((
                s.seconds,
                (s.positions - samples[j].positions) as f64 / dt / 1e6,
            ));
        }
    }
    let top_rate = rate.iter().map(|r| r.1).fold(1.0, f64::max) * 1.1;
    let top_rss = samples.iter().map(|s| s.rss).max().unwrap_or(1) as f64 / (1 << 20) as f64 * 1.1;
    let root = BitMapBackend::new(path, (1000, 700)).into_drawing_area();
    let draw_err =
        |e: &dyn std::fmt::Display| anyhow::anyhow!("cannot draw {}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| draw_err(&e))?;
    let root = root
        .titled(title, ("sans-serif", 24))
        .map_err(|e| draw_err(&e))?;
    let (upper, lower) = root.split_vertically(330);
    let mut chart = ChartBuilder::on(&upper)
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..end, 0.0..top_rate)
        .map_err(|e| draw_err(&e))?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("M positions/s")
        .draw()
        .map_err(|e| draw_err(&e))?;
    chart
        .draw_series(LineSeries::new(rate, &BLUE))
        .map_err(|e| draw_err(&e))?;
    let mut chart = ChartBuilder::on(&lower)
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..end, 0.0..top_rss)
        .map_err(|e| draw_err(&e))?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("resident MiB")
        .draw()
        .map_err(|e| draw_err(&e))?;
    chart
        .draw_series(LineSeries::new(
            samples
                .iter()
                .map(|s| (s.seconds, s.rss as f64 / (1 << 20) as f64)),
            &RED,
        ))
        .map_err(|e| draw_err(&e))?;
    root.present().map_err(|e| draw_err(&e))?;
    Ok(())
}
