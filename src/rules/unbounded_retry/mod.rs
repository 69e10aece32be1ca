//! `unbounded-retry`: a retry site that nothing stops but success.
//!
//! Asks the retry-site model for sites with no attempt cap, no deadline of any kind and no
//! cancellation check. A `loop` is judged by its ways round: one that no check stands on is
//! unbounded even when the body gives up on another failure class or counts attempts on
//! another path. A combinator whose strategy is built elsewhere has an unknown cap and is
//! left alone: no guess. A site whose only cap is an option that `None` switches off (written
//! out at the site: `max.is_none() || n < max.unwrap()`) is reported as unbounded when unset.
//!
//! Fix (with a placeholder, never applied by `--fix`): a plain `loop` becomes a `for` over a
//! number of attempts the user must choose; loops used as values get help text only. A cap
//! switched off by `None` gets no fix: the cap already exists.

use crate::analysis::{Cap, RetrySite, SiteKind};
use crate::base::diagnostic::{Applicability, Diagnostic, Edit, Fix, RuleInfo, Severity};
use crate::prefilter::{Trigger, Vocab};
use crate::rules::{Context, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "unbounded-retry",
        summary: "retry site with no attempt cap and no deadline",
        doc: include_str!("../../../rules/unbounded-retry.md"),
        default_enabled: true,
        default_severity: Severity::Warning,
        fixable: true,
    },
    triggers: &[Trigger::vocab(Vocab::RetrySites)],
    context: &[],
    kind: Kind::File(check),
};

fn check(cx: &Context) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for site in &cx.facts.sites {
        // Any time bound or stop signal may end the site without success. A call of the crate's
        // own retry wrapper is bounded by the wrapper's loop, which is judged where it is. A
        // `loop` is judged path by path: an exit on another failure class, or an attempt check
        // with no way out, bounds nothing on the way round; elsewhere any other exit on failure
        // may be the bound.
        if site.known_unbounded() {
            out.push(uncapped(cx, site));
        } else if let Cap::OffWhenNone(option) = &site.cap {
            // The cap's own exit is the failure exit; with the option unset it is never taken.
            if site.unchecked() {
                out.push(off_when_none(cx, site, option));
            }
        }
    }
    out
}

fn uncapped(cx: &Context, site: &RetrySite) -> Diagnostic {
    let (message, label) = match &site.kind {
        SiteKind::Combinator(name) => (
            format!("`{name}` retries with a strategy that has no attempt cap and no deadline"),
            "this strategy never gives up",
        ),
        SiteKind::Recursion => (
            "recursive retry has no attempt cap and no deadline".to_string(),
            "calls itself again after every failure, forever",
        ),
        _ if site.cap != Cap::None || site.ungated_round.is_some_and(|r| r.gated_elsewhere) => (
            "retry loop can go round forever: its bound does not stand on every way round"
                .to_string(),
            "goes round again after a failure with no bound on the way",
        ),
        _ => (
            "retry loop has no attempt cap and no deadline".to_string(),
            "goes round again after every failure, forever",
        ),
    };
    let mut d = Diagnostic::new(&RULE, site.anchor, message)
        .label(label)
        .note("a persistent failure (a down dependency, a revoked credential) keeps this task busy and its caller waiting forever")
        .help("bound attempts and total time: `timeoutlint_retry::RetryPolicy::builder().max_attempts(5).total(Duration::from_secs(30)).build()?.run(..)`");
    d = with_sleeps(cx, site, d);
    if let Some(round) = site.ungated_round {
        d = d.related(
            round.at,
            "goes round from here; no attempt check, deadline or stop signal on the way",
        );
    }
    if site.cap == Cap::None
        && site.kind == SiteKind::Loop
        && cx.src.slice(site.anchor) == "loop"
        && !crate::fix::slices::breaks_with_value(cx.src.slice(site.span))
    {
        d = d.fix(Fix {
            title: "cap the attempts (choose the number)".into(),
            // The count is a guess, and the code after the loop now runs when attempts
            // run out: it must return the last error.
            applicability: Applicability::HasPlaceholders,
            edits: vec![Edit {
                span: site.anchor,
                replacement: "for _attempt in 0../* max attempts */ 5".into(),
            }],
        });
    }
    d
}

/// No fix: the cap is there and works when set; what to do when it is unset (a default, a
/// deadline, refusing `None` in the configuration) is the owner's choice.
fn off_when_none(cx: &Context, site: &RetrySite, option: &str) -> Diagnostic {
    let d = Diagnostic::new(
        &RULE,
        site.anchor,
        format!("retries forever when `{option}` is `None` (no attempt cap and no deadline then)"),
    )
    .label(format!("the only attempt cap; `{option}` = `None` switches it off"))
    .note(format!(
        "with `{option}` unset, a persistent failure (a down dependency, a revoked credential) keeps this task busy and its caller waiting forever"
    ))
    .help(format!(
        "give `{option}` a finite default, or bound the total time as well (an overall deadline checked between attempts, or `tokio::time::timeout` around the loop)"
    ));
    with_sleeps(cx, site, d)
}

fn with_sleeps(cx: &Context, site: &RetrySite, mut d: Diagnostic) -> Diagnostic {
    for &s in &site.sleeps {
        d = d.related(cx.facts.sleeps[s].span, "waits here between attempts");
    }
    d
}
