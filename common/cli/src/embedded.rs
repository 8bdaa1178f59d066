//! `retro solve` and `retro resume`: a coordinator and N workers in this process, talking
//! gRPC over loopback, on the output directory as the job directory.
//!
//! This is the cluster pipeline in miniature (same services, same shards, same merge), so that
//! what runs on one machine is what runs on many. Each worker has its own rayon pool of
//! `--threads`: two tasks in flight (Musashi's even and odd brown counts are independent) then
//! share the cores through the OS scheduler. One shared pool would be slower on big boards: a
//! thread waiting inside one task's parallel loop steals long work items of the other task, so a
//! small stage on the critical chain can wait minutes behind a large one (measured on BOARD33
//! up to 10 browns: a 36 M-position stage took 103 s instead of ~3 s).

use crate::solve::{start_value, SliceReport, SolveSummary};
use anyhow::{bail, Context, Result};
use retro_coordinator::core::{Core, CoreConfig};
use retro_coordinator::db::{Db, DATABASE};
use retro_coordinator::server::{start_with, CoordinatorOptions};
use retro_engine::SliceCost;
use retro_pipeline::lock::DirLock;
use retro_pipeline::{job_dir, JobGame};
use retro_store::SliceRecord;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::info;

/// How to run an embedded solve.
pub struct EmbeddedOptions {
    /// Output (job) directory.
    pub out: PathBuf,
    /// Compute threads, shared by the workers.
    pub threads: usize,
    /// Number of workers.
    pub workers: usize,
    /// zstd level of the tables.
    pub level: i32,
    /// Hide the progress bar.
    pub quiet: bool,
    /// Lease of a task (a silent worker loses it after this long).
    pub lease: Duration,
    /// Memory the whole solve may use; shared equally by the workers.
    pub memory_budget: u64,
    /// Stages of at least this many positions are solved as one task per slice and ply.
    pub split_above: u64,
    /// Where the tables go: empty for `out` itself, else an object store location
    /// (`s3://bucket/prefix`). A resumed solve keeps the one it was started with.
    pub storage: String,
    /// How often a stage task saves its state in the job directory; `None`: never.
    pub checkpoint_every: Option<Duration>,
}

/// What a worker with `budget` bytes may spend on one task (the rest is its cache).
fn worker_capacity(budget: u64) -> u64 {
    retro_pipeline::stage::task_capacity(budget)
}

/// Solves `game` (or, for `retro resume`, the job already in `opts.out`).
pub fn run(game: Option<Arc<dyn JobGame>>, opts: &EmbeddedOptions) -> Result<SolveSummary> {
    run_observed(game, opts, &mut |_| {})
}

