//! `uncancellable-backoff`: a wait between attempts that the caller cannot cut short.
//!
//! Fires only where something could cut it short and does not: a cancellation source is in
//! scope (or checked by the loop) but the sleep is not raced against it, or the site checks a
//! deadline by hand but the sleep is not capped by the time left. With neither, dropping the
//! future is the idiomatic cancellation and there is nothing to report.
//!
//! Fixes: with a `CancellationToken` in scope, race the awaited sleep in `tokio::select!` and
//! leave the loop when it fires; with a hand-checked deadline held in a known local, cap the wait
//! by the time left. Anything else (a weak source such as an `AtomicBool`, a deadline not in a
//! variable, a loop used as a value) gets help text only.

use crate::analysis::Deadline;
use crate::analysis::{CancelSource, SiteKind, Sleep};
use crate::base::diagnostic::{Applicability, Diagnostic, Edit, Fix, RuleInfo, Severity};
use crate::base::source::Span;
use crate::fix::{scope, slices};
use crate::prefilter::{Trigger, Vocab};
use crate::rules::{Context, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "uncancellable-backoff",
        summary: "backoff sleep that cannot be interrupted when the caller gives up",
        doc: include_str!("../../../rules/uncancellable-backoff.md"),
        default_enabled: true,
        default_severity: Severity::Warning,
        fixable: true,
    },
    triggers: &[Trigger::vocab(Vocab::RetrySites)],
    context: &[],
    kind: Kind::File(check),
};

const RACE_HELP: &str = "race the wait: `tokio::select! { _ = token.cancelled() => .., _ = sleep(d) => .. }`, or let `timeoutlint_retry::RetryPolicy::run_with_cancel` own the waits";
/// A thread sleep has no future to race: the stop must be something the wait can block on.
const BLOCKING_HELP: &str = "wait on what the stop signal notifies instead of sleeping (`Condvar::wait_timeout`, a channel's `recv_timeout`), or let `timeoutlint_retry::RetryPolicy::blocking()` with a `CancelHandle` own the waits";

fn check(cx: &Context) -> Vec<Diagnostic> {
    let facts = cx.facts;
    let mut out = Vec::new();
    // A thread sleep on the executor and a server-chosen wait are reported here too when they
    // fit: `blocking-sleep-in-async` and `retry-after-uncapped` own them through the precedence
    // table, only where they fired.
    for sleep in &facts.sleeps {
        let Some(site_idx) = sleep.site else {
            // Not between attempts: a pacing or periodic sleep is not a backoff, unless a
            // supervisor loop waits there after a failure.
            out.extend(reconnect_wait(facts, sleep));
            continue;
        };
        let site = &facts.sites[site_idx];
        // A raced sleep, or one under an outer deadline, is cancelled with it.
        if sleep.raced || sleep.under_deadline || site.deadline == Some(Deadline::Outer) {
            continue;
        }
        // A wait in a helper the site calls: what is in scope at the call counts too (the
        // helper cannot race a token it is not handed).
        let mut sources = facts.cancel_sources(sleep.function);
        if sleep.via.is_some() && sources.is_empty() {
            sources = facts.cancel_sources(site.function);
        }
        let help = if sleep.blocking {
            BLOCKING_HELP
        } else {
            RACE_HELP
        };
        let mut d = if let Some(src) = sources.first() {
            let d = Diagnostic::new(
                &RULE,
                sleep.span,
                format!("backoff sleep is not raced against `{}`", src.name),
            )
            .label("cancelling does not interrupt this wait")
            .related(src.span, "cancellation source in scope")
            .help(help);
            match race_fix(cx, sleep, src) {
                Some(fix) => d.fix(fix),
                None => d,
            }
        } else if site.checks_cancel {
            Diagnostic::new(
                &RULE,
                sleep.span,
                "backoff sleep ignores the stop signal the retry loop checks",
            )
            .label("a stop request waits for this sleep to finish")
            .help(help)
        } else if (site.deadline == Some(Deadline::Manual) || site.clock_checked)
            && !sleep.capped(facts)
            && !short_constant(&sleep.duration)
        {
            let d = Diagnostic::new(
                &RULE,
                sleep.span,
                "backoff sleep is not capped by the time left before the deadline",
            )
            .label("can sleep past the deadline the loop checks")
            .note("don't start a wait you cannot finish")
            .help("cap the wait: `sleep(delay.min(deadline.saturating_duration_since(Instant::now())))`, or let `timeoutlint_retry::RetryPolicy` derive every wait from its deadline");
            match cap_fix(cx, sleep) {
                Some(fix) => d.fix(fix),
                None => d,
            }
        } else {
            continue;
        };
        if let Some(via) = &sleep.via {
            d = d.related(via.call, "the retry site waits through this call");
        }
        d = d.related(site.anchor, "retry site");
        out.push(d);
    }
    out
}

