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
    init(format, default_filter, false);
}

/// Sets up tracing for a command that writes a job directory (`retro solve`, `retro resume`):
/// every line at `info` and above goes to the job's log file ([`JOB_LOG`], opened with
/// [`log_to_job_file`] once the directory is known to be the job's), and stderr shows only
/// what the person at the terminal must see (warnings and errors; `RETRO_LOG` or `verbose`
/// bring the rest back), so that the progress display stays one display.
pub fn init_job_logging(format: LogFormat, verbose: bool) {
    init(format, if verbose { "info" } else { "warn" }, true);
}

/// The log file of a job directory.
pub const JOB_LOG: &str = "retro.log";

/// Where the job log's lines go once it is open (lines before that reach stderr only).
static JOB_LOG_FILE: std::sync::Mutex<Option<std::fs::File>> = std::sync::Mutex::new(None);

/// Appends this process's log lines to `dir/retro.log` from now on.
pub fn log_to_job_file(dir: &Path) -> Result<()> {
    let path = dir.join(JOB_LOG);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open the log file {}", path.display()))?;
    *JOB_LOG_FILE.lock().unwrap_or_else(|p| p.into_inner()) = Some(file);
    Ok(())
}

/// A writer into the job log file (nothing while it is not open).
struct JobLogWriter;

impl std::io::Write for JobLogWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match JOB_LOG_FILE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            Some(file) => file.write(bytes),
            None => Ok(bytes.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match JOB_LOG_FILE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

/// Something drawn on stderr that log lines must not tear, such as a progress bar: each line
/// is written while the display is put away (and drawn again after it).
pub trait StderrDisplay: Send + Sync {
    /// Clears the display, runs `write`, and draws the display again.
    fn suspend(&self, write: &mut dyn FnMut());
}

/// The display log lines on stderr go around, while there is one.
static STDERR_DISPLAY: std::sync::RwLock<Option<std::sync::Arc<dyn StderrDisplay>>> =
    std::sync::RwLock::new(None);

/// From now on (`Some`) log lines on stderr are written around `display`; `None` when it is
/// gone.
pub fn set_stderr_display(display: Option<std::sync::Arc<dyn StderrDisplay>>) {
    *STDERR_DISPLAY.write().unwrap_or_else(|p| p.into_inner()) = display;
}

/// A writer to stderr that puts the live display (if any) away for each log line: the
/// formatting layers hand it one whole line per write.
struct StderrAroundDisplay;

impl std::io::Write for StderrAroundDisplay {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let display = STDERR_DISPLAY
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match display {
            Some(display) => {
                let mut result = Ok(());
                display.suspend(&mut || result = std::io::stderr().lock().write_all(bytes));
                result
            }
            None => std::io::stderr().lock().write_all(bytes),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// The subscriber: stderr with `RETRO_LOG` or `default_filter`, and (`job_file`) the job log
/// at `info`.
fn init(format: LogFormat, default_filter: &str, job_file: bool) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{fmt, EnvFilter, Layer, Registry};
    type Boxed = Box<dyn Layer<Registry> + Send + Sync>;
    let filter =
        EnvFilter::try_from_env(LOG_FILTER_VAR).unwrap_or_else(|_| EnvFilter::new(default_filter));
    // Colour codes only for a person at a terminal, never into a file or a pipe.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let stderr: Boxed = match format {
        LogFormat::Text => fmt::layer()
            .with_writer(|| StderrAroundDisplay)
            .with_ansi(ansi)
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => fmt::layer()
            .json()
            .with_writer(|| StderrAroundDisplay)
            .with_filter(filter)
            .boxed(),
    };
    let mut layers = vec![stderr];
    if job_file {
        let layer = fmt::layer().with_writer(|| JobLogWriter).with_ansi(false);
        layers.push(match format {
            LogFormat::Text => layer.with_filter(EnvFilter::new("info")).boxed(),
            LogFormat::Json => layer.json().with_filter(EnvFilter::new("info")).boxed(),
        });
    }
    tracing_subscriber::registry().with(layers).init();
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
