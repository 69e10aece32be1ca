//! The one walk that fills [`Facts`]: functions, sleeps, retry sites.
//!
//! A stack of enclosing bodies and retry sites travels with the walk, so a sleep knows its
//! function and its site without a second pass. Loop bodies get a focused sub-scan
//! ([`LoopScan`]) that decides whether the loop is a retry site and what bounds it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Expr, Pat};

use super::bodies::Bodies;
use super::imports::path_segments;
use super::macros::{known_macro_exprs, Role};
use super::optional_cap::{self as opt, OptLocal};
use super::rounds::{CrateHelpers, FlagEnd};
use super::strategy::{self, Reading};
use super::words::{ident_words_of, words_of};
use super::wrappers::{self, Callee, Delegation, Takes, Wrapper};
use super::{
    span_of, CancelSource, Cap, Deadline, Facts, FnKind, Function, Imports, RetrySite, SiteKind,
    Sleep,
};
use crate::base::apis::Apis;
use crate::base::source::{SourceFile, Span};

/// Words that make a comparison a bound on attempts or time rather than a status test.
const BOUND_WORDS: &[&str] = &[
    "attempt",
    "attempts",
    "retry",
    "retries",
    "tries",
    "try",
    "count",
    "counter",
    "max",
    "limit",
    "n",
    "i",
    "num",
    "times",
    "remaining",
    "left",
    "budget",
    "deadline",
    "elapsed",
    "now",
    "instant",
    "timeout",
    "expired",
    "expiry",
    "expires",
    "start",
    "started",
    "since",
    "iteration",
    "iterations",
    "round",
    "rounds",
    "backoff",
    "delay",
    "total",
    "until",
    "end",
];
/// Words of a comparison that reads the clock or a deadline: a hand-checked deadline. Expiry
/// words (`expired`, `until`) are not among them: alone they test something else's age
/// (`lock_until_expired_ms(lock, ts) <= 0` asks whether a lock may be resolved and bounds
/// nothing), and next to the clock (`Instant::now() > expires_at`) the clock word decides.
pub(super) const TIME_WORDS: &[&str] = &["deadline", "elapsed", "now", "instant", "remaining"];
/// Words of a loop body that calls something outside the process (a request, a connection, a
/// message, a query): what makes a retry remote, beside an `.await` or a sleep.
const REMOTE_WORDS: &[&str] = &[
    "send",
    "request",
    "req",
    "connect",
    "connection",
    "conn",
    "client",
    "commit",
    "publish",
    "subscribe",
    "fetch",
    "query",
    "rpc",
    "call",
    "execute",
    "http",
    "grpc",
    "socket",
    "upload",
    "download",
    "sleep",
    "receive",
    "recv",
    "post",
    "get",
    "put",
    "delete",
    "dial",
    "lookup",
    "resolve",
    "produce",
    "consume",
    "ack",
];
/// Receivers whose `.next()` is a backoff strategy that ends by returning `None`.
const STRATEGY_WORDS: &[&str] = &[
    "backoff",
    "delay",
    "delays",
    "strategy",
    "schedule",
    "retry",
    "retries",
    "policy",
    "intervals",
    "durations",
];
/// Names of the crate's own functions that bound the future they are handed by a duration
/// (`crate::rt::timeout(d, fut)`, a shim over tokio's and async-std's).
pub(super) const TIMEOUT_NAMES: &[&str] =
    &["timeout", "timeout_at", "with_timeout", "with_deadline"];
/// Callees that run their closure on a thread where blocking is fine.
const BLOCKING_SPAWNERS: &[&str] = &["spawn_blocking", "block_in_place"];
/// Macros that leave the enclosing function.
pub(super) const EXIT_MACROS: &[&str] = &["bail", "panic", "unreachable", "todo", "unimplemented"];

pub(super) fn run(
    file: &syn::File,
    bodies: &Bodies<'_>,
    src: &SourceFile,
    apis: &Apis,
    known: &[Wrapper],
    helpers: &CrateHelpers,
) -> Facts {
    let imports = Imports::collect(file);
    let cancel_fields = struct_cancel_fields(bodies, apis, src);
    let types = super::types::FileTypes::of(bodies);
    let checkers = super::rounds::bound_checkers(bodies, apis, helpers);
    let (bound_checkers, defined_fns, clock_checkers, optional_checkers) = (
        checkers.bounds,
        checkers.defined,
        checkers.clock,
        checkers.optional,
    );
    let decision_calls = checkers.called;
    let racers = checkers.races;
    let mut c = Collector {
        src,
        apis,
        imports: imports.clone(),
        facts: Facts::default(),
        fn_stack: Vec::new(),
        site_stack: Vec::new(),
        loop_fns: Vec::new(),
        raced: 0,
        deadline: 0,
        impl_stack: Vec::new(),
        in_policy: false,
        cancel_fields,
        bound_checkers,
        defined_fns,
        gate_helpers: BTreeSet::new(),
        clock_checkers,
        optional_checkers,
        instant_params: HashMap::new(),
        blocking_closures: HashSet::new(),
        single_stmt: HashMap::new(),
        awaited: HashSet::new(),
        opt_locals: HashMap::new(),
        strategy_locals: HashMap::new(),
        chain_readings: HashMap::new(),
        status_only: HashSet::new(),
        known,
        callables: HashMap::new(),
        in_trait_impl: false,
        private_fns: HashSet::new(),
        calls: Vec::new(),
        racers,
        racer_asks: BTreeSet::new(),
        fn_impls: HashMap::new(),
        bounded_locals: Vec::new(),
        local_inits: Vec::new(),
        types,
        param_types: HashMap::new(),
    };
    c.visit_file(file);
    // What the file's helpers that a retry loop asks decide by, and the file does not define:
    // the crate may answer (`give_up_or_wait` of this file asks `opts.allow_retry(n)` of
    // another). Only a file with a site asks.
    if !c.facts.sites.is_empty() {
        let asks = std::mem::take(&mut c.racer_asks);
        c.facts.foreign_callees.extend(asks);
        // The gate helpers, and the file's helpers they call, as deep as they go.
        let mut todo: Vec<String> = c.gate_helpers.iter().cloned().collect();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        while let Some(h) = todo.pop() {
            if !seen.insert(h.clone()) {
                continue;
            }
            for n in decision_calls.get(&h).into_iter().flatten() {
                if c.defined_fns.contains(n) {
                    todo.push(n.clone());
                } else if !super::index::too_common_name(n) {
                    c.facts.foreign_callees.insert(n.clone());
                }
            }
        }
    }
    bounded_by_name(&mut c.facts, &c.bounded_locals, &c.local_inits);
    // Calls by name: each function looks up its own callers (a file of thousands of functions
    // must not scan every call for each).
    let mut calls: HashMap<&str, Vec<&Call>> = HashMap::new();
    for call in &c.calls {
        calls.entry(call.name.as_str()).or_default().push(call);
    }
    outer_bound(&mut c.facts, &c.private_fns, &calls);
    helper_waits(&mut c.facts, &calls, &c.fn_impls);
    let mut facts = c.facts;
    facts.imports = imports;
    facts
}

/// A parameter a wrapper may be handed: its name, its position among the caller's arguments,
/// and what it is (a callable or a request).
type HandedParam = (String, usize, Takes);

struct Collector<'a> {
    src: &'a SourceFile,
    apis: &'a Apis,
    /// The imports in scope: the file's, plus `use` statements of enclosing blocks.
    imports: Imports,
    facts: Facts,
    fn_stack: Vec<usize>,
    site_stack: Vec<usize>,
    /// The function of each loop around the current node, innermost last.
    loop_fns: Vec<Option<usize>>,
    raced: usize,
    deadline: usize,
    /// Futures bound to a local and then handed to a deadline wrapper by name (`let fut =
    /// async { .. }; timeout(d, fut)`): (function, local) of each wrapper call.
    bounded_locals: Vec<(Option<usize>, String)>,
    /// Each local's initializer: (function, local, the initializer's span).
    local_inits: Vec<(Option<usize>, String, Span)>,
    impl_stack: Vec<String>,
    /// What the file declares of its types, for a method call's receiver.
    types: super::types::FileTypes,
    /// Per item function, its parameters' declared types.
    param_types: HashMap<usize, HashMap<String, String>>,
    /// Inside an `impl Policy for T` (its `retry` method is a retry site).
    in_policy: bool,
    /// Per struct, its fields that are cancellation sources, each with whether its type is a
    /// general-purpose one (`Notify`, `AtomicBool`) that is a stop signal only by its name.
    cancel_fields: HashMap<String, Vec<(CancelSource, bool)>>,
    /// The file's functions whose call decides on a bound (`rounds::bound_checkers`).
    bound_checkers: BTreeSet<String>,
    /// The file's functions that compare the clock or a deadline ([`rounds::Checkers`]).
    clock_checkers: BTreeSet<String>,
    /// Every function name the parsed text defines.
    defined_fns: BTreeSet<String>,
    /// The file's functions a retry loop asks whether to go on ([`Facts::foreign_callees`]).
    gate_helpers: BTreeSet<String>,
    /// The file's functions whose "may I retry?" is a cap `None` switches off, with the option
    /// ([`rounds::Checkers::optional`]).
    optional_checkers: std::collections::BTreeMap<String, String>,
    /// Per function, its parameters declared `Instant` (`deadline: Instant`).
    instant_params: HashMap<usize, BTreeSet<String>>,
    blocking_closures: HashSet<usize>,
    /// Function index -> span of its only statement, when it has exactly one.
    single_stmt: HashMap<usize, Span>,
    /// Start offsets of expressions that are directly `.await`ed.
    awaited: HashSet<usize>,
    /// Per function: locals bound from an optional attempt cap (`let unlimited = max.is_none()`).
    opt_locals: HashMap<usize, HashMap<String, OptLocal>>,
    /// Per function: locals bound to a backoff strategy, as read so far ([`strategy`]).
    strategy_locals: HashMap<usize, HashMap<String, Reading>>,
    /// The configuration applied to a call by the method chain above it, by the call's start
    /// (`retry_fn(op).retries(3)`): recorded at the chain's outermost method, which is visited
    /// before the call.
    chain_readings: HashMap<usize, Reading>,
    /// Starts of chains whose retry predicate admits only errors that carry a response status
    /// (`.when(|e| e.status().is_some_and(|s| s.is_server_error()))`): recorded at the
    /// predicate, visited before the combinator call it configures (see [`status_only`]).
    status_only: HashSet<usize>,
    /// The crate's retry wrappers known so far (the driver's, from pass one): their calls are
    /// retry sites ([`wrappers`]).
    known: &'a [Wrapper],
    /// Per item function: its callable and request parameters (name, argument position, which)
    /// and whether it takes `self`, for finding the wrappers this file defines.
    callables: HashMap<usize, (Vec<HandedParam>, bool)>,
    /// Inside an `impl Trait for T`: its methods are reachable through the trait.
    in_trait_impl: bool,
    /// The file's private item functions (no `pub`, not a trait's method): every call of one
    /// is in this file (or a child module's), so its callers are all visible here.
    private_fns: HashSet<usize>,
    /// Every call by name, with whether it runs under a deadline or raced in `select!`, and
    /// the body it is written in ([`outer_bound`]).
    calls: Vec<Call>,
    /// Functions (the file's, and the crate's answers) that race the futures handed at these
    /// positions ([`super::rounds::Checkers::races`]).
    racers: std::collections::BTreeMap<String, BTreeSet<usize>>,
    /// Functions of other files handed a call of this file's (`with_stopper(rx,
    /// supervise(state))`): the crate may answer that they race it.
    racer_asks: BTreeSet<String>,
    /// Per item function, the impl it is a method of (`None`: a free function).
    fn_impls: HashMap<usize, Option<String>>,
}

/// The file's calls by their last name.
type CallsByName<'c> = HashMap<&'c str, Vec<&'c Call>>;

/// A call of a function or method by its last name, as [`outer_bound`] reads it.
struct Call {
    name: String,
    bounded: bool,
    from: Option<usize>,
    /// The innermost retry site the call is written in.
    site: Option<usize>,
    /// The call, when it can only mean the file's own function (`name(..)`, `Self::name(..)`,
    /// `self.name(..)`), with what its arguments are made of: [`helper_waits`] attributes only
    /// those.
    own: Option<super::Via>,
    /// For an own call on `self` / `Self`, the impl it is written in (the helper must be a
    /// method of the same one); `None` for a bare call of a free function.
    own_impl: Option<String>,
}

