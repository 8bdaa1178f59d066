//! Helpers shared by the integration tests: running the `retro` binary, temporary
//! directories, and the reference data in `../shared/`.
#![allow(dead_code)]

pub mod cluster;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A file of the shared reference material, which lives beside the checkout. Fails loudly
/// (never skips) when it is missing.
pub fn shared(relative: &str) -> PathBuf {
    let path = repo_root().join("../shared").join(relative);
    assert!(
        path.is_file(),
        "reference file missing: expected {} (the shared/ directory beside the checkout)",
        path.display()
    );
    path
}

/// A fresh, empty temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `retro` with `args`.
pub fn retro(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retro"))
        .args(args)
        .env("RETRO_LOG", "warn")
        .output()
        .expect("retro runs")
}

/// Runs `retro` and asserts success; returns stdout.
pub fn retro_ok(args: &[&str]) -> String {
    let out = retro(args);
    assert!(
        out.status.success(),
        "retro {args:?} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `retro`, asserts failure with a one-line `error:` message and no panic; returns it.
pub fn retro_err(args: &[&str]) -> String {
    let out = retro(args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "retro {args:?} should fail");
    assert!(
        !stderr.contains("panicked"),
        "retro {args:?} panicked: {stderr}"
    );
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(
        errors.len(),
        1,
        "retro {args:?}: expected one error line, got: {stderr}"
    );
    errors[0].to_string()
}

/// Copies a flat directory.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// A path as `&str`.
pub fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The result files of an output directory (tables, manifest, count table) and their bytes:
/// what must be identical whichever way the solve ran. The coordinator's database is not a
/// result.
pub fn result_files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.ends_with(".tbl") || name == "manifest.json" || name == "counts.csv"
        })
        .map(|e| {
            (
                e.file_name().to_string_lossy().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// Asserts that two output directories hold identical results.
pub fn assert_same_results(want: &Path, have: &Path) {
    let (want_files, have_files) = (result_files(want), result_files(have));
    assert!(want_files.len() > 2, "{} holds no results", want.display());
    assert_eq!(
        want_files.keys().collect::<Vec<_>>(),
        have_files.keys().collect::<Vec<_>>(),
        "same files in {} and {}",
        want.display(),
        have.display()
    );
    for (name, bytes) in &want_files {
        assert!(
            bytes == &have_files[name],
            "{name} differs between {} and {}",
            want.display(),
            have.display()
        );
    }
}

/// When one run of [`kill_at`] is killed.
#[derive(Clone, Copy, Debug)]
pub enum KillMoment {
    /// This long after it started (for the moments before any table exists).
    After(std::time::Duration),
    /// As soon as the output directory holds this many more tables than when it started: a
    /// moment tied to the solve's progress, so that a faster machine does not finish the job
    /// before it is killed.
    NewTables(usize),
}

/// The tables (`*.tbl`) in `dir` (none if it does not exist yet).
fn table_count(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tbl"))
            .count()
    })
}

/// Starts `retro <args> <out>` once per moment and SIGKILLs it at that moment (unless it has
/// finished first); returns how many runs were killed.
pub fn kill_at(args: &[&str], out: &Path, moments: &[KillMoment]) -> usize {
    let mut kills = 0;
    for &moment in moments {
        let tables_before = table_count(out);
        let started = std::time::Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_retro"))
            .args(args)
            .arg(out)
            .env("RETRO_LOG", "warn")
            .spawn()
            .unwrap();
        let due = || match moment {
            KillMoment::After(delay) => started.elapsed() >= delay,
            KillMoment::NewTables(n) => table_count(out) >= tables_before + n,
        };
        while child.try_wait().unwrap().is_none() {
            if due() {
                child.kill().unwrap(); // SIGKILL
                kills += 1;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        child.wait().unwrap();
    }
    kills
}

/// The peak RSS `retro solve` reports on its summary line, in MiB.
pub fn peak_rss_mib(stdout: &str) -> u64 {
    let tail = stdout
        .split("peak RSS ")
        .nth(1)
        .expect("summary reports peak RSS");
    tail.split_whitespace().next().unwrap().parse().unwrap()
}

/// Rewrites the table `file` with one value of its first section moved two plies further
/// (same outcome, wrong distance) and valid checksums, so that only the recurrence check can
/// notice. `sections` names the table's two sections; a derived second section stays derived.
pub fn corrupt_one_value(file: &Path, sections: [&str; 2]) {
    use retro_store::Section;
    let table = retro_store::SliceTable::open(file).unwrap();
    let mut first = table.read_section(0).unwrap();
    let stored_second = match table.is_stored(1) {
        true => table.read_section(1).unwrap(),
        false => Vec::new(),
    };
    let second = match table.derived_histogram(1) {
        Some(histogram) => Section::Derived {
            len: table.section_len(1),
            histogram: histogram.clone(),
        },
        None => Section::Stored(&stored_second),
    };
    let victim = first.iter().position(|&v| v >= 2 && v != 0xff).unwrap();
    first[victim] += 2;
    let bytes = retro_store::TableWriter::encode_sections(
        table.label(),
        &[
            (sections[0], Section::Stored(&first)),
            (sections[1], second),
        ],
        3,
    );
    drop(table);
    std::fs::write(file, bytes).unwrap();
}
