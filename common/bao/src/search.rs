//! Searches from the start for the spec's open questions 3 and 5: the shortest line of play that
//! reaches a move that never ends, and the most stones one hole holds.
//!
//! * [`breadth_first`] visits the positions reachable from the start in order of distance
//!   (plies), each once, until a depth or a position limit: the first endless move it meets is
//!   on a shortest line (every shorter line was searched), and the fullest hole it sees is the
//!   fullest of every game of at most the searched depth. Its report says up to which depth the
//!   search is complete.
//! * [`random_games`] plays random games (each legal move equally likely) for lines much
//!   longer than a breadth-first search reaches: the shortest endless line it finds is an upper
//!   bound, not a proof of shortness.
//!
//! Both watch the stones in one hole **between moves** (the positions a player sees) and
//! **during a move** (every board after a sowing step, before the next lift). Endless moves end
//! a line (the cut-off rule); under the illegal rule they are not moves, and the positions
//! reached are the same.

use crate::board::Position;
use crate::moves::Move;
use crate::rules::{legal_moves, loss, start_state, EndlessRule};
use crate::sowing::{step, Endless, Landing, MoveKind, SowState};
use retro_sowing::{Flow, Run};
use std::collections::HashSet;

/// What a move does, with the most stones seen in one hole during it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watched {
    /// The move ends in `next`; `fullest` stones were in one hole at some step.
    Ends {
        /// The position after the move.
        next: Position,
        /// The most stones in one hole after any step of the move.
        fullest: u8,
    },
    /// The move never ends.
    Endless(Endless),
}

/// Plays `mv` (legal, of kind `kind`) in `position`, watching the fullest hole.
pub fn watched_move(position: &Position, mv: Move, kind: MoveKind) -> Watched {
    let mut fullest = 0u8;
    let next = |state: &mut SowState| {
        let s = step(state);
        fullest = fullest.max(state.board.fullest());
        if s.landing == Landing::Empty {
            Flow::Ended
        } else {
            Flow::GoesOn
        }
    };
    match retro_sowing::run(&start_state(position, mv, kind), next) {
        Run::Ends { state, .. } => Watched::Ends {
            next: Position {
                board: state.board,
                side: position.side.other(),
            },
            fullest,
        },
        Run::Cycles {
            entry,
            lead_in,
            cycle,
        } => Watched::Endless(Endless {
            entry,
            lead_in,
            cycle,
        }),
    }
}

/// A line of play from the start and what it leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The moves from the start.
    pub moves: Vec<Move>,
    /// The position before the last move (the start when there is none).
    pub before: Position,
}

/// An endless move reached from the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndlessFound {
    /// The line, its last move the endless one.
    pub line: Line,
    /// The endless move's cycle.
    pub endless: Endless,
}

/// The fullest hole seen, with a line that shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fullest {
    /// Stones in the hole.
    pub stones: u8,
    /// A line whose last move shows it (during the move, or in the position it leads to);
    /// no moves when the start itself shows it.
    pub line: Line,
}

/// One depth of a breadth-first search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layer {
    /// Plies from the start.
    pub depth: u32,
    /// Positions first reached at this depth.
    pub positions: u64,
    /// Of which the player to move has lost.
    pub lost: u64,
    /// Endless moves played from the positions of the depth before (the lines ending in them
    /// have this many plies).
    pub endless_moves: u64,
}

/// What [`breadth_first`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BreadthFirst {
    /// Each depth's positions.
    pub layers: Vec<Layer>,
    /// Every line of at most this many plies was searched (every position of the depth before
    /// was expanded).
    pub complete_to: u32,
    /// Whether the search ran out of positions (every reachable position was searched).
    pub exhausted: bool,
    /// Whether the position limit stopped the search: the last depth's lines were all played,
    /// but not all its positions were kept (its count in `layers` is short).
    pub truncated: bool,
    /// The first endless move met: on a shortest line.
    pub first_endless: Option<EndlessFound>,
    /// The fullest hole between moves, in positions up to `complete_to` plies (the start's
    /// when no move fills a hole more).
    pub fullest_between: Fullest,
    /// The fullest hole during a move, in lines up to `complete_to` plies.
    pub fullest_during: Fullest,
}

/// A searched position and how it was first reached.
#[derive(Clone, Copy)]
struct Node {
    position: Position,
    /// Index of the position it was reached from in the layer before.
    parent: u32,
    /// The move that reached it.
    mv: Move,
}

/// The line to `layers[depth][index]` followed by `last`.
fn line_to(layers: &[Vec<Node>], depth: usize, index: usize, last: Move) -> Line {
    let before = layers[depth][index].position;
    let mut moves = vec![last];
    let (mut d, mut i) = (depth, index);
    while d > 0 {
        let node = layers[d][i];
        moves.push(node.mv);
        i = node.parent as usize;
        d -= 1;
    }
    moves.reverse();
    Line { moves, before }
}

