//! Pass 1 of the crate index: a small per-file summary of where clients get their timeouts and
//! where those values flow, so the crate can be joined without keeping any syntax tree.
//!
//! A timeout call (`.timeout(d)` in a chain rooted at a known client builder, a request's own
//! `.timeout(d)`, `*req.timeout_mut() = d`, a socket's `set_read_timeout(Some(d))`, a tower
//! `TimeoutLayer` inside a retry layer, a constructor with a built-in timeout) is a *seed*. Each
//! function records, statement by statement, which names its values come from (calls, fields,
//! statics, seeds) and where they go (its return value, a struct field, a static): the flows
//! [`super::index`] follows across files. Retry sites record every name they read.
//!
//! The summary reads the file's index (`bodies::Bodies::nodes`, `select!` / `join!`
//! arguments included) in walk order, with the impl, function and deadline scopes open over
//! their subtrees; it does not walk the file itself. Built beside the file's other facts
//! ([`super::analyze_summarized`], [`super::sites_summarized`]), it shares their index.
//!
//! Deliberately absent: types. Names are joined by spelling (`field:http`, `f:client`), which is
//! what lets a client built in `client/mod.rs` be found in `client/retry.rs`; what no name links
//! gives no finding.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use quote::ToTokens;
use syn::visit::{self, Visit};
use syn::{Expr, Pat};

use super::bodies::{Bodies, Kind};
use super::imports::path_segments;
use super::words::{ident_words_of, words_of};
use super::{span_of, Cap, Deadline, Facts, FnKind, Imports};
use crate::base::apis::Apis;
use crate::base::source::{SourceFile, Span};

/// Words of a duration that show it is derived from the time left, not fixed.
pub const COMPUTED_WORDS: &[&str] = &[
    "remaining",
    "deadline",
    "left",
    "budget",
    "until",
    "min",
    "elapsed",
    "saturating",
    "expiry",
    "expires",
    "rest",
];

/// Where a value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Src {
    /// The timeout call with this index in [`ClientSummary::timeouts`].
    Seed(usize),
    /// A name: `f:<fn>`, `f:<Type>::<fn>`, `field:<name>`, `static:<NAME>`.
    Name(String),
}

/// One timeout that bounds a single attempt.
#[derive(Debug, Clone)]
pub struct TimeoutCall {
    /// The call (primary location).
    pub span: Span,
    /// 1-based line, for notes in other files.
    pub line: usize,
    /// The method or constructor (`timeout`, `read_timeout`, `Client::new`).
    pub method: String,
    /// The duration argument as written.
    pub duration: String,
    /// A built-in default, in seconds (reqwest blocking's 30 s).
    pub default_secs: Option<u64>,
    /// The attempt count when the same configuration chain makes the library retry by itself.
    pub own_retries: Option<String>,
}

/// A retry site with what it reads.
// Its flags are independent facts of the site, copied from the model: no state machine hides
// there.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone)]
pub struct SiteUse {
    /// Where findings point.
    pub anchor: Span,
    /// 1-based line and column of the anchor.
    pub line: usize,
    /// Column.
    pub col: usize,
    /// The enclosing item function's name.
    pub function: Option<String>,
    /// A deadline found in the file (outer wrapper or a manual check).
    pub local_deadline: bool,
    /// A literal attempt cap.
    pub cap: Option<u64>,
    /// Nothing but success ends the site (what `unbounded-retry` reports).
    pub unbounded: bool,
    /// No attempt cap at all (a site that may still give up on some failure).
    pub uncapped: bool,
    /// It re-sends only after the server answered with a status (see
    /// [`super::RetrySite::status_only`]): a timeout ends it, so it multiplies none.
    pub status_only: bool,
    /// Every name the site reads.
    pub reads: BTreeSet<Src>,
    /// The site tests no status and goes round on every error: the names of the functions its
    /// attempt calls, whose status tests decide what it retries (empty otherwise).
    pub status_callees: Vec<String>,
}

/// A function's status test that turns every non-success status into an error.
#[derive(Debug, Clone)]
pub struct StatusGate {
    /// The test (`!resp.status().is_success()`).
    pub span: Span,
    /// 1-based line.
    pub line: usize,
}

/// `timeout(D, attempt)` inside a retry site.
#[derive(Debug, Clone)]
pub struct AttemptTimer {
    /// The callee (primary location).
    pub span: Span,
    /// The duration as written.
    pub duration: String,
    /// Index into [`ClientSummary::sites`].
    pub site: usize,
}

/// A fixed timer in a function that holds no retry site around it ([`ClientSummary::helper_timers`]).
#[derive(Debug, Clone)]
pub struct HelperTimer {
    /// The callee (primary location).
    pub span: Span,
    /// The duration as written.
    pub duration: String,
    /// The function's name as written (for the message).
    pub function: String,
}

/// A value moves from `srcs` into `dest`.
#[derive(Debug, Clone)]
pub struct Flow {
    /// What it is made of.
    pub srcs: BTreeSet<Src>,
    /// Where it goes (a name).
    pub dest: String,
}

/// Everything pass 2 needs from one file.
#[derive(Debug, Clone, Default)]
pub struct ClientSummary {
    /// Display path.
    pub path: String,
    /// Seeds.
    pub timeouts: Vec<TimeoutCall>,
    /// Value flows into names.
    pub flows: Vec<Flow>,
    /// Function key -> everything its body reads.
    pub bodies: HashMap<String, BTreeSet<Src>>,
    /// Retry sites.
    pub sites: Vec<SiteUse>,
    /// `const` / `static` name -> initializer text (for the arithmetic).
    pub consts: HashMap<String, String>,
    /// Function name -> (calls, calls inside a deadline wrapper's future).
    pub calls: HashMap<String, (usize, usize)>,
    /// Per-attempt timers at retry sites.
    pub attempt_timers: Vec<AttemptTimer>,
    /// Function key -> the fixed timers its body wraps around work outside any retry site of
    /// its own (`async fn patch(..) { timeout(API_TIMEOUT, api.patch(..)).await }`): a timer per
    /// attempt of every retry site that calls the function ([`super::index`]).
    pub helper_timers: BTreeMap<String, Vec<HelperTimer>>,
    /// Functions (keys) that compare elapsed or remaining time: a site calling one checks a
    /// deadline in a helper.
    pub time_checks: BTreeSet<String>,
    /// `impl Trait for Type` blocks as (trait, type): a method called on a value typed by the
    /// trait (`client: &dyn Transport`, `C: Transport`) is any of its implementations' methods.
    pub impls: Vec<(String, String)>,
    /// Function key -> its status test that makes every non-success status an error
    /// ([`super::status::gate`]), for functions that hold no retry site of their own.
    pub status_gates: BTreeMap<String, StatusGate>,
}

impl ClientSummary {
    /// Nothing in this file can take part in a cross-file finding.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.timeouts.is_empty()
            && self.flows.is_empty()
            && self.sites.is_empty()
            && self.consts.is_empty()
            && self.calls.is_empty()
            && self.impls.is_empty()
            && self.status_gates.is_empty()
            && self.helper_timers.is_empty()
    }
}

