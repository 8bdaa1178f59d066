//! The count table, the published verification artifact of a solve.
//!
//! One CSV row per brown count `k`: `k, B0, R0, n1, n2, ...` where `B0`/`R0` count black wins
//! with black/brown to move and `n_v` counts positions of value `v` (odd: black to move, even:
//! brown to move). Every number counts positions up to symmetry; the published tables have
//! columns up to `v = 69`, and a board with longer wins gets as many columns as it needs.

/// Fewest value columns in a count table, as in the published tables.
pub const MIN_VALUE_COLUMNS: usize = 69;

/// Value histograms of one brown count, over canonical positions only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountRow {
    /// Brown count.
    pub browns: usize,
    /// `brown_to_move[v]`: canonical positions with brown to move and value `v`.
    pub brown_to_move: [u64; 256],
    /// `black_to_move[v]`: canonical positions with black to move and value `v`.
    pub black_to_move: [u64; 256],
}

impl CountRow {
    /// An all-zero row for `browns`.
    pub fn new(browns: usize) -> CountRow {
        CountRow {
            browns,
            brown_to_move: [0; 256],
            black_to_move: [0; 256],
        }
    }

    /// The largest value present in the row (0 if none).
    pub fn max_value(&self) -> usize {
        (1..255)
            .rev()
            .find(|&v| self.brown_to_move[v] + self.black_to_move[v] > 0)
            .unwrap_or(0)
    }
}

/// Formats rows in the published CSV format; every row has the same number of columns.
pub fn format_count_table(rows: &[CountRow]) -> String {
    let columns = rows
        .iter()
        .map(CountRow::max_value)
        .max()
        .unwrap_or(0)
        .max(MIN_VALUE_COLUMNS);
    let mut out = String::new();
    for row in rows {
        out.push_str(&format!(
            "{},{},{}",
            row.browns, row.black_to_move[0], row.brown_to_move[0]
        ));
        for v in 1..=columns {
            let n = if v % 2 == 1 {
                row.black_to_move[v]
            } else {
                row.brown_to_move[v]
            };
            out.push_str(&format!(",{n}"));
        }
        out.push('\n');
    }
    out
}
