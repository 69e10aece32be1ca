//! What a backoff strategy says about how many attempts a combinator makes, read from the
//! strategy expression and from the configuration chain applied to the combinator itself
//! (`tryhard::retry_fn(op).retries(5)`), with the vocabulary of `rules/apis.toml`
//! `[strategies]`.
//!
//! An expression is read in the order it is evaluated. A constructor gives the strategy's default
//! bound (backon's builders: 3 retries; backoff's `ExponentialBackoff`: 15 minutes in all;
//! tokio-retry's, tokio-retry2's and finito's iterators: none), and each method or struct field
//! after it may set the attempt cap, switch it off (`without_max_times()`, or a cap of `None`,
//! `u32::MAX`, `usize::max_value()`), or set or switch off the total time. A local bound to a
//! strategy earlier in the function is read through its binding (`let s = FixedInterval::
//! from_millis(10).take(3); Retry::spawn(s, op)`).
//!
//! Deliberately absent: strategies built in another function, taken as a parameter or stored in
//! a field. They read as `Cap::Unknown`, and no finding rests on what cannot be read.

use std::collections::HashMap;

use syn::Expr;

use super::Cap;
use crate::base::apis::Strategies;

/// What has been read of a strategy so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Reading {
    /// The attempt cap, once a constructor or a method set it (`Cap::None`: switched off).
    cap: Option<Cap>,
    /// `Some(true)`: the total time is bounded; `Some(false)`: that bound was switched off.
    total: Option<bool>,
    /// The total was given an option as it is (`.with_max_elapsed_time(opts.max_elapsed)`):
    /// these methods take an `Option`, and its `None` switches the bound off.
    total_option: Option<String>,
    /// The constructor makes a strategy that never stops by itself.
    endless: bool,
}

impl Reading {
    /// Nothing of a strategy was read.
    pub(super) fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The attempt cap this reading gives a retry site.
    pub(super) fn cap(&self) -> Cap {
        match (&self.cap, self.total) {
            (Some(c), _) if *c != Cap::None => c.clone(),
            (_, Some(true)) => self
                .total_option
                .clone()
                .map_or(Cap::Symbolic, Cap::OffWhenNone),
            (Some(_), _) | (None, Some(false)) => Cap::None,
            (None, None) if self.endless => Cap::None,
            (None, None) => Cap::Unknown,
        }
    }

    /// What a later part of the configuration set, on top of this.
    pub(super) fn then(&mut self, later: &Reading) {
        if later.cap.is_some() {
            self.cap.clone_from(&later.cap);
        }
        if later.total.is_some() {
            self.total = later.total;
            self.total_option.clone_from(&later.total_option);
        }
        self.endless |= later.endless;
    }

    /// Read `e` on top of what is known (a constructor first, then its methods and fields).
    pub(super) fn read(&mut self, e: &Expr, v: &Strategies, locals: &HashMap<String, Reading>) {
        match e {
            Expr::MethodCall(m) => {
                self.read(&m.receiver, v, locals);
                self.apply(&m.method.to_string(), m.args.first(), v);
            }
            Expr::Call(c) => {
                if let Expr::Path(p) = &*c.func {
                    self.construct(&last_two(&p.path), v);
                }
            }
            Expr::Struct(s) => {
                let ty = s
                    .path
                    .segments
                    .last()
                    .map(|x| x.ident.to_string())
                    .unwrap_or_default();
                // A struct literal of a time-bounded strategy type keeps that default for the
                // fields it does not name (`..Default::default()`).
                if v.timed
                    .iter()
                    .any(|t| t.split("::").next() == Some(ty.as_str()))
                {
                    self.total = Some(true);
                }
                for f in &s.fields {
                    if let syn::Member::Named(n) = &f.member {
                        self.apply(&n.to_string(), Some(&f.expr), v);
                    }
                }
            }
            Expr::Path(p) => {
                if let Some(r) = p.path.get_ident().and_then(|i| locals.get(&i.to_string())) {
                    *self = r.clone();
                }
            }
            Expr::Paren(x) => self.read(&x.expr, v, locals),
            Expr::Reference(x) => self.read(&x.expr, v, locals),
            Expr::Group(x) => self.read(&x.expr, v, locals),
            Expr::Try(x) => self.read(&x.expr, v, locals),
            _ => {}
        }
    }

