//! Retry sites around a client that already retries: the attempts multiply.
//!
//! A client retries by itself when the expression it is built from names one of
//! `[retry] retrying_clients` in `rules/apis.toml` (reqwest-middleware's
//! `RetryTransientMiddleware`, tower's `RetryLayer` / `Retry::new`). Such a client is followed
//! as a local of the same function (`let client = ClientBuilder::new(..).with(..).build()`) or
//! as a field of `self` set from such an expression anywhere in the file (`Self { http: .. }`,
//! `self.http = ..`). A loop or combinator retry site that calls a method on it is nested.
//!
//! Deliberately absent: AWS SDK clients (whether their config keeps the default retries is
//! decided in another crate's builder, often in another file) and clients passed in as
//! parameters. The inner attempt count is read only from a literal `build_with_max_retries(n)`.

use std::collections::{BTreeMap, HashMap};

use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::Expr;

use super::{span_of, Facts, FnKind, NestedRetry, SiteKind};
use crate::base::apis::Apis;
use crate::base::source::{SourceFile, Span};

/// One client that retries by itself.
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
    file: &syn::File,
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
    };
    clients.visit_file(file);
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
        if let Some(name) = item_of(facts, s.function).map(|f| facts.functions[f].name.clone()) {
            helpers.entry(name).or_insert(i);
        }
    }
    let sites: HashMap<(usize, usize), usize> = facts
        .sites
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            matches!(
                s.kind,
                SiteKind::Loop
                    | SiteKind::While
                    | SiteKind::For
                    | SiteKind::Combinator(_)
                    | SiteKind::Wrapper(_)
            )
        })
        .map(|(i, s)| ((s.span.start, s.span.end), i))
        .collect();
    let mut v = Sites {
        src,
        facts,
        by_span: &sites,
        clients: &clients,
        helpers: &helpers,
        out: Vec::new(),
    };
    v.visit_file(file);
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
            span: span_of(self.src, e.span()),
            what: what.clone(),
            attempts,
        })
    }
}

impl<'ast> Visit<'ast> for Clients<'_> {
    // A policy local is looked up in the function that builds the client only.
    fn visit_item_fn(&mut self, i: &'ast syn::ItemFn) {
        let outer = std::mem::take(&mut self.texts);
        visit::visit_item_fn(self, i);
        self.texts = outer;
    }

    fn visit_impl_item_fn(&mut self, i: &'ast syn::ImplItemFn) {
        let outer = std::mem::take(&mut self.texts);
        visit::visit_impl_item_fn(self, i);
        self.texts = outer;
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        let pat = match &l.pat {
            syn::Pat::Type(t) => &*t.pat,
            p => p,
        };
        if let (syn::Pat::Ident(id), Some(init)) = (pat, &l.init) {
            let text = init.expr.to_token_stream().to_string().replace(' ', "");
            self.texts.push((id.ident.to_string(), text));
            if let Some(r) = self.retrying(&init.expr) {
                let at = span_of(self.src, l.span());
                self.locals.push((id.ident.to_string(), at, r));
            }
        }
        visit::visit_local(self, l);
    }

    fn visit_field_value(&mut self, f: &'ast syn::FieldValue) {
        if let syn::Member::Named(name) = &f.member {
            if let Some(r) = self.retrying(&f.expr) {
                self.fields.insert(name.to_string(), r);
            }
        }
        visit::visit_field_value(self, f);
    }

    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        if let Expr::Field(f) = &*a.left {
            if let syn::Member::Named(name) = &f.member {
                if let Some(r) = self.retrying(&a.right) {
                    self.fields.insert(name.to_string(), r);
                }
            }
        }
        visit::visit_expr_assign(self, a);
    }
}

struct Sites<'a> {
    src: &'a SourceFile,
    facts: &'a Facts,
    by_span: &'a HashMap<(usize, usize), usize>,
    clients: &'a Clients<'a>,
    /// Function name -> the first retry site inside it.
    helpers: &'a HashMap<String, usize>,
    out: Vec<NestedRetry>,
}

/// The item function (not a closure or async block) around `function`.
fn item_of(facts: &Facts, function: Option<usize>) -> Option<usize> {
    let mut f = function;
    while let Some(i) = f {
        if facts.functions[i].kind == FnKind::Item {
            return Some(i);
        }
        f = facts.functions[i].parent;
    }
    None
}

impl Sites<'_> {
    /// The item function around a site.
    fn item_span(&self, site: usize) -> Option<Span> {
        item_of(self.facts, self.facts.sites[site].function).map(|f| self.facts.functions[f].span)
    }

    /// A helper of this file, called from the site, that retries by itself.
    fn helper(&self, site: usize, uses: &Uses) -> Option<NestedRetry> {
        let own = item_of(self.facts, self.facts.sites[site].function)
            .map(|f| self.facts.functions[f].name.clone());
        // A call of a wrapper is a site because it calls the wrapper: that is one layer.
        let wrapper = match &self.facts.sites[site].kind {
            SiteKind::Wrapper(w) => w.rsplit("::").next(),
            _ => None,
        };
        uses.calls.iter().find_map(|name| {
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

impl<'ast> Visit<'ast> for Sites<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        let span = span_of(self.src, e.span());
        if let Some(&site) = self.by_span.get(&(span.start, span.end)) {
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
        visit::visit_expr(self, e);
    }
}

/// Receivers of method calls in a site: plain locals and `self.<field>`.
#[derive(Default)]
struct Uses {
    locals: Vec<String>,
    fields: Vec<String>,
    /// Functions called by name (`fetch(..)`) and methods called on `self`, whose failure stays
    /// in the site (not returned, not propagated with `?`).
    calls: Vec<String>,
    /// Inside a `return` or a `?`: a failure there leaves the site instead of going round.
    leaving: usize,
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
                    self.calls.push(id.to_string());
                }
            }
        }
        visit::visit_expr_call(self, c);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        match &*m.receiver {
            Expr::Path(p) if p.path.is_ident("self") && self.leaving == 0 => {
                self.calls.push(m.method.to_string());
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
