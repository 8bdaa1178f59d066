//! Bao la kujifunza, "the Bao of learning": four rows of holes, every stone on the board from
//! the start, captures through markers and mtaji, non-capturing takata with front-row priority,
//! and relay sowing that can go on for ever. Rules: `../shared/spec/bao-la-kujifunza.md`; the
//! choices where it is silent: `docs/bao.md`, "Rules as implemented".
//!
//! The full game has rows of 8 holes and 2 stones a hole; every row length from 2 to 8 is a
//! variant (for solving small boards exactly).
//!
//! * [`row`]: one player's holes (front and back row as a ring), the ends, where captured
//!   stones go;
//! * [`command_line`]: the `--game` value and options of a solved variant;
//! * [`direction`]: clockwise and anticlockwise;
//! * [`board`]: both players' stones, positions and their notation;
//! * [`moves`]: moves and hole names as people write them (`f3 cw`);
//! * [`markers`]: markers and mtaji;
//! * [`sowing`]: a move step by step, with exact endless-move detection;
//! * [`rules`]: legal moves, refusals with reasons, outcomes, the endless-move rule, loss;
//! * [`record`]: a game record (variant, rule, moves) as text;
//! * [`game`]: a variant on the engine (every position, win/draw/loss, pulled) and [`job`],
//!   what a solve records of it;
//! * [`explore`]: positions of a solved variant looked up (`retro probe`);
//! * [`search`]: breadth-first and random search from the start (endless moves, fullest hole);
//! * [`longest`]: the longest repetition-free game that ends in a loss (question 4), exactly on
//!   small variants, by cooperative random games on the full game.

#![warn(missing_docs)]

pub mod board;
pub mod command_line;
pub mod direction;
pub mod explore;
pub mod game;
pub mod job;
pub mod longest;
pub mod markers;
pub mod moves;
pub mod record;
pub mod row;
pub mod rules;
pub mod search;
pub mod sowing;

pub use board::{Board, Position};
pub use direction::Direction;
pub use moves::Move;
pub use row::Row;
pub use rules::EndlessRule;
