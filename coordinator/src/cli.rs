//! The `coordinator` command (also `retro coordinator`).

use crate::core::CoreConfig;
use crate::server::{start, CoordinatorOptions};
use anyhow::{Context, Result};
use clap::Args;
use retro_pipeline::process::read_file;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tracing::info;

/// The usage examples ending `coordinator --help` and `retro coordinator --help`.
pub const EXAMPLES: &str = "Examples:\n  coordinator --data /srv/retro --listen 0.0.0.0:50051 --token-file token --metrics 127.0.0.1:9100\n  retro coordinator --data /srv/retro   (loopback only, token from RETRO_TOKEN)";

/// Flags of the coordinator.
#[derive(Args, Debug, Clone)]
pub struct CoordinatorArgs {
    /// Address to listen on for workers and clients (loopback unless told otherwise).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,
    /// Data directory: the job database and the job directories (shared with the workers).
    #[arg(long, value_name = "DIR")]
    pub data: PathBuf,
    /// File holding the cluster token [default: $RETRO_TOKEN, else a new token written to
    /// DIR/token].
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Serve Prometheus metrics at http://ADDR/metrics.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
    /// Serve TLS with this certificate chain (PEM); needs --tls-key. Workers and clients then
    /// connect to https://... with --tls-ca.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Milliseconds a worker may stay silent before its tasks go to another worker.
    #[arg(long, value_name = "MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(100..))]
    pub lease_ms: u64,
    /// Split stages of at least this many positions (array slots, both sides to move) into
    /// one task per slice and ply, so that any number of workers share one stage; smaller
    /// stages are one task each.
    #[arg(long, value_name = "POSITIONS", default_value_t = crate::core::DEFAULT_SPLIT_ABOVE)]
    pub split_above: u64,
}

/// The token: from the file, the environment, or freshly made and saved in the data directory
/// (readable by the owner only) so that workers and clients on this machine can use it.
pub fn coordinator_token(file: Option<&Path>, data: &Path) -> Result<String> {
    if file.is_some() || std::env::var_os("RETRO_TOKEN").is_some() {
        return retro_proto::read_token(file).map_err(anyhow::Error::msg);
    }
    let path = data.join("token");
    if let Ok(token) = std::fs::read_to_string(&path) {
        return Ok(token.trim().to_string());
    }
    std::fs::create_dir_all(data)
        .with_context(|| format!("cannot create data directory {}", data.display()))?;
    let token: String = {
        use rand::Rng;
        let mut rng = rand::thread_rng();
        (0..32)
            .map(|_| char::from(b"0123456789abcdef"[rng.gen_range(0..16)]))
            .collect()
    };
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        f.write_all(token.as_bytes())
            .and_then(|_| f.sync_all())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    info!(file = %path.display(), "new cluster token written (give it to workers with --token-file)");
    Ok(token)
}

/// Runs a coordinator until Ctrl-C or SIGTERM.
pub async fn run(args: CoordinatorArgs, open_game: retro_pipeline::OpenGame) -> Result<()> {
    let token = coordinator_token(args.token_file.as_deref(), &args.data)?;
    let lease = Duration::from_millis(args.lease_ms);
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some((read_file(cert)?, read_file(key)?)),
        _ => None,
    };
    let mut running = start(CoordinatorOptions {
        core: CoreConfig {
            data: args.data.clone(),
            lease,
            heartbeat: (lease / 4).max(Duration::from_millis(25)),
            max_failures: 5,
            split_above: args.split_above,
            open_game,
            workers_in_process: false,
        },
        listen: args.listen,
        token,
        metrics: args.metrics,
        tls,
    })
    .await?;
    println!("coordinator listening on {}", running.addr);
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot watch SIGTERM")?;
    tokio::select! {
        r = running.wait() => r,
        _ = tokio::signal::ctrl_c() => { info!("interrupted; stopping"); running.shutdown().await }
        _ = term.recv() => { info!("terminated; stopping"); running.shutdown().await }
    }
}
