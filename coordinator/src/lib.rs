//! The retro coordinator.
//!
//! It splits each job into tasks (one per stage: a brown count and all its black points),
//! gives ready tasks to workers under leases, takes them back from silent workers, fences late
//! reports with attempt numbers, verifies and merges result shards into the final tables, and
//! keeps all of it in an SQLite database so that a restarted coordinator continues exactly where
//! it stopped.
//!
//! * [`db`]: the durable state (schema and statements).
//! * [`task_state`]: a task's states and transitions.
//! * [`job_state`]: a job's states.
//! * [`core`]: jobs, tasks, leases and workers; one method per request, one file per concept.
//! * [`merge`]: shard verification, promotion into tables, manifest and count table.
//! * [`steps`]: stages split into one task per slice and ply (supersteps).
//! * [`service`]: the gRPC services and the token check.
//! * [`metrics`]: the Prometheus endpoint.
//! * [`server`]: start and stop.
//! * [`cli`]: the `coordinator` command's flags.

#![warn(missing_docs)]

pub mod cli;
pub mod core;
pub mod db;
pub mod job_state;
pub mod merge;
pub mod metrics;
pub mod server;
pub mod service;
pub mod steps;
pub mod task_state;

pub use crate::core::{Core, CoreConfig};
pub use server::{start, CoordinatorOptions, RunningCoordinator};
