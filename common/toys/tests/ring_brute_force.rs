//! Ring hop solved by every engine driver, checked position by position against a brute-force
//! solver written here from the rules alone.
//!
//! The brute force knows nothing of stages, slices, symmetry, frontiers or counters: it lists
//! every raw position (white cells, black cells, side to move), and iterates the win/draw/loss
//! recurrence synchronously from "everything is a draw" until nothing changes. After round `t`
//! exactly the positions of value at most `t` have their value, so the fixpoint is the table.

use retro_engine::superstep::solve_stage_by_steps;
use retro_engine::{
    solve_stage, ByteArray, FinalValues, Game, Move, Outcome, Side, SliceId, SolvedSlice, Stage,
    Value, Workspace,
};
use retro_toys::RingHop;
use std::collections::HashMap;
use std::ops::Range;

mod support;

use support::{win_draw_loss as brute_force, Raw};

/// Final values of solved slices, both sides to move.
struct Finals(HashMap<SliceId, [Vec<u8>; 2]>);

impl FinalValues for Finals {
    fn value(&self, side: Side, slice: SliceId, index: u64) -> Value {
        Value(self.0[&slice][side.index()][index as usize])
    }
}

/// Solves every stage with `solve` and compares every raw position with the brute force.
fn check(
    game: &RingHop,
    expected: &HashMap<Raw, u8>,
    driver: &str,
    solve: &dyn Fn(&RingHop, &Stage, &Finals) -> Vec<SolvedSlice>,
) {
    let mut finals = Finals(HashMap::new());
    for stage in game.stages() {
        for s in solve(game, &stage, &finals) {
            finals
                .0
                .insert(s.slice, [s.values[0].to_vec(), s.values[1].to_vec()]);
        }
    }
    for (&(white, black, side), &want) in expected {
        let (slice, key) = game.locate(RingHop::key_of(white, black));
        let have = finals.0[&slice][side.index()][game.index(slice, key) as usize];
        assert_eq!(
            have,
            want,
            "white {white:#b} black {black:#b} {side:?} to move ({driver}, {} cells)",
            game.cells()
        );
    }
    // Every non-canonical slot is marked, every canonical one holds a value.
    for (&slice, [first, second]) in &finals.0 {
        for index in 0..game.slice_len(slice) {
            let canonical = game.is_canonical(slice, game.key(slice, index));
            for v in [first[index as usize], second[index as usize]] {
                assert_eq!(v == Value::NON_CANONICAL.0, !canonical, "{driver}");
            }
        }
    }
}

/// Every driver: the stage kernel in memory and out of core (window 0: every array
/// file-backed, every list spilled), and the superstep kernel.
fn every_driver(n: u32, max: u32) {
    let expected = brute_force(n, max);
    // The game is not degenerate: wins, losses and draws all occur.
    let outcomes: Vec<Outcome> = expected
        .values()
        .map(|&v| Value(v).outcome().unwrap())
        .collect();
    assert!(outcomes.iter().any(|o| matches!(o, Outcome::Win { .. })));
    assert!(outcomes
        .iter()
        .any(|o| matches!(o, Outcome::Loss { plies } if *plies > 0)));
    assert!(outcomes.contains(&Outcome::Draw));
    let game = RingHop::new(n, max).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    for space in [
        Workspace::in_memory(),
        Workspace::out_of_core(scratch.path().into(), 0),
    ] {
        check(&game, &expected, &format!("{space:?}"), &|g, stage, f| {
            solve_stage(g, stage, f, &space, |_| {}).unwrap().0
        });
    }
    check(&game, &expected, "supersteps", &|g, stage, f| {
        solve_stage_by_steps(g, stage, f).unwrap()
    });
}

/// Ring hop as a game that does not tell its un-moves (as relay-sowing games will not): the
/// stage kernel must then pull in every ply.
struct WithoutUnmoves(RingHop);

impl Game for WithoutUnmoves {
    fn stages(&self) -> Vec<Stage> {
        self.0.stages()
    }
    fn slice_count(&self) -> usize {
        self.0.slice_count()
    }
    fn slice_len(&self, slice: SliceId) -> u64 {
        self.0.slice_len(slice)
    }
    fn slice_name(&self, slice: SliceId) -> String {
        self.0.slice_name(slice)
    }
    fn for_each_key(
        &self,
        slice: SliceId,
        range: std::ops::Range<u64>,
        visit: impl FnMut(u64, u64),
    ) {
        self.0.for_each_key(slice, range, visit)
    }
    fn index(&self, slice: SliceId, key: u64) -> u64 {
        self.0.index(slice, key)
    }
    fn key(&self, slice: SliceId, index: u64) -> u64 {
        self.0.key(slice, index)
    }
    fn is_canonical(&self, slice: SliceId, key: u64) -> bool {
        self.0.is_canonical(slice, key)
    }
    fn has_unmoves(&self) -> bool {
        false
    }
    fn moves(&self, side: Side, slice: SliceId, key: u64, visit: impl FnMut(retro_engine::Move)) {
        self.0.moves(side, slice, key, visit)
    }
    fn unmoves(&self, _: Side, _: SliceId, _: u64, _: impl FnMut(SliceId, u64, u64)) {
        panic!("the kernel asked for un-moves of a game without them");
    }
}

