//! `retro play bao`: a referee for two people at one terminal, as the seed document's program
//! was.
//!
//! Before each move it shows the board with the mover's rows at the bottom, the mover's markers
//! (`*`), the holes that can capture and in which direction, or else the holes that can start a
//! takata (moves that never end are marked). It reads a move (`f3 cw`) or a command from
//! standard input, refuses an illegal move with the reason, shows the sowing step by step
//! (with `--fast` only the result), and announces an endless move and a loss. `save FILE` and
//! `load FILE` write and read a game record (`retro_bao::record`). The end of the input ends
//! the program cleanly; input that is not typed at a terminal is echoed, so that a scripted
//! game's transcript reads as a game.

use anyhow::Result;
use clap::{Args, ValueEnum};
use retro_bao::board::side_name;
use retro_bao::markers::is_marker;
use retro_bao::moves::hole_name;
use retro_bao::record::Record;
use retro_bao::rules::{legal_moves, loss, outcome, refusal, start_state, Loss, Outcome};
use retro_bao::sowing::{trace, Landing, MoveKind, Phase, Step};
use retro_bao::{Board, EndlessRule, Move, Position, Row};
use retro_engine::Side;
use std::io::{BufRead, Write};
use std::path::Path;

/// The games `retro play` referees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PlayGame {
    /// Bao la kujifunza.
    Bao,
}

/// `retro play` arguments.
#[derive(Args)]
pub struct PlayArgs {
    /// The game.
    #[arg(value_enum)]
    game: PlayGame,
    /// Show only the result of each move, not every sowing.
    #[arg(long)]
    fast: bool,
    /// Holes a row (2 to 8; the full game has 8).
    #[arg(long = "row", default_value_t = 8, value_name = "N")]
    holes: usize,
    /// Stones a hole at the start.
    #[arg(long, default_value_t = 2, value_name = "K")]
    stones: u8,
    /// What a move that never ends does: cut-off (the game ends, no winner) or illegal.
    #[arg(long = "endless", default_value = "cut-off", value_name = "RULE")]
    rule: String,
    /// Start from a saved game record.
    #[arg(long, value_name = "FILE")]
    load: Option<std::path::PathBuf>,
}

/// The most steps of an endless move shown before it is announced.
const SHOWN_ENDLESS_STEPS: u64 = 60;

const HELP: &str = "\
Moves: a hole and a direction, e.g. 'f3 cw' or 'b1 acw'. Holes are named from the mover's seat:
  f1..fN the front row from your left, b1..bN the back row from your left (b1 is behind f1);
  cw = clockwise (rightwards along your front row), acw = anticlockwise.
Commands: board (show it again), save FILE, load FILE, help, quit.";

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GameEnd {
    /// The side lost.
    Lost(Side, Loss),
    /// A move never ended (cut-off rule): no winner.
    Endless,
}

/// The game being refereed.
struct Game {
    record: Record,
    position: Position,
    end: Option<GameEnd>,
}

impl Game {
    /// A game from the start of the record's variant, replaying its moves.
    fn from_record(record: Record) -> Result<Game, String> {
        let replay = record.replay()?;
        let position = *replay.positions.last().ok_or("a record with no position")?;
        let end = if replay.ended_endless {
            Some(GameEnd::Endless)
        } else {
            loss(&position, record.rule).map(|l| GameEnd::Lost(position.side, l))
        };
        Ok(Game {
            record,
            position,
            end,
        })
    }
}

