//! The count table from the value histograms recorded in a manifest.

use retro_engine::SliceId;
use retro_musashi::counts::CountRow;
use retro_musashi::Musashi;
use retro_store::Manifest;

/// Section of a slice table holding brown-to-move values.
pub const BROWN_SECTION: usize = 0;
/// Section of a slice table holding black-to-move values.
pub const BLACK_SECTION: usize = 1;

/// Count rows from the histograms recorded in the manifest at solve time.
pub fn count_rows_from_manifest(game: &Musashi, manifest: &Manifest) -> Vec<CountRow> {
    let mut rows: Vec<CountRow> = (0..=game.max_browns()).map(CountRow::new).collect();
    for r in &manifest.slices {
        let (k, _) = game.slice_parts(SliceId(r.id));
        for (section, hist) in r.histograms.iter().enumerate() {
            let row = &mut rows[k];
            let target = if section == BROWN_SECTION {
                &mut row.brown_to_move
            } else {
                &mut row.black_to_move
            };
            for (&v, &n) in hist {
                target[v as usize] += n;
            }
        }
    }
    rows
}
