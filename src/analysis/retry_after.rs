//! Server-chosen waits: which sleeps wait for as long as the server said (a `Retry-After`
//! header, the `RETRY_AFTER` constant, a `retry_after` field or parameter, a backoff "hint" taken
//! from an error body), and whether anything caps that value on its way to the sleep.
//!
//! The flow is followed inside one function body only, through `let`, `if let` / `while let`,
//! assignments and `match` arms: a value is server-chosen when the expression it was bound from
//! mentions a server-delay source or another server-chosen value. A cap is a `min` / `clamp` call
//! or a time-left word in that chain, or an ordering comparison against the value anywhere in the
//! body (`if retry_after < 120 { .. }`). `max(retry_after, policy_delay)` is not a cap.
//!
//! A function of the same file whose return value is server-chosen (its tail or a `return`
//! carries one) passes it to its callers, capped or not as it returns it; so does a function
//! named for the header (`parse_retry_after(headers)`), like a method of that name.
//!
//! Deliberately absent: flows through struct fields set in one method and slept in another, and
//! through helpers in other files. What cannot be followed gives no finding.

use std::collections::{HashMap, HashSet};

use syn::visit::{self, Visit};
use syn::{Expr, Pat};

use super::bodies::Bodies;
use super::words::split_ident;
use super::{span_of, Facts, ServerWait};
use crate::base::source::{SourceFile, Span};

/// Lowercase spellings of the header / field / constant; a string literal or an identifier that
/// contains one of them is a server-chosen delay. The rule's prefilter triggers are these same
/// strings plus [`HINT`], which keeps the prefilter exact.
pub const SOURCES: &[&str] = &["retry_after", "retry-after", "retryafter"];
/// An identifier word for a delay suggested by the server in an error body (`backoff_hint`).
pub const HINT: &str = "hint";
/// Words that, next to [`HINT`], make the hint a delay (not a type or completion hint).
const HINT_DELAY_WORDS: &[&str] = &["backoff", "retry", "delay", "wait", "throttle"];
/// Function or method names of a wait that is not in `rules/apis.toml` (an in-crate wrapper
/// around the runtime's sleep): only a server-chosen duration makes them count, so the name is
/// enough.
const WAIT_NAMES: &[&str] = &["sleep", "sleep_for", "delay_for"];
/// Calls that bound a value from above.
const CAP_CALLS: &[&str] = &["min", "clamp", "min_by", "min_by_key"];
/// Identifier words that bound a wait by the time left or a configured ceiling.
const CAP_WORDS: &[&str] = &["remaining", "deadline", "left", "budget", "cap", "capped"];

/// Find every sleep whose duration is server-chosen.
pub(super) fn run(bodies: &Bodies<'_>, src: &SourceFile, facts: &Facts) -> Vec<ServerWait> {
    // Every server-chosen value starts at a source or a hint named in the text: without one
    // there is nothing to follow, and most files have none.
    let lower = src.text.to_ascii_lowercase();
    if !SOURCES.iter().chain([&HINT]).any(|w| lower.contains(w)) {
        return Vec::new();
    }
    let sleeps: HashMap<usize, usize> = facts
        .sleeps
        .iter()
        .enumerate()
        .map(|(i, s)| (s.span.start, i))
        .collect();
    let flows: Vec<(String, Flow)> = (bodies.fns.iter())
        .map(|b| (b.sig.ident.to_string(), Flow::of(b.sig, b.block, src)))
        .collect();
    let returns = returned_delays(&flows, src);
    let mut out = Vec::new();
    for (_, flow) in &flows {
        for (sleep, wait, origin, capped) in flow.resolve(src, &sleeps, &returns) {
            out.push(ServerWait {
                sleep,
                wait,
                origin,
                capped,
            });
        }
    }
    out
}

