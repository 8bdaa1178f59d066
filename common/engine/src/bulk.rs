//! Bit-parallel claim plies: a slot's claims found over whole bitmaps instead of key by key.
//!
//! A claim ply pushes every lost position's un-moves, yet late in a stage nearly all of their
//! targets are won already. A game that knows the block structure of its moves
//! ([`Game::bulk_claim_plan`]) can instead turn the slot's frontier into a bitmap, compute the
//! bitmap of its predecessors with run copies, and claim `predecessors & !final` in one pass
//! over the slot — the same claims, in index order (so the new frontier comes out sorted: one
//! segment per slot, or one per piece of the claim pass, each over its own range of indices,
//! when the slot's work is split between threads).

use crate::atomic::ByteArray;
use crate::frontier::{Frontier, KeyChunk, Sink};
use crate::game::{BulkPlan, Game, Share, Side, SliceId, Stage};
use crate::kernel::section_of;
use crate::meter::SlotClocks;
use crate::rules::Section;
use rayon::prelude::*;
use retro_index::LARGE_BITMAP_WORDS;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;

/// A slot's bitmaps are OR-ed together, and its claim pass split, in this many pieces per
/// share (pieces of a few words on small boards, so the tests' boards split as well).
const PIECES_PER_SHARE: usize = 4;

/// A split slot's run copies are cut into this many shares per thread, taken by the threads as
/// they free up: the cost model that balances the shares ([`Game::bulk_predecessors`]) is an
/// estimate.
const COPY_SHARES_PER_THREAD: usize = 4;

/// The claims of ply `ply` for `side` (the claimed side) in each slot of `plans`, each by its
/// plan: the frontier of `side.other()` in the slot is marked, its predecessors completed, and
/// every open position among them gets the value `ply + 1`, its final bit, and a place in the
/// new frontier (`sink`). Returns the slots touched.
///
/// Each slot's claims stay in it, so slots can run side by side, a thread each — but late in a
/// stage one slot can hold most of a claim ply's frontier, and a thread marked and copied it
/// for seconds while the other idled (profiled on BOARD33 `browns=12`: single-thread stretches
/// of 0.5-3.6 s). A slot whose frontier is more than its share of the ply's (half a thread's
/// part) is therefore split between all the threads, one such slot at a time; the rest run
/// side by side, costliest first. (Splitting every slot balanced the threads but cost more
/// than it saved: two more bitmaps zeroed and OR-ed per slot and extra thread, measured.) Slots
/// whose bitmaps stay in the caches keep the plain way: side by side in plan order.
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
    sink: &Sink,
    clocks: &SlotClocks,
) -> Vec<bool> {
    let n = lens.len();
    let threads = rayon::current_num_threads().max(1);
    let claim_slot = |s: usize, plan: BulkPlan, shares: usize| {
        let slot = BulkSlot {
            game,
            slot: s,
            slice: stage.slices[s],
            lost: side.other(),
            plan,
            words: lens[s].div_ceil(64) as usize,
            shares,
            clocks,
        };
        let pre = slot.predecessors(frontier);
        let list = section_of(s as u32, side);
        slot.claim(pre, &sections[list], (ply + 1) as u8, sink, list);
    };
    let cached = plans
        .iter()
        .any(|&(s, _)| (lens[s].div_ceil(64) as usize) < LARGE_BITMAP_WORDS);
    if cached {
        // Bitmaps that stay in the caches (BOARD25's): a slot costs little, and the ordering
        // and splitting below made BOARD25 1.03x slower (five interleaved rounds). Slots side
        // by side, each split between `threads / slots` threads when there are fewer slots.
        let shares = (threads / plans.len()).max(1);
        plans
            .par_iter()
            .for_each(|&(s, plan)| claim_slot(s, plan, shares));
    } else {
        // A slot's cost, as the number of frontier keys it marks.
        let keys = |s: usize| frontier.len_where(|sec| sec == section_of(s as u32, side.other()));
        let mut costed: Vec<(u64, usize, BulkPlan)> =
            plans.iter().map(|&(s, plan)| (keys(s), s, plan)).collect();
        costed.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let total: u64 = costed.iter().map(|c| c.0).sum();
        let split = |keys: u64| threads > 1 && keys * 2 * threads as u64 > total;
        let (large, small): (Vec<_>, Vec<_>) = costed.into_iter().partition(|c| split(c.0));
        for &(_, s, plan) in &large {
            claim_slot(s, plan, threads);
        }
        small
            .par_iter()
            .with_max_len(1) // one slot per rayon job (see `kernel::pull_ply`)
            .for_each(|&(_, s, plan)| claim_slot(s, plan, 1));
    }
    let mut touched = vec![false; n];
    for &(s, _) in plans {
        touched[s] = true;
    }
    touched
}

