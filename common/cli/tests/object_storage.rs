//! Jobs whose tables live in an S3-compatible object store: a real S3 server on loopback
//! (moto's, see `retro_objects::test_server`), real `retro` processes. The embedded solve and
//! a coordinator with worker processes — the first worker SIGKILLed in the middle of the job —
//! put tables byte-identical to the in-process solve into the bucket; the readers find them
//! through the job directory's manifest; a bit-flipped object is reported by name. Stages
//! split into supersteps keep their step files in the bucket too.
//!
//! One test function: the S3 endpoint and credentials reach the child processes through this
//! process's environment, which tests running side by side would share.

mod support;

use retro_objects::test_server::Moto;
use retro_pipeline::Storage;
use std::path::Path;
use std::time::Duration;
use support::cluster::*;
use support::*;

const BOARD33_7: [&str; 4] = ["--game", "musashi33", "--max-browns", "7"];
const BUCKET: &str = "retro-e2e";

/// Asserts that the objects under `prefix` hold exactly the tables and count table of the
/// in-process solve `want` (and a manifest), read back through a fresh [`Storage`].
fn assert_bucket_holds(moto: &Moto, prefix: &str, want: &Path) {
    let cache = temp_dir(&format!("check-{}", prefix.replace('/', "-")));
    let storage = moto.storage(BUCKET, prefix, &cache);
    let mut names: Vec<String> = storage.children("").unwrap();
    names.retain(|n| n != "manifest.json");
    let want_files = result_files(want);
    let mut want_names: Vec<String> = want_files
        .keys()
        .filter(|n| *n != "manifest.json")
        .cloned()
        .collect();
    want_names.sort();
    assert_eq!(names, want_names, "objects under s3://{BUCKET}/{prefix}");
    for name in &names {
        let copy = storage.local_copy(name).unwrap();
        assert!(
            std::fs::read(copy).unwrap() == want_files[name],
            "s3://{BUCKET}/{prefix}/{name} differs from the in-process solve's"
        );
    }
    assert!(
        storage.children("shards").unwrap().is_empty(),
        "no shards left"
    );
}

/// The job directory next to the bucket: manifest and count table, no table files.
fn assert_job_dir_points_to(dir: &Path, location: &str, want: &Path) {
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(
        manifest.contains(&format!("\"storage\": \"{location}\"")),
        "{manifest}"
    );
    assert_eq!(
        std::fs::read(dir.join("counts.csv")).unwrap(),
        std::fs::read(want.join("counts.csv")).unwrap()
    );
    let tables = std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".tbl")
        })
        .count();
    assert_eq!(
        tables,
        0,
        "the tables are in the bucket, not in {}",
        dir.display()
    );
}

