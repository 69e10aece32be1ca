//! `blocking-sleep-in-async`: `std::thread::sleep` where a future runs.
//!
//! Uses the function facts to decide whether the sleep runs on the executor: the nearest
//! enclosing `async fn`, `async` block or async closure, through sync closures, but not through
//! a closure handed to `spawn_blocking`, `block_in_place` or `thread::spawn`.

use crate::diagnostic::{Diagnostic, Severity};
use crate::rules::{Context, Rule};

pub(crate) static RULE: Rule = Rule {
    name: "blocking-sleep-in-async",
    summary: "`std::thread::sleep` inside async code blocks the executor thread",
    doc: include_str!("../../rules/blocking-sleep-in-async.md"),
    default_enabled: true,
    default_severity: Severity::Warning,
    fixable: false,
    triggers: &["@blocking-sleeps"],
    check,
};

fn check(cx: &Context) -> Vec<Diagnostic> {
    let facts = cx.facts;
    let mut out = Vec::new();
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
            let head = crate::source::Span::new(func.span.start, line.end.min(func.span.end));
            d = d.related(head, "async context");
        }
        out.push(d);
    }
    out
}
