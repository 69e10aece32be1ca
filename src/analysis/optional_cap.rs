//! Attempt caps that configuration can switch off: `max_retries: Option<u32>` where `None`
//! means "retry forever".
//!
//! The loop scan asks these helpers whether a bound it sees is escaped by the option being
//! `None`. Only escapes written out at the site count (an `is_none()` disjunct, a local bound to
//! one, a `None =>` / `_ =>` arm that goes on, an `unwrap_or(u32::MAX)` default): a cap whose
//! `None` handling lives elsewhere is left to be a plain cap, so what is not visible gives no
//! finding. The option's name must read like an attempt cap (`max_retries`, `retry_limit`), so
//! an `is_none()` on a response or a header is never taken for one.
//!
//! The words matched here need no place in the prefilter: they only refine the cap of a site
//! the loop scan found from words that already let the file through.

use syn::visit::{self, Visit};
use syn::{Expr, Pat};

use super::words::split_ident;

/// Words of an option's name that make it an attempt cap.
const CAP_WORDS: &[&str] = &[
    "max", "retries", "retry", "attempts", "attempt", "tries", "limit", "times", "count",
];
/// Integer types whose `MAX` as a default means "no limit".
const INT_TYPES: &[&str] = &[
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
];

/// A local bound from an optional cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum OptLocal {
    /// `let unlimited = cfg.max_retries.is_none()`: true exactly when there is no cap.
    IsNone(String),
    /// `let max = cfg.max_retries.unwrap_or(u32::MAX)`: a cap no counter reaches when unset.
    Infinite(String),
}

/// The name of an optional cap (`self.config.max_retries` -> `max_retries`), when `e` is a plain
/// place (no call but `as_ref` and kin) whose name reads like an attempt cap.
pub(super) fn option_name(e: &Expr) -> Option<String> {
    let name = match strip(e) {
        Expr::Field(f) => match &f.member {
            syn::Member::Named(id) => id.to_string(),
            syn::Member::Unnamed(_) => return None,
        },
        Expr::Path(p) if p.qself.is_none() => p.path.segments.last()?.ident.to_string(),
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(
                    m.method.to_string().as_str(),
                    "as_ref" | "as_deref" | "clone" | "copied" | "cloned"
                ) =>
        {
            return option_name(&m.receiver);
        }
        _ => return None,
    };
    let mut words = std::collections::BTreeSet::new();
    split_ident(&name, &mut words);
    words
        .iter()
        .any(|w| CAP_WORDS.contains(&w.as_str()))
        .then_some(name)
}

