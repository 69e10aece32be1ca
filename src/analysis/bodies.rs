//! The file's function bodies, named closures and structs, gathered in one walk before the analyses run:
//! every analysis that reads a function by name (the give-up helpers a loop asks, the delay a
//! helper returns, the operation a combinator names) looks it up here instead of walking the
//! file again for it.

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
}

impl<'ast> Visit<'ast> for Bodies<'ast> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.fns.push(Body {
            sig: &f.sig,
            block: &f.block,
            in_trait: false,
        });
        visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.fns.push(Body {
            sig: &f.sig,
            block: &f.block,
            in_trait: false,
        });
        visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.fns.push(Body {
                sig: &f.sig,
                block,
                in_trait: true,
            });
        }
        visit::visit_trait_item_fn(self, f);
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
