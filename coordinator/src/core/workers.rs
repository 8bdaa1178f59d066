//! The workers this coordinator knows.
//!
//! A worker registers once (checked against the protocol version, recorded in the database
//! with its memory budget) and is then known by its id. Every later call from it marks it
//! alive ([`Core::touch`]); a worker that registered with an earlier run of this coordinator
//! is welcomed back from the database, so a coordinator restart costs workers nothing. A
//! worker silent for one lease no longer counts as live; for four leases, it is forgotten
//! (see `leases.rs`).

use super::{Core, Refusal};
use retro_proto as pb;
use std::time::Instant;
use tracing::info;

/// A worker that registered with this coordinator process.
pub(super) struct LiveWorker {
    /// Its name, for logs.
    pub(super) name: String,
    /// When it was last heard from (any call).
    pub(super) last_seen: Instant,
    /// Its memory budget: it gets only tasks whose estimate fits.
    pub(super) memory_budget: u64,
}

impl Core {
    /// A worker joins.
    pub fn register(&mut self, req: &pb::RegisterRequest) -> Result<u64, Refusal> {
        if req.protocol_version != pb::PROTOCOL_VERSION {
            return Err(Refusal::FailedPrecondition(format!(
                "protocol version {} is not supported (this coordinator speaks {})",
                req.protocol_version,
                pb::PROTOCOL_VERSION
            )));
        }
        self.check_owner()?;
        let id = self.db.transaction(|tx| {
            let id = tx.insert_worker(&req.name, req.threads, req.memory_budget)?;
            tx.event(None, None, None, Some(id), "registered", &req.name)?;
            Ok(id)
        })?;
        info!(worker = id, name = %req.name, threads = req.threads, "worker registered");
        self.workers.insert(
            id,
            LiveWorker {
                name: req.name.clone(),
                last_seen: Instant::now(),
                memory_budget: req.memory_budget,
            },
        );
        Ok(id)
    }

    /// Marks a worker alive; fails if it never registered.
    pub(super) fn touch(&mut self, worker: u64) -> Result<(), Refusal> {
        if let Some(w) = self.workers.get_mut(&worker) {
            w.last_seen = Instant::now();
            return Ok(());
        }
        // Registered with an earlier run of this coordinator: welcome back.
        match self.db.read().worker(worker)? {
            Some((name, memory_budget)) => {
                self.workers.insert(
                    worker,
                    LiveWorker {
                        name,
                        last_seen: Instant::now(),
                        memory_budget,
                    },
                );
                Ok(())
            }
            None => Err(Refusal::NotFound(format!(
                "worker {worker} is not registered; register first"
            ))),
        }
    }

    /// Workers heard from within one lease.
    pub fn live_workers(&self) -> usize {
        let now = Instant::now();
        self.workers
            .values()
            .filter(|w| now.duration_since(w.last_seen) < self.config.lease)
            .count()
    }
}
