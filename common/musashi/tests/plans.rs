//! Memory plans of Sixteen Musashi's stages: which stages of BOARD25/31/33 fit in memory, run
//! out of core or are refused, for a given budget.

use retro_engine::workspace::batch_reserve;
use retro_musashi::{Board, Musashi};
use retro_pipeline::stage::{
    largest_slice_bytes, plan_stage, stage_memory, stage_min_memory, too_large, Placement,
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
fn board33_largest_stage_pages_its_inputs_in_16_gib_and_is_refused_in_12_gib() {
    // Paged inputs (8 slices of each stage read, 6.9 GB) + one batch (4.5 slices of 1.35 GB)
    // + overheads: 13.1 GB, just over 12 GiB.
    let g = game("BOARD33");
    let s = stage_of(&g, 16);
    let plan = plan_stage(&g, s, 16 * GIB, false).unwrap();
    assert!(plan.placement.pages_inputs(), "{plan:?}");
    assert!(plan_stage(&g, s, 12 * GIB, false).is_none());
    let min = stage_min_memory(&g, s);
    assert!(min > 12 * GIB && min < 14 * GIB, "{min}");
    assert!(too_large(&g, s, 12 * GIB, 12 * GIB).contains("browns=16 needs at least"));
}

#[test]
fn forced_out_of_core_uses_a_one_slice_window_and_pages_inputs() {
    let g = game("BOARD25");
    let s = stage_of(&g, 12);
    let plan = plan_stage(&g, s, GIB, true).unwrap();
    assert_eq!(
        plan.placement,
        Placement::OutOfCore {
            window: batch_reserve(largest_slice_bytes(&g, s)),
            paged_inputs: true
        }
    );
}
