//! Retry sites around a client that already retries: the attempts multiply.
//!
//! A client retries by itself when the expression it is built from names one of
//! `[retry] retrying_clients` in `rules/apis.toml` (reqwest-middleware's
//! `RetryTransientMiddleware`, tower's `RetryLayer` / `Retry::new`). Such a client is followed
//! as a local of the same function (`let client = ClientBuilder::new(..).with(..).build()`) or
//! as a field of `self` set from such an expression anywhere in the file (`Self { http: .. }`,
//! `self.http = ..`). A loop or combinator retry site that calls a method on it is nested.
//!
//! An SDK client that retries by default (`[retry] retrying_sdks`: an AWS SDK
//! `aws_sdk_ec2::Client::new(&config)`, 3 attempts a call) retries by itself too, unless the
//! file turns the SDK's retries off (`RetryConfig::disabled()`, `retrying_sdk_off`).
//!
//! Deliberately absent: an SDK configuration built in another file that turns retries off
//! (the file's own text is what is read), and clients passed in as parameters. The inner
//! attempt count is read only from a literal `build_with_max_retries(n)` and an SDK's default.

use std::collections::{BTreeMap, HashMap, HashSet};

use quote::ToTokens;
use syn::visit::{self, Visit};
use syn::Expr;

use super::bodies::{Bodies, Kind};
use super::rounds::is_exit_macro;
use super::{span_of, Facts, NestedRetry, SiteKind};
use crate::base::apis::Apis;
use crate::base::source::{SourceFile, Span};

/// One client that retries by itself.
#[derive(Clone)]
struct Retrying {
    /// Where it is configured.
    span: Span,
    /// Which marker made it retrying.
    what: String,
    /// Attempts per call, when literal (`build_with_max_retries(3)` = 4).
    attempts: Option<u64>,
}

/// Find every retry site around a retrying client.
pub(super) fn run(
    bodies: &Bodies<'_>,
    site_nodes: &[Option<usize>],
    src: &SourceFile,
    facts: &Facts,
    apis: &Apis,
) -> Vec<NestedRetry> {
    // Findings are made at loop and combinator sites only; most files have none, and the
    // client scan below prints every initializer.
    if !facts.sites.iter().any(|s| {
        matches!(
            s.kind,
            SiteKind::Loop
                | SiteKind::While
                | SiteKind::For
                | SiteKind::Combinator(_)
                | SiteKind::Wrapper(_)
        )
    }) {
        return Vec::new();
    }
    let mut clients = Clients {
        src,
        apis,
        locals: Vec::new(),
        fields: BTreeMap::new(),
        texts: Vec::new(),
        factories: HashMap::new(),
        made_by: Vec::new(),
        free_fns: HashSet::new(),
        methods: HashSet::new(),
        sdk_retries_off: (apis.retry.retrying_sdk_off.iter())
            .any(|off| src.text.replace(' ', "").contains(off.as_str())),
    };
    clients.read(bodies);
    clients.resolve_factories();
    // Functions of this file that contain a retry site of their own: calling one from another
    // retry site nests the retries (a second retrying helper of the same crate).
    let mut helpers: HashMap<String, usize> = HashMap::new();
    for (i, s) in facts.sites.iter().enumerate() {
        // Only a site that plainly retries (a combinator, or a loop that waits between
        // attempts) makes its function a retrying helper; a loop reading chunks until the end
        // does not.
        let plain = matches!(s.kind, SiteKind::Combinator(_) | SiteKind::Wrapper(_))
            || !s.sleeps.is_empty();
        if !plain {
            continue;
        }
        if let Some(name) = facts
            .item_of(s.function)
            .map(|f| facts.functions[f].name.clone())
        {
            helpers.entry(name).or_insert(i);
        }
    }
    let mut v = Sites {
        src,
        facts,
        clients: &clients,
        helpers: &helpers,
        out: Vec::new(),
    };
    // The loop and combinator sites, in walk order.
    let mut by_node: Vec<(usize, usize)> = (site_nodes.iter().enumerate())
        .filter(|(site, _)| {
            matches!(
                facts.sites[*site].kind,
                SiteKind::Loop
                    | SiteKind::While
                    | SiteKind::For
                    | SiteKind::Combinator(_)
                    | SiteKind::Wrapper(_)
            )
        })
        .filter_map(|(site, n)| n.map(|n| (n, site)))
        .collect();
    by_node.sort_unstable();
    for (node, site) in by_node {
        if let Some(e) = bodies.expr(node) {
            v.site(site, e);
        }
    }
    v.out
}

