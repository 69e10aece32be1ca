//! `retry-non-transient-status`: a retry site that retries every non-success status, so 400,
//! 401, 403, 404 and 422 are sent again although no retry can change the answer.
//!
//! Asks the facts (`analysis::status`) for sites whose only status test is "success or not".
//! Points at the status test, or at the site when the test is its success exit (every other
//! status falls through to the next attempt), or, in a reconnect state machine, at the
//! transition that schedules the next attempt.
//!
//! Its crate part reports a helper's test when the site is elsewhere: a site that tests no
//! status and goes round on every error, whose attempt calls a crate function (in another file,
//! through a trait, or one call further down) that turns every non-success status into an error
//! (`if !resp.status().is_success() { return Err(..) }`). The finding points at that test, where
//! the fix belongs. Deliberately absent: sites that retry every error with no status test in
//! sight in the crate: whether that error was classified is not visible here.

use crate::base::diagnostic::{Diagnostic, RuleInfo, Severity};
use crate::prefilter::{Trigger, Vocab};
use crate::rules::{Context, CrateContext, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "retry-non-transient-status",
        summary: "retry site that retries every non-success status, 4xx included",
        doc: include_str!("../../../rules/retry-non-transient-status.md"),
        default_enabled: true,
        default_severity: Severity::Warning,
        fixable: false,
    },
    // Every site needs retry evidence, which the analysis' trigger words already cover. A
    // combinator's named operation (`fetch.retry(..)`) holds the status test in an item of its
    // own with no retry word: items naming a status are kept for it.
    triggers: &[Trigger::vocab(Vocab::RetrySites)],
    context: &[Trigger::word("status"), Trigger::word("is_success")],
    // The crate part reads the sites' files and the helpers that test `is_success`.
    kind: Kind::FileAndCrate {
        file: check,
        krate: check_crate,
        crate_triggers: &[
            Trigger::vocab(Vocab::RetrySites),
            Trigger::word("is_success"),
        ],
    },
};

const HELP: &str = "retry only transient statuses: `match status.as_u16() { 408 | 429 | 500..=599 => retry, _ => return Err(..) }`, or classify with `timeoutlint_retry::Outcome::for_http_status(status, retry_after)` (4xx other than 408/429 is Permanent)";

fn check(cx: &Context) -> Vec<Diagnostic> {
    let facts = cx.facts;
    facts
        .status_retries
        .iter()
        .map(|s| {
            let site = &facts.sites[s.site];
            if let Some(reconnect) = s.reconnect {
                // A state machine's retry decision is the transition it makes on the failure,
                // not the loop that drives it.
                Diagnostic::new(
                    &RULE,
                    reconnect,
                    "a reconnect is scheduled after every non-success status, 4xx included",
                )
                .label("400, 401, 403, 404 and 422 reconnect like 503")
                .related(s.test, "the only status test")
                .related(site.anchor, "retry site")
                .help(HELP)
            } else if s.success_exit {
                // RULES.md puts the finding at the status test; here it is the only exit.
                Diagnostic::new(
                    &RULE,
                    s.test,
                    "retry site leaves only on success, so every non-success status is retried",
                )
                .label("the only status test: 400, 401, 403, 404 and 422 go round like 503")
                .related(site.anchor, "retry site")
                .help(HELP)
            } else {
                Diagnostic::new(
                    &RULE,
                    s.test,
                    "every non-success status is retried, 4xx included",
                )
                .label("400, 401, 403, 404 and 422 are retried like 503")
                .related(site.anchor, "retry site")
                .note("a client error gets the same answer on every attempt: the retries only add load and delay the failure")
                .help(HELP)
            }
        })
        .collect()
}

/// The helpers' tests in `cx.src` that sites elsewhere retry through.
fn check_crate(cx: &CrateContext) -> Vec<Diagnostic> {
    cx.index
        .statuses
        .iter()
        .filter(|f| f.path == cx.src.path)
        .map(|f| {
            let d = Diagnostic::new(
                &RULE,
                f.gate.span,
                "every non-success status becomes an error here, and a retry site retries every error, 4xx included",
            )
            .label("400, 401, 403, 404 and 422 become the same error as 503")
            .note("a client error gets the same answer on every attempt: the retries only add load and delay the failure")
            .help(HELP);
            super::mark_sites(
                d,
                &f.path,
                &f.sites,
                "retry site that retries this error",
                "retried by the retry site at",
            )
        })
        .collect()
}
