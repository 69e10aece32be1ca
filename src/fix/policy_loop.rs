//! Rewrites one shape of retry loop onto `timeoutlint_retry::RetryPolicy`: the same attempt
//! count, the per-attempt timeout as the policy's attempt cap, and one deadline over the whole.
//!
//! The shape (anything else gets no rewrite, because its control flow cannot be kept):
//!
//! ```text
//! for PAT in A..B {                 // or A..=B, integer literals: N attempts
//!     match CALL.await {            // or timeout(D, CALL).await, the per-attempt timer
//!         Ok(P) => return E,        // Ok(Ok(P)) under a timer; the only success arm
//!         <failure arms>            // Err(..), Ok(Err(..)), _: no return, break, ?, assignment
//!     }
//!     <waits>                       // only `..sleep(..).await;` statements
//! }
//! ```
//!
//! becomes a policy built right there and `if let Ok(P) = policy.call().classify(retry
//! everything).run(|_attempt| CALL).await { return E; }`, so the code after the loop still runs
//! when every attempt failed. Deliberately absent: keeping what the failure arms did per attempt
//! (they log or wait; the runtime traces each attempt and owns the waits), and any loop whose
//! failure path carries state to the code after it.

use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::analysis::span_of;
use crate::base::diagnostic::Edit;
use crate::base::source::{SourceFile, Span};

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
    /// The edit replacing the loop.
    pub edit: Edit,
    /// The attempt cap is a placeholder to replace.
    pub placeholder: bool,
}

/// The rewrite of the `for` loop whose keyword is at `anchor`, or `None` when it is not the
/// shape above.
#[must_use]
pub fn rewrite(
    src: &SourceFile,
    ast: &syn::File,
    anchor: Span,
    per: &PerAttempt,
) -> Option<Rewrite> {
    let l = find_for(src, ast, anchor)?;
    let attempts = count(&l.expr)?;
    let bound = crate::fix::syntax::bound_names(&syn::Expr::ForLoop(l.clone()));
    let mut matched = None;
    let mut waits = false;
    for stmt in &l.body.stmts {
        match stmt {
            syn::Stmt::Expr(syn::Expr::Match(m), _) if matched.is_none() => matched = Some(m),
            syn::Stmt::Expr(e, Some(_)) if is_wait(e) => waits = true,
            _ => return None,
        }
    }
    let m = matched?;
    let syn::Expr::Await(awaited) = &*m.expr else {
        return None;
    };
    let (call, cap, timer) = match per {
        PerAttempt::Timer(callee) => {
            let syn::Expr::Call(c) = &*awaited.base else {
                return None;
            };
            if span_of(src, c.func.span()) != *callee || c.args.len() != 2 {
                return None;
            }
            let d = text(src, &c.args[0]);
            (&c.args[1], Some(d), true)
        }
        PerAttempt::Client(d) => (&*awaited.base, d.clone(), false),
    };
    let (pat_syn, ret) = success_arm(&m.arms, timer)?;
    let pat = text(src, pat_syn);
    // The call and the success arm move out of the loop: nothing they read may be bound in it.
    // The success arm may read what its own pattern binds.
    let own = pat_names(pat_syn);
    let reads_loop = |e: &syn::Expr| {
        crate::fix::syntax::free_names(e)
            .iter()
            .any(|n| bound.contains(n) && !own.contains(n))
    };
    if reads_loop(call)
        || reads_loop(&ret)
        || cap
            .as_deref()
            .is_some_and(|d| bound.iter().any(|b| crate::fix::syntax::has_word(d, b)))
    {
        return None;
    }
    let loop_span = span_of(src, l.span());
    let func = enclosing_fn_text(src, ast, loop_span)?;
    let name = ["policy", "retry_policy"]
        .into_iter()
        .find(|n| !crate::fix::syntax::has_word(&func, n))?;
    let indent = crate::fix::syntax::indent_before(src, loop_span.start)?;
    let duration = duration_path(ast);
    let placeholder = cap.is_none();
    let cap = cap.unwrap_or_else(|| {
        format!("/* the client's per-attempt timeout */ {duration}::from_secs(30)")
    });
    let total = format!("{} * {attempts}", crate::fix::slices::receiver(&cap));
    let i = &indent;
    let backoff = if waits {
        String::new()
    } else {
        // The loop went straight to the next attempt.
        format!("\n{i}    .backoff_none()")
    };
    let replacement = format!(
        "let {name} = timeoutlint_retry::RetryPolicy::builder()
{i}    .max_attempts({attempts})
{i}    .attempt_timeout({cap})
{i}    // The old worst case, attempts x timeout: choose the caller's real budget.
{i}    .total({total}){backoff}
{i}    .build()
{i}    .expect(\"an attempt cap and a deadline make a valid policy\");
{i}if let {pat} = {name}
{i}    .call()
{i}    // The loop retried every error; remove this line to let the error's `Classify` decide.
{i}    .classify(|_| timeoutlint_retry::Outcome::Retryable)
{i}    .run(|_attempt| {call})
{i}    .await
{i}{{
{i}    return {ret};
{i}}}",
        pat = format_args!("Ok({pat})"),
        call = text(src, call),
        ret = text(src, &ret),
    );
    Some(Rewrite {
        edit: Edit {
            span: loop_span,
            replacement,
        },
        placeholder,
    })
}

fn text(src: &SourceFile, e: &impl Spanned) -> String {
    src.slice(span_of(src, e.span())).to_string()
}

/// The `for` loop whose `for` keyword is at `anchor`.
fn find_for(src: &SourceFile, ast: &syn::File, anchor: Span) -> Option<syn::ExprForLoop> {
    struct V<'a> {
        src: &'a SourceFile,
        anchor: Span,
        found: Option<syn::ExprForLoop>,
    }
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_expr_for_loop(&mut self, l: &'ast syn::ExprForLoop) {
            if span_of(self.src, l.for_token.span) == self.anchor && l.label.is_none() {
                self.found = Some(l.clone());
            }
            syn::visit::visit_expr_for_loop(self, l);
        }
    }
    let mut v = V {
        src,
        anchor,
        found: None,
    };
    v.visit_file(ast);
    v.found
}

