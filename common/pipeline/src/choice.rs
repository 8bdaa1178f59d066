//! The game boundary on the command line: the built-in choices of `--game` and the options
//! each game takes, declared by the game's crate and turned into its definition document there.
//!
//! The CLI builds its `--game` values and game flags from these declarations (through the
//! registry), collects the flags given, and hands them to the chosen game, so that a new game
//! brings its own command-line options without the CLI naming it.

use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::str::FromStr;

/// One value of `--game`: a game with its built-in board or variant.
#[derive(Clone, Copy, Debug)]
pub struct GameChoice {
    /// The value (`musashi25`).
    pub name: &'static str,
    /// One line for `--help` (`Sixteen Musashi on BOARD25 (5x5 grid with diagonals)`).
    pub about: &'static str,
}

/// One command-line option of a game (`--max-browns K`). Games may share an option (the same
/// flag, meaning the same to each): it is one flag on the command line.
#[derive(Clone, Copy, Debug)]
pub struct GameOption {
    /// The flag without its dashes (`max-browns`).
    pub flag: &'static str,
    /// The value's placeholder in `--help` (`K`).
    pub value_name: &'static str,
    /// What it does, for `--help`; starts with the game's name (`Sixteen Musashi: ...`).
    pub help: &'static str,
    /// The value when the flag is not given, if it has one.
    pub default: Option<&'static str>,
}

/// The options of one game as a command gave them: every flag given, and the defaults of
/// those not given.
#[derive(Clone, Debug, Default)]
pub struct ChosenOptions(BTreeMap<&'static str, String>);

impl ChosenOptions {
    /// The options `given` (flag, value), completed with the defaults of `options`.
    pub fn new(
        options: &[GameOption],
        given: impl IntoIterator<Item = (&'static str, String)>,
    ) -> Self {
        let mut map: BTreeMap<&'static str, String> = given.into_iter().collect();
        for option in options {
            if let Some(default) = option.default {
                map.entry(option.flag)
                    .or_insert_with(|| default.to_string());
            }
        }
        ChosenOptions(map)
    }

    /// The text of option `flag`, if given or defaulted.
    pub fn get(&self, flag: &str) -> Option<&str> {
        self.0.get(flag).map(String::as_str)
    }

    /// Option `flag` read as a `T`, if given or defaulted; a value that does not parse is an
    /// error naming the flag and the value.
    pub fn parse<T: FromStr>(&self, flag: &str) -> Result<Option<T>>
    where
        T::Err: std::error::Error + Send + Sync + 'static,
    {
        self.get(flag)
            .map(|text| {
                text.parse::<T>()
                    .with_context(|| format!("--{flag} {text}: not a valid value"))
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTIONS: &[GameOption] = &[
        GameOption {
            flag: "cells",
            value_name: "N",
            help: "",
            default: Some("8"),
        },
        GameOption {
            flag: "tokens",
            value_name: "T",
            help: "",
            default: None,
        },
    ];

    #[test]
    fn defaults_fill_what_was_not_given_and_values_parse_or_name_the_flag() {
        let none = ChosenOptions::new(OPTIONS, []);
        assert_eq!(none.parse::<u32>("cells").unwrap(), Some(8));
        assert_eq!(none.parse::<u32>("tokens").unwrap(), None);
        let given = ChosenOptions::new(
            OPTIONS,
            [("cells", "5".to_string()), ("tokens", "x".to_string())],
        );
        assert_eq!(given.parse::<u32>("cells").unwrap(), Some(5));
        let e = given.parse::<u32>("tokens").unwrap_err();
        assert!(e.to_string().contains("--tokens x"), "{e}");
    }
}
