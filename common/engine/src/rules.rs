//! What the solver does to one position, and to one slice's sweep: the one implementation of
//! the propagation rules, driven by the stage kernel ([`crate::kernel`], in memory or out of
//! core) and by the superstep kernel ([`crate::superstep`], one slice and ply per task), so
//! that the drivers can never disagree.
//!
//! Values are propagated in increasing order, one *ply* per value: at ply `p` the positions of
//! value `p` are final and are expanded into their predecessors (which have the other side to
//! move):
//!
//! * **odd `p`** (the side to move has lost): every predecessor is a win of value `p + 1`,
//!   unless it already has a value (a faster win). This is a [`claim`].
//! * **even `p`** (the side to move has won): every distinct predecessor loses one way out. Each
//!   position that can lose keeps a *counter* of its successor orbits not yet known to be
//!   wins for the opponent; when it reaches zero the position is lost with value `p + 1` (the
//!   slowest loss is the last successor to resolve). This is a [`decrement`].
//!
//! **Exits.** A move into an earlier stage (a capture) reaches a final value, possibly larger
//! than any value reached so far in this stage. Such moves are *scheduled*: an exit to an
//! opponent's loss of value `v` claims the position at ply `v`; all exits to opponent wins
//! together count as one more successor, decremented at the ply of the largest; an exit to a
//! draw (or to a loss) means the position cannot lose, so it keeps no counter. This gives
//! exactly the recurrence of [`crate::recurrence`] without re-scanning any position.
//!
//! A position's byte holds its counter until it is final, then its value; a bit per position
//! (the *final* bit) says which. One byte serves both because a counter is decremented exactly
//! once per successor orbit, so nothing decrements it after it reaches zero, and a claimed
//! position's decrements are refused by its final bit. Positions never made final are draws.
//!
//! **Compact arrays** ([`Section::compact`]): a stage too large for its bytes keeps only the
//! counters, two to a byte (a nibble each; none for a side that keeps no counters), and the
//! final bits. No ply reads a final position's value (a pull asks "resolved in the last ply?",
//! which the frontier answers), so the values are not stored at all: each ply's frontier *is*
//! the list of positions with that ply's value, and the stage's value log
//! ([`crate::value_log`]) keeps it for the tables built at the stage's end.

use crate::distinct::Distinct;
use crate::frontier::spare_vector;
use crate::game::{Game, Move, Side, SliceId, Stage};
use crate::kernel::FinalValues;
use crate::value::Value;
use std::cell::Cell;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};

/// The side a const generic parameter names: the hot loops are compiled once per side, so that
/// a game's `match side` in its move generators folds away (a runtime side would leave both
/// generators in the loop and the kernel's closures out of line).
#[inline(always)]
pub(crate) const fn side_of(first: bool) -> Side {
    if first {
        Side::First
    } else {
        Side::Second
    }
}

/// The slot of every slice id in `stage` (`u32::MAX` for slices outside it): how both drivers
/// turn a move's slice into a place in the stage's arrays.
pub(crate) fn slots_of<G: Game>(game: &G, stage: &Stage) -> Vec<u32> {
    let mut slot_of = vec![u32::MAX; game.slice_count()];
    for (slot, slice) in stage.slices.iter().enumerate() {
        slot_of[slice.0 as usize] = slot as u32;
    }
    slot_of
}

/// What the kernel must do for each side, derived once from [`Game::can_win`] and
/// [`Game::leaves_stage`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct SideRoles {
    /// Positions of this side can be claimed as wins (the side can win).
    pub(crate) claimable: [bool; 2],
    /// Positions of this side keep loss counters (the opponent can win).
    pub(crate) counted: [bool; 2],
    /// Positions of this side are classified in the initial sweep (counted, or with exits).
    pub(crate) swept: [bool; 2],
}

impl SideRoles {
    pub(crate) fn of<G: Game>(game: &G) -> SideRoles {
        let claimable = Side::BOTH.map(|s| game.can_win(s));
        let counted = Side::BOTH.map(|s| game.can_win(s.other()));
        let swept = Side::BOTH.map(|s| counted[s.index()] || game.leaves_stage(s));
        SideRoles {
            claimable,
            counted,
            swept,
        }
    }
}

/// The counter byte of a position with more open successors than a byte counts (at least
/// 255): its counter is in its section's overflow table. Never a value of a position that can
/// still be decremented (values stay below [`Value::NON_CANONICAL`], which is never sent a
/// decrement).
pub(crate) const OVERFLOW: u8 = 0xFF;

