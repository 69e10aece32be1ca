//! `client-timeout-in-retry`: a client whose every request is bounded by a fixed timeout is used
//! at a retry site with no overall deadline, so the worst case is attempts x timeout.
//!
//! Everything is decided by the crate index ([`crate::analysis::index`]): which timeout seeds
//! reach which sites across files, and which sites are bounded (in the file or by every caller
//! in the crate). This rule only words the finding. Related locations are same-file only (the
//! emitters render one file's text per finding); sites in other files are listed in a note.
//!
//! Fix, only when every site of the timeout is a loop of the shape of
//! [`crate::fix::policy_loop`] in the same file: each becomes a `RetryPolicy` with the same
//! attempt count and the client's timeout as the attempt cap, under a total deadline. Without a
//! literal timeout the cap is a placeholder.

use crate::analysis::index::ClientFinding;
use crate::base::diagnostic::{Applicability, Diagnostic, Fix, RuleInfo, Severity};
use crate::base::source::SourceFile;
use crate::fix::policy_loop::{self, PerAttempt};
use crate::prefilter::{Trigger, Vocab};
use crate::rules::{CrateContext, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "client-timeout-in-retry",
        summary: "per-request client timeout multiplied by a retry with no overall deadline",
        doc: include_str!("../../../rules/client-timeout-in-retry.md"),
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

const HELP: &str = "bound the whole operation: `timeoutlint_retry::RetryPolicy::builder().max_attempts(n).total(budget).attempt_timeout(d).build()?` then `policy.run(|attempt| ..)` and use `attempt.timeout` per request (or wrap the site in `tokio::time::timeout(budget, ..)`)";

/// The findings whose timeout call is in `src` (with fixes when its syntax tree is given).
fn check(cx: &CrateContext) -> Vec<Diagnostic> {
    let (index, src, ast) = (cx.index, cx.src, cx.ast);
    index
        .clients
        .iter()
        .filter(|f| f.path == src.path)
        .map(|f| {
            let d = diagnostic(f);
            match ast.and_then(|ast| fix(f, src, ast)) {
                Some(fix) => d.fix(fix),
                None => d,
            }
        })
        .collect()
}

/// Every site of the timeout rewritten onto the runtime's policy, or nothing: a half-fixed
/// finding would stay.
fn fix(f: &ClientFinding, src: &SourceFile, ast: &syn::File) -> Option<Fix> {
    let t = &f.timeout;
    // A client that retries by itself would multiply the policy's attempts.
    if t.own_retries.is_some() || f.sites.is_empty() {
        return None;
    }
    let path = policy_loop::duration_path(ast);
    let cap = policy_loop::portable_duration(&t.duration, path)
        .or_else(|| f.secs.and_then(|s| policy_loop::duration_of_secs(s, path)));
    let mut edits = Vec::new();
    let mut placeholder = false;
    for s in &f.sites {
        if s.path != f.path {
            return None;
        }
        let r = policy_loop::rewrite(src, ast, s.site.anchor, &PerAttempt::Client(cap.clone()))?;
        placeholder |= r.placeholder;
        edits.extend(r.edits);
    }
    Some(Fix {
        title: "retry through `timeoutlint_retry::RetryPolicy`: same attempts, the client's timeout per attempt, one deadline over all".into(),
        // The runtime adds its own waits and drops what the failure arms did per attempt; the
        // budget written is the old worst case, to be lowered to the caller's.
        applicability: if placeholder {
            Applicability::HasPlaceholders
        } else {
            Applicability::MaybeIncorrect
        },
        edits,
    })
}

fn diagnostic(f: &ClientFinding) -> Diagnostic {
    let t = &f.timeout;
    let what = if t.default_secs.is_some() {
        format!("`{}()` has a default request timeout", t.method)
    } else if t.method.contains("::") {
        format!("`{}(..)` bounds each attempt", t.method)
    } else {
        format!("`.{}(..)` bounds each attempt", t.method)
    };
    let caps: Vec<Option<u64>> = f.sites.iter().map(|s| s.site.cap).collect();
    let own = t
        .own_retries
        .as_deref()
        .and_then(|r| r.trim().parse::<u64>().ok());
    let attempts = own.map(|n| n + 1).or_else(|| {
        let max = caps.iter().copied().collect::<Option<Vec<u64>>>()?;
        max.into_iter().max().filter(|n| *n >= 2)
    });
    let unbounded = f.sites.iter().any(|s| s.site.unbounded);
    let per = match f.secs {
        Some(s) => format!("{} per attempt", super::duration_text(s)),
        None if t.duration.is_empty() => "the timeout applies per attempt".to_string(),
        None => format!("`{}` per attempt", t.duration),
    };
    let arithmetic = match (f.secs, attempts, unbounded) {
        (_, _, true) => format!("{per} x unbounded attempts, with no overall deadline"),
        (Some(s), Some(n), false) => format!(
            "{per} x {n} attempts = {} worst case, with no overall deadline",
            super::duration_text(s * f64::from(u32::try_from(n).unwrap_or(u32::MAX)))
        ),
        (_, Some(n), false) => format!("{per} x {n} attempts, with no overall deadline"),
        (_, None, false) => format!("{per}, restarted on every attempt, with no overall deadline"),
    };
    let mut d = Diagnostic::new(&RULE, t.span, format!("{what}: {arithmetic}"))
        .label("a fixed timeout for every attempt, not for the whole operation")
        .help(HELP);
    if let Some(n) = &t.own_retries {
        d = d.note(format!(
            "the same request configuration retries by itself ({n} retries): the timeout restarts on each"
        ));
    }
    if t.default_secs.is_some() {
        d = d.note("reqwest's blocking client times each request out after 30s unless `.timeout(..)` says otherwise");
    }
    super::mark_sites(
        d,
        &f.path,
        &f.sites,
        "retried here with no overall deadline",
        "retried with no overall deadline at",
    )
}
