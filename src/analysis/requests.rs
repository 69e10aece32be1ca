//! What the next attempt sends: the non-idempotent requests a retry site re-sends and the
//! single-use request bodies it re-sends, computed once per file over the retry sites.
//!
//! A retry site's reach is its own span, the closures handed to it by name (`let op = || ..;
//! op.retry(..)`), and, for requests, the functions of this file it calls (one level: the
//! request builder of a helper) and the requests its function is handed (a caller of this file
//! builds the request and passes it, or the local holding it, to the parameter the site sends).
//! A client wrapped in a retrying middleware (`reqwest-retry`) and a tower retry `Policy` over
//! HTTP requests are retry sites of their own. A request in a loop's `return` runs once, on
//! the way out, and is never re-sent; a `self.f()` call reaches the `f` of its own `impl`, not
//! another type's `f` of the file, and `self.post(..)` where that `impl` defines `post` is a
//! call of the helper, not a request builder. A request handed to a call of a crate wrapper
//! that re-sends what it is given (perhaps of another file: [`super::RetrySite::resends`]) is
//! re-sent by that call. Values are
//! followed by name within a function: the latest `let` of a name before its use is its value.
//! A method that is a parameter (`request(method.clone(), url)`) is what the file's callers hand
//! that parameter, followed up through their own parameters a few calls.
//! Code under `#[cfg(test)]` / `#[test]` sends no production request and gives no finding.
//! The requests, bindings and uses are read from the file's index in walk order (`Bodies::nodes`),
//! not from a walk of their own.
//!
//! Deliberately absent: type inference (a reader is known by its constructor, a request by its
//! builder method), calls into other files (the crate index's job), and any judgement on
//! protocol-level deduplication that is not an idempotency header (a content hash in the URL, a
//! transaction id in the body): guessing it from names would hide real duplicates, so such a
//! write is still reported and the rule doc says how to allow it.
//! Every token matched here is configured in `rules/apis.toml` (`[requests]`, `[bodies]`); a
//! finding also needs a retry site, whose words are the prefilter's.

use std::collections::HashMap;

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::Expr;

use super::bodies::{Bodies, Kind};
use super::imports::path_segments;
use super::{span_of, Facts, SiteKind};
use crate::base::apis::Apis;
use crate::base::source::{SourceFile, Span};

/// The requests and bodies that retry sites of one file send again.
#[derive(Debug, Default)]
pub struct Requests {
    /// POST / PATCH requests that a retry site can send more than once.
    pub writes: Vec<Write>,
    /// Bodies that a retry site sends again after the first attempt consumed them.
    pub replays: Vec<Replay>,
    /// The loops of this file's retry wrappers that go round only after a refusal (a failure
    /// where the request was never applied): their callers' writes are not duplicated.
    pub refusal_only_sites: Vec<Span>,
    /// Functions whose request's method is a parameter: their callers, perhaps blanked by the
    /// prefilter's mask, say which methods it sends ([`super::Facts::hidden_callers`]).
    pub method_takers: std::collections::BTreeSet<String>,
    /// Functions of the file handed a retrying client (`Self::custom(agent, client)`): where
    /// they store it, perhaps blanked by the mask, is a retrying field
    /// ([`super::Facts::hidden_callees`]).
    pub client_takers: std::collections::BTreeSet<String>,
}

/// A non-idempotent request inside a retry site's reach.
#[derive(Debug, Clone)]
pub struct Write {
    /// The method: the `.post(` call, the `Method::PATCH` argument, or (for a retry policy that
    /// ignores methods) the failure pattern it retries on.
    pub span: Span,
    /// `POST` or `PATCH`.
    pub method: String,
    /// The retry site (loop keyword, combinator call, middleware, `fn retry`).
    pub retry: Span,
    /// How the retry reaches the request.
    pub via: Via,
    /// The idempotency key the request carries.
    pub key: Key,
    /// Retries are gated on the method or an idempotency flag, or happen only when the request
    /// provably never reached the server (connect errors, 429).
    pub gated: bool,
    /// For a request whose method is a parameter: where a caller hands in the POST or PATCH.
    pub handed_in: Option<Span>,
    /// Handed at [`Via::Caller`]'s call to a crate wrapper that re-sends it: the wrapper's name.
    pub resender: Option<String>,
}

/// How a retry reaches a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// The request is built inside the site (or a closure handed to it).
    Site,
    /// The request is built in a function of this file that the site calls here.
    Helper(Span),
    /// The request is built by the caller and handed, at this call, to a function of this
    /// file whose retry site sends that parameter (`send_with_retry(client.post(url))`).
    Caller(Span),
    /// The client was wrapped in a retrying middleware here.
    Client(Span),
    /// A tower retry policy over HTTP requests that never looks at the method.
    Policy,
}

/// The idempotency key of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// No idempotency header.
    Missing,
    /// A header whose value is made outside the retry site: the same on every attempt.
    Outside,
    /// A header whose value is made inside the retry site, at this expression: new per attempt.
    PerAttempt(Span),
}

/// A single-use body sent again by a retry site.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The body argument or the `try_clone()` call inside the site.
    pub span: Span,
    /// What goes wrong.
    pub kind: ReplayKind,
    /// The variable sent, when there is one.
    pub name: String,
    /// Where the body source was created, outside the site.
    pub origin: Option<Span>,
    /// The retry site.
    pub retry: Span,
}

/// What a replayed body does on the next attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayKind {
    /// A reader / file / cursor / stream created once is read again from where it stopped.
    SharedReader,
    /// `File::try_clone` inside the site: a new handle on the same, already advanced, cursor.
    SharedCursor,
    /// `try_clone()` of a request or body unwrapped: `None` (a streaming body) panics.
    CloneUnwrapped,
    /// `try_clone()` of a request or body whose `None` becomes an empty body.
    CloneEmptied,
}

/// Compute the requests and bodies re-sent by the retry sites of `facts`.
#[must_use]
pub(super) fn run(
    file: &syn::File,
    bodies: &Bodies<'_>,
    src: &SourceFile,
    apis: &Apis,
    facts: &Facts,
) -> Requests {
    // Without a site, only a tower `Policy` impl or a retrying middleware retries here, and
    // either is spelled in the text: most files need no scan at all.
    if facts.sites.is_empty()
        && !src.text.contains("Policy")
        && !apis
            .requests
            .retrying_middleware
            .iter()
            .any(|w| src.text.contains(w.as_str()))
    {
        return Requests::default();
    }
    let mut scan = Scan::new(src, apis);
    scan.read(bodies);
    if !scan.param_methods.is_empty() {
        scan.param_writes();
    }
    if !scan.layer_fns.is_empty() {
        scan.factory_layers();
    }
    if !scan.layers.is_empty() {
        scan.handed_layers();
    }
    // Nothing retries in this file: no token index, no work.
    if facts.sites.is_empty() && scan.policies.is_empty() && scan.layers.is_empty() {
        return Requests::default();
    }
    let method_takers = (scan.param_methods.iter())
        .map(|p| scan.items[p.item].name.clone())
        .collect();
    let client_takers = scan.client_takers();
    let mut toks = Vec::new();
    index_tokens(file.to_token_stream(), src, &mut toks);
    let cx = Resolve {
        apis,
        scan: &scan,
        toks: &toks,
        regions: regions(facts, &scan, src),
        refusal_wrappers: site_spans(facts, |s| s.refusals_only),
        status_only: site_spans(facts, |s| s.status_only),
    };
    let production = |s: &Span| !scan.test_code.iter().any(|t| t.contains(*s));
    Requests {
        writes: cx
            .writes()
            .into_iter()
            .filter(|w| production(&w.span))
            .collect(),
        replays: cx
            .replays()
            .into_iter()
            .filter(|r| production(&r.span))
            .collect(),
        // Only a loop's own failure tests decide whether it goes round; a combinator's
        // predicate does that elsewhere, and status tests in its operation may be bookkeeping.
        refusal_only_sites: facts
            .wrappers
            .iter()
            .filter_map(|w| w.site)
            .filter(|&s| {
                facts.sites.iter().any(|site| {
                    site.span == s
                        && matches!(site.kind, SiteKind::Loop | SiteKind::While | SiteKind::For)
                })
            })
            .filter(|&s| cx.not_delivered_only(s))
            .collect(),
        method_takers,
        client_takers,
    }
}

/// An identifier or literal token of the file, in source order.
struct Tok {
    span: Span,
    text: String,
}

fn index_tokens(ts: TokenStream, src: &SourceFile, out: &mut Vec<Tok>) {
    for tt in ts {
        match tt {
            TokenTree::Group(g) => index_tokens(g.stream(), src, out),
            TokenTree::Ident(i) => out.push(Tok {
                span: span_of(src, i.span()),
                text: i.to_string(),
            }),
            TokenTree::Literal(l) => out.push(Tok {
                span: span_of(src, l.span()),
                text: l.to_string(),
            }),
            TokenTree::Punct(_) => {}
        }
    }
}

/// Tokens inside `span` (the index is in source order).
fn toks_in(toks: &[Tok], span: Span) -> &[Tok] {
    let lo = toks.partition_point(|t| t.span.start < span.start);
    let hi = toks.partition_point(|t| t.span.start < span.end);
    &toks[lo..hi.max(lo)]
}

impl Item {
    /// The parameter an argument at `index` lands in: a path call (`Self::f(self, m)`, not a
    /// method call) hands the receiver first when the function takes `self`.
    fn param_at(&self, index: usize, method_call: bool) -> Option<usize> {
        let index = if !method_call && self.receiver {
            index.checked_sub(1)?
        } else {
            index
        };
        (index < self.params.len()).then_some(index)
    }
}

/// A named function of the file.
struct Item {
    name: String,
    span: Span,
    /// Its parameters after the receiver, by name (`_` for a pattern).
    params: Vec<String>,
    /// It takes `self`: a path call (`Self::f(self, m)`) hands the receiver first.
    receiver: bool,
    /// The type of the `impl` it is defined in.
    owner: Option<String>,
}

