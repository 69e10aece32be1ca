//! `attempt-timeout-without-budget`: `tokio::time::timeout(D, attempt)` with a fixed `D` inside a
//! retry site that has no overall deadline: every attempt gets a fresh full timer.
//!
//! The retry-site model keeps the two directions apart: a site *inside* a deadline wrapper's
//! future is bounded (`Deadline::Outer`), a wrapper *inside* a site is a per-attempt timer, which
//! the client summary records with its innermost site. The crate index drops the timers whose
//! site is bounded (in the file or by every caller in the crate), whose duration is derived from
//! the time left (`remaining.min(cap)`, `deadline - now`), or which only bound connection setup.
//!
//! Fix (may be incorrect), only for the loop shape of [`crate::fix::policy_loop`]: the loop
//! becomes a `RetryPolicy` with the same attempt count and the timer's duration as its attempt
//! cap, under a total deadline of attempts x that duration.

use crate::base::diagnostic::{Applicability, Diagnostic, Fix, RuleInfo, Severity};
use crate::fix::policy_loop::{self, PerAttempt};
use crate::prefilter::{Trigger, Vocab};
use crate::rules::{CrateContext, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "attempt-timeout-without-budget",
        summary: "fresh fixed timeout per attempt inside a retry with no overall deadline",
        doc: include_str!("../../../rules/attempt-timeout-without-budget.md"),
        default_enabled: true,
        default_severity: Severity::Warning,
        fixable: true,
    },
    // A crate rule's files are parsed whole: the index reads every item.
    triggers: &[
        Trigger::vocab(Vocab::RetrySites),
        Trigger::vocab(Vocab::Clients),
    ],
    context: &[],
    kind: Kind::Crate(check),
};

/// The findings whose timer is in `src` (with fixes when its syntax tree is given).
fn check(cx: &CrateContext) -> Vec<Diagnostic> {
    let (index, src, ast) = (cx.index, cx.src, cx.ast);
    index
        .attempts
        .iter()
        .filter(|a| a.path == src.path)
        .map(|a| {
            let per = a
                .secs
                .map_or_else(|| format!("`{}`", a.duration), super::duration_text);
            let message = match a.site.cap {
                Some(n) => format!(
                    "each attempt gets a fresh {per} timeout: up to {n} x {per} with no overall deadline"
                ),
                None => format!(
                    "each attempt gets a fresh {per} timeout and nothing bounds the attempts together"
                ),
            };
            let d = Diagnostic::new(&RULE, a.span, message)
                .help("derive each attempt's timeout from one budget: `timeoutlint_retry::RetryPolicy::builder().total(budget).attempt_timeout(d)` (each `Attempt` carries `timeout = min(d, time left)`), or `timeout(remaining.min(d), ..)` against a deadline computed once");
            // A timer in a function the site calls: the site is elsewhere, and the rewrite of
            // the loop would not see the timer.
            if let Some((site_path, function)) = &a.through {
                let d = d.label(format!(
                    "`{function}` restarts this timer on every attempt of a retry site that calls it"
                ));
                return if *site_path == a.path {
                    d.related(a.site.anchor, "retry site with no overall deadline")
                } else {
                    d.note(format!(
                        "retried with no overall deadline at {site_path}:{}:{}",
                        a.site.line, a.site.col
                    ))
                };
            }
            let d = d
                .label("restarts on every attempt")
                .related(a.site.anchor, "retry site with no overall deadline");
            let rewrite = ast.and_then(|ast| {
                policy_loop::rewrite(src, ast, a.site.anchor, &PerAttempt::Timer(a.span))
            });
            match rewrite {
                Some(r) => d.fix(Fix {
                    title: "retry through `timeoutlint_retry::RetryPolicy`: same attempts, this timeout per attempt, one deadline over all".into(),
                    // The runtime adds its own waits, drops what the failure arms did per
                    // attempt, and needs the crate as a dependency.
                    applicability: Applicability::MaybeIncorrect,
                    edits: r.edits,
                }),
                None => d,
            }
        })
        .collect()
}
