//! A retro worker.
//!
//! It registers with a coordinator, heartbeats on the async runtime, pulls one task at a time,
//! runs it on its own rayon pool (compute never shares threads with RPCs), writes the result
//! shards into the shared job directory and reports them. It survives a coordinator restart
//! (it retries until the coordinator is back), and drops its shards when its report is refused
//! as stale.
//!
//! * [`cache`]: final values and step states kept in memory between tasks.
//! * [`task`]: running one task.
//! * [`cli`]: the `worker` command's flags.

#![warn(missing_docs)]

pub mod cache;
pub mod cli;
pub mod task;

use anyhow::{bail, Context, Result};
use cache::MemoryCache;
use retro_proto as pb;
use retro_proto::worker_api_client::WorkerApiClient;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use task::Progress;
use tokio::sync::watch;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::Code;
use tracing::{error, info, info_span, warn, Instrument};

/// How a worker runs.
pub struct WorkerOptions {
    /// The coordinator's URL (`http://127.0.0.1:50051`).
    pub coordinator: String,
    /// The cluster token.
    pub token: String,
    /// Name shown in the coordinator's logs and status.
    pub name: String,
    /// Compute threads (the worker's own rayon pool).
    pub threads: usize,
    /// Bytes this worker may use; a quarter goes to the cache of final values and step states.
    pub memory_budget: u64,
    /// Connect with TLS, trusting this CA certificate (PEM).
    pub tls_ca: Option<Vec<u8>>,
    /// Directory for the scratch files of out-of-core tasks [default: the job directory's
    /// `scratch/`; for a job in an object store, the system's temporary directory]. Put it on
    /// a local disk, not on memory-backed tmpfs. Tables downloaded from an object store are
    /// kept in its `objects/` [default: `retro_objects::default_cache_dir`].
    pub scratch: Option<std::path::PathBuf>,
    /// Bytes of tables downloaded from an object store kept on local disk (least recently
    /// used ones go first).
    pub object_cache: u64,
    /// Opens the game of a task from its name and definition: the registry, given by the
    /// binary (the worker never names a game).
    pub open_game: retro_pipeline::OpenGame,
    /// Inside a stage task of a job on a shared file system, save the solver's state in the
    /// job directory whenever this long has passed since the last save (zero: after every
    /// ply), so that the worker that takes the task over after a crash resumes there; `None`:
    /// no checkpoints.
    pub checkpoint_every: Option<Duration>,
}

type Client = WorkerApiClient<InterceptedService<Channel, pb::auth::AttachToken>>;

/// Connects lazily to the coordinator (calls fail with UNAVAILABLE while it is down).
fn client(options: &WorkerOptions) -> Result<Client> {
    let channel = endpoint(&options.coordinator, options.tls_ca.as_deref())?
        .timeout(Duration::from_secs(60))
        .connect_lazy();
    let token = pb::auth::AttachToken::new(&options.token).map_err(anyhow::Error::msg)?;
    Ok(WorkerApiClient::with_interceptor(channel, token)
        .max_decoding_message_size(pb::MAX_MESSAGE_BYTES))
}

/// The coordinator's endpoint, with TLS when a CA certificate is given.
pub fn endpoint(url: &str, tls_ca: Option<&[u8]>) -> Result<Endpoint> {
    let mut endpoint = Endpoint::from_shared(url.to_string())
        .with_context(|| format!("'{url}' is not a coordinator URL"))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true);
    if let Some(ca) = tls_ca {
        endpoint = endpoint
            .tls_config(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca)))
            .context("TLS configuration rejected")?;
    }
    Ok(endpoint)
}

/// Whether a failed call is worth retrying (the coordinator is down or restarting).
fn transient(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable
            | Code::Unknown
            | Code::DeadlineExceeded
            | Code::Cancelled
            | Code::Aborted
    )
}

