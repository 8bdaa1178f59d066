//! The manifest of an output directory.
//!
//! `manifest.json` says what the directory holds: which game and definition (e.g. the board
//! file), how many stages there are, and for every finished slice its table file, size,
//! checksum and value histogram. It is rewritten atomically after every finished stage, so it
//! is also the record a resumed solve starts from. The file carries a checksum of its own body.

use crate::{checked_json, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The manifest's file name inside an output directory.
pub const MANIFEST: &str = "manifest.json";
/// The format tag written into every manifest.
pub const FORMAT: &str = "retro-manifest/1";

/// What an output directory holds.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The game's name ("musashi").
    pub game: String,
    /// The game's definition (for Musashi: board name, board file text, brown limit); a solve
    /// continues in a directory only if the definition is identical.
    pub definition: serde_json::Value,
    /// Number of stages of the full solve.
    pub stages: usize,
    /// Finished slices, in solve order.
    pub slices: Vec<SliceRecord>,
    /// Whether every stage is finished.
    pub complete: bool,
    /// Where the tables are when not in the directory beside the manifest: an object store
    /// location (`s3://bucket/prefix`). Absent for the usual job directory, whose manifests
    /// are unchanged by the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<String>,
}

/// One finished slice.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct SliceRecord {
    /// The game's slice id.
    pub id: u32,
    /// The stage it belongs to.
    pub stage: usize,
    /// Human-readable name ("browns=12 black=22").
    pub name: String,
    /// Table file name, relative to the directory.
    pub file: String,
    /// Array slots per side (canonical or not).
    pub positions: u64,
    /// File size in bytes.
    pub bytes: u64,
    /// XXH3 of the whole file, hex.
    pub checksum: String,
    /// Canonical positions by value, per section (attacker to move, defender to move).
    pub histograms: Vec<BTreeMap<u8, u64>>,
}

impl Manifest {
    /// Reads `dir/manifest.json`; `Ok(None)` if there is none.
    pub fn load(dir: &Path) -> Result<Option<Manifest>, StoreError> {
        let path = dir.join(MANIFEST);
        let Some(manifest) = checked_json::load::<Manifest>(&path, "manifest", "manifest")? else {
            return Ok(None);
        };
        if manifest.format != FORMAT {
            return Err(StoreError::damaged(
                &path,
                format!("unknown format '{}'", manifest.format),
            ));
        }
        Ok(Some(manifest))
    }

    /// Writes `dir/manifest.json` atomically.
    pub fn save(&self, dir: &Path) -> Result<(), StoreError> {
        checked_json::save(&dir.join(MANIFEST), "manifest", self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_tamper_detection() {
        let dir = std::env::temp_dir().join(format!("retro-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(Manifest::load(&dir).unwrap().is_none());
        let m = Manifest {
            format: FORMAT.into(),
            game: "g".into(),
            definition: serde_json::json!({"board": "B"}),
            stages: 2,
            slices: vec![],
            complete: false,
            storage: None,
        };
        m.save(&dir).unwrap();
        assert_eq!(Manifest::load(&dir).unwrap().unwrap(), m);
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("\"stages\": 2", "\"stages\": 3");
        std::fs::write(&path, text).unwrap();
        let e = Manifest::load(&dir).unwrap_err().to_string();
        assert!(e.contains("manifest checksum mismatch"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
