//! The few macros whose bodies matter to retry analysis, parsed explicitly.
//!
//! `select!` (tokio, futures) races futures: a sleep in a branch future is raced, so it is
//! cancellable; `join!` / `try_join!` just await their arguments. Every other macro call stays
//! opaque (no finding from inside it); only its words count as evidence.
//!
//! A crate's own `macro_rules!` definitions are read too ([`expose_rules_bodies`]): a retry loop
//! written once in a macro and pasted at every call site is a retry loop in the crate, so each
//! rule's body (with `$x` read as the identifier `x`, a repetition `$( .. ),*` as its contents
//! once) is added to the syntax tree as an item of its own, at the macro's own positions, and
//! every rule sees it like any function. What the call sites pass in stays unknown: a client or
//! a request handed to the macro is a name, not the caller's value.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, Token};

use crate::base::source::{SourceFile, Span};

/// How a sub-expression of a macro runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A future raced against the other branches (`select!` branch future).
    Raced,
    /// Ordinary code (a branch handler, a `join!` argument, a guard).
    Plain,
}

/// The name a macro is invoked by, without its path (`select` of `tokio::select!`): macros are
/// matched by their last segment because crates re-export and alias them freely.
#[must_use]
pub fn macro_name(mac: &syn::Macro) -> String {
    mac.path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

/// The parsed sub-expressions of a known macro, or `None` for any other macro.
#[must_use]
pub fn known_macro_exprs(mac: &syn::Macro) -> Option<Vec<(Expr, Role)>> {
    match macro_name(mac).as_str() {
        "select" | "select_biased" => syn::parse2::<Select>(mac.tokens.clone()).ok().map(|s| s.0),
        "join" | "try_join" => {
            let args = mac
                .parse_body_with(syn::punctuated::Punctuated::<Expr, Token![,]>::parse_terminated)
                .ok()?;
            Some(args.into_iter().map(|e| (e, Role::Plain)).collect())
        }
        _ => None,
    }
}

/// Add the bodies of the `macro_rules!` definitions of `file` (and of its inline modules) to the
/// items beside them; the spans of the definitions read. A body that is items (a macro that
/// writes functions or impls) adds those items; a body of statements or an expression becomes a
/// function of that body, async when it awaits. A body that parses as neither adds nothing.
pub fn expose_rules_bodies(file: &mut syn::File, src: &SourceFile) -> Vec<Span> {
    let mut spans = Vec::new();
    expose_in(&mut file.items, src, &mut spans);
    spans.sort_unstable();
    spans
}

/// The spans of the `macro_rules!` definitions of `file` and its inline modules.
#[must_use]
pub fn rules_spans(file: &syn::File, src: &SourceFile) -> Vec<Span> {
    fn walk(items: &[syn::Item], src: &SourceFile, out: &mut Vec<Span>) {
        for item in items {
            match item {
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        walk(inner, src, out);
                    }
                }
                syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                    out.push(super::span_of(src, m.span()));
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(&file.items, src, &mut out);
    out
}

fn expose_in(items: &mut Vec<syn::Item>, src: &SourceFile, spans: &mut Vec<Span>) {
    let mut added = Vec::new();
    for item in items.iter_mut() {
        match item {
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &mut m.content {
                    expose_in(inner, src, spans);
                }
            }
            syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                let name = m
                    .ident
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                let before = added.len();
                for (i, body) in transcribers(m.mac.tokens.clone()).into_iter().enumerate() {
                    added.extend(body_items(&name, i, &body));
                }
                if added.len() > before {
                    spans.push(super::span_of(src, m.span()));
                }
            }
            _ => {}
        }
    }
    items.extend(added);
}

/// The transcribers of a `macro_rules!` body: the group after each `(matcher) =>`.
fn transcribers(tokens: TokenStream) -> Vec<Group> {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    for w in tts.windows(4) {
        if let [TokenTree::Group(_), TokenTree::Punct(eq), TokenTree::Punct(gt), TokenTree::Group(body)] =
            w
        {
            if eq.as_char() == '=' && gt.as_char() == '>' {
                out.push(body.clone());
            }
        }
    }
    out
}

/// A transcriber's tokens with the macro syntax read as plain Rust: `$x` (and `$crate`) becomes
/// the identifier, `$( .. ) sep rep` its contents once. Spans are kept.
fn substitute(tokens: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut it = tokens.into_iter().peekable();
    while let Some(tt) = it.next() {
        match tt {
            TokenTree::Punct(p) if p.as_char() == '$' => match it.peek() {
                Some(TokenTree::Ident(_)) => out.extend(it.next()),
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                    if let Some(TokenTree::Group(g)) = it.next() {
                        out.extend(substitute(g.stream()));
                    }
                    // An optional separator, then the repetition operator.
                    let is_op = |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if matches!(p.as_char(), '*' | '+' | '?'));
                    if !is_op(it.peek()) {
                        it.next();
                    }
                    if is_op(it.peek()) {
                        it.next();
                    }
                }
                _ => out.push(TokenTree::Punct(p)),
            },
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), substitute(g.stream()));
                ng.set_span(g.span());
                out.push(TokenTree::Group(ng));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// The items one transcriber adds: its own items, or a function of its statements.
