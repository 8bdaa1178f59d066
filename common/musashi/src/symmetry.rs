//! The symmetry group of a board, computed from its geometry.
//!
//! A symmetry is one of the 8 isometries of the square lattice (rotations by multiples of 90°
//! and reflections), followed by the translation that keeps the bounding box in place, which
//! maps the point set onto itself and the edge set onto itself. Isometries preserve midpoints,
//! so they also preserve the capture rule; hence symmetric positions have equal values.
//!
//! For indexing, every point orbit has a representative (its lowest point number); every point
//! `b` has a fixed symmetry `to_rep[b]` taking it to its representative, and every representative
//! has the list of non-identity symmetries that fix it (its stabiliser).

use retro_index::{BitPermutation, PermutationSet};

/// The symmetry group of a board and the orbit structure of its points.
#[derive(Clone, Debug)]
pub struct Symmetry {
    /// The group elements as point permutations; element 0 is the identity.
    pub elements: Vec<BitPermutation>,
    /// `rep[p]`: the representative of `p`'s orbit.
    pub rep: Vec<u8>,
    /// `to_rep[p]`: an element (index into `elements`) mapping `p` to `rep[p]`.
    pub to_rep: Vec<u8>,
    /// `stabiliser[p]`: non-identity elements fixing `p` (filled for representatives only).
    pub stabiliser: Vec<Vec<u8>>,
    /// The representatives in increasing order.
    pub reps: Vec<u8>,
    /// `to_rep_all[p]`: every element taking `p` to its representative: `to_rep[p]`, then
    /// `to_rep[p]` followed by each element of the representative's stabiliser. A position's
    /// canonical brown mask is the smallest of the mask's images under these.
    pub to_rep_all: Vec<Vec<u8>>,
    /// `stabiliser_set[p]`: the elements of `stabiliser[p]` as one set, for
    /// [`Symmetry::is_canonical`] (derived from `stabiliser` when the group is built).
    stabiliser_set: Vec<PermutationSet>,
    /// `to_rep_set[p]`: the elements of `to_rep_all[p]` as one set, for
    /// [`Symmetry::canonical`] (derived from `to_rep_all` when the group is built).
    to_rep_set: Vec<PermutationSet>,
}

const LINEAR_MAPS: [[i32; 4]; 8] = [
    [1, 0, 0, 1],
    [0, -1, 1, 0],
    [-1, 0, 0, -1],
    [0, 1, -1, 0],
    [-1, 0, 0, 1],
    [1, 0, 0, -1],
    [0, 1, 1, 0],
    [0, -1, -1, 0],
];

impl Symmetry {
    /// Computes the group of the board given by `points` and `edges`.
    pub fn of(points: &[(u8, u8)], edges: &[(u8, u8)]) -> Symmetry {
        Symmetry::preserving(points, edges, None)
    }

