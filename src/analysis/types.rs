//! The type of a method call's receiver, as far as the file's own declarations tell.
//!
//! A crate's wrapper methods often share a name with other methods (`execute`, `send`,
//! `call`): riven's `RegionalRequester::execute` retries the request it is handed, and
//! `RiotApi::execute` is a different function. A method call is linked to a wrapper by name
//! only when the name is uncommon and names one method of the crate
//! ([`super::wrappers::for_method`]); this module supplies the receiver's type when the file
//! declares it, so that `self.regional_requester(r).execute(cfg, id, req)` names
//! `RegionalRequester::execute` whatever else is called `execute`.
//!
//! What it reads: `self` (the `impl` type), a parameter's declared type, a field of `self`
//! (the file's struct of that name), a method of the same `impl` called on `self` (its declared
//! return type, `Self` included) and a constructor path (`Type::new(..)`). A type is named by
//! its last path segment, through references, parentheses and the smart pointers that deref to
//! what they hold (`Arc<T>`, `Rc<T>`, `Box<T>`). Deliberately absent: inference of locals,
//! trait objects and generics (a receiver whose type the file does not write has no type here,
//! and the caller falls back to the name).

use std::collections::HashMap;

use syn::Expr;

use super::bodies::{Bodies, Kind};

/// The file's declarations that give receivers a type.
#[derive(Default)]
pub(super) struct FileTypes {
    /// Per struct, its named fields' types.
    fields: HashMap<String, HashMap<String, String>>,
    /// Per (`impl` type, method), the method's declared return type.
    returns: HashMap<(String, String), String>,
}

impl FileTypes {
    /// Read the file's structs and the return types of its `impl` methods.
    pub fn of(bodies: &Bodies<'_>) -> Self {
        let mut t = FileTypes::default();
        for s in &bodies.structs {
            let syn::Fields::Named(named) = &s.fields else {
                continue;
            };
            let fields = named
                .named
                .iter()
                .filter_map(|f| Some((f.ident.as_ref()?.to_string(), name_of(&f.ty, None)?)))
                .collect();
            t.fields.insert(s.ident.to_string(), fields);
        }
        for body in &bodies.fns {
            if body.free || body.in_trait {
                continue;
            }
            let Some(owner) = impl_of(bodies, body.node) else {
                continue;
            };
            if let syn::ReturnType::Type(_, ty) = &body.sig.output {
                if let Some(ret) = name_of(ty, Some(&owner)) {
                    t.returns.insert((owner, body.sig.ident.to_string()), ret);
                }
            }
        }
        t
    }

    /// The type of `e` used as a receiver in a method of `impl_type` whose parameters have the
    /// types `params` (name to type name).
    pub fn receiver(
        &self,
        e: &Expr,
        impl_type: Option<&str>,
        params: Option<&HashMap<String, String>>,
    ) -> Option<String> {
        match e {
            Expr::Paren(p) => self.receiver(&p.expr, impl_type, params),
            Expr::Reference(r) => self.receiver(&r.expr, impl_type, params),
            Expr::Path(p) if p.qself.is_none() => {
                let id = p.path.get_ident()?;
                if id == "self" {
                    return impl_type.filter(|t| !t.is_empty()).map(str::to_string);
                }
                params?.get(&id.to_string()).cloned()
            }
            Expr::Field(f) => {
                let syn::Member::Named(field) = &f.member else {
                    return None;
                };
                let base = self.receiver(&f.base, impl_type, params)?;
                self.fields.get(&base)?.get(&field.to_string()).cloned()
            }
            Expr::MethodCall(m) => {
                let base = self.receiver(&m.receiver, impl_type, params)?;
                self.returns.get(&(base, m.method.to_string())).cloned()
            }
            Expr::Call(call) => self.constructed(call, impl_type),
            _ => None,
        }
    }

    /// `Type::new(..)`, `Type::with_config(..)`: what the file declares it returns, or the
    /// type itself for a constructor named like one.
    fn constructed(&self, call: &syn::ExprCall, impl_type: Option<&str>) -> Option<String> {
        let Expr::Path(path) = &*call.func else {
            return None;
        };
        let segments = &path.path.segments;
        if path.qself.is_some() || segments.len() < 2 {
            return None;
        }
        let ty = segments[segments.len() - 2].ident.to_string();
        let function = segments[segments.len() - 1].ident.to_string();
        if !ty.starts_with(|ch: char| ch.is_ascii_uppercase()) {
            return None;
        }
        let ty = if ty == "Self" {
            impl_type.filter(|t| !t.is_empty())?.to_string()
        } else {
            ty
        };
        match self.returns.get(&(ty.clone(), function.clone())) {
            Some(ret) => Some(ret.clone()),
            None => matches!(function.as_str(), "new" | "default").then_some(ty),
        }
    }
}

/// The parameters of `sig` with a type the file names (`name: &Type`), by name.
pub(super) fn param_types(
    sig: &syn::Signature,
    impl_type: Option<&str>,
) -> HashMap<String, String> {
    sig.inputs
        .iter()
        .filter_map(|input| {
            let syn::FnArg::Typed(pt) = input else {
                return None;
            };
            let syn::Pat::Ident(id) = &*pt.pat else {
                return None;
            };
            Some((id.ident.to_string(), name_of(&pt.ty, impl_type)?))
        })
        .collect()
}