/// Summarise one parsed file (building its index: [`super::summarize_with`] shares the one
/// the file's other facts were read from).
#[must_use]
pub fn summarize(file: &syn::File, src: &SourceFile, apis: &Apis, facts: &Facts) -> ClientSummary {
    let expansions = super::bodies::Expansions::new();
    of_index(&Bodies::of(file, &expansions), src, apis, facts)
}

/// Summarise the file `bodies` indexes.
pub(super) fn of_index(
    bodies: &Bodies<'_>,
    src: &SourceFile,
    apis: &Apis,
    facts: &Facts,
) -> ClientSummary {
    let mut sites_by_span = HashMap::new();
    let mut out = ClientSummary {
        path: src.path.clone(),
        ..ClientSummary::default()
    };
    for (i, s) in facts.sites.iter().enumerate() {
        sites_by_span.insert((s.span.start, s.span.end), i);
        let mut f = s.function;
        let mut function = None;
        while let Some(i) = f {
            let func = &facts.functions[i];
            if func.kind == FnKind::Item {
                function = Some(func.name.clone());
                break;
            }
            f = func.parent;
        }
        let p = src.position(s.anchor.start);
        out.sites.push(SiteUse {
            anchor: s.anchor,
            line: p.line,
            col: p.col,
            function,
            local_deadline: matches!(s.deadline, Some(Deadline::Outer | Deadline::Manual)),
            cap: match s.cap {
                Cap::Literal(n) => Some(n),
                _ => None,
            },
            unbounded: s.known_unbounded(),
            uncapped: s.cap == Cap::None,
            status_only: s.status_only,
            reads: BTreeSet::new(),
            status_callees: Vec::new(),
        });
    }
    for (i, names) in &facts.silent_sites {
        out.sites[*i].status_callees.clone_from(names);
    }
    let mut c = Summarizer {
        src,
        apis,
        imports: &facts.imports,
        facts,
        out,
        sites_by_span,
        locals: HashMap::new(),
        builder_locals: BTreeSet::new(),
        request_locals: BTreeSet::new(),
        computed_locals: BTreeSet::new(),
        typed: HashMap::new(),
        bounds: HashMap::new(),
        keys: Vec::new(),
        impl_ty: Vec::new(),
        seen: HashMap::new(),
        deadline: 0,
        body: BTreeSet::new(),
    };
    c.read(bodies);
    c.out
}

struct Summarizer<'a> {
    src: &'a SourceFile,
    apis: &'a Apis,
    imports: &'a Imports,
    facts: &'a Facts,
    out: ClientSummary,
    sites_by_span: HashMap<(usize, usize), usize>,
    /// Locals of the current function -> what they were made of.
    locals: HashMap<String, BTreeSet<Src>>,
    /// Locals holding a client builder (`let mut b = Client::builder();`).
    builder_locals: BTreeSet<String>,
    /// Locals holding a request not yet sent (`let mut req = client.get(url);`): their own
    /// `.timeout(d)` bounds one attempt like one written in the chain.
    request_locals: BTreeSet<String>,
    /// Locals computed from the time left (`let t = deadline.map_or(d, |d| left(d).min(d))`):
    /// a timeout set to one is not fixed, as if the expression were written in the call.
    computed_locals: BTreeSet<String>,
    /// Locals and parameters of the current function whose declared type names their owner
    /// (`client: &dyn Transport` -> `Transport`), so `client.get(..)` is `f:Transport::get`.
    typed: HashMap<String, String>,
    /// Generic parameters of the current item -> the trait that bounds them (`C: Transport`).
    bounds: HashMap<String, String>,
    /// Names under which the current function's return value is known.
    keys: Vec<String>,
    impl_ty: Vec<String>,
    /// Span start of a recognised timeout call -> its seed index.
    seen: HashMap<usize, Option<usize>>,
    deadline: usize,
    /// What the current function's body reads so far.
    body: BTreeSet<Src>,
}

