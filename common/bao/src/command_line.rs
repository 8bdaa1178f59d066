//! Bao on the command line: its `--game` value and the variant's size (`--row`, `--stones`)
//! and endless-move rule turned into a definition document.

use anyhow::{bail, Result};
use retro_pipeline::{ChosenOptions, GameChoice, GameOption};

/// The `--game` value.
pub const CHOICES: &[GameChoice] = &[GameChoice {
    name: "bao",
    about: "Bao la kujifunza, a small variant: rows of --row holes, --stones stones a hole (win, draw or loss)",
}];

/// The options of Bao.
pub const OPTIONS: &[GameOption] = &[
    GameOption {
        flag: "row",
        value_name: "N",
        help: "Bao: holes a row (2 to 8; the full game has 8, far beyond exhaustive solving)",
        default: Some("2"),
    },
    GameOption {
        flag: "stones",
        value_name: "K",
        help: "Bao: stones a hole at the start (the full game has 2)",
        default: Some("1"),
    },
    GameOption {
        flag: "endless",
        value_name: "RULE",
        help: "Sowing games (mancala, Bao): what a move that never ends does, `cut-off` (the game ends there) or `illegal` (it may not be chosen)",
        default: Some("cut-off"),
    },
];

/// The definition of `bao` with `options` (checked when the game is opened from it).
pub fn definition(choice: &str, options: &ChosenOptions) -> Result<serde_json::Value> {
    if choice != "bao" {
        bail!("'{choice}' is not Bao");
    }
    Ok(serde_json::json!({
        "row": options.parse::<usize>("row")?,
        "stones": options.parse::<u8>("stones")?,
        "endless": options.get("endless"),
    }))
}
