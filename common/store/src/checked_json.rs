//! JSON records that carry a checksum of their own body: the manifest of an output directory,
//! and records derived from its tables (`extremes.json`).
//!
//! The file is `{"<key>": <record>, "checksum": "<xxh3 of the record's compact JSON>"}`,
//! written atomically. A reader re-serialises the record it parsed and compares the checksum,
//! so an edited or truncated file is reported as damaged, by name, instead of being believed.

use crate::{checksum, write_atomic, StoreError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

/// Writes `record` to `path` atomically, under `key`, with its checksum.
pub fn save<T: Serialize>(path: &Path, key: &str, record: &T) -> Result<(), StoreError> {
    let body = serde_json::to_vec(record).map_err(|e| not_json(path, e))?;
    let value = serde_json::to_value(record).map_err(|e| not_json(path, e))?;
    let mut envelope = serde_json::Map::new();
    envelope.insert(key.to_string(), value);
    envelope.insert(
        "checksum".to_string(),
        format!("{:016x}", checksum(&body)).into(),
    );
    let text = serde_json::to_string_pretty(&envelope).map_err(|e| not_json(path, e))?;
    write_atomic(path, text.as_bytes())
}

/// Reads the record saved under `key` at `path` and checks its checksum; `Ok(None)` if there is
/// no such file. `what` names the record in errors ("manifest").
pub fn load<T: Serialize + DeserializeOwned>(
    path: &Path,
    key: &str,
    what: &str,
) -> Result<Option<T>, StoreError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io("read", path, e)),
    };
    let not_record = |e: String| StoreError::damaged(path, format!("not a retro {what}: {e}"));
    let mut envelope: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&bytes).map_err(|e| not_record(e.to_string()))?;
    let stored = envelope
        .get("checksum")
        .and_then(|c| c.as_str())
        .map(str::to_string)
        .ok_or_else(|| not_record("no checksum".into()))?;
    let value = envelope
        .remove(key)
        .ok_or_else(|| not_record(format!("no \"{key}\"")))?;
    let record: T = serde_json::from_value(value).map_err(|e| not_record(e.to_string()))?;
    let body = serde_json::to_vec(&record).map_err(|e| not_json(path, e))?;
    if format!("{:016x}", checksum(&body)) != stored {
        return Err(StoreError::damaged(
            path,
            format!("{what} checksum mismatch"),
        ));
    }
    Ok(Some(record))
}

fn not_json(path: &Path, e: serde_json::Error) -> StoreError {
    StoreError::damaged(path, format!("cannot be written as JSON: {e}"))
}
