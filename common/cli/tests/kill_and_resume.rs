//! A solve killed with SIGKILL at arbitrary moments resumes to byte-identical output.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use support::*;

/// Every file of an output directory and its bytes.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().to_string_lossy().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn killed_solves_resume_to_identical_tables() {
    let args = ["solve", "--max-browns", "11", "--quiet", "--out"];
    let reference = temp_dir("kill-reference").join("out");
    let mut full: Vec<&str> = args.to_vec();
    full.push(s(&reference));
    retro_ok(&full);

    let dir = temp_dir("kill-resumed").join("out");
    // Kill at several moments: very early (before the first stage ends), mid-run, later.
    let mut kills = 0;
    for delay_ms in [30u64, 700, 1500, 2500] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_retro"))
            .args(args)
            .arg(&dir)
            .env("RETRO_LOG", "warn")
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
    }
    assert!(
        kills >= 2,
        "the solve finished before it could be killed twice"
    );
    let mut resume: Vec<&str> = args.to_vec();
    resume.push(s(&dir));
    retro_ok(&resume);
    let (want, have) = (contents(&reference), contents(&dir));
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        have.keys().collect::<Vec<_>>(),
        "same files"
    );
    for (name, bytes) in &want {
        assert!(bytes == &have[name], "{name} differs after kill and resume");
    }
}