impl Collector<'_> {
    /// The bounded future of a deadline wrapper's arguments (the last) when it is a local
    /// named there (`fut`, `&mut fut`, `Box::pin(fut)`, `fut.boxed()`).
    fn note_bounded_local(&mut self, args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>) {
        let Some(mut e) = args.last() else {
            return;
        };
        loop {
            e = match e {
                Expr::Reference(r) => &r.expr,
                Expr::Paren(p) => &p.expr,
                Expr::Call(c) if c.args.len() == 1 => &c.args[0],
                Expr::MethodCall(m) if m.args.is_empty() => &m.receiver,
                _ => break,
            };
        }
        if let Expr::Path(p) = e {
            if let Some(id) = p.path.get_ident() {
                let f = self.fn_stack.last().copied();
                self.bounded_locals.push((f, id.to_string()));
            }
        }
    }

    fn span(&self, s: proc_macro2::Span) -> Span {
        span_of(self.src, s)
    }

    /// The clock values function `f` (or the item function it runs for) holds, and which of
    /// them are deadlines. Clock values: its parameters declared `Instant`, its locals bound
    /// from `Instant::now()`, and locals computed from those (`let waited = (now -
    /// sent_at).as_secs()`). Deadlines, points ahead: those parameters (but a `now: Instant`,
    /// the moment of the call) and the locals bound from the clock plus something
    /// (`Instant::now() + budget`), not the bare moment a timestamp holds.
    fn instants_of(&self, f: usize) -> (BTreeSet<String>, BTreeSet<String>) {
        const MOMENT: &[&str] = &["instant", "now", "time", "std", "tokio", "clone"];
        let mut clock = BTreeSet::new();
        let mut ahead = BTreeSet::new();
        let mut chain = Vec::new();
        let mut at = Some(f);
        while let Some(g) = at {
            for p in self.instant_params.get(&g).into_iter().flatten() {
                clock.insert(p.clone());
                let mut words = BTreeSet::new();
                super::words::split_ident(p, &mut words);
                if !words.contains("now") {
                    ahead.insert(p.clone());
                }
            }
            for (name, b) in &self.facts.functions[g].bindings {
                if reads_clock(&b.words) {
                    clock.insert(name.clone());
                    if b.words.iter().any(|w| !MOMENT.contains(&w.as_str())) {
                        ahead.insert(name.clone());
                    }
                }
            }
            chain.push(g);
            at = self.facts.functions[g].parent;
        }
        let derived: Vec<String> = chain
            .iter()
            .flat_map(|&g| &self.facts.functions[g].bindings)
            .filter(|(name, b)| {
                !clock.contains(*name) && b.idents.iter().any(|i| clock.contains(i))
            })
            .map(|(name, _)| name.clone())
            .collect();
        clock.extend(derived);
        (clock, ahead)
    }

    /// An own call with its arguments ([`Call::own`]).
    fn own_call(
        &self,
        at: proc_macro2::Span,
        args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
    ) -> super::Via {
        let mut v = super::Via {
            call: self.span(at),
            words: BTreeSet::new(),
            idents: BTreeSet::new(),
            from: self.fn_stack.last().copied(),
        };
        for a in args {
            v.words.extend(words_of(a));
            v.idents.extend(super::Binding::idents_of(a));
        }
        v
    }

    fn note_call(&mut self, name: String, own: Option<super::Via>, on_self: bool) {
        let own_impl = (own.is_some() && on_self)
            .then(|| self.impl_stack.last().cloned())
            .flatten();
        self.calls.push(Call {
            name,
            bounded: self.raced > 0 || self.deadline > 0,
            from: self.fn_stack.last().copied(),
            site: self.site_stack.last().copied(),
            own,
            own_impl,
        });
    }

    fn resolve(&self, path: &syn::Path) -> Vec<String> {
        self.imports.resolve(&path_segments(path))
    }

    fn push_fn(&mut self, name: String, span: Span, kind: FnKind, is_async: bool) -> usize {
        if kind == FnKind::Item {
            self.fn_impls
                .insert(self.facts.functions.len(), self.impl_stack.last().cloned());
        }
        let blocking_thread =
            kind == FnKind::Closure && self.blocking_closures.contains(&span.start);
        self.facts.functions.push(Function {
            name,
            span,
            kind,
            is_async,
            blocking_thread,
            parent: self.fn_stack.last().copied(),
            cancel_sources: Vec::new(),
            only_sleeps: false,
            streams: false,
            bindings: HashMap::new(),
        });
        let idx = self.facts.functions.len() - 1;
        self.fn_stack.push(idx);
        idx
    }

    fn note_single_stmt(&mut self, idx: usize, block: &syn::Block) {
        if let [only] = block.stmts.as_slice() {
            let s = self.span(super::spans::of(&only));
            self.single_stmt.insert(idx, s);
        }
    }

    fn params(&mut self, idx: usize, sig: &syn::Signature, body: &syn::Block) {
        for input in &sig.inputs {
            match input {
                syn::FnArg::Typed(pt) => {
                    // Printing every parameter's type is costly; a cancellation type's name
                    // must be in its text first.
                    let written = self.src.slice(self.span(pt.ty.span()));
                    let apis = &self.apis.cancellation;
                    if !apis
                        .types
                        .iter()
                        .chain(&apis.weak_types)
                        .any(|t| written.contains(t.rsplit("::").next().unwrap_or(t)))
                    {
                        continue;
                    }
                    let ty = pt.ty.to_token_stream().to_string().replace(' ', "");
                    // `mut shutdown: Receiver<..>` is named `shutdown`: the binding, not the pattern.
                    let name = match &*pt.pat {
                        Pat::Ident(id) => id.ident.to_string(),
                        p => p.to_token_stream().to_string(),
                    };
                    if self.is_cancel_source(&ty, &name) {
                        let span = self.span(pt.span());
                        self.facts.functions[idx]
                            .cancel_sources
                            .push(CancelSource { name, span });
                    }
                }
                syn::FnArg::Receiver(_) => {
                    if let Some(ty) = self.impl_stack.last() {
                        if let Some(fields) = self.cancel_fields.get(ty) {
                            // A `CancellationToken` field is the struct's way to give up, so it is
                            // in scope in every method. A `Notify` or `AtomicBool` named `*_stop`
                            // is general-purpose: which wait it stops is shown only by the
                            // methods that use it (a pause's wake-up signal is not a method's
                            // stop signal), so a method that never touches it is not given it.
                            let sources = fields
                                .iter()
                                .filter(|(s, weak)| {
                                    !weak || uses_field(body, s.name.trim_start_matches("self."))
                                })
                                .map(|(s, _)| s.clone());
                            self.facts.functions[idx].cancel_sources.extend(sources);
                        }
                    }
                }
            }
        }
    }

    fn is_cancel_source(&self, ty: &str, name: &str) -> bool {
        is_cancel_source(self.apis, ty, name)
    }

    fn fn_like(
        &mut self,
        name: String,
        node_span: proc_macro2::Span,
        sig: &syn::Signature,
        block: &syn::Block,
    ) {
        let span = self.span(node_span);
        let idx = self.push_fn(name, span, FnKind::Item, sig.asyncness.is_some());
        self.facts.functions[idx].streams = polls_next_item(sig);
        let impl_type = self.impl_stack.last().map(String::as_str);
        let typed = super::types::param_types(sig, impl_type);
        if !typed.is_empty() {
            self.param_types.insert(idx, typed);
        }
        let instants = instant_params(sig);
        if !instants.is_empty() {
            self.instant_params.insert(idx, instants);
        }
        let request_types = &self.apis.clients.request_types;
        let callables: Vec<(String, usize, Takes)> = wrappers::callable_params(sig)
            .into_iter()
            .map(|(n, p)| (n, p, Takes::Callable))
            .chain(
                wrappers::request_params(sig, |p| {
                    self.resolve(p).iter().any(|r| request_types.contains(r))
                })
                .into_iter()
                .map(|(n, p)| (n, p, Takes::Request)),
            )
            .collect();
        if !callables.is_empty() {
            self.callables
                .insert(idx, (callables, wrappers::takes_self(sig)));
        }
        self.params(idx, sig, block);
        self.note_single_stmt(idx, block);
    }

    /// The innermost item function, the parameters a wrapper may be handed through it, and
    /// whether it takes `self`.
    fn handed_params(&self) -> Option<(usize, &[HandedParam], bool)> {
        let &f = self
            .fn_stack
            .iter()
            .rev()
            .find(|&&f| self.facts.functions[f].kind == FnKind::Item)?;
        let (params, method) = self.callables.get(&f)?;
        Some((f, params.as_slice(), *method))
    }

    /// The type of a method call's receiver, as far as the file declares it
    /// ([`super::types`]).
    fn receiver_type(&self, receiver: &Expr) -> Option<String> {
        let f = self
            .fn_stack
            .iter()
            .rev()
            .find(|&&f| self.facts.functions[f].kind == FnKind::Item);
        let params = f.and_then(|f| self.param_types.get(f));
        let impl_type = self.impl_stack.last().map(String::as_str);
        self.types.receiver(receiver, impl_type, params)
    }

    /// `name` is a callable (or request) parameter of the innermost item function and the
    /// innermost retry site (inside that function) repeats it (or uses it): the function is a
    /// retry wrapper.
    fn note_wrapper(&mut self, name: &str, takes: Takes) {
        let Some(&site) = self.site_stack.last() else {
            return;
        };
        let Some((f, params, method)) = self.handed_params() else {
            return;
        };
        let Some(&(_, param, _)) = params.iter().find(|(n, _, t)| n == name && *t == takes) else {
            return;
        };
        let function = &self.facts.functions[f];
        let s = &self.facts.sites[site];
        if !function.span.contains(s.span) {
            return;
        }
        let owner = self.impl_stack.last().filter(|t| !t.is_empty()).cloned();
        if self
            .facts
            .wrappers
            .iter()
            .any(|w| w.name == function.name && w.owner == owner)
        {
            return;
        }
        self.facts.wrappers.push(Wrapper {
            name: function.name.clone(),
            owner,
            method,
            param,
            takes,
            cap: s.cap.clone(),
            deadline: s.deadline.is_some(),
            checks_cancel: s.checks_cancel,
            exits_on_failure: s.exits_on_failure,
            refusals_only: false,
            classifies: false,
            site: Some(s.span),
            module: None,
            file: None,
        });
    }

    /// The call names the innermost item function's callable or request parameter among its
    /// arguments (`send_with_retries(req)`, `self.retry(&op)`): if the call names a wrapper at
    /// that position, the function is a wrapper too ([`wrappers::close`]).
    fn note_delegation(
        &mut self,
        callee: impl FnOnce(&Self) -> Callee,
        args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
    ) {
        let Some((f, params, method)) = self.handed_params() else {
            return;
        };
        let found = args.iter().enumerate().find_map(|(arg, a)| {
            let mut a = a;
            while let Expr::Reference(r) = a {
                a = &r.expr;
            }
            let Expr::Path(p) = a else { return None };
            let id = p.path.get_ident()?;
            params
                .iter()
                .find(|(n, _, _)| id == n)
                .map(|&(_, param, takes)| (arg, param, takes))
        });
        let Some((arg, param, takes)) = found else {
            return;
        };
        let d = Delegation {
            name: self.facts.functions[f].name.clone(),
            owner: self
                .fn_impls
                .get(&f)
                .cloned()
                .flatten()
                .filter(|t| !t.is_empty()),
            method,
            param,
            takes,
            callee: callee(self),
            arg,
            module: None,
            file: None,
        };
        if !self.facts.delegations.contains(&d) {
            self.facts.delegations.push(d);
        }
    }

    /// A call of one of the crate's retry wrappers: a retry site around the call, bounded the
    /// way the wrapper's loop is (its sleeps are the wrapper's, reported there), entered: the
    /// caller pops it once the call is visited.
    fn enter_wrapper_site(
        &mut self,
        w: &Wrapper,
        anchor: proc_macro2::Span,
        whole: proc_macro2::Span,
        args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
    ) {
        let resends = (w.takes == Takes::Request)
            .then(|| args.iter().nth(w.param))
            .flatten()
            .map(|a| super::Resend {
                arg: self.span(super::spans::of(&a)),
                wrapper: w.name.clone(),
            });
        let deadline =
            (w.deadline || self.deadline > 0 || self.raced > 0).then_some(Deadline::Outer);
        let (anchor, span) = (self.span(anchor), self.span(whole));
        let site = self.add_site(RetrySite {
            kind: SiteKind::Wrapper(w.display()),
            anchor,
            span,
            function: self.fn_stack.last().copied(),
            cap: w.cap.clone(),
            deadline,
            checks_cancel: w.checks_cancel,
            exits_on_failure: w.exits_on_failure,
            header_flags: false,
            ungated_round: None,
            sleeps: Vec::new(),
            comparison_words: Vec::new(),
            refusals_only: w.refusals_only,
            classifies: w.classifies,
            status_only: false,
            clock_checked: false,
            resends,
        });
        self.site_stack.push(site);
    }

    fn sleep(&mut self, call: &syn::ExprCall, path: String, blocking: bool) {
        self.sleep_at(super::spans::of(&call), call.args.first(), path, blocking);
    }

    /// A sleep that is not in the vocabulary but is one by its shape: an awaited call of one
    /// argument named `sleep`, through an injected sleeper (`self.sleeper.sleep(d).await`,
    /// aws-smithy's `sleep_impl.sleep(d)`), a sleep function passed in (`sleep(d).await` on a
    /// parameter) or the crate's runtime shim (`crate::rt::sleep(d).await`). Awaited, it
    /// waits and is cancelled by dropping its future, like `tokio::time::sleep`.
    /// Returns whether it recorded one; the path is made only then.
    fn injected_sleep(
        &mut self,
        whole: proc_macro2::Span,
        name: &str,
        args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
        path: impl FnOnce() -> String,
    ) -> bool {
        let one = name == "sleep" && args.len() == 1;
        if !one || !self.awaited.contains(&self.span(whole).start) {
            return false;
        }
        self.sleep_at(whole, args.first(), path(), false);
        true
    }

    fn sleep_at(
        &mut self,
        whole: proc_macro2::Span,
        arg: Option<&Expr>,
        path: String,
        blocking: bool,
    ) {
        let span = self.span(whole);
        let (duration, duration_words, duration_idents) = arg.map_or_else(
            || (String::new(), BTreeSet::new(), BTreeSet::new()),
            |a| {
                let text = self.src.slice(self.span(super::spans::of(&a))).to_string();
                (text, words_of(a), super::Binding::idents_of(a))
            },
        );
        let function = self.fn_stack.last().copied();
        let site = self.site_stack.last().copied();
        let in_loop = self.loop_fns.last().is_some_and(|&f| f == function);
        // An async sleep that is not awaited on the spot is composed with something else
        // (stored and pinned for `select!`, passed to a race helper, returned as a policy's
        // wait future): whoever awaits it decides, so it does not count as a bare wait.
        let composed = !blocking && !self.awaited.contains(&span.start);
        self.facts.sleeps.push(Sleep {
            span,
            path,
            blocking,
            duration,
            duration_words,
            duration_idents,
            raced: self.raced > 0 || composed,
            under_deadline: self.deadline > 0,
            function,
            site,
            in_loop,
            via: None,
        });
        let id = self.facts.sleeps.len() - 1;
        if let Some(s) = site {
            self.facts.sites[s].sleeps.push(id);
        }
        if let Some(f) = function {
            if let Some(stmt) = self.single_stmt.get(&f) {
                // The statement is the sleep and at most its `.await` / `;`. Only the text
                // around this sleep is looked at: a statement holding thousands of sleeps (an
                // `else if` chain) must not be copied and searched once per sleep.
                let trivial = if stmt.contains(span) {
                    let before = self.src.slice(Span::new(stmt.start, span.start));
                    let after = self.src.slice(Span::new(span.end, stmt.end));
                    before.trim().is_empty()
                        && matches!(after.trim(), "" | ";" | ".await" | ".await;")
                } else {
                    false
                };
                if trivial {
                    self.facts.functions[f].only_sleeps = true;
                }
            }
        }
    }

    /// A policy's `retry` method or a recursive retry function is a site of its own; pushes it
    /// and returns whether it did.
    fn shape_site(
        &mut self,
        sig: &syn::Signature,
        whole: proc_macro2::Span,
        block: &syn::Block,
        policy: bool,
    ) -> bool {
        let (kind, cap, anchor) = if policy {
            (
                SiteKind::Policy,
                super::shapes::policy_cap(block),
                sig.ident.span(),
            )
        } else if let Some(cap) = Some(sig.ident.to_string())
            // A body that never spells its own name cannot call itself: skip the walk.
            .filter(|name| {
                self.src
                    .slice(self.span(super::spans::of(&block)))
                    .contains(name.as_str())
            })
            .and_then(|name| super::shapes::recursion(&name, block))
            .filter(|_| {
                // Like a loop, recursion counts only with retry evidence in its words.
                words_of(block)
                    .iter()
                    .any(|w| w == "sleep" || self.apis.is_evidence(w))
            })
        {
            (SiteKind::Recursion, cap.0, cap.1)
        } else {
            return false;
        };
        let deadline = (self.deadline > 0 || self.raced > 0).then_some(Deadline::Outer);
        let s = self.add_site(RetrySite {
            kind,
            anchor: self.span(anchor),
            span: self.span(whole),
            function: self.fn_stack.last().copied(),
            cap,
            deadline,
            checks_cancel: false,
            // The function returns: every call of it ends, on failure too, unless it recurses
            // forever, which the cap says.
            exits_on_failure: false,
            header_flags: false,
            ungated_round: None,
            sleeps: Vec::new(),
            comparison_words: Vec::new(),
            refusals_only: false,
            classifies: false,
            status_only: false,
            clock_checked: false,
            resends: None,
        });
        self.site_stack.push(s);
        true
    }

    /// Visit a loop with `site` (when the loop is one) as the innermost retry site.
    fn in_site(&mut self, site: Option<usize>, visit: impl FnOnce(&mut Self)) {
        if let Some(s) = site {
            self.site_stack.push(s);
        }
        self.loop_fns.push(self.fn_stack.last().copied());
        visit(self);
        self.loop_fns.pop();
        if site.is_some() {
            self.site_stack.pop();
        }
    }

    fn add_site(&mut self, site: RetrySite) -> usize {
        self.facts.sites.push(site);
        self.facts.sites.len() - 1
    }

    fn loop_site(
        &mut self,
        kind: SiteKind,
        keyword: proc_macro2::Span,
        whole: proc_macro2::Span,
        label: Option<&syn::Label>,
        header: Option<&Expr>,
        body: &syn::Block,
    ) -> Option<usize> {
        let mut scan = LoopScan::new(self.apis, label.map(|l| l.name.ident.to_string()));
        scan.clock_checkers = &self.clock_checkers;
        scan.optional_checkers = &self.optional_checkers;
        // The loop's own function compares the clock elsewhere, perhaps; a call of its name in
        // the loop is another thing's method (`stream.connect()` inside `fn connect`).
        scan.own_fn = self
            .fn_stack
            .last()
            .map(|&f| self.facts.functions[f].name.clone())
            .unwrap_or_default();
        if let Some(&f) = self.fn_stack.last() {
            scan.opt_locals = self.opt_locals.get(&f).cloned().unwrap_or_default();
            (scan.instants, scan.deadlines) = self.instants_of(f);
        }
        scan.tail_exit = body.stmts.last().and_then(|s| match s {
            syn::Stmt::Expr(e @ (Expr::Return(_) | Expr::Break(_)), _) => {
                Some(std::ptr::from_ref::<Expr>(e))
            }
            _ => None,
        });
        if let Some(h) = header {
            if kind == SiteKind::While {
                scan.condition(h);
                // The header holds whenever the cap is unset: its comparisons bound nothing then.
                scan.escape = opt::escaping_disjunction(h, &scan.opt_locals);
            }
            scan.visit_expr(h);
            scan.escape = None;
        }
        // A stop word in the header is a stop signal unless the header tests the body's own
        // success flags (`while running { .. running = false }`): decided below.
        let header_cancel = std::mem::take(&mut scan.checks_cancel);
        scan.visit_block(body);
        let mut words = words_of(body);
        if let Some(l) = label {
            super::words::split_ident(&l.name.ident.to_string(), &mut words);
        }
        let mut header_words = header.map(words_of).unwrap_or_default();
        words.append(&mut header_words.clone());
        // The function's own name says what its loop is for (`retry_on_connection_loss`,
        // `connect_with_retries`), as it does for a recursive retry.
        let named_for_it = || {
            let mut fn_words = BTreeSet::new();
            if let Some(f) = self.fn_stack.last().map(|&f| &self.facts.functions[f]) {
                if f.kind == FnKind::Item {
                    super::words::split_ident(&f.name, &mut fn_words);
                }
            }
            fn_words.iter().any(|w| self.apis.is_evidence(w))
        };
        let retry_words = words.iter().any(|w| self.apis.is_evidence(w));
        // RULES.md's definition needs no retry word: a loop that awaits an operation, leaves
        // when it succeeds and `continue`s from its failure arm is a retry however it is named
        // (`Err(e) if Self::is_conflict(&e) => { resync().await?; continue; }`).
        let goes_round_on_failure = scan.failure_continue && scan.success_exit && scan.awaits;
        let evidence = retry_words
            || goes_round_on_failure
            || words.iter().any(|w| w == "sleep")
            || named_for_it();
        // Going round again after a failure is written three ways: `continue`, an `Err` or
        // status test, or an exit the outcome decides (`if !transient(&r) { return r }`) with
        // the body's end falling through to the next attempt. The third alone says nothing about
        // a periodic loop, so it takes retry words (`attempt`, `retry`) in the loop itself, not
        // just a sleep or the function's name (an allocator's `alloc_retry` loop that moves on
        // to the next free region falls through without failing).
        let falls_through = scan.has_exit && scan.tail_exit.is_none() && retry_words;
        // A `while` whose condition is the attempt failing (`while let Err(e) = connect().await`,
        // `while send().is_err()`) goes round on exactly the failure and leaves on success: its
        // header is the failure path, and no cap unless the body has one.
        let fails_header = kind == SiteKind::While && header.is_some_and(attempt_fails);
        // A way round with no gate is judged only where the loop talks to something outside the
        // process: it awaits, or calls an operation named like one. A steal, a CAS or a parse
        // retried in memory exits on its other outcomes by design.
        let calls_out = scan.awaits || words.iter().any(|w| REMOTE_WORDS.contains(&w.as_str()));
        // A `while` whose condition tests only flags the body sets when the attempt succeeds
        // (`while !connected`, `while ip.is_none()`) goes round until that success: its header
        // is no bound, like `loop`'s. Judged, like a `loop`'s ways round, only where the loop
        // talks to something outside the process (a file copy the user is asked to retry is
        // bounded by the user).
        let header_flags = (kind == SiteKind::While && !fails_header && calls_out)
            .then(|| header.and_then(|c| success_flags(c, body, &scan.incremented)))
            .flatten()
            .unwrap_or_default();
        let flag_header = !header_flags.is_empty();
        scan.checks_cancel |= header_cancel && !flag_header;
        if flag_header && scan.checks_cancel {
            // `if running { sleep(..) }` tests the same flag again: only a stop word that is
            // not one of the header's flags is a stop signal.
            let mut flag_words = BTreeSet::new();
            for n in header_flags.keys() {
                super::words::split_ident(n, &mut flag_words);
            }
            scan.checks_cancel = (words_of(body).iter())
                .any(|w| !flag_words.contains(w) && self.apis.is_stop_word(w));
        }
        // A loop whose only talk with the outside world is its sleep (no await, no call named
        // like a remote operation, no retry word) waits on something in the process: a rate
        // limiter's permit (`Err(not_until) => sleep(not_until.wait_time_from(now))`), a lock
        // or a file. The product is about retries of remote calls, and such a wait ends when
        // the local condition does.
        let local_wait = !retry_words
            && !scan.awaits
            && !words
                .iter()
                .any(|w| w != "sleep" && REMOTE_WORDS.contains(&w.as_str()))
            && !named_for_it();
        if !evidence
            || local_wait
            || !(scan.failure_path() || falls_through || fails_header)
            || scan.has_tick
            || scan.local_retry
        {
            return None;
        }
        let mut cap = match (&kind, header) {
            (SiteKind::While, Some(_)) if fails_header || flag_header => Cap::None,
            (SiteKind::For, Some(iter)) => {
                if let Some(o) = infinite_range(iter, &scan.opt_locals) {
                    Cap::OffWhenNone(o)
                } else if let Some(c) = range_cap(iter) {
                    c
                } else {
                    // Iterating over work items (pages, URLs, rows) is not a retry; a schedule of
                    // delays or a strategy is.
                    header_words.retain(|w| {
                        STRATEGY_WORDS.contains(&w.as_str()) || self.apis.is_evidence(w)
                    });
                    if header_words.is_empty() {
                        return None;
                    }
                    Cap::Symbolic
                }
            }
            (SiteKind::While, Some(Expr::Let(l))) => {
                let w = words_of(&*l.expr);
                if !w
                    .iter()
                    .any(|w| STRATEGY_WORDS.contains(&w.as_str()) || self.apis.is_evidence(w))
                {
                    return None;
                }
                Cap::Symbolic
            }
            (
                SiteKind::While,
                Some(Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Bool(b),
                    ..
                })),
            ) if b.value => Cap::None,
            // Its comparisons are weighed below, as escaped by the unset option.
            (SiteKind::While, Some(cond))
                if opt::escaping_disjunction(cond, &scan.opt_locals).is_some() =>
            {
                Cap::None
            }
            (SiteKind::While, Some(cond)) => literal_cap(cond).unwrap_or(Cap::Symbolic),
            _ => Cap::None,
        };
        // A loop that goes round only by falling through leaves with the attempt's outcome
        // (`return result`), which is its success exit.
        let outcome_exit = falls_through && !scan.failure_path();
        // A `while` that tests only a stop signal (`while !stop.load(..)`, `while running`)
        // ends when asked to, never on success: the same periodic or supervising work as a
        // `loop` that never leaves on success.
        // A header that also tests a flag the body sets (`while !registered && !stop`) leaves
        // on success through it: a retry loop, not periodic work.
        let stop_header = kind == SiteKind::While
            && !flag_header
            && header.is_some_and(|h| {
                let assigned = assigned_locals(body);
                let w = words_of(h);
                !super::Binding::idents_of(h)
                    .iter()
                    .any(|n| assigned.contains(n))
                    && w.iter().any(|w| self.apis.is_stop_word(w))
                    && !w.iter().any(|w| {
                        BOUND_WORDS.contains(&w.as_str()) || TIME_WORDS.contains(&w.as_str())
                    })
            });
        if !scan.success_exit && !outcome_exit && (kind == SiteKind::Loop || stop_header) {
            // A `loop` that never leaves on success is periodic work (a heartbeat, a poller, a
            // flusher that stops on shutdown), not a retry. A supervisor among them that waits
            // after a failure (`Err(e) => sleep(retry_delay)`) still retries what failed on
            // its next round: that wait is a backoff, which only the cancellation rule asks
            // about (running forever is what a supervisor is for).
            // An accept or read loop that pauses after a failed `accept()` takes the next item
            // again: nothing is retried.
            if !scan.err_paths.is_empty() && !scan.next_item {
                let reconnect = super::Reconnect {
                    anchor: self.span(keyword),
                    checks_cancel: scan.checks_cancel,
                    failure_paths: scan.err_paths.iter().map(|s| self.span(*s)).collect(),
                };
                self.facts.reconnects.push(reconnect);
            }
            return None;
        }
        if success_goes_round(body, kind == SiteKind::While) || waits_for_change(body) {
            // Success and failure alike lead to the next iteration: an accept, message or
            // flush loop doing the same work whether or not the last one failed, or a poll
            // that leaves only once the value it reads has changed.
            return None;
        }
        let label_name = label.map(|l| l.name.ident.to_string());
        let operations: BTreeSet<String> = self
            .handed_params()
            .map(|(_, params, _)| {
                (params.iter())
                    .filter(|(_, _, takes)| *takes == Takes::Callable)
                    .map(|(name, _, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default();
        let flow = super::rounds::flow(
            body,
            label_name.as_deref(),
            &scan.incremented,
            &self.bound_checkers,
            &header_flags,
            &operations,
            self.apis,
        );
        let hidden = flow.asked.iter().filter(|n| !self.defined_fns.contains(*n));
        self.facts.hidden_callees.extend(hidden.cloned());
        // Another file's answer can bound a way round no gate stands on, or make a gate by
        // name an optional cap: those are the names the crate is asked about (in a condition
        // or under `?`, not the matched operation itself). A gate the file defines is asked
        // in turn what it decides by.
        let asked = flow.crate_asked.iter().filter(|_| flow.ungated.is_some());
        for n in flow.worded.iter().chain(asked) {
            if self.defined_fns.contains(n) {
                self.gate_helpers.insert(n.clone());
            } else if !super::index::too_common_name(n) {
                self.facts.foreign_callees.insert(n.clone());
            }
        }
        if flow.only_after_success {
            // No failure goes round: every way back to the top follows a success (a heartbeat
            // that pings again after a pong and stops on the first error). What RULES.md calls
            // a retry goes round on a failure path.
            return None;
        }
        let mut bounded_by_comparison = false;
        let uncapped = cap == Cap::None;
        // The optional cap that an unset option switches off, and whether anything else bounds.
        let mut off_when_none = None;
        let mut other_bound = scan.bounding_call;
        // A comparison whose test decides nothing (`if retries == 2 { warn!(..) }`) counts
        // attempts for a log line: it is no cap.
        for c in scan.comparisons.iter().filter(|c| !c.inert) {
            if c.words.iter().any(|w| BOUND_WORDS.contains(&w.as_str()))
                || c.words.iter().any(|w| scan.incremented.contains(w))
            {
                if let Some(o) = &c.escape {
                    off_when_none.get_or_insert_with(|| o.clone());
                    continue;
                }
                other_bound = true;
                bounded_by_comparison = true;
                if cap == Cap::None {
                    cap = c.literal.map_or(Cap::Symbolic, Cap::Literal);
                }
            }
        }
        if cap == Cap::None
            && (scan.bounding_call || bounded_by_comparison || flow.bounded_by_steps)
        {
            cap = Cap::Symbolic;
        }
        if let Some(o) = off_when_none {
            if uncapped && !other_bound {
                cap = Cap::OffWhenNone(o);
            } else if cap == Cap::None {
                cap = Cap::Symbolic;
            }
        }
        // A time word of a counter the loop steps (`attempts_remaining -= 1`) names attempts
        // left, not time left: `attempts_remaining == 0` is an attempt cap.
        let manual_deadline = scan.time_check
            || scan.comparisons.iter().filter(|c| !c.unexiting).any(|c| {
                c.words
                    .iter()
                    .any(|w| TIME_WORDS.contains(&w.as_str()) && !scan.incremented.contains(w))
            });
        let deadline = if self.deadline > 0 || self.raced > 0 {
            Some(Deadline::Outer)
        } else if manual_deadline {
            Some(Deadline::Manual)
        } else {
            None
        };
        // Only a `loop` (or `while true`) goes round with nothing in its header to stop it.
        let endless = kind == SiteKind::Loop
            || flag_header
            || matches!(header, Some(Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(b), .. })) if b.value);
        // In a stream's `poll_next` the loop steps a state machine that yields each failure to
        // its consumer, who decides whether to poll again: what bounds a reconnect is the
        // consumer (or the state the machine keeps), not the loop. A future's `poll` has no such
        // consumer: a round on failure there retries inside the one result its caller awaits,
        // and is judged like any loop. A loop that polls futures itself is an executor: it goes
        // round until they are ready.
        let polls = scan.drives_futures
            || self
                .fn_stack
                .last()
                .is_some_and(|&f| self.facts.functions[f].streams);
        let ungated_round = (endless && calls_out && !scan.next_item && !polls)
            .then_some(flow.ungated)
            .flatten()
            .map(|r| super::UngatedRound {
                at: self.span(r.at),
                gated_elsewhere: r.gated_elsewhere,
            });
        let site = RetrySite {
            kind,
            anchor: self.span(keyword),
            span: self.span(whole),
            function: self.fn_stack.last().copied(),
            cap,
            deadline,
            checks_cancel: scan.checks_cancel,
            exits_on_failure: scan.failure_exit,
            header_flags: flag_header,
            ungated_round,
            sleeps: Vec::new(),
            comparison_words: scan.comparisons.into_iter().map(|c| c.words).collect(),
            refusals_only: false,
            classifies: false,
            status_only: false,
            clock_checked: scan.clock_call,
            resends: None,
        };
        Some(self.add_site(site))
    }

    fn combinator_site(
        &mut self,
        name: String,
        anchor: Span,
        whole: Span,
        strategy: Option<&Expr>,
    ) -> usize {
        // The strategy argument first, then whatever the chain above the call configures.
        let mut reading = Reading::default();
        if let Some(e) = strategy {
            let empty = HashMap::new();
            let locals = self
                .fn_stack
                .last()
                .and_then(|f| self.strategy_locals.get(f))
                .unwrap_or(&empty);
            reading.read(e, &self.apis.strategies, locals);
        }
        if let Some(chain) = self.chain_readings.get(&whole.start) {
            reading.then(chain);
        }
        let cap = reading.cap();
        let deadline = (self.deadline > 0 || self.raced > 0).then_some(Deadline::Outer);
        let status_only = self.status_only.contains(&whole.start);
        self.add_site(RetrySite {
            kind: SiteKind::Combinator(name),
            anchor,
            span: whole,
            function: self.fn_stack.last().copied(),
            cap,
            deadline,
            checks_cancel: false,
            exits_on_failure: false,
            header_flags: false,
            ungated_round: None,
            sleeps: Vec::new(),
            comparison_words: Vec::new(),
            refusals_only: false,
            classifies: false,
            status_only,
            clock_checked: false,
            resends: None,
        })
    }

    /// At the outermost method of a chain rooted at a retry combinator's call
    /// (`tryhard::retry_fn(op).retries(3)`), what the methods configure, for the site the call
    /// makes. Inner methods of the chain find the root already noted.
    fn note_chain(&mut self, m: &syn::ExprMethodCall) {
        let Some((root, methods)) = strategy::chain_above_call(m) else {
            return;
        };
        let start = self.span(super::spans::of(&root)).start;
        if self.chain_readings.contains_key(&start) {
            return;
        }
        let Expr::Path(p) = &*root.func else {
            return;
        };
        if !self
            .resolve(&p.path)
            .iter()
            .any(|c| self.apis.retry_call(c).is_some())
        {
            return;
        }
        let mut r = Reading::default();
        for m in methods {
            r.apply(&m.method.to_string(), m.args.first(), &self.apis.strategies);
        }
        self.chain_readings.insert(start, r);
    }

    fn visit_known_macro(&mut self, mac: &syn::Macro) -> bool {
        let Some(parts) = known_macro_exprs(mac) else {
            return false;
        };
        for (e, role) in &parts {
            if *role == Role::Raced {
                self.raced += 1;
                self.visit_expr(e);
                self.raced -= 1;
            } else {
                self.visit_expr(e);
            }
        }
        true
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let ty = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        self.impl_stack.push(ty.unwrap_or_default());
        let policy = std::mem::replace(&mut self.in_policy, super::shapes::is_policy_impl(i));
        let in_trait = std::mem::replace(&mut self.in_trait_impl, i.trait_.is_some());
        visit::visit_item_impl(self, i);
        self.in_trait_impl = in_trait;
        self.in_policy = policy;
        self.impl_stack.pop();
    }

    fn visit_item_fn(&mut self, i: &'ast syn::ItemFn) {
        let sites = std::mem::take(&mut self.site_stack);
        let (raced, deadline) = (self.raced, self.deadline);
        (self.raced, self.deadline) = (0, 0);
        self.fn_like(
            i.sig.ident.to_string(),
            super::spans::of(&i),
            &i.sig,
            &i.block,
        );
        if matches!(i.vis, syn::Visibility::Inherited) {
            self.private_fns.extend(self.fn_stack.last().copied());
        }
        let site = self.shape_site(&i.sig, super::spans::of(&i), &i.block, false);
        visit::visit_item_fn(self, i);
        if site {
            self.site_stack.pop();
        }
        self.fn_stack.pop();
        self.site_stack = sites;
        (self.raced, self.deadline) = (raced, deadline);
    }

    fn visit_impl_item_fn(&mut self, i: &'ast syn::ImplItemFn) {
        self.fn_like(
            i.sig.ident.to_string(),
            super::spans::of(&i),
            &i.sig,
            &i.block,
        );
        if matches!(i.vis, syn::Visibility::Inherited) && !self.in_trait_impl {
            self.private_fns.extend(self.fn_stack.last().copied());
        }
        let policy = self.in_policy && i.sig.ident == "retry";
        let site = self.shape_site(&i.sig, super::spans::of(&i), &i.block, policy);
        visit::visit_impl_item_fn(self, i);
        if site {
            self.site_stack.pop();
        }
        self.fn_stack.pop();
    }

    fn visit_trait_item_fn(&mut self, i: &'ast syn::TraitItemFn) {
        if let Some(block) = &i.default {
            self.fn_like(i.sig.ident.to_string(), super::spans::of(&i), &i.sig, block);
            visit::visit_trait_item_fn(self, i);
            self.fn_stack.pop();
        }
    }

    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        let span = self.span(super::spans::of(&c));
        let idx = self.push_fn(
            "<closure>".into(),
            span,
            FnKind::Closure,
            c.asyncness.is_some(),
        );
        if let Expr::Block(b) = &*c.body {
            self.note_single_stmt(idx, &b.block);
        }
        visit::visit_expr_closure(self, c);
        self.fn_stack.pop();
    }

    fn visit_expr_async(&mut self, a: &'ast syn::ExprAsync) {
        let span = self.span(super::spans::of(&a));
        let idx = self.push_fn("<async block>".into(), span, FnKind::AsyncBlock, true);
        self.note_single_stmt(idx, &a.block);
        visit::visit_expr_async(self, a);
        self.fn_stack.pop();
    }

    fn visit_block(&mut self, b: &'ast syn::Block) {
        match self.imports.with_block(b) {
            Some(scoped) => {
                let outer = std::mem::replace(&mut self.imports, scoped);
                visit::visit_block(self, b);
                self.imports = outer;
            }
            None => visit::visit_block(self, b),
        }
    }

    fn visit_expr_await(&mut self, a: &'ast syn::ExprAwait) {
        let s = self.span(super::spans::of(&a.base));
        self.awaited.insert(s.start);
        visit::visit_expr_await(self, a);
    }

    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        if let (Some(f), Expr::Path(p)) = (self.fn_stack.last().copied(), &*a.left) {
            if let Some(id) = p.path.get_ident() {
                let at = self.span(super::spans::of(&a)).start;
                self.facts.functions[f]
                    .bindings
                    .entry(id.to_string())
                    .or_default()
                    .add(&a.right, at);
            }
        }
        visit::visit_expr_assign(self, a);
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let (Some(f), Some(init)) = (self.fn_stack.last().copied(), &l.init) {
            let pat = match &l.pat {
                Pat::Type(pt) => &*pt.pat,
                p => p,
            };
            if let Pat::Ident(id) = pat {
                self.local_inits.push((
                    Some(f),
                    id.ident.to_string(),
                    self.span(super::spans::of(&init.expr)),
                ));
                let mut r = Reading::default();
                let locals = self.strategy_locals.entry(f).or_default();
                r.read(&init.expr, &self.apis.strategies, locals);
                if !r.is_empty() {
                    locals.insert(id.ident.to_string(), r);
                }
                if let Some(o) = opt::local_of(&init.expr) {
                    self.opt_locals
                        .entry(f)
                        .or_default()
                        .insert(id.ident.to_string(), o);
                }
                let at = self.span(super::spans::of(&l)).start;
                self.facts.functions[f]
                    .bindings
                    .entry(id.ident.to_string())
                    .or_default()
                    .add(&init.expr, at);
            }
        }
        if let Some(f) = self.fn_stack.last().copied() {
            let typed = match &l.pat {
                Pat::Type(pt) => self.is_cancel_source(
                    &pt.ty.to_token_stream().to_string().replace(' ', ""),
                    &pt.pat.to_token_stream().to_string(),
                ),
                _ => false,
            };
            let made = l.init.as_ref().is_some_and(|init| {
                let t = init.expr.to_token_stream().to_string().replace(' ', "");
                self.apis
                    .cancellation
                    .constructors
                    .iter()
                    .any(|c| t.contains(c.as_str()))
            });
            if typed || made {
                let name = match &l.pat {
                    Pat::Type(pt) => pt.pat.to_token_stream().to_string(),
                    p => p.to_token_stream().to_string(),
                };
                let span = self.span(super::spans::of(&l));
                self.facts.functions[f]
                    .cancel_sources
                    .push(CancelSource { name, span });
            }
        }
        visit::visit_local(self, l);
    }

    fn visit_expr_loop(&mut self, e: &'ast syn::ExprLoop) {
        let site = self.loop_site(
            SiteKind::Loop,
            e.loop_token.span,
            super::spans::of(&e),
            e.label.as_ref(),
            None,
            &e.body,
        );
        self.in_site(site, |v| visit::visit_expr_loop(v, e));
    }

    fn visit_expr_while(&mut self, e: &'ast syn::ExprWhile) {
        let site = self.loop_site(
            SiteKind::While,
            e.while_token.span,
            super::spans::of(&e),
            e.label.as_ref(),
            Some(&e.cond),
            &e.body,
        );
        self.in_site(site, |v| visit::visit_expr_while(v, e));
    }

    fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
        let site = self.loop_site(
            SiteKind::For,
            e.for_token.span,
            super::spans::of(&e),
            e.label.as_ref(),
            Some(&e.expr),
            &e.body,
        );
        self.in_site(site, |v| visit::visit_expr_for_loop(v, e));
    }

    /// A request parameter used inside a retry site of its function is sent again on every
    /// attempt: the function is a wrapper ([`Takes::Request`]).
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if !self.site_stack.is_empty() {
            if let Some(id) = p.path.get_ident() {
                self.note_wrapper(&id.to_string(), Takes::Request);
            }
        }
        visit::visit_expr_path(self, p);
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        let callee = match &*call.func {
            Expr::Paren(p) => &*p.expr,
            f => f,
        };
        if let Expr::Path(p) = callee {
            if let Some(id) = p.path.get_ident() {
                self.note_wrapper(&id.to_string(), Takes::Callable);
            }
            if let Some(last) = p.path.segments.last() {
                // Only a call inside a site can be a site's wait ([`helper_waits`]).
                let own = super::imports::own_fn_name(callee)
                    .filter(|_| !self.site_stack.is_empty())
                    .map(|_| self.own_call(super::spans::of(&call), &call.args));
                let on_self = p.path.segments.len() == 2;
                self.note_call(last.ident.to_string(), own, on_self);
            }
        }
        let Expr::Path(p) = &*call.func else {
            visit::visit_expr_call(self, call);
            return;
        };
        let segs = path_segments(&p.path);
        let impl_type = self.impl_stack.last().map(String::as_str);
        let wrapper =
            wrappers::for_path(self.known, &self.imports, &segs, impl_type, &self.src.path)
                .filter(|w| call.args.len() > w.param)
                .cloned();
        if let Some(w) = wrapper {
            self.enter_wrapper_site(
                &w,
                super::spans::of(&call.func),
                super::spans::of(&call),
                &call.args,
            );
            visit::visit_expr_call(self, call);
            self.site_stack.pop();
            return;
        }
        self.note_delegation(
            |v| Callee::Path {
                local: segs.len() == 1 && segs.last().is_some_and(|l| v.imports.is_local(l)),
                candidates: v.resolve(&p.path),
                segments: segs.clone(),
            },
            &call.args,
        );
        let last = segs.last().cloned().unwrap_or_default();
        let candidates = self.resolve(&p.path);
        let local = segs.len() == 1 && self.imports.is_local(&last);
        if !local {
            if let Some((path, blocking)) = candidates
                .iter()
                .find_map(|c| self.apis.sleep_kind(c).map(|b| (c.clone(), b)))
            {
                self.sleep(call, path, blocking);
                visit::visit_expr_call(self, call);
                return;
            }
            if candidates.iter().any(|c| self.apis.is_deadline_wrapper(c)) {
                self.note_bounded_local(&call.args);
                super::visit_bounded(self, &call.args, |s| &mut s.deadline);
                return;
            }
        }
        // A `sleep` of the crate's own (a parameter, a local function, `crate::rt::sleep`):
        // a path into another crate that does not resolve says nothing.
        let crates_own = segs.len() == 1
            || matches!(
                segs.first().map(String::as_str),
                Some("crate" | "self" | "super" | "Self")
            );
        if crates_own
            && self.injected_sleep(super::spans::of(&call), &last, &call.args, || {
                segs.join("::")
            })
        {
            visit::visit_expr_call(self, call);
            return;
        }
        // A function that races what it is handed (`with_stopper(stop_rx, supervise(state))`):
        // the future at a raced position runs under the caller's deadline, as inside
        // `select!`. One of another file is asked about when it is handed a call of this file's.
        // A name imported from another crate (`use backoff::future::retry`) is that crate's.
        let external = candidates.iter().any(|c| {
            c.contains("::")
                && !["crate::", "self::", "super::"]
                    .iter()
                    .any(|p| c.starts_with(p))
        });
        if crates_own && !external {
            if let Some(raced) = self.racers.get(&last).cloned() {
                for (i, a) in call.args.iter().enumerate() {
                    let on = raced.contains(&i);
                    self.raced += usize::from(on);
                    self.visit_expr(a);
                    self.raced -= usize::from(on);
                }
                return;
            }
            let hands_own_call = call.args.iter().any(|a| {
                matches!(a, Expr::Call(c) if super::imports::own_fn_name(&c.func)
                    .is_some_and(|n| self.defined_fns.contains(&n)))
            });
            if hands_own_call
                && !self.defined_fns.contains(&last)
                && !super::index::too_common_name(&last)
            {
                self.racer_asks.insert(last.clone());
            }
        }
        // The crate's own timeout helper (`crate::rt::timeout(d, async { .. })`, a runtime
        // shim over tokio's and async-std's): named as one and given a future, it bounds it.
        let own = local
            || matches!(
                segs.first().map(String::as_str),
                Some("crate" | "self" | "super")
            );
        if own && call.args.len() >= 2 && TIMEOUT_NAMES.contains(&last.as_str()) {
            self.note_bounded_local(&call.args);
            super::visit_bounded(self, &call.args, |s| &mut s.deadline);
            return;
        }
        if !local {
            if let Some(rc) = candidates
                .iter()
                .find_map(|c| self.apis.retry_call(c))
                .cloned()
            {
                let strategy = rc.strategy.and_then(|i| call.args.iter().nth(i));
                let anchor = self.span(super::spans::of(&call.func));
                let whole = self.span(super::spans::of(&call));
                let s = self.combinator_site(rc.path, anchor, whole, strategy);
                self.site_stack.push(s);
                // A callable parameter handed to the combinator makes this function a wrapper.
                for a in &call.args {
                    if let Expr::Path(p) = a {
                        if let Some(id) = p.path.get_ident() {
                            self.note_wrapper(&id.to_string(), Takes::Callable);
                        }
                    }
                }
                visit::visit_expr_call(self, call);
                self.site_stack.pop();
                return;
            }
            let spawns_thread = candidates.iter().any(|c| c == "std::thread::spawn")
                || BLOCKING_SPAWNERS.contains(&last.as_str());
            if spawns_thread {
                for a in &call.args {
                    if let Expr::Closure(c) = a {
                        let s = self.span(super::spans::of(&c));
                        self.blocking_closures.insert(s.start);
                    }
                }
            }
        }
        visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        self.note_chain(m);
        let name = m.method.to_string();
        let on_self = matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"));
        let own = (on_self && !self.site_stack.is_empty())
            .then(|| self.own_call(super::spans::of(&m), &m.args));
        self.note_call(name.clone(), own, on_self);
        if matches!(name.as_str(), "when" | "retry_if") && m.args.first().is_some_and(status_only) {
            // The chain's calls all start where its root does: the combinator below finds it.
            self.status_only
                .insert(self.span(super::spans::of(&m)).start);
        }
        if BLOCKING_SPAWNERS.contains(&name.as_str())
            || (name == "spawn" && words_of(&*m.receiver).contains("builder"))
        {
            for a in &m.args {
                if let Expr::Closure(c) = a {
                    let s = self.span(super::spans::of(&c));
                    self.blocking_closures.insert(s.start);
                }
            }
        }
        let on_self = matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"));
        let impl_type = self.impl_stack.last().map(String::as_str);
        let receiver = self.receiver_type(&m.receiver);
        let wrapper =
            wrappers::for_method(self.known, &name, on_self, impl_type, receiver.as_deref())
                .filter(|w| m.args.len() > w.param)
                .cloned();
        if let Some(w) = wrapper {
            self.enter_wrapper_site(&w, m.method.span(), super::spans::of(&m), &m.args);
            visit::visit_expr_method_call(self, m);
            self.site_stack.pop();
            return;
        }
        self.note_delegation(
            |_| Callee::Method {
                name: name.clone(),
                on_self,
                receiver,
            },
            &m.args,
        );
        let combinator = self
            .apis
            .retry
            .methods
            .iter()
            .find(|rm| rm.name == name && self.imports.mentions_crate(&rm.krate))
            .cloned();
        let src = self.src;
        let receiver = super::spans::of(&m.receiver);
        self.injected_sleep(super::spans::of(&m), &name, &m.args, || {
            format!("{}.{name}", src.slice(span_of(src, receiver)))
        });
        if let Some(rm) = combinator {
            let anchor = self.span(m.method.span());
            let whole = self.span(super::spans::of(&m));
            let s = self.combinator_site(
                format!("{}::{}", rm.krate, rm.name),
                anchor,
                whole,
                m.args.first(),
            );
            self.site_stack.push(s);
            visit::visit_expr_method_call(self, m);
            self.site_stack.pop();
            return;
        }
        visit::visit_expr_method_call(self, m);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if !self.visit_known_macro(mac) {
            // Its tokens are not read as code: any name in them may be a call, and an
            // unbounded one (`join!(connect(a), ..)`), so none of them is known bounded.
            let bounded = std::mem::replace(&mut self.raced, 0);
            let deadline = std::mem::replace(&mut self.deadline, 0);
            super::words::for_each_ident(mac.tokens.clone(), &mut |i| {
                self.note_call(i.to_string(), None, false);
            });
            (self.raced, self.deadline) = (bounded, deadline);
            visit::visit_macro(self, mac);
        }
    }
}

