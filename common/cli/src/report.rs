//! `retro bench --report PREFIX`: where a cluster solve's time, I/O and memory go.
//!
//! One solve through the embedded coordinator and workers is sampled every 50 ms (positions
//! done, resident memory); afterwards every task's records are read from the job database. It
//! prints one line per task (a stage: one brown count, all its black points) with positions/s,
//! positions/s per core, bytes read and written, and writes `PREFIX.csv` (the samples) and
//! `PREFIX.png` (throughput and memory over the run).

use crate::embedded::{run_observed, EmbeddedOptions};
use anyhow::{Context, Result};
use plotters::prelude::*;
use retro_coordinator::db::{Db, TaskTimesRow};
use retro_musashi::Musashi;
use std::path::Path;
use std::time::Instant;

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

/// Resident set size of this process now (Linux `VmRSS`).
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// Solves `game` into `out` with `opts`, then prints and draws the report under `prefix`.
pub fn report(game: Musashi, opts: &EmbeddedOptions, prefix: &Path) -> Result<()> {
    let started = Instant::now();
    let mut samples = vec![Sample {
        seconds: 0.0,
        positions: 0,
        rss: rss_bytes(),
    }];
    let summary = run_observed(Some(game), opts, &mut |status| {
        samples.push(Sample {
            seconds: started.elapsed().as_secs_f64(),
            positions: status.positions_done,
            rss: rss_bytes(),
        });
    })?;
    let db = Db::open(&opts.out)?;
    let job = db
        .read()
        .jobs()?
        .into_iter()
        .find(|j| j.dir == ".")
        .context("the job database has no embedded job")?;
    let tasks = db.read().task_times(job.id)?;
    print_tasks(&tasks, opts.threads)?;
    let peak = samples.iter().map(|s| s.rss).max().unwrap_or(0);
    outln!(
        "total: {} positions in {:.2} s = {:.1} M positions/s, {:.1} M per core ({} threads); peak RSS {:.0} MiB",
        summary.solved_positions,
        summary.seconds,
        summary.solved_positions as f64 / summary.seconds / 1e6,
        summary.solved_positions as f64 / summary.seconds / 1e6 / opts.threads as f64,
        opts.threads,
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
    let png = prefix.with_extension("png");
    draw(
        &samples,
        &png,
        &format!("{} ({} threads)", job_label(&job.definition), opts.threads),
    )?;
    outln!("samples: {}; plot: {}", csv.display(), png.display());
    Ok(())
}

fn job_label(definition: &serde_json::Value) -> String {
    format!(
        "{}, max browns {}",
        definition["board"].as_str().unwrap_or("?"),
        definition["max_browns"]
    )
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
