//! What a game tells the engine.

use std::ops::Range;

/// A slice: a dense array of positions, the unit of work and of storage. Ids are small integers
/// (`0..Game::slice_count()`), chosen by the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SliceId(pub u32);

/// Who is to move. Every slice holds each position twice, once per side to move; a slice
/// table's section `i` holds the values of the side with index `i`. Which player is `First`
/// is the game's choice (in Sixteen Musashi, brown).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    /// The side of section 0.
    First,
    /// The side of section 1.
    Second,
}

impl Side {
    /// Both sides, in section order.
    pub const BOTH: [Side; 2] = [Side::First, Side::Second];

    /// The section index of this side: 0 or 1.
    #[inline(always)]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The opponent.
    #[inline(always)]
    pub fn other(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }
}

/// Slices that are solved together, because moves connect them in both directions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// A short human-readable name ("browns=12").
    pub name: String,
    /// The slices of this stage.
    pub slices: Vec<SliceId>,
    /// Indices (into [`Game::stages`]) of the earlier stages whose final values this stage
    /// reads. Every one of them precedes this stage in the list.
    pub depends_on: Vec<usize>,
}

/// Where a move leads: always to a position with the other side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// To a position of the stage being solved (canonical slice and key).
    InStage(SliceId, u64),
    /// To a position of an earlier stage, whose values are final (canonical slice and key).
    Final(SliceId, u64),
    /// To a position whose value (with the other side to move) the game knows without a table:
    /// `Value::LOST_NOW` for a move that wins at once, `Value::DRAW` for one that ends the game
    /// drawn. Also how [`crate::margin`] hands the kernel a capture's outcome at a threshold.
    Known(crate::value::Value),
}

/// How a game will compute one slice's claims of one ply bit-parallel
/// ([`Game::bulk_claim_plan`]): which of the slice's kinds of move it turns into bit-run copies
/// between bitmaps and which it pushes key by key. The bits are the game's own (Sixteen Musashi:
/// one per brown edge of the slice); the kernel only hands the plan back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BulkPlan(pub u128);

/// One of `of` threads' shares of a slot's bit-parallel work ([`Game::bulk_predecessors`]):
/// when a batch holds fewer slots than threads (out of core, one), a slot's run copies are
/// split between threads, each into its own bitmap, and the bitmaps OR-ed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    /// This share, `0..of`.
    pub index: usize,
    /// How many shares the work is split into (at least 1).
    pub of: usize,
}

impl Share {
    /// All the work in one share.
    pub const WHOLE: Share = Share { index: 0, of: 1 };
}

/// A two-player game as the retrograde engine sees it.
///
/// A position is a slice, a *key* (a game-defined `u64`, e.g. a piece mask) and a side to move.
/// Keys map densely to `0..slice_len` through [`Game::index`]. Under symmetry only *canonical*
/// keys are solved; every function returning a position returns its canonical image.
///
/// The values computed are those of [`crate::value::Outcome`]: a side without a move has lost
/// (if its opponent can win at all, see [`Game::can_win`]), and otherwise the side to move wins
/// as fast as it can, loses as slowly as it can, and draws when neither is forced (endless play
/// is a draw).
///
/// The kernel relies on these contracts:
///
/// * moves of a side for which [`Game::leaves_stage`] is false never leave the stage;
/// * a move either stays in the stage, leads to an earlier stage (one in the stage's
///   `depends_on`) or has a known result;
/// * moves and un-moves may be many (thousands per position are fine); a position with more
///   than 254 distinct in-stage successors keeps its counter outside the value byte, which only
///   whole-stage solves (not split stages) support;
/// * un-move functions return exactly the canonical positions of the stage that have a move to
///   the orbit of the given one (duplicates allowed; the kernel removes them where it counts).
pub trait Game: Sync {
    /// All stages in solve order.
    fn stages(&self) -> Vec<Stage>;
    /// An upper bound on slice ids, for dense per-slice maps.
    fn slice_count(&self) -> usize;
    /// Number of array slots of a slice (canonical or not).
    fn slice_len(&self, slice: SliceId) -> u64;
    /// A short human-readable name ("browns=12 black=22").
    fn slice_name(&self, slice: SliceId) -> String;

