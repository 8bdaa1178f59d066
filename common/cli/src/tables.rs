//! Reading a solved output directory: the manifest, and values looked up in slice tables.

use anyhow::{bail, Context, Result};
use retro_engine::{Game, SliceId, Value};
use retro_musashi::{Musashi, Position, Side};
use retro_pipeline::game_of;
use retro_store::{Manifest, SliceRecord, SliceTable};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use retro_pipeline::counts::{BLACK_SECTION, BROWN_SECTION};

/// The section holding values with `side` to move.
pub fn section(side: Side) -> usize {
    match side {
        Side::Brown => BROWN_SECTION,
        Side::Black => BLACK_SECTION,
    }
}

/// An opened output directory.
pub struct Tables {
    dir: PathBuf,
    game: Musashi,
    records: Vec<Option<SliceRecord>>,
    files: Vec<OnceLock<SliceTable>>,
}

/// Checks that `dir` is an existing output directory and reads its manifest.
pub fn load_manifest(dir: &Path) -> Result<Manifest> {
    if !dir.is_dir() {
        bail!("{}: no such output directory", dir.display());
    }
    Manifest::load(dir)?.with_context(|| {
        format!(
            "{}: no manifest.json, so this is not a retro output directory",
            dir.display()
        )
    })
}

impl Tables {
    /// Opens the output directory `dir`.
    pub fn open(dir: &Path) -> Result<Tables> {
        let manifest = load_manifest(dir)?;
        let game = game_of(&manifest, dir)?;
        let mut records = vec![None; game.slice_count()];
        for r in &manifest.slices {
            let slot = records.get_mut(r.id as usize).with_context(|| {
                format!("{}: manifest lists unknown slice {}", dir.display(), r.id)
            })?;
            *slot = Some(r.clone());
        }
        let files = (0..game.slice_count()).map(|_| OnceLock::new()).collect();
        Ok(Tables {
            dir: dir.to_path_buf(),
            game,
            records,
            files,
        })
    }

    /// The game.
    pub fn game(&self) -> &Musashi {
        &self.game
    }

    /// The table of `slice`, opened on first use.
    pub fn table(&self, slice: SliceId) -> Result<&SliceTable> {
        if let Some(t) = self.files[slice.0 as usize].get() {
            return Ok(t);
        }
        let record = self.records[slice.0 as usize].as_ref().with_context(|| {
            format!(
                "{}: slice {} is not solved yet",
                self.dir.display(),
                self.game.slice_name(slice)
            )
        })?;
        let table = SliceTable::open(&self.dir.join(&record.file))?;
        Ok(self.files[slice.0 as usize].get_or_init(|| table))
    }

    /// The stored value of the canonical `(slice, key)` with `side` to move.
    pub fn stored(&self, slice: SliceId, key: u64, side: Side) -> Result<u8> {
        let index = self.game.index(slice, key);
        Ok(self.table(slice)?.value(section(side), index)?)
    }

    /// The value of any position (its canonical image is looked up).
    pub fn value(&self, pos: &Position) -> Result<u8> {
        let k = pos.browns.count_ones() as usize;
        if k > self.game.max_browns() {
            bail!(
                "position has {k} brown pieces; {} holds positions with at most {}",
                self.dir.display(),
                self.game.max_browns()
            );
        }
        let (slice, key, _) = self.game.locate(pos.black, pos.browns);
        let v = self.stored(slice, key, pos.side)?;
        if v == Value::NON_CANONICAL.0 {
            bail!(
                "{}: canonical slot of {} holds the non-canonical marker (damaged table?)",
                self.dir.display(),
                self.game.slice_name(slice)
            );
        }
        Ok(v)
    }
}
