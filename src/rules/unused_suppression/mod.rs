//! `unused-suppression`: a `// timeoutlint: ignore[..]` comment that silences nothing.
//!
//! A meta rule: whether a suppression was used depends on every other rule's findings, which a
//! rule never sees (rules never call each other). Its kind says so: its findings are made by
//! `suppression::apply` ([`Judge::Suppressions`]), which runs after all rules of a file, when this
//! rule is enabled. Its trigger keeps the prefilter from skipping files that hold suppressions.

use crate::base::diagnostic::{RuleInfo, Severity};
use crate::prefilter::Trigger;
use crate::rules::{Judge, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "unused-suppression",
        summary: "suppression comment that silences no finding (stale, misspelt or unknown rule)",
        doc: include_str!("../../../rules/unused-suppression.md"),
        default_enabled: true,
        default_severity: Severity::Warning,
        fixable: true,
    },
    triggers: &[Trigger::text("timeoutlint:")],
    context: &[],
    kind: Kind::Meta(Judge::Suppressions),
};
