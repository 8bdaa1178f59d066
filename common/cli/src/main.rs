//! `retro`: strongly solve board games by retrograde analysis.
//!
//! Errors are printed as one line (`error: ...`) with a non-zero exit status.

#[macro_use]
mod output;
mod bao_search;
mod bench;
mod client;
mod counts;
mod embedded;
mod extremes;
mod game_choice;
mod play;
mod probe;
mod progress;
mod report;
mod serve;
mod solve;
mod tables;
mod verify;

use anyhow::{bail, Result};
use clap::{Args, Parser, Subcommand};
use game_choice::TargetArgs;
use retro_pipeline::process::{init_job_logging, init_logging, LogFormat};
use std::path::PathBuf;
use std::process::ExitCode;

/// Strongly solve board games by retrograde analysis.
///
/// `retro solve` computes, for every position of a game, its exact value, and writes one
/// compressed table per slice into an output directory. The other commands read such a
/// directory: `counts` prints the count table, `probe` looks positions up, `verify` checks the
/// tables against published data and against the rules.
#[derive(Parser)]
#[command(name = "retro", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Log format (on stderr): human-readable lines, or one JSON object per line.
    #[arg(long, value_enum, default_value = "text", global = true)]
    log_format: LogFormat,
    /// Show every log line on stderr as well (a solve otherwise keeps its task-level lines in
    /// `retro.log` in its directory when stderr is a terminal; `RETRO_LOG=LEVEL` also works).
    #[arg(short, long, global = true)]
    verbose: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Solve a game and write its tables to an output directory (resumes an interrupted solve).
    ///
    /// Runs a coordinator and workers in this process on loopback (the cluster pipeline on
    /// one machine); `--in-process` solves without them.
    #[command(
        after_help = "Examples:\n  retro solve --out out/board25                      (BOARD25, the embedded cluster)\n  retro solve --game musashi33 --max-browns 8 --out out/b33\n  retro solve --in-process --memory-budget 8GiB --out out/board25"
    )]
    Solve(SolveArgs),
    /// Continue an interrupted `retro solve` in its output directory.
    #[command(after_help = "Example: retro resume out/board25")]
    Resume(ResumeArgs),
    /// Run a coordinator (same as the `coordinator` command).
    #[command(after_help = retro_coordinator::cli::EXAMPLES)]
    Coordinator(retro_coordinator::cli::CoordinatorArgs),
    /// Run a worker (same as the `worker` command).
    #[command(after_help = retro_worker::cli::EXAMPLES)]
    Worker(retro_worker::cli::WorkerArgs),
    /// Submit a job to a running coordinator.
    #[command(
        after_help = "Example: retro submit --game musashi31 --wait --coordinator http://10.0.0.5:50051 --token-file token"
    )]
    Submit(SubmitArgs),
    /// Show a job's status: stages done, current plies, workers, throughput, ETA.
    #[command(
        after_help = "Examples:\n  retro status 3 --all --coordinator http://10.0.0.5:50051 --token-file token\n  retro status 3 --wait   (follow it to its end; non-zero exit unless it ends done)"
    )]
    Status(StatusArgs),
    /// Cancel a job.
    #[command(after_help = "Example: retro cancel 3 --token-file token")]
    Cancel(JobArgs),
    /// List the coordinator's jobs.
    #[command(
        after_help = "Example: retro jobs --coordinator http://10.0.0.5:50051 --token-file token"
    )]
    Jobs(ConnectionArgs),
    /// Print the summary table of a solved directory (Sixteen Musashi: the published count table).
    #[command(after_help = "Example: retro counts --tables out/board25")]
    Counts {
        /// The solved directory to read (`--out` is accepted too).
        #[arg(long = "tables", alias = "out", value_name = "DIR")]
        tables: PathBuf,
    },
    /// Print the analysis a game's paper reports, from its solved tables, as Markdown
    /// (SIMPEI: start positions and proof trees, most moves, longest wins, zugzwang, simple
    /// cycles, one-move problems).
    #[command(after_help = "Example: retro report --tables out/simpei > analysis.md")]
    Report {
        /// The solved directory to read (`--out` is accepted too).
        #[arg(long = "tables", alias = "out", value_name = "DIR")]
        tables: PathBuf,
        /// Also size proof trees whose lines may run this many plies past the winning
        /// distance (in steps of 2).
        #[arg(long, default_value_t = 2, value_name = "PLIES")]
        slack: u32,
    },
    /// The mancala's endless moves and repetitions reachable from the start, as Markdown:
    /// the study's loop examples checked, positions reachable per stone count, every endless
    /// move with a shortest line to it (counted by period and shift), every set of positions
    /// that can repeat with a line and a cycle.
    #[command(after_help = "Example: retro loops --game mancala4 > loops.md")]
    Loops {
        #[command(flatten)]
        target: TargetArgs,
        /// How many endless moves and repetitions to list in full.
        #[arg(long, default_value_t = 20, value_name = "N")]
        list: usize,
        /// Stop past this many reachable positions (the search keeps them all in memory,
        /// about 100 bytes each; with --layers, 8 bytes each and as much again to sort a
        /// round) and report the positions within the distance (the layers) it finished.
        #[arg(long, default_value_t = 100_000_000, value_name = "N")]
        limit: u64,
        /// Only count the positions reachable from the start, layer by layer (stones on the
        /// board, from the start's down): each layer is closed under the moves that capture
        /// nothing before the captures from it are followed. Lighter than the full analysis,
        /// so it goes further; progress on standard error.
        #[arg(long)]
        layers: bool,
    },
    /// Look up positions: value, moves and principal variation, or a whole file of positions.
    #[command(
        after_help = "Examples:\n  retro probe --tables out/board25 ooooo,o...o,o.X.o,o...o,ooooo brown\n  retro probe --tables out/board25 --file positions.txt   (or --file - for standard input)"
    )]
    Probe(ProbeArgs),
    /// List a solved table's interesting positions (longest wins, most pieces in a win) with
    /// viewer links; recorded in DIR/extremes.json for `retro serve`'s list.
    #[command(
        after_help = "Examples:\n  retro extremes --out out/board25\n  retro extremes --out out/board25 --json --limit 1000"
    )]
    Extremes(ExtremesArgs),
    /// Serve solved directories over HTTP: a JSON probe API and a web viewer (loopback by
    /// default).
    #[command(
        after_help = "Examples:\n  retro serve --out out/board25 --out out/board33\n  then open http://127.0.0.1:8080/?size=25&turn=brown&init=ooooo,o...o,o.X.o,o...o,ooooo\n  curl 'http://127.0.0.1:8080/api/probe?size=25&turn=brown&init=ooooo,o...o,o.X.o,o...o,ooooo'"
    )]
    Serve(ServeArgs),
    /// Measure the probe API on loopback: cold and warm latency percentiles, throughput.
    #[command(after_help = "Example: retro bench-serve --out out/board25 --seconds 5")]
    BenchServe(BenchServeArgs),
    /// Check tables against a count table, a values file, and the defining recurrence.
    #[command(
        after_help = "Example: retro verify --tables out/board25 --counts ../shared/reference/board25-counts.csv --recurrence 1000"
    )]
    Verify(VerifyArgs),
    /// Time full solves from scratch: per-run and median wall time, positions/s, peak RSS.
    #[command(
        after_help = "Examples:\n  retro bench --runs 5 --mode both\n  retro bench --game musashi33 --max-browns 9 --report target/b33"
    )]
    Bench(BenchArgs),
    /// Referee a game between two people at the terminal (Bao la kujifunza: `retro play bao`).
    #[command(
        after_help = "Example: retro play bao   (then moves like 'f3 cw'; 'help' lists the commands)"
    )]
    Play(play::PlayArgs),
    /// Bao la kujifunza from the start, searched: the shortest line to an endless move and
    /// the fullest hole (breadth-first, then random games), as Markdown.
    #[command(after_help = "Example: retro bao-search --depth 6 --games 10000 > search.md")]
    BaoSearch(bao_search::BaoSearchArgs),
}

