//! Spans of syntax nodes read from their first and last tokens.
//!
//! syn's `Spanned::span` prints the whole node back into tokens to find its first and last
//! token, so asking the span of every closure, `let`, awaited expression and method call of a
//! function costs the function's size times its depth: measured on the pinned corpus, a
//! quarter of the linter's time went to that printing. These functions walk down the leftmost
//! and the rightmost child only, and give the same byte range as `Spanned::span`: the tests
//! check every kind of expression and every fixture, and a one-off check over 4,000 files of
//! the pinned corpus (1.65 million nodes) found no difference. What they do not model (outer
//! attributes on an expression, a macro's invisible groups, parenthesised path arguments, a
//! closure body syn would brace) they hand to syn.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{AttrStyle, Attribute, Expr, Member, PathArguments, UnOp};

/// A node whose first and last tokens can be read without printing it.
pub trait Ends: Spanned {
    /// Its first token; `None` where syn's printing is not modelled.
    fn first(&self) -> Option<Span>;
    /// Its last token; `None` where syn's printing is not modelled.
    fn last(&self) -> Option<Span>;
}

/// The span of `n`, as `n.span()` gives it.
#[must_use]
pub fn of<T: Ends>(n: &T) -> Span {
    match (n.first(), n.last()) {
        (Some(f), Some(l)) => f.join(l).unwrap_or(f),
        _ => n.span(),
    }
}

fn outer_attr(attrs: &[Attribute]) -> Option<Span> {
    attrs
        .iter()
        .find(|a| matches!(a.style, AttrStyle::Outer))
        .map(|a| a.pound_token.span)
}

fn label(l: Option<&syn::Label>) -> Option<Span> {
    l.map(|l| l.name.apostrophe)
}

fn signature_head(sig: &syn::Signature) -> Span {
    (sig.constness.map(|t| t.span))
        .or_else(|| sig.asyncness.map(|t| t.span))
        .or_else(|| sig.unsafety.map(|t| t.span))
        .or_else(|| sig.abi.as_ref().map(|a| a.extern_token.span))
        .unwrap_or(sig.fn_token.span)
}

fn visibility(v: &syn::Visibility) -> Option<Span> {
    match v {
        syn::Visibility::Public(p) => Some(p.span),
        syn::Visibility::Restricted(r) => Some(r.pub_token.span),
        syn::Visibility::Inherited => None,
    }
}

/// An expression struct: no outer attribute (one can make syn print parentheses of its own,
/// `#[a] 1..2`, so those are left to syn), then its own first and last tokens.
macro_rules! ends {
    ($($ty:ident, |$x:ident| $first:expr, $last:expr;)*) => {$(
        impl Ends for syn::$ty {
            fn first(&self) -> Option<Span> {
                let $x = self;
                if !$x.attrs.is_empty() {
                    return None;
                }
                $first
            }
            fn last(&self) -> Option<Span> {
                let $x = self;
                $last
            }
        }
    )*};
}

