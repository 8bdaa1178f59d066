//! What the commands of a cluster share when they start: how they log, and how they read the
//! files their flags name.
//!
//! The `coordinator`, the `worker` and `retro` are separate binaries, but an operator reading
//! their logs side by side (or a log shipper parsing them) needs one format and one filter
//! variable; so they all set up logging here. Keeping this in the shared pipeline crate (and
//! not in the coordinator) is what lets the worker build without the coordinator.

use anyhow::{Context, Result};
use std::path::Path;

/// How log lines look (the `--log-format` flag of every command).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line (with span fields: job, stage, task), for log shippers.
    Json,
}

/// The environment variable that overrides the log filter (`RETRO_LOG=debug`,
/// `RETRO_LOG=retro_coordinator=debug,info`).
pub const LOG_FILTER_VAR: &str = "RETRO_LOG";

/// Sets up tracing on stderr in `format`. The filter is `RETRO_LOG` if set, else
/// `default_filter` (`"info"` for the daemons; quieter for commands that print results).
pub fn init_logging(format: LogFormat, default_filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env(LOG_FILTER_VAR)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter));
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

/// Reads a whole file named by a flag (a TLS certificate or key), naming it on failure so that
/// the operator sees which flag was wrong.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}
