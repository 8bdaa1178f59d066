//! What a job records of SIMPEI: its name, its definition (the row rule and the start rule),
//! file and section names, the published-style summary table and words for values.

use crate::board::Hole;
use crate::game::{RowRule, RowShape, Simpei, FULL};
use crate::index::LAYERS;
use crate::position::{Colour, Position};
use anyhow::{bail, Result};
use retro_engine::{Game, Outcome, Side, SliceId, Value};
use retro_pipeline::{GameRules, Start, StartPosition};
use retro_store::Manifest;

/// The row rule a solve uses unless told otherwise: the reading that reproduces the published
/// tables (`docs/simpei.md`).
pub const DEFAULT_ROWS: RowRule = RowRule::AfterPly;

/// How the game starts: the official rule prescribes the first hole; the free rule does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartRule {
    /// White's first piece goes on the prescribed hole ([`OFFICIAL_FIRST_HOLE`]).
    Official,
    /// White's first piece goes on any hole.
    Free,
}

/// The hole the official rule prescribes for the first piece (see `docs/simpei.md` for how
/// it was determined).
pub const OFFICIAL_FIRST_HOLE: &str = "l11";

impl StartRule {
    /// The name in definitions and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            StartRule::Official => "official",
            StartRule::Free => "free",
        }
    }

    /// The start position: the empty board (free), or the prescribed first piece placed with
    /// black to move (official).
    pub fn position(self) -> Position {
        match self {
            StartRule::Free => Position::START,
            StartRule::Official => Position {
                white: Hole::parse(OFFICIAL_FIRST_HOLE).expect("a hole name").bit(),
                black: 0,
                to_move: Colour::Black,
            },
        }
    }
}

/// The side whose values a slice's table holds for the game: white with 8 pieces (the
/// published normalisation), else the placing colour.
pub fn counted_side(slice: SliceId) -> Side {
    let layer = Simpei::layer_of(slice);
    if layer == FULL {
        Side::First
    } else {
        Simpei::side_of(Colour::placing(layer))
    }
}

/// The row shape a solve uses unless told otherwise (`docs/simpei.md`).
pub const DEFAULT_SHAPE: RowShape = RowShape::ThroughMovedPiece;

/// The definition document of a game (without building it).
pub fn definition_of(rows: RowRule, shape: RowShape, start: StartRule) -> serde_json::Value {
    serde_json::json!({"rows": rows.name(), "shape": shape.name(), "start": start.name()})
}

/// `pieces,positions,win,draw,loss` for every layer with a finished slice, from the value
/// histograms of a manifest: positions up to symmetry, with 8 pieces white to move.
pub fn count_table(manifest: &Manifest) -> String {
    let mut rows = [[0u64; 3]; LAYERS as usize];
    let mut seen = [false; LAYERS as usize];
    for record in &manifest.slices {
        let slice = SliceId(record.id);
        let layer = Simpei::layer_of(slice) as usize;
        seen[layer] = true;
        let section = counted_side(slice).index();
        for (&byte, &n) in record.histograms.get(section).into_iter().flatten() {
            match Value(byte).outcome() {
                Some(Outcome::Win { .. }) => rows[layer][0] += n,
                Some(Outcome::Draw) => rows[layer][1] += n,
                Some(Outcome::Loss { .. }) => rows[layer][2] += n,
                None => {}
            }
        }
    }
    let mut out = String::new();
    for (layer, [win, draw, loss]) in rows.iter().enumerate() {
        if seen[layer] {
            out += &format!("{layer},{},{win},{draw},{loss}\n", win + draw + loss);
        }
    }
    out
}

/// A value in words for `colour` to move: "white to move wins in 21 plies".
pub fn describe(colour: Colour, byte: u8) -> String {
    let plies = |n: u32| {
        if n == 1 {
            "1 ply".to_string()
        } else {
            format!("{n} plies")
        }
    };
    match Value(byte).outcome() {
        Some(Outcome::Win { plies: n }) => {
            format!("{} to move wins in {}", colour.name(), plies(n))
        }
        Some(Outcome::Loss { plies: n }) => {
            format!("{} to move loses in {}", colour.name(), plies(n))
        }
        Some(Outcome::Draw) => format!("{} to move: draw", colour.name()),
        None => "not a canonical position".into(),
    }
}

impl GameRules for Simpei {
    const NAME: &'static str = "simpei";

    /// `{"rows": <row rule>, "shape": <row shape>, "start": "official" | "free"}`.
    fn definition(&self) -> serde_json::Value {
        definition_of(self.rows(), self.shape(), self.start())
    }

    fn from_definition(definition: &serde_json::Value) -> Result<Simpei> {
        let Some(rows) = definition["rows"].as_str() else {
            bail!("SIMPEI definition has no 'rows' (the row rule)");
        };
        let rows = RowRule::parse(rows).map_err(anyhow::Error::msg)?;
        let Some(shape) = definition["shape"].as_str() else {
            bail!("SIMPEI definition has no 'shape' (what counts as a row of three)");
        };
        let shape = RowShape::parse(shape).map_err(anyhow::Error::msg)?;
        let start = match definition["start"].as_str() {
            Some("official") => StartRule::Official,
            Some("free") => StartRule::Free,
            other => bail!("SIMPEI start {other:?}: expected \"official\" or \"free\""),
        };
        Ok(Simpei::new(rows).shaped(shape).starting(start))
    }

    fn describe(&self) -> String {
        format!(
            "SIMPEI, rows {} checked {}, {} start",
            self.shape().name(),
            self.rows().name(),
            self.start().name()
        )
    }

    /// Only the row rules decide the tables: a directory solved with the other start rule is
    /// the same solve.
    fn grows_from(&self, old: &serde_json::Value) -> bool {
        old["rows"].as_str() == Some(self.rows().name())
            && old["shape"].as_str() == Some(self.shape().name())
    }

    fn section_names(&self) -> [&'static str; 2] {
        ["white to move", "black to move"]
    }

    /// Before the 8th piece only the placing side can be to move.
    fn is_position(&self, slice: SliceId, side: Side) -> bool {
        Simpei::is_turn(slice, side)
    }

    fn count_table(&self, manifest: &Manifest) -> Option<Result<String>> {
        Some(Ok(count_table(manifest)))
    }

    fn start(&self) -> Start {
        let pos = self.start().position();
        let (slice, key) = self.locate(pos.white, pos.black);
        Start::At(StartPosition {
            notation: pos.notation(),
            slice,
            index: self.index(slice, key),
            side: Simpei::side_of(pos.to_move),
        })
    }

    fn describe_value(&self, side: Side, byte: u8) -> Option<String> {
        Some(describe(Simpei::colour_of(side), byte))
    }

    /// The board part of the notation (`w...,.b..,....,..../...,.w.,...`).
    fn position_name(&self, _slice: SliceId, key: u64) -> String {
        let (white, black) = Simpei::masks(key);
        let notation = Position {
            white,
            black,
            to_move: Colour::White,
        }
        .notation();
        notation
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string()
    }
}
