//! `retro counts`: the count table, recomputed from the table files.

use crate::tables::{Tables, BLACK_SECTION, BROWN_SECTION};
use anyhow::Result;
use rayon::prelude::*;
use retro_engine::{Game, Value};
use retro_musashi::counts::CountRow;

/// Count rows computed by reading every block of every table (verifying their checksums).
pub fn count_rows_from_tables(tables: &Tables) -> Result<Vec<CountRow>> {
    let game = tables.game();
    let slices: Vec<_> = game.stages().into_iter().flat_map(|s| s.slices).collect();
    let per_slice: Vec<(usize, [u64; 256], [u64; 256])> = slices
        .par_iter()
        .map(|&slice| {
            let table = tables.table(slice)?;
            let mut hist = [[0u64; 256]; 2];
            for (section, h) in [BROWN_SECTION, BLACK_SECTION]
                .into_iter()
                .zip(hist.iter_mut())
            {
                for v in table.read_section(section)? {
                    h[v as usize] += 1;
                }
                h[Value::NON_CANONICAL.0 as usize] = 0;
            }
            Ok((game.slice_parts(slice).0, hist[0], hist[1]))
        })
        .collect::<Result<_>>()?;
    let mut rows: Vec<CountRow> = (0..=game.max_browns()).map(CountRow::new).collect();
    for (k, brown, black) in per_slice {
        for v in 0..256 {
            rows[k].brown_to_move[v] += brown[v];
            rows[k].black_to_move[v] += black[v];
        }
    }
    Ok(rows)
}
