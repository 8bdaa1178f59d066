//! SIMPEI as the retrograde engine sees it.
//!
//! * **Key**: white's holes in bits `0..25`, black's in bits `32..57`. Both sides to move are
//!   kept (the engine's first side is white): the 8-piece positions with black to move are
//!   the colour-exchanged images of those with white to move, which the published tables
//!   count.
//! * **Stages**: one per layer (pieces on the board), the 8-piece layer first (its steps and
//!   passes stay in it: cycles and draws), then 7, 6, ..., 0 (a placement leads to the next
//!   layer, solved before).
//! * **Slices**: a layer is cut by the number of white pieces in the upper world, so that a
//!   white step (which always changes world) crosses slices.
//! * **Index**: inside a slice, white's upper holes, then white's lower holes, then black's
//!   holes among those white leaves free, each as a colex rank.
//! * **Symmetry**: the 8 symmetries of the square; a key is canonical when its `(white,
//!   black)` masks are the smallest of their images.
//! * **Placement layers and the side to move**: with fewer than 8 pieces only one side can be
//!   to move (white when the count is even). The other side's section of such a slice holds
//!   no position of the game: that side has no move there, the tables keep whatever the
//!   engine writes, and counts, probes and checks never read it.
//!
//! When a row of three wins is a reading of the rules ([`RowRule`]); a win the game
//! recognises at once is a [`Move::Known`] result.

use crate::board::{holes, Geometry, Hole, HOLES, UPPER, UPPER_MASK};
use crate::index::{
    canonical, canonical_given_black, canonical_given_white, is_canonical, layer_pieces,
    squeeze_out, unsqueeze_in, Images, LAYERS,
};
use crate::job::StartRule;
use crate::position::{Colour, Position, PIECES};
use crate::rules::{self, clipped};
use retro_engine::{Game, Move, Side, SliceId, Stage, Value};
use retro_index::{binomial, next_subset, SubsetRanker};
use std::ops::Range;

/// Bit offset of black's holes in a key.
const BLACK_SHIFT: u32 = 32;
/// Slice ids per layer: white pieces in the upper world, 0 to 4.
const SLICES_PER_LAYER: u32 = PIECES + 1;
/// Holes of the lower world.
const LOWER: usize = HOLES - UPPER;
/// The pieces on the board once placement is over: the layer of the movement phase.
pub const FULL: u32 = 2 * PIECES;

/// When a row of exactly three wins: the rules say "on their own turn", and the published
/// tables decide what that means (see `docs/simpei.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowRule {
    /// After each ply, the mover wins if it has exactly three in a row. A row the mover's
    /// relocation builds for the opponent does not count until the opponent's own ply ends
    /// with it.
    AfterPly,
    /// At the start of each turn, the side to move wins if it has exactly three in a row
    /// (however the row came about); rows are not checked after a ply.
    TurnStart,
    /// Both checks: after its ply the mover wins with a row; otherwise, at the start of the
    /// opponent's turn, the opponent wins with a row (one the mover's relocation built).
    AfterPlyAndTurnStart,
    /// After each ply, whichever side has exactly three wins; if both have, the mover.
    AfterPlyEitherMoverFirst,
    /// After each ply, whichever side has exactly three wins; if both have, the opponent.
    AfterPlyEitherOpponentFirst,
    /// After each ply, the mover wins if either side has exactly three: a row the mover's
    /// relocation builds for the opponent counts for the mover.
    AfterPlyAnyRowForMover,
    /// After each ply, the mover wins if it has exactly three, or if the opponent has a row
    /// of exactly three that one of the relocated pieces is part of.
    AfterPlyRelocatedRowForMover,
}

impl RowRule {
    /// Every reading, in the order `docs/simpei.md` tries them.
    pub const ALL: [RowRule; 7] = [
        RowRule::AfterPly,
        RowRule::TurnStart,
        RowRule::AfterPlyAndTurnStart,
        RowRule::AfterPlyEitherMoverFirst,
        RowRule::AfterPlyEitherOpponentFirst,
        RowRule::AfterPlyAnyRowForMover,
        RowRule::AfterPlyRelocatedRowForMover,
    ];

