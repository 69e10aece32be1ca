//! Item-level masking: parse only the items of a file that can hold a finding.
//!
//! The prefilter decides per file; big files (generated bindings, 3,000-line clients) often
//! hold a trigger word in one function and nothing relevant in the other hundred. This module
//! splits the text into top-level items (and the items inside `impl`, `mod` and `trait` blocks)
//! with a lexer-level scan, keeps the items that contain a trigger word, every `use` / `extern
//! crate` item, inner attributes and items holding a context word (a struct with a
//! `CancellationToken` field matters to its methods), and replaces every other character with a
//! space, keeping line breaks. Lines and character columns of what is kept are unchanged, so
//! every span converts to the same place in the original text.
//!
//! What is deliberately absent: any judgement of what the kept code does; the analysis does that.
//! The masked text is only a cheaper input with the same findings (tested over the fixtures and a
//! real corpus).

use crate::base::lex::{token_at, Region, MAX_NESTING};

/// What the masker asks of a piece of text: can it matter?
pub trait Relevance {
    /// Does `text` (one item) contain a trigger or context word?
    fn relevant(&self, text: &str) -> bool;
}

/// The text to parse: `None` when every item is kept (parse the original), otherwise the masked
/// text with the same lines and character columns.
///
/// Also `None`, so that the file is parsed whole, when masking could change what the parser
/// says about the file: brackets that do not balance, nesting beyond the parser's guard, or a
/// control character (a NUL byte, say), which Rust rejects outside literals and comments and
/// which a blanked item would otherwise hide.
#[must_use]
pub fn mask(text: &str, relevance: &impl Relevance) -> Option<String> {
    let b = text.as_bytes();
    if b.iter().any(|&c| rejected_control(c)) {
        return None;
    }
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let tokens = lex(b, start)?;
    let mut masker = Masker {
        text,
        tokens: &tokens,
        rel: relevance,
        drop: Vec::new(),
    };
    masker.level(start, b.len(), 0, tokens.len());
    let drop = masker.drop;
    if drop.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for (s, e) in drop {
        out.push_str(&text[pos..s]);
        for c in text[s..e].chars() {
            out.push(if c == '\n' || c == '\r' { c } else { ' ' });
        }
        pos = e;
    }
    out.push_str(&text[pos..]);
    Some(out)
}

/// A control character that is neither whitespace nor a line break: an error for the parser
/// wherever it is outside a literal or comment.
fn rejected_control(c: u8) -> bool {
    (c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)) || c == 0x7f
}

/// One bracket or `;` of code (not in a comment or literal).
#[derive(Clone, Copy)]
struct Tok {
    pos: usize,
    byte: u8,
    /// For a bracket, the index of the token that matches it.
    partner: usize,
}

/// The brackets and semicolons of `b[start..]`, with each bracket's partner: one pass, so
/// that every level of nested containers is split without scanning its text again. `None`
/// when the brackets do not pair up or nest deeper than the parser accepts.
fn lex(b: &[u8], start: usize) -> Option<Vec<Tok>> {
    let mut toks: Vec<Tok> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut i = start;
    while i < b.len() {
        // A bracket in a comment or literal is no bracket.
        if let Some((_, end)) = token_at(b, i) {
            i = end;
            continue;
        }
        match b[i] {
            c @ (b'(' | b'[' | b'{') => {
                open.push(toks.len());
                if open.len() > MAX_NESTING {
                    return None;
                }
                toks.push(Tok {
                    pos: i,
                    byte: c,
                    partner: 0,
                });
                i += 1;
            }
            c @ (b')' | b']' | b'}') => {
                let o = open.pop()?;
                let pair = matches!(
                    (toks[o].byte, c),
                    (b'(', b')') | (b'[', b']') | (b'{', b'}')
                );
                if !pair {
                    return None;
                }
                toks[o].partner = toks.len();
                toks.push(Tok {
                    pos: i,
                    byte: c,
                    partner: o,
                });
                i += 1;
            }
            b';' => {
                toks.push(Tok {
                    pos: i,
                    byte: b';',
                    partner: 0,
                });
                i += 1;
            }
            _ => i += 1,
        }
    }
    open.is_empty().then_some(toks)
}

struct Masker<'a, R> {
    text: &'a str,
    tokens: &'a [Tok],
    rel: &'a R,
    /// Ranges to blank, in order.
    drop: Vec<(usize, usize)>,
}

