//! Every position reachable from the start, counted by stones on the board, layer by layer.
//!
//! Stones never come back onto the board: a move either captures (the position falls to a
//! lower layer) or keeps every stone (it stays in its layer, and such moves can cycle). So the
//! positions reachable from the start are found one layer at a time, from the start's stone
//! count down: a layer's positions are the closure, under the moves that capture nothing, of
//! its *seeds* (the start, and every position a capture from a higher layer lands on). Each
//! position is expanded exactly once (breadth-first inside its layer, one frontier at a
//! time), and nothing of a layer is kept once the layers below have their seeds.
//!
//! A position is a 64-bit key: its slice and index in the solver's numbering
//! ([`Mancala::locate`]) and the side to move, so a layer's set is a sorted vector of keys
//! (8 bytes a position), and a capture's target is a key in the seeds of its layer.

use crate::board::Position;
use crate::game::Mancala;
use crate::rules::{for_each_move, EndlessRule, Outcome};
use rayon::prelude::*;
use retro_engine::{Side, SliceId};
use retro_index::compositions;

/// Bits of a key below the slice: the index (below 2^36: 16 holes hold up to 32 stones, the
/// 8x2 start's, in slices of at most C(23, 7)^2 = 6.0e10 positions) and the side to move.
const SLICE_SHIFT: u32 = 37;

/// The reachable positions of one layer (stones on the board).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    /// Stones on the board.
    pub stones: u32,
    /// Positions with the first player to move.
    pub first_to_move: u64,
    /// Positions with the second player to move.
    pub second_to_move: u64,
    /// Seeds the layer had (distinct positions captures from above land on, and the start).
    pub seeds: u64,
    /// Positions known after each breadth-first round inside the layer: round 1 is the seeds,
    /// round `r` adds the positions `r - 1` non-capturing moves from the nearest seed.
    pub growth: Vec<u64>,
}

impl Layer {
    /// Positions of the layer, both sides to move.
    pub fn positions(&self) -> u64 {
        self.first_to_move + self.second_to_move
    }
}

/// Where a search stopped before its last layer: it held `limit` keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stopped {
    /// The layer it was searching, with the positions known when it stopped.
    pub layer: Layer,
    /// Keys (with repeats) waiting in the seeds of the layers below.
    pub waiting_below: u64,
}

/// What [`search`] found: the layers in order from the start's down.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reachable {
    /// Complete layers, from the most stones down.
    pub layers: Vec<Layer>,
    /// `None` when every layer was searched.
    pub stopped: Option<Stopped>,
}

impl Reachable {
    /// Positions in the complete layers.
    pub fn positions(&self) -> u64 {
        self.layers.iter().map(Layer::positions).sum()
    }
}

/// The key of a position.
fn key(game: &Mancala, pos: &Position) -> u64 {
    let (slice, index) = game.locate(&pos.board).expect("the game holds every board");
    (u64::from(slice.0) << SLICE_SHIFT) | (index << 1) | (pos.side == Side::Second) as u64
}

/// The position of a key.
fn position(game: &Mancala, key: u64) -> Position {
    let slice = SliceId((key >> SLICE_SHIFT) as u32);
    let index = (key & ((1 << SLICE_SHIFT) - 1)) >> 1;
    Position {
        board: game.board(slice, index),
        side: if key & 1 == 0 {
            Side::First
        } else {
            Side::Second
        },
    }
}

/// Stones on the board of a key's position.
fn stones_of(key: u64) -> u32 {
    Mancala::slice_stones(SliceId((key >> SLICE_SHIFT) as u32)).0
}

/// `a` without the elements of `b` (both sorted, without repeats).
fn difference(a: Vec<u64>, b: &[u64]) -> Vec<u64> {
    let mut j = 0;
    let mut out = Vec::with_capacity(a.len());
    for x in a {
        while j < b.len() && b[j] < x {
            j += 1;
        }
        if j == b.len() || b[j] != x {
            out.push(x);
        }
    }
    out
}