    /// The name in definitions and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            RowRule::AfterPly => "after-ply",
            RowRule::TurnStart => "turn-start",
            RowRule::AfterPlyAndTurnStart => "after-ply-and-turn-start",
            RowRule::AfterPlyEitherMoverFirst => "after-ply-either-mover-first",
            RowRule::AfterPlyEitherOpponentFirst => "after-ply-either-opponent-first",
            RowRule::AfterPlyAnyRowForMover => "after-ply-any-row-for-mover",
            RowRule::AfterPlyRelocatedRowForMover => "after-ply-relocated-row-for-mover",
        }
    }

    /// The reading named `name`.
    pub fn parse(name: &str) -> Result<RowRule, String> {
        parse_named("row rule", &RowRule::ALL, RowRule::name, name)
    }

    /// Whether a side with exactly three at the start of its turn has won.
    fn at_turn_start(self) -> bool {
        matches!(self, RowRule::TurnStart | RowRule::AfterPlyAndTurnStart)
    }
}

/// What counts as "exactly three own pieces in a row": the other reading of the rules the
/// published tables decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowShape {
    /// Three own pieces on consecutive holes of a line, with no own piece on the holes just
    /// beyond them on that line (a four is not a three).
    OwnFourthExcluded,
    /// Three own pieces on consecutive holes of a line with no piece of either colour just
    /// beyond them: the line holds exactly those three pieces in a row.
    AnyFourthExcluded,
    /// Exactly three own pieces on one line of a world, consecutive or not.
    ThreeOnALine,
    /// As [`RowShape::OwnFourthExcluded`], but only a row through the piece the ply placed or
    /// moved counts (checked after the ply, for the mover).
    ThroughMovedPiece,
}

impl RowShape {
    /// Every reading.
    pub const ALL: [RowShape; 4] = [
        RowShape::OwnFourthExcluded,
        RowShape::AnyFourthExcluded,
        RowShape::ThreeOnALine,
        RowShape::ThroughMovedPiece,
    ];

    /// The name in definitions and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            RowShape::OwnFourthExcluded => "own-fourth-excluded",
            RowShape::AnyFourthExcluded => "any-fourth-excluded",
            RowShape::ThreeOnALine => "three-on-a-line",
            RowShape::ThroughMovedPiece => "through-moved-piece",
        }
    }

    /// The reading named `name`.
    pub fn parse(name: &str) -> Result<RowShape, String> {
        parse_named("row shape", &RowShape::ALL, RowShape::name, name)
    }
}

/// The reading among `all` called `name`, or an error naming the known ones.
fn parse_named<T: Copy>(
    what: &str,
    all: &[T],
    name_of: fn(T) -> &'static str,
    name: &str,
) -> Result<T, String> {
    all.iter()
        .copied()
        .find(|&r| name_of(r) == name)
        .ok_or_else(|| {
            let known: Vec<&str> = all.iter().map(|&r| name_of(r)).collect();
            format!("unknown {what} '{name}' (known: {})", known.join(", "))
        })
}

/// How a ply ends, by the rows it leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlyEnd {
    /// The game goes on: the opponent is to move.
    Continues,
    /// The mover has won.
    MoverWins,
    /// The opponent has won (a row the mover's relocation built for it).
    OpponentWins,
}

/// The value, for the side to move, of a position whose side to move has already won: "wins
/// in 1 ply". A win recognised at the start of a turn is counted as one ply (the claim), since
/// a win at once cannot be told from a loss in the one-byte encoding (odd distances are
/// wins); `docs/simpei.md` gives the convention.
pub const CLAIMED_WIN: Value = Value(2);

/// The shape of one slice: a layer and white's count in the upper world.
#[derive(Clone, Copy, Debug)]
struct SliceShape {
    layer: u32,
    /// White pieces in the upper world.
    upper: u32,
    whites: u32,
    blacks: u32,
    /// Ways to put white's lower pieces: `C(9, whites - upper)`.
    lower_ways: u64,
    /// Ways to put black's pieces on the holes white leaves free.
    black_ways: u64,
    len: u64,
}

