//! The text prefilter: decides, without parsing, whether a file can hold any finding.
//!
//! Parsing is ~99 % of a syn linter's cost and only a small share of real files can hold a
//! finding, so each rule declares the words one of which must appear for it to fire
//! (`Rule::triggers`), and a file with none of the enabled rules' words is not parsed.
//!
//! A [`Trigger`] is typed, so a misspelt one is a compile error rather than a silent substring:
//! - [`Trigger::vocab`]: a word set derived from the library knowledge ([`Vocab`]), so a new API
//!   in `rules/apis.toml` (or in a user's configuration) can never be skipped;
//! - [`Trigger::word`]: an identifier-like word (checked when the program is compiled), matched
//!   ASCII-case-insensitively as a WHOLE word of code the way the analysis splits identifiers
//!   (`maxRetries` holds `retries`, `entries` does not hold `tries`), in code, strings and doc
//!   comments but not in plain `//` / `/* */` comments, which never reach the syntax tree;
//! - [`Trigger::text`]: anything that is not a word (`timeoutlint:`, `retry-after`), matched as
//!   a plain substring anywhere, comments included.
//!
//! A rule's context triggers (`Rule::context`) do not make a file worth parsing, but an item
//! holding one is kept by [`crate::prefilter::mask`] because the rule's analysis reads such items from
//! elsewhere (a helper that builds the POST).
//!
//! One [`Prefilter`] holds the trigger sets of every pass of a run, each tagged with the
//! [`Groups`] it belongs to (the file rules, the crate rules, the crate join's site finder), and
//! each question names the groups its pass runs. A set marked `whole_file` (the crate rules,
//! whose index reads every item) makes a file it matches be parsed whole, never masked. A set
//! with no triggers runs on every file. Exactness (findings identical with the prefilter on and
//! off) is tested over the fixtures and a real corpus.

pub mod mask;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::base::apis::Apis;
use crate::base::lex::{token_at, Region};

/// A word set the library knowledge defines (`rules/apis.toml` plus configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vocab {
    /// Every word that can make a retry site: evidence words, `sleep`, combinator names,
    /// retrying middleware ([`Apis::retry_site_words`]).
    RetrySites,
    /// The word each known sleep is written with.
    Sleeps,
    /// The word each thread-blocking sleep is written with.
    BlockingSleeps,
    /// The words a client timeout is written with ([`Apis::client_words`]).
    Clients,
    /// The request and body APIs ([`Apis::request_words`]).
    Requests,
    /// What a client that retries by itself is built with ([`Apis::retrying_client_words`]).
    RetryingClients,
}

impl Vocab {
    fn words(self, apis: &Apis) -> Vec<String> {
        match self {
            Vocab::RetrySites => apis.retry_site_words(),
            Vocab::Sleeps => apis.sleep_words(false),
            Vocab::BlockingSleeps => apis.sleep_words(true),
            Vocab::Clients => apis.client_words(),
            Vocab::Requests => apis.request_words(),
            Vocab::RetryingClients => apis.retrying_client_words(),
        }
    }
}

/// One trigger; build it with [`Trigger::vocab`], [`Trigger::word`] or [`Trigger::text`].
#[derive(Debug, Clone, Copy)]
pub struct Trigger(TriggerKind);

#[derive(Debug, Clone, Copy)]
enum TriggerKind {
    Vocab(Vocab),
    Word(&'static str),
    Text(&'static str),
}

impl Trigger {
    /// Every word of a vocabulary set, as whole words of code.
    #[must_use]
    pub const fn vocab(v: Vocab) -> Self {
        Self(TriggerKind::Vocab(v))
    }

    /// One identifier-like word (ASCII letters, digits, `_`), as a whole word of code. Anything
    /// else fails to compile in a `static`:
    ///
    /// ```
    /// # use timeoutlint::prefilter::Trigger;
    /// static OK: Trigger = Trigger::word("retry_after");
    /// ```
    /// ```compile_fail
    /// # use timeoutlint::prefilter::Trigger;
    /// static MISSPELT: Trigger = Trigger::word("@retry-sites");
    /// ```
    #[must_use]
    pub const fn word(w: &'static str) -> Self {
        assert!(
            is_word(w),
            "a trigger word is ASCII letters, digits and `_`"
        );
        Self(TriggerKind::Word(w))
    }

    /// A substring matched anywhere, comments included. Only for what is not a word (a word
    /// would then also match inside comments and longer words, and let needless files through):
    ///
    /// ```compile_fail
    /// # use timeoutlint::prefilter::Trigger;
    /// static A_WORD: Trigger = Trigger::text("retry");
    /// ```
    #[must_use]
    pub const fn text(t: &'static str) -> Self {
        assert!(
            !t.is_empty() && !is_word(t),
            "a text trigger is not a word: use Trigger::word"
        );
        Self(TriggerKind::Text(t))
    }
}

const fn is_word(w: &str) -> bool {
    let b = w.as_bytes();
    if b.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if !(b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            return false;
        }
        i += 1;
    }
    true
}

/// Which passes a trigger set serves; questions name the groups of the pass asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Groups(u8);

impl Groups {
    /// The file rules (and meta rules, whose findings are made per file).
    pub const FILE: Groups = Groups(1);
    /// The crate rules: the files that feed the crate index.
    pub const CRATE: Groups = Groups(2);
    /// The site finder of a directory run's first pass, which decides which crates to join.
    pub const SITES: Groups = Groups(4);

