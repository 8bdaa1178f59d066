//! Waiting for `object_store`'s futures from blocking code.

use anyhow::{anyhow, Result};
use std::future::Future;

/// A small runtime of its own on which requests run while the calling thread waits. Calling
/// threads may be plain threads or threads of another runtime (the worker's): the request is
/// spawned here and its answer received over a channel, so no runtime is ever entered twice.
pub struct Waiter {
    runtime: Option<tokio::runtime::Runtime>,
}

impl Waiter {
    /// A runtime with two threads (requests of one storage are few and large).
    pub fn new() -> Result<Waiter> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("retro-objects")
            .enable_all()
            .build()
            .map_err(|e| anyhow!("cannot start the object store's runtime: {e}"))?;
        Ok(Waiter {
            runtime: Some(runtime),
        })
    }

    /// Runs `request` to completion and returns its result.
    pub fn wait<T, E, F>(&self, request: F) -> Result<T>
    where
        F: Future<Output = Result<T, E>> + Send + 'static,
        T: Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let (tx, rx) = std::sync::mpsc::channel();
        let runtime = self.runtime.as_ref().expect("the runtime lives until drop");
        runtime.spawn(async move {
            let _ = tx.send(request.await);
        });
        match rx.recv() {
            Ok(answer) => Ok(answer?),
            Err(_) => Err(anyhow!("an object store request was abandoned")),
        }
    }
}

impl Drop for Waiter {
    /// Shuts the runtime down without waiting (dropping it inside another runtime's task would
    /// otherwise panic).
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