/// Runs a worker until `stop` becomes true. Fails only on errors retrying cannot fix (wrong
/// token, protocol mismatch, bad URL).
pub async fn run(options: WorkerOptions, mut stop: watch::Receiver<bool>) -> Result<()> {
    let mut client = client(&options)?;
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .thread_name(|i| format!("compute-{i}"))
            .build()
            .context("cannot start compute threads")?,
    );
    let cache = Arc::new(Mutex::new(MemoryCache::new(options.memory_budget / 4)));
    let storages = Arc::new(retro_objects::Opener::new(
        options
            .scratch
            .as_ref()
            .map_or_else(retro_objects::default_cache_dir, |s| s.join("objects")),
        options.object_cache,
    ));
    let mut backoff = Backoff::default();
    'register: loop {
        let reply = loop {
            if *stop.borrow() {
                return Ok(());
            }
            let request = pb::RegisterRequest {
                protocol_version: pb::PROTOCOL_VERSION,
                name: options.name.clone(),
                threads: pool.current_num_threads() as u32,
                memory_budget: options.memory_budget,
            };
            match client.register(request).await {
                Ok(r) => break r.into_inner(),
                Err(s) if transient(&s) => {
                    backoff.wait_logged(&mut stop, &s, "register").await;
                }
                Err(s) => bail!("the coordinator refused this worker: {}", s.message()),
            }
        };
        backoff.reset();
        let worker_id = reply.worker_id;
        info!(worker = worker_id, coordinator = %options.coordinator, "registered");
        let progress: Progress = Arc::new(Mutex::new(None));
        let abandoned = Arc::new(Abandoned::default());
        let unknown = Arc::new(AtomicBool::new(false));
        let heartbeat = tokio::spawn(heartbeat_loop(
            client.clone(),
            worker_id,
            Duration::from_millis(reply.heartbeat_ms.max(10)),
            progress.clone(),
            abandoned.clone(),
            unknown.clone(),
        ));
        let result = async {
            let mut idle_since = std::time::Instant::now();
            loop {
                if *stop.borrow() {
                    return Ok(false);
                }
                if unknown.load(Ordering::Relaxed) {
                    return Ok(true);
                }
                // The coordinator holds a poll while nothing is ready (a long poll, up to half
                // a second): a worker told to stop drops the call instead of waiting for its
                // answer — the last idle worker of an embedded solve kept the finished solve
                // waiting that long (9% of BOARD25's wall time). A task the coordinator
                // leased in a dropped reply is never run here: its lease expires and it goes
                // to another worker, as after a crash.
                let polled = tokio::select! {
                    polled = client.poll_task(pb::PollTaskRequest { worker_id }) => polled,
                    Ok(()) = stop.changed() => {
                        if *stop.borrow() {
                            return Ok(false);
                        }
                        continue;
                    }
                };
                let task = match polled {
                    Ok(r) => r.into_inner().task,
                    Err(s) if s.code() == Code::NotFound => return Ok(true),
                    Err(s) if transient(&s) => {
                        backoff.wait_logged(&mut stop, &s, "ask for a task").await;
                        continue;
                    }
                    Err(s) => bail!("the coordinator refused a poll: {}", s.message()),
                };
                backoff.reset();
                let Some(task) = task else {
                    let _ = tokio::time::timeout(Duration::from_millis(100), stop.changed()).await;
                    continue;
                };
                let waited = idle_since.elapsed();
                let span = info_span!(
                    "task",
                    job = task.job_id,
                    stage = task.stage,
                    attempt = task.attempt
                );
                let keep_going = execute(
                    &mut client,
                    &options,
                    worker_id,
                    task,
                    waited,
                    &pool,
                    &cache,
                    &storages,
                    &progress,
                    &abandoned,
                    &mut stop,
                    &mut backoff,
                )
                .instrument(span)
                .await?;
                idle_since = std::time::Instant::now();
                if !keep_going {
                    return Ok(true);
                }
            }
        }
        .await;
        heartbeat.abort();
        match result {
            Ok(true) => {
                warn!(
                    worker = worker_id,
                    "the coordinator does not know this worker any more; registering again"
                );
                continue 'register;
            }
            Ok(false) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Runs one task and reports it. Returns false when the worker must register again.
#[allow(clippy::too_many_arguments)]
async fn execute(
    client: &mut Client,
    options: &WorkerOptions,
    worker_id: u64,
    task: pb::Task,
    waited: Duration,
    pool: &Arc<rayon::ThreadPool>,
    cache: &Arc<Mutex<MemoryCache>>,
    storages: &Arc<retro_objects::Opener>,
    progress: &Progress,
    abandoned: &Arc<Abandoned>,
    stop: &mut watch::Receiver<bool>,
    backoff: &mut Backoff,
) -> Result<bool> {
    info!(
        "task received: {} inputs, {} step inputs",
        task.inputs.len(),
        task.step_inputs.len()
    );
    let key = attempt_key(task.job_id, task.stage, task.step, task.attempt);
    abandoned.start();
    *progress.lock().expect("progress lock") = Some(pb::TaskProgress {
        job_id: task.job_id,
        stage: task.stage,
        attempt: task.attempt,
        ply: 0,
        positions_done: 0,
        step: task.step,
    });
    let computed = {
        let (task, pool, cache, progress, storages) = (
            task.clone(),
            pool.clone(),
            cache.clone(),
            progress.clone(),
            storages.clone(),
        );
        let usable = retro_pipeline::stage::task_capacity(options.memory_budget);
        let scratch = options.scratch.clone();
        let checkpoint_every = options.checkpoint_every;
        let open_game = options.open_game;
        tokio::task::spawn_blocking(move || match task.step {
            Some(_) => task::run_step(
                &task, open_game, worker_id, &pool, &cache, &storages, &progress,
            ),
            None => task::run_task(
                &task,
                open_game,
                worker_id,
                &pool,
                &cache,
                &progress,
                task::TaskRoom {
                    usable,
                    scratch: scratch.as_deref(),
                    storages: &storages,
                    checkpoint_every,
                },
            ),
        })
        .await
        .context("task thread")?
    };
    let report = match computed {
        Ok(mut report) => {
            if let Some(t) = report.times.as_mut() {
                t.wait_ms = waited.as_millis() as u64;
            }
            report
        }
        Err(e) => {
            error!("task failed: {}", retro_pipeline::process::error_text(&e));
            *progress.lock().expect("progress lock") = None;
            let request = pb::FailTaskRequest {
                worker_id,
                job_id: task.job_id,
                stage: task.stage,
                attempt: task.attempt,
                retryable: true,
                reason: retro_pipeline::process::error_text(&e),
                step: task.step,
                input_damaged: e.downcast_ref::<task::StepInputDamaged>().is_some(),
            };
            if let Err(s) = client.fail_task(request).await {
                warn!("could not report the failure: {}", s.message());
            }
            return Ok(true);
        }
    };
    // Dropping a refused attempt's files is safe: a refused attempt is never merged (a report
    // repeated after its merge is acknowledged, not refused), and no other attempt ever writes
    // into its directory.
    let shard_dir = task.shard_dir.clone();
    let drop_shards = || {
        let storage = storages.open(&task.storage, std::path::Path::new(&task.job_dir));
        if let Err(e) = storage.and_then(|s| s.remove_prefix(&shard_dir)) {
            warn!("cannot remove refused shards: {e:#}");
        }
    };
    if abandoned.take(key) {
        warn!("the coordinator took this task back while it ran; dropping its shards");
        *progress.lock().expect("progress lock") = None;
        drop_shards();
        return Ok(true);
    }
    loop {
        match client.complete_task(report.clone()).await {
            Ok(_) => {
                backoff.reset();
                info!("task reported and merged");
                break;
            }
            Err(s) if transient(&s) => {
                if *stop.borrow() {
                    break;
                }
                backoff
                    .wait_logged(stop, &s, "report a finished task")
                    .await;
            }
            Err(s) if s.code() == Code::FailedPrecondition => {
                warn!(
                    "report refused as stale ({}); dropping its shards",
                    s.message()
                );
                drop_shards();
                break;
            }
            Err(s) if s.code() == Code::NotFound && s.message().contains("worker") => {
                drop_shards();
                *progress.lock().expect("progress lock") = None;
                return Ok(false);
            }
            Err(s) => {
                error!("report refused: {:?}: {}", s.code(), s.message());
                drop_shards();
                break;
            }
        }
    }
    *progress.lock().expect("progress lock") = None;
    Ok(true)
}

/// A task attempt: job, stage, step (slot, ply) if any, attempt number.
type AttemptKey = (u64, u32, Option<(u32, u32)>, u32);

/// The key of an attempt as tasks and heartbeat replies name it.
fn attempt_key(job: u64, stage: u32, step: Option<pb::Step>, attempt: u32) -> AttemptKey {
    (job, stage, step.map(|s| (s.slot, s.ply)), attempt)
}

/// The attempts the coordinator told this worker to abandon (their lease was lost, or their
/// job cancelled), noted by the heartbeat loop and checked when a task finishes: an abandoned
/// task's shards are dropped, not reported.
///
/// Kept per attempt, not as one flag: a heartbeat reply can arrive after the worker has moved
/// on to its next task, naming the previous one (already merged, so no longer held), and must
/// not make the worker drop the next task's work.
#[derive(Default)]
struct Abandoned(Mutex<HashSet<AttemptKey>>);

impl Abandoned {
    /// A new task starts: what is noted so far names earlier attempts only.
    fn start(&self) {
        self.0.lock().expect("abandoned lock").clear();
    }

    /// Notes the attempts a heartbeat reply names.
    fn note(&self, attempts: impl IntoIterator<Item = AttemptKey>) {
        self.0.lock().expect("abandoned lock").extend(attempts);
    }

    /// Whether `task` was abandoned (and forgets it).
    fn take(&self, task: AttemptKey) -> bool {
        self.0.lock().expect("abandoned lock").remove(&task)
    }
}

/// Sends heartbeats with the running task's progress until aborted.
async fn heartbeat_loop(
    mut client: Client,
    worker_id: u64,
    every: Duration,
    progress: Progress,
    abandoned: Arc<Abandoned>,
    unknown: Arc<AtomicBool>,
) {
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        let running: Vec<_> = progress
            .lock()
            .expect("progress lock")
            .iter()
            .copied()
            .collect();
        match client
            .heartbeat(pb::HeartbeatRequest {
                worker_id,
                running: running.clone(),
            })
            .await
        {
            Ok(reply) => {
                // By now the worker may be on its next task: only the attempts named are
                // abandoned (a reply naming the task just completed must not touch the next).
                let abandon = reply.into_inner().abandon;
                abandoned.note(
                    abandon
                        .iter()
                        .map(|a| attempt_key(a.job_id, a.stage, a.step, a.attempt)),
                );
            }
            Err(s) if s.code() == Code::NotFound => unknown.store(true, Ordering::Relaxed),
            Err(_) => {} // the coordinator is down; the main loop logs that
        }
    }
}

