//! Which game and board a command works on, and how that is recorded in a manifest.

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use retro_musashi::{Board, Musashi};
use retro_store::Manifest;
use std::path::Path;

/// The built-in games.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GameName {
    /// Sixteen Musashi on BOARD25 (5x5 grid with diagonals).
    Musashi25,
    /// Sixteen Musashi on BOARD31 (diamond diagonals plus a 6-point triangle).
    Musashi31,
    /// Sixteen Musashi on BOARD33 (BOARD25 plus an 8-point triangle).
    Musashi33,
}

impl GameName {
    /// The built-in board of this game.
    pub fn board(self) -> Board {
        let name = match self {
            GameName::Musashi25 => "BOARD25",
            GameName::Musashi31 => "BOARD31",
            GameName::Musashi33 => "BOARD33",
        };
        Board::builtin(name).expect("built-in board")
    }
}

/// The board to solve: the board file if one is given, else the game's built-in board.
pub fn choose_board(game: GameName, board_file: Option<&Path>) -> Result<Board> {
    match board_file {
        None => Ok(game.board()),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read board file {}", path.display()))?;
            Board::from_text(&text).with_context(|| format!("{}", path.display()))
        }
    }
}

/// The manifest's record of what was solved: the board file text and the brown limit.
pub fn definition(game: &Musashi) -> serde_json::Value {
    serde_json::json!({
        "board": game.board().name,
        "board_file": game.board().source,
        "max_browns": game.max_browns(),
    })
}

/// The game a manifest was solved for.
pub fn game_of(manifest: &Manifest, dir: &Path) -> Result<Musashi> {
    if manifest.game != "musashi" {
        bail!(
            "{}: holds tables of game '{}', which this build cannot read",
            dir.display(),
            manifest.game
        );
    }
    let source = manifest.definition["board_file"]
        .as_str()
        .with_context(|| format!("{}: manifest has no board file", dir.display()))?;
    let max_browns = manifest.definition["max_browns"]
        .as_u64()
        .with_context(|| format!("{}: manifest has no brown limit", dir.display()))?;
    let board = Board::from_text(source)
        .with_context(|| format!("{}: manifest's board file", dir.display()))?;
    Ok(Musashi::new(board, Some(max_browns as usize)))
}
