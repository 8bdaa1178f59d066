//! The progress bar of long commands: stages, plies, positions/s and ETA.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use retro_proto as pb;

/// A progress bar on stderr (hidden when `quiet`), counting positions.
pub fn positions_bar(quiet: bool) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr())
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {percent:>3}% {msg} {human_pos}/{human_len} positions, {per_sec}, ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar
}

/// Shows a job's status on `bar`: positions done, and the running stages with their plies (or
/// what the job waits for).
pub fn show(bar: &ProgressBar, status: &pb::JobStatus) {
    bar.set_length(status.positions);
    bar.set_position(status.positions_done);
    let running: Vec<String> = status
        .tasks
        .iter()
        .filter(|t| t.state == "running")
        .map(|t| format!("{} ply {}", t.name, t.ply))
        .collect();
    bar.set_message(if running.is_empty() && !status.note.is_empty() {
        status.note.clone()
    } else {
        running.join(", ")
    });
}