impl Summarizer<'_> {
    fn span(&self, s: proc_macro2::Span) -> Span {
        span_of(self.src, s)
    }

    fn resolve(&self, path: &syn::Path) -> Vec<String> {
        let mut segs = path_segments(path);
        if segs.first().is_some_and(|s| s == "Self") {
            if let Some(t) = self.impl_ty.last() {
                segs[0].clone_from(t);
            }
        }
        self.imports.resolve(&segs)
    }

    /// The key of a path call: `f:foo` for a free function (also through a module path),
    /// `f:Type::foo` for an associated function (`Self` is the impl's type).
    fn call_key(&self, path: &syn::Path) -> Option<String> {
        let segs = path_segments(path);
        let last = segs.last()?;
        if segs.len() >= 2 {
            let ty = &segs[segs.len() - 2];
            if ty == "Self" {
                return Some(format!("f:{}::{last}", self.cur_ty()));
            }
            if ty.starts_with(|c: char| c.is_ascii_uppercase()) {
                return Some(format!("f:{ty}::{last}"));
            }
        }
        Some(format!("f:{last}"))
    }

    fn cur_ty(&self) -> String {
        self.impl_ty.last().cloned().unwrap_or_default()
    }

    /// `self.x` is a field of the impl's type, and a local or parameter declared with a type
    /// (`client: &dyn Transport`, `c: C` with `C: Transport`) belongs to that type or trait; any
    /// other receiver's type is unknown (`?`), and the index resolves it only when one type of
    /// the crate has such a field.
    fn owner(&self, recv: &Expr) -> String {
        match recv {
            Expr::Path(p) if p.path.is_ident("self") && !self.cur_ty().is_empty() => self.cur_ty(),
            Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|id| self.typed.get(&id.to_string()))
                .cloned()
                .unwrap_or_else(|| "?".into()),
            Expr::Paren(p) => self.owner(&p.expr),
            Expr::Reference(r) => self.owner(&r.expr),
            _ => "?".into(),
        }
    }

    fn flow(&mut self, srcs: BTreeSet<Src>, dest: String) {
        if !srcs.is_empty() {
            self.out.flows.push(Flow { srcs, dest });
        }
    }

    fn flow_return(&mut self, srcs: &BTreeSet<Src>) {
        for k in self.keys.clone() {
            self.flow(srcs.clone(), k);
        }
    }

    /// A `static` or `const`: its value flows into `static:NAME`, and its initializer is kept
    /// for the duration arithmetic.
    fn named_value(&mut self, ident: &syn::Ident, expr: &Expr) {
        let s = self.srcs(expr);
        self.flow(s, format!("static:{ident}"));
        self.out
            .consts
            .insert(ident.to_string(), expr.to_token_stream().to_string());
    }

    /// What the value of `e` is made of: the receivers it calls methods on, the last field it
    /// reads, what it passes through external wrappers (`Arc::new(client)`), closures it runs.
    /// Registers the timeout calls it contains on the way.
    fn srcs(&mut self, e: &Expr) -> BTreeSet<Src> {
        let mut r = Reads {
            s: self,
            out: BTreeSet::new(),
            value: true,
        };
        r.visit_expr(e);
        r.out
    }

    /// Every name `e` mentions (what a site or a function body touches).
    fn reads_all<T: ReadsNode + ?Sized>(&mut self, e: &T) -> BTreeSet<Src> {
        let mut r = Reads {
            s: self,
            out: BTreeSet::new(),
            value: false,
        };
        e.walk(&mut r);
        r.out
    }

    /// Is this chain rooted at a client builder, a builder local, or a request start?
    fn chain(&self, recv: &Expr) -> Chain {
        let mut methods = Vec::new();
        let mut cur = recv;
        loop {
            match cur {
                Expr::MethodCall(m) => {
                    methods.push((m.method.to_string(), m.args.len(), m.args.first().cloned()));
                    cur = &m.receiver;
                }
                Expr::Try(t) => cur = &t.expr,
                Expr::Paren(p) => cur = &p.expr,
                Expr::Reference(r) => cur = &r.expr,
                Expr::Await(a) => {
                    methods.push(("await".into(), 0, None));
                    cur = &a.base;
                }
                _ => break,
            }
        }
        methods.reverse();
        let local = match cur {
            Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
            _ => None,
        };
        let root = match cur {
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => {
                    let res = self.resolve(&p.path);
                    if res.iter().any(|r| self.apis.clients.builders.contains(r)) {
                        Root::Builder(res.first().cloned().unwrap_or_default())
                    } else {
                        Root::Other
                    }
                }
                _ => Root::Other,
            },
            Expr::Path(p) => match p.path.get_ident() {
                Some(id) if self.builder_locals.contains(&id.to_string()) => {
                    Root::Builder(id.to_string())
                }
                _ => Root::Other,
            },
            _ => Root::Other,
        };
        Chain {
            root,
            local,
            methods,
        }
    }

    /// Recognise a timeout method call; returns its seed.
    fn timeout_method(&mut self, m: &syn::ExprMethodCall) -> Option<usize> {
        let name = m.method.to_string();
        if !self.apis.clients.timeouts.contains(&name) || name == "timeout_mut" {
            return None;
        }
        let start = self.span(m.method.span()).start;
        if let Some(s) = self.seen.get(&start) {
            return *s;
        }
        let seed = self.classify(m, &name);
        // Only a seed is remembered: a `let` initializer is read (for its flows) before the
        // statements inside it bind their locals, so a call in a block or `match` arm
        // (`Some(c) => { let mut req = c.get(u); req = req.timeout(t); .. }`) is judged again
        // when the walk reaches it with its locals known.
        if seed.is_some() {
            self.seen.insert(start, seed);
        }
        seed
    }

    fn classify(&mut self, m: &syn::ExprMethodCall, name: &str) -> Option<usize> {
        let arg = m.args.first()?;
        let text = one_line(self.src.slice(self.span(super::spans::of(&arg))));
        let computed = matches!(arg, Expr::Path(p) if p.path.get_ident()
            .is_some_and(|id| self.computed_locals.contains(&id.to_string())));
        if text == "None" || computed || not_fixed(arg) {
            return None;
        }
        let chain = self.chain(&m.receiver);
        let own_retries = self.own_retries(&chain);
        let counts = match (&chain.root, name) {
            // A socket's read timeout bounds the read the site retries.
            (_, "set_read_timeout") => true,
            (Root::Builder(b), _) if b.ends_with("ServiceBuilder::new") => false,
            (Root::Builder(_), _) => true,
            _ => {
                let request = chain.methods.iter().any(|(n, args, _)| {
                    *args >= 1 && self.apis.clients.requests.contains(n) && n != "await"
                }) || chain
                    .local
                    .as_ref()
                    .is_some_and(|l| self.request_locals.contains(l));
                let awaited = chain
                    .methods
                    .iter()
                    .any(|(n, _, _)| n == "await" || n == "send");
                (request && !awaited) || own_retries.is_some()
            }
        };
        if !counts {
            return None;
        }
        let span = Span::new(
            self.span(m.method.span()).start,
            self.span(super::spans::of(&m)).end,
        );
        Some(self.push_timeout(span, name.to_string(), &text, None, own_retries))
    }

    /// `RequestConfig::new().timeout(d).retry_limit(3)`: the count of the configuration's own
    /// retries, unless the same chain also bounds the total.
    fn own_retries(&self, chain: &Chain) -> Option<String> {
        let c = &self.apis.clients;
        if chain.methods.iter().any(|(n, _, _)| c.totals.contains(n)) {
            return None;
        }
        chain.methods.iter().find_map(|(n, _, a)| {
            c.retry_counts
                .contains(n)
                .then(|| a.as_ref().map(|a| a.to_token_stream().to_string()))
                .flatten()
        })
    }

    fn push_timeout(
        &mut self,
        span: Span,
        method: String,
        duration: &str,
        default_secs: Option<u64>,
        own_retries: Option<String>,
    ) -> usize {
        let line = self.src.position(span.start).line;
        self.out.timeouts.push(TimeoutCall {
            span,
            line,
            method,
            duration: duration.to_string(),
            default_secs,
            own_retries,
        });
        self.out.timeouts.len() - 1
    }

    /// A function starts: its locals are its own, its parameters are what its callers pass.
    fn open_fn(&mut self, sig: &syn::Signature) -> FnState {
        let name = sig.ident.to_string();
        let saved = FnState {
            locals: std::mem::take(&mut self.locals),
            builder_locals: std::mem::take(&mut self.builder_locals),
            keys: std::mem::take(&mut self.keys),
            body: std::mem::take(&mut self.body),
            deadline: self.deadline,
            request_locals: std::mem::take(&mut self.request_locals),
            computed_locals: std::mem::take(&mut self.computed_locals),
            typed: std::mem::take(&mut self.typed),
            bounds: self.bounds.clone(),
        };
        add_bounds(&sig.generics, &mut self.bounds);
        self.deadline = 0;
        let ty = self.cur_ty();
        if ty.is_empty() {
            self.keys.push(format!("f:{name}"));
        } else {
            self.keys.push(format!("f:{ty}::{name}"));
        }
        // A parameter is made of what callers pass in that position (`param:<key>#<i>`).
        let typed = sig.inputs.iter().filter_map(|a| match a {
            syn::FnArg::Typed(t) => Some(t),
            syn::FnArg::Receiver(_) => None,
        });
        for (i, t) in typed.enumerate() {
            self.declare(&t.pat, &t.ty);
            let srcs: BTreeSet<Src> = self
                .keys
                .iter()
                .map(|k| Src::Name(format!("param:{k}#{i}")))
                .collect();
            self.bind(&t.pat, &srcs, false);
        }
        saved
    }

    /// A function's nodes end: its tail value is its return, what it reads is its body's, and
    /// the outer function's state comes back.
    fn close_fn(&mut self, block: &syn::Block, saved: Box<FnState>) {
        if let Some(syn::Stmt::Expr(tail, None)) = block.stmts.last() {
            let s = self.srcs(tail);
            self.flow_return(&s);
        }
        self.status_gate(block);
        let mut body = std::mem::take(&mut self.body);
        body.extend(self.reads_all(block));
        for k in self.keys.clone() {
            self.out
                .bodies
                .entry(k)
                .or_default()
                .extend(body.iter().cloned());
        }
        self.locals = saved.locals;
        self.builder_locals = saved.builder_locals;
        self.keys = saved.keys;
        self.body = saved.body;
        self.deadline = saved.deadline;
        self.request_locals = saved.request_locals;
        self.computed_locals = saved.computed_locals;
        self.typed = saved.typed;
        self.bounds = saved.bounds;
    }

    /// Record the current function's status gate, if it has one and no retry site of its own
    /// (a site judges its own tests). Only a body that says `is_success` is scanned.
    fn status_gate(&mut self, block: &syn::Block) {
        let at = self.span(super::spans::of(&block));
        if !self.src.slice(at).contains("is_success")
            || self.facts.sites.iter().any(|s| at.contains(s.span))
        {
            return;
        }
        if let Some(t) = super::status::gate(block) {
            let span = self.span(t);
            let line = self.src.position(span.start).line;
            for k in &self.keys {
                self.out
                    .status_gates
                    .insert(k.clone(), StatusGate { span, line });
            }
        }
    }

    /// `name: Type`: a method called on `name` belongs to the type (or the bounding trait).
    fn declare(&mut self, pat: &Pat, ty: &syn::Type) {
        let Pat::Ident(id) = pat else { return };
        if self.is_request_type(ty) {
            self.request_locals.insert(id.ident.to_string());
        }
        if let Some(owner) = type_owner(ty, &self.bounds) {
            self.typed.insert(id.ident.to_string(), owner);
        }
    }

    /// Is `ty` (through references) a request not yet sent (`reqwest::RequestBuilder`, also
    /// through a glob import)? A crate's own `RequestBuilder` is not: its `timeout` is its own.
    fn is_request_type(&self, ty: &syn::Type) -> bool {
        let syn::Type::Path(p) = peel_type(ty) else {
            return false;
        };
        if p.qself.is_some() {
            return false;
        }
        let known = &self.apis.clients.request_types;
        self.resolve(&p.path).iter().any(|r| known.contains(r))
    }

    /// Is `e` a request not yet sent (`client.get(url)`, `client.post(url).json(&b)`)?
    fn is_request_expr(&self, e: &Expr) -> bool {
        let chain = self.chain(e);
        let c = &self.apis.clients;
        let started = chain
            .methods
            .iter()
            .any(|(n, args, _)| *args >= 1 && c.requests.contains(n));
        // A message made a request: `msg.into_request()`, `tonic::Request::new(msg)`.
        let wrapped = chain
            .methods
            .iter()
            .any(|(n, args, _)| *args == 0 && c.request_conversions.contains(n))
            || self.request_call(e);
        matches!(chain.root, Root::Other)
            && (started || wrapped)
            && !chain
                .methods
                .iter()
                .any(|(n, _, _)| n == "await" || n == "send" || n == "call")
    }

    /// A timeout set on the request held in `recv` (`req.set_timeout(d);`,
    /// `*req.timeout_mut() = d`): the function's body carries it, and so does the local, so a
    /// site sending `req` reads the timeout itself, not only through its function's body.
    fn seed_request(&mut self, recv: &Expr, seed: usize) {
        self.body.insert(Src::Seed(seed));
        if let Expr::Path(p) = recv {
            if let Some(id) = p.path.get_ident() {
                self.locals
                    .entry(id.to_string())
                    .or_default()
                    .insert(Src::Seed(seed));
            }
        }
    }

    /// Is `e` (under `?` or parentheses) a call of a request constructor?
    fn request_call(&self, e: &Expr) -> bool {
        match e {
            Expr::Try(t) => self.request_call(&t.expr),
            Expr::Paren(p) => self.request_call(&p.expr),
            Expr::Call(c) => matches!(&*c.func, Expr::Path(p) if self
                .resolve(&p.path)
                .iter()
                .any(|r| self.apis.clients.request_constructors.contains(r))),
            _ => false,
        }
    }

    fn bind(&mut self, pat: &Pat, srcs: &BTreeSet<Src>, builder: bool) {
        let mut names = Vec::new();
        pat_idents(pat, &mut names);
        for n in names {
            if builder {
                self.builder_locals.insert(n.clone());
            }
            self.locals.insert(n, srcs.clone());
        }
    }

    fn is_builder_expr(&self, e: &Expr) -> bool {
        match e {
            Expr::MethodCall(m) => {
                m.method != "build" && matches!(self.chain(e).root, Root::Builder(_))
            }
            Expr::Call(_) | Expr::Path(_) => matches!(self.chain(e).root, Root::Builder(_)),
            _ => false,
        }
    }

    fn attempt_timer(&mut self, call: &syn::ExprCall, resolved: &[String]) {
        if !resolved
            .iter()
            .any(|r| self.apis.clients.attempt_timers.contains(r))
        {
            return;
        }
        let call_span = self.span(super::spans::of(&call));
        // The innermost site that contains this call (a site inside the call is the other
        // way round: a deadline around the site, which the retry-site model already knows).
        let site = self
            .facts
            .sites
            .iter()
            .enumerate()
            .filter(|(_, s)| s.span.contains(call_span) && s.span != call_span)
            .min_by_key(|(_, s)| s.span.end - s.span.start)
            .map(|(i, _)| i);
        let Some(d) = call.args.first() else {
            return;
        };
        // A timer around a retry site is that site's deadline, whoever calls the function; one
        // under a deadline wrapper is bounded by it.
        if site.is_none()
            && (self.deadline > 0
                || self.keys.is_empty()
                || self.facts.sites.iter().any(|s| call_span.contains(s.span)))
        {
            return;
        }
        let mut words = words_of(d);
        let func = self
            .facts
            .functions
            .iter()
            .rposition(|f| f.span.contains(call_span));
        if let Some(f) = func {
            for w in words.clone() {
                if let Some(b) = self.facts.functions[f].bindings.get(&w) {
                    words.extend(b.words.iter().cloned());
                }
            }
        }
        // A connect timer counts as any other: RULES.md exempts connection setup only from the
        // client timeouts, whose worst case it does not set; a fresh timer per attempt around a
        // connect still makes attempts x timeout with nothing bounding the whole.
        if fixed_words_fail(&words) || not_fixed(d) {
            return;
        }
        let span = self.span(super::spans::of(&call.func));
        let duration = self.src.slice(self.span(super::spans::of(&d))).to_string();
        match site {
            Some(site) => self.out.attempt_timers.push(AttemptTimer {
                span,
                duration,
                site,
            }),
            // A duration the function is handed (`fn timeout(d: Duration, f: F)`, a runtime's
            // own wrapper) is its caller's to choose, perhaps from the time left: no guess.
            None if self
                .srcs(d)
                .iter()
                .any(|s| matches!(s, Src::Name(n) if n.starts_with("param:"))) => {}
            None => {
                let function = func
                    .map(|f| self.facts.functions[f].name.clone())
                    .unwrap_or_default();
                for k in &self.keys {
                    self.out
                        .helper_timers
                        .entry(k.clone())
                        .or_default()
                        .push(HelperTimer {
                            span,
                            duration: duration.clone(),
                            function: function.clone(),
                        });
                }
            }
        }
    }
}

