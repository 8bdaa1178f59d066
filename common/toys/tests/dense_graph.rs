//! A game with hundreds of moves per position, solved by the stage kernel (pushing and
//! pulling, in memory and out of core) and checked against a brute force.
//!
//! SIMPEI puts clipped pieces back on any free holes, so one of its positions can have
//! thousands of successors; a position's counter of open successors then no longer fits the
//! value byte and lives in an overflow table. This game exercises exactly that: every position
//! has about [`DEGREE`] successors, and its structure makes positions lose with all of them
//! won for the opponent, win, and draw.

use retro_engine::superstep::solve_stage_by_steps;
use retro_engine::{solve_stage, Game, Move, NoFinals, Side, SliceId, Stage, Value, Workspace};
use std::collections::HashMap;
use std::ops::Range;

/// Nodes of the graph: a position is a node and a side to move.
const NODES: u64 = 5000;
/// Out-edges of a node that has moves (drawn with repetition, so slightly fewer distinct).
const DEGREE: usize = 600;
/// Nodes are spread over this many slices (`node % SLICES`), so edges cross slices.
const SLICES: u64 = 3;

/// A directed graph whose nodes are positions and whose edges are moves of either side.
struct DenseGraph {
    successors: Vec<Vec<u64>>,
    predecessors: Vec<Vec<u64>>,
    /// Whether the node has a move that wins at once ([`Move::Known`]).
    wins_at_once: Vec<bool>,
    /// Whether un-moves are offered (push) or not (the kernel must pull).
    unmoves: bool,
}

impl DenseGraph {
    /// The graph, built from a fixed pseudo-random sequence. Nodes come in five tiers by
    /// `node % 5`: 0 have no move (lost), 1 have a move to a tier-0 node among random ones
    /// (won), 2 move only to tier-1 nodes (lost, with ~450 distinct successors to wait for), 3 have a
    /// move to a tier-2 node and others to tier 1 (won, later), 4 move among tier 4 and tier 1 (drawn: nothing forces).
    /// Every seventh tier-4 node also has a move that wins at once.
    fn new(unmoves: bool) -> DenseGraph {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let of_tier = |tier: u64, r: u64| (r / 5) * 5 + tier;
        let mut successors = vec![Vec::new(); NODES as usize];
        let mut wins_at_once = vec![false; NODES as usize];
        for node in 0..NODES {
            let out = &mut successors[node as usize];
            match node % 5 {
                0 => {}
                1 => {
                    out.push(of_tier(0, next(NODES)));
                    out.extend((1..DEGREE).map(|_| next(NODES)));
                }
                2 => out.extend((0..DEGREE).map(|_| of_tier(1, next(NODES)))),
                3 => {
                    out.push(of_tier(2, next(NODES)));
                    out.extend((1..DEGREE).map(|_| of_tier(1, next(NODES))));
                }
                _ => {
                    let tier = |r: u64| if r.is_multiple_of(2) { 4 } else { 1 };
                    out.extend((0..DEGREE).map(|_| {
                        let r = next(NODES);
                        of_tier(tier(r), r)
                    }));
                    wins_at_once[node as usize] = node % 7 == 0;
                }
            }
        }
        let mut predecessors = vec![Vec::new(); NODES as usize];
        for (from, out) in successors.iter().enumerate() {
            for &to in out {
                predecessors[to as usize].push(from as u64);
            }
        }
        DenseGraph {
            successors,
            predecessors,
            wins_at_once,
            unmoves,
        }
    }

    /// The value of every node (the same for both sides to move) by iterating the recurrence
    /// from "everything is a draw" to its fixpoint.
    fn brute_force(&self) -> Vec<u8> {
        let mut value = vec![0u8; NODES as usize];
        loop {
            let next: Vec<u8> = (0..NODES as usize)
                .map(|n| {
                    let mut vals: Vec<u8> = self.successors[n]
                        .iter()
                        .map(|&q| value[q as usize])
                        .collect();
                    if self.wins_at_once[n] {
                        vals.push(Value::LOST_NOW.0);
                    }
                    if vals.is_empty() {
                        return Value::LOST_NOW.0;
                    }
                    match vals.iter().filter(|v| *v % 2 == 1).min() {
                        Some(v) => v + 1,
                        None if vals.iter().all(|&v| v != 0) => 1 + vals.iter().max().unwrap(),
                        None => 0,
                    }
                })
                .collect();
            if next == value {
                return value;
            }
            value = next;
        }
    }

