//! The gRPC API of a retro cluster (`retro.proto`): messages, client stubs and server traits.
//!
//! [`PROTOCOL_VERSION`] is checked when a worker registers; bump it whenever a message changes
//! meaning, so that mismatched binaries refuse to work together instead of corrupting a job.
//!
//! Besides the generated code, this crate holds the conversions between the wire messages and
//! the types both sides of the wire share (a manifest's [`retro_store::SliceRecord`] and its
//! [`ShardDescriptor`]), so that the coordinator and the workers convert the same way without
//! depending on each other.

#![allow(missing_docs)]

tonic::include_proto!("retro.v1");

/// Version of the worker protocol; a worker with another version is refused at registration.
pub const PROTOCOL_VERSION: u32 = 2;

/// Largest message either side accepts (bytes). Task and completion messages carry only shard
/// descriptors (paths and checksums, never table contents), so this is generous.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Attaching and checking the shared-secret token that every RPC carries.
pub mod auth {
    use tonic::metadata::MetadataValue;
    use tonic::{Request, Status};

    /// The metadata key carrying the token.
    pub const HEADER: &str = "authorization";

    /// A client interceptor adding `authorization: Bearer <token>` to every call.
    #[derive(Clone)]
    pub struct AttachToken {
        value: MetadataValue<tonic::metadata::Ascii>,
    }

    impl AttachToken {
        /// Fails if the token is not printable ASCII.
        pub fn new(token: &str) -> Result<AttachToken, String> {
            let value = format!("Bearer {token}")
                .parse()
                .map_err(|_| "the token must be printable ASCII".to_string())?;
            Ok(AttachToken { value })
        }
    }

    impl tonic::service::Interceptor for AttachToken {
        fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
            request.metadata_mut().insert(HEADER, self.value.clone());
            Ok(request)
        }
    }

    /// Whether `request` carries exactly `token` (compared in constant time).
    pub fn carries<T>(request: &Request<T>, token: &str) -> bool {
        let Some(given) = request.metadata().get(HEADER) else {
            return false;
        };
        let given = given.as_bytes();
        let expected = format!("Bearer {token}");
        let expected = expected.as_bytes();
        given.len() == expected.len()
            && given
                .iter()
                .zip(expected)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

/// Reads the cluster token: from `file` if given, else from the `RETRO_TOKEN` environment
/// variable. Surrounding whitespace is ignored; an empty token is refused.
pub fn read_token(file: Option<&std::path::Path>) -> Result<String, String> {
    let token = match file {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read token file {}: {e}", path.display()))?,
        None => std::env::var("RETRO_TOKEN").map_err(|_| {
            "no token: give --token-file FILE or set RETRO_TOKEN (the coordinator's token)"
                .to_string()
        })?,
    };
    let token = token.trim().to_string();
    if token.is_empty() {
        return Err("the token is empty".into());
    }
    Ok(token)
}

/// A final table's manifest record as the descriptor that names it on the wire: the coordinator
/// sends these as a task's inputs, and a worker reports its shards with them (with its own
/// shard path in place of the table's file name). The cost is left unset: only a completion
/// reports one.
impl From<&retro_store::SliceRecord> for ShardDescriptor {
    fn from(r: &retro_store::SliceRecord) -> ShardDescriptor {
        ShardDescriptor {
            slice_id: r.id,
            path: r.file.clone(),
            bytes: r.bytes,
            checksum: r.checksum.clone(),
            positions: r.positions,
            histograms: r
                .histograms
                .iter()
                .map(|h| Histogram {
                    counts: h.iter().map(|(&v, &n)| (v as u32, n)).collect(),
                })
                .collect(),
            cost: None,
        }
    }
}
