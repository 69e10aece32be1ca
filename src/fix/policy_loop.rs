//! Rewrites a counted retry loop onto `timeoutlint_retry::RetryPolicy`: the same number of
//! attempts, the per-attempt timeout as the policy's attempt cap, one deadline over the whole,
//! and the loop's own flow kept: what it returns on success, what it logs after a failed
//! attempt, and how it gives up.
//!
//! The shapes are read by [`crate::fix::loop_shape`] (`for` over a range, `while c < n`, a
//! counted `loop` with a give-up arm; `match` or `if let` on the awaited call). The rewrite:
//!
//! ```text
//! let policy = RetryPolicy::builder().max_attempts(N).attempt_timeout(D).total(D * N)
//!     [.backoff_none() when the loop did not wait].build().expect(..);
//! match policy.call().classify(retry everything).run(|attempt| {
//!     let call = CALL;                       // built per attempt, as the loop did
//!     async move {
//!         let result = call.await;
//!         match &result { <the failure arms' logging>, _ => {} }   // per attempt
//!         result
//!     }
//! }).await {
//!     Ok(P) => <the success exit>,           // `return E`, or the value `E` of `break E`
//!     Err(error) => <the give-up>,           // the last attempt's error, as the loop had it
//! }
//! ```
//!
//! A `for` or `while` falls out of the loop after its last attempt: there the match is `if let
//! Ok(P) = .. { exit }`, and a count that may be zero (`0..n`) builds the policy in an `if let
//! Ok(..)` (the builder refuses zero attempts; the loop then made none). Counts from the source
//! stay expressions (`u32::try_from(n)`, saturating). The runtime has no per-attempt error hook,
//! so the logging runs inside the attempt's future, over a borrow of the result; the locals it
//! reads are borrowed in the attempt's closure, so the future moves in a copy of the borrow. On
//! a counted `loop`'s last attempt the give-up arm ran instead of the failure arms: the logging
//! skips `attempt.is_last()`, and the give-up body runs after the policy gave up. Under a timer
//! the loop's timed-out arms have no future to run in (the runtime's timer ends that attempt and
//! traces it); a timed-out give-up is taken when the last attempt timed out. A client's give-up
//! that returns the error itself gets no rewrite: when the runtime's timer ends the last attempt
//! there is no error to return.
//!
//! Deliberately absent: keeping the loop's own waits (the runtime owns the waits), and any
//! shape [`crate::fix::loop_shape`] does not read.

use std::fmt::Write as _;

use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::analysis::span_of;
use crate::base::diagnostic::Edit;
use crate::base::source::{SourceFile, Span};
use crate::fix::loop_shape::{self, Bound, Count, Exit, Shape};

/// What bounds each attempt of the loop.
#[derive(Debug, Clone)]
pub enum PerAttempt {
    /// A `timeout(D, CALL)` whose callee is at this span, inside the loop: it is removed and `D`
    /// becomes the attempt cap.
    Timer(Span),
    /// The client's own timeout: the attempt cap is this expression (`None`: unknown, written as
    /// a placeholder), and the request stays as it is.
    Client(Option<String>),
}

/// A rewrite of one loop.
#[derive(Debug, Clone)]
pub struct Rewrite {
    /// The edits: the loop replaced, and its counter's `let` removed.
    pub edits: Vec<Edit>,
    /// The attempt cap is a placeholder to replace.
    pub placeholder: bool,
}

/// The rewrite of the loop whose keyword is at `anchor`, or `None` when its flow cannot be kept.
#[must_use]
pub fn rewrite(
    src: &SourceFile,
    ast: &syn::File,
    anchor: Span,
    per: &PerAttempt,
) -> Option<Rewrite> {
    let bound = match per {
        PerAttempt::Timer(callee) => Bound::Timer(*callee),
        PerAttempt::Client(_) => Bound::Client,
    };
    let shape = loop_shape::read(src, ast, anchor, bound)?;
    let cap = match per {
        PerAttempt::Timer(_) => shape.timer.clone(),
        PerAttempt::Client(d) => d.clone(),
    };
    let func = enclosing_fn_text(src, ast, shape.loop_span)?;
    let fresh = |candidates: &[&str]| {
        candidates
            .iter()
            .find(|n| !crate::fix::syntax::has_word(&func, n))
            .map(|n| (*n).to_string())
    };
    let names = Names {
        policy: fresh(&["policy", "retry_policy"])?,
        attempt: fresh(&["attempt", "retry_attempt", "this_attempt"])?,
        call: fresh(&["call", "attempt_call", "request_future"])?,
        result: fresh(&["result", "attempt_result", "outcome"])?,
        last: fresh(&["last", "is_last_attempt"])?,
        error: fresh(&["error", "retry_error", "gave_up"])?,
        timed_out: fresh(&["timed_out", "last_timed_out"])?,
    };
    // A loop used as a value (`let v = loop {..}`) starts mid-line: its line's indentation.
    let indent = match crate::fix::syntax::indent_before(src, shape.loop_span.start) {
        Some(i) => i,
        None if shape.exit == Exit::Break => {
            let line = src.line_span(src.line_index(shape.loop_span.start));
            let text = src.text.get(line.start..shape.loop_span.start)?;
            text[..text.len() - text.trim_start().len()].to_string()
        }
        None => return None,
    };
    let duration = duration_path(ast);
    let placeholder = cap.is_none();
    let cap = cap.unwrap_or_else(|| {
        format!("/* the client's per-attempt timeout */ {duration}::from_secs(30)")
    });
    let replacement = emit(src, &shape, &names, &cap, &indent);
    let mut edits = vec![Edit {
        span: shape.loop_span,
        replacement,
    }];
    if let Some(l) = shape.counter_let {
        edits.push(Edit {
            span: l,
            replacement: String::new(),
        });
    }
    Some(Rewrite { edits, placeholder })
}

