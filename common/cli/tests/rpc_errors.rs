//! Bad and stale requests against a real coordinator process get typed errors, and nothing is
//! lost or corrupted: the job still ends byte-identical to the in-process solve.
//!
//! The test plays the worker itself over gRPC (computing real shards with the worker's own task
//! code), so that it can send what a healthy worker never would: wrong tokens, stale attempts,
//! damaged shards, malformed descriptors, oversized messages.

mod support;

use retro_proto as pb;
use retro_proto::job_api_client::JobApiClient;
use retro_proto::worker_api_client::WorkerApiClient;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::cluster::*;
use support::*;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::Code;

type Workers = WorkerApiClient<InterceptedService<Channel, pb::auth::AttachToken>>;

const TOKEN: &str = "test-token-0123456789";
const BOARD33_4: [&str; 4] = ["--game", "musashi33", "--max-browns", "4"];

fn channel(cluster: &Cluster) -> Channel {
    Channel::from_shared(cluster.url()).unwrap().connect_lazy()
}

fn workers(cluster: &Cluster, token: &str) -> Workers {
    WorkerApiClient::with_interceptor(channel(cluster), pb::auth::AttachToken::new(token).unwrap())
}

fn register_request(version: u32, name: &str) -> pb::RegisterRequest {
    pb::RegisterRequest {
        protocol_version: version,
        name: name.into(),
        threads: 1,
        memory_budget: 1 << 30,
    }
}

/// Registers a well-behaved (current protocol) worker; returns its id.
async fn register(client: &mut Workers, name: &str) -> u64 {
    client
        .register(register_request(pb::PROTOCOL_VERSION, name))
        .await
        .unwrap()
        .into_inner()
        .worker_id
}

/// Asks for a task, which must be there.
async fn poll(client: &mut Workers, worker: u64) -> pb::Task {
    client
        .poll_task(pb::PollTaskRequest { worker_id: worker })
        .await
        .unwrap()
        .into_inner()
        .task
        .expect("a ready task")
}

/// Computes a task's shards as a worker would; returns the completion report.
fn compute(task: &pb::Task, worker: u64) -> pb::CompleteTaskRequest {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let cache = Mutex::new(retro_worker::cache::MemoryCache::new(1 << 30));
    let progress = Arc::new(Mutex::new(None));
    retro_worker::task::run_task(
        task,
        retro_games::open,
        worker,
        &pool,
        &cache,
        &progress,
        retro_worker::task::TaskRoom {
            usable: u64::MAX,
            scratch: None,
            storages: &retro_objects::Opener::new(std::env::temp_dir(), 1 << 20),
            checkpoint_every: None,
        },
    )
    .unwrap()
}

fn code<T: std::fmt::Debug>(r: Result<T, tonic::Status>) -> Code {
    r.expect_err("the call should be refused").code()
}

