//! `worker --coordinator URL`: runs a retro worker.

use clap::Parser;
use retro_pipeline::process::{init_logging, LogFormat};
use retro_worker::cli::{run_cli, WorkerArgs};
use std::process::ExitCode;

/// Run a retro worker: it joins a coordinator, solves the tasks it is given with the
/// retrograde kernel, and writes result shards into the job directory they share.
#[derive(Parser)]
#[command(name = "worker", version, after_help = retro_worker::cli::EXAMPLES)]
struct Cli {
    #[command(flatten)]
    args: WorkerArgs,
    /// Log format.
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_format, "info");
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run_cli(cli.args, retro_games::open)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", retro_pipeline::process::error_text(&e));
            ExitCode::FAILURE
        }
    }
}
