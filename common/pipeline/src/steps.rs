//! The intermediate files of a stage solved in supersteps
//! ([`retro_engine::superstep`]): each step writes the slice's new state and the messages it
//! sends into a directory of its own, `steps/stageNN/tryT-slotSS-plyPPP-attemptA/`, and the
//! coordinator records the files of the attempt it accepts. The try counts the times the
//! stage was split (a damaged step file starts the stage again), so no two attempts of any
//! step ever share a directory: a late worker of an earlier try cannot touch a later one's
//! files. Both kinds are table files
//! (zstd blocks, each with its checksum, and a checksummed index), so a damaged or truncated
//! file is reported by name; readers also check the whole file against the checksum the
//! coordinator recorded.
//!
//! A message's keys are sorted, so they are stored as LEB128 varints of their differences:
//! about one or two bytes per key before compression.

use crate::storage::Storage;
use anyhow::{bail, Context, Result};
use retro_engine::gaps::{decode_gaps, encode_gaps};
use retro_engine::superstep::{SlotState, STATE_SECTIONS};
use retro_store::TableWriter;

/// The directory of all step files of a stage.
pub fn stage_steps_dir(stage: usize) -> String {
    format!("steps/stage{stage:02}")
}

/// Where attempt `attempt` of the step (`slot`, `ply`) of try `try_` of `stage` writes its
/// files (ply 0 is the finish, which writes the slice's shard).
pub fn step_dir(stage: usize, try_: u32, slot: u32, ply: u32, attempt: u32) -> String {
    let step = match ply {
        0 => "finish".to_string(),
        p => format!("ply{p:03}"),
    };
    format!(
        "{}/try{try_}-slot{slot:02}-{step}-attempt{attempt}",
        stage_steps_dir(stage)
    )
}

/// A file a step wrote: where, how long, and its XXH3 (16 hex digits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenFile {
    /// Path relative to the job directory.
    pub path: String,
    /// Length in bytes.
    pub bytes: u64,
    /// XXH3-64 of the whole file.
    pub checksum: String,
}

/// Stores `bytes` at `path` (atomically) and describes the file.
fn put(storage: &dyn Storage, path: String, bytes: &[u8]) -> Result<WrittenFile> {
    storage.put(&path, bytes)?;
    Ok(WrittenFile {
        bytes: bytes.len() as u64,
        checksum: format!("{:016x}", retro_store::checksum(bytes)),
        path,
    })
}

/// Checks the whole file at `path` against what the coordinator recorded.
fn verify(storage: &dyn Storage, path: &str, bytes: u64, checksum: &str) -> Result<()> {
    let (sum, len) = storage.checksum(path)?;
    if len != bytes || format!("{sum:016x}") != checksum {
        bail!(
            "{} is damaged: {len} bytes with checksum {sum:016x}, recorded {bytes} bytes with {checksum}",
            storage.describe(path)
        );
    }
    Ok(())
}

/// Writes a slice's state into `dir` (zstd level 1: a state is written once per step and read
/// once).
pub fn write_state(
    storage: &dyn Storage,
    dir: &str,
    label: &str,
    state: &SlotState,
) -> Result<WrittenFile> {
    let bytes = TableWriter::encode(label, &state.sections(), 1);
    put(storage, format!("{dir}/state.tbl"), &bytes)
}

/// Reads the state of a slice of `len` positions, checking it against the recorded size and
/// checksum and every block against its own.
pub fn read_state(
    storage: &dyn Storage,
    path: &str,
    bytes: u64,
    checksum: &str,
    len: u64,
) -> Result<SlotState> {
    verify(storage, path, bytes, checksum)?;
    let table = storage.open_table(path)?;
    let names = table.section_names();
    if names != STATE_SECTIONS {
        bail!("{}: not a slice state ({names:?})", storage.describe(path));
    }
    let read = |i: usize| {
        table
            .read_section(i)
            .with_context(|| storage.describe(path))
    };
    let sections = [read(0)?, read(1)?, read(2)?, read(3)?];
    SlotState::from_sections(len, sections)
        .map_err(|e| anyhow::anyhow!("{}: {e}", storage.describe(path)))
}

