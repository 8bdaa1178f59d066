//! Times one slot's bit-parallel claim work on a large BOARD33 slice, single-threaded: marking a
//! frontier of black's lost positions ([`Game::mark_frontier`]) and the plan's run copies
//! ([`Game::bulk_predecessors`]). The kernel does this per slot in every claim ply of a large
//! stage; a whole stage is too long to time a change to these two functions, this is not.
//!
//! ```text
//! cargo run --release -p retro-musashi --example bulk_claim_bench -- [BROWNS] [SLOT] [MILLIONS] [ROUNDS]
//! ```
//!
//! The frontier is `MILLIONS` million pseudo-random canonical keys of the slice (default: 14
//! browns, slot 0 = black on the centre with the full stabiliser, 20 million keys), in random
//! order as count plies produce them. Prints the plan, then per round the nanoseconds per key
//! of marking and the seconds of the run copies, and a checksum of the predecessor bitmap (so
//! that a faster variant can be checked for the same bits). With `HUGE=1` the bitmaps are
//! allocated as the kernel allocates them (huge-page memory); otherwise as plain vectors.

use retro_engine::{ByteArray, Game, Share, Side};
use retro_musashi::{Board, Musashi};
use std::time::Instant;

fn arg(n: usize, default: u64) -> u64 {
    std::env::args()
        .nth(n)
        .map(|a| a.parse().expect("a whole number"))
        .unwrap_or(default)
}

fn main() {
    let browns = arg(1, 14) as usize;
    let slot = arg(2, 0) as usize;
    let millions = arg(3, 20);
    let rounds = arg(4, 3);
    let game = Musashi::new(
        Board::builtin("BOARD33").expect("a built-in board"),
        Some(browns),
    );
    let slice = game.stages()[browns].slices[slot];
    let len = game.slice_len(slice);
    let (_, black) = game.slice_parts(slice);
    let symmetry = &game.board().symmetry;
    // Pseudo-random canonical keys (xorshift over indices), kept in generation order.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut keys: Vec<u64> = (0..millions * 1_000_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            symmetry.minimise(black, game.key(slice, state % len))
        })
        .collect();
    keys.dedup();
    let plan = game
        .bulk_claim_plan(Side::Second, slice, keys.len() as u64)
        .expect("a large frontier is claimed in bulk");
    println!(
        "{} ({len} slots), {} keys, stabiliser {}, plan {:#x} ({} edges copied)",
        game.slice_name(slice),
        keys.len(),
        symmetry.stabiliser[black].len(),
        plan.0,
        plan.0.count_ones()
    );
    let words = len.div_ceil(64) as usize;
    for round in 0..rounds {
        let huge = std::env::var("HUGE").is_ok();
        let (mut members_huge, mut pre_huge) = (
            ByteArray::zeroed(words * 8 * usize::from(huge)),
            ByteArray::zeroed(words * 8 * usize::from(huge)),
        );
        let (mut members_vec, mut pre_vec) = (
            vec![0u64; words * usize::from(!huge)],
            vec![0u64; words * usize::from(!huge)],
        );
        let (members, pre) = if huge {
            (members_huge.words_mut(), pre_huge.words_mut())
        } else {
            (&mut members_vec[..], &mut pre_vec[..])
        };
        // Touch the pages first: the kernel's bitmaps are zeroed the same way, and page faults
        // are not what this measures.
        members.iter_mut().step_by(512).for_each(|w| *w = 0);
        pre.iter_mut().step_by(512).for_each(|w| *w = 0);
        let clock = Instant::now();
        for chunk in keys.chunks(1 << 12) {
            game.mark_frontier(plan, Side::Second, slice, chunk, members, pre);
        }
        let mark = clock.elapsed();
        let clock = Instant::now();
        let share = Share { index: 0, of: 1 };
        game.bulk_predecessors(plan, Side::Second, slice, members, pre, share);
        let copy = clock.elapsed();
        let checksum = pre
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &w)| acc.rotate_left(5) ^ w ^ i as u64);
        println!(
            "round {round}: mark {:.1} ns/key ({:.2} s), copy {:.2} s, predecessors {}, checksum {checksum:#018x}",
            mark.as_nanos() as f64 / keys.len() as f64,
            mark.as_secs_f64(),
            copy.as_secs_f64(),
            pre.iter().map(|w| u64::from(w.count_ones())).sum::<u64>(),
        );
    }
}
