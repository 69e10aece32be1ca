//! `retry-after-uncapped`: a wait whose length the server chose (`Retry-After`, a backoff hint
//! in an error body) with nothing capping it.
//!
//! Asks the facts for server-chosen waits that reach their sleep uncapped and reports each place
//! the value is chosen once, however many sleeps use it, at the first sleep (RULES.md's primary
//! location), with the place the value is read as related. Whether the wait sits at a retry site
//! does not matter: waiting as long as the server says is a retry wait wherever it is written.
//! Deliberately absent: a value carried through a struct field or a helper's return value.
//!
//! Fix (may be incorrect: the server asked for the longer wait): every known sleep the value
//! reaches gets `d.min(MAX_RETRY_AFTER)`, and `.min(deadline.saturating_duration_since(now))`
//! too when a deadline is in scope; `MAX_RETRY_AFTER` (60 s) is added to the sleep's module
//! unless it exists. A wait through an in-crate wrapper (whose argument type is unknown) gets
//! help text only.

use std::collections::BTreeMap;

use crate::analysis::retry_after::{HINT, SOURCES};
use crate::analysis::ServerWait;
use crate::base::diagnostic::{Applicability, Diagnostic, Edit, Fix, RuleInfo, Severity};
use crate::base::source::Span;
use crate::fix::{scope, slices};
use crate::prefilter::Trigger;
use crate::rules::{Context, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "retry-after-uncapped",
        summary: "server-chosen Retry-After wait with no cap by a maximum or the time left",
        doc: include_str!("../../../rules/retry-after-uncapped.md"),
        default_enabled: true,
        default_severity: Severity::Warning,
        fixable: true,
    },
    // The analysis matches exactly these spellings (see `analysis::retry_after`).
    triggers: &[
        Trigger::word(SOURCES[0]),
        // The header name as written in a string: not a word, so matched as text.
        Trigger::text(SOURCES[1]),
        Trigger::word(SOURCES[2]),
        Trigger::word(HINT),
    ],
    context: &[],
    kind: Kind::File(check),
};

fn check(cx: &Context) -> Vec<Diagnostic> {
    let facts = cx.facts;
    // One finding per place the server's value is chosen, with every sleep it reaches.
    let mut by_origin: BTreeMap<(usize, usize), Vec<&ServerWait>> = BTreeMap::new();
    for w in facts.server_waits.iter().filter(|w| !w.capped) {
        by_origin
            .entry((w.origin.start, w.origin.end))
            .or_default()
            .push(w);
    }
    by_origin
        .into_iter()
        .map(|((start, end), mut waits)| {
            // RULES.md puts the finding at the sleep that waits the server's value (the first, when
            // several do), with the place the value is read as related: the wait is the problem.
            waits.sort_by_key(|w| (w.wait.start, w.wait.end));
            let origin = Span::new(start, end);
            let mut d = Diagnostic::new(
                &RULE,
                waits[0].wait,
                "server-chosen wait (`Retry-After`) is slept with no cap by a maximum or the time left",
            )
            .label("the server decides how long this waits")
            .note("a misconfigured or hostile server can park the caller for hours (`Retry-After: 86400`), past any deadline")
            .help("cap it: `retry_after.min(max_wait).min(deadline.saturating_duration_since(Instant::now()))`, or let `timeoutlint_retry::RetryPolicy::builder().retry_after_cap(..)` honour it within the budget");
            if !waits[0].wait.contains(origin) {
                d = d.related(origin, "the server's value is read here");
            }
            for w in &waits[1..] {
                d = d.related(w.wait, "waits the server's delay here too");
            }
            match cap_fix(cx, &waits) {
                Some(fix) => d.fix(fix),
                None => d,
            }
        })
        .collect()
}

/// The constant the fix caps server waits by (reused when the module already defines it).
const CAP_NAME: &str = "MAX_RETRY_AFTER";

