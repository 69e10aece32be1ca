//! The rule registry: one `mod` line and one entry per rule, in the order of the docs and
//! SARIF `rules[]`.
//!
//! A rule is a folder, `src/rules/<snake>/`: its `mod.rs` holds `static RULE: Rule` and `check`,
//! beside them whatever only that rule needs (a fix builder, its wording). Its [`Kind`] says what
//! it reads: a file rule checks one file's [`Facts`], a crate rule words the crate index's
//! answers for one file, a rule with both parts does each in its pass (its findings within one
//! file, and those whose parts lie in two files), and a meta rule judges the other rules'
//! findings, so the stage that sees them all makes its findings. A rule never prints, touches the file system, or calls another
//! rule; where two rules could report one problem, the [`precedence`] table, applied after every
//! rule ran, keeps the owner's finding. Adding a rule is its folder, its doc, its fixture, its
//! snapshot, one `mod` line and one entry in [`ALL`] below (`tests/it/catalogue.rs` checks the
//! layout).

use crate::analysis::index::{CrateIndex, SiteRef};
use crate::analysis::Facts;
use crate::base::apis::Apis;
use crate::base::diagnostic::{Diagnostic, RuleInfo};
use crate::base::source::SourceFile;
use crate::prefilter::Trigger;

// The three rules the precedence table names are visible to it (`crate::precedence`).
mod attempt_timeout_without_budget;
mod backoff_without_jitter;
pub(crate) mod blocking_sleep_in_async;
mod body_reused_across_attempts;
mod client_timeout_in_retry;
mod nested_retry;
mod non_idempotent_retry_without_key;
pub(crate) mod retry_after_uncapped;
mod retry_non_transient_status;
mod suppression_without_reason;
mod unbounded_retry;
pub(crate) mod uncancellable_backoff;
mod unused_suppression;

/// Every rule, in registry order.
pub static ALL: &[&Rule] = &[
    &unbounded_retry::RULE,
    &uncancellable_backoff::RULE,
    &blocking_sleep_in_async::RULE,
    &client_timeout_in_retry::RULE,
    &attempt_timeout_without_budget::RULE,
    &body_reused_across_attempts::RULE,
    &non_idempotent_retry_without_key::RULE,
    &retry_after_uncapped::RULE,
    &retry_non_transient_status::RULE,
    &nested_retry::RULE,
    &backoff_without_jitter::RULE,
    &unused_suppression::RULE,
    &suppression_without_reason::RULE,
];

/// Everything a file rule may look at for one file.
pub struct Context<'a> {
    /// The file's text and positions.
    pub src: &'a SourceFile,
    /// The parsed file.
    pub ast: &'a syn::File,
    /// The shared semantic facts (retry sites, sleeps, functions).
    pub facts: &'a Facts,
    /// Library knowledge from `rules/apis.toml` plus configuration.
    pub apis: &'a Apis,
}

/// Everything a crate rule may look at for one file of a joined crate.
pub struct CrateContext<'a> {
    /// The crate's joined answers (just this file when it is linted alone).
    pub index: &'a CrateIndex,
    /// The file whose findings are asked for.
    pub src: &'a SourceFile,
    /// Its syntax tree, when the file holds a finding of the index (the fixes rewrite loops by
    /// their syntax); `None` otherwise or when it does not parse whole.
    pub ast: Option<&'a syn::File>,
}

/// What a rule reads, and so which pass runs it.
#[derive(Clone, Copy)]
pub enum Kind {
    /// Checks one file's facts, in the per-file pass.
    File(fn(&Context) -> Vec<Diagnostic>),
    /// Words the crate index's answers for one file, once the crate is joined.
    Crate(fn(&CrateContext) -> Vec<Diagnostic>),
    /// Both: the file's own findings in the per-file pass, and the findings whose parts lie in
    /// two files (a retry site here, the helper it calls there) from the crate index. The crate
    /// part's files are parsed whole when they hold one of `crate_triggers`.
    FileAndCrate {
        /// The per-file check.
        file: fn(&Context) -> Vec<Diagnostic>,
        /// The check of the crate index's answers.
        krate: fn(&CrateContext) -> Vec<Diagnostic>,
        /// Words of the files the crate part reads.
        crate_triggers: &'static [Trigger],
    },
    /// Judges the other rules' findings; its findings are made by the stage named.
    Meta(Judge),
}

/// The stage that makes a meta rule's findings, the only one that sees what it judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judge {
    /// `suppression::apply`, after every rule of the file ran: which comments silenced nothing.
    Suppressions,
}