struct Clients<'a> {
    src: &'a SourceFile,
    apis: &'a Apis,
    /// Locals: (name, where bound, the client).
    locals: Vec<(String, Span, Retrying)>,
    /// Fields of `self`: name -> the client.
    fields: BTreeMap<String, Retrying>,
    /// Every local's initializer, compact text.
    texts: Vec<(String, String)>,
    /// Functions of the file that return a retrying client (`fn retrying_client() ->
    /// ClientWithMiddleware { ClientBuilder::new(..).with(RetryTransientMiddleware..).build() }`).
    factories: HashMap<String, Retrying>,
    /// Locals and fields bound to a call of a function of the file, by callee: resolved once
    /// every factory is known, since a factory may be defined after its callers.
    made_by: Vec<(Holder, String)>,
    /// Names of the file's free functions and of its methods.
    free_fns: HashSet<String>,
    methods: HashSet<String>,
    /// The file turns an SDK's own retries off (`RetryConfig::disabled()`).
    sdk_retries_off: bool,
}

/// What holds a client made by a factory call.
enum Holder {
    /// A local: its name and where it is bound.
    Local(String, Span),
    /// A field of `self`.
    Field(String),
}

/// The function a value is the result of (`factory()`, `Self::factory()?`,
/// `self.factory().await`), looking through `?`, `.await`, `unwrap` and kin.
fn factory_call(e: &Expr) -> Option<String> {
    match super::requests::strip_handling(e) {
        Expr::MethodCall(m) if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self")) => {
            Some(m.method.to_string())
        }
        // A bare function or `Self::f`: a longer path names another type's function.
        Expr::Call(c) => super::imports::own_fn_name(&c.func),
        _ => None,
    }
}