/// SIMPEI with a row rule (and a start rule, which only says where play starts): the game
/// the engine solves.
pub struct Simpei {
    geometry: Geometry,
    rows: RowRule,
    shape: RowShape,
    start: StartRule,
    ranker: SubsetRanker,
    /// By slice id (`layer * 5 + upper`); `None` for impossible combinations.
    shapes: Vec<Option<SliceShape>>,
}

impl Simpei {
    /// The game under row rule `rows`.
    pub fn new(rows: RowRule) -> Simpei {
        let shapes = (0..LAYERS * SLICES_PER_LAYER)
            .map(|id| {
                let (layer, upper) = (id / SLICES_PER_LAYER, id % SLICES_PER_LAYER);
                let (whites, blacks) = layer_pieces(layer);
                if upper > whites || (whites - upper) as usize > LOWER {
                    return None;
                }
                let lower_ways = binomial(LOWER, (whites - upper) as usize);
                let black_ways = binomial(HOLES - whites as usize, blacks as usize);
                Some(SliceShape {
                    layer,
                    upper,
                    whites,
                    blacks,
                    lower_ways,
                    black_ways,
                    len: binomial(UPPER, upper as usize) * lower_ways * black_ways,
                })
            })
            .collect();
        Simpei {
            geometry: Geometry::new(),
            rows,
            shape: RowShape::OwnFourthExcluded,
            start: StartRule::Official,
            ranker: SubsetRanker::new(HOLES as u32),
            shapes,
        }
    }

    /// The same game starting by `start` (the official start unless told).
    pub fn starting(self, start: StartRule) -> Simpei {
        Simpei { start, ..self }
    }

    /// The same game with rows of shape `shape`.
    pub fn shaped(self, shape: RowShape) -> Simpei {
        Simpei { shape, ..self }
    }

    /// The row shape.
    pub fn shape(&self) -> RowShape {
        self.shape
    }

    /// Whether `own` holds a row (of the game's shape) beside the opponent's `other`.
    #[inline]
    pub fn has_row(&self, own: u32, other: u32) -> bool {
        let g = &self.geometry;
        match self.shape {
            RowShape::OwnFourthExcluded => g.has_three(own),
            RowShape::AnyFourthExcluded => {
                g.has_three(own)
                    && g.threes
                        .iter()
                        .any(|&(t, ends)| own & t == t && (own | other) & ends == 0)
            }
            RowShape::ThreeOnALine => g.has_three_on_a_line(own),
            // Without the ply's piece: the opponent's rows, and rows at a turn's start.
            RowShape::ThroughMovedPiece => g.has_three(own),
        }
    }

    /// The row rule.
    pub fn rows(&self) -> RowRule {
        self.rows
    }

    /// The start rule.
    pub fn start(&self) -> StartRule {
        self.start
    }

    /// The board's relations.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The key of `(white, black)`.
    pub fn key_of(white: u32, black: u32) -> u64 {
        u64::from(white) | u64::from(black) << BLACK_SHIFT
    }

    /// The `(white, black)` masks of a key.
    pub fn masks(key: u64) -> (u32, u32) {
        (key as u32, (key >> BLACK_SHIFT) as u32)
    }

    /// The slice of the position `(white, black)` (any image).
    pub fn slice_of(white: u32, black: u32) -> SliceId {
        let layer = (white | black).count_ones();
        SliceId(layer * SLICES_PER_LAYER + (white & UPPER_MASK).count_ones())
    }

    /// The layer (pieces on the board) of a slice.
    pub fn layer_of(slice: SliceId) -> u32 {
        slice.0 / SLICES_PER_LAYER
    }

    /// The engine side of a colour (white moves first: the engine's first side).
    pub fn side_of(colour: Colour) -> Side {
        match colour {
            Colour::White => Side::First,
            Colour::Black => Side::Second,
        }
    }

