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

/// The moves of the line after `marker` in a report (`1. f1 cw 2. b2 acw ...`), up to the end of
/// its line.
fn moves_after(out: &str, marker: &str) -> Vec<retro_bao::Move> {
    let line = out
        .lines()
        .find(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no '{marker}' in {out}"));
    let text = line
        .split_once("plies**: ")
        .expect("the plies, then the moves")
        .1;
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .chunks(3)
        .enumerate()
        .map(|(i, w)| {
            assert_eq!(w[0], format!("{}.", i + 1), "{line}");
            retro_bao::Move::parse(Row::new(2).unwrap(), &format!("{} {}", w[1], w[2])).unwrap()
        })
        .collect()
}

/// Replays `moves` from the start of rows of 2 with `stones`: legal, no position twice, lost at
/// the end.
fn assert_loss_ending(stones: u8, moves: &[retro_bao::Move]) {
    use retro_bao::record::Record;
    use retro_bao::rules::{loss, EndlessRule};
    let mut record = Record::new(Row::new(2).unwrap(), stones, EndlessRule::CutOff);
    record.moves = moves.to_vec();
    let replay = record.replay().unwrap();
    let distinct: std::collections::HashSet<_> = replay.positions.iter().collect();
    assert_eq!(distinct.len(), replay.positions.len());
    assert!(loss(replay.positions.last().unwrap(), EndlessRule::CutOff).is_some());
}

#[test]
fn longest_reports_the_exact_game_on_a_small_variant_and_a_replayable_lower_bound_otherwise() {
    use retro_bao::longest::{exact, reachable};
    let file = support::temp_dir("bao-longest").join("longest.txt");
    let out = retro_ok(&[
        "bao-search",
        "--longest",
        "--row",
        "2",
        "--stones",
        "3",
        "--record",
        file.to_str().unwrap(),
    ]);
    let start = Position::start(Row::new(2).unwrap(), 3).unwrap();
    let e = exact(&reachable(start, 1000, None).unwrap(), u64::MAX);
    let plies = e.longest.unwrap().len();
    assert!(
        out.contains(&format!(
            "**Exact**: the longest repetition-free game ending in a loss: **{plies} plies**"
        )),
        "{out}"
    );
    let moves = moves_after(&out, "**Exact**");
    assert_eq!(moves.len(), plies);
    assert_loss_ending(3, &moves);
    let record =
        retro_bao::record::Record::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(record.moves, moves);
    // Rows of 2 with 4 stones: positions repeat and the paths inside cycles are too many; the
    // games give a lower bound, the components an upper bound, and a repeating line is shown.
    let out = retro_ok(&[
        "bao-search",
        "--longest",
        "--row",
        "2",
        "--stones",
        "4",
        "--budget",
        "1000",
        "--games",
        "500",
        "--time-limit",
        "100",
    ]);
    assert!(
        out.contains("Upper bound: no such game has more than **"),
        "{out}"
    );
    assert!(out.contains("the longest game is unbounded"), "{out}");
    assert!(
        out.contains("### Cooperative random games (500 games"),
        "{out}"
    );
    let moves = moves_after(&out, "Longest repetition-free game ending in a loss found");
    assert_loss_ending(4, &moves);
}

#[test]
fn longest_refuses_bad_flags() {
    for bad in [
        &["bao-search", "--longest", "--time-limit", "0"][..],
        &["bao-search", "--longest", "--time-limit", "x"],
        &["bao-search", "--longest", "--return-depth", "1"],
        &["bao-search", "--longest", "--row", "9"],
        &["bao-search", "--longest", "--stones", "200"],
        &["bao-search", "--longest", "--games", "-3"],
        &["bao-search", "--longest", "--budget"],
    ] {
        retro_err(bad);
    }
}
