//! `blocking-sleep-in-async`: `std::thread::sleep` where a future runs.
//!
//! Uses the function facts to decide whether the sleep runs on the executor: the nearest
//! enclosing `async fn`, `async` block or async closure, through sync closures, but not through
//! a closure handed to `spawn_blocking`, `block_in_place` or `thread::spawn`.
//!
//! Fixes to `tokio::time::sleep(..).await` only where the sleep's own body is async (`.await` is
//! legal there; not in a sync closure inside one).

use crate::base::diagnostic::{Applicability, Diagnostic, Edit, Fix, RuleInfo, Severity};
use crate::fix::slices;
use crate::prefilter::{Trigger, Vocab};
use crate::rules::{Context, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "blocking-sleep-in-async",
        summary: "`std::thread::sleep` inside async code blocks the executor thread",
        doc: include_str!("../../../rules/blocking-sleep-in-async.md"),
        default_enabled: true,
        default_severity: Severity::Warning,
        fixable: true,
    },
    triggers: &[Trigger::vocab(Vocab::BlockingSleeps)],
    context: &[],
    kind: Kind::File(check),
};

fn check(cx: &Context) -> Vec<Diagnostic> {
    let facts = cx.facts;
    let mut out = Vec::new();
    // Asked once per file and once per function, not per sleep: a function with thousands of
    // sleeps must not scan its body (or the file) thousands of times.
    let tokio = cx.facts.imports.mentions_crate("tokio") || cx.src.text.contains("tokio::");
    let mut not_send = std::collections::HashMap::new();
    for sleep in facts.sleeps.iter().filter(|s| s.blocking) {
        if !facts.runs_on_executor(sleep.function) {
            continue;
        }
        // An async block that is nothing but the sleep is a deliberate sleep future for a
        // runtime that drives it on its own thread.
        if sleep
            .function
            .is_some_and(|f| facts.functions[f].only_sleeps)
        {
            continue;
        }
        let mut d = Diagnostic::new(
            &RULE,
            sleep.span,
            "`std::thread::sleep` blocks the async executor thread",
        )
        .label("every task on this worker thread stalls for the whole wait")
        .help(format!(
            "use `tokio::time::sleep({}).await`; between retries, `timeoutlint_retry::RetryPolicy` waits without blocking",
            if sleep.duration.is_empty() { "d" } else { &sleep.duration }
        ));
        if let Some(f) = sleep.function {
            let func = &facts.functions[f];
            let line = cx.src.line_span(cx.src.line_index(func.span.start));
            let head = crate::base::source::Span::new(func.span.start, line.end.min(func.span.end));
            d = d.related(head, "async context");
        }
        if let Some(fix) = fix(cx, sleep, tokio, &mut not_send) {
            d = d.fix(fix);
        }
        out.push(d);
    }
    out
}

/// `std::thread::sleep(d)` -> `tokio::time::sleep(d).await`, keeping the argument's text.
/// `tokio`: evidence of tokio in the file (the rewrite names it, so elsewhere it is a guess);
/// `not_send`: the `!Send` risk of each function already asked.
fn fix(
    cx: &Context,
    sleep: &crate::analysis::Sleep,
    tokio: bool,
    not_send: &mut std::collections::HashMap<usize, bool>,
) -> Option<Fix> {
    let f = sleep.function?;
    let func = &cx.facts.functions[f];
    if !func.is_async {
        return None;
    }
    let args = slices::call_args(&cx.src.text, sleep.span)?;
    // A lock guard or `Rc` held across the new `.await` makes the future `!Send`, which
    // `tokio::spawn` rejects: then the fix needs review.
    let not_send_risk = *not_send.entry(f).or_insert_with(|| {
        let body = cx.src.slice(func.span);
        ["lock()", "borrow_mut()", "borrow()", "Rc::", "RefCell"]
            .iter()
            .any(|w| body.contains(w))
    });
    Some(Fix {
        title: "wait with `tokio::time::sleep(..).await`".into(),
        applicability: if tokio && !not_send_risk {
            Applicability::MachineApplicable
        } else {
            Applicability::MaybeIncorrect
        },
        edits: vec![Edit {
            span: sleep.span,
            replacement: format!("tokio::time::sleep{}.await", cx.src.slice(args)),
        }],
    })
}

/// Cap the fix of a finding of this rule by what the crate's manifest says about tokio (the
/// edge reads the manifest; the rule sees one file): the rewrite calls `tokio::time::sleep`,
/// which does not compile without tokio's `time` feature, so then the fix says so and is at
/// most `MaybeIncorrect`, whatever the file's own evidence of tokio.
pub fn cap_for_manifest(d: &mut Diagnostic, tokio: crate::walk::crates::TokioTime) {
    use crate::walk::crates::TokioTime;
    if !RULE.is(d.rule) {
        return;
    }
    let Some(fix) = &mut d.fix else { return };
    let why = match tokio {
        TokioTime::Enabled => return,
        TokioTime::Missing => {
            "the crate's tokio dependency has no `time` feature on every target: add `features = [\"time\"]`"
        }
        TokioTime::NoTokio => "the crate's Cargo.toml does not depend on tokio",
    };
    fix.title = format!("{} ({why})", fix.title);
    if fix.applicability == Applicability::MachineApplicable {
        fix.applicability = Applicability::MaybeIncorrect;
    }
}
