//! A worker told to stop stops at once, even while the coordinator holds its poll for a task.
//!
//! The real coordinator holds a poll up to half a second when nothing is ready (a long poll);
//! an embedded solve stops its workers when the job is done, and a worker that waited for the
//! held poll's answer kept the finished solve waiting (9% of BOARD25's wall time). Here a fake
//! coordinator never answers a poll at all: a worker that waits for the answer never stops,
//! and the test fails on its deadline.

use retro_proto as pb;
use retro_proto::worker_api_server::{WorkerApi, WorkerApiServer};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Notify};
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

/// A coordinator that registers workers and then holds every poll for ever.
struct SilentCoordinator {
    /// Signalled when a poll arrives (and is held).
    polled: Arc<Notify>,
}

#[tonic::async_trait]
impl WorkerApi for SilentCoordinator {
    async fn register(
        &self,
        _: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterReply>, Status> {
        Ok(Response::new(pb::RegisterReply {
            worker_id: 1,
            heartbeat_ms: 60_000,
            ..Default::default()
        }))
    }

    async fn heartbeat(
        &self,
        _: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatReply>, Status> {
        Ok(Response::new(pb::HeartbeatReply::default()))
    }

    async fn poll_task(
        &self,
        _: Request<pb::PollTaskRequest>,
    ) -> Result<Response<pb::PollTaskReply>, Status> {
        self.polled.notify_one();
        std::future::pending().await
    }

    async fn complete_task(
        &self,
        _: Request<pb::CompleteTaskRequest>,
    ) -> Result<Response<pb::CompleteTaskReply>, Status> {
        Err(Status::internal("this coordinator hands out no tasks"))
    }

    async fn fail_task(
        &self,
        _: Request<pb::FailTaskRequest>,
    ) -> Result<Response<pb::FailTaskReply>, Status> {
        Err(Status::internal("this coordinator hands out no tasks"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_stops_while_its_poll_is_held() {
    let incoming = TcpIncoming::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = incoming.local_addr().unwrap();
    let polled = Arc::new(Notify::new());
    let service = SilentCoordinator {
        polled: polled.clone(),
    };
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(WorkerApiServer::new(service))
            .serve_with_incoming(incoming),
    );
    let (stop_tx, stop) = watch::channel(false);
    let worker = tokio::spawn(retro_worker::run(
        retro_worker::WorkerOptions {
            coordinator: format!("http://{addr}"),
            token: "test-token-0123456789".into(),
            name: "stopping".into(),
            threads: 1,
            memory_budget: 1 << 28,
            tls_ca: None,
            scratch: None,
            object_cache: 1 << 20,
            open_game: retro_games::open,
            checkpoint_every: None,
        },
        stop,
    ));
    tokio::time::timeout(Duration::from_secs(30), polled.notified())
        .await
        .expect("the worker registers and polls for a task");
    stop_tx.send(true).unwrap();
    let stopped = tokio::time::timeout(Duration::from_secs(10), worker)
        .await
        .expect("the worker stops without the held poll's answer");
    stopped.unwrap().unwrap();
}
