//! The analysis the SIMPEI paper reports, computed from solved tables (`retro report`).
//!
//! Everything here reads the values of a finished solve held in memory ([`Solved`]) and the
//! rules' moves; nothing is searched that the tables already know. The definitions, where the
//! spec's words leave a choice, are:
//!
//! * **A move** is a legal move as the rules generate it: the placement or step *and* where
//!   the clipped pieces are put. Two moves that differ only in a relocation are two moves.
//! * **A proof tree** of a won position is a tree of positions: at the winner's nodes one
//!   move to a lost position (or a move that makes the row), at the loser's nodes one child
//!   for every *distinct position up to symmetry* its moves lead to. Its size counts every
//!   node, the final positions (a row just made) included, a position reached twice counted
//!   twice (a tree, not a graph). The minimum is taken over trees whose every line ends
//!   within a given number of plies (`budget`): with the winner's own distance as budget
//!   these are the trees of best play; a larger budget lets the winner take longer wins
//!   that need fewer positions.
//! * **Zugzwang**: a position with as many white as black pieces whose side to move loses,
//!   while the same board with the opponent to move (the turn passed) is lost for the
//!   opponent. With equal counts that board is the colour-exchanged position with white to
//!   move, a position of the tables. It is **self-symmetric** when the exchanged position is
//!   a board symmetry image of the original.
//! * **Simple cycle**: a cycle of 8-piece draw positions (up to the board symmetries and the
//!   colour exchange) each of whose side to move has exactly one move that does not lose,
//!   the cycle following those moves. Its period is its length in plies.
//! * **One-move problem**: a won position with exactly one winning move (a move to a lost
//!   position or one that makes the row). Its length is the win's plies; its replies are the
//!   opponent's legal moves after the winning move.

use crate::game::{Simpei, FULL};
use crate::index::{canonical, LAYERS};
use crate::job::counted_side;
use crate::position::{Colour, Position};
use crate::rules;
use anyhow::{bail, Result};
use rayon::prelude::*;
use retro_engine::{Game, Move, Outcome, SliceId, Value};
use std::collections::HashMap;

/// How many one-move problems each ranking lists.
pub const PROBLEMS_LISTED: usize = 10;

/// Positions per unit of parallel work in the scan.
const CHUNK: u64 = 1 << 15;

/// Every value of a solved SIMPEI game in memory, by slice and side to move (about 190 MB:
/// the tables' slots, symmetric duplicates included).
pub struct Solved<'g> {
    game: &'g Simpei,
    /// `values[slice][side]`: the stored bytes of the slice with that side to move.
    values: Vec<[Vec<u8>; 2]>,
}

/// Where one move leads: the position (canonical, the opponent to move) if play goes on, and
/// the value for the side then to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct After {
    /// The position after the move; `None` when the move ended the game.
    pub next: Option<Position>,
    /// The value of the position after the move for its side to move (1, lost, when the move
    /// made the mover's row).
    pub value: u8,
}

impl After {
    /// Whether the move wins for the player who made it.
    pub fn wins(&self) -> bool {
        matches!(Value(self.value).outcome(), Some(Outcome::Loss { .. }))
    }

    /// Whether the move loses for the player who made it.
    pub fn loses(&self) -> bool {
        matches!(Value(self.value).outcome(), Some(Outcome::Win { .. }))
    }
}

impl<'g> Solved<'g> {
    /// The values of `game`: for every slice, the bytes of both sides to move (as the tables
    /// store them). Fails if a slice of the game is missing or has the wrong length.
    pub fn new(game: &'g Simpei, values: Vec<[Vec<u8>; 2]>) -> Result<Solved<'g>> {
        if values.len() != game.slice_count() {
            bail!(
                "{} slices of values for a game of {}",
                values.len(),
                game.slice_count()
            );
        }
        for (id, sections) in values.iter().enumerate() {
            let slice = SliceId(id as u32);
            let len = game.slice_len(slice);
            let side = counted_side(slice).index();
            if len > 0 && sections[side].len() as u64 != len {
                bail!(
                    "slice {} has {} values, expected {len} (not solved?)",
                    game.slice_name(slice),
                    sections[side].len()
                );
            }
        }
        Ok(Solved { game, values })
    }

    /// The game.
    pub fn game(&self) -> &'g Simpei {
        self.game
    }

