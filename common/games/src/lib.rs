//! The registry of games: from a registered name and a definition document to the game with
//! its solver ([`JobGame`]).
//!
//! The pipeline, the coordinator and the workers never name a game: they record a job's game
//! as a name and a definition, and are handed [`open`] to rebuild it. The command line never
//! names one either: its `--game` values and game flags come from [`choices`] and
//! [`Registration::options`], the commands that read tables go through [`explore`], and
//! `retro loops` through [`Registration::loops`]. Adding a game is one crate under `common/`
//! implementing [`retro_pipeline::GameRules`] (with its explorer and command line), and one
//! entry in [`REGISTERED`].

#![warn(missing_docs)]

use anyhow::{bail, Result};
use retro_bao::explore::BaoExplorer;
use retro_bao::game::BaoGame;
use retro_mancala::explore::MancalaExplorer;
use retro_mancala::Mancala;
use retro_musashi::explore::MusashiExplorer;
use retro_musashi::Musashi;
use retro_pipeline::{
    ChosenOptions, Explore, GameChoice, GameOption, GameRules, JobGame, ScoreMargin, WinDrawLoss,
};
use retro_simpei::explore::SimpeiExplorer;
use retro_simpei::game::Simpei;
use retro_toys::{RingHop, RingValue};
use std::sync::Arc;

/// Opens the explorer of a definition ([`Registration::explore`]).
pub type OpenExplorer = fn(&serde_json::Value) -> Result<Box<dyn Explore>>;

/// The loop analysis of a definition as Markdown, searched and listed as the options say
/// ([`Registration::loops`]).
pub type LoopReport = fn(&serde_json::Value, &LoopOptions) -> Result<String>;

pub use retro_mancala::loops_report::LoopOptions;

/// One registered game: its name and how a definition becomes the game with its solver.
pub struct Registration {
    /// The name recorded in manifests, tasks and submissions.
    pub name: &'static str,
    /// Opens a definition of this game.
    pub open: fn(&serde_json::Value) -> Result<Arc<dyn JobGame>>,
    /// Opens the explorer of a definition of this game (its notation, probe and reports), for
    /// the commands that read solved tables; `None` for games without a notation.
    pub explore: Option<OpenExplorer>,
    /// The values of `--game` that choose this game (a built-in board or variant each).
    pub choices: &'static [GameChoice],
    /// The command-line options this game takes.
    pub options: &'static [GameOption],
    /// The definition of a choice with the options given (checked by [`Registration::open`]).
    pub definition: fn(&str, &ChosenOptions) -> Result<serde_json::Value>,
    /// The loop analysis of a definition (`retro loops`), for games whose moves can sow
    /// forever: Markdown, at most `list` cases in full, at most `limit` positions searched.
    pub loops: Option<LoopReport>,
}

/// Every game this build can solve and read.
pub const REGISTERED: &[Registration] = &[
    Registration {
        name: Musashi::NAME,
        open: |d| Ok(Arc::new(WinDrawLoss(Musashi::from_definition(d)?))),
        explore: Some(|d| Ok(Box::new(MusashiExplorer(Musashi::from_definition(d)?)))),
        choices: retro_musashi::command_line::CHOICES,
        options: retro_musashi::command_line::OPTIONS,
        definition: retro_musashi::command_line::definition,
        loops: None,
    },
    Registration {
        name: Simpei::NAME,
        open: |d| Ok(Arc::new(WinDrawLoss(Simpei::from_definition(d)?))),
        explore: Some(|d| Ok(Box::new(SimpeiExplorer(Simpei::from_definition(d)?)))),
        choices: retro_simpei::command_line::CHOICES,
        options: retro_simpei::command_line::OPTIONS,
        definition: retro_simpei::command_line::definition,
        loops: None,
    },
    Registration {
        name: Mancala::NAME,
        open: |d| Ok(Arc::new(ScoreMargin(Mancala::from_definition(d)?))),
        explore: Some(|d| Ok(Box::new(MancalaExplorer(Mancala::from_definition(d)?)))),
        choices: retro_mancala::command_line::CHOICES,
        options: retro_mancala::command_line::OPTIONS,
        definition: retro_mancala::command_line::definition,
        loops: Some(retro_mancala::loops_report::report),
    },
    Registration {
        name: BaoGame::NAME,
        open: |d| Ok(Arc::new(WinDrawLoss(BaoGame::from_definition(d)?))),
        explore: Some(|d| Ok(Box::new(BaoExplorer(BaoGame::from_definition(d)?)))),
        choices: retro_bao::command_line::CHOICES,
        options: retro_bao::command_line::OPTIONS,
        definition: retro_bao::command_line::definition,
        loops: None,
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
        explore: None,
        choices: retro_toys::command_line::CHOICES,
        options: retro_toys::command_line::OPTIONS,
        definition: retro_toys::command_line::definition,
        loops: None,
    },
];

/// Opens the game `name` of definition `definition` (a [`retro_pipeline::OpenGame`]): an
/// unknown name or a bad definition is a one-line error.
pub fn open(name: &str, definition: &serde_json::Value) -> Result<Arc<dyn JobGame>> {
    (registration(name)?.open)(definition)
}

/// Opens the explorer of the game `name` of definition `definition`: how the commands that
/// read solved tables parse, look up and explain its positions. A game without a notation is
/// a one-line error naming it.
pub fn explore(name: &str, definition: &serde_json::Value) -> Result<Box<dyn Explore>> {
    match registration(name)?.explore {
        Some(explore) => explore(definition),
        None => bail!("{name} has no position notation, so its positions cannot be looked up"),
    }
}

/// Every `--game` value of this build, with the game it chooses.
pub fn choices() -> impl Iterator<Item = (&'static GameChoice, &'static Registration)> {
    REGISTERED
        .iter()
        .flat_map(|r| r.choices.iter().map(move |c| (c, r)))
}

/// The registration `--game choice` selects, or an error listing the values.
pub fn chosen(choice: &str) -> Result<&'static Registration> {
    match choices().find(|(c, _)| c.name == choice) {
        Some((_, r)) => Ok(r),
        None => bail!(
            "--game {choice}: not a game of this build (one of {})",
            choices()
                .map(|(c, _)| c.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The registration of `name`, or an error listing the known games.
fn registration(name: &str) -> Result<&'static Registration> {
    match REGISTERED.iter().find(|r| r.name == name) {
        Some(r) => Ok(r),
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
    fn only_sixteen_musashi_derives_a_side_of_its_tables() {
        // Derived: the side no later stage reads. Musashi's stages read brown to move only;
        // the other games' moves leave a stage from both sides, so both are stored.
        let (name, definition) =
            retro_musashi::job::builtin_definition("BOARD25", Some(6)).unwrap();
        let musashi = open(name, &definition).unwrap();
        assert_eq!(musashi.reads_sections(), [true, false]);
        assert_eq!(musashi.derived_side().map(|side| side.index()), Some(1));
        for choice in [
            "simpei",
            "mancala4",
            "mancala8",
            "bao",
            "ring-hop",
            "ring-hop-score",
        ] {
            let registration = chosen(choice).unwrap();
            let options = retro_pipeline::ChosenOptions::new(registration.options, []);
            let definition = (registration.definition)(choice, &options).unwrap();
            let game = open(registration.name, &definition).unwrap();
            assert_eq!(game.derived_side(), None, "{choice}");
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
