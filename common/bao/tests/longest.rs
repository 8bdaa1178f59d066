//! Question 4, the longest repetition-free game that ends in a loss: the exact search against a
//! brute force that follows every line of play (no graph, no components), and every line the
//! searches report replayed through the rules.

use retro_bao::longest::{exact, reachable, returns, walks, Repetition};
use retro_bao::record::Record;
use retro_bao::rules::{legal_moves, loss, outcome, EndlessRule, Outcome};
use retro_bao::search::Random;
use retro_bao::{Board, Move, Position, Row};
use std::collections::HashSet;

/// The most plies of a line of play from `position` that repeats no position of `path` (which
/// holds `position`) and ends with the player to move lost; `None` when no such line exists.
/// Plain depth-first search over lines of play, the rules called directly.
fn brute(position: &Position, path: &mut HashSet<Position>) -> Option<usize> {
    if loss(position, EndlessRule::CutOff).is_some() {
        return Some(0);
    }
    let legal = legal_moves(position);
    let mut best = None;
    for &mv in &legal.moves {
        if let Outcome::Continues { next, .. } = outcome(position, mv, legal.kind) {
            if path.insert(next) {
                if let Some(plies) = brute(&next, path) {
                    best = best.max(Some(plies + 1));
                }
                path.remove(&next);
            }
        }
    }
    best
}

/// Plays `moves` from `from`: every move legal (and ending), no position twice; the positions.
fn replay_from(from: Position, moves: &[Move]) -> Vec<Position> {
    let mut positions = vec![from];
    let mut seen = HashSet::from([from]);
    let mut at = from;
    for &mv in moves {
        let legal = legal_moves(&at);
        assert!(legal.moves.contains(&mv), "{mv:?} is not legal in {at}");
        let Outcome::Continues { next, .. } = outcome(&at, mv, legal.kind) else {
            panic!("{mv:?} never ends in {at}");
        };
        assert!(seen.insert(next), "{next} comes twice");
        positions.push(next);
        at = next;
    }
    positions
}

/// A game from the start of a variant, checked as `retro play bao` checks a record, ending in
/// a loss with no position twice.
fn assert_loss_ending_game(row: Row, stones: u8, moves: &[Move]) {
    let mut record = Record::new(row, stones, EndlessRule::CutOff);
    record.moves = moves.to_vec();
    let replay = record.replay().expect("the game is legal");
    assert!(!replay.ended_endless);
    let distinct: HashSet<&Position> = replay.positions.iter().collect();
    assert_eq!(distinct.len(), replay.positions.len(), "a position repeats");
    let last = replay.positions.last().unwrap();
    assert!(
        loss(last, EndlessRule::CutOff).is_some(),
        "{last} is not lost"
    );
}

/// The repeating line replays from `start`: `to` reaches `position`, `cycle` comes back to it,
/// `to_loss` ends in a loss; going round twice is a legal game too.
fn assert_repetition(start: Position, r: &Repetition) {
    assert!(!r.cycle.is_empty());
    let to = replay_from(start, &r.to);
    assert_eq!(*to.last().unwrap(), r.position);
    let mut at = r.position;
    for &mv in &r.cycle {
        let legal = legal_moves(&at);
        assert!(legal.moves.contains(&mv));
        let Outcome::Continues { next, .. } = outcome(&at, mv, legal.kind) else {
            panic!("endless move in a cycle");
        };
        at = next;
    }
    assert_eq!(at, r.position, "the cycle comes back");
    let ending = replay_from(r.position, &r.to_loss);
    assert!(loss(ending.last().unwrap(), EndlessRule::CutOff).is_some());
    assert_eq!(
        r.game(2).len(),
        r.to.len() + 2 * r.cycle.len() + r.to_loss.len()
    );
}