impl<R: Relevance> Masker<'_, R> {
    /// Split `start..end` (whose tokens are `t0..t1`) into items and decide each; returns
    /// whether any item is relevant. A container's relevance is that of its header, its
    /// closing brace and its items, each asked once, so the text of nested containers is
    /// never asked again at every level.
    fn level(&mut self, start: usize, end: usize, t0: usize, t1: usize) -> bool {
        let b = self.text.as_bytes();
        let mut any = false;
        let mut item_start = start;
        // Whether the current item ends only at its `;` (a `const`, `static` or `type`, whose
        // value or type may hold brace groups); computed at the item's first brace group.
        let mut semicolon_item: Option<bool> = None;
        let mut t = t0;
        while t < t1 {
            let tok = self.tokens[t];
            match tok.byte {
                b'(' | b'[' => t = tok.partner + 1,
                b'{' => {
                    let close = tok.partner;
                    let after = self.tokens[close].pos + 1;
                    let j = skip_trivia(b, after, end);
                    if j < end && b[j] == b';' {
                        // `const X: T = T { .. };`: the `;` belongs to the item.
                        any |= self.item(item_start, j + 1, Some((t, close)));
                        item_start = j + 1;
                        semicolon_item = None;
                        t = close + 2;
                        continue;
                    }
                    let semicolon = *semicolon_item.get_or_insert_with(|| {
                        ends_with_semicolon(header(&self.text[item_start..tok.pos]))
                    });
                    if semicolon || continues(b, j, end) {
                        // `Form<{ N }>`, `if c { a } else { b }`: the item goes on.
                        t = close + 1;
                        continue;
                    }
                    any |= self.item(item_start, after, Some((t, close)));
                    item_start = after;
                    semicolon_item = None;
                    t = close + 1;
                }
                b';' => {
                    any |= self.item(item_start, tok.pos + 1, None);
                    item_start = tok.pos + 1;
                    semicolon_item = None;
                    t += 1;
                }
                _ => t += 1,
            }
        }
        if item_start < end {
            any |= self.item(item_start, end, None);
        }
        any
    }

    /// Decide one item `s..e`; `body` is its last brace group when it ends with one. Returns
    /// whether the item is relevant.
    fn item(&mut self, s: usize, e: usize, body: Option<(usize, usize)>) -> bool {
        let text = self.text;
        let item = &text[s..e];
        let head = header(item);
        let relevant = match body {
            // A container: keep its header and braces, split its body.
            Some((open, close)) if is_container(head) => {
                let (o, c) = (self.tokens[open].pos, self.tokens[close].pos);
                let mark = self.drop.len();
                let inner = self.level(o + 1, c, open + 1, close);
                let relevant =
                    inner || self.rel.relevant(&text[s..=o]) || self.rel.relevant(&text[c..e]);
                if !relevant {
                    // Dropped whole: its items' ranges are inside.
                    self.drop.truncate(mark);
                }
                relevant
            }
            _ => self.rel.relevant(item),
        };
        if !relevant && !always_kept(head) {
            self.drop.push((s, e));
        }
        relevant
    }
}

/// The first offset from `i` (before `end`) that is not whitespace or a comment.
fn skip_trivia(b: &[u8], mut i: usize, end: usize) -> usize {
    while i < end {
        match b[i] {
            c if c.is_ascii_whitespace() || c == 0x0b => i += 1,
            b'/' => match token_at(b, i) {
                Some((Region::LineComment | Region::BlockComment, end)) => i = end,
                _ => break,
            },
            _ => break,
        }
    }
    i.min(end)
}

/// Does the code at `j`, right after a brace group, go on with the same item? An operator, a
/// `>` or `,` of generic arguments, `else` or `as` can never start an item, so a brace group
/// before one is a const argument or a block expression, not the item's body.
fn continues(b: &[u8], j: usize, end: usize) -> bool {
    if j >= end {
        return false;
    }
    let keyword = |w: &[u8]| {
        b[j..end].starts_with(w)
            && !matches!(b.get(j + w.len()), Some(c) if c.is_ascii_alphanumeric() || *c == b'_')
    };
    match b[j] {
        b'>' | b',' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^' | b'.' | b'?'
        | b'=' | b'<' | b'@' | b'(' | b'[' => true,
        b'!' => b.get(j + 1) == Some(&b'='),
        // `::` may start an item (`::std::arch::global_asm! {..}`); a lone `:` cannot.
        b':' => b.get(j + 1) != Some(&b':'),
        _ => keyword(b"else") || keyword(b"as"),
    }
}

