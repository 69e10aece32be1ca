//! Delays without a random component: waits between attempts that every client computes the
//! same way, so a fleet that failed together retries together.
//!
//! Three shapes, each only where the delay is computed in sight:
//! - a wait at a retry site (a known sleep, or a call named like one: an in-crate `sleep`
//!   wrapper, `executor.delay(d)`) whose duration is a constant, a configured value, or a local
//!   grown by arithmetic, with no random word in the duration, its bindings or the site;
//! - a backoff function (its name says backoff / retry / attempt and it returns a `Duration`)
//!   whose body computes `2^n` / `1 << n` with nothing random;
//! - a backon `ExponentialBuilder` / `FibonacciBuilder` / `ConstantBuilder` chain without
//!   `.with_jitter()` (backon adds none by default).
//!
//! Deliberately absent: a delay that comes from a strategy object (`backoff.next_backoff()`,
//! a `for delay in schedule` variable, a parameter): how it is computed is not visible here, and
//! strategies often jitter. A server-chosen wait belongs to `retry-after-uncapped`.

use std::collections::{BTreeSet, HashMap};

use quote::ToTokens;
use syn::visit::{self, Visit};
use syn::Expr;

use super::bodies::{Bodies, Kind};
use super::words::{split_ident, words_of};
use super::{span_of, Facts, FixedDelay};
use crate::base::source::{SourceFile, Span};

/// Words of a random component.
const RANDOM_WORDS: &[&str] = &[
    "rand",
    "random",
    "jitter",
    "jittered",
    "rng",
    "fastrand",
    "uniform",
    "nanorand",
    "getrandom",
];
/// Names of a wait that is not in `rules/apis.toml`: counted only inside a retry site.
const WAIT_NAMES: &[&str] = &["sleep", "delay", "boxed_sleep", "sleep_for", "delay_for"];
/// Calls on a duration that keep it computed in sight (arithmetic, conversions, getters).
const ARITHMETIC: &[&str] = &[
    "min",
    "max",
    "mul",
    "saturating_mul",
    "checked_mul",
    "mul_f32",
    "mul_f64",
    "pow",
    "saturating_pow",
    "into",
    "clone",
    "unwrap_or",
    "get_duration",
    "as_secs",
    "as_millis",
    "from",
];
/// backon builders, which have no jitter unless `.with_jitter()` is called. A file may name one
/// and no retry word at all (backon's own tests), so they are the rule's triggers too.
pub const BUILDERS: &[&str] = &["ExponentialBuilder", "FibonacciBuilder", "ConstantBuilder"];

/// Find every delay with no random component: the file's nodes in walk order
/// ([`Bodies::nodes`]), each body's bindings read as it opens.
pub(super) fn run(
    bodies: &Bodies<'_>,
    site_nodes: &[Option<usize>],
    src: &SourceFile,
    facts: &Facts,
) -> Vec<FixedDelay> {
    let mut v = Finder {
        src,
        facts,
        known: facts.sleeps.iter().map(|s| s.span.start).collect(),
        bindings: vec![HashMap::new(); bodies.fns.len()],
        site_words: (site_nodes.iter().enumerate())
            .filter_map(|(site, n)| Some((site, words_of(bodies.expr((*n)?)?))))
            .collect(),
        loop_at: None,
        body: None,
        out: Vec::new(),
    };
    let mut i = 0;
    while i < bodies.nodes.len() {
        let node = &bodies.nodes[i];
        // The file's own syntax only, as a plain walk reads it: the parsed macro arguments are
        // for the readers that follow values through them ([`super::bodies::Node::in_macro`]).
        if node.in_macro {
            i = node.end as usize;
            continue;
        }
        v.body = node.body.map(|b| b as usize);
        match node.kind {
            Kind::Body(b) => {
                let f = &bodies.fns[b];
                v.open(b, &f.sig.ident.to_string(), f.sig, f.block);
            }
            Kind::Expr(e) => {
                // The innermost loop around the node, for a wait's pacing of a nested loop.
                v.loop_at = (bodies.ancestors(i)).find_map(|up| match bodies.expr(up) {
                    Some(l @ (Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_))) => {
                        Some(span_of(src, super::spans::of(&l)))
                    }
                    _ => None,
                });
                if v.expr(e) {
                    // The inner calls of a builder chain are the same builder.
                    i = node.end as usize;
                    continue;
                }
            }
            Kind::Local(_)
            | Kind::Field(_)
            | Kind::Impl(_)
            | Kind::Named(..)
            | Kind::Decl(_)
            | Kind::Macro(_) => {}
        }
        i += 1;
    }
    v.out.sort_by_key(|d| (d.span.start, d.span.end));
    v.out.dedup_by_key(|d| d.span.start);
    v.out
}