/// The names the rewrite introduces, none of them used in the function.
struct Names {
    policy: String,
    attempt: String,
    call: String,
    result: String,
    last: String,
    error: String,
    timed_out: String,
}

/// The attempt count as a `u32` expression.
fn attempts(count: &Count) -> String {
    match count {
        Count::Lit(n) => n.to_string(),
        Count::Expr {
            base,
            plus,
            at_least_one,
        } => {
            let b = crate::fix::slices::receiver(base);
            // Negative counts make no attempt, counts beyond `u32` as many as the runtime has.
            let mut s = format!(
                "u32::try_from({base}).unwrap_or_else(|_| if {b} > 0 {{ u32::MAX }} else {{ 0 }})"
            );
            match plus.cmp(&0) {
                std::cmp::Ordering::Greater => {
                    let _ = write!(s, ".saturating_add({plus})");
                }
                std::cmp::Ordering::Less => {
                    let _ = write!(s, ".saturating_sub({})", plus.unsigned_abs());
                }
                std::cmp::Ordering::Equal => {}
            }
            if *at_least_one {
                s.push_str(".max(1)");
            }
            s
        }
    }
}

/// `k + offset` for attempt number `k` (a `u32` or a `usize` expression).
fn plus_offset(k: &str, offset: i64) -> String {
    match offset.cmp(&0) {
        std::cmp::Ordering::Greater => format!("{k} + {offset}"),
        std::cmp::Ordering::Equal => k.to_string(),
        std::cmp::Ordering::Less => format!("{k}.saturating_sub({})", offset.unsigned_abs()),
    }
}

/// Lines with their nesting depth, joined under the loop's indentation.
struct Lines {
    base: String,
    out: String,
}

