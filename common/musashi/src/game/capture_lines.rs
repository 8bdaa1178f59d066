//! Which of black's moves capture, for every move from one point at once.
//!
//! A black move to `to` captures each pair of browns that sandwiches `to`
//! ([`crate::rules::captures`]). Asking that target by target walks a list of pairs per target
//! and branches on every one, and the answers are data: the initial sweep mispredicts them.
//! Here the pairs of every target around a black point are laid out flat, eight to a row, so
//! that one pass of compares and ORs, which the compiler turns into vector instructions, gives
//! the set of capturing targets.

use crate::board::Board;

/// The pair tests of one row: a target's bit where the brown mask fills the pair.
const LANES: usize = 8;

/// One row of pair tests. Unused lanes have an empty pair and no target (they always pass and
/// add nothing).
#[derive(Clone, Copy, Default)]
struct Row {
    /// `pairs[i]`: the two points' bits of one sandwiching pair.
    pairs: [u64; LANES],
    /// `targets[i]`: the bit of the target the pair sandwiches.
    targets: [u64; LANES],
}

/// The capture tests of black's moves from every point of a board.
pub(super) struct CaptureLines {
    /// Every point's rows, one point after another.
    rows: Vec<Row>,
    /// `rows_of[b]`: where point `b`'s rows are in `rows`.
    rows_of: Vec<(u32, u32)>,
}

impl CaptureLines {
    /// The tests of every neighbour of every point of `board`.
    pub(super) fn new(board: &Board) -> CaptureLines {
        let mut rows = Vec::new();
        let mut rows_of = Vec::with_capacity(board.len());
        for b in 0..board.len() {
            let tests: Vec<(u64, u64)> = (0..board.len())
                .filter(|&to| board.neighbours[b] >> to & 1 == 1)
                .flat_map(|to| {
                    board.sandwiches[to]
                        .iter()
                        .map(move |&pair| (pair, 1 << to))
                })
                .collect();
            let first = rows.len() as u32;
            for chunk in tests.chunks(LANES) {
                let mut row = Row::default();
                for (i, &(pair, target)) in chunk.iter().enumerate() {
                    row.pairs[i] = pair;
                    row.targets[i] = target;
                }
                rows.push(row);
            }
            rows_of.push((first, rows.len() as u32));
        }
        CaptureLines { rows, rows_of }
    }

    /// The neighbours of `black` to which a move would capture from the browns `browns`: those
    /// with a sandwiching pair all brown. Whether the target itself is free is the caller's to
    /// check.
    #[inline(always)]
    pub(super) fn capturing(&self, black: usize, browns: u64) -> u64 {
        let (first, end) = self.rows_of[black];
        let mut found = 0u64;
        for row in &self.rows[first as usize..end as usize] {
            for i in 0..LANES {
                let full = browns & row.pairs[i] == row.pairs[i];
                found |= row.targets[i] & 0u64.wrapping_sub(u64::from(full));
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::captures;

    /// Every target of every point, on random brown masks of every density, agrees with the
    /// pair-by-pair rule.
    #[test]
    fn capturing_targets_are_those_the_rule_captures_on() {
        for name in ["BOARD25", "BOARD31", "BOARD33"] {
            let board = Board::builtin(name).unwrap();
            let lines = CaptureLines::new(&board);
            let all = board.all_points();
            let mut state = 0x9e37_79b9_7f4a_7c15u64;
            for round in 0..4000 {
                // xorshift: masks of varying density (AND/OR of several draws).
                let mut draw = || {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state
                };
                let mut browns = draw();
                match round % 3 {
                    0 => browns &= draw(),
                    1 => browns |= draw(),
                    _ => {}
                }
                for black in 0..board.len() {
                    let browns = browns & all & !(1u64 << black);
                    let expected = (0..board.len())
                        .filter(|&to| board.neighbours[black] >> to & 1 == 1)
                        .filter(|&to| captures(&board, to, browns) != 0)
                        .fold(0u64, |set, to| set | 1 << to);
                    assert_eq!(
                        lines.capturing(black, browns),
                        expected,
                        "{name} black {black}"
                    );
                }
            }
        }
    }
}
