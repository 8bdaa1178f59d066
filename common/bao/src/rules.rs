//! The moves of a position, why a move is refused, what a move leads to, and when a player has
//! lost.
//!
//! The mover must capture if any mtaji exists: the legal moves are then every mtaji with every
//! direction in which it ends on a marker. Otherwise the legal moves are the takata: every own
//! hole with at least 2 stones, in both directions, restricted to the front row when any
//! front-row hole holds at least 2 (front-row priority). A player loses when, at their turn,
//! their front row is empty, or they have no move.
//!
//! **Endless moves** ([`EndlessRule`]): under the default, cut off, an endless move may be
//! chosen and ends the game at once with no winner (recorded as an endless move); under
//! illegal, it may not be chosen, and a player all of whose legal moves are endless has no
//! move and loses. The duty to capture is decided before the rule filters: if every capture is
//! endless and illegal, a takata does not become legal instead.

use crate::board::Position;
use crate::direction::Direction;
use crate::markers::{mtaji, mtaji_target};
use crate::moves::{hole_name, Move};
use crate::sowing::{play, Endless, MoveKind, Play, SowState};
use std::fmt;

pub use retro_sowing::EndlessRule;

/// The legal moves of a position (endless ones included: see [`choosable_moves`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Legal {
    /// Captures or takata.
    pub kind: MoveKind,
    /// The moves, by hole index then direction (clockwise first).
    pub moves: Vec<Move>,
}

/// The holes that may start a takata: own holes with at least 2 stones, only front-row ones if
/// any front-row hole has at least 2 (whether or not a capture exists).
pub fn takata_holes(position: &Position) -> Vec<usize> {
    let board = &position.board;
    let row = board.row();
    let front_priority = board.front(position.side).iter().any(|&c| c >= 2);
    let range = if front_priority {
        0..row.len()
    } else {
        0..row.ring()
    };
    range
        .filter(|&h| board.get(position.side, h) >= 2)
        .collect()
}

/// The legal moves of `position`, endless ones included. Empty when the mover has no move (or
/// when their front row is empty, which loses first).
pub fn legal_moves(position: &Position) -> Legal {
    if position.board.front_row_empty(position.side) {
        return Legal {
            kind: MoveKind::Takata,
            moves: Vec::new(),
        };
    }
    let captures = mtaji(&position.board, position.side);
    if !captures.is_empty() {
        return Legal {
            kind: MoveKind::Capture,
            moves: captures
                .into_iter()
                .map(|(hole, direction, _)| Move { hole, direction })
                .collect(),
        };
    }
    let moves = takata_holes(position)
        .into_iter()
        .flat_map(|hole| Direction::BOTH.map(|direction| Move { hole, direction }))
        .collect();
    Legal {
        kind: MoveKind::Takata,
        moves,
    }
}

/// Where a move leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The move ends; the game goes on from `next` (the opponent to move).
    Continues {
        /// The position after the move.
        next: Position,
        /// Steps the move took.
        steps: u64,
    },
    /// The move never ends (under the cut-off rule the game ends here, with no winner).
    Endless(Endless),
}

/// The start state of `mv` of the given kind in `position`.
pub fn start_state(position: &Position, mv: Move, kind: MoveKind) -> SowState {
    SowState::start(&position.board, position.side, mv, kind)
}

/// What the legal move `mv` (of kind `kind`) leads to.
pub fn outcome(position: &Position, mv: Move, kind: MoveKind) -> Outcome {
    match play(&start_state(position, mv, kind)) {
        Play::Ends { board, steps, .. } => Outcome::Continues {
            next: Position {
                board,
                side: position.side.other(),
            },
            steps,
        },
        Play::Endless(e) => Outcome::Endless(e),
    }
}

/// The moves the mover may choose under `rule`, with where each leads.
pub fn choosable_moves(position: &Position, rule: EndlessRule) -> Vec<(Move, Outcome)> {
    let legal = legal_moves(position);
    legal
        .moves
        .into_iter()
        .map(|mv| (mv, outcome(position, mv, legal.kind)))
        .filter(|(_, o)| rule == EndlessRule::CutOff || !matches!(o, Outcome::Endless(_)))
        .collect()
}

/// Why a player has lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// Their front row is empty at their turn.
    EmptyFrontRow,
    /// They have neither a capture nor a takata (under the illegal rule: none that ends).
    NoMove,
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Loss::EmptyFrontRow => "the front row is empty",
            Loss::NoMove => "there is no move",
        })
    }
}

/// Whether the player to move has lost, and why.
pub fn loss(position: &Position, rule: EndlessRule) -> Option<Loss> {
    if position.board.front_row_empty(position.side) {
        return Some(Loss::EmptyFrontRow);
    }
    // Under the cut-off rule every legal move may be chosen: no move needs playing.
    let none = match rule {
        EndlessRule::CutOff => legal_moves(position).moves.is_empty(),
        EndlessRule::Illegal => choosable_moves(position, rule).is_empty(),
    };
    if none {
        Some(Loss::NoMove)
    } else {
        None
    }
}

/// Why `mv` may not be played in `position` under `rule`, as one line; `None` if it may.
pub fn refusal(position: &Position, mv: Move, rule: EndlessRule) -> Option<String> {
    let board = &position.board;
    let row = board.row();
    let side = position.side;
    let name = hole_name(row, mv.hole);
    let text = mv.text(row);
    if let Some(l) = loss(position, EndlessRule::CutOff) {
        return Some(format!("the game is over: {l}"));
    }
    let legal = legal_moves(position);
    if !legal.moves.contains(&mv) {
        let stones = board.get(side, mv.hole);
        let reason = match legal.kind {
            MoveKind::Capture => {
                let list: Vec<String> = legal.moves.iter().map(|m| m.text(row)).collect();
                if (2..=row.max_mtaji()).contains(&stones)
                    && mtaji_target(board, side, mv.hole, mv.direction.reversed()).is_some()
                {
                    format!(
                        "{name} sown {} does not end on a marker (it captures the other way); you must capture: {}",
                        mv.direction,
                        list.join(", ")
                    )
                } else {
                    format!(
                        "{text} is not a capture, and a capture is possible, so you must capture: {}",
                        list.join(", ")
                    )
                }
            }
            MoveKind::Takata if stones < 2 => format!(
                "{name} holds {stones} stone{}: a takata lifts a hole with at least 2",
                if stones == 1 { "" } else { "s" }
            ),
            MoveKind::Takata => {
                format!("front-row priority: a front-row hole holds 2 or more stones, so a takata starts in the front row, not at {name}")
            }
        };
        return Some(reason);
    }
    if rule == EndlessRule::Illegal {
        if let Outcome::Endless(e) = outcome(position, mv, legal.kind) {
            return Some(format!(
                "{text} never ends (a cycle of {} steps after {}), and endless moves are illegal",
                e.cycle, e.lead_in
            ));
        }
    }
    None
}
