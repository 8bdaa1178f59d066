//! A job directory: where a solve's tables, manifest and count table live.
//!
//! The manifest is written first, so a directory is recognised as a job's own from the moment
//! it exists; after that the manifest lists the finished slices with their checksums. Resuming
//! means: recognise the directory, drop temporaries left by killed writers, and check every
//! recorded table against its checksum (a damaged or missing file is named and its stage solved
//! again).
//!
//! A damaged or missing manifest does not cost the tables beside it: every table file carries
//! its own checksums and names its slice, so the manifest is rebuilt from the tables that are
//! intact ([`rebuild_manifest`]), with a warning; only a directory holding files that are not
//! a job's is refused.

use crate::game::{JobGame, OpenGame};
use crate::stage::histogram;
use crate::storage::Storage;
use crate::COUNTS_FILE;
use anyhow::{bail, Context, Result};
use retro_engine::{Side, SliceId};
use retro_store::manifest::FORMAT;
use retro_store::table::file_checksum;
use retro_store::Manifest;
use retro_store::{SliceRecord, SliceTable, StoreError};
use std::path::Path;
use tracing::{info, warn};

/// The manifest of a job that has finished nothing yet, whose tables are in `storage` (empty:
/// the directory of the manifest; otherwise an object store location).
pub fn fresh_manifest(game: &dyn JobGame, storage: &str) -> Manifest {
    Manifest {
        format: FORMAT.into(),
        game: game.name().into(),
        definition: game.definition(),
        stages: game.stages().len(),
        slices: Vec::new(),
        complete: false,
        storage: (!storage.is_empty()).then(|| storage.to_string()),
    }
}

/// Positions of the finished slices `records` as the published tables count them: canonical
/// positions of the sections that hold positions of the game (both sides to move where both
/// do), not array slots. What a solve's summary and a job's status report.
pub fn published_positions(game: &dyn JobGame, records: &[SliceRecord]) -> u64 {
    records
        .iter()
        .flat_map(|r| {
            r.histograms
                .iter()
                .zip(Side::BOTH)
                .filter(|(_, side)| game.is_position(SliceId(r.id), *side))
                .map(|(h, _)| h)
        })
        .flat_map(|h| h.values())
        .sum()
}

