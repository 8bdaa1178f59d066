//! A solved Bao variant seen from the outside ([`Explore`]): positions in this crate's notation
//! looked up in the tables, every legal move with the value it leads to (best first), and a
//! best line (`retro probe`, `retro probe --file`, `retro verify --values`).

use crate::board::{side_name, Position};
use crate::game::BaoGame;
use crate::rules::{legal_moves, outcome, EndlessRule, Outcome as MoveOutcome};
use anyhow::{bail, Result};
use retro_engine::{Outcome, Value};
use retro_pipeline::explore::{Explore, Probe, StoredValues};
use serde::Serialize;
use std::collections::HashSet;
use std::fmt::Write;

/// A Bao position as a person types it (the 2-hole variant's start).
pub const EXAMPLE: &str = "2 2 / 2 2 | 2 2 / 2 2 first";

/// The longest best line followed.
const MAX_LINE: usize = 200;

/// The value of a position for its player to move, in words.
pub fn describe(position: &Position, outcome: Outcome) -> String {
    let mover = side_name(position.side);
    let plies = |p: u32| format!("{p} {}", if p == 1 { "ply" } else { "plies" });
    match outcome {
        Outcome::Win { plies: p } => format!("{mover} to move wins in {}", plies(p)),
        Outcome::Loss { plies: 0 } => format!("{mover} to move has lost"),
        Outcome::Loss { plies: p } => format!("{mover} to move loses in {}", plies(p)),
        Outcome::Draw => "draw".to_string(),
    }
}

/// The stored value of a position of `game` (a board of another variant is an error).
pub fn value(game: &BaoGame, tables: &dyn StoredValues, position: &Position) -> Result<Outcome> {
    let Some((slice, index)) = game.locate(&position.board) else {
        bail!(
            "{position} is not a position of these tables (rows of {} holes, {} stones in all)",
            game.row().len(),
            game.total()
        );
    };
    let byte = tables.stored(slice, index, position.side)?;
    match Value(byte).outcome() {
        Some(outcome) => Ok(outcome),
        None => bail!("{position}: stored byte {byte} is no value (damaged table?)"),
    }
}

/// One move of a probed position.
#[derive(Clone, Debug, Serialize)]
pub struct MoveReport {
    /// The move (`f1 cw`).
    #[serde(rename = "move")]
    pub notation: String,
    /// The position it leads to, if the move ends.
    pub position: Option<String>,
    /// Whether the move never ends.
    pub endless: bool,
    /// Whether the endless-move rule lets it be chosen.
    pub legal: bool,
    /// The value of the move for its mover, in words.
    pub meaning: String,
    /// The same as a ranking key: 1 win, 0 draw, -1 loss, with plies.
    pub result: i8,
    /// Plies to the end of the game after the move (wins and losses).
    pub plies: Option<u32>,
}

/// The probe of one position.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeReport {
    /// The position in notation.
    pub position: String,
    /// The value in words.
    pub meaning: String,
    /// 1 win, 0 draw, -1 loss for the player to move.
    pub result: i8,
    /// Plies to the end (wins and losses).
    pub plies: Option<u32>,
    /// Every legal move, best first.
    pub moves: Vec<MoveReport>,
    /// A best line from here.
    pub principal_variation: Vec<MoveReport>,
    /// How the line ends, in words.
    pub line_end: String,
}

/// `(result, plies)` of an outcome for the player to move.
fn result_of(outcome: Outcome) -> (i8, Option<u32>) {
    match outcome {
        Outcome::Win { plies } => (1, Some(plies)),
        Outcome::Draw => (0, None),
        Outcome::Loss { plies } => (-1, Some(plies)),
    }
}

/// Every legal move of `position` with what it is worth to the mover, best first (fastest
/// wins, draws, slowest losses; moves the rule forbids last), and where each leads.
fn ranked_moves(
    game: &BaoGame,
    tables: &dyn StoredValues,
    position: &Position,
) -> Result<Vec<(MoveReport, Option<Position>)>> {
    let row = game.row();
    let legal = legal_moves(position);
    let mut list = Vec::new();
    for mv in legal.moves {
        let (next, mover_outcome, endless) = match outcome(position, mv, legal.kind) {
            MoveOutcome::Continues { next, .. } => {
                let after = value(game, tables, &next)?;
                // What the opponent gets after the move, turned round for the mover.
                let mine = match after {
                    Outcome::Win { plies } => Outcome::Loss { plies: plies + 1 },
                    Outcome::Loss { plies } => Outcome::Win { plies: plies + 1 },
                    Outcome::Draw => Outcome::Draw,
                };
                (Some(next), mine, false)
            }
            MoveOutcome::Endless(_) => (None, Outcome::Draw, true),
        };
        let legal_here = !endless || game.endless() == EndlessRule::CutOff;
        let (result, plies) = result_of(mover_outcome);
        let meaning = match (endless, legal_here) {
            (true, true) => "never ends: the game is cut off, a draw".to_string(),
            (true, false) => "never ends: illegal".to_string(),
            (false, _) => describe(position, mover_outcome),
        };
        list.push((
            MoveReport {
                notation: mv.text(row),
                position: next.map(|p| p.to_string()),
                endless,
                legal: legal_here,
                meaning,
                result,
                plies,
            },
            next,
        ));
    }
    // Wins fastest first, then draws, then losses slowest first; forbidden moves last.
    list.sort_by_key(|(m, _)| {
        let p = i64::from(m.plies.unwrap_or(0));
        (!m.legal, -m.result, if m.result > 0 { p } else { -p })
    });
    Ok(list)
}

