//! The game boundary: everything above the engine reaches a game through [`JobGame`].
//!
//! Three layers meet here:
//!
//! * **Rules** ([`retro_engine::Game`], and [`ScoreGame`] for scored games): positions,
//!   stages, slices, moves — written once per game, in its own crate.
//! * **What a job records of a game** ([`GameRules`]): its registered name, the definition
//!   document that rebuilds it, file and section names, its summary table, its start
//!   position — also in the game's crate.
//! * **A solver** ([`WinDrawLoss`], [`ScoreMargin`]): how values are encoded and propagated.
//!   Wrapping a game in a solver gives a [`JobGame`], the object-safe trait the pipeline,
//!   the coordinator, the workers and the CLI use without knowing which game it is.
//!
//! The registry (the `retro-games` crate) maps a name and a definition to a `JobGame`; it is
//! handed to the coordinator and the workers as an [`OpenGame`] function, so that none of them
//! depends on a game crate.

use crate::stage::{FinalSection, FinalSlice, Finals};
use anyhow::Result;
use retro_engine::margin::{self, solve_margin_stage, FinalMargins, Margin, ScoreGame};
use retro_engine::margin_graph;
use retro_engine::margin_steps;
use retro_engine::recurrence;
use retro_engine::superstep::{self, SlotState, StepOutput};
use retro_engine::{
    solve_stage_into, Game, KernelError, Outcome, PlyReport, Side, SliceId, SliceSink, SolvedSlice,
    Stage, StageTimes, Value, Workspace,
};
use retro_store::Manifest;
use std::sync::Arc;

/// What a job records of a game, beside its rules: implemented by each game crate.
pub trait GameRules: Game + Send + Sync + Sized + 'static {
    /// The registered name, written into manifests, tasks and submissions ("musashi").
    const NAME: &'static str;

    /// The definition document: everything that, with the name, rebuilds exactly this game
    /// (board, limits, rule options). Recorded in every manifest and task.
    fn definition(&self) -> serde_json::Value;

    /// Rebuilds the game from a definition document. Definitions come from manifests and
    /// submissions, so they are untrusted: a bad one is a clear error, never a panic.
    fn from_definition(definition: &serde_json::Value) -> Result<Self>;

    /// A few words for status lines and messages ("BOARD25, up to 7 browns").
    fn describe(&self) -> String;

    /// Whether the finished stages of a solve of definition `old` (of this game) are finished
    /// stages of this one, byte for byte, so that a directory holding `old` can be grown into
    /// a solve of this game. Default: only an equal definition.
    fn grows_from(&self, old: &serde_json::Value) -> bool {
        *old == self.definition()
    }

    /// The table file of `slice`, relative to the job directory. Default: the slice name with
    /// everything but letters, digits and `-` turned into `-`, and `.tbl`.
    fn table_file_name(&self, slice: SliceId) -> String {
        let name: String = self
            .slice_name(slice)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        format!("{name}.tbl")
    }

    /// The names of a table's two sections (values with the first and the second side to
    /// move), written into every table file.
    fn section_names(&self) -> [&'static str; 2] {
        ["first to move", "second to move"]
    }

    /// Whether the slots of `slice` with `side` to move hold positions of the game. SIMPEI's
    /// placement layers have one side to move only: the other section is stored but never
    /// counted. Default: every section.
    fn is_position(&self, slice: SliceId, side: Side) -> bool {
        let _ = (slice, side);
        true
    }

    /// The game's own summary table (`retro counts`) from the value histograms of a manifest,
    /// or `None` for the solver's generic table (see [`JobGame::count_table`]).
    fn count_table(&self, manifest: &Manifest) -> Option<Result<String>> {
        let _ = manifest;
        None
    }

    /// The start position, if the game has one.
    fn start(&self) -> Start {
        Start::None
    }

    /// What a stored byte means for a position with `side` to move, in the game's words
    /// ("brown wins in 31 plies"), or `None` for the solver's generic words.
    fn describe_value(&self, side: Side, byte: u8) -> Option<String> {
        let _ = (side, byte);
        None
    }

    /// The position `(slice, key)` in the game's notation, for messages (side to move not
    /// included). Default: the slice's name and the key.
    fn position_name(&self, slice: SliceId, key: u64) -> String {
        format!("{} key {key:#x}", self.slice_name(slice))
    }
}

