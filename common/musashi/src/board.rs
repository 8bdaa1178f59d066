//! The board: points with integer coordinates, edges, and the capture geometry derived from them.

use crate::board_file::{parse_board_file, BoardFileError};
use crate::symmetry::Symmetry;

/// The most points a board may have: brown sets are 64-bit masks, with one bit to spare.
pub const MAX_POINTS: usize = 63;

/// A Sixteen Musashi board, with everything the rules need precomputed.
#[derive(Clone, Debug)]
pub struct Board {
    /// The board's name ("BOARD25").
    pub name: String,
    /// Point coordinates `(x, y)`, indexed by point number (the order of the board file).
    pub points: Vec<(u8, u8)>,
    /// Edges as point-number pairs `(a, b)` with `a < b`, in file order.
    pub edges: Vec<(u8, u8)>,
    /// `neighbours[p]`: bitmask of the points adjacent to `p`.
    pub neighbours: Vec<u64>,
    /// `sandwiches[p]`: masks `{a, c}` of the pairs that capture when black moves to `p`.
    pub sandwiches: Vec<Vec<u64>>,
    /// Columns of the position notation (max x + 1).
    pub width: usize,
    /// Rows of the position notation (max y + 1).
    pub height: usize,
    /// The standard start position, if the board file gives one (notation, brown to move).
    pub start: Option<String>,
    /// The trap zone, if this is the trap-zone variant: the points (a mask) on which a
    /// stalemated black has lost. Elsewhere a stalemated black wins. `None` is the base game,
    /// in which black loses when stalemated anywhere.
    pub trap: Option<u64>,
    /// The symmetry group computed from the geometry (restricted to the symmetries that keep
    /// the trap zone, if there is one).
    pub symmetry: Symmetry,
    /// The board file this board was read from (kept so outputs can record the definition).
    pub source: String,
}

impl Board {
    /// Reads a board from the text of a board file (format in the README).
    pub fn from_text(text: &str) -> Result<Board, BoardFileError> {
        parse_board_file(text)
    }