#[derive(Args)]
struct BenchArgs {
    /// The game, board file and brown limit to solve, as for `solve`.
    #[command(flatten)]
    target: TargetArgs,
    /// How many solves to time.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Worker threads [default: all cores].
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// zstd compression level of the tables.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(i32).range(1..=19))]
    level: i32,
    /// Which driver to time.
    #[arg(long, value_enum, default_value = "both")]
    mode: bench::BenchMode,
    /// Instead of timing, run one solve (--mode in-process, or else the cluster) and report
    /// per slice positions/s per core, bytes read and written and peak RSS (and per task
    /// through the cluster); write PREFIX.csv (samples), PREFIX-slices.csv and PREFIX.png.
    #[arg(long, value_name = "PREFIX")]
    report: Option<PathBuf>,
    /// Keep the reported solve's tables in SCRATCH/report-run (e.g. to verify them).
    #[arg(long, requires = "report")]
    keep: bool,
    /// Memory the reported solve may use [default: the machine's RAM] (with --report).
    #[arg(long, value_name = "BYTES", value_parser = retro_worker::cli::parse_bytes, requires = "report")]
    memory_budget: Option<u64>,
    /// Where the scratch output directories go (removed after each run).
    #[arg(long, value_name = "DIR", default_value = "target/bench")]
    scratch: PathBuf,
    /// Split stages of at least this many positions (both sides to move) into one task per
    /// slice and ply (supersteps), shared by all workers (cluster runs); 0 splits every stage.
    #[arg(long, value_name = "POSITIONS", default_value_t = retro_coordinator::core::DEFAULT_SPLIT_ABOVE)]
    split_above: u64,
    #[command(flatten)]
    checkpoints: retro_worker::cli::CheckpointArgs,
}