/// A deadline applied by the callers: RULES.md counts a site whose function is the future
/// inside `timeout(..)` or raced in `select!` as under an overall deadline, and the caller is
/// often the one that writes it (`timeout(d, connect(addr))`, `select! { _ = token.cancelled()
/// => .., c = self.inner.next() => .. }`). A private function is called only where this file
/// sees, so when every call of its name (any receiver: a name shared with another method only
/// adds calls) is bounded, or is made from a function that is itself so bounded, its sites
/// are under the callers' deadline and its sleeps are raced. A function never called here
/// may be called from anywhere: nothing is assumed.
fn outer_bound(facts: &mut Facts, private: &HashSet<usize>, calls: &CallsByName<'_>) {
    let calls_of = |name: &str| calls.get(name).into_iter().flatten().copied();
    let mut facts_hidden = BTreeSet::new();
    // A private function with a site whose callers, as parsed, bound it (or are not seen at
    // all) would be judged otherwise if the file held other calls: its name is hidden-sensitive.
    for &f in private {
        let has_site = facts
            .sites
            .iter()
            .any(|s| s.deadline.is_none() && facts.item_of(s.function) == Some(f));
        if has_site {
            let name = &facts.functions[f].name;
            let seen = calls_of(name).filter(|c| facts.item_of(c.from) != Some(f));
            if seen.clone().all(|c| c.bounded) {
                facts_hidden.insert(name.clone());
            }
        }
    }
    let mut bounded: HashSet<usize> = HashSet::new();
    // Callers of callers, a few levels up; each round can only add functions. A round judges
    // by the functions the rounds before it found bounded, never by its own additions, so the
    // levels reached do not depend on the order the set is walked in (a `HashSet`: walked in
    // place, one run reached a fourth level and the next did not).
    for _ in 0..3 {
        let mut grew = false;
        let known = bounded.clone();
        for &f in private {
            if known.contains(&f) {
                continue;
            }
            let name = &facts.functions[f].name;
            let mut any = false;
            let mut all = true;
            for c in calls_of(name) {
                let from = facts.item_of(c.from);
                if from == Some(f) {
                    continue; // recursion: bounded as the outer call is
                }
                any = true;
                all &= c.bounded || from.is_some_and(|g| known.contains(&g));
            }
            if any && all {
                bounded.insert(f);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let under: Vec<bool> = (0..facts.functions.len())
        .map(|f| facts.item_of(Some(f)).is_some_and(|i| bounded.contains(&i)))
        .collect();
    let in_bounded = |f: Option<usize>| f.is_some_and(|f| under[f]);
    for site in &mut facts.sites {
        if site.deadline.is_none() && in_bounded(site.function) {
            site.deadline = Some(Deadline::Outer);
        }
    }
    for sleep in &mut facts.sleeps {
        if in_bounded(sleep.function) {
            sleep.raced = true;
        }
    }
    facts.hidden_callers.extend(facts_hidden);
}

/// A wait in a helper of the file that a retry site calls between attempts (`self.wait(n).await`
/// with `async fn wait(&self, n: u32) { sleep(self.delay(n)).await }`, `backoff_sleep(attempt)`)
/// is that site's wait: RULES.md's "sleep at a retry site" does not stop at a function
/// boundary. The helper must be unambiguous (one function of the file by that name, called only
/// as the file's own, `name(..)` for a free function, `Self::name(..)` or `self.name(..)` from
/// its own impl, and only from inside one retry site), and the sleep must be the helper's own
/// statement, not in a loop or a task of its own. A call raced or under a deadline makes the
/// wait cancellable with it, so it is not attributed.
fn helper_waits(
    facts: &mut Facts,
    calls: &CallsByName<'_>,
    impls: &HashMap<usize, Option<String>>,
) {
    if facts.sites.is_empty() {
        return;
    }
    let mut defined: HashMap<&str, usize> = HashMap::new();
    for g in facts.functions.iter().filter(|g| g.kind == FnKind::Item) {
        *defined.entry(g.name.as_str()).or_default() += 1;
    }
    let mut found: Vec<(usize, usize, super::Via)> = Vec::new();
    for (i, sleep) in facts.sleeps.iter().enumerate() {
        let Some(f) = sleep.function else { continue };
        // A wait inside a loop of the helper is its own business (a wait in slices that re-checks
        // a stop flag, a poll): only a helper's plain wait is the calling site's.
        if sleep.site.is_some()
            || sleep.in_loop
            || sleep.raced
            || sleep.under_deadline
            || facts.functions[f].kind != FnKind::Item
        {
            continue;
        }
        let name = facts.functions[f].name.as_str();
        if defined.get(name) != Some(&1) {
            continue;
        }
        // `self.wait(..)` means a method of the caller's own impl; a bare `wait(..)` a free
        // function: another type's method of that name (a trait's, defined elsewhere) is not it.
        let helper_impl = impls.get(&f).cloned().flatten();
        let mut sites: BTreeSet<usize> = BTreeSet::new();
        let mut first: Option<&super::Via> = None;
        let mut all = true;
        for c in calls.get(name).into_iter().flatten() {
            if facts.item_of(c.from) == Some(f) {
                continue;
            }
            match (&c.own, c.site) {
                (Some(at), Some(s)) if !c.bounded && c.own_impl == helper_impl => {
                    sites.insert(s);
                    first.get_or_insert(at);
                }
                _ => all = false,
            }
        }
        // Called from one site only: with two, which one's deadline and stop signal the wait
        // answers to is not one fact.
        if let (true, [s], Some(at)) = (all, Vec::from_iter(sites).as_slice(), first) {
            found.push((i, *s, at.clone()));
        }
    }
    for (i, s, at) in found {
        facts.sleeps[i].site = Some(s);
        facts.sleeps[i].via = Some(at);
        facts.sites[s].sleeps.push(i);
    }
}

/// A future bound to a local and handed to a deadline wrapper by name (`let fut = async { ..
/// }; timeout(d, fut).await`) runs under the deadline as if written inside the call: its sites
/// have the outer deadline and its sleeps are under it.
fn bounded_by_name(
    facts: &mut Facts,
    bounded: &[(Option<usize>, String)],
    inits: &[(Option<usize>, String, Span)],
) {
    let spans: Vec<Span> = inits
        .iter()
        .filter(|(f, name, _)| bounded.iter().any(|(g, n)| g == f && n == name))
        .map(|(_, _, s)| *s)
        .collect();
    if spans.is_empty() {
        return;
    }
    let inside = |s: Span| spans.iter().any(|b| b.contains(s));
    for site in &mut facts.sites {
        if site.deadline.is_none() && inside(site.span) {
            site.deadline = Some(Deadline::Outer);
        }
    }
    for sleep in &mut facts.sleeps {
        if inside(sleep.span) {
            sleep.under_deadline = true;
        }
    }
}

/// Per-struct fields whose type is a cancellation source.
fn struct_cancel_fields(
    bodies: &Bodies<'_>,
    apis: &Apis,
    src: &SourceFile,
) -> HashMap<String, Vec<(CancelSource, bool)>> {
    let mut out: HashMap<String, Vec<(CancelSource, bool)>> = HashMap::new();
    for s in &bodies.structs {
        for f in &s.fields {
            let ty = f.ty.to_token_stream().to_string().replace(' ', "");
            if let Some(id) = &f.ident {
                if is_cancel_source(apis, &ty, &id.to_string()) {
                    // A channel receiver named for a stop exists to carry the stop: it is the
                    // struct's way to give up, like a token. A `Notify` or an `AtomicBool` is
                    // general-purpose, its name alone says less.
                    let channel = ty.contains("Receiver");
                    let weak = !channel && !type_mentions(&apis.cancellation.types, &ty);
                    out.entry(s.ident.to_string()).or_default().push((
                        CancelSource {
                            name: format!("self.{id}"),
                            span: span_of(src, id.span()),
                        },
                        weak,
                    ));
                }
            }
        }
    }
    out
}

/// `body` reads the field `name` of something (`self.stop`, `shared.stop` in a closure), in
/// code or in a macro's tokens (`select!` branches are tokens until parsed).
fn uses_field(body: &syn::Block, name: &str) -> bool {
    struct V<'a>(&'a str, bool);
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_expr_field(&mut self, f: &'ast syn::ExprField) {
            if matches!(&f.member, syn::Member::Named(id) if id == self.0) {
                self.1 = true;
            }
            visit::visit_expr_field(self, f);
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            self.1 |= m
                .tokens
                .to_string()
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == self.0);
        }
    }
    let mut v = V(name, false);
    v.visit_block(body);
    v.1
}

