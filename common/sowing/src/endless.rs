//! The rule for moves that never end, shared by the sowing games.

/// What happens when a player chooses a move that never ends (a relay sowing caught in a cycle
/// of states, see [`crate::run`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum EndlessRule {
    /// The default (the mancala study's rule): the move may be chosen and the game is cut off
    /// at once. What that is worth is the game's: the mancala's stones still on the board go
    /// to nobody (the rest of the game is worth 0 to both); Bao ends with no winner (a draw).
    #[default]
    CutOff,
    /// An endless move may not be chosen.
    Illegal,
}

impl EndlessRule {
    /// The rule's name in definitions, records and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EndlessRule::CutOff => "cut-off",
            EndlessRule::Illegal => "illegal",
        }
    }

    /// The rule named `name` (surrounding blanks ignored).
    pub fn parse(name: &str) -> Result<EndlessRule, String> {
        match name.trim() {
            "cut-off" => Ok(EndlessRule::CutOff),
            "illegal" => Ok(EndlessRule::Illegal),
            other => Err(format!(
                "endless-move rule '{other}': expected 'cut-off' or 'illegal'"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_others_are_refused() {
        for rule in [EndlessRule::CutOff, EndlessRule::Illegal] {
            assert_eq!(EndlessRule::parse(rule.name()), Ok(rule));
        }
        assert!(EndlessRule::parse("sometimes")
            .unwrap_err()
            .contains("sometimes"));
    }
}
