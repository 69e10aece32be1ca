//! The flow of a retry loop the policy rewrite can keep, read from its syntax: how many attempts
//! it makes, the one call it repeats, how it leaves on success, what it does after a failure
//! (logging, waits) and, for a counted `loop`, how it gives up.
//!
//! Three loop forms, each with a counted number of attempts:
//!
//! ```text
//! for PAT in A..B { BODY }              // A..=B too; A a literal, B a literal or a pure expression
//! let mut c = S; while c < N { BODY }   // or c <= N; `c += 1;` once, anywhere at the top of BODY
//! let mut c = S; loop { BODY }          // `c += 1;` before or after the attempt; a give-up arm
//!                                       // `Err(..) if c >= N` (or >, or N <= c, N < c) in it
//! ```
//!
//! where BODY is, at its top level, the counter's increment, one attempt statement, waits
//! (`..sleep(..).await;`) and logging macro statements after the attempt. The attempt is
//! `match CALL.await { arms }` or `if let Ok(P) = CALL.await { exit } [else { logging }]` (the
//! `if let` form only in `for` and `while`, which fall out of the loop after the last attempt).
//! Arms are one success `Ok(P) => exit`, give-up arms (counted `loop` only) and failure arms that
//! only observe. Anything else, or anything read that the loop binds, gives no shape: a rewrite
//! that cannot keep the flow is not made.
//!
//! Deliberately absent: the policy text (that is [`crate::fix::policy_loop`]), and any
//! judgement of whether the loop is a problem (the rules decide).

use std::collections::BTreeSet;

use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::analysis::span_of;
use crate::base::source::{SourceFile, Span};

/// How many attempts the loop makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Count {
    /// A number known from literals (at least one).
    Lit(u64),
    /// An integer expression of the source (pure: paths, fields, literals, arithmetic) plus a
    /// constant, and whether it can come out as zero attempts (a `for` or `while` that never
    /// runs) or is at least one (a counted `loop` always makes its first attempt).
    Expr {
        /// The source expression.
        base: String,
        /// Added to it (negative: subtracted, saturating at zero).
        plus: i64,
        /// At least one attempt whatever `base` is.
        at_least_one: bool,
    },
}

/// How the loop is left on success or give-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// `return E` (or a body ending in it): kept as written.
    Return,
    /// `break E` of a loop used as a value: becomes the value `E`.
    Break,
}

/// One arm body that leaves the loop, as text with its `break` already made a value.
#[derive(Debug, Clone)]
pub struct Leave {
    /// The body's text, ready to stand as a match arm's body after the policy's run.
    pub text: String,
    /// Names the body reads (the counter only in macros).
    pub reads_counter: bool,
}

/// The loop's give-up: what it does when the last attempt failed.
#[derive(Debug, Clone)]
pub struct GiveUp {
    /// After an error: the pattern binding it (`Err(PE)`'s `PE`, already without `Ok(..)`
    /// under a timer) and the body; `None` when one body serves every failure.
    pub on_error: Option<(String, Leave)>,
    /// After a failure without an error value (a timed-out attempt under a timer), or after
    /// every failure when `on_error` is `None`. Reads no binding of its pattern.
    pub otherwise: Leave,
}

/// A failure-logging piece kept per attempt: a match arm over `&result` (pattern and body) or,
/// with no pattern, statements run after any failure.
#[derive(Debug, Clone)]
pub struct Logging {
    /// The arm's pattern over the call's `Result` (`Err(e)`, `Err(_)`), or `None` for a
    /// statement after the attempt.
    pub pat: Option<String>,
    /// Its guard, if any.
    pub guard: Option<String>,
    /// The statements, waits removed.
    pub body: String,
}

/// The loop's counter, as the logging sees it: its name and what it holds during attempt
/// number `k` (from 1): `k + offset`.
#[derive(Debug, Clone)]
pub struct CounterView {
    /// The name the logging reads.
    pub name: String,
    /// Its value during attempt `k` is `k + offset`.
    pub offset: i64,
    /// The per-attempt logging reads it (else only the give-up does).
    pub in_logging: bool,
}

/// Everything the rewrite needs to keep the loop's flow.
#[derive(Debug, Clone)]
pub struct Shape {
    /// The loop expression's span (replaced).
    pub loop_span: Span,
    /// The counter's `let` (its whole line), removed with the loop.
    pub counter_let: Option<Span>,
    /// Attempts made.
    pub count: Count,
    /// The call each attempt awaits (inside the timer's `timeout(D, ..)` under a timer).
    pub call: Span,
    /// The timer's duration text, under a timer.
    pub timer: Option<String>,
    /// The success pattern inside `Ok(..)` and its exit.
    pub success: (String, Leave),
    /// How the loop leaves.
    pub exit: Exit,
    /// The give-up of a counted `loop`; `None`: the loop falls out after the last attempt.
    pub give_up: Option<GiveUp>,
    /// What failures log, in order.
    pub logging: Vec<Logging>,
    /// The counter the logging (or the give-up) reads, when it does.
    pub counter: Option<CounterView>,
    /// The loop waited between attempts.
    pub waits: bool,
    /// The function's locals the logging reads: borrowed in the attempt's closure, so the
    /// per-attempt future moves in a copy of the borrow, not the local.
    pub borrows: Vec<String>,
}

/// Which per-attempt bound the call is under.
#[derive(Debug, Clone, Copy)]
pub enum Bound {
    /// `timeout(D, CALL)` whose callee is at this span.
    Timer(Span),
    /// The client's own timeout (the call stands alone).
    Client,
}

/// The shape of the loop whose keyword is at `anchor`, or `None` when its flow cannot be kept.
#[must_use]
pub fn read(src: &SourceFile, ast: &syn::File, anchor: Span, bound: Bound) -> Option<Shape> {
    let found = find_loop(src, ast, anchor)?;
    let cx = Cx { src, bound };
    cx.shape(&found)
}

struct Cx<'a> {
    src: &'a SourceFile,
    bound: Bound,
}

/// A loop, its enclosing function's body and the statements before it in its block.
struct Found {
    expr: syn::Expr,
    func: syn::Block,
    before: Vec<syn::Stmt>,
    /// The function's parameter names.
    params: BTreeSet<String>,
    /// Its receiver is `&self` (a copy of it can move into a future).
    ref_self: bool,
}

/// The parts of the attempt statement.
struct Attempt<'s> {
    call: &'s syn::Expr,
    timer: Option<String>,
    success: Option<(&'s syn::Pat, &'s syn::Expr)>,
    give_ups: Vec<&'s syn::Arm>,
    failures: Vec<Logging>,
    waits: bool,
    /// Spans where the counter may appear in macros (logging) and paths (guards).
    observed: Vec<Span>,
}

