//! Where the comments and literals of Rust source text are: what `--add-ignore` uses to put a
//! comment only where a comment is a comment (never inside a multi-line `"..."`, `r#"..."#` or
//! `/* */`).
//!
//! The lexing is [`lex`](crate::base::lex)'s, the one every scan of unparsed text uses; this
//! adds the shebang line and the lookups. A unit test checks the regions against proc-macro2's
//! tokenizer (syn's) on every source file of this repository. Pure: text in, spans out.

pub use crate::base::lex::Region;
use crate::base::lex::{line_end, token_at};
use crate::base::source::Span;

/// Every comment and literal of `text`, in order, not overlapping.
#[must_use]
pub fn regions(text: &str) -> Vec<(Span, Region)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = if text.starts_with('\u{feff}') { 3 } else { 0 };
    // `#!/usr/bin/env ..` on the first line is not code; `#![attr]` is.
    if b[i..].starts_with(b"#!") && !text[i + 2..].trim_start().starts_with('[') {
        let end = line_end(b, i);
        out.push((Span::new(i, end), Region::LineComment));
        i = end;
    }
    while i < b.len() {
        match token_at(b, i) {
            Some((kind, end)) => {
                out.push((Span::new(i, end), kind));
                i = end;
            }
            None => i += 1,
        }
    }
    out
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
