//! The fixes of `non-idempotent-retry-without-key`, for a write built directly in a retry loop:
//! hoist a key made per attempt above the loop (with the by-value uses cloned), or add a key
//! made once and send it as `Idempotency-Key`. Only this rule builds them; the shared pieces
//! (statements, names, indentation) come from [`crate::fix::syntax`].

use std::collections::BTreeSet;

use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::analysis::requests::{Key, Via, Write};
use crate::analysis::{span_of, RetrySite, SiteKind};
use crate::base::diagnostic::{Applicability, Edit, Fix};
use crate::base::source::Span;
use crate::fix::syntax;
use crate::rules::Context;

/// The fix for a write built directly in a retry loop: hoist a per-attempt key, or add one.
pub(super) fn fix(cx: &Context, w: &Write) -> Option<Fix> {
    if w.via != Via::Site {
        return None;
    }
    let site = cx.facts.sites.iter().find(|s| s.anchor == w.retry)?;
    // A closure handed to a combinator may be `move` or return a future that borrows: hoisting
    // a key out of it is not a statement move any more.
    if !matches!(site.kind, SiteKind::Loop | SiteKind::While | SiteKind::For) {
        return None;
    }
    let before = syntax::enclosing_stmt(cx.src, cx.ast, site.span)?;
    let indent = syntax::indent_before(cx.src, before.start);
    match w.key {
        Key::PerAttempt(key) => hoist(cx, site, before, indent.as_deref(), key),
        Key::Missing => add_key(cx, w, before, indent.as_deref()),
        Key::Outside => None,
    }
}

/// `let key = Uuid::new_v4().to_string();` inside the loop moves above it (an inline key
/// expression becomes `let idempotency_key = ..;` there), and by-value uses become
/// `key.clone()` so every attempt sends the same value.
fn hoist(
    cx: &Context,
    site: &RetrySite,
    before: Span,
    indent: Option<&str>,
    key: Span,
) -> Option<Fix> {
    let text = &cx.src.text;
    let loop_expr = syntax::find_expr(cx.src, cx.ast, site.span)?;
    let init_expr = syntax::find_expr(cx.src, cx.ast, key)?;
    let mut edits = Vec::new();
    let mut exact = true;
    let (name, stmt, moved, comment) =
        if let Some(local) = syntax::let_with_init(cx.src, cx.ast, key) {
            let (binding, mutable) = let_ident(&local.pat)?;
            // A `mut` key may be changed per attempt on purpose.
            exact &= !mutable;
            let stmt = span_of(cx.src, local.span());
            if in_closure(cx, &loop_expr, stmt) {
                return None;
            }
            let (line, comment) = syntax::whole_line(cx.src, stmt);
            edits.push(Edit {
                span: line,
                replacement: String::new(),
            });
            // Continuation lines keep their place relative to the `let`.
            let from = syntax::indent_before(cx.src, stmt.start).unwrap_or_default();
            let to = indent.unwrap_or_default();
            let text = cx
                .src
                .slice(stmt)
                .replace(&format!("\n{from}"), &format!("\n{to}"));
            (binding, text, stmt, comment)
        } else {
            let name = "idempotency_key".to_string();
            if syntax::has_word(cx.src.slice(fn_span(cx, site)?), &name)
                || in_closure(cx, &loop_expr, key)
            {
                return None;
            }
            edits.push(Edit {
                span: key,
                replacement: format!("{name}.clone()"),
            });
            let stmt = format!("let {name} = {};", cx.src.slice(key));
            (name, stmt, key, None)
        };
    // The key's initialiser must not read a name the loop binds: above the loop it would not
    // compile, or would read another binding of that name.
    let reads = syntax::free_names(&init_expr);
    if !reads.is_disjoint(&syntax::bound_names(&loop_expr)) {
        return None;
    }
    // Reading any other variable may see a value the loop changes between attempts.
    exact &= reads.is_empty();
    // The hoisted name must not capture a use that meant another binding: before the key in the
    // loop, or after the loop.
    let func = fn_span(cx, site)?;
    exact &= !syntax::has_word(&text[before.start..moved.start], &name)
        && !syntax::has_word(&text[site.span.end..func.end], &name);
    let uses = key_uses(cx, &loop_expr, &name, moved.end);
    exact &= uses.others == 0;
    edits.extend(uses.by_value.into_iter().map(|span| Edit {
        span,
        replacement: format!("{name}.clone()"),
    }));
    let comment = comment.map(|c| format!(" {c}")).unwrap_or_default();
    edits.push(Edit {
        span: Span::new(before.start, before.start),
        replacement: match indent {
            Some(indent) => format!("{stmt}{comment}\n{indent}"),
            None => format!("{stmt} "),
        },
    });
    Some(Fix {
        title: format!(
            "create `{name}` once, before the retry loop, so every attempt sends the same key"
        ),
        applicability: if exact {
            Applicability::MachineApplicable
        } else {
            Applicability::MaybeIncorrect
        },
        edits,
    })
}

/// The `let` pattern's name and whether it is `mut`: `key` or `key: String`.
fn let_ident(pat: &syn::Pat) -> Option<(String, bool)> {
    match pat {
        syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
            Some((p.ident.to_string(), p.mutability.is_some()))
        }
        syn::Pat::Type(t) => let_ident(&t.pat),
        _ => None,
    }
}

/// The whole text of the function the site is in.
fn fn_span(cx: &Context, site: &RetrySite) -> Option<Span> {
    let mut f = site.function?;
    while let Some(parent) = cx.facts.functions[f].parent {
        f = parent;
    }
    Some(cx.facts.functions[f].span)
}

