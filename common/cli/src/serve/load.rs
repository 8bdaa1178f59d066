//! `retro bench-serve`: the probe API's latency and throughput, measured on loopback.
//!
//! The server runs in this process on `127.0.0.1:0` (all cores for its runtime); the load
//! comes from client threads in the same process over keep-alive HTTP/1.1 connections, so the
//! two share the machine's cores (the figures are what one machine does serving itself).
//! Positions are collected by random walks from each served directory's start position
//! through the probe reports' moves. Everything is bounded: a number of requests and a time.
//!
//! Reported: **cold** latency (the block cache emptied before each request: every block
//! decompressed again, though the files stay in the OS page cache), **warm** latency
//! percentiles and throughput with all connections busy, and peak RSS.

use super::api::{probe_json, probe_json_uncached, router};
use super::served::Served;
use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use retro_pipeline::Query;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What `retro bench-serve` measures, and its bounds.
pub struct LoadPlan {
    /// Distinct positions to probe (per served directory).
    pub positions: usize,
    /// Cold requests (each after emptying the cache).
    pub cold: usize,
    /// Warm requests at most.
    pub requests: u64,
    /// Warm phase's time limit.
    pub seconds: f64,
    /// Concurrent connections of the warm phase.
    pub connections: usize,
    /// The block cache's budget.
    pub cache_bytes: u64,
    /// The answers cache's budget (0: every probe made afresh).
    pub answer_bytes: u64,
}

/// Runs the benchmark on `dirs` and prints its figures.
pub fn run(dirs: &[PathBuf], plan: &LoadPlan) -> Result<()> {
    if plan.connections == 0 || plan.positions == 0 {
        bail!("--connections and --positions must be at least 1");
    }
    let served = Arc::new(Served::open(dirs, plan.cache_bytes, plan.answer_bytes)?);
    let paths = walk(&served, plan.positions)?;
    let addr = start_server(served.clone())?;
    outln!(
        "bench-serve: {} positions from {}; server on http://{addr}/, block cache {} MiB, answers cache {} MiB",
        paths.len(),
        served.describe(),
        plan.cache_bytes >> 20,
        plan.answer_bytes >> 20
    );

    // Cold: one connection, both caches emptied before each request.
    let mut conn = Connection::open(addr)?;
    let mut cold = Vec::new();
    for path in paths.iter().take(plan.cold) {
        served.cache.clear();
        served.answers.clear();
        let started = Instant::now();
        conn.get_ok(path)?;
        cold.push(started.elapsed());
    }
    if !cold.is_empty() {
        outln!("cold  (caches emptied before each): {}", summary(&mut cold));
    }

    // Warm the cache with every position once, then load it from every connection.
    for path in &paths {
        conn.get_ok(path)?;
    }
    let started = Instant::now();
    let cpu_before = cpu_seconds();
    let deadline = started + Duration::from_secs_f64(plan.seconds);
    let per_connection = plan.requests.div_ceil(plan.connections as u64);
    let paths = Arc::new(paths);
    let threads: Vec<_> = (0..plan.connections)
        .map(|c| {
            let paths = paths.clone();
            std::thread::spawn(move || -> Result<Vec<Duration>> {
                let mut conn = Connection::open(addr)?;
                let mut times = Vec::new();
                let mut i = c * 7919;
                while (times.len() as u64) < per_connection && Instant::now() < deadline {
                    let path = &paths[i % paths.len()];
                    let t = Instant::now();
                    conn.get_ok(path)?;
                    times.push(t.elapsed());
                    i += 1;
                }
                Ok(times)
            })
        })
        .collect();
    let mut warm = Vec::new();
    for t in threads {
        warm.extend(
            t.join()
                .map_err(|_| anyhow::anyhow!("a load thread panicked"))??,
        );
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds()
        .zip(cpu_before)
        .map(|(after, before)| after - before);
    let count = warm.len();
    outln!(
        "warm  ({} connections):            {}",
        plan.connections,
        summary(&mut warm)
    );
    outln!(
        "throughput: {} probes in {elapsed:.2} s = {:.0} probes/s",
        count,
        count as f64 / elapsed
    );
    if let Some(cpu) = cpu.filter(|&c| c > 0.0) {
        // Other processes on the machine slow the wall clock, not the CPU time used.
        outln!(
            "CPU: {cpu:.2} s of this process (server and load together, {:.2} cores busy) = {:.0} probes per CPU-second",
            cpu / elapsed,
            count as f64 / cpu
        );
    }

    // The same probes without HTTP and without the answers cache, on one thread: what a probe
    // itself costs.
    let queries: Vec<Query> = paths.iter().map(|p| query_of(p)).collect();
    let started = Instant::now();
    let mut n = 0u64;
    while n < 20_000 && started.elapsed() < Duration::from_secs(3) {
        probe_json_uncached(&served, &queries[n as usize % queries.len()])
            .map_err(|e| anyhow::anyhow!("{}", e.1))?;
        n += 1;
    }
    let per = started.elapsed().as_secs_f64() / n as f64;
    outln!(
        "in process, no HTTP, answers made afresh, one thread: {:.1} µs per probe ({:.0} probes/s)",
        per * 1e6,
        1.0 / per
    );
    outln!(
        "block cache: {} blocks, {} MiB of {} MiB; answers cache: {} answers, {} MiB of {} MiB; peak RSS {} MiB",
        served.cache.blocks(),
        served.cache.bytes() >> 20,
        served.cache.capacity() >> 20,
        served.answers.len(),
        served.answers.bytes() >> 20,
        served.answers.capacity() >> 20,
        retro_engine::meter::peak_resident_bytes().unwrap_or(0) >> 20
    );
    Ok(())
}

/// CPU time used by this process so far (user and system, all threads), from
/// `/proc/self/stat` in clock ticks of 1/100 s; `None` where there is no such file.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    // After the command name: state is field 3 of the file, utime 14 and stime 15.
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

/// Median, p90, p99 and max of `times`.
fn summary(times: &mut [Duration]) -> String {
    times.sort();
    let at = |q: f64| {
        let i = ((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1;
        times[i].as_secs_f64() * 1e3
    };
    format!(
        "n {}, median {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        times.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    )
}

/// Request paths of up to `per_dir` distinct positions of each directory: random walks from
/// its start position (or example) through its probe reports' moves.
fn walk(served: &Served, per_dir: usize) -> Result<Vec<String>> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let mut paths = Vec::new();
    for dir in &served.dirs {
        let start = dir
            .explorer()
            .board()
            .and_then(|b| b["start"].as_str().map(str::to_string))
            .unwrap_or_else(|| dir.explorer().example().to_string());
        let mut seen = std::collections::HashSet::new();
        let mut current = start.clone();
        let mut steps = 0;
        while seen.len() < per_dir && steps < per_dir * 50 {
            steps += 1;
            let query = Query::from([
                ("table".to_string(), dir.name.clone()),
                ("position".to_string(), current.clone()),
            ]);
            let report: serde_json::Value = serde_json::from_slice(
                &probe_json(served, &query)
                    .map_err(|e| anyhow::anyhow!("probing {current}: {}", e.1))?,
            )?;
            seen.insert(current.clone());
            let next: Vec<&str> = report["moves"]
                .as_array()
                .map(|m| m.iter().filter_map(|m| m["position"].as_str()).collect())
                .unwrap_or_default();
            current = if next.is_empty() || rng.gen_bool(0.02) {
                start.clone()
            } else {
                next[rng.gen_range(0..next.len())].to_string()
            };
        }
        let mut seen: Vec<_> = seen.into_iter().collect();
        seen.sort();
        paths.extend(seen.into_iter().map(|p| {
            format!(
                "/api/probe?table={}&position={}",
                encode(&dir.name),
                encode(&p)
            )
        }));
    }
    Ok(paths)
}

/// The query parameters of a path written by [`walk`].
fn query_of(path: &str) -> Query {
    let query = path.split_once('?').map_or("", |(_, q)| q);
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), decode(v)))
        .collect()
}

