//! The directories a server serves, and which one a request addresses.

use super::answers::Answers;
use crate::tables::Tables;
use anyhow::{bail, Result};
use retro_pipeline::{Explore, Query};
use retro_store::BlockCache;
use std::path::PathBuf;
use std::sync::Arc;

/// One solved directory, opened.
pub struct Directory {
    /// Its number among the served directories (keys its kept answers).
    pub number: usize,
    /// Its name in requests (`table=`): the directory's last path component.
    pub name: String,
    /// Its tables, reading through the shared cache.
    pub tables: Tables,
}

impl Directory {
    /// The directory's explorer (every served directory has one: checked at open).
    pub fn explorer(&self) -> &dyn Explore {
        self.tables
            .explorer()
            .expect("served directories have an explorer (checked by Served::open)")
    }

    /// What the web page and `/api/tables` say of it: name, game, board, example position.
    pub fn summary(&self) -> serde_json::Value {
        let board = self.explorer().board();
        serde_json::json!({
            "table": self.name,
            "game": self.tables.game().name(),
            "board": board.as_ref().map(|b| b["name"].clone()),
            "size": board.as_ref().map(|b| b["size"].clone()),
            "trap": board.as_ref().map(|b| b["trap"].clone()),
            "example": self.explorer().example(),
        })
    }
}

/// Every served directory, and the caches they share.
pub struct Served {
    /// Probe answers made recently, kept whole.
    pub answers: Answers,
    /// In the order given on the command line (the first that answers a query is chosen).
    pub dirs: Vec<Directory>,
    /// The decompressed blocks of every directory.
    pub cache: Arc<BlockCache>,
}

/// Why no directory was chosen: the request named none that is served.
#[derive(Debug)]
pub struct NoSuchTable(pub String);

impl std::fmt::Display for NoSuchTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoSuchTable {}

impl Served {
    /// Opens `dirs` (each a solved directory whose game has an explorer) with one cache of
    /// `cache_bytes` decompressed bytes and one of `answer_bytes` of probe answers.
    pub fn open(dirs: &[PathBuf], cache_bytes: u64, answer_bytes: u64) -> Result<Served> {
        if dirs.is_empty() {
            bail!("give at least one solved directory: --out DIR");
        }
        let cache = BlockCache::new(cache_bytes);
        let mut opened: Vec<Directory> = Vec::new();
        for dir in dirs {
            let tables = Tables::open_shared(dir, &cache)?;
            tables.explorer()?;
            let name = tables.dir_name();
            if opened.iter().any(|d| d.name == name) {
                bail!("two served directories are named {name}: table= could not tell them apart (rename one)");
            }
            opened.push(Directory {
                number: opened.len(),
                name,
                tables,
            });
        }
        Ok(Served {
            answers: Answers::new(answer_bytes),
            dirs: opened,
            cache,
        })
    }

    /// One line naming what is served.
    pub fn describe(&self) -> String {
        self.dirs
            .iter()
            .map(|d| {
                let s = d.summary();
                let trap = match s["trap"].as_array() {
                    Some(points) => format!(
                        " trap zone {}",
                        points
                            .iter()
                            .filter_map(|p| p.as_str())
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                    None => String::new(),
                };
                match s["board"].as_str() {
                    Some(board) => {
                        format!("{} ({} {board}{trap})", d.name, d.tables.game().name())
                    }
                    None => format!("{} ({})", d.name, d.tables.game().name()),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The directory `query` addresses: `table=NAME`; else `game=NAME` (a game's name, the
    /// first served directory of it); else the first whose game answers the viewer
    /// parameters (Musashi: `size=` the board's points); else the only one served.
    pub fn choose(&self, query: &Query) -> Result<&Directory, NoSuchTable> {
        let names = || {
            self.dirs
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(name) = query.get("table") {
            return self.dirs.iter().find(|d| &d.name == name).ok_or_else(|| {
                NoSuchTable(format!("no served table {name} (served: {})", names()))
            });
        }
        if let Some(game) = query.get("game") {
            return self
                .dirs
                .iter()
                .find(|d| d.tables.game().name() == game)
                .ok_or_else(|| {
                    NoSuchTable(format!(
                        "no served table of game {game} (served: {})",
                        self.describe()
                    ))
                });
        }
        if let Some(d) = self.dirs.iter().find(|d| d.explorer().answers_query(query)) {
            return Ok(d);
        }
        match (&self.dirs[..], query.get("size")) {
            ([only], None) => Ok(only),
            (_, Some(size)) => Err(NoSuchTable(format!(
                "no served table for a board of size {size}{} (served: {})",
                query
                    .get("trap")
                    .map(|t| format!(" with the trap zone {t}"))
                    .unwrap_or_default(),
                self.describe()
            ))),
            _ => Err(NoSuchTable(format!(
                "say which table: table=NAME (served: {})",
                names()
            ))),
        }
    }
}
