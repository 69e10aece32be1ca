//! Writing to stderr without ever panicking, and telling a closed pipe from a real write error.
//!
//! std's `eprintln!` panics when stderr cannot be written ("failed printing to stderr", exit
//! 101), which is what `timeoutlint . 2>&1 | head -1` did once `head` had its line. The crate
//! root shadows `eprintln!` and `eprint!` with macros that call [`stderr`], so every message of
//! the library, including ones added later, is written this way. A failed write to stderr is
//! dropped: there is nowhere left to report it, and the exit code still says how the run went.
//! The policy for a closed stdout is in `cli` (the exit code stays the lint's; output-only
//! commands exit 0, like ripgrep).

use std::io::Write as _;

/// Write `args` (and a line break when `newline`) to stderr, ignoring every error.
pub fn stderr(args: std::fmt::Arguments<'_>, newline: bool) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args);
    if newline {
        let _ = err.write_all(b"\n");
    }
}

/// Is `e` (or what caused it) a write to a pipe nobody reads any more?
#[must_use]
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
