//! `retro extremes`: a solved table's interesting positions (the game's record lengths and
//! piece counts), printed with links that open them in the web viewer, and recorded beside the
//! tables as `extremes.json` so that `retro serve` lists them without scanning the tables.

use crate::tables::Tables;
use anyhow::Result;
use retro_pipeline::{Explore, Extremes, Query};
use std::path::Path;

/// The record's file name inside a solved directory.
pub const FILE: &str = "extremes.json";

/// Finds the extremes of the directory `dir` (at most `limit` positions per list), records
/// them in `dir/extremes.json`, and prints them: as text with viewer links under `viewer`
/// (an URL such as `http://127.0.0.1:8080/`), or as JSON.
pub fn run(dir: &Path, limit: usize, json: bool, viewer: &str) -> Result<()> {
    let tables = Tables::open(dir)?;
    let explorer = tables.explorer()?;
    let found = explorer.extremes(&tables, limit)?;
    // Recording is a convenience for the server: a read-only directory still gets its list.
    if let Err(e) = retro_store::checked_json::save(&dir.join(FILE), "extremes", &found) {
        tracing::warn!("extremes not recorded for retro serve: {e}");
    }
    if json {
        outln!("{}", serde_json::to_string_pretty(&found)?);
        return Ok(());
    }
    outln!("# Extremes of {}", found.table);
    for list in &found.lists {
        outln!();
        let shown = list.positions.len() as u64;
        if shown < list.count {
            outln!(
                "## {} — {} positions, the first {shown}:",
                list.title,
                list.count
            );
        } else {
            outln!("## {} — {} positions:", list.title, list.count);
        }
        for p in &list.positions {
            outln!(
                "  {}  value {}: {} ({})",
                p.position,
                p.value,
                p.meaning,
                p.note
            );
            outln!("    {}", link(explorer, viewer, &tables, &p.position)?);
        }
    }
    Ok(())
}

/// The extremes recorded in `dir` by an earlier `retro extremes`, checked; `None` if there
/// are none.
pub fn load(dir: &Path) -> Result<Option<Extremes>> {
    Ok(retro_store::checked_json::load(
        &dir.join(FILE),
        "extremes",
        "extremes record",
    )?)
}

/// A viewer link to `position`: the game's own viewer parameters in the published viewer's
/// order (`size`, `turn`, `init`), or `table=` and `position=` for games without them.
fn link(explorer: &dyn Explore, viewer: &str, tables: &Tables, position: &str) -> Result<String> {
    let query = explorer.query_of_position(position)?;
    let mut pairs: Vec<(String, String)> = Vec::new();
    if query.is_empty() {
        pairs.push(("table".into(), tables.dir_name()));
        pairs.push(("position".into(), position.into()));
    } else {
        pairs.extend(in_published_order(&query));
    }
    let encoded = serde_urlencoded::to_string(&pairs)?.replace("%2C", ",");
    Ok(format!("{viewer}?{encoded}"))
}

/// `query`'s pairs with `size`, `turn` and `init` first, in that order.
fn in_published_order(query: &Query) -> Vec<(String, String)> {
    const FIRST: [&str; 3] = ["size", "turn", "init"];
    let mut pairs: Vec<(String, String)> = FIRST
        .iter()
        .filter_map(|k| query.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    pairs.extend(
        query
            .iter()
            .filter(|(k, _)| !FIRST.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    pairs
}
