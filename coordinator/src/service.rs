//! The gRPC services: thin adapters from RPCs to [`Core`] methods.
//!
//! Handlers run on the tokio runtime; each takes the core's lock inside `spawn_blocking`
//! (database transactions and shard checks do I/O), so no RPC ever runs on a worker's compute
//! threads and no async thread blocks.

use crate::core::{Core, Refusal};
use retro_proto as pb;
use std::sync::{Arc, Mutex};
use tonic::{Request, Response, Status};
use tracing::{error, warn};

/// Shared handle to the coordinator's state.
pub type SharedCore = Arc<Mutex<Core>>;

/// Runs `f` on the core, off the async threads, and maps refusals to gRPC statuses.
async fn with_core<T: Send + 'static>(
    core: &SharedCore,
    f: impl FnOnce(&mut Core) -> Result<T, Refusal> + Send + 'static,
) -> Result<T, Status> {
    let core = core.clone();
    let result = tokio::task::spawn_blocking(move || {
        let mut core = core.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut core)
    })
    .await
    .map_err(|e| Status::internal(format!("coordinator task failed: {e}")))?;
    result.map_err(|refusal| match refusal {
        Refusal::NotFound(m) => Status::not_found(m),
        Refusal::InvalidArgument(m) => Status::invalid_argument(m),
        Refusal::FailedPrecondition(m) | Refusal::Deposed(m) => Status::failed_precondition(m),
        Refusal::DataLoss(m) => Status::data_loss(m),
        Refusal::Internal(e) => {
            let text = retro_pipeline::process::error_text(&e);
            error!("internal error: {text}");
            Status::internal(text)
        }
    })
}

/// How long a poll waits for work before answering "nothing now".
const LONG_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// The worker-facing service.
pub struct WorkerService {
    /// The coordinator's state.
    pub core: SharedCore,
    /// Woken whenever a task is completed or fails: what was blocked may be ready now.
    pub work_changed: Arc<tokio::sync::Notify>,
}

#[tonic::async_trait]
impl pb::worker_api_server::WorkerApi for WorkerService {
    async fn register(
        &self,
        request: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterReply>, Status> {
        let req = request.into_inner();
        let (id, (heartbeat, lease)) =
            with_core(&self.core, move |c| Ok((c.register(&req)?, c.timing()))).await?;
        Ok(Response::new(pb::RegisterReply {
            worker_id: id,
            heartbeat_ms: heartbeat.as_millis() as u64,
            lease_ms: lease.as_millis() as u64,
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatReply>, Status> {
        let req = request.into_inner();
        let abandon = with_core(&self.core, move |c| {
            c.heartbeat(req.worker_id, &req.running)
        })
        .await?;
        Ok(Response::new(pb::HeartbeatReply { abandon }))
    }

    async fn poll_task(
        &self,
        request: Request<pb::PollTaskRequest>,
    ) -> Result<Response<pb::PollTaskReply>, Status> {
        // A long poll: with nothing ready, wait (up to LONG_POLL) for a completion that may
        // make something ready, so that a worker picks up the next ply's steps at once
        // instead of after its retry delay.
        let req = request.into_inner();
        let deadline = tokio::time::Instant::now() + LONG_POLL;
        loop {
            let changed = self.work_changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let worker = req.worker_id;
            let task = with_core(&self.core, move |c| c.poll(worker)).await?;
            if task.is_some() || tokio::time::Instant::now() >= deadline {
                return Ok(Response::new(pb::PollTaskReply { task }));
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                let task = with_core(&self.core, move |c| c.poll(worker)).await?;
                return Ok(Response::new(pb::PollTaskReply { task }));
            }
        }
    }

    async fn complete_task(
        &self,
        request: Request<pb::CompleteTaskRequest>,
    ) -> Result<Response<pb::CompleteTaskReply>, Status> {
        let req = request.into_inner();
        let result = with_core(&self.core, move |c| c.complete(&req)).await;
        self.work_changed.notify_waiters();
        result?;
        Ok(Response::new(pb::CompleteTaskReply {}))
    }

    async fn fail_task(
        &self,
        request: Request<pb::FailTaskRequest>,
    ) -> Result<Response<pb::FailTaskReply>, Status> {
        let req = request.into_inner();
        let result = with_core(&self.core, move |c| c.fail(&req)).await;
        self.work_changed.notify_waiters();
        result?;
        Ok(Response::new(pb::FailTaskReply {}))
    }
}

/// The user-facing service.
pub struct JobService {
    /// The coordinator's state.
    pub core: SharedCore,
}

#[tonic::async_trait]
impl pb::job_api_server::JobApi for JobService {
    async fn submit(
        &self,
        request: Request<pb::SubmitRequest>,
    ) -> Result<Response<pb::SubmitReply>, Status> {
        let req = request.into_inner();
        let (job_id, job_dir) = with_core(&self.core, move |c| c.submit(&req)).await?;
        Ok(Response::new(pb::SubmitReply { job_id, job_dir }))
    }

    async fn status(
        &self,
        request: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::JobStatus>, Status> {
        let id = request.into_inner().job_id;
        Ok(Response::new(
            with_core(&self.core, move |c| c.status(id)).await?,
        ))
    }

    async fn cancel(
        &self,
        request: Request<pb::CancelRequest>,
    ) -> Result<Response<pb::CancelReply>, Status> {
        let id = request.into_inner().job_id;
        with_core(&self.core, move |c| c.cancel(id)).await?;
        Ok(Response::new(pb::CancelReply {}))
    }

    async fn list_jobs(
        &self,
        _request: Request<pb::ListJobsRequest>,
    ) -> Result<Response<pb::ListJobsReply>, Status> {
        let jobs = with_core(&self.core, |c| c.list()).await?;
        Ok(Response::new(pb::ListJobsReply { jobs }))
    }
}

/// The server-side token check: UNAUTHENTICATED (and a log line naming the peer) for a call
/// without the right token.
pub fn check_token(token: Arc<String>) -> impl tonic::service::Interceptor + Clone {
    move |request: Request<()>| {
        if pb::auth::carries(&request, &token) {
            Ok(request)
        } else {
            let peer = request
                .remote_addr()
                .map_or("unknown peer".to_string(), |a| a.to_string());
            warn!(%peer, "refused a call with a missing or wrong token");
            Err(Status::unauthenticated("missing or wrong token"))
        }
    }
}
