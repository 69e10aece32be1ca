//! In-crate retry wrappers: functions of the crate that retry the operation they are handed.
//!
//! A crate that retries in one place and calls it from many (`retry(&config, || client.post(..)
//! .send())`, `self.with_backoff(|| ..)`) has one loop and many retry sites: each call repeats
//! its own operation, with its own request, body and timeout. RULES.md's rules about what is
//! repeated (the request, its body, its key, its timeout) are about those calls; the rules about
//! how it is repeated (cap, waits, jitter, cancellation) are about the loop.
//!
//! A **wrapper** is a function or method with a callable parameter (a generic bounded by `Fn*`
//! or `AsyncFn*`, `impl Fn*`, `&dyn Fn*`, `Box<dyn Fn*>`) that one of its own retry sites calls
//! (`f()`, `(f)()`, `f.call(..)`) or hands to a retry combinator (`backoff::retry(policy, f)`),
//! or with a request parameter (a type of `[clients] request_types`: `RequestBuilder`) that one
//! of its own retry sites uses (`for .. { req.try_clone()?.send() }`): every call re-sends the
//! request its caller built ([`Takes`]). A function that hands its own callable or request
//! parameter on to a wrapper, at the wrapper's position, is a wrapper too (`fn send(req) {
//! send_with_retries(req) }`): each file records these hand-offs ([`Delegation`]) and
//! [`close`] follows them over the crate's wrappers, so a chain of helpers across files is
//! seen from its outermost caller.
//! The collector finds wrappers while it walks a file ([`Wrapper`]); the driver gathers a
//! crate's wrappers after pass one and lints the files that name one again with them, and the
//! collector then makes each call of a wrapper a retry site of kind
//! [`SiteKind::Wrapper`](super::SiteKind::Wrapper), bounded the way the wrapper's loop is.
//!
//! Resolution is by name, as far as the syntax tells: a path call resolves through the file's
//! `use` table and matches a wrapper of that name whose module (the file it is defined in) or
//! `impl` type is the path's last qualifier; a bare name matches a wrapper of the same file or
//! one imported by name; a method call matches `self.name(..)` inside the wrapper's own `impl`,
//! or any receiver when exactly one wrapper method of the crate has that name. Deliberately
//! absent: types (a wrapper reached through a trait object or a variable is not seen).

use super::imports::Imports;
use super::Cap;

/// A function of the crate that retries the callable it is given.
// The flags are independent facts of the wrapper's loop, copied to every call's site as the
// same flags of `RetrySite`; an enum would have to encode their product.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrapper {
    /// The function's name.
    pub name: String,
    /// The `impl` type it is defined in, if any.
    pub owner: Option<String>,
    /// It takes `self` (called as a method).
    pub method: bool,
    /// Position of the callable or request among the arguments a caller writes (`self` not
    /// counted).
    pub param: usize,
    /// What it is handed to repeat.
    pub takes: Takes,
    /// The attempt cap of the loop that retries it.
    pub cap: Cap,
    /// The loop has a time bound (a deadline check, or it runs under a deadline wrapper).
    pub deadline: bool,
    /// The loop checks or races a cancellation signal.
    pub checks_cancel: bool,
    /// The loop leaves on some failure, so it is not known to be unbounded.
    pub exits_on_failure: bool,
    /// The loop goes round only after failures where the request was never applied
    /// (`requests`' non-delivery test of the loop).
    pub refusals_only: bool,
    /// The loop decides which errors go round (it is not silent about them: a classifier, a
    /// status class), so a call's operation failing is not simply retried
    /// ([`super::status`]).
    pub classifies: bool,
    /// The loop, in the defining file (meaningful there only).
    pub site: Option<crate::base::source::Span>,
    /// The module it is defined in, as the last segment of its path (`retry` for
    /// `src/retry.rs` or `src/retry/mod.rs`, `crate` for the crate root); set by the driver,
    /// `None` while the defining file is analysed alone.
    pub module: Option<String>,
    /// Display path of the defining file (set with `module`).
    pub file: Option<String>,
}

/// What a wrapper repeats: the operation a caller hands it, or the request a caller built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// A closure or function it calls once per attempt.
    Callable,
    /// A request it sends once per attempt (cloning it, or rebuilding from it).
    Request,
}