/// A request whose method is a parameter of its function (`self.inner.request(method.clone(),
/// url)` in `fn execute(&self, method: Method, ..)`): what it sends is what the callers pass.
struct ParamMethod {
    item: usize,
    param: usize,
    span: Span,
    /// The request's receiver chain root (`self.client`), as [`RawWrite::base`].
    base: Option<String>,
}

/// A call handing a method on: a constant (`self.execute(Method::POST, ..)`) or a parameter of
/// the caller's own function (`self.execute(method, ..)` inside `fn send(method, ..)`).
struct MethodArg {
    callee: String,
    /// The argument's place after the receiver (a path call's receiver already taken off).
    index: usize,
    /// Whether the call is a method call (`x.f(..)`): then no receiver is among the arguments.
    method_call: bool,
    value: MethodValue,
}

enum MethodValue {
    /// The method constant and where it is written.
    Const(String, Span),
    Param {
        item: usize,
        param: usize,
    },
}

/// A `let` (or an assignment) of a name.
struct Binding {
    name: String,
    /// The whole statement.
    at: Span,
    /// The initialiser.
    init: Span,
    /// Enclosing named function.
    scope: Option<usize>,
    /// The initialiser builds a reader, file, cursor or stream (or wraps one).
    reader: bool,
    /// `let b = file.try_clone()?`: the name cloned and the clone call.
    alias: Option<(String, Span)>,
    /// `name = ..` rather than `let`.
    assign: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Plain,
    /// `x.clone()`: an independent copy.
    Cloned,
    /// `x.try_clone()`: the call's span.
    TryCloned(Span),
    /// `x.seek(..)`, `x.rewind()`.
    Rewound,
}

struct Use {
    name: String,
    span: Span,
    role: Role,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handling {
    Unwrapped,
    Emptied,
}

struct TryClone {
    span: Span,
    receiver: Option<String>,
    receiver_words: Vec<String>,
    handling: Handling,
}

/// A call that hands its arguments to a function of this file by name.
struct Handoff {
    name: String,
    call: Span,
    /// The arguments, by position ([`Item::param_at`] says which parameter each lands in).
    args: Vec<Span>,
    /// A method call on `self`: its arguments start after the receiver.
    method: bool,
}

struct RawWrite {
    span: Span,
    method: String,
    /// The receiver chain's root (`client`, or `self.client` as `self.` + field).
    base: Option<String>,
    /// The method is a parameter that a caller hands a POST (here, the caller's constant): only
    /// a request built inside the retry site is re-sent with it (through a helper, the site's
    /// own call passes the method, and that call is the write).
    handed_in: Option<Span>,
    /// `self.post(..)` inside an `impl`: the type, for when that impl defines its own `post`
    /// (a helper that builds and sends the request, which is where the write is).
    on_self_of: Option<String>,
}

struct HeaderSet {
    span: Span,
    /// Named for deduplication (`Idempotency-Key`) rather than also for tracing
    /// (`X-Request-Id`, which is often fresh per attempt on purpose).
    dedup_only: bool,
    value: Span,
    value_ident: Option<String>,
}

/// A tower `Policy` impl over HTTP requests.
struct Policy {
    retry_fn: Span,
    retry_name: Span,
    clone_fn: Option<Span>,
    first_err: Option<Span>,
    looks_at_method: bool,
}

/// A local or a struct field and what its initialiser calls (to find clients made by a factory).
struct Init {
    local: Option<(String, Option<usize>)>,
    field: Option<String>,
    callees: Vec<String>,
    copies: Option<String>,
    scope: Option<usize>,
    /// For a field, the type of the struct literal that sets it (`Self` read as the `impl`'s).
    owner: Option<String>,
}

/// A client wrapped in a retrying middleware: the local or field that holds it, and for a
/// field the type it is a field of, when the literal that sets it says.
struct Layer {
    local: Option<(String, Option<usize>)>,
    field: Option<String>,
    span: Span,
    owner: Option<String>,
}

struct Scan<'a> {
    src: &'a SourceFile,
    apis: &'a Apis,
    items: Vec<Item>,
    item_stack: Vec<usize>,
    closures: Vec<(String, Span, Option<usize>)>,
    bindings: Vec<Binding>,
    uses: Vec<Use>,
    roles: HashMap<usize, Role>,
    sinks: Vec<Span>,
    clones: Vec<TryClone>,
    writes: Vec<RawWrite>,
    param_methods: Vec<ParamMethod>,
    method_args: Vec<MethodArg>,
    headers: Vec<HeaderSet>,
    /// Calls by name; a `self.f()` or `Self::f()` call also with the type of the `impl` it is
    /// made in: it runs that type's `f`, not another type's of the same name.
    calls: Vec<(String, Span, Option<String>)>,
    /// The `impl` blocks the walk is in: where each ends, and its type.
    impls: Vec<(usize, String)>,
    /// `return` expressions, and the closures and async blocks a `return` would only leave.
    returns: Vec<Span>,
    fences: Vec<Span>,
    /// Calls that can hand a value to a function of this file: free or `Self::` path calls and
    /// `self.` method calls, with their argument spans (after any receiver).
    handoffs: Vec<Handoff>,
    policies: Vec<Policy>,
    layers: Vec<Layer>,
    /// Failure tests: `if` conditions, match arm patterns and guards, `matches!`, `when` closures.
    tests: Vec<Span>,
    /// `Err(e) => ..` arms with no guard that do not leave: every failure goes round again.
    catch_all: Vec<Span>,
    /// `#[cfg(test)]` modules and `#[test]` functions: no production request is sent there.
    test_code: Vec<Span>,
    /// Functions that wrap a client in a retrying middleware (a client factory).
    layer_fns: Vec<(String, Span)>,
    /// Locals and struct fields with the functions their initialiser calls, or the local it copies.
    inits: Vec<Init>,
}

impl<'a> Scan<'a> {
    fn new(src: &'a SourceFile, apis: &'a Apis) -> Self {
        Self {
            src,
            apis,
            items: Vec::new(),
            item_stack: Vec::new(),
            closures: Vec::new(),
            bindings: Vec::new(),
            uses: Vec::new(),
            roles: HashMap::new(),
            sinks: Vec::new(),
            clones: Vec::new(),
            writes: Vec::new(),
            param_methods: Vec::new(),
            method_args: Vec::new(),
            headers: Vec::new(),
            calls: Vec::new(),
            impls: Vec::new(),
            returns: Vec::new(),
            fences: Vec::new(),
            handoffs: Vec::new(),
            policies: Vec::new(),
            layers: Vec::new(),
            tests: Vec::new(),
            catch_all: Vec::new(),
            test_code: Vec::new(),
            layer_fns: Vec::new(),
            inits: Vec::new(),
        }
    }

    fn span(&self, s: proc_macro2::Span) -> Span {
        span_of(self.src, s)
    }

    fn scope(&self) -> Option<usize> {
        self.item_stack.last().copied()
    }

    /// The latest binding of `name` in `scope` that starts before `at`.
    fn binding_before(&self, name: &str, scope: Option<usize>, at: usize) -> Option<&Binding> {
        self.bindings
            .iter()
            .rev()
            .find(|b| b.name == name && b.scope == scope && b.at.start < at && !b.assign)
    }

    fn is_reader_init(&self, init: &Expr) -> bool {
        let text = compact(init);
        if self
            .apis
            .bodies
            .readers
            .iter()
            .any(|r| text.contains(r.as_str()))
        {
            return true;
        }
        // Wrapping a reader makes a reader: `Body::from(file)`, `.body(stream)`.
        let mut args = Vec::new();
        call_args(init, &mut args);
        let at = self.span(super::spans::of(&init)).start;
        args.iter().any(|a| {
            single_ident(a).is_some_and(|n| {
                self.binding_before(&n, self.scope(), at)
                    .is_some_and(|b| b.reader)
            })
        })
    }

    /// The type of the innermost `impl` the walk is in.
    fn impl_type(&self) -> Option<String> {
        self.impls.last().map(|(_, t)| t.clone())
    }