    /// A method (or a struct field) named `name`, given `arg`.
    pub(super) fn apply(&mut self, name: &str, arg: Option<&Expr>, v: &Strategies) {
        let has = |list: &[String]| list.iter().any(|m| m == name);
        if has(&v.uncapped) {
            self.cap = Some(Cap::None);
        } else if has(&v.retry_caps) {
            self.cap = Some(count(arg, 1));
        } else if has(&v.attempt_caps) {
            self.cap = Some(count(arg, 0));
        } else if has(&v.totals) {
            self.total = Some(!arg.is_some_and(is_none));
            // A configuration field named like a limit handed on as it is
            // (`opts.max_elapsed_time`); `Some(d)`, a call, a literal or a local (whose value
            // is not read here) is taken as set.
            self.total_option = arg
                .filter(|a| matches!(a, Expr::Field(_)))
                .and_then(super::optional_cap::option_name);
        }
    }

    fn construct(&mut self, key: &str, v: &Strategies) {
        if v.endless.iter().any(|c| c == key) {
            self.endless = true;
        } else if let Some(c) = v.capped.iter().find(|c| c.name == key) {
            self.cap = Some(Cap::Literal(c.retries + 1));
        } else if v.timed.iter().any(|c| c == key) {
            self.total = Some(true);
        }
    }
}

/// The methods applied after a call, outermost last, when `m` is the outermost method of a chain
/// whose root is a call: `retry_fn(op).retries(3).fixed_backoff(d)` gives the root call
/// `retry_fn(op)` and `[retries(3), fixed_backoff(d)]`. Awaits, `?` and parentheses between the
/// methods are looked through.
pub(super) fn chain_above_call(
    m: &syn::ExprMethodCall,
) -> Option<(&syn::ExprCall, Vec<&syn::ExprMethodCall>)> {
    let mut methods = vec![m];
    let mut e = &*m.receiver;
    loop {
        match e {
            Expr::MethodCall(inner) => {
                methods.push(inner);
                e = &inner.receiver;
            }
            Expr::Await(x) => e = &x.base,
            Expr::Try(x) => e = &x.expr,
            Expr::Paren(x) => e = &x.expr,
            Expr::Call(c) => {
                methods.reverse();
                return Some((c, methods));
            }
            _ => return None,
        }
    }
}

/// `A::b` of a path (`tokio_retry::strategy::FixedInterval::from_millis` -> `FixedInterval::
/// from_millis`), or its only segment.
fn last_two(p: &syn::Path) -> String {
    let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
    segs[segs.len().saturating_sub(2)..].join("::")
}

/// The cap a count argument sets: `n` plus `plus` attempts, none for `None` or an integer type's
/// maximum, symbolic for anything else.
fn count(arg: Option<&Expr>, plus: u64) -> Cap {
    let Some(mut a) = arg else {
        return Cap::Symbolic;
    };
    // `Some(5)` is the cap 5.
    if let Expr::Call(c) = a {
        if matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Some")) && c.args.len() == 1 {
            a = &c.args[0];
        }
    }
    if is_none(a) || super::optional_cap::is_int_max(a) {
        return Cap::None;
    }
    match a {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i
            .base10_parse::<u64>()
            .map_or(Cap::Symbolic, |n| Cap::Literal(n.saturating_add(plus))),
        _ => Cap::Symbolic,
    }
}

