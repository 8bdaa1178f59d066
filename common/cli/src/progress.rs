//! The progress display of long commands: one bar with the stages running and their plies, the
//! share of the work done, and (once it means something) the time left.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use retro_proto as pb;
use std::fmt::Write;
use std::time::Duration;

/// Seconds of solving before the time left is shown: the first stages are the smallest, so an
/// estimate from them would be far too short or (while workers start) far too long.
const ETA_AFTER: Duration = Duration::from_secs(5);

/// A progress bar on stderr (hidden when `quiet`), its length the positions to solve.
pub fn positions_bar(quiet: bool) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr())
    };
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

/// "ETA 3m 20s" once the estimate rests on enough of the solve, else nothing.
fn time_left(state: &ProgressState, w: &mut dyn Write) {
    if state.elapsed() >= ETA_AFTER && state.pos() > 0 && state.pos() < state.len().unwrap_or(0) {
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
