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

use crate::parse::{
    is_raw_string_start, skip_block_comment, skip_char_or_lifetime, skip_line_comment,
    skip_raw_string, skip_string,
};

/// What the masker asks of a piece of text: can it matter?
pub trait Relevance {
    /// Does `text` (one item) contain a trigger or context word?
    fn relevant(&self, text: &str) -> bool;
}

/// The text to parse: `None` when every item is kept (parse the original), otherwise the masked
/// text with the same lines and character columns.
#[must_use]
pub fn mask(text: &str, relevance: &impl Relevance) -> Option<String> {
    let b = text.as_bytes();
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut drop: Vec<(usize, usize)> = Vec::new();
    split(text, b, start, b.len(), relevance, &mut drop);
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

/// Split `start..end` into items; push the ranges to drop.
fn split(
    text: &str,
    b: &[u8],
    start: usize,
    end: usize,
    rel: &impl Relevance,
    drop: &mut Vec<(usize, usize)>,
) {
    for (s, e) in items(b, start, end) {
        let item = &text[s..e];
        let head = header(item);
        if always_kept(head) {
            continue;
        }
        if !rel.relevant(item) {
            drop.push((s, e));
            continue;
        }
        // A relevant container: keep its header and braces, split its body.
        if is_container(head) {
            if let Some(open) = body_open(b, s, e) {
                let close = e - 1 - trailing_len(item);
                if b.get(close) == Some(&b'}') && open < close {
                    split(text, b, open + 1, close, rel, drop);
                }
            }
        }
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

fn trailing_len(item: &str) -> usize {
    item.len()
        - item
            .trim_end_matches(|c: char| c.is_whitespace() || c == ';')
            .len()
}

/// Offset of the `{` that opens the item's body: the first `{` at depth 0.
fn body_open(b: &[u8], s: usize, e: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut i = s;
    while i < e {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => i = skip_line_comment(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i),
            b'"' => i = skip_string(b, i),
            b'r' if is_raw_string_start(b, i) => i = skip_raw_string(b, i),
            b'\'' => i = skip_char_or_lifetime(b, i),
            b'(' | b'[' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' => {
                depth -= 1;
                i += 1;
            }
            b'{' if depth == 0 => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The items of `start..end` as ranges covering it entirely (leading whitespace and comments go
/// with the item after them).
fn items(b: &[u8], start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut item_start = start;
    let mut i = start;
    while i < end {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => i = skip_line_comment(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i),
            b'"' => i = skip_string(b, i),
            b'r' if is_raw_string_start(b, i) => i = skip_raw_string(b, i),
            b'b' if b.get(i + 1) == Some(&b'"') => i = skip_string(b, i + 1),
            b'\'' => i = skip_char_or_lifetime(b, i),
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' => {
                depth -= 1;
                i += 1;
            }
            b'}' => {
                depth -= 1;
                i += 1;
                if depth == 0 {
                    // `const X: T = T { .. };`: the `;` belongs to the item.
                    let mut j = i;
                    while j < end && b[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    if j < end && b[j] == b';' {
                        i = j + 1;
                    }
                    out.push((item_start, i.min(end)));
                    item_start = i.min(end);
                }
            }
            b';' if depth == 0 => {
                i += 1;
                out.push((item_start, i));
                item_start = i;
            }
            _ => i += 1,
        }
        if depth < 0 {
            // Unbalanced text: give up splitting; the parser reports it.
            return vec![(start, end)];
        }
    }
    if item_start < end {
        out.push((item_start, end));
    }
    if depth != 0 {
        return vec![(start, end)];
    }
    out
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
}
