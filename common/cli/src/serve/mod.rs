//! `retro serve`: solved directories explored over HTTP, a JSON probe API and a web viewer.
//!
//! The server names no game: each directory's explorer (from the registry) parses positions,
//! probes them, draws them and reads its game's viewer parameters (Sixteen Musashi's
//! published `size=25&turn=brown&init=...`). Values are read from the compressed tables
//! through their block index, with one bounded cache of decompressed blocks shared by every
//! directory and request; tables are never loaded whole.
//!
//! * [`served`]: the opened directories and how a request picks one.
//! * [`answers`]: recent probe answers, kept whole.
//! * [`api`]: the routes and their JSON errors.
//! * [`assets`]: the web page, embedded in the binary.
//! * [`load`]: `retro bench-serve`, a bounded loopback load generator.

pub mod answers;
pub mod api;
pub mod assets;
pub mod load;
pub mod served;

use anyhow::{Context, Result};
use served::Served;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// Default address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// Opens `dirs` and serves them on `listen` until the process is stopped. Prints the address
/// actually bound (port 0 picks a free one) on standard output, so that a caller can read it.
pub fn run(dirs: &[PathBuf], listen: &str, cache_bytes: u64, answer_bytes: u64) -> Result<()> {
    let served = Arc::new(Served::open(dirs, cache_bytes, answer_bytes)?);
    let runtime = crate::runtime()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen}"))?;
        let addr: SocketAddr = listener.local_addr()?;
        outln!("serving {} on http://{addr}/", served.describe());
        axum::serve(listener, api::router(served))
            .await
            .context("server stopped")
    })
}