    /// Calls `visit(index, key)` for every index in `range`, in order. This is how the kernel
    /// sweeps a slice once; implementations should step keys incrementally.
    fn for_each_key(&self, slice: SliceId, range: Range<u64>, visit: impl FnMut(u64, u64));
    /// Calls `visit(index, key)` for every index `first + i` of `slice` whose bit `i` is set
    /// in `marked` (bit `i % 64` of word `i / 64`; every marked index below the slice's
    /// length), in increasing order: how the kernel turns a bitmap of claimed or open
    /// positions back into keys. The default steps keys through each run of marked words
    /// ([`Game::for_each_key`]), starting afresh after an unmarked word; a game that finds a
    /// key from a nearby one faster overrides it.
    fn for_each_marked_key(
        &self,
        slice: SliceId,
        first: u64,
        marked: &[u64],
        mut visit: impl FnMut(u64, u64),
    ) {
        /// Marked words at most this far apart are stepped through in one run.
        const GAP_WORDS: usize = 1;
        let words = marked.len();
        let mut w = 0;
        while w < words {
            if marked[w] == 0 {
                w += 1;
                continue;
            }
            let start_word = w;
            let mut last = w;
            while w < words && w - last <= GAP_WORDS {
                if marked[w] != 0 {
                    last = w;
                }
                w += 1;
            }
            let start =
                first + start_word as u64 * 64 + u64::from(marked[start_word].trailing_zeros());
            let end = first + last as u64 * 64 + 64 - u64::from(marked[last].leading_zeros());
            self.for_each_key(slice, start..end, |index, key| {
                let local = index - first;
                if marked[(local / 64) as usize] >> (local % 64) & 1 == 1 {
                    visit(index, key);
                }
            });
        }
    }
    /// The dense index of `key` in `slice`.
    fn index(&self, slice: SliceId, key: u64) -> u64;
    /// Calls `visit(index)` with the [`Game::index`] of every key of `keys` (all of `slice`),
    /// in order: how a stage's value tables are built from its logged frontiers. Those lists
    /// are sorted, so neighbouring keys tend to share most of their index; a game that can
    /// reuse that overrides the default, which indexes each key on its own.
    fn for_each_index(&self, slice: SliceId, keys: &[u64], mut visit: impl FnMut(u64)) {
        for &key in keys {
            visit(self.index(slice, key));
        }
    }
    /// The key at `index` of `slice`.
    fn key(&self, slice: SliceId, index: u64) -> u64;
    /// Whether `key` is the canonical representative of its symmetry orbit.
    fn is_canonical(&self, slice: SliceId, key: u64) -> bool;

    /// Whether `side` can ever win. A game in which only one side can force a result (in
    /// Sixteen Musashi black never wins by force: it wins when brown cannot) says so here, and
    /// the kernel then keeps no loss counters for the other side's positions and never claims
    /// a win for it: the same values, less work. Default: both can.
    fn can_win(&self, side: Side) -> bool {
        let _ = side;
        true
    }

    /// Whether moves of `side` can leave the stage (captures into an earlier stage). A side
    /// whose moves never do needs no initial sweep when it cannot lose. Default: they can.
    fn leaves_stage(&self, side: Side) -> bool {
        let _ = side;
        true
    }

    /// Whether [`Game::unmoves`] is implemented. A game whose predecessors are hard to compute
    /// (relay sowing) says no: the stage kernel then finds each ply's new values by
    /// re-evaluating the successors of the open positions (pull) instead of un-moving the
    /// frontier (push) — more work per ply, the same values — and its stages cannot be split
    /// into supersteps (a step sees only its own slice). Default: yes.
    fn has_unmoves(&self) -> bool {
        true
    }

    /// Whether a stage may be split into supersteps ([`crate::superstep`]): that needs
    /// un-moves, and counters of open successors that fit the value byte (at most 254
    /// distinct in-stage successors per position). A game with more says no, and its stages
    /// are solved whole. Default: whether it has un-moves.
    fn splits(&self) -> bool {
        self.has_unmoves()
    }