fn body_items(name: &str, index: usize, body: &Group) -> Vec<syn::Item> {
    let tokens = substitute(body.stream());
    if tokens.is_empty() {
        return Vec::new();
    }
    if let Ok(f) = syn::parse2::<syn::File>(tokens.clone()) {
        if !f.items.is_empty() {
            return f.items;
        }
    }
    let Ok(stmts) = syn::Block::parse_within.parse2(tokens.clone()) else {
        return Vec::new();
    };
    if stmts.is_empty() {
        return Vec::new();
    }
    let awaits = awaits(&tokens);
    let ident = syn::Ident::new(&format!("{name}_macro_body_{index}"), body.span());
    let mut f: syn::ItemFn = if awaits {
        syn::parse_quote_spanned!(body.span()=> async fn #ident() {})
    } else {
        syn::parse_quote_spanned!(body.span()=> fn #ident() {})
    };
    f.block.brace_token = syn::token::Brace(body.delim_span());
    f.block.stmts = stmts;
    vec![syn::Item::Fn(f)]
}

/// Whether the tokens hold an `.await`.
fn awaits(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "await",
        TokenTree::Group(g) => awaits(&g.stream()),
        _ => false,
    })
}

struct Select(Vec<(Expr, Role)>);

impl Parse for Select {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut out = Vec::new();
        if input.peek(syn::Ident) && input.peek2(Token![;]) {
            input.parse::<syn::Ident>()?;
            input.parse::<Token![;]>()?;
        }
        while !input.is_empty() {
            if input.peek(Token![else]) || (input.peek(syn::Ident) && input.peek2(Token![=>])) {
                // `else => ..` (tokio) and `complete => ..` / `default => ..` (futures).
                input.parse::<proc_macro2::TokenTree>()?;
            } else {
                syn::Pat::parse_multi_with_leading_vert(input)?;
                input.parse::<Token![=]>()?;
                let fut = Expr::parse_without_eager_brace(input)?;
                out.push((fut, Role::Raced));
                if input.peek(Token![,]) && input.peek2(Token![if]) {
                    input.parse::<Token![,]>()?;
                    input.parse::<Token![if]>()?;
                    out.push((Expr::parse_without_eager_brace(input)?, Role::Plain));
                }
            }
            input.parse::<Token![=>]>()?;
            let body: Expr = input.parse()?;
            out.push((body, Role::Plain));
            if input.peek(Token![,]) {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(Select(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;

    /// The items `expose_rules_bodies` adds to `code`, as text, and the definitions it read.
    fn exposed(code: &str) -> (Vec<String>, usize) {
        let src = SourceFile::new("m.rs", code);
        let mut file = syn::parse_file(code).unwrap();
        let before = file.items.len();
        let spans = expose_rules_bodies(&mut file, &src);
        let added = file.items[before..]
            .iter()
            .map(|i| i.to_token_stream().to_string())
            .collect();
        (added, spans.len())
    }

    #[test]
    fn a_macro_body_of_statements_becomes_a_function_of_its_own() {
        let (added, read) = exposed(
            "macro_rules! again { ($c:expr, $($h:expr),*) => { loop { $( let _ = $h; )* if $c.send().await.is_ok() { break } } }; }",
        );
        assert_eq!(read, 1);
        assert_eq!(
            added,
            ["async fn again_macro_body_0 () { loop { let _ = h ; if c . send () . await . is_ok () { break } } }"]
        );
    }

    #[test]
    fn a_macro_of_items_adds_its_items_and_an_unparsable_body_adds_nothing() {
        let (added, read) = exposed(
            "macro_rules! imp { ($t:ty) => { impl Fetch for $t { fn go(&self) {} } }; (@ $x:tt) => { 1 + }; }",
        );
        assert_eq!(read, 1);
        assert_eq!(added, ["impl Fetch for t { fn go (& self) { } }"]);
        // Inline modules are read too; a macro nobody defines here stays opaque.
        let (added, read) = exposed(
            "mod m { macro_rules! w { () => { std::thread::sleep(d) }; } } fn f() { vec![1]; }",
        );
        assert_eq!((added.len(), read), (0, 1));
    }

    #[test]
    fn select_branches_are_split_into_raced_futures_and_handlers() {
        let e: syn::ExprMacro = syn::parse_str(
            "tokio::select! { biased; _ = token.cancelled() => return, r = sleep(d), if ok => { x } else => {} }",
        )
        .unwrap();
        let parts = known_macro_exprs(&e.mac).unwrap();
        let roles: Vec<Role> = parts.iter().map(|p| p.1).collect();
        assert_eq!(
            roles,
            [
                Role::Raced,
                Role::Plain,
                Role::Raced,
                Role::Plain,
                Role::Plain,
                Role::Plain
            ]
        );
    }
}
