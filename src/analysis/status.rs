//! Status classes at retry sites: does a site retry every non-success status, or does it tell
//! transient statuses (408, 429, 5xx, a `should_retry` / `retryable` decision) from permanent
//! ones (400, 401, 403, 404, 422)?
//!
//! A site retries every non-success status when it tests only for success (`!status.is_success()`,
//! `status != 200`, `if resp.status().is_success() { break }`, `error_for_status()?` inside a
//! combinator's operation) and no classifying test decides: a transient class that guards going
//! round again, or a permanent class that guards leaving. A transient test that only guards
//! leaving (5xx gives up, 4xx goes round) classifies nothing.
//!
//! Deliberately absent: error types classified elsewhere (a site that retries every `Err` with no
//! status test in sight is not judged here: its error may already be classified), and
//! classification in another function unless its name says so (`is_retryable(&e)`).

use std::collections::HashMap;

use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Expr, UnOp};

use super::words::ident_words_of;
use super::{span_of, Facts, SiteKind, StatusRetry};
use crate::source::SourceFile;

/// Status constants (`StatusCode::X`) that name a transient failure.
const TRANSIENT_CONSTS: &[&str] = &[
    "TOO_MANY_REQUESTS",
    "SERVICE_UNAVAILABLE",
    "BAD_GATEWAY",
    "GATEWAY_TIMEOUT",
    "INTERNAL_SERVER_ERROR",
    "REQUEST_TIMEOUT",
];
/// Status constants that name a permanent failure.
const PERMANENT_CONSTS: &[&str] = &[
    "BAD_REQUEST",
    "UNAUTHORIZED",
    "FORBIDDEN",
    "NOT_FOUND",
    "CONFLICT",
    "GONE",
    "UNPROCESSABLE_ENTITY",
    "METHOD_NOT_ALLOWED",
    "PAYLOAD_TOO_LARGE",
];
/// Status constants of a success.
const SUCCESS_CONSTS: &[&str] = &["OK", "CREATED", "ACCEPTED", "NO_CONTENT"];
/// Identifier words of a transient-class decision (`should_retry`, `is_retryable`, `Transient`).
const TRANSIENT_WORDS: &[&str] = &[
    "retryable",
    "retriable",
    "transient",
    "recoverable",
    "throttled",
];
/// Combinator methods that take a "retry this error?" predicate.
const PREDICATES: &[&str] = &["when", "retry_if", "notify_when", "adjust"];
/// Identifier words of a permanent-class decision.
const PERMANENT_WORDS: &[&str] = &["permanent", "fatal", "unrecoverable"];

/// Find the sites that retry every non-success status.
pub(super) fn run(file: &syn::File, src: &SourceFile, facts: &Facts) -> Vec<StatusRetry> {
    // Findings are made at sites only.
    if facts.sites.is_empty() {
        return Vec::new();
    }
    let sites: HashMap<(usize, usize), usize> = facts
        .sites
        .iter()
        .enumerate()
        .map(|(i, s)| ((s.span.start, s.span.end), i))
        .collect();
    let mut v = Sites {
        src,
        facts,
        by_span: &sites,
        predicated: Vec::new(),
        out: Vec::new(),
    };
    v.visit_file(file);
    // One finding per status test: an outer loop around an inner retry loop sees the same test.
    v.out
        .sort_by_key(|s| (s.test.start, std::cmp::Reverse(s.site)));
    v.out.dedup_by_key(|s| s.test.start);
    v.out
}

struct Sites<'a> {
    src: &'a SourceFile,
    facts: &'a Facts,
    by_span: &'a HashMap<(usize, usize), usize>,
    /// Starts of combinator calls with a retry predicate further out in their method chain
    /// (`(op).retry(b).when(pred)`): the predicate decides what is retried.
    predicated: Vec<usize>,
    out: Vec<StatusRetry>,
}