/// The counter of a position whose successors a byte cannot count (see [`OVERFLOW`]).
pub(crate) struct OverflowCounter {
    /// The position's index in its slice.
    pub(crate) index: u64,
    /// Successor orbits not yet known to be wins for the opponent.
    pub(crate) remaining: AtomicU32,
}

/// The overflow table of one section from the `(index, counter)` pairs its sweeps found.
pub(crate) fn overflow_table(mut found: Vec<(u64, u32)>) -> Vec<OverflowCounter> {
    found.sort_unstable();
    found
        .into_iter()
        .map(|(index, counter)| OverflowCounter {
            index,
            remaining: AtomicU32::new(counter),
        })
        .collect()
}

/// The counter nibble of a position whose successors a nibble cannot count, in compact
/// arrays (see [`OVERFLOW`]).
pub(crate) const NIBBLE_OVERFLOW: u8 = 0xF;

/// One side's arrays of one slice, as the atomics the rules update.
#[derive(Clone, Copy)]
pub(crate) struct Section<'a> {
    /// Counters, then values; in compact arrays the counters only, a nibble each (the low
    /// nibble of byte `i / 2` for even `i`), and empty for a side that keeps no counters.
    pub(crate) values: &'a [AtomicU8],
    /// Final bits.
    pub(crate) finals: &'a [AtomicU64],
    /// Whether positions of this side can be claimed, so that a decrement must first check the
    /// final bit (a side that is never claimed skips that load).
    pub(crate) claimable: bool,
    /// Whether the arrays are compact: nibble counters, no values (they go to the stage's
    /// value log with the frontiers).
    pub(crate) compact: bool,
    /// The counters of the positions whose counter is [`Section::overflow_mark`], by index.
    pub(crate) overflow: &'a [OverflowCounter],
}

impl Section<'_> {
    /// Asks the cache for position `i`'s counter, which a decrement will read a little later.
    #[inline(always)]
    pub(crate) fn prefetch_counter(&self, i: usize) {
        let byte = if self.compact { i / 2 } else { i };
        if let Some(cell) = self.values.get(byte) {
            retro_index::prefetch(cell);
        }
    }

    /// Whether position `i`'s byte holds its value.
    #[inline]
    pub(crate) fn is_final(&self, i: usize) -> bool {
        self.finals[i / 64].load(Relaxed) & (1 << (i % 64)) != 0
    }

    #[inline]
    fn set_final(&self, i: usize) {
        self.finals[i / 64].fetch_or(1 << (i % 64), Relaxed);
    }

    /// Stores the value of position `i`, which has just become final. Compact arrays keep no
    /// values: the position is in the frontier the ply builds, which the value log keeps.
    #[inline(always)]
    pub(crate) fn store_value(&self, i: usize, value: u8) {
        if !self.compact {
            self.values[i].store(value, Relaxed);
        }
    }

    /// The counter mark of a position whose counter is in the overflow table.
    #[inline(always)]
    fn overflow_mark(&self) -> u8 {
        if self.compact {
            NIBBLE_OVERFLOW
        } else {
            OVERFLOW
        }
    }

    /// The shift of position `i`'s nibble in its byte (compact arrays).
    #[inline(always)]
    fn nibble_shift(i: usize) -> u32 {
        4 * (i as u32 & 1)
    }

    /// The counter of the open position `i` (0: it cannot lose).
    #[inline(always)]
    pub(crate) fn counter(&self, i: usize) -> u8 {
        if self.compact {
            self.values[i / 2].load(Relaxed) >> Self::nibble_shift(i) & 0xF
        } else {
            self.values[i].load(Relaxed)
        }
    }

    /// Sets the counter of position `i` in the initial sweep, which alone writes the counters
    /// of its range (ranges are whole bytes: even-aligned), so a plain read-modify-write of the
    /// shared byte is safe. Counters too large go to the overflow table: `seeds` gets them.
    #[inline(always)]
    fn init_counter(&self, i: usize, counter: u32, overflow: &mut Vec<(u64, u32)>) {
        let mark = self.overflow_mark();
        let stored = if counter < u32::from(mark) {
            counter as u8
        } else {
            // Too many successors: the counter lives in the section's overflow table (built
            // from these seeds before the first ply).
            overflow.push((i as u64, counter));
            mark
        };
        if self.compact {
            let cell = &self.values[i / 2];
            cell.store(
                cell.load(Relaxed) | stored << Self::nibble_shift(i),
                Relaxed,
            );
        } else {
            self.values[i].store(stored, Relaxed);
        }
    }

    /// Takes `by` off the overflow counter of position `i`; true if that leaves none.
    #[cold]
    pub(crate) fn take_overflow(&self, i: usize, by: u32) -> bool {
        let at = self
            .overflow
            .binary_search_by_key(&(i as u64), |c| c.index)
            .expect("a position marked OVERFLOW has an overflow counter");
        let before = self.overflow[at]
            .remaining
            .fetch_update(Relaxed, Relaxed, |r| Some(r.saturating_sub(by)))
            .expect("the update always succeeds");
        before > 0 && before <= by
    }
}