/// Is a value of type `ty` named `name` a cancellation source?
fn is_cancel_source(apis: &Apis, ty: &str, name: &str) -> bool {
    if type_mentions(&apis.cancellation.types, ty) {
        return true;
    }
    let mut words = BTreeSet::new();
    super::words::split_ident(name, &mut words);
    type_mentions(&apis.cancellation.weak_types, ty)
        && words
            .iter()
            .any(|w| apis.cancellation.names.iter().any(|n| n == w))
}

fn type_mentions(types: &[String], ty: &str) -> bool {
    types.iter().any(|t| {
        ty.match_indices(t.as_str()).any(|(i, _)| {
            let before = ty[..i].chars().next_back();
            let after = ty[i + t.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    })
}

/// `for _ in 0..max.unwrap_or(usize::MAX)`: a range no counter finishes when the cap is unset.
/// The variable a method chain starts from (`session` of `session.cache.read_body()`).
fn receiver_root(mut e: &Expr) -> Option<String> {
    loop {
        match e {
            Expr::MethodCall(m) => e = &m.receiver,
            Expr::Field(f) => e = &f.base,
            Expr::Paren(p) => e = &p.expr,
            Expr::Reference(r) => e = &r.expr,
            Expr::Unary(u) => e = &u.expr,
            Expr::Await(a) => e = &a.base,
            Expr::Try(t) => e = &t.expr,
            Expr::Path(p) => return p.path.get_ident().map(ToString::to_string),
            _ => return None,
        }
    }
}

/// The names a pattern binds.
struct Idents(BTreeSet<String>);

impl<'ast> Visit<'ast> for Idents {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.0.insert(p.ident.to_string());
        visit::visit_pat_ident(self, p);
    }
}

/// The words of a value that reads the clock: `Instant::now()` (std's or tokio's).
fn reads_clock(words: &BTreeSet<String>) -> bool {
    words.contains("instant") && words.contains("now")
}

/// Parameters declared `Instant` or `&Instant` (std's or tokio's).
fn instant_params(sig: &syn::Signature) -> BTreeSet<String> {
    let is_instant = |t: &syn::Type| {
        let t = match t {
            syn::Type::Reference(r) => &*r.elem,
            t => t,
        };
        matches!(t, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Instant"))
    };
    sig.inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(pt) if is_instant(&pt.ty) => match &*pt.pat {
                Pat::Ident(i) => Some(i.ident.to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The function returns `Poll<Option<..>>`: a stream's `poll_next`, which yields item by item.
fn polls_next_item(sig: &syn::Signature) -> bool {
    let syn::ReturnType::Type(_, t) = &sig.output else {
        return false;
    };
    let syn::Type::Path(p) = &**t else {
        return false;
    };
    let Some(last) = p.path.segments.last().filter(|s| s.ident == "Poll") else {
        return false;
    };
    // `Poll<Option<..>>`: a stream's next item.
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    args.args.iter().any(|a| {
        matches!(a, syn::GenericArgument::Type(syn::Type::Path(t))
            if t.path.segments.last().is_some_and(|s| s.ident == "Option"))
    })
}

/// `Err(..)`, alone or in an or-pattern of `Err` cases only.
fn is_err_pattern(p: &Pat) -> bool {
    match p {
        Pat::TupleStruct(t) => t.path.segments.last().is_some_and(|s| s.ident == "Err"),
        Pat::Or(o) => o.cases.iter().all(is_err_pattern),
        _ => false,
    }
}

/// A `while` condition that holds exactly while an attempt fails: `let Err(..) = op()` or
/// `op().is_err()` (`!op().is_ok()`), where `op` calls something. A condition that also tests
/// anything else (`n < 5 && op().is_err()`) is not one: its other part may be the bound.
fn attempt_fails(cond: &Expr) -> bool {
    let calls = |e: &Expr| !super::callee_names(e, false).is_empty();
    match cond {
        Expr::Paren(p) => attempt_fails(&p.expr),
        Expr::Let(l) => is_err_pattern(&l.pat) && calls(&l.expr),
        Expr::MethodCall(m) if m.method == "is_err" && m.args.is_empty() => calls(&m.receiver),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => match &*u.expr {
            Expr::MethodCall(m) if m.method == "is_ok" && m.args.is_empty() => calls(&m.receiver),
            _ => false,
        },
        _ => false,
    }
}

/// `stream.next().await`, `rx.recv().await`: the next message of a connection, `None` once the
/// connection is gone.
fn stream_ends(e: &Expr) -> bool {
    let Expr::Await(a) = strip_parens(e) else {
        return false;
    };
    matches!(&*a.base, Expr::MethodCall(m)
        if m.args.is_empty() && matches!(m.method.to_string().as_str(), "next" | "recv" | "next_message"))
}

/// A `while` condition made only of flags the loop's body assigns, or locals it never
/// changes: `!done`, `ip.is_none()`, `(expected && a.is_none()) || b.is_none()`. No counter the
/// body steps, no bound or time word, no call but `is_none` / `is_some` on a local: only the
/// outcome the body records can end the loop (a `self.running` field or an atomic's `load()`
/// may change elsewhere, and is left to the cancellation rules). The flags the body assigns,
/// each with the value that ends the loop.
fn success_flags(
    cond: &Expr,
    body: &syn::Block,
    stepped: &BTreeSet<String>,
) -> Option<BTreeMap<String, FlagEnd>> {
    /// `negated`: under an odd number of `!`.
    fn flags(e: &Expr, negated: bool, out: &mut Vec<(String, FlagEnd)>) -> bool {
        match e {
            Expr::Paren(p) => flags(&p.expr, negated, out),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => flags(&u.expr, !negated, out),
            Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_)) => {
                flags(&b.left, negated, out) && flags(&b.right, negated, out)
            }
            Expr::MethodCall(m) if m.args.is_empty() => {
                let Expr::Path(p) = &*m.receiver else {
                    return false;
                };
                let Some(id) = p.path.get_ident() else {
                    return false;
                };
                // The loop goes on while the test holds: it ends on the value that fails it.
                let end = match (m.method.to_string().as_str(), negated) {
                    ("is_none", false) | ("is_some", true) => FlagEnd::NotNone,
                    ("is_some", false) | ("is_none", true) => FlagEnd::IsNone,
                    _ => return false,
                };
                out.push((id.to_string(), end));
                true
            }
            Expr::Path(p) => p.path.get_ident().is_some_and(|id| {
                let end = if negated {
                    FlagEnd::True
                } else {
                    FlagEnd::False
                };
                out.push((id.to_string(), end));
                true
            }),
            _ => false,
        }
    }
    let mut names = Vec::new();
    if !flags(cond, false, &mut names) {
        return None;
    }
    let mut words = BTreeSet::new();
    for (n, _) in &names {
        super::words::split_ident(n, &mut words);
    }
    if names.iter().any(|(n, _)| stepped.contains(n))
        || words
            .iter()
            .any(|w| BOUND_WORDS.contains(&w.as_str()) || TIME_WORDS.contains(&w.as_str()))
    {
        return None;
    }
    let assigned = assigned_locals(body);
    let set: BTreeMap<String, FlagEnd> = (names.into_iter())
        .filter(|(n, _)| assigned.contains(n))
        .collect();
    (!set.is_empty()).then_some(set)
}

/// The plain locals a block assigns (`done = true;`), closures and nested items aside.
fn assigned_locals(body: &syn::Block) -> BTreeSet<String> {
    struct V(BTreeSet<String>);
    impl<'ast> Visit<'ast> for V {
        fn visit_item(&mut self, _: &'ast syn::Item) {}
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            if let Expr::Path(p) = &*a.left {
                if let Some(id) = p.path.get_ident() {
                    self.0.insert(id.to_string());
                }
            }
            visit::visit_expr_assign(self, a);
        }
    }
    let mut v = V(BTreeSet::new());
    v.visit_block(body);
    v.0
}

fn infinite_range(e: &Expr, locals: &HashMap<String, OptLocal>) -> Option<String> {
    let Expr::Range(r) = strip_parens(e) else {
        return None;
    };
    opt::infinite_default(r.end.as_deref()?, locals)
}

/// `for _ in a..b`: the number of attempts when both ends are literals.
fn range_cap(e: &Expr) -> Option<Cap> {
    let e = strip_parens(e);
    let Expr::Range(r) = e else {
        return None;
    };
    let Some(end) = &r.end else {
        return Some(Cap::None);
    };
    let start = r.start.as_deref().map_or(Some(0), int_lit);
    let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
    Some(match (start, int_lit(end)) {
        (Some(s), Some(e)) => Cap::Literal((e + u64::from(inclusive)).saturating_sub(s)),
        _ => Cap::Symbolic,
    })
}

/// `while attempts < 5`: the literal bound of a simple comparison.
fn literal_cap(e: &Expr) -> Option<Cap> {
    let Expr::Binary(b) = strip_parens(e) else {
        return None;
    };
    let n = int_lit(&b.right).or_else(|| int_lit(&b.left))?;
    Some(match b.op {
        syn::BinOp::Le(_) | syn::BinOp::Ge(_) => Cap::Literal(n + 1),
        syn::BinOp::Lt(_) | syn::BinOp::Gt(_) => Cap::Literal(n),
        _ => Cap::Symbolic,
    })
}

/// The loop body ends in a `match` (or `if let`) on an outcome whose success arm neither leaves
/// nor goes round on purpose (`continue`), so a success runs into the next iteration like a
/// failure does: `loop { match listener.accept().await { Ok(io) => spawn(..), Err(e) => .. } }`.
/// A guarded success arm decides on the value (`Ok(r) if r.retryable()`), and in a `while` an
/// assignment may be the flag its header tests, so neither counts. A success arm that binds the
/// value of a `let` (`let link = match .. { Some(l) => l, .. }`) is not the body's last
/// statement, so the reconnect loop that uses it afterwards is not taken for one.
fn success_goes_round(body: &syn::Block, flag_loop: bool) -> bool {
    let Some(last) = body.stmts.last() else {
        return false;
    };
    let syn::Stmt::Expr(e, _) = last else {
        return false;
    };
    let round = |f: &opt::Flow| !(f.leaves || f.continues || (flag_loop && f.assigns));
    match strip_parens(e) {
        Expr::Match(m) => {
            // `match retry_code { Some(e) => .., None => return Ok(()) }`: a `Some` of the
            // failure seen is the failure, not a success.
            let of_failure = ident_words_of(&*m.expr)
                .iter()
                .any(|w| matches!(w.as_str(), "err" | "error" | "errors" | "retry" | "code"));
            m.arms.iter().any(|a| {
                a.guard.is_none()
                    && success_pattern(&a.pat)
                    && !(of_failure && pattern_is_some(&a.pat))
                    && round(&opt::expr_flow(&a.body))
            })
        }
        Expr::If(i) => match &*i.cond {
            Expr::Let(l) => success_pattern(&l.pat) && round(&opt::block_flow(&i.then_branch)),
            _ => false,
        },
        _ => false,
    }
}

/// The loop leaves on a success only when the value read differs from (or equals) one it
/// already holds: `if let Ok(new) = latest().await && new != *old { return Ok(new) }`, or
/// `Ok(v) if v == target => break`. A success with the old value goes round like a failure:
/// the loop polls for a change, and every round does the same work whether or not the last
/// one failed. A test of the value against a literal (`code == 0`) or of something derived
/// from it (`resp.status() == OK`) is a failure test, not a change, so it does not count.
fn waits_for_change(body: &syn::Block) -> bool {
    fn conjuncts<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
        match strip_parens(e) {
            Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_)) => {
                conjuncts(&b.left, out);
                conjuncts(&b.right, out);
            }
            e => out.push(e),
        }
    }
    // `a != b` / `a == b` where one side is a value the success bound and the other is
    // neither a literal nor made from that value.
    fn compares_bound(e: &Expr, bound: &BTreeSet<String>) -> bool {
        let Expr::Binary(b) = strip_parens(e) else {
            return false;
        };
        if !matches!(b.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)) {
            return false;
        }
        let name = |e: &Expr| match opt::strip(e) {
            Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
            _ => None,
        };
        let other = |e: &Expr| {
            !matches!(opt::strip(e), Expr::Lit(_))
                && !ident_words_of(e).iter().any(|w| bound.contains(w))
        };
        let is_bound = |e: &Expr| name(e).is_some_and(|n| bound.contains(&n));
        (is_bound(&b.left) && other(&b.right)) || (is_bound(&b.right) && other(&b.left))
    }
    fn bound_by(p: &Pat) -> BTreeSet<String> {
        let mut v = Idents(BTreeSet::new());
        v.visit_pat(p);
        v.0
    }
    body.stmts.iter().any(|s| {
        let syn::Stmt::Expr(e, _) = s else {
            return false;
        };
        match strip_parens(e) {
            Expr::If(i) if i.else_branch.is_none() => {
                let mut parts = Vec::new();
                conjuncts(&i.cond, &mut parts);
                let bound: BTreeSet<String> = parts
                    .iter()
                    .filter_map(|c| match c {
                        Expr::Let(l) if success_pattern(&l.pat) => Some(bound_by(&l.pat)),
                        _ => None,
                    })
                    .flatten()
                    .collect();
                !bound.is_empty()
                    && parts.iter().any(|c| compares_bound(c, &bound))
                    && opt::block_flow(&i.then_branch).leaves
            }
            Expr::Match(m) => m.arms.iter().any(|a| {
                success_pattern(&a.pat)
                    && a.guard
                        .as_ref()
                        .is_some_and(|(_, g)| compares_bound(g, &bound_by(&a.pat)))
                    && opt::expr_flow(&a.body).leaves
            }),
            _ => false,
        }
    })
}