    /// The colour of an engine side.
    pub fn colour_of(side: Side) -> Colour {
        match side {
            Side::First => Colour::White,
            Side::Second => Colour::Black,
        }
    }

    /// The canonical slice and key of the position `(white, black)`.
    pub fn locate(&self, white: u32, black: u32) -> (SliceId, u64) {
        let (w, b) = canonical(&self.geometry, white, black);
        (Simpei::slice_of(w, b), Simpei::key_of(w, b))
    }

    /// Whether `side` can be to move in `slice` (with 8 pieces both; before, the placing side).
    pub fn is_turn(slice: SliceId, side: Side) -> bool {
        let layer = Simpei::layer_of(slice);
        layer == FULL || Simpei::colour_of(side) == Colour::placing(layer)
    }

    /// Whether the side to move, holding `own` beside `other`, has already won at the start
    /// of its turn.
    pub fn wins_at_turn_start(&self, own: u32, other: u32) -> bool {
        self.rows.at_turn_start() && self.has_row(own, other)
    }

    /// How a ply ends that leaves the mover with `own` and the opponent with `other`, the
    /// opponent's pieces the mover put back standing on `relocated`, the piece the ply placed
    /// or moved on `at` (empty for a pass).
    pub fn ply_end(&self, own: u32, other: u32, relocated: u32, at: u32) -> PlyEnd {
        let g = &self.geometry;
        if self.shape == RowShape::ThroughMovedPiece && !g.three_through(own, at) {
            // The mover's row must run through the piece it played.
            return match self.rows {
                RowRule::AfterPlyEitherMoverFirst | RowRule::AfterPlyEitherOpponentFirst
                    if self.has_row(other, own) =>
                {
                    PlyEnd::OpponentWins
                }
                _ => PlyEnd::Continues,
            };
        }
        match self.rows {
            RowRule::AfterPlyAnyRowForMover => {
                if self.has_row(own, other) || self.has_row(other, own) {
                    PlyEnd::MoverWins
                } else {
                    PlyEnd::Continues
                }
            }
            RowRule::AfterPlyRelocatedRowForMover => {
                if self.has_row(own, other) || (relocated != 0 && g.three_through(other, relocated))
                {
                    PlyEnd::MoverWins
                } else {
                    PlyEnd::Continues
                }
            }
            RowRule::TurnStart => PlyEnd::Continues,
            RowRule::AfterPly | RowRule::AfterPlyAndTurnStart => {
                if self.has_row(own, other) {
                    PlyEnd::MoverWins
                } else {
                    PlyEnd::Continues
                }
            }
            RowRule::AfterPlyEitherMoverFirst | RowRule::AfterPlyEitherOpponentFirst => {
                match (self.has_row(own, other), self.has_row(other, own)) {
                    (false, false) => PlyEnd::Continues,
                    (true, false) => PlyEnd::MoverWins,
                    (false, true) => PlyEnd::OpponentWins,
                    (true, true) if self.rows == RowRule::AfterPlyEitherMoverFirst => {
                        PlyEnd::MoverWins
                    }
                    (true, true) => PlyEnd::OpponentWins,
                }
            }
        }
    }

