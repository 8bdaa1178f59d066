//! Solves SIMPEI in memory under each row rule (or those named on the command line) and prints
//! `pieces,positions,win,draw,loss` per layer: how `docs/simpei.md` compares the readings of
//! "exactly three in a row on their own turn" against the published Table 2.
//!
//! `cargo run --release -p retro-simpei --example readings [-- after-ply turn-start ...]`

use retro_engine::{solve_stage, FinalValues, Game, Outcome, Side, SliceId, Value, Workspace};
use retro_simpei::game::{RowRule, RowShape, Simpei};
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
    // `rule` or `rule:shape`.
    let rules: Vec<(RowRule, RowShape)> = if args.is_empty() {
        RowRule::ALL
            .into_iter()
            .map(|r| (r, RowShape::OwnFourthExcluded))
            .collect()
    } else {
        args.iter()
            .map(|a| {
                let (rows, shape) = a.split_once(':').unwrap_or((a, "own-fourth-excluded"));
                (
                    RowRule::parse(rows).unwrap(),
                    RowShape::parse(shape).unwrap(),
                )
            })
            .collect()
    };
    for (rows, shape) in rules {
        let game = Simpei::new(rows).shaped(shape);
        let clock = Instant::now();
        let mut finals = Finals(HashMap::new());
        let mut lines = Vec::new();
        for stage in game.stages() {
            let (solved, _) =
                solve_stage(&game, &stage, &finals, &Workspace::in_memory(), |_| {}).unwrap();
            let layer = Simpei::layer_of(stage.slices[0]);
            let mut counts = [0u64; 3];
            let mut histogram = std::collections::BTreeMap::new();
            for s in &solved {
                let side = if Simpei::is_turn(s.slice, Side::First) {
                    Side::First
                } else {
                    Side::Second
                };
                for &v in s.values[side.index()].iter() {
                    *histogram.entry(v).or_insert(0u64) += 1;
                    match Value(v).outcome() {
                        Some(Outcome::Win { .. }) => counts[0] += 1,
                        Some(Outcome::Draw) => counts[1] += 1,
                        Some(Outcome::Loss { .. }) => counts[2] += 1,
                        None => {}
                    }
                }
            }
            if std::env::var("HISTOGRAM").is_ok() {
                eprintln!("layer {layer} values: {histogram:?}");
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
        if std::env::var("RECURRENCE").is_ok() {
            // Every position of the given sample of each layer satisfies the recurrence.
            let mut checked = 0u64;
            for stage in game.stages() {
                for &slice in &stage.slices {
                    for side in Side::BOTH {
                        if !Simpei::is_turn(slice, side) {
                            continue;
                        }
                        let len = game.slice_len(slice);
                        let step = if Simpei::layer_of(slice) >= 7 { 97 } else { 1 };
                        let mut index = 0;
                        while index < len {
                            let key = game.key(slice, index);
                            if game.is_canonical(slice, key) {
                                let stored = finals.value(side, slice, index);
                                let want = retro_engine::recurrence::value(
                                    &game,
                                    side,
                                    slice,
                                    key,
                                    |s, k| -> Result<Value, ()> {
                                        Ok(finals.value(side.other(), s, game.index(s, k)))
                                    },
                                )
                                .unwrap();
                                assert_eq!(stored, want, "{slice:?} {key:#x} {side:?}");
                                checked += 1;
                            }
                            index += step;
                        }
                    }
                }
            }
            eprintln!("recurrence holds at {checked} positions");
        }
        lines.reverse();
        println!(
            "# {}:{} ({:.1?})",
            rows.name(),
            shape.name(),
            clock.elapsed()
        );
        for line in lines {
            println!("{line}");
        }
    }
}
