//! *Ring hop*: a two-sided game with captures both ways, cycles and draws — the worked example
//! of how a game meets the engine, as a win/draw/loss game ([`Game`]) and as a score game
//! ([`ScoreGame`]: a point per capture).
//!
//! **Rules.** `n` cells form a ring (cell `i` touches `i ± 1 mod n`). White (the first side)
//! and black (the second) each have at most `max_tokens` tokens on distinct cells. The side to
//! move moves one of its tokens either one step to an adjacent empty cell, or jumps over an
//! adjacent enemy token to the empty cell just beyond it, capturing that token. A side without a
//! move (in particular without tokens) has lost. Steps can be undone, so play can go on
//! forever: such positions are draws.
//!
//! **How it meets the engine** ([`Game`]), in the order a new game answers the questions:
//!
//! 1. *Key*: a position's pieces as a `u64` — white's cells in bits `0..16`, black's in bits
//!    `16..32`. The side to move is not part of the key: every slice holds both sides.
//! 2. *Stages*: a capture removes a token for good, so positions are grouped by `(white
//!    tokens, black tokens)`; a stage depends on the two stages with one token fewer. Moves
//!    that stay in a stage are [`Move::InStage`], captures are [`Move::Final`].
//! 3. *Slices*: each stage is cut in two by the parity of the sum of white's cells, so that
//!    white's steps cross slices (what slices by black's location do in Sixteen Musashi).
//! 4. *Index*: a slice's keys in increasing order, numbered densely (a sorted table here; a
//!    real game computes ranks, e.g. with `retro-index`).
//! 5. *Symmetry*: the reflection `i → -i mod n` maps the ring onto itself. A key is canonical
//!    when it is not larger than its mirror image; every position a move or un-move returns is
//!    canonical, and the other slots are never solved.
//! 6. *Un-moves*: the positions with a step into the given position's orbit, i.e. a step of the
//!    side that just moved taken back, from the position or from its mirror image. Captures are
//!    never un-made: they come from later stages.

use retro_engine::margin::ScoreGame;
use retro_engine::{Game, Move, Side, SliceId, Stage};
use std::ops::Range;

/// Bit offset of black's cells in a key.
const BLACK_SHIFT: u32 = 16;

/// How ring hop is valued: the same rules, two solvers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingValue {
    /// Win, draw or loss with distance (a side without a move loses).
    WinDrawLoss,
    /// The score margin: a point per capture, endless play and the end of the game add 0.
    ScoreMargin,
}

/// Ring hop on `n` cells with at most `max_tokens` tokens a side.
pub struct RingHop {
    n: u32,
    max_tokens: u32,
    /// Which solver values the game (recorded in its definition).
    value: RingValue,
    /// `(white tokens, black tokens)` of each stage, in solve order.
    stages: Vec<(u32, u32)>,
    /// Every key of each slice, increasing (slice id = 2 × stage + parity).
    keys: Vec<Vec<u64>>,
}

impl RingHop {
    /// The game on `n` ring cells (3 to 16) with up to `max_tokens` tokens a side.
    pub fn new(n: u32, max_tokens: u32) -> Result<RingHop, String> {
        if !(3..=16).contains(&n) {
            return Err(format!("ring of {n} cells: 3 to 16 are supported"));
        }
        if 2 * max_tokens > n {
            return Err(format!("{max_tokens} tokens a side do not fit {n} cells"));
        }
        let mut stages = Vec::new();
        for total in 0..=2 * max_tokens {
            for white in 0..=total.min(max_tokens) {
                if total - white <= max_tokens {
                    stages.push((white, total - white));
                }
            }
        }
        let mut keys = vec![Vec::new(); 2 * stages.len()];
        for white in 0u64..1 << n {
            for black in 0u64..1 << n {
                if white & black != 0 {
                    continue;
                }
                let counts = (white.count_ones(), black.count_ones());
                if let Some(stage) = stages.iter().position(|&s| s == counts) {
                    let key = white | black << BLACK_SHIFT;
                    keys[2 * stage + parity(white) as usize].push(key);
                }
            }
        }
        for slice in &mut keys {
            slice.sort_unstable();
        }
        Ok(RingHop {
            n,
            max_tokens,
            value: RingValue::WinDrawLoss,
            stages,
            keys,
        })
    }