#[test]
fn jobs_in_an_object_store_match_the_in_process_solve_and_survive_a_killed_worker() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let readers_cache = temp_dir("object-storage-readers-cache");
    for (name, value) in moto.env() {
        std::env::set_var(name, value);
    }
    std::env::set_var("XDG_CACHE_HOME", &readers_cache);
    let want = reference("board33-7", &BOARD33_7);
    let position = ["o.o.o..,.......,..X....,.......,o.o.o..", "brown"];

    // The embedded solve.
    let location = format!("s3://{BUCKET}/embedded");
    let out = temp_dir("object-storage-embedded").join("out");
    retro_ok(
        &[
            &["solve", "--quiet", "--storage", &location, "--out", s(&out)],
            &BOARD33_7[..],
        ]
        .concat(),
    );
    assert_bucket_holds(&moto, "embedded", &want);
    assert_job_dir_points_to(&out, &location, &want);
    // Readers find the tables through the manifest (downloaded into their cache).
    assert_eq!(
        retro_ok(&[&["probe", "--tables", s(&out)], &position[..]].concat()),
        retro_ok(&[&["probe", "--tables", s(&want)], &position[..]].concat())
    );
    let verified = retro_ok(&["verify", "--tables", s(&out), "--recurrence", "50"]);
    assert!(verified.contains("recurrence: OK"), "{verified}");
    // A solve into the same directory with another storage is refused.
    let refused = retro_err(&[&["solve", "--quiet", "--out", s(&out)], &BOARD33_7[..]].concat());
    assert!(
        refused.contains("tables are in s3://retro-e2e/embedded"),
        "{refused}"
    );

    // Stages split into one task per slice and ply: their step files go through the bucket.
    let split_want = reference("board25-5", &["--max-browns", "5"]);
    let split_out = temp_dir("object-storage-split").join("out");
    retro_ok(&[
        "solve",
        "--quiet",
        "--max-browns",
        "5",
        "--split-above",
        "0",
        "--storage",
        &format!("s3://{BUCKET}/split"),
        "--out",
        s(&split_out),
    ]);
    assert_bucket_holds(&moto, "split", &split_want);
    let cache = temp_dir("object-storage-split-check");
    assert!(
        moto.storage(BUCKET, "split", &cache)
            .children("steps")
            .unwrap()
            .is_empty(),
        "no step files left"
    );

    // A bit flipped in the bucket: reported by name by a reader with a fresh cache.
    std::fs::remove_dir_all(&readers_cache).unwrap();
    let table = std::fs::read_dir(&want)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .find(|n| n.starts_with("browns07"))
        .unwrap();
    moto.flip_bit(BUCKET, &format!("embedded/{table}"));
    let damaged = retro_err(&["verify", "--tables", s(&out), "--recurrence", "1"]);
    assert!(
        damaged.contains(&format!("s3://{BUCKET}/embedded/{table}: damaged")),
        "{damaged}"
    );

    // A coordinator and worker processes; the first worker is killed in the middle of the job.
    let dir = temp_dir("object-storage-cluster");
    let cluster = Cluster::new(&dir, 2_000);
    let _coordinator = cluster.start_coordinator();
    let location = format!("s3://{BUCKET}/cluster/board33");
    let job = cluster.submit(&[&["--storage", &location][..], &BOARD33_7[..]].concat());
    let mut first = cluster.start_worker("w1", 1);
    wait_until(Duration::from_secs(300), "browns=6 is running", || {
        cluster.stages_in(job, "running").contains(&6)
    });
    // Killed while it holds the task: a fast machine solves browns=6 on one thread in under
    // two seconds, so a longer wait could find the worker idle and nothing to give out again.
    std::thread::sleep(Duration::from_millis(300));
    first.kill();
    let _second = cluster.start_worker("w2", 1);
    cluster.wait_done(job, Duration::from_secs(600));
    assert_bucket_holds(&moto, "cluster/board33", &want);
    let stages = cluster.stages_in(job, "done").len() as u64;
    assert!(
        cluster.events("assigned") > stages,
        "the killed worker's task was given out again"
    );
    assert_job_dir_points_to(&cluster.job_dir(job), &location, &want);
    // A second job on the prefix of a running one is refused; a bad location too.
    let again = cluster.submit(&[&["--storage", &location][..], &BOARD33_7[..]].concat());
    let clash = cluster.client(
        "submit",
        &[&["--storage", &location][..], &BOARD33_7[..]].concat(),
    );
    assert!(!clash.status.success());
    assert!(
        String::from_utf8_lossy(&clash.stderr).contains(&format!("job {again}, still running")),
        "{}",
        String::from_utf8_lossy(&clash.stderr)
    );
    let missing = cluster.client(
        "submit",
        &[&["--storage", "s3://no-such-bucket/x"][..], &BOARD33_7[..]].concat(),
    );
    let text = String::from_utf8_lossy(&missing.stderr);
    assert!(!missing.status.success());
    assert!(
        text.contains("storage: cannot reach it") && text.contains("NoSuchBucket"),
        "{text}"
    );
    assert_eq!(text.trim().lines().count(), 1, "one line: {text}");
    let bad = cluster.client("submit", &["--storage", "/data/jobs"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("write s3://bucket/prefix"));
}