    /// Both sets of groups.
    #[must_use]
    pub const fn and(self, other: Groups) -> Groups {
        Groups(self.0 | other.0)
    }

    const fn meets(self, other: u8) -> bool {
        self.0 & other != 0
    }
}

/// One declared trigger set: a rule's, or a pass's own.
#[derive(Debug, Clone, Copy)]
pub struct TriggerSet<'a> {
    /// The passes it serves.
    pub groups: Groups,
    /// Words one of which a file must hold; none means every file.
    pub triggers: &'a [Trigger],
    /// Words that keep an item for the context of the others.
    pub context: &'a [Trigger],
    /// A file the triggers match is parsed whole.
    pub whole_file: bool,
}

/// A compiled automaton whose patterns each carry the groups they serve.
#[derive(Debug, Clone)]
struct Tagged {
    automaton: AhoCorasick,
    groups: Vec<u8>,
    /// For word automata: the groups in which the pattern asks for a whole file.
    whole: Vec<u8>,
}

/// The compiled prefilter of one configuration: every pass's trigger sets in one.
#[derive(Debug, Clone)]
pub struct Prefilter {
    words: Option<Tagged>,
    /// Words that make an item worth keeping for the context of others (a struct with a
    /// cancellation token field), though they hold no finding themselves.
    context: Option<Tagged>,
    raw: Option<Tagged>,
    /// Groups with a set that has no triggers.
    always: u8,
}

impl Prefilter {
    /// The prefilter of `sets` with `apis`.
    #[must_use]
    pub fn new(sets: &[TriggerSet], apis: &Apis) -> Self {
        // pattern -> (groups, whole-file groups)
        let mut words: Vec<(String, u8, u8)> = Vec::new();
        let mut raw: Vec<(String, u8, u8)> = Vec::new();
        let mut context: Vec<(String, u8, u8)> = Vec::new();
        let mut always = 0;
        let mut all = 0;
        for set in sets {
            let g = set.groups.0;
            all |= g;
            if set.triggers.is_empty() {
                always |= g;
            }
            let whole = if set.whole_file { g } else { 0 };
            for t in set.triggers {
                match t.0 {
                    TriggerKind::Vocab(v) => {
                        words.extend(v.words(apis).into_iter().map(|w| (w, g, whole)));
                    }
                    TriggerKind::Word(w) => words.push((w.to_ascii_lowercase(), g, whole)),
                    TriggerKind::Text(t) => raw.push((t.to_string(), g, 0)),
                }
            }
            for t in set.context {
                match t.0 {
                    TriggerKind::Vocab(v) => {
                        context.extend(v.words(apis).into_iter().map(|w| (w, g, 0)));
                    }
                    TriggerKind::Word(w) => context.push((w.to_ascii_lowercase(), g, 0)),
                    // Context is read from the syntax tree, where plain comments never are.
                    TriggerKind::Text(t) => context.push((t.to_ascii_lowercase(), g, 0)),
                }
            }
        }
        // Every pass keeps the items naming a cancellation type or a deadline wrapper: a local
        // `fn timeout` shadows a glob-imported `tokio::time::timeout`, so items naming a
        // deadline wrapper must be seen wherever it is called. And the items that race futures
        // in `select!`: a call there (or under a deadline wrapper) bounds a private function's
        // retry site (`Facts::hidden_callers` covers the other calls).
        context.extend(["select".to_string(), "select_biased".to_string()].map(|w| (w, all, 0)));
        context.extend(
            apis.cancellation
                .types
                .iter()
                .chain(&apis.cancellation.weak_types)
                .map(|t| t.rsplit("::").next().unwrap_or(t).to_ascii_lowercase())
                .chain(
                    apis.deadlines
                        .wrappers
                        .iter()
                        .map(|w| crate::base::apis::written_key(w)),
                )
                .map(|w| (w, all, 0)),
        );
        Self {
            words: tagged(words),
            context: tagged(context),
            raw: tagged(raw),
            always,
        }
    }

    /// Can `text` hold a finding of the passes `groups`?
    #[must_use]
    pub fn may_match(&self, text: &str, groups: Groups) -> bool {
        if groups.meets(self.always) {
            return true;
        }
        if let Some(raw) = &self.raw {
            if raw
                .automaton
                .find_overlapping_iter(text)
                .any(|m| groups.meets(raw.groups[m.pattern().as_usize()]))
            {
                return true;
            }
        }
        self.words
            .as_ref()
            .is_some_and(|w| code_word(w, text, |p| groups.meets(w.groups[p])))
    }

    /// Must `text` be parsed whole for the passes `groups` (a rule that reads every item
    /// applies to it)?
    #[must_use]
    pub fn needs_whole_file(&self, text: &str, groups: Groups) -> bool {
        groups.meets(self.always)
            || self
                .words
                .as_ref()
                .is_some_and(|w| code_word(w, text, |p| groups.meets(w.whole[p])))
    }

