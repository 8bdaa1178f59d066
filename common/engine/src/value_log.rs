//! The value log of a stage solved on compact arrays: each ply's frontier, kept compressed, from
//! which the stage's value tables are built at its end.
//!
//! A position's value is the ply that resolved it (plus one), and the frontier a ply builds is
//! exactly the list of positions it resolved; no ply reads a final position's value again. So
//! the compact arrays ([`crate::rules::Section::compact`]) store no values: after every ply the
//! kernel hands its new frontier to [`ValueLog::record`], and when the stage ends,
//! [`ValueLog::replay`] gives each section's logged keys back with their values.
//!
//! **Coding.** A frontier section is cut into groups of keys; each group is sorted, coded as
//! gaps between consecutive keys (the first from zero) in LEB128 varints, and compressed with
//! zstd at level 1. Keys spilled narrowed to 32 bits ([`KeyChunk::Narrow`]: Sixteen Musashi's
//! always are) are sorted and coded narrowed — an order-preserving map — since a radix sort of
//! 4-byte keys moves a quarter of the bytes of 8-byte ones; a block's first byte names its
//! narrowing ([`Narrowing::gap_byte`], 0xFF: none). Sorted keys of one ply are regular: measured on solved BOARD33 tables, about
//! 1.0 byte per position as varints and 0.17–0.18 after zstd (`cargo run --release -p
//! retro-pipeline --example value_logs`), against 2 bytes per slot for the value bytes of both
//! sides that the log replaces.
//!
//! **Storage.** In memory, the blocks are one growing buffer; out of core, an unlinked scratch
//! file (like the spilled lists: a killed process leaves nothing behind), read back with
//! positioned reads at the end.

use crate::atomic::ScratchError;
use crate::checkpoint::{LogBlocks, LoggedBlock};
use crate::frontier::{Frontier, GroupKeys, KeyChunk, Narrowing};
use crate::gaps::{decode_gaps, encode_gaps};
use crate::largest_first::largest_first;
use crate::workspace::Workspace;
use rayon::prelude::*;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Mutex;

/// Frontier chunks per logged block (1M keys): the unit of sorting and compression, small
/// enough that each thread holds one group's keys (8 MB) at a time.
const GROUP_CHUNKS: usize = 1 << 8;

/// zstd's fastest level of the normal range: the gaps are regular, higher levels gain little.
const LEVEL: i32 = 1;

/// One logged block: `keys` keys of value `value`, compressed into `len` bytes at `offset`.
#[derive(Clone, Copy, Debug)]
struct Block {
    value: u8,
    offset: u64,
    len: u32,
    keys: u32,
}

/// Where the compressed blocks are kept.
enum Store {
    Memory(Vec<u8>),
    File {
        file: File,
        written: u64,
        dir: PathBuf,
    },
}

impl Store {
    /// Appends `bytes`; returns their offset.
    fn append(&mut self, bytes: &[u8]) -> Result<u64, ScratchError> {
        match self {
            Store::Memory(all) => {
                let offset = all.len() as u64;
                all.extend_from_slice(bytes);
                Ok(offset)
            }
            Store::File { file, written, dir } => {
                file.write_all(bytes)
                    .map_err(|e| ScratchError::new("write the value log in", dir, e))?;
                let offset = *written;
                *written += bytes.len() as u64;
                Ok(offset)
            }
        }
    }

    /// The `len` bytes at `offset`.
    fn read(&self, offset: u64, len: u32) -> Result<Vec<u8>, ScratchError> {
        match self {
            Store::Memory(all) => Ok(all[offset as usize..offset as usize + len as usize].to_vec()),
            Store::File { file, dir, .. } => {
                let mut bytes = vec![0; len as usize];
                file.read_exact_at(&mut bytes, offset)
                    .map_err(|e| ScratchError::new("read the value log in", dir, e))?;
                Ok(bytes)
            }
        }
    }