impl Cx<'_> {
    fn text(&self, e: &impl Spanned) -> String {
        self.src.slice(span_of(self.src, e.span())).to_string()
    }

    fn span(&self, e: &impl Spanned) -> Span {
        span_of(self.src, e.span())
    }

    fn shape(&self, found: &Found) -> Option<Shape> {
        let (body, label) = match &found.expr {
            syn::Expr::ForLoop(l) => (&l.body, &l.label),
            syn::Expr::While(l) => (&l.body, &l.label),
            syn::Expr::Loop(l) => (&l.body, &l.label),
            _ => return None,
        };
        if label.is_some() {
            return None;
        }
        let loop_span = self.span(&found.expr);
        let is_loop = matches!(found.expr, syn::Expr::Loop(_));
        // The counter: a `for` pattern, or the `while` condition's / give-up guard's variable.
        let mut counter: Option<String> = None;
        let mut for_start: Option<u64> = None;
        let mut count: Option<Count> = None;
        match &found.expr {
            syn::Expr::ForLoop(l) => {
                match &*l.pat {
                    syn::Pat::Wild(_) => {}
                    syn::Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() => {
                        counter = Some(p.ident.to_string());
                    }
                    _ => return None,
                }
                let (c, a) = range_count(self, &l.expr)?;
                count = Some(c);
                for_start = Some(a);
            }
            syn::Expr::While(l) => {
                let (name, limit, inclusive) = while_cond(self, &l.cond)?;
                counter = Some(name);
                // Filled in once the start value is known.
                count = Some(Count::Expr {
                    base: limit,
                    plus: i64::from(inclusive),
                    at_least_one: false,
                });
            }
            _ => {}
        }
        // The top-level statements.
        let mut attempt_at = None;
        let mut increments = Vec::new();
        let mut waits = false;
        let mut post_logging = Vec::new();
        let mut dropped = Vec::new();
        for (i, stmt) in body.stmts.iter().enumerate() {
            if is_attempt_stmt(stmt) && attempt_at.is_none() {
                attempt_at = Some(i);
            } else if let Some(name) = increment(stmt) {
                increments.push((i, name, self.span(stmt)));
            } else if is_wait_stmt(stmt) {
                // The runtime's backoff replaces it, whatever it reads.
                waits = true;
                dropped.push(self.span(stmt));
            } else if attempt_at.is_some() && is_macro_stmt(stmt) {
                post_logging.push(stmt);
            } else {
                return None;
            }
        }
        let attempt_at = attempt_at?;
        let mut attempt = self.attempt(&body.stmts[attempt_at], is_loop)?;
        waits |= attempt.waits;
        for stmt in &post_logging {
            let text = self.text(*stmt);
            attempt.observed.push(self.span(*stmt));
            attempt.failures.push(Logging {
                pat: None,
                guard: None,
                body: text,
            });
        }
        // The give-up guards name the counter of a `loop`.
        let mut guard = None;
        if is_loop {
            let mut guards = attempt.give_ups.iter().map(|a| {
                let (_, g) = a.guard.as_ref()?;
                give_up_guard(self, g)
            });
            let first = guards.next()??;
            if guards.any(|g| g.as_ref() != Some(&first)) {
                return None;
            }
            counter = Some(first.0.clone());
            guard = Some(first);
        } else if !attempt.give_ups.is_empty() {
            return None;
        }
        // The counter's increment and its `let` (not for a `for`, whose pattern is its counter).
        let mut counter_let = None;
        let pre: bool;
        let start: i64;
        let mut allowed: Vec<Span> = attempt.observed.clone();
        allowed.extend(dropped);
        if matches!(found.expr, syn::Expr::ForLoop(_)) {
            if !increments.is_empty() {
                return None;
            }
            start = i64::try_from(for_start?).ok()?;
            // During iteration `k` the pattern holds `A + k - 1`.
            pre = false;
            if let syn::Expr::ForLoop(l) = &found.expr {
                allowed.push(self.span(&*l.pat));
            }
        } else {
            let name = counter.clone()?;
            let [(at, inc_name, inc_span)] = increments.as_slice() else {
                return None;
            };
            if *inc_name != name {
                return None;
            }
            pre = *at < attempt_at;
            allowed.push(*inc_span);
            let (let_span, s) = counter_start(self, &found.before, &name)?;
            counter_let = Some(let_span);
            allowed.push(let_span);
            start = s;
            if let syn::Expr::While(l) = &found.expr {
                allowed.push(self.span(&*l.cond));
            }
        }
        // The counter is used nowhere else in the function: not after the loop, not in the
        // call, not in a guard other than the give-up's.
        if let Some(name) = &counter {
            if !only_used_in(self, &found.func, name, &allowed) {
                return None;
            }
        }
        let count = match (&found.expr, count) {
            (syn::Expr::ForLoop(_), Some(c)) => c,
            (syn::Expr::While(_), Some(Count::Expr { base, plus, .. })) => {
                offset_count(&base, plus - start, false)?
            }
            (syn::Expr::Loop(_), None) => {
                let (_, limit, strict) = guard?;
                // Attempt k sees the counter at S + k (increment first) or S + k - 1; the first
                // k where the guard holds is the last attempt.
                let off = start - i64::from(!pre) - i64::from(strict);
                offset_count(&limit, -off, true)?
            }
            _ => return None,
        };
        // The loop-bound names (other than the counter seen through the logging) may not be
        // read by what moves out of the loop.
        let loop_bound = crate::fix::syntax::bound_names(&found.expr);
        let (success_pat, success_body) = attempt.success?;
        let own = pat_names(success_pat);
        let mut forbidden: BTreeSet<String> = loop_bound.clone();
        if let Some(c) = &counter {
            forbidden.insert(c.clone());
        }
        let reads_forbidden = |e: &syn::Expr, own: &BTreeSet<String>| {
            crate::fix::syntax::free_names(e)
                .iter()
                .any(|n| forbidden.contains(n) && !own.contains(n))
        };
        if reads_forbidden(attempt.call, &BTreeSet::new())
            || reads_forbidden(success_body, &own)
            || attempt
                .timer
                .as_deref()
                .is_some_and(|d| forbidden.iter().any(|b| crate::fix::syntax::has_word(d, b)))
        {
            return None;
        }
        let exit = if is_loop && crate::fix::slices::breaks_with_value(self.src.slice(loop_span)) {
            Exit::Break
        } else {
            Exit::Return
        };
        let success = (
            self.text(success_pat),
            self.leave(success_body, &exit, counter.as_deref())?,
        );
        if success.1.reads_counter {
            return None;
        }
        let give_up = if is_loop {
            Some(self.give_up(&attempt.give_ups, &exit, counter.as_deref(), &forbidden)?)
        } else {
            None
        };
        // The logging may read the counter (in macros) and what its own pattern binds; nothing
        // else the loop binds.
        let give_up_reads = give_up.as_ref().is_some_and(|g| {
            g.otherwise.reads_counter || g.on_error.as_ref().is_some_and(|(_, l)| l.reads_counter)
        });
        let mut reads_counter = false;
        let locals: BTreeSet<String> = {
            let block = syn::Expr::Block(syn::ExprBlock {
                attrs: Vec::new(),
                label: None,
                block: found.func.clone(),
            });
            let mut l = crate::fix::syntax::bound_names(&block);
            l.extend(found.params.iter().cloned());
            l
        };
        let mut borrows = BTreeSet::new();
        for l in &attempt.failures {
            let Ok(body) = syn::parse_str::<syn::Expr>(&format!("{{ {} }}", l.body)) else {
                return None;
            };
            if counter.as_deref().is_some_and(|c| path_reads(&body, c)) {
                return None;
            }
            let mut own = match &l.pat {
                Some(p) => syn::parse::Parser::parse_str(syn::Pat::parse_single, p)
                    .map(|p| pat_names(&p))
                    .ok()?,
                None => BTreeSet::new(),
            };
            if let Some(c) = &counter {
                if macro_reads(&body, c) {
                    reads_counter = true;
                }
                own.insert(c.clone());
            }
            if reads_forbidden(&body, &own) {
                return None;
            }
            for n in crate::fix::syntax::free_names(&body) {
                if n == "self" {
                    // `&self` is a copy; anything else would move into the future.
                    if !found.ref_self {
                        return None;
                    }
                } else if locals.contains(&n) && !own.contains(&n) {
                    borrows.insert(n);
                }
            }
            if let Some(g) = &l.guard {
                let g = syn::parse_str::<syn::Expr>(g).ok()?;
                // A guard comparing a local would compare a borrow of it.
                if reads_forbidden(&g, &own)
                    || crate::fix::syntax::free_names(&g)
                        .iter()
                        .any(|n| !own.contains(n) && (locals.contains(n) || n == "self"))
                {
                    return None;
                }
            }
        }
        let counter = match (reads_counter || give_up_reads, counter) {
            (true, Some(name)) => Some(CounterView {
                name,
                offset: start - i64::from(!pre),
                in_logging: reads_counter,
            }),
            _ => None,
        };
        Some(Shape {
            loop_span,
            counter_let,
            count,
            call: self.span(attempt.call),
            timer: attempt.timer,
            success,
            exit,
            give_up,
            logging: attempt.failures,
            counter,
            waits,
            borrows: borrows.into_iter().collect(),
        })
    }

    /// The attempt statement's parts.
    fn attempt<'s>(&self, stmt: &'s syn::Stmt, is_loop: bool) -> Option<Attempt<'s>> {
        let syn::Stmt::Expr(attempt_expr, _) = stmt else {
            return None;
        };
        match attempt_expr {
            syn::Expr::Match(m) => {
                let (call, timer) = self.awaited(&m.expr)?;
                let mut parts = Attempt {
                    call,
                    timer,
                    success: None,
                    give_ups: Vec::new(),
                    failures: Vec::new(),
                    waits: false,
                    observed: Vec::new(),
                };
                let under_timer = parts.timer.is_some();
                for arm in &m.arms {
                    if let Some(inner) = ok_inner(&arm.pat, under_timer) {
                        if parts.success.is_some() || arm.guard.is_some() {
                            return None;
                        }
                        parts.success = Some((inner, &*arm.body));
                    } else if !failure_pat(&arm.pat, under_timer) {
                        return None;
                    } else if is_loop
                        && arm
                            .guard
                            .as_ref()
                            .is_some_and(|(_, g)| give_up_guard(self, g).is_some())
                    {
                        parts.observed.push(self.span(&*arm.guard.as_ref()?.1));
                        parts.observed.push(self.span(&*arm.body));
                        parts.give_ups.push(arm);
                    } else {
                        if !only_observes(&arm.body) {
                            return None;
                        }
                        let (body, waited) = self.without_waits(&arm.body)?;
                        parts.waits |= waited;
                        parts.observed.push(self.span(&*arm.body));
                        if let Some(pat) = closure_pat(self, &arm.pat, under_timer) {
                            if !body.trim().is_empty() {
                                parts.failures.push(Logging {
                                    pat: Some(pat),
                                    guard: arm.guard.as_ref().map(|(_, g)| self.text(&**g)),
                                    body,
                                });
                            }
                        }
                    }
                }
                Some(parts)
            }
            syn::Expr::If(if_let) if !is_loop => {
                let syn::Expr::Let(cond) = &*if_let.cond else {
                    return None;
                };
                let (call, timer) = self.awaited(&cond.expr)?;
                let inner = ok_inner(&cond.pat, timer.is_some())?;
                let mut parts = Attempt {
                    call,
                    timer,
                    success: None,
                    give_ups: Vec::new(),
                    failures: Vec::new(),
                    waits: false,
                    observed: Vec::new(),
                };
                parts.success = Some((inner, then_expr(if_let)?));
                if let Some((_, els)) = &if_let.else_branch {
                    let syn::Expr::Block(b) = &**els else {
                        return None;
                    };
                    if !only_observes(els) {
                        return None;
                    }
                    let (body, waited) = self.without_waits(els)?;
                    parts.waits |= waited;
                    parts.observed.push(self.span(&b.block));
                    if !body.trim().is_empty() {
                        parts.failures.push(Logging {
                            pat: Some("Err(_)".into()),
                            guard: None,
                            body,
                        });
                    }
                }
                Some(parts)
            }
            _ => None,
        }
    }

    /// `CALL.await`, or `timeout(D, CALL).await` under the timer at the expected span.
    fn awaited<'s>(&self, e: &'s syn::Expr) -> Option<(&'s syn::Expr, Option<String>)> {
        let syn::Expr::Await(awaited) = e else {
            return None;
        };
        match self.bound {
            Bound::Timer(callee) => {
                let syn::Expr::Call(c) = &*awaited.base else {
                    return None;
                };
                if self.span(&*c.func) != callee || c.args.len() != 2 {
                    return None;
                }
                Some((&c.args[1], Some(self.text(&c.args[0]))))
            }
            Bound::Client => Some((&*awaited.base, None)),
        }
    }

    /// The statements of an arm body without its top-level waits, and whether it had any. A
    /// wait anywhere deeper gives `None` (the runtime owns the waits).
    fn without_waits(&self, body: &syn::Expr) -> Option<(String, bool)> {
        match body {
            syn::Expr::Block(b) if b.label.is_none() => {
                let mut kept = Vec::new();
                let mut waited = false;
                for s in &b.block.stmts {
                    if is_wait_stmt(s) {
                        waited = true;
                    } else if contains_wait(s) {
                        return None;
                    } else {
                        kept.push(self.text(s));
                    }
                }
                Some((kept.join(" "), waited))
            }
            e if is_wait(e) => Some((String::new(), true)),
            e if contains_wait_expr(e) => None,
            // `Err(e) => warn!(..)`: one expression, made a statement.
            e => Some((format!("{};", self.text(e)), false)),
        }
    }

    /// A body that leaves the loop: optional observing statements, then `return E`, `break E`
    /// (a value), or a diverging `?`. `None` for any other body.
    fn leave(&self, body: &syn::Expr, exit: &Exit, counter: Option<&str>) -> Option<Leave> {
        let reads_counter = counter.is_some_and(|c| macro_reads(body, c));
        if counter.is_some_and(|c| path_reads(body, c)) {
            return None;
        }
        let last = match body {
            syn::Expr::Block(b) if b.label.is_none() => {
                let (last, rest) = b.block.stmts.split_last()?;
                let syn::Stmt::Expr(e, _) = last else {
                    return None;
                };
                let rest_ok = rest.iter().all(|s| match s {
                    syn::Stmt::Local(_) | syn::Stmt::Macro(_) => stmt_observes(s),
                    syn::Stmt::Expr(e, Some(_)) => only_observes(e) && !contains_wait_expr(e),
                    _ => false,
                });
                if !rest_ok {
                    return None;
                }
                e
            }
            e => e,
        };
        let (text_span, value_span) = match last {
            syn::Expr::Return(r) => (None, r.expr.as_deref().map(|v| self.span(v))),
            syn::Expr::Break(b) if b.label.is_none() && matches!(exit, Exit::Break) => {
                (Some(self.span(b)), Some(self.span(&**b.expr.as_ref()?)))
            }
            syn::Expr::Try(t) if is_err_call(&t.expr) => (None, None),
            _ => return None,
        };
        if !only_observes_but_exit(body) {
            return None;
        }
        let whole = self.span(body);
        let mut text = self.src.slice(whole).to_string();
        if let (Some(brk), Some(value)) = (text_span, value_span) {
            // `break E` becomes the value `E`; a `;` after it would make the block `()`.
            let mut end = brk.end;
            let after = &self.src.text[brk.end..whole.end];
            if let Some(rest) = after.strip_prefix(';') {
                if rest.trim() == "}" {
                    end += 1;
                }
            }
            let rel = |p: usize| p - whole.start;
            text = format!(
                "{}{}{}",
                &text[..rel(brk.start)],
                self.src.slice(value),
                &text[rel(end)..]
            );
        }
        Some(Leave {
            text,
            reads_counter,
        })
    }

    /// The give-up arms: one body for every failure, or an error body and a timed-out body.
    fn give_up(
        &self,
        arms: &[&syn::Arm],
        exit: &Exit,
        counter: Option<&str>,
        forbidden: &BTreeSet<String>,
    ) -> Option<GiveUp> {
        let timed = matches!(self.bound, Bound::Timer(_));
        let mut on_error = None;
        let mut otherwise = None;
        for arm in arms {
            let leave = self.leave(&arm.body, exit, counter)?;
            let own = pat_names(&arm.pat);
            let reads = crate::fix::syntax::free_names(&arm.body);
            if reads
                .iter()
                .any(|n| forbidden.contains(n) && !own.contains(n) && Some(n.as_str()) != counter)
            {
                return None;
            }
            let reads_own = reads.iter().any(|n| own.contains(n));
            match (&arm.pat, timed) {
                // `_`, or any failure whose binding the body does not read: every failure.
                (p, _) if !reads_own && covers_all_failures(p, timed) => {
                    if otherwise.is_some() || on_error.is_some() {
                        return None;
                    }
                    otherwise = Some(leave);
                    on_error = None;
                    return Some(GiveUp {
                        on_error,
                        otherwise: otherwise?,
                    });
                }
                (p, true) if error_value_pat(p).is_some() => {
                    if on_error.is_some() {
                        return None;
                    }
                    on_error = Some((self.text(error_value_pat(p)?), leave));
                }
                (p, true) if is_elapsed_pat(p) && !reads_own => {
                    if otherwise.is_some() {
                        return None;
                    }
                    otherwise = Some(leave);
                }
                // A client's give-up that returns the error: when the runtime's own timer ends
                // the last attempt there is no error to return, so the flow cannot be kept.
                _ => return None,
            }
        }
        Some(GiveUp {
            on_error,
            otherwise: otherwise?,
        })
    }
}

