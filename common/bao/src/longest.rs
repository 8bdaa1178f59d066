//! The spec's open question 4: if both players cooperate, what is the longest possible game?
//!
//! Stones never leave the board, so a position (the stones and the player to move) can come
//! back. When a position that repeats in a line of play from the start can still lead to a loss,
//! the line can go round the cycle any number of times before it ends: with no rule against
//! repetition the longest game is unbounded. The well-posed question asked here is therefore:
//!
//! **the longest game from the start in which no position occurs twice and which ends in a loss**
//! (the player to move has an empty front row or no move, under the default cut-off rule).
//!
//! An endless move ends a game under the cut-off rule, but with no winner: it is not a loss, so
//! a game that ends in one is not counted, and an endless move is never a step of the games
//! searched (it would end them).
//!
//! * [`reachable`] and [`exact`]: every position reachable from the start and the longest such
//!   game, exactly, for small variants. The positions reachable from one another (the strongly
//!   connected components of the graph of moves that end) are taken in an order where every
//!   move leads to a component already done; inside a component of more than one position the
//!   simple paths are enumerated (within a budget), between components the longest path is a
//!   plain dynamic programme. A component of more than one position holds a cycle: a repetition.
//! * [`walks`]: the full game is far beyond that, so random cooperative games are played (each
//!   player avoids a move that loses at once or repeats a position, and the best game so far is
//!   extended from a random point of it), giving a lower bound and, when a game can repeat a
//!   position, the repeating line.

use crate::board::Position;
use crate::moves::Move;
use crate::rules::{legal_moves, loss, outcome, start_state, EndlessRule, Outcome};
use crate::search::Random;
use crate::sowing::{step, Landing};
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Instant;

/// Whether the player to move in `position` has lost (empty front row or no move; the cut-off
/// rule, under which every legal move may be chosen).
pub fn lost(position: &Position) -> bool {
    loss(position, EndlessRule::CutOff).is_some()
}

/// The moves of `position` that end, with where they lead, and how many of its moves never end.
pub fn moves_that_end(position: &Position) -> (Vec<(Move, Position)>, u64) {
    let legal = legal_moves(position);
    let mut out = Vec::with_capacity(legal.moves.len());
    let mut endless = 0;
    for &mv in &legal.moves {
        match outcome(position, mv, legal.kind) {
            Outcome::Continues { next, .. } => out.push((mv, next)),
            Outcome::Endless(_) => endless += 1,
        }
    }
    (out, endless)
}

/// A line of play that repeats a position and can still end in a loss: `to`, then `cycle` any
/// number of times (each time back at `position`), then `to_loss` is a game that ends in a loss.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repetition {
    /// The moves from the start to the repeated position.
    pub to: Vec<Move>,
    /// The repeated position.
    pub position: Position,
    /// Moves from `position` back to it.
    pub cycle: Vec<Move>,
    /// Moves from `position` to a lost position.
    pub to_loss: Vec<Move>,
}

impl Repetition {
    /// The game that goes round the cycle `turns` times and then ends in a loss.
    pub fn game(&self, turns: usize) -> Vec<Move> {
        let mut out = self.to.clone();
        for _ in 0..turns {
            out.extend_from_slice(&self.cycle);
        }
        out.extend_from_slice(&self.to_loss);
        out
    }
}

/// Every position reachable from a start by moves that end.
#[derive(Clone, Debug)]
pub struct Graph {
    /// The positions, the start first, in breadth-first order.
    pub positions: Vec<Position>,
    /// Each position's moves that end, with the index of where they lead.
    pub moves: Vec<Vec<(Move, u32)>>,
    /// Whether the player to move has lost (no moves are searched from there).
    pub lost: Vec<bool>,
    /// Moves that never end, in all positions.
    pub endless_moves: u64,
}