/// One slot's bit-parallel claim ply, split into `shares` parallel parts.
struct BulkSlot<'a, G> {
    game: &'a G,
    slot: usize,
    slice: SliceId,
    /// The side whose lost positions are the frontier.
    lost: Side,
    plan: BulkPlan,
    /// Words of a bitmap over the slice's slots.
    words: usize,
    shares: usize,
    clocks: &'a SlotClocks,
}

impl<G: Game> BulkSlot<'_, G> {
    /// The bitmap of the frontier's predecessors in the slot (canonical or not).
    ///
    /// One share: the frontier's chunks are marked into one pair of bitmaps and the plan's
    /// runs copied into it, by the calling task. Several: each thread of the pool marks into a
    /// pair of its own, taking chunks as it frees up, and copies its part of the runs into its
    /// own `pre`; the pairs are then OR-ed. (Chunks and runs were once dealt out in equal
    /// shares, one per thread: a thread whose share cost more, or that the machine slowed,
    /// left the other idle at the end — the bulk claims' 1.88 cores on BOARD33 `browns=13`.)
    fn predecessors(&self, frontier: &Frontier) -> Bitmap {
        let chunks = frontier.chunks(&[section_of(self.slot as u32, self.lost)]);
        let game = self.game;
        let mark = |marks: &mut Marks, keys: &KeyChunk| {
            let keys = keys.keys(&mut marks.buffer);
            game.mark_frontier(
                self.plan,
                self.lost,
                self.slice,
                keys,
                marks.members.words_mut(),
                marks.pre.words_mut(),
            );
        };
        if self.shares == 1 {
            let mut marks = self.marks();
            self.clocks.time(self.slot, || {
                for (_, chunk) in &chunks {
                    mark(&mut marks, chunk);
                }
            });
            frontier.release();
            let Marks {
                members, mut pre, ..
            } = marks;
            self.clocks.time(self.slot, || {
                game.bulk_predecessors(
                    self.plan,
                    self.lost,
                    self.slice,
                    members.words(),
                    pre.words_mut(),
                    Share::WHOLE,
                );
            });
            return pre;
        }
        // A thread's own pair, found by its index in the pool (a task never yields its thread
        // while it marks or copies, so the lock is never contended).
        let per_thread: Vec<Mutex<Option<Marks>>> =
            (0..self.shares).map(|_| Mutex::new(None)).collect();
        let own = || {
            let t = rayon::current_thread_index().unwrap_or(0) % self.shares;
            per_thread[t].lock().expect("a thread's own bitmaps")
        };
        chunks.par_iter().for_each(|(_, chunk)| {
            let mut marks = own();
            let marks = marks.get_or_insert_with(|| self.marks());
            self.clocks.time(self.slot, || mark(marks, chunk));
        });
        frontier.release();
        let mut marked: Vec<Marks> = per_thread
            .into_iter()
            .filter_map(|m| m.into_inner().expect("a thread's own bitmaps"))
            .collect();
        // Every thread copies runs, marked or not.
        marked.resize_with(self.shares, || self.marks());
        let (mut members, pres): (Vec<Bitmap>, Vec<Bitmap>) =
            marked.into_iter().map(|m| (m.members, m.pre)).unzip();
        let mut all = members.swap_remove(0);
        self.or_into(all.words_mut(), &members);
        drop(members);
        let per_thread: Vec<Mutex<Bitmap>> = pres.into_iter().map(Mutex::new).collect();
        let of = self.shares * COPY_SHARES_PER_THREAD;
        (0..of).into_par_iter().with_max_len(1).for_each(|index| {
            let t = rayon::current_thread_index().unwrap_or(0) % self.shares;
            let mut pre = per_thread[t].lock().expect("a thread's own bitmap");
            self.clocks.time(self.slot, || {
                game.bulk_predecessors(
                    self.plan,
                    self.lost,
                    self.slice,
                    all.words(),
                    pre.words_mut(),
                    Share { index, of },
                );
            });
        });
        drop(all);
        let mut pres: Vec<Bitmap> = per_thread
            .into_iter()
            .map(|m| m.into_inner().expect("a thread's own bitmap"))
            .collect();
        let mut pre = pres.swap_remove(0);
        self.or_into(pre.words_mut(), &pres);
        pre
    }

    /// A zeroed pair of bitmaps for marking, and a buffer for widening keys.
    fn marks(&self) -> Marks {
        Marks {
            members: self.bitmap(),
            pre: self.bitmap(),
            buffer: Vec::new(),
        }
    }

    /// A zeroed bitmap over the slot.
    fn bitmap(&self) -> Bitmap {
        Bitmap::zeroed(self.words)
    }

    /// The words of a piece of the slot's bitmaps (see [`PIECES_PER_SHARE`]).
    fn piece_words(&self) -> usize {
        self.words.div_ceil(PIECES_PER_SHARE * self.shares).max(1)
    }

    /// `into |= every bitmap of from`, in pieces in parallel.
    fn or_into(&self, into: &mut [u64], from: &[Bitmap]) {
        if from.is_empty() {
            return;
        }
        let piece = self.piece_words();
        into.par_chunks_mut(piece)
            .enumerate()
            .for_each(|(p, words)| {
                self.clocks.time(self.slot, || {
                    for other in from {
                        let other = &other.words()[p * piece..];
                        for (word, &add) in words.iter_mut().zip(other) {
                            *word |= add;
                        }
                    }
                });
            });
    }

    /// Claims the open positions of `pre` in `target` (the claimed side's section): their
    /// final bits and `value`; their keys go to list `list` of `sink`, in index order within
    /// each piece. Pieces of the slot run in parallel when the slot's work is shared, and each
    /// hands its own keys over: the pieces' keys are never gathered by one thread (a copy of
    /// the slot's claims, and out of core their encoding for the scratch file, while the
    /// other threads idled).
    fn claim(&self, mut pre: Bitmap, target: &Section, value: u8, sink: &Sink, list: usize) {
        let piece = if self.shares == 1 {
            self.words.max(1)
        } else {
            self.piece_words()
        };
        pre.words_mut()
            .par_chunks_mut(piece)
            .with_max_len(1) // one piece per rayon job: claims cluster (see `kernel::pull_ply`)
            .enumerate()
            .for_each(|(p, pre)| {
                self.clocks.time(self.slot, || {
                    let found = self.claim_piece(p * piece, pre, target, value);
                    sink.push(list, found);
                })
            });
    }

    /// [`BulkSlot::claim`] for the words of `pre`, the slot's from word `first` on.
    fn claim_piece(&self, first: usize, pre: &mut [u64], target: &Section, value: u8) -> Vec<u64> {
        // `pre` becomes the claims (open predecessors), their final bits set.
        let mut claims = 0;
        for (from, finals) in pre.iter_mut().zip(&target.finals[first..]) {
            *from &= !finals.load(Relaxed);
            if *from != 0 {
                finals.fetch_or(*from, Relaxed);
                claims += from.count_ones() as usize;
            }
        }
        // Their keys (in index order, found by the game from the bitmap) and values, into a
        // list of the right size from the start (grown by doubling, its copies and fresh
        // pages were 1.5% of BOARD25's samples).
        let mut found = Vec::with_capacity(claims);
        let game = self.game;
        game.for_each_marked_key(self.slice, first as u64 * 64, pre, |index, key| {
            target.store_value(index as usize, value);
            found.push(key);
        });
        found
    }
}

