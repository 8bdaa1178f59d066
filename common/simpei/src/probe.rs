//! What `retro probe` says about a SIMPEI position: its value in words, every legal move best
//! first with the value it leads to, and a principal variation to the end of the game or into
//! a draw cycle. Values come from a lookup the caller supplies (the solved tables), so the
//! same code serves the command line and the tests.

use crate::game::{Simpei, CLAIMED_WIN};
use crate::job::describe;
use crate::position::Position;
use anyhow::Result;
use retro_engine::{Move, Outcome, Value};
use serde::Serialize;

/// The longest principal variation printed (a draw cycle is cut where it repeats).
const MAX_LINE: usize = 400;

/// One move of a probed position.
#[derive(Clone, Debug, Serialize)]
pub struct MoveReport {
    /// The move in notation (`u12-l11 x u02 > u33`, or `claim`: the side to move already has
    /// its row at the start of its turn).
    #[serde(rename = "move")]
    pub notation: String,
    /// The position it leads to (notation with the side to move), if the game goes on.
    pub position: Option<String>,
    /// The stored byte of that position for its side to move (1 when the move wins at once).
    pub value: u8,
    /// That value in words, for the side to move after the move.
    pub meaning: String,
}

/// The probe of one position.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeReport {
    /// The position in notation.
    pub position: String,
    /// Its stored byte.
    pub value: u8,
    /// The value in words ("white to move wins in 21 plies").
    pub meaning: String,
    /// Every legal move, best first for the side to move.
    pub moves: Vec<MoveReport>,
    /// Best play from the position.
    pub principal_variation: Vec<MoveReport>,
    /// How the line ends: "white has won", or where it returns into a draw cycle.
    pub line_end: String,
}

/// The order of moves for their mover, from the value they leave the opponent: wins fastest
/// first, then draws, then losses slowest first.
fn rank(after: u8) -> (u8, i64) {
    match Value(after).outcome() {
        Some(Outcome::Loss { plies }) => (0, i64::from(plies)),
        Some(Outcome::Draw) => (1, 0),
        Some(Outcome::Win { plies }) => (2, -i64::from(plies)),
        None => (3, 0),
    }
}

/// Every move of `pos` with the position it leads to (if any) and the value it leaves, best
/// first.
pub fn ranked_moves(
    game: &Simpei,
    pos: &Position,
    value_of: &dyn Fn(&Position) -> Result<u8>,
) -> Result<Vec<(MoveReport, Option<Position>)>> {
    let mut raw = Vec::new();
    game.plies(pos, |mv, target| raw.push((mv, target)));
    let mut out = Vec::new();
    let opponent = pos.to_move.other();
    for (mv, target) in raw {
        let notation = mv.map_or("claim".to_string(), |m| m.notation());
        let (next, value) = match target {
            Move::Known(v) => (None, v.0),
            Move::InStage(..) | Move::Final(..) => {
                let m = mv.expect("a ply that goes on is a rules move");
                let next = next_position(game, pos, &m);
                (Some(next), value_of(&next)?)
            }
        };
        let meaning = match (target, value) {
            (Move::Known(_), v) if v == Value::LOST_NOW.0 => {
                format!("{} has won", pos.to_move.name())
            }
            (Move::Known(_), v) if v == CLAIMED_WIN.0 => {
                format!("{} has won (its row, built by this move)", opponent.name())
            }
            _ => describe(opponent, value),
        };
        out.push((
            MoveReport {
                notation,
                position: next.map(|p| p.notation()),
                value,
                meaning,
            },
            next,
        ));
    }
    out.sort_by_key(|(m, _)| rank(m.value));
    Ok(out)
}

/// The position a rules move of `pos` leads to.
fn next_position(game: &Simpei, pos: &Position, mv: &crate::rules::Move) -> Position {
    let mut found = None;
    crate::rules::moves(game.geometry(), pos, |m, next| {
        if m == *mv {
            found = Some(next);
        }
    });
    found.expect("the move is legal")
}

impl ProbeReport {
    /// The probe of `pos`, reading values with `value_of`.
    pub fn of(
        game: &Simpei,
        pos: &Position,
        value_of: &dyn Fn(&Position) -> Result<u8>,
    ) -> Result<ProbeReport> {
        let value = value_of(pos)?;
        let moves: Vec<MoveReport> = ranked_moves(game, pos, value_of)?
            .into_iter()
            .map(|(m, _)| m)
            .collect();
        let mut line = Vec::new();
        // Positions up to symmetry, so that a cycle through images of a position is found.
        let orbit = |p: &Position| (game.locate(p.white, p.black), p.to_move);
        let mut seen = vec![orbit(pos)];
        let mut at = *pos;
        let line_end = loop {
            if line.len() >= MAX_LINE {
                break format!("(cut after {MAX_LINE} plies)");
            }
            let ranked = ranked_moves(game, &at, value_of)?;
            let Some((best, next)) = ranked.into_iter().next() else {
                break "no move".to_string();
            };
            line.push(best.clone());
            let Some(next) = next else {
                break best.meaning;
            };
            if let Some(i) = seen.iter().position(|p| *p == orbit(&next)) {
                break format!(
                    "the position after ply {} returns: a draw cycle of {} plies",
                    line.len(),
                    line.len() - i
                );
            }
            seen.push(orbit(&next));
            at = next;
        };
        Ok(ProbeReport {
            position: pos.notation(),
            value,
            meaning: describe(pos.to_move, value),
            moves,
            principal_variation: line,
            line_end,
        })
    }
}
