//! The progress display of long commands: one bar with the stages running and their plies, the
//! share of the work done, and (once it means something) the time left.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use retro_pipeline::process::{set_stderr_display, StderrDisplay};
use retro_proto as pb;
use std::fmt::Write;
use std::sync::Arc;
use std::time::Duration;

/// Seconds of solving before the time left is shown: the first stages are the smallest, so an
/// estimate from them would be far too short or (while workers start) far too long.
const ETA_AFTER: Duration = Duration::from_secs(5);

/// A progress bar on stderr (hidden when `quiet`), its length the positions to solve. Log
/// lines on stderr are written around it (never leaving copies of it behind) until
/// [`finish`].
pub fn positions_bar(quiet: bool) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr())
    };
    if !quiet {
        set_stderr_display(Some(Arc::new(Around(bar.clone()))));
    }
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {percent:>3}% {left}  {wide_msg}",
        )
        .expect("valid template")
        .with_key("left", time_left)
        .progress_chars("=> "),
    );
    bar
}

/// Removes the bar, and log lines go straight to stderr again.
pub fn finish(bar: &ProgressBar) {
    set_stderr_display(None);
    bar.finish_and_clear();
}

/// The bar as the display that log lines on stderr go around.
struct Around(ProgressBar);

impl StderrDisplay for Around {
    fn suspend(&self, write: &mut dyn FnMut()) {
        self.0.suspend(write)
    }
}

/// "ETA 3 min 20 s" once the estimate rests on enough of the solve (and while some time is
/// left: never "ETA 0 s"), else nothing.
fn time_left(state: &ProgressState, w: &mut dyn Write) {
    if state.elapsed() >= ETA_AFTER
        && state.pos() > 0
        && state.pos() < state.len().unwrap_or(0)
        && state.eta().as_secs_f64() >= 0.5
    {
        let _ = write!(
            w,
            "ETA {}",
            crate::output::duration(state.eta().as_secs_f64())
        );
    }
}

/// Shows a job's status on `bar`: positions done, and the running stages with their plies (or
/// what the job waits for). `own_workers`: the workers are this process's own, so "no worker
/// connected" only means they are starting.
pub fn show(bar: &ProgressBar, status: &pb::JobStatus, own_workers: bool) {
    bar.set_length(status.positions);
    bar.set_position(status.positions_done);
    let running: Vec<String> = status
        .tasks
        .iter()
        .filter(|t| t.state == "running")
        .map(|t| format!("{} ply {}", t.name, t.ply))
        .collect();
    bar.set_message(if !running.is_empty() {
        running.join(", ")
    } else if own_workers && status.live_workers == 0 {
        "starting workers".to_string()
    } else {
        status.note.clone()
    });
}