/// A game's start position, as far as a solve covers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// The game has no start position.
    None,
    /// The start position lies outside what this definition solves.
    NotCovered {
        /// The position in the game's notation.
        notation: String,
        /// Why, in words ("it has 16 browns; solved up to 6").
        why: String,
    },
    /// The start position, located in the tables.
    At(StartPosition),
}

/// A game's start position, located in its tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartPosition {
    /// The position in the game's notation.
    pub notation: String,
    /// Its slice.
    pub slice: SliceId,
    /// Its index in the slice.
    pub index: u64,
    /// The side to move.
    pub side: Side,
}

/// A value read from a table, typed by the solver that wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solved {
    /// Win, draw or loss with the distance to the end.
    Outcome(Outcome),
    /// A score margin for the side to move.
    Margin(Margin),
    /// The slot is a symmetric duplicate (or outside the game) and holds no value.
    NotCanonical,
}

impl Solved {
    /// The class of the generic summary table: win, draw, loss (positive, zero, negative
    /// margin) as 0, 1, 2; `None` for no value.
    pub fn class(self) -> Option<usize> {
        match self {
            Solved::Outcome(Outcome::Win { .. }) => Some(0),
            Solved::Outcome(Outcome::Draw) => Some(1),
            Solved::Outcome(Outcome::Loss { .. }) => Some(2),
            Solved::Margin(Margin(m)) => Some(if m > 0 {
                0
            } else if m == 0 {
                1
            } else {
                2
            }),
            Solved::NotCanonical => None,
        }
    }
}

impl std::fmt::Display for Solved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plies = |n: u32| if n == 1 { "ply" } else { "plies" };
        match *self {
            Solved::Outcome(Outcome::Win { plies: n }) => {
                write!(f, "the side to move wins in {n} {}", plies(n))
            }
            Solved::Outcome(Outcome::Loss { plies: n }) => {
                write!(f, "the side to move loses in {n} {}", plies(n))
            }
            Solved::Outcome(Outcome::Draw) => write!(f, "draw"),
            Solved::Margin(m) => write!(f, "the side to move can force a margin of {:+}", m.0),
            Solved::NotCanonical => write!(f, "not a canonical position"),
        }
    }
}