impl Lines {
    fn line(&mut self, depth: usize, text: &str) {
        if !self.out.is_empty() {
            self.out.push('\n');
            self.out.push_str(&self.base);
        }
        for _ in 0..depth {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
    }
}

fn emit(src: &SourceFile, shape: &Shape, names: &Names, cap: &str, indent: &str) -> String {
    let mut out = Lines {
        base: indent.to_string(),
        out: String::new(),
    };
    let value = shape.exit == Exit::Break;
    // A block around the rewrite when it is a value.
    let block = value;
    let mut depth = 0;
    if block {
        out.line(0, "{");
        depth = 1;
    }
    let count = attempts(&shape.count);
    let may_be_zero = matches!(
        shape.count,
        Count::Expr {
            at_least_one: false,
            ..
        }
    );
    let total = match shape.count {
        Count::Lit(k) => format!("{} * {k}", crate::fix::slices::receiver(cap)),
        Count::Expr { .. } => format!(
            "{}.saturating_mul({count})",
            crate::fix::slices::receiver(cap)
        ),
    };
    let builder_head = if may_be_zero {
        format!(
            "if let Ok({}) = timeoutlint_retry::RetryPolicy::builder()",
            names.policy
        )
    } else {
        format!(
            "let {} = timeoutlint_retry::RetryPolicy::builder()",
            names.policy
        )
    };
    out.line(depth, &builder_head);
    out.line(depth + 1, &format!(".max_attempts({count})"));
    out.line(depth + 1, &format!(".attempt_timeout({cap})"));
    out.line(
        depth + 1,
        "// The old worst case, attempts x timeout: choose the caller's real budget.",
    );
    out.line(depth + 1, &format!(".total({total})"));
    if !shape.waits {
        // The loop went straight to the next attempt.
        out.line(depth + 1, ".backoff_none()");
    }
    if may_be_zero {
        // The builder refuses zero attempts: then the loop made none either.
        out.line(depth + 1, ".build()");
        out.line(depth, "{");
        depth += 1;
    } else {
        out.line(depth + 1, ".build()");
        out.line(
            depth + 1,
            ".expect(\"an attempt cap and a deadline make a valid policy\");",
        );
    }
    let call = src.slice(shape.call);
    let (spat, sleave) = &shape.success;
    let head = match &shape.give_up {
        None => format!("if let Ok({spat}) = {}", names.policy),
        Some(_) => format!("match {}", names.policy),
    };
    out.line(depth, &head);
    out.line(depth + 1, ".call()");
    out.line(
        depth + 1,
        "// The loop retried every error; remove this line to let the error's `Classify` decide.",
    );
    out.line(
        depth + 1,
        ".classify(|_| timeoutlint_retry::Outcome::Retryable)",
    );
    if shape.logging.is_empty() {
        out.line(depth + 1, &format!(".run(|_attempt| {call})"));
    } else {
        let uses_attempt =
            shape.give_up.is_some() || shape.counter.as_ref().is_some_and(|c| c.in_logging);
        let param = if uses_attempt {
            names.attempt.as_str()
        } else {
            "_attempt"
        };
        out.line(depth + 1, &format!(".run(|{param}| {{"));
        let inner = depth + 2;
        if let Some(c) = shape.counter.as_ref().filter(|c| c.in_logging) {
            out.line(
                inner,
                &format!(
                    "let {} = {};",
                    c.name,
                    plus_offset(&format!("{}.number", names.attempt), c.offset)
                ),
            );
        }
        if shape.give_up.is_some() {
            out.line(
                inner,
                &format!("let {} = {}.is_last();", names.last, names.attempt),
            );
        }
        out.line(inner, &format!("let {} = {call};", names.call));
        // The future gets a copy of a borrow, not the local (the closure runs once per attempt).
        for b in &shape.borrows {
            out.line(inner, &format!("let {b} = &{b};"));
        }
        out.line(inner, "async move {");
        out.line(
            inner + 1,
            &format!("let {} = {}.await;", names.result, names.call),
        );
        let mut log_depth = inner + 1;
        if shape.give_up.is_some() {
            // The give-up arm, not the failure arms, ran after the last attempt.
            out.line(log_depth, &format!("if !{} {{", names.last));
            log_depth += 1;
        }
        let arms: Vec<_> = shape
            .logging
            .iter()
            .filter(|piece| piece.pat.is_some())
            .collect();
        if !arms.is_empty() {
            out.line(log_depth, &format!("match &{} {{", names.result));
            for arm in &arms {
                let guard = arm
                    .guard
                    .as_ref()
                    .map(|guard| format!(" if {guard}"))
                    .unwrap_or_default();
                out.line(
                    log_depth + 1,
                    &format!(
                        "{}{guard} => {{ {} }}",
                        arm.pat.as_deref().unwrap_or("_"),
                        arm.body
                    ),
                );
            }
            out.line(log_depth + 1, "_ => {}");
            out.line(log_depth, "}");
        }
        let after: Vec<_> = shape
            .logging
            .iter()
            .filter(|piece| piece.pat.is_none())
            .collect();
        if !after.is_empty() {
            out.line(log_depth, &format!("if {}.is_err() {{", names.result));
            for stmt in after {
                out.line(log_depth + 1, &stmt.body);
            }
            out.line(log_depth, "}");
        }
        if shape.give_up.is_some() {
            out.line(inner + 1, "}");
        }
        out.line(inner + 1, &names.result);
        out.line(inner, "}");
        out.line(depth + 1, "})");
    }
    out.line(depth + 1, ".await");
    match &shape.give_up {
        None => {
            out.line(depth, "{");
            match sleave.text.strip_prefix("return") {
                Some(rest) if !sleave.text.starts_with('{') => {
                    out.line(depth + 1, &format!("return{rest};"));
                }
                _ => out.line(depth + 1, &sleave.text),
            }
            out.line(depth, "}");
        }
        Some(give_up) => {
            out.line(depth, "{");
            out.line(depth + 1, &format!("Ok({spat}) => {},", sleave.text));
            let count_line = shape.counter.as_ref().and_then(|c| {
                let reads = give_up.otherwise.reads_counter
                    || give_up
                        .on_error
                        .as_ref()
                        .is_some_and(|(_, x)| x.reads_counter);
                reads.then(|| {
                    format!(
                        "let {} = {};",
                        c.name,
                        plus_offset(&format!("{}.attempts()", names.error), c.offset)
                    )
                })
            });
            match (&give_up.on_error, &count_line) {
                (None, None) => {
                    out.line(depth + 1, &format!("Err(_) => {},", give_up.otherwise.text));
                }
                (None, Some(c)) => {
                    out.line(depth + 1, &format!("Err({}) => {{", names.error));
                    out.line(depth + 2, c);
                    out.line(depth + 2, &give_up.otherwise.text);
                    out.line(depth + 1, "}");
                }
                (Some((pe, body)), c) => {
                    out.line(depth + 1, &format!("Err({}) => {{", names.error));
                    if let Some(c) = c {
                        out.line(depth + 2, c);
                    }
                    out.line(
                        depth + 2,
                        &format!(
                            "let {} = {}.history().last().is_some_and(|r| r.end == timeoutlint_retry::AttemptEnd::TimedOut);",
                            names.timed_out, names.error
                        ),
                    );
                    out.line(
                        depth + 2,
                        &format!("match {}.into_last_error() {{", names.error),
                    );
                    out.line(
                        depth + 3,
                        &format!("Some({pe}) if !{} => {},", names.timed_out, body.text),
                    );
                    out.line(depth + 3, &format!("_ => {},", give_up.otherwise.text));
                    out.line(depth + 2, "}");
                    out.line(depth + 1, "}");
                }
            }
            out.line(depth, "}");
        }
    }
    if may_be_zero {
        depth -= 1;
        out.line(depth, "}");
    }
    if block {
        out.line(0, "}");
    }
    out.out
}

/// The text of the innermost `fn` around `at` (for name clashes).
fn enclosing_fn_text(src: &SourceFile, ast: &syn::File, at: Span) -> Option<String> {
    struct V<'a> {
        src: &'a SourceFile,
        at: Span,
        found: Option<Span>,
    }
    impl V<'_> {
        fn hit(&mut self, span: proc_macro2::Span) {
            let s = span_of(self.src, span);
            if s.contains(self.at) {
                self.found = Some(s);
            }
        }
    }
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            self.hit(f.span());
            syn::visit::visit_item_fn(self, f);
        }
        fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
            self.hit(f.span());
            syn::visit::visit_impl_item_fn(self, f);
        }
        fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
            self.hit(f.span());
            syn::visit::visit_trait_item_fn(self, f);
        }
    }
    let mut v = V {
        src,
        at,
        found: None,
    };
    v.visit_file(ast);
    v.found.map(|s| src.slice(s).to_string())
}