    /// The stored value of any position (its canonical image is read).
    pub fn value(&self, pos: &Position) -> u8 {
        let (slice, key) = self.game.locate(pos.white, pos.black);
        self.stored(slice, key, pos.to_move)
    }

    fn stored(&self, slice: SliceId, key: u64, to_move: Colour) -> u8 {
        let index = self.game.index(slice, key) as usize;
        self.values[slice.0 as usize][Simpei::side_of(to_move).index()][index]
    }

    /// Calls `visit` with every legal move of `pos` (`None`: a claim of a row at the start of
    /// the turn, under the row rules that have it) and where it leads.
    pub fn for_each_move(&self, pos: &Position, mut visit: impl FnMut(Option<rules::Move>, After)) {
        let opponent = pos.to_move.other();
        self.game.plies(pos, |mv, target| {
            let after = match target {
                Move::Known(v) => After {
                    next: None,
                    value: v.0,
                },
                Move::InStage(slice, key) | Move::Final(slice, key) => {
                    let (white, black) = Simpei::masks(key);
                    After {
                        next: Some(Position {
                            white,
                            black,
                            to_move: opponent,
                        }),
                        value: self.stored(slice, key, opponent),
                    }
                }
            };
            visit(mv, after);
        });
    }

    /// Calls `visit` with every canonical position of `layer` with its counted side to move
    /// (with 8 pieces white, the published normalisation) and its value, in parallel; the
    /// results of `visit` on the chunks are merged with `merge`.
    fn scan<T: Send>(
        &self,
        layers: &[u32],
        empty: impl Fn() -> T + Sync,
        visit: impl Fn(&mut T, Position, u8) + Sync,
        merge: impl Fn(T, T) -> T + Sync,
    ) -> T {
        let chunks: Vec<(SliceId, u64, u64)> = (0..self.game.slice_count() as u32)
            .map(SliceId)
            .filter(|&s| layers.contains(&Simpei::layer_of(s)))
            .flat_map(|s| {
                let len = self.game.slice_len(s);
                (0..len.div_ceil(CHUNK)).map(move |c| (s, c * CHUNK, len.min((c + 1) * CHUNK)))
            })
            .collect();
        chunks
            .into_par_iter()
            .map(|(slice, start, end)| {
                let mut acc = empty();
                let side = counted_side(slice);
                let to_move = Simpei::colour_of(side);
                let values = &self.values[slice.0 as usize][side.index()];
                self.game.for_each_key(slice, start..end, |index, key| {
                    let byte = values[index as usize];
                    if byte == Value::NON_CANONICAL.0 {
                        return;
                    }
                    let (white, black) = Simpei::masks(key);
                    visit(
                        &mut acc,
                        Position {
                            white,
                            black,
                            to_move,
                        },
                        byte,
                    );
                });
                acc
            })
            .reduce(&empty, &merge)
    }
}

/// The canonical image of a position (the side to move kept).
fn canonical_position(solved: &Solved, pos: &Position) -> Position {
    let (white, black) = canonical(solved.game.geometry(), pos.white, pos.black);
    Position {
        white,
        black,
        to_move: pos.to_move,
    }
}

/// The 8-piece position normalised as the tables count it: white to move (colours exchanged
/// if black is), canonical.
fn normalised(solved: &Solved, pos: &Position) -> Position {
    let pos = if pos.to_move == Colour::Black {
        pos.colours_exchanged()
    } else {
        *pos
    };
    canonical_position(solved, &pos)
}

/// Sizes of minimal proof trees, remembered per position and budget.
pub struct ProofTrees<'a> {
    solved: &'a Solved<'a>,
    memo: HashMap<(u32, u32, Colour, u32), Option<u128>>,
}

