//! What a game tells the engine.

use std::ops::Range;

/// A slice: a dense array of positions, the unit of work and of storage. Ids are small integers
/// (`0..Game::slice_count()`), chosen by the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SliceId(pub u32);

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

/// Where a defender move leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefenderMove {
    /// To an attacker-to-move position in the stage being solved (canonical slice and key).
    InStage(SliceId, u64),
    /// To an attacker-to-move position in an earlier, already final stage (canonical).
    Final(SliceId, u64),
}

/// A game as the retrograde engine sees it.
///
/// A position is a slice, a *key* (a game-defined `u64`, e.g. a piece mask) and a side to move.
/// Every slice holds both sides. Keys map densely to `0..slice_len` through [`Game::index`]. Under
/// symmetry only *canonical* keys are solved; every function returning a position returns its
/// canonical image. The kernel relies on these contracts:
///
/// * attacker moves never leave the stage (they may change slice within it);
/// * a defender move either stays in the stage or leads to a final, earlier stage;
/// * no position has more than [`crate::kernel::MAX_MOVES`] defender moves or un-moves;
/// * un-move functions return exactly the canonical positions that have a move to the orbit of
///   the given one (duplicates allowed; the kernel removes them).
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
    /// The dense index of `key` in `slice`.
    fn index(&self, slice: SliceId, key: u64) -> u64;
    /// The key at `index` of `slice`.
    fn key(&self, slice: SliceId, index: u64) -> u64;
    /// Whether `key` is the canonical representative of its symmetry orbit.
    fn is_canonical(&self, slice: SliceId, key: u64) -> bool;

    /// Every defender move from the defender-to-move position `(slice, key)`; none means the
    /// defender is stalemated (the attacker has won).
    fn defender_moves(&self, slice: SliceId, key: u64, visit: impl FnMut(DefenderMove));
    /// Every attacker move from the attacker-to-move position `(slice, key)`, as
    /// `visit(slice, key, index)` of the canonical successor (the kernel pulls with these in
    /// late plies; verification evaluates the recurrence with them).
    fn attacker_moves(&self, slice: SliceId, key: u64, visit: impl FnMut(SliceId, u64, u64));
    /// Attacker-to-move positions with an attacker move to the defender-to-move `(slice, key)`,
    /// as `visit(slice, key, index)`: the game computes the index, which it can do faster than a
    /// separate [`Game::index`] call because it knows the target slice.
    fn attacker_unmoves(&self, slice: SliceId, key: u64, visit: impl FnMut(SliceId, u64, u64));
    /// Defender-to-move positions in the stage with a defender move to the attacker-to-move
    /// `(slice, key)`, as `visit(slice, key, index)` (moves that leave the stage are never
    /// un-made: they come from later stages).
    fn defender_unmoves(&self, slice: SliceId, key: u64, visit: impl FnMut(SliceId, u64, u64));
}
