//! The file's syntax index, gathered in the one walk of the file before the analyses run: its
//! function bodies, named closures and structs, and every expression, `let` and struct-literal
//! field in walk order with its parent, its subtree and its innermost body ([`Node`]).
//!
//! Every analysis that reads a function by name (the give-up helpers a loop asks, the delay a
//! helper returns, the operation a combinator names) looks it up here, and every analysis that
//! needs the expressions of the file (the site a span names, the calls named like a sleep, the
//! locals bound to a client) iterates [`Bodies::nodes`] instead of walking the file again.
//! The arguments of the few macros the analyses read (`select!`, `join!`:
//! [`super::macros::known_macro_exprs`]) are parsed once here, kept in the caller's
//! [`Expansions`], and indexed like any expression, marked [`Node::in_macro`]; every other
//! macro stays opaque, as in a default `syn` walk.

use std::collections::{BTreeSet, HashMap};

use syn::visit::{self, Visit};
use syn::Expr;

use super::macros::{known_macro_exprs, Role};
use super::span_of;
use crate::base::source::{SourceFile, Span};

/// One function-like body: a free function, an inherent or trait-impl method, or a trait's
/// default method, nested ones included.
#[derive(Clone, Copy)]
pub(super) struct Body<'ast> {
    pub sig: &'ast syn::Signature,
    pub block: &'ast syn::Block,
    /// A trait's default method (`trait T { fn f() { .. } }`).
    pub in_trait: bool,
    /// A free function (`fn f()`, nested ones included), not a method.
    pub free: bool,
    /// The whole item, attributes and signature included.
    pub span: proc_macro2::Span,
    /// Its attributes (`#[test]`).
    pub attrs: &'ast [syn::Attribute],
    /// Its node in [`Bodies::nodes`].
    pub node: usize,
}

/// Where the parsed arguments of the file's known macros live while its index is read: a
/// macro's tokens are not syntax in the tree, so their parse is owned beside it.
pub(super) type Expansions = typed_arena::Arena<Vec<(Expr, Role)>>;

