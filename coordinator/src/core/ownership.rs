//! One coordinator per data directory, through the database as well as the directory lock.
//!
//! The data directory's OS lock ([`retro_pipeline::lock`]) is the first guard. On a shared
//! filesystem whose `flock` does not reach across machines it may not hold, so the database
//! keeps an owner row too: the owning coordinator's pid and host and a heartbeat it renews
//! with every lease check. A coordinator starting on a database whose owner is another live
//! process (its heartbeat fresh, or on this host its pid alive) is refused; a stale owner (a
//! crashed coordinator) is taken over. A coordinator that finds its row taken by another stops
//! scheduling: every request is refused from then on, so two coordinators never schedule the
//! same job.

use super::{Core, Refusal};
use crate::db::{now_ms, Owner};
use anyhow::{bail, Result};
use tracing::error;

/// This process as an owner.
pub(super) fn this_process() -> Owner {
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "localhost".into());
    Owner {
        pid: std::process::id(),
        host: host.trim().to_string(),
        heartbeat_ms: now_ms(),
    }
}

/// Whether process `pid` of this host is alive.
fn alive(pid: u32) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}

impl Core {
    /// Claims the database for this coordinator, or refuses when another live one owns it.
    pub(super) fn claim_ownership(&mut self) -> Result<()> {
        let me = self.owner.clone();
        // A heartbeat older than this is a dead coordinator's (renewed every quarter lease).
        let stale_after = 4 * self.config.lease.as_millis() as i64 + 2_000;
        let data = self.config.data.display().to_string();
        self.db.transaction(|tx| {
            if let Some(other) = tx.owner()? {
                let same = other.pid == me.pid && other.host == me.host;
                let live = if other.host == me.host {
                    alive(other.pid)
                } else {
                    now_ms() - other.heartbeat_ms < stale_after
                };
                if !same && live {
                    bail!(
                        "{data}: its database is owned by another coordinator (pid {} on {}, heartbeat {} s ago); stop it first",
                        other.pid,
                        other.host,
                        (now_ms() - other.heartbeat_ms) / 1000
                    );
                }
            }
            tx.set_owner(&me)
        })
    }

    /// Renews this coordinator's heartbeat; on finding the database owned by another, stops
    /// scheduling for good (see the module documentation).
    pub(super) fn renew_ownership(&mut self) -> Result<()> {
        if self.deposed.is_some() {
            return Ok(());
        }
        if !self.db.read().renew_owner(&self.owner, now_ms())? {
            let owner = self.db.read().owner()?;
            let why = match owner {
                Some(o) => format!("pid {} on {}", o.pid, o.host),
                None => "nobody".into(),
            };
            let message = format!(
                "{}: the database is now owned by another coordinator ({why}); this one stops scheduling",
                self.config.data.display()
            );
            error!("{message}");
            self.deposed = Some(message);
        }
        Ok(())
    }

    /// Refuses every request once this coordinator has lost the database to another.
    pub(super) fn check_owner(&self) -> Result<(), Refusal> {
        match &self.deposed {
            Some(message) => Err(Refusal::FailedPrecondition(message.clone())),
            None => Ok(()),
        }
    }
}