impl<'ast> Visit<'ast> for Sites<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        let span = span_of(self.src, e.span());
        if let Expr::MethodCall(m) = e {
            if PREDICATES.contains(&m.method.to_string().as_str()) {
                let mut r = &*m.receiver;
                while let Expr::MethodCall(inner) = r {
                    self.predicated.push(span_of(self.src, inner.span()).start);
                    r = &inner.receiver;
                }
            }
        }
        if let Some(&site) = self.by_span.get(&(span.start, span.end)) {
            let combinator = matches!(self.facts.sites[site].kind, SiteKind::Combinator(_));
            let mut found = Scan::default();
            found.visit_expr(e);
            found.combinator_classifies |= self.predicated.contains(&span.start);
            if !(found.classified || combinator && found.combinator_classifies) {
                // A site that also returns an error somewhere decides to give up on something:
                // leaving only on success is then not the whole story.
                let success_exit = found.success_exit.filter(|_| !found.error_return);
                let test = if combinator {
                    found.error_for_status
                } else {
                    found.negative.or(success_exit)
                };
                if let Some((test, success_exit)) = test.map(|t| (t, found.negative.is_none())) {
                    self.out.push(StatusRetry {
                        site,
                        test: span_of(self.src, test),
                        success_exit: success_exit && !combinator,
                    });
                }
            }
        }
        visit::visit_expr(self, e);
    }
}

/// What one site's code tests about statuses.
#[derive(Default)]
struct Scan {
    /// A generic non-success test that goes round (`!status.is_success()`, `status != 200`).
    negative: Option<proc_macro2::Span>,
    /// A generic success test that leaves (`if status.is_success() { break }`).
    success_exit: Option<proc_macro2::Span>,
    /// Some `return` hands back an error (`return Err(e)`, `Poll::Ready(Some(Err(e)))`).
    error_return: bool,
    /// `error_for_status()` turning every non-success status into an error.
    error_for_status: Option<proc_macro2::Span>,
    /// A classifying test decides (transient guards going round, or permanent guards leaving).
    classified: bool,
    /// The combinator retries only when a predicate says so (`.when(..)`, `RetryIf`, a
    /// `backoff::Error::permanent` in the operation).
    combinator_classifies: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Success,
    Transient,
    Permanent,
}

