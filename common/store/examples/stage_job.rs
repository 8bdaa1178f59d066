//! Prepares a job directory for timing one stage on its own: `DST` gets a manifest listing only
//! the slices of `SRC`'s stages below `STAGE` (their tables hard-linked, so no space is used),
//! so that `retro solve --out DST` with `SRC`'s game solves `STAGE` next, reading the lower
//! stages as a full run would. Used by `docs/bench/run-stage.sh`.
//!
//! Usage: `cargo run --release -p retro-store --example stage_job -- SRC DST STAGE`

use retro_store::Manifest;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [src, dst, stage] = args.as_slice() else {
        return Err("usage: stage_job SRC DST STAGE".into());
    };
    let (src, dst) = (Path::new(src), Path::new(dst));
    let stage: usize = stage
        .parse()
        .map_err(|e| format!("STAGE '{stage}' is not a stage number: {e}"))?;
    let mut manifest =
        Manifest::load(src)?.ok_or_else(|| format!("{} has no manifest", src.display()))?;
    std::fs::create_dir_all(dst)?;
    manifest.slices.retain(|r| r.stage < stage);
    manifest.complete = false;
    for record in &manifest.slices {
        let target = dst.join(&record.file);
        if !target.exists() {
            std::fs::hard_link(src.join(&record.file), &target)
                .map_err(|e| format!("cannot link {}: {e}", target.display()))?;
        }
    }
    manifest.save(dst)?;
    println!(
        "{}: {} slices of stages below {stage}",
        dst.display(),
        manifest.slices.len()
    );
    Ok(())
}