impl<'a> ProofTrees<'a> {
    /// No sizes known yet.
    pub fn new(solved: &'a Solved<'a>) -> ProofTrees<'a> {
        ProofTrees {
            solved,
            memo: HashMap::new(),
        }
    }

    /// Positions (up to symmetry and budget) whose smallest tree is known.
    pub fn known(&self) -> usize {
        self.memo.len()
    }

    /// The number of nodes of the smallest proof tree of `pos` (won or lost for its side to
    /// move) whose lines all end within `budget` plies; `None` if the position is not won or
    /// lost within `budget` plies.
    pub fn size(&mut self, pos: &Position, budget: u32) -> Option<u128> {
        let pos = canonical_position(self.solved, pos);
        let key = (pos.white, pos.black, pos.to_move, budget);
        if let Some(&known) = self.memo.get(&key) {
            return known;
        }
        let size = self.compute(&pos, budget);
        self.memo.insert(key, size);
        size
    }

    fn compute(&mut self, pos: &Position, budget: u32) -> Option<u128> {
        let mut moves = Vec::new();
        self.solved.for_each_move(pos, |_, after| moves.push(after));
        match Value(self.solved.value(pos)).outcome()? {
            Outcome::Win { plies } if plies <= budget => {
                // One winning move: the one with the smallest tree.
                let mut best: Option<u128> = None;
                for after in moves {
                    let size = match after.next {
                        None if after.wins() => Some(1),
                        Some(next) if after.wins() => self.size(&next, budget - 1),
                        _ => None,
                    };
                    if let Some(s) = size {
                        best = Some(best.map_or(s, |b| b.min(s)));
                    }
                }
                best.map(|b| b + 1)
            }
            Outcome::Loss { plies } if plies <= budget => {
                // Every reply, once per position it leads to up to symmetry (the moves'
                // positions are canonical images already).
                let ended = moves.iter().filter(|a| a.next.is_none()).count() as u128;
                let mut next: Vec<(u32, u32)> = moves
                    .iter()
                    .filter_map(|a| a.next.map(|n| (n.white, n.black)))
                    .collect();
                next.sort_unstable();
                next.dedup();
                let mut total: u128 = 1 + ended;
                for (white, black) in next {
                    let child = Position {
                        white,
                        black,
                        to_move: pos.to_move.other(),
                    };
                    total += self.size(&child, budget.checked_sub(1)?)?;
                }
                Some(total)
            }
            _ => None,
        }
    }
}

/// One winning move of a start position, up to symmetry.
#[derive(Clone, Debug)]
pub struct WinningMove {
    /// The move (one of its symmetric images).
    pub notation: String,
    /// The position it leads to, if the game goes on.
    pub next: Option<Position>,
    /// That position's value for its side to move.
    pub value: u8,
    /// How many moves of the start position lead to an image of the same position.
    pub images: usize,
    /// `(budget, smallest proof tree)` of the position after the move, with its own distance
    /// as budget (a longer win's tree can need far more positions to size with slack).
    pub proof_trees: Vec<(u32, Option<u128>)>,
}

/// A start position analysed.
#[derive(Clone, Debug)]
pub struct StartAnalysis {
    /// The position play starts from.
    pub position: Position,
    /// Its value for its side to move.
    pub value: u8,
    /// Its legal moves.
    pub moves: usize,
    /// Its winning moves up to symmetry, shortest win first.
    pub winning_moves: Vec<WinningMove>,
    /// `(budget, smallest proof tree)` for the budgets tried: the winning distance, then more.
    pub proof_trees: Vec<(u32, Option<u128>)>,
}

/// The budgets a position's proof trees are sized with: its distance, then up to `slack`
/// plies more in steps of 2 (none for a draw).
fn budgets(value: u8, slack: u32) -> Vec<u32> {
    match Value(value).outcome() {
        Some(Outcome::Win { plies } | Outcome::Loss { plies }) => {
            (0..=slack / 2).map(|i| plies + 2 * i).collect()
        }
        _ => Vec::new(),
    }
}