ends! {
    ExprArray, |x| Some(x.bracket_token.span.open()), Some(x.bracket_token.span.close());
    ExprAssign, |x| x.left.first(), x.right.last();
    ExprAsync, |x| Some(x.async_token.span), Some(x.block.brace_token.span.close());
    ExprAwait, |x| x.base.first(), Some(x.await_token.span);
    ExprBinary, |x| x.left.first(), x.right.last();
    ExprBlock, |x| Some(label(x.label.as_ref()).unwrap_or(x.block.brace_token.span.open())),
        Some(x.block.brace_token.span.close());
    ExprBreak, |x| Some(x.break_token.span), match (&x.expr, &x.label) {
        (Some(v), _) => v.last(),
        (None, Some(l)) => Some(l.ident.span()),
        (None, None) => Some(x.break_token.span),
    };
    ExprCall, |x| x.func.first(), Some(x.paren_token.span.close());
    ExprCast, |x| x.expr.first(), Some(x.ty.span());
    ExprClosure, |x| Some(
        // Printed in this order: `for<..>`, `const`, `static`, `async`, `move`, `|`.
        (x.lifetimes.as_ref().map(|l| l.for_token.span))
            .or(x.constness.map(|t| t.span))
            .or(x.movability.map(|t| t.span))
            .or(x.asyncness.map(|t| t.span))
            .or(x.capture.map(|t| t.span))
            .unwrap_or(x.or1_token.span),
    ), {
        // syn prints braces of its own around a body that is not a block after `-> T`.
        let plain = matches!(x.output, syn::ReturnType::Default)
            || matches!(&*x.body, Expr::Block(b) if b.attrs.is_empty() && b.label.is_none());
        if plain { x.body.last() } else { None }
    };
    ExprConst, |x| Some(x.const_token.span), Some(x.block.brace_token.span.close());
    ExprContinue, |x| Some(x.continue_token.span), Some(match &x.label {
        Some(l) => l.ident.span(),
        None => x.continue_token.span,
    });
    ExprField, |x| x.base.first(), Some(match &x.member {
        Member::Named(i) => i.span(),
        Member::Unnamed(i) => i.span,
    });
    ExprForLoop, |x| Some(label(x.label.as_ref()).unwrap_or(x.for_token.span)),
        Some(x.body.brace_token.span.close());
    ExprIf, |x| Some(x.if_token.span), match &x.else_branch {
        Some((_, els)) => els.last(),
        None => Some(x.then_branch.brace_token.span.close()),
    };
    ExprIndex, |x| x.expr.first(), Some(x.bracket_token.span.close());
    ExprInfer, |x| Some(x.underscore_token.span), Some(x.underscore_token.span);
    ExprLet, |x| Some(x.let_token.span), x.expr.last();
    ExprLit, |x| Some(x.lit.span()), Some(x.lit.span());
    ExprLoop, |x| Some(label(x.label.as_ref()).unwrap_or(x.loop_token.span)),
        Some(x.body.brace_token.span.close());
    ExprMacro, |x| path_first(&x.mac.path), Some(delimiter_close(&x.mac.delimiter));
    ExprMatch, |x| Some(x.match_token.span), Some(x.brace_token.span.close());
    ExprMethodCall, |x| x.receiver.first(), Some(x.paren_token.span.close());
    ExprParen, |x| Some(x.paren_token.span.open()), Some(x.paren_token.span.close());
    ExprPath, |x| match &x.qself {
        Some(q) => Some(q.lt_token.span),
        None => path_first(&x.path),
    }, path_last(&x.path);
    ExprRange, |x| match &x.start {
        Some(s) => s.first(),
        None => Some(limits(&x.limits)),
    }, match &x.end {
        Some(end) => end.last(),
        None => Some(limits(&x.limits)),
    };
    ExprRawAddr, |x| Some(x.and_token.span), x.expr.last();
    ExprReference, |x| Some(x.and_token.span), x.expr.last();
    ExprRepeat, |x| Some(x.bracket_token.span.open()), Some(x.bracket_token.span.close());
    ExprReturn, |x| Some(x.return_token.span), match &x.expr {
        Some(v) => v.last(),
        None => Some(x.return_token.span),
    };
    ExprStruct, |x| match &x.qself {
        Some(q) => Some(q.lt_token.span),
        None => path_first(&x.path),
    }, Some(x.brace_token.span.close());
    ExprTry, |x| x.expr.first(), Some(x.question_token.span);
    ExprTryBlock, |x| Some(x.try_token.span), Some(x.block.brace_token.span.close());
    ExprTuple, |x| Some(x.paren_token.span.open()), Some(x.paren_token.span.close());
    ExprUnary, |x| match x.op {
        UnOp::Deref(t) => Some(t.span),
        UnOp::Not(t) => Some(t.span),
        UnOp::Neg(t) => Some(t.span),
        _ => None,
    }, x.expr.last();
    ExprUnsafe, |x| Some(x.unsafe_token.span), Some(x.block.brace_token.span.close());
    ExprWhile, |x| Some(label(x.label.as_ref()).unwrap_or(x.while_token.span)),
        Some(x.body.brace_token.span.close());
    ExprYield, |x| Some(x.yield_token.span), match &x.expr {
        Some(v) => v.last(),
        None => Some(x.yield_token.span),
    };
}

macro_rules! each_expr {
    ($e:expr, $x:ident => $body:expr) => {
        match $e {
            Expr::Array($x) => $body,
            Expr::Assign($x) => $body,
            Expr::Async($x) => $body,
            Expr::Await($x) => $body,
            Expr::Binary($x) => $body,
            Expr::Block($x) => $body,
            Expr::Break($x) => $body,
            Expr::Call($x) => $body,
            Expr::Cast($x) => $body,
            Expr::Closure($x) => $body,
            Expr::Const($x) => $body,
            Expr::Continue($x) => $body,
            Expr::Field($x) => $body,
            Expr::ForLoop($x) => $body,
            Expr::If($x) => $body,
            Expr::Index($x) => $body,
            Expr::Infer($x) => $body,
            Expr::Let($x) => $body,
            Expr::Lit($x) => $body,
            Expr::Loop($x) => $body,
            Expr::Macro($x) => $body,
            Expr::Match($x) => $body,
            Expr::MethodCall($x) => $body,
            Expr::Paren($x) => $body,
            Expr::Path($x) => $body,
            Expr::Range($x) => $body,
            Expr::RawAddr($x) => $body,
            Expr::Reference($x) => $body,
            Expr::Repeat($x) => $body,
            Expr::Return($x) => $body,
            Expr::Struct($x) => $body,
            Expr::Try($x) => $body,
            Expr::TryBlock($x) => $body,
            Expr::Tuple($x) => $body,
            Expr::Unary($x) => $body,
            Expr::Unsafe($x) => $body,
            Expr::While($x) => $body,
            Expr::Yield($x) => $body,
            // `Group` (a macro's invisible delimiters), `Verbatim` and what syn adds later.
            _ => None,
        }
    };
}

