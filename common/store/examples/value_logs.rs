//! How much disk *value logs* would take for solved tables: the measurement behind the
//! compact-arrays design in `docs/out-of-core.md`.
//!
//! A stage kernel that keeps no value bytes in memory would log, per slice, section and ply,
//! the sorted indices of the positions that got that ply's value, as varint-coded gaps. In a
//! solved table the positions of one ply are exactly those of one value (per section: the side
//! to move fixes the parity), so the logs' size can be read off the tables: for every table
//! of `DIR` whose name starts with `PREFIX`, every section and every value except 0 (decided
//! by the sweep, never logged) and 255 (the non-canonical marker), the gaps between the
//! indices holding that value are coded as LEB128 varints; the logs are also compressed with
//! zstd level 1, as the kernel's scratch lists could be.
//!
//! ```sh
//! cargo run --release -p retro-store --example value_logs -- /work/b33k10 browns10
//! ```

use retro_store::SliceTable;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, prefix] = &args[..] else {
        eprintln!("error: usage: value_logs DIR PREFIX (e.g. /work/b33k10 browns10)");
        std::process::exit(2);
    };
    let mut names: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.starts_with(prefix.as_str()) && name.ends_with(".tbl")
            })
            .collect(),
        Err(e) => {
            eprintln!("error: cannot read {dir}: {e}");
            std::process::exit(1);
        }
    };
    names.sort();
    let (mut positions, mut logged, mut varint_bytes, mut zstd_bytes) = (0u64, 0u64, 0u64, 0u64);
    for path in &names {
        let table = match SliceTable::open(path) {
            Ok(table) => table,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        };
        for section in 0..table.section_names().len() {
            let values = match table.read_section(section) {
                Ok(values) => values,
                Err(e) => {
                    eprintln!("error: {e}");
                    std::process::exit(1);
                }
            };
            positions += values.len() as u64;
            // One log per value, in index order: the last index seen per value and its bytes.
            let mut last = [None::<u64>; 256];
            let mut logs: Vec<Vec<u8>> = vec![Vec::new(); 256];
            for (i, &v) in values.iter().enumerate() {
                if v == 0 || v == 255 {
                    continue;
                }
                let i = i as u64;
                let gap = match last[v as usize] {
                    Some(previous) => i - previous,
                    None => i,
                };
                last[v as usize] = Some(i);
                push_varint(&mut logs[v as usize], gap);
                logged += 1;
            }
            for log in logs.iter().filter(|log| !log.is_empty()) {
                varint_bytes += log.len() as u64;
                zstd_bytes += zstd::bulk::compress(log, 1).map_or(log.len(), |c| c.len()) as u64;
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
}

/// Appends `value` as a LEB128 varint (7 bits a byte, high bit = more follows).
fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}
