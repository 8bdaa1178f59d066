//! Reading a solved output directory: the manifest, and values looked up in slice tables.
//!
//! A side that the tables do not store ([`JobGame::derived_side`], Sixteen Musashi's black to
//! move) is derived here, by one ply of the game's defining recurrence over the stored side:
//! a single value from its successors' ([`Tables::stored_at`]), a whole section by a parallel
//! sweep reading the successors' sections through a bounded block cache ([`Tables::section`]).

use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use retro_engine::{Side, SliceId};
use retro_objects::Opener;
use retro_pipeline::job_dir::game_of;
use retro_pipeline::{Explore, JobGame, LookupError, Storage, StoredValues};
use retro_store::{BlockCache, Manifest, SectionReader, SliceRecord, SliceTable};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// An opened output directory.
pub struct Tables {
    dir: PathBuf,
    game: Arc<dyn JobGame>,
    /// The game's explorer (its notation, probe and reports), or why it has none.
    explorer: std::result::Result<Box<dyn Explore>, String>,
    records: Vec<Option<SliceRecord>>,
    /// Where the table files are: the directory, or the object store its manifest names.
    storage: Arc<dyn Storage>,
    files: Vec<OnceLock<Arc<SliceTable>>>,
    /// Held while a slice's table is opened, so that threads asking for it at once open it
    /// (and, from an object store, download it) once.
    opening: Vec<std::sync::Mutex<()>>,
    /// The bounded block cache shared with other directories (a server's), if any; otherwise
    /// each table keeps its own small one.
    cache: Option<Arc<BlockCache>>,
    /// The cache a derived section's sweep reads its successors through: `cache`, or one of
    /// [`DERIVE_CACHE_BYTES`] made on first use.
    derive_cache: OnceLock<Arc<BlockCache>>,
}

/// Decompressed blocks a sweep deriving a section keeps when the directory was opened without
/// a shared cache: all the successor sections of a slice of BOARD25 many times over. (On
/// BOARD33 a large slice's successors are scattered over 20 GB and more of values — a move
/// to a point off the symmetry's representatives lands on an unrelated index — so whole
/// sweeps there decompress a block for most lookups; see `docs/out-of-core.md`.)
const DERIVE_CACHE_BYTES: u64 = 1 << 30;

/// Positions per parallel task of a derived section's sweep.
const DERIVE_CHUNK: usize = 1 << 16;

/// The storages of the tables this process reads: a job in an object store is read through
/// a bounded cache of downloaded tables (`retro_objects::default_cache_dir`).
fn readers_storages() -> &'static Opener {
    static OPENER: OnceLock<Opener> = OnceLock::new();
    OPENER.get_or_init(|| {
        Opener::new(
            retro_objects::default_cache_dir(),
            retro_objects::DEFAULT_CACHE_BYTES,
        )
    })
}

/// Checks that `dir` is an existing output directory and reads its manifest.
pub fn load_manifest(dir: &Path) -> Result<Manifest> {
    if !dir.is_dir() {
        bail!("{}: no such output directory", dir.display());
    }
    let rebuild = "to rebuild it, re-run the `retro solve` that wrote it with the same flags, or, for a coordinator's job, restart the coordinator";
    Manifest::load(dir)
        .map_err(|e| anyhow::anyhow!("{e} ({rebuild})"))?
        .with_context(|| {
            format!(
                "{}: no manifest.json, so this is not a retro output directory (if it was one, {rebuild})",
                dir.display()
            )
        })
}

impl Tables {
    /// Opens the output directory `dir`.
    pub fn open(dir: &Path) -> Result<Tables> {
        Self::open_with(dir, None)
    }

    /// Opens the output directory `dir`, keeping decompressed blocks in `cache` (bounded,
    /// shared with every table opened with it).
    pub fn open_shared(dir: &Path, cache: &Arc<BlockCache>) -> Result<Tables> {
        Self::open_with(dir, Some(cache.clone()))
    }

    fn open_with(dir: &Path, cache: Option<Arc<BlockCache>>) -> Result<Tables> {
        let manifest = load_manifest(dir)?;
        let game = game_of(&manifest, dir, retro_games::open)?;
        let explorer = retro_games::explore(&manifest.game, &manifest.definition).map_err(|e| {
            format!(
                "{}: {}",
                dir.display(),
                retro_pipeline::process::error_text(&e)
            )
        });
        let mut records = vec![None; game.slice_count()];
        for r in &manifest.slices {
            let slot = records.get_mut(r.id as usize).with_context(|| {
                format!("{}: manifest lists unknown slice {}", dir.display(), r.id)
            })?;
            *slot = Some(r.clone());
        }
        let files = (0..game.slice_count()).map(|_| OnceLock::new()).collect();
        let opening = (0..game.slice_count())
            .map(|_| Default::default())
            .collect();
        let storage = readers_storages()
            .open(manifest.storage.as_deref().unwrap_or(""), dir)
            .with_context(|| format!("{}: manifest", dir.display()))?;
        Ok(Tables {
            dir: dir.to_path_buf(),
            game,
            explorer,
            records,
            storage,
            files,
            opening,
            cache,
            derive_cache: OnceLock::new(),
        })
    }