    /// One of the built-in boards by name (`BOARD25`, `BOARD31`, `BOARD33`, case-insensitive).
    pub fn builtin(name: &str) -> Option<Board> {
        let text = match name.to_ascii_uppercase().as_str() {
            "BOARD25" => include_str!("../boards/board25.txt"),
            "BOARD31" => include_str!("../boards/board31.txt"),
            "BOARD33" => include_str!("../boards/board33.txt"),
            _ => return None,
        };
        Some(Board::from_text(text).expect("built-in board files are valid"))
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether the board has no points (never true for a parsed board).
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Mask with one bit per point.
    pub fn all_points(&self) -> u64 {
        (1u64 << self.points.len()) - 1
    }

    /// The point at `(x, y)`, if there is one.
    pub fn point_at(&self, x: usize, y: usize) -> Option<usize> {
        self.points
            .iter()
            .position(|&(px, py)| px as usize == x && py as usize == y)
    }

    /// The point written as `xy`, as in the spec and board files.
    pub fn point_name(&self, p: usize) -> String {
        let (x, y) = self.points[p];
        format!("{x}{y}")
    }

    /// Assembles a board from validated points and edges, deriving neighbours, capture pairs
    /// and the symmetry group.
    pub(crate) fn assemble(
        name: String,
        points: Vec<(u8, u8)>,
        edges: Vec<(u8, u8)>,
        start: Option<String>,
        source: String,
    ) -> Board {
        let n = points.len();
        let mut neighbours = vec![0u64; n];
        for &(a, b) in &edges {
            neighbours[a as usize] |= 1 << b;
            neighbours[b as usize] |= 1 << a;
        }
        // A pair {a, c} sandwiches p when both are adjacent to p and p is their exact midpoint.
        let mut sandwiches = vec![Vec::new(); n];
        for p in 0..n {
            let (px, py) = (points[p].0 as i32, points[p].1 as i32);
            for a in 0..n {
                for c in a + 1..n {
                    let adjacent = neighbours[p] >> a & 1 == 1 && neighbours[p] >> c & 1 == 1;
                    let (ax, ay) = (points[a].0 as i32, points[a].1 as i32);
                    let (cx, cy) = (points[c].0 as i32, points[c].1 as i32);
                    if adjacent && ax + cx == 2 * px && ay + cy == 2 * py {
                        sandwiches[p].push(1u64 << a | 1u64 << c);
                    }
                }
            }
        }
        let width = points.iter().map(|p| p.0 as usize).max().unwrap_or(0) + 1;
        let height = points.iter().map(|p| p.1 as usize).max().unwrap_or(0) + 1;
        let symmetry = Symmetry::of(&points, &edges);
        Board {
            name,
            points,
            edges,
            neighbours,
            sandwiches,
            width,
            height,
            start,
            trap: None,
            symmetry,
            source,
        }
    }

    /// This board with the trap zone `trap` (a mask of its points): the trap-zone variant,
    /// in which brown wins only by stalemating black on one of those points. Its symmetry
    /// group keeps only the symmetries that map the zone onto itself.
    pub fn with_trap(mut self, trap: u64) -> Board {
        let trap = trap & self.all_points();
        self.symmetry = Symmetry::preserving(&self.points, &self.edges, Some(trap));
        self.trap = Some(trap);
        self
    }

    /// Whether a stalemated black on `point` has lost: everywhere in the base game, on the
    /// trap zone's points in the trap-zone variant.
    #[inline(always)]
    pub fn traps(&self, point: usize) -> bool {
        self.trap.is_none_or(|trap| trap >> point & 1 == 1)
    }

    /// The names of the points of `mask`, in point order (`["00", "04", "40", "44"]`).
    pub fn point_names(&self, mask: u64) -> Vec<String> {
        (0..self.len())
            .filter(|&p| mask >> p & 1 == 1)
            .map(|p| self.point_name(p))
            .collect()
    }

    /// The points of `mask` as the spec writes them, joined by commas (`00,04,40,44`).
    pub fn point_list(&self, mask: u64) -> String {
        self.point_names(mask).join(",")
    }

    /// Reads a trap zone: point names separated by commas (`00,04,40,44`), or a named set:
    /// `corners` (the points at the corners of the board's bounding box) or `edge` (every
    /// point on its outer rows and columns). Unknown or repeated points and an empty zone
    /// are errors naming the problem.
    pub fn parse_trap(&self, text: &str) -> Result<u64, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err(
                "no point given: write the trap zone's points as xy,xy,... (e.g. 00,04,40,44) or a named set (corners, edge)".into(),
            );
        }
        let (min_x, max_x) = self.extent(|p| p.0);
        let (min_y, max_y) = self.extent(|p| p.1);
        let named = |keep: &dyn Fn(u8, u8) -> bool| -> u64 {
            self.points
                .iter()
                .enumerate()
                .filter(|(_, &(x, y))| keep(x, y))
                .fold(0, |mask, (p, _)| mask | 1 << p)
        };
        let mask = match text {
            "corners" => named(&|x, y| (x == min_x || x == max_x) && (y == min_y || y == max_y)),
            "edge" => named(&|x, y| x == min_x || x == max_x || y == min_y || y == max_y),
            _ => {
                let mut mask = 0u64;
                for name in text.split(',').map(str::trim) {
                    let p = (0..self.len())
                        .find(|&p| self.point_name(p) == name)
                        .ok_or_else(|| {
                            format!(
                                "'{name}' is not a point of {} (write points as xy, e.g. 00,04,40,44, or a named set: corners, edge)",
                                self.name
                            )
                        })?;
                    if mask >> p & 1 == 1 {
                        return Err(format!("point {name} is listed twice"));
                    }
                    mask |= 1 << p;
                }
                mask
            }
        };
        if mask == 0 {
            return Err(format!(
                "the trap zone '{text}' has no point of {}",
                self.name
            ));
        }
        Ok(mask)
    }

    /// The smallest and largest of a coordinate over the points.
    fn extent(&self, coordinate: impl Fn(&(u8, u8)) -> u8) -> (u8, u8) {
        let values: Vec<u8> = self.points.iter().map(coordinate).collect();
        let min = values.iter().copied().min().unwrap_or(0);
        (min, values.iter().copied().max().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn degree(board: &Board, name: &str) -> u32 {
        let p = (0..board.len())
            .find(|&p| board.point_name(p) == name)
            .unwrap();
        board.neighbours[p].count_ones()
    }

    #[test]
    fn edge_and_neighbour_counts_match_the_spec() {
        for (name, edges, centre) in [("BOARD25", 56, 8), ("BOARD31", 59, 4), ("BOARD33", 72, 8)] {
            let board = Board::builtin(name).unwrap();
            assert_eq!(board.edges.len(), edges, "{name}");
            let degree_sum: u32 = board.neighbours.iter().map(|m| m.count_ones()).sum();
            assert_eq!(degree_sum, 2 * edges as u32, "{name}");
            assert_eq!(degree(&board, "22"), centre, "{name}");
        }
    }

    #[test]
    fn symmetry_groups_match_the_spec() {
        assert_eq!(Board::builtin("BOARD25").unwrap().symmetry.len(), 8);
        assert_eq!(Board::builtin("BOARD31").unwrap().symmetry.len(), 2);
        assert_eq!(Board::builtin("BOARD33").unwrap().symmetry.len(), 2);
    }

    #[test]
    fn board31_long_segments() {
        let b = Board::builtin("BOARD31").unwrap();
        let p = |s: &str| (0..b.len()).find(|&p| b.point_name(p) == s).unwrap();
        assert!(b.neighbours[p("60")] >> p("62") & 1 == 1);
        assert!(b.neighbours[p("52")] >> p("62") & 1 == 0);
        // 62 is the midpoint of 60 and 64 and adjacent to both: black on 62 captures them.
        assert!(b.sandwiches[p("62")].contains(&(1 << p("60") | 1 << p("64"))));
    }

    #[test]
    fn trap_zones_are_read_and_keep_only_their_symmetries() {
        let b = Board::builtin("BOARD25").unwrap();
        let corners = b.parse_trap("corners").unwrap();
        assert_eq!(b.point_list(corners), "00,04,40,44");
        assert_eq!(b.parse_trap("44, 00,40,04").unwrap(), corners);
        assert_eq!(b.parse_trap("edge").unwrap().count_ones(), 16);
        assert_eq!(b.clone().with_trap(corners).symmetry.len(), 8);
        // One corner: only the diagonal reflection through it keeps the zone.
        assert_eq!(b.clone().with_trap(1).symmetry.len(), 2);
        let b33 = Board::builtin("BOARD33").unwrap();
        assert_eq!(
            b33.point_list(b33.parse_trap("corners").unwrap()),
            "00,04,60,64"
        );
        for bad in ["", "55", "00,00", "00;04", "x"] {
            assert!(b.parse_trap(bad).is_err(), "{bad:?}");
        }
        assert!(b.traps(12));
        let trapped = b.with_trap(corners);
        assert!(trapped.traps(0) && !trapped.traps(12));
    }

    #[test]
    fn centre_of_board25_has_four_capture_lines() {
        let b = Board::builtin("BOARD25").unwrap();
        assert_eq!(b.sandwiches[b.point_at(2, 2).unwrap()].len(), 4);
        assert_eq!(b.sandwiches[b.point_at(0, 0).unwrap()].len(), 0);
    }
}
