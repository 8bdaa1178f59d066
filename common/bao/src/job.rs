//! What a solve job records of a Bao variant ([`GameRules`]): its definition, the start
//! position and the position notation in messages.

use crate::game::BaoGame;
use crate::row::Row;
use crate::rules::EndlessRule;
use anyhow::{Context, Result};
use retro_engine::{Game, Side, SliceId};
use retro_pipeline::{GameRules, Start, StartPosition};

impl GameRules for BaoGame {
    const NAME: &'static str = "bao";

    /// `{"row": n, "stones": k, "endless": "cut-off" | "illegal"}`.
    fn definition(&self) -> serde_json::Value {
        serde_json::json!({
            "row": self.row().len(),
            "stones": self.stones_per_hole(),
            "endless": self.endless().name(),
        })
    }

    fn from_definition(definition: &serde_json::Value) -> Result<BaoGame> {
        let number = |field: &str| -> Result<u64> {
            definition[field]
                .as_u64()
                .with_context(|| format!("Bao definition has no number '{field}'"))
        };
        let row = Row::new(usize::try_from(number("row")?).unwrap_or(usize::MAX))
            .map_err(anyhow::Error::msg)?;
        let stones = u8::try_from(number("stones")?).unwrap_or(u8::MAX);
        let endless = definition["endless"]
            .as_str()
            .context("Bao definition has no 'endless' rule")?;
        let endless = EndlessRule::parse(endless).map_err(anyhow::Error::msg)?;
        BaoGame::new(row, stones, endless).map_err(anyhow::Error::msg)
    }

    fn describe(&self) -> String {
        format!(
            "Bao la kujifunza, rows of {} holes, {} stone{} a hole, endless moves {}",
            self.row().len(),
            self.stones_per_hole(),
            if self.stones_per_hole() == 1 { "" } else { "s" },
            match self.endless() {
                EndlessRule::CutOff => "cut the game off",
                EndlessRule::Illegal => "illegal",
            }
        )
    }

    fn section_names(&self) -> [&'static str; 2] {
        ["first to move", "second to move"]
    }

    fn start(&self) -> Start {
        let start = self.start();
        let (slice, index) = self.locate(&start.board).expect("the start is a position");
        Start::At(StartPosition {
            notation: start.to_string(),
            slice,
            index,
            side: Side::First,
        })
    }

    fn position_name(&self, slice: SliceId, key: u64) -> String {
        let board = self.board(slice, self.index(slice, key));
        format!(
            "{} | {}",
            board.rows_text(Side::First),
            board.rows_text(Side::Second)
        )
    }
}
