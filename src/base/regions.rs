//! Where the comments and literals of Rust source text are: the lexer `--add-ignore` uses to
//! put a comment only where a comment is a comment (never inside a multi-line `"..."`,
//! `r#"..."#` or `/* */`).
//!
//! It follows rustc's lexer for everything that can hide a line break or a comment marker:
//! strings, byte and C strings with their escapes, raw strings with any number of `#`, char and
//! byte literals (`'\''`, `'\u{1F600}'`) told apart from lifetimes and labels, raw identifiers,
//! nested block comments and a shebang line. A unit test checks it against proc-macro2's
//! tokenizer (syn's) on every source file of this repository. Pure: text in, spans out.

use crate::base::source::Span;

/// What a region is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// `// ..` (doc comments too), up to its line break; or a shebang line.
    LineComment,
    /// `/* .. */`, nested, doc comments too.
    BlockComment,
    /// A string, byte string, C string, raw string, char or byte literal.
    Literal,
}

/// Every comment and literal of `text`, in order, not overlapping.
#[must_use]
pub fn regions(text: &str) -> Vec<(Span, Region)> {
    let b = text.as_bytes();
    let n = b.len();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    let mut out = Vec::new();
    let mut i = if text.starts_with('\u{feff}') { 3 } else { 0 };
    // `#!/usr/bin/env ..` on the first line is not code; `#![attr]` is.
    if b[i..].starts_with(b"#!") && !text[i + 2..].trim_start().starts_with('[') {
        let end = line_end(b, i);
        out.push((Span::new(i, end), Region::LineComment));
        i = end;
    }
    while i < n {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let end = line_end(b, i);
            out.push((Span::new(i, end), Region::LineComment));
            i = end;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = block_comment_end(b, i);
            out.push((Span::new(i, end), Region::BlockComment));
            i = end;
        } else if c == b'"' {
            let end = string_end(b, i);
            out.push((Span::new(i, end), Region::Literal));
            i = end;
        } else if c == b'\'' {
            match char_end(text, i) {
                Some(end) => {
                    out.push((Span::new(i, end), Region::Literal));
                    i = end;
                }
                // A lifetime or label: its name is code.
                None => i += 1,
            }
        } else if word(c) {
            let start = i;
            while i < n && word(b[i]) {
                i += 1;
            }
            let prefix = &b[start..i];
            let quote = b.get(i).copied();
            match (prefix, quote) {
                (b"b" | b"c", Some(b'"')) => {
                    let end = string_end(b, i);
                    out.push((Span::new(start, end), Region::Literal));
                    i = end;
                }
                (b"b", Some(b'\'')) => {
                    // A byte literal is never a lifetime.
                    let end = char_end(text, i).unwrap_or(i + 1);
                    out.push((Span::new(start, end), Region::Literal));
                    i = end;
                }
                (b"r" | b"br" | b"cr", Some(b'"' | b'#')) => {
                    if let Some(end) = raw_string_end(b, i) {
                        out.push((Span::new(start, end), Region::Literal));
                        i = end;
                    }
                    // Else `r#ident`, a raw identifier: `#` and the name are code.
                }
                _ => {}
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The offset of the line break ending the line that holds `i` (or the end of the text).
fn line_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |e| i + e)
}

/// The offset after the nested `/* */` starting at `i` (the end of the text if unclosed).
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

/// The offset after the raw string whose `#`s or opening quote start at `i` (after the `r`),
/// or `None` when this is no raw string (`r#ident`).
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
fn char_end(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    if b.get(i + 1) == Some(&b'\\') {
        // Skip the escaped character (`'\''`, `'\\'`), then up to the closing quote
        // (`'\u{1F600}'`), never past the line.
        let mut j = i + 3;
        while j < b.len() && b[j] != b'\'' && b[j] != b'\n' {
            j += 1;
        }
        return Some((j + 1).min(b.len()));
    }
    let first = text[i + 1..].chars().next()?;
    let after = i + 1 + first.len_utf8();
    if b.get(after) == Some(&b'\'') {
        return Some(after + 1);
    }
    None
}

/// Is `offset` strictly inside a region (not at its first byte)? Regions are sorted.
#[must_use]
pub fn inside(regions: &[(Span, Region)], offset: usize) -> Option<Region> {
    let k = regions.partition_point(|(s, _)| s.start < offset);
    let (span, kind) = regions.get(k.checked_sub(1)?)?;
    (offset < span.end).then_some(*kind)
}

/// The region holding `offset`, its first byte included.
#[must_use]
pub fn at(regions: &[(Span, Region)], offset: usize) -> Option<Region> {
    let k = regions.partition_point(|(s, _)| s.start <= offset);
    let (span, kind) = regions.get(k.checked_sub(1)?)?;
    (offset < span.end).then_some(*kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The regions of `text`, each as its kind's letter and its text.
    fn show(text: &str) -> Vec<String> {
        regions(text)
            .iter()
            .map(|(s, k)| {
                let letter = match k {
                    Region::LineComment => 'L',
                    Region::BlockComment => 'B',
                    Region::Literal => 'S',
                };
                format!("{letter} {}", &text[s.start..s.end])
            })
            .collect()
    }

    // The hashes are needed: the inputs hold `"##` (clippy counts them wrong here).
    #[allow(clippy::needless_raw_string_hashes)]
    #[test]
    fn literals_and_comments() {
        assert_eq!(
            show(r#"let s = "a\"b // c"; // d"#),
            [r#"S "a\"b // c""#, "L // d"]
        );
        assert_eq!(
            show(r###"x(r#"a "b" "#, br##"c"#"##, b"\"", c"x")"###),
            [
                r##"S r#"a "b" "#"##,
                r###"S br##"c"#"##"###,
                r#"S b"\"""#,
                r#"S c"x""#
            ]
        );
        assert_eq!(
            show(r"let c = ['\'', '\\', '\u{1F600}', 'x', b'\'', 'é', '\n'];"),
            [
                r"S '\''",
                r"S '\\'",
                r"S '\u{1F600}'",
                "S 'x'",
                r"S b'\''",
                "S 'é'",
                r"S '\n'"
            ]
        );
        // Lifetimes and labels are code; a quote after one is a new literal.
        assert_eq!(
            show("fn f<'a>(x: &'a str) -> &'static str { 'outer: loop { break 'outer; } \"'\" }"),
            ["S \"'\""]
        );
        assert_eq!(
            show("let r#type = r#match; let s = r\"\\\";"),
            ["S r\"\\\""]
        );
        assert_eq!(
            show("/* a /* nested */ \"still\" */ x /**/ y"),
            ["B /* a /* nested */ \"still\" */", "B /**/"]
        );
        assert_eq!(
            show("a(\"x\ny\"); /* p\nq */"),
            ["S \"x\ny\"", "B /* p\nq */"]
        );
        assert_eq!(show("x // c\r\ny"), ["L // c\r"]);
        assert_eq!(
            show("#!/usr/bin/env run-cargo-script 'x\nfn main() {}"),
            ["L #!/usr/bin/env run-cargo-script 'x"]
        );
        assert_eq!(show("#![allow(x)] fn f() {}"), Vec::<String>::new());
        assert_eq!(show("\u{feff}'a'"), ["S 'a'"]);
        // Identifiers ending in b/r/c are not prefixes.
        assert_eq!(show("ab\"x\" rb r  #\"y\""), ["S \"x\"", "S \"y\""]);
    }

    #[test]
    fn inside_and_at() {
        let text = "a \"bc\" d";
        let r = regions(text);
        assert_eq!(inside(&r, 2), None, "the opening quote is not inside");
        assert_eq!(inside(&r, 3), Some(Region::Literal));
        assert_eq!(inside(&r, 5), Some(Region::Literal));
        assert_eq!(inside(&r, 6), None, "after the closing quote");
        assert_eq!(at(&r, 2), Some(Region::Literal));
        assert_eq!(at(&r, 0), None);
    }

    /// proc-macro2 (syn's tokenizer) is the reference: on every source file of this
    /// repository, the string-like literals it finds are exactly the literal regions here, and
    /// the rest of the regions are comments.
    #[test]
    fn agrees_with_proc_macro2_on_this_repository() {
        use proc_macro2::{TokenStream, TokenTree};
        fn collect(ts: TokenStream, out: &mut Vec<proc_macro2::Span>) {
            for t in ts {
                match t {
                    TokenTree::Group(g) => collect(g.stream(), out),
                    TokenTree::Literal(l) => out.push(l.span()),
                    _ => {}
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in ["src", "tests", "fixtures", "runtime/src", "benches", "fuzz"] {
            let mut stack = vec![root.join(dir)];
            while let Some(d) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&d) else {
                    continue;
                };
                for e in entries.flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.extension().is_some_and(|x| x == "rs") {
                        files.push(p);
                    }
                }
            }
        }
        assert!(files.len() > 100, "{}", files.len());
        let mut checked = 0;
        for p in files {
            let Ok(bytes) = std::fs::read(&p) else {
                continue;
            };
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            let src = crate::base::source::SourceFile::new("x.rs", text.clone());
            let body = &text[src.bom_len()..];
            let Ok(ts) = body.parse::<TokenStream>() else {
                continue;
            };
            let mut spans = Vec::new();
            collect(ts, &mut spans);
            let mut expected: Vec<(usize, usize)> = spans
                .iter()
                .map(|s| {
                    let (a, z) = (s.start(), s.end());
                    (
                        src.offset_of(a.line, a.column),
                        src.offset_of(z.line, z.column),
                    )
                })
                .filter(|&(a, _)| {
                    // Numbers are literals too, and doc comments become string literals with
                    // the comment's span: keep string-like literals as written.
                    let t = &text[a..];
                    !(t.starts_with("//") || t.starts_with("/*"))
                        && (t.starts_with(['"', '\''])
                            || ["b\"", "b'", "c\"", "r\"", "r#", "br", "cr"]
                                .iter()
                                .any(|p| t.starts_with(p)))
                })
                .collect();
            expected.sort_unstable();
            let found = regions(&text);
            let literals: Vec<(usize, usize)> = found
                .iter()
                .filter(|(_, k)| *k == Region::Literal)
                .map(|(s, _)| (s.start, s.end))
                .collect();
            assert_eq!(literals, expected, "{}", p.display());
            for (s, k) in &found {
                if *k != Region::Literal {
                    assert!(
                        text[s.start..].starts_with("//")
                            || text[s.start..].starts_with("/*")
                            || text[s.start..].starts_with("#!"),
                        "{}",
                        p.display()
                    );
                }
            }
            checked += 1;
        }
        assert!(checked > 100, "{checked}");
    }
}
