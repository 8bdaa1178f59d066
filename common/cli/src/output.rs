//! Writing to standard output.
//!
//! `retro probe ... | head` closes the pipe early; that is a normal way to use a command-line
//! tool, so it ends the program quietly instead of panicking like `println!` would.

use std::io::ErrorKind;

/// Whether `error` (anywhere in its chain) is a closed output pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == ErrorKind::BrokenPipe)
    })
}

/// `println!` that returns an error from the enclosing function (an `anyhow::Result`) when
/// standard output cannot be written, instead of panicking.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
            .map_err(|e| anyhow::Error::from(e).context("cannot write to standard output"))?;
    }};
}

/// `print!` counterpart of [`outln!`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
            .map_err(|e| anyhow::Error::from(e).context("cannot write to standard output"))?;
    }};
}

/// `1234567` as `1,234,567`: how counts are shown to people.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Seconds as a person reads them: `42 s`, `3 min 05 s`, `2 h 07 min`.
pub fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

/// Seconds for a summary line: `9.84 s` below a minute, else as [`duration`].
pub fn duration_precise(seconds: f64) -> String {
    if seconds < 60.0 {
        format!("{seconds:.2} s")
    } else {
        duration(seconds)
    }
}

/// A rate rounded for reading: `10.5 M`, `3,336`.
pub fn rate(per_second: f64) -> String {
    if per_second >= 1e6 {
        format!("{:.1} M", per_second / 1e6)
    } else {
        thousands(per_second.round() as u64)
    }
}

/// A table as lines: `header`, then `rows`, each column as wide as its widest cell (numbers,
/// `right[i]`, aligned right), two spaces apart; the last column is not padded.
pub fn table<const N: usize>(
    header: &[&str; N],
    rows: &[[String; N]],
    right: &[bool; N],
) -> Vec<String> {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; N]| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                text.push_str("  ");
            }
            let pad = " ".repeat(widths[i] - cell.chars().count());
            match (right[i], i + 1 == N) {
                (true, _) => text.push_str(&format!("{pad}{cell}")),
                (false, false) => text.push_str(&format!("{cell}{pad}")),
                (false, true) => text.push_str(cell),
            }
        }
        text
    };
    std::iter::once(line(*header))
        .chain(
            rows.iter()
                .map(|r| line(std::array::from_fn(|i| r[i].as_str()))),
        )
        .collect()
}
