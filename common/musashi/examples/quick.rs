use retro_engine::{solve_stage, FinalValues, Game, SliceId, NON_CANONICAL};
use retro_musashi::counts::{format_count_table, CountRow};
use retro_musashi::{Board, Musashi};
use std::collections::HashMap;
use std::time::Instant;

struct Finals(HashMap<SliceId, Vec<u8>>);
impl FinalValues for Finals {
    fn attacker_value(&self, s: SliceId, i: u64) -> u8 {
        self.0[&s][i as usize]
    }
}
fn main() {
    let name = std::env::args().nth(1).unwrap_or("BOARD25".into());
    let maxk: Option<usize> = std::env::args().nth(2).map(|s| s.parse().unwrap());
    let game = Musashi::new(Board::builtin(&name).unwrap(), maxk);
    let t = Instant::now();
    let mut finals = Finals(HashMap::new());
    let mut rows = vec![];
    for (k, stage) in game.stages().iter().enumerate() {
        let ts = Instant::now();
        let solved = solve_stage(&game, stage, &finals, |_| {}).unwrap();
        let mut row = CountRow::new(k);
        for s in &solved {
            for &v in s.attacker.iter() {
                if v != NON_CANONICAL {
                    row.brown_to_move[v as usize] += 1;
                }
            }
            for &v in s.defender.iter() {
                if v != NON_CANONICAL {
                    row.black_to_move[v as usize] += 1;
                }
            }
        }
        rows.push(row);
        for s in solved {
            finals.0.insert(s.slice, s.attacker.to_vec());
        }
        eprintln!("stage {k} {:?}", ts.elapsed());
    }
    eprintln!("total {:?}", t.elapsed());
    print!("{}", format_count_table(&rows));
}