/// What one thread marks a frontier into: the frontier's members, their low un-moves (the
/// start of the predecessors), and a buffer for widening narrowed keys.
struct Marks {
    members: Bitmap,
    pre: Bitmap,
    buffer: Vec<u64>,
}

/// A bitmap over a slot's slots, owned by one task at a time.
enum Bitmap {
    /// Below [`LARGE_BITMAP_WORDS`]: on the heap, which reuses the memory of the bitmaps freed
    /// before (a fresh map would fault in and zero new pages every ply).
    Heap(Vec<u64>),
    /// Large: in huge pages where the system has them — a frontier's bits land all over it,
    /// and with small pages nearly every one would miss the TLB too.
    Mapped(ByteArray),
}

impl Bitmap {
    /// `words` zero words.
    fn zeroed(words: usize) -> Bitmap {
        if words >= LARGE_BITMAP_WORDS {
            Bitmap::Mapped(ByteArray::zeroed(words * 8))
        } else {
            Bitmap::Heap(vec![0; words])
        }
    }

    fn words(&self) -> &[u64] {
        match self {
            Bitmap::Heap(words) => words,
            Bitmap::Mapped(bytes) => bytes.words(),
        }
    }

    fn words_mut(&mut self) -> &mut [u64] {
        match self {
            Bitmap::Heap(words) => words,
            Bitmap::Mapped(bytes) => bytes.words_mut(),
        }
    }
}
