//! `retro submit|status|cancel|jobs`: talking to a running coordinator.

use anyhow::{bail, Result};
use clap::Args;
use retro_proto as pb;
use retro_proto::job_api_client::JobApiClient;
use std::path::PathBuf;
use std::time::Duration;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

/// How to reach the coordinator.
#[derive(Args, Debug, Clone)]
pub struct Connection {
    /// The coordinator's URL.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:50051")]
    pub coordinator: String,
    /// File holding the cluster token [default: $RETRO_TOKEN].
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Connect with TLS (an https:// URL), trusting this CA certificate (PEM).
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
}

type Client = JobApiClient<InterceptedService<Channel, pb::auth::AttachToken>>;

impl Connection {
    /// Connects (fails with a clear message when nobody listens).
    pub async fn connect(&self) -> Result<Client> {
        let token = pb::read_token(self.token_file.as_deref()).map_err(anyhow::Error::msg)?;
        let ca = match &self.tls_ca {
            Some(path) => Some(retro_pipeline::process::read_file(path)?),
            None => None,
        };
        let channel = retro_worker::endpoint(&self.coordinator, ca.as_deref())?
            .timeout(Duration::from_secs(30))
            .connect()
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot reach the coordinator at {}: {}; check that it is running there (`retro coordinator`), or give its address with --coordinator URL",
                    self.coordinator,
                    retro_pipeline::process::error_text(&anyhow::Error::from(e))
                )
            })?;
        let token = pb::auth::AttachToken::new(&token).map_err(anyhow::Error::msg)?;
        Ok(JobApiClient::with_interceptor(channel, token)
            .max_decoding_message_size(pb::MAX_MESSAGE_BYTES))
    }
}

/// A refused call as a one-line error.
pub fn refused(what: &str, status: tonic::Status) -> anyhow::Error {
    anyhow::anyhow!("{what}: {:?}: {}", status.code(), status.message())
}

/// Prints a job's status: a summary line, then one line per stage that is not blocked.
/// Positions are counted as the published tables count them (as a solve's summary does).
pub fn print_status(s: &pb::JobStatus, all_tasks: bool) -> Result<()> {
    use crate::output::{duration, rate, thousands};
    let done = s.tasks.iter().filter(|t| t.state == "done").count();
    let solved = if s.state == "done" {
        format!("{} positions", thousands(s.positions_solved))
    } else {
        format!(
            "{:.1}% of the work, {} positions solved so far",
            100.0 * s.positions_done as f64 / s.positions.max(1) as f64,
            thousands(s.positions_solved)
        )
    };
    outln!(
        "job {}: {} — {} ({done}/{} stages done, {solved})",
        s.job_id,
        s.state,
        s.description,
        s.tasks.len(),
    );
    outln!("  directory: {}", s.job_dir);
    outln!("  elapsed: {}", duration(s.elapsed_seconds));
    if s.state == "running" {
        let eta = if s.eta_seconds >= 0.0 {
            duration(s.eta_seconds)
        } else {
            "unknown".into()
        };
        // The coordinator measures array slots per second; the finished stages tell how many
        // published positions a slot is worth.
        let slots_done: u64 = s
            .tasks
            .iter()
            .filter(|t| t.state == "done")
            .map(|t| t.positions)
            .sum();
        let throughput = if slots_done > 0 && s.positions_per_second > 0.0 {
            let per_slot = s.positions_solved as f64 / slots_done as f64;
            format!(
                "{} positions/s",
                rate(s.positions_per_second * per_slot.min(1.0))
            )
        } else {
            "unknown".into()
        };
        outln!(
            "  workers: {} live; throughput {throughput}; ETA {eta}",
            s.live_workers,
        );
    }
    if !s.note.is_empty() {
        outln!("  note: {}", s.note);
    }
    for t in &s.tasks {
        if all_tasks || t.state == "running" || t.state == "ready" {
            let detail = if t.state == "running" {
                format!(
                    " on worker {} (attempt {}), ply {}, {} of {} array slots",
                    t.worker_id,
                    t.attempt,
                    t.ply,
                    thousands(t.positions_done),
                    thousands(t.positions)
                )
            } else {
                String::new()
            };
            outln!(
                "{}",
                format!("  {:<10} {:<8}{detail}", t.name, t.state).trim_end()
            );
        }
    }
    Ok(())
}

/// Follows a job with a progress bar until it ends; fails unless it ends done.
pub async fn wait(client: &mut Client, job: u64) -> Result<pb::JobStatus> {
    let bar = crate::progress::positions_bar(false);
    loop {
        let s = client
            .status(pb::StatusRequest { job_id: job })
            .await
            .map_err(|s| refused("status", s))?
            .into_inner();
        crate::progress::show(&bar, &s, false);
        match s.state.as_str() {
            "running" => tokio::time::sleep(Duration::from_millis(250)).await,
            "done" => {
                crate::progress::finish(&bar);
                return Ok(s);
            }
            other => {
                crate::progress::finish(&bar);
                bail!("job {job} {other}: {}", s.note);
            }
        }
    }
}
