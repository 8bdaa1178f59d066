//! The game boundary for reading solved tables: a game's positions, written in its own
//! notation, looked up and explained.
//!
//! The commands that read tables (`retro probe`, `retro verify --values`, `retro report`, and
//! the HTTP API of `retro serve`) never name a game. They open a directory, ask the
//! registry for the game's [`Explore`] (an explorer is built from the same definition document
//! as the game), and hand it the text a person typed together with the directory's
//! [`StoredValues`]. The explorer parses the text, finds the slice, index and side the position
//! is stored at, reads the bytes it needs, and says what they mean.
//!
//! So a new game's notation, probe report and analyses live in its own crate, next to its
//! rules, and reach every command through one registration line.

use anyhow::{bail, Result};
use retro_engine::{Side, SliceId, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
            return Err(LookupError::Damaged(format!(
                "canonical slot {index} of {} holds the non-canonical marker (damaged table?)",
                self.slice_name(slice)
            ))
            .into());
        }
        Ok(byte)
    }
}

/// Why a position that was read correctly still has no value: errors that an explorer or a
/// [`StoredValues`] raise as this type (inside an `anyhow::Error`) let a server tell a
/// position the tables do not hold (HTTP 404) and damaged tables (500) from a malformed
/// request (400, every other error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// The tables do not hold this position: more pieces than were solved, a slice not solved
    /// yet.
    NotSolved(String),
    /// The tables hold it, but what they hold is wrong.
    Damaged(String),
}

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LookupError::NotSolved(what) | LookupError::Damaged(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for LookupError {}

/// The query parameters of a URL, by name (the last of repeated names wins).
pub type Query = BTreeMap<String, String>;

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

    /// The position at the start of `line`, a line of a positions file (`retro probe
    /// --file`), and the rest of the line (ignored: an expected value, a comment). Most
    /// notations are two words, the board and the side to move (this default); notations
    /// with spaces in them say where theirs ends.
    fn split_line<'a>(&self, line: &'a str) -> Result<(String, &'a str)> {
        let line = line.trim_start();
        let mut ends = line.match_indices(char::is_whitespace).map(|(i, _)| i);
        let board_end = ends.next();
        let side_start = board_end.and_then(|b| {
            line[b..]
                .find(|c: char| !c.is_whitespace())
                .map(|at| b + at)
        });
        let (Some(board_end), Some(side_start)) = (board_end, side_start) else {
            bail!("expected '<position> <side>', e.g. {}", self.example());
        };
        let end = line[side_start..]
            .find(char::is_whitespace)
            .map_or(line.len(), |at| side_start + at);
        let position = format!("{} {}", &line[..board_end], &line[side_start..end]);
        Ok((position, &line[end..]))
    }

    /// Everything `retro probe` says of the position `text`.
    fn probe(&self, text: &str, tables: &dyn StoredValues) -> Result<Probe>;

    /// [`Probe::json`] of the position `text` as JSON text, without the report for a person:
    /// what the HTTP API sends. Games override it when building the text report or the JSON
    /// tree costs more than writing the JSON directly.
    fn probe_json(&self, text: &str, tables: &dyn StoredValues) -> Result<String> {
        Ok(self.probe(text, tables)?.json.to_string())
    }

    /// The analysis a game's paper reports, computed from its solved tables, as Markdown
    /// (`retro report`). `slack`: games that size proof trees also size them with lines up to
    /// this many plies longer than the winning distance. Games without one say so.
    fn report(&self, tables: &dyn StoredValues, slack: u32) -> Result<String> {
        let _ = (tables, slack);
        bail!("this game has no report (retro report analyses SIMPEI tables)")
    }

    /// Whether the URL parameters `query` of a game's own viewer (Sixteen Musashi's published
    /// viewer: `size=25&turn=brown&init=...`) address this game and board: how a server that
    /// serves several directories picks one without being told its name. Games without such
    /// parameters answer no.
    fn answers_query(&self, query: &Query) -> bool {
        let _ = query;
        false
    }

    /// The position the viewer parameters `query` describe, in this game's notation (one
    /// line, as [`Explore::probe`] takes it). Games without viewer parameters say which
    /// parameter to give instead.
    fn position_from_query(&self, query: &Query) -> Result<String> {
        let _ = query;
        bail!("give position=<position>, e.g. position={}", self.example())
    }

    /// The viewer parameters of the position `text` (the inverse of
    /// [`Explore::position_from_query`]), for shareable links; empty for games without them.
    fn query_of_position(&self, text: &str) -> Result<Query> {
        let _ = text;
        Ok(Query::new())
    }

    /// The game's interesting positions in `tables` (`retro extremes`), each list showing at
    /// most `limit` positions. Games without such an analysis say so.
    fn extremes(&self, tables: &dyn StoredValues, limit: usize) -> Result<Extremes> {
        let _ = (tables, limit);
        bail!("this game has no list of extreme positions (retro extremes lists Sixteen Musashi's)")
    }

    /// The board as a drawing program needs it (JSON: points with coordinates, lines between
    /// them, the notation's rows and columns, the start position), or `None` for games the
    /// web viewer does not draw.
    fn board(&self) -> Option<serde_json::Value> {
        None
    }

    /// A picture of the position `text` as an SVG document (`retro probe --svg`, the web
    /// viewer's board). Games without a picture say so.
    fn svg(&self, text: &str) -> Result<String> {
        let _ = text;
        bail!("this game has no picture of its positions")
    }
}

/// The interesting positions of a solved game (`retro extremes`), as its published analyses
/// list them by hand: record lengths of play, the most pieces with which a side still wins.
/// Saved beside the tables (`extremes.json`) so that the web viewer lists them without
/// scanning the tables again.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Extremes {
    /// What was scanned, e.g. `musashi BOARD25, up to 24 browns`.
    pub table: String,
    /// The lists, in the game's order.
    pub lists: Vec<ExtremeList>,
}

/// One list of [`Extremes`]: the positions that share one record.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ExtremeList {
    /// A name for programs, stable across versions (`longest-win-brown-to-move`).
    pub id: String,
    /// What the list is, for a person.
    pub title: String,
    /// How many positions hold the record (up to symmetry); `positions` holds the first of
    /// them in table order (all of them when there are few).
    pub count: u64,
    /// The positions.
    pub positions: Vec<Extreme>,
}

/// One position of an [`ExtremeList`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Extreme {
    /// The position in the game's notation (as `retro probe` takes it).
    pub position: String,
    /// Its stored value.
    pub value: u8,
    /// The value in words.
    pub meaning: String,
    /// What else is worth saying of it (`5 browns`), possibly empty.
    pub note: String,
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

    /// An explorer with only the defaults.
    struct TwoWords;

    impl Explore for TwoWords {
        fn example(&self) -> &'static str {
            "rows side"
        }
        fn value(&self, _: &str, _: &dyn StoredValues) -> Result<String> {
            unimplemented!()
        }
        fn probe(&self, _: &str, _: &dyn StoredValues) -> Result<Probe> {
            unimplemented!()
        }
    }

    #[test]
    fn a_line_of_a_positions_file_starts_with_two_words_by_default() {
        let split = |line| TwoWords.split_line(line).map_err(|e| e.to_string());
        assert_eq!(split("a,b brown"), Ok(("a,b brown".to_string(), "")));
        assert_eq!(
            split("  a,b \tblack 32 # note"),
            Ok(("a,b black".to_string(), " 32 # note"))
        );
        for bad in ["", "a,b", "a,b  "] {
            assert!(split(bad).unwrap_err().contains("e.g. rows side"), "{bad}");
        }
    }
}
