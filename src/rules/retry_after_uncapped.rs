//! `retry-after-uncapped`: a wait whose length the server chose (`Retry-After`, a backoff hint
//! in an error body) with nothing capping it.
//!
//! Asks the facts for server-chosen waits that reach their sleep uncapped and reports each place
//! the value is chosen once, however many sleeps use it. Whether the wait sits at a retry site
//! does not matter: waiting as long as the server says is a retry wait wherever it is written.
//! Deliberately absent: a value carried through a struct field or a helper's return value.

use std::collections::BTreeMap;

use crate::analysis::retry_after::{HINT, SOURCES};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rules::{Context, Rule};
use crate::source::Span;

pub(crate) static RULE: Rule = Rule {
    name: "retry-after-uncapped",
    summary: "server-chosen Retry-After wait with no cap by a maximum or the time left",
    doc: include_str!("../../rules/retry-after-uncapped.md"),
    default_enabled: true,
    default_severity: Severity::Warning,
    fixable: false,
    // The analysis matches exactly these spellings (see `analysis::retry_after`).
    triggers: &[SOURCES[0], SOURCES[1], SOURCES[2], HINT],
    check,
};

fn check(cx: &Context) -> Vec<Diagnostic> {
    let facts = cx.facts;
    // One finding per place the server's value is chosen, with every sleep it reaches.
    let mut by_origin: BTreeMap<(usize, usize), Vec<Span>> = BTreeMap::new();
    for w in facts.server_waits.iter().filter(|w| !w.capped) {
        by_origin
            .entry((w.origin.start, w.origin.end))
            .or_default()
            .push(w.wait);
    }
    by_origin
        .into_iter()
        .map(|((start, end), sleeps)| {
            let mut d = Diagnostic::new(
                &RULE,
                Span::new(start, end),
                "server-chosen wait (`Retry-After`) is slept with no cap by a maximum or the time left",
            )
            .label("the server decides how long this waits")
            .note("a misconfigured or hostile server can park the caller for hours (`Retry-After: 86400`), past any deadline")
            .help("cap it: `retry_after.min(max_wait).min(deadline.saturating_duration_since(Instant::now()))`, or let `timeoutlint_retry::RetryPolicy::builder().retry_after_cap(..)` honour it within the budget");
            for s in sleeps {
                d = d.related(s, "waits the server's delay here");
            }
            d
        })
        .collect()
}