    /// Every move of the side to move of `pos` as the engine sees it, with the rules' move:
    /// a claim of a win at the start of the turn (`None`), or each legal ply with where it
    /// leads (a known result when it ends the game).
    pub fn plies(&self, pos: &Position, mut visit: impl FnMut(Option<rules::Move>, Move)) {
        let mover = pos.to_move;
        if self.wins_at_turn_start(pos.of(mover), pos.of(mover.other())) {
            visit(None, Move::Known(Value::LOST_NOW));
            return;
        }
        let in_stage = pos.pieces() == FULL;
        let g = &self.geometry;
        // The mover's holes after an action are the same for every way of putting back what
        // it clipped: their images are computed once per action.
        let mut own_images = Images::of(g, pos.of(mover));
        rules::moves(&self.geometry, pos, |mv, next| {
            let at = match mv.action {
                rules::Action::Place(h) | rules::Action::Step(_, h) => h.bit(),
                rules::Action::Pass => 0,
            };
            let target =
                match self.ply_end(next.of(mover), next.of(mover.other()), mv.relocated, at) {
                    PlyEnd::MoverWins => Move::Known(Value::LOST_NOW),
                    PlyEnd::OpponentWins => Move::Known(CLAIMED_WIN),
                    PlyEnd::Continues => {
                        let own = next.of(mover);
                        if own_images.mask != own {
                            own_images = Images::of(g, own);
                        }
                        let (w, b) = match mover {
                            Colour::White => canonical_given_white(g, &own_images, next.black),
                            Colour::Black => canonical_given_black(g, next.white, &own_images),
                        };
                        let (slice, key) = (Simpei::slice_of(w, b), Simpei::key_of(w, b));
                        if in_stage {
                            Move::InStage(slice, key)
                        } else {
                            Move::Final(slice, key)
                        }
                    }
                };
            visit(Some(mv), target);
        });
    }

    fn slice_shape(&self, slice: SliceId) -> &SliceShape {
        self.shapes[slice.0 as usize]
            .as_ref()
            .expect("a slice of the game")
    }

    /// The index of `(white, black)` in its slice.
    fn index_of(&self, shape: &SliceShape, white: u32, black: u32) -> u64 {
        let up = self.ranker.rank(u64::from(white & UPPER_MASK));
        let low = self.ranker.rank(u64::from(white >> UPPER));
        let b = self.ranker.rank(squeeze_out(black, white));
        (up * shape.lower_ways + low) * shape.black_ways + b
    }

    /// The masks at `index` of a slice.
    fn masks_at(&self, shape: &SliceShape, index: u64) -> (u32, u32) {
        let (white_rank, b) = (index / shape.black_ways, index % shape.black_ways);
        let (up, low) = (white_rank / shape.lower_ways, white_rank % shape.lower_ways);
        let white = self.ranker.unrank(up, shape.upper) as u32
            | (self.ranker.unrank(low, shape.whites - shape.upper) as u32) << UPPER;
        let black = unsqueeze_in(self.ranker.unrank(b, shape.blacks), white);
        (white, black)
    }

    /// The canonical positions with `mover` to move that have a ply to exactly the position
    /// `(own, other)` (the mover's holes and the opponent's after the ply), as `(white,
    /// black)` masks; duplicates possible.
    fn predecessors(&self, mover: Colour, own: u32, other: u32, visit: &mut impl FnMut(u32, u32)) {
        let g = &self.geometry;
        let occupied = own | other;
        let mut emit = |own_before: u32, other_before: u32| {
            let (white, black) = match mover {
                Colour::White => (own_before, other_before),
                Colour::Black => (other_before, own_before),
            };
            let (w, b) = canonical(g, white, black);
            visit(w, b);
        };
        // A pass: the mover had no step.
        if !self.wins_at_turn_start(own, other)
            && holes(own).all(|h| g.neighbours[h.0 as usize] & !occupied == 0)
            && self.ply_end(own, other, 0, 0) == PlyEnd::Continues
        {
            emit(own, other);
        }
        for to in holes(own) {
            // The runs of empty holes from `to` ended by an own piece: each may have been a
            // run of opponent pieces that this ply clipped (and put elsewhere).
            let mut runs = [0u32; 8];
            let mut n_runs = 0;
            for ray in &g.rays[to.0 as usize] {
                let mut run = 0;
                for hole in ray {
                    if occupied & hole.bit() == 0 {
                        run |= hole.bit();
                    } else {
                        if own & hole.bit() != 0 && run != 0 {
                            runs[n_runs] = run;
                            n_runs += 1;
                        }
                        break;
                    }
                }
            }
            for from in holes(g.neighbours[to.0 as usize] & !own) {
                let own_before = own ^ to.bit() ^ from.bit();
                for choice in 0u32..1 << n_runs {
                    let clip = (0..n_runs)
                        .filter(|r| choice >> r & 1 == 1)
                        .fold(0, |m, r| m | runs[r]);
                    let k = clip.count_ones();
                    if k > other.count_ones() {
                        continue;
                    }
                    // The clipped pieces now stand on `k` of the opponent's holes; `from`,
                    // if the opponent holds it, must be one of them (it was the mover's).
                    for_each_subset_of(other, k, |relocated| {
                        if other & from.bit() != 0 && relocated & from.bit() == 0 {
                            return;
                        }
                        let other_before = other & !relocated | clip;
                        // A predecessor that has won at its turn start only claims.
                        if clipped(g, own, other_before, to) == clip
                            && !self.wins_at_turn_start(own_before, other_before)
                            && self.ply_end(own, other, relocated, to.bit()) == PlyEnd::Continues
                        {
                            emit(own_before, other_before);
                        }
                    });
                }
            }
        }
    }
}

