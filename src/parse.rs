//! Turning text into a syntax tree without ever taking the process down.
//!
//! syn's parser, its `Drop` and our visitors all recurse once per nesting level, and a stack
//! overflow aborts the process (it cannot be caught). So before parsing, a linear scan measures
//! how deep the code nests (brackets plus runs of operators that build left-deep trees, such as
//! `a + b + c ..` or `x.f().g() ..`) and refuses files beyond [`MAX_NESTING`], which fits with
//! a wide margin in the workers' [`WORKER_STACK`].
//!
//! Old editions: syn parses the 2021 language. A file that it rejects, in a crate of the 2015 or
//! 2018 edition (read from the nearest `Cargo.toml` by [`crate::walk::crates::edition_of`],
//! only for a file syn rejected; a file in no package is 2015, as for rustc), is parsed again
//! from its tokens with the old edition's meaning restored, each token keeping its own span, so
//! every place stays exact: in 2015 `try`, `async`, `await` and `dyn` used as names become raw
//! identifiers (`r#try`), and in both a bare `Fn(..)` trait object (`Box<Fn() + Send>`,
//! `&mut FnMut(u8)`) gets the `dyn` that 2021 requires.
//!
//! Parse errors say what could not be read and where, in words: a text that cannot even be cut
//! into tokens gets the reason (a bracket never closed or closing nothing, a string or comment
//! never closed, a character Rust does not allow outside strings and comments), not proc-macro2's
//! "cannot parse string into token stream"; a syntax error keeps syn's message and place, with
//! the crate's edition when an old-edition keyword is what failed.

use proc_macro2::{Delimiter, Group, Ident, Spacing, TokenStream, TokenTree};

use crate::base::diagnostic::FileError;
use crate::base::lex::token_at;
pub use crate::base::lex::MAX_NESTING;
use crate::base::source::SourceFile;
use crate::walk::crates::{edition_of, Edition};

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
    let first = match syn::parse_file(body) {
        Ok(file) => return Ok(file),
        Err(e) => e,
    };
    let edition = edition_of(&src.real_path);
    let mut error = first;
    if edition.is_none_or(|e| e < Edition::E2021) {
        match reparse_old_edition(body, edition.unwrap_or(Edition::E2015)) {
            Some(Ok(file)) => return Ok(file),
            // The old edition's reading went further: its error is the one left to fix.
            Some(Err(e)) if place(&e) > place(&error) => error = e,
            _ => {}
        }
    }
    let start = error.span().start();
    let lines = SourceFile::new(String::new(), body);
    let at = lines.offset_of(start.line, start.column);
    Err(FileError {
        path: src.path.clone(),
        line: Some(start.line),
        column: Some(start.column + 1),
        message: format!("could not parse: {}", explain(&error, body, at, edition)),
    })
}

/// Where an error is, for comparing two of them.
fn place(e: &syn::Error) -> (usize, usize) {
    let s = e.span().start();
    (s.line, s.column)
}

/// `body` parsed from its tokens as `edition` reads them ([`old_edition`]): `None` when the
/// text cannot be cut into tokens or nothing in it reads differently.
fn reparse_old_edition(body: &str, edition: Edition) -> Option<syn::Result<syn::File>> {
    // syn::parse_file drops a shebang line; from tokens it must be blanked (same columns).
    let blanked;
    let text = if body.starts_with("#!") && !body[2..].trim_start().starts_with('[') {
        let end = body.find('\n').unwrap_or(body.len());
        blanked = format!(
            "{}{}",
            " ".repeat(body[..end].chars().count()),
            &body[end..]
        );
        &blanked
    } else {
        body
    };
    let tokens: TokenStream = text.parse().ok()?;
    let mut changed = 0;
    let tokens = old_edition(tokens, edition, &mut changed);
    if changed == 0 {
        return None;
    }
    PARSES.with(|n| n.set(n.get() + 1));
    Some(syn::parse2::<syn::File>(tokens))
}