/// Why [`reachable`] stopped before it had every position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// More than the position limit are reachable.
    Limit {
        /// Positions kept when it stopped.
        positions: u64,
    },
    /// The deadline passed.
    Time {
        /// Positions kept when it stopped.
        positions: u64,
    },
}

/// Every position reachable from `start`, or why not (at most `limit` positions, stopping at
/// `deadline`).
pub fn reachable(start: Position, limit: u64, deadline: Option<Instant>) -> Result<Graph, Stopped> {
    let mut index: HashMap<Position, u32> = HashMap::from([(start, 0)]);
    let mut graph = Graph {
        positions: vec![start],
        moves: Vec::new(),
        lost: Vec::new(),
        endless_moves: 0,
    };
    let mut i = 0;
    while i < graph.positions.len() {
        if deadline.is_some_and(|d| i.is_multiple_of(256) && Instant::now() >= d) {
            return Err(Stopped::Time {
                positions: graph.positions.len() as u64,
            });
        }
        let position = graph.positions[i];
        let is_lost = lost(&position);
        graph.lost.push(is_lost);
        let mut edges = Vec::new();
        if !is_lost {
            let (ending, endless) = moves_that_end(&position);
            graph.endless_moves += endless;
            for (mv, next) in ending {
                let target = match index.get(&next) {
                    Some(&t) => t,
                    None => {
                        if graph.positions.len() as u64 >= limit {
                            return Err(Stopped::Limit {
                                positions: graph.positions.len() as u64,
                            });
                        }
                        let t = graph.positions.len() as u32;
                        index.insert(next, t);
                        graph.positions.push(next);
                        t
                    }
                };
                edges.push((mv, target));
            }
        }
        graph.moves.push(edges);
        i += 1;
    }
    Ok(graph)
}

/// The strongly connected components of `graph` (Tarjan's algorithm, without recursion), each a
/// list of positions, in an order where every move leads into the same component or one
/// listed before it.
pub fn components(graph: &Graph) -> Vec<Vec<u32>> {
    const NONE: u32 = u32::MAX;
    let n = graph.positions.len();
    let mut number = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    let mut next_number = 0u32;
    // (position, index of its next move to look at)
    let mut calls: Vec<(u32, usize)> = Vec::new();
    for root in 0..n as u32 {
        if number[root as usize] != NONE {
            continue;
        }
        calls.push((root, 0));
        number[root as usize] = next_number;
        low[root as usize] = next_number;
        next_number += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut k)) = calls.last_mut() {
            let edges = &graph.moves[v as usize];
            if *k < edges.len() {
                let w = edges[*k].1;
                *k += 1;
                if number[w as usize] == NONE {
                    number[w as usize] = next_number;
                    low[w as usize] = next_number;
                    next_number += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    calls.push((w, 0));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(number[w as usize]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == number[v as usize] {
                let mut component = Vec::new();
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w as usize] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(component);
            }
        }
    }
    out
}

/// The longest loss-ending games of a [`Graph`], as [`exact`] found them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exact {
    /// Positions reachable from the start.
    pub positions: u64,
    /// Of which the player to move has lost.
    pub lost: u64,
    /// Moves that never end, in all reachable positions.
    pub endless_moves: u64,
    /// Components of more than one position (each holds a cycle of positions).
    pub cyclic_components: u64,
    /// Positions in the largest component.
    pub largest_component: u64,
    /// Whether every simple path inside the components was enumerated (otherwise `longest` is
    /// only a lower bound).
    pub complete: bool,
    /// Steps of the enumeration inside components.
    pub steps: u64,
    /// The longest repetition-free game from the start that ends in a loss (its moves), if any
    /// loss is reachable.
    pub longest: Option<Vec<Move>>,
    /// A bound no such game exceeds, in plies: along the components a game passes through,
    /// each component's positions less one, plus the moves between components (equal to the
    /// longest game's plies when no component holds a cycle). `None` when no loss is reachable.
    pub upper_bound: Option<u64>,
    /// A repeating line from which a loss can still be reached, if there is one.
    pub repetition: Option<Repetition>,
}

