//! The board: 25 holes in two worlds, drawn on one 7x7 lattice.
//!
//! Upper hole U(r, c) (r, c = 0..3) sits at lattice point (2c, 2r) and lower hole L(r, c)
//! (r, c = 0..2) at (2c + 1, 2r + 1), the centre of the square of U(r, c), U(r, c + 1),
//! U(r + 1, c) and U(r + 1, c + 1). A piece moves along the diagonal lines joining a lower hole
//! to those four upper holes, so every move changes world. Rows of three and clipping look
//! along straight lines *inside* one world: horizontal, vertical and diagonal, as in reversi.
//!
//! Holes are numbered 0..16 for the upper world (`4r + c`) and 16..25 for the lower world
//! (`16 + 3r + c`); a set of holes is a `u32` mask. Holes are named as a person reads them
//! (see [`Hole::name`]): the world's letter, then the column and the row counted from 0,
//! `u30` being the upper world's top right hole — the column-then-row convention of every
//! coordinate in `retro`.

/// Number of holes.
pub const HOLES: usize = 25;
/// Number of upper-world holes (they come first).
pub const UPPER: usize = 16;
/// Mask of every hole.
pub const ALL: u32 = (1 << HOLES) - 1;
/// Mask of the upper world.
pub const UPPER_MASK: u32 = (1 << UPPER) - 1;

/// One of the two worlds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum World {
    /// The 4x4 upper world.
    Upper,
    /// The 3x3 lower world.
    Lower,
}

impl World {
    /// Holes per side of the world's square grid.
    pub fn size(self) -> usize {
        match self {
            World::Upper => 4,
            World::Lower => 3,
        }
    }

    /// The letter that starts its holes' names.
    pub fn letter(self) -> char {
        match self {
            World::Upper => 'u',
            World::Lower => 'l',
        }
    }
}

/// A hole, `0..25`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hole(pub u8);

impl Hole {
    /// The hole of `world` at row `r`, column `c`.
    pub fn at(world: World, r: usize, c: usize) -> Hole {
        match world {
            World::Upper => Hole((4 * r + c) as u8),
            World::Lower => Hole((UPPER + 3 * r + c) as u8),
        }
    }

    /// Its world.
    pub fn world(self) -> World {
        if (self.0 as usize) < UPPER {
            World::Upper
        } else {
            World::Lower
        }
    }

    /// Its row and column inside its world.
    pub fn row_col(self) -> (usize, usize) {
        match self.world() {
            World::Upper => (self.0 as usize / 4, self.0 as usize % 4),
            World::Lower => ((self.0 as usize - UPPER) / 3, (self.0 as usize - UPPER) % 3),
        }
    }

    /// Its bit in a hole mask.
    pub fn bit(self) -> u32 {
        1 << self.0
    }

    /// Its name: world letter, column, row (`u30`, `l11`).
    pub fn name(self) -> String {
        let (r, c) = self.row_col();
        format!("{}{c}{r}", self.world().letter())
    }

    /// The hole named `name` ([`Hole::name`]).
    pub fn parse(name: &str) -> Option<Hole> {
        let mut chars = name.chars();
        let world = match chars.next()? {
            'u' | 'U' => World::Upper,
            'l' | 'L' => World::Lower,
            _ => return None,
        };
        let c = chars.next()?.to_digit(10)? as usize;
        let r = chars.next()?.to_digit(10)? as usize;
        (chars.next().is_none() && r < world.size() && c < world.size())
            .then(|| Hole::at(world, r, c))
    }

    /// Every hole, in number order.
    pub fn all() -> impl Iterator<Item = Hole> {
        (0..HOLES as u8).map(Hole)
    }
}

/// The holes of a mask, lowest first.
pub fn holes(mut mask: u32) -> impl Iterator<Item = Hole> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let h = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            Hole(h)
        })
    })
}