/// `sleep(d)` -> `sleep(d.min(MAX_RETRY_AFTER))` (and `.min(time left)` with a deadline in
/// scope) at every wait, plus the constant when its module lacks it. Every wait must be a known
/// sleep, whose single argument is a `Duration`; otherwise no fix.
fn cap_fix(cx: &Context, waits: &[&ServerWait]) -> Option<Fix> {
    let facts = cx.facts;
    let duration = scope::duration(facts);
    let mut edits = Vec::new();
    let mut deadline_name = None;
    for w in waits {
        let sleep = &facts.sleeps[w.sleep?];
        // `sleep_until(instant)` waits for a point in time: a `Duration` cap does not apply.
        if sleep.path.ends_with("_until") {
            return None;
        }
        let args = slices::call_args(&cx.src.text, w.wait)?;
        let inner = Span::new(args.start + 1, args.end - 1);
        let arg = cx.src.slice(inner);
        if arg.trim().is_empty() || arg.contains(',') || arg.contains(CAP_NAME) {
            return None;
        }
        // `d.into()` takes its type from the sleep's parameter; `.min` on it would not infer.
        let mut capped = if arg.trim_end().ends_with(".into()") {
            format!("std::cmp::min({}, {CAP_NAME})", arg.trim())
        } else {
            format!("{}.min({CAP_NAME})", slices::receiver(arg))
        };
        if let Some((name, instant)) = scope::deadline(cx.src, facts, sleep.function) {
            use std::fmt::Write as _;
            let _ = write!(
                capped,
                ".min({name}.saturating_duration_since({instant}::now()))"
            );
            deadline_name = Some(name);
        }
        edits.push(Edit {
            span: inner,
            replacement: capped,
        });
    }
    let (at, indent, exists) = const_place(cx, waits.first()?.wait);
    if !exists {
        // Every fix in one module inserts at the same point, so the engine applies one of them
        // per round and the next round finds the constant already there.
        let sep = if at > 0 && !cx.src.text[..at].ends_with('\n') {
            "\n"
        } else {
            ""
        };
        edits.push(Edit {
            span: Span::new(at, at),
            replacement: format!(
                "{sep}\n{indent}/// The longest wait a server's `Retry-After` may impose; a longer hint is cut to this.\n{indent}const {CAP_NAME}: {duration} = {duration}::from_secs(60);\n"
            ),
        });
    }
    Some(Fix {
        title: match &deadline_name {
            Some(n) => {
                format!("cap the server's wait at `{CAP_NAME}` and by the time left before `{n}`")
            }
            None => format!("cap the server's wait at `{CAP_NAME}`"),
        },
        // Waiting less than the server asked can be answered with another 429, and the 60 s
        // ceiling is a default to review.
        applicability: Applicability::MaybeIncorrect,
        edits,
    })
}

/// Where the cap constant goes for a wait at `at`: the end of the innermost inline `mod` around
/// it (before its closing brace), or the end of the file; the indentation of items there; and
/// whether that module already defines the constant.
fn const_place(cx: &Context, at: Span) -> (usize, String, bool) {
    use syn::spanned::Spanned;
    let defines = |items: &[syn::Item]| {
        items
            .iter()
            .any(|i| matches!(i, syn::Item::Const(c) if c.ident == CAP_NAME))
    };
    let mut items: &[syn::Item] = &cx.ast.items;
    let mut place = (cx.src.text.len(), String::new(), defines(items));
    'descend: loop {
        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            let Some((brace, inner)) = &m.content else {
                continue;
            };
            let span = crate::analysis::span_of(cx.src, m.span());
            if !span.contains(at) {
                continue;
            }
            let close = crate::analysis::span_of(cx.src, brace.span.close()).start;
            let line = cx.src.line_span(cx.src.line_index(span.start));
            let outer: String = cx
                .src
                .slice(line)
                .chars()
                .take_while(|c| c.is_whitespace())
                .collect();
            // Before the closing brace's line when it stands alone, else right before it.
            let close_line = cx.src.line_span(cx.src.line_index(close));
            let alone = cx.src.text[close_line.start..close].trim().is_empty();
            let pos = if alone { close_line.start } else { close };
            place = (pos, format!("{outer}    "), defines(inner));
            items = inner;
            continue 'descend;
        }
        break;
    }
    place
}