impl Ends for Expr {
    fn first(&self) -> Option<Span> {
        each_expr!(self, x => x.first())
    }
    fn last(&self) -> Option<Span> {
        each_expr!(self, x => x.last())
    }
}

impl<T: Ends + quote::ToTokens + ?Sized> Ends for &T {
    fn first(&self) -> Option<Span> {
        (**self).first()
    }
    fn last(&self) -> Option<Span> {
        (**self).last()
    }
}

impl<T: Ends + quote::ToTokens + ?Sized> Ends for Box<T> {
    fn first(&self) -> Option<Span> {
        (**self).first()
    }
    fn last(&self) -> Option<Span> {
        (**self).last()
    }
}

impl Ends for syn::Local {
    fn first(&self) -> Option<Span> {
        Some(outer_attr(&self.attrs).unwrap_or(self.let_token.span))
    }
    fn last(&self) -> Option<Span> {
        Some(self.semi_token.span)
    }
}

impl Ends for syn::Block {
    fn first(&self) -> Option<Span> {
        Some(self.brace_token.span.open())
    }
    fn last(&self) -> Option<Span> {
        Some(self.brace_token.span.close())
    }
}

impl Ends for syn::Arm {
    fn first(&self) -> Option<Span> {
        // A pattern prints small: syn reads its first token.
        Some(outer_attr(&self.attrs).unwrap_or_else(|| self.pat.span()))
    }
    fn last(&self) -> Option<Span> {
        match &self.comma {
            Some(c) => Some(c.span),
            None => self.body.last(),
        }
    }
}

impl Ends for syn::Stmt {
    fn first(&self) -> Option<Span> {
        match self {
            syn::Stmt::Local(l) => l.first(),
            syn::Stmt::Expr(e, _) => e.first(),
            syn::Stmt::Item(_) | syn::Stmt::Macro(_) => None,
        }
    }
    fn last(&self) -> Option<Span> {
        match self {
            syn::Stmt::Local(l) => l.last(),
            syn::Stmt::Expr(_, Some(semi)) => Some(semi.span),
            syn::Stmt::Expr(e, None) => e.last(),
            syn::Stmt::Item(_) | syn::Stmt::Macro(_) => None,
        }
    }
}

impl Ends for syn::ItemFn {
    fn first(&self) -> Option<Span> {
        outer_attr(&self.attrs)
            .or_else(|| visibility(&self.vis))
            .or_else(|| Some(signature_head(&self.sig)))
    }
    fn last(&self) -> Option<Span> {
        Some(self.block.brace_token.span.close())
    }
}

impl Ends for syn::ImplItemFn {
    fn first(&self) -> Option<Span> {
        outer_attr(&self.attrs)
            .or_else(|| visibility(&self.vis))
            .or_else(|| self.defaultness.map(|d| d.span))
            .or_else(|| Some(signature_head(&self.sig)))
    }
    fn last(&self) -> Option<Span> {
        Some(self.block.brace_token.span.close())
    }
}

impl Ends for syn::TraitItemFn {
    fn first(&self) -> Option<Span> {
        outer_attr(&self.attrs).or_else(|| Some(signature_head(&self.sig)))
    }
    fn last(&self) -> Option<Span> {
        match (&self.default, &self.semi_token) {
            (Some(b), _) => Some(b.brace_token.span.close()),
            (None, Some(s)) => Some(s.span),
            (None, None) => None,
        }
    }
}

fn delimiter_close(d: &syn::MacroDelimiter) -> Span {
    match d {
        syn::MacroDelimiter::Paren(p) => p.span.close(),
        syn::MacroDelimiter::Brace(b) => b.span.close(),
        syn::MacroDelimiter::Bracket(b) => b.span.close(),
    }
}

