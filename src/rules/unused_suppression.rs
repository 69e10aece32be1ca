//! `unused-suppression`: a `// timeoutlint: ignore[..]` comment that silences nothing.
//!
//! A meta rule: whether a suppression was used depends on every other rule's findings, which a
//! rule never sees (rules never call each other). So `check` reports nothing and
//! `suppression::apply`, which runs after all rules of a file, emits this rule's findings when it
//! is enabled. Its trigger word keeps the prefilter from skipping files that hold suppressions.

use crate::diagnostic::{Diagnostic, Severity};
use crate::rules::{Context, Rule};

pub(crate) static RULE: Rule = Rule {
    name: "unused-suppression",
    summary: "suppression comment that silences no finding (stale, misspelt or unknown rule)",
    doc: include_str!("../../rules/unused-suppression.md"),
    default_enabled: true,
    default_severity: Severity::Warning,
    fixable: true,
    triggers: &["timeoutlint:"],
    check,
};

fn check(_cx: &Context) -> Vec<Diagnostic> {
    // Reported by `suppression::apply`, the only place that sees the other rules' findings.
    Vec::new()
}