/// The number of iterations of `A..B` / `A..=B` over integer literals, when at least one.
fn count(range: &syn::Expr) -> Option<u64> {
    let syn::Expr::Range(r) = range else {
        return None;
    };
    let lit = |e: &Option<Box<syn::Expr>>| -> Option<u64> {
        match e.as_deref()? {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_parse().ok(),
            _ => None,
        }
    };
    let (a, b) = (lit(&r.start)?, lit(&r.end)?);
    let n = match r.limits {
        syn::RangeLimits::HalfOpen(_) => b.checked_sub(a)?,
        syn::RangeLimits::Closed(_) => b.checked_sub(a)? + 1,
    };
    (1..=u64::from(u32::MAX)).contains(&n).then_some(n)
}

/// `..sleep(..).await`: a wait the policy's backoff replaces.
fn is_wait(e: &syn::Expr) -> bool {
    let syn::Expr::Await(a) = e else { return false };
    let syn::Expr::Call(c) = &*a.base else {
        return false;
    };
    let syn::Expr::Path(p) = &*c.func else {
        return false;
    };
    p.path.segments.last().is_some_and(|s| s.ident == "sleep")
}

/// The success arm's pattern inside `Ok(..)` (inside `Ok(Ok(..))` under a timer) and the value
/// it returns; every other arm must be a failure arm that only observes.
fn success_arm(arms: &[syn::Arm], timer: bool) -> Option<(&syn::Pat, syn::Expr)> {
    let mut found = None;
    for arm in arms {
        if let Some(inner) = ok_inner(&arm.pat, timer) {
            if found.is_some() || arm.guard.is_some() {
                return None;
            }
            found = Some((inner, returned(&arm.body)?));
        } else if !failure_pat(&arm.pat, timer) || !only_observes(&arm.body) {
            return None;
        }
    }
    found
}

