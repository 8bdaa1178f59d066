//! Markers and mtaji: which holes can capture.
//!
//! A **marker** of the mover is an own front-row hole holding at least one stone whose facing
//! enemy front-row hole holds at least one. A **mtaji** is an own hole with 2 to `2n - 1`
//! stones (the spec's 2 to 15) which, sown one stone per hole in one direction from the next
//! hole on, drops its last stone on a marker. Fewer than a lap of stones pass no hole twice and
//! never return to the lifted hole, so the marker can be read on the board before the sowing.

use crate::board::Board;
use crate::direction::Direction;
use crate::row::MIN_MTAJI;
use retro_engine::Side;

/// Whether `side`'s hole `hole` is a marker on `board`.
#[inline]
pub fn is_marker(board: &Board, side: Side, hole: usize) -> bool {
    let row = board.row();
    row.is_front(hole)
        && board.get(side, hole) >= 1
        && board.get(side.other(), row.facing(hole)) >= 1
}

/// `side`'s markers, in index order.
pub fn markers(board: &Board, side: Side) -> Vec<usize> {
    (0..board.row().len())
        .filter(|&h| is_marker(board, side, h))
        .collect()
}

/// The marker that `side`'s hole `hole`, sown in `direction`, ends on, if it is a mtaji that
/// way.
#[inline]
pub fn mtaji_target(board: &Board, side: Side, hole: usize, direction: Direction) -> Option<usize> {
    let row = board.row();
    let stones = board.get(side, hole);
    if !(MIN_MTAJI..=row.max_mtaji()).contains(&stones) {
        return None;
    }
    let last = row.advance(hole, stones as usize, direction);
    is_marker(board, side, last).then_some(last)
}

/// Every mtaji of `side` with a direction it captures in and the marker it ends on, by hole
/// then direction (clockwise first).
pub fn mtaji(board: &Board, side: Side) -> Vec<(usize, Direction, usize)> {
    let mut out = Vec::new();
    for hole in 0..board.row().ring() {
        for direction in Direction::BOTH {
            if let Some(marker) = mtaji_target(board, side, hole, direction) {
                out.push((hole, direction, marker));
            }
        }
    }
    out
}
