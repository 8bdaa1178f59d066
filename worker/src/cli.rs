//! The `worker` command (also `retro worker`).

use crate::{run, WorkerOptions};
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use tracing::info;

/// The usage examples ending `worker --help` and `retro worker --help`.
pub const EXAMPLES: &str = "Examples:\n  worker --coordinator http://10.0.0.5:50051 --token-file token --memory-budget 20GiB\n  retro worker --coordinator http://127.0.0.1:50051 --threads 2";

/// Flags of a worker.
#[derive(Args, Debug, Clone)]
pub struct WorkerArgs {
    /// The coordinator's URL.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:50051")]
    pub coordinator: String,
    /// File holding the cluster token [default: $RETRO_TOKEN].
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Compute threads [default: all cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
    /// Memory this worker may use, e.g. 12GiB [default: the machine's RAM].
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub memory_budget: Option<u64>,
    /// Connect with TLS (an https:// URL), trusting this CA certificate (PEM).
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// Name in the coordinator's logs [default: host:pid].
    #[arg(long)]
    pub name: Option<String>,
    /// Directory for scratch files of stages solved out of core (on a local disk) [default:
    /// the job directory's scratch/, or the temporary directory for a job in an object
    /// store]. Tables downloaded from an object store are cached in its objects/ [default:
    /// ~/.cache/retro/objects].
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// Disk space for tables downloaded from an object store (jobs submitted with
    /// --storage s3://...), e.g. 20GiB; the least recently used go first [default: 4 GiB].
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes, default_value_t = retro_objects::DEFAULT_CACHE_BYTES, hide_default_value = true)]
    pub object_cache: u64,
    /// How often a stage task saves its state.
    #[command(flatten)]
    pub checkpoints: CheckpointArgs,
}

/// How often a stage's solver saves its state: the flags of every command that solves stages
/// (`retro solve`, `retro resume`, `worker`).
#[derive(Args, Debug, Clone)]
pub struct CheckpointArgs {
    /// Inside a stage, save the solver's state in the job directory's checkpoints/ whenever
    /// this many minutes have passed since the last save (at the next ply boundary), so that a
    /// killed solve, or the worker that takes over its task, resumes there and loses at most
    /// about that much work (0: after every ply; jobs in an object store take none).
    #[arg(long, value_name = "MINUTES", default_value_t = 10.0, value_parser = parse_minutes)]
    pub checkpoint_minutes: f64,
    /// Take no checkpoints inside stages: a killed stage starts over.
    #[arg(long, conflicts_with = "checkpoint_minutes")]
    pub no_checkpoints: bool,
}

impl CheckpointArgs {
    /// The checkpoint interval the flags ask for.
    pub fn checkpoint_every(&self) -> Option<std::time::Duration> {
        (!self.no_checkpoints)
            .then(|| std::time::Duration::from_secs_f64(60.0 * self.checkpoint_minutes))
    }
}

/// Parses a checkpoint interval in minutes: a finite number from 0 to 1,000,000.
pub fn parse_minutes(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(m) if m.is_finite() && (0.0..=1e6).contains(&m) => Ok(m),
        _ => Err(format!(
            "{text:?} is not a number of minutes from 0 to 1000000"
        )),
    }
}

/// Parses sizes like `512MiB`, `12GiB`, `1000000`.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("'{text}' is not a size like 512MiB or 12GiB: {e}"))
}

/// Total RAM of this machine (from /proc/meminfo), or 4 GiB if unknown.
pub fn machine_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(4 << 30, |kib| kib * 1024)
}

/// Runs a worker until Ctrl-C or SIGTERM.
pub async fn run_cli(args: WorkerArgs, open_game: retro_pipeline::OpenGame) -> Result<()> {
    let token = retro_proto::read_token(args.token_file.as_deref()).map_err(anyhow::Error::msg)?;
    let threads = match args.threads {
        Some(n) => n as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let name = args.name.unwrap_or_else(|| {
        let host = std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "localhost".into());
        format!("{}:{}", host.trim(), std::process::id())
    });
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let worker = tokio::spawn(run(
        WorkerOptions {
            coordinator: args.coordinator,
            token,
            name,
            threads,
            memory_budget: args.memory_budget.unwrap_or_else(machine_memory),
            tls_ca: match &args.tls_ca {
                Some(path) => Some(retro_pipeline::process::read_file(path)?),
                None => None,
            },
            checkpoint_every: args.checkpoints.checkpoint_every(),
            scratch: args.scratch,
            object_cache: args.object_cache,
            open_game,
        },
        stop,
    ));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot watch SIGTERM")?;
    let mut worker = worker;
    tokio::select! {
        r = &mut worker => return r.context("worker task")?,
        _ = tokio::signal::ctrl_c() => info!("interrupted; stopping after the current call"),
        _ = term.recv() => info!("terminated; stopping after the current call"),
    }
    let _ = stop_tx.send(true);
    worker.await.context("worker task")?
}
