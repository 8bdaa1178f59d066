//! A game record: the variant, the endless-move rule and the moves, as a text file that
//! `retro play bao` saves and loads.
//!
//! ```text
//! # Bao la kujifunza game record
//! variant 8 2
//! rule cut-off
//! move f3 cw
//! move b1 acw
//! ```
//!
//! `variant N K`: rows of `N` holes, `K` stones a hole at the start (the first player moves
//! first). Blank lines and lines starting with `#` are ignored. Loading replays the moves from
//! the start and refuses the first one that is not legal, with its line and the reason.

use crate::board::Position;
use crate::moves::Move;
use crate::row::Row;
use crate::rules::{legal_moves, outcome, refusal, EndlessRule, Outcome};

/// A game: the variant, the rule, the moves played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Holes a row.
    pub row: Row,
    /// Stones a hole at the start.
    pub stones: u8,
    /// The endless-move rule.
    pub rule: EndlessRule,
    /// The moves, in order.
    pub moves: Vec<Move>,
}

/// The positions of a replayed record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The position before each move, and the last one after it (one more than the moves)
    /// unless the last move was endless.
    pub positions: Vec<Position>,
    /// Whether the last move never ends (the game was cut off there).
    pub ended_endless: bool,
}

impl Record {
    /// A record of no moves.
    pub fn new(row: Row, stones: u8, rule: EndlessRule) -> Record {
        Record {
            row,
            stones,
            rule,
            moves: Vec::new(),
        }
    }

    /// The start position of the record's variant.
    pub fn start(&self) -> Result<Position, String> {
        Position::start(self.row, self.stones)
    }

    /// The record as text.
    pub fn text(&self) -> String {
        let mut out = format!(
            "# Bao la kujifunza game record\nvariant {} {}\nrule {}\n",
            self.row.len(),
            self.stones,
            self.rule.name()
        );
        for mv in &self.moves {
            out.push_str(&format!("move {}\n", mv.text(self.row)));
        }
        out
    }

    /// Parses a record's text (not yet checking that the moves are legal: [`Record::replay`]).
    pub fn parse(text: &str) -> Result<Record, String> {
        let mut variant: Option<(Row, u8)> = None;
        let mut rule = EndlessRule::default();
        let mut moves = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let number = number + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let at = |e: String| format!("line {number}: {e}");
            match word {
                "variant" => {
                    let fields: Vec<&str> = rest.split_whitespace().collect();
                    let [n, k] = fields[..] else {
                        return Err(at("'variant' takes the holes a row and the stones a hole, e.g. 'variant 8 2'".into()));
                    };
                    let n: usize = n
                        .parse()
                        .map_err(|_| at(format!("'{n}' is not a number of holes")))?;
                    let k: u8 = k
                        .parse()
                        .map_err(|_| at(format!("'{k}' is not a number of stones")))?;
                    let row = Row::new(n).map_err(at)?;
                    Position::start(row, k).map_err(at)?;
                    variant = Some((row, k));
                }
                "rule" => rule = EndlessRule::parse(rest).map_err(at)?,
                "move" => {
                    let Some((row, _)) = variant else {
                        return Err(at("a move before the 'variant' line".into()));
                    };
                    moves.push(Move::parse(row, rest).map_err(at)?);
                }
                _ => {
                    return Err(at(format!(
                        "'{word}' is not a record line ('variant', 'rule' or 'move')"
                    )))
                }
            }
        }
        let Some((row, stones)) = variant else {
            return Err("not a game record: no 'variant N K' line".into());
        };
        Ok(Record {
            row,
            stones,
            rule,
            moves,
        })
    }

    /// Plays the moves from the start, refusing the first illegal one (by its number and the
    /// reason).
    pub fn replay(&self) -> Result<Replay, String> {
        let mut position = self.start()?;
        let mut positions = vec![position];
        for (i, &mv) in self.moves.iter().enumerate() {
            let at = |e: String| format!("move {} ({}): {e}", i + 1, mv.text(self.row));
            if let Some(reason) = refusal(&position, mv, self.rule) {
                return Err(at(reason));
            }
            match outcome(&position, mv, legal_moves(&position).kind) {
                Outcome::Continues { next, .. } => {
                    position = next;
                    positions.push(next);
                }
                Outcome::Endless(_) => {
                    if i + 1 < self.moves.len() {
                        return Err(at(
                            "this move never ends, which ends the game, yet moves follow".into(),
                        ));
                    }
                    return Ok(Replay {
                        positions,
                        ended_endless: true,
                    });
                }
            }
        }
        Ok(Replay {
            positions,
            ended_endless: false,
        })
    }
}