/// Calls `visit` with every `k`-subset of the holes of `mask`.
fn for_each_subset_of(mask: u32, k: u32, mut visit: impl FnMut(u32)) {
    let list: [Hole; HOLES] = {
        let mut list = [Hole(0); HOLES];
        for (i, h) in holes(mask).enumerate() {
            list[i] = h;
        }
        list
    };
    let n = mask.count_ones();
    if k > n {
        return;
    }
    if k == 0 {
        visit(0);
        return;
    }
    let mut pick: u64 = (1 << k) - 1;
    while pick < 1 << n {
        let mut targets = 0;
        let mut bits = pick;
        while bits != 0 {
            targets |= list[bits.trailing_zeros() as usize].bit();
            bits &= bits - 1;
        }
        visit(targets);
        pick = next_subset(pick);
    }
}

impl Game for Simpei {
    fn stages(&self) -> Vec<Stage> {
        (0..LAYERS)
            .rev()
            .enumerate()
            .map(|(i, layer)| Stage {
                name: format!("pieces={layer}"),
                slices: (0..SLICES_PER_LAYER)
                    .map(|upper| SliceId(layer * SLICES_PER_LAYER + upper))
                    .filter(|s| self.shapes[s.0 as usize].is_some())
                    .collect(),
                depends_on: if i == 0 { vec![] } else { vec![i - 1] },
            })
            .collect()
    }

    fn slice_count(&self) -> usize {
        self.shapes.len()
    }

    fn slice_len(&self, slice: SliceId) -> u64 {
        self.shapes[slice.0 as usize].map_or(0, |s| s.len)
    }

    fn slice_name(&self, slice: SliceId) -> String {
        let shape = self.slice_shape(slice);
        format!("pieces{}-upper{}", shape.layer, shape.upper)
    }

    fn for_each_key(&self, slice: SliceId, range: Range<u64>, mut visit: impl FnMut(u64, u64)) {
        if range.is_empty() {
            return;
        }
        let shape = *self.slice_shape(slice);
        let lower_whites = shape.whites - shape.upper;
        let (mut white, _) = self.masks_at(&shape, range.start);
        let mut up = u64::from(white & UPPER_MASK);
        let mut low = u64::from(white >> UPPER);
        let mut black = self
            .ranker
            .unrank(range.start % shape.black_ways, shape.blacks);
        let mut b = range.start % shape.black_ways;
        let mut l = (range.start / shape.black_ways) % shape.lower_ways;
        for index in range {
            visit(index, Simpei::key_of(white, unsqueeze_in(black, white)));
            // Step black; when its placements run out, white's lower holes; then its upper.
            b += 1;
            if b < shape.black_ways {
                black = next_subset(black);
                continue;
            }
            b = 0;
            black = (1 << shape.blacks) - 1;
            l += 1;
            if l < shape.lower_ways {
                low = next_subset(low);
            } else {
                l = 0;
                low = (1 << lower_whites) - 1;
                if shape.upper > 0 {
                    up = next_subset(up);
                }
            }
            white = up as u32 | (low as u32) << UPPER;
        }
    }