    fn item(&mut self, sig: &syn::Signature, span: proc_macro2::Span) -> usize {
        let span = self.span(span);
        let mut params = Vec::new();
        let mut receiver = false;
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(_) => receiver = true,
                syn::FnArg::Typed(t) => params.push(match &*t.pat {
                    syn::Pat::Ident(i) => i.ident.to_string(),
                    _ => "_".to_string(),
                }),
            }
        }
        self.items.push(Item {
            name: sig.ident.to_string(),
            span,
            params,
            receiver,
            owner: self.impl_type(),
        });
        self.items.len() - 1
    }

    /// The enclosing function's parameter that `e` names (through `&`, `.clone()`, `*`).
    fn param_of(&self, e: &Expr) -> Option<(usize, usize)> {
        let mut e = strip(e);
        loop {
            match e {
                Expr::MethodCall(m) if m.method == "clone" && m.args.is_empty() => {
                    e = strip(&m.receiver);
                }
                Expr::Reference(r) => e = strip(&r.expr),
                Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => e = strip(&u.expr),
                _ => break,
            }
        }
        let name = single_ident(e)?;
        let item = *self.item_stack.last()?;
        let param = self.items[item].params.iter().position(|p| *p == name)?;
        Some((item, param))
    }

    /// A request's method argument: when it names a parameter, the request sends what the
    /// callers hand in ([`Self::param_writes`]).
    fn param_method(&mut self, arg: Option<&Expr>, base: Option<String>) {
        let Some(arg) = arg else { return };
        if let Some((item, param)) = self.param_of(arg) {
            let span = self.span(super::spans::of(&arg));
            self.param_methods.push(ParamMethod {
                item,
                param,
                span,
                base,
            });
        }
    }

    /// The arguments of a call that hand a method on, for [`Self::param_writes`].
    fn method_args<'e>(
        &mut self,
        callee: &str,
        args: impl Iterator<Item = &'e Expr>,
        method_call: bool,
    ) {
        for (index, a) in args.enumerate() {
            let value = match (self.is_method_const(a), self.param_of(a)) {
                (Some(m), _) if !matches!(strip(a), Expr::Lit(_)) => {
                    MethodValue::Const(m, self.span(super::spans::of(&a)))
                }
                (_, Some((item, param))) => MethodValue::Param { item, param },
                _ => continue,
            };
            self.method_args.push(MethodArg {
                callee: callee.to_string(),
                index,
                method_call,
                value,
            });
        }
    }

    /// The requests whose method is a parameter, sent with a POST or PATCH that a caller in this
    /// file hands in, directly or through the callers' own parameters (a few calls up). A
    /// generic `execute(method, ..)` that retries is the usual shape of an SDK: its `post`
    /// wrappers are where the method is written.
    fn param_writes(&mut self) {
        // (item, param) -> the methods that reach it.
        let mut reach: HashMap<(usize, usize), Vec<(String, Span)>> = HashMap::new();
        for _ in 0..4 {
            let mut grew = false;
            for a in &self.method_args {
                let methods: Vec<(String, Span)> = match &a.value {
                    MethodValue::Const(m, at) => vec![(m.clone(), *at)],
                    MethodValue::Param { item, param } => {
                        reach.get(&(*item, *param)).cloned().unwrap_or_default()
                    }
                };
                for (i, it) in self.items.iter().enumerate() {
                    if it.name != a.callee {
                        continue;
                    }
                    let Some(index) = it.param_at(a.index, a.method_call) else {
                        continue;
                    };
                    let entry = reach.entry((i, index)).or_default();
                    for m in &methods {
                        // One origin per method: the first caller found names it.
                        if !entry.iter().any(|(e, _)| *e == m.0) {
                            entry.push(m.clone());
                            grew = true;
                        }
                    }
                }
            }
            if !grew {
                break;
            }
        }
        for p in &self.param_methods {
            if let Some(methods) = reach.get(&(p.item, p.param)) {
                for (m, at) in methods {
                    self.writes.push(RawWrite {
                        span: p.span,
                        method: m.to_ascii_uppercase(),
                        base: p.base.clone(),
                        handed_in: Some(*at),
                        on_self_of: None,
                    });
                }
            }
        }
    }

    fn bind(&mut self, name: String, at: Span, init: &Expr, assign: bool) {
        let reader = self.is_reader_init(init);
        let alias = match strip_handling(init) {
            Expr::MethodCall(m) if m.method == "try_clone" => {
                single_ident(&m.receiver).map(|n| (n, self.span(super::spans::of(&m))))
            }
            _ => None,
        };
        let init = self.span(super::spans::of(&init));
        self.bindings.push(Binding {
            name,
            at,
            init,
            scope: self.scope(),
            reader,
            alias,
            assign,
        });
    }

    fn is_method_const(&self, e: &Expr) -> Option<String> {
        match strip(e) {
            Expr::Path(p) => {
                let segs = path_segments(&p.path);
                let n = segs.len();
                (n >= 2 && segs[n - 2] == "Method")
                    .then(|| segs[n - 1].clone())
                    .filter(|m| self.is_unsafe_method(m))
            }
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else {
                    return None;
                };
                let segs = path_segments(&p.path);
                if segs.last().map(String::as_str) != Some("from_bytes") {
                    return None;
                }
                let arg = c.args.first()?.to_token_stream().to_string();
                let m = arg.trim_start_matches('b').trim_matches('"').to_string();
                self.is_unsafe_method(&m).then_some(m)
            }
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()).filter(|m| self.is_unsafe_method(m)),
            _ => None,
        }
    }

    /// The request's arguments (its URL: text, a `format!`, the names it is built from) say it
    /// exchanges credentials (`.post(token_url)`, `"https://auth/oauth/token"`): no write.
    fn exchanges_credentials<'e>(&self, args: impl Iterator<Item = &'e Expr>) -> bool {
        let words = &self.apis.requests.credential_exchange;
        !words.is_empty()
            && args.into_iter().any(|a| {
                super::words::words_of(a)
                    .iter()
                    .any(|w| words.iter().any(|x| x == w))
            })
    }

    fn is_unsafe_method(&self, m: &str) -> bool {
        self.apis
            .requests
            .methods
            .iter()
            .any(|x| x.eq_ignore_ascii_case(m))
            && m.chars().all(|c| c.is_ascii_alphabetic())
    }

    fn is_idempotency_header(&self, name: &Expr) -> bool {
        let mut words = Vec::new();
        for t in name.to_token_stream() {
            collect_header_words(t, &mut words);
        }
        // A string names the header exactly; a constant may add words (`IDEMPOTENCY_KEY_HEADER`).
        words.iter().any(|(w, exact)| {
            let w = w.to_ascii_lowercase();
            self.apis.requests.idempotency_headers.iter().any(|h| {
                let h = h.to_ascii_lowercase();
                if *exact {
                    w == h
                } else {
                    w.contains(&h)
                }
            })
        })
    }

    fn has_middleware(&self, e: &Expr) -> Option<Span> {
        let r = &self.apis.requests;
        find_middleware(
            e.to_token_stream(),
            &r.retrying_middleware,
            &r.middleware_strategy_constructors,
        )
        .map(|s| self.span(s))
    }

    fn policy(&mut self, i: &syn::ItemImpl) {
        let Some((_, path, _)) = &i.trait_ else {
            return;
        };
        let Some(last) = path.segments.last() else {
            return;
        };
        if last.ident != "Policy"
            || !last
                .arguments
                .to_token_stream()
                .to_string()
                .contains("Request")
        {
            return;
        }
        let mut retry = None;
        let mut clone_fn = None;
        for it in &i.items {
            if let syn::ImplItem::Fn(f) = it {
                if f.sig.ident == "retry" {
                    retry = Some(f);
                } else if f.sig.ident == "clone_request" {
                    clone_fn = Some(self.span(super::spans::of(&f)));
                }
            }
        }
        let Some(retry) = retry else {
            return;
        };
        // Copying the method into a cloned request (`.method(req.method())`) is not a gate;
        // reading it in `retry`, naming `Method` anywhere, or an idempotency flag is.
        let gates = &self.apis.requests.method_gates;
        let looks_at_method = find_ident(i.to_token_stream(), gates).is_some()
            || find_ident(i.to_token_stream(), &["Method".to_string()]).is_some()
            || find_ident(retry.block.to_token_stream(), &["method".to_string()]).is_some();
        let mut errs = ErrPats(None);
        errs.visit_block(&retry.block);
        self.policies.push(Policy {
            retry_fn: self.span(super::spans::of(&retry)),
            retry_name: self.span(retry.sig.ident.span()),
            clone_fn,
            first_err: errs.0.map(|s| self.span(s)),
            looks_at_method,
        });
    }
}

/// The first `Err(..)` arm of a policy's `retry` that does not just give up (`=> None`).
struct ErrPats(Option<proc_macro2::Span>);

impl<'ast> Visit<'ast> for ErrPats {
    fn visit_arm(&mut self, a: &'ast syn::Arm) {
        let err = matches!(&a.pat, syn::Pat::TupleStruct(t)
            if t.path.segments.last().is_some_and(|s| s.ident == "Err"));
        let gives_up = matches!(strip(&a.body), Expr::Path(p) if p.path.is_ident("None"));
        if self.0.is_none() && err && !gives_up {
            self.0 = Some(a.pat.span());
        }
        visit::visit_arm(self, a);
    }
}