/// The analysis of a start position: its value, its winning moves up to symmetry and the
/// smallest proof trees: of the start within its winning distance and up to `slack` plies
/// more, after each winning move within that move's distance.
pub fn analyse_start(solved: &Solved, start: Position, slack: u32) -> StartAnalysis {
    let value = solved.value(&start);
    let mut trees = ProofTrees::new(solved);
    let sized = |trees: &mut ProofTrees, pos: &Position, value: u8| -> Vec<(u32, Option<u128>)> {
        budgets(value, slack)
            .into_iter()
            .map(|b| (b, trees.size(pos, b)))
            .collect()
    };
    let proof_trees = sized(&mut trees, &start, value);
    let mut moves = 0;
    let mut winning: Vec<WinningMove> = Vec::new();
    let mut found = Vec::new();
    solved.for_each_move(&start, |mv, after| {
        moves += 1;
        if after.wins() {
            found.push((mv, after));
        }
    });
    for (mv, after) in found {
        let notation = mv.map_or("claim".to_string(), |m| m.notation());
        // The positions moves lead to are canonical images already: equal means symmetric.
        if let Some(same) = winning
            .iter_mut()
            .find(|w| after.next.is_some() && w.next == after.next)
        {
            same.images += 1;
            continue;
        }
        let proof_trees = match after.next {
            None => vec![(0, Some(1))],
            Some(n) => budgets(after.value, 0)
                .into_iter()
                .map(|b| (b, trees.size(&n, b)))
                .collect(),
        };
        winning.push(WinningMove {
            notation,
            next: after.next,
            value: after.value,
            images: 1,
            proof_trees,
        });
    }
    winning.sort_by_key(|w| (w.value, w.proof_trees.first().and_then(|t| t.1)));
    StartAnalysis {
        position: start,
        value,
        moves,
        winning_moves: winning,
        proof_trees,
    }
}

/// A position found by the scan, with a figure it is ranked by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// The position (canonical; with 8 pieces white to move).
    pub position: Position,
    /// Its value.
    pub value: u8,
}

impl Found {
    /// An order for ties: the smaller masks first.
    fn key(&self) -> (u32, u32) {
        (self.position.white, self.position.black)
    }
}

/// The facts of one layer.
#[derive(Clone, Debug, Default)]
pub struct LayerFacts {
    /// Canonical positions.
    pub positions: u64,
    /// The most legal moves of a position, how many positions have that many, and the first.
    pub most_moves: usize,
    /// Positions with [`LayerFacts::most_moves`] moves.
    pub most_moves_count: u64,
    /// The first such position.
    pub most_moves_example: Option<Found>,
    /// The longest win (plies), how many positions have it, and the first.
    pub longest_win: u32,
    /// Positions won in [`LayerFacts::longest_win`] plies.
    pub longest_win_count: u64,
    /// The first such position.
    pub longest_win_example: Option<Found>,
    /// Zugzwang positions (layers with equal counts only).
    pub zugzwang: u64,
    /// Of which self-symmetric.
    pub zugzwang_self_symmetric: u64,
    /// The zugzwang position with the longest loss (first among equals).
    pub zugzwang_example: Option<Found>,
    /// Won positions with exactly one winning move.
    pub one_move_problems: u64,
}

/// A one-move problem: a won position with exactly one winning move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The position and its value.
    pub found: Found,
    /// The winning move.
    pub solution: String,
    /// The opponent's legal moves after it (0 if it made the row).
    pub replies: usize,
}

/// What one scan of the tables gathers.
#[derive(Clone, Debug, Default)]
struct Tally {
    layers: Vec<LayerFacts>,
    longest_problems: Vec<Problem>,
    most_replies: Vec<Problem>,
    /// 8-piece draws with exactly one move that does not lose: position -> where it leads
    /// (both normalised).
    forced_draws: Vec<((u32, u32), (u32, u32))>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            layers: vec![LayerFacts::default(); LAYERS as usize],
            ..Tally::default()
        }
    }

    fn merge(mut self, other: Tally) -> Tally {
        for (a, b) in self.layers.iter_mut().zip(other.layers) {
            a.positions += b.positions;
            keep_best(
                (
                    &mut a.most_moves,
                    &mut a.most_moves_count,
                    &mut a.most_moves_example,
                ),
                (b.most_moves, b.most_moves_count, b.most_moves_example),
            );
            keep_best(
                (
                    &mut a.longest_win,
                    &mut a.longest_win_count,
                    &mut a.longest_win_example,
                ),
                (b.longest_win, b.longest_win_count, b.longest_win_example),
            );
            a.zugzwang += b.zugzwang;
            a.zugzwang_self_symmetric += b.zugzwang_self_symmetric;
            a.zugzwang_example = first_of(a.zugzwang_example, b.zugzwang_example, |f| {
                std::cmp::Reverse(f.value)
            });
            a.one_move_problems += b.one_move_problems;
        }
        for p in other.longest_problems {
            rank_problem(&mut self.longest_problems, p, longest_first);
        }
        for p in other.most_replies {
            rank_problem(&mut self.most_replies, p, most_replies_first);
        }
        self.forced_draws.extend(other.forced_draws);
        self
    }
}

