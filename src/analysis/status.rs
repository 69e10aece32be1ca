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
//! A give-up counts against "leaves only on success" only on the non-success path (after or
//! beside the success exit), and not when it is the attempt cap or a switch (`if !retry`,
//! `if n > max`) or an error a stream yields after scheduling its reconnect
//! (`state = Waiting(delay); return Poll::Ready(Some(Err(e)))`): a reconnect state machine goes
//! round by its next poll, so its non-success path is the reconnect it schedules.
//! A combinator's operation named rather than written inline (`fetch.retry(..)`,
//! `Retry::spawn(s, op)`) is read from this file's function or closure of that name.
//!
//! A site that tests nothing itself and goes round on every error is judged by the helpers of
//! this file its attempt calls: one whose only status test turns every non-success status into
//! an error (`if !status.is_success() { return Err(..) }`) makes the site retry 4xx, and the
//! finding points at that test. Where the site classifies no error at all (a wrapper call whose
//! loop retries every `Err`), the helpers the operation handed to it calls count too, and so
//! does a helper that turns the 4xx class into an error (`if status.is_client_error() { return
//! Err(..) }`): the finding points at its class-wide test.
//!
//! A decision in a condition or a `match` scrutinee that is handed the status
//! (`match strategy.test(last_status, tries)`) classifies it where this file cannot see: the site
//! is not judged. So does a classifying test bound to a local first and tested later
//! (`let can_retry = is_status_retryable(status) && n < max; if !can_retry { return Err(..) }`);
//! a bound success test (`let ok = s.is_success();`) is not expanded: what a branch on it
//! decides may be someone else's verdict (a delegate's `Retry::After`).
//!
//! Deliberately absent: error types classified elsewhere (a site that retries every `Err` with no
//! status test in sight is not judged here: its error may already be classified), helpers in
//! other files, and classification in another function unless its name says so
//! (`is_retryable(&e)`) or it is handed the status.

use std::collections::{HashMap, HashSet};

use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Expr, UnOp};

use super::bodies::Bodies;
use super::words::ident_words_of;
use super::{span_of, Facts, SiteKind, StatusRetry};
use crate::base::source::SourceFile;

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
/// Identifier words of a condition that is an attempt cap or an on/off switch, not a judgement
/// on the response (`if attempts > max`, `if !retry`, `if !self.reconnect`).
const BOUND_WORDS: &[&str] = &[
    "attempt",
    "attempts",
    "retry",
    "retries",
    "tries",
    "max",
    "limit",
    "remaining",
    "budget",
    "deadline",
    "elapsed",
    "reconnect",
    "exhausted",
    "count",
];
/// Identifier words of a statement that schedules the next attempt of a state machine.
const WAIT_WORDS: &[&str] = &[
    "sleep",
    "delay",
    "backoff",
    "reconnect",
    "reconnecting",
    "wait",
    "waiting",
    "retrying",
];
/// Identifier words of a permanent-class decision.
const PERMANENT_WORDS: &[&str] = &["permanent", "fatal", "unrecoverable"];

/// Find the sites that retry every non-success status, and the [`silent_sites`].
/// With them, the sites that test no status themselves, classify nothing and go round on
/// every error, whose attempt calls no helper of this file that decides ([`run`] judges
/// those): each with the names of the functions its attempt calls, for the crate index to
/// follow into other files ([`Facts::silent_sites`]).
pub(super) fn run(
    bodies: &Bodies<'_>,
    site_nodes: &[Option<usize>],
    src: &SourceFile,
    facts: &Facts,
) -> (Vec<StatusRetry>, Silent) {
    scan_sites(bodies, site_nodes, src, facts)
}

/// The status test of a function body that turns every non-success status into an error
/// (`if !resp.status().is_success() { return Err(..) }`) and classifies nothing: a retry site
/// whose attempt calls it retries 4xx like 503.
pub(crate) fn gate(body: &syn::Block) -> Option<proc_macro2::Span> {
    let mut scan = Scan::default();
    scan.visit_block(body);
    if scan.classified || scan.error_for_status.is_some() {
        return None;
    }
    scan.negative_leaves
}