impl<'ast> Scan<'_> {
    /// Read the file's nodes in walk order, as a walk of the file would: a function is the
    /// current item over its subtree. The arguments of known macros are not read here: like
    /// every macro's, they are opaque to the request model.
    fn read(&mut self, bodies: &Bodies<'ast>) {
        for m in &bodies.mods {
            if is_test(&m.attrs) {
                self.test_code.push(self.span(m.span()));
            }
        }
        // The ends of the open items' subtrees, innermost last.
        let mut open: Vec<usize> = Vec::new();
        for (i, n) in bodies.nodes.iter().enumerate() {
            while open.last().is_some_and(|&end| end <= i) {
                open.pop();
                self.item_stack.pop();
            }
            while self.impls.last().is_some_and(|&(end, _)| end <= i) {
                self.impls.pop();
            }
            if n.in_macro {
                continue;
            }
            match n.kind {
                Kind::Body(b) => {
                    let f = &bodies.fns[b];
                    if f.free && is_test(f.attrs) {
                        self.test_code.push(self.span(f.span));
                    }
                    if !f.in_trait {
                        self.layer_fn(&f.sig.ident, f.block);
                    }
                    let idx = self.item(f.sig, f.span);
                    self.item_stack.push(idx);
                    open.push(n.end as usize);
                }
                Kind::Decl(d) => {
                    let idx = self.item(&d.sig, super::spans::of(&d));
                    self.item_stack.push(idx);
                    open.push(n.end as usize);
                }
                Kind::Impl(imp) => {
                    if let syn::Type::Path(t) = &*imp.self_ty {
                        if let Some(last) = t.path.segments.last() {
                            self.impls.push((n.end as usize, last.ident.to_string()));
                        }
                    }
                    self.policy(imp);
                }
                Kind::Macro(m) => {
                    if m.path.is_ident("matches") {
                        self.tests.push(self.span(m.span()));
                    }
                }
                Kind::Local(l) => self.local(l),
                Kind::Expr(e) => self.expr(e),
                Kind::Field(_) | Kind::Named(..) => {}
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::If(e) => self.tests.push(self.span(super::spans::of(&e.cond))),
            Expr::Match(m) => self.arms(m),
            Expr::Assign(a) => {
                if let Some(name) = single_ident(&a.left) {
                    let at = self.span(super::spans::of(&a));
                    self.bind(name, at, &a.right, true);
                }
            }
            Expr::Struct(s) => self.literal(s),
            Expr::Path(p) => self.path_use(p),
            Expr::Return(r) => self.returns.push(self.span(super::spans::of(&r))),
            Expr::Closure(c) => self.fences.push(self.span(super::spans::of(&c))),
            Expr::Async(a) => self.fences.push(self.span(super::spans::of(&a))),
            Expr::Call(c) => self.call(c),
            Expr::MethodCall(m) => self.method_call(m),
            _ => {}
        }
    }

    /// A match's arms are failure tests; an `Err(e)` arm that goes round again is a catch-all,
    /// but only in a match on the outcome of a send (an awaited or sending call): a match on a
    /// parse result classifies no delivery failure.
    fn arms(&mut self, m: &syn::ExprMatch) {
        let text = m.expr.to_token_stream().to_string();
        let sending =
            text.contains("await") || self.apis.bodies.sinks.iter().any(|s| has_word(&text, s));
        for a in &m.arms {
            self.tests.push(self.span(a.pat.span()));
            if let Some((_, g)) = &a.guard {
                self.tests.push(self.span(g.span()));
            }
            let catch_all = a.guard.is_none()
                && matches!(&a.pat, syn::Pat::TupleStruct(t)
                    if t.path.is_ident("Err")
                        && t.elems.iter().all(|p| matches!(p, syn::Pat::Ident(_) | syn::Pat::Wild(_))));
            if catch_all && sending && !leaves(&a.body) {
                self.catch_all.push(self.span(super::spans::of(&a)));
            }
        }
    }

    fn local(&mut self, l: &syn::Local) {
        let pat = match &l.pat {
            syn::Pat::Type(pt) => &*pt.pat,
            p => p,
        };
        if let (syn::Pat::Ident(id), Some(init)) = (pat, &l.init) {
            let name = id.ident.to_string();
            let at = self.span(super::spans::of(&l));
            if matches!(strip(&init.expr), Expr::Closure(_) | Expr::Async(_)) {
                let s = self.span(super::spans::of(&init.expr));
                self.closures.push((name.clone(), s, self.scope()));
            }
            if let Some(span) = self.has_middleware(&init.expr) {
                self.layers.push(Layer {
                    local: Some((name.clone(), self.scope())),
                    field: None,
                    span,
                    owner: None,
                });
            }
            self.inits.push(Init {
                local: Some((name.clone(), self.scope())),
                field: None,
                callees: super::callee_names(&init.expr, false),
                copies: None,
                scope: self.scope(),
                owner: None,
            });
            self.bind(name, at, &init.expr, false);
        }
    }

    fn literal(&mut self, s: &syn::ExprStruct) {
        let owner = s
            .path
            .segments
            .last()
            .map(|seg| seg.ident.to_string())
            .and_then(|t| {
                if t == "Self" {
                    self.impl_type()
                } else {
                    Some(t)
                }
            });
        for f in &s.fields {
            let syn::Member::Named(field) = &f.member else {
                continue;
            };
            let span = self.has_middleware(&f.expr).or_else(|| {
                let name = single_ident(&f.expr)?;
                self.layers
                    .iter()
                    .find(|l| {
                        l.local
                            .as_ref()
                            .is_some_and(|(n, sc)| *n == name && *sc == self.scope())
                    })
                    .map(|l| l.span)
            });
            if let Some(span) = span {
                self.layers.push(Layer {
                    local: None,
                    field: Some(field.to_string()),
                    span,
                    owner: owner.clone(),
                });
            }
            self.inits.push(Init {
                local: None,
                field: Some(field.to_string()),
                callees: super::callee_names(&f.expr, false),
                copies: single_ident(&f.expr),
                scope: self.scope(),
                owner: owner.clone(),
            });
        }
    }

    fn path_use(&mut self, p: &syn::ExprPath) {
        if p.qself.is_none() {
            if let Some(id) = p.path.get_ident() {
                let span = self.span(id.span());
                let role = self.roles.get(&span.start).copied().unwrap_or(Role::Plain);
                self.uses.push(Use {
                    name: id.to_string(),
                    span,
                    role,
                });
            }
        }
    }

    fn call(&mut self, c: &syn::ExprCall) {
        if let Expr::Path(p) = &*c.func {
            let segs = path_segments(&p.path);
            let last = segs.last().cloned().unwrap_or_default();
            let own = (segs.len() == 2 && segs[0] == "Self")
                .then(|| self.impl_type())
                .flatten();
            self.calls
                .push((last.clone(), self.span(super::spans::of(&c)), own));
            if segs.len() == 1 || (segs.len() == 2 && segs[0] == "Self") {
                self.handoffs.push(Handoff {
                    name: last.clone(),
                    call: self.span(super::spans::of(&c)),
                    args: c
                        .args
                        .iter()
                        .map(|a| self.span(super::spans::of(&a)))
                        .collect(),
                    method: false,
                });
            }
            self.method_args(&last, c.args.iter(), false);
            // `Request::new(method, url)`: the method is the first argument.
            if segs.len() >= 2 && segs[segs.len() - 2] == "Request" && last == "new" {
                self.param_method(c.args.first(), None);
            }
            let resolved = segs.join("::");
            let fn_write =
                self.apis.requests.functions.iter().any(|f| {
                    *f == resolved || (segs.len() == 1 && f.ends_with(&format!("::{last}")))
                }) || (segs.len() >= 2 && segs[segs.len() - 2] == "Request");
            if fn_write
                && !c.args.is_empty()
                && self.is_unsafe_method(&last)
                && !self.exchanges_credentials(c.args.iter())
            {
                self.writes.push(RawWrite {
                    span: self.span(super::spans::of(&c)),
                    method: last.to_ascii_uppercase(),
                    base: None,
                    handed_in: None,
                    on_self_of: None,
                });
            }
            if self.apis.bodies.sinks.contains(&last) {
                for a in &c.args {
                    self.sinks.push(self.span(super::spans::of(&a)));
                }
            }
            for a in &c.args {
                if let Some(m) = self
                    .is_method_const(a)
                    .filter(|_| !matches!(strip(a), Expr::Lit(_)))
                    .filter(|_| !self.exchanges_credentials(c.args.iter()))
                {
                    self.writes.push(RawWrite {
                        span: self.span(super::spans::of(&a)),
                        method: m.to_ascii_uppercase(),
                        base: None,
                        handed_in: None,
                        on_self_of: None,
                    });
                }
            }
        }
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall) {
        let name = m.method.to_string();
        let on_self = matches!(strip(&m.receiver), Expr::Path(p) if p.path.is_ident("self"));
        let own = on_self.then(|| self.impl_type()).flatten();
        self.calls
            .push((name.clone(), self.span(super::spans::of(&m)), own.clone()));
        if on_self {
            self.handoffs.push(Handoff {
                name: name.clone(),
                call: self.span(super::spans::of(&m)),
                args: m
                    .args
                    .iter()
                    .map(|a| self.span(super::spans::of(&a)))
                    .collect(),
                method: true,
            });
        }
        let base = receiver_base(&m.receiver);
        if self.is_unsafe_method(&name)
            && !m.args.is_empty()
            && !self.exchanges_credentials(m.args.iter())
        {
            let start = self.span(m.method.span()).start;
            let end = self.span(super::spans::of(&m)).end;
            self.writes.push(RawWrite {
                span: Span::new(start, end),
                method: name.to_ascii_uppercase(),
                base: base.clone(),
                handed_in: None,
                on_self_of: own.clone(),
            });
        }
        if matches!(name.as_str(), "request" | "method") {
            self.param_method(m.args.first(), base.clone());
        }
        self.method_args(&name, m.args.iter(), true);
        for (i, a) in m.args.iter().enumerate() {
            // `.request("POST", url)` names the method as text; elsewhere a string is data.
            let text_ok = i == 0 && matches!(name.as_str(), "request" | "method");
            if let Some(meth) = self
                .is_method_const(a)
                .filter(|_| text_ok || !matches!(strip(a), Expr::Lit(_)))
                .filter(|_| !self.exchanges_credentials(m.args.iter()))
            {
                self.writes.push(RawWrite {
                    span: self.span(super::spans::of(&a)),
                    method: meth.to_ascii_uppercase(),
                    base: base.clone(),
                    handed_in: None,
                    on_self_of: None,
                });
            }
        }
        if self.apis.bodies.sinks.contains(&name) {
            for a in &m.args {
                self.sinks.push(self.span(super::spans::of(&a)));
            }
        }
        if self.apis.requests.header_setters.contains(&name)
            && m.args.len() >= 2
            && self.is_idempotency_header(&m.args[0])
        {
            let header = m.args[0].to_token_stream().to_string().to_ascii_lowercase();
            self.headers.push(HeaderSet {
                span: self.span(super::spans::of(&m)),
                dedup_only: header.contains("idempotency"),
                value: self.span(super::spans::of(&m.args[1])),
                value_ident: single_ident(&m.args[1]),
            });
        }
        let role = match name.as_str() {
            "clone" => Some(Role::Cloned),
            "try_clone" => Some(Role::TryCloned(self.span(super::spans::of(&m)))),
            n if self.apis.bodies.rewinds.iter().any(|r| r == n) => Some(Role::Rewound),
            _ => None,
        };
        if let (Some(role), Expr::Path(p)) = (role, strip(&m.receiver)) {
            if let Some(id) = p.path.get_ident() {
                self.roles.insert(self.span(id.span()).start, role);
            }
        }
        if matches!(name.as_str(), "when" | "retry_if" | "should_retry") {
            for a in &m.args {
                self.tests.push(self.span(super::spans::of(&a)));
            }
        }
        self.try_clone_handling(m, &name);
    }
}

impl Scan<'_> {
    /// A function whose body wraps a client in a retrying middleware is a client factory. Names
    /// shared by every type (`new`, `default`, `build`) are left out: a call of one of those
    /// elsewhere in the file is rarely this factory.
    fn layer_fn(&mut self, name: &syn::Ident, block: &syn::Block) {
        const GENERIC: &[&str] = &[
            "new", "default", "build", "builder", "from", "with", "clone",
        ];
        let name = name.to_string();
        if GENERIC.contains(&name.as_str()) {
            return;
        }
        // Printing every function body to tokens is costly; the text must name one first.
        let text = self.src.slice(self.span(super::spans::of(&block)));
        if !self
            .apis
            .requests
            .retrying_middleware
            .iter()
            .any(|w| text.contains(w.as_str()))
        {
            return;
        }
        if let Some(s) = find_middleware(
            block.to_token_stream(),
            &self.apis.requests.retrying_middleware,
            &self.apis.requests.middleware_strategy_constructors,
        ) {
            let span = self.span(s);
            self.layer_fns.push((name, span));
        }
    }