/// The longest repetition-free loss-ending game in `graph` from its start, exactly when the
/// enumeration of simple paths inside components takes at most `budget` steps.
pub fn exact(graph: &Graph, budget: u64) -> Exact {
    const NO: i64 = -1;
    let n = graph.positions.len();
    let comps = components(graph);
    let mut component_of = vec![0u32; n];
    for (c, members) in comps.iter().enumerate() {
        for &v in members {
            component_of[v as usize] = c as u32;
        }
    }
    // value[v]: plies of the longest repetition-free game from v that ends in a loss and,
    // once it leaves v's component, never comes back (it cannot); NO if none.
    let mut value = vec![NO; n];
    // via[v]: the positions after v on that game up to the first one outside v's component
    // (or empty when v is lost).
    let mut via: Vec<Vec<u32>> = vec![Vec::new(); n];
    // bound[c]: the upper bound from any member of component c.
    let mut bound = vec![NO; comps.len()];
    let mut steps = 0u64;
    let mut complete = true;
    let mut cyclic = 0u64;
    let mut largest = 0u64;
    for (c, members) in comps.iter().enumerate() {
        largest = largest.max(members.len() as u64);
        for &v in members {
            if graph.lost[v as usize] {
                bound[c] = 0;
            }
            for &(_, w) in &graph.moves[v as usize] {
                let d = component_of[w as usize] as usize;
                if d != c && bound[d] != NO {
                    bound[c] = bound[c].max(members.len() as i64 + bound[d]);
                }
            }
        }
        if members.len() == 1 {
            let v = members[0] as usize;
            if graph.lost[v] {
                value[v] = 0;
                continue;
            }
            for &(_, w) in &graph.moves[v] {
                // A move can not lead back to its own position (the side to move changes).
                let w = w as usize;
                if value[w] != NO && value[w] + 1 > value[v] {
                    value[v] = value[w] + 1;
                    via[v] = vec![w as u32];
                }
            }
            continue;
        }
        cyclic += 1;
        // Every simple path inside the component from each member, leaving it by a move to a
        // component done before.
        let mut on_path = HashSet::new();
        for &v in members {
            let mut best = (NO, Vec::new());
            let mut path = vec![v];
            on_path.clear();
            on_path.insert(v);
            // (position, index of its next move)
            let mut frames: Vec<(u32, usize)> = vec![(v, 0)];
            while let Some(&mut (x, ref mut k)) = frames.last_mut() {
                let edges = &graph.moves[x as usize];
                if *k >= edges.len() {
                    frames.pop();
                    path.pop();
                    on_path.remove(&x);
                    continue;
                }
                let w = edges[*k].1;
                *k += 1;
                steps += 1;
                if steps > budget {
                    complete = false;
                    break;
                }
                if component_of[w as usize] != c as u32 {
                    let w_value = value[w as usize];
                    let plies = (path.len() - 1) as i64 + 1 + w_value;
                    if w_value != NO && plies > best.0 {
                        let mut nodes = path[1..].to_vec();
                        nodes.push(w);
                        best = (plies, nodes);
                    }
                } else if !on_path.contains(&w) {
                    on_path.insert(w);
                    path.push(w);
                    frames.push((w, 0));
                }
            }
            value[v as usize] = best.0;
            via[v as usize] = best.1;
        }
    }
    let lines = |from: u32| -> Vec<Move> { follow(graph, &value, &via, from) };
    let longest = (value[0] != NO).then(|| lines(0));
    // A repetition: the component nearest the start that holds a cycle and can reach a loss.
    let mut repetition = None;
    if cyclic > 0 {
        let parents = tree(graph, 0, |_| true);
        // The positions are in breadth-first order: the first found is nearest the start.
        for v in 0..n as u32 {
            let c = component_of[v as usize] as usize;
            if comps[c].len() > 1 && value[v as usize] != NO {
                let inside = |w: u32| component_of[w as usize] as usize == c;
                let cycle = graph.moves[v as usize]
                    .iter()
                    .filter(|&&(_, w)| inside(w))
                    .find_map(|&(mv, w)| {
                        let back = tree(graph, w, inside);
                        back.get(&v).map(|_| {
                            let mut moves = vec![mv];
                            moves.extend(path_moves(&back, w, v));
                            moves
                        })
                    })
                    .expect("a component of more than one position has a cycle through each");
                // The shortest way from v to a loss.
                let from_v = tree(graph, v, |_| true);
                let end = *from_v
                    .keys()
                    .filter(|&&w| graph.lost[w as usize])
                    .min_by_key(|&&w| (path_moves(&from_v, v, w).len(), w))
                    .expect("a loss is reachable from v");
                repetition = Some(Repetition {
                    to: path_moves(&parents, 0, v),
                    position: graph.positions[v as usize],
                    cycle,
                    to_loss: path_moves(&from_v, v, end),
                });
                break;
            }
        }
    }
    Exact {
        positions: n as u64,
        lost: graph.lost.iter().filter(|&&l| l).count() as u64,
        endless_moves: graph.endless_moves,
        cyclic_components: cyclic,
        largest_component: largest,
        complete,
        steps,
        longest,
        upper_bound: (bound[component_of[0] as usize] != NO)
            .then(|| bound[component_of[0] as usize] as u64),
        repetition,
    }
}

