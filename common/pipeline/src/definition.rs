//! Which game and board a job solves, and how that is recorded.
//!
//! The definition is a JSON object (board name, board file text, brown limit). It is written
//! into every manifest and every task, so that a worker rebuilds exactly the game the
//! coordinator planned, and a job directory is only ever resumed by the same definition.

use anyhow::{bail, Context, Result};
use retro_musashi::{Board, Musashi};
use retro_store::Manifest;
use std::path::Path;

/// The game name recorded for Sixteen Musashi.
pub const MUSASHI: &str = "musashi";

/// The manifest's record of what was solved: the board file text and the brown limit.
pub fn definition(game: &Musashi) -> serde_json::Value {
    serde_json::json!({
        "board": game.board().name,
        "board_file": game.board().source,
        "max_browns": game.max_browns(),
    })
}

/// Whether a solve of definition `old` is a finished part of a solve of `new`: the same board
/// file, and `new` allows at least as many browns. Musashi's stages and slices do not depend on
/// the brown limit (a stage reads only stages with fewer browns), so the finished stages of
/// `old` are finished stages of `new`, byte for byte.
pub fn grows_into(old: &serde_json::Value, new: &serde_json::Value) -> bool {
    old["board_file"] == new["board_file"]
        && old["board_file"].is_string()
        && matches!(
            (old["max_browns"].as_u64(), new["max_browns"].as_u64()),
            (Some(a), Some(b)) if a <= b
        )
}

/// Rebuilds the game of `name` from its recorded definition.
pub fn game_from_definition(name: &str, definition: &serde_json::Value) -> Result<Musashi> {
    if name != MUSASHI {
        bail!("game '{name}' is not known to this build");
    }
    // (The brown limit below is checked against the board; a definition from a manifest or a
    // submission is untrusted input.)
    let source = definition["board_file"]
        .as_str()
        .context("definition has no board file")?;
    let max_browns = definition["max_browns"]
        .as_u64()
        .context("definition has no brown limit")?;
    let board = Board::from_text(source).context("definition's board file")?;
    if max_browns as usize >= board.len() {
        bail!(
            "brown limit {max_browns} is too large for {} ({} points)",
            board.name,
            board.len()
        );
    }
    Ok(Musashi::new(board, Some(max_browns as usize)))
}

/// The game a manifest was solved for.
pub fn game_of(manifest: &Manifest, dir: &Path) -> Result<Musashi> {
    if manifest.game != MUSASHI {
        bail!(
            "{}: holds tables of game '{}', which this build cannot read",
            dir.display(),
            manifest.game
        );
    }
    game_from_definition(&manifest.game, &manifest.definition)
        .with_context(|| format!("{}: manifest", dir.display()))
}