impl Scan {
    fn branch(&mut self, cond: &Expr, body: &syn::Block) {
        let leaves = leaves(body);
        let rounds = !leaves || goes_round(body);
        for (class, span, negated) in classes(cond) {
            match (class, negated) {
                (Class::Success, false) if leaves => {
                    self.success_exit.get_or_insert(span);
                }
                // A nested bound may leave from inside (`if n > 3 { return }`); an explicit
                // continue or wait still goes round on the failure.
                (Class::Success, true) if goes_round(body) || !leaves => {
                    self.negative.get_or_insert(span);
                }
                (Class::Transient, false) | (Class::Permanent, true) if rounds => {
                    self.classified = true;
                }
                (Class::Permanent, false) | (Class::Transient, true) if leaves => {
                    self.classified = true;
                }
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Scan {
    fn visit_item(&mut self, _: &'ast syn::Item) {}

    fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
        if let Some(v) = &r.expr {
            let w = ident_words_of(&**v);
            self.error_return |= w.contains("err") || w.contains("error");
        }
        visit::visit_expr_return(self, r);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.error_return |= m.path.segments.last().is_some_and(|s| s.ident == "bail");
    }

    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        self.branch(&i.cond, &i.then_branch);
        visit::visit_expr_if(self, i);
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        for arm in &m.arms {
            let body = syn::Block {
                brace_token: syn::token::Brace::default(),
                stmts: vec![syn::Stmt::Expr((*arm.body).clone(), None)],
            };
            // A status-literal pattern (`429 | 503 =>`, `StatusCode::NOT_FOUND =>`) or a guard
            // classifies like an `if`.
            let pat: Expr = syn::parse2(quote::ToTokens::to_token_stream(&arm.pat))
                .unwrap_or(Expr::Verbatim(proc_macro2::TokenStream::new()));
            let pat_classes = classes(&pat);
            if pat_classes.iter().any(|(c, _, _)| *c != Class::Success) {
                let leaves = leaves(&body);
                let rounds = !leaves || goes_round(&body);
                for (c, _, _) in pat_classes {
                    if (c == Class::Transient && rounds) || (c == Class::Permanent && leaves) {
                        self.classified = true;
                    }
                }
            }
            if let Some((_, g)) = &arm.guard {
                self.branch(g, &body);
            }
        }
        visit::visit_expr_match(self, m);
    }

    fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
        // `while !status.is_success()` goes round on every non-success status.
        for (class, span, negated) in classes(&w.cond) {
            if class == Class::Success && negated {
                self.negative.get_or_insert(span);
            } else if class == Class::Transient && !negated {
                self.classified = true;
            }
        }
        visit::visit_expr_while(self, w);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let name = m.method.to_string();
        match name.as_str() {
            "error_for_status" | "error_for_status_ref" => {
                self.error_for_status.get_or_insert(m.method.span());
            }
            n if PREDICATES.contains(&n) => self.combinator_classifies = true,
            _ => {}
        }
        visit::visit_expr_method_call(self, m);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let words = ident_words_of(p);
        if words
            .iter()
            .any(|w| PERMANENT_WORDS.contains(&w.as_str()) || TRANSIENT_WORDS.contains(&w.as_str()))
            || p.segments.iter().any(|s| s.ident == "RetryIf")
        {
            self.combinator_classifies = true;
        }
        visit::visit_path(self, p);
    }
}

/// Status classes a condition tests: (class, where, negated).
fn classes(cond: &Expr) -> Vec<(Class, proc_macro2::Span, bool)> {
    struct V {
        out: Vec<(Class, proc_macro2::Span, bool)>,
        negated: bool,
    }
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_unary(&mut self, u: &'ast syn::ExprUnary) {
            if matches!(u.op, UnOp::Not(_)) {
                self.negated = !self.negated;
                let before = self.out.len();
                visit::visit_expr_unary(self, u);
                // A negated success test points at the whole `!x.is_success()`.
                for t in &mut self.out[before..] {
                    if t.0 == Class::Success {
                        t.1 = u.span();
                    }
                }
                self.negated = !self.negated;
            } else {
                visit::visit_expr_unary(self, u);
            }
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let name = m.method.to_string();
            let class = match name.as_str() {
                "is_success" => Some(Class::Success),
                "is_server_error" => Some(Class::Transient),
                "is_client_error" => Some(Class::Permanent),
                _ => word_class(&name),
            };
            if let Some(c) = class {
                self.out.push((c, m.span(), self.negated));
            }
            visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let Expr::Path(p) = &*c.func {
                if let Some(class) = p
                    .path
                    .segments
                    .last()
                    .and_then(|s| word_class(&s.ident.to_string()))
                {
                    self.out.push((class, c.span(), self.negated));
                }
            }
            visit::visit_expr_call(self, c);
        }
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            use syn::BinOp::{Eq, Ge, Gt, Le, Lt, Ne};
            let eq = match b.op {
                Eq(_) => Some(false),
                Ne(_) => Some(true),
                Ge(_) | Gt(_) | Le(_) | Lt(_) => {
                    // `status >= 500` is a server-error test; `status >= 400` a client one.
                    if let Some(n) = int_of(&b.right) {
                        if (500..600).contains(&n) {
                            self.out.push((Class::Transient, b.span(), self.negated));
                        } else if (400..500).contains(&n) {
                            self.out.push((Class::Permanent, b.span(), self.negated));
                        }
                    }
                    None
                }
                _ => None,
            };
            if let Some(ne) = eq {
                for side in [&*b.left, &*b.right] {
                    if let Some(c) = status_class(side) {
                        let neg = self.negated ^ ne;
                        self.out.push((c, b.span(), neg));
                    }
                }
                return;
            }
            visit::visit_expr_binary(self, b);
        }
        fn visit_expr_range(&mut self, r: &'ast syn::ExprRange) {
            if let Some(c) = r.start.as_deref().and_then(status_class) {
                self.out.push((c, r.span(), self.negated));
            }
        }
        fn visit_pat(&mut self, _: &'ast syn::Pat) {}
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if let Some(c) = status_class(&Expr::Path(p.clone())) {
                if c != Class::Success {
                    self.out.push((c, p.span(), self.negated));
                }
            }
        }
        fn visit_expr_lit(&mut self, l: &'ast syn::ExprLit) {
            if let Some(c) = status_class(&Expr::Lit(l.clone())) {
                if c != Class::Success {
                    self.out.push((c, l.span(), self.negated));
                }
            }
        }
    }
    let mut v = V {
        out: Vec::new(),
        negated: false,
    };
    v.visit_expr(cond);
    // `if let Some(x) = ..` binds, it does not test a status.
    v.out
}

