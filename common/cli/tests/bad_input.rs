//! Bad input gets one clear error line, a non-zero exit, no panic, and nothing overwritten.

mod support;

use support::*;

/// A small solve in a directory of its own (tests run in parallel).
fn solved_small(name: &str) -> std::path::PathBuf {
    let dir = temp_dir(name).join("out");
    retro_ok(&["solve", "--max-browns", "3", "--out", s(&dir), "--quiet"]);
    dir
}

#[test]
fn malformed_positions() {
    let dir = solved_small("malformed");
    let d = s(&dir);
    for (position, side, needle) in [
        ("o....,.....,..X..,.....", "brown", "has 4 rows"),
        ("o....,.....,..X..,.....,....", "brown", "row 4"),
        ("o....,.....,..X..,.....,....X", "brown", "two black"),
        ("o....,.....,.....,.....,.....", "brown", "no black"),
        ("o....,.....,..X..,.....,.....", "white", "unknown side"),
        (
            "o....,.....,..X..,.....,..*..",
            "brown",
            "unexpected character",
        ),
        ("oooo.,ooo..,..X..,.....,.....", "brown", "at most 3"),
    ] {
        let e = retro_err(&["probe", "--out", d, position, side]);
        assert!(e.contains(needle), "{position} {side}: {e}");
    }
    let e = retro_err(&["probe", "--out", d, "o....,.....,..X..,.....,....."]);
    assert!(e.contains("give a position and a side"), "{e}");
    // A batch: comments and blank lines skipped, a bad line reported with its number while
    // the others are answered, and a failing exit at the end.
    let lines = dir.parent().unwrap().join("lines.txt");
    let batch = "# positions to look up\n\no....,.....,..X..,.....,..... brown\nbad line\n.o...,.....,..X..,.....,..... black\n";
    std::fs::write(&lines, batch).unwrap();
    let out = support::retro(&["probe", "--tables", d, "--file", s(&lines)]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.status.success());
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(
        stderr.contains("lines.txt: line 4: unknown side 'line'"),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: ") && stderr.contains("1 bad line"),
        "{stderr}"
    );
    // `-` reads standard input.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_retro"))
        .args(["probe", "--tables", d, "--file", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"o....,.....,..X..,.....,..... brown\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}

#[test]
fn positions_off_the_board() {
    let dir = temp_dir("off-board").join("out");
    retro_ok(&[
        "solve",
        "--game",
        "musashi33",
        "--max-browns",
        "2",
        "--out",
        s(&dir),
        "--quiet",
    ]);
    let e = retro_err(&[
        "probe",
        "--out",
        s(&dir),
        "o....o.,.......,..X....,.......,.......",
        "brown",
    ]);
    assert!(e.contains("not on a point"), "{e}");
}

#[test]
fn unknown_game_and_bad_flags() {
    let dir = temp_dir("flags");
    let out = retro(&["solve", "--game", "chess", "--out", s(&dir)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("invalid value 'chess'") && !stderr.contains("panicked"),
        "{stderr}"
    );
    let e = retro_err(&["solve", "--max-browns", "25", "--out", s(&dir.join("o"))]);
    assert!(e.contains("at most 24 browns"), "{e}");
    let e = retro_err(&["solve", "--threads", "0", "--out", s(&dir.join("o"))]);
    assert!(e.contains("--threads"), "{e}");
}

#[test]
fn missing_and_foreign_output_directories() {
    let dir = temp_dir("dirs");
    let e = retro_err(&["counts", "--out", s(&dir.join("nowhere"))]);
    assert!(e.contains("no such output directory"), "{e}");
    let e = retro_err(&[
        "probe",
        "--out",
        s(&dir),
        "o....,.....,..X..,.....,.....",
        "brown",
    ]);
    assert!(e.contains("no manifest.json"), "{e}");
    // A directory with someone else's files is never written into.
    let foreign = dir.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("thesis.tex"), "precious").unwrap();
    let e = retro_err(&["solve", "--max-browns", "2", "--out", s(&foreign)]);
    assert!(e.contains("refusing to write"), "{e}");
    let names: Vec<_> = std::fs::read_dir(&foreign).unwrap().collect();
    assert_eq!(names.len(), 1);
    // A directory holding another solve is not overwritten either.
    let other = dir.join("other");
    retro_ok(&["solve", "--max-browns", "2", "--out", s(&other), "--quiet"]);
    let e = retro_err(&[
        "solve",
        "--game",
        "musashi33",
        "--max-browns",
        "2",
        "--out",
        s(&other),
    ]);
    assert!(e.contains("holds a different solve"), "{e}");
    // A damaged manifest is reported by name.
    let manifest = other.join("manifest.json");
    let text =
        std::fs::read_to_string(&manifest)
            .unwrap()
            .replacen("\"stages\": 3", "\"stages\": 4", 1);
    std::fs::write(&manifest, text).unwrap();
    let e = retro_err(&["counts", "--out", s(&other)]);
    assert!(e.contains("manifest.json") && e.contains("checksum"), "{e}");
}

#[test]
fn board_file_errors_name_the_line() {
    let dir = temp_dir("boardfile");
    let file = dir.join("bad.txt");
    for (text, needle) in [
        (
            "name: T\npoints: 00 10\nedges: 00-10 10-30\n",
            "line 3: edge 10-30: unknown point 30",
        ),
        (
            "name: T\npoints: 00 10 00\nedges: 00-10\n",
            "line 2: duplicate point 00",
        ),
        (
            "name: T\npoints: 00 10 20\nedges: 00-10\n",
            "line 2: isolated point 20",
        ),
        (
            "name: T\npoints: 00 10\nedges: 00-10 10-00\n",
            "line 3: duplicate edge",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let e = retro_err(&[
            "solve",
            "--board-file",
            s(&file),
            "--out",
            s(&dir.join("o")),
        ]);
        assert!(e.contains("bad.txt") && e.contains(needle), "{e}");
        assert!(
            !dir.join("o").exists(),
            "nothing may be written for a bad board file"
        );
    }
    let e = retro_err(&[
        "solve",
        "--board-file",
        s(&dir.join("missing.txt")),
        "--out",
        s(&dir.join("o")),
    ]);
    assert!(e.contains("cannot read board file"), "{e}");
}

#[test]
fn a_closed_output_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = temp_dir("pipe").join("out");
    retro_ok(&["solve", "--max-browns", "4", "--out", s(&dir), "--quiet"]);
    // Many lines of output, of which the reader takes one and hangs up.
    let lines = dir.parent().unwrap().join("many.txt");
    std::fs::write(
        &lines,
        "o....,.....,..X..,.....,..... brown\n".repeat(100_000),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_retro"))
        .args(["probe", "--out", s(&dir), "--file", s(&lines)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first.trim(), "o....,.....,..X..,.....,..... brown 0");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("error"),
        "{stderr}"
    );
}

#[test]
fn verifying_nothing_is_refused() {
    let dir = solved_small("verify-nothing");
    let out = retro(&["verify", "--out", s(&dir), "--recurrence", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let e = retro_err(&["verify", "--out", s(&dir)]);
    assert!(e.contains("nothing to verify"), "{e}");
}

#[test]
fn an_unreachable_coordinator_is_named_once_with_what_to_check() {
    let dir = temp_dir("unreachable");
    let token = dir.join("token");
    std::fs::write(&token, "secret\n").unwrap();
    // Port 1 on loopback: nothing listens there.
    let e = retro_err(&[
        "jobs",
        "--coordinator",
        "http://127.0.0.1:1",
        "--token-file",
        s(&token),
    ]);
    assert!(
        e.starts_with("error: cannot reach the coordinator at http://127.0.0.1:1: "),
        "{e}"
    );
    assert!(e.contains("check that it is running there"), "{e}");
    assert_eq!(e.matches("connect error").count(), 1, "{e}");
}

#[test]
fn every_command_help_ends_with_an_example() {
    for command in [
        "solve",
        "resume",
        "coordinator",
        "worker",
        "submit",
        "status",
        "cancel",
        "jobs",
        "counts",
        "report",
        "probe",
        "verify",
        "bench",
    ] {
        let help = retro_ok(&[command, "--help"]);
        assert!(help.contains("Example"), "retro {command} --help: {help}");
    }
    for binary in [
        env!("CARGO_BIN_EXE_coordinator"),
        env!("CARGO_BIN_EXE_worker"),
    ] {
        let out = std::process::Command::new(binary)
            .arg("--help")
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("Example"));
    }
}