/// The test of a function body that turns the client errors (4xx, or one of them) into an
/// error: an operation that calls it inside a retry that goes round on every error (one that
/// classifies nothing, the caller's condition) retries those 4xx (`rabbitmq_http_client`'s
/// `ok_or_status_code_error` under its `with_retry`). The class-wide test is the place.
fn permanent_gate(body: &syn::Block) -> Option<proc_macro2::Span> {
    let mut scan = Scan::default();
    scan.visit_block(body);
    if scan.error_for_status.is_some() {
        return None;
    }
    let wide = scan.permanent_errors.iter().find(|(_, w)| *w);
    wide.or(scan.permanent_errors.first()).map(|(s, _)| *s)
}

pub(super) type Silent = Vec<(usize, Vec<String>)>;

fn scan_sites(
    bodies: &Bodies<'_>,
    site_nodes: &[Option<usize>],
    src: &SourceFile,
    facts: &Facts,
) -> (Vec<StatusRetry>, Silent) {
    // Findings are made at sites only.
    if facts.sites.is_empty() {
        return (Vec::new(), Vec::new());
    }
    // Operations named by a combinator, and the helpers a loop's attempt calls, are read from
    // this file's functions and named closures (not a trait's default methods).
    let mut ops = Ops::default();
    for b in bodies.fns.iter().filter(|b| !b.in_trait) {
        ops.add(b.sig.ident.to_string(), Op::Fn(b.block));
    }
    for (name, body) in &bodies.closures {
        ops.add(name.clone(), Op::Closure(body));
    }
    let mut v = Sites {
        src,
        facts,
        ops: &ops.by_name,
        predicated: Vec::new(),
        out: Vec::new(),
        silent: Vec::new(),
    };
    // The sites in walk order, each after the method chains around it, whose predicates
    // (`.when(pred)`) decide what the combinator inside retries.
    let mut by_node: Vec<(usize, usize)> = (site_nodes.iter().enumerate())
        .filter_map(|(site, n)| n.map(|n| (n, site)))
        .collect();
    by_node.sort_unstable();
    for (node, site) in by_node {
        let Some(e) = bodies.expr(node) else { continue };
        for up in bodies.ancestors(node) {
            v.predicates_of(bodies.expr(up));
        }
        v.site(site, e);
    }
    // One finding per status test: an outer loop around an inner retry loop sees the same test.
    v.out
        .sort_by_key(|s| (s.test.start, std::cmp::Reverse(s.site)));
    v.out.dedup_by_key(|s| s.test.start);
    (v.out, v.silent)
}

/// The body of a function or closure of this file that a combinator may run as its operation.
#[derive(Clone, Copy)]
enum Op<'f> {
    Fn(&'f syn::Block),
    Closure(&'f Expr),
}

/// Functions (`fn fetch()`) and closures bound to a local (`let op = || ..`) by name. A name
/// bound twice is ambiguous and dropped.
#[derive(Default)]
struct Ops<'f> {
    by_name: HashMap<String, Option<Op<'f>>>,
}

impl<'f> Ops<'f> {
    fn add(&mut self, name: String, op: Op<'f>) {
        self.by_name
            .entry(name)
            .and_modify(|o| *o = None)
            .or_insert(Some(op));
    }
}

struct Sites<'a> {
    src: &'a SourceFile,
    facts: &'a Facts,
    ops: &'a HashMap<String, Option<Op<'a>>>,
    /// Starts of combinator calls with a retry predicate further out in their method chain
    /// (`(op).retry(b).when(pred)`): the predicate decides what is retried.
    predicated: Vec<usize>,
    out: Vec<StatusRetry>,
    silent: Silent,
}