/// Runs the referee on standard input and output.
pub fn run(args: PlayArgs) -> Result<()> {
    let PlayGame::Bao = args.game;
    let record = match &args.load {
        Some(path) => read_record(path).map_err(anyhow::Error::msg)?,
        None => {
            let row = Row::new(args.holes).map_err(anyhow::Error::msg)?;
            let rule = EndlessRule::parse(&args.rule).map_err(anyhow::Error::msg)?;
            Position::start(row, args.stones).map_err(anyhow::Error::msg)?;
            Record::new(row, args.stones, rule)
        }
    };
    let mut game = Game::from_record(record).map_err(anyhow::Error::msg)?;
    outln!(
        "Bao la kujifunza, {} holes a row, {} stones a hole, endless moves: {}. Type 'help' for help.",
        game.record.row.len(),
        game.record.stones,
        game.record.rule.name()
    );
    show_turn(&game)?;
    let stdin = std::io::stdin();
    // Typed input shows on a terminal; read from a file or a pipe, it is echoed after the
    // prompt so that the transcript reads as a game.
    let echo = !std::io::IsTerminal::is_terminal(&stdin);
    let mut lines = stdin.lock().lines();
    loop {
        prompt(&game)?;
        let Some(line) = lines.next() else {
            outln!("\n(end of input)");
            return Ok(());
        };
        let line = line?;
        if echo {
            outln!("{line}");
        }
        let line = line.trim();
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match word {
            "" => {}
            "quit" | "exit" => {
                outln!("Bye.");
                return Ok(());
            }
            "help" | "?" => outln!("{HELP}"),
            "board" => show_turn(&game)?,
            "save" if !rest.is_empty() => match std::fs::write(rest, game.record.text()) {
                Ok(()) => outln!(
                    "Saved {} move{} to {rest}.",
                    game.record.moves.len(),
                    plural(game.record.moves.len())
                ),
                Err(e) => outln!("error: cannot write {rest}: {e}"),
            },
            "load" if !rest.is_empty() => {
                match read_record(Path::new(rest)).and_then(Game::from_record) {
                    Ok(loaded) => {
                        game = loaded;
                        outln!(
                            "Loaded {} move{} from {rest}.",
                            game.record.moves.len(),
                            plural(game.record.moves.len())
                        );
                        show_turn(&game)?;
                    }
                    Err(e) => outln!("error: {e}"),
                }
            }
            "save" | "load" => outln!("error: '{word}' needs a file name, e.g. '{word} game.txt'"),
            _ => play_move(&mut game, line, args.fast)?,
        }
    }
}

/// Reads and parses a record file.
fn read_record(path: &Path) -> Result<Record, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Record::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The prompt: who is to move (or that the game is over).
fn prompt(game: &Game) -> Result<()> {
    match game.end {
        None => out!("{}> ", side_name(game.position.side)),
        Some(_) => out!("(game over)> "),
    }
    std::io::stdout().flush()?;
    Ok(())
}

/// Checks and plays one move typed by the mover.
fn play_move(game: &mut Game, text: &str, fast: bool) -> Result<()> {
    if let Some(end) = game.end {
        outln!(
            "illegal: the game is over ({}); 'load' or 'quit'",
            end_text(end)
        );
        return Ok(());
    }
    let row = game.record.row;
    let mv = match Move::parse(row, text) {
        Ok(mv) => mv,
        Err(e) => {
            outln!("illegal: {e}");
            return Ok(());
        }
    };
    let position = game.position;
    if let Some(reason) = refusal(&position, mv, game.record.rule) {
        outln!("illegal: {reason}");
        return Ok(());
    }
    let kind = legal_moves(&position).kind;
    let result = outcome(&position, mv, kind);
    let mover = side_name(position.side);
    outln!(
        "{mover} plays {} ({})",
        mv.text(row),
        match kind {
            MoveKind::Capture => "a capture",
            MoveKind::Takata => "a takata",
        }
    );
    let limit = match result {
        Outcome::Continues { steps, .. } => steps,
        Outcome::Endless(e) => (e.lead_in + e.cycle).min(SHOWN_ENDLESS_STEPS),
    };
    if !fast {
        let start = start_state(&position, mv, kind);
        for (i, (step, board)) in trace(&start, limit).iter().enumerate() {
            outln!("{:>3}. {}", i + 1, step_text(step, row, position.side));
            show_board(board, position.side, None)?;
        }
    }
    game.record.moves.push(mv);
    match result {
        Outcome::Continues { next, steps } => {
            outln!(
                "The move ends after {steps} sowing{}.",
                plural(steps as usize)
            );
            game.position = next;
            game.end = loss(&next, game.record.rule).map(|l| GameEnd::Lost(next.side, l));
            show_turn(game)?;
        }
        Outcome::Endless(e) => {
            outln!(
                "{} never ends: after {} sowing{} it repeats every {} sowing{}.",
                mv.text(row),
                e.lead_in,
                plural(e.lead_in as usize),
                e.cycle,
                plural(e.cycle as usize)
            );
            game.end = Some(GameEnd::Endless);
            outln!("Game over: {}.", end_text(GameEnd::Endless));
        }
    }
    Ok(())
}