/// A registered rule: its static description (what a finding names, reached through `Deref`, so
/// `rule.name` reads as before), what it reads and its check.
pub struct Rule {
    /// Name, docs, default level: all a finding knows of its rule.
    pub info: RuleInfo,
    /// Words one of which (ASCII case-insensitive) every file that can hold a finding contains;
    /// the prefilter skips parsing files with none of any enabled rule's words. None: every file.
    pub triggers: &'static [Trigger],
    /// Words of the items the rule's analysis reads for context (kept by the mask, though they
    /// do not make a file worth parsing).
    pub context: &'static [Trigger],
    /// What it reads, with its check.
    pub kind: Kind,
}

impl std::ops::Deref for Rule {
    type Target = RuleInfo;

    fn deref(&self) -> &RuleInfo {
        &self.info
    }
}

impl Rule {
    /// Is it a crate rule (its findings come from the crate index)?
    #[must_use]
    pub fn is_crate_rule(&self) -> bool {
        matches!(self.kind, Kind::Crate(_))
    }

    /// Does any of its findings come from the crate index (a crate rule, or a rule with a crate
    /// part), so that a directory run must join the crates?
    #[must_use]
    pub fn reads_the_crate(&self) -> bool {
        matches!(self.kind, Kind::Crate(_) | Kind::FileAndCrate { .. })
    }

    /// Is `info` this rule's description, so that a finding naming it is this rule's?
    #[must_use]
    pub fn is(&self, info: &RuleInfo) -> bool {
        std::ptr::eq(&raw const self.info, info)
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The findings of the enabled file rules over one file.
#[must_use]
pub fn file_findings(cx: &Context, enabled: &[&Rule]) -> Vec<Diagnostic> {
    enabled
        .iter()
        .filter_map(|r| match r.kind {
            Kind::File(check) | Kind::FileAndCrate { file: check, .. } => Some(check(cx)),
            Kind::Crate(_) | Kind::Meta(_) => None,
        })
        .flatten()
        .collect()
}

/// The findings of the enabled crate rules whose primary location is in `cx.src`.
#[must_use]
pub fn crate_findings(cx: &CrateContext, enabled: &[&Rule]) -> Vec<Diagnostic> {
    enabled
        .iter()
        .filter_map(|r| match r.kind {
            Kind::Crate(check) | Kind::FileAndCrate { krate: check, .. } => Some(check(cx)),
            Kind::File(_) | Kind::Meta(_) => None,
        })
        .flatten()
        .collect()
}

/// Mark a crate finding's retry sites: those in the finding's own file (`path`) as related
/// locations labelled `here`, the others in one note, `elsewhere` followed by their places.
pub(crate) fn mark_sites(
    mut d: Diagnostic,
    path: &str,
    sites: &[SiteRef],
    here: &str,
    elsewhere: &str,
) -> Diagnostic {
    let mut places = Vec::new();
    for s in sites {
        if s.path == path {
            d = d.related(s.site.anchor, here);
        } else {
            places.push(format!("{}:{}:{}", s.path, s.site.line, s.site.col));
        }
    }
    if places.is_empty() {
        d
    } else {
        d.note(format!("{elsewhere} {}", places.join(", ")))
    }
}

/// A duration for a message: whole seconds as `30s`, other seconds to a tenth (`1.5s`), and
/// below a second in milliseconds (`50ms`, which a tenth of a second would round to `0.1s`).
pub(crate) fn duration_text(secs: f64) -> String {
    let whole = |x: f64| (x - x.round()).abs() < 1e-6;
    if secs < 1.0 {
        let ms = secs * 1000.0;
        if whole(ms) {
            format!("{ms:.0}ms")
        } else {
            format!("{ms:.1}ms")
        }
    } else if whole(secs) {
        format!("{secs:.0}s")
    } else {
        format!("{secs:.1}s")
    }
}

/// Look a rule up by its kebab name.
#[must_use]
pub fn by_name(name: &str) -> Option<&'static Rule> {
    ALL.iter().copied().find(|r| r.name == name)
}

#[cfg(test)]
mod tests {
    use super::duration_text;

    #[test]
    fn durations_read_as_written() {
        assert_eq!(duration_text(30.0), "30s");
        assert_eq!(duration_text(1.5), "1.5s");
        assert_eq!(duration_text(0.05), "50ms");
        assert_eq!(duration_text(0.0125), "12.5ms");
        assert_eq!(duration_text(150.0), "150s");
    }
}
