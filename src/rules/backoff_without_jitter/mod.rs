//! `backoff-without-jitter` (pedantic): a delay between attempts with no random component, so
//! clients that failed together retry together.
//!
//! Reports what `analysis::jitter` finds: waits at retry sites computed in sight with nothing
//! random, backoff functions computing `2^n`, backon builders without `.with_jitter()`. Off by
//! default: a single client retrying a private dependency does not stampede anything.

use crate::analysis::jitter::BUILDERS;
use crate::base::diagnostic::{Diagnostic, RuleInfo, Severity};
use crate::prefilter::{Trigger, Vocab};
use crate::rules::{Context, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "backoff-without-jitter",
        summary: "computed backoff delay with no random component",
        doc: include_str!("../../../rules/backoff-without-jitter.md"),
        default_enabled: false,
        default_severity: Severity::Warning,
        fixable: false,
    },
    // Sites and backoff functions carry the analysis' words; a builder chain may carry none.
    triggers: &[
        Trigger::vocab(Vocab::RetrySites),
        Trigger::word(BUILDERS[0]),
        Trigger::word(BUILDERS[1]),
        Trigger::word(BUILDERS[2]),
    ],
    context: &[],
    kind: Kind::File(check),
};

fn check(cx: &Context) -> Vec<Diagnostic> {
    cx.facts
        .fixed_delays
        .iter()
        .map(|f| {
            let mut d = Diagnostic::new(
                &RULE,
                f.span,
                "backoff delay has no random component",
            )
            .label("every client waits exactly this long")
            .note("after a shared outage all clients retry on the same schedule and hit the recovering service in waves")
            .help("add full jitter: `Backoff::exponential(base, max).jitter(Jitter::Full)` with `timeoutlint_retry`, `.with_jitter()` on a backon builder, or `rand::random_range(0..=delay)`");
            if let Some(s) = f.site {
                d = d.related(cx.facts.sites[s].anchor, "retry site");
            }
            d
        })
        .collect()
}
