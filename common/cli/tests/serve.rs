//! `retro serve` as a real process: the probe API on a solved BOARD25 (value 32 at the start,
//! moves best first, every value equal to `retro probe --json`'s), its errors, the picture,
//! and the web viewer driven in headless Chromium through WebDriver.

mod support;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::*;

const START_QUERY: &str = "size=25&turn=brown&init=ooooo,o...o,o.X.o,o...o,ooooo";

/// BOARD25 solved whole (`b25`) and up to 8 browns (`b25-8`), once for all tests; the whole
/// table's interesting positions recorded by `retro extremes` (its JSON: [`extremes`]).
fn solved() -> &'static (PathBuf, PathBuf) {
    &solved_and_extremes().0
}

/// What `retro extremes --out b25 --json` printed.
fn extremes() -> &'static Value {
    &solved_and_extremes().1
}

fn solved_and_extremes() -> &'static ((PathBuf, PathBuf), Value) {
    static DIRS: OnceLock<((PathBuf, PathBuf), Value)> = OnceLock::new();
    DIRS.get_or_init(|| {
        let root = temp_dir("serve");
        let (full, small) = (root.join("b25"), root.join("b25-8"));
        retro_ok(&["solve", "--game", "musashi25", "--out", s(&full), "--quiet"]);
        retro_ok(&[
            "solve",
            "--game",
            "musashi25",
            "--max-browns",
            "8",
            "--out",
            s(&small),
            "--quiet",
        ]);
        let printed = retro_ok(&["extremes", "--out", s(&full), "--json"]);
        let extremes = serde_json::from_str(&printed).unwrap();
        ((full, small), extremes)
    })
}

/// A running `retro serve`, stopped when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    /// Serves both solved directories (the whole table first) on a free loopback port.
    fn start() -> Server {
        let (full, small) = solved();
        Server::of(&[full, small], &["--cache", "8MiB"])
    }

    /// Serves `dirs` on a free loopback port, with `extra` flags.
    fn of(dirs: &[&Path], extra: &[&str]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_retro"));
        command.arg("serve");
        for dir in dirs {
            command.args(["--out", s(dir)]);
        }
        let mut child = command
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .env("RETRO_LOG", "warn")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .rsplit("http://")
            .next()
            .unwrap()
            .trim_end_matches('/')
            .to_string();
        assert!(line.starts_with("serving "), "{line}");
        Server { child, addr }
    }

    /// GETs `path`: the status and the body.
    fn get(&self, path: &str) -> (u16, String) {
        http(&self.addr, "GET", path, None)
    }

    /// GETs `path` and reads the body as JSON.
    fn json(&self, path: &str) -> (u16, Value) {
        let (status, body) = self.get(path);
        let json = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
        (status, json)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request with `Connection: close`: the status and the body.
fn http(addr: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    match body {
        Some(body) => write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
        None => write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        ),
    }
    .unwrap();
    // Read the head, then as many bytes as it announces (a WebDriver server may keep the
    // connection open), chunks, or everything until the server closes.
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.trim_end().is_empty() {
            break;
        }
        head.push_str(&line);
    }
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let lower = head.to_ascii_lowercase();
    let length = lower
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|n| n.trim().parse::<usize>().unwrap());
    let mut body = Vec::new();
    match length {
        Some(n) => {
            body.resize(n, 0);
            reader.read_exact(&mut body).unwrap();
        }
        None => {
            reader.read_to_end(&mut body).unwrap();
        }
    }
    let body = String::from_utf8(body).unwrap();
    let body = if lower.contains("transfer-encoding: chunked") {
        dechunk(&body)
    } else {
        body
    };
    (status, body)
}

/// The body of a chunked answer.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}

/// `text` percent-encoded for a query string.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b',' | b'_' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// What `retro probe --json` says of `position` in `dir`.
fn probe_cli(dir: &Path, position: &str) -> Value {
    serde_json::from_str(&retro_ok(&["probe", "--out", s(dir), position, "--json"])).unwrap()
}

