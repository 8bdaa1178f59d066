//! The rules: rows of exactly three, clipping, and every legal move.
//!
//! A ply places a piece from hand (while fewer than eight pieces are on the board) or moves an
//! own piece along a line to an empty hole of the other world. Then every straight line inside
//! the world where the piece now stands that runs from it over one or more adjacent enemy
//! pieces to another own piece **clips** those enemy pieces; the mover puts each clipped piece
//! back on an empty hole of either world, never on a hole where a clipped piece stood.
//! Relocated pieces clip nothing. A player without a move passes (only possible once all
//! pieces are placed: eight pieces never fill 25 holes).
//!
//! Who has won, and when that is checked, is a reading of the rules the published tables
//! decide; it belongs to the solver's definition of the game, not to move generation. This
//! module supplies the facts it is built from: [`has_three`].

use crate::board::{holes, Geometry, Hole, ALL};
use crate::position::{Colour, Position};
use retro_index::next_subset;

/// What a ply does before clipping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// A piece from hand put on a hole.
    Place(Hole),
    /// A piece moved from the first hole to the second (in the other world).
    Step(Hole, Hole),
    /// No move: the turn passes.
    Pass,
}

/// A ply: its action, the enemy pieces it clipped and the holes it put them on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// Placement, step or pass.
    pub action: Action,
    /// Holes of the clipped enemy pieces (before relocation).
    pub clipped: u32,
    /// Holes the clipped pieces were put on.
    pub relocated: u32,
}

impl Move {
    /// Notation: `u12` (placement), `u12-l11` (step) or `pass`, followed for a clipping ply
    /// by ` x` and the clipped holes, ` >` and the holes they were put on:
    /// `u12-l11 x u02,u22 > u33,l00`.
    pub fn notation(&self) -> String {
        let mut s = match self.action {
            Action::Place(h) => h.name(),
            Action::Step(from, to) => format!("{}-{}", from.name(), to.name()),
            Action::Pass => "pass".to_string(),
        };
        if self.clipped != 0 {
            s.push_str(&format!(
                " x {} > {}",
                crate::position::hole_list(self.clipped),
                crate::position::hole_list(self.relocated)
            ));
        }
        s
    }
}

/// Whether `pieces` hold exactly three in a row inside one world: three consecutive holes of
/// a straight line all occupied, and neither hole just beyond them on that line (a four is not
/// a three).
#[inline]
pub fn has_three(geometry: &Geometry, pieces: u32) -> bool {
    geometry.has_three(pieces)
}

/// The enemy pieces clipped by an own piece arriving on `at`: along every straight line of
/// `at`'s world, a run of one or more enemy pieces followed by an own piece.
pub fn clipped(geometry: &Geometry, own: u32, enemy: u32, at: Hole) -> u32 {
    let mut clipped = 0;
    for ray in &geometry.rays[at.0 as usize] {
        let mut run = 0;
        for hole in ray {
            if enemy & hole.bit() != 0 {
                run |= hole.bit();
            } else {
                if own & hole.bit() != 0 {
                    clipped |= run;
                }
                break;
            }
        }
    }
    clipped
}

/// Every legal move of the side to move with the position it leads to (the other side to
/// move): the placements or steps, each with every way to put back what it clipped; a single
/// pass when there is none.
pub fn moves(geometry: &Geometry, pos: &Position, mut visit: impl FnMut(Move, Position)) {
    let mover = pos.to_move;
    let (own, enemy) = (pos.of(mover), pos.of(mover.other()));
    let mut any = false;
    let mut finish = |action: Action, own: u32, at: Hole| {
        any = true;
        let clip = clipped(geometry, own, enemy, at);
        if clip == 0 {
            let next = Position::from_sides(mover, own, enemy, mover.other());
            visit(
                Move {
                    action,
                    clipped: 0,
                    relocated: 0,
                },
                next,
            );
            return;
        }
        let remaining = enemy & !clip;
        let free = ALL & !(own | remaining) & !clip;
        for_each_subset(free, clip.count_ones(), |targets| {
            let next = Position::from_sides(mover, own, remaining | targets, mover.other());
            visit(
                Move {
                    action,
                    clipped: clip,
                    relocated: targets,
                },
                next,
            );
        });
    };
    if pos.placing() {
        for at in holes(ALL & !(own | enemy)) {
            finish(Action::Place(at), own | at.bit(), at);
        }
    } else {
        for from in holes(own) {
            for to in holes(geometry.neighbours[from.0 as usize] & !(own | enemy)) {
                finish(Action::Step(from, to), own ^ from.bit() ^ to.bit(), to);
            }
        }
    }
    if !any {
        visit(
            Move {
                action: Action::Pass,
                clipped: 0,
                relocated: 0,
            },
            Position {
                to_move: mover.other(),
                ..*pos
            },
        );
    }
}