    /// Clients made by a factory of this file: locals and fields initialised by a call of one,
    /// and fields initialised from such a local (`Self { client }`).
    fn factory_layers(&mut self) {
        for init in &self.inits {
            let made = self
                .layer_fns
                .iter()
                .find(|(f, _)| init.callees.contains(f))
                .map(|(_, s)| *s)
                .or_else(|| {
                    let copied = init.copies.as_ref()?;
                    self.layers
                        .iter()
                        .find(|l| {
                            l.local
                                .as_ref()
                                .is_some_and(|(n, sc)| n == copied && *sc == init.scope)
                        })
                        .map(|l| l.span)
                });
            if let Some(span) = made {
                self.layers.push(Layer {
                    local: init.local.clone(),
                    field: init.field.clone(),
                    span,
                    owner: init.owner.clone(),
                });
            }
        }
    }

    /// A field set from a parameter (`fn custom(agent, http: C) -> Self { Self { client: http,
    /// .. } }`) holds what the file's calls of that function hand it there: the retrying client
    /// `new` makes and passes on (`Self::custom(agent, client)`).
    fn handed_layers(&mut self) {
        let mut handed = Vec::new();
        for init in &self.inits {
            let (Some(field), Some(copied), Some(scope)) = (&init.field, &init.copies, init.scope)
            else {
                continue;
            };
            let item = &self.items[scope];
            let Some(param) = item.params.iter().position(|p| p == copied) else {
                continue;
            };
            for h in self.handoffs.iter().filter(|h| h.name == item.name) {
                let Some(arg) = (0..h.args.len())
                    .find(|&i| item.param_at(i, h.method) == Some(param))
                    .map(|i| h.args[i])
                else {
                    continue;
                };
                let caller = self.innermost_item(h.call);
                let name = self.src.slice(arg).trim().trim_start_matches('&');
                let layer = self.layers.iter().find(|l| {
                    l.local
                        .as_ref()
                        .is_some_and(|(n, sc)| n == name && *sc == caller)
                });
                if let Some(l) = layer {
                    handed.push(Layer {
                        local: None,
                        field: Some(field.clone()),
                        span: l.span,
                        owner: init.owner.clone(),
                    });
                }
            }
        }
        self.layers.extend(handed);
    }

    /// The functions the file's calls hand a retrying client to ([`Requests::client_takers`]).
    fn client_takers(&self) -> std::collections::BTreeSet<String> {
        let mut out = std::collections::BTreeSet::new();
        for h in &self.handoffs {
            let caller = self.innermost_item(h.call);
            let hands = h.args.iter().any(|&a| {
                let name = self.src.slice(a).trim().trim_start_matches('&');
                self.layers.iter().any(|l| {
                    l.local
                        .as_ref()
                        .is_some_and(|(n, sc)| n == name && *sc == caller)
                })
            });
            if hands {
                out.insert(h.name.clone());
            }
        }
        out
    }

    /// The innermost named function of the file around `at`.
    fn innermost_item(&self, at: Span) -> Option<usize> {
        (0..self.items.len())
            .filter(|&i| self.items[i].span.contains(at))
            .min_by_key(|&i| self.items[i].span.end - self.items[i].span.start)
    }

    /// `x.try_clone().unwrap()` and friends: how the `None` of a request clone is handled.
    fn try_clone_handling(&mut self, m: &syn::ExprMethodCall, name: &str) {
        let Expr::MethodCall(inner) = strip(&m.receiver) else {
            return;
        };
        // `body.and_then(|b| b.try_clone())`: the clone sits in the adapter's closure.
        let through = matches!(inner.method.to_string().as_str(), "and_then" | "map")
            && find_ident(inner.args.to_token_stream(), &["try_clone".to_string()]).is_some();
        if inner.method != "try_clone" && !through {
            return;
        }
        let empty = &self.apis.bodies.empty;
        let handling = match name {
            "unwrap" | "expect" => Handling::Unwrapped,
            "unwrap_or_default" => Handling::Emptied,
            "unwrap_or_else" | "unwrap_or"
                if m.args
                    .iter()
                    .any(|a| find_ident(a.to_token_stream(), empty).is_some()) =>
            {
                Handling::Emptied
            }
            _ => return,
        };
        let start = self.span(inner.method.span()).start;
        let end = self.span(super::spans::of(&m)).end;
        let receiver_words = super::words::ident_words_of(&*inner.receiver)
            .into_iter()
            .collect();
        self.clones.push(TryClone {
            span: Span::new(start, end),
            receiver: single_ident(&inner.receiver),
            receiver_words,
            handling,
        });
    }
}

/// Where a retry site reaches: its span, closures handed to it, a policy's `clone_request`.
struct Region {
    span: Span,
    anchor: Span,
    /// A loop: a `return` in its body leaves it for good.
    looped: bool,
    /// The whole retry site (for failure-path tests); the policy fn for policies.
    site: Span,
    /// A call of a wrapper that re-sends a request: the argument holding it, and its name.
    resends: Option<super::Resend>,
}

fn regions(facts: &Facts, scan: &Scan, src: &SourceFile) -> Vec<Region> {
    let mut out = Vec::new();
    for s in &facts.sites {
        out.push(Region {
            span: s.span,
            anchor: s.anchor,
            looped: matches!(s.kind, SiteKind::Loop | SiteKind::While | SiteKind::For),
            site: s.span,
            resends: s.resends.clone(),
        });
        if matches!(s.kind, SiteKind::Combinator(_) | SiteKind::Wrapper(_)) {
            let text = src.slice(s.span);
            for (name, span, _) in &scan.closures {
                if !s.span.contains(*span) && has_word(text, name) {
                    out.push(Region {
                        span: *span,
                        anchor: s.anchor,
                        looped: false,
                        site: *span,
                        resends: None,
                    });
                }
            }
        }
    }
    for p in &scan.policies {
        if let Some(c) = p.clone_fn {
            out.push(Region {
                span: c,
                anchor: p.retry_name,
                looped: false,
                site: p.retry_fn,
                resends: None,
            });
        }
    }
    out
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let ok = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        ok(text[..i].chars().next_back()) && ok(text[i + word.len()..].chars().next())
    })
}

struct Resolve<'a> {
    apis: &'a Apis,
    scan: &'a Scan<'a>,
    toks: &'a [Tok],
    regions: Vec<Region>,
    /// Spans of the wrapper-call sites whose wrapper re-sends only after a refusal.
    refusal_wrappers: Vec<Span>,
    /// Spans of the sites whose retry predicate re-sends only errors that carry a response
    /// status ([`super::RetrySite::status_only`]).
    status_only: Vec<Span>,
}