/// On Ctrl-C, says before exiting that the finished work is kept and how to continue (every
/// file is written under a temporary name and renamed, so stopping at any moment is safe).
fn tell_how_to_resume_on_interrupt(dir: &std::path::Path, in_process: bool) {
    let dir = dir.display().to_string();
    let how = if in_process {
        "run the same command again to continue".to_string()
    } else {
        format!("run the same command again, or `retro resume {dir}`, to continue")
    };
    // Without a handler Ctrl-C still stops the solve safely, only without the hint.
    let _ = ctrlc::set_handler(move || {
        eprintln!("\ninterrupted: the finished stages are kept in {dir}; {how}");
        std::process::exit(130);
    });
}

/// Prints what a solve did, in the terms of the published tables (positions up to symmetry,
/// both sides to move), and the start position's value.
fn print_summary(summary: &solve::SolveSummary, out: &std::path::Path) -> Result<()> {
    let manifest = tables::load_manifest(out)?;
    let game = tables::Tables::open(out)?;
    let positions = retro_pipeline::job_dir::published_positions(game.game(), &manifest.slices);
    let peak = retro_engine::meter::peak_resident_bytes().unwrap_or(0) >> 20;
    let time = output::duration_precise(summary.seconds);
    if summary.solved_positions == 0 {
        outln!(
            "Already solved: {} holds all {} positions; nothing to do.",
            out.display(),
            output::thousands(positions)
        );
    } else if summary.solved_positions == summary.total_positions {
        outln!(
            "Solved {} positions into {} in {time} ({} positions/s), peak RSS {peak} MiB.",
            output::thousands(positions),
            out.display(),
            output::rate(positions as f64 / summary.seconds.max(1e-9)),
        );
    } else {
        // This run's share of the work, and so (about) of the positions.
        let share = summary.solved_positions as f64 / summary.total_positions.max(1) as f64;
        outln!(
            "Solved {} positions into {}: {:.0}% of the work in this run ({time}, {} positions/s), the rest was already done; peak RSS {peak} MiB.",
            output::thousands(positions),
            out.display(),
            100.0 * share,
            output::rate(share * positions as f64 / summary.seconds.max(1e-9)),
        );
    }
    outln!("{}", summary.start);
    Ok(())
}

/// The async runtime of the client, coordinator and worker commands.
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Runtime::new()
        .map_err(|e| anyhow::anyhow!("cannot start the async runtime: {e}"))
}

/// The embedded worker count: the flag, or 2 when there are several threads (Musashi's even
/// and odd brown counts are independent chains, so two tasks are ready at a time).
fn workers(flag: Option<u64>, threads: usize) -> usize {
    match flag {
        Some(n) => n as usize,
        None => threads.clamp(1, 2),
    }
}

