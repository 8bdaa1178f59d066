//! Relay sowing against the study's examples and against a plain simulation.
//!
//! `../shared/spec/mancala.md` lists boards whose move from hole `a` never ends, with the
//! period and shift the study gives them; each must come out exactly so. Then every move of
//! every board of up to 9 stones on 8 holes (and up to 7 on 10 holes) is played by
//! [`retro_mancala::sowing::play`] and by a simulation written here from the rules alone, which
//! remembers every state it has seen: both must agree on whether the move ends, where, after
//! how many sowings, and on the cycle of an endless move.

use retro_mancala::board::Board;
use retro_mancala::loops::STUDY_EXAMPLES;
use retro_mancala::sowing::{play, Play};
use std::collections::HashMap;

#[test]
fn every_loop_of_the_study_has_its_period_and_shift() {
    // The examples as the spec lists them (kept once, in the crate).
    for &(text, period, shift) in STUDY_EXAMPLES {
        let board = Board::parse(text).unwrap();
        let Play::Endless(l) = play(&board, 0) else {
            panic!("{text} sown from a must never end")
        };
        assert_eq!(l.lead_in, 0, "{text}: the example is itself on its cycle");
        assert_eq!((l.period, l.shift), (period, shift), "{text}: {l:?}");
        assert!(l.run <= l.cycle && l.cycle % l.run == 0, "{text}: {l:?}");
    }
}

#[test]
fn the_first_example_comes_back_turned_by_three_after_one_sowing() {
    let board = Board::parse("3,1,0,2,1,0,2,1").unwrap();
    let Play::Endless(l) = play(&board, 0) else {
        panic!("endless")
    };
    assert_eq!(l.run, 1);
    assert_eq!(board.rotated(3).to_string(), "0,2,1,3,1,0,2,1");
    // Turned by 3 each sowing, the board is back after 8 sowings (3 and 8 are coprime).
    assert_eq!(l.cycle, 8);
}

#[test]
fn the_ten_hole_loop_does_not_satisfy_the_one_sowing_condition() {
    // The study's sufficient condition (LOOP): one sowing turns the board into itself shifted
    // (the first example's form, period 0). The 10-hole board does not satisfy it, yet loops.
    let board = Board::parse("3,1,0,2,1,0,2,1,0,1").unwrap();
    let Play::Endless(l) = play(&board, 0) else {
        panic!("the 10-hole example never ends")
    };
    assert_eq!(l.lead_in, 0);
    assert!(l.run > 1, "{l:?}");
    assert_ne!(l.period, 0);
    assert_eq!((l.period, l.shift, l.run), (1, 1, 4), "{l:?}");
}

/// The whole sowing sequence of a move, by hand: every state is remembered until one comes
/// back. Returns `Ok((last hole, sowings, final board))` or `Err((lead-in, cycle length))`.
fn simulate(board: &Board, hole: usize) -> Result<(usize, u64, Vec<u8>), (u64, u64)> {
    let n = board.holes();
    let mut stones: Vec<u8> = board.counts().to_vec();
    let mut from = hole;
    let mut seen: HashMap<(Vec<u8>, usize), u64> = HashMap::new();
    let mut sowings = 0u64;
    loop {
        if let Some(&first) = seen.get(&(stones.clone(), from)) {
            return Err((first, sowings - first));
        }
        seen.insert((stones.clone(), from), sowings);
        let mut hand = stones[from];
        stones[from] = 0;
        let mut at = from;
        while hand > 0 {
            at = (at + 1) % n;
            stones[at] += 1;
            hand -= 1;
        }
        sowings += 1;
        if stones[at] == 1 {
            return Ok((at, sowings, stones));
        }
        from = at;
    }
}

/// Calls `visit` with every distribution of up to `max` stones over `holes` holes.
fn every_board(holes: usize, max: u32, visit: &mut impl FnMut(&[u8])) {
    fn rec(counts: &mut Vec<u8>, holes: usize, left: u32, visit: &mut impl FnMut(&[u8])) {
        if counts.len() == holes {
            visit(counts);
            return;
        }
        for c in 0..=left {
            counts.push(c as u8);
            rec(counts, holes, left - c, visit);
            counts.pop();
        }
    }
    rec(&mut Vec::new(), holes, max, visit);
}

#[test]
fn every_small_move_agrees_with_a_plain_simulation() {
    let (mut ends, mut endless, mut longest) = (0u64, 0u64, 0u64);
    for (holes, max) in [(8, 9), (10, 7)] {
        every_board(holes, max, &mut |counts| {
            let board = Board::new(counts).unwrap();
            for (hole, &stones) in counts.iter().enumerate() {
                if stones == 0 {
                    continue;
                }
                match (play(&board, hole), simulate(&board, hole)) {
                    (Play::Ends(e), Ok((last, sowings, after))) => {
                        assert_eq!(
                            (e.last, e.sowings, e.board.counts()),
                            (last, sowings, &after[..]),
                            "{board} from {hole}"
                        );
                        ends += 1;
                        longest = longest.max(sowings);
                    }
                    (Play::Endless(l), Err((lead_in, cycle))) => {
                        assert_eq!((l.lead_in, l.cycle), (lead_in, cycle), "{board} {hole}");
                        assert!(l.cycle % l.run == 0, "{board} {hole}: {l:?}");
                        endless += 1;
                    }
                    (mine, plain) => panic!("{board} from {hole}: {mine:?} vs {plain:?}"),
                }
            }
        });
    }
    assert!(endless > 0 && ends > 0);
    assert!(
        longest >= 12,
        "some moves take many sowings (longest {longest})"
    );
}

#[test]
fn moves_that_end_after_many_laps_are_followed_to_their_end() {
    // One hole with many stones laps the ring several times in one sowing; relay sowings
    // follow. Each must end exactly where the plain simulation ends.
    for stones in [17u8, 33, 64, 100, 200] {
        let mut counts = vec![0u8; 8];
        counts[1] = stones;
        let board = Board::new(&counts).unwrap();
        match (play(&board, 1), simulate(&board, 1)) {
            (Play::Ends(e), Ok((last, sowings, after))) => {
                assert_eq!(
                    (e.last, e.sowings, e.board.counts()),
                    (last, sowings, &after[..])
                )
            }
            (Play::Endless(l), Err((lead_in, cycle))) => {
                assert_eq!((l.lead_in, l.cycle), (lead_in, cycle))
            }
            (mine, plain) => panic!("{stones}: {mine:?} vs {plain:?}"),
        }
    }
}
