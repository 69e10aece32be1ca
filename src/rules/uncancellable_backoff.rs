//! `uncancellable-backoff`: a wait between attempts that the caller cannot cut short.
//!
//! Fires only where something could cut it short and does not: a cancellation source is in
//! scope (or checked by the loop) but the sleep is not raced against it, or the site checks a
//! deadline by hand but the sleep is not capped by the time left. With neither, dropping the
//! future is the idiomatic cancellation and there is nothing to report.

use crate::analysis::Deadline;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rules::{Context, Rule};

pub(crate) static RULE: Rule = Rule {
    name: "uncancellable-backoff",
    summary: "backoff sleep that cannot be interrupted when the caller gives up",
    doc: include_str!("../../rules/uncancellable-backoff.md"),
    default_enabled: true,
    default_severity: Severity::Warning,
    fixable: false,
    triggers: &["@retry-sites"],
    check,
};

const RACE_HELP: &str = "race the wait: `tokio::select! { _ = token.cancelled() => .., _ = sleep(d) => .. }`, or let `timeoutlint_retry::RetryPolicy::run_with_cancel` own the waits";

fn check(cx: &Context) -> Vec<Diagnostic> {
    let facts = cx.facts;
    let mut out = Vec::new();
    for (idx, sleep) in facts.sleeps.iter().enumerate() {
        // `retry-after-uncapped` owns a wait the server chose and nothing caps.
        if facts.uncapped_server_wait(idx).is_some() {
            continue;
        }
        let Some(site_idx) = sleep.site else {
            // Not between attempts: a pacing or periodic sleep is not a backoff.
            continue;
        };
        let site = &facts.sites[site_idx];
        // A raced sleep, or one under an outer deadline, is cancelled with it.
        if sleep.raced
            || sleep.under_deadline
            || matches!(site.deadline, Some(Deadline::Outer | Deadline::Callers))
        {
            continue;
        }
        // `blocking-sleep-in-async` owns a thread sleep on the executor.
        if sleep.blocking && facts.runs_on_executor(sleep.function) {
            continue;
        }
        let sources = facts.cancel_sources(sleep.function);
        let mut d = if let Some(src) = sources.first() {
            Diagnostic::new(
                &RULE,
                sleep.span,
                format!("backoff sleep is not raced against `{}`", src.name),
            )
            .label("cancelling does not interrupt this wait")
            .related(src.span, "cancellation source in scope")
            .help(RACE_HELP)
        } else if site.checks_cancel {
            Diagnostic::new(
                &RULE,
                sleep.span,
                "backoff sleep ignores the stop signal the retry loop checks",
            )
            .label("a stop request waits for this sleep to finish")
            .help(RACE_HELP)
        } else if site.deadline == Some(Deadline::Manual)
            && !sleep.capped(facts)
            && !short_constant(&sleep.duration)
        {
            Diagnostic::new(
                &RULE,
                sleep.span,
                "backoff sleep is not capped by the time left before the deadline",
            )
            .label("can sleep past the deadline the loop checks")
            .note("don't start a wait you cannot finish")
            .help("cap the wait: `sleep(delay.min(deadline.saturating_duration_since(Instant::now())))`, or let `timeoutlint_retry::RetryPolicy` derive every wait from its deadline")
        } else {
            continue;
        };
        d = d.related(site.anchor, "retry site");
        out.push(d);
    }
    out
}

/// A literal wait under a second (`Duration::from_millis(500)`): a poll interval whose overshoot
/// past a deadline is negligible, unlike a growing backoff.
fn short_constant(duration: &str) -> bool {
    let compact: String = duration.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = compact.find('(') else {
        return false;
    };
    let (head, arg) = compact.split_at(open);
    let Ok(n) = arg.trim_start_matches('(').trim_end_matches(')').replace('_', "").parse::<u64>() else {
        return false;
    };
    match head.rsplit("::").next() {
        Some("from_millis") => n < 1000,
        Some("from_micros" | "from_nanos") => true,
        Some("from_secs") => n == 0,
        _ => false,
    }
}