/// The `then` block of an `if let` as an expression for [`Cx::leave`].
fn then_expr(i: &syn::ExprIf) -> Option<&syn::Expr> {
    // `if let Ok(v) = .. { return E; }`: the block's one statement.
    match i.then_branch.stmts.as_slice() {
        [syn::Stmt::Expr(e, _)] => Some(e),
        _ => None,
    }
}

/// The count of `A..B` / `A..=B` (A a non-negative literal) and A.
fn range_count(cx: &Cx, range: &syn::Expr) -> Option<(Count, u64)> {
    let syn::Expr::Range(r) = range else {
        return None;
    };
    let a = int_lit(r.start.as_deref()?)?;
    let end = r.end.as_deref()?;
    let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
    if let Some(b) = int_lit(end) {
        let n = b.checked_sub(a)? + u64::from(inclusive);
        return (1..=u64::from(u32::MAX))
            .contains(&n)
            .then_some((Count::Lit(n), a));
    }
    if !pure(end) {
        return None;
    }
    let plus = i64::from(inclusive) - i64::try_from(a).ok()?;
    Some((
        Count::Expr {
            base: cx.text(end),
            plus,
            at_least_one: false,
        },
        a,
    ))
}

/// A count of `base + plus` attempts: a literal when `base` is one.
fn offset_count(base: &str, plus: i64, at_least_one: bool) -> Option<Count> {
    if let Ok(syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Int(i),
        ..
    })) = syn::parse_str::<syn::Expr>(base)
    {
        let n = i64::try_from(i.base10_parse::<u64>().ok()?).ok()? + plus;
        let n = if at_least_one { n.max(1) } else { n };
        return (1..=i64::from(u32::MAX))
            .contains(&n)
            .then(|| Count::Lit(n.unsigned_abs()));
    }
    Some(Count::Expr {
        base: base.to_string(),
        plus,
        at_least_one,
    })
}