/// [`run`], showing every status the progress loop reads (every 50 ms) to `observe`.
pub fn run_observed(
    game: Option<Arc<dyn JobGame>>,
    opts: &EmbeddedOptions,
    observe: &mut dyn FnMut(&retro_proto::JobStatus),
) -> Result<SolveSummary> {
    let started = Instant::now();
    let out = &opts.out;
    let has_db = out.join(DATABASE).is_file();
    if game.is_none() && !has_db {
        bail!(
            "{}: no {DATABASE} here, so this is not an interrupted `retro solve` job directory",
            out.display()
        );
    }
    // One writer per directory, from before anything in it is read.
    let lock = DirLock::acquire(out)?;
    match &game {
        // A new job directory, or an in-process solve's output to adopt: checked (foreign or
        // other solve refused) before the coordinator puts its database there.
        Some(game) if !has_db => {
            job_dir::prepare(out, &**game, &opts.storage, &[])
                .inspect_err(|_| lock.remove_if_created())?;
        }
        None if !has_db => bail!(
            "{}: no {DATABASE} here, so this is not an interrupted `retro solve` job directory",
            out.display()
        ),
        _ => {}
    }
    // The directory is this job's: its log lines go to its log file from here on.
    retro_pipeline::process::log_to_job_file(out)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("retro-rpc")
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let config = CoreConfig {
        data: out.clone(),
        lease: opts.lease,
        // Frequent heartbeats keep the progress bar (fed by them) smooth; on loopback they
        // cost nothing.
        heartbeat: (opts.lease / 5).clamp(Duration::from_millis(20), Duration::from_millis(200)),
        max_failures: 3,
        split_above: opts.split_above,
        open_game: retro_games::open,
        workers_in_process: true,
    };
    let mut core = Core::open_locked(config.clone(), lock)?;
    let (job, game) = match game {
        Some(game) => (
            core.ensure_embedded_job(game.clone(), opts.level, &opts.storage)?,
            game,
        ),
        None => {
            let job = core.embedded_job()?.with_context(|| {
                format!("{}: its database holds no `retro solve` job", out.display())
            })?;
            let id = core.ensure_embedded_job(job.game.clone(), job.level, &job.storage)?;
            (id, job.game)
        }
    };
    // Workers split the budget; each must fit the largest remaining stage (and its cache).
    let largest = core.largest_pending_stage(job)?;
    let mut workers = opts.workers.max(1);
    while workers > 1
        && largest
            .is_some_and(|(_, need)| need > worker_capacity(opts.memory_budget / workers as u64))
    {
        workers -= 1;
    }
    if let Some((stage, need)) = largest {
        if need > worker_capacity(opts.memory_budget) {
            bail!(
                "{}",
                retro_pipeline::stage::too_large(
                    &*game,
                    stage,
                    opts.memory_budget,
                    worker_capacity(opts.memory_budget),
                    false
                )
            );
        }
    }
    let token: String = format!("{:032x}", rand::random::<u128>());
    let bar = crate::progress::positions_bar(opts.quiet);
    let result: Result<(u64, u64)> = runtime.block_on(async {
        let coordinator = start_with(
            core,
            CoordinatorOptions {
                core: config,
                listen: "127.0.0.1:0".parse().expect("address"),
                token: token.clone(),
                metrics: None,
                tls: None,
            },
        )
        .await?;
        let url = format!("http://{}", coordinator.addr);
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        let budget = opts.memory_budget / workers as u64;
        let workers: Vec<_> = (0..workers)
            .map(|i| {
                tokio::spawn(retro_worker::run(
                    retro_worker::WorkerOptions {
                        scratch: None,
                        object_cache: retro_objects::DEFAULT_CACHE_BYTES,
                        coordinator: url.clone(),
                        token: token.clone(),
                        name: format!("embedded-{}", i + 1),
                        threads: opts.threads,
                        memory_budget: budget,
                        tls_ca: None,
                        open_game: retro_games::open,
                        checkpoint_every: opts.checkpoint_every,
                    },
                    stop.clone(),
                ))
            })
            .collect();
        let core = coordinator.core.clone();
        let mut at_start = None;
        // How long the coordinator's lease checks (four per lease) may keep failing before the
        // solve stops with their error: one that fails once is retried.
        let stuck_after = opts.lease * 2;
        let outcome = loop {
            let (status, stuck) = {
                let c = core.clone();
                tokio::task::spawn_blocking(move || {
                    let core = c.lock().expect("core lock");
                    (core.status(job), core.stuck(stuck_after))
                })
                .await?
            };
            let status = status.map_err(|e| anyhow::anyhow!("{e}"))?;
            if let Some(why) = stuck {
                // Its database cannot be written (a full disk): nothing can be recorded, so
                // the job would wait for ever. What is done is kept; a rerun resumes.
                break Err(anyhow::anyhow!(
                    "the job's coordinator cannot record its progress in {}: {why}",
                    out.display()
                ));
            }
            let first = at_start.is_none();
            let start = *at_start.get_or_insert(status.positions_done);
            crate::progress::show(&bar, &status, true);
            if first {
                // The estimate of time left counts only this run's work.
                bar.reset_eta();
                if has_db {
                    bar.suspend(|| say_what_is_reused(out, &status));
                }
            }
            observe(&status);
            match status.state.as_str() {
                "done" => break Ok((status.positions, start)),
                "running" => {}
                other => break Err(anyhow::anyhow!("job {job} {other}: {}", status.note)),
            }
            if let Some(w) = workers.iter().find(|w| w.is_finished()) {
                let _ = w;
                break Err(anyhow::anyhow!("a worker stopped unexpectedly"));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let _ = stop_tx.send(true);
        for w in workers {
            match w.await {
                Ok(Err(e)) if outcome.is_err() => {
                    return Err(e.context("worker failed"));
                }
                _ => {}
            }
        }
        coordinator.shutdown().await?;
        outcome
    });
    crate::progress::finish(&bar);
    let (positions, at_start) = result?;
    let seconds = started.elapsed().as_secs_f64();
    info!(job, seconds, "embedded solve finished");
    Ok(SolveSummary {
        solved_positions: positions - at_start,
        total_positions: positions,
        seconds,
        start: start_value(&*game, out)?,
        slices: slice_reports(&*game, out, job)?,
    })
}

/// What each slice of the job cost its worker, as the coordinator recorded it at the merge.
fn slice_reports(game: &dyn JobGame, out: &Path, job: u64) -> Result<Vec<SliceReport>> {
    let db = Db::open(out)?;
    let rows = db.read().slice_costs(job)?;
    let stages = game.stages();
    rows.into_iter()
        .map(|row| {
            let record: SliceRecord = serde_json::from_str(&row.record)
                .context("a slice record in the job database is not valid")?;
            let [cpu_us, wall_us, read, written, peak_rss] = row.cost;
            Ok(SliceReport {
                stage: stages
                    .get(record.stage)
                    .map_or_else(|| format!("stage {}", record.stage), |s| s.name.clone()),
                name: record.name,
                positions: 2 * record.positions,
                cost: SliceCost {
                    cpu: Duration::from_micros(cpu_us),
                    wall: Duration::from_micros(wall_us),
                    read,
                    written,
                    peak_rss,
                },
            })
        })
        .collect()
}

/// "Resuming out/board25: 12 of 25 stages done and kept." for a job that was interrupted.
fn say_what_is_reused(out: &Path, status: &retro_proto::JobStatus) {
    let done = status.tasks.iter().filter(|t| t.state == "done").count();
    let all = status.tasks.len();
    if done < all {
        println!(
            "Resuming {}: {done} of {all} stages done and kept.",
            out.display()
        );
    }
}
