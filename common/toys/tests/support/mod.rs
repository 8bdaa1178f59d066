//! The rules of ring hop restated on raw positions, for the brute-force solvers of the tests:
//! no stages, slices, keys or symmetry, so that they check the game's `Game` impl rather than
//! repeat it.

use retro_engine::Side;

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