impl ProbeReport {
    /// The probe of `position` in the tables of `game`.
    pub fn of(
        game: &BaoGame,
        tables: &dyn StoredValues,
        position: &Position,
    ) -> Result<ProbeReport> {
        let own = value(game, tables, position)?;
        let (result, plies) = result_of(own);
        let moves: Vec<MoveReport> = ranked_moves(game, tables, position)?
            .into_iter()
            .map(|(m, _)| m)
            .collect();
        // The best line: best moves until the game ends, a move never ends, or a position
        // comes back (a draw by endless play).
        let mut line = Vec::new();
        let mut seen = HashSet::from([*position]);
        let mut current = *position;
        let line_end = loop {
            let best = ranked_moves(game, tables, &current)?
                .into_iter()
                .find(|(m, _)| m.legal);
            let Some((m, next)) = best else {
                break format!("{} to move has lost", side_name(current.side));
            };
            line.push(m);
            let Some(next) = next else {
                break "the last move never ends: a draw".to_string();
            };
            if !seen.insert(next) || line.len() >= MAX_LINE {
                break "the position comes back: play goes on for ever, a draw".to_string();
            }
            current = next;
        };
        Ok(ProbeReport {
            position: position.to_string(),
            meaning: describe(position, own),
            result,
            plies,
            moves,
            principal_variation: line,
            line_end,
        })
    }

    /// The report for a person.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.position);
        let _ = writeln!(out, "value: {}", self.meaning);
        let _ = writeln!(out, "moves (best first, {}):", self.moves.len());
        for m in &self.moves {
            let _ = writeln!(out, "  {:<8} {}", m.notation, m.meaning);
        }
        let plies = self.principal_variation.len();
        let _ = writeln!(
            out,
            "best line ({plies} {}):",
            if plies == 1 { "ply" } else { "plies" }
        );
        for (i, m) in self.principal_variation.iter().enumerate() {
            let _ = writeln!(
                out,
                "  {:>3}. {:<8} {}",
                i + 1,
                m.notation,
                m.position.as_deref().unwrap_or("(never ends)")
            );
        }
        let _ = writeln!(out, "  {}.", self.line_end);
        out
    }
}

/// The explorer of a solved Bao variant.
pub struct BaoExplorer(pub BaoGame);

impl BaoExplorer {
    fn parse(&self, text: &str) -> Result<Position> {
        Position::parse(text).map_err(|e| {
            anyhow::anyhow!("{e} (a Bao position looks like `{EXAMPLE}`: the first player's front / back row, `|`, the second player's, then the side to move)")
        })
    }
}

impl Explore for BaoExplorer {
    fn example(&self) -> &'static str {
        EXAMPLE
    }

    /// A Bao position has spaces in it: it ends at the side to move (`first` or `second`), the
    /// first such word of the line.
    fn split_line<'a>(&self, line: &'a str) -> Result<(String, &'a str)> {
        let mut at = 0;
        for word in line.split_whitespace() {
            let start = at + line[at..].find(word).unwrap_or(0);
            at = start + word.len();
            if word == "first" || word == "second" {
                return Ok((line[..at].trim().to_string(), &line[at..]));
            }
        }
        anyhow::bail!(
            "no side to move ('first' or 'second') in '{}': a position looks like `{EXAMPLE}`",
            line.trim()
        )
    }

    /// `win N`, `loss N` or `draw` for the player to move.
    fn value(&self, text: &str, tables: &dyn StoredValues) -> Result<String> {
        let position = self.parse(text)?;
        Ok(match value(&self.0, tables, &position)? {
            Outcome::Win { plies } => format!("win{plies}"),
            Outcome::Loss { plies } => format!("loss{plies}"),
            Outcome::Draw => "draw".to_string(),
        })
    }

    fn probe(&self, text: &str, tables: &dyn StoredValues) -> Result<Probe> {
        let position = self.parse(text)?;
        let report = ProbeReport::of(&self.0, tables, &position)?;
        Ok(Probe {
            json: serde_json::to_value(&report)?,
            text: report.text(),
        })
    }
}