    fn bytes(&self) -> u64 {
        match self {
            Store::Memory(all) => all.len() as u64,
            Store::File { written, .. } => *written,
        }
    }
}

/// The logged frontiers of a stage, per section.
pub(crate) struct ValueLog {
    sections: Vec<Vec<Block>>,
    /// Every block as (section, place in its section's list), in the order logged: what a
    /// checkpoint saves ([`LogBlocks`]).
    order: Vec<(u32, u32)>,
    store: Mutex<Store>,
    keys: u64,
}

impl ValueLog {
    /// An empty log for `sections` sections: in memory, or out of core in a scratch file of
    /// `space`'s scratch directory.
    pub(crate) fn new(sections: usize, space: &Workspace) -> Result<ValueLog, ScratchError> {
        let store = match space.scratch() {
            None => Store::Memory(Vec::new()),
            Some(dir) => Store::File {
                file: tempfile::tempfile_in(dir)
                    .map_err(|e| ScratchError::new("create the value log in", dir, e))?,
                written: 0,
                dir: dir.to_path_buf(),
            },
        };
        Ok(ValueLog {
            sections: vec![Vec::new(); sections],
            order: Vec::new(),
            store: Mutex::new(store),
            keys: 0,
        })
    }

    /// Logs every key of `frontier` (sealed) with the value `value`, in parallel; the
    /// frontier's pages are dropped afterwards (out of core).
    pub(crate) fn record(&mut self, value: u8, frontier: &Frontier) -> Result<(), ScratchError> {
        let chunks: Vec<(usize, Vec<(u32, KeyChunk)>)> = (0..frontier.sections())
            .map(|sec| (sec, frontier.chunks(&[sec])))
            .filter(|(_, chunks)| !chunks.is_empty())
            .collect();
        let groups: Vec<(usize, &[(u32, KeyChunk)])> = chunks
            .iter()
            .flat_map(|(sec, chunks)| chunks.chunks(GROUP_CHUNKS).map(|group| (*sec, group)))
            .collect();
        // One task per group, the largest first, each dropping the spilled frontier's pages it
        // read once its group is coded, so a large frontier is never resident at once. (Rounds
        // of two groups per thread, the pages dropped between rounds, ended each round on one
        // thread: the log's record held an eighth of an out-of-core stage's idle time.) The
        // blocks join the log in the groups' order.
        let sizes: Vec<usize> = groups.iter().map(|(_, group)| group.len()).collect();
        let store = &self.store;
        let mut blocks: Vec<(usize, Block)> = largest_first(&sizes)
            .map(|g| {
                let group = groups[g].1;
                let (packed, len) = code(group);
                frontier.release_chunks(group);
                let offset = store.lock().expect("value log lock").append(&packed)?;
                Ok((
                    g,
                    Block {
                        value,
                        offset,
                        len: packed.len() as u32,
                        keys: len as u32,
                    },
                ))
            })
            .collect::<Result<_, ScratchError>>()?;
        frontier.release();
        blocks.sort_unstable_by_key(|&(g, _)| g);
        for (g, block) in blocks {
            self.add(groups[g].0, block);
        }
        Ok(())
    }

    fn add(&mut self, sec: usize, block: Block) {
        self.keys += u64::from(block.keys);
        self.order
            .push((sec as u32, self.sections[sec].len() as u32));
        self.sections[sec].push(block);
    }

    /// Appends a block saved by a checkpoint (restoring the log in its order); fails on one
    /// that names no section of the stage.
    pub(crate) fn restore_block(&mut self, block: LoggedBlock) -> Result<(), String> {
        let sec = block.section as usize;
        if sec >= self.sections.len() {
            return Err(format!(
                "a value log block of section {sec}, of {} sections",
                self.sections.len()
            ));
        }
        let offset = self
            .store
            .lock()
            .expect("value log lock")
            .append(&block.bytes)
            .map_err(|e| e.to_string())?;
        let block = Block {
            value: block.value,
            offset,
            len: block.bytes.len() as u32,
            keys: block.keys,
        };
        self.add(sec, block);
        Ok(())
    }

