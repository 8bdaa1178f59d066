//! The game boundary for reading solved tables: a game's positions, written in its own
//! notation, looked up and explained.
//!
//! The commands that read tables (`retro probe`, `retro verify --values`, `retro report`, and
//! the HTTP API of `retro serve` to come) never name a game. They open a directory, ask the
//! registry for the game's [`Explore`] (an explorer is built from the same definition document
//! as the game), and hand it the text a person typed together with the directory's
//! [`StoredValues`]. The explorer parses the text, finds the slice, index and side the position
//! is stored at, reads the bytes it needs, and says what they mean.
//!
//! So a new game's notation, probe report and analyses live in its own crate, next to its
//! rules, and reach every command through one registration line.

use anyhow::{bail, Result};
use retro_engine::{Side, SliceId, Value};

/// Where an explorer reads values: the tables of one solved directory.
pub trait StoredValues {
    /// The stored byte at `index` of `slice` with `side` to move. A slice that is not solved
    /// (a partial solve, a larger piece count) or a damaged table is an error saying so.
    fn stored(&self, slice: SliceId, index: u64, side: Side) -> Result<u8>;

    /// Every stored byte of `slice` with `side` to move, read and checked once: for analyses
    /// that scan the whole game. An empty slice has no table and gives no bytes.
    fn section(&self, slice: SliceId, side: Side) -> Result<Vec<u8>>;

    /// The name of `slice` as errors and reports write it (`browns4-black12`).
    fn slice_name(&self, slice: SliceId) -> String;

    /// The stored byte of a position's *canonical* slot: the same as [`StoredValues::stored`],
    /// but the non-canonical marker there means the table is damaged, and is an error saying
    /// so rather than a value.
    fn canonical(&self, slice: SliceId, index: u64, side: Side) -> Result<u8> {
        let byte = self.stored(slice, index, side)?;
        if byte == Value::NON_CANONICAL.0 {
            bail!(
                "canonical slot {index} of {} holds the non-canonical marker (damaged table?)",
                self.slice_name(slice)
            );
        }
        Ok(byte)
    }
}

/// What `retro probe` says of one position.
pub struct Probe {
    /// The report as one JSON object: the value, its meaning, every move with the value it
    /// leads to (best first), the principal variation. What `--json` prints and the HTTP API
    /// serves.
    pub json: serde_json::Value,
    /// The same for a person at a terminal: a diagram of the board, then the report.
    pub text: String,
}

/// A solved game seen from the outside: what the commands that read tables need of a game.
///
/// Positions are given as one line of text in the game's notation, the side to move last
/// (`ooooo,o...o,o.X.o,o...o,ooooo brown`); parse errors are one line and name what is wrong.
pub trait Explore: Send + Sync {
    /// A position in the game's notation, shown in hints ("give a position, e.g. ...").
    fn example(&self) -> &'static str;

    /// The value of the position `text` in the form of values files (`retro probe --file`
    /// prints it, `retro verify --values` compares it): one word, such as the stored byte or a
    /// signed margin.
    fn value(&self, text: &str, tables: &dyn StoredValues) -> Result<String>;

    /// Everything `retro probe` says of the position `text`.
    fn probe(&self, text: &str, tables: &dyn StoredValues) -> Result<Probe>;

    /// The analysis a game's paper reports, computed from its solved tables, as Markdown
    /// (`retro report`). `slack`: games that size proof trees also size them with lines up to
    /// this many plies longer than the winning distance. Games without one say so.
    fn report(&self, tables: &dyn StoredValues, slack: u32) -> Result<String> {
        let _ = (tables, slack);
        bail!("this game has no report (retro report analyses SIMPEI tables)")
    }
}

/// Splits `text` into exactly its two words, `<position> <side>`, or says what a position
/// looks like (`example`). Shared by the games whose notation is a board word and a side word.
pub fn position_and_side<'a>(text: &'a str, example: &str) -> Result<(&'a str, &'a str)> {
    let mut words = text.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some(board), Some(side), None) => Ok((board, side)),
        _ => bail!("give a position and a side, e.g. {example}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct OneSlice(Vec<u8>);

    impl StoredValues for OneSlice {
        fn stored(&self, _: SliceId, index: u64, _: Side) -> Result<u8> {
            Ok(self.0[index as usize])
        }
        fn section(&self, _: SliceId, _: Side) -> Result<Vec<u8>> {
            Ok(self.0.clone())
        }
        fn slice_name(&self, slice: SliceId) -> String {
            format!("slice{}", slice.0)
        }
    }

    #[test]
    fn a_canonical_slot_holding_the_marker_is_reported_as_damage() {
        let tables = OneSlice(vec![3, Value::NON_CANONICAL.0]);
        assert_eq!(tables.canonical(SliceId(0), 0, Side::First).unwrap(), 3);
        let e = tables.canonical(SliceId(7), 1, Side::First).unwrap_err();
        assert!(e.to_string().contains("slot 1 of slice7"), "{e}");
    }

    #[test]
    fn positions_are_two_words() {
        assert_eq!(position_and_side("a b", "x y").unwrap(), ("a", "b"));
        for bad in ["", "a", "a b c"] {
            let e = position_and_side(bad, "x y").unwrap_err();
            assert!(e.to_string().contains("e.g. x y"), "{e}");
        }
    }
}