/// The names a pattern binds.
fn pat_names(pat: &syn::Pat) -> std::collections::BTreeSet<String> {
    struct V(std::collections::BTreeSet<String>);
    impl<'ast> Visit<'ast> for V {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.insert(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut v = V(std::collections::BTreeSet::new());
    v.visit_pat(pat);
    v.0
}

/// `P` of `Ok(P)`, or of `Ok(Ok(P))` under a timer.
fn ok_inner(pat: &syn::Pat, timer: bool) -> Option<&syn::Pat> {
    let inner = ok_of(pat)?;
    if timer {
        ok_of(inner)
    } else {
        Some(inner)
    }
}

/// `P` of `Ok(P)`.
fn ok_of(pat: &syn::Pat) -> Option<&syn::Pat> {
    let syn::Pat::TupleStruct(t) = pat else {
        return None;
    };
    (t.path.is_ident("Ok") && t.elems.len() == 1).then(|| &t.elems[0])
}

/// `Err(..)`, `_`, `Ok(Err(..))` under a timer, or an or-pattern of those.
fn failure_pat(pat: &syn::Pat, timer: bool) -> bool {
    match pat {
        syn::Pat::Wild(_) => true,
        syn::Pat::Or(o) => o.cases.iter().all(|c| failure_pat(c, timer)),
        syn::Pat::TupleStruct(t) if t.elems.len() == 1 => {
            t.path.is_ident("Err")
                || (timer
                    && t.path.is_ident("Ok")
                    && matches!(&t.elems[0], syn::Pat::TupleStruct(e) if e.path.is_ident("Err")))
        }
        _ => false,
    }
}

/// `return E`, `{ return E; }` or `{ return E }`: the `E`.
fn returned(body: &syn::Expr) -> Option<syn::Expr> {
    match body {
        syn::Expr::Return(r) => r.expr.as_deref().cloned(),
        syn::Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
            syn::Stmt::Expr(e, _) => returned(e),
            _ => None,
        },
        _ => None,
    }
}

/// A failure arm whose dropping loses no control flow and no state: no `return`, `break`,
/// `continue`, `?` or assignment (logging, metrics and waits are fine).
fn only_observes(body: &syn::Expr) -> bool {
    struct V(bool);
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = false;
        }
        fn visit_expr_break(&mut self, _: &'ast syn::ExprBreak) {
            self.0 = false;
        }
        fn visit_expr_continue(&mut self, _: &'ast syn::ExprContinue) {
            self.0 = false;
        }
        fn visit_expr_try(&mut self, _: &'ast syn::ExprTry) {
            self.0 = false;
        }
        fn visit_expr_assign(&mut self, _: &'ast syn::ExprAssign) {
            self.0 = false;
        }
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            use syn::BinOp as B;
            if matches!(
                b.op,
                B::AddAssign(_)
                    | B::SubAssign(_)
                    | B::MulAssign(_)
                    | B::DivAssign(_)
                    | B::RemAssign(_)
                    | B::BitXorAssign(_)
                    | B::BitAndAssign(_)
                    | B::BitOrAssign(_)
                    | B::ShlAssign(_)
                    | B::ShrAssign(_)
            ) {
                self.0 = false;
            }
            syn::visit::visit_expr_binary(self, b);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            // Recording the error somewhere the code after the loop reads.
            if ["push", "insert", "extend", "replace", "set", "push_str"]
                .iter()
                .any(|n| m.method == n)
            {
                self.0 = false;
            }
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut v = V(true);
    v.visit_expr(body);
    v.0
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
    Some(if ms % 1000 == 0 {
        format!("{path}::from_secs({})", ms / 1000)
    } else {
        format!("{path}::from_millis({ms})")
    })
}