/// A function that hands its own callable or request parameter to another call: if that call
/// names a wrapper at the same position, the function is a wrapper too ([`close`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delegation {
    /// The handing function: its name, `impl` type, whether it takes `self`, the position of
    /// its parameter among its callers' arguments and what that parameter is.
    pub name: String,
    pub owner: Option<String>,
    pub method: bool,
    pub param: usize,
    pub takes: Takes,
    /// The call it hands the parameter to.
    pub callee: Callee,
    /// The parameter's position among that call's arguments (`self` not counted).
    pub arg: usize,
    /// Set by the driver with the wrappers' (see [`Wrapper::module`]).
    pub module: Option<String>,
    pub file: Option<String>,
}

/// How a delegation names its callee, resolved as far as the calling file's `use` table goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Callee {
    /// `f(..)`, `module::f(..)`, `Self::f(..)`: the path as written, its resolutions, and
    /// whether a bare name is defined in the calling file.
    Path {
        segments: Vec<String>,
        candidates: Vec<String>,
        local: bool,
    },
    /// `receiver.f(..)`, with whether the receiver is `self` and the receiver's type where the
    /// calling file declares it ([`super::types`]).
    Method {
        name: String,
        on_self: bool,
        receiver: Option<String>,
    },
}

impl Wrapper {
    /// How findings name it: `module::name` or `Type::name`.
    #[must_use]
    pub fn display(&self) -> String {
        match (&self.owner, &self.module) {
            (Some(t), _) => format!("{t}::{}", self.name),
            (None, Some(m)) if m != "crate" => format!("{m}::{}", self.name),
            _ => self.name.clone(),
        }
    }
}

/// The module segment a file defines, from its display path: the file stem, or the directory
/// of a `mod.rs`, and `crate` for a crate root (`lib.rs`, `main.rs`, a `src/bin/*.rs`).
#[must_use]
pub fn module_of_path(path: &str) -> String {
    let parts: Vec<&str> = path.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    let Some(file) = parts.last() else {
        return "crate".into();
    };
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    let parent = parts.len().checked_sub(2).map(|i| parts[i]);
    match stem {
        "lib" | "main" => "crate".into(),
        "mod" => parent.unwrap_or("crate").to_string(),
        _ if parent == Some("bin") => "crate".into(),
        _ => stem.to_string(),
    }
}

/// The callable parameters of a signature: `(name, position among the caller's arguments)`.
#[must_use]
pub fn callable_params(sig: &syn::Signature) -> Vec<(String, usize)> {
    // Generic parameters bounded by a closure trait, inline or in the `where` clause.
    let mut callable_generics: Vec<String> = Vec::new();
    for g in &sig.generics.params {
        if let syn::GenericParam::Type(t) = g {
            if t.bounds.iter().any(is_fn_bound) {
                callable_generics.push(t.ident.to_string());
            }
        }
    }
    if let Some(w) = &sig.generics.where_clause {
        for p in &w.predicates {
            if let syn::WherePredicate::Type(pt) = p {
                if let syn::Type::Path(tp) = &pt.bounded_ty {
                    if tp.qself.is_none() && pt.bounds.iter().any(is_fn_bound) {
                        if let Some(id) = tp.path.get_ident() {
                            callable_generics.push(id.to_string());
                        }
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut pos = 0;
    for input in &sig.inputs {
        let syn::FnArg::Typed(pt) = input else {
            continue;
        };
        if let syn::Pat::Ident(id) = &*pt.pat {
            if is_callable_type(&pt.ty, &callable_generics) {
                out.push((id.ident.to_string(), pos));
            }
        }
        pos += 1;
    }
    out
}

/// The request parameters of a signature (through references and `mut`): `(name, position
/// among the caller's arguments)`, for the types `is_request` accepts.
#[must_use]
pub fn request_params(
    sig: &syn::Signature,
    is_request: impl Fn(&syn::Path) -> bool,
) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    for input in &sig.inputs {
        let syn::FnArg::Typed(pt) = input else {
            continue;
        };
        let mut ty = &*pt.ty;
        while let syn::Type::Reference(r) = ty {
            ty = &r.elem;
        }
        if let (syn::Pat::Ident(id), syn::Type::Path(p)) = (&*pt.pat, ty) {
            if p.qself.is_none() && is_request(&p.path) {
                out.push((id.ident.to_string(), pos));
            }
        }
        pos += 1;
    }
    out
}

/// Does the signature take `self`?
#[must_use]
pub fn takes_self(sig: &syn::Signature) -> bool {
    matches!(sig.inputs.first(), Some(syn::FnArg::Receiver(_)))
}

const FN_TRAITS: &[&str] = &[
    "Fn",
    "FnMut",
    "FnOnce",
    "AsyncFn",
    "AsyncFnMut",
    "AsyncFnOnce",
];

fn is_fn_bound(b: &syn::TypeParamBound) -> bool {
    match b {
        syn::TypeParamBound::Trait(t) => t
            .path
            .segments
            .last()
            .is_some_and(|s| FN_TRAITS.contains(&s.ident.to_string().as_str())),
        _ => false,
    }
}

fn is_callable_type(ty: &syn::Type, generics: &[String]) -> bool {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            if let Some(id) = p.path.get_ident() {
                return generics.iter().any(|g| id == g);
            }
            // `Box<dyn Fn..>`, `Arc<dyn Fn..>`.
            let last = p.path.segments.last();
            last.is_some_and(|s| {
                matches!(s.ident.to_string().as_str(), "Box" | "Arc" | "Rc")
                    && match &s.arguments {
                        syn::PathArguments::AngleBracketed(a) => a.args.iter().any(|a| {
                            matches!(a, syn::GenericArgument::Type(t) if is_callable_type(t, generics))
                        }),
                        _ => false,
                    }
            })
        }
        syn::Type::ImplTrait(t) => t.bounds.iter().any(is_fn_bound),
        syn::Type::TraitObject(t) => t.bounds.iter().any(is_fn_bound),
        syn::Type::Reference(r) => is_callable_type(&r.elem, generics),
        syn::Type::Paren(p) => is_callable_type(&p.elem, generics),
        _ => false,
    }
}

/// Method names too common to link a call to a wrapper method by name alone.
pub(super) const COMMON_METHODS: &[&str] = &[
    "map", "and_then", "then", "call", "run", "with", "apply", "execute", "get", "send",
];

/// The wrapper a call of a function path names, if any. `segments` is the path as written,
/// `impl_type` the `impl` the call is in, `here` the display path of the calling file.
#[must_use]
pub fn for_path<'w>(
    wrappers: &'w [Wrapper],
    imports: &Imports,
    segments: &[String],
    impl_type: Option<&str>,
    here: &str,
) -> Option<&'w Wrapper> {
    let name = segments.last()?;
    // Most calls name no wrapper: resolve only those that could.
    if !wrappers.iter().any(|w| !w.method && &w.name == name) {
        return None;
    }
    let candidates = imports.resolve(segments);
    for_resolved(
        wrappers,
        segments,
        &candidates,
        imports.is_local(name),
        impl_type,
        here,
    )
}

