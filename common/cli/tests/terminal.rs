//! What a person sees: a solve's summary, its log file, no escape codes where no terminal
//! reads them, "already solved", and what Ctrl-C and `retro resume` say.

mod support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::*;

/// Runs `retro` as a person would (no `RETRO_LOG`), stderr a pipe rather than a terminal.
fn retro_plain(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retro"))
        .args(args)
        .env_remove("RETRO_LOG")
        .output()
        .expect("retro runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

#[test]
fn a_solve_summarises_in_published_terms_logs_to_its_directory_and_writes_no_escape_codes() {
    let dir = temp_dir("terminal-solve");
    let args = [
        "solve",
        "--game",
        "ring-hop",
        "--cells",
        "8",
        "--tokens",
        "3",
        "--out",
        s(&dir),
    ];
    let first = retro_plain(&args);
    let (stdout, stderr) = (text(&first.stdout), text(&first.stderr));
    assert!(first.status.success(), "{stdout}{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "escape codes in a non-terminal stderr: {stderr:?}"
    );
    // Not a terminal: the log lines come to stderr as well, plain.
    assert!(stderr.contains("INFO"), "{stderr}");
    let counted = text(&retro_plain(&["counts", "--tables", s(&dir)]).stdout);
    let positions: u64 = counted
        .lines()
        .filter_map(|l| l.split(',').nth(2)?.parse::<u64>().ok())
        .sum();
    assert!(positions > 0, "{counted}");
    let shown = thousands(positions);
    assert!(
        stdout.starts_with(&format!("Solved {shown} positions into {} in ", s(&dir))),
        "summary should count {shown} positions as the count table does: {stdout}"
    );
    assert!(stdout.contains(" positions/s), peak RSS "), "{stdout}");
    // The job's log file holds the task-level lines.
    let log = std::fs::read_to_string(dir.join("retro.log")).expect("retro.log written");
    assert!(log.contains("task merged"), "{log}");
    assert!(!log.contains('\u{1b}'), "escape codes in the log file");
    // Again: nothing to do, and it says so.
    let again = retro_plain(&args);
    let stdout = text(&again.stdout);
    assert!(again.status.success(), "{stdout}");
    assert!(
        stdout.starts_with(&format!(
            "Already solved: {} holds all {shown} positions",
            s(&dir)
        )),
        "{stdout}"
    );
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let mut groups = vec![format!("{}", n % 1000)];
    let mut rest = n / 1000;
    while rest > 0 {
        let last = groups.last_mut().unwrap();
        *last = format!("{last:0>3}");
        groups.push(format!("{}", rest % 1000));
        rest /= 1000;
    }
    groups.reverse();
    groups.join(",")
}

/// Waits until `dir/retro.log` records `merged` finished tasks.
fn wait_for_merges(dir: &Path, merged: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let log = std::fs::read_to_string(dir.join("retro.log")).unwrap_or_default();
        if log.matches("task merged").count() >= merged {
            return;
        }
        assert!(Instant::now() < deadline, "no progress: {log}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_says_how_to_resume_and_resume_says_what_it_reuses_without_waiting_for_leases() {
    let dir = temp_dir("terminal-interrupt");
    let child = Command::new(env!("CARGO_BIN_EXE_retro"))
        .args(["solve", "--game", "musashi25", "--out", s(&dir)])
        .env_remove("RETRO_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_merges(&dir, 8);
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let interrupted = child.wait_with_output().unwrap();
    let stderr = text(&interrupted.stderr);
    assert_eq!(interrupted.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "interrupted: the finished stages are kept in {0}; run the same command again, or `retro resume {0}`, to continue",
            s(&dir)
        )),
        "{stderr}"
    );
    let log_before = std::fs::read_to_string(dir.join("retro.log")).unwrap();
    let started = Instant::now();
    let resumed = retro_plain(&["resume", s(&dir)]);
    let stdout = text(&resumed.stdout);
    assert!(
        resumed.status.success(),
        "{stdout}{}",
        text(&resumed.stderr)
    );
    let kept: Vec<&str> = stdout
        .strip_prefix(&format!("Resuming {}: ", s(&dir)))
        .and_then(|rest| rest.split(" stages done and kept.").next())
        .unwrap_or_else(|| panic!("resume should say what it reuses: {stdout}"))
        .split(" of ")
        .collect();
    let (done, all): (usize, usize) = (kept[0].parse().unwrap(), kept[1].parse().unwrap());
    assert!(done >= 1 && done < all && all == 25, "{stdout}");
    assert!(stdout.contains("of the work in this run"), "{stdout}");
    // The interrupted run's tasks went back to the queue at once: no lease ran out.
    let log = std::fs::read_to_string(dir.join("retro.log")).unwrap();
    let resume_log = &log[log_before.len()..];
    assert!(!resume_log.contains("lease expired"), "{resume_log}");
    println!("resume took {:.1} s", started.elapsed().as_secs_f64());
    let expected = std::fs::read_to_string(shared("reference/board25-counts.csv")).unwrap();
    assert_eq!(
        text(&retro_plain(&["counts", "--tables", s(&dir)]).stdout),
        expected
    );
}
