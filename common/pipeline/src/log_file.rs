//! The value-log files of a checkpoint: blocks of a compact stage's value log
//! ([`retro_engine::checkpoint::LoggedBlock`]), saved once and hard-linked into later
//! checkpoints of the stage (a block never changes once logged).
//!
//! The blocks are compressed by the kernel already, so a file is written as they are, streamed
//! (a stage's log reaches gigabytes): a magic line, then per block a header (section, value,
//! keys, length, the XXH3 checksum of its bytes) and its bytes. A reader verifies every
//! block's checksum and the number of blocks, and names the file when one does not match.

use retro_engine::checkpoint::LoggedBlock;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

/// The first bytes of a log file.
const MAGIC: &[u8; 16] = b"retro value log\n";

/// Bytes of a block's header: section (4), value (1), keys (4), length (4), checksum (8).
const HEADER: usize = 21;

/// Writes `blocks` to a new file at `path` and syncs it; returns its size in bytes.
pub fn write_log_file(
    path: &Path,
    blocks: impl Iterator<Item = Result<LoggedBlock, String>>,
) -> Result<u64, String> {
    let error = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let file = File::create(path).map_err(error)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    out.write_all(MAGIC).map_err(error)?;
    let mut size = MAGIC.len() as u64;
    for block in blocks {
        let block = block?;
        let mut header = [0u8; HEADER];
        header[0..4].copy_from_slice(&block.section.to_le_bytes());
        header[4] = block.value;
        header[5..9].copy_from_slice(&block.keys.to_le_bytes());
        header[9..13].copy_from_slice(&(block.bytes.len() as u32).to_le_bytes());
        header[13..21].copy_from_slice(&retro_store::checksum(&block.bytes).to_le_bytes());
        out.write_all(&header).map_err(error)?;
        out.write_all(&block.bytes).map_err(error)?;
        size += (HEADER + block.bytes.len()) as u64;
    }
    let file = out.into_inner().map_err(|e| error(e.into_error()))?;
    file.sync_all().map_err(error)?;
    Ok(size)
}

/// Reads the `blocks` blocks of the log file at `path`, oldest first, into `take`; fails
/// naming the file when it is missing, damaged or holds another number of blocks.
pub fn read_log_file(
    path: &Path,
    blocks: u64,
    take: &mut dyn FnMut(LoggedBlock) -> Result<(), String>,
) -> Result<(), String> {
    let damaged = |what: &str| format!("{}: {what}", path.display());
    let file = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut magic = [0u8; 16];
    input
        .read_exact(&mut magic)
        .map_err(|_| damaged("not a value log file"))?;
    if &magic != MAGIC {
        return Err(damaged("not a value log file"));
    }
    for i in 0..blocks {
        let mut header = [0u8; HEADER];
        input
            .read_exact(&mut header)
            .map_err(|_| damaged(&format!("ends before block {i} of {blocks}")))?;
        let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
        let len = word(9) as usize;
        let sum = u64::from_le_bytes(header[13..21].try_into().expect("8 bytes"));
        let mut bytes = vec![0; len];
        input
            .read_exact(&mut bytes)
            .map_err(|_| damaged(&format!("ends inside block {i} of {blocks}")))?;
        if retro_store::checksum(&bytes) != sum {
            return Err(damaged(&format!("block {i} fails its checksum")));
        }
        take(LoggedBlock {
            section: word(0),
            value: header[4],
            keys: word(5),
            bytes,
        })
        .map_err(|what| damaged(&what))?;
    }
    let mut rest = [0u8; 1];
    if input.read(&mut rest).map_err(|e| damaged(&e.to_string()))? != 0 {
        return Err(damaged(&format!("holds more than {blocks} blocks")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(section: u32, value: u8, bytes: &[u8]) -> LoggedBlock {
        LoggedBlock {
            section,
            value,
            keys: bytes.len() as u32,
            bytes: bytes.to_vec(),
        }
    }

    #[test]
    fn blocks_round_trip_and_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log-0.bin");
        let blocks = vec![
            block(3, 7, b"abc"),
            block(0, 2, b""),
            block(9, 255, b"xyz!"),
        ];
        write_log_file(&path, blocks.clone().into_iter().map(Ok)).unwrap();
        let mut back = Vec::new();
        read_log_file(&path, 3, &mut |b| {
            back.push(b);
            Ok(())
        })
        .unwrap();
        assert_eq!(back, blocks);
        // Fewer blocks than the state says, or more: both named.
        let e = read_log_file(&path, 4, &mut |_| Ok(())).unwrap_err();
        assert!(e.contains("log-0.bin: ends before block 3 of 4"), "{e}");
        let e = read_log_file(&path, 2, &mut |_| Ok(())).unwrap_err();
        assert!(e.contains("holds more than 2 blocks"), "{e}");
        // A flipped byte in a block's bytes fails its checksum.
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        let e = read_log_file(&path, 3, &mut |_| Ok(())).unwrap_err();
        assert!(e.contains("block 2 fails its checksum"), "{e}");
    }
}