/// What one node of the index is.
#[derive(Clone, Copy)]
pub(super) enum Kind<'ast> {
    /// The start of a body: its index in [`Bodies::fns`]. Its subtree is the body's nodes.
    Body(usize),
    Expr(&'ast Expr),
    Local(&'ast syn::Local),
    /// A field of a struct literal (`Self { http: client }`).
    Field(&'ast syn::FieldValue),
    /// An `impl` block: its subtree is its methods.
    Impl(&'ast syn::ItemImpl),
    /// A `static` or `const` item: its name and value.
    Named(&'ast syn::Ident, &'ast Expr),
    /// A trait method without a default body (`fn send(&self);`).
    Decl(&'ast syn::TraitItemFn),
    /// A macro call, in any position. The arguments of a known one are the nodes below it.
    Macro(&'ast syn::Macro),
}

/// One node of the file in walk (pre-)order.
#[derive(Clone, Copy)]
pub(super) struct Node<'ast> {
    pub kind: Kind<'ast>,
    /// The node around it, if any.
    pub parent: Option<u32>,
    /// One past its last descendant: its subtree is `self_index + 1..end`.
    pub end: u32,
    /// The innermost body it is in ([`Bodies::fns`]), if any.
    pub body: Option<u32>,
    /// Inside the parsed arguments of a known macro. The analyses that read the file as a
    /// default `syn` walk would (status tests, waits, nested clients) skip these subtrees.
    pub in_macro: bool,
}

/// Every body of a file, in source order.
#[derive(Default)]
pub(super) struct Bodies<'ast> {
    pub fns: Vec<Body<'ast>>,
    /// Every body, expression, `let` and struct-literal field, in walk order.
    pub nodes: Vec<Node<'ast>>,
    /// Trait methods without a default body (`fn send(&self);`): methods a call may name.
    pub decls: Vec<&'ast syn::TraitItemFn>,
    /// Per body of `fns` (same index), the names it races: a `select!` branch's future (between
    /// `=` and `=>`) or the future of a call named like a timeout (`timeout(d, op)`)
    /// ([`super::rounds::Checkers::races`]).
    pub raced: Vec<BTreeSet<String>>,
    /// The bodies around the current node, innermost last.
    open: Vec<usize>,
    /// The nodes around the current node, innermost last.
    path: Vec<u32>,
    /// Closures bound to a plain local (`let op = || client.get(url).send();`): the local's
    /// name and the closure's body.
    pub closures: Vec<(String, &'ast Expr)>,
    /// Every struct (its fields may be a stop signal the methods read).
    pub structs: Vec<&'ast syn::ItemStruct>,
    /// Every inline module (`mod tests { .. }`).
    pub mods: Vec<&'ast syn::ItemMod>,
    /// Where the known macros' arguments are parsed to.
    expansions: Option<&'ast Expansions>,
    /// How many known macros the current node is inside: the tables other than the nodes are
    /// the file's own syntax only.
    in_macro: usize,
}

impl<'ast> Bodies<'ast> {
    /// The index of `file`; the arguments of its known macros are parsed into `expansions`.
    pub fn of(file: &'ast syn::File, expansions: &'ast Expansions) -> Self {
        let mut b = Bodies {
            expansions: Some(expansions),
            ..Bodies::default()
        };
        b.visit_file(file);
        b
    }

    /// Record a body, and walk it as the current one.
    fn body(&mut self, mut body: Body<'ast>, walk: impl FnOnce(&mut Self)) {
        let index = self.fns.len();
        body.node = self.nodes.len();
        self.fns.push(body);
        self.raced.push(BTreeSet::new());
        self.node(Kind::Body(index), |b| {
            b.open.push(index);
            walk(b);
            b.open.pop();
        });
    }

    /// Record a node, and walk its children under it.
    fn node(&mut self, kind: Kind<'ast>, walk: impl FnOnce(&mut Self)) {
        let at = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        self.nodes.push(Node {
            kind,
            parent: self.path.last().copied(),
            end: at,
            body: self
                .open
                .last()
                .map(|&b| u32::try_from(b).unwrap_or(u32::MAX)),
            in_macro: self.in_macro > 0,
        });
        self.path.push(at);
        walk(self);
        self.path.pop();
        let end = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        self.nodes[at as usize].end = end;
    }

    /// The expression node `i` is, if it is one.
    pub fn expr(&self, i: usize) -> Option<&'ast Expr> {
        match self.nodes[i].kind {
            Kind::Expr(e) => Some(e),
            _ => None,
        }
    }

    /// The nodes right below node `i`, in walk order.
    pub fn children(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let end = self.nodes[i].end as usize;
        // A child's successor is the node past its subtree, computed only inside `i`'s.
        let first = (i + 1 < end).then_some(i + 1);
        std::iter::successors(first, move |&c| {
            let next = self.nodes[c].end as usize;
            (next < end).then_some(next)
        })
    }

    /// The nodes around node `i`, innermost first.
    pub fn ancestors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.nodes[i].parent, |&p| self.nodes[p as usize].parent)
            .map(|p| p as usize)
    }

    /// For each retry site of `sites` (by span), its expression node: the outermost expression
    /// with exactly that span. Only the expressions outside every body and in the bodies that
    /// hold a site are measured: a span costs the depth of its expression, and a deeply
    /// nested expression far from any site (a generated table) would cost its depth squared.
    pub fn site_nodes(&self, src: &SourceFile, sites: &[Span]) -> Vec<Option<usize>> {
        let mut out = vec![None; sites.len()];
        if sites.is_empty() {
            return out;
        }
        let by_span: HashMap<(usize, usize), usize> = (sites.iter().enumerate())
            .map(|(i, s)| ((s.start, s.end), i))
            .collect();
        let holds: Vec<bool> = (self.fns.iter())
            .map(|b| {
                let at = span_of(src, b.span);
                sites.iter().any(|s| at.contains(*s))
            })
            .collect();
        for (i, n) in self.nodes.iter().enumerate() {
            let Kind::Expr(e) = n.kind else { continue };
            if n.in_macro || n.body.is_some_and(|b| !holds[b as usize]) {
                continue;
            }
            let span = span_of(src, super::spans::of(&e));
            if let Some(&site) = by_span.get(&(span.start, span.end)) {
                out[site].get_or_insert(i);
            }
        }
        out
    }

    fn races(&mut self, name: String) {
        if self.in_macro > 0 {
            return;
        }
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
            free: true,
            span: super::spans::of(&f),
            attrs: &f.attrs,
            node: 0,
        };
        self.body(body, |b| visit::visit_item_fn(b, f));
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let body = Body {
            sig: &f.sig,
            block: &f.block,
            in_trait: false,
            free: false,
            span: super::spans::of(&f),
            attrs: &f.attrs,
            node: 0,
        };
        self.body(body, |b| visit::visit_impl_item_fn(b, f));
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            let body = Body {
                sig: &f.sig,
                block,
                in_trait: true,
                free: false,
                span: super::spans::of(&f),
                attrs: &f.attrs,
                node: 0,
            };
            self.body(body, |b| visit::visit_trait_item_fn(b, f));
        } else {
            if self.in_macro == 0 {
                self.decls.push(f);
            }
            self.node(Kind::Decl(f), |b| visit::visit_trait_item_fn(b, f));
        }
    }

    fn visit_expr(&mut self, e: &'ast Expr) {
        self.node(Kind::Expr(e), |b| visit::visit_expr(b, e));
    }

    fn visit_field_value(&mut self, f: &'ast syn::FieldValue) {
        self.node(Kind::Field(f), |b| visit::visit_field_value(b, f));
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let select =
            (m.path.segments.last()).is_some_and(|s| s.ident.to_string().starts_with("select"));
        if select {
            for name in select_futures(m.tokens.clone()) {
                self.races(name);
            }
        }
        self.node(Kind::Macro(m), |b| {
            visit::visit_macro(b, m);
            let (Some(arena), Some(parts)) = (b.expansions, known_macro_exprs(m)) else {
                return;
            };
            let parts: &'ast Vec<(Expr, Role)> = arena.alloc(parts);
            b.in_macro += 1;
            for (e, _) in parts {
                b.visit_expr(e);
            }
            b.in_macro -= 1;
        });
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if self.in_macro == 0 {
            self.mods.push(m);
        }
        visit::visit_item_mod(self, m);
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
        if self.in_macro == 0 {
            self.structs.push(s);
        }
        visit::visit_item_struct(self, s);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        self.node(Kind::Impl(i), |b| visit::visit_item_impl(b, i));
    }

    fn visit_item_static(&mut self, i: &'ast syn::ItemStatic) {
        self.node(Kind::Named(&i.ident, &i.expr), |b| {
            visit::visit_item_static(b, i);
        });
    }

    fn visit_item_const(&mut self, i: &'ast syn::ItemConst) {
        self.node(Kind::Named(&i.ident, &i.expr), |b| {
            visit::visit_item_const(b, i);
        });
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let (syn::Pat::Ident(id), Some(init), 0) = (&l.pat, &l.init, self.in_macro) {
            if let Expr::Closure(c) = &*init.expr {
                self.closures.push((id.ident.to_string(), &c.body));
            }
        }
        self.node(Kind::Local(l), |b| visit::visit_local(b, l));
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::{Bodies, Kind};
    use crate::base::source::{SourceFile, Span};
    use quote::ToTokens;

    /// One line per node: its depth, kind and text, its body and the size of its subtree.
    fn render(b: &Bodies<'_>) -> String {
        let mut out = String::new();
        for (i, n) in b.nodes.iter().enumerate() {
            let (kind, text) = match n.kind {
                Kind::Body(f) => ("body", b.fns[f].sig.ident.to_string()),
                Kind::Expr(e) => ("expr", e.to_token_stream().to_string()),
                Kind::Local(l) => ("let", l.pat.to_token_stream().to_string()),
                Kind::Field(f) => ("field", f.member.to_token_stream().to_string()),
                Kind::Impl(i) => ("impl", i.self_ty.to_token_stream().to_string()),
                Kind::Named(id, _) => ("item", id.to_string()),
                Kind::Decl(f) => ("decl", f.sig.ident.to_string()),
                Kind::Macro(m) => ("macro", m.path.to_token_stream().to_string()),
            };
            let depth = b.ancestors(i).count();
            let body = n
                .body
                .map_or("-".to_string(), |f| b.fns[f as usize].sig.ident.to_string());
            let size = n.end as usize - i - 1;
            let from = if n.in_macro { " (macro)" } else { "" };
            let _ = writeln!(
                out,
                "{}{kind} `{text}` in {body}, {size} below{from}",
                "  ".repeat(depth)
            );
        }
        out
    }

    #[test]
    fn nodes_are_in_walk_order_with_their_body_and_subtree() {
        let text = "fn f() { let x = S { a: g(1) }; fn inner() { h() } }\nconst C: u8 = 2;";
        let file = syn::parse_file(text).unwrap();
        let expansions = super::Expansions::new();
        let b = Bodies::of(&file, &expansions);
        insta::assert_snapshot!(render(&b), @r"
        body `f` in -, 9 below
          let `x` in f, 5 below
            expr `S { a : g (1) }` in f, 4 below
              field `a` in f, 3 below
                expr `g (1)` in f, 2 below
                  expr `g` in f, 0 below
                  expr `1` in f, 0 below
          body `inner` in f, 2 below
            expr `h ()` in inner, 1 below
              expr `h` in inner, 0 below
        item `C` in -, 1 below
          expr `2` in -, 0 below
        ");
        // The body `f` holds its `let` and the body `inner`; the call `g(1)` its path and
        // argument; a leaf nothing.
        assert_eq!(b.children(0).collect::<Vec<_>>(), [1, 7]);
        assert_eq!(b.children(4).collect::<Vec<_>>(), [5, 6]);
        assert_eq!(b.children(5).count(), 0);
        // The file's last node, whose subtree ends the table.
        assert_eq!(b.children(b.nodes.len() - 1).count(), 0);
        assert_eq!(b.children(10).collect::<Vec<_>>(), [11]);
    }

    /// The arguments of a known macro are nodes below it, marked; an unknown macro's are not
    /// parsed. Macro calls, impl blocks and named values are nodes around what they hold.
    #[test]
    fn known_macro_arguments_impls_and_named_values_are_nodes() {
        let text = "static S: u8 = 1;
impl C {
    async fn f(&self) {
        tokio::select! { r = op() => r, _ = stop.cancelled() => { let h = || g(); h() } }
        println!(\"{}\", g());
    }
}";
        let file = syn::parse_file(text).unwrap();
        let expansions = super::Expansions::new();
        let b = Bodies::of(&file, &expansions);
        insta::assert_snapshot!(render(&b), @r"
        item `S` in -, 1 below
          expr `1` in -, 0 below
        impl `C` in -, 15 below
          body `f` in -, 14 below
            macro `tokio :: select` in f, 12 below
              expr `op ()` in f, 1 below (macro)
                expr `op` in f, 0 below (macro)
              expr `r` in f, 0 below (macro)
              expr `stop . cancelled ()` in f, 1 below (macro)
                expr `stop` in f, 0 below (macro)
              expr `{ let h = | | g () ; h () }` in f, 6 below (macro)
                let `h` in f, 3 below (macro)
                  expr `| | g ()` in f, 2 below (macro)
                    expr `g ()` in f, 1 below (macro)
                      expr `g` in f, 0 below (macro)
                expr `h ()` in f, 1 below (macro)
                  expr `h` in f, 0 below (macro)
            macro `println` in f, 0 below
        ");
        // What is read from the file's own syntax only does not take in the macro's.
        assert!(b.closures.is_empty() && b.raced[0].contains("op"));
    }

    #[test]
    fn a_site_is_its_outermost_expression_of_that_span_in_a_body_that_holds_one() {
        let text = "fn f() { loop { (g()) } }\nfn other() { loop { h() } }";
        let src = SourceFile::new("s.rs", text);
        let file = syn::parse_file(text).unwrap();
        let expansions = super::Expansions::new();
        let b = Bodies::of(&file, &expansions);
        let at = |needle: &str| {
            let start = text.find(needle).unwrap();
            Span::new(start, start + needle.len())
        };
        let sites = [at("loop { (g()) }"), at("(g())")];
        let nodes = b.site_nodes(&src, &sites);
        let texts: Vec<String> = nodes
            .iter()
            .map(|n| b.expr(n.unwrap()).unwrap().to_token_stream().to_string())
            .collect();
        assert_eq!(texts, ["loop { (g ()) }", "(g ())"]);
        // `other` holds no site: its expressions are never measured, and nothing matches.
        assert_eq!(b.site_nodes(&src, &[Span::new(0, 0)]), [None]);
        assert_eq!(b.site_nodes(&src, &[]), Vec::<Option<usize>>::new());
    }
}
