//! One coordinator per data directory, through the database as well as the directory lock.
//!
//! The data directory's OS lock ([`retro_pipeline::lock`]) is the first guard. On a shared
//! filesystem whose `flock` does not reach across machines it may not hold, so the database
//! keeps an owner row too: the owning coordinator's pid and host and a heartbeat it renews
//! with every lease check. A coordinator starting on a database whose owner is another live
//! process (its heartbeat fresh, or on this host its pid alive) is refused; a stale owner (a
//! crashed coordinator) is taken over.
//!
//! A coordinator whose row another has taken is *deposed*, and writes nothing from then on:
//!
//! * every transaction checks the owner row first, inside the transaction (which holds the
//!   database's write lock), and fails with [`Deposed`] when it names another
//!   ([`crate::db::Db::guard`]) — so even a coordinator that stalled (stopped, swapped out)
//!   and resumes in the middle of a request cannot hand out a task or re-queue one;
//! * every request that writes (register, poll, heartbeat, complete, fail, submit, cancel) and
//!   the lease reaper check the row before they start ([`Core::check_owner`]), so nothing is
//!   written to the job directories either, and the request is refused with
//!   [`Refusal::Deposed`] (gRPC `FAILED_PRECONDITION` naming the new owner);
//! * read-only requests (status, list) are still answered.
//!
//! So two coordinators never schedule the same job.

use super::{Core, Refusal};
use crate::db::{now_ms, Db, Deposed, Owner};
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
    /// From then on every transaction checks that this coordinator still owns it.
    pub(super) fn claim_ownership(&mut self) -> Result<()> {
        let me = self.owner.clone();
        // A heartbeat older than this is a dead coordinator's (renewed every quarter lease).
        let stale_after = 4 * self.config.lease.as_millis() as i64 + 2_000;
        let data = self.config.data.display().to_string();
        self.db.transaction(|tx| {
            if let Some(other) = tx.owner()? {
                let live = if other.host == me.host {
                    alive(other.pid)
                } else {
                    now_ms() - other.heartbeat_ms < stale_after
                };
                if !Db::same_owner(&other, &me) && live {
                    bail!(
                        "{data}: its database is owned by another coordinator (pid {} on {}, heartbeat {} s ago); stop it first",
                        other.pid,
                        other.host,
                        (now_ms() - other.heartbeat_ms) / 1000
                    );
                }
            }
            tx.set_owner(&me)
        })?;
        self.db.guard(&me);
        Ok(())
    }

    /// Renews this coordinator's heartbeat; refuses (and stops this coordinator for good) on
    /// finding the database owned by another (see the module documentation).
    pub(super) fn renew_ownership(&mut self) -> Result<(), Refusal> {
        self.check_owner()?;
        // The update names this coordinator: it changes nothing if another took the row.
        if !self.db.renew_owner(&self.owner, now_ms())? {
            self.check_owner()?;
        }
        Ok(())
    }

    /// Refuses a request that would write once this coordinator has lost the database to
    /// another. The owner row is read each time (a cached "still the owner" could be stale
    /// after a stall); being deposed is for good.
    pub(super) fn check_owner(&mut self) -> Result<(), Refusal> {
        if let Some(deposed) = &self.deposed {
            return Err(Refusal::Deposed(deposed.to_string()));
        }
        match self.db.owned() {
            Ok(()) => Ok(()),
            Err(e) => match e.downcast::<Deposed>() {
                Ok(deposed) => {
                    error!("{deposed}");
                    let refusal = Refusal::Deposed(deposed.to_string());
                    self.deposed = Some(deposed);
                    Err(refusal)
                }
                Err(e) => Err(Refusal::Internal(e)),
            },
        }
    }
}
