//! SIMPEI on the command line: its `--game` value, and the readings of the rules
//! (`--rows`, `--row-shape`, `--start`) turned into a definition document.

use crate::job::{DEFAULT_ROWS, DEFAULT_SHAPE};
use anyhow::{bail, Result};
use retro_pipeline::{ChosenOptions, GameChoice, GameOption};

/// The `--game` value.
pub const CHOICES: &[GameChoice] = &[GameChoice {
    name: "simpei",
    about: "SIMPEI: 4x4 and 3x3 worlds, clipping with relocation, exactly-three rows (win, draw or loss)",
}];

/// The options of SIMPEI.
pub const OPTIONS: &[GameOption] = &[
    GameOption {
        flag: "rows",
        value_name: "RULE",
        help: "SIMPEI: when a row of exactly three wins (the reading of the rules; the default reproduces the published tables, see docs/simpei.md)",
        default: Some(DEFAULT_ROWS.name()),
    },
    GameOption {
        flag: "row-shape",
        value_name: "SHAPE",
        help: "SIMPEI: what counts as exactly three in a row (see docs/simpei.md)",
        default: Some(DEFAULT_SHAPE.name()),
    },
    GameOption {
        flag: "start",
        value_name: "RULE",
        help: "SIMPEI: the start, `official` (the prescribed first hole) or `free` (any first hole)",
        default: Some("official"),
    },
];

/// The definition of `simpei` with `options` (checked when the game is opened from it).
pub fn definition(choice: &str, options: &ChosenOptions) -> Result<serde_json::Value> {
    if choice != "simpei" {
        bail!("'{choice}' is not SIMPEI");
    }
    Ok(serde_json::json!({
        "rows": options.get("rows"),
        "shape": options.get("row-shape"),
        "start": options.get("start"),
    }))
}