/// Merges a "largest figure, how many, first example" triple.
fn keep_best<N: Ord + Copy>(
    (figure, count, example): (&mut N, &mut u64, &mut Option<Found>),
    (other_figure, other_count, other_example): (N, u64, Option<Found>),
) {
    if other_example.is_none() {
        return;
    }
    if example.is_none() || other_figure > *figure {
        (*figure, *count, *example) = (other_figure, other_count, other_example);
    } else if other_figure == *figure {
        *count += other_count;
        *example = first_of(*example, other_example, |_| 0);
    }
}

/// Of two optional findings, the better by `rank` (smaller first), ties by masks.
fn first_of<R: Ord>(
    a: Option<Found>,
    b: Option<Found>,
    rank: impl Fn(&Found) -> R,
) -> Option<Found> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if (rank(&b), b.key()) < (rank(&a), a.key()) {
            b
        } else {
            a
        }),
        (a, b) => a.or(b),
    }
}

/// Longest wins first, then most replies, then smaller masks.
fn longest_first(p: &Problem) -> (std::cmp::Reverse<u8>, std::cmp::Reverse<usize>, (u32, u32)) {
    (
        std::cmp::Reverse(p.found.value),
        std::cmp::Reverse(p.replies),
        p.found.key(),
    )
}

/// Most replies first, then longest wins, then smaller masks.
fn most_replies_first(
    p: &Problem,
) -> (std::cmp::Reverse<usize>, std::cmp::Reverse<u8>, (u32, u32)) {
    (
        std::cmp::Reverse(p.replies),
        std::cmp::Reverse(p.found.value),
        p.found.key(),
    )
}

/// Inserts `p` into the ranked list `list` (kept to [`PROBLEMS_LISTED`]).
fn rank_problem<K: Ord>(list: &mut Vec<Problem>, p: Problem, order: impl Fn(&Problem) -> K) {
    if list.len() == PROBLEMS_LISTED && order(&p) >= order(list.last().expect("full")) {
        return;
    }
    let at = list.partition_point(|q| order(q) < order(&p));
    list.insert(at, p);
    list.truncate(PROBLEMS_LISTED);
}

/// Simple cycles of one period.
#[derive(Clone, Debug)]
pub struct Cycles {
    /// Plies around the cycle.
    pub period: usize,
    /// Cycles of this period.
    pub count: u64,
    /// The positions of one of them (the one through the smallest position), in order.
    pub example: Vec<Position>,
}

/// The whole analysis.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Per layer 0..8.
    pub layers: Vec<LayerFacts>,
    /// One-move problems, longest first.
    pub longest_problems: Vec<Problem>,
    /// One-move problems, most replies first.
    pub most_replies: Vec<Problem>,
    /// 8-piece draws whose side to move has exactly one move that does not lose.
    pub forced_draws: usize,
    /// Simple cycles by period, shortest first.
    pub cycles: Vec<Cycles>,
}

/// Scans every position of the tables once and gathers the analysis.
pub fn analyse(solved: &Solved) -> Analysis {
    let layers: Vec<u32> = (0..LAYERS).collect();
    let tally = solved.scan(
        &layers,
        Tally::new,
        |acc, pos, byte| visit_position(solved, acc, pos, byte),
        Tally::merge,
    );
    let forced_draws = tally.forced_draws.len();
    let cycles = simple_cycles(tally.forced_draws);
    Analysis {
        layers: tally.layers,
        longest_problems: tally.longest_problems,
        most_replies: tally.most_replies,
        forced_draws,
        cycles,
    }
}