    /// Calls `set(i, keys, value)` for every block of keys logged in section `sections[i]`
    /// (with the value they were logged with), for every `i`: the blocks of all the sections
    /// in parallel, one block per task (a block is up to [`GROUP_CHUNKS`] chunks of keys), in
    /// no particular order. The order cannot matter: a position is resolved once, so no key is
    /// logged twice in a section.
    pub(crate) fn replay(
        &self,
        sections: &[usize],
        set: impl Fn(usize, &[u64], u8) + Sync,
    ) -> Result<(), ScratchError> {
        let blocks: Vec<(usize, Block)> = sections
            .iter()
            .enumerate()
            .flat_map(|(i, &sec)| self.sections[sec].iter().map(move |&block| (i, block)))
            .collect();
        blocks.par_iter().with_max_len(1).try_for_each_init(
            Unpacker::default,
            |unpacker, &(i, block)| {
                let packed = self
                    .store
                    .lock()
                    .expect("value log lock")
                    .read(block.offset, block.len)?;
                set(i, unpacker.keys(&packed, block.keys as usize), block.value);
                Ok(())
            },
        )
    }

    /// Keys logged so far.
    pub(crate) fn keys(&self) -> u64 {
        self.keys
    }

    /// Compressed bytes logged so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.store.lock().expect("value log lock").bytes()
    }
}

impl LogBlocks for ValueLog {
    fn blocks(&self) -> usize {
        self.order.len()
    }

    fn block(&self, i: usize) -> Result<LoggedBlock, String> {
        let (sec, at) = self.order[i];
        let block = self.sections[sec as usize][at as usize];
        let bytes = self
            .store
            .lock()
            .expect("value log lock")
            .read(block.offset, block.len)
            .map_err(|e| e.to_string())?;
        Ok(LoggedBlock {
            section: sec,
            value: block.value,
            keys: block.keys,
            bytes,
        })
    }
}

/// A block's first byte when its keys are not narrowed.
const WIDE: u8 = 0xFF;

/// The keys of a group of frontier chunks, coded as a block: narrowed when every chunk is
/// narrowed the same way. Returns the block and its number of keys.
fn code(group: &[(u32, KeyChunk)]) -> (Vec<u8>, usize) {
    let mut keys = GroupKeys::of(group);
    keys.sort_runs(usize::MAX);
    match keys {
        GroupKeys::Narrow(keys, n) => {
            let coded = compress(n.gap_byte(), keys.iter().map(|&k| u64::from(k)));
            (coded, keys.len())
        }
        GroupKeys::Wide(keys) => (compress(WIDE, keys.iter().copied()), keys.len()),
    }
}

/// Sorted `keys` as a block: the narrowing byte `tag`, then the varint gaps
/// ([`crate::gaps`]), compressed.
fn compress(tag: u8, keys: impl Iterator<Item = u64>) -> Vec<u8> {
    let mut gaps = Vec::new();
    encode_gaps(keys, &mut gaps);
    let mut block = vec![tag];
    block.extend(zstd::bulk::compress(&gaps, LEVEL).expect("zstd compresses any input in memory"));
    block
}

/// Decodes blocks coded by [`compress`], one after another, reusing its buffers and its zstd
/// context (a block's gaps are a megabyte or two; allocating them afresh for each block made
/// the allocator map and fault in new pages every time).
#[derive(Default)]
struct Unpacker {
    context: Option<zstd::bulk::Decompressor<'static>>,
    gaps: Vec<u8>,
    keys: Vec<u64>,
}