/// The moves of the game `value`/`via` record from `from` to a loss.
fn follow(graph: &Graph, value: &[i64], via: &[Vec<u32>], from: u32) -> Vec<Move> {
    let mut moves = Vec::new();
    let mut at = from;
    while value[at as usize] > 0 {
        for &next in &via[at as usize] {
            let mv = graph.moves[at as usize]
                .iter()
                .find(|&&(_, w)| w == next)
                .expect("recorded moves are moves")
                .0;
            moves.push(mv);
            at = next;
        }
    }
    moves
}

/// Breadth-first tree from `root` through positions `inside` accepts: each reached position
/// with the position and move it was first reached by.
fn tree(
    graph: &Graph,
    root: u32,
    inside: impl Fn(u32) -> bool,
) -> HashMap<u32, Option<(u32, Move)>> {
    let mut parents = HashMap::from([(root, None)]);
    let mut queue = VecDeque::from([root]);
    while let Some(v) = queue.pop_front() {
        for &(mv, w) in &graph.moves[v as usize] {
            if inside(w) && !parents.contains_key(&w) {
                parents.insert(w, Some((v, mv)));
                queue.push_back(w);
            }
        }
    }
    parents
}

/// The moves from `root` to `to` in a breadth-first tree (with `to` in it).
fn path_moves(parents: &HashMap<u32, Option<(u32, Move)>>, root: u32, to: u32) -> Vec<Move> {
    let mut moves = Vec::new();
    let mut v = to;
    while v != root {
        let (p, mv) = parents[&v].expect("only the root has no parent");
        moves.push(mv);
        v = p;
    }
    moves.reverse();
    moves
}

/// What [`walks`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walks {
    /// Games played (each until it could not go on, the move cap, or the deadline).
    pub games: u64,
    /// Of which started from a point of the best game so far.
    pub extended: u64,
    /// Plies played in all.
    pub moves: u64,
    /// Games stopped by the move cap.
    pub capped: u64,
    /// Whether the deadline stopped the search before `games` were played.
    pub timed_out: bool,
    /// Endless moves met (a player's move that never ends; never played).
    pub endless_moves: u64,
    /// The longest repetition-free game found that ends in a loss.
    pub longest: Option<Vec<Move>>,
    /// The first repetition found from which a loss can still be reached.
    pub repetition: Option<Repetition>,
}