/// How good a value is for the side that moved into it (smaller first), as `retro probe`
/// ranks moves: brown's wins fastest first then losses; black's wins, then slowest losses.
fn rank(mover: &str, after: u64) -> (u64, i64) {
    match (mover, after) {
        ("brown", 0) => (1, 0),
        ("brown", v) => (0, v as i64),
        (_, 0) => (0, 0),
        (_, v) => (1, -(v as i64)),
    }
}

#[test]
fn the_start_has_value_32_and_its_moves_best_first_equal_to_retro_probe() {
    let server = Server::start();
    let (status, start) = server.json(&format!("/api/probe?{START_QUERY}"));
    assert_eq!(status, 200, "{start}");
    assert_eq!(start["value"], 32);
    assert_eq!(
        start["table"], "b25",
        "size=25 picks the first directory listed"
    );
    assert_eq!(start["meaning"], "brown wins in 31 plies");
    assert_eq!(start["principal_variation"].as_array().unwrap().len(), 31);
    assert_eq!(start["query"]["init"], "ooooo,o...o,o.X.o,o...o,ooooo");

    // Positions along the principal variation, both sides to move, and every move's value
    // against `retro probe --json` of the position it leads to.
    let mut positions = vec![start["position"].as_str().unwrap().to_string()];
    for m in start["principal_variation"]
        .as_array()
        .unwrap()
        .iter()
        .take(4)
    {
        positions.push(m["position"].as_str().unwrap().to_string());
    }
    let mut checked = 0;
    for position in &positions {
        let (status, api) = server.json(&format!(
            "/api/probe?table=b25&position={}",
            encode(position)
        ));
        assert_eq!(status, 200, "{api}");
        let cli = probe_cli(&solved().0, position);
        assert_eq!(api["value"], cli["value"], "{position}");
        assert_eq!(api["moves"], cli["moves"], "{position}");
        assert_eq!(api["principal_variation"], cli["principal_variation"]);
        let mover = api["turn"].as_str().unwrap();
        let moves = api["moves"].as_array().unwrap();
        assert!(!moves.is_empty(), "{position}");
        let ranks: Vec<_> = moves
            .iter()
            .map(|m| rank(mover, m["value"].as_u64().unwrap()))
            .collect();
        assert!(
            ranks.windows(2).all(|w| w[0] <= w[1]),
            "not best first: {ranks:?}"
        );
        for m in moves {
            let after = probe_cli(&solved().0, m["position"].as_str().unwrap());
            assert_eq!(m["value"], after["value"], "{position}: {}", m["move"]);
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked}");
}

#[test]
fn malformed_requests_get_400_and_unserved_ones_404_with_a_json_error() {
    let server = Server::start();
    let cases = [
        ("/api/probe?size=25&init=ooooo", 400, "rows"),
        (
            "/api/probe?size=25&turn=red&init=ooooo,o...o,o.X.o,o...o,ooooo",
            400,
            "side",
        ),
        (
            "/api/probe?size=25&init=ooooo,o...o,o.o.o,o...o,ooooo",
            400,
            "black",
        ),
        (
            "/api/probe?size=25&init=ooooo,o...o,o.X.o,o...o,ooooq",
            400,
            "'q'",
        ),
        ("/api/probe?size=25", 400, "init="),
        ("/api/probe?table=b25&position=ooooo", 400, "e.g."),
        ("/api/probe?table=b25&position=%FF%FE", 400, ""),
        ("/api/svg?size=25&init=xx", 400, "rows"),
        (
            "/api/probe?size=33&init=ooooo..,o...o..,o.X.o..,o...o..,ooooo..",
            404,
            "size 33",
        ),
        (
            "/api/probe?table=nope&position=x",
            404,
            "no served table nope",
        ),
        ("/api/probe?game=chess", 404, "chess"),
        ("/api/nothing", 404, "no such page"),
        // More browns than the b25-8 tables hold.
        (
            "/api/probe?table=b25-8&position=ooooo,o...o,o.X.o,o...o,ooooo%20brown",
            404,
            "at most 8",
        ),
    ];
    for (path, want, words) in cases {
        let (status, body) = server.get(path);
        assert_eq!(status, want, "{path}: {body}");
        let json: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}"));
        let error = json["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{path}: {body}"));
        assert!(
            !error.contains('\n') && !error.is_empty(),
            "{path}: {error}"
        );
        assert!(error.contains(words), "{path}: {error}");
        assert_eq!(json.as_object().unwrap().len(), 1, "{path}: {body}");
    }
    // The small table answers what it holds.
    let (status, small) =
        server.json("/api/probe?table=b25-8&position=.....,.o.o.,..X..,.o.o.,.....%20black");
    assert_eq!(status, 200, "{small}");
    assert_eq!(
        small["value"],
        probe_cli(&solved().0, ".....,.o.o.,..X..,.o.o.,..... black")["value"]
    );
}