/// Words of a comparison that make it a deadline check.
const TIME_WORDS: &[&str] = &[
    "deadline",
    "elapsed",
    "remaining",
    "expired",
    "expiry",
    "expires",
];

/// `e` binds locals of its own (a `let` in a block of a `match` arm, an `if` branch, a block),
/// outside closures and async blocks, which run later.
fn binds_inside(e: &Expr) -> bool {
    struct V(bool);
    impl<'ast> Visit<'ast> for V {
        fn visit_local(&mut self, _: &'ast syn::Local) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut v = V(false);
    v.visit_expr(e);
    v.0
}

/// A duration argument that is not a fixed per-attempt bound: computed from the time left, or
/// the attempt's own bound handed out by a retry runtime (`attempt.timeout` of
/// `timeoutlint_retry`'s `Attempt`, already capped by the deadline: the fix this rule suggests).
fn not_fixed(arg: &Expr) -> bool {
    struct V(bool);
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_field(&mut self, f: &'ast syn::ExprField) {
            let timeout = matches!(&f.member, syn::Member::Named(m) if m == "timeout");
            if timeout && ident_words_of(&*f.base).contains("attempt") {
                self.0 = true;
            }
            visit::visit_expr_field(self, f);
        }
    }
    let mut v = V(false);
    v.visit_expr(arg);
    v.0 || fixed_words_fail(&words_of(arg))
}

/// An expression's text on one line, for a message: a duration written over several lines
/// (`Duration::from_secs(\n    self.options.secs,\n)`) reads as `Duration::from_secs(self.options.secs)`.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        let glued = out.ends_with(['(', '[', '.']) || word.starts_with([')', ']', '.', ',', '?']);
        if !out.is_empty() && !glued {
            out.push(' ');
        }
        out.push_str(word);
    }
    out.replace(",)", ")")
}