/// A cycle met in a game, waiting for a loss reachable from its position.
struct PendingCycle {
    /// Index in the game of the repeated position.
    at: usize,
    /// The moves from it back to it.
    cycle: Vec<Move>,
}

/// Plays up to `games` cooperative random games from `start` (each of at most `max_moves`
/// plies, stopping at `deadline`): in each position the player to move looks at every move,
/// notes a move that ends the game in a loss (a candidate for the longest game), and plays a
/// random one of the moves that end, do not lose at once and do not repeat a position of the
/// game. Every other game starts again from a random point of the longer half of the best game
/// so far. A move that leads back to a position of the game is a repetition: it is kept once a
/// loss can be reached from the repeated position along the game.
pub fn walks(
    start: Position,
    games: u64,
    max_moves: usize,
    seed: u64,
    deadline: Option<Instant>,
) -> Walks {
    let mut random = Random::new(seed);
    let mut out = Walks {
        games: 0,
        extended: 0,
        moves: 0,
        capped: 0,
        timed_out: false,
        endless_moves: 0,
        longest: None,
        repetition: None,
    };
    // The best game's positions (before each move) and moves, for extending it.
    let mut best: (Vec<Position>, Vec<Move>) = (Vec::new(), Vec::new());
    'games: for g in 0..games {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            out.timed_out = true;
            break;
        }
        out.games += 1;
        let (mut path, mut line) = (vec![start], Vec::new());
        if g % 2 == 1 && best.1.len() >= 2 {
            let len = best.1.len();
            let cut = len / 2 + random.below(len - len / 2);
            path = best.0[..=cut].to_vec();
            line = best.1[..cut].to_vec();
            out.extended += 1;
        }
        let mut seen: HashMap<Position, usize> =
            path.iter().enumerate().map(|(i, &p)| (p, i)).collect();
        // The move that loses at once from each position of the game, if any.
        let mut loses: Vec<Option<Move>> = vec![None; path.len()];
        let mut pending: Option<PendingCycle> = None;
        loop {
            let here = *path.last().expect("a game has a position");
            let i = path.len() - 1;
            let (ending, endless) = moves_that_end(&here);
            out.endless_moves += endless;
            let mut live = Vec::new();
            for (mv, next) in ending {
                if lost(&next) {
                    loses[i].get_or_insert(mv);
                } else if let Some(&at) = seen.get(&next) {
                    if out.repetition.is_none() && pending.is_none() {
                        let mut cycle = line[at..].to_vec();
                        cycle.push(mv);
                        pending = Some(PendingCycle { at, cycle });
                    }
                } else {
                    live.push((mv, next));
                }
            }
            if out.repetition.is_none() {
                if let Some(p) = &pending {
                    // A loss from a position at or after the repeated one, along the game.
                    if let Some(m) = (p.at..path.len()).find(|&m| loses[m].is_some()) {
                        let mut to_loss = line[p.at..m].to_vec();
                        to_loss.push(loses[m].expect("found"));
                        out.repetition = Some(Repetition {
                            to: line[..p.at].to_vec(),
                            position: path[p.at],
                            cycle: p.cycle.clone(),
                            to_loss,
                        });
                        pending = None;
                    }
                }
            }
            let stop = if live.is_empty() {
                Some(false)
            } else if line.len() >= max_moves {
                out.capped += 1;
                Some(false)
            } else if deadline.is_some_and(|d| Instant::now() >= d) {
                out.timed_out = true;
                Some(true)
            } else {
                None
            };
            if let Some(last) = stop {
                // The game's longest ending: its last position with a move that loses at once.
                if let Some(m) = (0..path.len()).rev().find(|&m| loses[m].is_some()) {
                    if out.longest.as_ref().is_none_or(|l| l.len() < m + 1) {
                        let mut game = line[..m].to_vec();
                        game.push(loses[m].expect("found"));
                        out.longest = Some(game);
                        best = (path[..=m].to_vec(), line[..m].to_vec());
                    }
                }
                if last {
                    break 'games;
                }
                break;
            }
            let (mv, next) = live[random.below(live.len())];
            line.push(mv);
            seen.insert(next, path.len());
            path.push(next);
            loses.push(None);
            out.moves += 1;
        }
    }
    out
}

