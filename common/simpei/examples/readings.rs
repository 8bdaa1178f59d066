//! Solves SIMPEI in memory under each row rule (or those named on the command line) and prints
//! `pieces,positions,win,draw,loss` per layer: how `docs/simpei.md` compares the readings of
//! "exactly three in a row on their own turn" against the published Table 2.
//!
//! `cargo run --release -p retro-simpei --example readings [-- after-ply turn-start ...]`

use retro_engine::{solve_stage, FinalValues, Game, Outcome, Side, SliceId, Value, Workspace};
use retro_simpei::game::{RowRule, Simpei};
use std::collections::HashMap;
use std::time::Instant;

struct Finals(HashMap<SliceId, [Vec<u8>; 2]>);

impl FinalValues for Finals {
    fn value(&self, side: Side, slice: SliceId, index: u64) -> Value {
        Value(self.0[&slice][side.index()][index as usize])
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rules: Vec<RowRule> = if args.is_empty() {
        RowRule::ALL.to_vec()
    } else {
        args.iter().map(|a| RowRule::parse(a).unwrap()).collect()
    };
    for rows in rules {
        let game = Simpei::new(rows);
        let clock = Instant::now();
        let mut finals = Finals(HashMap::new());
        let mut lines = Vec::new();
        for stage in game.stages() {
            let (solved, _) =
                solve_stage(&game, &stage, &finals, &Workspace::in_memory(), |_| {}).unwrap();
            let layer = Simpei::layer_of(stage.slices[0]);
            let mut counts = [0u64; 3];
            for s in &solved {
                let side = if Simpei::is_turn(s.slice, Side::First) {
                    Side::First
                } else {
                    Side::Second
                };
                for v in s.values[side.index()].to_vec() {
                    match Value(v).outcome() {
                        Some(Outcome::Win { .. }) => counts[0] += 1,
                        Some(Outcome::Draw) => counts[1] += 1,
                        Some(Outcome::Loss { .. }) => counts[2] += 1,
                        None => {}
                    }
                }
            }
            lines.push(format!(
                "{layer},{},{},{},{}",
                counts.iter().sum::<u64>(),
                counts[0],
                counts[1],
                counts[2]
            ));
            for s in solved {
                finals
                    .0
                    .insert(s.slice, [s.values[0].to_vec(), s.values[1].to_vec()]);
            }
            eprintln!(
                "{}: {} done at {:.1?}",
                rows.name(),
                stage.name,
                clock.elapsed()
            );
        }
        lines.reverse();
        println!("# {} ({:.1?})", rows.name(), clock.elapsed());
        for line in lines {
            println!("{line}");
        }
    }
}