/// The thread count: the flag, or every core.
fn threads(flag: Option<usize>) -> Result<usize> {
    match flag {
        Some(0) => bail!("--threads must be at least 1"),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

#[derive(Args)]
struct SolveArgs {
    /// The game, board file and brown limit to solve.
    #[command(flatten)]
    target: TargetArgs,
    /// Worker threads [default: all cores].
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// zstd compression level of the tables (1 = fastest, 19 = smallest).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(i32).range(1..=19))]
    level: i32,
    /// Output directory (created if missing; an existing solve of the same game is resumed).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Workers started in this process [default: 2 with several cores, else 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64))]
    workers: Option<u64>,
    /// Solve in this process without coordinator or workers (the reference driver).
    #[arg(long, conflicts_with = "workers")]
    in_process: bool,
    /// Milliseconds a worker may stay silent before its task goes to another.
    #[arg(long, value_name = "MS", default_value_t = 10_000, hide = true)]
    lease_ms: u64,
    /// Memory the solve may use, e.g. 12GiB [default: the machine's RAM]. Stages run side by
    /// side only when they fit together; a stage that does not fit in memory is solved out of
    /// core (lists on disk, slices paged through memory maps, in DIR/scratch); one that cannot
    /// fit even so is refused up front.
    #[arg(long, value_name = "BYTES", value_parser = retro_worker::cli::parse_bytes)]
    memory_budget: Option<u64>,
    /// Solve every stage out of core with the smallest window (one slice's arrays resident),
    /// even those that fit in memory (with --in-process; for tests and measurements).
    #[arg(long, requires = "in_process")]
    out_of_core: bool,
    #[command(flatten)]
    checkpoints: retro_worker::cli::CheckpointArgs,
    /// Split stages of at least this many positions (both sides to move) into one task per
    /// slice and ply (supersteps), shared by all workers; 0 splits every stage.
    #[arg(long, value_name = "POSITIONS", default_value_t = retro_coordinator::core::DEFAULT_SPLIT_ABOVE, conflicts_with = "in_process")]
    split_above: u64,
    /// Keep the tables in an object store, s3://bucket/prefix (credentials and endpoint from
    /// AWS_* variables); DIR keeps the job's database and manifest, through which the
    /// readers (probe, serve, verify) find the tables [default: the tables are in DIR].
    #[arg(long, value_name = "URL", conflicts_with = "in_process")]
    storage: Option<String>,
}

#[derive(Args)]
struct ResumeArgs {
    /// The output directory of the interrupted solve.
    dir: PathBuf,
    /// Worker threads [default: all cores].
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Workers [default: 2 with several cores, else 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64))]
    workers: Option<u64>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Memory the solve may use [default: the machine's RAM].
    #[arg(long, value_name = "BYTES", value_parser = retro_worker::cli::parse_bytes)]
    memory_budget: Option<u64>,
    /// Split stages of at least this many positions (both sides to move) into one task per
    /// slice and ply (supersteps), shared by all workers; 0 splits every stage.
    #[arg(long, value_name = "POSITIONS", default_value_t = retro_coordinator::core::DEFAULT_SPLIT_ABOVE)]
    split_above: u64,
    #[command(flatten)]
    checkpoints: retro_worker::cli::CheckpointArgs,
}

#[derive(Args)]
struct ConnectionArgs {
    #[command(flatten)]
    connection: client::Connection,
}

#[derive(Args)]
struct JobArgs {
    /// The job id.
    job: u64,
    #[command(flatten)]
    connection: client::Connection,
}

#[derive(Args)]
struct StatusArgs {
    /// The job id.
    job: u64,
    /// List every stage, not only running and ready ones.
    #[arg(long)]
    all: bool,
    /// Follow the job with a progress bar until it ends (as `submit --wait` does); fails
    /// unless it ends done. For a job submitted earlier, e.g. by a batch script resubmitted.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    connection: client::Connection,
}

#[derive(Args)]
struct SubmitArgs {
    /// The game, board file and brown limit to solve.
    #[command(flatten)]
    target: TargetArgs,
    /// zstd compression level of the tables.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(i32).range(1..=19))]
    level: i32,
    /// Follow the job with a progress bar until it ends.
    #[arg(long)]
    wait: bool,
    /// Keep the job's tables in an object store, s3://bucket/prefix (one job per prefix;
    /// the coordinator and workers take credentials from their AWS_* variables) [default: the
    /// job's directory, in the coordinator's data directory].
    #[arg(long, value_name = "URL")]
    storage: Option<String>,
    #[command(flatten)]
    connection: client::Connection,
}

#[derive(Args)]
struct ProbeArgs {
    /// The solved directory to read (`--out` is accepted too).
    #[arg(long = "tables", alias = "out", value_name = "DIR")]
    tables: PathBuf,
    /// Read positions from this file (`-`: standard input), one `<position> <side> [anything]`
    /// per line (blank lines and `#` comments skipped), and print `<position> <side> <value>`
    /// for each; a bad line is reported with its number and the rest go on.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["position", "side"])]
    file: Option<PathBuf>,
    /// The position, rows top to bottom separated by commas, e.g. `ooooo,o...o,o.X.o,o...o,ooooo`
    /// (the side may follow in the same argument: `"ooooo,...,ooooo brown"`).
    position: Option<String>,
    /// Side to move: `brown` or `black`.
    side: Option<String>,
    /// Print one JSON object (value, meaning, moves best first, principal variation): the
    /// fields of the HTTP probe API.
    #[arg(long, conflicts_with = "file")]
    json: bool,
    /// Also write the position as an SVG picture to FILE (the web viewer's drawing).
    #[arg(long, value_name = "FILE", conflicts_with = "file")]
    svg: Option<PathBuf>,
}

#[derive(Args)]
struct ExtremesArgs {
    /// The solved directory to scan (`--tables` is accepted too).
    #[arg(long = "out", alias = "tables", value_name = "DIR")]
    out: PathBuf,
    /// Positions shown per list at most (each list also says how many there are).
    #[arg(long, default_value_t = 50, value_name = "N")]
    limit: usize,
    /// Print the lists as one JSON object (what the web viewer reads).
    #[arg(long)]
    json: bool,
    /// The viewer the printed links open (`retro serve`'s address).
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080/")]
    viewer: String,
}

#[derive(Args)]
struct ServeArgs {
    /// A solved directory to serve (repeat for several; a request picks one by `table=` its
    /// directory name, `game=`, or the viewer's `size=`).
    #[arg(long = "out", alias = "tables", value_name = "DIR", required = true)]
    out: Vec<PathBuf>,
    /// Address to listen on (port 0: any free port; the address is printed).
    #[arg(long, default_value = serve::DEFAULT_LISTEN, value_name = "ADDR")]
    listen: String,
    /// Memory for decompressed blocks, shared by every directory and request.
    #[arg(long, value_name = "BYTES", default_value = "256MiB", value_parser = retro_worker::cli::parse_bytes)]
    cache: u64,
    /// Memory for probe answers kept whole (the same position asked again is answered from
    /// it); 0 makes every answer afresh.
    #[arg(long, value_name = "BYTES", default_value = "64MiB", value_parser = retro_worker::cli::parse_bytes)]
    answers: u64,
}

#[derive(Args)]
struct BenchServeArgs {
    /// A solved directory to serve (repeat for several).
    #[arg(long = "out", alias = "tables", value_name = "DIR", required = true)]
    out: Vec<PathBuf>,
    /// Distinct positions probed per directory (random walks from the start).
    #[arg(long, default_value_t = 2000, value_name = "N")]
    positions: usize,
    /// Cold requests, each after emptying the block cache.
    #[arg(long, default_value_t = 200, value_name = "N")]
    cold: usize,
    /// Warm requests at most.
    #[arg(long, default_value_t = 200_000, value_name = "N")]
    requests: u64,
    /// Warm phase's time limit.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    seconds: f64,
    /// Concurrent client connections of the warm phase.
    #[arg(long, default_value_t = 4, value_name = "N")]
    connections: usize,
    /// Memory for decompressed blocks.
    #[arg(long, value_name = "BYTES", default_value = "256MiB", value_parser = retro_worker::cli::parse_bytes)]
    cache: u64,
    /// Memory for probe answers kept whole (0: every probe made afresh, which measures the
    /// probe itself through HTTP).
    #[arg(long, value_name = "BYTES", default_value = "64MiB", value_parser = retro_worker::cli::parse_bytes)]
    answers: u64,
}

#[derive(Args)]
struct VerifyArgs {
    /// The solved directory to read (`--out` is accepted too).
    #[arg(long = "tables", alias = "out", value_name = "DIR")]
    tables: PathBuf,
    /// A count table to compare with, byte for byte.
    #[arg(long, value_name = "FILE")]
    counts: Option<PathBuf>,
    /// A file of `<position> <side> <value>` lines to compare with.
    #[arg(long, value_name = "FILE")]
    values: Option<PathBuf>,
    /// Check the defining recurrence on N random positions of every slice.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    recurrence: Option<u64>,
    /// Seed of the random sample.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Another solved directory of the same game to compare with, every value of every slice
    /// and side (stored or derived in either): e.g. tables rewritten with a side derived
    /// against the tables that stored it.
    #[arg(long, value_name = "DIR")]
    against: Option<PathBuf>,
    /// With --against: compare N random slots of every slice and side (the same for both
    /// directories) instead of every slot. A derived value costs a few random block reads, so
    /// comparing every slot of BOARD33's large slices would take hours.
    #[arg(long, value_name = "N", requires = "against", value_parser = clap::value_parser!(u64).range(1..))]
    sample: Option<u64>,
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Play(a) => play::run(a),
        Command::BaoSearch(a) => bao_search::run(a),
        Command::Solve(a) => {
            let game = a.target.game()?;
            tell_how_to_resume_on_interrupt(&a.out, a.in_process);
            let threads = threads(a.threads)?;
            let budget = a
                .memory_budget
                .unwrap_or_else(retro_worker::cli::machine_memory);
            let summary = if a.in_process {
                let options = solve::SolveOptions {
                    out: a.out.clone(),
                    threads,
                    level: a.level,
                    quiet: a.quiet,
                    memory_budget: budget,
                    out_of_core: a.out_of_core,
                    checkpoint_every: a.checkpoints.checkpoint_every(),
                };
                solve::run(&*game, &options)?
            } else {
                let options = embedded::EmbeddedOptions {
                    out: a.out.clone(),
                    threads,
                    workers: workers(a.workers, threads),
                    level: a.level,
                    quiet: a.quiet,
                    lease: std::time::Duration::from_millis(a.lease_ms.max(100)),
                    memory_budget: budget,
                    split_above: a.split_above,
                    storage: retro_objects::check_location(a.storage.as_deref().unwrap_or(""))?,
                    checkpoint_every: a.checkpoints.checkpoint_every(),
                };
                embedded::run(Some(game), &options)?
            };
            print_summary(&summary, &a.out)
        }
        Command::Resume(a) => {
            tell_how_to_resume_on_interrupt(&a.dir, false);
            let threads = threads(a.threads)?;
            let options = embedded::EmbeddedOptions {
                out: a.dir.clone(),
                threads,
                workers: workers(a.workers, threads),
                level: 3,
                quiet: a.quiet,
                lease: std::time::Duration::from_secs(10),
                memory_budget: a
                    .memory_budget
                    .unwrap_or_else(retro_worker::cli::machine_memory),
                split_above: a.split_above,
                storage: String::new(), // the job's own, from its database
                checkpoint_every: a.checkpoints.checkpoint_every(),
            };
            let summary = embedded::run(None, &options)?;
            print_summary(&summary, &a.dir)
        }
        Command::Coordinator(a) => {
            runtime()?.block_on(retro_coordinator::cli::run(a, retro_games::open))
        }
        Command::Worker(a) => runtime()?.block_on(retro_worker::cli::run_cli(a, retro_games::open)),
        Command::Submit(a) => {
            let game = a.target.game()?;
            runtime()?.block_on(async {
                let storage = retro_objects::check_location(a.storage.as_deref().unwrap_or(""))?;
                let mut c = a.connection.connect().await?;
                let reply = c
                    .submit(retro_proto::SubmitRequest {
                        game: game.name().into(),
                        definition_json: game.definition().to_string(),
                        zstd_level: a.level,
                        storage: storage.clone(),
                    })
                    .await
                    .map_err(|s| client::refused("submit", s))?
                    .into_inner();
                let tables = match storage.is_empty() {
                    true => String::new(),
                    false => format!("; its tables: {storage}"),
                };
                outln!(
                    "job {} submitted; its directory: {} (in the coordinator's data directory){tables}",
                    reply.job_id,
                    reply.job_dir
                );
                if a.wait {
                    let started = std::time::Instant::now();
                    let s = client::wait(&mut c, reply.job_id).await?;
                    client::print_status(&s, false)?;
                    outln!(
                        "job {} done in {}",
                        reply.job_id,
                        output::duration(started.elapsed().as_secs_f64())
                    );
                }
                Ok(())
            })
        }
        Command::Status(a) => runtime()?.block_on(async {
            let mut c = a.connection.connect().await?;
            if a.wait {
                let started = std::time::Instant::now();
                let s = client::wait(&mut c, a.job).await?;
                client::print_status(&s, a.all)?;
                outln!(
                    "job {} done (followed for {})",
                    a.job,
                    output::duration(started.elapsed().as_secs_f64())
                );
                return Ok(());
            }
            let s = c
                .status(retro_proto::StatusRequest { job_id: a.job })
                .await
                .map_err(|s| client::refused("status", s))?
                .into_inner();
            client::print_status(&s, a.all)
        }),
        Command::Cancel(a) => runtime()?.block_on(async {
            let mut c = a.connection.connect().await?;
            c.cancel(retro_proto::CancelRequest { job_id: a.job })
                .await
                .map_err(|s| client::refused("cancel", s))?;
            outln!("job {} cancelled", a.job);
            Ok(())
        }),
        Command::Jobs(a) => runtime()?.block_on(async {
            let mut c = a.connection.connect().await?;
            let jobs = c
                .list_jobs(retro_proto::ListJobsRequest {})
                .await
                .map_err(|s| client::refused("jobs", s))?
                .into_inner()
                .jobs;
            if jobs.is_empty() {
                outln!("no jobs");
                return Ok(());
            }
            let rows: Vec<[String; 6]> = jobs
                .iter()
                .map(|j| {
                    [
                        j.job_id.to_string(),
                        j.state.clone(),
                        format!(
                            "{:.1}%",
                            100.0 * j.positions_done as f64 / j.positions.max(1) as f64
                        ),
                        output::duration(j.elapsed_seconds),
                        j.description.clone(),
                        j.job_dir.clone(),
                    ]
                })
                .collect();
            let header = ["job", "state", "done", "elapsed", "game", "directory"];
            for line in output::table(&header, &rows, &[true, false, true, true, false, false]) {
                outln!("{line}");
            }
            Ok(())
        }),
        Command::Bench(a) => {
            a.target.game()?;
            if let Some(prefix) = &a.report {
                let out = a.scratch.join("report-run");
                if out.exists() {
                    std::fs::remove_dir_all(&out)
                        .map_err(|e| anyhow::anyhow!("cannot clear {}: {e}", out.display()))?;
                }
                let threads = threads(a.threads)?;
                let memory_budget = a
                    .memory_budget
                    .unwrap_or_else(retro_worker::cli::machine_memory);
                let run = match a.mode {
                    bench::BenchMode::InProcess => {
                        report::ReportRun::InProcess(solve::SolveOptions {
                            out: out.clone(),
                            threads,
                            level: a.level,
                            quiet: true,
                            memory_budget,
                            out_of_core: false,
                            checkpoint_every: None,
                        })
                    }
                    bench::BenchMode::Cluster | bench::BenchMode::Both => {
                        report::ReportRun::Cluster(embedded::EmbeddedOptions {
                            out: out.clone(),
                            threads,
                            workers: 2,
                            level: a.level,
                            quiet: true,
                            lease: std::time::Duration::from_secs(10),
                            memory_budget,
                            split_above: a.split_above,
                            storage: String::new(),
                            checkpoint_every: None,
                        })
                    }
                };
                report::report(a.target.game()?, &run, prefix)?;
                if !a.keep {
                    std::fs::remove_dir_all(&out).ok();
                }
                return Ok(());
            }
            bench::bench(
                || a.target.game().expect("checked above"),
                a.runs.max(1),
                threads(a.threads)?,
                a.level,
                &a.scratch,
                a.mode,
                a.split_above,
            )
        }
        Command::Counts { tables: out } => {
            let tables = tables::Tables::open(&out)?;
            out!("{}", counts::count_table_from_tables(&tables)?);
            Ok(())
        }
        Command::Loops {
            target,
            list,
            limit,
            layers,
        } => {
            let options = retro_games::LoopOptions {
                list,
                limit,
                layers,
            };
            out!("{}", target.loops(&options)?);
            Ok(())
        }
        Command::Report { tables, slack } => {
            let tables = tables::Tables::open(&tables)?;
            let started = std::time::Instant::now();
            out!("{}", tables.explorer()?.report(&tables, slack)?);
            eprintln!("report: {:.1} s", started.elapsed().as_secs_f64());
            Ok(())
        }
        Command::Probe(a) => {
            let tables = tables::Tables::open(&a.tables)?;
            match (a.file, a.position, a.side) {
                (Some(file), _, _) => probe::probe_file(&tables, &file),
                (None, Some(position), side) => {
                    let text = match side {
                        Some(side) => format!("{position} {side}"),
                        None => position,
                    };
                    if let Some(path) = &a.svg {
                        probe::write_svg(&tables, &text, path)?;
                    }
                    probe::probe_one(&tables, &text, a.json)
                }
                (None, None, _) => bail!(
                    "give a position, e.g. \"{}\" (or --file FILE)",
                    tables.explorer()?.example()
                ),
            }
        }
        Command::Extremes(a) => extremes::run(&a.out, a.limit, a.json, &a.viewer),
        Command::Serve(a) => serve::run(&a.out, &a.listen, a.cache, a.answers),
        Command::BenchServe(a) => serve::load::run(
            &a.out,
            &serve::load::LoadPlan {
                positions: a.positions,
                cold: a.cold,
                requests: a.requests,
                seconds: a.seconds,
                connections: a.connections,
                cache_bytes: a.cache,
                answer_bytes: a.answers,
            },
        ),
        Command::Verify(a) => {
            let tables = tables::Tables::open(&a.tables)?;
            if a.counts.is_none()
                && a.values.is_none()
                && a.recurrence.is_none()
                && a.against.is_none()
            {
                bail!("nothing to verify: give --counts FILE, --values FILE, --recurrence N and/or --against DIR");
            }
            let mut failed = false;
            if let Some(path) = &a.counts {
                let problems = verify::check_counts(&tables, path)?;
                failed |= !verify::report(
                    "counts",
                    format!("compared with {}", path.display()),
                    &problems,
                )?;
            }
            if let Some(path) = &a.values {
                let (n, problems) = verify::check_values(&tables, path)?;
                failed |= !verify::report(
                    "values",
                    format!("{n} positions from {}", path.display()),
                    &problems,
                )?;
            }
            if let Some(n) = a.recurrence {
                let (checked, problems) = verify::check_recurrence(&tables, n, a.seed)?;
                failed |= !verify::report(
                    "recurrence",
                    format!("{checked} position values checked"),
                    &problems,
                )?;
            }
            if let Some(dir) = &a.against {
                let other = tables::Tables::open(dir)?;
                let (compared, problems) =
                    verify::check_against(&tables, &other, a.sample, a.seed)?;
                failed |= !verify::report(
                    "values",
                    format!(
                        "{} slots compared with {}",
                        output::thousands(compared),
                        dir.display()
                    ),
                    &problems,
                )?;
            }
            if failed {
                bail!("verification failed");
            }
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Solves log one line per finished stage; a benchmark prints only its measurements.
    match cli.command {
        Command::Bench(_) | Command::BenchServe(_) => init_logging(cli.log_format, "warn"),
        // A solve at a terminal shows one progress display; its log is in the job directory.
        Command::Solve(_) | Command::Resume(_) => {
            let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
            init_job_logging(cli.log_format, cli.verbose || !terminal);
        }
        _ => init_logging(cli.log_format, "info"),
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`retro probe ... | head`): nothing left to say.
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", retro_pipeline::process::error_text(&e));
            ExitCode::FAILURE
        }
    }
}