/// Calls `visit` with every `k`-hole subset of `holes_mask`.
fn for_each_subset(holes_mask: u32, k: u32, mut visit: impl FnMut(u32)) {
    let list: Vec<u32> = holes(holes_mask).map(|h| h.bit()).collect();
    if (k as usize) > list.len() {
        return;
    }
    let end = 1u64 << list.len();
    let mut pick: u64 = (1u64 << k) - 1;
    while pick < end {
        let mut targets = 0;
        let mut bits = pick;
        while bits != 0 {
            targets |= list[bits.trailing_zeros() as usize];
            bits &= bits - 1;
        }
        visit(targets);
        if k == 0 {
            break;
        }
        pick = next_subset(pick);
    }
}

/// The side that has exactly three in a row, if one side has and the other has not.
pub fn three_of(geometry: &Geometry, pos: &Position) -> Option<Colour> {
    match (
        has_three(geometry, pos.white),
        has_three(geometry, pos.black),
    ) {
        (true, false) => Some(Colour::White),
        (false, true) => Some(Colour::Black),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(text: &str) -> Position {
        Position::parse(text).unwrap()
    }

    fn hole(name: &str) -> Hole {
        Hole::parse(name).unwrap()
    }

    #[test]
    fn exactly_three_in_a_row_inside_one_world() {
        let g = Geometry::new();
        let p = pos("www.,....,....,..../...,bbb,... white");
        assert!(has_three(&g, p.white));
        assert!(has_three(&g, p.black));
        // Four in a row is not a three.
        let four = pos("wwww,....,....,..../bbb,...,... black");
        assert!(!has_three(&g, four.white));
        assert!(has_three(&g, four.black));
        // A diagonal of the upper world counts; three across the two worlds does not.
        let diagonal = pos("w...,.w..,..w.,..../bbb,...,... white");
        assert!(has_three(&g, diagonal.white));
        let across = pos("ww..,....,....,..../w..,bbb,... white");
        assert!(!has_three(&g, across.white));
    }

    #[test]
    fn clipping_runs_along_the_lines_of_one_world() {
        let g = Geometry::new();
        let own = hole("u00").bit() | hole("u30").bit();
        let enemy = hole("u10").bit() | hole("u20").bit();
        assert_eq!(clipped(&g, own, enemy, hole("u30")), enemy);
        // No own piece beyond the run: nothing clipped.
        assert_eq!(clipped(&g, hole("u30").bit(), enemy, hole("u30")), 0);
        // Diagonals clip too; the other world does not take part.
        let own = hole("u00").bit() | hole("u22").bit();
        assert_eq!(
            clipped(&g, own, hole("u11").bit(), hole("u22")),
            hole("u11").bit()
        );
        assert_eq!(
            clipped(
                &g,
                hole("l00").bit() | hole("u22").bit(),
                hole("u11").bit(),
                hole("u22")
            ),
            0
        );
    }

    /// From every hole, in every direction of its world that has room: a run of one enemy piece
    /// and a run of two, each closed by an own piece, are clipped; two lines at once clip both.
    #[test]
    fn clipping_in_every_direction_of_both_worlds() {
        let g = Geometry::new();
        let mut directions_seen = [[false; 8]; 2];
        for h in Hole::all() {
            let mut lines = Vec::new();
            for (d, ray) in g.rays[h.0 as usize].iter().enumerate() {
                for run in 1..ray.len() {
                    let enemy = ray[..run].iter().fold(0, |m, x| m | x.bit());
                    let own = ray[run].bit();
                    assert_eq!(clipped(&g, own | h.bit(), enemy, h), enemy, "{h:?} dir {d}");
                    // The run must be closed by an own piece: an empty hole or the edge breaks it.
                    assert_eq!(clipped(&g, h.bit(), enemy, h), 0);
                    directions_seen[(h.world() == crate::board::World::Lower) as usize][d] = true;
                    if run == 1 {
                        lines.push((own, enemy));
                    }
                }
            }
            if let [(own_a, enemy_a), (own_b, enemy_b), ..] = lines[..] {
                assert_eq!(
                    clipped(&g, own_a | own_b | h.bit(), enemy_a | enemy_b, h),
                    enemy_a | enemy_b
                );
            }
        }
        assert_eq!(directions_seen, [[true; 8]; 2]);
    }

    #[test]
    fn clipped_pieces_go_back_into_either_world() {
        let g = Geometry::new();
        // White places l20 next to black l10 with white l00 beyond: black's piece may go to
        // any empty hole of either world but l10.
        let p = pos("w...,....,....,...b/wb.,...,... white");
        let mut targets = 0u32;
        moves(&g, &p, |mv, _| {
            if mv.action == Action::Place(hole("l20")) {
                assert_eq!(mv.clipped, hole("l10").bit());
                targets |= mv.relocated;
            }
        });
        let empty = crate::board::ALL & !(p.white | p.black | hole("l20").bit());
        assert_eq!(targets, empty & !hole("l10").bit());
        assert!(targets & crate::board::UPPER_MASK != 0 && targets >> crate::board::UPPER != 0);
    }

    #[test]
    fn a_clipping_ply_puts_the_pieces_back_anywhere_but_where_they_stood() {
        let g = Geometry::new();
        // White u00, black u10; white to place. Placing on u20 clips u10, which white puts on
        // any of the 22 empty holes but u10; the 22 other placements clip nothing.
        let p = pos("wb..,....,....,..../...,...,... white");
        let (mut plain, mut clipping) = (0, 0);
        moves(&g, &p, |mv, next| {
            assert_eq!(next.to_move, Colour::Black);
            assert_eq!((next.white.count_ones(), next.black.count_ones()), (2, 1));
            if mv.clipped != 0 {
                clipping += 1;
                assert_eq!(mv.action, Action::Place(hole("u20")));
                assert_eq!(mv.clipped, hole("u10").bit());
                assert_eq!(next.black, mv.relocated);
                assert_eq!(next.black & (hole("u10").bit() | next.white), 0);
            } else {
                plain += 1;
            }
        });
        assert_eq!((plain, clipping), (22, 22));
        let mv = Move {
            action: Action::Step(hole("u12"), hole("l11")),
            clipped: hole("u02").bit() | hole("u22").bit(),
            relocated: hole("u33").bit() | hole("l00").bit(),
        };
        assert_eq!(mv.notation(), "u12-l11 x u02,u22 > u33,l00");
    }

    #[test]
    fn a_side_without_a_step_passes() {
        let g = Geometry::new();
        // Black in the four upper corners, white on the lower corners each corner leads to.
        let p = pos("b..b,....,....,b..b/w.w,...,w.w black");
        let mut all = Vec::new();
        moves(&g, &p, |mv, next| all.push((mv, next)));
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].0.action, Action::Pass);
        assert_eq!(
            all[0].1,
            Position {
                to_move: Colour::White,
                ..p
            }
        );
        let white = Position {
            to_move: Colour::White,
            ..p
        };
        let mut steps = 0;
        moves(&g, &white, |mv, _| {
            assert!(matches!(mv.action, Action::Step(..)));
            steps += 1;
        });
        assert!(steps > 0);
    }
}