impl Resolve<'_> {
    /// `s` is in a `return` of the loop `r` (not one of a closure in it): it runs once, on the
    /// way out (`if done { return self.fetch_result().await }`), and is never sent again.
    fn on_the_way_out(&self, r: &Region, s: Span) -> bool {
        r.looped
            && self.scan.returns.iter().any(|ret| {
                r.span.contains(*ret)
                    && ret.contains(s)
                    && !self
                        .scan
                        .fences
                        .iter()
                        .any(|f| r.span.contains(*f) && f.contains(*ret))
            })
    }

    fn innermost(&self, s: Span) -> Option<&Region> {
        self.regions
            .iter()
            .filter(|r| r.span.contains(s))
            .min_by_key(|r| r.span.end - r.span.start)
    }

    fn item_of(&self, s: Span) -> Option<usize> {
        self.scan
            .items
            .iter()
            .enumerate()
            .filter(|(_, it)| it.span.contains(s))
            .min_by_key(|(_, it)| it.span.end - it.span.start)
            .map(|(i, _)| i)
    }

    /// Does a token in `span` match one of `list`: exactly, or as part of a snake-case
    /// identifier for longer entries (`is_idempotent_request`)? A number is not a status code
    /// when it is a duration (`from_millis(500)`).
    fn any_tok(&self, span: Span, list: &[String]) -> bool {
        let toks = toks_in(self.toks, span);
        toks.iter().enumerate().any(|(i, t)| {
            list.iter().any(|w| {
                if t.text == *w {
                    let number = t.text.starts_with(|c: char| c.is_ascii_digit());
                    let duration = i > 0 && toks[i - 1].text.starts_with("from_");
                    return !(number && duration);
                }
                w.len() > 4
                    && t.text.contains('_')
                    && t.text
                        .to_ascii_lowercase()
                        .contains(&w.to_ascii_lowercase())
            })
        })
    }

    /// Does an identifier in `span` contain one of `words` (lowercase), like `tonic` or
    /// `GrpcClient`?
    fn any_word(&self, span: Span, words: &[String]) -> bool {
        toks_in(self.toks, span).iter().any(|t| {
            !t.text.starts_with('"') && {
                let l = t.text.to_ascii_lowercase();
                words.iter().any(|w| l.contains(w.as_str()))
            }
        })
    }

    /// The site's failure tests name only outcomes where the request never reached the server
    /// (connect errors, refusals, 429), and no catch-all `Err` arm goes round again.
    fn not_delivered_only(&self, site: Span) -> bool {
        let req = &self.apis.requests;
        if self.scan.catch_all.iter().any(|a| site.contains(*a)) {
            return false;
        }
        let tests: Vec<&Tok> = self
            .scan
            .tests
            .iter()
            .filter(|t| site.contains(**t))
            .flat_map(|t| toks_in(self.toks, *t))
            .collect();
        let ambiguous = tests.iter().any(|t| req.ambiguous.contains(&t.text));
        let refused = tests.iter().any(|t| {
            let words: Vec<String> = t
                .text
                .split(|c: char| c == '_' || !c.is_alphanumeric())
                .flat_map(camel_words)
                .collect();
            req.not_delivered.iter().any(|phrase| {
                let p: Vec<String> = phrase.split('_').map(str::to_ascii_lowercase).collect();
                words.windows(p.len()).any(|w| w == p.as_slice())
            })
        });
        refused && !ambiguous
    }

    fn writes(&self) -> Vec<Write> {
        let mut out: Vec<Write> = Vec::new();
        for w in &self.scan.writes {
            // `self.post(path, &msg)` calls the impl's own `post`: the request it sends is
            // built in there, and judged there (through the helper call).
            if self.own_call(w) {
                continue;
            }
            let Some((retry, via, region)) = self.reach(w) else {
                continue;
            };
            // A method handed in is re-sent with the request built in the site; through a
            // retrying client, every request it sends is re-sent, so each caller's constant is
            // a write of its own, reported where the method is written.
            let span = match (via.clone(), w.handed_in) {
                (Via::Client(_), Some(at)) => at,
                (Via::Site, _) | (_, None) => w.span,
                _ => continue,
            };
            let scopes: Vec<Span> = [
                Some(region),
                self.item_of(w.span).map(|i| self.scan.items[i].span),
                self.item_of(retry).map(|i| self.scan.items[i].span),
            ]
            .into_iter()
            .flatten()
            .collect();
            let req = &self.apis.requests;
            // gRPC has no method semantics: a `POST` there is the transport, not a write.
            if scopes.iter().any(|s| self.any_word(*s, &req.grpc)) {
                continue;
            }
            let mut gated = scopes.iter().any(|s| self.any_tok(*s, &req.method_gates));
            if matches!(via, Via::Site | Via::Helper(_) | Via::Caller(_)) {
                let site = self.innermost(retry).map_or(region, |r| r.site);
                gated |= self.not_delivered_only(site) || self.refusal_wrappers.contains(&site);
                // A predicate that re-sends only errors carrying a status never re-sends a lost
                // response; and where the operation never turns a status into an error
                // (`error_for_status`), it re-sends nothing at all.
                gated |= self.status_only.contains(&site)
                    && !scopes
                        .iter()
                        .any(|s| self.any_tok(*s, &self.apis.requests.status_errors));
            }
            let fresh = match via {
                Via::Helper(_) => self
                    .item_of(w.span)
                    .map_or(region, |i| self.scan.items[i].span),
                _ => region,
            };
            let key = self.key(w.span, &scopes, region, fresh);
            if out.iter().any(|o| o.span == span) {
                continue;
            }
            // A call of a crate wrapper that re-sends what it is handed (of this file or
            // another) is the retry itself: named in the finding.
            let resender = match via {
                Via::Caller(call) => self
                    .regions
                    .iter()
                    .find(|r| r.site == call)
                    .and_then(|r| r.resends.as_ref())
                    .map(|x| x.wrapper.clone()),
                _ => None,
            };
            let handed_in = w.handed_in.filter(|&at| at != span);
            out.push(Write {
                span,
                method: w.method.clone(),
                retry,
                via,
                key,
                gated,
                handed_in,
                resender,
            });
        }
        for p in &self.scan.policies {
            if self.any_word(p.retry_fn, &self.apis.requests.grpc) {
                continue;
            }
            // Retrying on a transport error, or else on an ambiguous status (5xx), whatever
            // the method.
            let at = p.first_err.or_else(|| {
                toks_in(self.toks, p.retry_fn)
                    .iter()
                    .find(|t| self.apis.requests.ambiguous.contains(&t.text))
                    .map(|t| t.span)
            });
            if let (false, Some(err)) = (p.looks_at_method, at) {
                out.push(Write {
                    span: err,
                    method: "POST".into(),
                    retry: p.retry_name,
                    via: Via::Policy,
                    key: Key::Missing,
                    gated: false,
                    handed_in: None,
                    resender: None,
                });
            }
        }
        out
    }

    /// `self.post(..)` where the impl defines its own `post`: a call of that helper, no write.
    fn own_call(&self, w: &RawWrite) -> bool {
        w.on_self_of.is_some()
            && self.scan.items.iter().any(|i| {
                i.receiver && i.owner == w.on_self_of && w.method.eq_ignore_ascii_case(&i.name)
            })
    }

    /// How a retry reaches a write: (retry anchor, via, the region to search for keys/gates).
    fn reach(&self, w: &RawWrite) -> Option<(Span, Via, Span)> {
        if let Some(r) = self.innermost(w.span) {
            if self.on_the_way_out(r, w.span) {
                return None;
            }
            return Some((r.anchor, Via::Site, r.span));
        }
        let item = self.item_of(w.span)?;
        let helper = &self.scan.items[item];
        for r in &self.regions {
            for (name, call, own) in &self.scan.calls {
                if *name == helper.name
                    && (own.is_none() || helper.owner.is_none() || *own == helper.owner)
                    && r.span.contains(*call)
                    && !self.on_the_way_out(r, *call)
                    && !helper.span.contains(r.span)
                    && !self
                        .scan
                        .writes
                        .iter()
                        .any(|x| call.contains(x.span) && !self.own_call(x))
                {
                    return Some((r.anchor, Via::Helper(*call), r.span));
                }
            }
        }
        if let Some(found) = self.handed_to_site(w, item) {
            return Some(found);
        }
        let base = w.base.as_deref()?;
        for l in &self.scan.layers {
            let hit = match (&l.local, &l.field) {
                (Some((n, sc)), _) => n == base && *sc == Some(item),
                // A field of another struct of the file is another client.
                (None, Some(f)) => {
                    base.strip_prefix("self.") == Some(f.as_str())
                        && (l.owner.is_none() || helper.owner.is_none() || l.owner == helper.owner)
                }
                _ => false,
            };
            if hit {
                return Some((l.span, Via::Client(l.span), helper.span));
            }
        }
        None
    }

    /// The request is built in `item` (as an argument, or a local named as one) and handed to a
    /// function of this file whose retry site names the parameter it lands in: every attempt
    /// of that site sends the caller's request again.
    fn handed_to_site(&self, w: &RawWrite, item: usize) -> Option<(Span, Via, Span)> {
        let caller = &self.scan.items[item];
        // The local the request is bound to (`let req = client.post(url)..;`), if any.
        let local = self
            .scan
            .bindings
            .iter()
            .filter(|b| b.scope == Some(item) && b.init.contains(w.span) && !b.assign)
            .map(|b| b.name.as_str())
            .next();
        let names_local =
            |a: Span| local.is_some_and(|l| toks_in(self.toks, a).iter().any(|t| t.text == l));
        for h in &self.scan.handoffs {
            if !caller.span.contains(h.call) || h.call.end < w.span.start {
                continue;
            }
            // A method constant that is itself the argument (`self.execute(Method::POST, ..)`)
            // is a method handed in, which the callee's own request carries: that request is
            // the write ([`Scan::param_writes`]).
            let Some(pos) = h
                .args
                .iter()
                .position(|&a| (a.contains(w.span) && a != w.span) || names_local(a))
            else {
                continue;
            };
            for callee in self.scan.items.iter().filter(|it| it.name == h.name) {
                if callee.span.contains(h.call) {
                    continue; // recursion
                }
                let Some(param) = callee.param_at(pos, h.method).map(|i| &callee.params[i]) else {
                    continue;
                };
                if param == "_" {
                    continue;
                }
                let region = self.regions.iter().find(|r| {
                    callee.span.contains(r.span)
                        && toks_in(self.toks, r.span).iter().any(|t| t.text == *param)
                });
                if let Some(r) = region {
                    return Some((r.anchor, Via::Caller(h.call), r.span));
                }
            }
        }
        // A call of a crate wrapper that re-sends the request it is handed, whose loop is in
        // another file (in this one, the loop was found above): the site is the call.
        self.regions
            .iter()
            .find(|r| {
                r.resends.as_ref().is_some_and(|x| {
                    let a = x.arg;
                    caller.span.contains(a)
                        && (a.contains(w.span) || (a.start > w.span.start && names_local(a)))
                })
            })
            .map(|r| (r.anchor, Via::Caller(r.site), r.span))
    }

    /// The key the write carries: a header set in its function or the site, whose value (or the
    /// binding it names) is made inside the site or the helper (`fresh`) or outside it.
    fn key(&self, write: Span, scopes: &[Span], region: Span, fresh: Span) -> Key {
        let gens = &self.apis.requests.key_generators;
        let inside = |s: Span| fresh.contains(s) || region.contains(s);
        let mut outside = false;
        // A header set in the write's own builder chain (its call spans the `.post(`) decides;
        // otherwise one set on a header map or request variable in scope, but not one that
        // belongs to another request's chain.
        let chain = |h: &HeaderSet| h.span.contains(write);
        let own: Vec<&HeaderSet> = self.scan.headers.iter().filter(|h| chain(h)).collect();
        let candidates: Vec<&HeaderSet> = if own.is_empty() {
            self.scan
                .headers
                .iter()
                .filter(|h| {
                    scopes.iter().any(|s| s.contains(h.span))
                        && !self.scan.writes.iter().any(|w| h.span.contains(w.span))
                })
                .collect()
        } else {
            own
        };
        for h in candidates {
            let made_here = if self.any_tok(h.value, gens) {
                Some(h.value)
            } else {
                h.value_ident.as_ref().and_then(|name| {
                    let b = self
                        .scan
                        .binding_before(name, self.item_of(h.span), h.span.start)?;
                    (inside(b.at) && self.any_tok(b.init, gens)).then_some(b.init)
                })
            };
            match made_here {
                Some(v) if inside(h.span) && h.dedup_only => return Key::PerAttempt(v),
                // A request id made per attempt is a trace id, not a key: look further.
                Some(_) if inside(h.span) => {}
                _ => outside = true,
            }
        }
        if outside {
            Key::Outside
        } else {
            Key::Missing
        }
    }

    fn request_like(&self, name: &str) -> bool {
        let mut words = std::collections::BTreeSet::new();
        super::words::split_ident(name, &mut words);
        words.iter().any(|w| self.apis.bodies.cloned.contains(w))
    }

    fn replays(&self) -> Vec<Replay> {
        let mut out: Vec<Replay> = Vec::new();
        let scan = self.scan;
        // Only names bound to a reader (or to a clone of one) can replay one: test those first,
        // so a large file costs one pass over its uses.
        let candidates: std::collections::HashSet<&str> = scan
            .bindings
            .iter()
            .filter(|b| b.reader || b.alias.is_some())
            .map(|b| b.name.as_str())
            .collect();
        for u in &scan.uses {
            if u.role == Role::Cloned || !candidates.contains(u.name.as_str()) {
                continue;
            }
            let Some(region) = self.innermost(u.span) else {
                continue;
            };
            if !scan.sinks.iter().any(|s| s.contains(u.span)) {
                continue;
            }
            let scope = self.item_of(u.span);
            let Some(b) = scan.binding_before(&u.name, scope, u.span.start) else {
                continue;
            };
            let (root, at, kind) = if let Some((root_name, clone)) = &b.alias {
                let Some(root) = scan.binding_before(root_name, scope, b.at.start) else {
                    continue;
                };
                if region.span.contains(b.at) {
                    (root, *clone, ReplayKind::SharedCursor)
                } else {
                    // Cloned once before the site: the clone itself is the reader re-sent.
                    (root, u.span, ReplayKind::SharedReader)
                }
            } else if let Role::TryCloned(call) = u.role {
                (b, call, ReplayKind::SharedCursor)
            } else {
                (b, u.span, ReplayKind::SharedReader)
            };
            if !root.reader || region.span.contains(root.at) {
                continue;
            }
            // A request's `try_clone()` copies it (or returns `None`): judged by its handling below.
            if kind == ReplayKind::SharedCursor && self.request_like(&root.name) {
                continue;
            }
            let (name, origin) = if kind == ReplayKind::SharedReader && b.alias.is_some() {
                (b.name.clone(), b.at)
            } else {
                (root.name.clone(), root.at)
            };
            // Rebuilt or rewound inside the site: every attempt starts from the beginning.
            let refreshed = scan
                .bindings
                .iter()
                .any(|x| x.assign && x.name == root.name && region.span.contains(x.at))
                || scan.uses.iter().any(|x| {
                    x.role == Role::Rewound
                        && (x.name == root.name || x.name == u.name)
                        && region.span.contains(x.span)
                });
            if refreshed || out.iter().any(|o| o.span == at) {
                continue;
            }
            out.push(Replay {
                span: at,
                kind,
                name,
                origin: Some(origin),
                retry: region.anchor,
            });
        }
        let streams = self
            .apis
            .bodies
            .streams
            .iter()
            .any(|s| self.scan.src.text.contains(s.as_str()));
        for c in &scan.clones {
            let Some(region) = self.innermost(c.span) else {
                continue;
            };
            let request = c
                .receiver_words
                .iter()
                .any(|w| self.apis.bodies.cloned.contains(w));
            let kind = match c.handling {
                Handling::Emptied => ReplayKind::CloneEmptied,
                Handling::Unwrapped if streams => ReplayKind::CloneUnwrapped,
                Handling::Unwrapped => continue,
            };
            if !request || out.iter().any(|o| o.span.contains(c.span)) {
                continue;
            }
            // The request built once outside the site, when the receiver is a local.
            let origin = c.receiver.as_ref().and_then(|n| {
                scan.binding_before(n, self.item_of(c.span), c.span.start)
                    .filter(|b| !region.span.contains(b.at))
                    .map(|b| b.at)
            });
            out.push(Replay {
                span: c.span,
                kind,
                name: c.receiver.clone().unwrap_or_default(),
                origin,
                retry: region.anchor,
            });
        }
        out
    }
}

