//! `suppression-without-reason`: a suppression comment with no reason after its rule list.
//!
//! Pedantic (off by default): teams that want every silenced finding justified turn it on, and
//! make it fail CI with `[rules] suppression-without-reason = "error"`. Works on the comments
//! alone; whether the suppression is used is `unused-suppression`'s question.

use crate::base::diagnostic::{Diagnostic, RuleInfo, Severity};
use crate::base::directive::{self, Kind};
use crate::prefilter::Trigger;
use crate::rules::{self, Context, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "suppression-without-reason",
        summary: "suppression comment that does not say why the finding is acceptable",
        doc: include_str!("../../../rules/suppression-without-reason.md"),
        default_enabled: false,
        default_severity: Severity::Warning,
        fixable: false,
    },
    triggers: &[Trigger::text("timeoutlint:")],
    context: &[],
    kind: rules::Kind::File(check),
};

fn check(cx: &Context) -> Vec<Diagnostic> {
    directive::parse(cx.src)
        .into_iter()
        // `enable` ends a range and needs no justification of its own; unknown verbs are
        // `unused-suppression`'s.
        .filter(|s| !matches!(s.kind, Kind::Enable | Kind::Unknown) && s.reason.is_none())
        .map(|s| {
            Diagnostic::new(&RULE, s.comment, "suppression has no reason")
                .label("why is this finding acceptable here?")
                .help(format!(
                    "add the reason after the rule list: `// timeoutlint: {}[{}] <why>`",
                    s.verb,
                    s.rules
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
        })
        .collect()
}
