//! Bit-parallel claim plies: a slot's claims found over whole bitmaps instead of key by key.
//!
//! A claim ply pushes every lost position's un-moves, yet late in a stage nearly all of their
//! targets are won already. A game that knows the block structure of its moves
//! ([`Game::bulk_claim_plan`]) can instead turn the slot's frontier into a bitmap, compute the
//! bitmap of its predecessors with run copies, and claim `predecessors & !final` in one pass
//! over the slot — the same claims, in index order (so the new frontier comes out sorted).

use crate::frontier::{Frontier, SlotLists};
use crate::game::{BulkPlan, Game, Side, Stage};
use crate::kernel::{section_of, touched_union};
use crate::meter::SlotClocks;
use crate::rules::Section;
use rayon::prelude::*;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;

/// Claim words at most this far apart are read in one run of key steps.
const GAP_WORDS: usize = 1;

/// The claims of ply `ply` for `side` (the claimed side) in each slot of `plans`, each by its
/// plan: the frontier of `side.other()` in the slot is marked, its predecessors completed, and
/// every open position among them gets the value `ply + 1`, its final bit, and a place in the
/// new frontier (`sink`). Slots run in parallel (each slot's claims stay in it, so no two tasks
/// share a section). Returns the slots touched.
#[allow(clippy::too_many_arguments)]
pub(crate) fn claim_in_bulk<G: Game>(
    game: &G,
    stage: &Stage,
    side: Side,
    plans: &[(usize, BulkPlan)],
    frontier: &Frontier,
    lens: &[u64],
    sections: &[Section],
    ply: u32,
    sink: &Mutex<Frontier>,
    clocks: &SlotClocks,
) -> Vec<bool> {
    let n = lens.len();
    let lost = side.other();
    let value = (ply + 1) as u8;
    plans
        .par_iter()
        .map(|&(s, plan)| {
            clocks.time(s, || {
                let slice = stage.slices[s];
                let words = lens[s].div_ceil(64) as usize;
                let mut members = vec![0u64; words];
                let mut pre = vec![0u64; words];
                for (_, keys) in frontier.chunks(&[section_of(s as u32, lost)]) {
                    game.mark_frontier(plan, lost, slice, keys, &mut members, &mut pre);
                }
                frontier.release();
                game.bulk_predecessors(plan, lost, slice, &members, &mut pre);
                drop(members);
                let target = &sections[section_of(s as u32, side)];
                // Claim: `pre` becomes the claims (open predecessors), their final bits set.
                for (from, finals) in pre.iter_mut().zip(target.finals) {
                    *from &= !finals.load(Relaxed);
                    if *from != 0 {
                        finals.fetch_or(*from, Relaxed);
                    }
                }
                // Their keys and values: the game steps keys through runs of words with claims
                // (a step is cheaper than an unrank), and unranks afresh after a gap.
                let mut found = Vec::new();
                let mut w = 0;
                while w < words {
                    if pre[w] == 0 {
                        w += 1;
                        continue;
                    }
                    let first = w;
                    let mut last = w;
                    while w < words && w - last <= GAP_WORDS {
                        if pre[w] != 0 {
                            last = w;
                        }
                        w += 1;
                    }
                    let start = first as u64 * 64 + u64::from(pre[first].trailing_zeros());
                    let end = last as u64 * 64 + 64 - u64::from(pre[last].leading_zeros());
                    game.for_each_key(slice, start..end, |index, key| {
                        if pre[(index / 64) as usize] >> (index % 64) & 1 == 1 {
                            target.values[index as usize].store(value, Relaxed);
                            found.push(key);
                        }
                    });
                }
                let mut out = SlotLists::new(2 * n, n);
                out.touch(s as u32);
                out.keys[section_of(s as u32, side)] = found;
                let touched = std::mem::take(&mut out.touched);
                sink.lock().expect("frontier lock").absorb(out);
                touched
            })
        })
        .reduce(|| vec![false; n], touched_union)
}