/// `build_with_max_retries(3)`: 4 attempts per call.
fn max_retries(text: &str) -> Option<u64> {
    let i = text.find("build_with_max_retries(")?;
    let rest = &text[i + "build_with_max_retries(".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<u64>().ok().map(|n| n + 1)
}

impl Clients<'_> {
    fn retrying(&self, e: &Expr) -> Option<Retrying> {
        let text = e.to_token_stream().to_string().replace(' ', "");
        if let Some(sdk) = self.retrying_sdk(&text) {
            return Some(Retrying {
                span: span_of(self.src, super::spans::of(&e)),
                what: format!("{sdk}*::Client"),
                // The AWS SDK's standard retry mode: 3 attempts a call.
                attempts: Some(3),
            });
        }
        let what = self.apis.retry.retrying_clients.iter().find(|m| {
            // Whole names only: `MultipartRetry::new` is not tower's `Retry::new`.
            text.match_indices(m.as_str()).any(|(i, _)| {
                !text[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })?;
        // The policy is often a local of its own (`let policy = ..; .with(..(policy))`).
        let attempts = max_retries(&text).or_else(|| {
            self.texts
                .iter()
                .filter(|(name, _)| text.contains(&format!("({name})")))
                .find_map(|(_, t)| max_retries(t))
        });
        Some(Retrying {
            span: span_of(self.src, super::spans::of(&e)),
            what: what.clone(),
            attempts,
        })
    }
}

impl Clients<'_> {
    /// `aws_sdk_s3::Client::new(&config)`, `aws_sdk_ec2::Client::from_conf(conf)`: a client of
    /// an SDK that retries by default, in a file that does not turn its retries off.
    fn retrying_sdk(&self, text: &str) -> Option<&str> {
        let built = text.contains("::Client::new(") || text.contains("::Client::from_conf(");
        if !built || self.sdk_retries_off {
            return None;
        }
        (self.apis.retry.retrying_sdks.iter())
            .find(|p| {
                text.match_indices(p.as_str()).any(|(i, _)| {
                    !text[..i]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
            })
            .map(String::as_str)
    }

    /// Record `name` as a factory when its body's value is a retrying client: built in its
    /// tail, or a local of it that holds one.
    fn factory(&mut self, name: String, body: &syn::Block, first_local: usize) {
        let Some(syn::Stmt::Expr(tail, None)) = body.stmts.last() else {
            return;
        };
        let mut tail = tail;
        // `Ok(client)`, `Arc::new(client)`: the value is still the client.
        while let Expr::Call(c) = tail {
            let Expr::Path(p) = &*c.func else { break };
            let last = p.path.segments.last().map(|s| s.ident.to_string());
            if c.args.len() != 1 || !matches!(last.as_deref(), Some("Ok" | "Some" | "new")) {
                break;
            }
            tail = &c.args[0];
        }
        let made = self.retrying(tail).or_else(|| {
            let Expr::Path(p) = tail else { return None };
            let local = p.path.get_ident()?.to_string();
            self.locals[first_local..]
                .iter()
                .rev()
                .find(|(n, _, _)| *n == local)
                .map(|(_, _, r)| r.clone())
        });
        if let Some(r) = made {
            self.factories.insert(name, r);
        }
    }

    /// Give the locals and fields bound to a factory's result the factory's client.
    fn resolve_factories(&mut self) {
        for (holder, callee) in std::mem::take(&mut self.made_by) {
            let Some(r) = self.factories.get(&callee).cloned() else {
                continue;
            };
            match holder {
                Holder::Local(name, at) => self.locals.push((name, at, r)),
                Holder::Field(name) => {
                    self.fields.entry(name).or_insert(r);
                }
            }
        }
    }
}

/// A function whose nodes [`Clients::read`] is in.
struct Open {
    /// One past its last node.
    end: usize,
    /// Its index in [`Bodies::fns`].
    body: usize,
    /// The local texts of the code around it, given back when it ends.
    outer: Vec<(String, String)>,
    /// Its first local in [`Clients::locals`].
    first: usize,
}

impl<'ast> Clients<'ast> {
    /// Read the file's nodes in walk order: the locals, fields and assignments that hold a
    /// client, and the functions that return one. A policy local is looked up in the function
    /// that builds the client only: each function (not a trait's default method) starts with
    /// no local texts and gets its outer ones back when it ends.
    fn read(&mut self, bodies: &Bodies<'ast>) {
        for d in &bodies.decls {
            self.methods.insert(d.sig.ident.to_string());
        }
        let mut open: Vec<Open> = Vec::new();
        for (i, n) in bodies.nodes.iter().enumerate() {
            while open.last().is_some_and(|o| o.end <= i) {
                self.close(bodies, open.pop());
            }
            // The file's own syntax only, as a plain walk reads it ([`super::bodies::Node::in_macro`]).
            if n.in_macro {
                continue;
            }
            match n.kind {
                Kind::Body(b) => {
                    let f = &bodies.fns[b];
                    let name = f.sig.ident.to_string();
                    if f.free {
                        self.free_fns.insert(name);
                    } else {
                        self.methods.insert(name);
                    }
                    if !f.in_trait {
                        let outer = std::mem::take(&mut self.texts);
                        open.push(Open {
                            end: n.end as usize,
                            body: b,
                            outer,
                            first: self.locals.len(),
                        });
                    }
                }
                Kind::Local(l) => self.local(l),
                Kind::Field(f) => self.field(f),
                Kind::Expr(Expr::Assign(a)) => self.assign(a),
                Kind::Expr(_)
                | Kind::Impl(_)
                | Kind::Named(..)
                | Kind::Decl(_)
                | Kind::Macro(_) => {}
            }
        }
        while let Some(o) = open.pop() {
            self.close(bodies, Some(o));
        }
    }

    /// A function's nodes end: is it a factory? Its outer texts come back.
    fn close(&mut self, bodies: &Bodies<'ast>, open: Option<Open>) {
        let Some(o) = open else { return };
        let f = &bodies.fns[o.body];
        self.factory(f.sig.ident.to_string(), f.block, o.first);
        self.texts = o.outer;
    }

    fn local(&mut self, l: &syn::Local) {
        let pat = match &l.pat {
            syn::Pat::Type(t) => &*t.pat,
            p => p,
        };
        if let (syn::Pat::Ident(id), Some(init)) = (pat, &l.init) {
            let text = init.expr.to_token_stream().to_string().replace(' ', "");
            self.texts.push((id.ident.to_string(), text));
            let at = span_of(self.src, super::spans::of(&l));
            if let Some(r) = self.retrying(&init.expr) {
                self.locals.push((id.ident.to_string(), at, r));
            } else if let Some(callee) = factory_call(&init.expr) {
                self.made_by
                    .push((Holder::Local(id.ident.to_string(), at), callee));
            }
        }
    }

    fn field(&mut self, f: &syn::FieldValue) {
        if let syn::Member::Named(name) = &f.member {
            // `Self { client, .. }` / `client: client`: the latest local of that name.
            let local = match &f.expr {
                Expr::Path(p) => p.path.get_ident().and_then(|id| {
                    (self.locals.iter().rev())
                        .find(|(n, _, _)| id == n)
                        .map(|(_, _, r)| r.clone())
                }),
                _ => None,
            };
            if let Some(r) = local.or_else(|| self.retrying(&f.expr)) {
                self.fields.insert(name.to_string(), r);
            } else if let Some(callee) = factory_call(&f.expr) {
                self.made_by.push((Holder::Field(name.to_string()), callee));
            }
        }
    }

    fn assign(&mut self, a: &syn::ExprAssign) {
        if let Expr::Field(f) = &*a.left {
            if let syn::Member::Named(name) = &f.member {
                if let Some(r) = self.retrying(&a.right) {
                    self.fields.insert(name.to_string(), r);
                }
            }
        }
    }
}

struct Sites<'a> {
    src: &'a SourceFile,
    facts: &'a Facts,
    clients: &'a Clients<'a>,
    /// Function name -> the first retry site inside it.
    helpers: &'a HashMap<String, usize>,
    out: Vec<NestedRetry>,
}

impl Sites<'_> {
    /// The item function around a site.
    fn item_span(&self, site: usize) -> Option<Span> {
        (self.facts.item_of(self.facts.sites[site].function)).map(|f| self.facts.functions[f].span)
    }

    /// A helper of this file, called from the site, that retries by itself.
    fn helper(&self, site: usize, uses: &Uses) -> Option<NestedRetry> {
        let own = (self.facts.item_of(self.facts.sites[site].function))
            .map(|f| self.facts.functions[f].name.clone());
        // A call of a wrapper is a site because it calls the wrapper: that is one layer.
        let wrapper = match &self.facts.sites[site].kind {
            SiteKind::Wrapper(w) => w.rsplit("::").next(),
            _ => None,
        };
        uses.calls.iter().find_map(|(name, method)| {
            // `push()` is a free function, `self.push()` a method: one never names the other.
            let defined = if *method {
                &self.clients.methods
            } else {
                &self.clients.free_fns
            };
            if !defined.contains(name) {
                return None;
            }
            if own.as_deref() == Some(name.as_str()) || wrapper == Some(name.as_str()) {
                // Calling itself is recursion, not a second layer.
                return None;
            }
            let &inner = self.helpers.get(name)?;
            let inner_site = &self.facts.sites[inner];
            Some(NestedRetry {
                site,
                inner: inner_site.anchor,
                what: format!("{name}()"),
                inner_attempts: match inner_site.cap {
                    super::Cap::Literal(n) => Some(n),
                    _ => None,
                },
            })
        })
    }
}

/// Words of an error variant that name a failure a retrying client retries by itself: the
/// transport (a refused or reset connection, a timeout) and the transient statuses (429, 5xx).
const TRANSIENT_VARIANT_WORDS: &[&str] = &[
    "timeout",
    "timed",
    "connect",
    "connection",
    "unavailable",
    "transient",
    "retryable",
    "retry",
    "network",
    "io",
    "request",
    "reqwest",
    "http",
    "status",
    "server",
    "rate",
    "ratelimit",
    "ratelimited",
    "throttle",
    "throttled",
    "throttling",
    "many",
    "overloaded",
    "gateway",
    "transport",
    "middleware",
    "internal",
    "reset",
    "refused",
    "unreachable",
];

/// The loop body of site expression `e` goes round only through `Err` arms that name an
/// error variant of another kind than a retrying client retries (`Err(Error::LeaderChanged)`,
/// `Err(IggyError::LifecycleBusy)`); every other arm of its `match` leaves. Such a loop retries
/// what the client answered on success, a refusal decoded from the body: the client's own
/// retries of transport failures and 5xx do not multiply with it (issue 19: an outer loop that
/// retries a different error than the inner retry is not a nested retry).
fn retries_other_class(e: &Expr) -> bool {
    let body = match e {
        Expr::Loop(l) => &l.body,
        Expr::While(w) => &w.body,
        Expr::ForLoop(f) => &f.body,
        _ => return false,
    };
    let mut matches = body.stmts.iter().filter_map(|s| match s {
        syn::Stmt::Expr(Expr::Match(m), _) => Some(m),
        _ => None,
    });
    let (Some(m), None) = (matches.next(), matches.next()) else {
        return false;
    };
    // A `continue` outside the match is another way round.
    let continues = body.stmts.iter().any(|s| {
        !matches!(s, syn::Stmt::Expr(Expr::Match(_), _)) && {
            let mut f = super::optional_cap::Flow::default();
            f.visit_stmt(s);
            f.continues
        }
    });
    if continues {
        return false;
    }
    let mut other_class = false;
    for arm in &m.arms {
        if always_leaves(&arm.body) {
            continue;
        }
        if !specific_err_variant(&arm.pat) {
            return false;
        }
        other_class = true;
    }
    other_class
}

/// `Err(E::Variant)` / `Err(E::Variant(..))` / `Err(E::Variant { .. })` (or an or-pattern of
/// them) whose variant is not named for a transport or transient failure.
fn specific_err_variant(p: &syn::Pat) -> bool {
    use syn::Pat;
    match p {
        Pat::Or(o) => o.cases.iter().all(specific_err_variant),
        Pat::TupleStruct(t) if t.path.is_ident("Err") && t.elems.len() == 1 => {
            let path = match &t.elems[0] {
                Pat::Path(p) => &p.path,
                Pat::TupleStruct(t) => &t.path,
                Pat::Struct(s) => &s.path,
                _ => return false,
            };
            let Some(last) = path.segments.last() else {
                return false;
            };
            let name = last.ident.to_string();
            if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
                return false;
            }
            let mut words = std::collections::BTreeSet::new();
            super::words::split_ident(&name, &mut words);
            !words
                .iter()
                .any(|w| TRANSIENT_VARIANT_WORDS.contains(&w.as_str()))
        }
        _ => false,
    }
}

/// Every way through `e` leaves the loop: its value (or its block's last statement) is a
/// `return`, a `break`, an `Err(..)?` or an exit macro.
fn always_leaves(e: &Expr) -> bool {
    match e {
        Expr::Return(_) | Expr::Break(_) => true,
        Expr::Try(t) => {
            matches!(&*t.expr, Expr::Call(c) if matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Err")))
        }
        Expr::Macro(m) => is_exit_macro(&m.mac),
        Expr::Block(b) => match b.block.stmts.last() {
            Some(syn::Stmt::Expr(e, _)) => always_leaves(e),
            Some(syn::Stmt::Macro(m)) => is_exit_macro(&m.mac),
            _ => false,
        },
        _ => false,
    }
}

impl Sites<'_> {
    /// Site `site`, written as `e`: does its operation go through a retrying client?
    fn site(&mut self, site: usize, e: &Expr) {
        if retries_other_class(e) {
            return;
        }
        let span = span_of(self.src, super::spans::of(&e));
        let mut uses = Uses::default();
        uses.visit_expr(e);
        let item = self.item_span(site);
        let local = self.clients.locals.iter().find(|(name, at, _)| {
            uses.locals.contains(name)
                && item.is_some_and(|i| i.contains(*at))
                && at.start < span.start
        });
        let client = local
            .map(|(_, _, r)| r)
            .or_else(|| uses.fields.iter().find_map(|f| self.clients.fields.get(f)));
        if let Some(r) = client {
            self.out.push(NestedRetry {
                site,
                inner: r.span,
                what: r.what.clone(),
                inner_attempts: r.attempts,
            });
        } else if let Some(n) = self.helper(site, &uses) {
            self.out.push(n);
        }
    }
}

/// Calls that start a task beside the caller.
const SPAWNS: &[&str] = &["spawn", "spawn_local", "spawn_blocking"];

/// `tokio::spawn(..)`, `task::spawn(..)`, `spawn(..)`: a task started beside the caller. A
/// type's `spawn` (`Retry::spawn(strategy, op)`) is a combinator running its operation.
fn is_spawn_call(c: &syn::ExprCall) -> bool {
    let Expr::Path(p) = &*c.func else {
        return false;
    };
    let segs: Vec<String> = (p.path.segments.iter())
        .map(|s| s.ident.to_string())
        .collect();
    let module =
        segs.len() < 2 || segs[segs.len() - 2].starts_with(|c: char| c.is_ascii_lowercase());
    module && segs.last().is_some_and(|l| SPAWNS.contains(&l.as_str()))
}

/// `tasks.spawn(..)` on a `JoinSet`, a runtime handle.
fn is_spawn_method(m: &syn::ExprMethodCall) -> bool {
    SPAWNS.contains(&m.method.to_string().as_str())
}

/// Receivers of method calls in a site: plain locals and `self.<field>`.
#[derive(Default)]
struct Uses {
    locals: Vec<String>,
    fields: Vec<String>,
    /// Functions called by name (`fetch(..)`) and methods called on `self`, whose failure stays
    /// in the site (not returned, not propagated with `?`).
    calls: Vec<(String, bool)>,
    /// Inside a `return` or a `?`: a failure there leaves the site instead of going round.
    leaving: usize,
    /// The expression visited next is the base of an `.await`: a spawned task awaited there.
    spawn_awaited: bool,
}

impl<'ast> Visit<'ast> for Uses {
    fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
        self.leaving += 1;
        visit::visit_expr_return(self, r);
        self.leaving -= 1;
    }

    fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
        self.leaving += 1;
        visit::visit_expr_try(self, t);
        self.leaving -= 1;
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let Expr::Path(p) = &*c.func {
            if let Some(id) = p.path.get_ident() {
                if self.leaving == 0 {
                    self.calls.push((id.to_string(), false));
                }
            }
        }
        // `tokio::spawn(async { .. })`, `tasks.spawn(..)`: a task the site starts runs beside
        // it, so what it calls is no part of the site's attempt, unless the site awaits it
        // (`spawn(..).await`: its outcome is the attempt's).
        let awaited = std::mem::take(&mut self.spawn_awaited);
        if is_spawn_call(c) && !awaited {
            return;
        }
        visit::visit_expr_call(self, c);
    }

    fn visit_expr_await(&mut self, a: &'ast syn::ExprAwait) {
        self.spawn_awaited = match &*a.base {
            Expr::Call(c) => is_spawn_call(c),
            Expr::MethodCall(m) => is_spawn_method(m),
            _ => false,
        };
        visit::visit_expr_await(self, a);
        self.spawn_awaited = false;
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        // `tasks.spawn(async move { .. })` on a `JoinSet`, a runtime handle: as above.
        let awaited = std::mem::take(&mut self.spawn_awaited);
        if is_spawn_method(m) && !awaited {
            self.visit_expr(&m.receiver);
            return;
        }
        match &*m.receiver {
            Expr::Path(p) if p.path.is_ident("self") && self.leaving == 0 => {
                self.calls.push((m.method.to_string(), true));
            }
            Expr::Path(p) if p.path.is_ident("self") => {}
            Expr::Path(p) => {
                if let Some(id) = p.path.get_ident() {
                    self.locals.push(id.to_string());
                }
            }
            Expr::Field(f) => {
                if let (Expr::Path(p), syn::Member::Named(n)) = (&*f.base, &f.member) {
                    if p.path.is_ident("self") {
                        self.fields.push(n.to_string());
                    }
                }
            }
            _ => {}
        }
        visit::visit_expr_method_call(self, m);
    }
}
