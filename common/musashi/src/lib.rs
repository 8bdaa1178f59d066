//! Sixteen Musashi (十六むさし): boards, board files, rules, symmetry, position notation, and
//! the game as the retrograde engine sees it.
//!
//! Brown (many pieces, `o`) moves first and wins by leaving black (one piece, `X`) without a
//! move; black captures pairs of browns that sandwich the point it moves to, and wins by never
//! being stalemated (a repetition is a black win). Full rules: `shared/spec/sixteen-musashi.md`.

#![warn(missing_docs)]

pub mod board;
pub mod board_file;
pub mod command_line;
pub mod counts;
pub mod explore;
pub mod extremes;
pub mod game;
pub mod job;
pub mod picture;
pub mod position;
pub mod rules;
pub mod symmetry;
pub mod values;
pub mod viewer;

pub use board::Board;
pub use board_file::BoardFileError;
pub use game::Musashi;
pub use position::{Position, PositionError, Side};