/// Sets bit `i` of `bits`; true if this call set it (the caller owns the position now). Most
/// bits are already set late in a stage: the plain load answers those from cache.
#[inline]
pub(crate) fn claim(bits: &[AtomicU64], i: usize) -> bool {
    let word = &bits[i / 64];
    let bit = 1u64 << (i % 64);
    word.load(Relaxed) & bit == 0 && word.fetch_or(bit, Relaxed) & bit == 0
}

/// Decrements the counter of position `i`; when it reaches zero the position is final with
/// value `value` and true is returned. A zero byte (no counter: the position cannot lose) and
/// a final position are left alone.
///
/// In compact arrays the counter is a nibble: `fetch_sub` of `1 << shift` on its byte is
/// still one atomic step, and never borrows from the other nibble (a counter of `c` receives
/// exactly `c` decrements, the last of which makes the position final).
///
/// Inlined into every push loop (a call per decrement, with its register saves, was 2% of
/// BOARD25's instructions).
#[inline(always)]
pub(crate) fn decrement(section: &Section, i: usize, value: u8) -> bool {
    if section.claimable && section.is_final(i) {
        return false;
    }
    let counter = section.counter(i);
    if counter == 0 {
        return false;
    }
    if counter == section.overflow_mark() {
        if section.is_final(i) || !section.take_overflow(i, 1) {
            return false;
        }
        section.set_final(i);
        section.store_value(i, value);
        return true;
    }
    let last = if section.compact {
        let shift = Section::nibble_shift(i);
        section.values[i / 2].fetch_sub(1 << shift, Relaxed) >> shift & 0xF == 1
    } else {
        section.values[i].fetch_sub(1, Relaxed) == 1
    };
    if last {
        section.set_final(i);
        section.store_value(i, value);
    }
    last
}

/// Applies to position `i` of `section` what ply `ply` sends it: a claim (odd ply) or a
/// decrement (even ply). True if the position became final with value `ply + 1`.
#[inline(always)]
pub(crate) fn apply(section: &Section, i: usize, ply: u32) -> bool {
    let value = (ply + 1) as u8;
    if ply % 2 == 1 {
        if claim(section.finals, i) {
            section.store_value(i, value);
            return true;
        }
        false
    } else {
        decrement(section, i, value)
    }
}

/// Calls `visit(slot, key, index)` for each position that a ply sends something to from the
/// position `(side, slice, key)` of the ply's value: its predecessors in the stage (with the
/// other side to move), each once when the ply decrements (`CLAIM` false). `slot_of` maps
/// slice ids to slots (`u32::MAX` outside the stage); `scratch` is reused between calls.
#[inline(always)]
fn for_each_target<G: Game, const FIRST: bool, const CLAIM: bool>(
    game: &G,
    slot_of: &[u32],
    slice: SliceId,
    key: u64,
    scratch: &mut Distinct<(u32, u64, u64)>,
    visit: &mut impl FnMut(u32, u64, u64),
) {
    let side = side_of(FIRST);
    if CLAIM {
        // A claim is idempotent: duplicates cost a bitmap load, not a wrong result.
        game.unmoves(side, slice, key, |to, to_key, i| {
            visit(slot_of[to.0 as usize], to_key, i)
        });
        return;
    }
    scratch.clear();
    game.unmoves(side, slice, key, |to, to_key, i| {
        scratch.insert((slot_of[to.0 as usize], to_key, i))
    });
    for &(t, k, i) in scratch.items() {
        visit(t, k, i);
    }
}