fn int_lit(e: &syn::Expr) -> Option<u64> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        syn::Expr::Paren(p) => int_lit(&p.expr),
        _ => None,
    }
}

/// An expression that reads values and computes nothing with effects: paths, fields, integer
/// literals, arithmetic, casts, dereferences. Safe to write twice in the policy builder.
fn pure(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(_),
            ..
        })
        | syn::Expr::Path(_) => true,
        syn::Expr::Field(f) => pure(&f.base),
        syn::Expr::Paren(p) => pure(&p.expr),
        syn::Expr::Cast(c) => pure(&c.expr),
        syn::Expr::Unary(u) => matches!(u.op, syn::UnOp::Deref(_)) && pure(&u.expr),
        syn::Expr::Binary(b) => {
            matches!(
                b.op,
                syn::BinOp::Add(_) | syn::BinOp::Sub(_) | syn::BinOp::Mul(_)
            ) && pure(&b.left)
                && pure(&b.right)
        }
        _ => false,
    }
}

/// `c < N` / `c <= N`: the counter, N's text, and whether inclusive.
fn while_cond(cx: &Cx, cond: &syn::Expr) -> Option<(String, String, bool)> {
    let syn::Expr::Binary(b) = cond else {
        return None;
    };
    let inclusive = match b.op {
        syn::BinOp::Lt(_) => false,
        syn::BinOp::Le(_) => true,
        _ => return None,
    };
    let name = single_ident(&b.left)?;
    if !pure(&b.right) || path_reads(&b.right, &name) {
        return None;
    }
    Some((name, cx.text(&*b.right), inclusive))
}

/// A give-up guard `c >= N`, `c > N`, `N <= c`, `N < c`: the counter, N's text, and whether
/// strict (`>`).
fn give_up_guard(cx: &Cx, g: &syn::Expr) -> Option<(String, String, bool)> {
    let syn::Expr::Binary(b) = g else {
        return None;
    };
    let (c, n, strict) = match b.op {
        syn::BinOp::Ge(_) => (&b.left, &b.right, false),
        syn::BinOp::Gt(_) => (&b.left, &b.right, true),
        syn::BinOp::Le(_) => (&b.right, &b.left, false),
        syn::BinOp::Lt(_) => (&b.right, &b.left, true),
        _ => return None,
    };
    let name = single_ident(c)?;
    if !pure(n) || path_reads(n, &name) {
        return None;
    }
    Some((name, cx.text(&**n), strict))
}

fn single_ident(e: &syn::Expr) -> Option<String> {
    let syn::Expr::Path(p) = e else { return None };
    (p.qself.is_none() && p.path.segments.len() == 1).then(|| p.path.segments[0].ident.to_string())
}