struct Finder<'a> {
    src: &'a SourceFile,
    facts: &'a Facts,
    known: BTreeSet<usize>,
    /// Per body of [`Bodies::fns`], its locals: name -> every value it was bound or assigned.
    bindings: Vec<HashMap<String, Vec<Expr>>>,
    /// The innermost loop around the current node.
    loop_at: Option<Span>,
    /// The innermost body around the current node.
    body: Option<usize>,
    /// Words of each retry site's code (tokens, so comments do not count).
    site_words: HashMap<usize, BTreeSet<String>>,
    out: Vec<FixedDelay>,
}

impl Finder<'_> {
    /// Body `index` opens: read its bindings, and judge it as a backoff function.
    fn open(&mut self, index: usize, name: &str, sig: &syn::Signature, block: &syn::Block) {
        // Bindings clone every initializer; only a function that waits ever reads them (a known
        // sleep, or a call named like one, which its text then spells).
        let span = span_of(self.src, super::spans::of(&block));
        let text = self.src.slice(span);
        if WAIT_NAMES.iter().any(|w| text.contains(w))
            || self.facts.sleeps.iter().any(|s| span.contains(s.span))
        {
            let mut b = Bindings::default();
            b.visit_block(block);
            self.bindings[index] = b.0;
        }
        self.backoff_fn(name, sig, block);
    }

    /// The bindings of the body around the current node.
    fn locals(&self) -> Option<&HashMap<String, Vec<Expr>>> {
        self.body.map(|b| &self.bindings[b])
    }

    /// `fn backoff(n) -> Duration { Duration::from_secs(2u64.pow(n)) }`.
    fn backoff_fn(&mut self, name: &str, sig: &syn::Signature, block: &syn::Block) {
        let mut name_words = BTreeSet::new();
        split_ident(name, &mut name_words);
        let named = ["backoff", "retry", "attempt", "reconnect"]
            .iter()
            .any(|w| name_words.contains(*w));
        if !named {
            return;
        }
        let returns_duration = match &sig.output {
            syn::ReturnType::Type(_, t) => t.to_token_stream().to_string().contains("Duration"),
            syn::ReturnType::Default => false,
        };
        if !returns_duration || random(&words_of(block)) {
            return;
        }
        let Some(syn::Stmt::Expr(tail, None)) = block.stmts.last() else {
            return;
        };
        let text = tail.to_token_stream().to_string();
        if text.contains("pow") || text.contains("<<") {
            self.out.push(FixedDelay {
                span: span_of(self.src, super::spans::of(&tail)),
                site: None,
            });
        }
    }

    /// When `d` (or a local it names, one step back) computes `2^n` (`pow`, `<<`): the words of
    /// everything involved, to look for a random component.
    fn exponential(&self, d: &Expr) -> Option<BTreeSet<String>> {
        let mut texts = vec![d.to_token_stream().to_string()];
        let mut words = words_of(d);
        if let Some(b) = self.locals() {
            let mut v = Idents(Vec::new());
            v.visit_expr(d);
            for id in v.0 {
                for value in b.get(&id).into_iter().flatten() {
                    texts.push(value.to_token_stream().to_string());
                    words.extend(words_of(value));
                }
            }
        }
        texts
            .iter()
            .any(|t| t.contains("pow") || t.contains("<<"))
            .then_some(words)
    }

    /// The site a byte offset is in (innermost).
    fn site_at(&self, at: usize) -> Option<usize> {
        self.facts
            .sites
            .iter()
            .enumerate()
            .filter(|(_, s)| s.span.start <= at && at < s.span.end)
            .min_by_key(|(_, s)| s.span.end - s.span.start)
            .map(|(i, _)| i)
    }

    fn wait(&mut self, span: Span, duration: Option<&Expr>) {
        let Some(d) = duration else {
            return;
        };
        // `retry-after-uncapped` owns a server-chosen wait; a capped one is not computed here.
        if self
            .facts
            .server_waits
            .iter()
            .any(|w| w.wait.start == span.start)
        {
            return;
        }
        // `2^n` computed right here is a backoff wherever it sits (a reconnect future, a
        // policy); the exponent may come from anywhere.
        if let Some(words) = self.exponential(d) {
            if !random(&words)
                && !self
                    .site_at(span.start)
                    .is_some_and(|s| self.site_words.get(&s).is_some_and(random))
            {
                self.out.push(FixedDelay {
                    span,
                    site: self.site_at(span.start),
                });
            }
            return;
        }
        let Some(site) = self.site_at(span.start) else {
            return;
        };
        // A wait inside a loop nested in the site paces that loop (a `for` over replayed
        // commands), not the site's attempts.
        let site_span = self.facts.sites[site].span;
        if self
            .loop_at
            .is_some_and(|l| site_span.contains(l) && l != site_span)
        {
            return;
        }
        let jittered = self.site_words.get(&site).is_some_and(random);
        if jittered || !self.in_sight(d, 0) {
            return;
        }
        self.out.push(FixedDelay {
            span,
            site: Some(site),
        });
    }

    /// The duration is computed from constants, fields and locals grown by arithmetic, with no
    /// random word and no opaque call on the way.
    fn in_sight(&self, e: &Expr, depth: usize) -> bool {
        if random(&words_of(e)) {
            return false;
        }
        if depth > 4 {
            // A local grown from itself (`d = d * 2`): the cycle adds nothing new.
            return true;
        }
        let mut v = Opaque {
            finder: self,
            depth,
            ok: true,
        };
        v.visit_expr(e);
        v.ok
    }
}