/// `#[cfg(test)]`, `#[test]`, `#[tokio::test]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let p = a.path();
        p.segments.last().is_some_and(|s| s.ident == "test")
            || (p.is_ident("cfg")
                && a.meta.to_token_stream().to_string().replace(' ', "") == "cfg(test)")
    })
}

/// The lowercase words of an identifier in order: `ConnectionRefused` -> connection, refused.
fn camel_words(ident: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in ident.chars() {
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// An arm body that leaves the loop or the function (`return`, `break`, `?`, a panic).
fn leaves(e: &Expr) -> bool {
    struct Leaves(bool);
    impl<'ast> Visit<'ast> for Leaves {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_break(&mut self, _: &'ast syn::ExprBreak) {
            self.0 = true;
        }
        fn visit_expr_try(&mut self, _: &'ast syn::ExprTry) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            if matches!(
                super::macros::macro_name(m).as_str(),
                "bail" | "panic" | "unreachable"
            ) {
                self.0 = true;
            }
        }
    }
    // An arm that only yields the error (`Err(e) => Err(e)`) hands it to the caller.
    if let Expr::Call(c) = strip(e) {
        if matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Err")) {
            return true;
        }
    }
    let mut v = Leaves(false);
    v.visit_expr(e);
    v.0
}

fn strip(mut e: &Expr) -> &Expr {
    loop {
        match e {
            Expr::Paren(p) => e = &p.expr,
            Expr::Reference(r) => e = &r.expr,
            Expr::Group(g) => e = &g.expr,
            _ => return e,
        }
    }
}

/// The spans of the file's retry sites that `keep` selects.
fn site_spans(facts: &Facts, keep: impl Fn(&super::RetrySite) -> bool) -> Vec<Span> {
    facts
        .sites
        .iter()
        .filter(|s| keep(s))
        .map(|s| s.span)
        .collect()
}

/// Strip `?`, `.await`, `.unwrap()`, `.expect(..)` around an expression.
pub(super) fn strip_handling(mut e: &Expr) -> &Expr {
    loop {
        match strip(e) {
            Expr::Try(t) => e = &t.expr,
            Expr::Await(a) => e = &a.base,
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "unwrap" | "expect" | "context" | "with_context" | "map_err"
                ) =>
            {
                e = &m.receiver;
            }
            other => return other,
        }
    }
}

/// The one local a value is made from: `key`, `key.to_string()`, `&key`,
/// `HeaderValue::from_str(&key).unwrap()`, `waited.as_secs()`. Conversions keep the value the
/// local holds, so a key made per attempt and converted is still made per attempt.
pub(super) fn single_ident(e: &Expr) -> Option<String> {
    match strip(e) {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident().map(ToString::to_string),
        // `key.to_string()`, `key.as_str()`, `key.hyphenated().to_string()`, `.unwrap()` and
        // `.expect(..)` on a conversion: what is converted is the value.
        Expr::MethodCall(m) if m.args.is_empty() || m.method == "expect" => {
            single_ident(&m.receiver)
        }
        Expr::Try(t) => single_ident(&t.expr),
        // `HeaderValue::from_str(&key)`, `String::from(key)`.
        Expr::Call(c) if c.args.len() == 1 && matches!(&*c.func, Expr::Path(_)) => {
            single_ident(&c.args[0])
        }
        _ => None,
    }
}

/// Direct arguments of the calls in `e`'s receiver chain and nested calls.
fn call_args<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match strip(e) {
        Expr::Call(c) => {
            for a in &c.args {
                out.push(a);
                call_args(a, out);
            }
        }
        Expr::MethodCall(m) => {
            for a in &m.args {
                out.push(a);
                call_args(a, out);
            }
            call_args(&m.receiver, out);
        }
        Expr::Try(t) => call_args(&t.expr, out),
        Expr::Await(a) => call_args(&a.base, out),
        _ => {}
    }
}

/// The root of a receiver chain: `client` or `self.<field>`.
fn receiver_base(mut e: &Expr) -> Option<String> {
    loop {
        match strip(e) {
            Expr::MethodCall(m) => e = &m.receiver,
            Expr::Try(t) => e = &t.expr,
            Expr::Await(a) => e = &a.base,
            Expr::Field(f) => {
                let syn::Member::Named(member) = &f.member else {
                    return None;
                };
                let mut root = &*f.base;
                while let Expr::Field(inner) = strip(root) {
                    root = &inner.base;
                }
                return (single_ident(root).as_deref() == Some("self"))
                    .then(|| format!("self.{member}"));
            }
            other => return single_ident(other),
        }
    }
}

fn compact(e: &Expr) -> String {
    e.to_token_stream().to_string().replace(' ', "")
}

/// The first identifier of `ts` that is one of `names`.
/// The first retrying middleware named in `ts` that re-sends by its own rules: not one built
/// by a constructor that takes the crate's strategy (`Middleware::with_strategy(..)`).
fn find_middleware(
    ts: TokenStream,
    names: &[String],
    own_strategy: &[String],
) -> Option<proc_macro2::Span> {
    let tokens: Vec<TokenTree> = ts.into_iter().collect();
    for (i, tt) in tokens.iter().enumerate() {
        match tt {
            TokenTree::Ident(id) if names.contains(&id.to_string()) => {
                // `Name :: ctor`: two `:` puncts, then the constructor.
                let ctor = match (tokens.get(i + 1), tokens.get(i + 2), tokens.get(i + 3)) {
                    (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(c)),
                    ) if a.as_char() == ':' && b.as_char() == ':' => Some(c.to_string()),
                    _ => None,
                };
                if !ctor.is_some_and(|c| own_strategy.contains(&c)) {
                    return Some(id.span());
                }
            }
            TokenTree::Group(g) => {
                if let Some(s) = find_middleware(g.stream(), names, own_strategy) {
                    return Some(s);
                }
            }
            _ => {}
        }
    }
    None
}

