//! The gRPC API of a retro cluster (`retro.proto`): messages, client stubs and server traits.
//!
//! [`PROTOCOL_VERSION`] is checked when a worker registers; bump it whenever a message changes
//! meaning, so that mismatched binaries refuse to work together instead of corrupting a job.

#![allow(missing_docs)]

tonic::include_proto!("retro.v1");

/// Version of the worker protocol; a worker with another version is refused at registration.
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest message either side accepts (bytes). Task and completion messages carry only shard
/// descriptors (paths and checksums, never table contents), so this is generous.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;