/// `Ok(..)` / `Some(..)`: the value a loop leaves with when its attempt succeeded.
pub(super) fn success_value(e: &Expr) -> bool {
    matches!(strip_parens(e), Expr::Call(c) if matches!(&*c.func, Expr::Path(p)
        if p.path.segments.last().is_some_and(|s| s.ident == "Ok" || s.ident == "Some")))
}

/// `Some(..)` (or `x @ Some(..)`).
fn pattern_is_some(p: &Pat) -> bool {
    match p {
        Pat::TupleStruct(t) => t.path.segments.last().is_some_and(|s| s.ident == "Some"),
        Pat::Ident(i) => i.subpat.as_ref().is_some_and(|(_, p)| pattern_is_some(p)),
        _ => false,
    }
}

/// `Ok(..)` / `Some(..)` with no `Err` inside: the arm or branch of a success.
fn success_pattern(p: &Pat) -> bool {
    match p {
        Pat::TupleStruct(t) => {
            t.path
                .segments
                .last()
                .is_some_and(|s| s.ident == "Ok" || s.ident == "Some")
                && !ident_words_of(&t.elems).contains("err")
        }
        Pat::Ident(i) => i.subpat.as_ref().is_some_and(|(_, p)| success_pattern(p)),
        _ => false,
    }
}

