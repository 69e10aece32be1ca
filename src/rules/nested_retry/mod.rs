//! `nested-retry`: a retry site around a client that already retries, so one failure costs
//! outer x inner attempts and the waits of both layers.
//!
//! Reports what `analysis::nested` finds, with the multiplied attempt count when both counts
//! are literal. Deliberately absent: clients whose retrying is configured in another file.

use crate::analysis::Cap;
use crate::base::diagnostic::{Diagnostic, RuleInfo, Severity};
use crate::prefilter::{Trigger, Vocab};
use crate::rules::{Context, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "nested-retry",
        summary: "retry site around a client that already retries: the attempts multiply",
        doc: include_str!("../../../rules/nested-retry.md"),
        default_enabled: true,
        default_severity: Severity::Warning,
        fixable: false,
    },
    // The retrying-client names are in `rules/apis.toml`, so the analysis' triggers cover them.
    triggers: &[Trigger::vocab(Vocab::RetrySites)],
    // The retrying client may be built in an item with no retry word (a constructor).
    context: &[Trigger::vocab(Vocab::RetryingClients)],
    kind: Kind::File(check),
};

fn check(cx: &Context) -> Vec<Diagnostic> {
    let facts = cx.facts;
    facts
        .nested_retries
        .iter()
        .map(|n| {
            let site = &facts.sites[n.site];
            let count = match (&site.cap, n.inner_attempts) {
                (Cap::Literal(outer), Some(inner)) => format!(
                    ": up to {outer} x {inner} = {} requests per call",
                    outer * inner
                ),
                _ => ": the attempts multiply".to_string(),
            };
            Diagnostic::new(
                &RULE,
                site.anchor,
                format!(
                    "retry site around a call that already retries (`{}`){count}",
                    n.what
                ),
            )
            .label("every attempt here is itself retried")
            .related(n.inner, "this retries by itself")
            .note("during an outage the dependency gets outer x inner requests for each call, and the caller waits through both layers' backoffs")
            .help("retry in one layer only: drop the outer loop, or build the client without its retry middleware and let `timeoutlint_retry::RetryPolicy` own attempts and budget")
        })
        .collect()
}
