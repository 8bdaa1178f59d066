//! What `retro probe` says of a position: its margin in words, every move with the margin it
//! is worth to the mover (best first, endless moves marked with their loop), and a best line.

use crate::board::{hole_name, Position};
use crate::job::describe_margin;
use crate::rules::{for_each_move, is_choosable, EndlessRule, Outcome};
use serde::Serialize;
use std::collections::HashSet;

/// The longest best line printed.
pub const MAX_LINE: usize = 400;

/// An endless move's loop, as reported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoopReport {
    /// Stones dropped into the loop's starting hole until the state comes back shifted.
    pub period: u64,
    /// By how many holes it has turned then.
    pub shift: usize,
    /// Sowings before the loop is reached.
    pub lead_in: u64,
    /// The loop's board and starting hole (`3,1,0,2,1,0,2,1 from a`).
    pub loop_state: String,
}

/// One move of the probed position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MoveReport {
    /// The hole lifted (`d`).
    #[serde(rename = "move")]
    pub hole: String,
    /// The position it leads to, if the game goes on.
    pub position: Option<String>,
    /// Stones it captures.
    pub captured: u32,
    /// Whether the move ends the game (a side emptied, or an endless move cut off).
    pub ends_game: bool,
    /// Its loop, if the move never ends.
    pub endless: Option<LoopReport>,
    /// Whether the endless-move rule lets it be chosen.
    pub legal: bool,
    /// The margin it is worth to the mover over the rest of the game.
    pub value: i32,
    /// That margin in words.
    pub meaning: String,
}

/// The probe of one position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProbeReport {
    /// The position (`0,4,0,4,0,4,0,4 first`).
    pub position: String,
    /// Its margin for the player to move.
    pub value: i32,
    /// The margin in words.
    pub meaning: String,
    /// Every move, best first (legal ones; then any endless ones the rule forbids).
    pub moves: Vec<MoveReport>,
    /// A best line from here: each move as reported at its position.
    pub principal_variation: Vec<MoveReport>,
    /// How the line ends, in words.
    pub line_end: String,
}

/// Every move of `pos` under `rule`, valued through `margin_of` (the stored margin of a
/// position, for its player to move), best first: highest value, then moves that capture or
/// end the game (they make progress), then by hole.
pub fn moves(
    pos: &Position,
    rule: EndlessRule,
    margin_of: &dyn Fn(&Position) -> anyhow::Result<i32>,
) -> anyhow::Result<Vec<MoveReport>> {
    let mut list = Vec::new();
    let mut error = None;
    for_each_move(&pos.board, pos.side, |mv| {
        if error.is_some() {
            return;
        }
        let legal = is_choosable(&mv, rule);
        let (position, captured, ends_game, endless, value) = match mv.outcome {
            Outcome::Continues { board, captured } => {
                let next = Position {
                    board,
                    side: pos.side.other(),
                };
                match margin_of(&next) {
                    Ok(m) => (Some(next), captured, false, None, captured as i32 - m),
                    Err(e) => {
                        error = Some(e);
                        return;
                    }
                }
            }
            Outcome::GameOver { gain, board } => {
                let captured = pos.board.total() - board.total();
                (None, captured, true, None, gain)
            }
            Outcome::Endless(l) => {
                let report = LoopReport {
                    period: l.period,
                    shift: l.shift,
                    lead_in: l.lead_in,
                    loop_state: format!("{} from {}", l.entry.board, hole_name(l.entry.hole)),
                };
                (None, 0, true, Some(report), 0)
            }
        };
        list.push(MoveReport {
            hole: hole_name(mv.hole).to_string(),
            position: position.map(|p| p.to_string()),
            captured,
            ends_game,
            endless,
            legal,
            value,
            meaning: describe_margin(pos.side, value),
        });
    });
    if let Some(e) = error {
        return Err(e);
    }
    list.sort_by_key(|m| {
        (
            !m.legal,
            -m.value,
            !(m.captured > 0 || m.ends_game),
            m.hole.clone(),
        )
    });
    Ok(list)
}

impl ProbeReport {
    /// The probe of `pos`, reading margins through `margin_of`.
    pub fn of(
        pos: &Position,
        rule: EndlessRule,
        margin_of: &dyn Fn(&Position) -> anyhow::Result<i32>,
    ) -> anyhow::Result<ProbeReport> {
        let value = margin_of(pos)?;
        let moves = moves(pos, rule, margin_of)?;
        let mut line = Vec::new();
        let mut seen = HashSet::from([*pos]);
        let mut at = *pos;
        let line_end = loop {
            if line.len() >= MAX_LINE {
                break format!("line cut after {MAX_LINE} moves");
            }
            let here = crate::probe::moves(&at, rule, margin_of)?;
            let Some(best) = here.into_iter().find(|m| m.legal) else {
                break format!(
                    "the game is over: {} has no move; each player takes the stones in their holes",
                    crate::board::side_name(at.side)
                );
            };
            let next = best.position.clone();
            let endless = best.endless.is_some();
            line.push(best);
            match next {
                None if endless => break "an endless move: the game is cut off".to_string(),
                None => break "the move ends the game".to_string(),
                Some(text) => {
                    at = Position::parse(&text).map_err(anyhow::Error::msg)?;
                    if !seen.insert(at) {
                        break if value == 0 {
                            format!("{text} repeats: the rest is a draw, nobody gains more")
                        } else {
                            format!(
                                "{text} repeats: these value-keeping moves circle; the margin is \
                                 forced by a line that leaves the cycle"
                            )
                        };
                    }
                }
            }
        };
        Ok(ProbeReport {
            position: pos.to_string(),
            value,
            meaning: describe_margin(pos.side, value),
            moves,
            principal_variation: line,
            line_end,
        })
    }
}