/// `tokens` with `edition`'s meaning spelled as 2021 spells it, every token keeping its span:
/// in 2015 the names that are keywords now become raw identifiers, and in 2015 and 2018 a bare
/// `Fn(..)` / `FnMut(..)` / `FnOnce(..)` trait object in a type gets `dyn`. `changed` counts the
/// rewrites.
fn old_edition(tokens: TokenStream, edition: Edition, changed: &mut usize) -> TokenStream {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out: Vec<TokenTree> = Vec::with_capacity(trees.len());
    for (i, tree) in trees.iter().enumerate() {
        let next = trees.get(i + 1);
        match tree {
            TokenTree::Group(g) => {
                let inner = old_edition(g.stream(), edition, changed);
                let mut group = Group::new(g.delimiter(), inner);
                group.set_span(g.span());
                out.push(TokenTree::Group(group));
            }
            TokenTree::Ident(id) => {
                let name = id.to_string();
                if edition == Edition::E2015 && is_2015_name(&name, next) {
                    out.push(TokenTree::Ident(Ident::new_raw(&name, id.span())));
                    *changed += 1;
                    continue;
                }
                if matches!(name.as_str(), "Fn" | "FnMut" | "FnOnce")
                    && matches!(next, Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis)
                    && in_type_position(&trees[..i])
                {
                    out.push(TokenTree::Ident(Ident::new("dyn", id.span())));
                    *changed += 1;
                }
                out.push(tree.clone());
            }
            _ => out.push(tree.clone()),
        }
    }
    out.into_iter().collect()
}

/// Is the 2015 identifier `name`, followed by `next`, a name that later editions made a keyword?
/// `try!(..)` stays (syn reads the old macro); `dyn` followed by what starts a trait (`dyn
/// Trait`, `dyn 'a`, `dyn ?Sized`, `dyn for<..>`, `dyn (..)`) is the keyword, which 2015 has too.
fn is_2015_name(name: &str, next: Option<&TokenTree>) -> bool {
    let bang = matches!(next, Some(TokenTree::Punct(p)) if p.as_char() == '!');
    match name {
        "try" => !bang,
        "async" | "await" => true,
        "dyn" => match next {
            Some(TokenTree::Ident(n)) => n == "as",
            Some(TokenTree::Punct(p)) => !matches!(p.as_char(), '\'' | '?' | '<'),
            Some(TokenTree::Group(g)) => g.delimiter() != Delimiter::Parenthesis,
            _ => true,
        },
        _ => false,
    }
}

/// Whether the tokens before a bare `Fn(..)` put it in a type where a trait object needs `dyn`:
/// right after `<` or `,` (a generic argument: `Box<Fn()>`, `HashMap<K, Fn()>`), or after `&`,
/// `&'a`, `&mut`, `*const`, `*mut` (a reference or pointer to one). Bounds (`F: Fn()`,
/// `impl Fn()`, `dyn Fn()`) are left as they are.
fn in_type_position(before: &[TokenTree]) -> bool {
    let punct =
        |t: Option<&TokenTree>, c: char| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c);
    let n = before.len();
    let last = before.last();
    if punct(last, '<') || punct(last, ',') || punct(last, '&') {
        return true;
    }
    let prev = n.checked_sub(2).and_then(|i| before.get(i));
    match last {
        Some(TokenTree::Ident(id)) if id == "mut" || id == "const" => {
            punct(prev, '&')
                || punct(prev, '*')
                || {
                    // `&'a mut Fn()`: a lifetime is `'` joint with its name.
                    let quote = n.checked_sub(4).and_then(|i| before.get(i));
                    matches!(prev, Some(TokenTree::Ident(_)))
                        && matches!(n.checked_sub(3).and_then(|i| before.get(i)), Some(TokenTree::Punct(p)) if p.as_char() == '\'' && p.spacing() == Spacing::Joint)
                        && punct(quote, '&')
                }
        }
        // `&'a Fn()`.
        Some(TokenTree::Ident(_)) => {
            matches!(prev, Some(TokenTree::Punct(p)) if p.as_char() == '\'' && p.spacing() == Spacing::Joint)
                && punct(n.checked_sub(3).and_then(|i| before.get(i)), '&')
        }
        _ => false,
    }
}

