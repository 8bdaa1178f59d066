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

/// An error and its causes in one line, each cause said once.
///
/// `anyhow`'s `{:#}` joins every link of the chain with ": ", but many errors (tonic's
/// transport errors, I/O errors wrapped with context that already quotes them) repeat their
/// source in their own message, which gave lines like `tcp connect error: tcp connect error:
/// Connection refused`. Here a link already said is skipped, and a link that extends the last
/// one replaces it.
pub fn error_text(error: &anyhow::Error) -> String {
    let mut links: Vec<String> = Vec::new();
    for link in error.chain() {
        let link = link.to_string();
        if links.iter().any(|said| said.contains(&link)) {
            continue;
        }
        match links.last_mut() {
            Some(last) if link.starts_with(last.as_str()) => *last = link,
            _ => links.push(link),
        }
    }
    links.join(": ")
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[test]
    fn each_cause_is_said_once() {
        let io = std::io::Error::other("No space left on device");
        let e = anyhow::Error::new(io).context("cannot write t.tbl: No space left on device");
        assert_eq!(
            error_text(&e),
            "cannot write t.tbl: No space left on device"
        );
        let e = anyhow::anyhow!("Connection refused")
            .context("tcp connect error")
            .context("tcp connect error");
        assert_eq!(error_text(&e), "tcp connect error: Connection refused");
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_text(&e), "outer: inner");
    }
}