/// The name a type is known by ([`super::clients::type_owner`]: its last path segment,
/// through references, parentheses and the smart pointers a method call derefs); `Self` is the
/// `impl` type.
pub(super) fn name_of(ty: &syn::Type, self_ty: Option<&str>) -> Option<String> {
    if let syn::Type::Path(p) = super::clients::peel_type(ty) {
        if p.qself.is_none() && p.path.is_ident("Self") {
            return self_ty.filter(|t| !t.is_empty()).map(str::to_string);
        }
    }
    super::clients::type_owner(ty, &HashMap::new())
}

/// The `impl` type around the body at node `at`, if any.
fn impl_of(bodies: &Bodies<'_>, at: usize) -> Option<String> {
    let mut parent = bodies.nodes.get(at)?.parent;
    while let Some(p) = parent {
        let node = bodies.nodes.get(p as usize)?;
        match node.kind {
            Kind::Impl(i) => {
                let syn::Type::Path(tp) = &*i.self_ty else {
                    return None;
                };
                return tp.path.segments.last().map(|s| s.ident.to_string());
            }
            Kind::Body(_) => return None,
            _ => parent = node.parent,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receiver_of(src: &str, impl_type: Option<&str>, params: &[(&str, &str)]) -> Option<String> {
        let file: syn::File = syn::parse_str(src).expect("parses");
        let expansions = super::super::bodies::Expansions::new();
        let bodies = Bodies::of(&file, &expansions);
        let types = FileTypes::of(&bodies);
        let params: HashMap<String, String> = params
            .iter()
            .map(|(a, b)| ((*a).to_string(), (*b).to_string()))
            .collect();
        // The receiver is the last method call's in the last function's body.
        let body = bodies.fns.last().expect("a body");
        let syn::Stmt::Expr(Expr::MethodCall(m), _) = body.block.stmts.last().expect("a stmt")
        else {
            panic!("last statement is a method call");
        };
        types.receiver(&m.receiver, impl_type, Some(&params))
    }

    const API: &str = "
        struct Api { requester: Arc<Requester>, client: reqwest::Client, name: String }
        impl Api {
            fn requester(&self, region: &str) -> &Requester { &self.requester }
            fn me(&self) -> Self { todo!() }
            fn new() -> Api { todo!() }
        }";

    #[test]
    fn a_receiver_is_typed_by_what_the_file_declares() {
        let case = |call: &str, params: &[(&str, &str)]| {
            receiver_of(
                &format!("{API} impl Api {{ fn go(&self) {{ {call} }} }}"),
                Some("Api"),
                params,
            )
        };
        assert_eq!(case("self.execute(r)", &[]).as_deref(), Some("Api"));
        assert_eq!(
            case("self.requester.execute(r)", &[]).as_deref(),
            Some("Requester")
        );
        assert_eq!(
            case("(&self.client).execute(r)", &[]).as_deref(),
            Some("Client")
        );
        assert_eq!(
            case("self.requester(\"eu\").execute(r)", &[]).as_deref(),
            Some("Requester")
        );
        assert_eq!(
            case("self.me().requester.execute(r)", &[]).as_deref(),
            Some("Requester")
        );
        assert_eq!(case("Api::new().execute(r)", &[]).as_deref(), Some("Api"));
        assert_eq!(
            case("Other::new().execute(r)", &[]).as_deref(),
            Some("Other")
        );
        assert_eq!(
            case("r.execute(x)", &[("r", "Requester")]).as_deref(),
            Some("Requester")
        );
    }

    #[test]
    fn a_receiver_the_file_does_not_type_has_no_type() {
        let case = |call: &str| {
            receiver_of(
                &format!("{API} impl Api {{ fn go(&self) {{ {call} }} }}"),
                Some("Api"),
                &[],
            )
        };
        // A local, an unknown field or method, a call that is not a constructor, a tuple field.
        assert_eq!(case("local.execute(r)"), None);
        assert_eq!(case("self.missing.execute(r)"), None);
        assert_eq!(case("self.other().execute(r)"), None);
        assert_eq!(case("Other::connect().execute(r)"), None);
        assert_eq!(case("module::new().execute(r)"), None);
        assert_eq!(case("self.0.execute(r)"), None);
        // Outside an `impl`, `self` has no type.
        assert_eq!(receiver_of("fn go() { self.execute(r) }", None, &[]), None);
    }

    #[test]
    fn a_type_is_named_through_references_and_smart_pointers() {
        let ty = |s: &str| name_of(&syn::parse_str::<syn::Type>(s).expect("type"), Some("Me"));
        assert_eq!(ty("&mut Client").as_deref(), Some("Client"));
        assert_eq!(
            ty("std::sync::Arc<crate::req::Requester>").as_deref(),
            Some("Requester")
        );
        assert_eq!(ty("&Self").as_deref(), Some("Me"));
        assert_eq!(ty("Option<Client>").as_deref(), Some("Option"));
        assert_eq!(ty("(Client)").as_deref(), Some("Client"));
        assert_eq!(
            ty("Arc<dyn Transport + Send>").as_deref(),
            Some("Transport")
        );
        assert_eq!(ty("[u8]"), None);
    }
}
