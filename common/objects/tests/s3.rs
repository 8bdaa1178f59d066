//! [`ObjectStorage`] against a real S3-compatible server on loopback: moto's server (PyPI
//! `moto[server]`, installed with pip when missing; the test fails naming it when it cannot be
//! installed). Round trip of a table, promotion, removal; a bit-flipped object reported by
//! name; a large upload in parts; an uploading process SIGKILLed mid-way leaves no object.

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutPayload};
use retro_objects::test_server::{block_on, Moto};
use retro_objects::{ObjectStorage, StorageUrl, MULTIPART_ABOVE};
use retro_pipeline::Storage;
use retro_store::TableWriter;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A small slice table with recognisable values.
fn table(seed: u8) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let first: Vec<u8> = (0..50_000u32)
        .map(|i| (i as u8).wrapping_mul(seed))
        .collect();
    let second: Vec<u8> = (0..50_000u32).map(|i| (i % 7) as u8 + seed).collect();
    let bytes = TableWriter::encode("test", &[("first", &first), ("second", &second)], 3);
    (bytes, first, second)
}

#[test]
fn tables_are_put_read_promoted_and_removed_on_a_real_s3_server() {
    let moto = Moto::start();
    let cache = tempfile::tempdir().unwrap();
    let storage = moto.storage("retro-jobs", "board25/run1", cache.path());
    let (bytes, first, second) = table(3);
    let shard = "shards/stage03-attempt1/browns03-black00.tbl";
    storage.put(shard, &bytes).unwrap();
    assert_eq!(
        storage.checksum(shard).unwrap(),
        (retro_store::checksum(&bytes), bytes.len() as u64)
    );
    assert_eq!(
        storage.describe(shard),
        format!("s3://retro-jobs/board25/run1/{shard}")
    );

    // Promotion: the final name holds the bytes (and their checksum), the shard is gone.
    let fin = "browns03-black00.tbl";
    storage.promote(shard, fin).unwrap();
    assert!(!storage.exists(shard).unwrap());
    let opened = storage.open_table(fin).unwrap();
    assert_eq!(opened.read_section(0).unwrap(), first);
    assert_eq!(opened.read_section(1).unwrap(), second);
    let cached = storage.cache().size().unwrap();
    assert_eq!(cached, bytes.len() as u64, "one local copy");
    // Read again: from the cache (same size), and still right.
    drop(opened);
    assert_eq!(
        storage.open_table(fin).unwrap().read_section(1).unwrap(),
        second
    );
    assert_eq!(storage.cache().size().unwrap(), cached);
    // The key written again with other bytes: the new bytes are read, not the stale copy.
    let (other, other_first, _) = table(5);
    storage.put(fin, &other).unwrap();
    assert_eq!(
        storage.open_table(fin).unwrap().read_section(0).unwrap(),
        other_first
    );

    // Removal of a prefix takes every object under it and nothing else.
    storage
        .put("shards/stage04-attempt1/a.tbl", &bytes)
        .unwrap();
    storage
        .put("shards/stage04-attempt1/b.tbl", &bytes)
        .unwrap();
    storage.remove_prefix("shards/stage04-attempt1").unwrap();
    assert!(!storage.exists("shards/stage04-attempt1/a.tbl").unwrap());
    assert!(!storage.exists("shards/stage04-attempt1/b.tbl").unwrap());
    assert!(storage.exists(fin).unwrap());
    storage.remove_prefix("shards/nothing-here").unwrap();

    // Bad keys and missing objects are errors naming them.
    assert!(storage.put("../escape", &bytes).is_err());
    let e = format!(
        "{:#}",
        storage.open_table("missing.tbl").map(|_| ()).unwrap_err()
    );
    assert!(
        e.contains("s3://retro-jobs/board25/run1/missing.tbl"),
        "{e}"
    );
}

