//! What a solve job records of the mancala ([`GameRules`]): its definition, the start
//! position, value words, the board notation and the summary table of `retro counts`.

use crate::board::{side_name, Board};
use crate::game::Mancala;
use crate::rules::EndlessRule;
use anyhow::{Context, Result};
use retro_engine::{Game, Side, SliceId};
use retro_pipeline::{GameRules, Start, StartPosition};
use retro_store::Manifest;

impl GameRules for Mancala {
    const NAME: &'static str = "mancala";

    /// `{"holes": 2n, "max_stones": S, "endless": "cut-off" | "illegal"}`.
    fn definition(&self) -> serde_json::Value {
        serde_json::json!({
            "holes": self.holes(),
            "max_stones": self.max_stones(),
            "endless": self.endless().name(),
        })
    }

    fn from_definition(definition: &serde_json::Value) -> Result<Mancala> {
        let number = |field: &str| -> Result<u64> {
            definition[field]
                .as_u64()
                .with_context(|| format!("mancala definition has no number '{field}'"))
        };
        let holes = number("holes")?;
        let stones = number("max_stones")?;
        let endless = definition["endless"]
            .as_str()
            .context("mancala definition has no 'endless' rule")?;
        let endless = EndlessRule::parse(endless).map_err(anyhow::Error::msg)?;
        let holes = usize::try_from(holes).unwrap_or(usize::MAX);
        let stones = u32::try_from(stones).unwrap_or(u32::MAX);
        Mancala::new(holes, stones, endless).map_err(anyhow::Error::msg)
    }

    fn describe(&self) -> String {
        format!(
            "{}x2 ring, up to {} stones, endless moves {}",
            self.holes() / 2,
            self.max_stones(),
            match self.endless() {
                EndlessRule::CutOff => "cut the game off",
                EndlessRule::Illegal => "illegal",
            }
        )
    }

    /// Stage `s` depends only on stages below it, so a solve of fewer stones (same ring, same
    /// rule) is the start of this one.
    fn grows_from(&self, old: &serde_json::Value) -> bool {
        old["holes"].as_u64() == Some(self.holes() as u64)
            && old["endless"].as_str() == Some(self.endless().name())
            && old["max_stones"]
                .as_u64()
                .is_some_and(|s| s <= u64::from(self.max_stones()))
    }

    fn section_names(&self) -> [&'static str; 2] {
        ["first to move", "second to move"]
    }

    fn count_table(&self, manifest: &Manifest) -> Option<Result<String>> {
        Some(Ok(count_table(self, manifest)))
    }

    fn start(&self) -> Start {
        let board = Board::start(self.holes()).expect("a solved ring has a start");
        let notation = format!("{board} first");
        match self.locate(&board) {
            Some((slice, index)) => Start::At(StartPosition {
                notation,
                slice,
                index,
                side: Side::First,
            }),
            None => Start::NotCovered {
                notation,
                why: format!(
                    "it has {} stones; solved up to {}",
                    board.total(),
                    self.max_stones()
                ),
            },
        }
    }

    fn describe_value(&self, side: Side, byte: u8) -> Option<String> {
        Some(describe_margin(side, byte as i8 as i32))
    }

    fn position_name(&self, slice: SliceId, key: u64) -> String {
        self.board(slice, self.index(slice, key)).to_string()
    }
}

/// A margin in words, for the player `side` to move.
pub fn describe_margin(side: Side, margin: i32) -> String {
    let who = side_name(side);
    let stones = |n: i32| {
        if n == 1 {
            "1 stone".to_string()
        } else {
            format!("{n} stones")
        }
    };
    match margin {
        0 => format!("even: {who} to move and its opponent win the same over the rest"),
        m if m > 0 => format!("{who} (to move) wins the rest by {}", stones(m)),
        m => format!("{who} (to move) loses the rest by {}", stones(-m)),
    }
}

/// The summary of `retro counts`: per stone count, positions (both sides to move), how many
/// the mover wins, draws (margin 0) and loses, and how many have each margin.
pub fn count_table(game: &Mancala, manifest: &Manifest) -> String {
    let max = game.max_stones() as i32;
    let width = (2 * max + 1) as usize;
    let mut rows: Vec<Option<Vec<u64>>> = vec![None; max as usize + 1];
    for record in &manifest.slices {
        let (stones, _) = Mancala::slice_stones(SliceId(record.id));
        let row = rows[stones as usize].get_or_insert_with(|| vec![0; width]);
        for histogram in record.histograms.iter().take(2) {
            for (&byte, &n) in histogram {
                let m = byte as i8 as i32;
                if (-max..=max).contains(&m) {
                    row[(m + max) as usize] += n;
                }
            }
        }
    }
    let margins: Vec<String> = (-max..=max).map(|m| format!("m{m}")).collect();
    let mut out = format!("stones,positions,win,draw,loss,{}\n", margins.join(","));
    for (stones, row) in rows.iter().enumerate() {
        let Some(row) = row else { continue };
        let m = max as usize;
        let loss: u64 = row[..m].iter().sum();
        let draw = row[m];
        let win: u64 = row[m + 1..].iter().sum();
        let cells: Vec<String> = row.iter().map(u64::to_string).collect();
        out += &format!(
            "{stones},{},{win},{draw},{loss},{}\n",
            win + draw + loss,
            cells.join(",")
        );
    }
    out
}