/// `Ok(..)` (or `x @ Ok(..)`): a test for a `Result`'s success, whose other outcome is `Err`.
fn is_ok_pattern(p: &Pat) -> bool {
    match p {
        Pat::TupleStruct(t) => t.path.segments.last().is_some_and(|s| s.ident == "Ok"),
        Pat::Ident(i) => i.subpat.as_ref().is_some_and(|(_, p)| is_ok_pattern(p)),
        _ => false,
    }
}

/// The block's last statement leaves the loop whatever happened before it (`return v`,
/// `break v`).
/// The block ends by leaving: a `return`, a `break`, or a `continue` that `leaves` says leaves
/// the loop (`continue 'listen` from a reconnect loop inside the listener's loop).
fn ends_in_exit(b: &syn::Block, leaves: impl Fn(Option<&syn::Lifetime>) -> bool) -> bool {
    match b.stmts.last() {
        Some(syn::Stmt::Expr(Expr::Return(_) | Expr::Break(_), _)) => true,
        Some(syn::Stmt::Expr(Expr::Continue(c), _)) => leaves(c.label.as_ref()),
        _ => false,
    }
}

/// Does the retry predicate `e` (a closure) answer `false` for every error without a response
/// status? A timeout, a reset or a refused connection has none (`reqwest::Error::status()` is
/// `None`), so such a site never re-sends after one: a per-request timeout is not multiplied.
/// Read: `let Some(s) = e.status() else { return false };` before anything can answer `true`,
/// or a tail `e.status().is_some_and(..)`, `e.status().map_or(false, ..)`,
/// `matches!(e.status(), Some(..))`.
fn status_only(e: &Expr) -> bool {
    fn status_call(e: &Expr) -> bool {
        match e {
            Expr::Try(t) => status_call(&t.expr),
            Expr::Paren(p) => status_call(&p.expr),
            Expr::Reference(r) => status_call(&r.expr),
            Expr::MethodCall(m) => m.method == "status" && m.args.is_empty(),
            _ => false,
        }
    }
    fn says_true(t: &impl ToTokens) -> bool {
        t.to_token_stream()
            .to_string()
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|w| w == "true")
    }
    fn tail(e: &Expr) -> bool {
        match e {
            Expr::MethodCall(m) if status_call(&m.receiver) => match m.method.to_string().as_str() {
                "is_some_and" => true,
                "map_or" => m
                    .args
                    .first()
                    .is_some_and(|a| matches!(a, Expr::Lit(l) if matches!(&l.lit, syn::Lit::Bool(b) if !b.value))),
                _ => false,
            },
            Expr::Macro(m) if m.mac.path.is_ident("matches") => {
                let text = m.mac.tokens.to_string();
                text.split(',').next().is_some_and(|first| first.trim_end().ends_with("status ()"))
            }
            _ => false,
        }
    }
    let Expr::Closure(c) = strip_parens(e) else {
        return false;
    };
    let syn::Expr::Block(b) = &*c.body else {
        return tail(&c.body);
    };
    for (i, st) in b.block.stmts.iter().enumerate() {
        if let syn::Stmt::Local(l) = st {
            if let Some(init) = &l.init {
                if let Some((_, div)) = &init.diverge {
                    if status_call(&init.expr) && !says_true(&**div) {
                        return !b.block.stmts[..i].iter().any(says_true);
                    }
                }
            }
        }
    }
    matches!(b.block.stmts.last(), Some(syn::Stmt::Expr(e, None)) if tail(e))
        && !b.block.stmts[..b.block.stmts.len() - 1]
            .iter()
            .any(says_true)
}