/// A game with its solver, as the pipeline, the coordinator, the workers and the CLI see it.
pub trait JobGame: Send + Sync {
    /// The registered name ([`GameRules::NAME`]).
    fn name(&self) -> &'static str;
    /// The definition document ([`GameRules::definition`]).
    fn definition(&self) -> serde_json::Value;
    /// A few words for status lines ([`GameRules::describe`]).
    fn describe(&self) -> String;
    /// Whether a finished solve of `old` is part of this one ([`GameRules::grows_from`]).
    fn grows_from(&self, old: &serde_json::Value) -> bool;
    /// The stages, in an order in which each comes after those it reads.
    fn stages(&self) -> Vec<Stage>;
    /// How many slices the game has.
    fn slice_count(&self) -> usize;
    /// Index slots of `slice` (one side to move).
    fn slice_len(&self, slice: SliceId) -> u64;
    /// The slice's name for logs and tables ("browns=12 black=22").
    fn slice_name(&self, slice: SliceId) -> String;
    /// The slice's table file, relative to the job directory.
    fn table_file_name(&self, slice: SliceId) -> String;
    /// The names of a table's two sections.
    fn section_names(&self) -> [&'static str; 2];
    /// Whether the slots of `slice` with `side` to move hold positions of the game.
    fn is_position(&self, slice: SliceId, side: Side) -> bool;
    /// Which sections of the tables of earlier stages a stage reads: those of the side moved
    /// to by moves that leave a stage. (Sixteen Musashi reads only brown-to-move values.)
    fn reads_sections(&self) -> [bool; 2];
    /// The side whose values final tables do not store ([`retro_store::Section::Derived`]):
    /// the side no later stage reads, when the other side is read (and so stored). Its values
    /// are one ply of the defining recurrence ([`JobGame::recurrence`]) over the stored side's,
    /// computed by readers. Sixteen Musashi: black to move (62% of BOARD33's table bytes).
    fn derived_side(&self) -> Option<Side> {
        let read = self.reads_sections();
        Side::BOTH
            .into_iter()
            .find(|side| !read[side.index()] && read[side.other().index()])
    }
    /// Solves one stage from the final values of the stages it reads; the slices the solver
    /// hands to `sink` as they are solved ([`retro_engine::SliceSink`]) are not returned.
    fn solve_stage(
        &self,
        stage: &Stage,
        finals: &Finals,
        space: &Workspace,
        on_ply: &mut dyn FnMut(PlyReport),
        sink: Option<SliceSink>,
    ) -> Result<(Vec<SolvedSlice>, StageTimes), KernelError>;
    /// Whether a stage can be solved in supersteps (split into one task per slice and ply).
    fn splits(&self) -> bool;
    /// Whether step `ply` of a split stage is a double step, which also applies the messages
    /// its slice sent itself for ply `ply` ([`superstep::is_double`]): what the coordinator
    /// hands such a step.
    fn double_step(&self, ply: u32) -> bool;
    /// Bytes of the stage kernel's arrays for a slice of `len` positions out of core, where
    /// drivers ask for compact arrays ([`retro_engine::compact_workspace_slice_bytes`]): what
    /// windows are sized with. Default: value bytes and bitmaps.
    fn out_of_core_slice_bytes(&self, len: u64) -> u64 {
        retro_engine::workspace::slice_array_bytes(len)
    }
    /// What solving `stage` in memory holds besides its inputs, if the game's solver knows
    /// better than the win/draw/loss kernel's bytes per slot ([`crate::stage::stage_memory`]).
    fn in_memory_bytes(&self, stage: &Stage) -> Option<u64> {
        let _ = stage;
        None
    }
    /// Slots of the state a superstep keeps for `slice` of `stage` (the slice's length, or for
    /// score games its length times the stage's margin bound: every threshold at once).
    fn state_len(&self, stage: &Stage, slice: SliceId) -> Result<u64, KernelError> {
        let _ = stage;
        Ok(self.slice_len(slice))
    }
    /// The first superstep of a slot ([`superstep::first_step`]).
    fn first_step(
        &self,
        stage: &Stage,
        slot: u32,
        finals: &Finals,
    ) -> Result<(SlotState, StepOutput), KernelError>;
    /// A later superstep of a slot ([`superstep::step`]).
    fn step(
        &self,
        stage: &Stage,
        slot: u32,
        ply: u32,
        state: &SlotState,
        incoming: &[(Side, &[u64])],
        dated: &[(Side, &[u64])],
    ) -> Result<StepOutput, KernelError>;
    /// The values of a slot once its stage is done ([`superstep::finish`]).
    fn finish(
        &self,
        stage: &Stage,
        slot: u32,
        state: SlotState,
    ) -> Result<SolvedSlice, KernelError>;
    /// The value a table byte stands for.
    fn decode(&self, byte: u8) -> Solved;
    /// The byte a slot that is not canonical holds ([`Solved::NotCanonical`]).
    fn non_canonical_byte(&self) -> u8;
    /// The summary table printed by `retro counts` and written as `counts.csv`: the game's
    /// own, or the solver's generic one (per stage and side to move, positions by outcome).
    fn count_table(&self, manifest: &Manifest) -> Result<String>;
    /// The start position ([`GameRules::start`]).
    fn start(&self) -> Start;
    /// What a stored byte means with `side` to move, in words: the game's
    /// ([`GameRules::describe_value`]) or the solver's ([`Solved`]).
    fn describe_value(&self, side: Side, byte: u8) -> String;
    /// The position at `index` of `slice` in the game's notation ([`GameRules::position_name`]).
    fn position_name(&self, slice: SliceId, index: u64) -> String;
    /// The byte the solver's defining recurrence gives `index` of `slice` with `side` to move,
    /// reading each successor's stored byte (the other side to move) through
    /// `stored(slice, index)`; `None` for a slot that is not canonical (it must hold the
    /// non-canonical marker). What `retro verify --recurrence` checks every table against.
    fn recurrence(
        &self,
        side: Side,
        slice: SliceId,
        index: u64,
        stored: &mut dyn FnMut(SliceId, u64) -> Result<u8>,
    ) -> Result<Option<u8>> {
        let mut byte = [0u8];
        self.recurrence_range(side, slice, index, &mut byte, stored)?;
        Ok((byte[0] != self.non_canonical_byte()).then_some(byte[0]))
    }
    /// [`JobGame::recurrence`] for the slots `first..first + out.len()` of `slice`, into `out`
    /// (the non-canonical marker for slots that are not canonical), stepping keys in order as
    /// the kernel's sweeps do rather than decoding each index: what derives a whole section.
    fn recurrence_range(
        &self,
        side: Side,
        slice: SliceId,
        first: u64,
        out: &mut [u8],
        stored: &mut dyn FnMut(SliceId, u64) -> Result<u8>,
    ) -> Result<()>;
}

/// Fills `out` with `byte_of(key)` for the canonical keys of the slots `first..` of `slice`
/// and `marker` for the others, in key order; stops at the first error.
fn sweep_keys<G: Game>(
    game: &G,
    slice: SliceId,
    first: u64,
    out: &mut [u8],
    marker: u8,
    mut byte_of: impl FnMut(u64) -> Result<u8>,
) -> Result<()> {
    let mut failure = None;
    game.for_each_key(slice, first..first + out.len() as u64, |index, key| {
        if failure.is_some() {
            return;
        }
        let slot = &mut out[(index - first) as usize];
        if !game.is_canonical(slice, key) {
            *slot = marker;
            return;
        }
        match byte_of(key) {
            Ok(byte) => *slot = byte,
            Err(e) => failure = Some(e),
        }
    });
    failure.map_or(Ok(()), Err)
}

/// Opens a registered game from its name and definition (the registry's job): what the
/// coordinator and the workers are given to rebuild the game of a job or a task.
pub type OpenGame = fn(&str, &serde_json::Value) -> Result<Arc<dyn JobGame>>;

/// The sections a game's stages read: for each side whose moves leave a stage, the other
/// side's values (the side to move after such a move).
fn sections_read<G: Game>(game: &G) -> [bool; 2] {
    let mut read = [false; 2];
    for side in Side::BOTH {
        if game.leaves_stage(side) {
            read[side.other().index()] = true;
        }
    }
    read
}

/// The generic summary table: one line per stage and side to move with how many canonical
/// positions each value class holds, classes named by `class`.
fn generic_count_table<G: GameRules>(
    game: &G,
    manifest: &Manifest,
    header: &str,
    class: impl Fn(u8) -> Option<usize>,
) -> String {
    let classes = header.split(',').count();
    let stages = game.stages();
    let mut rows: Vec<[Vec<u64>; 2]> = vec![[vec![0; classes], vec![0; classes]]; stages.len()];
    for record in &manifest.slices {
        for (section, histogram) in record.histograms.iter().enumerate().take(2) {
            for (&v, &n) in histogram {
                if let Some(c) = class(v) {
                    rows[record.stage.min(stages.len() - 1)][section][c] += n;
                }
            }
        }
    }
    let names = game.section_names();
    let mut out = format!("stage,side,positions,{header}\n");
    for (stage, row) in stages.iter().zip(&rows) {
        for side in Side::BOTH {
            let counts = &row[side.index()];
            let total: u64 = counts.iter().sum();
            let cells: Vec<String> = counts.iter().map(u64::to_string).collect();
            out += &format!(
                "{},{},{total},{}\n",
                stage.name,
                names[side.index()],
                cells.join(",")
            );
        }
    }
    out
}

/// Win/draw/loss with the distance to the end ([`Value`]), propagated by the kernel: the
/// solver of games without scores. A game whose one side cannot win ([`Game::can_win`]) gets
/// the one-sided distance-to-win encoding of Sixteen Musashi from the same code.
pub struct WinDrawLoss<G>(pub G);

/// Signed score margins over the rest of the game ([`Margin`]; endless play counts 0): the
/// solver of scored games, one win/draw/loss run per threshold (see
/// [`retro_engine::margin`]).
pub struct ScoreMargin<G>(pub G);

impl FinalMargins for Finals {
    fn margin(&self, side: Side, slice: SliceId, index: u64) -> Margin {
        Margin(retro_engine::FinalValues::value(self, side, slice, index).0 as i8)
    }