fn word_class(name: &str) -> Option<Class> {
    let mut w = std::collections::BTreeSet::new();
    super::words::split_ident(name, &mut w);
    if w.iter().any(|w| TRANSIENT_WORDS.contains(&w.as_str()))
        || (w.contains("should") && w.contains("retry"))
    {
        Some(Class::Transient)
    } else if w.iter().any(|w| PERMANENT_WORDS.contains(&w.as_str())) {
        Some(Class::Permanent)
    } else {
        None
    }
}

/// The class of a status literal or constant.
fn status_class(e: &Expr) -> Option<Class> {
    if let Some(n) = int_of(e) {
        return match n {
            200..=299 => Some(Class::Success),
            408 | 429 | 500..=599 => Some(Class::Transient),
            400..=499 => Some(Class::Permanent),
            _ => None,
        };
    }
    let Expr::Path(p) = e else {
        return None;
    };
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let last = segs.last()?;
    // Only `StatusCode::OK` (not any `OK` constant) is a success.
    let status_path = segs.iter().any(|s| s.contains("Status"));
    if TRANSIENT_CONSTS.contains(&last.as_str()) {
        Some(Class::Transient)
    } else if PERMANENT_CONSTS.contains(&last.as_str()) {
        Some(Class::Permanent)
    } else if status_path && SUCCESS_CONSTS.contains(&last.as_str()) {
        Some(Class::Success)
    } else {
        None
    }
}

fn int_of(e: &Expr) -> Option<u64> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        Expr::Paren(p) => int_of(&p.expr),
        _ => None,
    }
}

/// The block leaves the site: `return`, `break`, a leaving macro, or `Err(..)?`.
fn leaves(b: &syn::Block) -> bool {
    struct V(bool, usize);
    impl<'ast> Visit<'ast> for V {
        fn visit_item(&mut self, _: &'ast syn::Item) {}
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_break(&mut self, _: &'ast syn::ExprBreak) {
            self.0 |= self.1 == 0;
        }
        fn visit_expr_loop(&mut self, l: &'ast syn::ExprLoop) {
            self.1 += 1;
            visit::visit_expr_loop(self, l);
            self.1 -= 1;
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            self.0 |= m
                .path
                .segments
                .last()
                .is_some_and(|s| matches!(s.ident.to_string().as_str(), "bail" | "panic"));
        }
    }
    let mut v = V(false, 0);
    v.visit_block(b);
    v.0
}

/// The block goes round explicitly: a `continue` or a wait.
fn goes_round(b: &syn::Block) -> bool {
    let w = super::words::words_of(b);
    w.contains("continue") || w.contains("sleep") || w.contains("backoff") || w.contains("delay")
}