/// A supervisor loop's wait after a failure ([`crate::analysis::Reconnect`]) with a stop signal
/// in scope or checked by the loop, and not raced: a stop request waits out the backoff. No
/// fix: the loop is not a retry site the fixes understand.
fn reconnect_wait(facts: &crate::analysis::Facts, sleep: &Sleep) -> Option<Diagnostic> {
    if sleep.raced || sleep.under_deadline {
        return None;
    }
    let r = facts.reconnects.iter().find(|r| r.waits(sleep))?;
    let help = if sleep.blocking {
        BLOCKING_HELP
    } else {
        RACE_HELP
    };
    let d = if let Some(src) = facts.cancel_sources(sleep.function).first() {
        Diagnostic::new(
            &RULE,
            sleep.span,
            format!("reconnect backoff is not raced against `{}`", src.name),
        )
        .label("cancelling does not interrupt this wait")
        .related(src.span, "cancellation source in scope")
    } else if r.checks_cancel {
        Diagnostic::new(
            &RULE,
            sleep.span,
            "reconnect backoff ignores the stop signal the loop checks",
        )
        .label("a stop request waits for this sleep to finish")
    } else {
        return None;
    };
    Some(d.help(help).related(r.anchor, "reconnect loop"))
}

/// `sleep(d).await` -> `tokio::select! { _ = token.cancelled() => break, _ = sleep(d) => {} }`.
/// Only for a `CancellationToken` (whose `cancelled()` is the future to race) and a loop the
/// sleep sits in directly, where a bare `break` is legal.
fn race_fix(cx: &Context, sleep: &Sleep, source: &CancelSource) -> Option<Fix> {
    let facts = cx.facts;
    let site = &facts.sites[sleep.site?];
    if !matches!(site.kind, SiteKind::Loop | SiteKind::While | SiteKind::For)
        || site.function != sleep.function
        || slices::breaks_with_value(cx.src.slice(site.span))
        || slices::in_inner_loop(
            cx.src.slice(site.span),
            sleep.span.start.saturating_sub(site.span.start),
        )
    {
        return None;
    }
    let declared = format!(
        "{}{}",
        cx.src.slice(source.span),
        cx.src
            .slice(cx.src.line_span(cx.src.line_index(source.span.start)))
    );
    if !(declared.contains("CancellationToken") || declared.contains("child_token")) {
        return None;
    }
    let name = source.name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        return None;
    }
    let whole = slices::awaited(&cx.src.text, sleep.span)?;
    Some(Fix {
        title: format!(
            "race the wait against `{name}.cancelled()` and stop retrying when it fires"
        ),
        // Cancelling now leaves the loop: what runs after it (an error, a fallback) runs on
        // cancellation too, which is a change of control flow to review.
        applicability: Applicability::MaybeIncorrect,
        edits: vec![Edit {
            span: whole,
            replacement: format!(
                "tokio::select! {{ _ = {name}.cancelled() => break, _ = {} => {{}} }}",
                cx.src.slice(sleep.span)
            ),
        }],
    })
}

/// `sleep(d)` -> `sleep(d.min(deadline.saturating_duration_since(Instant::now())))`, where the
/// deadline is a local named like one, made from `now()`, that the site compares.
fn cap_fix(cx: &Context, sleep: &Sleep) -> Option<Fix> {
    let facts = cx.facts;
    let site = &facts.sites[sleep.site?];
    let (name, instant) = scope::deadline(cx.src, facts, sleep.function)?;
    if !site.comparison_words.iter().any(|c| c.contains(&name)) {
        return None;
    }
    let args = slices::call_args(&cx.src.text, sleep.span)?;
    let inner = Span::new(args.start + 1, args.end - 1);
    let duration = cx.src.slice(inner);
    if duration.trim().is_empty() || duration.contains(',') {
        return None;
    }
    Some(Fix {
        title: format!("cap the wait by the time left before `{name}`"),
        // Only shortens the wait, but the deadline's `Instant` type is inferred from its name.
        applicability: Applicability::MaybeIncorrect,
        edits: vec![Edit {
            span: inner,
            replacement: format!(
                "{}.min({name}.saturating_duration_since({instant}::now()))",
                slices::receiver(duration)
            ),
        }],
    })
}

/// A literal wait under a second (`Duration::from_millis(500)`): a poll interval whose overshoot
/// past a deadline is negligible, unlike a growing backoff.
fn short_constant(duration: &str) -> bool {
    let compact: String = duration.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = compact.find('(') else {
        return false;
    };
    let (head, arg) = compact.split_at(open);
    let Ok(n) = arg
        .trim_start_matches('(')
        .trim_end_matches(')')
        .replace('_', "")
        .parse::<u64>()
    else {
        return false;
    };
    match head.rsplit("::").next() {
        Some("from_millis") => n < 1000,
        Some("from_micros" | "from_nanos") => true,
        Some("from_secs") => n == 0,
        _ => false,
    }
}