    /// The group of the board given by `points` and `edges` restricted to the symmetries
    /// that map the point set `fixed` (a mask) onto itself, if given: the symmetries of a
    /// variant whose rules single out those points (a trap zone), under which symmetric
    /// positions still have equal values.
    pub fn preserving(points: &[(u8, u8)], edges: &[(u8, u8)], fixed: Option<u64>) -> Symmetry {
        let n = points.len();
        let min_of = |pts: &[(i32, i32)]| {
            (
                pts.iter().map(|p| p.0).min().unwrap_or(0),
                pts.iter().map(|p| p.1).min().unwrap_or(0),
            )
        };
        let original: Vec<(i32, i32)> = points.iter().map(|&(x, y)| (x as i32, y as i32)).collect();
        let (ox, oy) = min_of(&original);
        let mut edge_set: Vec<(u8, u8)> = edges.to_vec();
        edge_set.sort_unstable();
        let mut elements = Vec::new();
        for [a, b, c, d] in LINEAR_MAPS {
            let image: Vec<(i32, i32)> = original
                .iter()
                .map(|&(x, y)| (a * x + b * y, c * x + d * y))
                .collect();
            let (ix, iy) = min_of(&image);
            let map: Option<Vec<u32>> = image
                .iter()
                .map(|&(x, y)| {
                    let q = (x - ix + ox, y - iy + oy);
                    original.iter().position(|&p| p == q).map(|i| i as u32)
                })
                .collect();
            let Some(map) = map else { continue };
            let mut mapped: Vec<(u8, u8)> = edges
                .iter()
                .map(|&(p, q)| {
                    let (p, q) = (map[p as usize] as u8, map[q as usize] as u8);
                    (p.min(q), p.max(q))
                })
                .collect();
            mapped.sort_unstable();
            let keeps_fixed = fixed.is_none_or(|mask| {
                (0..n)
                    .filter(|&p| mask >> p & 1 == 1)
                    .all(|p| mask >> map[p] & 1 == 1)
            });
            if mapped == edge_set
                && keeps_fixed
                && !elements.iter().any(|e: &BitPermutation| e.map() == map)
            {
                elements.push(BitPermutation::new(&map));
            }
        }
        let mut rep = vec![0u8; n];
        let mut to_rep = vec![0u8; n];
        for p in 0..n {
            let (g, r) = elements
                .iter()
                .enumerate()
                .map(|(g, e)| (g, e.cell(p)))
                .min_by_key(|&(g, r)| (r, g))
                .expect("the identity is always a symmetry");
            rep[p] = r as u8;
            to_rep[p] = g as u8;
        }
        let mut stabiliser = vec![Vec::new(); n];
        let mut reps = Vec::new();
        for p in 0..n {
            if rep[p] as usize == p {
                reps.push(p as u8);
                stabiliser[p] = (1..elements.len())
                    .filter(|&g| elements[g].cell(p) == p)
                    .map(|g| g as u8)
                    .collect();
            }
        }
        let element_of = |cells: &[usize]| {
            elements
                .iter()
                .position(|e| (0..n).all(|p| e.cell(p) == cells[p]))
                .expect("the group is closed under composition") as u8
        };
        let to_rep_all: Vec<Vec<u8>> = (0..n)
            .map(|p| {
                let first = &elements[to_rep[p] as usize];
                let mut all = vec![to_rep[p]];
                for &g in &stabiliser[rep[p] as usize] {
                    let then = &elements[g as usize];
                    let composed: Vec<usize> = (0..n).map(|q| then.cell(first.cell(q))).collect();
                    all.push(element_of(&composed));
                }
                all
            })
            .collect();
        let set_of = |gs: &Vec<u8>| PermutationSet::new(gs.iter().map(|&g| &elements[g as usize]));
        let stabiliser_set = stabiliser.iter().map(set_of).collect();
        let to_rep_set = to_rep_all.iter().map(set_of).collect();
        Symmetry {
            elements,
            rep,
            to_rep,
            stabiliser,
            reps,
            to_rep_all,
            stabiliser_set,
            to_rep_set,
        }
    }

    /// The group order.
    pub fn len(&self) -> usize {
        self.elements.len()
    }

    /// Whether the group is empty (never: it contains the identity).
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// The canonical image of the position "black on `black`, browns `browns`": black on its
    /// orbit representative and the smallest brown mask among the images that put it there.
    #[inline(always)]
    pub fn canonical(&self, black: usize, browns: u64) -> (usize, u64) {
        (
            self.rep[black] as usize,
            self.to_rep_set[black].smallest_image(browns),
        )
    }

    /// Whether `browns` (black on the representative `rep`) is its own canonical image. Stops
    /// at the first smaller image, so non-canonical masks usually cost one permutation.
    #[inline(always)]
    pub fn is_canonical(&self, rep: usize, browns: u64) -> bool {
        !self.stabiliser_set[rep].maps_below(browns)
    }

    /// The smallest image of `browns` under the stabiliser of the representative `rep`.
    #[inline(always)]
    pub fn minimise(&self, rep: usize, browns: u64) -> u64 {
        browns.min(self.stabiliser_set[rep].smallest_image(browns))
    }
}
