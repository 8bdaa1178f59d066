//! The loop analysis: every endless move and every repetition of positions reachable from the
//! start, found by a breadth-first search of the positions reachable from the start.
//!
//! * **Endless moves.** The search visits the reachable positions in order of distance from
//!   the start, so the first time a position is reached its line from the start is a shortest
//!   one; every move of every reached position is played, and each endless one is recorded
//!   with that line, its loop, period and shift.
//! * **Repetitions.** A position can repeat only through moves that capture nothing (a capture
//!   removes stones for good). The reachable positions joined by such moves form a graph whose
//!   strongly connected components with more than one position are exactly the sets of
//!   positions that can repeat; for each the report gives its size, the line that first
//!   reaches it, and a shortest cycle through that first position. (Counting every simple
//!   cycle of a component is a different, exponential question; the components are what
//!   "every repetition" can be listed by.)
//!
//! Under the cut-off rule an endless move ends the game, so the search does not continue
//! through it; under the illegal rule it is not a move at all. Either way the set of reachable
//! positions is the same.

use crate::board::{hole_name, Board, Position};
use crate::rules::{for_each_move, Outcome};
use crate::sowing::Loop;
use retro_engine::Side;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// The study's loop examples (`../shared/spec/mancala.md`): a 4x2 board sown from hole `a`,
/// with the period and the shift the study gives it. `retro loops` checks them, and so do the
/// tests.
pub const STUDY_EXAMPLES: &[(&str, u64, usize)] = &[
    ("3,1,0,2,1,0,2,1", 0, 3),
    ("3,1,0,1,0,1,0,1", 1, 1),
    ("3,1,0,1,0,3,0,1", 2, 2),
    ("3,1,0,3,0,1,0,1", 2, 2),
    ("5,1,0,1,0,1,0,1", 3, 3),
    ("3,1,0,3,0,3,0,1", 4, 4),
    ("5,1,0,1,0,3,0,1", 6, 6),
    ("5,1,0,3,0,1,0,1", 10, 1),
    ("7,1,0,1,0,3,0,1", 30, 3),
    ("3,1,0,1,0,1,0,4", 2, 2),
    ("3,1,0,3,0,1,0,4", 2, 2),
];

/// One endless move reachable from the start.
#[derive(Clone, Debug)]
pub struct EndlessMove {
    /// The position it is played from.
    pub position: Position,
    /// The hole lifted.
    pub hole: usize,
    /// Its loop.
    pub found: Loop,
    /// A shortest line of play from the start to `position` (holes lifted, in order).
    pub line: Vec<usize>,
}

/// A set of reachable positions that can repeat (a strongly connected component of moves that
/// capture nothing).
#[derive(Clone, Debug)]
pub struct Repetition {
    /// Positions in the component.
    pub positions: usize,
    /// Its position nearest the start.
    pub first: Position,
    /// A shortest line from the start to `first`.
    pub line: Vec<usize>,
    /// A shortest cycle through `first`: the holes lifted, back to `first`.
    pub cycle: Vec<usize>,
}

/// What the search found.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Positions reachable from the start (games not over), by stones on the board.
    pub reachable_by_stones: BTreeMap<u32, u64>,
    /// Every endless move reachable from the start, in order of distance.
    pub endless: Vec<EndlessMove>,
    /// Every set of positions that can repeat, in order of distance.
    pub repetitions: Vec<Repetition>,
    /// `None` when every reachable position was searched; otherwise the number of moves from
    /// the start up to which the search is complete (it stopped at its position limit, and
    /// everything above covers only the positions up to that distance).
    pub complete_to: Option<u32>,
}

impl Analysis {
    /// Endless moves per (period, shift).
    pub fn classes(&self) -> BTreeMap<(u64, usize), usize> {
        let mut out = BTreeMap::new();
        for e in &self.endless {
            *out.entry((e.found.period, e.found.shift)).or_insert(0) += 1;
        }
        out
    }

    /// Distinct loops (board and starting hole) among the endless moves.
    pub fn distinct_loops(&self) -> usize {
        let mut loops: Vec<(Board, usize)> = self
            .endless
            .iter()
            .map(|e| (e.found.entry.board, e.found.entry.hole))
            .collect();
        loops.sort_by(|a, b| (a.0.counts(), a.1).cmp(&(b.0.counts(), b.1)));
        loops.dedup();
        loops.len()
    }
}

/// A line of play as hole names (`d f a`).
pub fn line_text(line: &[usize]) -> String {
    let names: Vec<String> = line.iter().map(|&h| hole_name(h).to_string()).collect();
    if names.is_empty() {
        "(the start itself)".to_string()
    } else {
        names.join(" ")
    }
}

