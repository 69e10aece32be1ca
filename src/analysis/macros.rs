//! The few macros whose bodies matter to retry analysis, parsed explicitly.
//!
//! `select!` (tokio, futures) races futures: a sleep in a branch future is raced, so it is
//! cancellable; `join!` / `try_join!` just await their arguments. Every other macro body stays
//! opaque (no finding from inside it); only its words count as evidence.

use syn::parse::{Parse, ParseStream};
use syn::{Expr, Token};

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