    fn slice_of(node: u64) -> SliceId {
        SliceId((node % SLICES) as u32)
    }
}

impl Game for DenseGraph {
    fn stages(&self) -> Vec<Stage> {
        vec![Stage {
            name: "graph".into(),
            slices: (0..SLICES as u32).map(SliceId).collect(),
            depends_on: vec![],
        }]
    }
    fn slice_count(&self) -> usize {
        SLICES as usize
    }
    fn slice_len(&self, slice: SliceId) -> u64 {
        (NODES - u64::from(slice.0)).div_ceil(SLICES)
    }
    fn slice_name(&self, slice: SliceId) -> String {
        format!("nodes={}", slice.0)
    }
    fn for_each_key(&self, slice: SliceId, range: Range<u64>, mut visit: impl FnMut(u64, u64)) {
        for index in range {
            visit(index, index * SLICES + u64::from(slice.0));
        }
    }
    fn index(&self, _slice: SliceId, key: u64) -> u64 {
        key / SLICES
    }
    fn key(&self, slice: SliceId, index: u64) -> u64 {
        index * SLICES + u64::from(slice.0)
    }
    fn is_canonical(&self, _slice: SliceId, _key: u64) -> bool {
        true
    }
    fn leaves_stage(&self, _side: Side) -> bool {
        false
    }
    fn has_unmoves(&self) -> bool {
        self.unmoves
    }
    fn moves(&self, _side: Side, _slice: SliceId, key: u64, mut visit: impl FnMut(Move)) {
        if self.wins_at_once[key as usize] {
            visit(Move::Known(Value::LOST_NOW));
        }
        for &to in &self.successors[key as usize] {
            visit(Move::InStage(Self::slice_of(to), to));
        }
    }
    fn unmoves(
        &self,
        _side: Side,
        _slice: SliceId,
        key: u64,
        mut visit: impl FnMut(SliceId, u64, u64),
    ) {
        assert!(self.unmoves, "un-moves asked of a game without them");
        for &from in &self.predecessors[key as usize] {
            visit(Self::slice_of(from), from, from / SLICES);
        }
    }
}

#[test]
fn positions_with_hundreds_of_successors_are_solved_exactly() {
    let expected = DenseGraph::new(true).brute_force();
    // The structure gives what it should: losses that wait for hundreds of successors.
    let tier2: Vec<u8> = (2..NODES as usize)
        .step_by(5)
        .map(|n| expected[n])
        .collect();
    assert!(tier2.iter().all(|&v| v == 3), "{tier2:?}");
    let graph = DenseGraph::new(true);
    for node in (2..NODES as usize).step_by(5) {
        let mut distinct = graph.successors[node].clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(
            distinct.len() > 400,
            "node {node}: {} successors",
            distinct.len()
        );
    }
    for v in [0, 2, 4] {
        assert!(expected.contains(&v), "no value {v}: {expected:?}");
    }

    let scratch = tempfile::tempdir().unwrap();
    for unmoves in [true, false] {
        let game = DenseGraph::new(unmoves);
        let stage = &game.stages()[0];
        for space in [
            Workspace::in_memory(),
            Workspace::out_of_core(scratch.path().into(), 0),
        ] {
            let (solved, _) = solve_stage(&game, stage, &NoFinals, &space, |_| {}).unwrap();
            let mut seen = HashMap::new();
            for s in &solved {
                for side in Side::BOTH {
                    for (index, &v) in s.values[side.index()].to_vec().iter().enumerate() {
                        let node = game.key(s.slice, index as u64);
                        assert_eq!(
                            v, expected[node as usize],
                            "node {node} {side:?} to move (un-moves: {unmoves}, {space:?})"
                        );
                        seen.insert((node, side), v);
                    }
                }
            }
            assert_eq!(seen.len(), 2 * NODES as usize);
        }
    }
    // A split stage cannot count past a byte: it says so instead of miscounting.
    let e = solve_stage_by_steps(&graph, &graph.stages()[0], &NoFinals).unwrap_err();
    assert!(e.to_string().contains("split stages"), "{e}");
}