#[test]
fn a_game_without_unmoves_is_solved_by_pulling() {
    let expected = brute_force(8, 3);
    let game = WithoutUnmoves(RingHop::new(8, 3).unwrap());
    let scratch = tempfile::tempdir().unwrap();
    for space in [
        Workspace::in_memory(),
        Workspace::out_of_core(scratch.path().into(), 0),
    ] {
        let mut finals = Finals(HashMap::new());
        for stage in game.stages() {
            let (solved, _) = solve_stage(&game, &stage, &finals, &space, |_| {}).unwrap();
            for s in solved {
                finals
                    .0
                    .insert(s.slice, [s.values[0].to_vec(), s.values[1].to_vec()]);
            }
        }
        for (&(white, black, side), &want) in &expected {
            let (slice, key) = game.0.locate(RingHop::key_of(white, black));
            let have = finals.0[&slice][side.index()][game.index(slice, key) as usize];
            assert_eq!(have, want, "{white:#b} {black:#b} {side:?} ({space:?})");
        }
    }
    // A step sees one slice only: without un-moves a stage cannot be split.
    let stage = &game.stages()[4];
    let e = solve_stage_by_steps(&game, stage, &Finals(HashMap::new())).unwrap_err();
    assert!(e.to_string().contains("no un-moves"), "{e}");
}

/// Ring hop with each stage as one slice (its two parity slices side by side): every un-move,
/// claims included, stays in the slice, so split stages run double steps
/// ([`retro_engine::superstep::is_double`]), and since both sides capture, exits are dated odd
/// plies as well as even ones: the double step applies them itself. (Sixteen Musashi's exits
/// are all dated even plies, so its brute-force tests never hand a double step an exit.)
struct OneSlicePerStage<'a>(&'a RingHop);

impl OneSlicePerStage<'_> {
    /// The ring hop slices merged into slice `slice`, and the first one's length.
    fn parts(&self, slice: SliceId) -> (SliceId, SliceId, u64) {
        let first = SliceId(2 * slice.0);
        (first, SliceId(2 * slice.0 + 1), self.0.slice_len(first))
    }

    /// The merged slice of a ring hop slice.
    fn merged(slice: SliceId) -> SliceId {
        SliceId(slice.0 / 2)
    }

    /// A move of ring hop with its slice merged.
    fn moved(mv: Move) -> Move {
        match mv {
            Move::InStage(slice, key) => Move::InStage(Self::merged(slice), key),
            Move::Final(slice, key) => Move::Final(Self::merged(slice), key),
            known => known,
        }
    }
}

impl Game for OneSlicePerStage<'_> {
    fn stages(&self) -> Vec<Stage> {
        self.0
            .stages()
            .into_iter()
            .enumerate()
            .map(|(i, stage)| Stage {
                slices: vec![SliceId(i as u32)],
                ..stage
            })
            .collect()
    }
    fn slice_count(&self) -> usize {
        self.0.slice_count().div_ceil(2)
    }
    fn slice_len(&self, slice: SliceId) -> u64 {
        let (first, second, len) = self.parts(slice);
        let _ = first;
        len + self.0.slice_len(second)
    }
    fn slice_name(&self, slice: SliceId) -> String {
        format!("merged {slice:?}")
    }
    fn for_each_key(&self, slice: SliceId, range: Range<u64>, mut visit: impl FnMut(u64, u64)) {
        for index in range {
            visit(index, self.key(slice, index));
        }
    }
    fn index(&self, slice: SliceId, key: u64) -> u64 {
        let (first, second, len) = self.parts(slice);
        match self.0.index(first, key) {
            i if i < len => i,
            _ => len + self.0.index(second, key),
        }
    }
    fn key(&self, slice: SliceId, index: u64) -> u64 {
        let (first, second, len) = self.parts(slice);
        if index < len {
            self.0.key(first, index)
        } else {
            self.0.key(second, index - len)
        }
    }
    fn is_canonical(&self, slice: SliceId, key: u64) -> bool {
        self.0.is_canonical(slice, key)
    }
    fn claims_stay_in_slice(&self) -> bool {
        true
    }
    fn moves(&self, side: Side, slice: SliceId, key: u64, mut visit: impl FnMut(Move)) {
        self.0.moves(side, slice, key, |mv| visit(Self::moved(mv)))
    }
    fn unmoves(
        &self,
        side: Side,
        slice: SliceId,
        key: u64,
        mut visit: impl FnMut(SliceId, u64, u64),
    ) {
        self.0.unmoves(side, slice, key, |to, to_key, _| {
            let to = Self::merged(to);
            visit(to, to_key, self.index(to, to_key))
        })
    }
}

