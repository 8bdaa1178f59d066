//! The relay-sowing mancala of the SPIN study ("BAO" there): a ring of `2n` holes, relay
//! sowing in which one move can sow forever, and positions that can repeat. Rules, definitions
//! and results: `../shared/spec/mancala.md` and `docs/mancala.md`.
//!
//! * [`command_line`]: the `--game` values and options of the mancala;
//! * [`board`]: the ring, boards and their notation (`0,4,0,4,0,4,0,4 first`);
//! * [`sowing`]: one sowing, a whole move with exact endless-move detection, loops classified
//!   by period and shift;
//! * [`rules`]: the moves of a position, captures, the end of the game, the endless-move rule;
//! * [`game`]: the game on the engine (stages by stones on the board, score margins, pulled);
//! * [`job`]: what a solve job records (definition, start, words, summary table);
//! * [`loops`]: every endless move and repetition reachable from the start, and
//!   [`loops_report`] that writes them as Markdown;
//! * [`reach`]: the positions reachable from the start, counted layer by layer (stones on
//!   the board), lighter than [`loops`] so it goes further;
//! * [`probe`]: a position's value, every move's, and a best line;
//! * [`explore`]: positions looked up in solved tables (`retro probe`, `retro verify`).

#![warn(missing_docs)]

pub mod board;
pub mod command_line;
pub mod explore;
pub mod game;
pub mod job;
pub mod loops;
pub mod loops_report;
pub mod probe;
pub mod reach;
pub mod rules;
pub mod sowing;

pub use board::{Board, Position};
pub use game::Mancala;
pub use rules::EndlessRule;