/// Searches breadth-first from `start` to `max_depth` plies, keeping at most `limit` positions:
/// the depth at which the limit is reached is still played in full (every line of that many
/// plies is searched), but its positions past the limit are not kept and the search stops there
/// ([`BreadthFirst::truncated`]).
pub fn breadth_first(start: Position, max_depth: u32, limit: u64) -> BreadthFirst {
    let mut seen: HashSet<Position> = HashSet::from([start]);
    let root = Node {
        position: start,
        parent: 0,
        mv: Move {
            hole: 0,
            direction: crate::Direction::Clockwise,
        },
    };
    let mut layers: Vec<Vec<Node>> = vec![vec![root]];
    let start_lost = loss(&start, EndlessRule::CutOff).is_some();
    let mut stats = vec![Layer {
        depth: 0,
        positions: 1,
        lost: start_lost as u64,
        endless_moves: 0,
    }];
    let empty_line = Line {
        moves: Vec::new(),
        before: start,
    };
    let mut fullest_between = Fullest {
        stones: start.board.fullest(),
        line: empty_line.clone(),
    };
    let mut fullest_during = Fullest {
        stones: 0,
        line: empty_line,
    };
    let mut first_endless = None;
    let mut complete_to = 0;
    let mut exhausted = false;
    let mut truncated = false;
    for depth in 0..max_depth as usize {
        let mut next_layer: Vec<Node> = Vec::new();
        let mut endless_moves = 0u64;
        let mut lost = 0u64;
        let mut over_limit = false;
        for (index, node) in layers[depth].iter().enumerate() {
            let position = node.position;
            if loss(&position, EndlessRule::CutOff).is_some() {
                continue;
            }
            let legal = legal_moves(&position);
            for &mv in &legal.moves {
                match watched_move(&position, mv, legal.kind) {
                    Watched::Endless(endless) => {
                        endless_moves += 1;
                        if first_endless.is_none() {
                            first_endless = Some(EndlessFound {
                                line: line_to(&layers, depth, index, mv),
                                endless,
                            });
                        }
                    }
                    Watched::Ends { next, fullest } => {
                        if fullest > fullest_during.stones {
                            fullest_during = Fullest {
                                stones: fullest,
                                line: line_to(&layers, depth, index, mv),
                            };
                        }
                        let between = next.board.fullest();
                        if between > fullest_between.stones {
                            fullest_between = Fullest {
                                stones: between,
                                line: line_to(&layers, depth, index, mv),
                            };
                        }
                        if seen.len() as u64 >= limit {
                            over_limit = true;
                            continue;
                        }
                        if seen.insert(next) {
                            if loss(&next, EndlessRule::CutOff).is_some() {
                                lost += 1;
                            }
                            next_layer.push(Node {
                                position: next,
                                parent: index as u32,
                                mv,
                            });
                        }
                    }
                }
            }
        }
        // Every line of depth + 1 plies has been played (even when its position was not kept).
        complete_to = depth as u32 + 1;
        stats.push(Layer {
            depth: depth as u32 + 1,
            positions: next_layer.len() as u64,
            lost,
            endless_moves,
        });
        let empty = next_layer.is_empty();
        layers.push(next_layer);
        if over_limit {
            truncated = true;
            break;
        }
        if empty {
            exhausted = true;
            break;
        }
    }
    BreadthFirst {
        layers: stats,
        complete_to,
        exhausted,
        truncated,
        first_endless,
        fullest_between,
        fullest_during,
    }
}

/// What [`random_games`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RandomGames {
    /// Games played.
    pub games: u64,
    /// Moves played in all.
    pub moves: u64,
    /// Games that ended with a loss, with an endless move, or at the move limit.
    pub lost: u64,
    /// See `lost`.
    pub endless: u64,
    /// See `lost`.
    pub cut: u64,
    /// The shortest line to an endless move found.
    pub shortest_endless: Option<EndlessFound>,
    /// The fullest hole between moves.
    pub fullest_between: Option<Fullest>,
    /// The fullest hole during a move.
    pub fullest_during: Option<Fullest>,
}

/// A small deterministic random number generator (xorshift64*), so that a seed repeats a run.
#[derive(Clone, Debug)]
pub struct Random(u64);

impl Random {
    /// A generator from `seed` (any value).
    pub fn new(seed: u64) -> Random {
        Random(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }

    /// A number in `0..below` (`below` at least 1).
    pub fn below(&mut self, below: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        ((x >> 32) as usize) % below.max(1)
    }
}

/// Plays `games` random games from `start`, each at most `max_moves` moves.
pub fn random_games(start: Position, games: u64, max_moves: usize, seed: u64) -> RandomGames {
    let mut random = Random::new(seed);
    let mut out = RandomGames {
        games,
        moves: 0,
        lost: 0,
        endless: 0,
        cut: 0,
        shortest_endless: None,
        fullest_between: None,
        fullest_during: None,
    };
    for _ in 0..games {
        let mut position = start;
        let mut line: Vec<Move> = Vec::new();
        loop {
            if line.len() >= max_moves {
                out.cut += 1;
                break;
            }
            if loss(&position, EndlessRule::CutOff).is_some() {
                out.lost += 1;
                break;
            }
            let legal = legal_moves(&position);
            let mv = legal.moves[random.below(legal.moves.len())];
            line.push(mv);
            out.moves += 1;
            let here = Line {
                moves: line.clone(),
                before: position,
            };
            match watched_move(&position, mv, legal.kind) {
                Watched::Endless(endless) => {
                    out.endless += 1;
                    let shorter = out
                        .shortest_endless
                        .as_ref()
                        .is_none_or(|f| line.len() < f.line.moves.len());
                    if shorter {
                        out.shortest_endless = Some(EndlessFound {
                            line: here,
                            endless,
                        });
                    }
                    break;
                }
                Watched::Ends { next, fullest } => {
                    let between = next.board.fullest();
                    if out
                        .fullest_during
                        .as_ref()
                        .is_none_or(|f| fullest > f.stones)
                    {
                        out.fullest_during = Some(Fullest {
                            stones: fullest,
                            line: here.clone(),
                        });
                    }
                    if out
                        .fullest_between
                        .as_ref()
                        .is_none_or(|f| between > f.stones)
                    {
                        out.fullest_between = Some(Fullest {
                            stones: between,
                            line: here,
                        });
                    }
                    position = next;
                }
            }
        }
    }
    out
}