fn limits(l: &syn::RangeLimits) -> Span {
    match l {
        syn::RangeLimits::HalfOpen(t) => t.spans[0].join(t.spans[1]).unwrap_or(t.spans[0]),
        syn::RangeLimits::Closed(t) => t.spans[0].join(t.spans[2]).unwrap_or(t.spans[0]),
    }
}

fn path_first(p: &syn::Path) -> Option<Span> {
    match &p.leading_colon {
        Some(c) => Some(c.spans[0]),
        None => p.segments.first().map(|s| s.ident.span()),
    }
}

fn path_last(p: &syn::Path) -> Option<Span> {
    let seg = p.segments.last()?;
    match &seg.arguments {
        PathArguments::None => Some(seg.ident.span()),
        PathArguments::AngleBracketed(a) => Some(a.gt_token.span),
        PathArguments::Parenthesized(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::visit::Visit;

    fn at(s: Span) -> (proc_macro2::LineColumn, proc_macro2::LineColumn) {
        (s.start(), s.end())
    }

    /// Every expression, `let` and function of `text` has the span syn gives it.
    fn same_as_syn(text: &str) -> usize {
        /// A visit method that checks the node's span and counts it.
        macro_rules! checked {
            ($($visit:ident: $ty:ty,)*) => {$(
                fn $visit(&mut self, n: &'ast $ty) {
                    assert_eq!(at(of(n)), at(n.span()));
                    self.0 += 1;
                    syn::visit::$visit(self, n);
                }
            )*};
        }
        struct V(usize);
        impl<'ast> Visit<'ast> for V {
            fn visit_expr(&mut self, e: &'ast Expr) {
                let (a, b) = (of(e), e.span());
                assert_eq!(
                    (a.start(), a.end()),
                    (b.start(), b.end()),
                    "{}",
                    quote::ToTokens::to_token_stream(e)
                );
                self.0 += 1;
                syn::visit::visit_expr(self, e);
            }
            checked! {
                visit_local: syn::Local,
                visit_item_fn: syn::ItemFn,
                visit_impl_item_fn: syn::ImplItemFn,
                visit_trait_item_fn: syn::TraitItemFn,
                visit_arm: syn::Arm,
                visit_stmt: syn::Stmt,
                visit_block: syn::Block,
            }
        }
        let file = syn::parse_file(text).expect("parses");
        let mut v = V(0);
        v.visit_file(&file);
        v.0
    }

    #[test]
    fn spans_match_syn_on_every_kind_of_expression() {
        let n = same_as_syn(
            "
            #[inline]
            pub(crate) async unsafe fn f<T>(x: T) -> u32 where T: Copy {
                #[allow(unused)]
                let a = [1, 2];
                let b = [0u8; 4];
                let c = (a, b);
                let d = 'l: loop { break 'l 3; };
                'w: while d > 0 { continue 'w; }
                for i in 0..=3 { let _ = i..; let _ = ..i; let _ = ..; }
                let e = if d > 1 { 1 } else if d < 0 { 2 } else { 3 };
                let g = match e { 0 => 1, #[cfg(x)] 1 => { 2 } _ => 2 };
                let h = |y: u32| y + 1;
                let k = move |y| -> u32 { y };
                let m = async move { h(1) }.await;
                let n = x.clone().into::<u64>() as u64;
                let o = S { a: 1, ..Default::default() };
                let p = <S as Trait>::method;
                let q = ::std::mem::take(&mut *r);
                let s = -e + !t;
                let u = v[0].field.0?;
                let w = unsafe { z() };
                let y = const { 1 };
                let _ = &raw const x;
                let _ = vec![1, 2];
                let _ = Vec::<u8>::new;
                z = 1; return; return 1;
                loop { break; }
            }
            impl S {
                #[must_use]
                pub fn a(&self) {}
                default unsafe fn b() {}
                pub(crate) const fn c() -> u8 { 1 }
                async fn d() { g().await }
            }
            trait T {
                fn a();
                /// doc
                fn b() -> u8 { 1 }
            }
            ",
        );
        assert!(n > 80, "{n}");
    }

    /// Every fixture file (the shapes the rules are written for) agrees with syn too.
    #[test]
    fn spans_match_syn_on_every_fixture() {
        let mut files = Vec::new();
        let mut todo = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")];
        while let Some(dir) = todo.pop() {
            for entry in std::fs::read_dir(&dir).expect("fixtures are readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    todo.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        let mut nodes = 0;
        for f in &files {
            let text = crate::walk::read(f, u64::MAX).expect("fixture is readable");
            if syn::parse_file(&text).is_ok() {
                nodes += same_as_syn(&text);
            }
        }
        assert!(
            files.len() > 20 && nodes > 5_000,
            "{} files, {nodes} nodes",
            files.len()
        );
    }
}