#[test]
fn a_bit_flipped_object_is_reported_by_name_and_never_used() {
    let moto = Moto::start();
    let cache = tempfile::tempdir().unwrap();
    let storage = moto.storage("retro-flip", "job", cache.path());
    let (bytes, _, _) = table(7);
    storage.put("flip.tbl", &bytes).unwrap();
    // The object rots in the bucket: one bit flipped, its recorded checksum unchanged.
    moto.flip_bit("retro-flip", "job/flip.tbl");
    let client = moto.client("retro-flip");
    for e in [
        storage.open_table("flip.tbl").map(|_| ()).unwrap_err(),
        storage.checksum("flip.tbl").map(|_| ()).unwrap_err(),
    ] {
        let e = format!("{e:#}");
        assert!(e.contains("s3://retro-flip/job/flip.tbl: damaged"), "{e}");
        assert!(e.contains("checksum"), "{e}");
    }
    assert_eq!(
        storage.cache().size().unwrap(),
        0,
        "nothing damaged is cached"
    );
    // An object without the checksum retro writes is refused too.
    block_on(client.put(
        &ObjectPath::from("job/foreign.tbl"),
        PutPayload::from(bytes),
    ))
    .unwrap();
    let e = format!(
        "{:#}",
        storage.open_table("foreign.tbl").map(|_| ()).unwrap_err()
    );
    assert!(e.contains("not written by retro"), "{e}");
}

#[test]
fn the_table_cache_stays_within_its_bound() {
    let moto = Moto::start();
    let cache = tempfile::tempdir().unwrap();
    moto.create_bucket("retro-cache");
    let (bytes, _, _) = table(9);
    let url = StorageUrl::parse("s3://retro-cache/job").unwrap();
    let bound = 2 * bytes.len() as u64 + 10;
    let storage = ObjectStorage::with_store(
        moto.client("retro-cache"),
        url,
        cache.path().to_path_buf(),
        bound,
    )
    .unwrap();
    for i in 0..5 {
        let (bytes, first, _) = table(11 + i);
        let key = format!("t{i}.tbl");
        storage.put(&key, &bytes).unwrap();
        assert_eq!(
            storage.open_table(&key).unwrap().read_section(0).unwrap(),
            first
        );
        assert!(storage.cache().size().unwrap() <= bound);
    }
}

/// Child process of [`an_upload_killed_mid_way_leaves_no_object`]: uploads a large object
/// through `ObjectStorage::from_env` (the environment the parent gives) until it is killed.
#[test]
#[ignore = "run by an_upload_killed_mid_way_leaves_no_object as its child process"]
fn child_uploads_until_killed() {
    let url = std::env::var("RETRO_S3_CHILD_URL").expect("run by the parent test");
    let cache = std::env::var("RETRO_S3_CHILD_CACHE").unwrap();
    let storage = ObjectStorage::from_env(&url, cache.into(), 1 << 30).unwrap();
    let bytes = vec![0x5au8; 8 * MULTIPART_ABOVE];
    println!("uploading");
    std::io::stdout().flush().unwrap();
    storage.put("big/object.bin", &bytes).unwrap();
    println!("uploaded");
}

#[test]
fn an_upload_killed_mid_way_leaves_no_object() {
    let moto = Moto::start();
    let cache = tempfile::tempdir().unwrap();
    let storage = moto.storage("retro-kill", "job", cache.path());

    // A large object goes up in parts and reads back whole.
    let big = vec![0xa5u8; MULTIPART_ABOVE + 5_000_000];
    storage.put("parts.bin", &big).unwrap();
    assert_eq!(
        storage.checksum("parts.bin").unwrap(),
        (retro_store::checksum(&big), big.len() as u64)
    );

    // A process uploading 512 MiB, SIGKILLed half a second into the upload.
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_uploads_until_killed",
            "--ignored",
            "--nocapture",
        ])
        .envs(moto.env())
        .env("RETRO_S3_CHILD_URL", "s3://retro-kill/job")
        .env("RETRO_S3_CHILD_CACHE", cache.path().join("child"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines {
        if line.unwrap().contains("uploading") {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the upload finished before it could be killed: the test proves nothing"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !storage.exists("big/object.bin").unwrap(),
        "a partial upload is visible"
    );
    // The same key written afterwards is whole.
    storage.put("big/object.bin", &big).unwrap();
    assert_eq!(
        storage.checksum("big/object.bin").unwrap().1,
        big.len() as u64
    );
}