/// [`for_path`] with the path's resolutions (`candidates`) and whether a bare name is defined
/// in the calling file (`local`) already known.
fn for_resolved<'w>(
    wrappers: &'w [Wrapper],
    segments: &[String],
    candidates: &[String],
    local: bool,
    impl_type: Option<&str>,
    here: &str,
) -> Option<&'w Wrapper> {
    let name = segments.last()?;
    wrappers
        .iter()
        .filter(|w| !w.method && &w.name == name)
        .find(|w| {
            if segments.len() == 1 {
                let same_file = w.file.as_deref().is_none_or(|f| f == here);
                return (same_file && local) || candidates.iter().any(|c| qualifier_matches(c, w));
            }
            let qualifier = &segments[segments.len() - 2];
            if qualifier == "Self" {
                return w.owner.is_some() && w.owner.as_deref() == impl_type;
            }
            w.owner.as_deref() == Some(qualifier.as_str())
                || candidates.iter().any(|c| qualifier_matches(c, w))
        })
}

/// The wrapper a method call `receiver.name(..)` names, if any: the one defined on the
/// receiver's type when that is known (`self` in an `impl`, or `receiver_type`, what the file
/// declares: [`super::types`]), else the only one of an uncommon name.
#[must_use]
pub fn for_method<'w>(
    wrappers: &'w [Wrapper],
    name: &str,
    receiver_is_self: bool,
    impl_type: Option<&str>,
    receiver_type: Option<&str>,
) -> Option<&'w Wrapper> {
    let mut named = wrappers.iter().filter(|w| w.method && w.name == name);
    let first = named.next()?;
    let owner = if receiver_is_self {
        impl_type
    } else {
        receiver_type
    };
    if let Some(owner) = owner.filter(|t| !t.is_empty()) {
        if let Some(w) = std::iter::once(first)
            .chain(named.clone())
            .find(|w| w.owner.as_deref() == Some(owner))
        {
            return Some(w);
        }
    }
    // Any receiver: only a name that links to one method and is not an everyday one.
    (named.next().is_none() && !COMMON_METHODS.contains(&name)).then_some(first)
}

/// Bound on the hand-off chains [`close`] follows (each round follows one more hop).
pub const CHAIN: usize = 4;

