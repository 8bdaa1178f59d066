//! Sixteen Musashi on the command line: the built-in boards as `--game` values, and its
//! options (`--board-file`, `--max-browns`, `--trap-points`) turned into a definition
//! document.

use crate::board::Board;
use crate::game::Musashi;
use anyhow::{bail, Context, Result};
use retro_pipeline::{ChosenOptions, GameChoice, GameOption, GameRules};
use std::path::Path;

/// The `--game` values: one per built-in board.
pub const CHOICES: &[GameChoice] = &[
    GameChoice {
        name: "musashi25",
        about: "Sixteen Musashi on BOARD25 (5x5 grid with diagonals)",
    },
    GameChoice {
        name: "musashi31",
        about: "Sixteen Musashi on BOARD31 (diamond diagonals plus a 6-point triangle)",
    },
    GameChoice {
        name: "musashi33",
        about: "Sixteen Musashi on BOARD33 (BOARD25 plus an 8-point triangle)",
    },
];

/// The options of Sixteen Musashi.
pub const OPTIONS: &[GameOption] = &[
    GameOption {
        flag: "board-file",
        value_name: "FILE",
        help: "Sixteen Musashi: solve on the board described by this board file instead (format in the README)",
        default: None,
    },
    GameOption {
        flag: "max-browns",
        value_name: "K",
        help: "Sixteen Musashi: solve only positions with at most K brown pieces (they do not depend on larger counts)",
        default: None,
    },
    GameOption {
        flag: "trap-points",
        value_name: "POINTS",
        help: "Sixteen Musashi, trap-zone variant: brown wins only by stalemating black on these points (xy,xy,... e.g. 00,04,40,44, or corners or edge); a stalemate elsewhere is a black win",
        default: None,
    },
];

/// The definition of the choice `choice` (`musashi25`, ...) with `options`.
pub fn definition(choice: &str, options: &ChosenOptions) -> Result<serde_json::Value> {
    let builtin = match choice {
        "musashi25" => "BOARD25",
        "musashi31" => "BOARD31",
        "musashi33" => "BOARD33",
        other => bail!("'{other}' is not a Sixteen Musashi board"),
    };
    let board = match options.get("board-file") {
        None => Board::builtin(builtin).expect("built-in board"),
        Some(path) => read_board(Path::new(path))?,
    };
    let max_browns = options.parse::<usize>("max-browns")?;
    let n = board.len();
    if let Some(k) = max_browns {
        if k >= n {
            bail!(
                "--max-browns {k}: {} has {n} points, so at most {} browns",
                board.name,
                n - 1
            );
        }
    }
    let board = match options.get("trap-points") {
        None => board,
        Some(text) => {
            let trap = board
                .parse_trap(text)
                .map_err(|e| anyhow::anyhow!("--trap-points {text}: {e}"))?;
            board.with_trap(trap)
        }
    };
    // The benchmark switch of the bit-parallel claims (read again by every game built).
    crate::game::BulkClaims::from_env().map_err(anyhow::Error::msg)?;
    Ok(Musashi::new(board, max_browns).definition())
}

/// The board described by the board file at `path`.
fn read_board(path: &Path) -> Result<Board> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read board file {}", path.display()))?;
    Board::from_text(&text).with_context(|| format!("{}", path.display()))
}