/// Searches every position reachable from `start`, in order of distance. Past `limit`
/// positions (the search keeps every position in memory) it stops at the end of the last
/// distance it finished and reports what it found up to there.
pub fn analyse(start: Position, limit: u64) -> Result<Analysis, String> {
    // Positions by number, with the move that first reached each.
    let mut number: HashMap<Position, u32> = HashMap::new();
    let mut positions: Vec<Position> = Vec::new();
    let mut parent: Vec<(u32, u8)> = Vec::new();
    // Moves that capture nothing, for the repetition graph.
    let mut quiet: Vec<Vec<(u32, u8)>> = Vec::new();
    let mut endless = Vec::new();
    let mut queue = VecDeque::new();
    number.insert(start, 0);
    positions.push(start);
    parent.push((u32::MAX, 0));
    queue.push_back(0u32);
    let mut depth = vec![0u32];
    let mut complete_to = None;
    let line_to = |parent: &[(u32, u8)], mut at: u32| {
        let mut line = Vec::new();
        while parent[at as usize].0 != u32::MAX {
            line.push(parent[at as usize].1 as usize);
            at = parent[at as usize].0;
        }
        line.reverse();
        line
    };
    while let Some(at) = queue.pop_front() {
        if positions.len() as u64 >= limit {
            // Positions at this distance and nearer have all been expanded.
            let d = depth[at as usize];
            complete_to = Some(d.saturating_sub(1));
            let keep = depth.iter().take_while(|&&x| x < d).count();
            positions.truncate(keep.max(1));
            break;
        }
        let pos = positions[at as usize];
        let mut edges = Vec::new();
        let mut next = Vec::new();
        for_each_move(&pos.board, pos.side, |mv| match mv.outcome {
            Outcome::Endless(found) => endless.push((at, mv.hole, found)),
            Outcome::GameOver { .. } => {}
            Outcome::Continues { board, captured } => next.push((
                Position {
                    board,
                    side: pos.side.other(),
                },
                mv.hole,
                captured,
            )),
        });
        for (to, hole, captured) in next {
            let id = match number.get(&to) {
                Some(&id) => id,
                None => {
                    let id = positions.len() as u32;
                    number.insert(to, id);
                    positions.push(to);
                    depth.push(depth[at as usize] + 1);
                    parent.push((at, hole as u8));
                    queue.push_back(id);
                    id
                }
            };
            if captured == 0 {
                edges.push((id, hole as u8));
            }
        }
        if quiet.len() <= at as usize {
            quiet.resize(at as usize + 1, Vec::new());
        }
        quiet[at as usize] = edges;
    }
    quiet.resize(positions.len(), Vec::new());
    for edges in &mut quiet {
        edges.retain(|&(to, _)| (to as usize) < positions.len());
    }
    let endless = endless
        .into_iter()
        .filter(|&(at, _, _)| (at as usize) < positions.len())
        .map(|(at, hole, found)| EndlessMove {
            position: positions[at as usize],
            hole,
            found,
            line: line_to(&parent, at),
        })
        .collect();
    let mut reachable_by_stones = BTreeMap::new();
    for p in &positions {
        *reachable_by_stones.entry(p.board.total()).or_insert(0) += 1;
    }
    let repetitions = components(&quiet)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let first = *c.iter().min().unwrap();
            Repetition {
                positions: c.len(),
                first: positions[first as usize],
                line: line_to(&parent, first),
                cycle: shortest_cycle(&quiet, first),
            }
        })
        .collect::<Vec<_>>();
    let mut repetitions = repetitions;
    repetitions.sort_by_key(|r| number[&r.first]);
    Ok(Analysis {
        reachable_by_stones,
        endless,
        repetitions,
        complete_to,
    })
}

/// The strongly connected components of the graph `edges` (Tarjan's algorithm, iterative).
fn components(edges: &[Vec<(u32, u8)>]) -> Vec<Vec<u32>> {
    let n = edges.len();
    let mut index = vec![u32::MAX; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut counter = 0u32;
    for root in 0..n {
        if index[root] != u32::MAX {
            continue;
        }
        // (node, next edge to look at)
        let mut work = vec![(root, 0usize)];
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut e)) = work.last_mut() {
            if let Some(&(w, _)) = edges[v].get(*e) {
                *e += 1;
                let w = w as usize;
                if index[w] == u32::MAX {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(u, _)) = work.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                loop {
                    let w = stack.pop().unwrap();
                    on_stack[w] = false;
                    component.push(w as u32);
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

/// A shortest cycle through `from` along `edges` (breadth-first), as the holes lifted.
fn shortest_cycle(edges: &[Vec<(u32, u8)>], from: u32) -> Vec<usize> {
    let mut came: HashMap<u32, (u32, u8)> = HashMap::new();
    let mut queue = VecDeque::from([from]);
    while let Some(at) = queue.pop_front() {
        for &(to, hole) in &edges[at as usize] {
            if to == from {
                let mut cycle = vec![hole as usize];
                let mut back = at;
                while back != from {
                    let (prev, h) = came[&back];
                    cycle.push(h as usize);
                    back = prev;
                }
                cycle.reverse();
                return cycle;
            }
            if let std::collections::hash_map::Entry::Vacant(e) = came.entry(to) {
                e.insert((at, hole));
                queue.push_back(to);
            }
        }
    }
    Vec::new()
}

/// The start position of a ring of `holes` holes.
pub fn start(holes: usize) -> Result<Position, String> {
    Ok(Position {
        board: Board::start(holes)?,
        side: Side::First,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_find_cycles_and_not_chains() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3, 3 -> 4 -> 3
        let edges = vec![
            vec![(1, 0)],
            vec![(2, 0)],
            vec![(0, 0), (3, 1)],
            vec![(4, 0)],
            vec![(3, 0)],
        ];
        let mut c: Vec<Vec<u32>> = components(&edges)
            .into_iter()
            .map(|mut c| {
                c.sort();
                c
            })
            .collect();
        c.sort();
        assert_eq!(c, vec![vec![0, 1, 2], vec![3, 4]]);
        assert_eq!(shortest_cycle(&edges, 0).len(), 3);
        assert_eq!(shortest_cycle(&edges, 3).len(), 2);
    }
}
