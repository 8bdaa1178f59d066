//! The kernel against a brute-force solver, on every raw position of small boards, for the
//! base game and the trap-zone variant.
//!
//! The brute force iterates the defining recurrence synchronously over all positions (no
//! symmetry, no frontiers, no slices): after `t` rounds exactly the positions whose value is at
//! most `t` are non-zero, with their exact value, so the fixpoint is the true value table.
//! In the trap-zone variant a black without a move has lost only on a trap point (value 1);
//! elsewhere it has won (value 0); the brute force reads the zone from the test, not from the
//! board.

use retro_engine::superstep::solve_stage_by_steps;
use retro_engine::{
    solve_stage, FinalValues, Game, Side as EngineSide, SliceId, SolvedSlice, Stage, Value,
    Workspace,
};
use retro_musashi::game::BulkClaims;
use retro_musashi::rules::moves;
use retro_musashi::{Board, Musashi, Position, Side};
use std::collections::HashMap;

/// Values of every raw position with at most `max_browns` browns, by the definition, with the
/// trap zone `trap` (a mask of points; `None`: the base game, every point traps).
fn brute_force(board: &Board, max_browns: usize, trap: Option<u64>) -> HashMap<Position, u8> {
    let n = board.len();
    let mut positions = Vec::new();
    for k in 0..=max_browns.min(n - 1) {
        // Every k-subset of the n points, in increasing mask order (Gosper's hack).
        let mut browns: u64 = (1 << k) - 1;
        while browns < 1 << n {
            for black in (0..n).filter(|&b| browns >> b & 1 == 0) {
                for side in [Side::Brown, Side::Black] {
                    positions.push(Position {
                        black,
                        browns,
                        side,
                    });
                }
            }
            if k == 0 {
                break;
            }
            browns = retro_index::next_subset(browns);
        }
    }
    let index: HashMap<Position, usize> =
        positions.iter().enumerate().map(|(i, &p)| (p, i)).collect();
    let successors: Vec<Vec<usize>> = positions
        .iter()
        .map(|p| {
            moves(board, p)
                .into_iter()
                .map(|(_, q)| index[&q])
                .collect()
        })
        .collect();
    let mut value = vec![0u8; positions.len()];
    loop {
        let next: Vec<u8> = positions
            .iter()
            .zip(&successors)
            .map(|(p, succ)| {
                let vals = succ.iter().map(|&q| value[q]);
                let trapped = trap.is_none_or(|t| t >> p.black & 1 == 1);
                match p.side {
                    Side::Black if succ.is_empty() && !trapped => 0,
                    Side::Black if vals.clone().any(|v| v == 0) => 0,
                    Side::Black => 1 + vals.max().unwrap_or(0),
                    Side::Brown => vals.filter(|&v| v > 0).min().map_or(0, |m| m + 1),
                }
            })
            .collect();
        if next == value {
            return positions.into_iter().zip(value).collect();
        }
        value = next;
    }
}

struct Finals(HashMap<SliceId, Vec<u8>>);

impl FinalValues for Finals {
    fn value(&self, side: EngineSide, slice: SliceId, index: u64) -> Value {
        // Only black moves leave a stage, so only brown-to-move values are read.
        assert_eq!(side, EngineSide::First);
        Value(self.0[&slice][index as usize])
    }
}

/// Solves with the stage kernel, in memory and out of core (window 0: every array
/// file-backed, every list spilled, pages dropped after each slice), and with the superstep
/// kernel (one slice and one ply at a time, all updates as messages), and compares every raw
/// position with the brute force.
fn compare(board: Board, max_browns: usize) {
    let expected = brute_force(&board, max_browns, None);
    compare_with(board, max_browns, expected);
}

/// [`compare`] on the trap-zone variant of `board` with the zone `trap`.
fn compare_trap(board: Board, max_browns: usize, trap: &str) {
    let mask = board.parse_trap(trap).unwrap();
    let expected = brute_force(&board, max_browns, Some(mask));
    // The variant must differ from the base game somewhere, or the test proves nothing.
    let base = brute_force(&board, max_browns, None);
    assert!(expected.iter().any(|(p, v)| base[p] != *v), "{trap}");
    compare_with(board.with_trap(mask), max_browns, expected);
}

