//! How much disk *value logs* would take for solved tables: the measurement behind the
//! compact-arrays design in `docs/out-of-core.md`.
//!
//! A stage kernel that keeps no value bytes in memory would log, per slice, section and ply,
//! the sorted indices of the positions that got that ply's value, as varint-coded gaps. In a
//! solved table the positions of one ply are exactly those of one value (per section: the side
//! to move fixes the parity), so the logs' size can be read off the tables: for every table
//! of `DIR` whose name starts with `PREFIX`, every section and every value except 0 (decided
//! by the sweep, never logged) and 255 (the non-canonical marker), the indices holding that
//! value are coded as LEB128 varints of their gaps (the split stages' message coding,
//! [`encode_keys`]); the logs are also compressed with zstd level 1, as the kernel's scratch
//! lists could be.
//!
//! ```sh
//! cargo run --release -p retro-pipeline --example value_logs -- /work/b33k10 browns10
//! ```

use retro_pipeline::steps::encode_keys;
use retro_store::SliceTable;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, prefix] = &args[..] else {
        eprintln!("error: usage: value_logs DIR PREFIX (e.g. /work/b33k10 browns10)");
        std::process::exit(2);
    };
    if let Err(e) = measure(dir, prefix) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Reads the tables of `dir` named `prefix*.tbl` and prints what their value logs would take.
fn measure(dir: &str, prefix: &str) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {dir}: {e}"))?;
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with(prefix) && name.ends_with(".tbl")
        })
        .collect();
    names.sort();
    let (mut positions, mut logged, mut varint_bytes, mut zstd_bytes) = (0u64, 0u64, 0u64, 0u64);
    for path in &names {
        let table = SliceTable::open(path).map_err(|e| e.to_string())?;
        for section in 0..table.section_names().len() {
            let values = table.read_section(section).map_err(|e| e.to_string())?;
            positions += values.len() as u64;
            // One log per value: its indices, in index order.
            let mut indices: Vec<Vec<u64>> = vec![Vec::new(); 256];
            for (i, &v) in values.iter().enumerate() {
                if v != 0 && v != 255 {
                    indices[v as usize].push(i as u64);
                }
            }
            logged += indices.iter().map(|log| log.len() as u64).sum::<u64>();
            let logs = indices.iter().map(|log| encode_keys(log));
            for log in logs.filter(|log| !log.is_empty()) {
                varint_bytes += log.len() as u64;
                zstd_bytes += zstd::bulk::compress(&log, 1).map_or(log.len(), |c| c.len()) as u64;
            }
        }
    }
    println!(
        "{} tables, {positions} slots, {logged} logged ({:.1}%): varint logs {:.3} GB ({:.2} bytes per \
         logged position, {:.2} bits per slot), zstd-1 {:.3} GB ({:.2} bytes per logged position)",
        names.len(),
        100.0 * logged as f64 / positions.max(1) as f64,
        varint_bytes as f64 / 1e9,
        varint_bytes as f64 / logged.max(1) as f64,
        8.0 * varint_bytes as f64 / positions.max(1) as f64,
        zstd_bytes as f64 / 1e9,
        zstd_bytes as f64 / logged.max(1) as f64,
    );
    Ok(())
}
