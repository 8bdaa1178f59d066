//! Which game and board a command works on, and how that is recorded in a manifest.

use anyhow::{Context, Result};
use clap::ValueEnum;
use retro_musashi::Board;
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