    /// The same game valued by `value`.
    pub fn valued_by(self, value: RingValue) -> RingHop {
        RingHop { value, ..self }
    }

    /// How the game is valued.
    pub fn value(&self) -> RingValue {
        self.value
    }

    /// Cells of the ring.
    pub fn cells(&self) -> u32 {
        self.n
    }

    /// Most tokens a side may have.
    pub fn max_tokens(&self) -> u32 {
        self.max_tokens
    }

    /// The key of white's and black's cell masks.
    pub fn key_of(white: u64, black: u64) -> u64 {
        white | black << BLACK_SHIFT
    }

    /// The white and black cell masks of a key.
    pub fn masks(key: u64) -> (u64, u64) {
        (key & 0xFFFF, key >> BLACK_SHIFT)
    }

    /// Where a position is stored: its canonical key's slice and the canonical key.
    pub fn locate(&self, key: u64) -> (SliceId, u64) {
        let key = key.min(self.mirror(key));
        let (white, black) = RingHop::masks(key);
        let stage = self
            .stages
            .iter()
            .position(|&s| s == (white.count_ones(), black.count_ones()))
            .expect("token counts within the game's limits");
        (SliceId((2 * stage) as u32 + parity(white)), key)
    }

    /// Every move of the side whose cells are `own` (the other side's are `other`), as the
    /// new `(own, other)` masks and whether the move captured. The one definition of the rules.
    pub fn steps(&self, own: u64, other: u64, mut visit: impl FnMut(u64, u64, bool)) {
        let occupied = own | other;
        for from in 0..self.n {
            if own >> from & 1 == 0 {
                continue;
            }
            for dir in [1, self.n - 1] {
                let to = (from + dir) % self.n;
                if occupied >> to & 1 == 0 {
                    visit(own ^ (1 << from) ^ (1 << to), other, false);
                } else if other >> to & 1 == 1 {
                    let beyond = (to + dir) % self.n;
                    if occupied >> beyond & 1 == 0 {
                        visit(own ^ (1 << from) ^ (1 << beyond), other ^ (1 << to), true);
                    }
                }
            }
        }
    }

    /// The image of a key under the reflection `i → -i mod n`.
    fn mirror(&self, key: u64) -> u64 {
        let (white, black) = RingHop::masks(key);
        let reflect = |mask: u64| {
            (0..self.n)
                .filter(|&i| mask >> i & 1 == 1)
                .fold(0u64, |m, i| m | 1 << ((self.n - i) % self.n))
        };
        RingHop::key_of(reflect(white), reflect(black))
    }

    /// `(own, other)` masks of `key` for `side`, and back.
    fn sided(side: Side, key: u64) -> (u64, u64) {
        let (white, black) = RingHop::masks(key);
        match side {
            Side::First => (white, black),
            Side::Second => (black, white),
        }
    }

    fn unsided(side: Side, own: u64, other: u64) -> u64 {
        match side {
            Side::First => RingHop::key_of(own, other),
            Side::Second => RingHop::key_of(other, own),
        }
    }
}

/// Parity of the sum of the cells of `mask`.
fn parity(mask: u64) -> u32 {
    (0..16).filter(|&i| mask >> i & 1 == 1).sum::<u32>() % 2
}