/// Prepares `dir` for solving `game` with its tables in `storage` (empty: in `dir`): creates
/// it, or checks that it holds a solve of the same definition and storage, or a smaller solve
/// that this one grows (see [`JobGame::grows_from`]), and removes temporaries a killed writer
/// left. Returns its manifest.
///
/// `own_files` are names the caller itself keeps in the directory (the coordinator's database):
/// they do not make a directory without a manifest "foreign".
pub fn prepare(
    dir: &Path,
    game: &dyn JobGame,
    storage: &str,
    own_files: &[&str],
) -> Result<Manifest> {
    let fresh = fresh_manifest(game, storage);
    if !dir.exists() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create output directory {}", dir.display()))?;
        // The manifest comes first: a solve killed before its first stage finishes still
        // leaves a directory that a rerun recognises as its own and resumes.
        fresh.save(dir)?;
        return Ok(fresh);
    }
    if !dir.is_dir() {
        bail!("{}: exists and is not a directory", dir.display());
    }
    let loaded = match Manifest::load(dir) {
        Ok(loaded) => loaded,
        Err(e @ StoreError::Damaged { .. }) => {
            warn!("{e}; rebuilding it from the intact tables");
            return rebuild_into(dir, game, storage);
        }
        Err(e) => return Err(e.into()),
    };
    match loaded {
        Some(m) if m.storage != fresh.storage => bail!(
            "{}: holds a solve whose tables are in {}, not {}; choose another --out",
            dir.display(),
            storage_name(m.storage.as_deref().unwrap_or("")),
            storage_name(storage),
        ),
        Some(m) if m.game == fresh.game && m.definition == fresh.definition => {
            remove_stale_temporaries(dir)?;
            Ok(m)
        }
        Some(mut m) if m.game == fresh.game && game.grows_from(&m.definition) => {
            // A larger solve of the same board: its finished stages are ours. The manifest
            // takes the new definition first (a solve killed after this resumes the larger
            // solve), and the count table of the smaller one goes (written again at the end).
            remove_stale_temporaries(dir)?;
            info!(
                "{}: growing the solve into {}; finished stages are kept",
                dir.display(),
                game.describe()
            );
            m.definition = fresh.definition;
            m.stages = fresh.stages;
            m.complete = false;
            m.save(dir)?;
            let counts = dir.join(COUNTS_FILE);
            if counts.exists() {
                std::fs::remove_file(&counts)
                    .with_context(|| format!("cannot remove {}", counts.display()))?;
            }
            Ok(m)
        }
        Some(m) => bail!(
            "{}: holds a different solve ({}: {}); choose another --out",
            dir.display(),
            m.game,
            summarise(&m.definition)
        ),
        None => {
            // An empty directory is taken over; so is one holding only temporaries of a solve
            // killed before it wrote its manifest.
            remove_stale_temporaries(dir)?;
            let names: Vec<String> = std::fs::read_dir(dir)
                .with_context(|| format!("cannot read {}", dir.display()))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|name| name != crate::lock::LOCK_FILE)
                .filter(|name| !own_files.contains(&name.as_str()))
                .collect();
            if names.is_empty() {
                fresh.save(dir)?;
                return Ok(fresh);
            }
            // Files of this game's job only (its tables, count table, working directories):
            // a job whose manifest was lost. Anything else is someone else's directory.
            let tables: Vec<String> = (0..game.slice_count() as u32)
                .map(|s| game.table_file_name(SliceId(s)))
                .collect();
            let ours = |name: &String| {
                tables.contains(name)
                    || [
                        COUNTS_FILE,
                        crate::SCRATCH,
                        "shards",
                        "steps",
                        crate::process::JOB_LOG,
                    ]
                    .contains(&name.as_str())
            };
            if let Some(foreign) = names.iter().find(|n| !ours(n)) {
                bail!(
                    "{}: is not empty and has no retro manifest (it holds {foreign}); refusing to write into it",
                    dir.display()
                );
            }
            warn!(
                "{}: has no manifest but holds tables of this solve; rebuilding the manifest from the intact tables",
                dir.display()
            );
            rebuild_into(dir, game, storage)
        }
    }
}

/// A job's storage location in messages: the object store's, or "the directory itself".
pub fn storage_name(storage: &str) -> &str {
    match storage {
        "" => "the directory itself",
        _ => storage,
    }
}