    fn index(&self, slice: SliceId, key: u64) -> u64 {
        let (white, black) = Simpei::masks(key);
        self.index_of(self.slice_shape(slice), white, black)
    }

    fn key(&self, slice: SliceId, index: u64) -> u64 {
        let (white, black) = self.masks_at(self.slice_shape(slice), index);
        Simpei::key_of(white, black)
    }

    fn is_canonical(&self, _slice: SliceId, key: u64) -> bool {
        let (white, black) = Simpei::masks(key);
        is_canonical(&self.geometry, white, black)
    }

    /// A clipping ply may put its pieces back in thousands of ways: more successors than a
    /// split stage counts.
    fn splits(&self) -> bool {
        false
    }

    fn moves(&self, side: Side, slice: SliceId, key: u64, mut visit: impl FnMut(Move)) {
        if !Simpei::is_turn(slice, side) {
            return; // not a position of the game
        }
        let (white, black) = Simpei::masks(key);
        let pos = Position {
            white,
            black,
            to_move: Simpei::colour_of(side),
        };
        self.plies(&pos, |_, mv| visit(mv));
    }

    fn unmoves(
        &self,
        side: Side,
        slice: SliceId,
        key: u64,
        mut visit: impl FnMut(SliceId, u64, u64),
    ) {
        // Only the 8-piece layer has moves inside its stage (steps and passes).
        if Simpei::layer_of(slice) != FULL {
            return;
        }
        let mover = Simpei::colour_of(side.other());
        let (white, black) = Simpei::masks(key);
        let (own, other) = match mover {
            Colour::White => (white, black),
            Colour::Black => (black, white),
        };
        // Whether the ply into this position ended the game depends on the rows it left, and
        // with some readings on what it put back and where it played: checked per
        // predecessor.
        // The predecessors of an image of this position are the images of its predecessors,
        // so the canonical predecessors of the one position are those of its whole orbit.
        self.predecessors(mover, own, other, &mut |w, b| {
            let slice = Simpei::slice_of(w, b);
            let shape = self.slice_shape(slice);
            visit(slice, Simpei::key_of(w, b), self.index_of(shape, w, b));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn keys_round_trip_through_the_index_in_order() {
        let game = Simpei::new(RowRule::AfterPly);
        for stage in game.stages() {
            for &slice in &stage.slices {
                let len = game.slice_len(slice);
                // Whole small slices; a few windows of the large ones.
                let windows: Vec<Range<u64>> = if len < 200_000 {
                    std::iter::once(0..len).collect()
                } else {
                    vec![0..1000, len / 3..len / 3 + 5000, len - 777..len]
                };
                for range in windows {
                    let mut expected = range.start;
                    game.for_each_key(slice, range.clone(), |index, key| {
                        assert_eq!(index, expected);
                        expected += 1;
                        let (w, b) = Simpei::masks(key);
                        assert_eq!(Simpei::slice_of(w, b), slice);
                        assert_eq!(w & b, 0);
                        assert_eq!(game.index(slice, key), index, "{slice:?}");
                        assert_eq!(game.key(slice, index), key);
                    });
                    assert_eq!(expected, range.end);
                }
            }
        }
        let total: u64 = (0..LAYERS * SLICES_PER_LAYER)
            .filter(|&s| Simpei::layer_of(SliceId(s)) == FULL)
            .map(|s| game.slice_len(SliceId(s)))
            .sum();
        assert_eq!(total, 12_650 * 5_985);
    }

    /// The chosen reading: the mover wins with a row of exactly three through the piece it
    /// played; a four, a row across the worlds, or a row elsewhere does not win.
    #[test]
    fn a_ply_wins_with_exactly_three_through_the_piece_it_played() {
        let game = Simpei::new(RowRule::AfterPly).shaped(RowShape::ThroughMovedPiece);
        let wins = |text: &str, hole: &str| {
            let pos = Position::parse(text).unwrap();
            let mut result = None;
            game.plies(&pos, |mv, target| {
                if let Some(rules::Action::Place(h)) = mv.map(|m| m.action) {
                    if h == Hole::parse(hole).unwrap() {
                        result = Some(target == Move::Known(Value::LOST_NOW));
                    }
                }
            });
            result.expect("the placement is legal")
        };
        // Three in a row in the upper world, through the placed piece: a win.
        assert!(wins("ww..,....,....,..../bb.,...,... white", "u20"));
        // Three in the lower world, diagonally.
        assert!(wins("b...,....,....,..../w..,.w.,b.. white", "l22"));
        // Four in a row is not a win.
        assert!(!wins("ww.w,....,....,..../bb.,...,b.. white", "u20"));
        // Three across the two worlds is not a row.
        assert!(!wins("ww..,....,....,..../b..,b..,... white", "l20"));
        // A row elsewhere, not through the placed piece, does not win under this reading (it
        // would if every row after the ply counted).
        assert!(!wins("www.,....,....,..../bbb,...,... white", "u33"));
        let every_row = Simpei::new(RowRule::AfterPly).shaped(RowShape::OwnFourthExcluded);
        let pos = Position::parse("www.,....,....,..../bbb,...,... white").unwrap();
        let mut wins_far_away = false;
        every_row.plies(&pos, |mv, target| {
            if mv.map(|m| m.action) == Some(rules::Action::Place(Hole::parse("u33").unwrap())) {
                wins_far_away = target == Move::Known(Value::LOST_NOW);
            }
        });
        assert!(wins_far_away);
    }

    /// Positions of the 8-piece layer from a fixed pseudo-random sequence.
    fn sample(count: usize) -> Vec<(u32, u32)> {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut out = Vec::new();
        while out.len() < count {
            let mut pick = |taken: u32| loop {
                let mut mask = 0u32;
                while mask.count_ones() < PIECES {
                    mask |= 1 << (next() % HOLES as u64);
                }
                if mask & taken == 0 {
                    return mask;
                }
            };
            let white = pick(0);
            let black = pick(white);
            out.push((white, black));
        }
        out
    }

    /// The un-moves of a position are exactly the canonical positions with an in-stage move
    /// into its orbit: every move found forward is found backward, and every un-move is a
    /// move forward.
    #[test]
    fn unmoves_invert_moves_under_every_row_rule() {
        let readings = RowRule::ALL
            .into_iter()
            .map(|rows| (rows, RowShape::OwnFourthExcluded))
            .chain(RowShape::ALL.into_iter().flat_map(|shape| {
                [RowRule::AfterPly, RowRule::AfterPlyEitherOpponentFirst].map(|rows| (rows, shape))
            }));
        for (rows, shape) in readings {
            let game = Simpei::new(rows).shaped(shape);
            let positions: Vec<(u32, u32)> = sample(150)
                .into_iter()
                .map(|(w, b)| canonical(&game.geometry, w, b))
                .collect();
            for &(white, black) in &positions {
                let (slice, key) = (Simpei::slice_of(white, black), Simpei::key_of(white, black));
                for side in Side::BOTH {
                    let mut targets = HashSet::new();
                    game.moves(side, slice, key, |mv| {
                        if let Move::InStage(to, to_key) = mv {
                            targets.insert((to, to_key));
                        }
                    });
                    for &(to, to_key) in &targets {
                        let mut back = HashSet::new();
                        game.unmoves(side.other(), to, to_key, |s, k, i| {
                            assert_eq!(game.index(s, k), i);
                            back.insert((s, k));
                        });
                        assert!(
                            back.contains(&(slice, key)),
                            "{rows:?}: {white:#x} {black:#x} {side:?} -> {to_key:#x} not un-made"
                        );
                        for (s, k) in back {
                            let mut found = false;
                            game.moves(side, s, k, |mv| found |= mv == Move::InStage(to, to_key));
                            assert!(found, "{rows:?}: un-move {k:#x} has no move to {to_key:#x}");
                        }
                    }
                }
            }
        }
    }
}