impl Sites<'_> {
    /// Scan the operations a combinator names (`fetch.retry(..)`, `Retry::spawn(s, op)`) that
    /// are defined in this file, outside the call.
    fn named_ops(&self, e: &Expr, found: &mut Scan) {
        let at = span_of(self.src, super::spans::of(&e));
        let mut names = HashSet::new();
        collect_names(e, &mut names);
        for name in names {
            let Some(Some(op)) = self.ops.get(&name) else {
                continue;
            };
            let body = match op {
                Op::Fn(b) => super::spans::of(&b),
                Op::Closure(c) => super::spans::of(&c),
            };
            if span_of(self.src, body).contains(at) {
                continue;
            }
            match op {
                Op::Fn(b) => found.visit_block(b),
                Op::Closure(c) => found.visit_expr(c),
            }
        }
    }
}

impl Sites<'_> {
    /// The status test of a helper that the site's attempt calls, when the helper turns every
    /// non-success status into an error (`if !status.is_success() { return Err(..) }`) and
    /// classifies nothing: the site goes round on that error, so 4xx is retried like 503. Only
    /// a call whose error the site handles counts (not `helper()?`, which leaves the site), and
    /// only a helper of this file that names one function and holds no retry site of its own.
    /// With `permanent` (the site retries every error: it classifies none), the helpers the
    /// closures handed to it call are read too, and a helper that turns 4xx into an error is one
    /// too ([`permanent_gate`]).
    fn callee_gate(&self, site: &Expr, permanent: bool) -> Option<proc_macro2::Span> {
        let at = span_of(self.src, super::spans::of(&site));
        // The operations handed to a site that retries every error are its attempts too; a
        // site that classifies may not retry what they fail with.
        let names = if permanent {
            attempt_callees(site)
        } else {
            super::callee_names(site, true)
        };
        names.into_iter().find_map(|name| {
            let Some(Op::Fn(body)) = self.ops.get(&name).copied().flatten() else {
                return None;
            };
            let helper = span_of(self.src, body.span());
            if helper.contains(at) || self.facts.sites.iter().any(|s| helper.contains(s.span)) {
                return None;
            }
            gate(body).or_else(|| permanent.then(|| permanent_gate(body)).flatten())
        })
    }
}

impl Sites<'_> {
    /// A method chain ending in a retry predicate (`(op).retry(b).when(pred)`): the combinator
    /// calls inside it have their retries decided by the predicate.
    fn predicates_of(&mut self, e: Option<&Expr>) {
        let Some(Expr::MethodCall(m)) = e else { return };
        if PREDICATES.contains(&m.method.to_string().as_str()) {
            let mut r = &*m.receiver;
            while let Expr::MethodCall(inner) = r {
                self.predicated
                    .push(span_of(self.src, super::spans::of(&inner)).start);
                r = &inner.receiver;
            }
        }
    }

    /// What site `site`, written as `e`, tests about statuses.
    fn site(&mut self, site: usize, e: &Expr) {
        let span = span_of(self.src, super::spans::of(&e));
        let kind = &self.facts.sites[site].kind;
        let mut found = Scan::default();
        found.visit_expr(e);
        if matches!(kind, SiteKind::Combinator(_)) {
            self.named_ops(e, &mut found);
        }
        // A call of the crate's own retry wrapper that retries every error, with
        // `error_for_status()` in the operation written at the call, is read like a
        // combinator: every non-success status goes round. A test inside a helper the
        // operation calls is found through the helper, as for a loop.
        let combinator = match kind {
            SiteKind::Combinator(_) => true,
            SiteKind::Wrapper(_) => {
                !self.facts.sites[site].classifies && found.error_for_status.is_some()
            }
            _ => false,
        };
        found.combinator_classifies |= self.predicated.contains(&span.start);
        let classifies = found.combinator_classifies && found.status_transient.is_none();
        if !(found.classified || combinator && classifies) {
            // A site that also gives up with an error on a non-success response decides
            // something about statuses: leaving only on success is then not the whole story.
            let success_exit = found.success_exit.filter(|_| !found.gives_up_on_status());
            let test = if combinator {
                found.error_for_status.or(found.negative_leaves)
            } else {
                found.negative.or(success_exit)
            };
            // A helper's test is the finding's place: the site itself tests nothing.
            let test = test.map(|t| (t, found.negative.is_none())).or_else(|| {
                if combinator || !found.says_nothing() {
                    return None;
                }
                let classifies = self.facts.sites[site].classifies;
                let gate = self.callee_gate(e, !classifies).map(|t| (t, false));
                if gate.is_none() && !classifies {
                    self.silent.push((site, attempt_callees(e)));
                }
                gate
            });
            if let Some((test, success_exit)) = test {
                let reconnect = found
                    .reconnect()
                    .filter(|_| success_exit && !combinator)
                    .map(|s| span_of(self.src, s));
                self.out.push(StatusRetry {
                    site,
                    test: span_of(self.src, test),
                    success_exit: success_exit && !combinator,
                    reconnect,
                });
            }
        }
    }
}