/// Removes the temporary files an interrupted writer left behind (`.NAME.PID.tmp`, see
/// `retro_store::write_atomic`); they were never renamed into place, so nothing refers to them.
pub fn remove_stale_temporaries(dir: &Path) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') && name.ends_with(".tmp") {
            warn!(
                "{}: removing a temporary file left by an interrupted writer",
                entry.path().display()
            );
            std::fs::remove_file(entry.path())
                .with_context(|| format!("cannot remove {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Which stages are finished with intact files in `storage`. Records of damaged stages are
/// dropped from the manifest (with a warning naming the file) so that they are recomputed.
pub fn check_finished(
    storage: &dyn Storage,
    game: &dyn JobGame,
    manifest: &mut Manifest,
) -> Vec<bool> {
    let stages = game.stages();
    let mut intact = vec![true; stages.len()];
    let mut present = vec![false; game.slice_count()];
    for r in &manifest.slices {
        let ok = match storage.checksum(&r.file) {
            Ok((sum, _)) if format!("{sum:016x}") == r.checksum => true,
            Ok(_) => {
                warn!(
                    "{}: damaged (checksum mismatch); recomputing {}",
                    storage.describe(&r.file),
                    r.name
                );
                false
            }
            Err(e) => {
                warn!("{e:#}; recomputing {}", r.name);
                false
            }
        };
        if ok && (r.id as usize) < present.len() {
            present[r.id as usize] = true;
        } else {
            intact[r.stage.min(stages.len() - 1)] = false;
        }
    }
    for (i, stage) in stages.iter().enumerate() {
        if !stage.slices.iter().all(|s| present[s.0 as usize]) {
            intact[i] = false;
        }
    }
    manifest.slices.retain(|r| intact[r.stage]);
    intact
}

/// The game a manifest was solved for, opened through the registry's `open`.
pub fn game_of(
    manifest: &Manifest,
    dir: &Path,
    open: OpenGame,
) -> Result<std::sync::Arc<dyn JobGame>> {
    open(&manifest.game, &manifest.definition)
        .with_context(|| format!("{}: manifest", dir.display()))
}

/// The short fields of a definition document, for messages: `board=BOARD25, max_browns=6`
/// (long texts such as a board file are left out).
pub fn summarise(definition: &serde_json::Value) -> String {
    let Some(fields) = definition.as_object() else {
        return definition.to_string();
    };
    fields
        .iter()
        .filter_map(|(name, value)| match value {
            serde_json::Value::String(s) if s.len() <= 40 && !s.contains('\n') => {
                Some(format!("{name}={s}"))
            }
            serde_json::Value::Number(n) => Some(format!("{name}={n}")),
            serde_json::Value::Bool(b) => Some(format!("{name}={b}")),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Rebuilds the manifest of `dir` for `game` from its intact tables, saves it, and removes the
/// count table (rewritten when the solve finishes).
fn rebuild_into(dir: &Path, game: &dyn JobGame, storage: &str) -> Result<Manifest> {
    remove_stale_temporaries(dir)?;
    let manifest = rebuild_manifest(dir, game, storage);
    info!(
        "{}: manifest rebuilt with {} intact tables",
        dir.display(),
        manifest.slices.len()
    );
    manifest.save(dir)?;
    let counts = dir.join(COUNTS_FILE);
    if counts.exists() {
        std::fs::remove_file(&counts)
            .with_context(|| format!("cannot remove {}", counts.display()))?;
    }
    Ok(manifest)
}

/// The manifest `game`'s tables in `dir` make up: a record for every table that is intact (its
/// index and every block pass their checksums, it names its slice and has its length), the
/// records in slice order as a solve writes them. A missing or damaged table is left out with
/// a warning naming it (its stage is solved again); `complete` is left false. Only tables in
/// the directory are found: a job whose tables are in an object store (`storage`) is rebuilt
/// from its coordinator's database instead, and this finds none.
pub fn rebuild_manifest(dir: &Path, game: &dyn JobGame, storage: &str) -> Manifest {
    let mut manifest = fresh_manifest(game, storage);
    if !storage.is_empty() {
        return manifest;
    }
    for (stage, s) in game.stages().iter().enumerate() {
        for &slice in &s.slices {
            let path = dir.join(game.table_file_name(slice));
            if !path.exists() {
                continue;
            }
            match table_record(&path, game, stage, slice) {
                Ok(record) => manifest.slices.push(record),
                Err(e) => warn!("{}: not used: {e:#}", path.display()),
            }
        }
    }
    manifest.slices.sort_by_key(|r| r.id);
    manifest
}

/// The manifest record of the table of `slice` at `path`, read and checked whole.
fn table_record(
    path: &Path,
    game: &dyn JobGame,
    stage: usize,
    slice: SliceId,
) -> Result<SliceRecord> {
    let table = SliceTable::open(path)?;
    let name = game.slice_name(slice);
    if table.label() != name {
        bail!("it holds {}, not {name}", table.label());
    }
    let len = game.slice_len(slice);
    if table.section_names().len() != 2 {
        bail!("it has {} sections, not 2", table.section_names().len());
    }
    let mut histograms = Vec::new();
    for side in Side::BOTH {
        let section = side.index();
        if table.section_len(section) != len {
            bail!("section {section} has the wrong length");
        }
        // A derived section's histogram was recorded when it was solved; the stored sections
        // are read whole, which checks every block. (Tables written before sections were
        // derived store both: they stay valid.)
        let recorded = table.derived_histogram(section);
        if recorded.is_some() && game.derived_side() != Some(side) {
            bail!("section {section} is derived, but this game's readers cannot derive it");
        }
        histograms.push(match recorded {
            Some(h) => h.clone(),
            None => histogram(game, &table.read_section(section)?),
        });
    }
    Ok(SliceRecord {
        id: slice.0,
        stage,
        name,
        file: game.table_file_name(slice),
        positions: len,
        bytes: table.file_len(),
        checksum: format!("{:016x}", file_checksum(path)?),
        histograms,
    })
}
