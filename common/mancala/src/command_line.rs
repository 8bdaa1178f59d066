//! The mancala on the command line: the 4x2 and 8x2 rings and a ring of any size as `--game`
//! values, and its options (`--holes`, `--max-stones`, `--endless`) turned into a definition
//! document.

use anyhow::{bail, Result};
use retro_pipeline::{ChosenOptions, GameChoice, GameOption};

/// The `--game` values.
pub const CHOICES: &[GameChoice] = &[
    GameChoice {
        name: "mancala4",
        about: "The relay-sowing mancala on the 4x2 ring (8 holes, 16 stones; score margin)",
    },
    GameChoice {
        name: "mancala8",
        about: "The relay-sowing mancala on the 8x2 ring (16 holes, 32 stones; solve up to --max-stones)",
    },
    GameChoice {
        name: "mancala",
        about: "The relay-sowing mancala on a ring of --holes holes",
    },
];

/// The options of the mancala.
pub const OPTIONS: &[GameOption] = &[
    GameOption {
        flag: "holes",
        value_name: "N",
        help: "Mancala: the holes of the ring for --game mancala (even, 4 to 16)",
        default: None,
    },
    GameOption {
        flag: "max-stones",
        value_name: "S",
        help: "Mancala: solve every position with at most S stones on the board (default: the start's stones, 4 per pair of holes)",
        default: None,
    },
    GameOption {
        flag: "endless",
        value_name: "RULE",
        help: "Sowing games (mancala, Bao): what a move that never ends does, `cut-off` (the game ends there) or `illegal` (it may not be chosen)",
        default: Some("cut-off"),
    },
];

/// The definition of the choice `choice` with `options` (checked when the game is opened
/// from it).
pub fn definition(choice: &str, options: &ChosenOptions) -> Result<serde_json::Value> {
    let given = options.parse::<usize>("holes")?;
    let builtin = match choice {
        "mancala4" => 8,
        "mancala8" => 16,
        "mancala" => match given {
            Some(holes) => holes,
            None => bail!("--game mancala needs --holes N (or use mancala4 / mancala8)"),
        },
        other => bail!("'{other}' is not a mancala ring"),
    };
    let holes = match given {
        Some(holes) if holes != builtin => bail!(
            "--holes {holes}: this board has {builtin} holes (use --game mancala --holes {holes})"
        ),
        _ => builtin,
    };
    Ok(serde_json::json!({
        "holes": holes,
        "max_stones": options.parse::<u32>("max-stones")?.unwrap_or(2 * holes as u32),
        "endless": options.get("endless"),
    }))
}
