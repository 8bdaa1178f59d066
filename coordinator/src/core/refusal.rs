//! How a request is refused.
//!
//! A [`Core`](super::Core) method that serves a request fails with a [`Refusal`], never with a
//! bare error, because the worker acts on *why*: a stale report (`FailedPrecondition`) means
//! "drop your files, someone else owns the task"; a malformed one (`InvalidArgument`) changes
//! nothing and may be sent again; a damaged shard (`DataLoss`) sends the task back to the
//! queue. A coordinator whose database another took over refuses everything that would write
//! (`Deposed`). The service layer maps each kind to its gRPC status; only `Internal` is the
//! coordinator's own fault.

use crate::db::Deposed;
use crate::task_state::IllegalTransition;

/// A typed failure of a request, mapped to a gRPC status by the service layer.
#[derive(Debug)]
pub enum Refusal {
    /// Unknown job, worker or task.
    NotFound(String),
    /// The request is malformed.
    InvalidArgument(String),
    /// The request is well-formed but stale or out of turn (fencing).
    FailedPrecondition(String),
    /// A shard does not match its descriptor.
    DataLoss(String),
    /// Another coordinator owns the database now: this one writes nothing (see
    /// `ownership.rs`). Mapped to `FAILED_PRECONDITION` with the message naming the new owner.
    Deposed(String),
    /// The coordinator itself failed.
    Internal(anyhow::Error),
}

impl From<anyhow::Error> for Refusal {
    fn from(e: anyhow::Error) -> Refusal {
        // A transaction refused because the database changed owner is a refusal, not a fault.
        match e.downcast::<Deposed>() {
            Ok(deposed) => Refusal::Deposed(deposed.to_string()),
            Err(e) => Refusal::Internal(e),
        }
    }
}

impl From<IllegalTransition> for Refusal {
    fn from(e: IllegalTransition) -> Refusal {
        Refusal::Internal(e.into())
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotFound(m)
            | Refusal::InvalidArgument(m)
            | Refusal::FailedPrecondition(m)
            | Refusal::DataLoss(m)
            | Refusal::Deposed(m) => f.write_str(m),
            Refusal::Internal(e) => write!(f, "{}", retro_pipeline::process::error_text(e)),
        }
    }
}