fn find_ident(ts: TokenStream, names: &[String]) -> Option<proc_macro2::Span> {
    for tt in ts {
        match tt {
            TokenTree::Ident(i) => {
                let s = i.to_string();
                if names.contains(&s) {
                    return Some(i.span());
                }
            }
            TokenTree::Group(g) => {
                if let Some(s) = find_ident(g.stream(), names) {
                    return Some(s);
                }
            }
            _ => {}
        }
    }
    None
}

/// Candidate header names in a header-name expression: string contents, and identifiers read as
/// header names (`IDEMPOTENCY_KEY` -> `idempotency-key`).
fn collect_header_words(t: TokenTree, out: &mut Vec<(String, bool)>) {
    match t {
        TokenTree::Group(g) => {
            for t in g.stream() {
                collect_header_words(t, out);
            }
        }
        TokenTree::Ident(i) => out.push((i.to_string().replace('_', "-"), false)),
        TokenTree::Literal(l) => {
            let s = l.to_string();
            if let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                out.push((inner.to_string(), true));
            }
        }
        TokenTree::Punct(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::{Key, Via};
    use crate::base::apis::Apis;
    use crate::base::source::SourceFile;

    /// One line per write (`METHOD via key gated`) and per replay (`kind name`), with the text
    /// of the primary span.
    fn check(text: &str) -> String {
        let src = SourceFile::new("t.rs", text);
        let file = syn::parse_file(text).unwrap();
        let facts = crate::analysis::analyze(&file, &src, &Apis::builtin());
        let mut out = Vec::new();
        for w in &facts.requests.writes {
            let via = match w.via {
                Via::Site => "site",
                Via::Helper(_) => "helper",
                Via::Caller(_) => "caller",
                Via::Client(_) => "client",
                Via::Policy => "policy",
            };
            let key = match w.key {
                Key::Missing => "no-key".to_string(),
                Key::Outside => "key-outside".to_string(),
                Key::PerAttempt(k) => format!("key-per-attempt:{}", src.slice(k)),
            };
            out.push(format!(
                "{} {via} {key} gated={} `{}`",
                w.method,
                w.gated,
                src.slice(w.span)
            ));
        }
        for r in &facts.requests.replays {
            out.push(format!("{:?} {} `{}`", r.kind, r.name, src.slice(r.span)));
        }
        out.join("\n")
    }

    #[test]
    fn keys_made_outside_inside_or_not_at_all() {
        let got = check(
            "async fn f(c: &C, k: &str) {
                let once = Uuid::new_v4();
                for attempt in 0..3 {
                    let fresh = Uuid::new_v4();
                    let _ = c.post(\"a\").header(\"Idempotency-Key\", fresh).send().await;
                    let _ = c.post(\"b\").header(\"idempotency-key\", once).send().await;
                    let _ = c.patch(\"c\").send().await;
                    let _ = c.post(\"e\").header(\"Idempotency-Key\", fresh.to_string()).send().await;
                    let _ = c.post(\"f\").header(\"Idempotency-Key\", HeaderValue::from_str(&once.to_string())?).send().await;
                    if c.put(\"d\").send().await.is_ok() { return; }
                    tokio::time::sleep(d).await;
                }
            }",
        );
        assert_eq!(
            got,
            "POST site key-per-attempt:Uuid::new_v4() gated=false `post(\"a\")`
POST site key-outside gated=false `post(\"b\")`
PATCH site no-key gated=false `patch(\"c\")`
POST site key-per-attempt:Uuid::new_v4() gated=false `post(\"e\")`
POST site key-outside gated=false `post(\"f\")`"
        );
    }

    /// A request the caller builds and hands to a function of the file whose retry site
    /// sends that parameter is re-sent by it, with the caller's key and the site's gates; one
    /// handed to a function that only sends it once is not. A method constant handed in is
    /// reported once, at the request the callee builds with it.
    /// `self.post(path, &msg)` in the loop calls the impl's own `post`, which builds the request:
    /// the write is the `.post(` in there, reached through the helper call. Near miss: an impl
    /// with no `post` of its own, whose `self.post(..)` is the request builder's.
    #[test]
    fn a_call_of_the_impls_own_post_is_the_helper_not_the_write() {
        let got = check(
            "impl Sender {
                fn send(&self, m: &Msg) -> R {
                    loop {
                        match self.post(PATH, m) {
                            Ok(r) if r.status().is_success() => return Ok(()),
                            _ => std::thread::sleep(D),
                        }
                    }
                }
                fn post(&self, path: &str, m: &Msg) -> reqwest::Result<Response> {
                    self.client.post(format!(\"{}{path}\", self.base)).json(m).send()
                }
            }
            impl Client {
                async fn create(&self, m: &Msg) -> R {
                    loop {
                        if let Ok(r) = self.post(URL).json(m).send().await { return Ok(r); }
                        tokio::time::sleep(D).await;
                    }
                }
            }",
        );
        assert_eq!(
            got,
            "POST helper no-key gated=false `post(format!(\"{}{path}\", self.base))`
POST site no-key gated=false `post(URL)`"
        );
    }

    #[test]
    fn a_request_handed_to_a_retrying_helper() {
        let got = check(
            "async fn pay(c: &C) { let req = c.post(\"a\").json(&b); resend(req).await; }
            async fn keyed(c: &C) {
                let k = Uuid::new_v4();
                resend(c.post(\"b\").header(\"Idempotency-Key\", k.to_string())).await;
            }
            async fn refused(c: &C) { self.on_refusal(c.post(\"c\")).await; }
            async fn once(c: &C) { send_once(c.post(\"d\")).await; }
            async fn by_method(&self) { self.exec(Method::PATCH).await; }
            async fn exec(&self, m: Method) {
                for n in 0..3 {
                    if self.c.request(m.clone(), \"e\").send().await.is_ok() { return; }
                    tokio::time::sleep(d).await;
                }
            }
            async fn resend(req: RequestBuilder) -> R {
                for n in 0..3 {
                    if let Ok(r) = req.try_clone().unwrap().send().await { return r; }
                    tokio::time::sleep(d).await;
                }
            }
            async fn on_refusal(&self, req: RequestBuilder) -> R {
                loop {
                    match req.try_clone().unwrap().send().await {
                        Err(e) if e.is_connect() => tokio::time::sleep(d).await,
                        other => return other,
                    }
                }
            }
            async fn send_once(req: RequestBuilder) -> R {
                for page in pages { tokio::time::sleep(d).await; }
                req.send().await
            }",
        );
        assert_eq!(
            got,
            "POST caller no-key gated=false `post(\"a\")`
POST caller key-outside gated=false `post(\"b\")`
POST caller no-key gated=true `post(\"c\")`
PATCH site no-key gated=false `m.clone()`"
        );
    }

    #[test]
    fn non_delivery_only_gates_and_catch_all_does_not() {
        let gated = check(
            "async fn f(c: &C) {
                let mut n = 0;
                loop {
                    match c.post(\"a\").send().await {
                        Err(e) if e.is_connect() && n < 3 => tokio::time::sleep(d).await,
                        other => return other,
                    }
                }
            }",
        );
        assert!(gated.contains("gated=true"), "{gated}");
        let catch_all = check(
            "async fn f(c: &C) {
                let mut n = 0;
                loop {
                    match c.post(\"a\").send().await {
                        Ok(r) if r.status() == 429 => tokio::time::sleep(d).await,
                        Ok(r) => return r,
                        Err(e) => { n += 1; tokio::time::sleep(d).await; }
                    }
                }
            }",
        );
        assert!(catch_all.contains("gated=false"), "{catch_all}");
    }

    #[test]
    fn readers_made_outside_rebuilt_or_rewound() {
        let got = check(
            "fn f(a: &A, p: &str) {
                let mut shared = File::open(p).unwrap();
                let mut rewound = File::open(p).unwrap();
                let bytes = Bytes::from(vec![1]);
                for attempt in 0..3 {
                    let fresh = File::open(p).unwrap();
                    rewound.seek(SeekFrom::Start(0)).unwrap();
                    let _ = a.put(\"u\").send(&mut shared);
                    let _ = a.put(\"u\").send(&mut rewound);
                    let _ = a.put(\"u\").send(fresh);
                    if a.put(\"u\").body(bytes.clone()).is_ok() { return; }
                    std::thread::sleep(d);
                }
            }",
        );
        assert_eq!(got, "SharedReader shared `shared`");
    }

    /// A retrying client made in `new` and handed to the constructor that stores it
    /// (`Self::custom(agent, client)` -> `Self { client: http }`) retries every request sent
    /// from that field, whatever method the callers hand the request helper: each caller's
    /// constant is a write of its own. Near misses: the GET through the same helper, and a
    /// client handed to a constructor that stores it in another field.
    #[test]
    fn a_retrying_client_handed_to_the_constructor_retries_the_methods_callers_hand_in() {
        let got = check(
            "impl Api {
                fn new() -> Self {
                    let client = ClientBuilder::new(http).with(RetryTransientMiddleware::new_with_policy(p)).build();
                    Self::custom(client, reqwest::Client::new())
                }
                fn custom(http: C, plain: reqwest::Client) -> Self { Self { client: http, plain } }
                async fn send(&self, method: Method, uri: &str) -> R {
                    self.client.request(method, uri).send().await
                }
                async fn send_plain(&self, method: Method, uri: &str) -> R {
                    self.plain.request(method, uri).send().await
                }
                async fn create(&self) -> R { self.send(Method::POST, \"/items\").await }
                async fn list(&self) -> R { self.send(Method::GET, \"/items\").await }
                async fn note(&self) -> R { self.send_plain(Method::PATCH, \"/notes\").await }
            }",
        );
        assert_eq!(got, "POST client no-key gated=false `Method::POST`");
    }
}