/// Is `at` inside a closure or async block within the loop? A key moved out of one changes what
/// the closure captures.
fn in_closure(cx: &Context, loop_expr: &syn::Expr, at: Span) -> bool {
    struct V<'a> {
        cx: &'a Context<'a>,
        at: Span,
        hit: bool,
    }
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
            self.hit |= span_of(self.cx.src, c.span()).contains(self.at);
        }
        fn visit_expr_async(&mut self, a: &'ast syn::ExprAsync) {
            self.hit |= span_of(self.cx.src, a.span()).contains(self.at);
        }
    }
    let mut v = V { cx, at, hit: false };
    v.visit_expr(loop_expr);
    v.hit
}

/// How the loop uses the key after `from`.
struct Uses {
    /// Bare `key` passed by value to a call or method: moved on the first attempt.
    by_value: Vec<Span>,
    /// Uses of unknown effect (a `let` of it, a non-format macro, a struct field).
    others: usize,
}

/// Borrowing uses (`key.as_str()`, `&key`, `format!("{key}")`) are fine as they are; a bare
/// argument is cloned; anything else is counted as unknown.
fn key_uses(cx: &Context, loop_expr: &syn::Expr, name: &str, from: usize) -> Uses {
    struct V<'a> {
        cx: &'a Context<'a>,
        name: &'a str,
        from: usize,
        uses: Uses,
        handled: BTreeSet<usize>,
    }
    impl V<'_> {
        fn is_key(&self, e: &syn::Expr) -> Option<Span> {
            let syn::Expr::Path(p) = e else { return None };
            let s = span_of(self.cx.src, p.span());
            (p.path.is_ident(self.name) && s.start >= self.from).then_some(s)
        }
        fn args<'e>(&mut self, args: impl Iterator<Item = &'e syn::Expr>) {
            for a in args {
                if let Some(s) = self.is_key(a) {
                    self.uses.by_value.push(s);
                    self.handled.insert(s.start);
                }
            }
        }
    }
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            self.args(c.args.iter());
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if let Some(s) = self.is_key(&m.receiver) {
                self.handled.insert(s.start);
            }
            self.args(m.args.iter());
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_field(&mut self, f: &'ast syn::ExprField) {
            if let Some(s) = self.is_key(&f.base) {
                self.handled.insert(s.start);
            }
            syn::visit::visit_expr_field(self, f);
        }
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            if let Some(s) = self.is_key(&r.expr) {
                self.handled.insert(s.start);
            }
            syn::visit::visit_expr_reference(self, r);
        }
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            let s = span_of(self.cx.src, p.span());
            if p.path.is_ident(self.name)
                && s.start >= self.from
                && !self.handled.contains(&s.start)
            {
                self.uses.others += 1;
            }
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            let s = span_of(self.cx.src, m.span());
            let last = crate::analysis::macros::macro_name(m);
            // Formatting macros borrow their arguments.
            let formats = [
                "format",
                "print",
                "println",
                "eprint",
                "eprintln",
                "write",
                "writeln",
                "panic",
                "trace",
                "debug",
                "info",
                "warn",
                "error",
                "assert",
                "assert_eq",
            ];
            if s.start >= self.from
                && !formats.contains(&last.as_str())
                && syntax::has_word(&m.tokens.to_string(), self.name)
            {
                self.uses.others += 1;
            }
        }
    }
    let mut v = V {
        cx,
        name,
        from,
        uses: Uses {
            by_value: Vec::new(),
            others: 0,
        },
        handled: BTreeSet::new(),
    };
    v.visit_expr(loop_expr);
    v.uses
}

/// A write with no key: make one before the loop and send it as `Idempotency-Key`. Only for a
/// reqwest-style builder (`.header(name, value)`) in a file that uses reqwest.
fn add_key(cx: &Context, w: &Write, before: Span, indent: Option<&str>) -> Option<Fix> {
    let name = "idempotency_key";
    let reqwest = cx.facts.imports.mentions_crate("reqwest") || cx.src.text.contains("reqwest::");
    if !reqwest || syntax::has_word(&cx.src.text, name) {
        return None;
    }
    let after = request_call_end(&cx.src.text, w.span)?;
    let stmt = format!(
        "let {name} = /* a key your server deduplicates on */ timeoutlint_retry::IdempotencyKey::generate();"
    );
    Some(Fix {
        title: "send one `Idempotency-Key`, made before the retry loop, on every attempt (check the server honours it)".into(),
        // The header only helps if the server deduplicates on it, under that name; the key
        // type comes from the runtime crate, which the project may not depend on.
        applicability: Applicability::HasPlaceholders,
        edits: vec![
            Edit {
                span: Span::new(before.start, before.start),
                replacement: match indent {
                    Some(indent) => format!("{stmt}\n{indent}"),
                    None => format!("{stmt} "),
                },
            },
            Edit {
                span: Span::new(after, after),
                replacement: format!(".header(\"Idempotency-Key\", {name}.as_str())"),
            },
        ],
    })
}

/// Where the method call of a write ends: the `.post(..)` call itself, or for a method argument
/// (`.request(Method::POST, url)`) the closing parenthesis of the `request(` call around it.
fn request_call_end(text: &str, write: Span) -> Option<usize> {
    if text.get(write.start..write.end)?.ends_with(')') {
        return Some(write.end);
    }
    if !text.get(..write.start)?.trim_end().ends_with("request(") {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in text.get(write.end..)?.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' if depth == 0 => return Some(write.end + i + 1),
            ')' | ']' | '}' => depth = depth.checked_sub(1)?,
            _ => {}
        }
    }
    None
}
