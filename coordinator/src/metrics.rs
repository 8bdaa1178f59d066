//! The Prometheus endpoint: `GET /metrics` in the text exposition format.
//!
//! Values are read from the core at scrape time, so they are never stale.

use crate::service::SharedCore;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

/// Renders the current metrics.
pub fn render(core: &SharedCore) -> String {
    let core = core.lock().unwrap_or_else(|p| p.into_inner());
    let mut registry = Registry::with_prefix("retro");
    let tasks = Family::<Vec<(String, String)>, Gauge>::default();
    for (state, n) in core.task_counts() {
        tasks
            .get_or_create(&vec![("state".to_string(), state)])
            .set(n as i64);
    }
    registry.register("tasks", "Tasks by state, over loaded jobs", tasks);
    let workers = Gauge::<i64>::default();
    workers.set(core.live_workers() as i64);
    registry.register("workers", "Workers heard from within one lease", workers);
    let rate = Gauge::<f64, AtomicU64>::default();
    rate.set(core.throughput());
    registry.register(
        "positions_per_second",
        "Solve throughput of running jobs",
        rate,
    );
    let totals = core.totals;
    for (name, help, value) in [
        (
            "bytes_read",
            "Bytes read by workers for merged tasks",
            totals.bytes_read,
        ),
        (
            "bytes_written",
            "Bytes written by workers for merged tasks",
            totals.bytes_written,
        ),
        (
            "tasks_completed",
            "Tasks merged since start",
            totals.tasks_completed,
        ),
        (
            "completions_refused",
            "Completions refused (stale, damaged, malformed)",
            totals.completions_refused,
        ),
    ] {
        let c = Counter::<u64>::default();
        c.inc_by(value);
        registry.register(name, help, c);
    }
    let mut text = String::new();
    encode(&mut text, &registry).expect("writing to a String cannot fail");
    text
}

/// Serves `/metrics` on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, core: SharedCore) -> std::io::Result<()> {
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let core = core.clone();
            async move {
                let body = tokio::task::spawn_blocking(move || render(&core))
                    .await
                    .unwrap_or_default();
                (
                    [(
                        axum::http::header::CONTENT_TYPE,
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )],
                    body,
                )
            }
        }),
    );
    axum::serve(listener, app).await
}
