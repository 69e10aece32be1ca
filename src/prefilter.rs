//! The text prefilter: decides, without parsing, whether a file can hold any finding.
//!
//! Parsing is ~99 % of a syn linter's cost and only a small share of real files can hold a
//! finding, so each rule declares the words one of which must appear for it to fire
//! ([`Rule::triggers`]), and a file with none of the enabled rules' words is not parsed.
//!
//! A trigger is one of:
//! - a marker expanded from the library knowledge, so a new API in `rules/apis.toml` (or in a
//!   user's configuration) can never be skipped: `@retry-sites` (every word that can make a
//!   retry site: evidence words, `sleep`, combinator names), `@sleeps`, `@blocking-sleeps`,
//!   `@clients` (the words a client timeout is written with);
//! - an identifier-like word, matched ASCII-case-insensitively as a WHOLE word of code the way
//!   the analysis splits identifiers (`maxRetries` holds `retries`, `entries` does not hold
//!   `tries`), in code, strings and doc comments but not in plain `//` / `/* */` comments, which
//!   never reach the syntax tree;
//! - anything else (`timeoutlint:`), matched as a plain substring anywhere, comments included;
//! - a context word, prefixed `+` (`+@requests` expands to the request and body APIs): it does
//!   not make a file worth parsing, but an item holding it is kept by [`crate::mask`] because the
//!   rule's analysis reads such items from elsewhere (a helper that builds the POST).
//!
//! - `@whole-file`: when the rule's other triggers match a file, the file is parsed whole, never
//!   masked (the crate index reads every item: client flows, callers, deadlines).
//!
//! A rule with no triggers runs on every file. Exactness (findings identical with the prefilter
//! on and off) is tested over the fixtures and a real corpus.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::apis::Apis;
use crate::rules::Rule;

/// The compiled prefilter of one configuration.
#[derive(Debug, Clone)]
pub struct Prefilter {
    words: Option<AhoCorasick>,
    /// Words that make an item worth keeping for the context of others (a struct with a
    /// cancellation token field), though they hold no finding themselves.
    context: Option<AhoCorasick>,
    raw: Option<AhoCorasick>,
    always: bool,
    /// Trigger words of the rules that need whole files.
    whole: Option<AhoCorasick>,
}

impl Prefilter {
    /// The prefilter for `rules` with `apis`.
    #[must_use]
    pub fn new(rules: &[&Rule], apis: &Apis) -> Self {
        let mut words: Vec<String> = Vec::new();
        let mut raw: Vec<String> = Vec::new();
        let mut context: Vec<String> = Vec::new();
        let mut whole: Vec<String> = Vec::new();
        let mut always = false;
        for r in rules {
            let before = words.len();
            if r.triggers.is_empty() {
                always = true;
            }
            for t in r.triggers {
                match *t {
                    "+@requests" => context.extend(apis.request_words()),
                    "+@clients" => context.extend(apis.client_words()),
                    "@clients" => words.extend(apis.client_words()),
                    t if t.starts_with('+') => context.push(t[1..].to_ascii_lowercase()),
                    "@retry-sites" => words.extend(apis.retry_site_words()),
                    "@sleeps" => words.extend(apis.sleep_words(false)),
                    "@blocking-sleeps" => words.extend(apis.sleep_words(true)),
                    t if t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                        words.push(t.to_ascii_lowercase());
                    }
                    "@whole-file" => {}
                    t => raw.push(t.to_string()),
                }
            }
            if r.triggers.contains(&"@whole-file") {
                whole.extend(words[before..].iter().cloned());
            }
        }
        words.sort();
        words.dedup();
        whole.sort();
        whole.dedup();
        raw.sort();
        raw.dedup();
        let build = |pats: &[String]| {
            (!pats.is_empty()).then(|| {
                AhoCorasickBuilder::new()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .build(pats)
                    .expect("trigger words form a valid automaton")
            })
        };
        context.extend(
            apis.cancellation
                .types
                .iter()
                .chain(&apis.cancellation.weak_types)
                .map(|t| t.rsplit("::").next().unwrap_or(t).to_ascii_lowercase()),
        );
        // A local `fn timeout` shadows a glob-imported `tokio::time::timeout`: items naming a
        // deadline wrapper must be seen wherever it is called.
        context.extend(
            apis.deadlines
                .wrappers
                .iter()
                .map(|w| crate::apis::written_key(w)),
        );
        context.sort();
        context.dedup();
        Self {
            words: build(&words),
            context: build(&context),
            raw: build(&raw),
            always,
            whole: build(&whole),
        }
    }

    /// Can `text` hold a finding of any enabled rule?
    #[must_use]
    pub fn may_match(&self, text: &str) -> bool {
        if self.always || self.raw.as_ref().is_some_and(|r| r.is_match(text)) {
            return true;
        }
        self.words
            .as_ref()
            .is_some_and(|words| code_word(words, text))
    }
}