/// Everything the scan learns from one canonical position.
fn visit_position(solved: &Solved, acc: &mut Tally, pos: Position, byte: u8) {
    let layer = pos.pieces();
    let facts = &mut acc.layers[layer as usize];
    facts.positions += 1;
    let found = Found {
        position: pos,
        value: byte,
    };
    let mut moves = 0;
    let mut winning = 0;
    let mut solution = None;
    let mut not_losing = 0;
    let mut draw_target = None;
    solved.for_each_move(&pos, |mv, after| {
        moves += 1;
        if after.wins() {
            winning += 1;
            solution = Some((mv, after));
        }
        if !after.loses() {
            not_losing += 1;
            draw_target = after.next;
        }
    });
    keep_best(
        (
            &mut facts.most_moves,
            &mut facts.most_moves_count,
            &mut facts.most_moves_example,
        ),
        (moves, 1, Some(found)),
    );
    match Value(byte).outcome() {
        Some(Outcome::Win { plies }) => {
            keep_best(
                (
                    &mut facts.longest_win,
                    &mut facts.longest_win_count,
                    &mut facts.longest_win_example,
                ),
                (plies, 1, Some(found)),
            );
            if winning == 1 {
                facts.one_move_problems += 1;
                let (mv, after) = solution.expect("one winning move");
                let mut replies = 0;
                if let Some(next) = after.next {
                    rules::moves(solved.game.geometry(), &next, |_, _| replies += 1);
                }
                let problem = Problem {
                    found,
                    solution: mv.map_or("claim".to_string(), |m| m.notation()),
                    replies,
                };
                rank_problem(&mut acc.most_replies, problem.clone(), most_replies_first);
                rank_problem(&mut acc.longest_problems, problem, longest_first);
            }
        }
        Some(Outcome::Loss { .. }) if pos.white.count_ones() == pos.black.count_ones() => {
            // Passing leaves the same board to the opponent: with equal counts, the
            // colour-exchanged position with white to move.
            let passed = Position {
                white: pos.black,
                black: pos.white,
                to_move: Colour::White,
            };
            if matches!(
                Value(solved.value(&passed)).outcome(),
                Some(Outcome::Loss { .. })
            ) {
                facts.zugzwang += 1;
                if canonical_position(solved, &passed) == pos {
                    facts.zugzwang_self_symmetric += 1;
                }
                facts.zugzwang_example = first_of(facts.zugzwang_example, Some(found), |f| {
                    std::cmp::Reverse(f.value)
                });
            }
        }
        Some(Outcome::Draw) if layer == FULL && not_losing == 1 => {
            if let Some(next) = draw_target {
                let next = normalised(solved, &next);
                acc.forced_draws
                    .push(((pos.white, pos.black), (next.white, next.black)));
            }
        }
        _ => {}
    }
}

/// The cycles of the map "forced draw -> where its one non-losing move leads" that stay
/// among forced draws, by period.
fn simple_cycles(mut edges: Vec<((u32, u32), (u32, u32))>) -> Vec<Cycles> {
    edges.sort_unstable();
    let next: HashMap<(u32, u32), (u32, u32)> = edges.iter().copied().collect();
    // 0: unvisited; otherwise the walk that first reached the position.
    let mut walk_of: HashMap<(u32, u32), usize> = HashMap::new();
    let mut by_period: HashMap<usize, Cycles> = HashMap::new();
    for (walk, &(start, _)) in edges.iter().enumerate() {
        let walk = walk + 1;
        let mut at = start;
        let mut path = Vec::new();
        loop {
            match walk_of.get(&at) {
                Some(&w) if w == walk => {
                    // Back on this walk's own path: the cycle is the path from `at` on.
                    let from = path.iter().position(|&p| p == at).expect("on the path");
                    let cycle: Vec<(u32, u32)> = path[from..].to_vec();
                    let least = (0..cycle.len())
                        .min_by_key(|&i| cycle[i])
                        .expect("nonempty");
                    let ordered: Vec<Position> = (0..cycle.len())
                        .map(|i| {
                            let (white, black) = cycle[(least + i) % cycle.len()];
                            Position {
                                white,
                                black,
                                to_move: Colour::White,
                            }
                        })
                        .collect();
                    let entry = by_period.entry(cycle.len()).or_insert_with(|| Cycles {
                        period: cycle.len(),
                        count: 0,
                        example: ordered.clone(),
                    });
                    entry.count += 1;
                    if (ordered[0].white, ordered[0].black)
                        < (entry.example[0].white, entry.example[0].black)
                    {
                        entry.example = ordered;
                    }
                    break;
                }
                Some(_) => break, // joins an earlier walk: nothing new
                None => {}
            }
            walk_of.insert(at, walk);
            path.push(at);
            match next.get(&at) {
                Some(&n) => at = n,
                None => break, // leaves the forced draws
            }
        }
    }
    let mut cycles: Vec<Cycles> = by_period.into_values().collect();
    cycles.sort_by_key(|c| c.period);
    cycles
}