/// The functions a silent site's attempt calls, by name: what [`callee_gate`](Sites) reads in
/// this file, plus, for a call of a retry wrapper, what the closures it is given call (the
/// wrapper runs them as its attempt: `retry(3, || client.get(url))`).
fn attempt_callees(site: &Expr) -> Vec<String> {
    let mut names = super::callee_names(site, true);
    if let Expr::Call(syn::ExprCall { args, .. })
    | Expr::MethodCall(syn::ExprMethodCall { args, .. }) = site
    {
        for a in args {
            if let Expr::Closure(c) = a {
                names.extend(super::callee_names(&c.body, true));
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Single-identifier paths in `e` (`fetch`, `op`): candidate names of an operation.
fn collect_names(e: &Expr, out: &mut HashSet<String>) {
    struct V<'o>(&'o mut HashSet<String>);
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if let Some(id) = p.path.get_ident() {
                self.0.insert(id.to_string());
            }
        }
    }
    V(out).visit_expr(e);
}

/// A line-column position, ordered.
type Pos = (usize, usize);

fn start_of(s: proc_macro2::Span) -> Pos {
    (s.start().line, s.start().column)
}

fn end_of(s: proc_macro2::Span) -> Pos {
    (s.end().line, s.end().column)
}

/// What one site's code tests about statuses.
#[derive(Default)]
struct Scan {
    /// A generic non-success test that goes round (`!status.is_success()`, `status != 200`).
    negative: Option<proc_macro2::Span>,
    /// A generic non-success test that leaves with an error (`if !ok { bail!(..) }`): inside a
    /// combinator's operation the error is what goes round.
    negative_leaves: Option<proc_macro2::Span>,
    /// A generic success test that leaves (`if status.is_success() { break }`).
    success_exit: Option<proc_macro2::Span>,
    /// Where the success exit's non-success path runs: from the end of its branch to the end of
    /// the enclosing block (the `else` and what follows), or the later arms of its `match`.
    success_rest: Option<(Pos, Pos)>,
    /// Error returns (`return Err(e)`, `bail!`): where, and whether they are exempt (the attempt
    /// cap or a switch, or a stream's error item after scheduling its reconnect).
    error_returns: Vec<(Pos, bool)>,
    /// Returns that yield a stream's error item after scheduling a reconnect, with the
    /// statement that schedules it.
    reconnects: Vec<(Pos, proc_macro2::Span)>,
    /// Enclosing blocks' ends.
    block_ends: Vec<Pos>,
    /// Whether each enclosing `if` / guard tests only a bound or a switch.
    bound_conds: Vec<bool>,
    /// `error_for_status()` turning every non-success status into an error.
    error_for_status: Option<proc_macro2::Span>,
    /// A classifying test decides (transient guards going round, or permanent guards leaving).
    classified: bool,
    /// The combinator retries only when a predicate says so (`.when(..)`, `RetryIf`, a
    /// `backoff::Error::permanent` in the operation).
    combinator_classifies: bool,
    /// A pattern names an error variant (`Errno::ENOENT =>`, `Err(Error::Timeout(_)) =>`): the
    /// site decides by the kind of error, so it does not simply retry every error.
    error_kinds: bool,
    /// `error_for_status()`'s error is wrapped as transient on the spot
    /// (`.map_err(backoff::Error::transient)`): every non-success status is retried, whatever
    /// other errors of the operation are marked permanent. Where it is marked.
    status_transient: Option<proc_macro2::Span>,
    /// Permanent-class tests that leave with an error (`if status.is_client_error() { return
    /// Err(..) }`, `if status == NOT_FOUND { return Err(NotFound) }`), class-wide ones first:
    /// in a helper that an operation retried on every error calls, they make 4xx go round.
    permanent_errors: Vec<(proc_macro2::Span, bool)>,
    /// Booleans bound from a classifying status test (`let can_retry = is_retryable(status) &&
    /// n < max;`): a later `if !can_retry { return Err(..) }` decides by that test.
    tests: HashMap<String, Expr>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Success,
    Transient,
    Permanent,
}

impl Scan {
    fn branch(&mut self, cond: &Expr, body: &syn::Block) -> bool {
        let leaves = leaves(body);
        let rounds = !leaves || goes_round(body);
        let had_exit = self.success_exit.is_some();
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
                (Class::Success, true) if leaves_with_error(body) => {
                    self.negative_leaves.get_or_insert(span);
                }
                (Class::Transient, false) | (Class::Permanent, true) if rounds => {
                    self.classified = true;
                }
                (Class::Permanent, false) | (Class::Transient, true) if leaves => {
                    self.classified = true;
                    if class == Class::Permanent && leaves_with_error(body) {
                        // One code compared for equality (`status == NOT_FOUND`) is not the
                        // class; `is_client_error()` or `>= 400` is.
                        let one_code = matches!(cond, Expr::Binary(b)
                            if matches!(b.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)));
                        self.permanent_errors.push((span, !one_code));
                    }
                }
                _ => {}
            }
        }
        !had_exit && self.success_exit.is_some()
    }

    /// `can_retry` or `!can_retry` bound from a status test ([`Self::tests`]): that test.
    fn expand(&self, cond: &Expr) -> Expr {
        let named = |e: &Expr| match e {
            Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|i| self.tests.get(&i.to_string())),
            _ => None,
        };
        match cond {
            Expr::Unary(u) if matches!(u.op, UnOp::Not(_)) => match named(&u.expr) {
                Some(t) => Expr::Unary(syn::ExprUnary {
                    attrs: Vec::new(),
                    op: u.op,
                    // The bound test's own spans, so a finding points at it.
                    expr: Box::new(t.clone()),
                }),
                None => cond.clone(),
            },
            c => named(c).cloned().unwrap_or_else(|| c.clone()),
        }
    }

    fn error_return(&mut self, at: proc_macro2::Span) {
        let pos = start_of(at);
        let exempt = self.bound_conds.last() == Some(&true)
            || self.reconnects.iter().any(|(p, _)| *p == pos);
        self.error_returns.push((pos, exempt));
    }

    fn in_rest(&self, pos: Pos) -> bool {
        self.success_rest
            .is_some_and(|(from, to)| from <= pos && pos <= to)
    }

    /// The site tests no status, classifies nothing and gives up only at its cap or switch: it
    /// goes round on every error, so what its errors mean is decided by the helpers it calls.
    fn says_nothing(&self) -> bool {
        self.negative.is_none()
            && self.negative_leaves.is_none()
            && self.success_exit.is_none()
            && self.error_for_status.is_none()
            && !self.classified
            && !self.combinator_classifies
            && !self.error_kinds
            && self.error_returns.iter().all(|(_, exempt)| *exempt)
    }

    /// Some error return on the success exit's non-success path is a decision, not the cap.
    fn gives_up_on_status(&self) -> bool {
        self.error_returns
            .iter()
            .any(|(pos, exempt)| !exempt && self.in_rest(*pos))
    }

    /// The reconnect a state machine schedules on the success exit's non-success path.
    fn reconnect(&self) -> Option<proc_macro2::Span> {
        self.reconnects
            .iter()
            .find(|(pos, _)| self.in_rest(*pos))
            .map(|(_, s)| *s)
    }

    /// In a block, a `return` of a stream's error item (`Poll::Ready(Some(Err(e)))`) after a
    /// statement that schedules the next attempt (`state.set(Waiting(delay(d)))`) yields the
    /// error and reconnects on the next poll: record it before the block's returns are visited.
    fn stream_yields(&mut self, b: &syn::Block) {
        let mut wait = None;
        for stmt in &b.stmts {
            if let syn::Stmt::Expr(Expr::Return(r), _) = stmt {
                if let (Some(v), Some(w)) = (&r.expr, wait) {
                    if stream_error_item(v) {
                        self.reconnects.push((start_of(super::spans::of(&r)), w));
                    }
                }
                continue;
            }
            let words = ident_words_of(stmt);
            if words.iter().any(|w| WAIT_WORDS.contains(&w.as_str())) && !words.contains("return") {
                wait = Some(super::spans::of(&stmt));
            }
        }
    }
}

