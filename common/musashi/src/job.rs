//! What a solve job records of Sixteen Musashi ([`GameRules`]): its definition (the board file
//! and the brown limit), file and section names, the published count table and the start
//! position. Solved by [`retro_pipeline::WinDrawLoss`]: only brown can win, so its values are
//! the one-sided distance-to-win of the published tables.

use crate::counts::{format_count_table, CountRow};
use crate::position::Position;
use crate::{Board, Musashi};
use anyhow::{bail, Context, Result};
use retro_engine::{Game, Side as EngineSide, SliceId};
use retro_pipeline::{GameRules, Start, StartPosition};
use retro_store::Manifest;

/// Section of a slice table holding brown-to-move values.
pub const BROWN_SECTION: usize = 0;

impl GameRules for Musashi {
    const NAME: &'static str = "musashi";

    /// `{"board": name, "board_file": text, "max_browns": k}` (the board file's text, so that
    /// a job never depends on a file outside its directory), and for the trap-zone variant
    /// `"trap_points": "00,04,40,44"` (absent for the base game, whose definition is unchanged).
    fn definition(&self) -> serde_json::Value {
        let mut definition = serde_json::json!({
            "board": self.board().name,
            "board_file": self.board().source,
            "max_browns": self.max_browns(),
        });
        if let Some(trap) = self.board().trap {
            definition["trap_points"] = self.board().point_list(trap).into();
        }
        definition
    }

    fn from_definition(definition: &serde_json::Value) -> Result<Musashi> {
        let source = definition["board_file"]
            .as_str()
            .context("definition has no board file")?;
        let max_browns = definition["max_browns"]
            .as_u64()
            .context("definition has no brown limit")?;
        let mut board = Board::from_text(source).context("definition's board file")?;
        if let Some(trap) = definition.get("trap_points") {
            let text = trap
                .as_str()
                .context("definition's trap points are not a string")?;
            let mask = board
                .parse_trap(text)
                .map_err(|e| anyhow::anyhow!("definition's trap points: {e}"))?;
            board = board.with_trap(mask);
        }
        if max_browns as usize >= board.len() {
            bail!(
                "brown limit {max_browns} is too large for {} ({} points)",
                board.name,
                board.len()
            );
        }
        crate::game::BulkClaims::from_env().map_err(anyhow::Error::msg)?;
        Ok(Musashi::new(board, Some(max_browns as usize)))
    }

    fn describe(&self) -> String {
        match self.board().trap {
            None => format!("{}, up to {} browns", self.board().name, self.max_browns()),
            Some(trap) => format!(
                "{} with the trap zone {}, up to {} browns",
                self.board().name,
                self.board().point_list(trap),
                self.max_browns()
            ),
        }
    }

    /// A stage reads only stages with fewer browns, and slices do not depend on the brown
    /// limit: the finished stages of a solve of the same board file with a lower limit are
    /// finished stages of this one, byte for byte.
    fn grows_from(&self, old: &serde_json::Value) -> bool {
        let trap = self.board().trap.map(|t| self.board().point_list(t));
        old["board_file"].as_str() == Some(self.board().source.as_str())
            && old.get("trap_points").and_then(|t| t.as_str()) == trap.as_deref()
            && old["max_browns"]
                .as_u64()
                .is_some_and(|k| k as usize <= self.max_browns())
    }

    fn table_file_name(&self, slice: SliceId) -> String {
        let (k, rep) = self.slice_parts(slice);
        format!("browns{k:02}-black{}.tbl", self.board().point_name(rep))
    }

    fn section_names(&self) -> [&'static str; 2] {
        ["brown to move", "black to move"]
    }

    fn count_table(&self, manifest: &Manifest) -> Option<Result<String>> {
        Some(Ok(format_count_table(&count_rows_from_manifest(
            self, manifest,
        ))))
    }

    /// The rows of the position (as `probe` takes them), e.g. `ooooo,o...o,o.X.o,o...o,ooooo`.
    fn position_name(&self, slice: SliceId, key: u64) -> String {
        self.position(slice, key, crate::Side::Brown)
            .rows(self.board())
    }

    fn start(&self) -> Start {
        let Some(notation) = self.board().start.clone() else {
            return Start::None;
        };
        let pos = match Position::parse_with_side(self.board(), &notation) {
            Ok(pos) => pos,
            Err(e) => {
                return Start::NotCovered {
                    notation,
                    why: format!("the board file's start position is invalid: {e}"),
                }
            }
        };
        let browns = pos.browns.count_ones() as usize;
        if browns > self.max_browns() {
            return Start::NotCovered {
                notation,
                why: format!("it has {browns} browns; solved up to {}", self.max_browns()),
            };
        }
        let (slice, _, index) = self.locate(pos.black, pos.browns);
        let side = match pos.side {
            crate::Side::Brown => EngineSide::First,
            crate::Side::Black => EngineSide::Second,
        };
        Start::At(StartPosition {
            notation,
            slice,
            index,
            side,
        })
    }

    fn describe_value(&self, side: EngineSide, byte: u8) -> Option<String> {
        let side = match side {
            EngineSide::First => crate::Side::Brown,
            EngineSide::Second => crate::Side::Black,
        };
        Some(crate::values::describe(byte, side))
    }
}

/// Count rows from the histograms recorded in the manifest at solve time.
pub fn count_rows_from_manifest(game: &Musashi, manifest: &Manifest) -> Vec<CountRow> {
    let mut rows: Vec<CountRow> = (0..=game.max_browns()).map(CountRow::new).collect();
    for r in &manifest.slices {
        if r.id as usize >= game.slice_count() {
            continue;
        }
        let (k, _) = game.slice_parts(SliceId(r.id));
        for (section, hist) in r.histograms.iter().enumerate() {
            let row = &mut rows[k];
            let target = if section == BROWN_SECTION {
                &mut row.brown_to_move
            } else {
                &mut row.black_to_move
            };
            for (&v, &n) in hist {
                target[v as usize] += n;
            }
        }
    }
    rows
}

/// The registered name and definition of a built-in board solved up to `max_browns` browns
/// (all if `None`): what `retro solve --game musashi25` records.
pub fn builtin_definition(
    board: &str,
    max_browns: Option<usize>,
) -> Option<(&'static str, serde_json::Value)> {
    let board = Board::builtin(board)?;
    Some((Musashi::NAME, Musashi::new(board, max_browns).definition()))
}