/// Items that end only at their `;`: `const` (not `const fn`), `static`, `type`.
fn ends_with_semicolon(head: &str) -> bool {
    let mut words = head.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    let mut w = words.next().unwrap_or("");
    if w == "default" {
        w = words.find(|w| !w.is_empty()).unwrap_or("");
    }
    match w {
        "static" | "type" => true,
        "const" => {
            let next = words.find(|w| !w.is_empty()).unwrap_or("");
            !matches!(next, "fn" | "unsafe" | "async" | "extern")
        }
        _ => false,
    }
}

/// The item's first words after attributes and visibility, for classification.
fn header(item: &str) -> &str {
    let mut rest = item.trim_start();
    loop {
        if rest.starts_with("#[") || rest.starts_with("#![") {
            // Skip one attribute (balanced brackets; attributes rarely hold strings with `]`).
            let mut depth = 0usize;
            let mut cut = rest.len();
            for (i, c) in rest.char_indices() {
                match c {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            cut = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            rest = rest[cut..].trim_start();
        } else if rest.starts_with("///") || rest.starts_with("//!") || rest.starts_with("//") {
            rest = rest.find('\n').map_or("", |i| &rest[i + 1..]).trim_start();
        } else if rest.starts_with("/*") {
            rest = rest.find("*/").map_or("", |i| &rest[i + 2..]).trim_start();
        } else {
            break;
        }
    }
    for vis in ["pub(crate)", "pub(super)", "pub(self)", "pub"] {
        if let Some(r) = rest.strip_prefix(vis) {
            if r.starts_with(|c: char| c.is_whitespace() || c == '(') {
                rest = r.trim_start();
                if rest.starts_with('(') {
                    rest = rest.find(')').map_or("", |i| &rest[i + 1..]).trim_start();
                }
                break;
            }
        }
    }
    rest
}

fn always_kept(head: &str) -> bool {
    head.is_empty()
        || head.starts_with("use ")
        || head.starts_with("use\t")
        || head.starts_with("extern crate")
        || head.starts_with("#![")
        || head.starts_with(';')
}

fn is_container(head: &str) -> bool {
    let mut words = head.split_whitespace();
    let mut w = words.next().unwrap_or("");
    while matches!(w, "unsafe" | "default") {
        w = words.next().unwrap_or("");
    }
    w == "mod" || w == "trait" || w == "impl" || w.starts_with("impl<")
}

/// Keeps a pseudo-random choice of items, decided by `seed` and each item's text. For the
/// tests and the fuzz target: whatever the prefilter's words keep, the masked text of a file
/// that parses must parse, so any choice must.
pub struct Sample(pub u64);

impl Relevance for Sample {
    fn relevant(&self, text: &str) -> bool {
        // FNV-1a: cheap, and stable across runs (a failing input reproduces).
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ self.0;
        for &c in text.as_bytes() {
            h = (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3);
        }
        (h >> 29) & 1 == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Words(&'static [&'static str]);
    impl Relevance for Words {
        fn relevant(&self, text: &str) -> bool {
            self.0.iter().any(|w| text.contains(w))
        }
    }

    #[test]
    fn keeps_relevant_items_uses_and_positions() {
        let src = "use a::b;\n#[derive(X)]\nstruct S { x: u8 }\nfn f() { let é = 1; }\nimpl T {\n    fn g() {}\n    fn retry() { loop {} }\n}\nconst C: S = S { x: 1 };\n";
        let m = mask(src, &Words(&["retry"])).unwrap();
        assert_eq!(m.lines().count(), src.lines().count());
        assert!(m.starts_with("use a::b;\n"));
        assert!(m.contains("impl T {"));
        assert!(m.contains("fn retry() { loop {} }"));
        assert!(!m.contains("fn g"));
        assert!(!m.contains("struct S"));
        assert!(!m.contains("const C"));
        syn::parse_file(&m).unwrap();
        let line = src.lines().position(|l| l.contains("fn retry")).unwrap();
        assert_eq!(src.lines().nth(line), m.lines().nth(line));
    }

    #[test]
    fn everything_relevant_means_no_mask() {
        assert_eq!(mask("fn retry() {}\n", &Words(&["retry"])), None);
    }

    /// Texts that parse, with brace groups that do not end an item, a container whose header
    /// holds a brace group, and literals whose lexing matters.
    const TRICKY: &[&str] = &[
        // The issue's file: `{ N }` is a const argument, not the end of the `type`.
        "type C = Form<{ N }>;\nasync fn f() {\n    for i in [1] { let s: Vec<()> = (); }\n    x();\n    std::thread::sleep(d);\n}\n",
        "impl<const N: usize> Tr for Foo<{ N }> {\n    fn a() { x(); }\n    fn b() { std::thread::sleep(d); }\n}\nfn c() {}\n",
        "const A: u8 = if C { 1 } else { 2 };\nfn f() { std::thread::sleep(d); }\n",
        "static B: u8 = { 1 } + { 2 };\nconst S: S = S { a: 1 }\n// why\n;\nfn f() {}\n",
        "fn f<const N: usize = { 3 }>() -> Foo<{ N }, { 1 }> where Foo<{ N }>: Tr { x(); }\nfn g() {}\n",
        "struct S<const N: usize = { 3 }>;\ntype T = [u8; { 2 }];\nconst U: u8 = { 1 } as u8;\nfn h() {}\n",
        "const R: &[u8] = br\"\\\";\nfn a() { x(); }\nconst Q: char = '\\'';\nfn b() { y(); }\nconst P: &str = cr#\"{\"#;\nfn c() {}\n",
        "mod m {\n    use a::b;\n    mod n { fn a() {} fn b() { c(); } }\n    trait T { fn d() {} }\n}\nfn e() {}\n",
    ];

    /// Any choice of items masks a file that parses into a file that parses: the check the
    /// fuzz target makes on every input. Before the brace-group fix the issue's file failed it
    /// (a kept `type C = Form<{ N }` before a blanked `>;`: "expected `,`").
    #[test]
    fn every_choice_of_items_parses() {
        for text in TRICKY {
            syn::parse_file(text).unwrap_or_else(|e| panic!("fixture does not parse: {e}\n{text}"));
            for seed in 0..64 {
                if let Some(m) = mask(text, &Sample(seed)) {
                    assert_eq!(m.len(), text.len());
                    if let Err(e) = syn::parse_file(&m) {
                        panic!(
                            "seed {seed}: masked text does not parse ({e}):\n{m}\nfrom:\n{text}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn brace_groups_inside_an_item_do_not_end_it() {
        let src = TRICKY[0];
        // `Form` is a context word: the `type` item is kept whole, `>;` included.
        let m = mask(src, &Words(&["Form"])).unwrap_or_else(|| src.to_string());
        assert!(m.starts_with("type C = Form<{ N }>;"), "{m}");
        syn::parse_file(&m).unwrap();
        // A container whose header holds a brace group is still split at its body.
        let m = mask(TRICKY[1], &Words(&["sleep"])).unwrap();
        assert!(m.contains("fn b()") && !m.contains("fn a()"), "{m}");
        syn::parse_file(&m).unwrap();
    }

    /// The issue's file, as the CLI lints it: the finding, not a parse error.
    #[test]
    fn the_issue_file_keeps_its_finding() {
        let config = crate::lint::Config::new(
            crate::rules::ALL.to_vec(),
            crate::base::apis::Apis::builtin(),
        );
        let mut whole = crate::lint::Config::new(
            crate::rules::ALL.to_vec(),
            crate::base::apis::Apis::builtin(),
        );
        whole.prefilter = false;
        let src = crate::base::source::SourceFile::new("src/a.rs", TRICKY[0]);
        let masked = crate::lint::lint_per_file(&src, &config);
        let plain = crate::lint::lint_per_file(&src, &whole);
        assert!(masked.error.is_none(), "{:?}", masked.error);
        let rules = |r: &crate::lint::FileReport| -> Vec<&str> {
            r.diagnostics.iter().map(|d| d.rule.name).collect()
        };
        assert_eq!(rules(&masked), ["blocking-sleep-in-async"]);
        assert_eq!(rules(&masked), rules(&plain));
    }

    /// Text the parser rejects is parsed whole, so that both paths report it: a control
    /// character (trailing NUL bytes) or brackets that do not pair up.
    #[test]
    fn control_characters_and_unbalanced_text_are_not_masked() {
        let w = Words(&["retry"]);
        assert_eq!(mask("fn a() {}\nfn retry() {}\n\0\0\0", &w), None);
        assert_eq!(mask("fn a() {}\nfn retry() {}\n\x1a", &w), None);
        assert_eq!(mask("fn a() { (}\nfn retry() {}\n", &w), None);
        assert!(mask("fn a() {}\nfn retry() {}\n\x0c", &w).is_some());
    }
}