/// The final values of ring hop's slices as [`OneSlicePerStage`] reads them.
struct MergedFinals<'a>(&'a OneSlicePerStage<'a>, &'a Finals);

impl FinalValues for MergedFinals<'_> {
    fn value(&self, side: Side, slice: SliceId, index: u64) -> Value {
        let (first, second, len) = self.0.parts(slice);
        match index.checked_sub(len) {
            None => self.1.value(side, first, index),
            Some(i) => self.1.value(side, second, i),
        }
    }
}

/// Stages split into double steps (odd plies' claims applied by the step that makes them,
/// exits of every parity) give every position its brute-force value.
#[test]
fn double_steps_with_exits_of_both_parities_match_the_brute_force() {
    for n in [7, 10] {
        let expected = brute_force(n, 3);
        let game = RingHop::new(n, 3).unwrap();
        check(&game, &expected, "double steps", &|g, stage, f| {
            let merged = OneSlicePerStage(g);
            let slice = OneSlicePerStage::merged(stage.slices[0]);
            let whole = &merged.stages()[slice.0 as usize];
            let solved = solve_stage_by_steps(&merged, whole, &MergedFinals(&merged, f)).unwrap();
            let (first, second, len) = merged.parts(slice);
            let [a, b] = &solved[0].values;
            vec![
                SolvedSlice {
                    slice: first,
                    values: [
                        ByteArray::from_slice(&a[..len as usize]),
                        ByteArray::from_slice(&b[..len as usize]),
                    ],
                },
                SolvedSlice {
                    slice: second,
                    values: [
                        ByteArray::from_slice(&a[len as usize..]),
                        ByteArray::from_slice(&b[len as usize..]),
                    ],
                },
            ]
        });
    }
}

#[test]
fn ring_of_seven_every_position() {
    every_driver(7, 3);
}

#[test]
fn ring_of_ten_every_position() {
    every_driver(10, 3);
}

#[test]
fn bad_rings_are_refused() {
    assert!(RingHop::new(2, 1).is_err());
    assert!(RingHop::new(17, 1).is_err());
    assert!(RingHop::new(5, 3).is_err());
}

#[test]
fn a_scratch_error_names_the_operation_and_the_directory() {
    let game = RingHop::new(8, 3).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let missing = scratch.path().join("gone");
    let space = Workspace::out_of_core(missing.clone(), 0);
    let stage = &game.stages()[0];
    let e = solve_stage(&game, stage, &Finals(HashMap::new()), &space, |_| {}).unwrap_err();
    let text = e.to_string();
    let wanted = format!(
        "stage {}: cannot create a scratch file in {}: ",
        stage.name,
        missing.display()
    );
    assert!(text.starts_with(&wanted), "{text}");
    assert_eq!(
        text.matches("No such file or directory").count(),
        1,
        "{text}"
    );
}

/// Final values read from files one of which turned out damaged: answers 0 where it could not
/// read, and says so.
struct DamagedFinals(Finals);

impl FinalValues for DamagedFinals {
    fn value(&self, side: Side, slice: SliceId, index: u64) -> Value {
        self.0.value(side, slice, index)
    }

    fn failure(&self) -> Option<String> {
        Some("checksum mismatch in block 3 of section brown (lower.tbl)".into())
    }
}

#[test]
fn an_unreadable_final_value_stops_the_stage_in_every_driver() {
    let game = RingHop::new(8, 3).unwrap();
    let stages = game.stages();
    let mut finals = Finals(HashMap::new());
    for stage in &stages[..stages.len() - 1] {
        for s in solve_stage(&game, stage, &finals, &Workspace::in_memory(), |_| {})
            .unwrap()
            .0
        {
            finals
                .0
                .insert(s.slice, [s.values[0].to_vec(), s.values[1].to_vec()]);
        }
    }
    let last = stages.last().unwrap();
    assert!(
        !last.depends_on.is_empty(),
        "the last stage reads earlier ones"
    );
    let damaged = DamagedFinals(finals);
    let scratch = tempfile::tempdir().unwrap();
    let check = |e: retro_engine::KernelError, driver: &str| {
        let message = e.to_string();
        assert!(
            matches!(e, retro_engine::KernelError::Input { .. }) && message.contains("lower.tbl"),
            "{driver}: {message}"
        );
    };
    for space in [
        Workspace::in_memory(),
        Workspace::out_of_core(scratch.path().into(), 0),
    ] {
        let e = solve_stage(&game, last, &damaged, &space, |_| {}).unwrap_err();
        check(e, &format!("{space:?}"));
    }
    check(
        solve_stage_by_steps(&game, last, &damaged).unwrap_err(),
        "supersteps",
    );
}