impl<'ast> Visit<'ast> for Scan {
    fn visit_pat(&mut self, p: &'ast syn::Pat) {
        let path = match p {
            syn::Pat::TupleStruct(t) => Some(&t.path),
            syn::Pat::Path(x) => Some(&x.path),
            syn::Pat::Struct(x) => Some(&x.path),
            _ => None,
        };
        let variant = path.and_then(|p| p.segments.last()).is_some_and(|s| {
            let n = s.ident.to_string();
            n.starts_with(|c: char| c.is_ascii_uppercase())
                && !matches!(n.as_str(), "Ok" | "Err" | "Some" | "None")
        });
        self.error_kinds |= variant;
        visit::visit_pat(self, p);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}

    fn visit_block(&mut self, b: &'ast syn::Block) {
        self.stream_yields(b);
        self.block_ends.push(end_of(super::spans::of(&b)));
        visit::visit_block(self, b);
        self.block_ends.pop();
    }

    fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
        if let Some(v) = &r.expr {
            let w = ident_words_of(&**v);
            if w.contains("err") || w.contains("error") {
                self.error_return(super::spans::of(&r));
            }
        }
        visit::visit_expr_return(self, r);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if super::macros::macro_name(m) == "bail" {
            self.error_return(m.span());
        }
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let (syn::Pat::Ident(id), Some(init)) = (&l.pat, &l.init) {
            // Only a test that classifies: a bound success test (`let ok = s.is_success();`)
            // guards what a later branch decides by other means (a delegate's verdict).
            if init.diverge.is_none()
                && (classes(&init.expr).iter().any(|c| c.0 != Class::Success)
                    || asks_with_status(&init.expr))
            {
                self.tests
                    .insert(id.ident.to_string(), (*init.expr).clone());
            }
        }
        visit::visit_local(self, l);
    }

    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        let cond = self.expand(&i.cond);
        self.classified |= asks_with_status(&cond);
        if self.branch(&cond, &i.then_branch) {
            let to = self.block_ends.last().copied().unwrap_or((usize::MAX, 0));
            self.success_rest = Some((end_of(super::spans::of(&i.then_branch)), to));
        }
        self.visit_expr(&i.cond);
        self.bound_conds.push(is_bound(&i.cond));
        self.visit_block(&i.then_branch);
        if let Some((_, e)) = &i.else_branch {
            self.visit_expr(e);
        }
        self.bound_conds.pop();
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        self.classified |= asks_with_status(&m.expr);
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
                if self.branch(g, &body) {
                    self.success_rest =
                        Some((end_of(super::spans::of(&arm)), end_of(super::spans::of(&m))));
                }
            }
        }
        // `Err(e) if attempt < n => { wait }, Err(e) => return Err(e)`: an unguarded arm after
        // an arm whose guard is the attempt cap is that cap's give-up, not a decision on the
        // error, as `if attempt >= n { return Err(e) }` would be.
        self.visit_expr(&m.expr);
        let mut capped = false;
        for arm in &m.arms {
            let bound = match &arm.guard {
                Some((_, g)) => {
                    capped |= is_bound(g);
                    is_bound(g)
                }
                None => capped,
            };
            self.bound_conds.push(bound);
            visit::visit_arm(self, arm);
            self.bound_conds.pop();
        }
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
            "map_err" if marks_status_transient(m) => {
                self.status_transient.get_or_insert(m.method.span());
            }
            n if PREDICATES.contains(&n) => self.combinator_classifies = true,
            _ => {}
        }
        visit::visit_expr_method_call(self, m);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let words = ident_words_of(p);
        // Wrapping an error as transient (`backoff::Error::transient`, `RetryError::Transient`)
        // marks it for retry; only when some other path marks errors permanent has the
        // operation told the two apart, and that path classifies by itself.
        let constructor = p
            .segments
            .last()
            .is_some_and(|s| s.ident.to_string().eq_ignore_ascii_case("transient"));
        if words.iter().any(|w| PERMANENT_WORDS.contains(&w.as_str()))
            || (!constructor && words.iter().any(|w| TRANSIENT_WORDS.contains(&w.as_str())))
            || p.segments.iter().any(|s| s.ident == "RetryIf")
        {
            self.combinator_classifies = true;
        }
        visit::visit_path(self, p);
    }
}