/// Add to `wrappers` the functions that hand their parameter on to one, a few hops deep: each
/// is bounded, cancelled and classifying the way the wrapper it hands to is, and its loop is
/// that wrapper's (`site` stays `None`: no loop of its own file).
pub fn close(wrappers: &mut Vec<Wrapper>, delegations: &[Delegation]) {
    for _ in 0..CHAIN {
        let mut added = Vec::new();
        for d in delegations {
            let exists = |w: &Wrapper| w.name == d.name && w.owner == d.owner && w.file == d.file;
            if wrappers.iter().chain(&added).any(exists) {
                continue;
            }
            let here = d.file.as_deref().unwrap_or_default();
            let target = match &d.callee {
                Callee::Path {
                    segments,
                    candidates,
                    local,
                } => for_resolved(
                    wrappers,
                    segments,
                    candidates,
                    *local,
                    d.owner.as_deref(),
                    here,
                ),
                Callee::Method {
                    name,
                    on_self,
                    receiver,
                } => for_method(
                    wrappers,
                    name,
                    *on_self,
                    d.owner.as_deref(),
                    receiver.as_deref(),
                ),
            };
            let Some(t) = target.filter(|t| t.param == d.arg && t.takes == d.takes) else {
                continue;
            };
            added.push(Wrapper {
                name: d.name.clone(),
                owner: d.owner.clone(),
                method: d.method,
                param: d.param,
                takes: d.takes,
                site: None,
                module: d.module.clone(),
                file: d.file.clone(),
                ..t.clone()
            });
        }
        if added.is_empty() {
            return;
        }
        wrappers.extend(added);
    }
}