    /// Whether the stage kernel may solve this game's stages on *compact arrays* when the
    /// driver asks for them ([`crate::Workspace::with_compact_arrays`]): counters in four bits,
    /// no value bytes (the values go to a log of the frontiers and the tables are built from it
    /// at the stage's end; see [`crate::rules`]). Correct for any game with un-moves (a counter
    /// of 15 or more goes to the overflow table); worth it when nearly every position has fewer
    /// than 15 distinct successors — in Sixteen Musashi black has at most 8 moves in the stage,
    /// and brown keeps no counter at all. Default: no.
    fn compact_counters(&self) -> bool {
        false
    }

    /// Whether every claim stays in its slice: the un-moves from a lost position (the odd
    /// plies' targets) all lead to positions of the same slice. In Sixteen Musashi they are
    /// brown's un-moves, and a brown move never moves black, so yes. A split stage then runs
    /// each odd ply and the even ply after it in one step (a *double step*,
    /// [`crate::superstep::is_double`]): no other slice can send the claims it applies, so it
    /// applies its own at once instead of mailing them to itself — half the steps, half the
    /// slice states written, and no claim stored as a message. Default: no (claims travel as
    /// messages).
    fn claims_stay_in_slice(&self) -> bool {
        false
    }

    /// Every move of `side` from the position `(slice, key)` with `side` to move; none means
    /// `side` has lost (or drawn, if its opponent cannot win).
    fn moves(&self, side: Side, slice: SliceId, key: u64, visit: impl FnMut(Move));

    /// The moves of `side` from `(slice, key)` as the initial sweep needs them, when the game
    /// can give them more cheaply than [`Game::moves`]: every move that leaves the stage
    /// ([`Move::Final`]) or has a known result ([`Move::Known`]) is visited as `moves` would,
    /// no [`Move::InStage`] is, and the number of *distinct* in-stage successors (orbits) is
    /// returned instead. Or `None` without visiting anything: the sweep then lists `moves`
    /// and removes duplicate successors itself. The sweep needs only that number, and a game
    /// that can tell its successors are distinct (in Sixteen Musashi: the position has no
    /// symmetry) spares it every successor's canonical form. Default: `None`.
    #[inline(always)]
    fn counted_moves(
        &self,
        side: Side,
        slice: SliceId,
        key: u64,
        exits: impl FnMut(Move),
    ) -> Option<u32> {
        let _ = (side, slice, key, exits);
        None
    }

    /// Whether some move of `side` from the position `(slice, key)`, the slot `index` of its
    /// slice, stays in the stage and reaches a position `(to, to_index)` that `hit` accepts;
    /// stops at the first. A pull ply asks this of every open position ("has a successor got
    /// this ply's value?"). A game that finds a successor's index from the position's own more
    /// cheaply than by [`Game::index`] overrides it (Sixteen Musashi: a brown move between two
    /// of the lowest points stays in the position's colex block). Default: the in-stage
    /// [`Game::moves`], each ranked by [`Game::index`] ([`listed_move_reaching`]).
    #[inline(always)]
    fn any_move_reaching(
        &self,
        side: Side,
        slice: SliceId,
        key: u64,
        index: u64,
        hit: impl FnMut(SliceId, u64) -> bool,
    ) -> bool {
        let _ = index;
        listed_move_reaching(self, side, slice, key, hit)
    }

    /// The positions of the stage, with `side.other()` to move, that have a move to the
    /// position `(slice, key)` with `side` to move, as `visit(slice, key, index)`: the game
    /// computes the index, which it can do faster than a separate [`Game::index`] call because
    /// it knows the target slice. Moves that leave a stage are never un-made: they come from
    /// later stages. Never called when [`Game::has_unmoves`] is false.
    fn unmoves(&self, side: Side, slice: SliceId, key: u64, visit: impl FnMut(SliceId, u64, u64));

