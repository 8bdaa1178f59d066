//! Ring hop as a score game (a point per capture, endless play 0), solved by the margin solver
//! and checked position by position against a brute force written from the definition.
//!
//! The brute force knows no stages, slices, symmetry or kernel. It orders raw positions by the
//! number of tokens (a capture removes one, so every capture leads to a finished layer), and in
//! each layer, for every threshold `t`, computes by plain iteration to the least fixpoint the
//! positions where the side to move can force a margin of at least `t` in finitely many moves,
//! and those where the opponent can force at most `-t` (endless play is worth 0, so neither).
//! The margin is the number of thresholds won minus the number lost.
//!
//! Three drivers are checked: in memory the one-pass solver (`margin_graph`: every threshold
//! in one pass over the reversed moves), out of core the stage kernel (one run per threshold),
//! and supersteps (every threshold at once, as a split stage runs).

use retro_engine::margin::{self, FinalMargins, Margin, MarginSlice, ScoreGame};
use retro_engine::margin_steps;
use retro_engine::{Game, Side, SliceId, Stage, Workspace};
use retro_toys::RingHop;
use std::collections::HashMap;

mod support;

use support::margins as brute_force;

/// Final margins of solved slices.
struct Finals(HashMap<SliceId, [Vec<u8>; 2]>);

impl FinalMargins for Finals {
    fn margin(&self, side: Side, slice: SliceId, index: u64) -> Margin {
        Margin(self.0[&slice][side.index()][index as usize] as i8)
    }
}

/// Solves every stage by the margin solver: in memory or out of core as `space` says, or
/// (`None`) in supersteps, every threshold at once (`margin_steps`).
fn solve_all(game: &RingHop, space: Option<&Workspace>) -> Finals {
    let mut finals = Finals(HashMap::new());
    for stage in game.stages() {
        let solved: Vec<MarginSlice> = match space {
            Some(space) => {
                margin::solve_margin_stage(game, &stage, &finals, space, |_| {})
                    .unwrap()
                    .0
            }
            None => margin_steps::solve_stage_by_steps(game, &stage, &finals).unwrap(),
        };
        for s in solved {
            finals
                .0
                .insert(s.slice, [s.margins[0].to_vec(), s.margins[1].to_vec()]);
        }
    }
    finals
}

fn every_position(n: u32, max: u32) {
    let expected = brute_force(n, max);
    // Not degenerate: positive, negative and zero margins, and some beyond one capture.
    assert!(expected.values().any(|&m| m > 1));
    assert!(expected.values().any(|&m| m < -1));
    assert!(expected.values().any(|&m| m == 0));
    let game = RingHop::new(n, max).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let spaces = [
        Workspace::in_memory(),
        Workspace::out_of_core(scratch.path().into(), 0),
    ];
    for space in [Some(&spaces[0]), Some(&spaces[1]), None] {
        let finals = solve_all(&game, space);
        for (&(white, black, side), &want) in &expected {
            let (slice, key) = game.locate(RingHop::key_of(white, black));
            let index = game.index(slice, key);
            let have = finals.margin(side, slice, index).0;
            assert_eq!(
                i32::from(have),
                want,
                "white {white:#b} black {black:#b} {side:?} to move ({space:?}, {n} cells)"
            );
            // The stored margins satisfy the local recurrence.
            let local = margin::recurrence(&game, side, slice, key, |s, k| {
                Ok::<_, ()>(finals.margin(side.other(), s, game.index(s, k)))
            })
            .unwrap();
            assert_eq!(local, want);
        }
        for (&slice, [first, second]) in &finals.0 {
            for index in 0..game.slice_len(slice) {
                let canonical = game.is_canonical(slice, game.key(slice, index));
                for v in [first[index as usize], second[index as usize]] {
                    assert_eq!(v as i8 == Margin::NON_CANONICAL.0, !canonical);
                }
            }
        }
    }
}

#[test]
fn scored_ring_of_seven_every_position() {
    every_position(7, 3);
}

#[test]
fn scored_ring_of_ten_every_position() {
    every_position(10, 3);
}

#[test]
fn margin_bounds_follow_the_tokens_in_play() {
    let game = RingHop::new(8, 2).unwrap();
    let stages: Vec<Stage> = game.stages();
    assert_eq!(game.margin_bound(&stages[0]), 0);
    assert_eq!(game.margin_bound(stages.last().unwrap()), 4);
}
