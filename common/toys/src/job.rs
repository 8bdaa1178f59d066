//! What a solve job records of ring hop ([`GameRules`]): step 7 of "how to add a game".
//!
//! A game crate tells the pipeline its registered name, a definition document that rebuilds
//! the game (here the ring size, the token limit and the solver), and how to describe it.
//! Everything else has defaults: table files named after the slices, sections "first to move"
//! and "second to move", the solver's generic count table (positions per stage and side by
//! outcome). The registry (`retro-games`) then wraps the game in its solver.

use crate::ring::{RingHop, RingValue};
use anyhow::{bail, Context, Result};
use retro_pipeline::GameRules;

impl GameRules for RingHop {
    const NAME: &'static str = "ring-hop";

    /// `{"cells": n, "tokens": t, "value": "win-draw-loss" | "score-margin"}`.
    fn definition(&self) -> serde_json::Value {
        serde_json::json!({
            "cells": self.cells(),
            "tokens": self.max_tokens(),
            "value": match self.value() {
                RingValue::WinDrawLoss => "win-draw-loss",
                RingValue::ScoreMargin => "score-margin",
            },
        })
    }

    fn from_definition(definition: &serde_json::Value) -> Result<RingHop> {
        let number = |field: &str| -> Result<u32> {
            let n = definition[field]
                .as_u64()
                .with_context(|| format!("definition has no '{field}'"))?;
            u32::try_from(n).with_context(|| format!("'{field}' {n} is too large"))
        };
        let (cells, tokens) = (number("cells")?, number("tokens")?);
        // The toy builds a sorted key table of every position: beyond 12 cells that takes
        // too long to be a toy.
        if cells > 12 {
            bail!("ring hop of {cells} cells: at most 12 are supported");
        }
        let value = match definition["value"].as_str() {
            Some("win-draw-loss") => RingValue::WinDrawLoss,
            Some("score-margin") => RingValue::ScoreMargin,
            other => {
                bail!("ring hop value {other:?}: expected \"win-draw-loss\" or \"score-margin\"")
            }
        };
        Ok(RingHop::new(cells, tokens)
            .map_err(anyhow::Error::msg)?
            .valued_by(value))
    }

    fn describe(&self) -> String {
        let value = match self.value() {
            RingValue::WinDrawLoss => "win/draw/loss",
            RingValue::ScoreMargin => "score margin",
        };
        format!(
            "ring of {} cells, up to {} tokens a side, {value}",
            self.cells(),
            self.max_tokens()
        )
    }

    fn section_names(&self) -> [&'static str; 2] {
        ["white to move", "black to move"]
    }
}