impl Game for RingHop {
    fn stages(&self) -> Vec<Stage> {
        self.stages
            .iter()
            .enumerate()
            .map(|(i, &(white, black))| Stage {
                name: format!("white={white} black={black}"),
                slices: vec![SliceId(2 * i as u32), SliceId(2 * i as u32 + 1)],
                depends_on: self
                    .stages
                    .iter()
                    .enumerate()
                    .filter(|(_, &s)| {
                        (white > 0 && s == (white - 1, black))
                            || (black > 0 && s == (white, black - 1))
                    })
                    .map(|(d, _)| d)
                    .collect(),
            })
            .collect()
    }

    fn slice_count(&self) -> usize {
        self.keys.len()
    }

    fn slice_len(&self, slice: SliceId) -> u64 {
        self.keys[slice.0 as usize].len() as u64
    }

    fn slice_name(&self, slice: SliceId) -> String {
        let (white, black) = self.stages[slice.0 as usize / 2];
        format!("white={white} black={black} parity={}", slice.0 % 2)
    }

    fn for_each_key(&self, slice: SliceId, range: Range<u64>, mut visit: impl FnMut(u64, u64)) {
        let keys = &self.keys[slice.0 as usize];
        for index in range {
            visit(index, keys[index as usize]);
        }
    }

    fn index(&self, slice: SliceId, key: u64) -> u64 {
        let keys = &self.keys[slice.0 as usize];
        // A key of another slice maps past the end, which callers report.
        keys.binary_search(&key)
            .map_or(keys.len() as u64, |i| i as u64)
    }

    fn key(&self, slice: SliceId, index: u64) -> u64 {
        self.keys[slice.0 as usize][index as usize]
    }

    fn is_canonical(&self, _slice: SliceId, key: u64) -> bool {
        key <= self.mirror(key)
    }

    fn moves(&self, side: Side, _slice: SliceId, key: u64, mut visit: impl FnMut(Move)) {
        let (own, other) = RingHop::sided(side, key);
        self.steps(own, other, |own, other, captured| {
            let (slice, key) = self.locate(RingHop::unsided(side, own, other));
            visit(if captured {
                Move::Final(slice, key)
            } else {
                Move::InStage(slice, key)
            });
        });
    }

    fn unmoves(
        &self,
        side: Side,
        _slice: SliceId,
        key: u64,
        mut visit: impl FnMut(SliceId, u64, u64),
    ) {
        // The side that just moved is the other one; take back one of its steps, from the
        // position and from its mirror image (both are the same position up to symmetry).
        let mover = side.other();
        let image = self.mirror(key);
        let images = if image == key {
            &[key][..]
        } else {
            &[key, image][..]
        };
        for &k in images {
            let (own, other) = RingHop::sided(mover, k);
            let occupied = own | other;
            for to in (0..self.n).filter(|&c| own >> c & 1 == 1) {
                for dir in [1, self.n - 1] {
                    let from = (to + dir) % self.n;
                    if occupied >> from & 1 == 0 {
                        let before = own ^ (1 << to) ^ (1 << from);
                        let (slice, key) = self.locate(RingHop::unsided(mover, before, other));
                        visit(slice, key, self.index(slice, key));
                    }
                }
            }
        }
    }
}

/// Ring hop scored: each capture is worth a point to the capturer, a side without a move ends
/// the game (margin 0 from there), endless play counts 0. The worked example of a score game:
/// captures in both directions leave the stage, steps inside it can cycle.
impl ScoreGame for RingHop {
    fn margin_bound(&self, stage: &Stage) -> i32 {
        // At most every token on the ring is captured.
        let i = stage.slices[0].0 as usize / 2;
        let (white, black) = self.stages[i];
        (white + black) as i32
    }

    fn scored_moves(
        &self,
        side: Side,
        _slice: SliceId,
        key: u64,
        mut visit: impl FnMut(Move, i32),
    ) {
        let (own, other) = RingHop::sided(side, key);
        self.steps(own, other, |own, other, captured| {
            let (slice, key) = self.locate(RingHop::unsided(side, own, other));
            if captured {
                visit(Move::Final(slice, key), 1);
            } else {
                visit(Move::InStage(slice, key), 0);
            }
        });
    }
}