impl Finder<'_> {
    /// Judge one expression; true when it is a backon builder chain, whose inner calls are the
    /// same builder and are not judged again.
    fn expr(&mut self, e: &Expr) -> bool {
        if let Some((span, jitter)) = builder_chain(e) {
            if !jitter {
                self.out.push(FixedDelay {
                    span: span_of(self.src, span),
                    site: None,
                });
            }
            return true;
        }
        match e {
            Expr::Call(c) => {
                let span = span_of(self.src, super::spans::of(&c));
                if doubling_schedule(c) {
                    self.out.push(FixedDelay { span, site: None });
                }
                let named = matches!(&*c.func, Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| WAIT_NAMES.contains(&s.ident.to_string().as_str())));
                if self.known.contains(&span.start) || named {
                    self.wait(span, c.args.first());
                }
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                if WAIT_NAMES.contains(&name.as_str()) && m.args.len() == 1 {
                    self.wait(span_of(self.src, super::spans::of(&m)), m.args.first());
                }
            }
            _ => {}
        }
        false
    }
}

/// `std::iter::successors(Some(d), |last| Some(*last * 2))`: a schedule of growing delays with
/// nothing random.
fn doubling_schedule(c: &syn::ExprCall) -> bool {
    let Expr::Path(p) = &*c.func else {
        return false;
    };
    if p.path
        .segments
        .last()
        .is_none_or(|s| s.ident != "successors")
    {
        return false;
    }
    let Some(Expr::Closure(step)) = c.args.iter().nth(1) else {
        return false;
    };
    let text = step.body.to_token_stream().to_string();
    let grows = text.contains("* 2") || text.contains("mul") || text.contains("pow");
    let durations = words_of(&c.args).contains("duration") || text.contains("backoff");
    grows && durations && !random(&words_of(step))
}