/// `e` is true exactly when the cap is unset: `max.is_none()`, `max.map_or(true, ..)`,
/// `max.is_none_or(..)`, or a local bound to one of those.
pub(super) fn none_test(
    e: &Expr,
    locals: &std::collections::HashMap<String, OptLocal>,
) -> Option<String> {
    match strip(e) {
        Expr::MethodCall(m) => {
            let method = m.method.to_string();
            let escapes = match method.as_str() {
                "is_none" => m.args.is_empty(),
                "is_none_or" => m.args.len() == 1,
                "map_or" => m.args.first().is_some_and(|a| {
                    matches!(strip(a), Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(b), .. }) if b.value)
                }),
                _ => false,
            };
            escapes.then(|| option_name(&m.receiver)).flatten()
        }
        Expr::Path(p) => match locals.get(&p.path.get_ident()?.to_string()) {
            Some(OptLocal::IsNone(name)) => Some(name.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// A disjunction one of whose terms is a [`none_test`]: the condition holds whenever the cap is
/// unset, whatever the other terms (the counter comparisons) say.
pub(super) fn escaping_disjunction(
    cond: &Expr,
    locals: &std::collections::HashMap<String, OptLocal>,
) -> Option<String> {
    match strip(cond) {
        Expr::Binary(b) if matches!(b.op, syn::BinOp::Or(_)) => none_test(&b.left, locals)
            .or_else(|| none_test(&b.right, locals))
            .or_else(|| escaping_disjunction(&b.left, locals))
            .or_else(|| escaping_disjunction(&b.right, locals)),
        _ => None,
    }
}

/// `e` is the cap with "unset" read as "infinite": `max.unwrap_or(u32::MAX)`,
/// `max.unwrap_or(usize::max_value())`, or a local bound to one.
pub(super) fn infinite_default(
    e: &Expr,
    locals: &std::collections::HashMap<String, OptLocal>,
) -> Option<String> {
    match strip(e) {
        Expr::MethodCall(m) if m.method == "unwrap_or" && m.args.len() == 1 => {
            let arg = m.args.first()?;
            is_int_max(arg).then(|| option_name(&m.receiver)).flatten()
        }
        Expr::Path(p) => match locals.get(&p.path.get_ident()?.to_string()) {
            Some(OptLocal::Infinite(name)) => Some(name.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// What a `let` binds, when it is one of the optional-cap shapes.
pub(super) fn local_of(init: &Expr) -> Option<OptLocal> {
    let none = std::collections::HashMap::new();
    none_test(init, &none)
        .map(OptLocal::IsNone)
        .or_else(|| infinite_default(init, &none).map(OptLocal::Infinite))
}

/// `Some(..)` pattern.
pub(super) fn is_some_pat(p: &Pat) -> bool {
    matches!(p, Pat::TupleStruct(t) if t.path.segments.last().is_some_and(|s| s.ident == "Some"))
}

/// `None` or `_` pattern: the arm an unset cap takes.
pub(super) fn is_none_pat(p: &Pat) -> bool {
    match p {
        Pat::Wild(_) => true,
        Pat::Ident(i) => i.ident == "None" && i.subpat.is_none(),
        Pat::Path(pp) => pp.path.segments.last().is_some_and(|s| s.ident == "None"),
        _ => false,
    }
}

/// What a piece of code may do to the loop it is in, outside closures and nested loops.
#[derive(Default)]
#[allow(clippy::struct_excessive_bools)]
pub(super) struct Flow {
    /// A `return`, `break` or exit macro.
    pub leaves: bool,
    /// A `continue`.
    pub continues: bool,
    /// A `?` (the error exit of whatever call it follows).
    pub tries: bool,
    /// A plain assignment (`done = true`): a flag a later test may act on.
    pub assigns: bool,
    depth: usize,
}

impl Flow {
    /// Nothing in it changes where the loop goes next: a comparison deciding only this code
    /// (a log line after success) bounds nothing.
    pub fn inert(&self) -> bool {
        !(self.leaves || self.continues || self.tries || self.assigns)
    }
}

impl<'ast> Visit<'ast> for Flow {
    fn visit_item(&mut self, _: &'ast syn::Item) {}
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}

    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Return(_) => self.leaves = true,
            Expr::Break(b) if self.depth == 0 || b.label.is_some() => self.leaves = true,
            Expr::Continue(c) if self.depth == 0 || c.label.is_some() => self.continues = true,
            Expr::Try(_) => self.tries = true,
            Expr::Assign(_) => self.assigns = true,
            // `std::process::exit(1)`, `process::abort()`: the program leaves.
            Expr::Call(c)
                if matches!(&*c.func, Expr::Path(p) if {
                    let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                    segs.len() >= 2
                        && segs[segs.len() - 2] == "process"
                        && matches!(segs[segs.len() - 1].as_str(), "exit" | "abort")
                }) =>
            {
                self.leaves = true;
            }
            _ => {}
        }
        let nested = matches!(e, Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_));
        self.depth += usize::from(nested);
        visit::visit_expr(self, e);
        self.depth -= usize::from(nested);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if super::collect::EXIT_MACROS.contains(&super::macros::macro_name(mac).as_str()) {
            self.leaves = true;
        }
        if let Some(parts) = super::macros::known_macro_exprs(mac) {
            for (e, _) in &parts {
                self.visit_expr(e);
            }
        }
    }
}

/// Flow of a block.
pub(super) fn block_flow(b: &syn::Block) -> Flow {
    let mut f = Flow::default();
    f.visit_block(b);
    f
}

/// Flow of an expression.
pub(super) fn expr_flow(e: &Expr) -> Flow {
    let mut f = Flow::default();
    f.visit_expr(e);
    f
}

/// `u32::MAX`, `usize::max_value()` and their `std::` / `core::` spellings: an integer type's
/// largest value, which as an attempt count means "no limit".
pub(super) fn is_int_max(e: &Expr) -> bool {
    let path = match strip(e) {
        Expr::Path(p) => &p.path,
        Expr::Call(c) if c.args.is_empty() => match &*c.func {
            Expr::Path(p) => &p.path,
            _ => return false,
        },
        _ => return false,
    };
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segs.as_slice() {
        [.., ty, last] => {
            INT_TYPES.contains(&ty.as_str()) && (last == "MAX" || last == "max_value")
        }
        _ => false,
    }
}

/// The value behind parentheses, borrows, derefs and casts.
pub(super) fn strip(mut e: &Expr) -> &Expr {
    loop {
        e = match e {
            Expr::Paren(p) => &p.expr,
            Expr::Reference(r) => &r.expr,
            Expr::Cast(c) => &c.expr,
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => &u.expr,
            Expr::Group(g) => &g.expr,
            _ => return e,
        };
    }
}