/// [`for_each_target`] for every key of `keys`, all of side `side` and of value `ply`. The side
/// and the ply's kind (claim or decrement) are dispatched once, here, so that each of the four
/// loops is compiled with its own game generator and `visit` inlined into it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn for_each_target_of<G: Game>(
    game: &G,
    slot_of: &[u32],
    ply: u32,
    side: Side,
    slice: SliceId,
    keys: &[u64],
    scratch: &mut Distinct<(u32, u64, u64)>,
    mut visit: impl FnMut(u32, u64, u64),
) {
    #[inline(always)]
    fn each<G: Game, const FIRST: bool, const CLAIM: bool>(
        game: &G,
        slot_of: &[u32],
        slice: SliceId,
        keys: &[u64],
        scratch: &mut Distinct<(u32, u64, u64)>,
        visit: &mut impl FnMut(u32, u64, u64),
    ) {
        if !CLAIM
            && game.distinct_unmoves_of_all(side_of(FIRST), slice, keys, |to, to_key, i| {
                visit(slot_of[to.0 as usize], to_key, i)
            })
        {
            return;
        }
        for &key in keys {
            for_each_target::<G, FIRST, CLAIM>(game, slot_of, slice, key, scratch, visit);
        }
    }
    match (side, ply % 2 == 1) {
        (Side::First, true) => {
            each::<G, true, true>(game, slot_of, slice, keys, scratch, &mut visit)
        }
        (Side::First, false) => {
            each::<G, true, false>(game, slot_of, slice, keys, scratch, &mut visit)
        }
        (Side::Second, true) => {
            each::<G, false, true>(game, slot_of, slice, keys, scratch, &mut visit)
        }
        (Side::Second, false) => {
            each::<G, false, false>(game, slot_of, slice, keys, scratch, &mut visit)
        }
    }
}

/// Whether some move of `side` from `(slice, key)` (slot `index` of its slice) stays in the
/// stage and reaches a position `(to, to_index)` satisfying `check` (stops at the first): how a
/// pull ply asks "does a successor have the value of this ply?". The side is dispatched once
/// here, so that each side's generator is compiled with `check` inlined into it.
#[inline]
pub(crate) fn any_move<G: Game>(
    game: &G,
    side: Side,
    slice: SliceId,
    key: u64,
    index: u64,
    check: &mut impl FnMut(SliceId, u64) -> bool,
) -> bool {
    #[inline(always)]
    fn any<G: Game, const FIRST: bool>(
        game: &G,
        slice: SliceId,
        key: u64,
        index: u64,
        check: &mut impl FnMut(SliceId, u64) -> bool,
    ) -> bool {
        game.any_move_reaching(side_of(FIRST), slice, key, index, |to, to_index| {
            check(to, to_index)
        })
    }
    match side {
        Side::First => any::<G, true>(game, slice, key, index, check),
        Side::Second => any::<G, false>(game, slice, key, index, check),
    }
}

/// How many distinct moves of `side` from `(slice, key)` stay in the stage and satisfy
/// `check(slice, key)`: how a pull ply of a game without un-moves asks "how many successors
/// got the value of this ply?" (each is one decrement).
#[inline]
pub(crate) fn count_moves<G: Game>(
    game: &G,
    side: Side,
    slice: SliceId,
    key: u64,
    check: &mut impl FnMut(SliceId, u64) -> bool,
) -> u32 {
    let mut seen: Distinct<(SliceId, u64)> = Distinct::new();
    game.moves(side, slice, key, |mv| {
        if let Move::InStage(to, to_key) = mv {
            seen.insert((to, to_key));
        }
    });
    seen.items()
        .iter()
        .filter(|&&(to, to_key)| check(to, to_key))
        .count() as u32
}

/// A position before the first ply, from its moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Start {
    /// Any move at all.
    moves: bool,
    /// Successor orbits to wait for (distinct in-stage successors, plus one for the exits to
    /// opponent wins); 0 when the position cannot lose.
    counter: u32,
    /// The ply of the exit decrement: the largest exit to an opponent win.
    exit_win: Option<u8>,
    /// The ply of the exit claim: the smallest exit to an opponent loss.
    exit_loss: Option<u8>,
}

