//! The registry of games: from a registered name and a definition document to the game with
//! its solver ([`JobGame`]).
//!
//! The pipeline, the coordinator and the workers never name a game: they record a job's game
//! as a name and a definition, and are handed [`open`] to rebuild it. Adding a game is one
//! crate under `common/` implementing [`retro_pipeline::GameRules`], and one line in
//! [`REGISTERED`].

#![warn(missing_docs)]

use anyhow::{bail, Result};
use retro_mancala::Mancala;
use retro_musashi::Musashi;
use retro_pipeline::{GameRules, JobGame, ScoreMargin, WinDrawLoss};
use retro_simpei::game::Simpei;
use retro_toys::{RingHop, RingValue};
use std::sync::Arc;

/// One registered game: its name and how a definition becomes the game with its solver.
pub struct Registration {
    /// The name recorded in manifests, tasks and submissions.
    pub name: &'static str,
    /// Opens a definition of this game.
    pub open: fn(&serde_json::Value) -> Result<Arc<dyn JobGame>>,
}

/// Every game this build can solve and read.
pub const REGISTERED: &[Registration] = &[
    Registration {
        name: Musashi::NAME,
        open: |d| Ok(Arc::new(WinDrawLoss(Musashi::from_definition(d)?))),
    },
    Registration {
        name: Simpei::NAME,
        open: |d| Ok(Arc::new(WinDrawLoss(Simpei::from_definition(d)?))),
    },
    Registration {
        name: Mancala::NAME,
        open: |d| Ok(Arc::new(ScoreMargin(Mancala::from_definition(d)?))),
    },
    Registration {
        name: RingHop::NAME,
        open: |d| {
            let game = RingHop::from_definition(d)?;
            Ok(match game.value() {
                RingValue::WinDrawLoss => Arc::new(WinDrawLoss(game)),
                RingValue::ScoreMargin => Arc::new(ScoreMargin(game)),
            })
        },
    },
];

/// Opens the game `name` of definition `definition` (a [`retro_pipeline::OpenGame`]): an
/// unknown name or a bad definition is a one-line error.
pub fn open(name: &str, definition: &serde_json::Value) -> Result<Arc<dyn JobGame>> {
    match REGISTERED.iter().find(|r| r.name == name) {
        Some(r) => (r.open)(definition),
        None => bail!(
            "game '{name}' is not known to this build (known: {})",
            REGISTERED
                .iter()
                .map(|r| r.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_game_round_trips_its_definition() {
        let games = [
            retro_musashi::job::builtin_definition("BOARD25", Some(6)).unwrap(),
            (
                "simpei",
                serde_json::json!({"rows": "turn-start", "shape": "three-on-a-line", "start": "official"}),
            ),
            (
                "ring-hop",
                serde_json::json!({"cells": 6, "tokens": 2, "value": "score-margin"}),
            ),
            (
                "mancala",
                serde_json::json!({"holes": 8, "max_stones": 16, "endless": "cut-off"}),
            ),
        ];
        for (name, definition) in games {
            let game = open(name, &definition).unwrap();
            assert_eq!(game.name(), name);
            assert_eq!(game.definition(), definition);
        }
    }

    #[test]
    fn unknown_games_and_bad_definitions_are_refused() {
        let e = open("chess", &serde_json::json!({})).err().unwrap();
        assert!(e.to_string().contains("not known"), "{e}");
        let e = open("ring-hop", &serde_json::json!({"cells": 6}))
            .err()
            .unwrap();
        assert!(e.to_string().contains("tokens"), "{e}");
        let e = open("musashi", &serde_json::json!({"board_file": 3}))
            .err()
            .unwrap();
        assert!(e.to_string().contains("board file"), "{e}");
    }
}