    /// The directory's name in viewer links and server requests (`table=`): its last path
    /// component, after resolving `.` and links.
    pub fn dir_name(&self) -> String {
        self.dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().to_string()))
            .unwrap_or_else(|| self.dir.display().to_string())
    }

    /// The solved directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The game, with its solver.
    pub fn game(&self) -> &dyn JobGame {
        &*self.game
    }

    /// The game's explorer: how positions typed in its notation are looked up and explained.
    pub fn explorer(&self) -> Result<&dyn Explore> {
        match &self.explorer {
            Ok(explorer) => Ok(&**explorer),
            Err(e) => bail!("{e}"),
        }
    }

    /// The byte at `index` of `slice` with `side` to move: stored, or derived from the
    /// successors' stored bytes if the table derives that side.
    pub fn stored_at(&self, slice: SliceId, index: u64, side: Side) -> Result<u8> {
        let table = self.table(slice)?;
        if !self.derives(table, side) {
            return Ok(table.value(side.index(), index)?);
        }
        if index >= table.section_len(side.index()) {
            bail!(
                "{}: index {index} beyond section length {}",
                table.path().display(),
                table.section_len(side.index())
            );
        }
        let other = side.other().index();
        let mut successor = |s, i| Ok(self.table(s)?.value(other, i)?);
        let derived = self.game.recurrence(side, slice, index, &mut successor)?;
        Ok(derived.unwrap_or(self.game.non_canonical_byte()))
    }

    /// Whether `table` derives the values of `side` rather than storing them (and the game
    /// knows how: otherwise reading them is the table's error).
    fn derives(&self, table: &SliceTable, side: Side) -> bool {
        table.derived_histogram(side.index()).is_some() && self.game.derived_side() == Some(side)
    }

    /// The values of `slice` with `side` to move, which its table derives: every position's
    /// recurrence over its successors, in parallel, their sections read through one bounded
    /// cache of decompressed blocks ([`DERIVE_CACHE_BYTES`]).
    fn derived_section(&self, slice: SliceId, side: Side) -> Result<Vec<u8>> {
        let len = self.table(slice)?.section_len(side.index()) as usize;
        let cache = self.derive_cache.get_or_init(|| {
            self.cache
                .clone()
                .unwrap_or_else(|| BlockCache::new(DERIVE_CACHE_BYTES))
        });
        let other = side.other();
        let readers: Vec<OnceLock<SectionReader>> = (0..self.game.slice_count())
            .map(|_| OnceLock::new())
            .collect();
        let reader = |s: SliceId| -> Result<&SectionReader> {
            let slot = &readers[s.0 as usize];
            if let Some(reader) = slot.get() {
                return Ok(reader);
            }
            let table = self.table_shared(s)?;
            if !table.is_stored(other.index()) {
                // As a single read would say it (not stored, or no such section).
                table.value(other.index(), 0)?;
            }
            Ok(slot.get_or_init(|| SectionReader::new(table.clone(), other.index(), cache)))
        };
        let mut values = vec![0u8; len];
        values
            .par_chunks_mut(DERIVE_CHUNK)
            .enumerate()
            .try_for_each(|(chunk, out)| -> Result<()> {
                let mut successor = |s, i| Ok(reader(s)?.value(i));
                let first = (chunk * DERIVE_CHUNK) as u64;
                self.game
                    .recurrence_range(side, slice, first, out, &mut successor)
            })?;
        // A block that could not be read gave 0s: nothing derived from it is returned.
        if let Some(failure) = readers
            .iter()
            .filter_map(OnceLock::get)
            .find_map(|r| r.failure())
        {
            return Err(anyhow!("{failure}"));
        }
        Ok(values)
    }

    /// The table of `slice`, opened on first use.
    pub fn table(&self, slice: SliceId) -> Result<&SliceTable> {
        Ok(self.table_shared(slice)?)
    }

    /// The table of `slice`, opened on first use, shared (as a [`SectionReader`] holds it).
    fn table_shared(&self, slice: SliceId) -> Result<&Arc<SliceTable>> {
        if let Some(t) = self.files[slice.0 as usize].get() {
            return Ok(t);
        }
        let _opening = self.opening[slice.0 as usize]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(t) = self.files[slice.0 as usize].get() {
            return Ok(t);
        }
        let Some(record) = self.records[slice.0 as usize].as_ref() else {
            return Err(LookupError::NotSolved(format!(
                "{}: slice {} is not solved yet",
                self.dir.display(),
                self.game.slice_name(slice)
            ))
            .into());
        };
        let path = self.storage.local_copy(&record.file)?;
        let table = match &self.cache {
            Some(cache) => SliceTable::open_shared(&path, cache)?,
            None => SliceTable::open(&path)?,
        };
        Ok(self.files[slice.0 as usize].get_or_init(|| Arc::new(table)))
    }
}

impl StoredValues for Tables {
    fn stored(&self, slice: SliceId, index: u64, side: Side) -> Result<u8> {
        self.stored_at(slice, index, side)
    }

    fn section(&self, slice: SliceId, side: Side) -> Result<Vec<u8>> {
        if self.game.slice_len(slice) == 0 {
            return Ok(Vec::new());
        }
        let table = self.table(slice)?;
        if self.derives(table, side) {
            return self.derived_section(slice, side);
        }
        Ok(table.read_section(side.index())?)
    }

    fn slice_name(&self, slice: SliceId) -> String {
        format!("{}: {}", self.dir.display(), self.game.slice_name(slice))
    }
}