impl Start {
    /// Records a move whose result has the final value `v` (for the opponent): false if `v`
    /// is the non-canonical marker.
    #[inline(always)]
    fn exit(&mut self, v: u8, cannot_lose: &mut bool) -> bool {
        match v {
            0 => *cannot_lose = true,
            0xFF => return false,
            v if v % 2 == 1 => {
                *cannot_lose = true;
                self.exit_loss = Some(self.exit_loss.map_or(v, |m| m.min(v)));
            }
            v => self.exit_win = Some(self.exit_win.map_or(v, |m| m.max(v))),
        }
        true
    }
}

/// A contract violation met while classifying a position, described only after the move loop
/// (so that the per-move closure stays small enough to inline into the game's generator).
#[derive(Clone, Copy, Debug)]
enum Problem {
    /// A move marked in-stage leads to a slice outside the stage.
    LeavesStage(SliceId),
    /// A move into an earlier stage reads the non-canonical marker.
    NonCanonicalFinal(SliceId),
    /// A known result is the non-canonical marker.
    NonCanonicalKnown,
}

impl Problem {
    #[cold]
    fn describe(self) -> String {
        match self {
            Problem::LeavesStage(to) => format!("a move to {to:?} leaves the stage"),
            Problem::NonCanonicalFinal(to) => {
                format!("a move to {to:?} reaches a non-canonical slot")
            }
            Problem::NonCanonicalKnown => "a move's known value is the non-canonical marker".into(),
        }
    }
}

/// What classifying one position has gathered from its moves so far.
struct Classifying<'a, G, F> {
    game: &'a G,
    slot_of: &'a [u32],
    finals: &'a F,
    /// The side to move.
    side: Side,
    start: Start,
    cannot_lose: bool,
    problem: Option<Problem>,
    /// The distinct in-stage successors listed, as (slot, key).
    successors: &'a mut Distinct<(u32, u64)>,
}

impl<G: Game, F: FinalValues> Classifying<'_, G, F> {
    /// Takes one move into account. Inlined into the game's generator: one call per move of
    /// every position of the stage.
    #[inline(always)]
    fn visit(&mut self, mv: Move) {
        self.start.moves = true;
        match mv {
            Move::InStage(to, to_key) => {
                let to_slot = self.slot_of[to.0 as usize];
                if to_slot == u32::MAX {
                    self.problem = Some(Problem::LeavesStage(to));
                } else {
                    self.successors.insert((to_slot, to_key));
                }
            }
            Move::Final(to, to_key) => {
                let index = self.game.index(to, to_key);
                let v = self.finals.value(self.side.other(), to, index).0;
                if !self.start.exit(v, &mut self.cannot_lose) {
                    self.problem = Some(Problem::NonCanonicalFinal(to));
                }
            }
            Move::Known(v) => {
                if !self.start.exit(v.0, &mut self.cannot_lose) {
                    self.problem = Some(Problem::NonCanonicalKnown);
                }
            }
        }
    }
}

/// Classifies the canonical position `(side, slice, key)`. Fails with a description when the
/// game breaks a contract of [`Game`].
#[inline(always)]
fn start<G: Game, F: FinalValues, const FIRST: bool>(
    game: &G,
    slot_of: &[u32],
    finals: &F,
    slice: SliceId,
    key: u64,
    scratch: &mut Distinct<(u32, u64)>,
) -> Result<Start, String> {
    let side = side_of(FIRST);
    scratch.clear();
    let mut c = Classifying {
        game,
        slot_of,
        finals,
        side,
        start: Start::default(),
        cannot_lose: false,
        problem: None,
        successors: scratch,
    };
    // The game counts the distinct in-stage successors when it can; else they are listed.
    let counted = game.counted_moves(
        side,
        slice,
        key,
        #[inline(always)]
        |mv| c.visit(mv),
    );
    if counted.is_none() {
        game.moves(
            side,
            slice,
            key,
            #[inline(always)]
            |mv| c.visit(mv),
        );
    }
    let mut s = c.start;
    let in_stage = match counted {
        Some(distinct) => {
            s.moves |= distinct > 0;
            // A counting game visits exits only; an in-stage move would be counted twice.
            debug_assert!(
                c.successors.items().is_empty(),
                "counted_moves listed a successor"
            );
            distinct as usize
        }
        None => c.successors.items().len(),
    };
    if let Some(what) = c.problem {
        return Err(what.describe());
    }
    if !c.cannot_lose {
        s.counter = (in_stage + usize::from(s.exit_win.is_some())) as u32;
    }
    Ok(s)
}

