//! `retro bench`: repeated timed solves from scratch, with medians and peak memory.

use crate::solve::{run, SolveOptions};
use anyhow::{Context, Result};
use retro_musashi::Musashi;
use std::path::Path;

/// Peak resident set size of this process so far, in bytes (Linux `VmHWM`).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Solves `make_game()` `runs` times into fresh directories under `scratch`, printing each
/// run and the median.
pub fn bench(
    make_game: impl Fn() -> Musashi,
    runs: usize,
    threads: usize,
    level: i32,
    scratch: &Path,
) -> Result<()> {
    let mut times = Vec::new();
    let mut positions = 0;
    for i in 0..runs {
        let out = scratch.join(format!("bench-run-{i}"));
        if out.exists() {
            std::fs::remove_dir_all(&out)
                .with_context(|| format!("cannot clear {}", out.display()))?;
        }
        let opts = SolveOptions {
            out: out.clone(),
            threads,
            level,
            quiet: true,
        };
        let summary = run(make_game(), &opts)?;
        let bytes: u64 = std::fs::read_dir(&out)?
            .filter_map(|e| e.ok()?.metadata().ok())
            .map(|m| m.len())
            .sum();
        outln!(
            "run {}: {:.2} s wall, {:.1} M positions/s, tables {:.1} MiB ({:.2} bits/position)",
            i + 1,
            summary.seconds,
            summary.solved_positions as f64 / summary.seconds / 1e6,
            bytes as f64 / (1 << 20) as f64,
            bytes as f64 * 8.0 / summary.solved_positions as f64
        );
        positions = summary.solved_positions;
        times.push(summary.seconds);
        std::fs::remove_dir_all(&out).ok();
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    outln!(
        "median of {runs}: {median:.2} s wall ({threads} threads), {:.1} M positions/s, {} positions (array slots, both sides), peak RSS {:.0} MiB",
        positions as f64 / median / 1e6,
        positions,
        peak_rss_bytes().unwrap_or(0) as f64 / (1 << 20) as f64
    );
    Ok(())
}