#[test]
fn the_exact_longest_game_of_small_variants_agrees_with_every_line_of_play() {
    for (n, k) in [(2, 1), (2, 2), (2, 3), (3, 1)] {
        let row = Row::new(n).unwrap();
        let start = Position::start(row, k).unwrap();
        let graph = reachable(start, 1_000_000, None).unwrap();
        let e = exact(&graph, u64::MAX);
        assert!(e.complete);
        let expected = brute(&start, &mut HashSet::from([start]));
        assert_eq!(e.longest.as_ref().map(Vec::len), expected, "{n} x {k}");
        assert_eq!(e.upper_bound.map(|b| b as usize), expected);
        if let Some(moves) = &e.longest {
            assert_loss_ending_game(row, k, moves);
        }
    }
}

/// Random positions of rows of 2 with few stones: many have small move graphs with cycles,
/// which exercise the enumeration inside components.
#[test]
fn the_exact_search_agrees_with_every_line_of_play_where_positions_repeat() {
    let mut random = Random::new(4);
    let (mut cyclic, mut acyclic, mut tried) = (0, 0, 0);
    while (cyclic < 40 || acyclic < 40) && tried < 200_000 {
        tried += 1;
        let stones = 5 + random.below(8);
        let mut holes = [[0u8; 4]; 2];
        for _ in 0..stones {
            holes[random.below(2)][random.below(4)] += 1;
        }
        let start = Position {
            board: Board::new(&holes[0], &holes[1]).unwrap(),
            side: retro_engine::Side::First,
        };
        let Ok(graph) = reachable(start, 40, None) else {
            continue;
        };
        if graph.positions.len() < 4 {
            continue;
        }
        let e = exact(&graph, u64::MAX);
        if e.cyclic_components > 0 {
            if cyclic >= 40 {
                continue;
            }
            cyclic += 1;
        } else {
            if acyclic >= 40 {
                continue;
            }
            acyclic += 1;
            assert_eq!(e.upper_bound, e.longest.as_ref().map(|l| l.len() as u64));
        }
        let expected = brute(&start, &mut HashSet::from([start]));
        assert!(e.complete);
        assert_eq!(e.longest.as_ref().map(Vec::len), expected, "from {start}");
        if let Some(moves) = &e.longest {
            let positions = replay_from(start, moves);
            assert!(loss(positions.last().unwrap(), EndlessRule::CutOff).is_some());
            assert!(e.upper_bound.unwrap() as usize >= moves.len());
        }
        if let Some(r) = &e.repetition {
            assert_repetition(start, r);
            // A search for lines that come back finds one from the repeated position.
            let back = returns(&[r.position], r.cycle.len(), u64::MAX, None);
            let (root, cycle) = back.cycle.expect("the cycle is within reach");
            assert_eq!(root, 0);
            assert!(cycle.len() <= r.cycle.len() && cycle.len() % 2 == 0);
        }
    }
    assert!(
        cyclic >= 40 && acyclic >= 40,
        "{cyclic} cyclic, {acyclic} acyclic"
    );
}

#[test]
fn a_search_for_returns_finds_none_where_no_position_repeats() {
    let start = Position::start(Row::new(2).unwrap(), 3).unwrap();
    let graph = reachable(start, 100, None).unwrap();
    assert_eq!(exact(&graph, u64::MAX).cyclic_components, 0);
    let r = returns(&graph.positions, 8, u64::MAX, None);
    assert_eq!(r.cycle, None);
    assert_eq!((r.roots, r.complete), (4, 4));
}

#[test]
fn cooperative_games_are_loss_ending_games_without_repetition_and_repeat_with_their_seed() {
    let row = Row::new(2).unwrap();
    let start = Position::start(row, 4).unwrap();
    let a = walks(start, 3000, 1000, 3, None);
    assert_eq!(a, walks(start, 3000, 1000, 3, None));
    assert_eq!(a.games, 3000);
    assert_eq!(a.extended, 1500);
    let longest = a.longest.expect("games end in losses");
    assert!(longest.len() > 20, "{}", longest.len());
    assert_loss_ending_game(row, 4, &longest);
    let r = a
        .repetition
        .expect("positions repeat on rows of 2 with 4 stones");
    assert_repetition(start, &r);
    // The full game: a few games, each a legal loss-ending game without repetition.
    let start = Position::start(Row::FULL, 2).unwrap();
    let b = walks(start, 6, 300, 1, None);
    assert_loss_ending_game(Row::FULL, 2, &b.longest.expect("a loss is found"));
}