#[test]
fn boards_pictures_and_the_page_are_served() {
    let server = Server::start();
    let (status, board) = server.json("/api/board?size=25");
    assert_eq!(status, 200);
    assert_eq!(board["points"].as_array().unwrap().len(), 25);
    assert_eq!(board["edges"].as_array().unwrap().len(), 56);
    assert_eq!(board["start"], "ooooo,o...o,o.X.o,o...o,ooooo brown");
    let (status, svg) = server.get(&format!("/api/svg?{START_QUERY}"));
    assert_eq!(status, 200);
    assert_eq!(svg.matches("data-point=").count(), 25);
    assert_eq!(svg.matches("class=\"point brown\"").count(), 16);
    let (_, tables) = server.json("/api/tables");
    assert_eq!(tables.as_array().unwrap().len(), 2);
    let (status, page) = server.get("/");
    assert_eq!(status, 200);
    assert!(page.contains("/viewer.js"), "{page}");
    let (status, script) = server.get("/viewer.js");
    assert_eq!(status, 200);
    assert!(script.contains("/api/probe"));

    // `retro probe --svg` writes the same picture.
    let file = temp_dir("serve-svg").join("start.svg");
    retro_ok(&[
        "probe",
        "--out",
        s(&solved().0),
        "ooooo,o...o,o.X.o,o...o,ooooo",
        "brown",
        "--svg",
        s(&file),
    ]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), svg);
}

/// Chromium and its WebDriver, installed with apt-get when missing (the test needs root for
/// that, and fails saying so when it cannot install them).
fn chromium() -> (PathBuf, PathBuf) {
    let find = || {
        let browser = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.exists())?;
        let driver = PathBuf::from("/usr/bin/chromedriver");
        driver.exists().then_some((browser, driver))
    };
    if let Some(found) = find() {
        return found;
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    assert!(
        root,
        "the browser test needs /usr/bin/chromium and /usr/bin/chromedriver: run it as root once (it installs them) or apt-get install chromium chromium-driver"
    );
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "-q", "chromium", "chromium-driver"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success())
    };
    if !install() {
        let _ = Command::new("apt-get").args(["update", "-q"]).status();
        install();
    }
    find().expect("apt-get could not install chromium and chromium-driver (the browser test needs /usr/bin/chromium and /usr/bin/chromedriver)")
}

/// A WebDriver session of headless Chromium.
struct Browser {
    driver: Child,
    addr: String,
    session: String,
}

