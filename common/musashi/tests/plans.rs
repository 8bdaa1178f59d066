//! Memory plans of Sixteen Musashi's stages: which stages of BOARD25/31/33 fit in memory, run
//! out of core or are refused, for a given budget.

use retro_engine::workspace::batch_reserve;
use retro_musashi::{Board, Musashi};
use retro_pipeline::stage::{
    human_bytes, largest_out_of_core_slice_bytes, out_of_core_min_memory, plan_stage, stage_memory,
    stage_min_memory, too_large, Placement,
};
use retro_pipeline::{JobGame, WinDrawLoss};

const GIB: u64 = 1 << 30;

fn game(board: &str) -> WinDrawLoss<Musashi> {
    WinDrawLoss(Musashi::new(Board::builtin(board).unwrap(), None))
}

fn stage_of(game: &dyn JobGame, browns: usize) -> usize {
    let name = format!("browns={browns}");
    game.stages().iter().position(|s| s.name == name).unwrap()
}

#[test]
fn small_stages_stay_in_memory() {
    let g = game("BOARD25");
    let plan = plan_stage(&g, stage_of(&g, 12), GIB, false).unwrap();
    assert_eq!(plan.placement, Placement::InMemory);
    assert_eq!(plan.memory, stage_memory(&g, stage_of(&g, 12)));
}

#[test]
fn board31_largest_stage_runs_out_of_core_in_12_gib_with_inputs_in_memory() {
    let g = game("BOARD31");
    let s = stage_of(&g, 15);
    assert!(stage_memory(&g, s) > 12 * GIB);
    let plan = plan_stage(&g, s, 12 * GIB, false).unwrap();
    match plan.placement {
        Placement::OutOfCore {
            window,
            paged_inputs,
        } => {
            assert!(!paged_inputs);
            assert!(window > 6 * GIB, "window {window}");
        }
        Placement::InMemory => panic!("browns=15 cannot fit in memory"),
    }
    assert_eq!(plan.memory, 12 * GIB);
}

#[test]
fn board33_largest_stage_reads_its_inputs_from_tables_in_16_gib_and_is_refused_in_2_gib() {
    // Inputs read through the block cache (1 GiB + 64 MiB for the threads' own blocks) + one
    // batch on compact arrays (4.5 slices of 0.45 GB) + overheads: about 3.3 GB.
    let g = game("BOARD33");
    let s = stage_of(&g, 16);
    let plan = plan_stage(&g, s, 16 * GIB, false).unwrap();
    assert!(plan.placement.pages_inputs(), "{plan:?}");
    assert!(plan_stage(&g, s, 2 * GIB, false).is_none());
    let min = stage_min_memory(&g, s);
    assert!(min > 3 * GIB && min < 4 * GIB, "{min}");
    assert!(too_large(&g, s, 2 * GIB, 2 * GIB, false).contains("browns=16 needs at least"));
}

#[test]
fn board33_large_stages_keep_every_slice_resident_in_20_gib() {
    // On compact arrays (0.75 bytes per slot) every out-of-core stage's arrays fit beside its
    // inputs or, where those are large, beside the cache through which it reads them.
    let g = game("BOARD33");
    for browns in 12..=25 {
        let s = stage_of(&g, browns);
        let plan = plan_stage(&g, s, 20 * GIB, false).unwrap();
        let Placement::OutOfCore { window, .. } = plan.placement else {
            panic!("browns={browns} in memory at 20 GiB: {plan:?}");
        };
        let arrays: u64 = g.stages()[s]
            .slices
            .iter()
            .map(|&slice| g.out_of_core_slice_bytes(g.slice_len(slice)))
            .sum();
        let batch = batch_reserve(largest_out_of_core_slice_bytes(&g, s));
        assert!(
            arrays + batch <= window,
            "browns={browns}: {plan:?}, arrays {arrays}"
        );
    }
}

#[test]
fn forced_out_of_core_uses_a_one_slice_window_and_pages_inputs() {
    let g = game("BOARD25");
    let s = stage_of(&g, 12);
    let plan = plan_stage(&g, s, GIB, true).unwrap();
    assert_eq!(
        plan.placement,
        Placement::OutOfCore {
            window: batch_reserve(largest_out_of_core_slice_bytes(&g, s)),
            paged_inputs: true
        }
    );
}

#[test]
fn a_refusal_out_of_core_names_the_out_of_core_minimum() {
    // A small stage: in memory it needs less than out of core (the list buffers alone).
    let g = game("BOARD25");
    let s = stage_of(&g, 3);
    let (in_memory, out_of_core) = (stage_memory(&g, s), out_of_core_min_memory(&g, s));
    assert!(in_memory < out_of_core, "{in_memory} {out_of_core}");
    let budget = (in_memory + out_of_core) / 2;
    assert!(plan_stage(&g, s, budget, true).is_none());
    let forced = too_large(&g, s, budget, budget, true);
    assert!(forced.contains(&human_bytes(out_of_core)), "{forced}");
    let free = too_large(&g, s, budget, budget, false);
    assert!(free.contains(&human_bytes(in_memory)), "{free}");
}