/// The functions of this file whose return value is a server-chosen delay (`fn
/// retry_delay(resp: &Response) -> Option<Duration>` that reads `Retry-After`), by name, with
/// whether they cap it: a caller that sleeps what one returns sleeps the server's value. A name
/// defined twice with different answers says nothing and is left out. Helpers that call such
/// helpers are found by going round again, a few times.
fn returned_delays(flows: &[(String, Flow)], src: &SourceFile) -> HashMap<String, bool> {
    let mut returns: HashMap<String, bool> = HashMap::new();
    for _ in 0..3 {
        let mut found: HashMap<String, Option<bool>> = HashMap::new();
        let mut names: HashMap<&str, usize> = HashMap::new();
        for (name, flow) in flows {
            *names.entry(name.as_str()).or_default() += 1;
            if let Some(capped) = flow.returned(src, &returns) {
                found
                    .entry(name.clone())
                    .and_modify(|c| {
                        if *c != Some(capped) {
                            *c = None;
                        }
                    })
                    .or_insert(Some(capped));
            }
        }
        let next: HashMap<String, bool> = found
            .into_iter()
            .filter(|(n, _)| names.get(n.as_str()) == Some(&1))
            .filter_map(|(n, c)| c.map(|c| (n, c)))
            .collect();
        if next == returns {
            break;
        }
        returns = next;
    }
    returns
}

/// One binding step: `names` were bound from `value`; `origin` is where the value is chosen.
/// A declaration (`let`, a pattern) makes new variables visible over `scope`; an assignment
/// (`scope: None`) sets the variables declared where it stands.
struct Step<'a> {
    names: Vec<String>,
    value: &'a Expr,
    origin: proc_macro2::Span,
    /// Byte offset of the step.
    at: usize,
    scope: Option<(usize, usize)>,
}

/// One variable: its name and where its declaration's scope starts (0 for a parameter,
/// `usize::MAX` for a name the body never declares: a field, a constant, a global).
type Key = (String, usize);

#[derive(Default)]
struct Flow<'a> {
    src: Option<&'a SourceFile>,
    params: Vec<String>,
    /// Each declared name's scopes (byte ranges), parameters' the whole body.
    decls: HashMap<String, Vec<(usize, usize)>>,
    /// Ends of the blocks around the walk: a `let` is visible until its block ends.
    blocks: Vec<usize>,
    steps: Vec<Step<'a>>,
    /// Both sides of every ordering comparison (`<`, `<=`, `>`, `>=`).
    orderings: Vec<(&'a Expr, &'a Expr)>,
    /// Every call in the body (nested items excluded): its span, first argument, and whether it
    /// is named like a wait (an in-crate `sleep` wrapper, `runtime.sleep(d)`).
    sleeps: Vec<(proc_macro2::Span, Option<&'a Expr>, bool)>,
    /// What the function returns: its tail expression and every `return` value outside
    /// closures.
    returns: Vec<&'a Expr>,
    /// Closures around the walk: a `return` there leaves the closure, not the function.
    closures: usize,
}

/// Server-chosen variables of one body: where each value was chosen and whether it is capped.
type Tainted = HashMap<Key, (Option<Span>, bool)>;

impl<'a> Flow<'a> {
    /// The flow of one function body, its parameters included.
    fn of(sig: &syn::Signature, block: &'a syn::Block, src: &'a SourceFile) -> Self {
        let mut flow = Flow {
            src: Some(src),
            ..Flow::default()
        };
        for input in &sig.inputs {
            if let syn::FnArg::Typed(pt) = input {
                flow.params.extend(pat_idents(&pt.pat));
            }
        }
        for p in &flow.params {
            flow.decls
                .entry(p.clone())
                .or_default()
                .push((0, usize::MAX));
        }
        flow.visit_block(block);
        if let Some(syn::Stmt::Expr(tail, None)) = block.stmts.last() {
            flow.returns.push(tail);
        }
        flow
    }
}

