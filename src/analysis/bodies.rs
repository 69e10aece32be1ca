//! The file's function bodies, named closures and structs, gathered in one walk before the analyses run:
//! every analysis that reads a function by name (the give-up helpers a loop asks, the delay a
//! helper returns, the operation a combinator names) looks it up here instead of walking the
//! file again for it.

use std::collections::BTreeSet;

use syn::visit::{self, Visit};
use syn::Expr;

/// One function-like body: a free function, an inherent or trait-impl method, or a trait's
/// default method, nested ones included.
#[derive(Clone, Copy)]
pub(super) struct Body<'ast> {
    pub sig: &'ast syn::Signature,
    pub block: &'ast syn::Block,
    /// A trait's default method (`trait T { fn f() { .. } }`).
    pub in_trait: bool,
}

/// Every body of a file, in source order.
#[derive(Default)]
pub(super) struct Bodies<'ast> {
    pub fns: Vec<Body<'ast>>,
    /// Per body of `fns` (same index), the names it races: a `select!` branch's future (between
    /// `=` and `=>`) or the future of a call named like a timeout (`timeout(d, op)`)
    /// ([`super::rounds::Checkers::races`]).
    pub raced: Vec<BTreeSet<String>>,
    /// The bodies around the current node, innermost last.
    open: Vec<usize>,
    /// Closures bound to a plain local (`let op = || client.get(url).send();`): the local's
    /// name and the closure's body.
    pub closures: Vec<(String, &'ast Expr)>,
    /// Every struct (its fields may be a stop signal the methods read).
    pub structs: Vec<&'ast syn::ItemStruct>,
}

impl<'ast> Bodies<'ast> {
    pub fn of(file: &'ast syn::File) -> Self {
        let mut b = Bodies::default();
        b.visit_file(file);
        b
    }

    /// Record a body, and walk it as the current one.
    fn body(&mut self, body: Body<'ast>, walk: impl FnOnce(&mut Self)) {
        self.fns.push(body);
        self.raced.push(BTreeSet::new());
        self.open.push(self.fns.len() - 1);
        walk(self);
        self.open.pop();
    }

    fn races(&mut self, name: String) {
        if let Some(&b) = self.open.last() {
            self.raced[b].insert(name);
        }
    }
}

/// The identifiers of a `select!`'s branch futures: what stands between a branch's `=` and its
/// `=>` (`_ = stop => .., r = &mut op => ..`), not what its handler or a log line names.
fn select_futures(tokens: proc_macro2::TokenStream) -> BTreeSet<String> {
    use proc_macro2::{Spacing, TokenTree};
    let mut out = BTreeSet::new();
    let mut in_future = false;
    let mut prev_eq_joint = false;
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Joint => {
                prev_eq_joint = true;
                continue;
            }
            TokenTree::Punct(p) if p.as_char() == '>' && prev_eq_joint => in_future = false,
            TokenTree::Punct(p) if p.as_char() == '=' => in_future = true,
            TokenTree::Punct(p) if p.as_char() == ',' => in_future = false,
            TokenTree::Ident(i) if in_future => {
                out.insert(i.to_string());
            }
            TokenTree::Group(g) if in_future => {
                super::words::for_each_ident(g.stream(), &mut |i| {
                    out.insert(i.to_string());
                });
            }
            _ => {}
        }
        prev_eq_joint = false;
    }
    out
}

impl<'ast> Visit<'ast> for Bodies<'ast> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let body = Body {
            sig: &f.sig,
            block: &f.block,
            in_trait: false,
        };
        self.body(body, |b| visit::visit_item_fn(b, f));
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let body = Body {
            sig: &f.sig,
            block: &f.block,
            in_trait: false,
        };
        self.body(body, |b| visit::visit_impl_item_fn(b, f));
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            let body = Body {
                sig: &f.sig,
                block,
                in_trait: true,
            };
            self.body(body, |b| visit::visit_trait_item_fn(b, f));
        } else {
            visit::visit_trait_item_fn(self, f);
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let select =
            (m.path.segments.last()).is_some_and(|s| s.ident.to_string().starts_with("select"));
        if select {
            for name in select_futures(m.tokens.clone()) {
                self.races(name);
            }
        }
        visit::visit_macro(self, m);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        let timed = matches!(&*c.func, Expr::Path(p) if p.path.segments.last().is_some_and(|s| {
            super::collect::TIMEOUT_NAMES.contains(&s.ident.to_string().as_str())
        }));
        if timed && c.args.len() == 2 {
            if let Expr::Path(p) = &c.args[1] {
                if let Some(id) = p.path.get_ident() {
                    self.races(id.to_string());
                }
            }
        }
        visit::visit_expr_call(self, c);
    }

    fn visit_item_struct(&mut self, s: &'ast syn::ItemStruct) {
        self.structs.push(s);
        visit::visit_item_struct(self, s);
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let (syn::Pat::Ident(id), Some(init)) = (&l.pat, &l.init) {
            if let Expr::Closure(c) = &*init.expr {
                self.closures.push((id.ident.to_string(), &c.body));
            }
        }
        visit::visit_local(self, l);
    }
}
