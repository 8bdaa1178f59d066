//! A stage's inputs read from their table files block by block ([`FinalSection::Table`]): the
//! same values as when decompressed into memory, and a damaged block reported by file name
//! through [`FinalValues::failure`], never used silently.

use retro_engine::{FinalValues, Side, SliceId, Value};
use retro_pipeline::{FinalSection, Finals};
use retro_store::table::BLOCK;
use retro_store::{BlockCache, TableWriter};
use std::sync::Arc;

/// A table of one slice whose two sections hold `values(i)` and `values(i) + 1`.
fn write_table(dir: &std::path::Path, name: &str, len: u64) -> (std::path::PathBuf, Vec<u8>) {
    let first: Vec<u8> = (0..len).map(|i| (i * 31 % 97) as u8).collect();
    let second: Vec<u8> = first.iter().map(|v| v + 1).collect();
    let path = dir.join(name);
    std::fs::write(
        &path,
        TableWriter::encode(name, &[("first", &first), ("second", &second)], 3),
    )
    .unwrap();
    (path, first)
}

#[test]
fn inputs_read_through_blocks_equal_inputs_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (path, first) = write_table(dir.path(), "a.tbl", 5 * BLOCK as u64 + 17);
    let cache = BlockCache::new(2 * BLOCK as u64);
    let through = Finals(vec![Some(
        Finals::read_table(&path, [true, true], Some(&cache)).unwrap(),
    )]);
    let resident = Finals(vec![Some(
        Finals::read_table(&path, [true, true], None).unwrap(),
    )]);
    assert!(matches!(
        through.0[0].as_ref().unwrap().0[0],
        Some(FinalSection::Table(_))
    ));
    assert_eq!(through.0[0].as_ref().unwrap().bytes(), 0, "holds no values");
    for index in (0..first.len() as u64).rev().step_by(7) {
        for side in Side::BOTH {
            assert_eq!(
                through.value(side, SliceId(0), index),
                resident.value(side, SliceId(0), index)
            );
        }
        assert_eq!(
            through.value(Side::BOTH[0], SliceId(0), index),
            Value(first[index as usize])
        );
    }
    through.release();
    assert_eq!(through.failure(), None);
    // 6 blocks a section, each decompressed when first read (again if evicted).
    assert!(cache.misses() >= 12, "{}", cache.misses());
}

#[test]
fn a_damaged_input_block_is_reported_with_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let (path, first) = write_table(dir.path(), "lower.tbl", 3 * BLOCK as u64);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[20] ^= 0x55; // inside the first block's frame
    std::fs::write(&path, bytes).unwrap();
    let cache: Arc<BlockCache> = BlockCache::new(1 << 20);
    let finals = Finals(vec![Some(
        Finals::read_table(&path, [true, false], Some(&cache)).unwrap(),
    )]);
    let side = Side::BOTH[0];
    let intact = 2 * BLOCK as u64 + 5;
    assert_eq!(
        finals.value(side, SliceId(0), intact),
        Value(first[intact as usize])
    );
    assert_eq!(finals.failure(), None, "nothing damaged read yet");
    assert_eq!(finals.value(side, SliceId(0), 1), Value(0));
    let failure = finals.failure().expect("the damaged block is reported");
    assert!(failure.contains("lower.tbl"), "{failure}");
    // Decompressed into memory instead, the table is refused at once.
    let e = Finals::read_table(&path, [true, false], None)
        .err()
        .unwrap();
    assert!(format!("{e:#}").contains("lower.tbl"), "{e:#}");
}