/// What the first sweep over some positions of one slice found.
#[derive(Debug)]
pub(crate) struct Seeds {
    /// Canonical positions swept.
    pub(crate) canonical: u64,
    /// Per side, the positions lost already (no move): the frontier of ply 1.
    pub(crate) lost: [Vec<u64>; 2],
    /// Scheduled exits by (ply, side): a claim on an odd ply, a decrement on an even one, in
    /// the order their plies were first met.
    pub(crate) exits: Vec<((u8, Side), Vec<u64>)>,
    /// `exit_at[side][ply]`: where `(ply, side)`'s keys are in `exits`, plus one (0: none
    /// yet). A direct table: searching `exits` was 5% of a large sweep.
    exit_at: [[u16; 256]; 2],
    /// Per side, the positions whose counter does not fit the byte, as (index, counter).
    pub(crate) overflow: [Vec<(u64, u32)>; 2],
    /// The first contract violation met.
    pub(crate) error: Option<String>,
    /// `room[side][ply]`: the keys to make room for in a new exit list (see [`EXIT_ROOM`]).
    room: [[u32; 256]; 2],
    /// Whether the exit lists go to lists that spill (their keys are copied to a scratch
    /// file and the vectors used again), or are kept as they are (then without spare room).
    spills: bool,
}

thread_local! {
    /// The length each exit list (by side and ply) reached in this thread's last sweep: the
    /// next sweep's list of that kind starts with that much room and a quarter more. A sweep
    /// covers a run of one slice, and the next run of the slice schedules about as many exits;
    /// grown by doubling from nothing, the lists' copies and reallocations were 1.8% of
    /// BOARD25's samples.
    static EXIT_ROOM: Cell<[[u32; 256]; 2]> = const { Cell::new([[0; 256]; 2]) };
}

impl Default for Seeds {
    /// Empty seeds whose exit lists are kept as they are ([`Seeds::for_lists`]).
    fn default() -> Seeds {
        Seeds::for_lists(false)
    }
}

impl Seeds {
    /// Empty seeds, their exit lists to be sized by this thread's last sweep, for lists that
    /// spill or not.
    pub(crate) fn for_lists(spills: bool) -> Seeds {
        Seeds {
            canonical: 0,
            lost: Default::default(),
            exits: Vec::new(),
            exit_at: [[0; 256]; 2],
            overflow: Default::default(),
            error: None,
            room: EXIT_ROOM.get(),
            spills,
        }
    }

    /// Schedules an exit of `(side, key)` at ply `ply`.
    #[inline]
    fn schedule(&mut self, ply: u8, side: Side, key: u64) {
        let at = &mut self.exit_at[side.index()][ply as usize];
        if *at == 0 {
            let room = self.room[side.index()][ply as usize] as usize;
            let keys = spare_vector(room + room / 4);
            self.exits.push(((ply, side), keys));
            *at = self.exits.len() as u16;
        }
        self.exits[*at as usize - 1].1.push(key);
    }

    /// Ends a sweep: each exit list's length is noted for the thread's next sweep
    /// ([`EXIT_ROOM`]), and its spare room handed back where the list is kept as it is.
    fn close(&mut self) {
        let mut room = [[0u32; 256]; 2];
        for ((ply, side), keys) in &mut self.exits {
            room[side.index()][*ply as usize] = u32::try_from(keys.len()).unwrap_or(u32::MAX);
            if !self.spills {
                keys.shrink_to_fit();
            }
        }
        EXIT_ROOM.set(room);
    }
}

/// What every sweep of a stage shares: the game, the sides' roles, the slot of each slice and
/// the final values of earlier stages.
pub(crate) struct Sweep<'a, G, F> {
    pub(crate) game: &'a G,
    pub(crate) roles: SideRoles,
    pub(crate) slot_of: &'a [u32],
    pub(crate) finals: &'a F,
}

