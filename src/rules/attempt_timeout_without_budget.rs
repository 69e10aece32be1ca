//! `attempt-timeout-without-budget`: `tokio::time::timeout(D, attempt)` with a fixed `D` inside a
//! retry site that has no overall deadline: every attempt gets a fresh full timer.
//!
//! The retry-site model keeps the two directions apart: a site *inside* a deadline wrapper's
//! future is bounded (`Deadline::Outer`), a wrapper *inside* a site is a per-attempt timer, which
//! the client summary records with its innermost site. The crate index drops the timers whose
//! site is bounded (in the file or by every caller in the crate), whose duration is derived from
//! the time left (`remaining.min(cap)`, `deadline - now`), or which only bound connection setup.

use crate::analysis::index::CrateIndex;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rules::{Context, Rule};

pub(crate) static RULE: Rule = Rule {
    name: "attempt-timeout-without-budget",
    summary: "fresh fixed timeout per attempt inside a retry with no overall deadline",
    doc: include_str!("../../rules/attempt-timeout-without-budget.md"),
    default_enabled: true,
    default_severity: Severity::Warning,
    fixable: false,
    triggers: &["@retry-sites", "@clients", "@whole-file"],
    check,
};

fn check(cx: &Context) -> Vec<Diagnostic> {
    from_index(cx.krate, &cx.src.path)
}

/// The findings whose timer is in `path`.
pub(super) fn from_index(index: &CrateIndex, path: &str) -> Vec<Diagnostic> {
    index
        .attempts
        .iter()
        .filter(|a| a.path == path)
        .map(|a| {
            let per = a.secs.map_or_else(
                || format!("`{}`", a.timer.duration),
                |s| format!("{}s", fmt_secs(s)),
            );
            let message = match a.site.cap {
                Some(n) => format!(
                    "each attempt gets a fresh {per} timeout: up to {n} x {per} with no overall deadline"
                ),
                None => format!(
                    "each attempt gets a fresh {per} timeout and nothing bounds the attempts together"
                ),
            };
            Diagnostic::new(&RULE, a.timer.span, message)
                .label("restarts on every attempt")
                .related(a.site.anchor, "retry site with no overall deadline")
                .help("derive each attempt's timeout from one budget: `timeoutlint_retry::RetryPolicy::builder().total(budget).attempt_timeout(d)` (each `Attempt` carries `timeout = min(d, time left)`), or `timeout(remaining.min(d), ..)` against a deadline computed once")
        })
        .collect()
}

fn fmt_secs(s: f64) -> String {
    if (s - s.round()).abs() < 1e-9 {
        format!("{s:.0}")
    } else {
        format!("{s:.1}")
    }
}