/// `Duration` when a `use` of the file names it from `std::time` or `tokio::time`, else the
/// full path.
#[must_use]
pub fn duration_path(ast: &syn::File) -> &'static str {
    use quote::ToTokens;
    let imported = ast.items.iter().any(|i| {
        let syn::Item::Use(u) = i else { return false };
        let t = u.to_token_stream().to_string();
        t.contains("Duration") && t.contains("time")
    });
    if imported {
        "Duration"
    } else {
        "std::time::Duration"
    }
}

/// A duration written as a constructor over a literal (`Duration::from_secs(30)`,
/// `std::time::Duration::from_millis(500)`), rewritten with `path` for `Duration`: the only
/// form that means the same in another function.
#[must_use]
pub fn portable_duration(text: &str, path: &str) -> Option<String> {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let t = t.strip_prefix("std::time::").unwrap_or(&t);
    let t = t.strip_prefix("tokio::time::").unwrap_or(t);
    let rest = t.strip_prefix("Duration::")?;
    let (ctor, arg) = rest.split_once('(')?;
    let arg = arg.strip_suffix(')')?;
    let known = ["from_secs", "from_millis", "from_micros", "from_nanos"];
    (known.contains(&ctor)
        && !arg.is_empty()
        && arg.chars().all(|c| c.is_ascii_digit() || c == '_'))
    .then(|| format!("{path}::{ctor}({arg})"))
}

/// Seconds as a `Duration` constructor, for a timeout whose value the index computed.
#[must_use]
pub fn duration_of_secs(secs: f64, path: &str) -> Option<String> {
    if !(secs > 0.0 && secs < 1e9) {
        return None;
    }
    let ms = (secs * 1000.0).round();
    // Whole milliseconds only: anything finer was not a literal a person wrote.
    if (secs * 1000.0 - ms).abs() > 1e-6 {
        return None;
    }
    // `ms` is a positive whole number below 1e12, exact in both types.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ms = ms as u64;
    Some(if ms.is_multiple_of(1000) {
        format!("{path}::from_secs({})", ms / 1000)
    } else {
        format!("{path}::from_millis({ms})")
    })
}
