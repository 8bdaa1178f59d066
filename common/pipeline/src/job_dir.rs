//! A job directory: where a solve's tables, manifest and count table live.
//!
//! The manifest is written first, so a directory is recognised as a job's own from the moment
//! it exists; after that the manifest lists the finished slices with their checksums. Resuming
//! means: recognise the directory, drop temporaries left by killed writers, and check every
//! recorded table against its checksum (a damaged or missing file is named and its stage solved
//! again).

use crate::game::{JobGame, OpenGame};
use crate::COUNTS_FILE;
use anyhow::{bail, Context, Result};
use retro_store::manifest::FORMAT;
use retro_store::table::file_checksum;
use retro_store::Manifest;
use std::path::Path;
use tracing::{info, warn};

/// The manifest of a job that has finished nothing yet.
pub fn fresh_manifest(game: &dyn JobGame) -> Manifest {
    Manifest {
        format: FORMAT.into(),
        game: game.name().into(),
        definition: game.definition(),
        stages: game.stages().len(),
        slices: Vec::new(),
        complete: false,
    }
}

/// Prepares `dir` for solving `game`: creates it, or checks that it holds a solve of the same
/// definition, or a smaller solve that this one grows (see
/// [`JobGame::grows_from`]), and removes temporaries a killed writer
/// left. Returns its manifest.
///
/// `own_files` are names the caller itself keeps in the directory (the coordinator's database):
/// they do not make a directory without a manifest "foreign".
pub fn prepare(dir: &Path, game: &dyn JobGame, own_files: &[&str]) -> Result<Manifest> {
    let fresh = fresh_manifest(game);
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
    match Manifest::load(dir)? {
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
            let foreign = std::fs::read_dir(dir)
                .with_context(|| format!("cannot read {}", dir.display()))?
                .filter_map(|e| e.ok())
                .any(|e| !own_files.iter().any(|own| e.file_name() == **own));
            if foreign {
                bail!(
                    "{}: is not empty and has no retro manifest; refusing to write into it",
                    dir.display()
                );
            }
            fresh.save(dir)?;
            Ok(fresh)
        }
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

/// Which stages are finished with intact files. Records of damaged stages are dropped from the
/// manifest (with a warning naming the file) so that they are recomputed.
pub fn check_finished(dir: &Path, game: &dyn JobGame, manifest: &mut Manifest) -> Vec<bool> {
    let stages = game.stages();
    let mut intact = vec![true; stages.len()];
    let mut present = vec![false; game.slice_count()];
    for r in &manifest.slices {
        let path = dir.join(&r.file);
        let ok = match file_checksum(&path) {
            Ok(sum) if format!("{sum:016x}") == r.checksum => true,
            Ok(_) => {
                warn!(
                    "{}: damaged (checksum mismatch); recomputing {}",
                    path.display(),
                    r.name
                );
                false
            }
            Err(e) => {
                warn!("{e}; recomputing {}", r.name);
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
