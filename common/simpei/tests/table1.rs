//! The published Table 1: positions up to the 8 board symmetries by pieces on the board (with
//! 8 pieces, white to move), counted through the crate's index and canonical test.

use retro_simpei::board::Geometry;
use retro_simpei::index::{count_canonical, Index};

/// Table 1 of the seed paper (`../shared/spec/simpei.md`).
const PUBLISHED: [u64; 9] = [1, 6, 87, 915, 9_713, 67_016, 444_336, 2_106_976, 9_473_115];

#[test]
fn positions_up_to_symmetry_per_piece_count_match_table_1() {
    let geometry = Geometry::new();
    let index = Index::new();
    let counted: Vec<u64> = (0..9)
        .map(|n| count_canonical(&geometry, &index, n))
        .collect();
    assert_eq!(counted, PUBLISHED);
}
