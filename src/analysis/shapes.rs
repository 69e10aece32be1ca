//! Retry sites that are not loops or combinator calls: a `tower::retry::Policy` impl (its
//! `retry` method decides whether to go again, the future it returns is the wait) and a function
//! that calls itself again after a failure (recursive retry).
//!
//! Only the decision is read here: whether the shape is a retry site and what bounds it. The
//! walk in `collect` turns the answer into a [`RetrySite`](super::RetrySite), so sleeps, status
//! tests and Retry-After waits inside the method are seen by every rule like those in a loop.
//! Deliberately absent: `clone_request` (body replay belongs to the body rules) and mutual
//! recursion through a second function.

use syn::visit::{self, Visit};
use syn::{Expr, Pat};

use super::words::ident_words_of;
use super::Cap;

/// Trait names whose `retry` method is a retry decision (tower's and tower-like `Policy`).
const POLICY_TRAITS: &[&str] = &["Policy"];
/// Identifier words of a counter that bounds attempts.
const COUNTER_WORDS: &[&str] = &[
    "attempt",
    "attempts",
    "retry",
    "retries",
    "tries",
    "remaining",
    "left",
    "max",
    "budget",
    "n",
    "count",
];

/// Is `i` an impl of a retry policy trait? (`impl<..> Policy<Req, Res, E> for T`)
#[must_use]
pub(super) fn is_policy_impl(i: &syn::ItemImpl) -> bool {
    i.trait_.as_ref().is_some_and(|(_, path, _)| {
        path.segments
            .last()
            .is_some_and(|s| POLICY_TRAITS.contains(&s.ident.to_string().as_str()))
    }) && i
        .items
        .iter()
        .any(|it| matches!(it, syn::ImplItem::Fn(f) if f.sig.ident == "retry"))
}

/// The attempt cap of a policy's `retry` method: a counter compared or counted down in it.
#[must_use]
pub(super) fn policy_cap(body: &syn::Block) -> Cap {
    let mut v = Counter::default();
    v.visit_block(body);
    if v.counted {
        Cap::Symbolic
    } else {
        // A budget or an attempt count kept elsewhere (`self.budget.withdraw()`): no guess.
        Cap::Unknown
    }
}

/// A function that calls itself after a failure: the cap and the (first) recursive call when it
/// is a recursive retry. Symbolic when an argument counts attempts (`f(n - 1)`,
/// `f(attempt + 1)`), None otherwise.
#[must_use]
pub(super) fn recursion(name: &str, body: &syn::Block) -> Option<(Cap, proc_macro2::Span)> {
    let mut v = SelfCall {
        name,
        failure: 0,
        found: None,
        stepped: std::collections::HashSet::new(),
    };
    v.visit_block(body);
    v.found
}

#[derive(Default)]
struct Counter {
    counted: bool,
}

impl<'ast> Visit<'ast> for Counter {
    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        use syn::BinOp::{Ge, Gt, Le, Lt, SubAssign};
        if matches!(b.op, Lt(_) | Le(_) | Gt(_) | Ge(_) | SubAssign(_)) {
            let w = ident_words_of(b);
            self.counted |= w.iter().any(|w| COUNTER_WORDS.contains(&w.as_str()));
        }
        visit::visit_expr_binary(self, b);
    }
}

struct SelfCall<'n> {
    name: &'n str,
    /// Depth of failure branches (`Err(..)` arms, `if let Err`, `.or_else(..)` closures).
    failure: usize,
    found: Option<(Cap, proc_macro2::Span)>,
    /// Locals of the body bound to a stepped count (`let opts = Opts { max_retries:
    /// opts.max_retries.saturating_sub(1), ..opts }`), handed on by name.
    stepped: std::collections::HashSet<String>,
}