fn compare_with(board: Board, max_browns: usize, expected: HashMap<Position, u8>) {
    let scratch = tempfile::tempdir().unwrap();
    for space in [
        Workspace::in_memory(),
        Workspace::out_of_core(scratch.path().into(), 0),
        // Counter nibbles and a value log instead of value bytes, out of core and in memory.
        Workspace::out_of_core(scratch.path().into(), 0).with_compact_arrays(),
        Workspace::in_memory().with_compact_arrays(),
    ] {
        let solve = |game: &Musashi, stage: &Stage, finals: &Finals| {
            solve_stage(game, stage, finals, &space, |_| {}).unwrap().0
        };
        // Claims pushed, bit-parallel where the model says, and bit-parallel everywhere.
        for mode in [BulkClaims::Off, BulkClaims::Model, BulkClaims::All] {
            let solver = format!("{space:?}, bulk claims {mode:?}");
            compare_in(&board, max_browns, &expected, mode, &solver, &solve);
        }
    }
    let by_steps = |game: &Musashi, stage: &Stage, finals: &Finals| {
        solve_stage_by_steps(game, stage, finals).unwrap()
    };
    let solver = "supersteps";
    compare_in(
        &board,
        max_browns,
        &expected,
        BulkClaims::Model,
        solver,
        &by_steps,
    );
    assert_eq!(
        std::fs::read_dir(scratch.path()).unwrap().count(),
        0,
        "scratch files are unlinked"
    );
}

fn compare_in(
    board: &Board,
    max_browns: usize,
    expected: &HashMap<Position, u8>,
    bulk_claims: BulkClaims,
    solver: &str,
    solve: &dyn Fn(&Musashi, &Stage, &Finals) -> Vec<SolvedSlice>,
) {
    let game = Musashi::new(board.clone(), Some(max_browns)).with_bulk_claims(bulk_claims);
    let mut finals = Finals(HashMap::new());
    let mut tables: HashMap<SliceId, (Vec<u8>, Vec<u8>)> = HashMap::new();
    for stage in game.stages() {
        for s in solve(&game, &stage, &finals) {
            finals.0.insert(s.slice, s.values[0].to_vec());
            tables.insert(s.slice, (s.values[0].to_vec(), s.values[1].to_vec()));
        }
    }
    let mut checked = 0;
    for (pos, &want) in expected {
        let (slice, _, index) = game.locate(pos.black, pos.browns);
        let (brown, black) = &tables[&slice];
        let have = match pos.side {
            Side::Brown => brown[index as usize],
            Side::Black => black[index as usize],
        };
        assert_ne!(
            have,
            Value::NON_CANONICAL.0,
            "{}: canonical slot marked",
            pos.notation(board)
        );
        assert_eq!(
            have,
            want,
            "{} on {} ({solver})",
            pos.notation(board),
            board.name
        );
        checked += 1;
    }
    assert!(checked > 1000, "only {checked} positions");
}

#[test]
fn three_by_three_board_every_position() {
    let text = "name: B9\npoints: 00 01 02 10 11 12 20 21 22\n\
                edges: 00-01 01-02 10-11 11-12 20-21 21-22 00-10 10-20 01-11 11-21 02-12 12-22\n\
                edges: 00-11 11-22 02-11 11-20\n";
    compare(Board::from_text(text).unwrap(), 8);
}

#[test]
fn asymmetric_board_with_long_segments_every_position() {
    // No symmetry at all, two long segments, a triangle: exercises captures across stages.
    let text = "name: ODD\npoints: 00 10 20 30 01 11 21 02 12 22 40\n\
                edges: 00-10 10-20 20-30 30-40 00-01 01-02 10-11 11-12 20-21 21-22 01-11 11-21 02-12 12-22\n\
                edges: 00-11 11-22 20-11 11-02 00-20\n";
    compare(Board::from_text(text).unwrap(), 10);
}

#[test]
fn board25_up_to_four_browns() {
    compare(Board::builtin("BOARD25").unwrap(), 4);
}

#[test]
fn board31_up_to_four_browns() {
    compare(Board::builtin("BOARD31").unwrap(), 4);
}

#[test]
fn trap_zones_every_position() {
    let nine = "name: B9\npoints: 00 01 02 10 11 12 20 21 22\n\
                edges: 00-01 01-02 10-11 11-12 20-21 21-22 00-10 10-20 01-11 11-21 02-12 12-22\n\
                edges: 00-11 11-22 02-11 11-20\n";
    // The centre (all 8 symmetries kept), one corner (2 kept), two points on an edge.
    for trap in ["11", "00", "01,21"] {
        compare_trap(Board::from_text(nine).unwrap(), 8, trap);
    }
    let odd = "name: ODD\npoints: 00 10 20 30 01 11 21 02 12 22 40\n\
                edges: 00-10 10-20 20-30 30-40 00-01 01-02 10-11 11-12 20-21 21-22 01-11 11-21 02-12 12-22\n\
                edges: 00-11 11-22 20-11 11-02 00-20\n";
    compare_trap(Board::from_text(odd).unwrap(), 10, "corners");
}

#[test]
fn board25_trap_zones_up_to_four_browns() {
    compare_trap(Board::builtin("BOARD25").unwrap(), 4, "corners");
    compare_trap(Board::builtin("BOARD25").unwrap(), 4, "00,22");
}
