//! `coordinator --listen ADDR --data DIR`: runs a retro coordinator.

use clap::Parser;
use retro_coordinator::cli::{run, CoordinatorArgs};
use retro_pipeline::process::{init_logging, LogFormat};
use std::process::ExitCode;

/// Run a retro coordinator: it plans solve jobs, hands their tasks to workers and merges the
/// results into final tables. Workers join with `worker --coordinator http://ADDR`; users talk
/// to it with `retro submit|status|cancel|jobs`.
#[derive(Parser)]
#[command(name = "coordinator", version, after_help = retro_coordinator::cli::EXAMPLES)]
struct Cli {
    #[command(flatten)]
    args: CoordinatorArgs,
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
    match runtime.block_on(run(cli.args, retro_games::open)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", retro_pipeline::process::error_text(&e));
            ExitCode::FAILURE
        }
    }
}