/// `c += 1;` at the top of the body: the counter.
fn increment(stmt: &syn::Stmt) -> Option<String> {
    let syn::Stmt::Expr(syn::Expr::Binary(b), Some(_)) = stmt else {
        return None;
    };
    if !matches!(b.op, syn::BinOp::AddAssign(_)) || int_lit(&b.right) != Some(1) {
        return None;
    }
    single_ident(&b.left)
}

/// `let mut c = S;` (S a non-negative integer literal, a type allowed) among the statements
/// before the loop: its whole line and S.
fn counter_start(cx: &Cx, before: &[syn::Stmt], name: &str) -> Option<(Span, i64)> {
    before.iter().rev().find_map(|s| {
        let syn::Stmt::Local(l) = s else { return None };
        let pat = match &l.pat {
            syn::Pat::Type(t) => &*t.pat,
            p => p,
        };
        let syn::Pat::Ident(p) = pat else { return None };
        if p.ident != name || p.mutability.is_none() || p.by_ref.is_some() {
            return None;
        }
        let init = l.init.as_ref()?;
        if init.diverge.is_some() {
            return None;
        }
        let s_val = i64::try_from(int_lit(&init.expr)?).ok()?;
        // Its whole line goes, unless a trailing comment would go with it.
        let stmt = cx.span(s);
        let (line, comment) = crate::fix::syntax::whole_line(cx.src, stmt);
        Some((if comment.is_some() { stmt } else { line }, s_val))
    })
}

/// Every use of `name` in the function is inside one of `allowed` (paths and macro tokens).
fn only_used_in(cx: &Cx, func: &syn::Block, name: &str, allowed: &[Span]) -> bool {
    struct V<'a> {
        cx: &'a Cx<'a>,
        name: &'a str,
        uses: Vec<Span>,
    }
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
            if i == self.name {
                self.uses.push(span_of(self.cx.src, i.span()));
            }
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            fn walk(ts: proc_macro2::TokenStream, v: &mut V) {
                for tt in ts {
                    match tt {
                        proc_macro2::TokenTree::Ident(i) if i == v.name => {
                            v.uses.push(span_of(v.cx.src, i.span()));
                        }
                        proc_macro2::TokenTree::Literal(l) => {
                            let t = l.to_string();
                            if t.starts_with('"')
                                && t.split('{').skip(1).any(|p| {
                                    p.split(|c: char| !(c.is_alphanumeric() || c == '_')).next()
                                        == Some(v.name)
                                })
                            {
                                v.uses.push(span_of(v.cx.src, l.span()));
                            }
                        }
                        proc_macro2::TokenTree::Group(g) => walk(g.stream(), v),
                        _ => {}
                    }
                }
            }
            syn::visit::visit_path(self, &m.path);
            walk(m.tokens.clone(), self);
        }
    }
    let mut v = V {
        cx,
        name,
        uses: Vec::new(),
    };
    v.visit_block(func);
    v.uses
        .iter()
        .all(|u| allowed.iter().any(|a| a.contains(*u)))
}

/// Does `e` read `name` as a path outside macros?
fn path_reads(e: &syn::Expr, name: &str) -> bool {
    struct V<'a>(&'a str, bool);
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            self.1 |= p.path.is_ident(self.0);
        }
    }
    let mut v = V(name, false);
    v.visit_expr(e);
    v.1
}

/// Does a macro inside `e` read `name` (an identifier token or an inline format argument)?
fn macro_reads(e: &syn::Expr, name: &str) -> bool {
    struct V<'a>(&'a str, bool);
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            let mut names = BTreeSet::new();
            let wrapped: syn::Expr = syn::Expr::Macro(syn::ExprMacro {
                attrs: Vec::new(),
                mac: m.clone(),
            });
            names.extend(crate::fix::syntax::free_names(&wrapped));
            self.1 |= names.contains(self.0);
        }
    }
    let mut v = V(name, false);
    v.visit_expr(e);
    v.1
}

/// The names a pattern binds.
fn pat_names(pat: &syn::Pat) -> BTreeSet<String> {
    struct V(BTreeSet<String>);
    impl<'ast> Visit<'ast> for V {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.insert(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut v = V(BTreeSet::new());
    v.visit_pat(pat);
    v.0
}

/// `P` of `Ok(P)`, or of `Ok(Ok(P))` under a timer.
fn ok_inner(pat: &syn::Pat, timer: bool) -> Option<&syn::Pat> {
    let inner = tuple_of(pat, "Ok")?;
    if timer {
        tuple_of(inner, "Ok")
    } else {
        Some(inner)
    }
}

/// `P` of `NAME(P)`.
fn tuple_of<'p>(pat: &'p syn::Pat, name: &str) -> Option<&'p syn::Pat> {
    let syn::Pat::TupleStruct(t) = pat else {
        return None;
    };
    (t.path.is_ident(name) && t.elems.len() == 1).then(|| &t.elems[0])
}

/// `Err(..)`, `_`, `Ok(Err(..))` under a timer, or an or-pattern of those.
fn failure_pat(pat: &syn::Pat, timer: bool) -> bool {
    match pat {
        syn::Pat::Wild(_) => true,
        syn::Pat::Or(o) => o.cases.iter().all(|c| failure_pat(c, timer)),
        p if tuple_of(p, "Err").is_some() => true,
        p => timer && tuple_of(p, "Ok").and_then(|i| tuple_of(i, "Err")).is_some(),
    }
}

/// Under a timer, `Ok(Err(PE))`: `PE`. Without one, `Err(PE)`.
fn error_value_pat(pat: &syn::Pat) -> Option<&syn::Pat> {
    tuple_of(pat, "Ok").and_then(|i| tuple_of(i, "Err"))
}

/// Under a timer, `Err(..)`: the timer elapsed.
fn is_elapsed_pat(pat: &syn::Pat) -> bool {
    tuple_of(pat, "Err").is_some()
}

/// A pattern that every failure matches: `_`, or without a timer `Err(_)` / `Err(x)`; under a
/// timer an or-pattern of `Ok(Err(..))` and `Err(..)`.
fn covers_all_failures(pat: &syn::Pat, timer: bool) -> bool {
    match pat {
        syn::Pat::Wild(_) => true,
        syn::Pat::Or(o) if timer => {
            o.cases.iter().any(|c| error_value_pat(c).is_some())
                && o.cases.iter().any(is_elapsed_pat)
        }
        p => !timer && tuple_of(p, "Err").is_some(),
    }
}

/// A failure arm's pattern as it reads over the call's own `Result`: `Err(e)` as is (or from
/// `Ok(Err(e))` under a timer), `_` as `Err(_)`. `None` for a timer's elapsed arm, which the
/// closure never sees (the runtime's timer ends that attempt).
fn closure_pat(cx: &Cx, pat: &syn::Pat, timer: bool) -> Option<String> {
    match pat {
        syn::Pat::Wild(_) => Some("Err(_)".into()),
        syn::Pat::Or(o) => {
            let parts: Vec<String> = o
                .cases
                .iter()
                .filter_map(|c| closure_pat(cx, c, timer))
                .collect();
            (!parts.is_empty()).then(|| parts.join(" | "))
        }
        p if timer => error_value_pat(p).map(|e| format!("Err({})", cx.text(e))),
        p => Some(cx.text(p)),
    }
}

/// `Err(..)`: the `?` that gives up with it.
fn is_err_call(e: &syn::Expr) -> bool {
    let syn::Expr::Call(c) = e else { return false };
    matches!(&*c.func, syn::Expr::Path(p) if p.path.is_ident("Err"))
}