/// What `error` at byte `at` of `body` means, in words a user can act on.
fn explain(error: &syn::Error, body: &str, at: usize, edition: Option<Edition>) -> String {
    let message = error.to_string();
    if message == "cannot parse string into token stream" {
        return format!(
            "the text cannot be cut into Rust tokens: {}",
            lex_failure(body, at)
        );
    }
    // An old-edition name that is a keyword in the crate's edition.
    let word: String = body[at.min(body.len())..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let since = match word.as_str() {
        "try" | "async" | "await" | "dyn" => Some("2018"),
        "gen" => Some("2024"),
        _ => None,
    };
    let before = body[..at.min(body.len())].trim_end();
    let bare_fn = body[at.min(body.len())..].starts_with('(')
        && ["Fn", "FnMut", "FnOnce"].iter().any(|t| {
            before.ends_with(t)
                && !before[..before.len() - t.len()]
                    .ends_with(|c: char| c.is_alphanumeric() || c == '_')
        });
    let year = edition.map_or("unknown", Edition::year);
    match since {
        Some(since) => format!(
            "{message} (`{word}` is a keyword since the {since} edition, and this crate's edition is {year}; write `r#{word}` or set the edition in Cargo.toml)"
        ),
        None if bare_fn => format!(
            "{message} (a trait object without `dyn`, which the {year} edition does not allow: write `dyn Fn(..)`)"
        ),
        None => message,
    }
}

/// Why the text cannot be cut into tokens at byte `at`, where proc-macro2's lexer stopped.
fn lex_failure(body: &str, at: usize) -> String {
    let b = body.as_bytes();
    let rest = &body[at.min(body.len())..];
    let Some(c) = rest.chars().next() else {
        return "the file ends in the middle of a token".into();
    };
    let pos = |offset: usize| {
        let p = SourceFile::new(String::new(), body).position(offset);
        format!("{}:{}", p.line, p.col)
    };
    match c {
        '(' | '[' | '{' => format!("this `{c}` is never closed"),
        ')' | ']' | '}' => match open_bracket_at(b, at) {
            Some((open, offset)) => format!(
                "this `{c}` does not close the `{}` opened at {} (a bracket is missing or extra)",
                open as char,
                pos(offset)
            ),
            None => format!("this `{c}` closes a bracket that was never opened"),
        },
        '"' => "this string is never closed, or holds an escape Rust does not know (such as `\\q`)".into(),
        '\'' => "this character literal is malformed: it holds more than one character, or is never closed".into(),
        '/' if rest.starts_with("/*") => "this block comment is never closed (`/*` nests: each needs its `*/`)".into(),
        'b' | 'r' | 'c' if rest[1..].starts_with(['"', '\'', '#']) || rest.starts_with("br") => {
            "this byte, raw or C string literal is malformed or never closed".into()
        }
        '0'..='9' => "this number literal is malformed (such as `0x` with no digits)".into(),
        c if !c.is_ascii() || matches!(c, '$' | '`' | '\\') => format!(
            "the character `{c}` (U+{:04X}) is allowed only inside strings and comments",
            u32::from(c)
        ),
        _ => "the text from here is not a Rust token".into(),
    }
}

/// The innermost bracket open at byte `at` (comments and literals skipped), and where.
fn open_bracket_at(b: &[u8], at: usize) -> Option<(u8, usize)> {
    let mut stack: Vec<(u8, usize)> = Vec::new();
    let mut i = 0;
    while i < at.min(b.len()) {
        if let Some((_, end)) = token_at(b, i) {
            i = end;
            continue;
        }
        match b[i] {
            c @ (b'(' | b'[' | b'{') => stack.push((c, i)),
            b')' | b']' | b'}' => {
                stack.pop();
            }
            _ => {}
        }
        i += 1;
    }
    stack.pop()
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
// The tests make crates in temporary directories for the edition to be read from.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    /// The parse of `text` as a file of a crate of `edition` (a manifest in a temporary
    /// directory), or the error's place and message.
    fn parse_in(edition: &str, text: &str) -> Result<syn::File, (usize, usize, String)> {
        let dir = tempfile::tempdir().unwrap();
        let manifest = format!("[package]\nname = \"x\"\nversion = \"0.1.0\"\n{edition}\n");
        std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
        let path = dir.path().join("src/lib.rs");
        let src = SourceFile::new("src/lib.rs", text).with_real_path(path);
        parse(&src).map_err(|e| (e.line.unwrap(), e.column.unwrap(), e.message))
    }

    #[test]
    fn old_editions_parse_with_their_own_keywords_and_trait_objects() {
        let text = "struct S { f: Box<Fn(u8) -> u8 + Send>, g: &'static FnMut(), h: Vec<Box<FnOnce()>> }\n\
                    fn try(async: u8, dyn: u8) -> u8 { let await = async; r#try(dyn, await) }\n\
                    fn k(x: &mut Fn(), y: Box<dyn Fn()>) -> Result<(), E> { try!(g()); x.await(); Ok(()) }\n\
                    fn bounds<F: Fn() + Send, G>(f: F) where G: FnMut(u8) {}\n";
        // No `edition`: cargo's default, 2015.
        let file = parse_in("", text).unwrap();
        assert_eq!(file.items.len(), 4);
        // Every token keeps its place: `try` of line 2 is still at 2:4.
        let syn::Item::Fn(f) = &file.items[1] else {
            panic!()
        };
        let start = f.sig.ident.span().start();
        assert_eq!(
            (start.line, start.column, f.sig.ident.to_string()),
            (2, 3, "r#try".into())
        );
        // 2018: the trait objects parse, the names do not (they are keywords there).
        let e = parse_in("edition = \"2018\"", text).unwrap_err();
        assert_eq!((e.0, e.1), (2, 4), "{e:?}");
        assert!(
            e.2.contains(
                "`try` is a keyword since the 2018 edition, and this crate's edition is 2018"
            ),
            "{e:?}"
        );
        assert!(parse_in("edition = \"2018\"", "struct S { f: Box<Fn(u8) + Send> }").is_ok());
        // 2021: neither, and the error says why.
        let e = parse_in("edition = \"2021\"", "struct S { f: Box<Fn(u8) + Send> }").unwrap_err();
        assert_eq!((e.0, e.1), (1, 21), "{e:?}");
        assert!(
            e.2.contains("a trait object without `dyn`, which the 2021 edition does not allow"),
            "{e:?}"
        );
    }

    #[test]
    fn text_that_cannot_be_cut_into_tokens_says_why_and_where() {
        let cases = [
            (
                "fn f() {\n    g(\n}\n",
                (3, 1),
                "this `}` does not close the `(` opened at 2:6",
            ),
            (
                "fn f() {\n    g())\n}\n",
                (2, 8),
                "this `)` does not close the `{` opened at 1:8",
            ),
            (
                "fn f() { g())); }",
                (1, 13),
                "this `)` does not close the `{`",
            ),
            ("fn f() { g(1, 2\n", (1, 11), "this `(` is never closed"),
            (
                "fn f() { let s = \"abc; }",
                (1, 18),
                "this string is never closed",
            ),
            (
                "fn f() { /* x }",
                (1, 10),
                "this block comment is never closed",
            ),
            (
                "fn f() { let c = 'ab'; }",
                (1, 18),
                "character literal is malformed",
            ),
            (
                "fn f() { let c = € ; }",
                (1, 18),
                "the character `€` (U+20AC) is allowed only inside strings and comments",
            ),
            (
                "fn f() { let x = 0x; }",
                (1, 18),
                "number literal is malformed",
            ),
        ];
        for (text, place, words) in cases {
            let e = parse_in("edition = \"2021\"", text).unwrap_err();
            assert_eq!((e.0, e.1), place, "{text:?}: {e:?}");
            assert!(
                e.2.starts_with("could not parse: the text cannot be cut into Rust tokens: "),
                "{e:?}"
            );
            assert!(e.2.contains(words), "{text:?}: {e:?}");
            assert!(
                !e.2.contains("cannot parse string into token stream"),
                "{e:?}"
            );
        }
    }

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
