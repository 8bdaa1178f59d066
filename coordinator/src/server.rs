//! Starting and stopping a coordinator: gRPC server, lease reaper, metrics endpoint.

use crate::core::{Core, CoreConfig};
use crate::service::{check_token, JobService, SharedCore, WorkerService};
use anyhow::{Context, Result};
use retro_proto as pb;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Identity, ServerTlsConfig};
use tracing::{error, info};

/// What a coordinator needs to start.
pub struct CoordinatorOptions {
    /// State and timing.
    pub core: CoreConfig,
    /// gRPC address (port 0 picks a free port).
    pub listen: SocketAddr,
    /// The token every call must carry.
    pub token: String,
    /// Address of the Prometheus endpoint, if any.
    pub metrics: Option<SocketAddr>,
    /// Serve TLS with this certificate chain and private key (PEM), instead of plain text.
    pub tls: Option<(Vec<u8>, Vec<u8>)>,
}

/// A running coordinator.
pub struct RunningCoordinator {
    /// The gRPC address it listens on.
    pub addr: SocketAddr,
    /// Its state (for an embedded solve's progress bar).
    pub core: SharedCore,
    stop: Option<oneshot::Sender<()>>,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
    background: Vec<JoinHandle<()>>,
}

/// Opens the data directory (resuming its jobs) and starts serving.
pub async fn start(options: CoordinatorOptions) -> Result<RunningCoordinator> {
    let config = options.core.clone();
    let core = tokio::task::spawn_blocking(move || Core::open(config))
        .await
        .context("coordinator start-up failed")??;
    start_with(core, options).await
}

/// Starts serving an already opened core.
pub async fn start_with(core: Core, options: CoordinatorOptions) -> Result<RunningCoordinator> {
    let lease = options.core.lease;
    let core: SharedCore = Arc::new(Mutex::new(core));
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let addr = listener.local_addr().context("listener address")?;
    let token = Arc::new(options.token);
    let workers = InterceptedService::new(
        pb::worker_api_server::WorkerApiServer::new(WorkerService {
            core: core.clone(),
            work_changed: Arc::new(tokio::sync::Notify::new()),
        })
        .max_decoding_message_size(pb::MAX_MESSAGE_BYTES),
        check_token(token.clone()),
    );
    let jobs = InterceptedService::new(
        pb::job_api_server::JobApiServer::new(JobService { core: core.clone() })
            .max_decoding_message_size(pb::MAX_MESSAGE_BYTES),
        check_token(token),
    );
    let (stop, stopped) = oneshot::channel::<()>();
    let mut builder = tonic::transport::Server::builder();
    if let Some((cert, key)) = &options.tls {
        builder = builder
            .tls_config(ServerTlsConfig::new().identity(Identity::from_pem(cert, key)))
            .context("TLS certificate or key rejected")?;
    }
    let server = tokio::spawn(
        builder
            .add_service(workers)
            .add_service(jobs)
            .serve_with_incoming_shutdown(
                // No Nagle delay on accepted connections: a task message must not wait 40 ms
                // for the worker's delayed ACK (it did: every step of a split stage took 40 ms
                // longer than its work).
                tokio_stream::StreamExt::map(
                    tokio_stream::wrappers::TcpListenerStream::new(listener),
                    |conn| {
                        if let Ok(c) = &conn {
                            let _ = c.set_nodelay(true);
                        }
                        conn
                    },
                ),
                async {
                    let _ = stopped.await;
                },
            ),
    );
    info!(%addr, tls = options.tls.is_some(), "coordinator listening");
    let mut background = Vec::new();
    let reaper_core = core.clone();
    background.push(tokio::spawn(async move {
        let mut tick = tokio::time::interval(lease / 4);
        loop {
            tick.tick().await;
            let c = reaper_core.clone();
            let result = tokio::task::spawn_blocking(move || {
                let mut core = c.lock().unwrap_or_else(|p| p.into_inner());
                let outcome = core.reap();
                core.checked(&outcome);
                outcome
            })
            .await;
            if let Ok(Err(e)) = result {
                error!("lease check failed: {e:#}");
            }
        }
    }));
    if let Some(m) = options.metrics {
        let listener = tokio::net::TcpListener::bind(m)
            .await
            .with_context(|| format!("cannot listen on {m} for metrics"))?;
        let metrics_addr = listener.local_addr().context("metrics address")?;
        info!(addr = %metrics_addr, "metrics at /metrics");
        let c = core.clone();
        background.push(tokio::spawn(async move {
            if let Err(e) = crate::metrics::serve(listener, c).await {
                error!("metrics endpoint failed: {e}");
            }
        }));
    }
    Ok(RunningCoordinator {
        addr,
        core,
        stop: Some(stop),
        server,
        background,
    })
}

impl RunningCoordinator {
    /// Stops serving and waits for the server to end.
    pub async fn shutdown(mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        for b in &self.background {
            b.abort();
        }
        (&mut self.server)
            .await
            .context("coordinator server task")?
            .context("coordinator server")?;
        Ok(())
    }

    /// Waits until the server ends (it only ends on error or shutdown).
    pub async fn wait(&mut self) -> Result<()> {
        (&mut self.server)
            .await
            .context("coordinator server task")?
            .context("coordinator server")?;
        Ok(())
    }
}