    fn failure(&self) -> Option<String> {
        retro_engine::FinalValues::failure(self)
    }
}

/// The parts of [`JobGame`] every solver answers the same way from [`GameRules`].
macro_rules! described_by_rules {
    () => {
        fn name(&self) -> &'static str {
            G::NAME
        }
        fn definition(&self) -> serde_json::Value {
            self.0.definition()
        }
        fn describe(&self) -> String {
            self.0.describe()
        }
        fn grows_from(&self, old: &serde_json::Value) -> bool {
            self.0.grows_from(old)
        }
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
        fn table_file_name(&self, slice: SliceId) -> String {
            self.0.table_file_name(slice)
        }
        fn section_names(&self) -> [&'static str; 2] {
            self.0.section_names()
        }
        fn is_position(&self, slice: SliceId, side: Side) -> bool {
            self.0.is_position(slice, side)
        }
        fn reads_sections(&self) -> [bool; 2] {
            sections_read(&self.0)
        }
        fn start(&self) -> Start {
            self.0.start()
        }
        fn describe_value(&self, side: Side, byte: u8) -> String {
            self.0
                .describe_value(side, byte)
                .unwrap_or_else(|| self.decode(byte).to_string())
        }
        fn position_name(&self, slice: SliceId, index: u64) -> String {
            self.0.position_name(slice, self.0.key(slice, index))
        }
        fn count_table(&self, manifest: &Manifest) -> Result<String> {
            self.0.count_table(manifest).unwrap_or_else(|| {
                Ok(generic_count_table(
                    &self.0,
                    manifest,
                    Self::CLASSES,
                    |byte| self.decode(byte).class(),
                ))
            })
        }
    };
}

