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
    // Throughput, like a fresh run's summary.
    assert!(
        stdout.contains(" positions/s), the rest was already done; peak RSS "),
        "{stdout}"
    );
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

/// Runs `retro args` at a terminal: under a pseudo-terminal made by util-linux's `script`
/// (stdout and stderr both on it), as a person at a terminal would, and returns what was
/// written to that terminal; `None`, said on stdout, when no pseudo-terminal can be had.
fn retro_at_terminal(args: &[&str]) -> Option<String> {
    let quoted: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_retro"))
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let run = Command::new("script")
        .args(["-qfec", &quoted.join(" "), "/dev/null"])
        .env_remove("RETRO_LOG")
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output();
    match run {
        Ok(out) if out.status.success() => Some(text(&out.stdout)),
        Ok(out) if text(&out.stdout).contains("Solved ") => {
            panic!("retro failed at a terminal: {}", text(&out.stdout))
        }
        other => {
            println!("SKIPPED: no pseudo-terminal (util-linux `script` did not run: {other:?})");
            None
        }
    }
}

/// The lines a terminal shows after `written`: carriage returns, line erasing and cursor
/// moves applied (what indicatif and tracing write), other escape codes dropped.
fn screen(written: &str) -> Vec<String> {
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let (mut row, mut col) = (0usize, 0usize);
    let mut chars = written.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => col = 0,
            '\n' => {
                row += 1;
                col = 0;
                if lines.len() <= row {
                    lines.push(Vec::new());
                }
            }
            '\u{1b}' => {
                if chars.peek() != Some(&'[') {
                    chars.next();
                    continue;
                }
                chars.next();
                let mut params = String::new();
                let mut command = ' ';
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        command = c;
                        break;
                    }
                    params.push(c);
                }
                let n: usize = params.trim_start_matches('?').parse().unwrap_or(0);
                let line = &mut lines[row];
                match command {
                    'K' if n == 2 => line.clear(),
                    'K' if n == 0 => line.truncate(col),
                    'K' => line.truncate(0),
                    'A' => row = row.saturating_sub(n.max(1)),
                    'G' => col = n.saturating_sub(1),
                    'J' => {
                        line.truncate(col);
                        lines.truncate(row + 1);
                    }
                    _ => {}
                }
            }
            c => {
                let line = &mut lines[row];
                if line.len() <= col {
                    line.resize(col + 1, ' ');
                }
                line[col] = c;
                col += 1;
            }
        }
    }
    lines
        .into_iter()
        .map(|l| l.into_iter().collect::<String>().trim_end().to_string())
        .collect()
}

/// Whether a line shown is (or holds) the progress bar: "00:00:03 [=====>   ]  20% ...".
fn is_bar(line: &str) -> bool {
    line.contains(" [") && line.contains("] ") && line.contains('%') && line.contains("00:")
}

#[test]
fn at_a_terminal_a_solve_shows_one_bar_then_its_summary_and_keeps_task_lines_in_its_log() {
    let dir = temp_dir("terminal-pty");
    let args = [
        "solve",
        "--game",
        "musashi33",
        "--max-browns",
        "6",
        "--out",
        s(&dir),
    ];
    let Some(written) = retro_at_terminal(&args) else {
        return;
    };
    let shown = screen(&written);
    println!("{}", shown.join("\n"));
    // No task-level log lines at the terminal, and no copy of the bar left behind.
    assert!(
        !shown.iter().any(|l| l.contains(" INFO ")),
        "log lines at the terminal: {shown:#?}"
    );
    assert!(
        !shown.iter().any(|l| is_bar(l)),
        "a copy of the bar was left: {shown:#?}"
    );
    // The built-in workers start at once: no instruction to start one.
    assert!(!written.contains("waiting for a worker"), "{written:?}");
    assert!(!written.contains("ETA 0 s"), "{written:?}");
    let summary = format!("Solved 37,937,210 positions into {} in ", s(&dir));
    assert!(
        shown.iter().any(|l| l.starts_with(&summary)),
        "no summary: {shown:#?}"
    );
    // The task lines are in the job's log.
    let log = std::fs::read_to_string(dir.join("retro.log")).expect("retro.log written");
    assert!(log.contains("task merged"), "{log}");
}

#[test]
fn at_a_terminal_verbose_log_lines_go_around_the_bar() {
    let dir = temp_dir("terminal-pty-verbose");
    let args = [
        "solve",
        "-v",
        "--game",
        "musashi33",
        "--max-browns",
        "5",
        "--out",
        s(&dir),
    ];
    let Some(written) = retro_at_terminal(&args) else {
        return;
    };
    let shown = screen(&written);
    println!("{}", shown.join("\n"));
    let merged = shown.iter().filter(|l| l.contains("task merged")).count();
    assert!(merged >= 5, "with -v the task lines are shown: {shown:#?}");
    assert!(
        shown.iter().all(|l| !is_bar(l)),
        "a log line left a copy of the bar: {shown:#?}"
    );
    assert!(
        shown.iter().any(|l| l.starts_with("Solved ")),
        "no summary: {shown:#?}"
    );
}

/// Runs `retro args` (stdout and stderr pipes) and fails the test if it has not finished
/// within `limit`: a hang is a failure, not a test that never ends.
fn finishes_within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_retro"))
        .args(args)
        .env_remove("RETRO_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("retro runs");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("retro {args:?} still running after {limit:?} (hung)");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn the_in_process_driver_logs_around_its_bar_without_hanging() {
    // Its stage lines are logged while the bar lives; the log writer suspends the bar, so
    // logging must not take the bar's lock a second time (it once hung here).
    for (name, verbose) in [("plain", &[][..]), ("verbose", &["-v"][..])] {
        let dir = temp_dir(&format!("terminal-in-process-{name}"));
        let args = [
            &[
                "solve",
                "--in-process",
                "--game",
                "ring-hop",
                "--cells",
                "8",
                "--tokens",
                "3",
            ][..],
            verbose,
            &["--out", s(&dir)],
        ]
        .concat();
        let out = finishes_within(&args, Duration::from_secs(120));
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("stage finished"),
            "{}",
            text(&out.stderr)
        );
        if let Some(written) =
            retro_at_terminal(&[&args[..args.len() - 2], &["--out", s(&dir.join("tty"))]].concat())
        {
            assert!(written.contains("Solved "), "{written}");
        }
    }
}