    /// What [`crate::prefilter::mask`] keeps for the passes `groups`.
    #[must_use]
    pub fn relevance(&self, groups: Groups) -> Relevant<'_> {
        Relevant {
            prefilter: self,
            groups,
        }
    }
}

/// The prefilter seen by one pass: the items [`crate::prefilter::mask`] keeps.
#[derive(Debug, Clone, Copy)]
pub struct Relevant<'a> {
    prefilter: &'a Prefilter,
    groups: Groups,
}

impl crate::prefilter::mask::Relevance for Relevant<'_> {
    fn relevant(&self, text: &str) -> bool {
        let g = self.groups;
        self.prefilter.may_match(text, g)
            || self
                .prefilter
                .context
                .as_ref()
                .is_some_and(|c| code_word(c, text, |p| g.meets(c.groups[p])))
    }
}

/// One automaton over `patterns`, the tags of a pattern listed twice merged.
fn tagged(mut patterns: Vec<(String, u8, u8)>) -> Option<Tagged> {
    patterns.sort();
    let mut merged: Vec<(String, u8, u8)> = Vec::new();
    for (p, g, w) in patterns {
        match merged.last_mut() {
            Some(last) if last.0 == p => {
                last.1 |= g;
                last.2 |= w;
            }
            _ => merged.push((p, g, w)),
        }
    }
    if merged.is_empty() {
        return None;
    }
    let automaton = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .build(merged.iter().map(|m| &m.0))
        .expect("trigger words form a valid automaton");
    Some(Tagged {
        automaton,
        groups: merged.iter().map(|m| m.1).collect(),
        whole: merged.iter().map(|m| m.2).collect(),
    })
}

/// Does `text` hold a pattern of `words` that `wanted` accepts (by pattern index) as a whole
/// word of code (not in a plain comment)?
fn code_word(words: &Tagged, text: &str, wanted: impl Fn(usize) -> bool) -> bool {
    let b = text.as_bytes();
    let mut comments: Option<Vec<(usize, usize)>> = None;
    for m in words.automaton.find_overlapping_iter(text) {
        if !wanted(m.pattern().as_usize()) || !whole_word(b, m.start(), m.end()) {
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
        let Some((kind, end)) = token_at(b, i) else {
            i += 1;
            continue;
        };
        // `///` and `//!` are doc comments (attributes in the tree), but `////` is plain; so
        // are `/**` and `/*!` but not `/***` or `/**/`.
        if kind != Region::Literal {
            let doc = if kind == Region::LineComment {
                matches!(b.get(i + 2), Some(b'/' | b'!')) && b.get(i + 3) != Some(&b'/')
            } else {
                matches!(b.get(i + 2), Some(b'*' | b'!'))
                    && !matches!(b.get(i + 3), Some(b'*' | b'/'))
            };
            if !doc {
                out.push((i, end));
            }
        }
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pf(triggers: &[Trigger]) -> Prefilter {
        let set = TriggerSet {
            groups: Groups::FILE,
            triggers,
            context: &[],
            whole_file: false,
        };
        Prefilter::new(&[set], &Apis::builtin())
    }

    #[test]
    fn whole_words_in_code_only() {
        let p = pf(&[Trigger::word("tries"), Trigger::word("retry")]);
        let m = |t: &str| p.may_match(t, Groups::FILE);
        assert!(m("let maxTries = 3;"));
        assert!(m("const MAX_TRIES: u32 = 3;"));
        assert!(m("log!(\"retry now\");"));
        assert!(m("/// Retry docs become attributes\nfn f() {}"));
        assert!(!m("let entries = 3; let retryx = 1;"));
        assert!(!m("// we retry here\nfn f() {} /* retry */"));
        assert!(!m("let s = 1; // \"retry\""));
        assert!(m("let s = \"// not a comment\"; retry();"));
    }

    #[test]
    fn text_triggers_match_in_comments() {
        let p = pf(&[Trigger::text("timeoutlint:")]);
        assert!(p.may_match("fn f() {} // timeoutlint: ignore[x] why", Groups::FILE));
    }

    #[test]
    fn a_pass_sees_only_its_groups() {
        let file = [Trigger::word("retry")];
        let krate = [Trigger::vocab(Vocab::Clients)];
        let p = Prefilter::new(
            &[
                TriggerSet {
                    groups: Groups::FILE,
                    triggers: &file,
                    context: &[],
                    whole_file: false,
                },
                TriggerSet {
                    groups: Groups::CRATE,
                    triggers: &krate,
                    context: &[],
                    whole_file: true,
                },
            ],
            &Apis::builtin(),
        );
        let text = "fn f(b: Builder) { b.timeout(d); }";
        assert!(!p.may_match(text, Groups::FILE));
        assert!(p.may_match(text, Groups::CRATE));
        assert!(p.needs_whole_file(text, Groups::FILE.and(Groups::CRATE)));
        assert!(!p.needs_whole_file("fn f() { retry(); }", Groups::FILE.and(Groups::CRATE)));
        assert!(!p.may_match(text, Groups::SITES));
    }
}
