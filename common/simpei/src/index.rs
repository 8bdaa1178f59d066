//! Layers and the dense index of their positions.
//!
//! Pieces are never captured and are placed alternately, white first, so a position with `n`
//! pieces on the board has `ceil(n/2)` white and `floor(n/2)` black pieces: the **layer** `n`
//! (0 to 8). During placement (`n < 8`) the side to move follows from `n`; with 8 pieces both
//! sides may be to move, and exchanging the colours maps one onto the other.
//!
//! Inside a layer a position's pieces are numbered densely: the colex rank of the white holes
//! among the 25, times the number of black placements, plus the colex rank of the black holes
//! among the holes white leaves free. Under the 8 board symmetries a position is
//! **canonical** when its `(white, black)` masks are the smallest of its images.

use crate::board::{Geometry, HOLES};
use retro_index::{binomial, next_subset, squeeze, unsqueeze, SubsetRanker};

/// Layers: 0 to 8 pieces on the board.
pub const LAYERS: u32 = 9;

/// The pieces of each colour in layer `n`: `(white, black)`.
pub fn layer_pieces(n: u32) -> (u32, u32) {
    (n.div_ceil(2), n / 2)
}

/// The dense index of positions of a layer.
pub struct Index {
    /// Ranks of subsets of every size `m` of holes, `m = 17..=25`; `rankers[m - 17]`.
    rankers: Vec<SubsetRanker>,
}

impl Index {
    /// Builds the ranking tables.
    pub fn new() -> Index {
        Index {
            rankers: (17..=HOLES as u32).map(SubsetRanker::new).collect(),
        }
    }

    fn ranker(&self, cells: u32) -> &SubsetRanker {
        &self.rankers[cells as usize - 17]
    }

    /// Positions (slots, canonical or not) of layer `n`.
    pub fn len(&self, n: u32) -> u64 {
        let (w, b) = layer_pieces(n);
        binomial(HOLES, w as usize) * binomial(HOLES - w as usize, b as usize)
    }

    /// The index of `(white, black)` in its layer.
    pub fn index(&self, white: u32, black: u32) -> u64 {
        let w = white.count_ones();
        let b = black.count_ones();
        let free = HOLES as u32 - w;
        let placements = binomial(free as usize, b as usize);
        self.ranker(HOLES as u32).rank(white as u64) * placements
            + self.ranker(free).rank(squeeze_out(black, white))
    }

    /// The `(white, black)` masks at `index` of layer `n`.
    pub fn masks(&self, n: u32, index: u64) -> (u32, u32) {
        let (w, b) = layer_pieces(n);
        let free = HOLES as u32 - w;
        let placements = binomial(free as usize, b as usize);
        let white = self.ranker(HOLES as u32).unrank(index / placements, w) as u32;
        let black = self.ranker(free).unrank(index % placements, b);
        (white, unsqueeze_in(black, white))
    }

    /// Calls `visit(index, white, black)` for every position of layer `n`, in index order.
    pub fn for_each(&self, n: u32, mut visit: impl FnMut(u64, u32, u32)) {
        let (w, b) = layer_pieces(n);
        let free = HOLES as u32 - w;
        let mut index = 0;
        let mut white: u64 = (1 << w) - 1;
        while white < 1 << HOLES {
            let mut black: u64 = (1 << b) - 1;
            while black < 1 << free {
                visit(index, white as u32, unsqueeze_in(black, white as u32));
                index += 1;
                if b == 0 {
                    break;
                }
                black = next_subset(black);
            }
            if w == 0 {
                break;
            }
            white = next_subset(white);
        }
    }
}

impl Default for Index {
    fn default() -> Self {
        Index::new()
    }
}

/// `mask` with the bits of `gaps` removed (higher bits shifted down).
pub(crate) fn squeeze_out(mask: u32, gaps: u32) -> u64 {
    let mut m = mask as u64;
    let mut g = gaps;
    // Highest gap first, so that lower gap positions stay valid.
    while g != 0 {
        let top = 31 - g.leading_zeros();
        m = squeeze(m, top);
        g &= !(1 << top);
    }
    m
}