/// The eight directions of a line inside a world, as (row, column) steps.
pub const DIRECTIONS: [(isize, isize); 8] = [
    (0, 1),
    (1, 1),
    (1, 0),
    (1, -1),
    (0, -1),
    (-1, -1),
    (-1, 0),
    (-1, 1),
];

/// The board's fixed relations, computed once.
pub struct Geometry {
    /// `neighbours[h]`: the holes of the other world joined to `h` by a line (where a piece on
    /// `h` can move).
    pub neighbours: [u32; HOLES],
    /// `rays[h][d]`: the holes from `h` (excluded) in direction `d` inside `h`'s world, nearest
    /// first.
    pub rays: [[Vec<Hole>; 8]; HOLES],
    /// Every run of three consecutive holes on a straight line inside a world, as
    /// `(three, ends)`: the mask of the three holes, and the mask of the holes just beyond
    /// either end on the same line (a fourth piece there makes a four, not a three).
    pub threes: Vec<(u32, u32)>,
    /// `upper_rows[m / 64] >> (m % 64) & 1`: whether the upper-world holes `m` (bits
    /// `0..16`) hold exactly three in a row; what [`Geometry::has_three`] reads.
    upper_rows: Vec<u64>,
    /// The same for the lower world (bits `16..25` shifted down).
    lower_rows: [u64; 8],
    /// Like `upper_rows` and `lower_rows`, for "exactly three own pieces on one line" (not
    /// necessarily consecutive): what [`Geometry::has_three_on_a_line`] reads.
    line_rows: (Vec<u64>, [u64; 8]),
    /// The 8 symmetries of the square acting on both worlds at once, as hole permutations;
    /// element 0 is the identity.
    pub symmetries: [[u8; HOLES]; 8],
    /// The same symmetries as bit permutations of hole masks (one lookup per byte).
    permutations: Vec<retro_index::BitPermutation>,
}

