//! Turning text into a syntax tree without ever taking the process down.
//!
//! syn's parser, its `Drop` and our visitors all recurse once per nesting level, and a stack
//! overflow aborts the process (it cannot be caught). So before parsing, a linear scan measures
//! how deep the code nests (brackets plus runs of operators that build left-deep trees, such as
//! `a + b + c ..` or `x.f().g() ..`) and refuses files beyond [`MAX_NESTING`], which fits with
//! a wide margin in the workers' [`WORKER_STACK`]. Parse errors keep syn's message and place.

use crate::base::diagnostic::FileError;
use crate::base::source::SourceFile;

/// Stack size of the threads that parse and analyse files.
pub const WORKER_STACK: usize = 256 * 1024 * 1024;
/// Deepest nesting (brackets plus operator chains) a file may have.
pub const MAX_NESTING: usize = 4000;
/// Default size limit for one file.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

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
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = skip_line_comment(b, i);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = skip_block_comment(b, i);
                continue;
            }
            b'"' => {
                i = skip_string(b, i);
                continue;
            }
            b'r' if is_raw_string_start(b, i) => {
                i = skip_raw_string(b, i);
                continue;
            }
            b'\'' => {
                i = skip_char_or_lifetime(b, i);
                continue;
            }
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

/// The end of the `//` comment starting at `i` (its line break, or the end of the text).
pub(crate) fn skip_line_comment(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        i += 1;
    }
    i
}

/// The offset after the (nestable) `/* */` comment starting at `i`.
pub(crate) fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

pub(crate) fn skip_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

pub(crate) fn is_raw_string_start(b: &[u8], i: usize) -> bool {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return false;
    }
    let mut j = i + 1;
    while b.get(j) == Some(&b'#') {
        j += 1;
    }
    b.get(j) == Some(&b'"')
}

pub(crate) fn skip_raw_string(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    let mut hashes = 0;
    while b.get(j) == Some(&b'#') {
        hashes += 1;
        j += 1;
    }
    j += 1;
    while j < b.len() {
        if b[j] == b'"'
            && b[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == b'#')
                .count()
                == hashes
        {
            return j + 1 + hashes;
        }
        j += 1;
    }
    j
}

pub(crate) fn skip_char_or_lifetime(b: &[u8], i: usize) -> usize {
    // `'\n'`, `'\u{1F600}'`, `'x'` (possibly multi-byte) are chars; `'a` is a lifetime.
    if b.get(i + 1) == Some(&b'\\') {
        // The escaped character itself may be a quote (`'\''`): the closing one comes after.
        let mut j = i + 3;
        while j < b.len() && j < i + 16 {
            if b[j] == b'\'' {
                return j + 1;
            }
            j += 1;
        }
        return i + 1;
    }
    let mut j = i + 1;
    // One UTF-8 character.
    if j < b.len() {
        j += 1;
        while j < b.len() && (b[j] & 0xC0) == 0x80 {
            j += 1;
        }
    }
    if b.get(j) == Some(&b'\'') {
        j + 1
    } else {
        i + 1
    }
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