/// One step in words, from the mover's seat.
fn step_text(step: &Step, row: Row, mover: Side) -> String {
    let what = match step.phase {
        Phase::Lift => format!(
            "lift {} ({} stone{})",
            hole_name(row, step.at),
            step.stones,
            plural(step.stones as usize)
        ),
        Phase::Capture => format!(
            "capture {} stone{} from {}'s {} facing {}",
            step.stones,
            plural(step.stones as usize),
            side_name(mover.other()),
            hole_name(row, row.facing(step.at)),
            hole_name(row, step.at)
        ),
    };
    let next = match step.landing {
        Landing::Empty => "was empty: the move ends",
        Landing::Marker => "is a marker: capture",
        Landing::Stones => "holds stones: lift them",
    };
    format!(
        "{what}, sow {} from {}; the last stone falls into {}, which {next}",
        step.direction,
        hole_name(row, step.first),
        hole_name(row, step.last)
    )
}

/// Words for how a game ended.
fn end_text(end: GameEnd) -> String {
    match end {
        GameEnd::Lost(side, why) => format!(
            "{} loses ({why}), {} wins",
            side_name(side),
            side_name(side.other())
        ),
        GameEnd::Endless => "an endless move ends the game with no winner".to_string(),
    }
}

/// The board, the mover's markers, the holes that can move, and who is to move (or the end).
fn show_turn(game: &Game) -> Result<()> {
    let position = game.position;
    let row = game.record.row;
    let side = position.side;
    show_board(&position.board, side, Some(side))?;
    if let Some(end) = game.end {
        outln!("Game over: {}.", end_text(end));
        return Ok(());
    }
    let markers: Vec<String> = (0..row.len())
        .filter(|&h| is_marker(&position.board, side, h))
        .map(|h| hole_name(row, h))
        .collect();
    outln!("markers: {}", list_or_none(&markers));
    let legal = legal_moves(&position);
    let note = |mv: Move| -> String {
        match outcome(&position, mv, legal.kind) {
            Outcome::Endless(_) => format!("{} (never ends)", mv.text(row)),
            Outcome::Continues { .. } => mv.text(row),
        }
    };
    let moves: Vec<String> = legal.moves.iter().map(|&mv| note(mv)).collect();
    match legal.kind {
        MoveKind::Capture => outln!("can capture (you must): {}", moves.join(", ")),
        MoveKind::Takata => outln!("no capture; takata: {}", list_or_none(&moves)),
    }
    Ok(())
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

/// The board with `bottom`'s rows at the bottom (front row nearer the middle), hole names
/// from each owner's seat, and `bottom`'s markers starred when `markers_of` is that side.
fn show_board(board: &Board, bottom: Side, markers_of: Option<Side>) -> Result<()> {
    let row = board.row();
    let n = row.len();
    let top = bottom.other();
    let cell = |side: Side, hole: usize| -> String {
        let star = if markers_of == Some(side) && is_marker(board, side, hole) {
            '*'
        } else {
            ' '
        };
        format!("{:>3}{star}", board.get(side, hole))
    };
    let names = |holes: &mut dyn Iterator<Item = usize>| -> String {
        holes
            .map(|h| format!("{:>3} ", hole_name(row, h)))
            .collect()
    };
    let line = |cells: &mut dyn Iterator<Item = String>| -> String { cells.collect() };
    let pad = 8;
    // Seen from the bottom player: column i holds the top player's back hole n + i and front
    // hole n - 1 - i, and the bottom player's front hole i and back hole 2n - 1 - i.
    outln!(
        "{:<pad$}{}",
        side_name(top),
        names(&mut (0..n).map(|i| n + i))
    );
    outln!(
        "{:<pad$}{}",
        "",
        line(&mut (0..n).map(|i| cell(top, n + i)))
    );
    outln!(
        "{:<pad$}{}",
        "",
        line(&mut (0..n).map(|i| cell(top, n - 1 - i)))
    );
    outln!("{:<pad$}{}", "", names(&mut (0..n).map(|i| n - 1 - i)));
    outln!("{:<pad$}{}", "", "-".repeat(4 * n));
    outln!("{:<pad$}{}", "", names(&mut (0..n)));
    outln!("{:<pad$}{}", "", line(&mut (0..n).map(|i| cell(bottom, i))));
    outln!(
        "{:<pad$}{}",
        "",
        line(&mut (0..n).map(|i| cell(bottom, 2 * n - 1 - i)))
    );
    outln!(
        "{:<pad$}{}",
        side_name(bottom),
        names(&mut (0..n).map(|i| 2 * n - 1 - i))
    );
    Ok(())
}