/// `crate::retry::retry` names a wrapper `retry` of module `retry` (or of `Type` for
/// `Type::retry`).
fn qualifier_matches(candidate: &str, w: &Wrapper) -> bool {
    let mut segs = candidate.rsplit("::");
    if segs.next() != Some(w.name.as_str()) {
        return false;
    }
    match segs.next() {
        Some(q) => {
            w.module.as_deref() == Some(q)
                || w.owner.as_deref() == Some(q)
                || (q == "crate" && w.module.as_deref() == Some("crate"))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(src: &str) -> syn::Signature {
        let f: syn::ItemFn = syn::parse_str(src).unwrap();
        f.sig
    }

    #[test]
    fn callable_parameters_of_every_spelling() {
        let cases = [
            ("fn r<F: FnMut() -> T, T>(n: u32, f: F) {}", vec![("f", 1)]),
            ("fn r<F>(f: F) where F: Fn() -> u8 {}", vec![("f", 0)]),
            ("fn r(op: impl AsyncFnMut() -> u8) {}", vec![("op", 0)]),
            ("fn r(op: &dyn Fn(u8) -> u8, x: u8) {}", vec![("op", 0)]),
            (
                "fn r(x: u8, op: Box<dyn FnOnce() + Send>) {}",
                vec![("op", 1)],
            ),
            ("fn r<F: Fn()>(f: &mut F) {}", vec![("f", 0)]),
        ];
        for (src, want) in cases {
            let want: Vec<(String, usize)> =
                want.into_iter().map(|(n, p)| (n.to_string(), p)).collect();
            assert_eq!(callable_params(&sig(src)), want, "{src}");
        }
        // Near misses: a value, an iterator, a generic that is not a closure.
        for src in [
            "fn r(n: u32, s: String) {}",
            "fn r<I: Iterator<Item = u8>>(i: I) {}",
            "fn r<T: Clone>(t: T) {}",
            "fn r(f: fn() -> u8) {}",
        ] {
            assert!(callable_params(&sig(src)).is_empty(), "{src}");
        }
    }

    #[test]
    fn modules_from_paths() {
        assert_eq!(module_of_path("src/retry.rs"), "retry");
        assert_eq!(module_of_path("src/http/retry/mod.rs"), "retry");
        assert_eq!(module_of_path("src/lib.rs"), "crate");
        assert_eq!(module_of_path("src/bin/tool.rs"), "crate");
        assert_eq!(module_of_path("crates\\a\\src\\backoff.rs"), "backoff");
    }

    fn wrapper(name: &str, owner: Option<&str>, method: bool, module: &str) -> Wrapper {
        Wrapper {
            name: name.into(),
            owner: owner.map(Into::into),
            method,
            param: 0,
            takes: Takes::Callable,
            cap: Cap::Literal(5),
            deadline: false,
            checks_cancel: false,
            exits_on_failure: true,
            refusals_only: false,
            classifies: false,
            site: None,
            module: Some(module.into()),
            file: Some(format!("src/{module}.rs")),
        }
    }

    #[test]
    fn calls_resolve_through_the_use_table_and_the_module() {
        let ws = [wrapper("retry", None, false, "retry")];
        let file = syn::parse_file("use crate::retry;\nuse other::retry as r2;").unwrap();
        let imports = Imports::collect(&file);
        let segs = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
        assert!(for_path(&ws, &imports, &segs("retry::retry"), None, "src/a.rs").is_some());
        assert!(for_path(
            &ws,
            &imports,
            &segs("crate::retry::retry"),
            None,
            "src/a.rs"
        )
        .is_some());
        // Another crate's `retry` module, or a function of another module.
        assert!(for_path(&ws, &imports, &segs("backoff::retry"), None, "src/a.rs").is_none());
        assert!(for_path(&ws, &imports, &segs("r2"), None, "src/a.rs").is_none());
        // A bare name: only where it is the wrapper's own file or imported by name.
        let plain = Imports::collect(&syn::parse_file("fn retry() {}").unwrap());
        assert!(for_path(&ws, &plain, &segs("retry"), None, "src/retry.rs").is_some());
        assert!(for_path(&ws, &plain, &segs("retry"), None, "src/b.rs").is_none());
        let imported = Imports::collect(&syn::parse_file("use crate::retry::retry;").unwrap());
        assert!(for_path(&ws, &imported, &segs("retry"), None, "src/b.rs").is_some());
    }

    #[test]
    fn methods_link_by_impl_or_a_unique_name() {
        let ws = [
            wrapper("with_retry", Some("Client"), true, "client"),
            wrapper("call", Some("Api"), true, "api"),
        ];
        assert!(for_method(&ws, "with_retry", false, None, None).is_some());
        assert!(for_method(&ws, "with_retry", true, Some("Other"), None).is_some());
        // An everyday name links only through `self` in its own impl.
        assert!(for_method(&ws, "call", false, None, None).is_none());
        assert!(for_method(&ws, "call", true, Some("Api"), None).is_some());
        assert!(for_method(&ws, "missing", true, Some("Api"), None).is_none());
    }

    fn handing(name: &str, param: usize, takes: Takes, callee: &str, arg: usize) -> Delegation {
        Delegation {
            name: name.into(),
            owner: None,
            method: false,
            param,
            takes,
            callee: Callee::Path {
                segments: vec![callee.into()],
                candidates: vec![format!("crate::send::{callee}")],
                local: false,
            },
            arg,
            module: Some("send".into()),
            file: Some("src/send.rs".into()),
        }
    }

    #[test]
    fn request_parameters_through_references() {
        let is_request = |p: &syn::Path| {
            p.segments
                .last()
                .is_some_and(|s| s.ident == "RequestBuilder")
        };
        assert_eq!(
            request_params(
                &sig("fn s(n: u32, req: &mut RequestBuilder) {}"),
                is_request
            ),
            vec![("req".to_string(), 1)]
        );
        assert!(request_params(&sig("fn s(req: Request, f: F) {}"), is_request).is_empty());
    }

    /// A function handing its request to a resending wrapper is one too, and so is the function
    /// handing it to that one (two hops), each bounded like the loop at the end of the chain.
    /// Near misses: a hand-off of another argument position, and a request handed to a wrapper
    /// that repeats a closure.
    #[test]
    fn hand_offs_are_followed_along_a_chain() {
        let mut resend = wrapper("resend", None, false, "send");
        resend.takes = Takes::Request;
        resend.param = 0;
        let ws_before = vec![resend, wrapper("retry", None, false, "send")];
        let mut ws = ws_before.clone();
        close(
            &mut ws,
            &[
                handing("send_text", 0, Takes::Request, "resend", 0),
                handing("send_json", 1, Takes::Request, "send_text", 0),
                handing("send_late", 0, Takes::Request, "resend", 1),
                handing("send_op", 0, Takes::Request, "retry", 0),
            ],
        );
        let added: Vec<(&str, usize, &Cap)> = ws[ws_before.len()..]
            .iter()
            .map(|w| (w.name.as_str(), w.param, &w.cap))
            .collect();
        assert_eq!(
            added,
            vec![
                ("send_text", 0, &Cap::Literal(5)),
                ("send_json", 1, &Cap::Literal(5))
            ]
        );
        assert!(ws[ws_before.len()..]
            .iter()
            .all(|w| w.site.is_none() && w.takes == Takes::Request));
    }
}