impl Geometry {
    /// Builds the board's relations.
    pub fn new() -> Geometry {
        let mut neighbours = [0u32; HOLES];
        for r in 0..3 {
            for c in 0..3 {
                let lower = Hole::at(World::Lower, r, c);
                for (dr, dc) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                    let upper = Hole::at(World::Upper, r + dr, c + dc);
                    neighbours[lower.0 as usize] |= upper.bit();
                    neighbours[upper.0 as usize] |= lower.bit();
                }
            }
        }
        let rays: [[Vec<Hole>; 8]; HOLES] = std::array::from_fn(|h| {
            let hole = Hole(h as u8);
            let (r, c) = hole.row_col();
            let n = hole.world().size() as isize;
            std::array::from_fn(|d| {
                let (dr, dc) = DIRECTIONS[d];
                let mut ray = Vec::new();
                let (mut y, mut x) = (r as isize + dr, c as isize + dc);
                while (0..n).contains(&y) && (0..n).contains(&x) {
                    ray.push(Hole::at(hole.world(), y as usize, x as usize));
                    y += dr;
                    x += dc;
                }
                ray
            })
        });
        // Every maximal straight line of at least three holes inside a world, in order.
        let mut lines: Vec<Vec<Hole>> = Vec::new();
        for world in [World::Upper, World::Lower] {
            let n = world.size() as isize;
            let inside = |y: isize, x: isize| (0..n).contains(&y) && (0..n).contains(&x);
            // Directions 0..4 cover every line once (the other four are their reverses).
            for &(dr, dc) in &DIRECTIONS[..4] {
                for y in 0..n {
                    for x in 0..n {
                        if inside(y - dr, x - dc) {
                            continue; // not the start of the line
                        }
                        let (mut cy, mut cx, mut line) = (y, x, Vec::new());
                        while inside(cy, cx) {
                            line.push(Hole::at(world, cy as usize, cx as usize));
                            cy += dr;
                            cx += dc;
                        }
                        if line.len() >= 3 {
                            lines.push(line);
                        }
                    }
                }
            }
        }
        let mask_of = |holes: &mut dyn Iterator<Item = &Hole>| holes.fold(0u32, |m, h| m | h.bit());
        // Every run of three consecutive holes of a line, with the holes just beyond it.
        let threes: Vec<(u32, u32)> = lines
            .iter()
            .flat_map(|line| {
                (0..=line.len() - 3).map(move |i| {
                    let beyond = [i.checked_sub(1), Some(i + 3).filter(|&j| j < line.len())];
                    (
                        mask_of(&mut line[i..i + 3].iter()),
                        mask_of(&mut beyond.into_iter().flatten().map(|j| &line[j])),
                    )
                })
            })
            .collect();
        let lines: Vec<u32> = lines.iter().map(|l| mask_of(&mut l.iter())).collect();
        let symmetries = std::array::from_fn(|g| {
            std::array::from_fn(|h| {
                let hole = Hole(h as u8);
                let (r, c) = hole.row_col();
                let (r, c) = transform(g, r, c, hole.world().size() - 1);
                Hole::at(hole.world(), r, c).0
            })
        });
        let permutations = symmetries
            .iter()
            .map(|map: &[u8; HOLES]| {
                retro_index::BitPermutation::new(&map.iter().map(|&h| h as u32).collect::<Vec<_>>())
            })
            .collect();
        let exactly_three = |pieces: u32| {
            threes
                .iter()
                .any(|&(three, ends)| pieces & three == three && pieces & ends == 0)
        };
        let three_on_a_line =
            |pieces: u32| lines.iter().any(|&line| (pieces & line).count_ones() == 3);
        let tables = |has: &dyn Fn(u32) -> bool| {
            let mut upper = vec![0u64; (1 << UPPER) / 64];
            for m in 0u32..1 << UPPER {
                if has(m) {
                    upper[m as usize / 64] |= 1 << (m % 64);
                }
            }
            let mut lower = [0u64; 8];
            for m in 0u32..1 << (HOLES - UPPER) {
                if has(m << UPPER) {
                    lower[m as usize / 64] |= 1 << (m % 64);
                }
            }
            (upper, lower)
        };
        let (upper_rows, lower_rows) = tables(&exactly_three);
        let line_rows = tables(&three_on_a_line);
        Geometry {
            neighbours,
            rays,
            threes,
            upper_rows,
            lower_rows,
            line_rows,
            symmetries,
            permutations,
        }
    }

    /// Whether `pieces` hold exactly three in a row inside one world: three consecutive holes
    /// of a straight line all occupied, and neither hole just beyond them on that line (a four
    /// is not a three). Two table lookups.
    #[inline]
    pub fn has_three(&self, pieces: u32) -> bool {
        let up = pieces & UPPER_MASK;
        let low = pieces >> UPPER;
        self.upper_rows[up as usize / 64] >> (up % 64) & 1 == 1
            || self.lower_rows[low as usize / 64] >> (low % 64) & 1 == 1
    }

    /// Whether `pieces` hold exactly three pieces on one straight line of a world, consecutive
    /// or not (another reading of "exactly three in a row"). Two table lookups.
    #[inline]
    pub fn has_three_on_a_line(&self, pieces: u32) -> bool {
        let up = pieces & UPPER_MASK;
        let low = pieces >> UPPER;
        self.line_rows.0[up as usize / 64] >> (up % 64) & 1 == 1
            || self.line_rows.1[low as usize / 64] >> (low % 64) & 1 == 1
    }

    /// Whether `pieces` hold a row of exactly three with a hole of `through` in it.
    pub fn three_through(&self, pieces: u32, through: u32) -> bool {
        // Most piece sets have no row at all: one lookup answers them.
        self.has_three(pieces)
            && self.threes.iter().any(|&(three, ends)| {
                pieces & three == three && pieces & ends == 0 && three & through != 0
            })
    }

    /// The image of hole mask `mask` under symmetry `g`.
    #[inline]
    pub fn apply(&self, g: usize, mask: u32) -> u32 {
        self.permutations[g].apply(mask as u64) as u32
    }
}