/// An attempt at something outside the process: it awaits, or a call in it is named like one
/// (`TcpStream::connect(addr)`, `client.send(req)`).
fn is_operation(e: &Expr) -> bool {
    struct V(bool);
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_await(&mut self, _: &'ast syn::ExprAwait) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut v = V(false);
    v.visit_expr(e);
    v.0 || ident_words_of(e)
        .iter()
        .any(|w| REMOTE_WORDS.contains(&w.as_str()))
}

pub(super) fn strip_parens(mut e: &Expr) -> &Expr {
    while let Expr::Paren(p) = e {
        e = &p.expr;
    }
    e
}

pub(super) fn int_lit(e: &Expr) -> Option<u64> {
    match strip_parens(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        _ => None,
    }
}

struct Comparison {
    words: BTreeSet<String>,
    /// In a condition no exit hangs on ([`LoopScan::unexiting_cond`]).
    unexiting: bool,
    literal: Option<u64>,
    /// The optional cap whose unset value makes this comparison irrelevant (it is a disjunct
    /// next to `max.is_none()`, inside a `Some(max)` arm that `None` skips, or against
    /// `unwrap_or(u32::MAX)`).
    escape: Option<String>,
    /// The condition it is in decides nothing about the loop (its branches only log): a "did we
    /// retry" log line.
    inert: bool,
}

/// What a loop body does: how it goes round, how it leaves, what bounds it.
// Independent facts gathered in one walk; an enum or bitflags would only rename them.
#[allow(clippy::struct_excessive_bools)]
struct LoopScan<'a> {
    apis: &'a Apis,
    /// The file's functions that compare the clock or a deadline: calling one checks a
    /// deadline by hand.
    clock_checkers: &'a BTreeSet<String>,
    /// The name of the function the loop is in.
    own_fn: String,
    /// It calls one of [`Self::clock_checkers`].
    clock_call: bool,
    /// The file's optional-cap helpers ([`Collector::optional_checkers`]): a call of one is
    /// an attempt check escaped when its option is `None`.
    optional_checkers: &'a std::collections::BTreeMap<String, String>,
    /// The clock values in scope ([`Collector::instants_of`]): one compared checks a deadline
    /// by hand (`if waited > 60 { give up }`).
    instants: BTreeSet<String>,
    /// The deadlines among them: a call handed one whose failure leaves the loop
    /// (`deadline_left(deadline)?`) checks it by hand, whatever the helper is called and
    /// wherever it is defined. A timestamp handed on (`coordinator(now)?`) checks nothing.
    deadlines: BTreeSet<String>,
    /// The loop's own failure paths (`Err` arms, `if let Err(..)` branches, outside inner
    /// loops and closures): a wait there is a backoff even when the loop is a supervisor
    /// that never leaves on success.
    err_paths: Vec<proc_macro2::Span>,
    label: Option<String>,
    loop_depth: usize,
    closure_depth: usize,
    has_continue: bool,
    /// A `continue` of this loop inside a failure arm or branch (`Err(e) if conflict(&e) => {
    /// resync().await?; continue; }`): the loop says in its own syntax that it goes round
    /// because the attempt failed.
    failure_continue: bool,
    /// For each `match` / `if let` / arm being walked, innermost last: its scrutinee receives
    /// the next item (`rx.recv().await`, `timeout(d, stream.next())`) or the arm is an
    /// interrupted system call; a failure there (a closed channel, an idle timeout, EINTR) is no
    /// failed remote operation to repeat.
    receiving: Vec<bool>,
    /// Calls of the loop's own code (not of closures) that take a next item, wherever their
    /// receiver was made (a next-item name, or a stream's `next`): counted so a scrutinee can
    /// tell whether it holds one once it has been walked.
    receive_calls: usize,
    has_exit: bool,
    /// An exit on a success path (an `Ok` arm, `if let Ok`, the loop's unconditional tail).
    success_exit: bool,
    /// An exit that is not plainly a success (`?`, `return Err`, a conditional `break`).
    failure_exit: bool,
    success_depth: usize,
    /// Inside an `Err(..)` arm or `if let Err(..)` branch: an exit there gives up, whatever
    /// value it leaves with (`Err(HigherVote) => return Ok(())` stops an actor; the attempt
    /// did not succeed).
    failure_depth: usize,
    /// The outcome tests around the current node, innermost last (`true`: a success test). An
    /// exit decides by the innermost: `Ok(s) => if let Err(_) = tx.send(s).await { break }`
    /// leaves because the consumer is gone, after a success of another operation.
    outcomes: Vec<bool>,
    catch_all_depth: usize,
    inner_labels: Vec<String>,
    /// The loop body's last statement when it is an unconditional `return` / `break`: reached
    /// only when no failure path went round, so a success exit.
    tail_exit: Option<*const Expr>,
    err_path: bool,
    has_tick: bool,
    /// An `.await` of the loop itself (not of a closure or async block inside it).
    awaits: bool,
    /// A call that takes the next item of a listener or stream (`accept`, `recv`, `read`).
    next_item: bool,
    /// It polls futures by hand (`fut.as_mut().poll(&mut cx)`): an executor driving them.
    drives_futures: bool,
    /// Locals bound in the loop body itself (a value made afresh for each attempt).
    bound_here: BTreeSet<String>,
    /// A compare-and-swap or spin call: an in-memory retry, not a remote one.
    local_retry: bool,
    checks_cancel: bool,
    bounding_call: bool,
    time_check: bool,
    comparisons: Vec<Comparison>,
    incremented: BTreeSet<String>,
    /// Locals bound from an optional cap, from before the loop and inside it.
    opt_locals: HashMap<String, OptLocal>,
    /// Inside code that an unset optional cap skips or makes true: the option's name.
    escape: Option<String>,
    /// Inside the condition of an `if` whose branches decide nothing about the loop.
    inert_cond: bool,
    /// Inside the condition of an `if` whose branches neither leave, go round, fail nor set a
    /// flag (`if now.elapsed() > healthy_after { backoff.reset() }`): a clock compared there
    /// tunes the next wait, it is no deadline the loop gives up by.
    unexiting_cond: bool,
}

impl<'a> LoopScan<'a> {
    fn new(apis: &'a Apis, label: Option<String>) -> Self {
        static NONE: BTreeSet<String> = BTreeSet::new();
        static NO_OPTIONAL: std::collections::BTreeMap<String, String> =
            std::collections::BTreeMap::new();
        Self {
            apis,
            clock_checkers: &NONE,
            own_fn: String::new(),
            clock_call: false,
            optional_checkers: &NO_OPTIONAL,
            instants: BTreeSet::new(),
            deadlines: BTreeSet::new(),
            err_paths: Vec::new(),
            label,
            loop_depth: 0,
            closure_depth: 0,
            has_continue: false,
            failure_continue: false,
            receiving: Vec::new(),
            receive_calls: 0,
            has_exit: false,
            success_exit: false,
            failure_exit: false,
            success_depth: 0,
            failure_depth: 0,
            outcomes: Vec::new(),
            catch_all_depth: 0,
            inner_labels: Vec::new(),
            tail_exit: None,
            err_path: false,
            has_tick: false,
            awaits: false,
            next_item: false,
            drives_futures: false,
            bound_here: BTreeSet::new(),
            local_retry: false,
            checks_cancel: false,
            bounding_call: false,
            time_check: false,
            comparisons: Vec::new(),
            incremented: BTreeSet::new(),
            opt_locals: HashMap::new(),
            escape: None,
            inert_cond: false,
            unexiting_cond: false,
        }
    }

    /// `receiver.name(..)` takes the next item of something that outlives the round: a known
    /// next-item call, or one named with a next-item verb whose receiver was not made in the
    /// loop body (a subscription opened per attempt is read as part of that attempt). Only the
    /// loop's own calls count: an inner loop draining a body is a step of the attempt.
    fn takes_next_item(&self, name: &str, receiver: &Expr) -> bool {
        if self.loop_depth > 0 {
            return false;
        }
        // On a value made in this round (a fresh subscription, a new connection) the receive
        // is part of the attempt, whatever its name.
        self.next_item_name(name)
            && receiver_root(receiver).is_none_or(|r| !self.bound_here.contains(&r))
    }

    /// A known next-item call, or a call named with a next-item verb (`receive_single_message`).
    fn next_item_name(&self, name: &str) -> bool {
        let apis = &self.apis.retry;
        let first = name.split('_').next().unwrap_or_default();
        apis.next_item_calls.iter().any(|c| c == name)
            || apis.next_item_verbs.iter().any(|v| v == first)
    }

    /// The loop goes round again after a failure.
    /// A call of `name` in the loop's own body: one of the file's clock checkers (not the
    /// loop's own function's name, which here is another thing's method) checks a deadline.
    fn note_clock_call(&mut self, name: &str) {
        if self.closure_depth == 0 && name != self.own_fn && self.clock_checkers.contains(name) {
            self.bounding_call = true;
            self.clock_call = true;
        }
    }

    /// A call of one of the file's optional-cap helpers ([`Self::optional_checkers`]) is the
    /// attempt check written inside it, which an unset option escapes: weighed like
    /// `max.is_none() || n < max.unwrap()` written in the loop.
    fn note_optional_call(&mut self, name: &str) -> bool {
        let Some(option) = self.optional_checkers.get(name) else {
            return false;
        };
        if self.closure_depth > 0 || name == self.own_fn {
            return false;
        }
        // The option's name holds a cap word (`optional_cap::option_name`), each of which is a
        // bound word: the comparison counts as an attempt check below.
        let mut words = BTreeSet::new();
        super::words::split_ident(option, &mut words);
        self.comparisons.push(Comparison {
            words,
            literal: None,
            escape: Some(option.clone()),
            inert: self.inert_cond,
            unexiting: self.unexiting_cond,
        });
        true
    }

    /// A failure path of the loop's own body starts at `span` (not one of an inner loop or a
    /// closure, which run within one round).
    fn err_path_at(&mut self, span: proc_macro2::Span) {
        if self.loop_depth == 0 && self.closure_depth == 0 {
            self.err_paths.push(span);
        }
    }

    /// `deadline`, `&deadline`, `waited.as_secs()`: one of `names`, converted or not.
    fn names_one(names: &BTreeSet<String>, a: &Expr) -> bool {
        super::requests::single_ident(a).is_some_and(|i| names.contains(&i))
    }

    fn names_instant(&self, a: &Expr) -> bool {
        Self::names_one(&self.instants, a)
    }

    /// `check(deadline)` or `x.check(&deadline)` (awaited or not): a call handed one of the
    /// [`Self::deadlines`] by name.
    fn hands_an_instant(&self, e: &Expr) -> bool {
        if self.deadlines.is_empty() {
            return false;
        }
        match strip_parens(e) {
            Expr::Await(a) => self.hands_an_instant(&a.base),
            Expr::Call(c) => c.args.iter().any(|a| Self::names_one(&self.deadlines, a)),
            Expr::MethodCall(m) => m.args.iter().any(|a| Self::names_one(&self.deadlines, a)),
            _ => false,
        }
    }

    fn failure_path(&self) -> bool {
        self.has_continue || self.err_path
    }

    fn targets_us(&self, label: Option<&syn::Lifetime>) -> bool {
        match label {
            Some(l) => self.label.as_deref() == Some(&l.ident.to_string()),
            None => self.loop_depth == 0,
        }
    }

    fn enter(&mut self, label: Option<&syn::Label>) {
        self.loop_depth += 1;
        if let Some(l) = label {
            self.inner_labels.push(l.name.ident.to_string());
        }
    }

    fn leave(&mut self, label: Option<&syn::Label>) {
        self.loop_depth -= 1;
        if label.is_some() {
            self.inner_labels.pop();
        }
    }

    /// `continue 'outer` / `break 'outer` naming a loop around this one leaves this loop.
    fn leaves_us(&self, label: Option<&syn::Lifetime>) -> bool {
        label.is_some_and(|l| {
            let name = l.ident.to_string();
            self.label.as_deref() != Some(&name) && !self.inner_labels.contains(&name)
        })
    }

    fn exit(&mut self, e: &Expr, value: Option<&Expr>) {
        self.has_exit = true;
        let ok_value = value.is_some_and(success_value);
        let tail = self.tail_exit.is_some_and(|t| std::ptr::eq(t, e));
        if self.catch_all_depth > 0 && self.success_depth == 0 {
            self.success_exit = true;
            self.failure_exit = true;
        } else if (self.success_depth > 0 && self.outcomes.last() != Some(&false))
            || (self.failure_depth == 0 && (ok_value || tail))
        {
            self.success_exit = true;
        } else {
            self.failure_exit = true;
        }
    }

    fn condition(&mut self, cond: &Expr) {
        let w = signal_words(cond);
        if w.iter()
            .any(|w| self.apis.cancellation.names.iter().any(|n| n == w))
        {
            self.checks_signal();
        }
    }

    /// The retry loop asks a stop signal between attempts. Only in its own body: an inner
    /// loop runs inside one attempt (an I/O loop that runs until its connection is killed,
    /// a chunk loop), so a signal read there ends that attempt's work, not the retrying.
    fn checks_signal(&mut self) {
        if self.loop_depth == 0 {
            self.checks_cancel = true;
        }
    }
}

