//! Turning text into a syntax tree without ever taking the process down.
//!
//! syn's parser, its `Drop` and our visitors all recurse once per nesting level, and a stack
//! overflow aborts the process (it cannot be caught). So before parsing, a linear scan measures
//! how deep the code nests (brackets plus runs of operators that build left-deep trees, such as
//! `a + b + c ..` or `x.f().g() ..`) and refuses files beyond [`MAX_NESTING`], which fits with
//! a wide margin in the workers' [`WORKER_STACK`]. Parse errors keep syn's message and place.

use crate::base::diagnostic::FileError;
use crate::base::lex::token_at;
pub use crate::base::lex::MAX_NESTING;
use crate::base::source::SourceFile;

/// Stack size of the threads that parse and analyse files.
pub const WORKER_STACK: usize = 256 * 1024 * 1024;
/// Default size limit for one file.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

thread_local! {
    /// Texts handed to syn on this thread: the driver's per-pass parse counts ([`parses_here`]).
    static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many texts this thread has parsed so far. A file's pass runs on one thread, so the
/// difference around a call is what that call parsed (the driver's `Tally`).
#[must_use]
pub fn parses_here() -> usize {
    PARSES.with(std::cell::Cell::get)
}

/// Parse `src`, or say why not.
pub fn parse(src: &SourceFile) -> Result<syn::File, FileError> {
    parse_text(src, &src.text)
}

/// Parse `text`, a stand-in for `src`'s text with the same lines and character columns (the
/// masked text of [`crate::prefilter::mask`]); errors are placed by line and column, so they point to the
/// same place in `src`.
pub fn parse_text(src: &SourceFile, text: &str) -> Result<syn::File, FileError> {
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &text[bom..];
    if let Some((depth, offset)) = too_deep(body, MAX_NESTING) {
        let pos = SourceFile::new(String::new(), text).position(offset + bom);
        return Err(FileError {
            path: src.path.clone(),
            line: Some(pos.line),
            column: Some(pos.col),
            message: format!(
                "nesting deeper than {MAX_NESTING} levels (reached {depth}); skipped so that \
                 parsing cannot overflow the stack"
            ),
        });
    }
    PARSES.with(|n| n.set(n.get() + 1));
    syn::parse_file(body).map_err(|e| {
        let start = e.span().start();
        FileError {
            path: src.path.clone(),
            line: Some(start.line),
            column: Some(start.column + 1),
            message: format!("could not parse: {e}"),
        }
    })
}

/// The first place where nesting exceeds `limit`, with the depth reached.
#[must_use]
pub fn too_deep(text: &str, limit: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    // One operator-chain counter per open bracket; the cost of a position is the bracket depth
    // plus the chain length at every level, since each level's chain nests inside the outer one.
    let mut chains: Vec<usize> = vec![0];
    let mut total_chain = 0usize;
    let mut i = 0;
    while i < b.len() {
        // Comments and literals hold no nesting.
        if let Some((_, end)) = token_at(b, i) {
            i = end;
            continue;
        }
        let c = b[i];
        match c {
            b'(' | b'[' | b'{' => chains.push(0),
            b')' | b']' | b'}' => {
                if chains.len() > 1 {
                    total_chain -= chains.pop().unwrap_or(0);
                }
                // After `)` or `]` a chain goes on (`f(x).g()`); a block mostly ends a statement
                // (`fn a() -> X {}` repeated must not add up).
                if c == b'}' {
                    if let Some(last) = chains.last_mut() {
                        total_chain -= *last;
                        *last = 0;
                    }
                }
            }
            b';' | b',' => {
                if let Some(last) = chains.last_mut() {
                    total_chain -= *last;
                    *last = 0;
                }
            }
            b'.' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^' | b'!' | b'<' | b'>'
            | b'=' | b'?' => {
                if let Some(last) = chains.last_mut() {
                    *last += 1;
                    total_chain += 1;
                }
            }
            _ => {}
        }
        let depth = chains.len() - 1 + total_chain / 2;
        if depth > limit {
            return Some((depth, i));
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_code_is_shallow() {
        let src = "fn f() { let x = vec![(1, 2)]; let s = \"((((\"; let c = '('; x.iter().map(|a| a.0 + 1).sum::<i32>(); }";
        assert_eq!(too_deep(src, 10), None);
    }

    #[test]
    fn deep_parentheses_and_chains_are_refused() {
        let parens = format!("fn f() {{ {}1{} }}", "(".repeat(5000), ")".repeat(5000));
        assert!(too_deep(&parens, MAX_NESTING).is_some());
        let chain = format!("fn f() {{ 1{} }}", " + 1".repeat(20000));
        assert!(too_deep(&chain, MAX_NESTING).is_some());
        let args = format!("fn f() {{ g({}) }}", "1, ".repeat(100_000));
        assert_eq!(too_deep(&args, MAX_NESTING), None);
    }
}
