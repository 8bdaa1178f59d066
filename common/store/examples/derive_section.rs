//! Rewrites a solved directory's tables with one section derived instead of stored
//! ([`retro_store::Section::Derived`]), as solves now write them: `DST` gets a table per slice of
//! `SRC` in which section `SECTION` keeps only its length and the histogram `SRC`'s manifest
//! recorded for it, the other sections re-encoded at zstd level `LEVEL` (the solve's default
//! is 3), and a manifest with the new sizes and checksums. `SRC` is not changed. Then
//! `retro verify --tables DST --against SRC` checks every derived value against the stored one.
//! Used to measure BOARD33's table size in the derived format from an earlier full solve.
//!
//! Usage: `cargo run --release -p retro-store --example derive_section -- SRC DST SECTION LEVEL`

use retro_store::{Manifest, Section, SliceTable, TableWriter};
use std::path::Path;
use std::sync::Mutex;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [src, dst, section, level] = args.as_slice() else {
        return Err("usage: derive_section SRC DST SECTION LEVEL".into());
    };
    let (src, dst) = (Path::new(src), Path::new(dst));
    let derived: usize = section.parse().map_err(|e| format!("SECTION: {e}"))?;
    let level: i32 = level.parse().map_err(|e| format!("LEVEL: {e}"))?;
    let mut manifest =
        Manifest::load(src)?.ok_or_else(|| format!("{} has no manifest", src.display()))?;
    std::fs::create_dir_all(dst)?;
    // Two threads take slices in turn from a shared queue.
    let queue = Mutex::new(manifest.slices.iter_mut().collect::<Vec<_>>());
    let failure: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let Some(record) = queue.lock().unwrap().pop() else {
                    return;
                };
                if let Err(e) = rewrite(src, dst, record, derived, level) {
                    *failure.lock().unwrap() = Some(format!("{}: {e}", record.file));
                    return;
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap() {
        return Err(e.into());
    }
    manifest.save(dst)?;
    let bytes: u64 = manifest.slices.iter().map(|r| r.bytes).sum();
    println!(
        "{}: {} tables, {bytes} bytes, section {derived} derived",
        dst.display(),
        manifest.slices.len()
    );
    Ok(())
}

/// Writes `record`'s table of `src` into `dst` with section `derived` derived, and updates
/// `record` with the new file's size and checksum.
fn rewrite(
    src: &Path,
    dst: &Path,
    record: &mut retro_store::SliceRecord,
    derived: usize,
    level: i32,
) -> Result<(), Box<dyn std::error::Error>> {
    let table = SliceTable::open(&src.join(&record.file))?;
    let names = table.section_names();
    let histogram = record
        .histograms
        .get(derived)
        .ok_or("the manifest has no histogram for that section")?
        .clone();
    let mut stored = Vec::new();
    for i in 0..names.len() {
        stored.push(if i == derived {
            Vec::new()
        } else {
            table.read_section(i)?
        });
    }
    let sections: Vec<(&str, Section)> = names
        .iter()
        .enumerate()
        .map(|(i, &name)| {
            let section = if i == derived {
                Section::Derived {
                    len: table.section_len(i),
                    histogram: histogram.clone(),
                }
            } else {
                Section::Stored(&stored[i])
            };
            (name, section)
        })
        .collect();
    let bytes = TableWriter::encode_sections(table.label(), &sections, level);
    retro_store::write_atomic(&dst.join(&record.file), &bytes)?;
    record.bytes = bytes.len() as u64;
    record.checksum = format!("{:016x}", retro_store::checksum(&bytes));
    Ok(())
}