/// The duration is computed from the time left (or absent): not a fixed per-attempt bound.
fn fixed_words_fail(words: &BTreeSet<String>) -> bool {
    words.iter().any(|w| COMPUTED_WORDS.contains(&w.as_str()))
}

enum Root {
    Builder(String),
    Other,
}

struct Chain {
    root: Root,
    /// The local the chain starts from (`req` in `req.timeout(d)`).
    local: Option<String>,
    /// Method names root-first, with their argument count and first argument.
    methods: Vec<(String, usize, Option<Expr>)>,
}

/// Traits every type has or that say nothing about which methods it offers.
const MARKER_TRAITS: &[&str] = &[
    "Send",
    "Sync",
    "Unpin",
    "Sized",
    "Clone",
    "Copy",
    "Debug",
    "Display",
    "Default",
    "Eq",
    "PartialEq",
    "Hash",
    "Ord",
    "PartialOrd",
    "Any",
];
/// Wrappers whose methods are their content's (`Arc<dyn Transport>`, `&Box<C>`).
const TRANSPARENT: &[&str] = &["Arc", "Rc", "Box", "Pin"];

/// The type under any `&`, `&mut`, parentheses and invisible groups: a borrowed request or
/// client is the same request or client for every question asked of it here.
pub(super) fn peel_type(mut ty: &syn::Type) -> &syn::Type {
    loop {
        match ty {
            syn::Type::Reference(r) => ty = &r.elem,
            syn::Type::Paren(p) => ty = &p.elem,
            syn::Type::Group(g) => ty = &g.elem,
            _ => return ty,
        }
    }
}

/// The owner a method called on a value of this type belongs to: the type's name
/// (`Client`), or the trait of a trait object, `impl Trait` or bounded generic; `None` when
/// the type says nothing (a bare generic, a tuple, a fn pointer).
pub(super) fn type_owner(ty: &syn::Type, bounds: &HashMap<String, String>) -> Option<String> {
    match peel_type(ty) {
        syn::Type::TraitObject(t) => first_trait(&t.bounds),
        syn::Type::ImplTrait(t) => first_trait(&t.bounds),
        syn::Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            let name = last.ident.to_string();
            if TRANSPARENT.contains(&name.as_str()) {
                let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
                    return None;
                };
                return a.args.iter().find_map(|g| match g {
                    syn::GenericArgument::Type(t) => type_owner(t, bounds),
                    _ => None,
                });
            }
            if let Some(t) = bounds.get(&name) {
                return Some(t.clone());
            }
            (name.starts_with(|c: char| c.is_ascii_uppercase()) && name != "Self").then_some(name)
        }
        _ => None,
    }
}

/// The first trait of a bound list that names what the value does (not `Send`, `'static`).
fn first_trait<'a>(bounds: impl IntoIterator<Item = &'a syn::TypeParamBound>) -> Option<String> {
    bounds.into_iter().find_map(|b| match b {
        syn::TypeParamBound::Trait(t) if matches!(t.modifier, syn::TraitBoundModifier::None) => {
            let n = t.path.segments.last()?.ident.to_string();
            (!MARKER_TRAITS.contains(&n.as_str())).then_some(n)
        }
        _ => None,
    })
}

/// Generic parameters bounded by a trait, in the parameter list or the `where` clause.
fn add_bounds(g: &syn::Generics, out: &mut HashMap<String, String>) {
    for p in g.type_params() {
        if let Some(t) = first_trait(&p.bounds) {
            out.insert(p.ident.to_string(), t);
        }
    }
    for w in g.where_clause.iter().flat_map(|w| &w.predicates) {
        if let syn::WherePredicate::Type(t) = w {
            if let syn::Type::Path(p) = &t.bounded_ty {
                if let (Some(id), Some(tr)) = (p.path.get_ident(), first_trait(&t.bounds)) {
                    out.insert(id.to_string(), tr);
                }
            }
        }
    }
}

