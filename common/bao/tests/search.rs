//! The searches from the start against a brute force that enumerates every line of play (no
//! merging of positions): the shortest line to an endless move and the fullest hole between
//! and during moves, up to a depth.

use retro_bao::record::Record;
use retro_bao::rules::{legal_moves, loss, outcome, EndlessRule, Outcome};
use retro_bao::search::{breadth_first, random_games};
use retro_bao::sowing::trace;
use retro_bao::{Position, Row};

/// What every line of at most `depth` plies shows: the fewest plies of a line ending in an
/// endless move, the fullest hole between moves and during a move.
#[derive(Debug, Default, PartialEq, Eq)]
struct Brute {
    shortest_endless: Option<usize>,
    fullest_between: u8,
    fullest_during: u8,
}

fn brute(position: &Position, ply: usize, depth: usize, out: &mut Brute) {
    if ply == depth || loss(position, EndlessRule::CutOff).is_some() {
        return;
    }
    let legal = legal_moves(position);
    for &mv in &legal.moves {
        match outcome(position, mv, legal.kind) {
            Outcome::Endless(_) => {
                let plies = ply + 1;
                out.shortest_endless = Some(out.shortest_endless.map_or(plies, |s| s.min(plies)));
            }
            Outcome::Continues { next, steps } => {
                let start = retro_bao::rules::start_state(position, mv, legal.kind);
                for (_, board) in trace(&start, steps) {
                    out.fullest_during = out.fullest_during.max(board.fullest());
                }
                out.fullest_between = out.fullest_between.max(next.board.fullest());
                brute(&next, ply + 1, depth, out);
            }
        }
    }
}

#[test]
fn breadth_first_agrees_with_every_line_of_play() {
    for (n, k, depth) in [(4, 3, 4), (3, 2, 5), (2, 2, 3), (8, 2, 3)] {
        let row = Row::new(n).unwrap();
        let start = Position::start(row, k).unwrap();
        let mut expected = Brute {
            fullest_between: start.board.fullest(),
            ..Brute::default()
        };
        brute(&start, 0, depth, &mut expected);
        let found = breadth_first(start, depth as u32, u64::MAX);
        assert!(found.complete_to as usize == depth || found.exhausted);
        let got = Brute {
            shortest_endless: found.first_endless.as_ref().map(|f| f.line.moves.len()),
            fullest_between: found.fullest_between.stones,
            fullest_during: found.fullest_during.stones,
        };
        assert_eq!(got, expected, "{n} holes, {k} stones, {depth} plies");
        // The reported lines are games: they replay from the start, and end as reported.
        if let Some(f) = &found.first_endless {
            let (last, before) = f.line.moves.split_last().unwrap();
            let mut record = Record::new(row, k, EndlessRule::CutOff);
            record.moves = before.to_vec();
            let replay = record.replay().unwrap();
            assert_eq!(*replay.positions.last().unwrap(), f.line.before);
            let kind = legal_moves(&f.line.before).kind;
            assert!(matches!(
                outcome(&f.line.before, *last, kind),
                Outcome::Endless(_)
            ));
        }
        let mut record = Record::new(row, k, EndlessRule::CutOff);
        record.moves = found.fullest_between.line.moves.clone();
        let replay = record.replay().unwrap();
        if !record.moves.is_empty() {
            let last = *replay.positions.last().unwrap();
            assert_eq!(last.board.fullest(), found.fullest_between.stones);
        }
    }
}

#[test]
fn random_games_are_games_and_repeat_with_their_seed() {
    let row = Row::new(4).unwrap();
    let start = Position::start(row, 3).unwrap();
    let a = random_games(start, 300, 200, 7);
    assert_eq!(a, random_games(start, 300, 200, 7));
    assert_eq!(a.lost + a.endless + a.cut, a.games);
    // Whatever it found replays from the start.
    if let Some(f) = &a.shortest_endless {
        let mut record = Record::new(row, 3, EndlessRule::CutOff);
        record.moves = f.line.moves.clone();
        let replay = record.replay().unwrap();
        assert!(replay.ended_endless);
        // No shorter than the breadth-first shortest.
        let bfs = breadth_first(start, f.line.moves.len() as u32, u64::MAX);
        let shortest = bfs.first_endless.expect("one is known to exist");
        assert!(shortest.line.moves.len() <= f.line.moves.len());
    }
    let f = a.fullest_between.expect("moves were played");
    let mut record = Record::new(row, 3, EndlessRule::CutOff);
    record.moves = f.line.moves.clone();
    let replay = record.replay().unwrap();
    assert_eq!(replay.positions.last().unwrap().board.fullest(), f.stones);
}

#[test]
fn a_position_limit_stops_the_search_but_the_last_depth_is_played_in_full() {
    let start = Position::start(Row::FULL, 2).unwrap();
    let full = breadth_first(start, 3, u64::MAX);
    assert!(!full.truncated && !full.exhausted);
    // 1 + 16 + 108 positions fit; the third depth's do not all fit.
    let cut = breadth_first(start, 5, 200);
    assert!(cut.truncated && !cut.exhausted);
    assert_eq!(cut.complete_to, 3);
    assert!(cut.layers[3].positions < full.layers[3].positions);
    // Its lines were all played: the same fullest holes as without a limit.
    assert_eq!(cut.fullest_between.stones, full.fullest_between.stones);
    assert_eq!(cut.fullest_during.stones, full.fullest_during.stones);
}