impl Prefilter {
    /// Must `text` be parsed whole (a rule that reads every item applies to it)?
    #[must_use]
    pub fn needs_whole_file(&self, text: &str) -> bool {
        self.always || self.whole.as_ref().is_some_and(|w| code_word(w, text))
    }
}

impl crate::mask::Relevance for Prefilter {
    fn relevant(&self, text: &str) -> bool {
        self.may_match(text)
            || self
                .context
                .as_ref()
                .is_some_and(|words| code_word(words, text))
    }
}

/// Does `text` hold one of `words` as a whole word of code (not in a plain comment)?
fn code_word(words: &AhoCorasick, text: &str) -> bool {
    {
        let b = text.as_bytes();
        let mut comments: Option<Vec<(usize, usize)>> = None;
        for m in words.find_overlapping_iter(text) {
            if !whole_word(b, m.start(), m.end()) {
                continue;
            }
            let ranges = comments.get_or_insert_with(|| plain_comments(b));
            let inside = ranges
                .binary_search_by(|&(s, e)| {
                    if e <= m.start() {
                        std::cmp::Ordering::Less
                    } else if s > m.start() {
                        std::cmp::Ordering::Greater
                    } else {
                        std::cmp::Ordering::Equal
                    }
                })
                .is_ok();
            if !inside {
                return true;
            }
        }
        false
    }
}

/// Non-ASCII bytes count as separators: that can only let more files through, never fewer.
fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

fn lower_or_digit(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// Does `start..end` begin and end where `words::split_ident` / `split_text` would split?
fn whole_word(b: &[u8], start: usize, end: usize) -> bool {
    let starts = start == 0 || {
        let prev = b[start - 1];
        !alnum(prev) || (b[start].is_ascii_uppercase() && lower_or_digit(prev))
    };
    let ends = end == b.len() || {
        let next = b[end];
        !alnum(next) || (next.is_ascii_uppercase() && lower_or_digit(b[end - 1]))
    };
    starts && ends
}

/// Byte ranges of plain (non-doc) comments, in order.
fn plain_comments(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let start = i;
                i = crate::parse::skip_line_comment(b, i);
                // `///` and `//!` are doc comments (attributes in the tree), but `////` is plain.
                let doc = matches!(b.get(start + 2), Some(b'/' | b'!'))
                    && b.get(start + 3) != Some(&b'/');
                if !doc {
                    out.push((start, i));
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let start = i;
                let doc = matches!(b.get(start + 2), Some(b'*' | b'!'))
                    && !matches!(b.get(start + 3), Some(b'*' | b'/'));
                i = crate::parse::skip_block_comment(b, i);
                if !doc {
                    out.push((start, i));
                }
            }
            b'"' => i = crate::parse::skip_string(b, i),
            b'r' if crate::parse::is_raw_string_start(b, i) => {
                i = crate::parse::skip_raw_string(b, i);
            }
            b'\'' => i = crate::parse::skip_char_or_lifetime(b, i),
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pf(words: &'static [&'static str]) -> Prefilter {
        let rule: &'static Rule = Box::leak(Box::new(Rule {
            triggers: words,
            ..*crate::rules::ALL[0]
        }));
        Prefilter::new(&[rule], &Apis::builtin())
    }

    #[test]
    fn whole_words_in_code_only() {
        let p = pf(&["tries", "retry"]);
        assert!(p.may_match("let maxTries = 3;"));
        assert!(p.may_match("const MAX_TRIES: u32 = 3;"));
        assert!(p.may_match("log!(\"retry now\");"));
        assert!(p.may_match("/// Retry docs become attributes\nfn f() {}"));
        assert!(!p.may_match("let entries = 3; let retryx = 1;"));
        assert!(!p.may_match("// we retry here\nfn f() {} /* retry */"));
        assert!(!p.may_match("let s = 1; // \"retry\""));
        assert!(p.may_match("let s = \"// not a comment\"; retry();"));
    }

    #[test]
    fn raw_triggers_match_in_comments() {
        let p = pf(&["timeoutlint:"]);
        assert!(p.may_match("fn f() {} // timeoutlint: ignore[x] why"));
    }
}