#[test]
fn bad_and_stale_requests_get_typed_errors_and_lose_nothing() {
    let want = reference("board33-4", &BOARD33_4);
    let dir = temp_dir("rpc-errors");
    let cluster = Cluster::new(&dir, 1_000);
    let _coordinator = cluster.start_coordinator();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        // Tokens: missing or wrong → UNAUTHENTICATED, logged.
        let mut anonymous = JobApiClient::new(channel(&cluster));
        assert_eq!(
            code(anonymous.list_jobs(pb::ListJobsRequest {}).await),
            Code::Unauthenticated
        );
        let mut wrong = workers(&cluster, "not-the-token");
        assert_eq!(
            code(
                wrong
                    .register(register_request(pb::PROTOCOL_VERSION, "x"))
                    .await
            ),
            Code::Unauthenticated
        );
        assert!(cluster
            .log("coordinator")
            .contains("missing or wrong token"));

        let mut jobs = JobApiClient::with_interceptor(
            channel(&cluster),
            pb::auth::AttachToken::new(TOKEN).unwrap(),
        );
        let mut a = workers(&cluster, TOKEN);
        // Protocol mismatch, oversized message, unknown job and worker.
        assert_eq!(
            code(a.register(register_request(999, "old")).await),
            Code::FailedPrecondition
        );
        let huge = "x".repeat(pb::MAX_MESSAGE_BYTES + 1);
        let oversized = code(
            a.register(register_request(pb::PROTOCOL_VERSION, &huge))
                .await,
        );
        assert!(
            matches!(oversized, Code::OutOfRange | Code::ResourceExhausted),
            "{oversized:?}"
        );
        assert_eq!(
            code(jobs.status(pb::StatusRequest { job_id: 999 }).await),
            Code::NotFound
        );
        assert_eq!(
            code(a.poll_task(pb::PollTaskRequest { worker_id: 999 }).await),
            Code::NotFound
        );
        let bad_submit = pb::SubmitRequest {
            game: "chess".into(),
            definition_json: "{}".into(),
            zstd_level: 3,
            ..Default::default()
        };
        assert_eq!(code(jobs.submit(bad_submit).await), Code::InvalidArgument);
        let board = retro_musashi::Board::builtin("BOARD25").unwrap();
        for location in ["/data/jobs", "s3://A/x", "s3://bucket/../x"] {
            let bad_storage = pb::SubmitRequest {
                game: "musashi".into(),
                definition_json: serde_json::json!({
                    "board": board.name,
                    "board_file": board.source,
                    "max_browns": 2,
                })
                .to_string(),
                zstd_level: 3,
                storage: location.into(),
            };
            let refused = jobs.submit(bad_storage).await.unwrap_err();
            assert_eq!(refused.code(), Code::InvalidArgument, "{location}");
            assert!(
                refused.message().starts_with("storage: "),
                "{}",
                refused.message()
            );
        }
        for definition_json in ["not json", r#"{"board_file": "nonsense", "max_browns": 4}"#] {
            let bad_definition = pb::SubmitRequest {
                game: "musashi".into(),
                definition_json: definition_json.into(),
                zstd_level: 3,
                ..Default::default()
            };
            assert_eq!(
                code(jobs.submit(bad_definition).await),
                Code::InvalidArgument,
                "{definition_json}"
            );
        }

        let board = retro_musashi::Board::builtin("BOARD33").unwrap();
        let job = jobs
            .submit(pb::SubmitRequest {
                game: "musashi".into(),
                definition_json: serde_json::json!({
                    "board": board.name,
                    "board_file": board.source,
                    "max_browns": 4,
                })
                .to_string(),
                zstd_level: 3,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .job_id;
        let wa = register(&mut a, "fake-a").await;
        let task = poll(&mut a, wa).await;
        assert_eq!(task.attempt, 1);
        let report = compute(&task, wa);
        assert_eq!(
            code(
                a.complete_task(pb::CompleteTaskRequest {
                    job_id: 999,
                    ..report.clone()
                })
                .await
            ),
            Code::NotFound
        );

        // Malformed descriptors: a path outside the shard directory, a missing shard.
        let mut escaping = report.clone();
        escaping.shards[0].path = "../../escape.tbl".into();
        assert_eq!(code(a.complete_task(escaping).await), Code::InvalidArgument);
        let mut short = report.clone();
        short.shards.pop();
        assert_eq!(code(a.complete_task(short).await), Code::InvalidArgument);

        // A bit-flipped shard: DATA_LOSS, and the task goes back to the queue.
        let shard = std::path::Path::new(&task.job_dir).join(&report.shards[0].path);
        let mut bytes = std::fs::read(&shard).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x10;
        std::fs::write(&shard, &bytes).unwrap();
        assert_eq!(code(a.complete_task(report.clone()).await), Code::DataLoss);
        assert_eq!(cluster.events("shards_refused"), 1);

        // Attempt 2 goes to A, which then falls silent: its lease expires, B gets attempt 3,
        // and A's late (otherwise valid) report is fenced.
        let task2 = poll(&mut a, wa).await;
        assert_eq!((task2.stage, task2.attempt), (task.stage, 2));
        let late = compute(&task2, wa);
        wait_until(Duration::from_secs(10), "A's lease expires", || {
            cluster.events("lease_expired") >= 1
        });
        let mut b = workers(&cluster, TOKEN);
        let wb = register(&mut b, "fake-b").await;
        let task3 = poll(&mut b, wb).await;
        assert_eq!((task3.stage, task3.attempt), (task.stage, 3));
        assert_eq!(
            code(a.complete_task(late.clone()).await),
            Code::FailedPrecondition
        );
        let abandon = a
            .heartbeat(pb::HeartbeatRequest {
                worker_id: wa,
                running: vec![pb::TaskProgress {
                    job_id: job,
                    stage: task2.stage,
                    attempt: 2,
                    ply: 0,
                    positions_done: 0,
                    step: None,
                }],
            })
            .await
            .unwrap()
            .into_inner()
            .abandon;
        assert_eq!(
            abandon.len(),
            1,
            "the fenced worker is told to abandon its attempt"
        );
        b.complete_task(compute(&task3, wb)).await.unwrap();

        // A truncated shard of the next task: DATA_LOSS again.
        let next = poll(&mut b, wb).await;
        let report = compute(&next, wb);
        let shard = std::path::Path::new(&next.job_dir).join(&report.shards[0].path);
        let len = std::fs::metadata(&shard).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&shard)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
        assert_eq!(code(b.complete_task(report).await), Code::DataLoss);
        // The merged attempt's report again (its reply was lost): acknowledged, not merged
        // twice; the fenced attempt is still refused.
        let completed = cluster.events("completed");
        b.complete_task(compute(&task3, wb)).await.unwrap();
        assert_eq!(cluster.events("completed"), completed, "merged once");
        assert_eq!(code(a.complete_task(late).await), Code::FailedPrecondition);
        job
    });
    let job = 1;
    // A real worker finishes the job; the refused shards were never used.
    let _worker = cluster.start_worker("real", 1);
    cluster.wait_done(job, Duration::from_secs(120));
    assert_same_results(&want, &cluster.job_dir(job));
    assert_eq!(cluster.events("shards_refused"), 2);
    assert!(cluster.events("rejected_stale") >= 2);
}
