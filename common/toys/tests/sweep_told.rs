//! The stage kernel tells its checkpoint keeper when the initial sweep is done, and a keeper
//! that then says a checkpoint is due gets one at the very next ply boundary: what lets the
//! job's keeper save a stage's scheduled exits while they are fresh
//! (`retro_pipeline::checkpoint::StageCheckpoints`).

use retro_engine::checkpoint::{Checkpoints, PlySnapshot, RestoreInto, RestoredPly, StageShape};
use retro_engine::{solve_stage, Game, NoFinals, Workspace};
use retro_toys::RingHop;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the kernel told the keeper, in order.
#[derive(Debug, Default)]
struct Told {
    events: Mutex<Vec<String>>,
    due_after_sweep: Mutex<bool>,
}

#[derive(Debug, Default)]
struct Recorder(Arc<Told>);

impl Checkpoints for Recorder {
    fn due(&self) -> bool {
        std::mem::take(&mut *self.0.due_after_sweep.lock().unwrap())
    }

    fn swept(&self, _took: Duration) {
        self.0.events.lock().unwrap().push("swept".into());
        *self.0.due_after_sweep.lock().unwrap() = true;
    }

    fn save(&self, snapshot: &PlySnapshot) -> Result<(), String> {
        let event = format!("saved before ply {}", snapshot.ply);
        self.0.events.lock().unwrap().push(event);
        Ok(())
    }

    fn restore(&self, _: &StageShape, _: &mut RestoreInto) -> Result<Option<RestoredPly>, String> {
        self.0.events.lock().unwrap().push("asked".into());
        Ok(None)
    }
}

#[test]
fn a_keeper_told_of_the_sweep_gets_a_checkpoint_after_the_first_ply() {
    let game = RingHop::new(7, 3).unwrap();
    let stage = game.stages().into_iter().next().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    for space in [
        Workspace::in_memory(),
        Workspace::out_of_core(scratch.path().into(), 0),
    ] {
        let told = Arc::new(Told::default());
        let space = space.with_checkpoints(Arc::new(Recorder(told.clone())));
        solve_stage(&game, &stage, &NoFinals, &space, |_| {}).unwrap();
        let events = told.events.lock().unwrap().clone();
        assert_eq!(
            events,
            ["asked", "swept", "saved before ply 2"],
            "{space:?}"
        );
    }
}