/// Writes the keys a step sends to slot `to` at ply `ply` into `dir`.
pub fn write_message(
    storage: &dyn Storage,
    dir: &str,
    ply: u32,
    to: u32,
    keys: &[Vec<u64>; 2],
) -> Result<WrittenFile> {
    let label = format!("ply {ply} to slot {to}");
    let bytes = TableWriter::encode(
        &label,
        &[
            (MESSAGE_SECTIONS[0], &encode_keys(&keys[0])),
            (MESSAGE_SECTIONS[1], &encode_keys(&keys[1])),
        ],
        1,
    );
    put(storage, format!("{dir}/ply{ply:03}-to{to:02}.msg"), &bytes)
}

/// The sections of a message file: the keys addressed to positions with the first and with
/// the second side to move.
pub const MESSAGE_SECTIONS: [&str; 2] = ["keys first", "keys second"];

/// Reads a message file's keys (per side to move), checking the file as [`read_state`] does.
pub fn read_message(
    storage: &dyn Storage,
    path: &str,
    bytes: u64,
    checksum: &str,
) -> Result<[Vec<u64>; 2]> {
    verify(storage, path, bytes, checksum)?;
    let table = storage.open_table(path)?;
    let names = table.section_names();
    if names != MESSAGE_SECTIONS {
        bail!("{}: not a message ({names:?})", storage.describe(path));
    }
    let read = |i: usize| {
        let raw = table
            .read_section(i)
            .with_context(|| storage.describe(path))?;
        decode_keys(&raw).with_context(|| format!("{}: damaged keys", storage.describe(path)))
    };
    Ok([read(0)?, read(1)?])
}

/// Sorted keys as LEB128 varints of their differences (the first from zero), coded by
/// [`retro_engine::gaps`].
pub fn encode_keys(keys: &[u64]) -> Vec<u8> {
    encode_key_iter(keys.iter().copied(), keys.len())
}

/// [`encode_keys`] of keys as they are read (`len` of them, for the output's first size):
/// a checkpoint encodes a list's 4-byte keys widening each on the way, without an 8-byte copy.
pub fn encode_key_iter(keys: impl Iterator<Item = u64>, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len * 2);
    encode_gaps(keys, &mut out);
    out
}

/// The keys [`encode_keys`] encoded; fails on a truncated or overlong varint.
pub fn decode_keys(bytes: &[u8]) -> Result<Vec<u64>> {
    let mut keys = Vec::with_capacity(bytes.len());
    decode_gaps(bytes, |key| keys.push(key))?;
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LocalStorage;

    #[test]
    fn keys_round_trip_and_cut_varints_are_refused() {
        let keys = vec![0, 0, 1, 127, 128, 300, 1 << 40, u64::MAX - 1, u64::MAX];
        let bytes = encode_keys(&keys);
        assert_eq!(decode_keys(&bytes).unwrap(), keys);
        let long_last = encode_keys(&[5, 1 << 40]);
        assert!(decode_keys(&long_last[..long_last.len() - 1]).is_err());
        assert!(decode_keys(&[0xff; 11]).is_err());
    }

    #[test]
    fn damaged_step_files_are_reported_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::new(dir.path());
        let keys = [(0..10_000).map(|k| k * 3).collect(), vec![7, 9]];
        let f = write_message(&storage, "steps/stage01/x", 3, 2, &keys).unwrap();
        assert_eq!(
            read_message(&storage, &f.path, f.bytes, &f.checksum).unwrap(),
            keys
        );
        let path = dir.path().join(&f.path);
        let mut raw = std::fs::read(&path).unwrap();
        raw[20] ^= 1;
        std::fs::write(&path, &raw).unwrap();
        let e = read_message(&storage, &f.path, f.bytes, &f.checksum).unwrap_err();
        assert!(format!("{e:#}").contains("ply003-to02.msg"), "{e:#}");
        assert!(format!("{e:#}").contains("damaged"), "{e:#}");
    }
}