fn pat_idents(p: &Pat, out: &mut Vec<String>) {
    match p {
        Pat::Ident(i) => out.push(i.ident.to_string()),
        Pat::Type(t) => pat_idents(&t.pat, out),
        Pat::Tuple(t) => t.elems.iter().for_each(|e| pat_idents(e, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|e| pat_idents(e, out)),
        Pat::Reference(r) => pat_idents(&r.pat, out),
        _ => {}
    }
}

/// Collects the names an expression reads.
struct Reads<'s, 'a> {
    s: &'s mut Summarizer<'a>,
    out: BTreeSet<Src>,
    /// Only what the value is made of (see [`Summarizer::srcs`]), not every name mentioned.
    value: bool,
}

/// A node [`Reads`] can walk.
trait ReadsNode {
    fn walk(&self, r: &mut Reads<'_, '_>);
}

impl ReadsNode for Expr {
    fn walk(&self, r: &mut Reads<'_, '_>) {
        r.visit_expr(self);
    }
}

impl ReadsNode for syn::Block {
    fn walk(&self, r: &mut Reads<'_, '_>) {
        r.visit_block(self);
    }
}

impl<'ast> Visit<'ast> for Reads<'_, '_> {
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if let Some(id) = p.path.get_ident() {
            let id = id.to_string();
            if let Some(s) = self.s.locals.get(&id) {
                self.out.extend(s.iter().cloned());
                return;
            }
        }
        if let Some(last) = p.path.segments.last() {
            let n = last.ident.to_string();
            if n.len() > 1
                && n.chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            {
                self.out.insert(Src::Name(format!("static:{n}")));
            }
        }
    }

    fn visit_expr_field(&mut self, f: &'ast syn::ExprField) {
        if let syn::Member::Named(id) = &f.member {
            let owner = self.s.owner(&f.base);
            self.out.insert(Src::Name(format!("field:{owner}.{id}")));
            if self.value {
                // `self.config.backoff` is made of `backoff`, not of all of `config`.
                return;
            }
        }
        visit::visit_expr_field(self, f);
    }

    fn visit_expr_struct(&mut self, e: &'ast syn::ExprStruct) {
        // A struct literal's fields flow into `field:` names; the value itself is read back
        // through those, so it carries nothing else.
        if !self.value {
            visit::visit_expr_struct(self, e);
        }
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        let Expr::Path(p) = &*c.func else {
            visit::visit_expr_call(self, c);
            return;
        };
        let key = self.s.call_key(&p.path);
        if let Some(k) = &key {
            self.out.insert(Src::Name(k.clone()));
        }
        let res = self.s.resolve(&p.path);
        if let Some(seed) = self.s.call_seed(c, &res) {
            self.out.insert(Src::Seed(seed));
        }
        if !self.value {
            visit::visit_expr_call(self, c);
            return;
        }
        // Arguments reach a crate function through its parameters; an external wrapper
        // (`Arc::new(client)`, `Ok(client)`) passes them through: a per-call name that the
        // index keeps only when the callee is not a function of the crate.
        let Some(k) = key else { return };
        let mut args = BTreeSet::new();
        for a in &c.args {
            let mut r = Reads {
                s: &mut *self.s,
                out: BTreeSet::new(),
                value: true,
            };
            r.visit_expr(a);
            args.extend(r.out);
        }
        if !args.is_empty() {
            let start = self.s.span(super::spans::of(&c)).start;
            let name = format!("ext:{k}@{}:{start}", self.s.out.path);
            self.s.flow(args, name.clone());
            self.out.insert(Src::Name(name));
        }
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        self.s.config_chain(m);
        let owner = self.s.owner(&m.receiver);
        self.out
            .insert(Src::Name(format!("f:{owner}::{}", m.method)));
        if let Some(s) = self.s.timeout_method(m) {
            self.out.insert(Src::Seed(s));
        }
        if !self.value {
            visit::visit_expr_method_call(self, m);
            return;
        }
        // The result is made of the receiver, of what closures it runs compute
        // (`cell.get_or_init(|| build())`), and of plain arguments only when the method is not
        // one of the crate's (`opt.unwrap_or(&self.default_client)`).
        self.visit_expr(&m.receiver);
        let mut args = BTreeSet::new();
        for a in &m.args {
            if matches!(a, Expr::Closure(_)) {
                self.visit_expr(a);
            } else {
                let mut r = Reads {
                    s: &mut *self.s,
                    out: BTreeSet::new(),
                    value: true,
                };
                r.visit_expr(a);
                args.extend(r.out);
            }
        }
        if !args.is_empty() {
            let start = self.s.span(m.method.span()).start;
            let name = format!("ext:f:{owner}::{}@{}:{start}", m.method, self.s.out.path);
            self.s.flow(args, name.clone());
            self.out.insert(Src::Name(name));
        }
    }

    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        visit::visit_expr_closure(self, c);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Macro bodies are opaque, but the names they mention still link (`format!("{}", self.http)`
        // does not carry a client; a `select!` branch does).
        if let Some(parts) = super::macros::known_macro_exprs(m) {
            for (e, _) in &parts {
                self.visit_expr(e);
            }
        }
    }
}

impl Summarizer<'_> {
    /// `RequestConfig::new().timeout(d).retry_limit(3)`: the retry count comes after the timeout
    /// in the chain, so the outer call registers the timeout it wraps before either is classified.
    fn config_chain(&mut self, m: &syn::ExprMethodCall) {
        let c = &self.apis.clients;
        if !c.retry_counts.iter().any(|r| m.method == r) {
            return;
        }
        let Some(count) = m.args.first() else { return };
        let count = self
            .src
            .slice(self.span(super::spans::of(&count)))
            .to_string();
        if count
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            == "0"
        {
            // No retries: the timeout bounds the only attempt.
            return;
        }
        let mut cur = &*m.receiver;
        while let Expr::MethodCall(inner) = cur {
            let name = inner.method.to_string();
            if c.totals.contains(&name) {
                return;
            }
            if c.timeouts.contains(&name) && name != "timeout_mut" {
                let start = self.span(inner.method.span()).start;
                if self.seen.contains_key(&start) {
                    return;
                }
                let Some(arg) = inner.args.first() else {
                    return;
                };
                let text = one_line(self.src.slice(self.span(super::spans::of(&arg))));
                if text == "None" || not_fixed(arg) {
                    return;
                }
                let span = Span::new(start, self.span(super::spans::of(&inner)).end);
                let s = self.push_timeout(span, name, &text, None, Some(count));
                self.seen.insert(start, Some(s));
                self.body.insert(Src::Seed(s));
                return;
            }
            cur = &inner.receiver;
        }
    }

    /// What a call passes in each position flows into the callee's parameter.
    fn arg_flows<'e>(&mut self, key: &str, args: impl Iterator<Item = &'e Expr>) {
        for (i, a) in args.enumerate() {
            // A closure argument counts: it is how an operation reaches a retry helper
            // (`wrapper.run(|| client.get(url).send())`).
            if matches!(a, Expr::Lit(_)) {
                continue;
            }
            let s = self.srcs(a);
            self.flow(s, format!("param:{key}#{i}"));
        }
    }

    /// A call that is itself a seed: a constructor with a default timeout, or a timeout layer.
    fn call_seed(&mut self, c: &syn::ExprCall, res: &[String]) -> Option<usize> {
        if let Some(d) = self
            .apis
            .clients
            .default_timeouts
            .iter()
            .find(|d| res.contains(&d.path))
            .cloned()
        {
            let span = self.span(super::spans::of(&c));
            if let Some(s) = self.seen.get(&span.start) {
                return *s;
            }
            let mut last = d.path.rsplit("::");
            let (f, ty) = (
                last.next().unwrap_or_default(),
                last.next().unwrap_or_default(),
            );
            let s = self.push_timeout(span, format!("{ty}::{f}"), "", Some(d.secs), None);
            self.seen.insert(span.start, Some(s));
            return Some(s);
        }
        if res
            .iter()
            .any(|r| self.apis.clients.timeout_layers.contains(r))
        {
            return self.timeout_layer(c);
        }
        None
    }

    /// `TimeoutLayer::new(d)` counts only when a retry layer wraps it: an earlier `.layer(..)`
    /// of the same `ServiceBuilder` chain holds a retry combinator.
    fn timeout_layer(&mut self, c: &syn::ExprCall) -> Option<usize> {
        let span = self.span(super::spans::of(&c));
        if let Some(s) = self.seen.get(&span.start) {
            return *s;
        }
        self.seen.insert(span.start, None);
        let innermost = |x: Span| {
            self.facts
                .functions
                .iter()
                .rposition(|f| f.span.contains(x))
        };
        let here = innermost(span);
        let outer = self.facts.sites.iter().position(|s| {
            let between = self.src.slice(Span::new(s.span.end, span.start));
            s.span.end <= span.start
                && innermost(s.span) == here
                && matches!(&s.kind, super::SiteKind::Combinator(p) if p.contains("tower::retry"))
                && between.contains(".layer(")
                && !between.contains(';')
        })?;
        let d = c.args.first()?;
        let d = self.src.slice(self.span(super::spans::of(&d))).to_string();
        let s = self.push_timeout(span, "TimeoutLayer::new".into(), &d, None, None);
        self.seen.insert(span.start, Some(s));
        // The retry layer wraps it: every retried call goes through this timeout.
        self.out.sites[outer].reads.insert(Src::Seed(s));
        Some(s)
    }
}