/// Exponential backoff between retries, logging the first failure of a series.
#[derive(Default)]
struct Backoff {
    failures: u32,
}

impl Backoff {
    fn reset(&mut self) {
        self.failures = 0;
    }

    async fn wait_logged(
        &mut self,
        stop: &mut watch::Receiver<bool>,
        status: &tonic::Status,
        what: &str,
    ) {
        if self.failures == 0 {
            warn!(
                "cannot {what}: coordinator unavailable ({}); retrying",
                status.message()
            );
        }
        self.failures += 1;
        let delay = Duration::from_millis(50u64 << self.failures.min(5));
        let _ = tokio::time::timeout(delay, stop.changed()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_reply_about_the_previous_task_does_not_abandon_the_next() {
        let abandoned = Abandoned::default();
        let (first, second) = ((1, 7, None, 1), (1, 8, Some((2, 3)), 1));
        abandoned.start();
        // `first` is reported and merged; the worker starts `second`; then a heartbeat reply
        // sent while `first` ran arrives, naming it (the coordinator no longer holds it).
        abandoned.start();
        abandoned.note([first]);
        assert!(!abandoned.take(second), "the next task's work is reported");
        // A lost lease on the task itself is honoured, once.
        abandoned.note([second]);
        assert!(abandoned.take(second));
        assert!(!abandoned.take(second));
    }
}