impl Default for Geometry {
    fn default() -> Self {
        Geometry::new()
    }
}

/// Element `g` of the symmetry group of the square on a grid whose last row and column are
/// `last`: the four rotations, then the four reflections.
fn transform(g: usize, r: usize, c: usize, last: usize) -> (usize, usize) {
    match g {
        0 => (r, c),
        1 => (c, last - r),
        2 => (last - r, last - c),
        3 => (last - c, r),
        4 => (r, last - c),
        5 => (last - r, c),
        6 => (c, r),
        _ => (last - c, last - r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_tables_agree_with_the_list_of_threes() {
        let g = Geometry::new();
        let direct = |pieces: u32| {
            g.threes
                .iter()
                .any(|&(three, ends)| pieces & three == three && pieces & ends == 0)
        };
        for up in 0u32..1 << UPPER {
            for low in [0u32, 0b111, 0b1_0101_0001, 0b111_000_000, 0b1_1111_1111] {
                let pieces = up | low << UPPER;
                assert_eq!(g.has_three(pieces), direct(pieces), "{pieces:#x}");
            }
        }
        for low in 0u32..1 << (HOLES - UPPER) {
            assert_eq!(g.has_three(low << UPPER), direct(low << UPPER));
        }
    }

    #[test]
    fn moves_change_world_and_lines_stay_inside_one() {
        let g = Geometry::new();
        // A lower hole touches four upper holes; an upper corner one lower hole, an upper
        // centre hole four.
        assert_eq!(
            g.neighbours[Hole::at(World::Lower, 1, 1).0 as usize].count_ones(),
            4
        );
        assert_eq!(
            g.neighbours[Hole::at(World::Upper, 0, 0).0 as usize].count_ones(),
            1
        );
        assert_eq!(
            g.neighbours[Hole::at(World::Upper, 1, 2).0 as usize].count_ones(),
            4
        );
        for h in Hole::all() {
            for n in holes(g.neighbours[h.0 as usize]) {
                assert_ne!(n.world(), h.world());
            }
            for ray in &g.rays[h.0 as usize] {
                assert!(ray.iter().all(|r| r.world() == h.world()));
            }
        }
        // Runs of three: upper 4x4 has 2 per row/column (16), 2+2 on the long diagonals and
        // 1+1+1+1 on the diagonals of length three (8): 24; lower 3x3: 8.
        assert_eq!(g.threes.len(), 32);
    }

    #[test]
    fn symmetries_form_the_group_and_keep_the_lines() {
        let g = Geometry::new();
        for s in 0..8 {
            let mut seen = [false; HOLES];
            for h in 0..HOLES {
                seen[g.symmetries[s][h] as usize] = true;
            }
            assert!(seen.iter().all(|&x| x), "symmetry {s} is a permutation");
            for h in Hole::all() {
                let image = g.symmetries[s][h.0 as usize] as usize;
                assert_eq!(g.apply(s, g.neighbours[h.0 as usize]), g.neighbours[image]);
            }
            let mut images: Vec<(u32, u32)> = g
                .threes
                .iter()
                .map(|&(m, e)| (g.apply(s, m), g.apply(s, e)))
                .collect();
            let mut threes = g.threes.clone();
            images.sort_unstable();
            threes.sort_unstable();
            assert_eq!(
                images, threes,
                "symmetry {s} maps runs of three onto runs of three"
            );
        }
    }

    #[test]
    fn hole_names_round_trip() {
        for h in Hole::all() {
            assert_eq!(Hole::parse(&h.name()), Some(h));
        }
        assert_eq!(Hole::at(World::Upper, 0, 3).name(), "u30");
        assert_eq!(Hole::parse("l33"), None);
        assert_eq!(Hole::parse("x00"), None);
    }
}
