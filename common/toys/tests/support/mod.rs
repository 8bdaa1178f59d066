//! The rules of ring hop restated on raw positions, and two brute-force solvers over them, for
//! the tests: no stages, slices, keys or symmetry, so that they check the game's `Game` impl
//! and the engine rather than repeat them. (Also included by the command line's end-to-end
//! test of ring hop.)
//!
//! * [`win_draw_loss`] lists every raw position and iterates the win/draw/loss recurrence
//!   synchronously from "everything is a draw" until nothing changes: after round `t` exactly
//!   the positions of value at most `t` have their value, so the fixpoint is the table.
//! * [`margins`] orders raw positions by the number of tokens (a capture removes one, so every
//!   capture leads to a finished layer) and in each layer, for every threshold `t`, computes
//!   by plain iteration to the least fixpoint the positions where the side to move can force a
//!   margin of at least `t` in finitely many moves, and those where the opponent can force at
//!   most `-t` (endless play is worth 0, so neither). The margin is the number of thresholds
//!   won minus the number lost.

#![allow(dead_code)] // each test uses its part

use retro_engine::Side;
use std::collections::HashMap;

/// A raw position: white cells, black cells, side to move.
pub type Raw = (u64, u64, Side);

/// Every raw position of ring hop on `n` cells with at most `max` tokens a side.
pub fn all_positions(n: u32, max: u32) -> Vec<Raw> {
    let mut positions = Vec::new();
    for white in 0u64..1 << n {
        for black in 0u64..1 << n {
            if white & black == 0 && white.count_ones() <= max && black.count_ones() <= max {
                for side in Side::BOTH {
                    positions.push((white, black, side));
                }
            }
        }
    }
    positions
}

/// Every move from `position` on a ring of `n` cells: the position it reaches and the tokens it
/// captures (0 or 1). A token steps to an adjacent empty cell, or jumps an adjacent enemy
/// token to the empty cell beyond, capturing it.
pub fn moves(n: u32, (white, black, side): Raw) -> Vec<(Raw, i32)> {
    let (own, other) = match side {
        Side::First => (white, black),
        Side::Second => (black, white),
    };
    let mut out = Vec::new();
    for from in (0..n).filter(|&c| own >> c & 1 == 1) {
        for to in [(from + 1) % n, (from + n - 1) % n] {
            let beyond = (2 * to + n - from) % n;
            let (own2, other2, gain) = if (own | other) >> to & 1 == 0 {
                (own ^ 1 << from ^ 1 << to, other, 0)
            } else if other >> to & 1 == 1 && (own | other) >> beyond & 1 == 0 {
                (own ^ 1 << from ^ 1 << beyond, other ^ 1 << to, 1)
            } else {
                continue;
            };
            let next = match side {
                Side::First => (own2, other2, Side::Second),
                Side::Second => (other2, own2, Side::First),
            };
            out.push((next, gain));
        }
    }
    out
}

/// The value of every raw position of ring hop on `n` cells with up to `max` tokens a side.
pub fn win_draw_loss(n: u32, max: u32) -> HashMap<Raw, u8> {
    let positions = all_positions(n, max);
    let index: HashMap<Raw, usize> = positions.iter().enumerate().map(|(i, &p)| (p, i)).collect();
    let successors: Vec<Vec<usize>> = positions
        .iter()
        .map(|&p| moves(n, p).into_iter().map(|(q, _)| index[&q]).collect())
        .collect();
    let mut value = vec![0u8; positions.len()];
    loop {
        let next: Vec<u8> = successors
            .iter()
            .map(|succ| {
                if succ.is_empty() {
                    return 1;
                }
                let vals = succ.iter().map(|&q| value[q]);
                let fastest_loss = vals.clone().filter(|v| v % 2 == 1).min();
                match fastest_loss {
                    Some(v) => v + 1,
                    None if vals.clone().all(|v| v != 0) => 1 + vals.max().unwrap(),
                    None => 0,
                }
            })
            .collect();
        if next == value {
            return positions.into_iter().zip(value).collect();
        }
        value = next;
    }
}

/// The margin of every raw position of ring hop on `n` cells with up to `max` tokens a side.
pub fn margins(n: u32, max: u32) -> HashMap<Raw, i32> {
    let mut value: HashMap<Raw, i32> = HashMap::new();
    for tokens in 0..=2 * max {
        let layer: Vec<Raw> = all_positions(n, max)
            .into_iter()
            .filter(|&(white, black, _)| (white | black).count_ones() == tokens)
            .collect();
        let moves: Vec<Vec<(Raw, i32)>> = layer.iter().map(|&p| moves(n, p)).collect();
        let index: HashMap<Raw, usize> = layer.iter().enumerate().map(|(i, &p)| (p, i)).collect();
        let mut margin = vec![0i32; layer.len()];
        for t in 1..=tokens as i32 {
            // won[i]: mover forces >= t; lost[i]: opponent forces the mover to <= -t.
            let (mut won, mut lost) = (vec![false; layer.len()], vec![false; layer.len()]);
            loop {
                let mut changed = false;
                for i in 0..layer.len() {
                    if moves[i].is_empty() {
                        continue; // the game ends with margin 0
                    }
                    let outcome = |&(next, gain): &(Raw, i32)| -> (bool, bool) {
                        match index.get(&next) {
                            // In the layer: the opponent's outcome, reversed.
                            Some(&j) => (lost[j], won[j]),
                            // A capture: a finished layer's margin.
                            None => {
                                let m = gain - value[&next];
                                (m >= t, m <= -t)
                            }
                        }
                    };
                    let w = moves[i].iter().any(|m| outcome(m).0);
                    let l = moves[i].iter().all(|m| outcome(m).1);
                    if w && !won[i] {
                        won[i] = true;
                        changed = true;
                    }
                    if l && !lost[i] {
                        lost[i] = true;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            for i in 0..layer.len() {
                margin[i] += i32::from(won[i]) - i32::from(lost[i]);
            }
        }
        for (p, m) in layer.into_iter().zip(margin) {
            value.insert(p, m);
        }
    }
    value
}
