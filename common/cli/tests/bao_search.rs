//! `retro bao-search` reports what the search functions of `retro_bao` find.

mod support;

use retro_bao::search::breadth_first;
use retro_bao::{Position, Row};
use support::{retro_err, retro_ok};

#[test]
fn the_report_states_the_searched_depth_and_the_shortest_endless_line() {
    let out = retro_ok(&[
        "bao-search",
        "--row",
        "4",
        "--stones",
        "3",
        "--depth",
        "4",
        "--games",
        "50",
    ]);
    let start = Position::start(Row::new(4).unwrap(), 3).unwrap();
    let bfs = breadth_first(start, 4, u64::MAX);
    let found = bfs
        .first_endless
        .expect("4x2 with 3 stones has an endless line");
    let row = start.board.row();
    let first = found.line.moves[0].text(row);
    assert!(
        out.contains(&format!(
            "Shortest line to an endless move: {} plies: 1. {first}",
            found.line.moves.len()
        )),
        "{out}"
    );
    assert!(out.contains("Complete to **4 plies**"), "{out}");
    assert!(out.contains(&format!(
        "Fullest hole between moves within 4 plies: **{}** stones",
        bfs.fullest_between.stones
    )));
    assert!(out.contains("## Random games (50 games"), "{out}");
    // Without an endless move in reach, the report says so.
    let out = retro_ok(&["bao-search", "--depth", "2", "--games", "0"]);
    assert!(out.contains("No endless move within 2 plies"), "{out}");
    assert!(!out.contains("## Random games"));
    retro_err(&["bao-search", "--row", "1"]);
}
