//! Which game a command solves: a built-in choice (`--game`), with the options that game
//! takes, turned into the game with its solver through the registry.
//!
//! This is the one place of the command line that names games; everything after it handles a
//! [`JobGame`].

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use retro_mancala::Mancala;
use retro_musashi::{Board, Musashi};
use retro_pipeline::{GameRules, JobGame};
use retro_simpei::game::Simpei;
use retro_toys::RingHop;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The built-in games.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GameName {
    /// Sixteen Musashi on BOARD25 (5x5 grid with diagonals).
    Musashi25,
    /// Sixteen Musashi on BOARD31 (diamond diagonals plus a 6-point triangle).
    Musashi31,
    /// Sixteen Musashi on BOARD33 (BOARD25 plus an 8-point triangle).
    Musashi33,
    /// SIMPEI: 4x4 and 3x3 worlds, clipping with relocation, exactly-three rows (win, draw or
    /// loss).
    Simpei,
    /// The relay-sowing mancala on the 4x2 ring (8 holes, 16 stones; score margin).
    Mancala4,
    /// The relay-sowing mancala on the 8x2 ring (16 holes, 32 stones; solve up to
    /// `--max-stones`).
    Mancala8,
    /// The relay-sowing mancala on a ring of `--holes` holes.
    Mancala,
    /// Ring hop, the toy game of the worked example: win, draw or loss (cycles, draws).
    RingHop,
    /// Ring hop valued by score margin (a point per capture; captures both ways, cycles).
    RingHopScore,
}

impl GameName {
    /// The built-in board of a Sixteen Musashi choice.
    fn board(self) -> Option<Board> {
        let name = match self {
            GameName::Musashi25 => "BOARD25",
            GameName::Musashi31 => "BOARD31",
            GameName::Musashi33 => "BOARD33",
            _ => return None,
        };
        Some(Board::builtin(name).expect("built-in board"))
    }
}

/// The game, board file and limits to solve.
#[derive(Args, Clone, Debug)]
pub struct TargetArgs {
    /// The game (and its built-in board).
    #[arg(long, value_enum, default_value = "musashi25")]
    pub game: GameName,
    /// Sixteen Musashi: solve on the board described by this board file instead (format in
    /// the README).
    #[arg(long, value_name = "FILE")]
    pub board_file: Option<PathBuf>,
    /// Sixteen Musashi: solve only positions with at most K brown pieces (they do not depend
    /// on larger counts).
    #[arg(long, value_name = "K")]
    pub max_browns: Option<usize>,
    /// SIMPEI: when a row of exactly three wins (the reading of the rules; the default
    /// reproduces the published tables, see docs/simpei.md).
    #[arg(long, value_name = "RULE", default_value = retro_simpei::job::DEFAULT_ROWS.name())]
    pub rows: String,
    /// SIMPEI: what counts as exactly three in a row (see docs/simpei.md).
    #[arg(long, value_name = "SHAPE", default_value = retro_simpei::job::DEFAULT_SHAPE.name())]
    pub row_shape: String,
    /// SIMPEI: the start, `official` (the prescribed first hole) or `free` (any first hole).
    #[arg(long, value_name = "RULE", default_value = "official")]
    pub start: String,
    /// Mancala: the holes of the ring for `--game mancala` (even, 4 to 16).
    #[arg(long, value_name = "N")]
    pub holes: Option<usize>,
    /// Mancala: solve every position with at most S stones on the board (default: the
    /// start's stones, 4 per pair of holes).
    #[arg(long, value_name = "S")]
    pub max_stones: Option<u32>,
    /// Mancala: what an endless move does, `cut-off` (the game ends, the stones on the board
    /// go to nobody) or `illegal` (it may not be chosen).
    #[arg(long, value_name = "RULE", default_value = "cut-off")]
    pub endless: String,
    /// Ring hop: cells of the ring (3 to 12).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub cells: u32,
    /// Ring hop: most tokens a side.
    #[arg(long, value_name = "T", default_value_t = 2)]
    pub tokens: u32,
}

impl TargetArgs {
    /// The game to solve, after checking the flags.
    pub fn game(&self) -> Result<Arc<dyn JobGame>> {
        match self.game.board() {
            Some(builtin) => {
                if self.holes.is_some() || self.max_stones.is_some() {
                    bail!("--holes and --max-stones are options of the mancala");
                }
                let board = match &self.board_file {
                    None => builtin,
                    Some(path) => read_board(path)?,
                };
                let n = board.len();
                if let Some(k) = self.max_browns {
                    if k >= n {
                        bail!(
                            "--max-browns {k}: {} has {n} points, so at most {} browns",
                            board.name,
                            n - 1
                        );
                    }
                }
                Ok(retro_games::open(
                    Musashi::NAME,
                    &Musashi::new(board, self.max_browns).definition(),
                )?)
            }
            None => {
                if self.board_file.is_some() || self.max_browns.is_some() {
                    bail!("--board-file and --max-browns are options of Sixteen Musashi");
                }
                if let Some(holes) = self.mancala_holes()? {
                    let definition = serde_json::json!({
                        "holes": holes,
                        "max_stones": self.max_stones.unwrap_or(2 * holes as u32),
                        "endless": self.endless,
                    });
                    return retro_games::open(Mancala::NAME, &definition).context("mancala");
                }
                if self.holes.is_some() || self.max_stones.is_some() {
                    bail!("--holes and --max-stones are options of the mancala");
                }
                if self.game == GameName::Simpei {
                    let definition = serde_json::json!({
                        "rows": self.rows,
                        "shape": self.row_shape,
                        "start": self.start,
                    });
                    return retro_games::open(Simpei::NAME, &definition).context("SIMPEI");
                }
                let value = match self.game {
                    GameName::RingHopScore => "score-margin",
                    _ => "win-draw-loss",
                };
                let definition = serde_json::json!({
                    "cells": self.cells,
                    "tokens": self.tokens,
                    "value": value,
                });
                retro_games::open(RingHop::NAME, &definition).context("ring hop")
            }
        }
    }
}

impl TargetArgs {
    /// The holes of a mancala choice, `None` for other games.
    fn mancala_holes(&self) -> Result<Option<usize>> {
        let builtin = match self.game {
            GameName::Mancala4 => 8,
            GameName::Mancala8 => 16,
            GameName::Mancala => match self.holes {
                Some(holes) => return Ok(Some(holes)),
                None => bail!("--game mancala needs --holes N (or use mancala4 / mancala8)"),
            },
            _ => return Ok(None),
        };
        match self.holes {
            Some(holes) if holes != builtin => bail!(
                "--holes {holes}: this board has {builtin} holes (use --game mancala --holes {holes})"
            ),
            _ => Ok(Some(builtin)),
        }
    }
}

/// The board described by the board file at `path`.
fn read_board(path: &Path) -> Result<Board> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read board file {}", path.display()))?;
    Board::from_text(&text).with_context(|| format!("{}", path.display()))
}