impl Browser {
    fn start(browser: &Path, driver: &Path) -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr = format!("127.0.0.1:{port}");
        let started = Instant::now();
        while TcpStream::connect(&addr).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "chromedriver does not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let profile = temp_dir("serve-chromium-profile");
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,900",
            &format!("--user-data-dir={}", profile.display()),
        ];
        let capabilities = serde_json::json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": browser, "args": args},
        }}});
        let mut b = Browser {
            driver,
            addr,
            session: String::new(),
        };
        let answer = b.call("POST", "/session", capabilities);
        b.session = answer["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_string();
        b
    }

    /// One WebDriver command; its `value`.
    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let body = (!body.is_null()).then(|| body.to_string());
        let (status, answer) = http(&self.addr, method, path, body.as_deref());
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(status, 200, "{method} {path}: {answer}");
        answer["value"].clone()
    }

    fn session(&self, method: &str, path: &str, body: Value) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    fn open(&self, url: &str) {
        self.session("POST", "/url", serde_json::json!({ "url": url }));
    }

    fn script(&self, script: &str) -> Value {
        self.session(
            "POST",
            "/execute/sync",
            serde_json::json!({"script": script, "args": []}),
        )
    }

    /// Waits until the viewer has drawn and probed its position; its state.
    fn settled(&self) -> Value {
        let started = Instant::now();
        loop {
            let state = self.script(
                "const v = window.viewer; return v && v.ready ? {value: document.getElementById('value').textContent, position: v.history[v.at], at: v.at, error: v.error, search: location.search, best: v.report && v.report.moves.length ? v.report.moves[0] : null} : null",
            );
            if !state.is_null() {
                return state;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the viewer does not settle"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A real click on the element `css` selects.
    fn click(&self, css: &str) {
        let element = self.session(
            "POST",
            "/element",
            serde_json::json!({"using": "css selector", "value": css}),
        );
        let id = element
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}: {element}"))
            .to_string();
        self.session(
            "POST",
            &format!("/element/{id}/click"),
            serde_json::json!({}),
        );
    }

    fn screenshot(&self, path: &Path) {
        let png = self.session("GET", "/screenshot", Value::Null);
        std::fs::write(path, base64(png.as_str().unwrap())).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let path = format!("/session/{}", self.session);
            let _ = http(&self.addr, "DELETE", &path, None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Decodes standard base64.
fn base64(text: &str) -> Vec<u8> {
    let digit = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = text
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::new();
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= (digit(c) as u32) << (18 - 6 * i);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

#[test]
fn the_web_viewer_opens_a_published_link_plays_undoes_and_edits_in_chromium() {
    let (browser, driver) = chromium();
    let (full, small) = solved();
    let server = Server::of(&[full, small, trap_solved()], &["--cache", "8MiB"]);
    let b = Browser::start(&browser, &driver);

    // A link of the published viewer opens the same position, and the URL keeps its form.
    b.open(&format!("http://{}/?{START_QUERY}", server.addr));
    let state = b.settled();
    assert_eq!(state["error"], Value::Null, "{state}");
    assert_eq!(state["value"], "32", "{state}");
    assert_eq!(state["position"], "ooooo,o...o,o.X.o,o...o,ooooo brown");
    assert_eq!(state["search"], format!("?{START_QUERY}"));
    let best = state["best"].clone();

    // The best move, as the button plays it.
    b.click("#best");
    let after = b.settled();
    assert_eq!(after["position"], best["position"], "{after}");
    assert_eq!(after["value"], best["value"].to_string());
    assert!(
        after["search"].as_str().unwrap().contains("turn=black"),
        "{after}"
    );

    // Undo, then a move made by clicking a piece and its target on the board.
    b.click("#undo");
    assert_eq!(
        b.settled()["position"],
        "ooooo,o...o,o.X.o,o...o,ooooo brown"
    );
    b.click("#board g.point[data-point=\"00\"]");
    b.click("#board g.point[data-point=\"11\"]");
    let played = b.settled();
    assert_eq!(
        played["position"], ".oooo,oo..o,o.X.o,o...o,ooooo black",
        "{played}"
    );
    let (_, api) =
        server.json("/api/probe?table=b25&position=.oooo,oo..o,o.X.o,o...o,ooooo%20black");
    assert_eq!(played["value"], api["value"].to_string());
    b.screenshot(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewer-play.png"));

    // Edit: remove a brown, move black, switch the side to move.
    b.click("#mode-edit");
    b.settled();
    b.click("#tool-brown");
    b.click("#board g.point[data-point=\"44\"]");
    b.settled();
    b.click("#tool-black");
    b.click("#board g.point[data-point=\"21\"]");
    b.settled();
    b.click("#turn");
    let edited = b.settled();
    let want = ".oooo,ooX.o,o...o,o...o,oooo. brown";
    assert_eq!(edited["position"], want, "{edited}");
    let cli = probe_cli(&solved().0, want);
    assert_eq!(edited["value"], cli["value"].to_string(), "{edited}");
    b.click("#mode-play");
    b.settled();

    // The interesting positions: the first longest brown win opens with its value.
    b.click("details[data-list=\"longest-win-brown-to-move\"] summary");
    b.click("details[data-list=\"longest-win-brown-to-move\"] li");
    let longest = b.settled();
    assert_eq!(longest["value"], "38", "{longest}");
    b.script("window.scrollTo(0, 0); return null");
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewer.png");
    b.screenshot(&shot);
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000);
    println!("screenshot: {}", shot.display());

    // The trap-zone variant: a link with trap= opens its table, the zone is drawn, and the
    // value is the trap table's.
    let trapped = "oo...,oo...,X....,o....,..... brown";
    b.open(&format!(
        "http://{}/?size=25&turn=brown&init=oo...,oo...,X....,o....,.....&trap=00,04,40,44",
        server.addr
    ));
    let state = b.settled();
    assert_eq!(state["error"], Value::Null, "{state}");
    assert_eq!(state["position"], trapped, "{state}");
    let cli = probe_cli(trap_solved(), trapped);
    assert_eq!(state["value"], cli["value"].to_string(), "{state}");
    assert_ne!(
        cli["value"],
        probe_cli(small, trapped)["value"],
        "the base game's value differs"
    );
    let marks = b.script("return document.querySelectorAll('#board [data-trap]').length");
    assert_eq!(marks, 4);
    assert!(
        state["search"]
            .as_str()
            .unwrap()
            .contains("trap=00,04,40,44"),
        "{state}"
    );
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewer-trap.png");
    b.screenshot(&shot);
    println!("screenshot: {}", shot.display());
}

/// The number of browns in a position `"<rows> <side>"`.
fn browns(position: &str) -> usize {
    position
        .split_whitespace()
        .next()
        .unwrap()
        .matches('o')
        .count()
}

/// The list of `extremes` named `id`.
fn list<'a>(extremes: &'a Value, id: &str) -> &'a Value {
    extremes["lists"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == id)
        .unwrap_or_else(|| panic!("no list {id}: {extremes}"))
}

#[test]
fn extremes_list_the_published_records_and_are_served() {
    let found = extremes();
    // "Longest brown win with brown to move: value 38 (37 plies), 31 positions, all with 5
    // browns", and every one of them has that value in retro probe.
    let longest = list(found, "longest-win-brown-to-move");
    assert_eq!(longest["count"], 31, "{longest}");
    let positions = longest["positions"].as_array().unwrap();
    assert_eq!(positions.len(), 31);
    for p in positions {
        assert_eq!(p["value"], 38, "{p}");
        let position = p["position"].as_str().unwrap();
        assert_eq!(browns(position), 5, "{p}");
        assert!(position.ends_with(" brown"), "{p}");
    }
    let some = positions[17]["position"].as_str().unwrap();
    assert_eq!(probe_cli(&solved().0, some)["value"], 38);
    // "Most brown pieces in a black-to-move black win: 12".
    let most = list(found, "most-browns-black-win-black-to-move");
    let first = most["positions"][0]["position"].as_str().unwrap();
    assert_eq!(browns(first), 12, "{most}");
    assert!(first.ends_with(" black"));
    assert_eq!(probe_cli(&solved().0, first)["value"], 0);
    // Per brown count, the longest wins agree with the whole list's record.
    let per = list(found, "longest-win-per-browns-brown-to-move");
    let best = per["positions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["value"].as_u64().unwrap())
        .max();
    assert_eq!(best, Some(38));

    // The record is served, and a table without one gets a 404 saying how to make it.
    let server = Server::start();
    let (status, served) = server.json("/api/extremes?table=b25");
    assert_eq!(status, 200, "{served}");
    assert_eq!(&served, found);
    let (status, none) = server.json("/api/extremes?table=b25-8");
    assert_eq!(status, 404, "{none}");
    assert!(
        none["error"]
            .as_str()
            .unwrap()
            .contains("retro extremes --out"),
        "{none}"
    );

    // In a copy of the directory: the text lists viewer links in the published viewer's
    // parameters, and a damaged record is reported by name.
    let copy = temp_dir("serve-extremes");
    for entry in std::fs::read_dir(&solved().0).unwrap() {
        let entry = entry.unwrap();
        std::fs::hard_link(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    std::fs::remove_file(copy.join("extremes.json")).unwrap();
    let text = retro_ok(&["extremes", "--out", s(&copy), "--limit", "2"]);
    assert!(text.contains("31 positions, the first 2"), "{text}");
    assert!(
        text.contains("http://127.0.0.1:8080/?size=25&turn=brown&init="),
        "{text}"
    );
    let record = std::fs::read_to_string(copy.join("extremes.json")).unwrap();
    std::fs::write(copy.join("extremes.json"), record.replacen("38", "39", 1)).unwrap();
    let e = served_error_of_damaged_record(&copy);
    assert!(e.contains("extremes.json") && e.contains("checksum"), "{e}");
}

/// What a server of `dir` answers when asked for its (damaged) record of extremes.
fn served_error_of_damaged_record(dir: &Path) -> String {
    let (status, body) = Server::of(&[dir], &[]).get("/api/extremes");
    assert_eq!(status, 500, "{body}");
    body
}

/// BOARD25's trap-zone variant (the four corners) solved up to 8 browns, once for all tests.
fn trap_solved() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let trap = temp_dir("serve-trap").join("b25-trap-8");
        retro_ok(&[
            "solve",
            "--game",
            "musashi25",
            "--trap-points",
            "corners",
            "--max-browns",
            "8",
            "--out",
            s(&trap),
            "--quiet",
        ]);
        trap
    })
}

#[test]
fn the_trap_zone_variant_is_served_beside_the_base_game() {
    let trap = trap_solved();
    let server = Server::of(&[&solved().1, trap], &[]);
    // Black stalemated in the centre: lost in the base game, won off the trap zone.
    let init = ".....,.ooo.,.oXo.,.ooo.,.....";
    let (status, base) = server.json(&format!("/api/probe?size=25&turn=black&init={init}"));
    assert_eq!((status, &base["value"]), (200, &Value::from(1)), "{base}");
    let zone = "trap=00,04,40,44";
    let (status, trapped) =
        server.json(&format!("/api/probe?size=25&{zone}&turn=black&init={init}"));
    assert_eq!(
        (status, &trapped["value"]),
        (200, &Value::from(0)),
        "{trapped}"
    );
    assert_eq!(trapped["table"], "b25-trap-8");
    assert_eq!(trapped["query"]["trap"], "00,04,40,44");

    // A brown-to-move position: every move's value as `retro probe` gives it on the trap tables.
    let rows = "o...o,.o.o.,..X..,.o.o.,o...o";
    let (status, report) =
        server.json(&format!("/api/probe?size=25&{zone}&turn=brown&init={rows}"));
    assert_eq!(status, 200, "{report}");
    let cli = probe_cli(trap, &format!("{rows} brown"));
    assert_eq!(report["value"], cli["value"]);
    assert_eq!(report["moves"], cli["moves"]);
    assert!(!report["moves"].as_array().unwrap().is_empty());

    let (status, svg) = server.get(&format!("/api/svg?size=25&trap=corners&init={rows}"));
    assert_eq!(status, 200);
    assert_eq!(svg.matches("data-trap=").count(), 4, "{svg}");
    let (_, board) = server.json("/api/board?table=b25-trap-8");
    assert_eq!(board["trap"], serde_json::json!(["00", "04", "40", "44"]));
    // A zone not served is a 404 naming what is.
    let (status, error) = server.json(&format!("/api/probe?size=25&trap=22&init={init}"));
    assert_eq!(status, 404, "{error}");
}
