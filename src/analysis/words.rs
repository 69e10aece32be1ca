//! Words of code: identifiers split at `_` and case changes, string literals split at
//! non-alphanumerics, all lowercase.
//!
//! The retry-site model decides intent from names and log messages ("retrying in {}s"), so it
//! needs whole words, never substrings (`entries` is not `tries`, `retrieve` is not `retry`).
//! Works on token streams, so macro bodies (`warn!(..)`) count too.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::BTreeSet;

/// Split one identifier into lowercase words: `maxRetryCount` -> max, retry, count.
pub fn split_ident(ident: &str, out: &mut BTreeSet<String>) {
    let ident = ident.trim_start_matches("r#");
    let mut word = String::new();
    let mut prev_lower = false;
    for c in ident.chars() {
        if c == '_' || !c.is_alphanumeric() {
            flush(&mut word, out);
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            flush(&mut word, out);
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    flush(&mut word, out);
}

fn flush(word: &mut String, out: &mut BTreeSet<String>) {
    if !word.is_empty() {
        out.insert(std::mem::take(word));
    }
}

/// Words of free text (a string literal's content).
pub fn split_text(text: &str, out: &mut BTreeSet<String>) {
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        if !w.is_empty() {
            out.insert(w.to_lowercase());
        }
    }
}

/// All words of a syntax node, including those inside macro invocations.
#[must_use]
pub fn words_of<T: ToTokens + ?Sized>(node: &T) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    tokens(node.to_token_stream(), &mut out);
    out
}

/// Identifier words only (no string literals): what the code names, not what it logs.
#[must_use]
pub fn ident_words_of<T: ToTokens + ?Sized>(node: &T) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    idents(node.to_token_stream(), &mut out);
    out
}

fn tokens(ts: TokenStream, out: &mut BTreeSet<String>) {
    for tt in ts {
        match tt {
            TokenTree::Ident(i) => split_ident(&i.to_string(), out),
            TokenTree::Group(g) => tokens(g.stream(), out),
            TokenTree::Literal(l) => {
                let s = l.to_string();
                if s.ends_with('"') {
                    split_text(&s, out);
                }
            }
            TokenTree::Punct(_) => {}
        }
    }
}

fn idents(ts: TokenStream, out: &mut BTreeSet<String>) {
    for_each_ident(ts, &mut |i| split_ident(&i.to_string(), out));
}

/// Every identifier of `ts`, nested groups included, whole (not split into words).
pub fn for_each_ident(ts: TokenStream, f: &mut impl FnMut(&proc_macro2::Ident)) {
    for tt in ts {
        match tt {
            TokenTree::Ident(i) => f(&i),
            TokenTree::Group(g) => for_each_ident(g.stream(), f),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_snake_camel_and_text() {
        let mut w = BTreeSet::new();
        split_ident("maxRetryCount", &mut w);
        split_ident("MAX_ATTEMPTS", &mut w);
        split_text("\"Retrying in {}s\"", &mut w);
        let got: Vec<_> = w.into_iter().collect();
        assert_eq!(
            got,
            ["attempts", "count", "in", "max", "retry", "retrying", "s"]
        );
    }
}