fn is_attempt_stmt(stmt: &syn::Stmt) -> bool {
    matches!(
        stmt,
        syn::Stmt::Expr(syn::Expr::Match(_) | syn::Expr::If(_), _)
    )
}

fn is_macro_stmt(stmt: &syn::Stmt) -> bool {
    match stmt {
        syn::Stmt::Macro(_) | syn::Stmt::Expr(syn::Expr::Macro(_), Some(_)) => stmt_observes(stmt),
        _ => false,
    }
}

fn stmt_observes(stmt: &syn::Stmt) -> bool {
    match stmt {
        syn::Stmt::Macro(m) => {
            // A `return`/`break` hidden in a macro's tokens cannot be seen; log macros are
            // named, anything else is left alone.
            is_log_macro(&m.mac)
        }
        syn::Stmt::Expr(syn::Expr::Macro(m), _) => is_log_macro(&m.mac),
        syn::Stmt::Local(l) => l
            .init
            .as_ref()
            .is_some_and(|i| i.diverge.is_none() && only_observes(&i.expr)),
        _ => false,
    }
}

/// `println!`, `eprintln!`, `log::warn!`, `tracing::error!` and their kin.
fn is_log_macro(m: &syn::Macro) -> bool {
    let last = crate::analysis::macros::macro_name(m);
    [
        "println", "eprintln", "print", "eprint", "trace", "debug", "info", "warn", "error",
        "event", "dbg",
    ]
    .contains(&last.as_str())
}

fn is_wait_stmt(stmt: &syn::Stmt) -> bool {
    matches!(stmt, syn::Stmt::Expr(e, Some(_)) if is_wait(e))
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

fn contains_wait(stmt: &syn::Stmt) -> bool {
    struct V(bool);
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_await(&mut self, a: &'ast syn::ExprAwait) {
            self.0 |= is_wait(&syn::Expr::Await(a.clone()));
            syn::visit::visit_expr_await(self, a);
        }
    }
    let mut v = V(false);
    v.visit_stmt(stmt);
    v.0
}

fn contains_wait_expr(e: &syn::Expr) -> bool {
    contains_wait(&syn::Stmt::Expr(e.clone(), None))
}

/// A failure arm whose dropping loses no control flow and no state: no `return`, `break`,
/// `continue`, `?` or assignment (logging, metrics and waits are fine), and no macro that is
/// not a logging macro (its tokens could hide any of those).
#[must_use]
pub fn only_observes(body: &syn::Expr) -> bool {
    Observe::check(body, false)
}

/// [`only_observes`] for a leaving body: its last statement is the exit, everything before it
/// only observes.
fn only_observes_but_exit(body: &syn::Expr) -> bool {
    match body {
        syn::Expr::Block(b) => b.block.stmts.split_last().is_some_and(|(last, rest)| {
            rest.iter().all(Observe::check_stmt)
                && match last {
                    syn::Stmt::Expr(e, _) => Observe::check(e, true),
                    _ => false,
                }
        }),
        e => Observe::check(e, true),
    }
}

struct Observe {
    ok: bool,
    /// Inside the value that leaves the loop, where `?` propagates as it did.
    exit_allowed: bool,
}

impl Observe {
    fn check(e: &syn::Expr, exit: bool) -> bool {
        let mut v = Observe {
            ok: true,
            exit_allowed: exit,
        };
        if exit {
            // The exit itself; only its operand is checked.
            match e {
                // The value leaves with the loop: a `?` in it propagates as it did.
                syn::Expr::Return(r) => {
                    if let Some(x) = &r.expr {
                        v.visit_expr(x);
                    }
                    return v.ok;
                }
                syn::Expr::Break(b) => {
                    if let Some(x) = &b.expr {
                        v.visit_expr(x);
                    }
                    return v.ok;
                }
                syn::Expr::Try(t) => {
                    v.exit_allowed = false;
                    v.visit_expr(&t.expr);
                    return v.ok;
                }
                _ => return false,
            }
        }
        v.visit_expr(e);
        v.ok
    }

    fn check_stmt(s: &syn::Stmt) -> bool {
        let mut v = Observe {
            ok: true,
            exit_allowed: false,
        };
        v.visit_stmt(s);
        v.ok && !contains_wait(s)
    }
}

impl<'ast> Visit<'ast> for Observe {
    fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
        self.ok = false;
    }
    fn visit_expr_break(&mut self, _: &'ast syn::ExprBreak) {
        self.ok = false;
    }
    fn visit_expr_continue(&mut self, _: &'ast syn::ExprContinue) {
        self.ok = false;
    }
    fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
        // `?` inside a success value (`return Ok(r.text().await?)`) propagates as it did; in
        // a failure arm it would leave the loop.
        if !self.exit_allowed {
            self.ok = false;
        }
        syn::visit::visit_expr_try(self, t);
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {
        // A closure's own `return` or `?` leaves only the closure.
    }
    fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
    fn visit_expr_assign(&mut self, _: &'ast syn::ExprAssign) {
        self.ok = false;
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if !is_log_macro(m) {
            self.ok = false;
        }
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
            self.ok = false;
        }
        syn::visit::visit_expr_binary(self, b);
    }
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        // Recording the error somewhere the code after the loop reads.
        if ["push", "insert", "extend", "replace", "set", "push_str"]
            .iter()
            .any(|n| m.method == n)
        {
            self.ok = false;
        }
        syn::visit::visit_expr_method_call(self, m);
    }
}