/// Steps a count: `n - 1`, `retries + 1`, `opts.retries.saturating_sub(1)`, anywhere in `e` (a
/// struct literal's field, a tuple), where what is stepped is named like a count: a delay grown
/// or a payload trimmed counts nothing down.
fn steps(e: &Expr) -> bool {
    #[derive(Default)]
    struct Step(bool);
    fn counted(e: &Expr) -> bool {
        ident_words_of(e)
            .iter()
            .any(|w| COUNTER_WORDS.contains(&w.as_str()))
    }
    impl<'ast> Visit<'ast> for Step {
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            let lit = |e: &Expr| matches!(e, Expr::Lit(l) if matches!(l.lit, syn::Lit::Int(_)));
            let other = if lit(&b.right) {
                Some(&*b.left)
            } else if lit(&b.left) {
                Some(&*b.right)
            } else {
                None
            };
            self.0 |= matches!(b.op, syn::BinOp::Sub(_) | syn::BinOp::Add(_))
                && other.is_some_and(counted);
            visit::visit_expr_binary(self, b);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            self.0 |= matches!(
                m.method.to_string().as_str(),
                "saturating_sub"
                    | "checked_sub"
                    | "wrapping_sub"
                    | "saturating_add"
                    | "checked_add"
                    | "wrapping_add"
            ) && counted(&m.receiver);
            visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut v = Step::default();
    v.visit_expr(e);
    v.0
}

impl SelfCall<'_> {
    fn call(
        &mut self,
        at: proc_macro2::Span,
        args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
    ) {
        if self.failure == 0 {
            return;
        }
        // An argument that steps a count, written in place (`n - 1`) or bound to a local of
        // the body first (`let opts = Opts { tries: opts.tries.saturating_sub(1), .. }`).
        let counted = args.iter().any(|a| {
            let mut a = a;
            while let Expr::Reference(r) = a {
                a = &r.expr;
            }
            match a {
                Expr::Binary(b) => matches!(b.op, syn::BinOp::Sub(_) | syn::BinOp::Add(_)),
                Expr::MethodCall(_) => steps(a),
                Expr::Path(p) => p
                    .path
                    .get_ident()
                    .is_some_and(|i| self.stepped.contains(&i.to_string())),
                _ => false,
            }
        });
        let cap = if counted { Cap::Symbolic } else { Cap::None };
        // One counted call bounds the recursion; otherwise point at the first call.
        match &self.found {
            Some((Cap::Symbolic, _)) => {}
            Some(_) if cap != Cap::Symbolic => {}
            _ => self.found = Some((cap, at)),
        }
    }
}

impl<'ast> Visit<'ast> for SelfCall<'_> {
    fn visit_item(&mut self, _: &'ast syn::Item) {}

    fn visit_block(&mut self, b: &'ast syn::Block) {
        // A local stepped in an inner block is gone when the block ends.
        let outer = self.stepped.clone();
        visit::visit_block(self, b);
        self.stepped = outer;
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let (Pat::Ident(id), Some(init)) = (&l.pat, &l.init) {
            let name = id.ident.to_string();
            if steps(&init.expr) {
                self.stepped.insert(name);
            } else {
                self.stepped.remove(&name);
            }
        }
        visit::visit_local(self, l);
    }

    fn visit_arm(&mut self, a: &'ast syn::Arm) {
        let err = is_err_pat(&a.pat);
        self.failure += usize::from(err);
        visit::visit_arm(self, a);
        self.failure -= usize::from(err);
    }

    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        let err = matches!(&*i.cond, Expr::Let(l) if is_err_pat(&l.pat))
            || ident_words_of(&*i.cond).contains("is_err")
            || ident_words_of(&*i.cond).contains("err");
        self.visit_expr(&i.cond);
        self.failure += usize::from(err);
        self.visit_block(&i.then_branch);
        self.failure -= usize::from(err);
        if let Some((_, e)) = &i.else_branch {
            self.visit_expr(e);
        }
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if matches!(&*c.func, Expr::Path(p) if p.path.is_ident(self.name)) {
            self.call(super::spans::of(&c.func), &c.args);
        }
        visit::visit_expr_call(self, c);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if m.method == self.name && matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
        {
            self.call(m.method.span(), &m.args);
        }
        visit::visit_expr_method_call(self, m);
    }
}

fn is_err_pat(p: &Pat) -> bool {
    match p {
        Pat::TupleStruct(t) => t.path.segments.last().is_some_and(|s| s.ident == "Err"),
        Pat::Or(o) => o.cases.iter().any(is_err_pat),
        Pat::Ident(i) => i.subpat.as_ref().is_some_and(|(_, p)| is_err_pat(p)),
        _ => false,
    }
}