/// Inverse of [`squeeze_out`]: opens the bits of `gaps` again.
pub(crate) fn unsqueeze_in(mask: u64, gaps: u32) -> u32 {
    let mut m = mask;
    let mut g = gaps;
    // Lowest gap first.
    while g != 0 {
        let low = g.trailing_zeros();
        m = unsqueeze(m, low);
        g &= g - 1;
    }
    m as u32
}

/// Whether `(white, black)` is the smallest of its images under the board symmetries. White's
/// image decides unless it ties, so black's is computed only then.
#[inline]
pub fn is_canonical(geometry: &Geometry, white: u32, black: u32) -> bool {
    (1..8).all(|g| {
        let w = geometry.apply(g, white);
        w > white || (w == white && geometry.apply(g, black) >= black)
    })
}

/// The canonical image of `(white, black)` (black's images only where white's ties the best).
#[inline]
pub fn canonical(geometry: &Geometry, white: u32, black: u32) -> (u32, u32) {
    let mut best = (white, black);
    for g in 1..8 {
        let w = geometry.apply(g, white);
        if w <= best.0 {
            let b = geometry.apply(g, black);
            if (w, b) < best {
                best = (w, b);
            }
        }
    }
    best
}

/// The images of one colour's holes under the 8 symmetries: canonicalising the many positions
/// a clipping ply leads to (the mover's pieces fixed, the opponent's relocated) computes them
/// once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Images {
    /// The mask the images are of.
    pub mask: u32,
    images: [u32; 8],
}

impl Images {
    /// The images of `mask`.
    pub fn of(geometry: &Geometry, mask: u32) -> Images {
        Images {
            mask,
            images: std::array::from_fn(|g| geometry.apply(g, mask)),
        }
    }
}

/// [`canonical`] of `(white, black)` with white's images given.
#[inline]
pub fn canonical_given_white(geometry: &Geometry, white: &Images, black: u32) -> (u32, u32) {
    let least = *white.images.iter().min().expect("eight images");
    let mut best = (least, u32::MAX);
    for (g, &w) in white.images.iter().enumerate() {
        if w == least {
            best.1 = best.1.min(geometry.apply(g, black));
        }
    }
    best
}

/// [`canonical`] of `(white, black)` with black's images given.
#[inline]
pub fn canonical_given_black(geometry: &Geometry, white: u32, black: &Images) -> (u32, u32) {
    let mut best = (white, black.images[0]);
    for g in 1..8 {
        let w = geometry.apply(g, white);
        if w <= best.0 && (w, black.images[g]) < best {
            best = (w, black.images[g]);
        }
    }
    best
}

/// Positions of layer `n` up to symmetry (the published Table 1 counts them; with 8 pieces,
/// positions with white to move).
pub fn count_canonical(geometry: &Geometry, index: &Index, n: u32) -> u64 {
    let mut count = 0;
    index.for_each(n, |_, white, black| {
        count += is_canonical(geometry, white, black) as u64;
    });
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_round_trips_in_order() {
        let index = Index::new();
        for n in [0, 1, 2, 3, 5] {
            let mut seen = 0;
            index.for_each(n, |i, white, black| {
                assert_eq!(i, seen);
                assert_eq!(index.index(white, black), i);
                if i % 97 == 0 {
                    assert_eq!(index.masks(n, i), (white, black));
                }
                assert_eq!(white & black, 0);
                seen += 1;
            });
            assert_eq!(seen, index.len(n));
        }
        assert_eq!(index.len(8), 12_650 * 5_985);
    }

    #[test]
    fn canonical_with_given_images_is_canonical() {
        let g = Geometry::new();
        let index = Index::new();
        index.for_each(4, |i, white, black| {
            if i % 7 == 0 {
                let want = canonical(&g, white, black);
                let w = Images::of(&g, white);
                let b = Images::of(&g, black);
                assert_eq!(canonical_given_white(&g, &w, black), want);
                assert_eq!(canonical_given_black(&g, white, &b), want);
            }
        });
    }

    #[test]
    fn canonical_images_are_canonical() {
        let g = Geometry::new();
        let index = Index::new();
        index.for_each(3, |_, white, black| {
            let (w, b) = canonical(&g, white, black);
            assert!(is_canonical(&g, w, b));
            assert_eq!(is_canonical(&g, white, black), (w, b) == (white, black));
        });
    }
}