fn is_none(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident("None"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::apis::Apis;

    /// The cap a strategy expression reads as, with the built-in vocabulary.
    fn cap(src: &str) -> Cap {
        let apis = Apis::builtin();
        let e: Expr = syn::parse_str(src).unwrap();
        let mut r = Reading::default();
        r.read(&e, &apis.strategies, &HashMap::new());
        r.cap()
    }

    #[test]
    fn endless_constructors_need_a_cap() {
        assert_eq!(
            cap("ExponentialBackoff::from_millis(10).map(jitter)"),
            Cap::None
        );
        assert_eq!(
            cap("FixedInterval::from_millis(10).take(3)"),
            Cap::Literal(4)
        );
        assert_eq!(cap("FixedInterval::from_millis(10).take(n)"), Cap::Symbolic);
        assert_eq!(
            cap("FixedInterval::from_millis(10).take(usize::MAX)"),
            Cap::None
        );
        assert_eq!(
            cap("tokio_retry2::strategy::ExponentialFactorBackoff::from_millis(10, 2.0)"),
            Cap::None
        );
    }

    #[test]
    fn builders_keep_their_default_until_switched_off() {
        assert_eq!(cap("ExponentialBuilder::default()"), Cap::Literal(4));
        assert_eq!(
            cap("ExponentialBuilder::default().with_max_times(5)"),
            Cap::Literal(6)
        );
        assert_eq!(
            cap("ExponentialBuilder::default().without_max_times()"),
            Cap::None
        );
        assert_eq!(
            cap("ExponentialBuilder::default().without_max_times().with_total_delay(Some(d))"),
            Cap::Symbolic
        );
        assert_eq!(
            cap("ExponentialBuilder::default().with_max_times(u32::MAX)"),
            Cap::None
        );
        assert_eq!(
            cap("ExponentialBuilder::default().with_max_times(std::usize::max_value())"),
            Cap::None
        );
    }

    #[test]
    fn a_time_bound_switched_off_leaves_nothing() {
        assert_eq!(cap("ExponentialBackoff::default()"), Cap::Symbolic);
        assert_eq!(
            cap("ExponentialBackoff { max_elapsed_time: None, ..Default::default() }"),
            Cap::None
        );
        assert_eq!(
            cap("ExponentialBackoffBuilder::new().with_max_elapsed_time(None).build()"),
            Cap::None
        );
        assert_eq!(
            cap("ExponentialBackoffBuilder::new().with_max_elapsed_time(Some(d)).build()"),
            Cap::Symbolic
        );
    }

    #[test]
    fn a_time_bound_handed_an_option_is_off_when_it_is_none() {
        assert_eq!(
            cap("ExponentialBackoffBuilder::new().with_max_elapsed_time(self.options.retry_max_elapsed_time).build()"),
            Cap::OffWhenNone("retry_max_elapsed_time".into())
        );
        assert_eq!(
            cap("ExponentialBackoff { max_elapsed_time: cfg.max_elapsed_time, ..Default::default() }"),
            Cap::OffWhenNone("max_elapsed_time".into())
        );
        // An attempt cap beside it bounds the strategy whatever the option says.
        assert_eq!(
            cap("ExponentialBuilder::default().with_total_delay(cfg.max_total_delay).with_max_times(5)"),
            Cap::Literal(6)
        );
        // Set on the spot, or a place not named like a limit: read as set.
        assert_eq!(
            cap("ExponentialBackoffBuilder::new().with_max_elapsed_time(Some(cfg.max_elapsed)).build()"),
            Cap::Symbolic
        );
        assert_eq!(
            cap("ExponentialBackoffBuilder::new().with_max_elapsed_time(self.patience).build()"),
            Cap::Symbolic
        );
        assert_eq!(
            cap("ExponentialBackoffBuilder::new().with_max_elapsed_time(max_elapsed).build()"),
            Cap::Symbolic
        );
    }

    #[test]
    fn what_cannot_be_read_is_unknown() {
        assert_eq!(cap("self.strategy.clone()"), Cap::Unknown);
        assert_eq!(cap("make_strategy()"), Cap::Unknown);
        // A cap that is not literal is still a cap.
        assert_eq!(
            cap("ConstantBuilder::default().with_max_times(cfg.n)"),
            Cap::Symbolic
        );
    }

    #[test]
    fn a_chain_after_a_call_is_found_through_awaits() {
        let e: Expr = syn::parse_str("retry_fn(op).retries(3).fixed_backoff(d).await").unwrap();
        let Expr::Await(a) = e else { panic!() };
        let Expr::MethodCall(m) = &*a.base else {
            panic!()
        };
        let (root, methods) = chain_above_call(m).unwrap();
        assert!(matches!(&*root.func, Expr::Path(p) if p.path.is_ident("retry_fn")));
        let names: Vec<String> = methods.iter().map(|m| m.method.to_string()).collect();
        assert_eq!(names, ["retries", "fixed_backoff"]);
    }
}
