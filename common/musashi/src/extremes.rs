//! The interesting positions of a solved Sixteen Musashi table (`retro extremes`), as the
//! published analysis lists them by hand:
//!
//! * the **longest brown wins**, with brown to move and with black to move (value and every
//!   position holding it, up to a limit, with the count);
//! * the **most browns with which black still wins**, for each side to move, counting every
//!   black win and again without the *stalemated-brown* cases (see [`is_brown_stalemate`]);
//! * per brown count, the longest brown win for each side to move.
//!
//! One pass reads every canonical value of every slice once; the second list, when brown
//! stalemates are left out, reads the slices again from the most browns down until it finds
//! one (it stops at the first brown count that has one, a small part of the table).

use crate::explore::{engine_side, value};
use crate::game::Musashi;
use crate::position::{Position, Side};
use crate::rules::moves;
use crate::values::describe;
use anyhow::Result;
use retro_engine::{Game, SliceId, Value};
use retro_pipeline::{Extreme, ExtremeList, Extremes, StoredValues};

/// The positions holding one record, as they are found: the count, and the first `limit`.
struct Record {
    value: u8,
    browns: usize,
    count: u64,
    positions: Vec<Position>,
}

impl Record {
    fn new() -> Record {
        Record {
            value: 0,
            browns: 0,
            count: 0,
            positions: Vec::new(),
        }
    }

    /// Offers a position of `value` with `browns` browns to a "largest `(value, browns)` wins"
    /// record (`key` says which of the two orders it). `position` is built only if kept.
    fn offer(&mut self, key: (u8, usize), limit: usize, position: impl FnOnce() -> Position) {
        let held = (self.value, self.browns);
        if self.count > 0 && key < held {
            return;
        }
        if self.count == 0 || key > held {
            self.value = key.0;
            self.browns = key.1;
            self.count = 0;
            self.positions.clear();
        }
        self.count += 1;
        if self.positions.len() < limit {
            self.positions.push(position());
        }
    }
}

/// Finds the extremes of `game`'s `tables` ([`Extremes`]), listing at most `limit` positions
/// per list.
pub fn extremes(game: &Musashi, tables: &dyn StoredValues, limit: usize) -> Result<Extremes> {
    let board = game.board();
    let reps = board.symmetry.reps.clone();
    let sides = [Side::Brown, Side::Black];
    let slices = |k: usize| reps.iter().map(move |&r| game.slice_of(k, r as usize));

    // One pass: longest wins (per side, and per side and brown count), and the most browns
    // with any black win.
    let mut longest = [Record::new(), Record::new()];
    let mut per_count: Vec<[Record; 2]> = (0..=game.max_browns())
        .map(|_| [Record::new(), Record::new()])
        .collect();
    let mut most_browns = [Record::new(), Record::new()];
    for (k, counted) in per_count.iter_mut().enumerate() {
        for slice in slices(k) {
            for (s, &side) in sides.iter().enumerate() {
                let values = tables.section(slice, engine_side(side))?;
                for (index, &v) in values.iter().enumerate() {
                    if v == Value::NON_CANONICAL.0 {
                        continue;
                    }
                    let at = || game.position(slice, game.key(slice, index as u64), side);
                    if v == 0 {
                        most_browns[s].offer((0, k), limit, at);
                    } else {
                        longest[s].offer((v, 0), limit, at);
                        counted[s].offer((v, k), 1, at);
                    }
                }
            }
        }
    }

    let mut lists = Vec::new();
    for (s, side) in sides.iter().enumerate() {
        let record = &longest[s];
        lists.push(list(
            game,
            format!("longest-win-{}-to-move", side.name()),
            format!(
                "Longest brown win with {} to move: value {} ({} {})",
                side.name(),
                record.value,
                record.value.saturating_sub(1),
                if record.value == 2 { "ply" } else { "plies" }
            ),
            record,
        ));
    }
    for (s, side) in sides.iter().enumerate() {
        lists.push(list(
            game,
            format!("most-browns-black-win-{}-to-move", side.name()),
            format!(
                "Most browns in a black win with {} to move: {} browns",
                side.name(),
                most_browns[s].browns
            ),
            &most_browns[s],
        ));
        let without = most_browns_without_stalemate(game, tables, *side, limit)?;
        lists.push(list(
            game,
            format!(
                "most-browns-black-win-{}-to-move-no-stalemate",
                side.name()
            ),
            format!(
                "Most browns in a black win with {} to move, stalemated-brown cases left out: {} browns",
                side.name(),
                without.browns
            ),
            &without,
        ));
    }
    for (s, side) in sides.iter().enumerate() {
        let mut rows = Vec::new();
        for (k, records) in per_count.iter().enumerate() {
            let record = &records[s];
            if let Some(pos) = record.positions.first() {
                rows.push(extreme(
                    game,
                    pos,
                    record.value,
                    format!(
                        "{k} browns: {} position{} of this value",
                        record.count,
                        if record.count == 1 { "" } else { "s" }
                    ),
                ));
            }
        }
        lists.push(ExtremeList {
            id: format!("longest-win-per-browns-{}-to-move", side.name()),
            title: format!(
                "Longest brown win per brown count with {} to move (one example each)",
                side.name()
            ),
            count: rows.len() as u64,
            positions: rows,
        });
    }
    Ok(Extremes {
        table: format!("musashi {}, up to {} browns", board.name, game.max_browns()),
        lists,
    })
}

/// The most browns in a black win with `side` to move, stalemated-brown cases
/// ([`is_brown_stalemate`]) left out: slices read from the most browns down, stopping
/// at the first brown count that has one.
fn most_browns_without_stalemate(
    game: &Musashi,
    tables: &dyn StoredValues,
    side: Side,
    limit: usize,
) -> Result<Record> {
    let mut record = Record::new();
    for k in (0..=game.max_browns()).rev() {
        for &rep in &game.board().symmetry.reps {
            let slice: SliceId = game.slice_of(k, rep as usize);
            let values = tables.section(slice, engine_side(side))?;
            for (index, &v) in values.iter().enumerate() {
                if v != 0 {
                    continue;
                }
                let pos = game.position(slice, game.key(slice, index as u64), side);
                if !is_brown_stalemate(game, tables, &pos)? {
                    record.offer((0, k), limit, || pos);
                }
            }
        }
        if record.count > 0 {
            break;
        }
    }
    Ok(record)
}

/// Whether the black win `pos` is a *stalemated-brown case*, one of the trivially won
/// positions that the second list of the most browns with a black win leaves out:
///
/// * brown to move: brown has no legal move (black has won);
/// * black to move: every black move that keeps the black win leaves brown without a move.
fn is_brown_stalemate(game: &Musashi, tables: &dyn StoredValues, pos: &Position) -> Result<bool> {
    let board = game.board();
    match pos.side {
        Side::Brown => Ok(moves(board, pos).is_empty()),
        Side::Black => {
            for (_, next) in moves(board, pos) {
                if value(game, tables, &next)? == 0 && !moves(board, &next).is_empty() {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }
}

fn list(game: &Musashi, id: String, title: String, record: &Record) -> ExtremeList {
    ExtremeList {
        id,
        title,
        count: record.count,
        positions: record
            .positions
            .iter()
            .map(|p| {
                let browns = p.browns.count_ones();
                extreme(game, p, record.value, format!("{browns} browns"))
            })
            .collect(),
    }
}

fn extreme(game: &Musashi, pos: &Position, value: u8, note: String) -> Extreme {
    Extreme {
        position: pos.notation(game.board()),
        value,
        meaning: describe(value, pos.side),
        note,
    }
}