/// The loop expression whose keyword is at `anchor`, the body of its innermost function and
/// the statements before it in its block.
fn find_loop(src: &SourceFile, ast: &syn::File, anchor: Span) -> Option<Found> {
    struct V<'a, 'ast> {
        src: &'a SourceFile,
        anchor: Span,
        funcs: Vec<(&'ast syn::Signature, &'ast syn::Block)>,
        blocks: Vec<(&'ast [syn::Stmt], usize)>,
        found: Option<Found>,
    }
    impl<'ast> V<'_, 'ast> {
        fn hit(&mut self, keyword: proc_macro2::Span, e: &'ast syn::Expr) {
            if self.found.is_some() || span_of(self.src, keyword) != self.anchor {
                return;
            }
            let Some((sig, func)) = self.funcs.last() else {
                return;
            };
            let before = self
                .blocks
                .last()
                .map(|(stmts, at)| stmts[..*at].to_vec())
                .unwrap_or_default();
            let mut params = BTreeSet::new();
            let mut ref_self = false;
            for input in &sig.inputs {
                match input {
                    syn::FnArg::Receiver(r) => {
                        ref_self = r.reference.is_some() && r.mutability.is_none();
                    }
                    syn::FnArg::Typed(t) => params.extend(pat_names(&t.pat)),
                }
            }
            self.found = Some(Found {
                expr: e.clone(),
                func: (*func).clone(),
                before,
                params,
                ref_self,
            });
        }
    }
    impl<'ast> Visit<'ast> for V<'_, 'ast> {
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            self.funcs.push((&f.sig, &f.block));
            syn::visit::visit_item_fn(self, f);
            self.funcs.pop();
        }
        fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
            self.funcs.push((&f.sig, &f.block));
            syn::visit::visit_impl_item_fn(self, f);
            self.funcs.pop();
        }
        fn visit_block(&mut self, b: &'ast syn::Block) {
            for (i, s) in b.stmts.iter().enumerate() {
                self.blocks.push((&b.stmts, i));
                self.visit_stmt(s);
                self.blocks.pop();
            }
        }
        fn visit_expr(&mut self, e: &'ast syn::Expr) {
            match e {
                syn::Expr::ForLoop(l) => self.hit(l.for_token.span, e),
                syn::Expr::While(l) => self.hit(l.while_token.span, e),
                syn::Expr::Loop(l) => self.hit(l.loop_token.span, e),
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut v = V {
        src,
        anchor,
        funcs: Vec::new(),
        blocks: Vec::new(),
        found: None,
    };
    v.visit_file(ast);
    v.found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of the loop whose keyword follows `/*L*/` in `text`.
    fn shape(text: &str, bound: &str) -> Option<Shape> {
        let src = SourceFile::new("t.rs", text);
        let ast = syn::parse_file(text).expect("test text parses");
        let at = text.find("/*L*/").expect("marker") + 5;
        let kw = text[at..]
            .split(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or_default();
        let anchor = Span::new(at, at + kw.len());
        let bound = match text.find(bound) {
            Some(b) if !bound.is_empty() => Bound::Timer(Span::new(b, b + bound.len())),
            _ => Bound::Client,
        };
        read(&src, &ast, anchor, bound)
    }

    /// `before` then the loop `/*L*/LOOP` in an async fn with a `max` parameter.
    fn client(before: &str, lp: &str) -> Option<Shape> {
        shape(
            &format!("async fn f(max: u32, c: &C) -> Result<R, E> {{\n{before}\n{lp}\n}}"),
            "",
        )
    }

    fn lit(n: u64) -> Count {
        Count::Lit(n)
    }

    fn expr(base: &str, plus: i64, at_least_one: bool) -> Count {
        Count::Expr {
            base: base.into(),
            plus,
            at_least_one,
        }
    }

    /// A counted `loop` gives up on the first attempt whose counter passes the guard: attempt
    /// `k` sees `S + k` when the increment comes first and `S + k - 1` when it comes last.
    #[test]
    fn counted_loop_attempts_off_by_one() {
        let cases: &[(&str, bool, &str, Option<Count>)] = &[
            ("0", true, "attempt >= 3", Some(lit(3))),
            ("0", false, "attempt >= 3", Some(lit(4))),
            ("0", true, "attempt > 3", Some(lit(4))),
            ("0", false, "attempt > 3", Some(lit(5))),
            ("1", true, "attempt >= 3", Some(lit(2))),
            ("1", false, "attempt >= 3", Some(lit(3))),
            ("1", false, "attempt > 3", Some(lit(4))),
            ("0", true, "3 <= attempt", Some(lit(3))),
            ("0", true, "3 < attempt", Some(lit(4))),
            // The first attempt is always made.
            ("0", true, "attempt >= 0", Some(lit(1))),
            ("5", true, "attempt >= 3", Some(lit(1))),
            ("0", true, "attempt >= max", Some(expr("max", 0, true))),
            ("0", false, "attempt > max", Some(expr("max", 2, true))),
            (
                "1",
                true,
                "attempt >= MAX_RETRIES",
                Some(expr("MAX_RETRIES", -1, true)),
            ),
            (
                "0",
                true,
                "attempt >= self.max + 1",
                Some(expr("self.max + 1", 0, true)),
            ),
        ];
        for (start, pre, guard, want) in cases {
            let inc = "attempt += 1;";
            let (a, b) = if *pre { (inc, "") } else { ("", inc) };
            let lp = format!(
                "/*L*/loop {{ {a} match c.send().await {{ Ok(r) => return Ok(r), Err(_) if {guard} => return Err(E::GaveUp), Err(e) => warn!(\"{{e}}\"), }} {b} }}"
            );
            let got = client(&format!("let mut attempt = {start};"), &lp).map(|s| s.count);
            assert_eq!(got, *want, "start {start}, pre {pre}, {guard}");
        }
    }

    #[test]
    fn while_and_for_attempts() {
        let body = "{ attempt += 1; match c.send().await { Ok(r) => return Ok(r), Err(e) => warn!(\"{e}\"), } }";
        let cases: &[(&str, &str, Option<Count>)] = &[
            ("0", "attempt < 3", Some(lit(3))),
            ("1", "attempt < 3", Some(lit(2))),
            ("0", "attempt <= 3", Some(lit(4))),
            ("3", "attempt < 3", None),
            ("0", "attempt < max", Some(expr("max", 0, false))),
            ("1", "attempt <= max", Some(expr("max", 0, false))),
            (
                "2",
                "attempt < self.retries",
                Some(expr("self.retries", -2, false)),
            ),
        ];
        for (start, cond, want) in cases {
            let got = client(
                &format!("let mut attempt = {start};"),
                &format!("/*L*/while {cond} {body}"),
            )
            .map(|s| s.count);
            assert_eq!(got, *want, "start {start}, {cond}");
        }
        let body = "{ match c.send().await { Ok(r) => return Ok(r), Err(e) => warn!(\"{e}\"), } }";
        let cases: &[(&str, Option<Count>)] = &[
            ("0..3", Some(lit(3))),
            ("1..=3", Some(lit(3))),
            ("0..=3", Some(lit(4))),
            ("3..3", None),
            ("0..max", Some(expr("max", 0, false))),
            ("1..max", Some(expr("max", -1, false))),
            ("1..=max", Some(expr("max", 0, false))),
            ("0..=max", Some(expr("max", 1, false))),
            (
                "0..self.conf.retries",
                Some(expr("self.conf.retries", 0, false)),
            ),
            // Not pure, or not counted from a literal.
            ("0..c.retries()", None),
            ("start..3", None),
            ("0..", None),
        ];
        for (range, want) in cases {
            let got = client("", &format!("/*L*/for attempt in {range} {body}")).map(|s| s.count);
            assert_eq!(got, *want, "{range}");
        }
    }

    /// What the logging sees of the counter: attempt `k` (from 1) plus the offset.
    #[test]
    fn counter_seen_by_the_logging() {
        let log = "Err(e) => warn!(\"attempt {attempt}: {e}\"),";
        let pre = client(
            "let mut attempt = 0;",
            &format!("/*L*/loop {{ attempt += 1; match c.send().await {{ Ok(r) => return Ok(r), Err(_) if attempt >= 3 => return Err(E::GaveUp), {log} }} }}"),
        )
        .and_then(|s| s.counter);
        assert_eq!(pre.map(|c| (c.offset, c.in_logging)), Some((0, true)));
        let post = client(
            "let mut attempt = 0;",
            &format!("/*L*/loop {{ match c.send().await {{ Ok(r) => return Ok(r), Err(_) if attempt >= 3 => return Err(E::GaveUp), {log} }} attempt += 1; }}"),
        )
        .and_then(|s| s.counter);
        assert_eq!(post.map(|c| c.offset), Some(-1));
        let for_one = client(
            "",
            &format!("/*L*/for attempt in 1..=3 {{ match c.send().await {{ Ok(r) => return Ok(r), {log} }} }}"),
        )
        .and_then(|s| s.counter);
        assert_eq!(for_one.map(|c| c.offset), Some(0));
    }

    #[test]
    fn kept_flow() {
        let s = client(
            "let mut attempt = 0;",
            "let v = /*L*/loop { attempt += 1; match c.send().await { Ok(r) => break Ok(r), Err(_) if attempt >= 3 => { warn!(\"giving up\"); break Err(E::GaveUp); } Err(e) => { warn!(\"{e}\"); tokio::time::sleep(D).await; } } }; v",
        )
        .expect("a value loop");
        assert_eq!(s.exit, Exit::Break);
        assert_eq!(s.success.1.text, "Ok(r)");
        let g = s.give_up.expect("a give-up");
        assert!(g.on_error.is_none());
        assert_eq!(g.otherwise.text, "{ warn!(\"giving up\"); Err(E::GaveUp) }");
        assert!(s.waits, "the arm's wait counts");
        assert_eq!(s.logging.len(), 1);
        assert_eq!(s.logging[0].body, "warn!(\"{e}\");");
        assert!(s.counter_let.is_some());
        // Under a timer: the error give-up and the timed-out give-up apart.
        let t = shape(
            "async fn f() -> Result<R, E> { let mut n = 0; /*L*/loop { n += 1; match timeout(D, c.send()).await { Ok(Ok(r)) => return Ok(r), Ok(Err(e)) if n >= 3 => Err(e)?, Err(_) if n >= 3 => return Err(E::Timeout), Ok(Err(e)) => warn!(\"{e}\"), Err(_) => warn!(\"timed out\"), } } }",
            "timeout",
        )
        .expect("a timed loop");
        let g = t.give_up.expect("a give-up");
        assert_eq!(
            g.on_error.map(|(p, l)| (p, l.text)),
            Some(("e".into(), "Err(e)?".into()))
        );
        assert_eq!(g.otherwise.text, "return Err(E::Timeout)");
        assert_eq!(
            t.logging.len(),
            1,
            "the timed-out arm has no future to log in"
        );
        assert_eq!(t.logging[0].pat.as_deref(), Some("Err(e)"));
    }

    /// Shapes whose flow the rewrite cannot keep: no shape, so no fix.
    #[test]
    fn near_misses_have_no_shape() {
        let ok = "Ok(r) => return Ok(r),";
        let gu = "Err(_) if attempt >= 3 => return Err(E::GaveUp),";
        let misses = [
            // The counter is read by the call, changed in an arm, or read after the loop.
            format!("let mut attempt = 0; /*L*/loop {{ attempt += 1; match c.send(attempt).await {{ {ok} {gu} Err(e) => warn!(\"{{e}}\"), }} }}"),
            format!("let mut attempt = 0; /*L*/loop {{ attempt += 1; match c.send().await {{ {ok} {gu} Err(_) => attempt = 0, }} }}"),
            format!("let mut attempt = 0; /*L*/loop {{ attempt += 1; attempt += 1; match c.send().await {{ {ok} {gu} Err(_) => {{}} }} }}"),
            "let mut attempt = 0; let v = /*L*/loop { attempt += 1; match c.send().await { Ok(r) => break Ok(r), Err(_) if attempt >= 3 => break Err(E::GaveUp), Err(_) => {} } }; log!(\"{attempt}\"); v".to_string(),
            // A client's give-up that returns the error: no error when the runtime's timer ends
            // the last attempt.
            format!("let mut attempt = 0; /*L*/loop {{ attempt += 1; match c.send().await {{ {ok} Err(e) if attempt >= 3 => return Err(e), Err(_) => {{}} }} }}"),
            // No give-up, `==`, two different caps.
            format!("let mut attempt = 0; /*L*/loop {{ attempt += 1; match c.send().await {{ {ok} Err(_) => {{}} }} }}"),
            format!("let mut attempt = 0; /*L*/loop {{ attempt += 1; match c.send().await {{ {ok} Err(_) if attempt == 3 => return Err(E::GaveUp), Err(_) => {{}} }} }}"),
            format!("let mut attempt = 0; /*L*/loop {{ attempt += 1; match c.send().await {{ {ok} Err(E::A) if attempt >= 3 => return Err(E::GaveUp), Err(_) if attempt >= 4 => return Err(E::GaveUp), Err(_) => {{}} }} }}"),
            // The start is not a literal; no increment.
            format!("let mut attempt = max; /*L*/loop {{ attempt += 1; match c.send().await {{ {ok} {gu} Err(_) => {{}} }} }}"),
            "let mut attempt = 0; /*L*/while attempt < 3 { match c.send().await { Ok(r) => return Ok(r), Err(_) => {} } }".to_string(),
            "let mut attempt = 0; /*L*/while attempt != 3 { attempt += 1; match c.send().await { Ok(r) => return Ok(r), Err(_) => {} } }".to_string(),
            // Failure arms that leave or go round early, a macro that may hide either, a wait
            // inside a condition, a statement that is neither wait nor logging.
            "/*L*/for _ in 0..3 { match c.send().await { Ok(r) => return Ok(r), Err(_) => continue, } }".to_string(),
            "/*L*/for _ in 0..3 { match c.send().await { Ok(r) => return Ok(r), Err(_) => break, } }".to_string(),
            "/*L*/for _ in 0..3 { match c.send().await { Ok(r) => return Ok(r), Err(e) => bail_on!(e), } }".to_string(),
            "/*L*/for _ in 0..3 { match c.send().await { Ok(r) => return Ok(r), Err(e) => { if slow(&e) { sleep(D).await; } } } }".to_string(),
            "/*L*/for _ in 0..3 { let req = c.build(); match req.send().await { Ok(r) => return Ok(r), Err(_) => {} } }".to_string(),
            "/*L*/for _ in 0..3 { match c.send().await { Ok(r) => return Ok(r), Err(e) => errors.push(e), } }".to_string(),
            // A labelled loop; a success arm with a guard; two success arms.
            "'l: /*L*/for _ in 0..3 { match c.send().await { Ok(r) => return Ok(r), Err(_) => {} } }".to_string(),
            "/*L*/for _ in 0..3 { match c.send().await { Ok(r) if r.ok() => return Ok(r), _ => {} } }".to_string(),
            // `if let` in a counted `loop` (its give-up is elsewhere).
            "let mut attempt = 0; /*L*/loop { attempt += 1; if let Ok(r) = c.send().await { return Ok(r); } }".to_string(),
            // A guard that compares a local.
            "let code = 3; /*L*/for _ in 0..3 { match c.send().await { Ok(r) => return Ok(r), Err(e) if e.code() == code => warn!(\"{e}\"), Err(_) => {} } }".to_string(),
        ];
        for m in &misses {
            assert!(client("", m).is_none(), "got a shape for {m}");
        }
        // Logging that reads `self` by value would move it into the future.
        let by_value = "impl S { async fn f(self) -> Result<R, E> { /*L*/for _ in 0..3 { match self.c.send().await { Ok(r) => return Ok(r), Err(e) => warn!(\"{} {e}\", self.name), } } Err(E::GaveUp) } }";
        assert!(shape(by_value, "").is_none());
        assert!(shape(&by_value.replace("(self)", "(&self)"), "").is_some());
        // A timer's error give-up without a timed-out one.
        let t = "async fn f() -> Result<R, E> { let mut n = 0; /*L*/loop { n += 1; match timeout(D, c.send()).await { Ok(Ok(r)) => return Ok(r), Ok(Err(e)) if n >= 3 => return Err(e), _ => {} } } }";
        assert!(shape(t, "timeout").is_none());
    }
}