/// A backon builder chain (outermost expression): its span and whether it has jitter (or never
/// retries, `with_max_times(0)`, so cannot retry in lockstep).
fn builder_chain(e: &Expr) -> Option<(proc_macro2::Span, bool)> {
    let mut cur = e;
    let mut jitter = false;
    loop {
        match cur {
            Expr::MethodCall(m) => {
                jitter |= m.method == "with_jitter";
                cur = &m.receiver;
            }
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else {
                    return None;
                };
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                let n = segs.len();
                let is_builder = n >= 2
                    && BUILDERS.contains(&segs[n - 2].as_str())
                    && matches!(segs[n - 1].as_str(), "default" | "new");
                // `with_max_times(0)`: no retry at all, so no lockstep either.
                let no_retry = e
                    .to_token_stream()
                    .to_string()
                    .replace(' ', "")
                    .contains("with_max_times(0)");
                return is_builder.then(|| (super::spans::of(&e), jitter || no_retry));
            }
            _ => return None,
        }
    }
}

/// Finds what makes a duration expression opaque.
struct Opaque<'f, 'a> {
    finder: &'f Finder<'a>,
    depth: usize,
    ok: bool,
}

impl<'ast> Visit<'ast> for Opaque<'_, '_> {
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if m.method == "min" || m.method == "clamp" {
            // The arguments only bound the value; where it comes from is the receiver.
            self.visit_expr(&m.receiver);
            return;
        }
        if !ARITHMETIC.contains(&m.method.to_string().as_str()) {
            // `backoff.next_backoff()`, `strategy.next_delay()`: computed elsewhere.
            self.ok = false;
            return;
        }
        visit::visit_expr_method_call(self, m);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        let typed = matches!(&*c.func, Expr::Path(p) if p.path.segments.len() >= 2
            && p.path.segments.iter().rev().nth(1).is_some_and(|s|
                s.ident.to_string().starts_with(|ch: char| ch.is_ascii_uppercase()) || s.ident == "cmp"));
        if !typed {
            // A helper computes it: judged where it is defined, if anywhere.
            self.ok = false;
            return;
        }
        let min = matches!(&*c.func, Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "min"));
        if min {
            // `cmp::min(grown, bound)`: in sight when any side is; the bound only caps it.
            self.ok = c
                .args
                .iter()
                .any(|a| self.finder.in_sight(a, self.depth + 1));
            return;
        }
        for a in &c.args {
            self.visit_expr(a);
        }
    }

    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        let Some(id) = p.path.get_ident() else {
            return;
        };
        let name = id.to_string();
        if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            // A constant.
            return;
        }
        let values = self
            .finder
            .locals()
            .and_then(|b| b.get(&name))
            .cloned()
            .unwrap_or_default();
        // A parameter or loop variable: its value is not in sight.
        if values.is_empty() {
            self.ok = false;
            return;
        }
        for v in &values {
            if !self.finder.in_sight(v, self.depth + 1) {
                self.ok = false;
                return;
            }
        }
    }

    fn visit_expr_field(&mut self, _: &'ast syn::ExprField) {
        // A configured value (`self.config.retry_delay`): fixed.
    }

    fn visit_macro(&mut self, _: &'ast syn::Macro) {
        self.ok = false;
    }
}

/// Plain identifiers used in an expression.
struct Idents(Vec<String>);

impl<'ast> Visit<'ast> for Idents {
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if let Some(id) = p.path.get_ident() {
            self.0.push(id.to_string());
        }
    }
}

/// Every `let` and assignment of a body (closures included, nested items not).
#[derive(Default)]
struct Bindings(HashMap<String, Vec<Expr>>);

impl<'ast> Visit<'ast> for Bindings {
    fn visit_item(&mut self, _: &'ast syn::Item) {}

    fn visit_local(&mut self, l: &'ast syn::Local) {
        let pat = match &l.pat {
            syn::Pat::Type(t) => &*t.pat,
            p => p,
        };
        if let (syn::Pat::Ident(id), Some(init)) = (pat, &l.init) {
            self.0
                .entry(id.ident.to_string())
                .or_default()
                .push((*init.expr).clone());
        }
        visit::visit_local(self, l);
    }

    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        if let Expr::Path(p) = &*a.left {
            if let Some(id) = p.path.get_ident() {
                self.0
                    .entry(id.to_string())
                    .or_default()
                    .push((*a.right).clone());
            }
        }
        visit::visit_expr_assign(self, a);
    }
}

fn random(words: &BTreeSet<String>) -> bool {
    words.iter().any(|w| RANDOM_WORDS.contains(&w.as_str()))
}