impl<G> WinDrawLoss<G> {
    /// The classes of the generic summary table ([`Solved::class`]).
    const CLASSES: &'static str = "win,draw,loss";
}

impl<G> ScoreMargin<G> {
    /// The classes of the generic summary table ([`Solved::class`]).
    const CLASSES: &'static str = "positive,zero,negative";
}

impl<G: GameRules> JobGame for WinDrawLoss<G> {
    described_by_rules!();

    fn solve_stage(
        &self,
        stage: &Stage,
        finals: &Finals,
        space: &Workspace,
        on_ply: &mut dyn FnMut(PlyReport),
        sink: Option<SliceSink>,
    ) -> Result<(Vec<SolvedSlice>, StageTimes), KernelError> {
        solve_stage_into(&self.0, stage, finals, space, on_ply, sink)
    }

    fn out_of_core_slice_bytes(&self, len: u64) -> u64 {
        retro_engine::compact_workspace_slice_bytes(&self.0, len)
    }

    fn splits(&self) -> bool {
        self.0.splits()
    }

    fn double_step(&self, ply: u32) -> bool {
        superstep::is_double(&self.0, ply)
    }

    fn first_step(
        &self,
        stage: &Stage,
        slot: u32,
        finals: &Finals,
    ) -> Result<(SlotState, StepOutput), KernelError> {
        superstep::first_step(&self.0, stage, slot, finals)
    }

    fn step(
        &self,
        stage: &Stage,
        slot: u32,
        ply: u32,
        state: &SlotState,
        incoming: &[(Side, &[u64])],
        dated: &[(Side, &[u64])],
    ) -> Result<StepOutput, KernelError> {
        superstep::step(&self.0, stage, slot, ply, state, incoming, dated)
    }

    fn finish(
        &self,
        stage: &Stage,
        slot: u32,
        state: SlotState,
    ) -> Result<SolvedSlice, KernelError> {
        Ok(superstep::finish(&self.0, stage, slot, state))
    }

    fn recurrence_range(
        &self,
        side: Side,
        slice: SliceId,
        first: u64,
        out: &mut [u8],
        stored: &mut dyn FnMut(SliceId, u64) -> Result<u8>,
    ) -> Result<()> {
        let game = &self.0;
        sweep_keys(game, slice, first, out, Value::NON_CANONICAL.0, |key| {
            let value = recurrence::value(game, side, slice, key, |s, k| {
                stored(s, game.index(s, k)).map(Value)
            })?;
            Ok(value.0)
        })
    }

