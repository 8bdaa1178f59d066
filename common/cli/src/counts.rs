//! `retro counts`: the game's summary table, recomputed from the table files.

use crate::tables::Tables;
use anyhow::Result;
use rayon::prelude::*;
use retro_engine::Side;
use retro_store::Manifest;

/// The summary table of the tables in `tables`, computed by reading every block of every
/// table (verifying their checksums) rather than from the histograms the manifest recorded at
/// solve time: the value histograms are rebuilt from the tables, then the game formats them.
/// A side the tables derive is counted from the histogram its table recorded when the solver
/// wrote it (from the values it had computed): deriving every value again costs a sweep with
/// random reads across a stage's slices (hours on BOARD33), and `retro verify --against` and
/// `--values` are the checks of derived values.
pub fn count_table_from_tables(tables: &Tables) -> Result<String> {
    let game = tables.game();
    let stages = game.stages();
    let slices: Vec<_> = stages
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.slices.iter().map(move |&slice| (i, slice)))
        .collect();
    let records = slices
        .par_iter()
        .map(|&(stage, slice)| {
            let table = tables.table(slice)?;
            let mut histograms = Vec::new();
            for side in Side::BOTH {
                if let Some(recorded) = table.derived_histogram(side.index()) {
                    histograms.push(recorded.clone());
                    continue;
                }
                let values = table.read_section(side.index())?;
                histograms.push(retro_pipeline::stage::histogram(game, &values));
            }
            Ok(retro_store::SliceRecord {
                id: slice.0,
                stage,
                name: game.slice_name(slice),
                file: game.table_file_name(slice),
                positions: game.slice_len(slice),
                bytes: table.file_len(),
                checksum: String::new(),
                histograms,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut manifest = Manifest {
        format: retro_store::manifest::FORMAT.into(),
        game: game.name().into(),
        definition: game.definition(),
        stages: stages.len(),
        slices: records,
        complete: true,
        storage: None,
    };
    manifest.slices.sort_by_key(|r| r.id);
    game.count_table(&manifest)
}
