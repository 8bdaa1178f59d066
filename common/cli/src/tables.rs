//! Reading a solved output directory: the manifest, and values looked up in slice tables.

use anyhow::{bail, Context, Result};
use retro_engine::{Game, Side as EngineSide, SliceId, Value};
use retro_mancala::Mancala;
use retro_musashi::{Musashi, Position, Side};
use retro_pipeline::job_dir::game_of;
use retro_pipeline::{GameRules, JobGame};
use retro_simpei::game::Simpei;
use retro_store::{Manifest, SliceRecord, SliceTable};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The section holding values with `side` to move.
pub fn section(side: Side) -> usize {
    musashi_side(side).index()
}

/// The engine's side of a Sixteen Musashi side (brown moves first).
pub fn musashi_side(side: Side) -> EngineSide {
    match side {
        Side::Brown => EngineSide::First,
        Side::Black => EngineSide::Second,
    }
}

/// An opened output directory.
pub struct Tables {
    dir: PathBuf,
    game: Arc<dyn JobGame>,
    /// The Sixteen Musashi game of the directory, if that is its game: what the commands with
    /// a position notation (`probe`, `verify --values`, `--recurrence`) read so far.
    musashi: Option<Musashi>,
    /// The SIMPEI game of the directory, if that is its game.
    simpei: Option<Simpei>,
    /// The mancala of the directory, if that is its game.
    mancala: Option<Mancala>,
    records: Vec<Option<SliceRecord>>,
    files: Vec<OnceLock<SliceTable>>,
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
        let manifest = load_manifest(dir)?;
        let game = game_of(&manifest, dir, retro_games::open)?;
        let musashi = match manifest.game.as_str() {
            Musashi::NAME => Some(
                Musashi::from_definition(&manifest.definition)
                    .with_context(|| format!("{}: manifest", dir.display()))?,
            ),
            _ => None,
        };
        let simpei = match manifest.game.as_str() {
            Simpei::NAME => Some(
                Simpei::from_definition(&manifest.definition)
                    .with_context(|| format!("{}: manifest", dir.display()))?,
            ),
            _ => None,
        };
        let mancala = match manifest.game.as_str() {
            Mancala::NAME => Some(
                Mancala::from_definition(&manifest.definition)
                    .with_context(|| format!("{}: manifest", dir.display()))?,
            ),
            _ => None,
        };
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
            musashi,
            simpei,
            mancala,
            records,
            files,
        })
    }

    /// The game, with its solver.
    pub fn game(&self) -> &dyn JobGame {
        &*self.game
    }

    /// The directory's Sixteen Musashi game, or an error naming the game it holds: positions
    /// are read and written in a game's notation, which only Sixteen Musashi has so far.
    pub fn musashi(&self) -> Result<&Musashi> {
        self.musashi.as_ref().with_context(|| {
            format!(
                "{} holds {} tables ({}); this command reads only Sixteen Musashi positions so far",
                self.dir.display(),
                self.game.name(),
                self.game.describe()
            )
        })
    }

    /// The directory's SIMPEI game, if that is its game.
    pub fn simpei(&self) -> Option<&Simpei> {
        self.simpei.as_ref()
    }

    /// The stored value of a SIMPEI position (its canonical image is looked up).
    pub fn simpei_value(&self, pos: &retro_simpei::Position) -> Result<u8> {
        let game = self.simpei.as_ref().context("not a SIMPEI directory")?;
        let (slice, key) = game.locate(pos.white, pos.black);
        let v = self.stored_at(slice, game.index(slice, key), Simpei::side_of(pos.to_move))?;
        self.canonical_value(slice, v)
    }

    /// The directory's mancala, if that is its game.
    pub fn mancala(&self) -> Option<&Mancala> {
        self.mancala.as_ref()
    }

    /// The stored margin of a mancala position; a board the solve does not hold is an error
    /// saying why.
    pub fn mancala_margin(&self, pos: &retro_mancala::Position) -> Result<i32> {
        let game = self.mancala.as_ref().context("not a mancala directory")?;
        if pos.board.holes() != game.holes() {
            bail!(
                "{} has {} holes; these tables are of a ring of {}",
                pos.board,
                pos.board.holes(),
                game.holes()
            );
        }
        let Some((slice, index)) = game.locate(&pos.board) else {
            bail!(
                "{} holds {} stones; these tables hold up to {}",
                pos.board,
                pos.board.total(),
                game.max_stones()
            );
        };
        let v = self.stored_at(slice, index, pos.side)?;
        Ok(v as i8 as i32)
    }

    /// Every value of a SIMPEI directory in memory (for `retro report`): both sections of
    /// every slice, read and checked once.
    pub fn simpei_solved(&self) -> Result<retro_simpei::analysis::Solved<'_>> {
        let game = self.simpei.as_ref().context("not a SIMPEI directory")?;
        let mut values = Vec::with_capacity(self.game.slice_count());
        for id in 0..self.game.slice_count() {
            let slice = SliceId(id as u32);
            if self.game.slice_len(slice) == 0 {
                values.push([Vec::new(), Vec::new()]);
                continue;
            }
            let table = self.table(slice)?;
            values.push([table.read_section(0)?, table.read_section(1)?]);
        }
        retro_simpei::analysis::Solved::new(game, values)
            .with_context(|| format!("{}", self.dir.display()))
    }

    /// `v`, read from the canonical slot of a position in `slice`, unless it is the
    /// non-canonical marker: then the table is damaged, and the error says so.
    fn canonical_value(&self, slice: SliceId, v: u8) -> Result<u8> {
        if v == Value::NON_CANONICAL.0 {
            bail!(
                "{}: canonical slot of {} holds the non-canonical marker (damaged table?)",
                self.dir.display(),
                self.game.slice_name(slice)
            );
        }
        Ok(v)
    }

    /// The stored byte at `index` of `slice` with `side` to move.
    pub fn stored_at(&self, slice: SliceId, index: u64, side: EngineSide) -> Result<u8> {
        Ok(self.table(slice)?.value(side.index(), index)?)
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
        let index = self.musashi()?.index(slice, key);
        Ok(self.table(slice)?.value(section(side), index)?)
    }

    /// The value of any position (its canonical image is looked up).
    pub fn value(&self, pos: &Position) -> Result<u8> {
        let game = self.musashi()?;
        let k = pos.browns.count_ones() as usize;
        if k > game.max_browns() {
            bail!(
                "position has {k} brown pieces; {} holds positions with at most {}",
                self.dir.display(),
                game.max_browns()
            );
        }
        let (slice, key, _) = game.locate(pos.black, pos.browns);
        let v = self.stored(slice, key, pos.side)?;
        self.canonical_value(slice, v)
    }
}