/// `text` percent-encoded for a query string.
fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~,".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The inverse of [`encode`].
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], text.get(i + 1..i + 3)) {
            (b'%', Some(hex)) if u8::from_str_radix(hex, 16).is_ok() => {
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).to_string()
}

/// Starts the server on a free loopback port in a thread of its own; returns its address.
fn start_server(served: Arc<Served>) -> Result<SocketAddr> {
    let listener =
        std::net::TcpListener::bind("127.0.0.1:0").context("cannot listen on loopback")?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let runtime = crate::runtime()?;
    std::thread::spawn(move || {
        runtime.block_on(async move {
            if let Ok(listener) = tokio::net::TcpListener::from_std(listener) {
                let _ = axum::serve(listener, router(served)).await;
            }
        })
    });
    Ok(addr)
}

/// A keep-alive HTTP/1.1 client connection (just enough for the benchmark's GETs).
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Connection {
    fn open(addr: SocketAddr) -> Result<Connection> {
        let stream =
            TcpStream::connect(addr).with_context(|| format!("cannot connect to {addr}"))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Connection {
            writer: stream.try_clone()?,
            reader: BufReader::new(stream),
        })
    }

    /// GETs `path`; an answer other than 200 is an error with its body.
    fn get_ok(&mut self, path: &str) -> Result<Vec<u8>> {
        write!(
            self.writer,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        )?;
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let status = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let mut length = None;
        loop {
            line.clear();
            self.reader.read_line(&mut line)?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
        }
        let length = length.context("answer without content-length")?;
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body)?;
        if status != "200" {
            bail!("{path}: HTTP {status}: {}", String::from_utf8_lossy(&body));
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_round_trip() {
        let text = "ooooo,o...o,o.X.o,o...o,ooooo brown";
        let path = format!("/api/probe?table=b%2025&position={}", encode(text));
        let q = query_of(&path);
        assert_eq!(q["position"], text);
        assert_eq!(q["table"], "b 25");
    }
}