impl<'ast> Visit<'ast> for LoopScan<'_> {
    fn visit_item(&mut self, _: &'ast syn::Item) {}

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        // Only a name that means this file's function: `expired(..)` or `Self::expired(..)`,
        // not `TcpStream::connect(..)` beside a `fn connect` of the file.
        if let Some(name) = super::imports::own_fn_name(&c.func) {
            self.note_optional_call(&name);
            self.note_clock_call(&name);
        }
        visit::visit_expr_call(self, c);
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        let pat = match &l.pat {
            Pat::Type(pt) => &*pt.pat,
            p => p,
        };
        if let (Pat::Ident(id), Some(init)) = (pat, &l.init) {
            if let Some(o) = opt::local_of(&init.expr) {
                self.opt_locals.insert(id.ident.to_string(), o);
            }
            // A clock value bound in the body (`let waited = now - sent_at`): the function's
            // bindings are read before the body is.
            let idents = super::Binding::idents_of(&init.expr);
            if idents.iter().any(|i| self.instants.contains(i))
                || reads_clock(&words_of(&init.expr))
            {
                self.instants.insert(id.ident.to_string());
            }
        }
        visit::visit_local(self, l);
        // After the initialiser: `let sub = sub.renew()` reads the outer one.
        if self.closure_depth == 0 && self.loop_depth == 0 {
            let mut names = Idents(BTreeSet::new());
            names.visit_pat(&l.pat);
            self.bound_here.extend(names.0);
        }
    }

    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        self.closure_depth += 1;
        visit::visit_expr_closure(self, c);
        self.closure_depth -= 1;
    }

    fn visit_expr_async(&mut self, a: &'ast syn::ExprAsync) {
        self.closure_depth += 1;
        visit::visit_expr_async(self, a);
        self.closure_depth -= 1;
    }

    fn visit_expr_loop(&mut self, e: &'ast syn::ExprLoop) {
        self.enter(e.label.as_ref());
        visit::visit_expr_loop(self, e);
        self.leave(e.label.as_ref());
    }

    fn visit_expr_while(&mut self, e: &'ast syn::ExprWhile) {
        // The condition belongs to the inner loop: a stop signal it reads is not checked by the
        // retry loop between attempts (see `checks_signal`).
        self.enter(e.label.as_ref());
        self.condition(&e.cond);
        visit::visit_expr_while(self, e);
        self.leave(e.label.as_ref());
    }

    fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
        self.visit_expr(&e.expr);
        self.enter(e.label.as_ref());
        self.visit_block(&e.body);
        self.leave(e.label.as_ref());
    }

    fn visit_expr_if(&mut self, e: &'ast syn::ExprIf) {
        self.condition(&e.cond);
        let then_flow = opt::block_flow(&e.then_branch);
        let else_flow = e.else_branch.as_ref().map(|(_, els)| opt::expr_flow(els));
        // `if max.is_none() || n < max.unwrap() { continue }`: an unset cap takes the branch
        // that goes on. (With a branch that gives up, the unset cap gives up: no escape.)
        let cond_escape = (!then_flow.leaves)
            .then(|| opt::escaping_disjunction(&e.cond, &self.opt_locals))
            .flatten();
        // Only a test whose branches do nothing but log (and bind what they log) decides
        // nothing: one that counts or sleeps (`if attempt < max { attempt += 1; sleep() }`)
        // is a cap, if one with no way out.
        let logs_only = |b: &syn::Block| {
            b.stmts.iter().all(|s| {
                matches!(
                    s,
                    syn::Stmt::Macro(_) | syn::Stmt::Local(_) | syn::Stmt::Expr(Expr::Macro(_), _)
                )
            })
        };
        let inert = then_flow.inert()
            && else_flow.as_ref().is_none_or(opt::Flow::inert)
            && logs_only(&e.then_branch)
            && e.else_branch
                .as_ref()
                .is_none_or(|(_, els)| matches!(&**els, Expr::Block(b) if logs_only(&b.block)));
        let unexiting = then_flow.inert() && else_flow.as_ref().is_none_or(opt::Flow::inert);
        let outer = (self.escape.clone(), self.inert_cond, self.unexiting_cond);
        if cond_escape.is_some() {
            self.escape = cond_escape;
        }
        self.inert_cond = inert;
        self.unexiting_cond = unexiting;
        let receives_before = self.receive_calls;
        self.visit_expr(&e.cond);
        let receiving = matches!(&*e.cond, Expr::Let(_)) && self.receive_calls > receives_before;
        (self.escape, self.inert_cond, self.unexiting_cond) = outer;
        // `if let Ok(v) = attempt().await { return v }`: the outcome of an operation is tested
        // like `is_ok()`, and the path past a branch that always leaves is the `Err` one, which
        // goes round. A lock or a parse tested this way is no attempt: the operation must await
        // or be named like a call to another process.
        if let Expr::Let(l) = &*e.cond {
            if is_ok_pattern(&l.pat)
                && ends_in_exit(&e.then_branch, |l| self.leaves_us(l))
                && is_operation(&l.expr)
            {
                self.err_path = true;
            }
        }
        let success = match &*e.cond {
            Expr::Let(l) => success_pattern(&l.pat),
            c => ident_words_of(c)
                .iter()
                .any(|w| w == "success" || w == "ok"),
        };
        // `if let Some(max) = cfg.max_retries { .. }` with no `else` that gives up: an unset cap
        // skips every test in the branch.
        let let_escape = match &*e.cond {
            Expr::Let(l) if opt::is_some_pat(&l.pat) && else_flow.is_none_or(|f| !f.leaves) => {
                opt::option_name(&l.expr)
            }
            _ => None,
        };
        let outer = self.escape.clone();
        if let_escape.is_some() {
            self.escape = let_escape;
        }
        let err = matches!(&*e.cond, Expr::Let(l) if is_err_pattern(&l.pat));
        if err {
            self.err_path_at(super::spans::of(&e.then_branch));
        }
        // `if let Some(msg) = stream.next().await { .. } else { reconnect }`: the stream ended
        // and the branch connects again, so the connection was lost and the `else` branch is
        // the loop's failure path (an empty queue's idle wait connects nothing).
        if let (Expr::Let(l), Some((_, els))) = (&*e.cond, &e.else_branch) {
            let reconnects = words_of(&**els)
                .iter()
                .any(|w| matches!(w.as_str(), "connect" | "reconnect" | "dial" | "resubscribe"));
            if opt::is_some_pat(&l.pat) && stream_ends(&l.expr) && reconnects {
                self.err_path_at(super::spans::of(&els));
            }
        }
        self.success_depth += usize::from(success);
        self.failure_depth += usize::from(err);
        if success || err {
            self.outcomes.push(success);
        }
        self.receiving.push(receiving);
        self.visit_block(&e.then_branch);
        self.receiving.pop();
        if success || err {
            self.outcomes.pop();
        }
        self.success_depth -= usize::from(success);
        self.failure_depth -= usize::from(err);
        self.escape = outer;
        if let Some((_, els)) = &e.else_branch {
            self.visit_expr(els);
        }
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        // `match cfg.max_retries { Some(max) if n >= max => return Err(..), _ => {} }`: the arm
        // an unset cap takes goes on, so the `Some` arms' tests bound nothing then.
        let escape = opt::option_name(&m.expr).filter(|_| {
            m.arms.iter().any(|a| {
                opt::is_none_pat(&a.pat) && a.guard.is_none() && !opt::expr_flow(&a.body).leaves
            })
        });
        for attr in &m.attrs {
            self.visit_attribute(attr);
        }
        let receives_before = self.receive_calls;
        self.visit_expr(&m.expr);
        self.receiving.push(self.receive_calls > receives_before);
        for a in &m.arms {
            let outer = self.escape.clone();
            if escape.is_some() && opt::is_some_pat(&a.pat) {
                self.escape.clone_from(&escape);
            }
            self.visit_arm(a);
            self.escape = outer;
        }
        self.receiving.pop();
    }

    fn visit_arm(&mut self, a: &'ast syn::Arm) {
        if let Some((_, g)) = &a.guard {
            self.condition(g);
        }
        // `Ok(r) if r.status().is_server_error() => sleep`: an answer with a failing status is
        // a failure path, whatever the pattern.
        let failed_status = a
            .guard
            .as_ref()
            .is_some_and(|(_, g)| super::status::guard_fails(g));
        let success = success_pattern(&a.pat) && !failed_status;
        // `other => return other` after an `Err(..)` arm leaves on success and on failure alike.
        let catch_all =
            matches!(&a.pat, Pat::Wild(_)) || matches!(&a.pat, Pat::Ident(i) if i.subpat.is_none());
        let failure = is_err_pattern(&a.pat) || failed_status;
        if failure {
            self.err_path_at(super::spans::of(&a.body));
        }
        // `Err(e) if e.kind() == ErrorKind::Interrupted => continue` repeats a system call the
        // process itself was interrupted in (EINTR, EAGAIN): no remote operation failed.
        let interrupted = failure && {
            let mut w = words_of(&a.pat);
            if let Some((_, g)) = &a.guard {
                w.extend(words_of(&**g));
            }
            w.iter().any(|w| w == "interrupted") || w.contains("would") && w.contains("block")
        };
        self.receiving
            .push(interrupted || self.receiving.last() == Some(&true));
        self.success_depth += usize::from(success);
        self.failure_depth += usize::from(failure);
        self.catch_all_depth += usize::from(catch_all);
        if success || failure {
            self.outcomes.push(success);
        }
        self.visit_pat(&a.pat);
        if let Some((_, g)) = &a.guard {
            let outer = self.escape.clone();
            // `Err(e) if max.is_none() || n < max.unwrap() => { sleep; }`: as for `if`.
            if !opt::expr_flow(&a.body).leaves {
                if let Some(o) = opt::escaping_disjunction(g, &self.opt_locals) {
                    self.escape = Some(o);
                }
            }
            self.visit_expr(g);
            self.escape = outer;
        }
        self.visit_expr(&a.body);
        self.receiving.pop();
        if success || failure {
            self.outcomes.pop();
        }
        self.success_depth -= usize::from(success);
        self.failure_depth -= usize::from(failure);
        self.catch_all_depth -= usize::from(catch_all);
    }

    fn visit_expr_await(&mut self, a: &'ast syn::ExprAwait) {
        self.awaits |= self.closure_depth == 0;
        visit::visit_expr_await(self, a);
    }

    fn visit_expr_continue(&mut self, e: &'ast syn::ExprContinue) {
        if self.closure_depth == 0 && self.targets_us(e.label.as_ref()) {
            self.has_continue = true;
            self.failure_continue |=
                self.outcomes.last() == Some(&false) && self.receiving.last() != Some(&true);
        }
    }

    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Break(b)
                if self.closure_depth == 0
                    && (self.targets_us(b.label.as_ref()) || self.leaves_us(b.label.as_ref())) =>
            {
                self.exit(e, b.expr.as_deref());
            }
            Expr::Return(r) if self.closure_depth == 0 => self.exit(e, r.expr.as_deref()),
            // `continue 'listen` from a reconnect loop inside a listener loop leaves this one
            // like a `break`: on success when it follows a success test.
            Expr::Continue(c) if self.closure_depth == 0 && self.leaves_us(c.label.as_ref()) => {
                self.exit(e, None);
            }
            Expr::Try(t) if self.closure_depth == 0 => {
                self.has_exit = true;
                self.failure_exit = true;
                if self.hands_an_instant(&t.expr) {
                    self.time_check = true;
                    self.bounding_call = true;
                }
            }
            _ => {}
        }
        visit::visit_expr(self, e);
    }

    fn visit_pat_tuple_struct(&mut self, p: &'ast syn::PatTupleStruct) {
        if p.path.segments.last().is_some_and(|s| s.ident == "Err") {
            self.err_path = true;
        }
        visit::visit_pat_tuple_struct(self, p);
    }

    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        use syn::BinOp::{AddAssign, Eq, Ge, Gt, Le, Lt, Ne, SubAssign};
        if super::status::tests_status(b) {
            self.err_path = true;
        }
        match b.op {
            Lt(_) | Le(_) | Gt(_) | Ge(_) | Eq(_) | Ne(_) => {
                let mut words = words_of(&*b.left);
                words.extend(words_of(&*b.right));
                // A guard in the body over a counter from 0 (`if attempt >= n { give up }`,
                // `if attempt < n { go round }`): the attempts it allows depend on whether the
                // counter was already incremented for this attempt when it is compared.
                let counted_first = words.iter().any(|w| self.incremented.contains(w));
                let literal = int_lit(&b.right)
                    .map(|n| (n, false))
                    .or_else(|| int_lit(&b.left).map(|n| (n, true)))
                    .map(|(n, flipped)| {
                        let strict = match b.op {
                            Ge(_) | Lt(_) => !flipped,
                            Gt(_) | Le(_) => flipped,
                            _ => return n,
                        };
                        n + u64::from(!strict) + u64::from(!counted_first)
                    });
                let escape = self.escape.clone().or_else(|| {
                    opt::infinite_default(&b.left, &self.opt_locals)
                        .or_else(|| opt::infinite_default(&b.right, &self.opt_locals))
                });
                // `if waited > 60 { give up }`: a clock value compared is a deadline checked by
                // hand, whatever it is called.
                if !self.inert_cond
                    && !self.unexiting_cond
                    && (self.names_instant(&b.left) || self.names_instant(&b.right))
                {
                    self.time_check = true;
                }
                self.comparisons.push(Comparison {
                    words,
                    literal,
                    escape,
                    inert: self.inert_cond,
                    unexiting: self.unexiting_cond,
                });
            }
            AddAssign(_) | SubAssign(_) => {
                if let Expr::Path(_) | Expr::Field(_) = strip_parens(&b.left) {
                    self.incremented.extend(ident_words_of(&*b.left));
                }
            }
            _ => {}
        }
        visit::visit_expr_binary(self, b);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let name = m.method.to_string();
        if self.closure_depth == 0 && (name == "next" || self.next_item_name(&name)) {
            self.receive_calls += 1;
        }
        match name.as_str() {
            // The outcome of an attempt tested; an HTTP status class is one too (RULES: a
            // retryable status is a failure path).
            "is_err" | "is_ok" | "is_success" | "is_some" | "is_none" | "ok" | "err"
            | "is_server_error" | "is_client_error" => {
                self.err_path = true;
            }
            _ if super::status::looks_up_status(m) => self.err_path = true,
            "tick" => self.has_tick = true,
            // `Future::poll` takes the task's `Context`; a consumer's `poll(timeout)` is a read.
            "poll"
                if ident_words_of(&m.args)
                    .iter()
                    .any(|w| matches!(w.as_str(), "cx" | "context")) =>
            {
                self.drives_futures = true;
            }
            "next" | "next_back" => {
                let w = words_of(&*m.receiver);
                if w.iter().any(|w| STRATEGY_WORDS.contains(&w.as_str())) {
                    self.bounding_call = true;
                }
            }
            _ => {}
        }
        self.note_clock_call(&name);
        if self.note_optional_call(&name) {
            // Its cap is weighed as an attempt check escaped by the unset option.
        } else if self.apis.retry.bounding_methods.contains(&name) {
            self.bounding_call = true;
            if matches!(name.as_str(), "is_expired" | "remaining") {
                self.time_check = true;
            }
        }
        if self.apis.retry.local_retry_calls.contains(&name) {
            self.local_retry = true;
        }
        if self.closure_depth == 0 && self.takes_next_item(&name, &m.receiver) {
            self.next_item = true;
        }
        if self.apis.cancellation.checks.contains(&name) {
            self.checks_signal();
        }
        if name == "load" {
            let w = ident_words_of(&*m.receiver);
            if w.iter()
                .any(|w| self.apis.cancellation.names.iter().any(|n| n == w))
            {
                self.checks_signal();
            }
        }
        visit::visit_expr_method_call(self, m);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let name = super::macros::macro_name(mac);
        if EXIT_MACROS.contains(&name.as_str()) && self.closure_depth == 0 {
            self.has_exit = true;
            self.failure_exit = true;
        }
        if name == "ensure" {
            self.has_exit = true;
            self.failure_exit = true;
            let words = words_of(&mac.tokens);
            self.comparisons.push(Comparison {
                words,
                literal: None,
                escape: None,
                inert: false,
                unexiting: false,
            });
        }
        if name.starts_with("select") {
            self.checks_cancel |= words_of(&mac.tokens)
                .iter()
                .any(|w| self.apis.cancellation.names.iter().any(|n| n == w) || w == "cancelled");
        }
        if let Some(parts) = known_macro_exprs(mac) {
            for (e, _) in &parts {
                self.visit_expr(e);
            }
        }
    }
}

/// The identifier words of a condition that can name a stop signal: the values it reads
/// (`shutdown`, `self.stop`, `stop_flag.load(..)`) and the methods it asks with no argument
/// (`ctx.is_shutdown()`), but not the name of a call that asks about a particular thing
/// (`delegate.cancel_chunk_upload(&range)`, `should_abort(&err)`): such a call is consulted once
/// per attempt and cannot fire during a wait, so there is nothing to race the sleep against.
fn signal_words(cond: &Expr) -> BTreeSet<String> {
    struct V(BTreeSet<String>);
    impl<'ast> Visit<'ast> for V {
        fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
            super::words::split_ident(&i.to_string(), &mut self.0);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if m.args.is_empty() {
                visit::visit_expr_method_call(self, m);
                return;
            }
            self.visit_expr(&m.receiver);
            m.args.iter().for_each(|a| self.visit_expr(a));
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if c.args.is_empty() || !matches!(&*c.func, Expr::Path(_)) {
                visit::visit_expr_call(self, c);
                return;
            }
            c.args.iter().for_each(|a| self.visit_expr(a));
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            self.0.extend(ident_words_of(&m.tokens));
        }
    }
    let mut v = V(BTreeSet::new());
    v.visit_expr(cond);
    v.0
}
