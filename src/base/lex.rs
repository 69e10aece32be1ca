//! The one lexer of Rust source text: where a comment or a literal that starts at a byte ends.
//!
//! Every scan of text that does not parse it builds on [`token_at`]: the parser's nesting guard
//! (`parse::too_deep`), the prefilter's comment finder, the mask's bracket scan and
//! [`regions`](crate::base::regions) (`--add-ignore`). One lexer, so that what one of them takes
//! for a comment the others do too.
//!
//! It follows rustc's lexer for everything that can hide a bracket, a line break or a comment
//! marker: strings, byte and C strings with their escapes, raw strings (`r`, `br`, `cr`) with
//! any number of `#`, char and byte literals (`'\''`, `'\u{1F600}'`) told apart from lifetimes
//! and labels, raw identifiers and nested block comments. `regions`' test checks it against
//! proc-macro2's tokenizer (syn's) on every source file of this repository. A scanner may call
//! [`token_at`] on every byte it would otherwise read as code: inside an identifier the byte
//! before a would-be prefix is a word byte, so `xr"..."` is a name and a plain string. Pure:
//! bytes in, offsets out; an unclosed literal or comment ends at the end of the text.

/// Deepest nesting (brackets plus operator chains) a file may have: the parser's guard refuses
/// deeper files, and the mask declines to mask them so that the guard sees them whole.
pub const MAX_NESTING: usize = 4000;

/// What a comment or literal is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// `// ..` (doc comments too), up to its line break; or a shebang line.
    LineComment,
    /// `/* .. */`, nested, doc comments too.
    BlockComment,
    /// A string, byte string, C string, raw string, char or byte literal.
    Literal,
}

/// The comment or literal that starts at `i`, with the offset after it; `None` when code
/// starts there (a lifetime's quote, a raw identifier's `r`, any other byte).
// Inlined: every scanner calls it on every byte, and almost every byte starts no comment or
// literal; the first test answers those in the caller's loop, the rest is out of line.
#[must_use]
#[inline]
pub fn token_at(b: &[u8], i: usize) -> Option<(Region, usize)> {
    match *b.get(i)? {
        b'/' | b'"' | b'\'' | b'b' | b'c' | b'r' => token_at_slow(b, i),
        _ => None,
    }
}

/// [`token_at`] for a byte that may start a comment or literal.
#[inline(never)]
fn token_at_slow(b: &[u8], i: usize) -> Option<(Region, usize)> {
    match b[i] {
        b'/' => match b.get(i + 1) {
            Some(b'/') => Some((Region::LineComment, line_end(b, i))),
            Some(b'*') => Some((Region::BlockComment, block_comment_end(b, i))),
            _ => None,
        },
        b'"' => Some((Region::Literal, string_end(b, i))),
        b'\'' => char_end(b, i).map(|end| (Region::Literal, end)),
        b'b' | b'c' | b'r' if i == 0 || !is_word(b[i - 1]) => {
            prefixed_end(b, i).map(|end| (Region::Literal, end))
        }
        _ => None,
    }
}

/// Can `c` be part of an identifier (or a number)? Bytes of non-ASCII characters count.
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// The offset of the line break ending the line that holds `i` (or the end of the text).
#[must_use]
pub fn line_end(b: &[u8], i: usize) -> usize {
    b[i.min(b.len())..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |e| i + e)
}

/// The offset after the nested `/* */` starting at `i`.
fn block_comment_end(b: &[u8], mut i: usize) -> usize {
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
    b.len()
}

/// The offset after the `"..."` whose opening quote is at `i`.
fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The offset after the literal whose prefix (`b`, `c`, `r`, `br`, `cr`) starts at `i`, or
/// `None` when the letter starts a name (`r#ident`, `bread`) and not a literal.
fn prefixed_end(b: &[u8], i: usize) -> Option<usize> {
    let (raw, after) = match (b[i], b.get(i + 1)) {
        (b'r', _) => (true, i + 1),
        (b'b' | b'c', Some(b'r')) => (true, i + 2),
        _ => (false, i + 1),
    };
    if raw {
        return raw_string_end(b, after);
    }
    match b.get(after) {
        Some(b'"') => Some(string_end(b, after)),
        // A byte literal is never a lifetime.
        Some(b'\'') if b[i] == b'b' => Some(char_end(b, after).unwrap_or(after + 1)),
        _ => None,
    }
}

/// The offset after the raw string whose `#`s or opening quote start at `i` (after the
/// prefix), or `None` when this is no raw string (`r#ident`).
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
    let open = i + hashes;
    if b.get(open) != Some(&b'"') {
        return None;
    }
    let mut j = open + 1;
    while j < b.len() {
        if b[j] == b'"'
            && b[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == b'#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(b.len())
}

/// The offset after the char literal whose quote is at `i`, or `None` for a lifetime or label
/// (`'a`, `'static`, `'outer:`), rustc's rule: a quote, one character and a quote is a char;
/// a quote and a backslash starts an escape; a quote and a name not closed by a quote is a
/// lifetime.
fn char_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i + 1) == Some(&b'\\') {
        // Skip the escaped character (`'\''`, `'\\'`), then up to the closing quote
        // (`'\u{1F600}'`), never past the line.
        let mut j = i + 3;
        while j < b.len() && b[j] != b'\'' && b[j] != b'\n' {
            j += 1;
        }
        return Some((j + 1).min(b.len()));
    }
    // One character: its first byte says how many bytes it has (the text is UTF-8).
    let first = *b.get(i + 1)?;
    let len = (first.leading_ones() as usize).clamp(1, 4);
    let after = i + 1 + len;
    (b.get(after) == Some(&b'\'')).then_some(after + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`token_at`] finds at the start of `text`.
    fn at0(text: &str) -> Option<(Region, &str)> {
        token_at(text.as_bytes(), 0).map(|(k, end)| (k, &text[..end]))
    }

    #[test]
    fn each_kind_ends_where_rustc_ends_it() {
        assert_eq!(at0("// a\nb"), Some((Region::LineComment, "// a")));
        assert_eq!(
            at0("/* a /* b */ c */ d"),
            Some((Region::BlockComment, "/* a /* b */ c */"))
        );
        assert_eq!(at0(r#""a\"b" c"#), Some((Region::Literal, r#""a\"b""#)));
        assert_eq!(at0(r#"br"\" x"#), Some((Region::Literal, r#"br"\""#)));
        assert_eq!(
            at0(r##"r#"a"b"# c"##),
            Some((Region::Literal, r##"r#"a"b"#"##))
        );
        assert_eq!(at0(r"b'\'' x"), Some((Region::Literal, r"b'\''")));
        assert_eq!(at0("'é' x"), Some((Region::Literal, "'é'")));
        assert_eq!(
            at0(r"'\u{1F600}' x"),
            Some((Region::Literal, r"'\u{1F600}'"))
        );
        // Code: a lifetime, a raw identifier, a name, a lone slash.
        for code in ["'a>", "r#type", "bread", "rb\"x\"", "/ 2"] {
            assert_eq!(at0(code), None, "{code}");
        }
        // Inside a word a letter is no prefix.
        assert_eq!(token_at(b"xr\"a\"", 1), None);
        // Unclosed: the end of the text, never past it.
        for open in ["\"a\\", "/* a", "r#\"a", "'\\"] {
            assert_eq!(at0(open).map(|(_, t)| t), Some(open), "{open}");
        }
    }
}