/// Sowings at most that [`returns`] follows one move for: a move that has not ended by then
/// (endless, or just very long) is not followed. Deciding that a move never ends can take
/// minutes on the full board (cycles of tens of millions of sowings), which a search of many
/// lines cannot afford.
pub const RETURN_SOWINGS: u64 = 100_000;

/// The moves of `position` that end within `cap` sowings, with where they lead, and how many
/// moves did not end within it.
pub fn moves_within(position: &Position, cap: u64) -> (Vec<(Move, Position)>, u64) {
    let legal = legal_moves(position);
    let mut out = Vec::with_capacity(legal.moves.len());
    let mut cut = 0;
    for &mv in &legal.moves {
        let mut state = start_state(position, mv, legal.kind);
        let ended = (0..cap).any(|_| step(&mut state).landing == Landing::Empty);
        if ended {
            out.push((
                mv,
                Position {
                    board: state.board,
                    side: position.side.other(),
                },
            ));
        } else {
            cut += 1;
        }
    }
    (out, cut)
}

/// What [`returns`] found: whether some line of play from a position comes back to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Returns {
    /// Positions searched from.
    pub roots: u64,
    /// Moves not followed: they had not ended after [`RETURN_SOWINGS`] sowings.
    pub cut: u64,
    /// Of which every line of at most `depth` plies was searched (the others hit the node
    /// budget).
    pub complete: u64,
    /// Positions expanded in all.
    pub expanded: u64,
    /// The first cycle found: the root's index in the list, and the moves back to it.
    pub cycle: Option<(usize, Vec<Move>)>,
}

/// Searches every line of at most `depth` plies (moves that end within [`RETURN_SOWINGS`]
/// sowings, never through a lost position, never repeating a position of the line) from each of
/// `roots`, for one that comes back to its root; at most `budget` positions expanded from one
/// root, stopping at `deadline` or at the first cycle found.
pub fn returns(
    roots: &[Position],
    depth: usize,
    budget: u64,
    deadline: Option<Instant>,
) -> Returns {
    let mut out = Returns {
        roots: 0,
        cut: 0,
        complete: 0,
        expanded: 0,
        cycle: None,
    };
    for (r, &root) in roots.iter().enumerate() {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        out.roots += 1;
        let mut expanded = 0u64;
        let mut line: Vec<Move> = Vec::new();
        let mut path: Vec<Position> = vec![root];
        // Each open position's moves still to try.
        let mut expand = |p: &Position| {
            let (moves, cut) = moves_within(p, RETURN_SOWINGS);
            out.cut += cut;
            moves
        };
        let mut frames: Vec<Vec<(Move, Position)>> = vec![expand(&root)];
        let mut complete = true;
        while let Some(frame) = frames.last_mut() {
            let Some((mv, next)) = frame.pop() else {
                frames.pop();
                path.pop();
                line.pop();
                continue;
            };
            if next == root {
                line.push(mv);
                out.cycle = Some((r, line));
                out.expanded += expanded;
                return out;
            }
            if line.len() + 1 >= depth || lost(&next) || path.contains(&next) {
                continue;
            }
            expanded += 1;
            let late = expanded.is_multiple_of(64) && deadline.is_some_and(|d| Instant::now() >= d);
            if expanded > budget || late {
                complete = false;
                break;
            }
            line.push(mv);
            path.push(next);
            frames.push(expand(&next));
        }
        out.expanded += expanded;
        out.complete += complete as u64;
    }
    out
}
