//! `retro bench`: repeated timed solves from scratch, with medians and peak memory.

use crate::embedded::{self, EmbeddedOptions};
use crate::solve::{self as in_process, SolveOptions, SolveSummary};
use anyhow::{Context, Result};
use clap::ValueEnum;
use retro_engine::meter::peak_resident_bytes;
use retro_pipeline::JobGame;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Which drivers a benchmark times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchMode {
    /// The single-process driver (no coordinator, no RPC).
    InProcess,
    /// A coordinator and two workers on loopback, as `retro solve` runs by default.
    Cluster,
    /// Both, interleaved run by run, with the cluster's overhead.
    Both,
}

/// Solves `make_game()` `runs` times per driver into fresh directories under `scratch`,
/// printing each run and the medians (and the cluster's overhead when both run).
pub fn bench(
    make_game: impl Fn() -> Arc<dyn JobGame>,
    runs: usize,
    threads: usize,
    level: i32,
    scratch: &Path,
    mode: BenchMode,
    split_above: u64,
) -> Result<()> {
    let drivers: Vec<&str> = match mode {
        BenchMode::InProcess => vec!["in-process"],
        BenchMode::Cluster => vec!["cluster"],
        BenchMode::Both => vec!["in-process", "cluster"],
    };
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); drivers.len()];
    let mut positions = 0;
    for i in 0..runs {
        for (d, driver) in drivers.iter().enumerate() {
            let out = scratch.join(format!("bench-{driver}-{i}"));
            if out.exists() {
                std::fs::remove_dir_all(&out)
                    .with_context(|| format!("cannot clear {}", out.display()))?;
            }
            let summary: SolveSummary = if *driver == "cluster" {
                embedded::run(
                    Some(make_game()),
                    &EmbeddedOptions {
                        out: out.clone(),
                        threads,
                        workers: 2,
                        level,
                        quiet: true,
                        lease: Duration::from_secs(10),
                        memory_budget: retro_worker::cli::machine_memory(),
                        split_above,
                        storage: String::new(),
                        checkpoint_every: None,
                    },
                )?
            } else {
                let opts = SolveOptions {
                    out: out.clone(),
                    threads,
                    level,
                    quiet: true,
                    memory_budget: retro_worker::cli::machine_memory(),
                    out_of_core: false,
                    checkpoint_every: None,
                };
                in_process::run(&*make_game(), &opts)?
            };
            let bytes: u64 = std::fs::read_dir(&out)?
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".tbl"))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum();
            outln!(
                "run {} {driver:>10}: {:.2} s wall, {:.1} M positions/s, tables {:.1} MiB ({:.2} bits/position)",
                i + 1,
                summary.seconds,
                summary.solved_positions as f64 / summary.seconds / 1e6,
                bytes as f64 / (1 << 20) as f64,
                bytes as f64 * 8.0 / summary.solved_positions as f64
            );
            positions = summary.solved_positions;
            times[d].push(summary.seconds);
            std::fs::remove_dir_all(&out).ok();
        }
    }
    let mut medians = Vec::new();
    for (d, driver) in drivers.iter().enumerate() {
        let t = &mut times[d];
        t.sort_by(f64::total_cmp);
        let median = t[t.len() / 2];
        medians.push(median);
        outln!(
            "median of {runs} {driver}: {median:.2} s wall ({threads} threads), {:.1} M positions/s, {} positions (array slots, both sides)",
            positions as f64 / median / 1e6,
            positions,
        );
    }
    if medians.len() == 2 {
        outln!(
            "cluster overhead: {:+.1}% wall time over the in-process driver",
            100.0 * (medians[1] / medians[0] - 1.0)
        );
    }
    outln!(
        "peak RSS {:.0} MiB",
        peak_resident_bytes().unwrap_or(0) as f64 / (1 << 20) as f64
    );
    Ok(())
}