/// The union of `a` and `b` (both sorted, disjoint).
fn merge(a: Vec<u64>, b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Sorts and removes repeats.
fn normalise(v: &mut Vec<u64>) {
    v.par_sort_unstable();
    v.dedup();
}

/// Searches every position reachable from `start`, layer by layer. `limit` bounds the keys
/// held at once (8 bytes each; sorting a round needs as much again): past it the search stops
/// and says where. `progress` hears of every round (the layer so far). Fails on a ring or a
/// stone count the solver's numbering does not cover ([`Mancala::new`]).
pub fn search(
    start: Position,
    limit: u64,
    mut progress: impl FnMut(&Layer),
) -> Result<Reachable, String> {
    let top = start.board.total();
    let game = Mancala::new(start.board.holes(), top, EndlessRule::CutOff)?;
    // Keys hold a slice's index in SLICE_SHIFT - 1 bits; the largest slice of the top layer
    // (stones split evenly between the sides) is the largest of any layer.
    let per_side = start.board.per_side();
    let largest = compositions(top / 2, per_side) * compositions(top - top / 2, per_side);
    if largest >= 1 << (SLICE_SHIFT - 1) {
        return Err(format!(
            "{top} stones on {} holes: slices of {largest} positions are too large for the \
             search's keys",
            start.board.holes()
        ));
    }
    let mut seeds: Vec<Vec<u64>> = vec![Vec::new(); top as usize + 1];
    // Lengths of the seed lists when they were last sorted and cleared of repeats.
    let mut sorted_at = vec![0usize; top as usize + 1];
    seeds[top as usize].push(key(&game, &start));
    let mut layers = Vec::new();
    for stones in (0..=top).rev() {
        let mut frontier = std::mem::take(&mut seeds[stones as usize]);
        normalise(&mut frontier);
        let mut layer = Layer {
            stones,
            first_to_move: 0,
            second_to_move: 0,
            seeds: frontier.len() as u64,
            growth: Vec::new(),
        };
        let mut visited: Vec<u64> = Vec::new();
        while !frontier.is_empty() {
            visited = merge(visited, &frontier);
            layer.growth.push(visited.len() as u64);
            progress(&layer);
            let waiting: usize = seeds.iter().map(Vec::len).sum();
            if (visited.len() + waiting) as u64 > limit {
                count_sides(&mut layer, &visited);
                return Ok(Reachable {
                    layers,
                    stopped: Some(Stopped {
                        layer,
                        waiting_below: waiting as u64,
                    }),
                });
            }
            let found: Vec<(Vec<u64>, Vec<u64>)> = frontier
                .par_chunks(1 << 14)
                .map(|chunk| expand(&game, chunk))
                .collect();
            drop(frontier);
            let mut next = Vec::new();
            for (same, lower) in found {
                next.extend(same);
                for k in lower {
                    seeds[stones_of(k) as usize].push(k);
                }
            }
            normalise(&mut next);
            frontier = difference(next, &visited);
            // Captures land on the same positions again and again: keep each lower layer's
            // seeds free of repeats once they have doubled.
            for (list, at) in seeds.iter_mut().zip(&mut sorted_at) {
                if list.len() > 2 * *at + (1 << 20) {
                    normalise(list);
                    *at = list.len();
                }
            }
        }
        count_sides(&mut layer, &visited);
        layers.push(layer);
    }
    Ok(Reachable {
        layers,
        stopped: None,
    })
}

/// Counts the positions of `visited` (the keys of `layer`) by side to move.
fn count_sides(layer: &mut Layer, visited: &[u64]) {
    layer.second_to_move = visited.iter().filter(|&&k| k & 1 == 1).count() as u64;
    layer.first_to_move = visited.len() as u64 - layer.second_to_move;
}

/// The moves of the positions of `chunk`: the keys reached without a capture (sorted, no
/// repeats) and those reached by a capture.
fn expand(game: &Mancala, chunk: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let mut same = Vec::new();
    let mut lower = Vec::new();
    for &k in chunk {
        let pos = position(game, k);
        for_each_move(&pos.board, pos.side, |mv| {
            if let Outcome::Continues { board, captured } = mv.outcome {
                let next = key(
                    game,
                    &Position {
                        board,
                        side: pos.side.other(),
                    },
                );
                if captured == 0 {
                    same.push(next);
                } else {
                    lower.push(next);
                }
            }
        });
    }
    same.sort_unstable();
    same.dedup();
    (same, lower)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loops;

    #[test]
    fn keys_round_trip() {
        let game = Mancala::new(16, 32, EndlessRule::CutOff).unwrap();
        for text in [
            "0,4,0,4,0,4,0,4,0,4,0,4,0,4,0,4 first",
            "32,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0 second",
            "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,32 second",
            "1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1 first",
        ] {
            let pos = Position::parse(text).unwrap();
            let k = key(&game, &pos);
            assert_eq!(position(&game, k), pos);
            assert_eq!(stones_of(k), pos.board.total());
        }
    }

    #[test]
    fn a_ring_the_numbering_does_not_cover_is_an_error() {
        let start = loops::start(18).unwrap();
        assert!(search(start, 10, |_| {}).is_err());
        // 48 stones on 16 holes: slices beyond the keys' index bits.
        let crowded = Position::parse("0,6,0,6,0,6,0,6,0,6,0,6,0,6,0,6 first").unwrap();
        let e = search(crowded, 10, |_| {}).unwrap_err();
        assert!(e.contains("too large"), "{e}");
    }

    #[test]
    fn layers_count_what_the_breadth_first_search_finds() {
        // 4x2: the whole reachable set fits the distance search; both must agree per layer.
        let start = loops::start(8).unwrap();
        let by_distance = loops::analyse(start, u64::MAX).unwrap();
        assert!(by_distance.complete_to.is_none());
        let by_layer = search(start, u64::MAX, |_| {}).unwrap();
        assert!(by_layer.stopped.is_none());
        for layer in &by_layer.layers {
            let expected = by_distance
                .reachable_by_stones
                .get(&layer.stones)
                .copied()
                .unwrap_or(0);
            assert_eq!(layer.positions(), expected, "{} stones", layer.stones);
        }
    }
}