    fn decode(&self, byte: u8) -> Solved {
        match Value(byte).outcome() {
            Some(outcome) => Solved::Outcome(outcome),
            None => Solved::NotCanonical,
        }
    }

    fn non_canonical_byte(&self) -> u8 {
        Value::NON_CANONICAL.0
    }
}

impl<G: GameRules + ScoreGame> JobGame for ScoreMargin<G> {
    described_by_rules!();

    fn solve_stage(
        &self,
        stage: &Stage,
        finals: &Finals,
        space: &Workspace,
        on_ply: &mut dyn FnMut(PlyReport),
        _sink: Option<SliceSink>,
    ) -> Result<(Vec<SolvedSlice>, StageTimes), KernelError> {
        // The margin solver returns every slice (its thresholds reuse the stage's arrays).
        let (margins, times) = solve_margin_stage(&self.0, stage, finals, space, on_ply)?;
        let solved = margins
            .into_iter()
            .map(|m| SolvedSlice {
                slice: m.slice,
                values: m.margins,
            })
            .collect();
        Ok((solved, times))
    }

    fn splits(&self) -> bool {
        self.0.splits()
    }

    fn double_step(&self, ply: u32) -> bool {
        margin_steps::is_double(ply)
    }

    fn in_memory_bytes(&self, stage: &Stage) -> Option<u64> {
        // The one-pass margin solver's graph (`retro_engine::margin_graph`).
        Some(margin_graph::estimated_bytes(&self.0, stage))
    }

    fn state_len(&self, stage: &Stage, slice: SliceId) -> Result<u64, KernelError> {
        margin_steps::state_len(&self.0, stage, slice)
    }

    fn first_step(
        &self,
        stage: &Stage,
        slot: u32,
        finals: &Finals,
    ) -> Result<(SlotState, StepOutput), KernelError> {
        margin_steps::first_step(&self.0, stage, slot, finals)
    }

    fn step(
        &self,
        stage: &Stage,
        slot: u32,
        ply: u32,
        state: &SlotState,
        incoming: &[(Side, &[u64])],
        dated: &[(Side, &[u64])],
    ) -> Result<StepOutput, KernelError> {
        margin_steps::step(&self.0, stage, slot, ply, state, incoming, dated)
    }

    fn finish(
        &self,
        stage: &Stage,
        slot: u32,
        state: SlotState,
    ) -> Result<SolvedSlice, KernelError> {
        let m = margin_steps::finish(&self.0, stage, slot, state)?;
        Ok(SolvedSlice {
            slice: m.slice,
            values: m.margins,
        })
    }

    fn recurrence_range(
        &self,
        side: Side,
        slice: SliceId,
        first: u64,
        out: &mut [u8],
        stored: &mut dyn FnMut(SliceId, u64) -> Result<u8>,
    ) -> Result<()> {
        let game = &self.0;
        let marker = Margin::NON_CANONICAL.0 as u8;
        sweep_keys(game, slice, first, out, marker, |key| {
            let margin = margin::recurrence(game, side, slice, key, |s, k| {
                stored(s, game.index(s, k)).map(|b| Margin(b as i8))
            })?;
            Ok(margin as i8 as u8)
        })
    }

    fn decode(&self, byte: u8) -> Solved {
        let margin = Margin(byte as i8);
        if margin == Margin::NON_CANONICAL {
            Solved::NotCanonical
        } else {
            Solved::Margin(margin)
        }
    }

    fn non_canonical_byte(&self) -> u8 {
        Margin::NON_CANONICAL.0 as u8
    }
}

/// Keeps only the sections of a solved slice that later stages read.
pub fn final_slice(values: [retro_engine::ByteArray; 2], read: [bool; 2]) -> FinalSlice {
    let [first, second] = values;
    let kept = |values, read: bool| read.then_some(FinalSection::Resident(values));
    FinalSlice([kept(first, read[0]), kept(second, read[1])])
}
