//! Prints every legal successor of positions read from standard input (one notation per
//! line): `<position>` then each successor as `  <successor>`. Used to check the rules
//! against an independent implementation (`docs/simpei.md`).

use retro_simpei::board::Geometry;
use retro_simpei::rules::moves;
use retro_simpei::Position;
use std::io::BufRead;

fn main() {
    let geometry = Geometry::new();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let pos = Position::parse(line.trim()).unwrap();
        let mut out = Vec::new();
        moves(&geometry, &pos, |_, next| out.push(next.notation()));
        out.sort();
        out.dedup();
        println!("{}", pos.notation());
        for s in out {
            println!("  {s}");
        }
    }
}
