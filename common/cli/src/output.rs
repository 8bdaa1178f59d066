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