/// `x.error_for_status().map_err(backoff::Error::transient)` (or a closure that builds a
/// transient error): the status error is marked for retry where it is made.
fn marks_status_transient(m: &syn::ExprMethodCall) -> bool {
    let status = matches!(&*m.receiver, Expr::MethodCall(r)
        if matches!(r.method.to_string().as_str(), "error_for_status" | "error_for_status_ref"));
    let transient = |p: &syn::Path| {
        p.segments
            .last()
            .is_some_and(|s| s.ident.to_string().eq_ignore_ascii_case("transient"))
    };
    status
        && m.args.first().is_some_and(|a| match a {
            Expr::Path(p) => transient(&p.path),
            Expr::Closure(c) => matches!(&*c.body, Expr::Call(call)
                if matches!(&*call.func, Expr::Path(p) if transient(&p.path))),
            _ => false,
        })
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
                        t.1 = super::spans::of(&u);
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
                self.out.push((c, super::spans::of(&m), self.negated));
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
                    self.out.push((class, super::spans::of(&c), self.negated));
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
                            self.out
                                .push((Class::Transient, super::spans::of(&b), self.negated));
                        } else if (400..500).contains(&n) {
                            self.out
                                .push((Class::Permanent, super::spans::of(&b), self.negated));
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
                        self.out.push((c, super::spans::of(&b), neg));
                    }
                }
                return;
            }
            visit::visit_expr_binary(self, b);
        }
        fn visit_expr_range(&mut self, r: &'ast syn::ExprRange) {
            if let Some(c) = r.start.as_deref().and_then(status_class) {
                self.out.push((c, super::spans::of(&r), self.negated));
            }
        }
        fn visit_pat(&mut self, _: &'ast syn::Pat) {}
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if let Some(c) = status_class(&Expr::Path(p.clone())) {
                if c != Class::Success {
                    self.out.push((c, super::spans::of(&p), self.negated));
                }
            }
        }
        fn visit_expr_lit(&mut self, l: &'ast syn::ExprLit) {
            if let Some(c) = status_class(&Expr::Lit(l.clone())) {
                if c != Class::Success {
                    self.out.push((c, super::spans::of(&l), self.negated));
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

/// A decision handed the status (`match strategy.test(last_status, tries)`, `if
/// policy.decide(resp.status())`): the callee classifies, and what it retries is not seen here,
/// so the site is not judged to retry every status. Not a constructor (`Some(status)`), a
/// conversion (`u16::from(status)`) or a call the words already class (`is_success(s)`).
fn asks_with_status(cond: &Expr) -> bool {
    struct V(bool);
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let Expr::Path(p) = &*c.func {
                if let Some(last) = p.path.segments.last() {
                    let name = last.ident.to_string();
                    self.0 |= asks(&name, c.args.iter());
                }
            }
            visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            self.0 |= asks(&m.method.to_string(), m.args.iter());
            visit::visit_expr_method_call(self, m);
        }
    }
    fn asks<'e>(name: &str, mut args: impl Iterator<Item = &'e Expr>) -> bool {
        let constructor = name.starts_with(|c: char| c.is_ascii_uppercase());
        let conversion = matches!(name, "from" | "try_from" | "into" | "try_into" | "as_u16");
        let classed = word_class(name).is_some() || name.contains("success");
        !(constructor || conversion || classed)
            && args.any(|a| ident_words_of(a).contains("status"))
    }
    let mut v = V(false);
    v.visit_expr(cond);
    v.0
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

/// `cond` tests an HTTP status against a class (`resp.status() == StatusCode::BAD_GATEWAY`,
/// `code >= 500`, `RETRY_CODES.contains(&r.status())`): the attempt's outcome, so a branch
/// on it is a failure path when the status is not a success. The value compared must be named
/// as a status or a code, so `len >= 500` is no status test.
pub(super) fn tests_status(b: &syn::ExprBinary) -> bool {
    use syn::BinOp::{Eq, Ge, Gt, Le, Lt, Ne};
    if !matches!(b.op, Eq(_) | Ne(_) | Ge(_) | Gt(_) | Le(_) | Lt(_)) {
        return false;
    }
    let named = |e: &Expr| {
        let w = ident_words_of(e);
        w.contains("status") || w.contains("code")
    };
    (status_class(&b.right).is_some() && named(&b.left))
        || (status_class(&b.left).is_some() && named(&b.right))
}

/// A match guard that tests for a status other than success (`Ok(r) if r.status().is_server_error()`,
/// `Ok(r) if !r.status().is_success()`): its arm is a failure path though its pattern is `Ok`.
pub(super) fn guard_fails(guard: &Expr) -> bool {
    classes(guard)
        .iter()
        .any(|&(c, _, negated)| (c == Class::Success) == negated)
}

/// `codes.contains(&resp.status())`: a status looked up in a list of (retryable) statuses.
pub(super) fn looks_up_status(m: &syn::ExprMethodCall) -> bool {
    m.method == "contains"
        && m.args.iter().any(|a| {
            let mut a = a;
            while let Expr::Reference(r) = a {
                a = &r.expr;
            }
            matches!(a, Expr::MethodCall(s) if s.method == "status")
        })
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

/// A condition that is an attempt cap or a switch (`n > max`, `!retry`) and tests no status.
/// A Retry-After test (`if let Some(retry_after) = ..`) is not one: only 429 and 503 carry the
/// header, so giving up without it is a decision about statuses.
fn is_bound(cond: &Expr) -> bool {
    let words = ident_words_of(cond);
    classes(cond).is_empty()
        && !words.contains("after")
        && words.iter().any(|w| BOUND_WORDS.contains(&w.as_str()))
}

/// A stream's error item: `Poll::Ready(Some(Err(..)))` or `Some(Err(..))`.
fn stream_error_item(e: &Expr) -> bool {
    fn call_of<'e>(e: &'e Expr, name: &str) -> Option<&'e Expr> {
        match e {
            Expr::Call(c)
                if matches!(&*c.func, Expr::Path(p)
                if p.path.segments.last().is_some_and(|s| s.ident == name)) =>
            {
                c.args.first()
            }
            Expr::Paren(p) => call_of(&p.expr, name),
            _ => None,
        }
    }
    let item = call_of(e, "Ready").unwrap_or(e);
    call_of(item, "Some").is_some_and(|inner| call_of(inner, "Err").is_some())
}

/// The block leaves with an error: `return Err(..)`, `bail!(..)`.
fn leaves_with_error(b: &syn::Block) -> bool {
    leaves(b) && {
        let w = ident_words_of(b);
        w.contains("err") || w.contains("error") || w.contains("bail")
    }
}

/// The block goes round explicitly: a `continue` or a wait.
fn goes_round(b: &syn::Block) -> bool {
    let w = super::words::words_of(b);
    w.contains("continue") || w.contains("sleep") || w.contains("backoff") || w.contains("delay")
}