/// What a function's start set aside of the function around it.
struct FnState {
    locals: HashMap<String, BTreeSet<Src>>,
    builder_locals: BTreeSet<String>,
    keys: Vec<String>,
    body: BTreeSet<Src>,
    deadline: usize,
    request_locals: BTreeSet<String>,
    computed_locals: BTreeSet<String>,
    typed: HashMap<String, String>,
    bounds: HashMap<String, String>,
}

/// A scope open while the nodes are read: it ends at the node `end`.
enum Scope<'ast> {
    /// An `impl` block: the type and bounds around it.
    Impl(HashMap<String, String>),
    /// A function: its block, what it set aside, and for a free function the impl types
    /// around it (a free function is no method of them).
    Fn(&'ast syn::Block, Box<FnState>, Option<Vec<String>>),
    /// The future a deadline wrapper bounds (`timeout(d, fut)`).
    Deadline,
}

impl<'ast> Summarizer<'_> {
    /// Read the file's nodes in walk order, each before the nodes below it, as a walk of the
    /// file would: a scope (impl, function, the future under a deadline) is open over its
    /// subtree and closed at the first node past it.
    fn read(&mut self, bodies: &Bodies<'ast>) {
        let mut open: Vec<(usize, Scope<'ast>)> = Vec::new();
        // Nodes that start a deadline wrapper's future -> the end of its subtree.
        let mut bounded: BTreeMap<usize, usize> = BTreeMap::new();
        // `let client = match cfg { Some(c) => c, None => { let mut b = ..; b = b.timeout(t);
        // b.build()? } }`: a value made from locals of its own blocks is read once they are
        // bound, at the first node past its subtree (innermost first).
        let mut deferred: Vec<(usize, &'ast syn::Local)> = Vec::new();
        for (i, n) in bodies.nodes.iter().enumerate() {
            while deferred.last().is_some_and(|(end, _)| *end <= i) {
                if let Some((_, l)) = deferred.pop() {
                    self.local(l);
                }
            }
            while open.last().is_some_and(|(end, _)| *end <= i) {
                if let Some((_, scope)) = open.pop() {
                    self.close(scope);
                }
            }
            let end = n.end as usize;
            if bounded.remove(&i).is_some() {
                self.deadline += 1;
                open.push((end, Scope::Deadline));
            }
            match n.kind {
                Kind::Impl(i) => open.push((end, self.open_impl(i))),
                Kind::Body(b) => {
                    let f = &bodies.fns[b];
                    let impl_ty = f.free.then(|| std::mem::take(&mut self.impl_ty));
                    let saved = Box::new(self.open_fn(f.sig));
                    open.push((end, Scope::Fn(f.block, saved, impl_ty)));
                }
                Kind::Named(ident, e) => self.named_value(ident, e),
                Kind::Local(l) if l.init.as_ref().is_some_and(|i| binds_inside(&i.expr)) => {
                    deferred.push((end, l));
                }
                Kind::Local(l) => self.local(l),
                Kind::Field(_) | Kind::Decl(_) | Kind::Macro(_) => {}
                Kind::Expr(e) => {
                    if self.expr(e) {
                        // The future is the call's last argument: its last child node.
                        let last = bodies.children(i).last();
                        if let Some(c) = last {
                            bounded.insert(c, bodies.nodes[c].end as usize);
                        }
                    }
                }
            }
        }
        while let Some((_, l)) = deferred.pop() {
            self.local(l);
        }
        while let Some((_, scope)) = open.pop() {
            self.close(scope);
        }
    }

    fn close(&mut self, scope: Scope<'ast>) {
        match scope {
            Scope::Impl(bounds) => {
                self.impl_ty.pop();
                self.bounds = bounds;
            }
            Scope::Fn(block, saved, impl_ty) => {
                self.close_fn(block, saved);
                if let Some(t) = impl_ty {
                    self.impl_ty = t;
                }
            }
            Scope::Deadline => self.deadline -= 1,
        }
    }

    fn open_impl(&mut self, i: &syn::ItemImpl) -> Scope<'ast> {
        let ty = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        if let (Some((_, tr, _)), Some(ty)) = (&i.trait_, &ty) {
            if let Some(t) = tr.segments.last() {
                self.out.impls.push((t.ident.to_string(), ty.clone()));
            }
        }
        let bounds = self.bounds.clone();
        add_bounds(&i.generics, &mut self.bounds);
        self.impl_ty.push(ty.unwrap_or_default());
        Scope::Impl(bounds)
    }

    fn local(&mut self, l: &syn::Local) {
        if let Pat::Type(t) = &l.pat {
            self.declare(&t.pat, &t.ty);
        }
        if let Some(init) = &l.init {
            let s = self.srcs(&init.expr);
            let builder = self.is_builder_expr(&init.expr);
            self.bind(&l.pat, &s, builder);
            let mut names = Vec::new();
            pat_idents(&l.pat, &mut names);
            // A library client or its builder (`reqwest::Client::builder()...build()?`): its
            // methods are the library's, so `client.get(url)` must not link by name to a
            // crate function `get`.
            if let (Root::Builder(b), Pat::Ident(id)) = (self.chain(&init.expr).root, &l.pat) {
                if let Some((ty, _)) = b.rsplit_once("::") {
                    self.typed.insert(id.ident.to_string(), ty.to_string());
                }
            }
            let computed = fixed_words_fail(&words_of(&*init.expr));
            for n in &names {
                if computed {
                    self.computed_locals.insert(n.clone());
                } else {
                    self.computed_locals.remove(n);
                }
            }
            if self.is_request_expr(&init.expr) {
                self.request_locals.extend(names);
            } else {
                for n in names {
                    self.request_locals.remove(&n);
                }
            }
        }
    }

    /// One expression, before the ones below it; `true` when it is a deadline wrapper's call,
    /// whose last argument runs under the deadline.
    fn expr(&mut self, e: &Expr) -> bool {
        if !self.sites_by_span.is_empty()
            && matches!(
                e,
                Expr::Loop(_)
                    | Expr::While(_)
                    | Expr::ForLoop(_)
                    | Expr::Call(_)
                    | Expr::MethodCall(_)
            )
        {
            let sp = self.span(super::spans::of(&e));
            if let Some(&i) = self.sites_by_span.get(&(sp.start, sp.end)) {
                let s = self.reads_all(e);
                self.out.sites[i].reads.extend(s);
            }
            // `ClientBuilder::new(client).with(RetryTransientMiddleware::new_with_policy(p))`:
            // the middleware retries every request of the client it is layered on.
            if let Expr::MethodCall(m) = e {
                if m.method == "with" {
                    for a in &m.args {
                        let sp = self.span(super::spans::of(&a));
                        if let Some(&i) = self.sites_by_span.get(&(sp.start, sp.end)) {
                            let s = self.reads_all(&*m.receiver);
                            self.out.sites[i].reads.extend(s);
                        }
                    }
                }
            }
        }
        match e {
            Expr::Assign(a) => self.assign(a),
            Expr::Struct(e) => self.literal(e),
            Expr::Return(r) => {
                if let Some(e) = &r.expr {
                    let s = self.srcs(e);
                    self.flow_return(&s);
                }
            }
            Expr::Binary(b) => self.binary(b),
            Expr::MethodCall(m) => self.method_call(m),
            Expr::Call(c) => return self.call(c),
            _ => {}
        }
        false
    }

    fn assign(&mut self, a: &syn::ExprAssign) {
        // `*req.timeout_mut() = d`: a request's own timeout.
        if let Expr::Unary(u) = &*a.left {
            if let Expr::MethodCall(m) = &*u.expr {
                if m.method == "timeout_mut"
                    && self
                        .apis
                        .clients
                        .timeouts
                        .iter()
                        .any(|t| t == "timeout_mut")
                {
                    let text = self
                        .src
                        .slice(self.span(super::spans::of(&a.right)))
                        .to_string();
                    if text != "None" && !not_fixed(&a.right) {
                        let span = self.span(m.method.span());
                        let span = Span::new(span.start, self.span(super::spans::of(&a)).end);
                        if !self.seen.contains_key(&span.start) {
                            let s =
                                self.push_timeout(span, "timeout_mut".into(), &text, None, None);
                            self.seen.insert(span.start, Some(s));
                            self.seed_request(&m.receiver, s);
                        }
                    }
                }
            }
        }
        let s = self.srcs(&a.right);
        match &*a.left {
            Expr::Path(p) => {
                if let Some(id) = p.path.get_ident() {
                    let id = id.to_string();
                    if self.is_builder_expr(&a.right) {
                        self.builder_locals.insert(id.clone());
                    }
                    let from_request = self.chain(&a.right).local.as_ref() == Some(&id)
                        && self.request_locals.contains(&id);
                    if from_request || self.is_request_expr(&a.right) {
                        self.request_locals.insert(id.clone());
                    } else {
                        self.request_locals.remove(&id);
                    }
                    self.locals.entry(id).or_default().extend(s);
                }
            }
            Expr::Field(f) => {
                if let syn::Member::Named(id) = &f.member {
                    let owner = self.owner(&f.base);
                    self.flow(s, format!("field:{owner}.{id}"));
                }
            }
            _ => {}
        }
    }

    /// A struct literal: each field is made of what its value is.
    fn literal(&mut self, e: &syn::ExprStruct) {
        let ty = match e.path.segments.last() {
            Some(s) if s.ident == "Self" => self.cur_ty(),
            Some(s) => s.ident.to_string(),
            None => "?".into(),
        };
        for f in &e.fields {
            if let syn::Member::Named(id) = &f.member {
                let s = self.srcs(&f.expr);
                self.flow(s, format!("field:{ty}.{id}"));
            }
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary) {
        use syn::BinOp::{Ge, Gt, Le, Lt};
        if matches!(b.op, Lt(_) | Le(_) | Gt(_) | Ge(_)) {
            let mut w = words_of(&*b.left);
            w.extend(words_of(&*b.right));
            if w.iter().any(|w| TIME_WORDS.contains(&w.as_str())) {
                self.out.time_checks.extend(self.keys.iter().cloned());
            }
        }
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall) {
        self.config_chain(m);
        if !m.args.is_empty() {
            let key = format!("f:{}::{}", self.owner(&m.receiver), m.method);
            self.arg_flows(&key, m.args.iter());
        }
        let n = m.method.to_string();
        let under = self.deadline > 0;
        let e = self.out.calls.entry(n).or_insert((0, 0));
        e.0 += 1;
        e.1 += usize::from(under);
        if let Some(s) = self.timeout_method(m) {
            self.seed_request(&m.receiver, s);
        }
    }

    /// A path call; `true` when it is a deadline wrapper's.
    fn call(&mut self, c: &syn::ExprCall) -> bool {
        let Expr::Path(p) = &*c.func else {
            return false;
        };
        if let Some(last) = p.path.segments.last() {
            let under = self.deadline > 0;
            let e = self
                .out
                .calls
                .entry(last.ident.to_string())
                .or_insert((0, 0));
            e.0 += 1;
            e.1 += usize::from(under);
        }
        let res = self.resolve(&p.path);
        if let Some(seed) = self.call_seed(c, &res) {
            self.body.insert(Src::Seed(seed));
        }
        if let Some(key) = self.call_key(&p.path) {
            self.arg_flows(&key, c.args.iter());
        }
        self.attempt_timer(c, &res);
        !c.args.is_empty() && res.iter().any(|r| self.apis.is_deadline_wrapper(r))
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;
    use crate::base::apis::Apis;
    use crate::base::source::SourceFile;

    /// The client summary of one file's text.
    fn summary_of(text: &str) -> super::ClientSummary {
        let src = SourceFile::new("s.rs", text);
        let file = syn::parse_file(text).unwrap();
        let apis = Apis::builtin();
        let facts = crate::analysis::analyze(&file, &src, &apis);
        super::summarize(&file, &src, &apis, &facts)
    }

    /// The file's nodes are read in scope: a call is under a deadline only inside the future
    /// a deadline wrapper bounds (not in its duration, not after it), a method's key is its
    /// impl's type and a nested free function's is not, and a `select!` branch is read.
    #[test]
    fn calls_are_read_in_their_scopes() {
        let text = "impl Api {
    async fn fetch(&self) {
        let _ = tokio::time::timeout(wait(), async { self.client.get(u).send().await }).await;
        self.client.get(u).send().await;
        tokio::select! {
            r = self.http.post(u).timeout(Duration::from_secs(5)).send() => r,
            _ = stop.cancelled() => {}
        }
        fn helper() -> u64 { 1 }
    }
}";
        let s = summary_of(text);
        assert_eq!(s.calls["send"], (3, 1));
        assert_eq!(s.calls["wait"], (1, 0));
        assert!(s.bodies.contains_key("f:Api::fetch") && s.bodies.contains_key("f:helper"));
        let timeouts: Vec<&str> = s.timeouts.iter().map(|t| t.duration.as_str()).collect();
        assert_eq!(timeouts, ["Duration::from_secs(5)"]);
    }

    /// A client built in a `match` arm's block from a builder local of that block flows on
    /// from the `let` the `match` initialises (read once the block's locals are bound) to the
    /// constructor it is handed to. Near miss: the arm that takes a client given by the caller
    /// carries no timeout of this file.
    #[test]
    fn a_client_built_in_a_match_arm_flows_from_its_let() {
        let text = "impl ClientBuilder {
    fn build(self) -> Client {
        let client = match self.client {
            Some(c) => c,
            None => {
                let mut b = reqwest::Client::builder();
                if let Some(t) = self.request_timeout { b = b.timeout(t); }
                b.build().unwrap()
            }
        };
        Client::from_http_client(client)
    }
}";
        let s = summary_of(text);
        assert_eq!(s.timeouts.len(), 1);
        let seeded: Vec<&str> = s
            .flows
            .iter()
            .filter(|f| f.srcs.contains(&super::Src::Seed(0)))
            .map(|f| f.dest.as_str())
            .collect();
        assert!(
            seeded.iter().any(|d| d.contains("from_http_client")),
            "{seeded:?}"
        );
    }

    #[test]
    fn a_duration_over_several_lines_reads_as_one() {
        assert_eq!(
            one_line("Duration::from_secs(\n    self.options.secs,\n)"),
            "Duration::from_secs(self.options.secs)"
        );
        assert_eq!(one_line("d\n    .min(left)"), "d.min(left)");
        assert_eq!(one_line("a  +\n b"), "a + b");
    }
}