impl Flow<'_> {
    /// The variable a use of `name` at `at` reads: the innermost declaration whose scope holds
    /// it, so a `let delay = 2s` in one `match` arm is not the `Some(delay)` of another, and a
    /// sleep before `let retry_after = ..` does not wait for it.
    fn variable(&self, name: &str, at: Option<usize>) -> Key {
        let start = at.and_then(|at| {
            (self.decls.get(name)?.iter())
                .filter(|(s, e)| *s <= at && at < *e)
                .map(|(s, _)| *s)
                .max()
        });
        (name.to_string(), start.unwrap_or(usize::MAX))
    }

    /// The variables a step binds or sets.
    fn keys(&self, step: &Step) -> Vec<Key> {
        (step.names.iter())
            .map(|n| match step.scope {
                Some((start, _)) => (n.clone(), start),
                None => self.variable(n, Some(step.at)),
            })
            .collect()
    }

    /// Whether the function returns a server-chosen value, and whether capped.
    fn returned(&self, src: &SourceFile, returns: &HashMap<String, bool>) -> Option<bool> {
        let (tainted, _) = self.tainted(src, returns);
        let mut out = None;
        for e in &self.returns {
            if let Some((_, capped)) = self.taint_of(e, &tainted, returns) {
                let capped = capped || caps(e);
                out = Some(out.unwrap_or(true) && capped);
            }
        }
        out
    }

    /// Every server-chosen name of the body, and those compared with a bound somewhere.
    fn tainted(
        &self,
        src: &SourceFile,
        returns: &HashMap<String, bool>,
    ) -> (Tainted, HashSet<String>) {
        let mut tainted: Tainted = HashMap::new();
        for p in &self.params {
            if is_source_ident(p) {
                tainted.insert((p.clone(), 0), (None, false));
            }
        }
        self.propagate(src, &mut tainted, returns);
        // A name compared with a bound somewhere in the body is capped, and so is every name
        // bound from it: propagate once more.
        let compared: HashSet<String> = tainted
            .keys()
            .map(|k| &k.0)
            .filter(|n| {
                self.orderings.iter().any(|(l, r)| {
                    (mentions(l, n) && !is_zero(r)) || (mentions(r, n) && !is_zero(l))
                })
            })
            .cloned()
            .collect();
        for (k, t) in &mut tainted {
            if compared.contains(&k.0) {
                t.1 = true;
            }
        }
        self.propagate(src, &mut tainted, returns);
        (tainted, compared)
    }

    /// Waits with a server-chosen duration: (known sleep index, wait call, origin, capped).
    fn resolve(
        &self,
        src: &SourceFile,
        sleep_index: &HashMap<usize, usize>,
        returns: &HashMap<String, bool>,
    ) -> Vec<(Option<usize>, Span, Span, bool)> {
        let (tainted, compared) = self.tainted(src, returns);
        let mut out = Vec::new();
        for (span, duration, named) in &self.sleeps {
            let wait = span_of(src, *span);
            let idx = sleep_index.get(&wait.start).copied();
            let Some(d) = duration.filter(|_| idx.is_some() || *named) else {
                continue;
            };
            let Some((origin, capped)) = self.taint_of(d, &tainted, returns) else {
                continue;
            };
            let names = idents(d);
            let compared = names.iter().any(|n| compared.contains(n));
            let origin = origin.unwrap_or_else(|| span_of(src, *span));
            out.push((idx, wait, origin, capped || compared || caps(d)));
        }
        out
    }

    /// Fixpoint over the steps: a name is tainted once any value it was bound from is, and
    /// capped once any binding of it is.
    fn propagate(&self, src: &SourceFile, tainted: &mut Tainted, returns: &HashMap<String, bool>) {
        loop {
            let mut changed = false;
            for step in &self.steps {
                let Some(from) = self.taint_of(step.value, tainted, returns) else {
                    continue;
                };
                let capped = from.1 || caps(step.value);
                for n in self.keys(step) {
                    let origin = from.0.unwrap_or_else(|| span_of(src, step.origin));
                    let entry = tainted.entry(n);
                    match entry {
                        std::collections::hash_map::Entry::Vacant(e) => {
                            e.insert((Some(origin), capped));
                            changed = true;
                        }
                        std::collections::hash_map::Entry::Occupied(mut e) => {
                            // A reassignment through a cap caps the name from then on.
                            if capped && !e.get().1 {
                                e.get_mut().1 = true;
                                changed = true;
                            }
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Is `e` server-chosen: it names a source directly, or a tainted name, on a path that
    /// carries the value (not as the argument of a function that may cap it)?
    fn taint_of(
        &self,
        e: &Expr,
        tainted: &Tainted,
        returns: &HashMap<String, bool>,
    ) -> Option<(Option<Span>, bool)> {
        let mut v = Carry {
            flow: self,
            tainted,
            returns,
            found: None,
        };
        v.visit_expr(e);
        v.found
    }
}

/// Walks the parts of an expression whose value flows into the expression's value.
struct Carry<'t> {
    /// Which variable a name at a place reads.
    flow: &'t Flow<'t>,
    tainted: &'t Tainted,
    /// Functions of the file that return a server-chosen delay, and whether capped.
    returns: &'t HashMap<String, bool>,
    found: Option<(Option<Span>, bool)>,
}

impl Carry<'_> {
    /// A call of `name` returns the server's delay: a function of this file that returns one,
    /// or one named for it (`parse_retry_after(headers)`, as `resp.retry_after()` is).
    fn call(&mut self, name: &str) {
        if self.found.is_some() {
            return;
        }
        if let Some(&capped) = self.returns.get(name) {
            self.found = Some((None, capped));
        } else if is_source_ident(name) {
            self.found = Some((None, false));
        }
    }

    fn ident(&mut self, name: &str, at: Option<proc_macro2::Span>) {
        if self.found.is_some() {
            return;
        }
        let at = (self.flow.src)
            .zip(at)
            .map(|(src, at)| span_of(src, at).start);
        if let Some(t) = self.tainted.get(&self.flow.variable(name, at)) {
            self.found = Some(*t);
        } else if is_source_ident(name) {
            // No origin yet: the step or sleep that reads the source is where it is chosen.
            self.found = Some((None, false));
        }
    }

    /// A header lookup by name (`header_as_u64(headers, "retry-after")`) reads a source.
    fn source_string_arg<'e>(&mut self, args: impl Iterator<Item = &'e Expr>) {
        for a in args {
            if let Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = a
            {
                let v = s.value().to_ascii_lowercase();
                if self.found.is_none() && SOURCES.iter().any(|w| v.contains(w)) {
                    self.found = Some((None, false));
                }
            } else if let Expr::Path(p) = a {
                // A header-name constant (`RETRY_AFTER`), not a local that holds the value
                // (`classify(status, retry_after)` returns what `classify` decides).
                if let Some(seg) = p.path.segments.last() {
                    let name = seg.ident.to_string();
                    if is_source_ident(&name) && !name.chars().any(|c| c.is_ascii_lowercase()) {
                        self.ident(&name, None);
                    }
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Carry<'_> {
    fn visit_item(&mut self, _: &'ast syn::Item) {}

    // A block's value is its tail expression: a `let retry_after = ..` among its statements
    // reaches the value only through a name, which the steps follow.
    fn visit_block(&mut self, b: &'ast syn::Block) {
        if let Some(syn::Stmt::Expr(e, None)) = b.stmts.last() {
            self.visit_expr(e);
        }
    }

    fn visit_local(&mut self, _: &'ast syn::Local) {}

    // A `match` is worth its arms; the scrutinee reaches them only through the arms' bindings
    // (steps too). `match send().await { Ok(r) => classify(r, retry_after), .. }` carries what
    // `classify` returns, which this function cannot see.
    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        for a in &m.arms {
            self.visit_expr(&a.body);
        }
    }

    fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
        self.ident(&i.to_string(), Some(i.span()));
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        self.source_string_arg(c.args.iter());
        let carries = match &*c.func {
            Expr::Path(p) => {
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                let last = segs.last().map(String::as_str).unwrap_or_default();
                self.call(last);
                let type_assoc = segs.len() >= 2
                    && segs[segs.len() - 2].starts_with(|c: char| c.is_ascii_uppercase());
                let ctor = segs.len() == 1 && last.starts_with(|c: char| c.is_ascii_uppercase());
                type_assoc || ctor || PASS_CALLS.contains(&last)
            }
            _ => false,
        };
        if carries {
            for a in &c.args {
                self.visit_expr(a);
            }
        }
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let name = m.method.to_string();
        self.ident(&name, None);
        self.call(&name);
        self.visit_expr(&m.receiver);
        if name == "get" || name == "get_all" {
            self.source_string_arg(m.args.iter());
        }
        if PASS_CALLS.contains(&name.as_str()) {
            for a in &m.args {
                self.visit_expr(a);
            }
        }
    }

    fn visit_macro(&mut self, _: &'ast syn::Macro) {}
}

/// Calls whose result carries their arguments' value (a fallback, the larger of two, a sum).
const PASS_CALLS: &[&str] = &[
    "max",
    "unwrap_or",
    "unwrap_or_else",
    "or",
    "or_else",
    "map_or",
    "map_or_else",
    "saturating_add",
    "checked_add",
    "add",
    "mul",
    "saturating_mul",
    "from",
    "into",
];

impl<'ast> Flow<'ast> {
    fn offsets(&self, span: proc_macro2::Span) -> (usize, usize) {
        self.src.map_or((0, usize::MAX), |src| {
            let s = span_of(src, span);
            (s.start, s.end)
        })
    }

    /// Record a step; a declaration's names are visible over `scope`.
    fn step(
        &mut self,
        names: Vec<String>,
        value: &'ast Expr,
        origin: proc_macro2::Span,
        scope: Option<(usize, usize)>,
    ) {
        let at = self.offsets(origin).0;
        if let Some(scope) = scope {
            for n in &names {
                self.decls.entry(n.clone()).or_default().push(scope);
            }
        }
        self.steps.push(Step {
            names,
            value,
            origin,
            at,
            scope,
        });
    }

    /// From the end of `span` to the end of the block around it.
    fn rest_of_block(&self, span: proc_macro2::Span) -> (usize, usize) {
        let end = self.blocks.last().copied().unwrap_or(usize::MAX);
        (self.offsets(span).1, end)
    }
}

impl<'ast> Visit<'ast> for Flow<'ast> {
    fn visit_item(&mut self, _: &'ast syn::Item) {}

    fn visit_block(&mut self, b: &'ast syn::Block) {
        let end = self.offsets(b.brace_token.span.join()).1;
        self.blocks.push(end);
        visit::visit_block(self, b);
        self.blocks.pop();
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let Some(init) = &l.init {
            let whole = super::spans::of(&l);
            let origin = origin_of(&init.expr).unwrap_or(whole);
            let scope = self.rest_of_block(whole);
            self.step(pat_idents(&l.pat), &init.expr, origin, Some(scope));
        }
        visit::visit_local(self, l);
    }

    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Let(l) => {
                // `if let` / `while let`: visible in what follows in the block (its branch,
                // and, for a let-else-like chain, after it), which is at least its branch.
                let whole = super::spans::of(&l);
                let scope = self.rest_of_block(whole);
                self.step(pat_idents(&l.pat), &l.expr, whole, Some(scope));
            }
            Expr::Assign(a) => self.step(
                idents(&a.left).into_iter().take(1).collect(),
                &a.right,
                super::spans::of(&a),
                None,
            ),
            Expr::Match(m) => {
                for arm in &m.arms {
                    let whole = super::spans::of(&arm);
                    let scope = self.offsets(whole);
                    self.step(pat_idents(&arm.pat), &m.expr, whole, Some(scope));
                }
            }
            Expr::Binary(b) => {
                use syn::BinOp::{Ge, Gt, Le, Lt};
                if matches!(b.op, Lt(_) | Le(_) | Gt(_) | Ge(_)) {
                    self.orderings.push((&b.left, &b.right));
                }
            }
            Expr::Call(c) => {
                let named = matches!(&*c.func, Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| WAIT_NAMES.contains(&s.ident.to_string().as_str())));
                self.sleeps
                    .push((super::spans::of(&c), c.args.first(), named));
            }
            Expr::MethodCall(m) => {
                let named = WAIT_NAMES.contains(&m.method.to_string().as_str());
                if named {
                    self.sleeps
                        .push((super::spans::of(&m), m.args.first(), true));
                }
            }
            Expr::Return(r) if self.closures == 0 => self.returns.extend(r.expr.as_deref()),
            Expr::Closure(_) | Expr::Async(_) => {
                self.closures += 1;
                visit::visit_expr(self, e);
                self.closures -= 1;
                return;
            }
            _ => {}
        }
        visit::visit_expr(self, e);
    }
}

/// For a binding from a `match` over a server delay, the arm that passes a matched value on is
/// where the delay is chosen (`(Some(secs), _) => Some(secs)`), not the `let` that names it.
fn origin_of(init: &Expr) -> Option<proc_macro2::Span> {
    let mut e = init;
    while let Expr::Try(t) = e {
        e = &t.expr;
    }
    let Expr::Match(m) = e else {
        return None;
    };
    m.arms.iter().find_map(|arm| {
        let bound = pat_idents(&arm.pat);
        let used = idents(&arm.body);
        bound
            .iter()
            .any(|b| used.contains(b))
            .then(|| super::spans::of(&arm))
    })
}

fn is_source_ident(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let mut words = std::collections::BTreeSet::new();
    split_ident(name, &mut words);
    if SOURCES.iter().any(|s| lower.contains(s)) {
        // `default_retry_after`, `max_retry_after`, `force_retry_after`: a value the program
        // was configured with, not one the server sent.
        return !words.iter().any(|w| CONFIGURED_WORDS.contains(&w.as_str()));
    }
    words.contains(HINT) && HINT_DELAY_WORDS.iter().any(|w| words.contains(*w))
}

/// Identifier words of a configured value named after the header.
const CONFIGURED_WORDS: &[&str] = &[
    "default",
    "max",
    "min",
    "force",
    "forced",
    "fallback",
    "base",
    "initial",
    "fixed",
    "config",
    "configured",
];

/// A cap call or a time-left word anywhere in `e`.
fn caps(e: &Expr) -> bool {
    struct V(bool);
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            self.0 |= CAP_CALLS.contains(&m.method.to_string().as_str());
            visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let Expr::Path(p) = &*c.func {
                self.0 |= p
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| CAP_CALLS.contains(&s.ident.to_string().as_str()));
            }
            visit::visit_expr_call(self, c);
        }
        fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
            let mut w = std::collections::BTreeSet::new();
            split_ident(&i.to_string(), &mut w);
            self.0 |= w.iter().any(|w| CAP_WORDS.contains(&w.as_str()));
        }
    }
    let mut v = V(false);
    v.visit_expr(e);
    v.0
}

fn mentions(e: &Expr, name: &str) -> bool {
    idents(e).iter().any(|n| n == name)
}

fn is_zero(e: &Expr) -> bool {
    let t = quote::ToTokens::to_token_stream(e)
        .to_string()
        .replace(' ', "");
    t == "0" || t.ends_with("ZERO") || t.ends_with("(0)")
}

/// Whole identifiers (not split) in `e`, including those inside macro bodies.
fn idents<T: quote::ToTokens>(e: &T) -> Vec<String> {
    fn walk(ts: proc_macro2::TokenStream, out: &mut Vec<String>) {
        for tt in ts {
            match tt {
                proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
                proc_macro2::TokenTree::Group(g) => walk(g.stream(), out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(e.to_token_stream(), &mut out);
    out
}

fn pat_idents(p: &Pat) -> Vec<String> {
    struct V(Vec<String>);
    impl<'ast> Visit<'ast> for V {
        fn visit_pat_ident(&mut self, i: &'ast syn::PatIdent) {
            self.0.push(i.ident.to_string());
            visit::visit_pat_ident(self, i);
        }
    }
    let mut v = V(Vec::new());
    v.visit_pat(p);
    v.0
}
