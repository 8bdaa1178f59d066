//! Which game a command solves: `--game` and the game's own flags, built from the registry.
//!
//! Every registered game declares its `--game` values and its options
//! ([`retro_games::Registration`]); this file turns them into clap arguments, collects what
//! was given, refuses flags that belong to another game, and asks the chosen game for its
//! definition. So the command line names no game: a new game's flags appear with its
//! registration.

use anyhow::{bail, Context, Result};
use clap::builder::PossibleValue;
use clap::parser::ValueSource;
use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use retro_pipeline::{ChosenOptions, GameOption, JobGame};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The `--game` value when none is given.
const DEFAULT_GAME: &str = "musashi25";

/// The game to solve: a `--game` value and the game flags given on the command line.
#[derive(Clone, Debug)]
pub struct TargetArgs {
    /// The `--game` value.
    pub game: String,
    /// The game flags given (without dashes), with their values.
    given: BTreeMap<&'static str, String>,
}

/// Every game option of the build, one per flag (games may share a flag: the first
/// declaration gives its help).
fn all_options() -> BTreeMap<&'static str, GameOption> {
    let mut options = BTreeMap::new();
    for registration in retro_games::REGISTERED {
        for option in registration.options {
            options.entry(option.flag).or_insert(*option);
        }
    }
    options
}

impl TargetArgs {
    /// The `--game` value and the registration it selects, the game's definition from the
    /// flags given (after checking that each belongs to that game), opened with its solver.
    pub fn game(&self) -> Result<Arc<dyn JobGame>> {
        let registration = retro_games::chosen(&self.game)?;
        for flag in self.given.keys() {
            if !registration.options.iter().any(|o| o.flag == *flag) {
                let owners: Vec<&str> = retro_games::choices()
                    .filter(|(_, r)| r.options.iter().any(|o| o.flag == *flag))
                    .map(|(c, _)| c.name)
                    .collect();
                bail!(
                    "--{flag} is an option of --game {}, not of --game {}",
                    owners.join(", "),
                    self.game
                );
            }
        }
        let options = ChosenOptions::new(
            registration.options,
            self.given.iter().map(|(k, v)| (*k, v.clone())),
        );
        let definition = (registration.definition)(&self.game, &options)?;
        (registration.open)(&definition).with_context(|| format!("--game {}", self.game))
    }

    /// The loop analysis of the chosen game (`retro loops`), or an error naming the games
    /// that have one.
    pub fn loops(&self, options: &retro_games::LoopOptions) -> Result<String> {
        let registration = retro_games::chosen(&self.game)?;
        let Some(loops) = registration.loops else {
            let with: Vec<&str> = retro_games::choices()
                .filter(|(_, r)| r.loops.is_some())
                .map(|(c, _)| c.name)
                .collect();
            bail!(
                "--game {}: retro loops analyses the games whose moves can sow forever: {}",
                self.game,
                with.join(", ")
            );
        };
        let game = self.game()?;
        loops(&game.definition(), options)
    }
}

impl FromArgMatches for TargetArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut target = TargetArgs {
            game: DEFAULT_GAME.to_string(),
            given: BTreeMap::new(),
        };
        target.update_from_arg_matches(matches)?;
        Ok(target)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        if let Some(game) = matches.get_one::<String>("game") {
            self.game = game.clone();
        }
        for flag in all_options().into_keys() {
            // Only flags given count: defaults are the chosen game's to fill in.
            if matches.value_source(flag) == Some(ValueSource::CommandLine) {
                if let Some(value) = matches.get_one::<String>(flag) {
                    self.given.insert(flag, value.clone());
                }
            }
        }
        Ok(())
    }
}

impl Args for TargetArgs {
    fn augment_args(cmd: Command) -> Command {
        let games: Vec<PossibleValue> = retro_games::choices()
            .map(|(c, _)| PossibleValue::new(c.name).help(c.about))
            .collect();
        let mut cmd = cmd.arg(
            Arg::new("game")
                .long("game")
                .value_name("GAME")
                .help("The game (and its built-in board)")
                .value_parser(games)
                .default_value(DEFAULT_GAME),
        );
        for (flag, option) in all_options() {
            let mut arg = Arg::new(flag)
                .long(flag)
                .value_name(option.value_name)
                .help(option.help);
            if let Some(default) = option.default {
                arg = arg.default_value(default);
            }
            cmd = cmd.arg(arg);
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}
