//! Ring hop on the command line: its two valuations as `--game` values, and its size
//! (`--cells`, `--tokens`) turned into a definition document.

use anyhow::{bail, Result};
use retro_pipeline::{ChosenOptions, GameChoice, GameOption};

/// The `--game` values.
pub const CHOICES: &[GameChoice] = &[
    GameChoice {
        name: "ring-hop",
        about: "Ring hop, the toy game of the worked example: win, draw or loss (cycles, draws)",
    },
    GameChoice {
        name: "ring-hop-score",
        about: "Ring hop valued by score margin (a point per capture; captures both ways, cycles)",
    },
];

/// The options of ring hop.
pub const OPTIONS: &[GameOption] = &[
    GameOption {
        flag: "cells",
        value_name: "N",
        help: "Ring hop: cells of the ring (3 to 12)",
        default: Some("8"),
    },
    GameOption {
        flag: "tokens",
        value_name: "T",
        help: "Ring hop: most tokens a side",
        default: Some("2"),
    },
];

/// The definition of the choice `choice` with `options` (checked when the game is opened
/// from it).
pub fn definition(choice: &str, options: &ChosenOptions) -> Result<serde_json::Value> {
    let value = match choice {
        "ring-hop" => "win-draw-loss",
        "ring-hop-score" => "score-margin",
        other => bail!("'{other}' is not ring hop"),
    };
    Ok(serde_json::json!({
        "cells": options.parse::<u32>("cells")?,
        "tokens": options.parse::<u32>("tokens")?,
        "value": value,
    }))
}