impl<G: Game, F: FinalValues> Sweep<'_, G, F> {
    /// Initialises the positions at `range` of `slice` in its two `sections`: non-canonical
    /// slots get [`Value::NON_CANONICAL`] and both final bits; canonical ones their counters,
    /// their loss if they have no move, and their scheduled exits (into `seeds`).
    pub(crate) fn sweep(
        &self,
        slice: SliceId,
        range: Range<u64>,
        sections: [Section; 2],
        seeds: &mut Seeds,
    ) {
        let game = self.game;
        let roles = self.roles;
        let mut scratch: Distinct<(u32, u64)> = Distinct::new();
        let mut finals = SweptFinals::default();
        // Inlined into the game's key loop: one call per slot of the stage was measurable.
        game.for_each_key(
            slice,
            range,
            #[inline(always)]
            |index, key| {
                let i = index as usize;
                finals.reach(i, &sections);
                if !game.is_canonical(slice, key) {
                    for section in sections {
                        section.store_value(i, Value::NON_CANONICAL.0);
                    }
                    // Final, so that no pull ever visits it and no decrement touches it.
                    finals.set_both(i);
                    return;
                }
                seeds.canonical += 1;
                if roles.swept[0]
                    && self.classify::<true>(slice, key, i, sections[0], &mut scratch, seeds)
                {
                    finals.set(Side::First, i);
                }
                if roles.swept[1]
                    && self.classify::<false>(slice, key, i, sections[1], &mut scratch, seeds)
                {
                    finals.set(Side::Second, i);
                }
            },
        );
        finals.flush(&sections);
        seeds.close();
    }

    /// Classifies the canonical position at index `i` of `slice` (key `key`) with the side
    /// `FIRST` names to move, in that side's `section`. True if the position is final already
    /// (lost: no move), for the caller to set its final bit.
    #[inline(always)]
    fn classify<const FIRST: bool>(
        &self,
        slice: SliceId,
        key: u64,
        i: usize,
        section: Section,
        scratch: &mut Distinct<(u32, u64)>,
        seeds: &mut Seeds,
    ) -> bool {
        let side = side_of(FIRST);
        let s =
            match start::<G, F, FIRST>(self.game, self.slot_of, self.finals, slice, key, scratch) {
                Ok(s) => s,
                Err(what) => {
                    seeds.error = Some(what);
                    return false;
                }
            };
        let counted = self.roles.counted[side.index()];
        if !s.moves {
            if counted {
                section.store_value(i, Value::LOST_NOW.0);
                seeds.lost[side.index()].push(key);
                return true;
            }
            return false;
        }
        if let Some(v) = s.exit_loss {
            seeds.schedule(v, side, key);
        }
        if counted && s.counter > 0 {
            section.init_counter(i, s.counter, &mut seeds.overflow[side.index()]);
            if let Some(v) = s.exit_win {
                seeds.schedule(v, side, key);
            }
        }
        false
    }
}

/// The final bits one sweep sets, gathered a bitmap word at a time: a sweep visits its indices
/// in increasing order, so each word gets one atomic OR per side instead of one per position
/// (the locked OR per non-canonical slot was a sixth of the sweep's time on BOARD25). A word a
/// sweep shares with another sweep (a range not aligned to 64) is still correct: the OR is
/// atomic.
#[derive(Default)]
struct SweptFinals {
    /// The bitmap word gathered.
    word: usize,
    /// Its bits set so far, per side.
    bits: [u64; 2],
}

impl SweptFinals {
    /// Moves to the word of index `i`, writing the bits of the word before.
    #[inline(always)]
    fn reach(&mut self, i: usize, sections: &[Section; 2]) {
        if i / 64 != self.word {
            self.flush(sections);
            self.word = i / 64;
        }
    }

    #[inline(always)]
    fn set(&mut self, side: Side, i: usize) {
        self.bits[side.index()] |= 1 << (i % 64);
    }

    #[inline(always)]
    fn set_both(&mut self, i: usize) {
        self.bits[0] |= 1 << (i % 64);
        self.bits[1] |= 1 << (i % 64);
    }

    /// Writes the gathered bits.
    fn flush(&mut self, sections: &[Section; 2]) {
        for (bits, section) in self.bits.iter_mut().zip(sections) {
            if *bits != 0 {
                section.finals[self.word].fetch_or(*bits, Relaxed);
                *bits = 0;
            }
        }
    }
}

/// Writes [`Value::DRAW`] into every one of the first `len` positions of `section` whose final
/// bit is clear: their counters never reached zero. (Compact arrays hold no values: their
/// tables are built from the value log, where a position that is not final is a draw.)
pub(crate) fn finish_section(section: Section, len: u64) {
    if section.compact {
        return;
    }
    for (w, word) in section.finals.iter().enumerate() {
        let mut open = !word.load(Relaxed);
        while open != 0 {
            let i = w * 64 + open.trailing_zeros() as usize;
            open &= open - 1;
            if (i as u64) < len {
                section.values[i].store(Value::DRAW.0, Relaxed);
            }
        }
    }
}