    /// [`Game::unmoves`] of every key of `keys` (all in `slice`, `side` to move), each key's
    /// targets exactly once, in an order of the game's choosing; returns true. Or returns false
    /// without visiting anything: the kernel then un-moves key by key and removes each key's
    /// duplicates itself. Which is what a count ply needs (one decrement per distinct
    /// predecessor), so a game that can produce it cheaply in bulk says so here.
    ///
    /// The point of the bulk form is memory locality: the keys of a frontier list come sorted,
    /// and one kind of un-move at a time (in Sixteen Musashi, black stepping back in one
    /// direction) sends their targets to one slice, in a few rising streams, instead of
    /// interleaving up to eight slices. Default: false.
    fn distinct_unmoves_of_all(
        &self,
        side: Side,
        slice: SliceId,
        keys: &[u64],
        visit: impl FnMut(SliceId, u64, u64),
    ) -> bool {
        let _ = (side, slice, keys, visit);
        false
    }

    /// Whether a claim ply should find the claims of `slice` bit-parallel, given the `frontier`
    /// keys (positions of `side` to move, lost, in `slice`) it would otherwise push; if so, how
    /// ([`BulkPlan`]). Only asked when [`Game::claims_stay_in_slice`]. The kernel then marks
    /// the frontier with [`Game::mark_frontier`], completes the predecessors with
    /// [`Game::bulk_predecessors`] and claims every open canonical position found, all in one
    /// pass over the slice's final bits. Default: never (claims are pushed key by key).
    ///
    /// The point: a claim ply's targets are mostly won already (late in a stage 95% of them),
    /// yet each costs an un-move, a symmetry minimum, a rank and a bit test. Where a kind of
    /// move maps long runs of slots onto long runs of slots (colex order does that for moves of
    /// high-numbered points), copying the runs costs a word per 64 positions, whatever the
    /// frontier's size.
    fn bulk_claim_plan(&self, side: Side, slice: SliceId, frontier: u64) -> Option<BulkPlan> {
        let _ = (side, slice, frontier);
        None
    }

    /// For a bit-parallel claim ply ([`Game::bulk_claim_plan`]): sets in `members` the slot of
    /// every key of `keys` (positions of `side` to move in `slice`) and of each of its
    /// symmetric images in the slice, canonical or not; and sets in `pre` the slot of every
    /// position of the slice, `side.other()` to move, canonical or not, that has a move of a
    /// kind `plan` pushes to one of those. Called once per chunk of the frontier, before
    /// [`Game::bulk_predecessors`]. Both bitmaps have a bit per slot of the slice.
    fn mark_frontier(
        &self,
        plan: BulkPlan,
        side: Side,
        slice: SliceId,
        keys: &[u64],
        members: &mut [u64],
        pre: &mut [u64],
    ) {
        let _ = (plan, side, slice, keys, members, pre);
        unreachable!("a game that plans bulk claims marks its frontier")
    }

    /// For a bit-parallel claim ply: sets in `pre` the slot of every position of `slice`,
    /// `side.other()` to move, canonical or not, with a move of a kind `plan` does in bulk to a
    /// position marked in `members` (the frontier and its images, see
    /// [`Game::mark_frontier`]) — or, when the work is split between threads, `share`'s part
    /// of them: the shares of any split must together set every such slot.
    fn bulk_predecessors(
        &self,
        plan: BulkPlan,
        side: Side,
        slice: SliceId,
        members: &[u64],
        pre: &mut [u64],
        share: Share,
    ) {
        let _ = (plan, side, slice, members, pre, share);
        unreachable!("a game that plans bulk claims finds their predecessors")
    }
}

/// [`Game::any_move_reaching`] by the in-stage [`Game::moves`] of `side` from `(slice, key)`,
/// each ranked by [`Game::index`], stopping at the first that `hit` accepts: the default, and
/// what a game that overrides it for one side gives the other.
#[inline(always)]
pub fn listed_move_reaching<G: Game + ?Sized>(
    game: &G,
    side: Side,
    slice: SliceId,
    key: u64,
    mut hit: impl FnMut(SliceId, u64) -> bool,
) -> bool {
    let mut found = false;
    game.moves(side, slice, key, |mv| {
        if let (false, Move::InStage(to, to_key)) = (found, mv) {
            found = hit(to, game.index(to, to_key));
        }
    });
    found
}
