//! `retro probe`: values, moves and principal variations of positions, in the notation of the
//! directory's game (its explorer parses, looks up and explains them).

use crate::tables::Tables;
use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

/// Prints what the game says of the position `text` (board, value, every legal move best
/// first with the value it leads to, principal variation), or (`json`) the same as one JSON
/// object.
pub fn probe_one(tables: &Tables, text: &str, json: bool) -> Result<()> {
    let probe = tables.explorer()?.probe(text, tables)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&probe.json)?);
    } else {
        out!("{}", probe.text);
    }
    Ok(())
}

/// Writes the game's picture of the position `text` as an SVG file at `path`.
pub fn write_svg(tables: &Tables, text: &str, path: &Path) -> Result<()> {
    let image = tables.explorer()?.svg(text)?;
    Ok(retro_store::write_atomic(path, image.as_bytes())?)
}

/// Reads lines `<position> <side> [anything]` from `path` (`-`: standard input; where the
/// position ends is the game's notation's business: [`retro_pipeline::Explore::split_line`]) and prints
/// `<position> <side> <value>` for each. Blank lines and `#` comments are skipped; a bad line
/// is reported on stderr with its number and the batch goes on; the command fails at the end
/// if any line was bad.
pub fn probe_file(tables: &Tables, path: &Path) -> Result<()> {
    let input: Box<dyn BufRead> = if path == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path)
            .with_context(|| format!("cannot read positions file {}", path.display()))?;
        Box::new(std::io::BufReader::new(file))
    };
    let name = if path == Path::new("-") {
        "standard input".to_string()
    } else {
        path.display().to_string()
    };
    let explorer = tables.explorer()?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut bad = 0usize;
    for (i, line) in input.lines().enumerate() {
        let line = line.with_context(|| format!("{name}: line {}", i + 1))?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let looked_up = (|| -> Result<String> {
            let (position, _) = explorer.split_line(text)?;
            let value = explorer.value(&position, tables)?;
            Ok(format!("{position} {value}"))
        })();
        match looked_up {
            Ok(result) => writeln!(out, "{result}")?,
            Err(e) => {
                bad += 1;
                out.flush()?;
                eprintln!(
                    "{name}: line {}: {}",
                    i + 1,
                    retro_pipeline::process::error_text(&e)
                );
            }
        }
    }
    out.flush()?;
    if bad > 0 {
        bail!("{name}: {bad} bad line{}", if bad == 1 { "" } else { "s" });
    }
    Ok(())
}