impl Unpacker {
    /// The `count` keys of `block` (widened).
    fn keys(&mut self, block: &[u8], count: usize) -> &[u64] {
        let (&tag, packed) = block.split_first().expect("a block has its narrowing byte");
        let context = self.context.get_or_insert_with(|| {
            zstd::bulk::Decompressor::new().expect("a zstd decompression context")
        });
        // A key's gap takes at most 10 varint bytes.
        self.gaps.clear();
        self.gaps.reserve(count * 10);
        // The blocks are this process's own, or a checkpoint's that passed its checksums.
        context
            .decompress_to_buffer(packed, &mut self.gaps)
            .expect("a value log block decompresses: the process wrote it");
        let narrowing = Narrowing::from_gap_byte(tag);
        self.keys.clear();
        let keys = &mut self.keys;
        decode_gaps(&self.gaps, |key| {
            keys.push(match narrowing {
                Some(n) => n.widen(key as u32),
                None => key,
            })
        })
        .expect("a value log block decodes: the process wrote it");
        debug_assert_eq!(self.keys.len(), count);
        &self.keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_round_trip_through_the_coding() {
        let keys = vec![0, 1, 2, 130, 131, 1 << 40, (1 << 40) + 300, u64::MAX];
        let mut unpacker = Unpacker::default();
        let block = compress(WIDE, keys.iter().copied());
        assert_eq!(unpacker.keys(&block, keys.len()), keys);
        // The buffers are reused: a second block decodes alone.
        let fewer = compress(WIDE, [5, 6].into_iter());
        assert_eq!(unpacker.keys(&fewer, 2), [5, 6]);
    }

    #[test]
    fn a_frontier_is_replayed_with_its_value_in_memory_and_out_of_core() {
        let dir = tempfile::tempdir().unwrap();
        for space in [
            Workspace::in_memory(),
            Workspace::out_of_core(dir.path().into(), 0),
        ] {
            let mut log = ValueLog::new(3, &space).unwrap();
            let mut first = Frontier::new(3, &space);
            first.push(0, vec![9, 3, 5]);
            first.push(2, (0..3_000_000).rev().map(|k| 3 * k).collect());
            first.push(0, vec![4]);
            first.seal().unwrap();
            log.record(7, &first).unwrap();
            let mut second = Frontier::new(3, &space);
            second.push(0, vec![6]);
            // 33-bit keys, spilled narrowed (bit 31 taken out), and keys that are not.
            let high = [(1 << 32) + 4, 2, (1 << 32) + 1];
            second.push(1, high.to_vec());
            second.seal().unwrap();
            log.record(8, &second).unwrap();
            let mut third = Frontier::new(3, &space);
            third.push(1, vec![77]);
            third.push(1, vec![u64::MAX - 1]);
            third.seal().unwrap();
            log.record(9, &third).unwrap();
            assert_eq!(log.keys(), 3_000_010);
            let replayed = |section| {
                let all = Mutex::new(Vec::new());
                log.replay(&[section], |i, keys, value| {
                    assert_eq!(i, 0);
                    let mut all = all.lock().unwrap();
                    all.extend(keys.iter().map(|&key| (key, value)));
                })
                .unwrap();
                let mut all = all.into_inner().unwrap();
                all.sort_unstable();
                all
            };
            assert_eq!(replayed(0), vec![(3, 7), (4, 7), (5, 7), (6, 8), (9, 7)]);
            assert_eq!(
                replayed(1),
                vec![
                    (2, 8),
                    (77, 9),
                    ((1 << 32) + 1, 8),
                    ((1 << 32) + 4, 8),
                    (u64::MAX - 1, 9)
                ]
            );
            let third = replayed(2);
            assert_eq!(third.len(), 3_000_000);
            assert!(third
                .iter()
                .enumerate()
                .all(|(k, &(key, value))| key == 3 * k as u64 && value == 7));
            // Regular gaps compress far below a byte per key.
            assert!(log.bytes() < 300_000, "{} bytes", log.bytes());
        }
    }
}
