//! The paths of a `loop` body that go round again, and whether a bound stands on each.
//!
//! A retry loop is bounded only if every way back to the top passes something that can end it:
//! an attempt check, a deadline, a budget, a strategy that runs out, a stop signal. An exit on a
//! different failure class is not a bound: `Err(Conflict) => continue, Err(e) => return Err(e)`
//! retries a conflict forever, and `if attempt < max { sleep }` with no `else` that gives up goes
//! round without sleeping once the attempts are spent. So the body is walked path by path
//! (statements in order, both branches of an `if`, every arm of a `match`), carrying whether a
//! gate has been passed; each `continue` and the fall-through at the body's end is a way round,
//! and the first one reached with no gate on its path is the site's unbounded round.
//!
//! A gate is a decision about the loop's bound (a comparison of a counter, the clock, a maximum
//! or a budget; a call such as `should_retry(attempt)` or `backoff.next()`; a strategy's
//! `ControlFlow::Break` answered by giving up) one of whose outcomes leaves the loop. The
//! decision's outcome that stays is gated too: it passed the check. Flags
//! set under such a decision (`if n > max { give_up = true }`) are gates where they are tested.
//! What cannot be seen (a `?` on a call of the crate's own give-up helper) is taken for a gate
//! when its name or arguments speak of attempts: a guess that keeps a finding away, never one
//! that makes it.
//!
//! A way round can also be one that is taken a bounded number of times by itself: its branch
//! tests a local counter or flag (`if nr_retries == 0`, `if !retried`, `n < 3`) and the path
//! steps it off the passing value before going round (`nr_retries += 1; continue`,
//! `retried = true; continue`), while every assignment of it in the loop steps it the same way
//! ([`Steps`]). Past that step the path is gated; a path of the branch that goes round without
//! it is not.
//!
//! The same walk tells whether any way round follows a failure at all. A path is a known success
//! from an explicit success test (`Ok(_)` arm, `if r.is_ok()`) until the next decision the words
//! do not classify; an `Ok` arm whose guard tests for a failure (`Ok(r) if
//! r.status().is_server_error()`) is a failure path, not a success; a loop whose every way round
//! is a known success repeats work that went well (a heartbeat's next ping) and is no retry site
//! ([`Flow::only_after_success`]).

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::Span;
use syn::visit::{self, Visit};
use syn::{Block, Expr, Stmt};

use super::bodies::Bodies;
// Parentheses only: `strip` here also drops a `!`, which is the test a once-test reads.
use super::collect::{int_lit, strip_parens};
use super::words::{ident_words_of, split_ident};
use crate::base::apis::Apis;

/// Words that make a compared operand or a tested flag a bound on attempts, time or budget.
/// Narrower than the cap words: the error's own data (`expired.key`, `min_commit_ts`) decides
/// which failure this is, not how many there have been.
const GATE_WORDS: &[&str] = &[
    "attempt",
    "attempts",
    "retry",
    "retries",
    "tries",
    "tried",
    "count",
    "counter",
    "max",
    "maximum",
    "limit",
    "budget",
    "remaining",
    "left",
    "times",
    "deadline",
    "elapsed",
    "now",
    "instant",
    "timeout",
    "total",
    "iteration",
    "iterations",
    "rounds",
    "num",
    "exhausted",
];
/// Words of a bound that a call can be handed and spend: a per-attempt `timeout` is not one.
const SPENT_BOUND_WORDS: &[&str] = &["budget", "deadline"];

/// Words of a called function or method that make its call a decision about the bound
/// (`should_retry`, `has_attempts_left`, `check_budget`, `handle_retry_error`).
const GATE_CALL_WORDS: &[&str] = &[
    "retry",
    "retries",
    "attempt",
    "attempts",
    "budget",
    "deadline",
    "remaining",
    "exhausted",
    "expired",
    "elapsed",
    "max",
    "limit",
    "give",
];
/// Receivers whose `.next()` is a strategy that ends by returning `None`.
const STRATEGY_WORDS: &[&str] = &[
    "backoff", "delay", "delays", "strategy", "schedule", "retry", "retries", "policy", "iter",
];
/// Words of a value that holds a strategy's or a budget's state: a `match` on it one of whose
/// arms leaves is the strategy running out. Not `retry`: `match retry_code` is the failure class.
const STRATEGY_STATE_WORDS: &[&str] = &[
    "backoff", "delay", "strategy", "schedule", "policy", "budget", "deadline",
];
/// Exit macros (they end the path the way `return` does).
const EXIT_MACROS: &[&str] = super::collect::EXIT_MACROS;

/// What ends a `while` over a flag: the value its header needs to stop going round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FlagEnd {
    /// `while !done`: `done = true` ends it.
    True,
    /// `while running`: `running = false` ends it.
    False,
    /// `while ip.is_none()`: any value but `None` ends it.
    NotNone,
    /// `while ip.is_some()`: `None` ends it.
    IsNone,
}

/// `done = true` for `while !done`, `ip = lookup()` for `while ip.is_none()`: an assignment
/// that (unless its value is literally the one that keeps the loop going) ends the loop.
fn ends_loop(flags: &BTreeMap<String, FlagEnd>, a: &syn::ExprAssign) -> bool {
    let Expr::Path(p) = &*a.left else {
        return false;
    };
    let Some(end) = p.path.get_ident().and_then(|id| flags.get(&id.to_string())) else {
        return false;
    };
    let bool_lit = match &*a.right {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Some(b.value),
        _ => None,
    };
    let none = matches!(&*a.right, Expr::Path(p) if p.path.is_ident("None"));
    match end {
        FlagEnd::True => bool_lit != Some(false),
        FlagEnd::False => bool_lit != Some(true),
        FlagEnd::NotNone => !none,
        FlagEnd::IsNone => none,
    }
}

/// The ways round of `body` (of a loop labelled `label`): the first that no gate stands on, and
/// whether any is taken after a failure. `counters` are the words of what the body increments;
/// `operations` the callable parameters of the function the loop is in (a wrapper's operation,
/// `retry_future()`), which are what is retried, never a decision about the bound, whatever
/// their names say.
pub(super) fn flow(
    body: &Block,
    label: Option<&str>,
    counters: &BTreeSet<String>,
    checkers: &BTreeSet<String>,
    header_flags: &BTreeMap<String, FlagEnd>,
    operations: &BTreeSet<String>,
    apis: &Apis,
) -> Flow {
    let mut gates = Gates {
        header_flags,
        operations,
        counters: counters.clone(),
        flags: BTreeSet::new(),
        gated_macros: BTreeSet::new(),
        checkers,
        asked: std::cell::RefCell::default(),
        worded: std::cell::RefCell::default(),
        crate_asked: std::cell::RefCell::default(),
        asking: std::cell::Cell::new(false),
        steps: Steps::of(body),
        apis,
    };
    gates.gated_macros = gated_macros(body, &gates);
    let mut flags = FlagScan {
        gates: &gates,
        found: BTreeSet::new(),
        under: 0,
    };
    flags.visit_block(body);
    gates.flags = flags.found;
    let mut w = Walk {
        gates: &gates,
        label: label.map(str::to_string),
        inner: Vec::new(),
        armed: Vec::new(),
        stepped_off: false,
        ungated: None,
        rounds: St::GONE,
        saw_gate: false,
    };
    let end = w.block(body, St::START, false);
    w.round(body.brace_token.span.close(), end);
    Flow {
        ungated: w.ungated.map(|at| Round {
            at,
            gated_elsewhere: w.saw_gate,
        }),
        only_after_success: w.rounds.reach() && !w.rounds.maybe_failed(),
        bounded_by_steps: w.stepped_off && w.ungated.is_none() && w.rounds.reach(),
        asked: gates.asked.take(),
        worded: gates.worded.take(),
        crate_asked: gates.crate_asked.take(),
    }
}

/// What the ways round of a loop body tell about the loop.
#[derive(Clone, Debug)]
pub(super) struct Flow {
    /// The first way round that no gate stands on.
    pub ungated: Option<Round>,
    /// Every way round is taken after an explicit success test, none after a failure or an
    /// unclassified decision: the loop repeats work that went well (a heartbeat's next ping,
    /// the next message), so it is no retry site, whatever else it does on failure.
    pub only_after_success: bool,
    /// Every way round is gated, some of them by a local stepped off its once-test's passing
    /// value (`if !retried { retried = true; continue }`): the ways round are bounded in number
    /// even with no attempt counter compared with a maximum.
    pub bounded_by_steps: bool,
    /// The calls asked whether they are a gate that no word made one (`Gates::asked`).
    pub asked: BTreeSet<String>,
    /// The calls that are gates by their name (`Gates::worded`).
    pub worded: BTreeSet<String>,
    /// The calls no word makes a gate, in a condition or under `?` (`Gates::crate_asked`).
    pub crate_asked: BTreeSet<String>,
}

/// A way round that no gate stands on.
#[derive(Clone, Copy, Debug)]
pub(super) struct Round {
    /// The `continue`, or the body's closing brace for the fall-through.
    pub at: Span,
    /// Some other path passes a gate: the loop has a bound that this path goes around.
    pub gated_elsewhere: bool,
}

/// How an assignment moves a local.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Step {
    /// `n += 1`, `n = n + 1`.
    Up,
    /// `n -= 1`, `n = n - 1`.
    Down,
    SetTrue,
    SetFalse,
    /// Anything else: a value computed, a `let` in the loop, a `&mut` handed out.
    Other,
}

/// The plain local `e` names, if it is one.
fn local(e: &Expr) -> Option<String> {
    match strip_parens(e) {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident().map(ToString::to_string),
        _ => None,
    }
}

/// `n += 1` / `n = n + 1` / `flag = true`: the local an expression steps, and how.
fn step_of(e: &Expr) -> Option<(String, Step)> {
    use syn::BinOp::{Add, AddAssign, Sub, SubAssign};
    let positive = |e: &Expr| int_lit(e).is_some_and(|n| n > 0);
    match e {
        Expr::Binary(b) if matches!(b.op, AddAssign(_) | SubAssign(_)) => {
            let v = local(&b.left)?;
            let up = matches!(b.op, AddAssign(_));
            let k = match (positive(&b.right), up) {
                (false, _) => Step::Other,
                (true, true) => Step::Up,
                (true, false) => Step::Down,
            };
            Some((v, k))
        }
        Expr::Assign(a) => {
            let v = local(&a.left)?;
            let k = match strip_parens(&a.right) {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Bool(b),
                    ..
                }) => {
                    if b.value {
                        Step::SetTrue
                    } else {
                        Step::SetFalse
                    }
                }
                Expr::Binary(b) if local(&b.left).as_ref() == Some(&v) && positive(&b.right) => {
                    match b.op {
                        Add(_) => Step::Up,
                        Sub(_) => Step::Down,
                        _ => Step::Other,
                    }
                }
                _ => Step::Other,
            };
            Some((v, k))
        }
        _ => None,
    }
}

/// Every way a loop body changes each local: its steps ([`step_of`]), and `Other` for a `let`
/// of the name or a `&mut` of it. Closures are read too: one the body runs may assign it.
#[derive(Default)]
struct Steps(BTreeMap<String, BTreeSet<Step>>);

impl Steps {
    fn of(body: &Block) -> Steps {
        struct V(Steps);
        impl<'ast> Visit<'ast> for V {
            fn visit_expr(&mut self, e: &'ast Expr) {
                if let Some((v, k)) = step_of(e) {
                    self.0 .0.entry(v).or_default().insert(k);
                }
                if let Expr::Reference(r) = e {
                    if r.mutability.is_some() {
                        if let Some(v) = local(&r.expr) {
                            self.0 .0.entry(v).or_default().insert(Step::Other);
                        }
                    }
                }
                visit::visit_expr(self, e);
            }
            fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
                let v = p.ident.to_string();
                self.0 .0.entry(v).or_default().insert(Step::Other);
                visit::visit_pat_ident(self, p);
            }
        }
        let mut v = V(Steps::default());
        v.visit_block(body);
        v.0
    }

    /// Every assignment of `v` in the loop is the step `k` (and there is one).
    fn only(&self, v: &str, k: Step) -> bool {
        self.0
            .get(v)
            .is_some_and(|s| s.len() == 1 && s.contains(&k))
    }

    fn assigns(&self, v: &str) -> bool {
        self.0.contains_key(v)
    }
}

/// What decides whether an expression is a gate.
struct Gates<'a> {
    /// The flags a `while` header tests (`while !done`): assigning one a value that ends the
    /// loop leaves it, like a `break`.
    header_flags: &'a BTreeMap<String, FlagEnd>,
    counters: BTreeSet<String>,
    /// The callable parameters the loop retries ([`flow`]): calls of them are no gate.
    operations: &'a BTreeSet<String>,
    /// Flags assigned under a gate.
    flags: BTreeSet<String>,
    /// `macro_rules!` defined in the body whose expansion leaves after a bound decision
    /// (`retry!(err)`: `attempted += 1; if attempted > max { return } else { continue }`).
    gated_macros: BTreeSet<String>,
    /// The file's own functions that decide on a bound and can give up (see [`bound_checkers`]).
    checkers: &'a BTreeSet<String>,
    /// Calls asked about that no word makes a gate: one of the file's that the parsed text
    /// does not hold may be a checker ([`super::Facts::hidden_callees`]).
    asked: std::cell::RefCell<BTreeSet<String>>,
    /// Calls that are gates by their name, in a condition or under `?`: one defined in
    /// another file of the crate may be an optional cap there
    /// ([`super::Facts::foreign_callees`]).
    worded: std::cell::RefCell<BTreeSet<String>>,
    /// Calls no word makes a gate, in a condition or under `?`: one defined in another file
    /// may decide on a bound there.
    crate_asked: std::cell::RefCell<BTreeSet<String>>,
    /// The expression judged is a condition or under `?` (not a matched value).
    asking: std::cell::Cell<bool>,
    /// How the loop body assigns each local ([`Steps`]).
    steps: Steps,
    apis: &'a Apis,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Place {
    /// An `if` condition, a guard, `ensure!`'s condition: a tested flag counts.
    Condition,
    /// A `match` scrutinee or a `let .. else` value: only counters and decisions count, not a
    /// variable that happens to be named `retry_code`.
    Value,
    /// The operand of `?`: judged as a value; a call there gives up when it fails, so it is
    /// one the crate is asked about ([`Gates::crate_asked`]), unlike a matched one, which is
    /// usually the retried operation itself.
    Try,
}

impl Gates<'_> {
    fn is_gate(&self, e: &Expr, place: Place) -> bool {
        self.asking.set(place != Place::Value);
        let place = if place == Place::Try {
            Place::Value
        } else {
            place
        };
        let mut v = GateScan {
            gates: self,
            found: false,
            closures: false,
        };
        match strip(e) {
            Expr::Path(_) | Expr::Field(_) if place == Place::Condition => {
                v.found = self.bound_word(&ident_words_of(e));
            }
            Expr::Path(_) | Expr::Field(_) => {
                let w = ident_words_of(e);
                v.found = w.iter().any(|w| {
                    self.counters.contains(w)
                        || self.flags.contains(w)
                        || STRATEGY_STATE_WORDS.contains(&w.as_str())
                });
            }
            // `match &mut *backoff { Waiting(d) => .., Stop => return }`: the strategy's state.
            Expr::Reference(_) | Expr::Unary(_) if place == Place::Value => {
                let mut inner = e;
                while let Expr::Reference(syn::ExprReference { expr, .. })
                | Expr::Unary(syn::ExprUnary { expr, .. }) = inner
                {
                    inner = expr;
                }
                if let Expr::Path(_) | Expr::Field(_) = inner {
                    let w = ident_words_of(inner);
                    v.found = w.iter().any(|w| STRATEGY_STATE_WORDS.contains(&w.as_str()));
                }
            }
            _ => {}
        }
        if !v.found {
            v.visit_expr(e);
        }
        v.found
    }

    /// The tests of `cond` that only a bounded number of rounds can pass, each as the local
    /// and the step that moves it off the passing value: `!flag` (set to `true`), `flag` (set
    /// to `false`), `n == k` (stepped one way), `n < k` / `n <= k` (counted up), `n > k` /
    /// `n >= k` (counted down), `k` a literal or a name the loop does not assign. Only a local
    /// every assignment of which in the loop is that same step qualifies. In a conjunction
    /// (`is_redirect() && nr == 0`) each part must pass, so a once-test among its parts is enough.
    fn once_tests(&self, cond: &Expr) -> Vec<(String, Step)> {
        let mut out = Vec::new();
        self.once_into(cond, &mut out);
        out.retain(|(v, k)| self.steps.only(v, *k));
        out
    }

    fn once_into(&self, cond: &Expr, out: &mut Vec<(String, Step)>) {
        use syn::BinOp::{And, Eq, Ge, Gt, Le, Lt};
        let invariant = |e: &Expr| match strip_parens(e) {
            Expr::Lit(_) | Expr::Field(_) => true,
            Expr::Path(p) => p
                .path
                .get_ident()
                .is_none_or(|id| !self.steps.assigns(&id.to_string())),
            _ => false,
        };
        match strip_parens(cond) {
            Expr::Binary(b) if matches!(b.op, And(_)) => {
                self.once_into(&b.left, out);
                self.once_into(&b.right, out);
            }
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
                if let Some(v) = local(&u.expr) {
                    out.push((v, Step::SetTrue));
                }
            }
            e @ Expr::Path(_) => {
                if let Some(v) = local(e) {
                    out.push((v, Step::SetFalse));
                }
            }
            Expr::Binary(b) => {
                // `n < k` or `k > n`: the local's side, read as `n op k`.
                let (v, up, down) = match (local(&b.left), local(&b.right)) {
                    (Some(v), _) if invariant(&b.right) => (
                        v,
                        matches!(b.op, Lt(_) | Le(_) | Eq(_)),
                        matches!(b.op, Gt(_) | Ge(_) | Eq(_)),
                    ),
                    (_, Some(v)) if invariant(&b.left) => (
                        v,
                        matches!(b.op, Gt(_) | Ge(_) | Eq(_)),
                        matches!(b.op, Lt(_) | Le(_) | Eq(_)),
                    ),
                    _ => return,
                };
                if up {
                    out.push((v.clone(), Step::Up));
                }
                if down {
                    out.push((v, Step::Down));
                }
            }
            _ => {}
        }
    }

    fn bound_word(&self, words: &BTreeSet<String>) -> bool {
        words.iter().any(|w| {
            GATE_WORDS.contains(&w.as_str()) || self.counters.contains(w) || self.flags.contains(w)
        })
    }
}

/// The file's functions and methods that decide on a bound and can give up: they return a
/// `Result` or an `Option` and their body compares a count, a maximum, a deadline or a budget
/// (`Some(max) if reconnects < max => ..`), tests one counted down to zero
/// (`if self.rounds_remaining == 0 { return Err(Exhausted) }`), asks a strategy, or calls
/// another such function. A `?` on a call of one, or a test of its answer, in a retry loop is
/// the loop's gate, as `should_retry(n)` is: nats' `let servers = self.get_servers()?` fails
/// once every server has used its reconnects.
///
/// `known` holds what the crate's other files answer for the names this file calls and does
/// not define (the driver's crate join, [`CrateHelpers`]); a name the file defines is its own.
/// A helper whose every decision is a call of an optional-cap helper (`if
/// !opts.allow_retry(n) { return Err(e) }`) inherits its escape: it is a cap `None` switches
/// off too. Helpers calling helpers are followed up to `HELPER_DEPTH` calls deep. A name defined
/// more than once is a gate when any definition is one, and an optional cap only when every
/// definition is the same. Also returns every function name the file defines, and the names
/// each give-up helper calls.
pub(super) fn bound_checkers(bodies: &Bodies<'_>, apis: &Apis, known: &CrateHelpers) -> Checkers {
    /// A decision against a maximum, a deadline or a budget, outside any loop of the helper:
    /// an `if` condition or a match guard comparing with one (`Some(max) if reconnects < max`,
    /// often inside a closure), a strategy asked whether to go on, or a call of a checker. A
    /// comparison that only reads data (`(m.delivery_attempt > 0).then_some(..)`) decides
    /// nothing.
    struct Decides<'a> {
        apis: &'a Apis,
        out: &'a Checkers,
        /// A decision that is not an optional-cap helper's.
        other: bool,
        /// The option of an optional-cap helper a decision calls.
        optional: Option<String>,
        /// The names the helper calls, for the crate join ([`Checkers::called`]).
        asks: BTreeSet<String>,
    }
    impl Decides<'_> {
        fn condition(&mut self, cond: &Expr) {
            struct Cmp<'a>(&'a [String], bool);
            impl<'ast> Visit<'ast> for Cmp<'_> {
                fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
                    use syn::BinOp::{Eq, Ge, Gt, Le, Lt, Ne};
                    // A count down to zero is a maximum too: `if self.rounds_remaining == 0
                    // { return Err(Exhausted) }` then `rounds_remaining -= 1`.
                    let to_zero = matches!(b.op, Eq(_) | Ne(_))
                        && [&*b.left, &*b.right]
                            .into_iter()
                            .any(|e| int_lit(e) == Some(0));
                    if to_zero || matches!(b.op, Lt(_) | Le(_) | Gt(_) | Ge(_)) {
                        let mut w = ident_words_of(&*b.left);
                        w.extend(ident_words_of(&*b.right));
                        self.1 |= w.iter().any(|w| self.0.contains(w));
                    }
                    visit::visit_expr_binary(self, b);
                }
            }
            let mut c = Cmp(&self.apis.retry.limit_words, false);
            c.visit_expr(cond);
            self.other |= c.1;
        }

        fn call(&mut self, name: String) {
            if let Some(option) = self.out.optional.get(&name) {
                self.optional.get_or_insert_with(|| option.clone());
            } else if self.out.bounds.contains(&name)
                || self.apis.retry.bounding_methods.contains(&name)
            {
                self.other = true;
            }
            self.asks.insert(name);
        }
    }
    impl<'ast> Visit<'ast> for Decides<'_> {
        // A decision inside the helper's own loop decides that loop (a helper that retries
        // by itself and gives up at its own maximum bounds its own attempts, not its caller's).
        fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {}
        fn visit_expr_while(&mut self, _: &'ast syn::ExprWhile) {}
        fn visit_expr_for_loop(&mut self, _: &'ast syn::ExprForLoop) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
        fn visit_expr_if(&mut self, e: &'ast syn::ExprIf) {
            self.condition(&e.cond);
            visit::visit_expr_if(self, e);
        }
        fn visit_arm(&mut self, a: &'ast syn::Arm) {
            if let Some((_, g)) = &a.guard {
                self.condition(g);
            }
            visit::visit_arm(self, a);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            self.call(m.method.to_string());
            visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            // Only a name that means a function of the crate: `check(..)`, `Self::check(..)`.
            if let Some(name) = super::imports::own_fn_name(&c.func) {
                self.call(name);
            }
            visit::visit_expr_call(self, c);
        }
    }
    /// An ordering comparison that reads the clock or a deadline (`start.elapsed() >= budget`,
    /// `Instant::now() > self.deadline`), outside the helper's own loops and closures.
    struct ClockCmp(bool);
    impl<'ast> Visit<'ast> for ClockCmp {
        fn visit_item(&mut self, _: &'ast syn::Item) {}
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {}
        fn visit_expr_while(&mut self, _: &'ast syn::ExprWhile) {}
        fn visit_expr_for_loop(&mut self, _: &'ast syn::ExprForLoop) {}
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            use syn::BinOp::{Ge, Gt, Le, Lt};
            if matches!(b.op, Lt(_) | Le(_) | Gt(_) | Ge(_)) {
                let mut w = ident_words_of(&*b.left);
                w.extend(ident_words_of(&*b.right));
                self.0 |= w
                    .iter()
                    .any(|w| super::collect::TIME_WORDS.contains(&w.as_str()));
            }
            visit::visit_expr_binary(self, b);
        }
    }
    let gives_up = |sig: &syn::Signature| match &sig.output {
        syn::ReturnType::Type(_, ty) => match &**ty {
            syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| {
                let name = s.ident.to_string();
                // `ControlFlow` is std's own answer to "stop or go on".
                name == "Option" || name.ends_with("Result") || name == "ControlFlow"
            }),
            _ => false,
        },
        syn::ReturnType::Default => false,
    };
    // Every body is known before any is judged: a helper may call one defined below it.
    let fns: Vec<(&syn::Signature, &Block)> = bodies.fns.iter().map(|b| (b.sig, b.block)).collect();
    let mut out = Checkers::default();
    // Each definition's own answer: a whole body that is the optional-cap disjunction.
    let mut whole: Vec<Option<String>> = Vec::with_capacity(fns.len());
    for (i, (sig, body)) in fns.iter().enumerate() {
        let name = sig.ident.to_string();
        // The whole answer is the disjunction: its tail expression, or a `return` of it.
        let tail = match body.stmts.as_slice() {
            [syn::Stmt::Expr(Expr::Return(r), _)] => r.expr.as_deref(),
            [syn::Stmt::Expr(e, None)] => Some(e),
            _ => None,
        };
        let none = std::collections::HashMap::new();
        whole.push(tail.and_then(|t| super::optional_cap::escaping_disjunction(t, &none)));
        let mut clock = ClockCmp(false);
        clock.visit_block(body);
        if clock.0 {
            out.clock.insert(name.clone());
        }
        // Two definitions of one name race what they both race.
        let raced = racing_params(sig, &bodies.raced[i]);
        out.races
            .entry(name.clone())
            .and_modify(|r| r.retain(|p| raced.contains(p)))
            .or_insert(raced);
        out.defined.insert(name);
    }
    out.races.retain(|_, r| !r.is_empty());
    for (name, raced) in &known.0.races {
        if !out.defined.contains(name) {
            out.races.insert(name.clone(), raced.clone());
        }
    }
    // The crate's answers for names this file does not define.
    let (crate_bounds, crate_optional): (BTreeSet<String>, BTreeMap<String, String>) = {
        let foreign = |n: &String| !out.defined.contains(n);
        let clock: Vec<String> = known
            .0
            .clock
            .iter()
            .filter(|n| foreign(n))
            .cloned()
            .collect();
        out.clock.extend(clock);
        (
            known
                .0
                .bounds
                .iter()
                .filter(|n| foreign(n))
                .cloned()
                .collect(),
            (known.0.optional.iter())
                .filter(|(n, _)| foreign(n))
                .map(|(n, o)| (n.clone(), o.clone()))
                .collect(),
        )
    };
    out.bounds.clone_from(&crate_bounds);
    out.optional.clone_from(&crate_optional);
    for ((sig, _), own) in fns.iter().zip(&whole) {
        if let Some(o) = own {
            out.optional.insert(sig.ident.to_string(), o.clone());
        }
    }
    // A helper's answer may rest on another's: each round recomputes every answer from the
    // last round's (an answer can be withdrawn: a helper that looked optional until its other
    // cap was found is a plain cap), until nothing changes, at most `HELPER_DEPTH` deep.
    for _ in 0..HELPER_DEPTH {
        // Per name: a bound if any definition decides one; an optional cap only if every
        // definition is the same one (two `allow_retry`s that disagree say nothing).
        let mut bounds = crate_bounds.clone();
        let mut optional: BTreeMap<String, Option<String>> = BTreeMap::new();
        let mut called = BTreeMap::new();
        for ((sig, body), own) in fns.iter().zip(&whole) {
            let name = sig.ident.to_string();
            let mut answer = own.clone();
            if gives_up(sig) {
                let mut scan = Decides {
                    apis,
                    out: &out,
                    other: false,
                    optional: None,
                    asks: BTreeSet::new(),
                };
                scan.visit_block(body);
                called
                    .entry(name.clone())
                    .or_insert_with(BTreeSet::new)
                    .append(&mut scan.asks);
                if scan.other || scan.optional.is_some() {
                    bounds.insert(name.clone());
                }
                if !scan.other && answer.is_none() {
                    answer = scan.optional;
                }
            }
            optional
                .entry(name)
                .and_modify(|a| {
                    if *a != answer {
                        *a = None;
                    }
                })
                .or_insert(answer);
        }
        let mut optional: BTreeMap<String, String> = (optional.into_iter())
            .filter_map(|(n, o)| o.map(|o| (n, o)))
            .collect();
        optional.extend(crate_optional.clone());
        out.called = called;
        if bounds == out.bounds && optional == out.optional {
            break;
        }
        out.bounds = bounds;
        out.optional = optional;
    }
    out
}

/// How many helpers deep a give-up helper's answer is followed through the helpers it calls.
const HELPER_DEPTH: usize = 16;

/// What other files of the crate answer for the helpers a file calls ([`bound_checkers`]), by
/// name: the driver joins it from the files that define the names a file's retry loops ask
/// about ([`super::Facts::foreign_callees`]). A name two files answer differently is left out.
#[derive(Debug, Default, Clone)]
pub struct CrateHelpers(pub(super) Checkers);

impl CrateHelpers {
    /// Nothing known: a file on its own.
    pub const NONE: &'static CrateHelpers = &CrateHelpers(Checkers {
        bounds: BTreeSet::new(),
        defined: BTreeSet::new(),
        clock: BTreeSet::new(),
        optional: std::collections::BTreeMap::new(),
        called: std::collections::BTreeMap::new(),
        races: std::collections::BTreeMap::new(),
    });

    /// Does it answer anything for one of `names`?
    #[must_use]
    pub fn answers_any<'n>(&self, mut names: impl Iterator<Item = &'n String>) -> bool {
        names.any(|n| {
            self.0.bounds.contains(n)
                || self.0.clock.contains(n)
                || self.0.optional.contains_key(n)
                || self.0.races.contains_key(n)
        })
    }

    /// The answers of one file for `names` it defines, from its whole syntax tree.
    #[must_use]
    pub fn of_file(file: &syn::File, apis: &Apis, names: &BTreeSet<String>) -> CrateHelpers {
        let expansions = super::bodies::Expansions::new();
        let all = bound_checkers(&Bodies::of(file, &expansions), apis, Self::NONE);
        let pick = |set: &BTreeSet<String>| -> BTreeSet<String> {
            set.iter().filter(|n| names.contains(*n)).cloned().collect()
        };
        CrateHelpers(Checkers {
            bounds: pick(&all.bounds),
            defined: pick(&all.defined),
            clock: pick(&all.clock),
            optional: (all.optional.into_iter())
                .filter(|(n, _)| names.contains(n))
                .collect(),
            called: std::collections::BTreeMap::new(),
            races: (all.races.into_iter())
                .filter(|(n, _)| names.contains(n))
                .collect(),
        })
    }

    /// The crate's answers, from each file's ([`Self::of_file`]): a name defined in two files
    /// whose answers differ says nothing.
    #[must_use]
    pub fn join(files: impl IntoIterator<Item = CrateHelpers>) -> CrateHelpers {
        type Answer = (bool, bool, Option<String>, Option<BTreeSet<usize>>);
        let mut seen: std::collections::BTreeMap<String, Option<Answer>> =
            std::collections::BTreeMap::new();
        for f in files {
            let c = f.0;
            for name in &c.defined {
                let answer = (
                    c.bounds.contains(name),
                    c.clock.contains(name),
                    c.optional.get(name).cloned(),
                    c.races.get(name).cloned(),
                );
                seen.entry(name.clone())
                    .and_modify(|a| {
                        if a.as_ref() != Some(&answer) {
                            *a = None;
                        }
                    })
                    .or_insert(Some(answer));
            }
        }
        let mut out = Checkers::default();
        for (name, answer) in seen {
            let Some((bound, clock, optional, races)) = answer else {
                continue;
            };
            if let Some(r) = races {
                out.races.insert(name.clone(), r);
            }
            if bound {
                out.bounds.insert(name.clone());
            }
            if clock {
                out.clock.insert(name.clone());
            }
            if let Some(o) = optional {
                out.optional.insert(name, o);
            }
        }
        CrateHelpers(out)
    }
}
/// What the file's own functions decide, by name ([`bound_checkers`]).
#[derive(Debug, Default, Clone)]
pub(super) struct Checkers {
    /// Functions that decide on a bound and can give up: a loop's gate when it calls one.
    pub bounds: BTreeSet<String>,
    /// Every function name the file defines.
    pub defined: BTreeSet<String>,
    /// Functions that compare the clock or a deadline (`fn expired(start, budget) -> bool {
    /// start.elapsed() >= budget }`): a loop that calls one checks a deadline by hand, as if
    /// the comparison were written in it.
    pub clock: BTreeSet<String>,
    /// Functions that answer "may I retry?" with a cap that `None` switches off
    /// (`fn allow_retry(&self, n: u32) -> bool { self.max_retries.is_none() || n <
    /// self.max_retries.unwrap() }`), with the option's name: a loop gated on one is capped
    /// only when the option is set.
    pub optional: std::collections::BTreeMap<String, String>,
    /// Per give-up helper of the file, the names its decisions call (in a condition, a guard,
    /// a `?`): what a file asks the crate about, when a retry loop asks the helper.
    pub called: std::collections::BTreeMap<String, BTreeSet<String>>,
    /// Functions that race a future they are handed against something else (`fn
    /// with_stopper(stop: Receiver<()>, op: impl Future) { select! { _ = stop => .., _ = op =>
    /// .. } }`) or put it under a timeout: the positions of those parameters, the receiver not
    /// counted. What a caller hands there runs under the caller's deadline.
    pub races: std::collections::BTreeMap<String, BTreeSet<usize>>,
}

/// The parameters of a function that its body races ([`Bodies::raced`]), by position, the
/// receiver not counted.
fn racing_params(sig: &syn::Signature, raced: &BTreeSet<String>) -> BTreeSet<usize> {
    // Only a free function: a bare call names it (a method of that name is another thing).
    if sig.receiver().is_some() || raced.is_empty() {
        return BTreeSet::new();
    }
    let raced_name = |t: &syn::PatType| match &*t.pat {
        syn::Pat::Ident(i) => raced.contains(&i.ident.to_string()),
        _ => false,
    };
    (sig.inputs.iter())
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) => Some(raced_name(t)),
            syn::FnArg::Receiver(_) => None,
        })
        .enumerate()
        .filter(|(_, on)| *on)
        .map(|(i, _)| i)
        .collect()
}

fn strip(mut e: &Expr) -> &Expr {
    loop {
        match e {
            Expr::Paren(p) => e = &p.expr,
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => e = &u.expr,
            _ => return e,
        }
    }
}

/// The `macro_rules!` defined in `body` whose tokens leave (`return`, `continue`, `break`, or
/// a call of another such macro) and name a bound (a counter, a gate word). Their expansion is
/// not parsed (metavariables make it no expression), so the tokens are all there is to read.
fn gated_macros(body: &Block, gates: &Gates<'_>) -> BTreeSet<String> {
    #[derive(Default)]
    struct Defs(Vec<(String, proc_macro2::TokenStream)>);
    impl<'ast> Visit<'ast> for Defs {
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item_macro(&mut self, m: &'ast syn::ItemMacro) {
            if let (Some(ident), true) = (&m.ident, m.mac.path.is_ident("macro_rules")) {
                self.0.push((ident.to_string(), m.mac.tokens.clone()));
            }
        }
    }
    fn scan(ts: proc_macro2::TokenStream, out: &mut Vec<String>) {
        for t in ts {
            match t {
                proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
                proc_macro2::TokenTree::Group(g) => scan(g.stream(), out),
                proc_macro2::TokenTree::Punct(p) if p.as_char() == '!' => out.push("!".into()),
                _ => {}
            }
        }
    }
    let mut defs = Defs::default();
    defs.visit_block(body);
    let facts: Vec<(String, bool, bool, Vec<String>)> = defs
        .0
        .into_iter()
        .map(|(name, tokens)| {
            let mut idents = Vec::new();
            scan(tokens, &mut idents);
            let leaves = idents
                .iter()
                .any(|i| matches!(i.as_str(), "return" | "continue" | "break"));
            let mut words = BTreeSet::new();
            for i in &idents {
                split_ident(i, &mut words);
            }
            let bound = gates.bound_word(&words);
            // Macros it calls: an ident followed by `!`.
            let calls = idents
                .windows(2)
                .filter(|w| w[1] == "!")
                .map(|w| w[0].clone())
                .collect();
            (name, leaves, bound, calls)
        })
        .collect();
    let mut found: BTreeSet<String> = facts
        .iter()
        .filter(|(_, leaves, bound, _)| *leaves && *bound)
        .map(|(n, ..)| n.clone())
        .collect();
    // `discard_retry!` calls `retry!`: gated through it. Each pass adds one level.
    loop {
        let before = found.len();
        for (name, _, _, calls) in &facts {
            if calls.iter().any(|c| found.contains(c)) {
                found.insert(name.clone());
            }
        }
        if found.len() == before {
            return found;
        }
    }
}

/// Looks for a bound decision anywhere in an expression.
struct GateScan<'g, 'a> {
    gates: &'g Gates<'a>,
    found: bool,
    /// Closures are read too (in a loop, a closure's comparison decides nothing about it).
    closures: bool,
}

impl<'ast> Visit<'ast> for GateScan<'_, '_> {
    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        if self.closures {
            visit::visit_expr_closure(self, c);
        }
    }

    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        // A local that carries a decision (`next_backoff.is_none()`) or a counter.
        let g = self.gates;
        self.found |= ident_words_of(p)
            .iter()
            .any(|w| g.flags.contains(w) || g.counters.contains(w));
    }

    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        use syn::BinOp::{Eq, Ge, Gt, Le, Lt, Ne};
        if matches!(b.op, Lt(_) | Le(_) | Gt(_) | Ge(_) | Eq(_) | Ne(_)) {
            let mut w = ident_words_of(&*b.left);
            w.extend(ident_words_of(&*b.right));
            self.found |= self.gates.bound_word(&w);
        }
        if matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_)) {
            for side in [&*b.left, &*b.right] {
                if let Expr::Path(_) | Expr::Field(_) = strip(side) {
                    self.found |= self.gates.bound_word(&ident_words_of(side));
                }
            }
        }
        visit::visit_expr_binary(self, b);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let name = m.method.to_string();
        self.found |= self.call(&name, m.args.iter());
        // `backoff.next()`, `backoff.next_delay_duration()`: a strategy that runs out.
        if name == "next" || name.starts_with("next_") {
            let w = ident_words_of(&*m.receiver);
            self.found |= w.iter().any(|w| STRATEGY_WORDS.contains(&w.as_str()));
        }
        visit::visit_expr_method_call(self, m);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let Expr::Path(p) = &*c.func {
            if let Some(s) = p.path.segments.last() {
                self.found |= self.call(&s.ident.to_string(), c.args.iter());
            }
        }
        visit::visit_expr_call(self, c);
    }
}

impl GateScan<'_, '_> {
    fn call<'e>(&self, name: &str, args: impl Iterator<Item = &'e Expr>) -> bool {
        if self.gates.operations.contains(name) {
            return false;
        }
        let apis = self.gates.apis;
        if apis.cancellation.checks.iter().any(|m| m == name) {
            return true;
        }
        let mut w = BTreeSet::new();
        split_ident(name, &mut w);
        if apis.retry.bounding_methods.iter().any(|m| m == name)
            || w.iter().any(|w| GATE_CALL_WORDS.contains(&w.as_str()))
            || self.gates.checkers.contains(name)
        {
            // A gate by its name, or by the file's own answer: another file's answer may
            // still be an optional cap.
            if self.gates.asking.get() {
                self.gates.worded.borrow_mut().insert(name.to_string());
            }
            return true;
        }
        self.gates.asked.borrow_mut().insert(name.to_string());
        if self.gates.asking.get() {
            self.gates.crate_asked.borrow_mut().insert(name.to_string());
        }
        // A counter passed on: the callee decides with it (`self.check(attempt)?`). So does a
        // budget or a deadline handed to it (`reconnect(&mut self.failover_budget)?`): one
        // kept across the rounds, that the callee spends and fails on once it is gone.
        let counters = &self.gates.counters;
        args.into_iter().any(|a| {
            ident_words_of(a)
                .iter()
                .any(|w| counters.contains(w) || SPENT_BOUND_WORDS.contains(&w.as_str()))
        })
    }
}

/// Flags assigned under a bound decision: `if n >= max { exhausted = true }`.
struct FlagScan<'g, 'a> {
    gates: &'g Gates<'a>,
    found: BTreeSet<String>,
    under: usize,
}

impl<'ast> Visit<'ast> for FlagScan<'_, '_> {
    fn visit_item(&mut self, _: &'ast syn::Item) {}
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}

    fn visit_expr_if(&mut self, e: &'ast syn::ExprIf) {
        let gate = self.gates.is_gate(&e.cond, Place::Condition);
        self.visit_expr(&e.cond);
        self.under += usize::from(gate);
        self.visit_block(&e.then_branch);
        if let Some((_, els)) = &e.else_branch {
            self.visit_expr(els);
        }
        self.under -= usize::from(gate);
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        // `let next = (this.adjust)(&err, this.backoff.next());`: the local carries the decision.
        if let Some(init) = &l.init {
            if self.gates.is_gate(&init.expr, Place::Value) {
                self.found.extend(ident_words_of(&l.pat));
            }
        }
        visit::visit_local(self, l);
    }

    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        if self.under > 0 {
            if let Expr::Path(_) | Expr::Field(_) = strip(&a.left) {
                self.found.extend(ident_words_of(&*a.left));
            }
        }
        visit::visit_expr_assign(self, a);
    }
}

/// What the paths that reach a point know of the attempt: nothing yet, that it failed, or that
/// an explicit success test passed and nothing has been decided since.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Known {
    Nothing,
    Failed,
    Succeeded,
    /// Past a failure test that did not hold: like `Nothing` for every test, except that a
    /// step passed later (`x?`) says nothing about the attempt then.
    Undecided,
}

/// The paths that reach a point, as the set of (gated, known) kinds among them: a point is
/// reached by an unbounded retry when one of its paths has failed and passed no gate, whatever
/// the other paths did (so joining two branches is a union, not an average). A way round that
/// only known successes reach is the next piece of work, not a retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct St(u8);

impl St {
    /// The loop's top: one path, neither gated nor decided.
    const START: St = St(1 << Self::idx(false, Known::Nothing));
    /// No path gets here.
    const GONE: St = St(0);
    const KNOWN: [Known; 4] = [
        Known::Nothing,
        Known::Failed,
        Known::Succeeded,
        Known::Undecided,
    ];

    const fn idx(gated: bool, known: Known) -> u8 {
        (gated as u8) | ((known as u8) << 1)
    }

    fn map(self, f: impl Fn(bool, Known) -> (bool, Known)) -> St {
        let mut out = 0;
        for gated in [false, true] {
            for known in Self::KNOWN {
                if self.0 & (1 << Self::idx(gated, known)) != 0 {
                    let (g, k) = f(gated, known);
                    out |= 1 << Self::idx(g, k);
                }
            }
        }
        St(out)
    }

    fn any(self, f: impl Fn(bool, Known) -> bool) -> bool {
        [false, true].into_iter().any(|gated| {
            Self::KNOWN
                .into_iter()
                .any(|k| self.0 & (1 << Self::idx(gated, k)) != 0 && f(gated, k))
        })
    }

    fn reach(self) -> bool {
        self.0 != 0
    }

    /// Some path has failed and no gate stands on it.
    fn unbounded(self) -> bool {
        self.any(|gated, known| !gated && known == Known::Failed)
    }

    /// Some path is not a known success: it may have failed.
    fn maybe_failed(self) -> bool {
        self.any(|_, known| known != Known::Succeeded)
    }

    fn gate(self, g: bool) -> St {
        self.map(|gated, known| (gated || g, known))
    }

    /// The paths' last attempt succeeded after all.
    fn recover(self) -> St {
        self.map(|gated, _| (gated, Known::Succeeded))
    }

    fn fail(self, f: bool) -> St {
        self.map(|gated, known| (gated, if f { Known::Failed } else { known }))
    }

    /// A success test passed (when `s`); a path that failed before stays failed: the test is of
    /// some later step (`Err(e) => match notify(e) { Ok(_) => .. }`).
    fn succeed(self, s: bool) -> St {
        self.succeed_from(s, |k| matches!(k, Known::Nothing | Known::Undecided))
    }

    /// A step passed (`x?`, when `s`): its failure left the loop. On a path where nothing has
    /// been decided yet, the attempt has gone well so far; after a decision the words do not
    /// classify (a status test), a later step says nothing about it.
    fn step(self, s: bool) -> St {
        self.succeed_from(s, |k| k == Known::Nothing)
    }

    /// The paths whose knowledge `from` accepts are known successes (when `s`).
    fn succeed_from(self, s: bool, from: impl Fn(Known) -> bool) -> St {
        self.map(|gated, known| {
            let k = if s && from(known) {
                Known::Succeeded
            } else {
                known
            };
            (gated, k)
        })
    }

    /// Past a failure test that did not hold (`if resp.status() != 429 { return .. }`), the
    /// attempt may still have failed on another count, and a step passed later (reading the
    /// body of the answer, `resp.text().await?`) does not say it went well.
    fn doubt(self) -> St {
        self.map(|gated, known| {
            let k = if matches!(known, Known::Succeeded | Known::Nothing) {
                Known::Undecided
            } else {
                known
            };
            (gated, k)
        })
    }

    /// A decision the words do not classify: past it, a success is no longer known (it may be
    /// the test of a status or a field that makes the attempt a failure after all).
    fn undecide(self) -> St {
        self.map(|gated, known| {
            let k = if known == Known::Succeeded {
                Known::Nothing
            } else {
                known
            };
            (gated, k)
        })
    }

    /// Where branches meet.
    fn join(self, o: St) -> St {
        St(self.0 | o.0)
    }
}

struct Walk<'g, 'a> {
    gates: &'g Gates<'a>,
    label: Option<String>,
    /// Loops inside the body that the walk is in, innermost last.
    inner: Vec<InnerLoop>,
    /// The once-tests of the branches the walk is in (`if !retried { .. }`): the local, and the
    /// step that moves it off the passing value. A path past that step is gated.
    armed: Vec<(String, Step)>,
    /// A path was gated by stepping its once-test's local off the passing value.
    stepped_off: bool,
    ungated: Option<Span>,
    /// Every path that reaches a way round, joined.
    rounds: St,
    /// A gate stands on some path (so the unbounded round is one the check does not cover).
    saw_gate: bool,
}

impl Walk<'_, '_> {
    /// `st` after a decision that is a gate when `g`; notes that the loop has one somewhere.
    fn gate(&mut self, st: St, g: bool) -> St {
        self.saw_gate |= g;
        st.gate(g)
    }

    /// `after_leaves`: what follows the block, up to the end of the loop body, always leaves
    /// (so a decision whose staying outcome falls out of the block still ends in an exit).
    fn block(&mut self, b: &Block, mut st: St, after_leaves: bool) -> St {
        for (i, s) in b.stmts.iter().enumerate() {
            if !st.reach() {
                break;
            }
            let rest_leaves = after_leaves || b.stmts[i + 1..].iter().any(|s| self.stmt_leaves(s));
            st = self.stmt(s, st, rest_leaves);
        }
        st
    }

    fn stmt(&mut self, s: &Stmt, st: St, rest_leaves: bool) -> St {
        match s {
            Stmt::Local(l) => {
                let Some(init) = &l.init else {
                    return st;
                };
                let st = self.expr(&init.expr, st, rest_leaves);
                if init.diverge.is_some() {
                    // `let Some(d) = backoff.next() else { return Err(e) };`
                    self.gate(st, self.gates.is_gate(&init.expr, Place::Value))
                } else {
                    st
                }
            }
            Stmt::Item(_) => st,
            Stmt::Expr(e, _) => self.expr(e, st, rest_leaves),
            Stmt::Macro(m) => self.mac(&m.mac, st),
        }
    }

    fn mac(&mut self, m: &syn::Macro, st: St) -> St {
        let name = super::macros::macro_name(m);
        if EXIT_MACROS.contains(&name.as_str()) {
            return St::GONE;
        }
        if m.path.segments.len() == 1 && self.gates.gated_macros.contains(&name) {
            // Its expansion is not seen: what it shows is a bound decision and a way out, so
            // the path is taken to end there, gated (a guess that keeps a finding away).
            self.saw_gate = true;
            return St::GONE;
        }
        if matches!(name.as_str(), "ensure" | "assert") {
            if let Ok(cond) = m.parse_body_with(
                syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
            ) {
                if let Some(c) = cond.first() {
                    return self.gate(st, self.gates.is_gate(c, Place::Condition));
                }
            }
        }
        st
    }

    fn targets_us(&self, label: Option<&syn::Lifetime>) -> bool {
        match label {
            Some(l) => self.label.as_deref() == Some(&l.ident.to_string()),
            None => self.inner.is_empty(),
        }
    }

    fn leaves_us(&self, label: Option<&syn::Lifetime>) -> bool {
        label.is_some_and(|l| {
            let name = l.ident.to_string();
            self.label.as_deref() != Some(&name)
                && !self.inner.iter().any(|i| i.label.as_deref() == Some(&name))
        })
    }

    /// Some path through `e` goes round this loop (a `continue` of it, not of a loop in `e`).
    fn goes_round(&self, e: &Expr) -> bool {
        struct V<'w> {
            label: Option<&'w str>,
            /// Unlabelled `continue` reaches us: no loop around it, here or in the walk.
            bare: bool,
            depth: usize,
            found: bool,
        }
        impl<'ast> Visit<'ast> for V<'_> {
            fn visit_item(&mut self, _: &'ast syn::Item) {}
            fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
            fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
            fn visit_expr_continue(&mut self, c: &'ast syn::ExprContinue) {
                self.found |= match &c.label {
                    Some(l) => self.label == Some(l.ident.to_string().as_str()),
                    None => self.bare && self.depth == 0,
                };
            }
            fn visit_expr_loop(&mut self, l: &'ast syn::ExprLoop) {
                self.depth += 1;
                visit::visit_expr_loop(self, l);
                self.depth -= 1;
            }
            fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
                self.visit_expr(&w.cond);
                self.depth += 1;
                self.visit_block(&w.body);
                self.depth -= 1;
            }
            fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
                self.visit_expr(&f.expr);
                self.depth += 1;
                self.visit_block(&f.body);
                self.depth -= 1;
            }
        }
        let mut v = V {
            label: self.label.as_deref(),
            bare: self.inner.is_empty(),
            depth: 0,
            found: false,
        };
        v.visit_expr(e);
        v.found
    }

    /// The inner loop a `break` or `continue` with this label acts on, if it is one.
    fn inner_target(&mut self, label: Option<&syn::Lifetime>) -> Option<&mut InnerLoop> {
        match label {
            None => self.inner.last_mut(),
            Some(l) => {
                let name = l.ident.to_string();
                self.inner
                    .iter_mut()
                    .rev()
                    .find(|i| i.label.as_deref() == Some(&name))
            }
        }
    }

    /// A path leaves the retry loop from here: every inner loop around it holds an exit.
    fn left(&mut self) {
        for i in &mut self.inner {
            i.holds_exit = true;
        }
    }

    /// A way round; it retries only on a failure path (a state machine's `continue` after a
    /// transition, or a progress loop's next step, goes round without having failed).
    fn round(&mut self, at: Span, st: St) {
        self.rounds = self.rounds.join(st);
        if st.unbounded() && self.ungated.is_none() {
            self.ungated = Some(at);
        }
    }

    fn expr(&mut self, e: &Expr, st: St, rest_leaves: bool) -> St {
        let once = !self.armed.is_empty()
            && step_of(e)
                .is_some_and(|(v, k)| self.armed.iter().any(|(a, ak)| *a == v && *ak == k));
        let st = self.expr_paths(e, st, rest_leaves);
        // `retried = true` under `if !retried`: this path goes round once at most.
        if once {
            self.stepped_off = true;
            self.gate(st, true)
        } else {
            st
        }
    }

    /// Walk `e`'s paths (see [`Self::expr`]).
    fn expr_paths(&mut self, e: &Expr, st: St, rest_leaves: bool) -> St {
        if !st.reach() {
            return st;
        }
        if let Expr::Assign(a) = e {
            if ends_loop(self.gates.header_flags, a) {
                self.expr(&a.right, st, rest_leaves);
                self.left();
                return St::GONE;
            }
        }
        match e {
            Expr::Paren(p) => self.expr(&p.expr, st, rest_leaves),
            Expr::Return(r) => {
                // `return match decide(n) { Stop => Err(e), Go => { ..; continue } }`: the value
                // is evaluated first, and whatever it does not divert leaves with it.
                if let Some(v) = &r.expr {
                    self.expr(v, st, true);
                }
                self.left();
                St::GONE
            }
            Expr::Break(b) => {
                let out = self.targets_us(b.label.as_ref()) || self.leaves_us(b.label.as_ref());
                let st = match &b.expr {
                    Some(v) => self.expr(v, st, rest_leaves || out),
                    None => st,
                };
                if out {
                    self.left();
                } else if let Some(i) = self.inner_target(b.label.as_ref()) {
                    i.breaks = i.breaks.join(st);
                }
                St::GONE
            }
            Expr::Continue(c) => {
                if self.targets_us(c.label.as_ref()) {
                    self.round(super::spans::of(&c), st);
                } else if self.leaves_us(c.label.as_ref()) {
                    self.left();
                } else if let Some(i) = self.inner_target(c.label.as_ref()) {
                    i.rounds = i.rounds.join(st);
                }
                St::GONE
            }
            Expr::Try(t) => {
                let st = self.expr(&t.expr, st, rest_leaves);
                let gate = self.gates.is_gate(&t.expr, Place::Try);
                // Past `step()?` the step went well: its failure left the loop. A loop whose
                // every way round follows such steps and no failure test sends no failure
                // round (a state machine whose steps end the run on error).
                self.gate(st, gate).step(!gate)
            }
            Expr::Block(b) => self.block(&b.block, st, rest_leaves),
            Expr::Unsafe(b) => self.block(&b.block, st, rest_leaves),
            Expr::If(i) => self.if_(i, st, rest_leaves),
            Expr::Match(m) => self.match_(m, st, rest_leaves),
            Expr::Loop(l) => self.inner_loop(l.label.as_ref(), &l.body, st, false),
            Expr::While(w) => {
                let st = self.expr(&w.cond, st, false);
                self.inner_loop(w.label.as_ref(), &w.body, st, true)
            }
            Expr::ForLoop(f) => {
                let st = self.expr(&f.expr, st, false);
                self.inner_loop(f.label.as_ref(), &f.body, st, true)
            }
            Expr::Macro(m) => self.mac(&m.mac, st),
            Expr::Closure(_) | Expr::Async(_) => st,
            Expr::Assign(a) => self.expr(&a.right, st, rest_leaves),
            Expr::Let(l) => self.expr(&l.expr, st, rest_leaves),
            Expr::Await(a) => self.expr(&a.base, st, rest_leaves),
            other => {
                // A call, a method chain, an operator: only its `?`s decide anything.
                let mut t = Tries {
                    gates: self.gates,
                    gate: false,
                    stepped: false,
                };
                t.visit_expr(other);
                self.gate(st, t.gate).step(t.stepped)
            }
        }
    }

    /// `runs_out`: a `for` or `while`, which also ends when its items or its condition run
    /// out (after any of its rounds, or before the first); a `loop` ends only by a `break`.
    fn inner_loop(
        &mut self,
        label: Option<&syn::Label>,
        body: &Block,
        st: St,
        runs_out: bool,
    ) -> St {
        self.inner.push(InnerLoop {
            label: label.map(|l| l.name.ident.to_string()),
            rounds: St::GONE,
            breaks: St::GONE,
            holds_exit: false,
        });
        let end = self.block(body, st, false);
        let inner = self.inner.pop().unwrap_or_default();
        if !inner.holds_exit {
            // Work of its own (items drained, a chunk loop): however it ends, the path goes on
            // from where it started, and what failed in there was handled in there.
            return st;
        }
        // The retry loop's exit is inside: the inner loop is the attempt (a failover over
        // nodes or addresses, `for node in nodes { if let Ok(c) = connect(node) { return c } }`),
        // so the paths that end it, failed ones included, are what follows it.
        if runs_out {
            st.join(end).join(inner.rounds).join(inner.breaks)
        } else {
            inner.breaks
        }
    }

    fn if_(&mut self, i: &syn::ExprIf, st: St, rest_leaves: bool) -> St {
        let st = self.expr(&i.cond, st, rest_leaves);
        if !st.reach() {
            return st;
        }
        let then_leaves = self.block_leaves(&i.then_branch);
        let else_leaves = i.else_branch.as_ref().is_some_and(|(_, e)| self.leaves(e));
        // `if let ControlFlow::Break(e) = retrying.wait().await { return Err(e) }`: the
        // answer asked for is to give up, as in a `match` on a strategy's step.
        let gives_up = then_leaves
            && matches!(&*i.cond, Expr::Let(l) if gives_up_pattern(&l.pat)
                || breaks_off(&l.pat, last_expr(&i.then_branch)));
        let g = gives_up
            || self.gates.is_gate(&i.cond, Place::Condition)
                && (then_leaves || else_leaves || rest_leaves);
        let inside = self.gate(st, g);
        // A test the words do not classify whose branch hands a value out (`if !redo { return
        // Ok(resp) }`) is the success exit by what it does: past it, the attempt fell short.
        let test = outcome_test(&i.cond).or_else(|| {
            (i.else_branch.is_none() && leaves_with_value(&i.then_branch))
                .then_some(Outcome::Success)
        });
        let then = match test {
            Some(Outcome::Success) => inside.succeed(true),
            Some(Outcome::Failure) => inside.fail(true),
            None => inside.undecide(),
        };
        let armed = self.gates.once_tests(&i.cond);
        let depth = self.armed.len();
        self.armed.extend(armed);
        let then = self.block(&i.then_branch, then, rest_leaves);
        self.armed.truncate(depth);
        // The other branch of a success test is the failure, and so is what follows a success
        // that left (`if r.is_ok() { return r }`). Past a failure test, the attempt may still
        // fail on another count: no success is known there.
        let els = match test {
            Some(Outcome::Success) => inside.fail(true),
            Some(Outcome::Failure) => inside.doubt(),
            None => inside.undecide(),
        };
        let els = match &i.else_branch {
            Some((_, e)) => self.expr(e, els, rest_leaves),
            None => els,
        };
        then.join(els)
    }

    fn match_(&mut self, m: &syn::ExprMatch, st: St, rest_leaves: bool) -> St {
        let st = self.expr(&m.expr, st, rest_leaves);
        if !st.reach() {
            return st;
        }
        // An arm leaves by itself, or, when what follows the `match` leaves (the value of a
        // `return`), by ending without going round.
        let leaving: Vec<bool> = m
            .arms
            .iter()
            .map(|a| self.leaves(&a.body) || (rest_leaves && !self.goes_round(&a.body)))
            .collect();
        let any_leaves = leaving.iter().any(|&l| l);
        // A match on an error or a retry code: its arms that stay are the failures it retries.
        let on_failure = FAILURE_WORDS_IN_VALUE
            .iter()
            .any(|w| ident_words_of(&*m.expr).contains(*w));
        let success_leaves = m
            .arms
            .iter()
            .zip(&leaving)
            .any(|(a, &l)| l && pattern_outcome(&a.pat) == Some(Outcome::Success));
        // A decision the loop asks for, one of whose answers is to give up (`match
        // engine.step(..) { Step::GiveUp(k) => return Err(..), .. }`), is a strategy.
        let gives_up = m.arms.iter().zip(&leaving).any(|(a, &l)| {
            let tail = match &*a.body {
                Expr::Block(b) => last_expr(&b.block),
                e => Some(e),
            };
            l && (gives_up_pattern(&a.pat) || breaks_off(&a.pat, tail))
        });
        let scrutinee = any_leaves && (gives_up || self.gates.is_gate(&m.expr, Place::Value));
        let mut st = self.gate(st, scrutinee);
        let mut out = St::GONE;
        for (i, a) in m.arms.iter().enumerate() {
            let guard = a
                .guard
                .as_ref()
                .is_some_and(|(_, g)| self.gates.is_gate(g, Place::Condition));
            let others_leave = leaving.iter().enumerate().any(|(j, &l)| j != i && l);
            let outcome = pattern_outcome(&a.pat);
            let failed = match outcome {
                Some(Outcome::Failure) => true,
                Some(Outcome::Success) => false,
                None => on_failure || success_leaves,
            } || a
                .guard
                .as_ref()
                .is_some_and(|(_, g)| outcome_test(g) == Some(Outcome::Failure));
            let entry = self.gate(st, guard && (others_leave || rest_leaves));
            // A success arm with no guard, or with a success test for one, is a known success.
            let guard_test = a.guard.as_ref().map(|(_, g)| outcome_test(g));
            let mut entry = match (failed, outcome, guard_test) {
                (true, _, _) => entry.fail(true),
                (false, Some(Outcome::Success), None | Some(Some(Outcome::Success))) => {
                    entry.succeed(true)
                }
                _ => entry.undecide(),
            };
            // `Err(e) => match again().await { Ok(r) => r, .. }`: a later attempt that succeeded
            // and hands its value on has recovered the path; it goes on as a success. Not an
            // `Ok` whose guard found a failure (`Ok(r) if r.status().is_server_error()`).
            if outcome == Some(Outcome::Success) && !failed && yields_value(&a.body) {
                entry = entry.recover();
            }
            let depth = self.armed.len();
            if let Some((_, g)) = &a.guard {
                let armed = self.gates.once_tests(g);
                self.armed.extend(armed);
            }
            let arm = self.expr(&a.body, entry, rest_leaves);
            self.armed.truncate(depth);
            out = out.join(arm);
            // The arms below a guarded arm that leaves were reached by failing its check.
            if guard && leaving[i] {
                st = self.gate(st, true);
            }
        }
        out
    }

    fn stmt_leaves(&self, s: &Stmt) -> bool {
        match s {
            Stmt::Expr(e, _) => self.leaves(e),
            Stmt::Macro(m) => is_exit_macro(&m.mac),
            Stmt::Local(_) | Stmt::Item(_) => false,
        }
    }

    fn block_leaves(&self, b: &Block) -> bool {
        b.stmts.iter().any(|s| self.stmt_leaves(s))
    }

    /// Every path through `e` leaves the loop (a `continue` goes round: it does not).
    fn leaves(&self, e: &Expr) -> bool {
        match e {
            Expr::Paren(p) => self.leaves(&p.expr),
            Expr::Return(_) => true,
            Expr::Break(b) => self.targets_us(b.label.as_ref()) || self.leaves_us(b.label.as_ref()),
            Expr::Continue(c) => self.leaves_us(c.label.as_ref()),
            Expr::Block(b) => self.block_leaves(&b.block),
            Expr::If(i) => {
                self.block_leaves(&i.then_branch)
                    && i.else_branch.as_ref().is_some_and(|(_, e)| self.leaves(e))
            }
            Expr::Match(m) => !m.arms.is_empty() && m.arms.iter().all(|a| self.leaves(&a.body)),
            Expr::Macro(m) => is_exit_macro(&m.mac),
            // `done = true` in a `while !done`: the header ends the loop.
            Expr::Assign(a) => ends_loop(self.gates.header_flags, a),
            _ => false,
        }
    }
}

/// A loop inside the retry loop's body, as the walk passes through it.
#[derive(Default)]
struct InnerLoop {
    label: Option<String>,
    /// The paths that go round it (its `continue`s).
    rounds: St,
    /// The paths that `break` out of it.
    breaks: St,
    /// Some path in it leaves the retry loop (a `return`, a labelled `break` or `continue`).
    holds_exit: bool,
}

/// Which way an `if` condition, guard or pattern tells the attempt went.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    Success,
    Failure,
}

/// Words of a condition that tests for a failure (`r.is_err()`, `status == 503`,
/// `e.kind() == WouldBlock`, `is_retryable(&e)`).
const FAILURE_WORDS: &[&str] = &[
    "err",
    "error",
    "errors",
    "fail",
    "failed",
    "failure",
    "status",
    "retryable",
    "transient",
    "busy",
    "unavailable",
    "timeout",
    "timed",
    "refused",
    "reset",
    "throttled",
    "conflict",
    "retry",
    "again",
    "would",
    "block",
    "interrupted",
    "expired",
    "unreachable",
    "rejected",
];
/// Words of a match scrutinee that is an error or a retry code (`match retry_code`,
/// `match p.to_error()`): its arms that stay are failures.
const FAILURE_WORDS_IN_VALUE: &[&str] = &["err", "error", "errors", "retry", "status", "code"];
/// Words of a condition that tests for a success (`r.is_ok()`, `resp.status().is_success()`,
/// `if done`).
const SUCCESS_WORDS: &[&str] = &["ok", "success", "successful", "succeeded", "done"];

/// The block ends by leaving the loop with a success value: `return Ok(v)`, `break Some(v)`.
fn leaves_with_value(b: &Block) -> bool {
    last_expr(b).is_some_and(exits_with_success)
}

/// `return Ok(v)` / `break Some(v)`: an exit handing out a success value.
fn exits_with_success(e: &Expr) -> bool {
    matches!(e, Expr::Return(syn::ExprReturn { expr: Some(v), .. })
        | Expr::Break(syn::ExprBreak { expr: Some(v), .. }) if super::collect::success_value(v))
}

fn outcome_test(cond: &Expr) -> Option<Outcome> {
    let (negated, inner) = match cond {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => (true, &*u.expr),
        Expr::Paren(p) => return outcome_test(&p.expr),
        c => (false, c),
    };
    let plain = if let Expr::Let(l) = inner {
        pattern_outcome(&l.pat)
    } else {
        let w = ident_words_of(inner);
        if let Expr::MethodCall(m) = inner {
            let mut name = BTreeSet::new();
            split_ident(&m.method.to_string(), &mut name);
            if name.iter().any(|n| SUCCESS_WORDS.contains(&n.as_str())) {
                return Some(if negated {
                    Outcome::Failure
                } else {
                    Outcome::Success
                });
            }
            // `status.is_server_error()`, `e.is_timeout()`: a predicate named for a failure
            // (not any method with such a word: `self.retry_enabled()` tests a setting).
            if m.method.to_string().starts_with("is_")
                && name.iter().any(|n| FAILURE_WORDS.contains(&n.as_str()))
            {
                return Some(if negated {
                    Outcome::Success
                } else {
                    Outcome::Failure
                });
            }
        }
        if w.iter().any(|w| FAILURE_WORDS.contains(&w.as_str())) {
            Some(Outcome::Failure)
        } else if w.iter().any(|w| SUCCESS_WORDS.contains(&w.as_str())) {
            Some(Outcome::Success)
        } else {
            None
        }
    };
    match (negated, plain) {
        (true, Some(Outcome::Success)) => Some(Outcome::Failure),
        (true, Some(Outcome::Failure)) => Some(Outcome::Success),
        (_, p) => p,
    }
}

/// `Ok(..)` is a success, `Err(..)` (anywhere in the pattern) or a variant named like a failure
/// (`Steal::Retry`, `State::Failed`) a failure.
fn pattern_outcome(p: &syn::Pat) -> Option<Outcome> {
    let w = ident_words_of(p);
    if w.contains("err") || w.contains("error") || w.contains("retry") || w.contains("failed") {
        Some(Outcome::Failure)
    } else if w.contains("ok") || w.contains("success") {
        Some(Outcome::Success)
    } else {
        None
    }
}

/// Words of a variant that is a strategy's answer "stop retrying": `Step::GiveUp(kind)`,
/// `Backoff::Stopped`, `RetryDecision::DontRetry`.
const GIVE_UP_WORDS: &[&str] = &["give", "stop", "stopped", "exhausted", "dont", "abandon"];

/// A pattern naming a give-up variant (not a failure: `Err(Stopped)` is the attempt's error).
fn gives_up_pattern(p: &syn::Pat) -> bool {
    if let syn::Pat::Ident(i) = p {
        return i.subpat.as_ref().is_some_and(|(_, p)| gives_up_pattern(p));
    }
    let Some(last) = variant_of(p) else {
        return false;
    };
    if matches!(
        last.ident.to_string().as_str(),
        "Err" | "Ok" | "Some" | "None"
    ) {
        return false;
    }
    let mut w = BTreeSet::new();
    split_ident(&last.ident.to_string(), &mut w);
    w.iter().any(|w| GIVE_UP_WORDS.contains(&w.as_str()))
}

/// `ControlFlow::Break(e)` answered by leaving with no success value (`return Err(e)`): std's
/// "stop going round" from a strategy. Leaving with one (`Break(r) => break Ok(r)`) is the
/// operation's own success, not a bound.
fn breaks_off(p: &syn::Pat, tail: Option<&Expr>) -> bool {
    variant_of(p).is_some_and(|v| v.ident == "Break") && !tail.is_some_and(exits_with_success)
}

/// The last segment of the variant a pattern names (`Break` of `ControlFlow::Break(e)`).
fn variant_of(p: &syn::Pat) -> Option<&syn::PathSegment> {
    match p {
        syn::Pat::TupleStruct(t) => t.path.segments.last(),
        syn::Pat::Path(p) => p.path.segments.last(),
        syn::Pat::Struct(s) => s.path.segments.last(),
        _ => None,
    }
}

/// The last statement of `b`, if it is an expression.
fn last_expr(b: &Block) -> Option<&Expr> {
    match b.stmts.last() {
        Some(syn::Stmt::Expr(e, _)) => Some(e),
        _ => None,
    }
}

/// The expression ends in a value handed on (`r`, `Some(v)`, `{ log(); r }`), not in `()`.
fn yields_value(e: &Expr) -> bool {
    match e {
        Expr::Block(b) => match b.block.stmts.last() {
            Some(Stmt::Expr(e, None)) => yields_value(e),
            _ => false,
        },
        Expr::Path(_)
        | Expr::Call(_)
        | Expr::MethodCall(_)
        | Expr::Field(_)
        | Expr::Struct(_)
        | Expr::Lit(_)
        | Expr::Await(_)
        | Expr::Try(_)
        | Expr::Reference(_) => true,
        Expr::Tuple(t) => !t.elems.is_empty(),
        Expr::Paren(p) => yields_value(&p.expr),
        _ => false,
    }
}

/// `bail!`, `panic!` and the other macros that never return ([`super::collect::EXIT_MACROS`]).
pub(super) fn is_exit_macro(m: &syn::Macro) -> bool {
    EXIT_MACROS.contains(&super::macros::macro_name(m).as_str())
}

/// The `?`s of an expression that decide the bound (`backoff.next().ok_or(e)?`).
struct Tries<'g, 'a> {
    gates: &'g Gates<'a>,
    gate: bool,
    /// A `?` that is no gate: past it, that step went well (see `Walk::expr`'s `Expr::Try`).
    stepped: bool,
}

impl<'ast> Visit<'ast> for Tries<'_, '_> {
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}

    fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
        let gate = self.gates.is_gate(&t.expr, Place::Try);
        self.gate |= gate;
        self.stepped |= !gate;
        visit::visit_expr_try(self, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of the rounds each `loop` goes with no gate on its path (`-` for none).
    struct Loops<'a>(&'a Apis, &'a mut Vec<String>);

    /// The words of what a body increments: its counters.
    struct Inc<'c>(&'c mut BTreeSet<String>);

    impl<'ast> Visit<'ast> for Inc<'_> {
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            if matches!(b.op, syn::BinOp::AddAssign(_) | syn::BinOp::SubAssign(_)) {
                self.0.extend(ident_words_of(&*b.left));
            }
            visit::visit_expr_binary(self, b);
        }
    }

    impl<'ast> Visit<'ast> for Loops<'_> {
        fn visit_expr_loop(&mut self, l: &'ast syn::ExprLoop) {
            let mut counters = BTreeSet::new();
            Inc(&mut counters).visit_block(&l.body);
            let label = l.label.as_ref().map(|l| l.name.ident.to_string());
            let r = flow(
                &l.body,
                label.as_deref(),
                &counters,
                &BTreeSet::new(),
                &BTreeMap::new(),
                &BTreeSet::new(),
                self.0,
            )
            .ungated;
            self.1
                .push(r.map_or("-".into(), |r| r.at.start().line.to_string()));
        }
    }

    /// The round a `loop` in `f` goes with no gate on its path: its line, or `-`.
    fn check(src: &str) -> String {
        let f: syn::ItemFn = syn::parse_str(src).expect("parses");
        let apis = Apis::builtin();
        let mut out = Vec::new();
        Loops(&apis, &mut out).visit_item_fn(&f);
        out.join(",")
    }

    /// An `Ok` answer whose guard finds a failing status (`Ok(r) if r.status().is_server_error()`)
    /// is a failure that goes round (line 7, the body's end), not a success handing its value on.
    #[test]
    fn an_ok_answer_with_a_failing_status_goes_round_as_a_failure() {
        let src = "fn f() {
            loop {
                match c.get(u).send().await {
                    Ok(r) if r.status().is_server_error() => tokio::time::sleep(d).await,
                    other => return other,
                }
            }
        }";
        assert_eq!(check(src), "7");
    }

    #[test]
    fn an_exit_on_another_failure_is_no_bound() {
        // Line 4: the conflict goes round; the other error leaves but bounds nothing.
        let src = "fn f() {
            loop {
                match op() {
                    Err(Conflict) => continue,
                    Err(e) => return Err(e),
                    Ok(v) => return Ok(v),
                }
            }
        }";
        assert_eq!(check(src), "4");
    }

    #[test]
    fn a_check_with_no_way_out_is_no_bound() {
        // The attempt check's failing outcome falls through to the top again (line 10).
        let src = "fn f() {
            loop {
                let retry_code = op()?;
                match retry_code {
                    Some(e) => {
                        if attempt < max { attempt += 1; sleep(); }
                    }
                    None => return Ok(()),
                }
            }
        }";
        assert_eq!(check(src), "10");
    }

    #[test]
    fn gates_in_every_written_form() {
        for body in [
            // A guard that gives up, arms below it.
            "match op() { Ok(v) => return Ok(v), Err(e) if attempts >= 5 => return Err(e), Err(_) => { attempts += 1; sleep(); } }",
            // A check before the call.
            "if attempt >= max { return Err(last) } attempt += 1; match op() { Ok(v) => return Ok(v), Err(e) => { last = e; continue } }",
            // A check after it, at the body's end.
            "match op() { Ok(v) => return Ok(v), Err(e) => last = e } n += 1; if n > 3 { return Err(last) } sleep();",
            // A check whose staying branch goes round and whose other outcome falls to an exit.
            "match op() { Ok(v) => return Ok(v), Err(e) => { if retries < 3 { retries += 1; continue; } return Err(e) } }",
            // A strategy that runs out.
            "match op() { Ok(v) => return Ok(v), Err(e) => { let Some(d) = backoff.next() else { return Err(e) }; sleep(d); } }",
            "match op() { Ok(v) => return Ok(v), Err(e) => { let d = backoff.next_backoff().ok_or(e)?; sleep(d); } }",
            "match op() { Ok(v) => return Ok(v), Err(e) => match backoff.next() { Some(d) => sleep(d), None => return Err(e) } }",
            // The clock.
            "match op() { Ok(v) => return Ok(v), Err(e) if Instant::now() > deadline => return Err(e), Err(_) => sleep() }",
            // A flag set under a check.
            "match op() { Ok(v) => return Ok(v), Err(e) => { n += 1; if n > max { stop = true } } } if stop { return Err(E) } sleep();",
            // A helper that decides with the counter.
            "match op() { Ok(v) => return Ok(v), Err(e) => { self.check(tries_so_far)?; tries_so_far += 1; } }",
            // `ensure!` on the counter.
            "match op() { Ok(v) => return Ok(v), Err(e) => { n += 1; ensure!(n < 5, e); } }",
        ] {
            let src = format!("fn f() {{ loop {{ {body} }} }}");
            assert_eq!(check(&src), "-", "{body}");
        }
    }

    #[test]
    fn the_errors_own_data_is_no_gate() {
        // tikv-like: checks on the rejected key's fields, then `continue`.
        let src = "fn f() {
            loop {
                match op() {
                    Ok(v) => return Ok(v),
                    Err(Error::Expired(expired)) => {
                        if primary != expired.key { return Err(E); }
                        if expired.min_ts.saturating_sub(expired.attempted_ts) > 943 { return Err(F); }
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            }
        }";
        assert_eq!(check(src), "8");
    }

    #[test]
    fn a_variable_named_for_retries_is_not_a_decision() {
        // The scrutinee `retry_code` is the failure class, not a count.
        let src = "fn f() {
            loop {
                let mut retry_code = None;
                if failed() { retry_code = Some(1) }
                match retry_code {
                    Some(c) => sleep(),
                    None => return Ok(()),
                }
            }
        }";
        assert_eq!(check(src), "9");
    }

    #[test]
    fn inner_loops_and_labels() {
        // `continue 'outer` from an inner loop is our way round; a `break` of the inner loop is
        // not an exit of ours.
        let src = "fn f() {
            'outer: loop {
                for p in parts() {
                    if p.failed() { sleep(); continue 'outer; }
                }
                return Ok(());
            }
        }";
        assert_eq!(check(src), "4");
        let src = "fn f() {
            'outer: loop {
                for p in parts() {
                    if p.failed() { break 'outer; }
                }
                return Ok(());
            }
        }";
        assert_eq!(check(src), "-");
    }

    #[test]
    fn strategies_and_their_state() {
        for body in [
            // A strategy method named `next_*` that runs out.
            "match op() { Ok(v) => return Ok(v), Err(e) => match backoff.next_delay_duration() { Some(d) => { sleep(d); continue; } None => return Err(e) } }",
            // A match on the strategy's state one of whose arms gives up.
            "match op() { Ok(v) => return Ok(v), Err(e) => match &mut *backoff { Wait(d) => sleep(*d), Stop => return Err(e) } }",
        ] {
            let src = format!("fn f() {{ loop {{ {body} }} }}");
            assert_eq!(check(&src), "-", "{body}");
        }
        // A state match with no arm that leaves decides nothing.
        let src = "fn f() { loop { match op() { Ok(v) => return Ok(v), Err(e) => match backoff { Wait(d) => sleep(d), Stop => sleep(1) } } } }";
        assert_eq!(check(src), "1");
    }

    #[test]
    fn a_later_attempt_that_hands_its_value_on_recovers() {
        // Respawn and try once more: the second attempt's success goes on as a success.
        let src = "fn f() {
            loop {
                let v = match op() {
                    Ok(v) => v,
                    Err(e) => { respawn(); match op() { Ok(v) => v, Err(e) => return Err(e) } }
                };
                handle(v);
            }
        }";
        assert_eq!(check(src), "-");
        // A second success that hands nothing on is not taken for a recovery: the path that
        // failed first falls through to the next round as it was.
        let src = "fn f() {
            loop {
                match op() {
                    Ok(v) => handle(v),
                    Err(e) => { respawn(); match op() { Ok(_) => {}, Err(e) => return Err(e) } }
                }
            }
        }";
        assert_eq!(check(src), "7");
    }

    #[test]
    fn local_macros_that_decide_and_leave() {
        // fred-like: `retry!` counts, gives up past the cap, else goes round; `discard_retry!`
        // goes through it.
        let src = "fn f() {
            'outer: loop {
                macro_rules! retry {
                    ($e:expr) => {{ attempted += 1; if attempted > max_attempts { return Err($e) } else { continue 'outer; } }};
                }
                macro_rules! discard_retry {
                    ($e:expr) => {{ discard(); retry!($e); }};
                }
                if let Err(e) = drain() { retry!(e); }
                match exec() { Ok(r) => return Ok(r), Err(e) => discard_retry!(e) }
            }
        }";
        assert_eq!(check(src), "-");
        // A local macro that only logs is no gate: the `Err` arm falls through to the end.
        let src = "fn f() {
            loop {
                macro_rules! note { ($e:expr) => { log($e) }; }
                match exec() { Ok(r) => return Ok(r), Err(e) => note!(e) }
            }
        }";
        assert_eq!(check(src), "5");
    }

    #[test]
    fn a_decision_that_can_give_up_is_a_strategy() {
        // The runtime's own engine: each round asks what to do; one answer is to give up.
        let src = "fn f() {
            loop {
                event = match engine.step(event, now) {
                    Step::Attempt(a) => match op(a) { Ok(v) => return Ok(v), Err(e) => Event::Failed(e) },
                    Step::Wait(d) => { sleep(d); Event::Woke }
                    Step::GiveUp(kind) => return Err(engine.finish(kind)),
                };
            }
        }";
        assert_eq!(check(src), "-");
        // An error variant named like one is the attempt's failure, not a decision.
        let src = "fn f() {
            loop {
                match op() { Ok(v) => return Ok(v), Err(Error::Stopped) => return Err(E), Err(_) => sleep() }
            }
        }";
        assert_eq!(check(src), "4");
    }
    #[test]
    fn past_a_success_exit_the_attempt_fell_short() {
        // A flag decides the exit; its words say nothing, but the branch hands the response
        // out, so falling past it is the limited attempt going round (line 13).
        let src = r#"fn f() {
            loop {
                let resp = client.execute(req.try_clone()?).await?;
                let again = if resp.headers().get("x-limited").is_some() {
                    sleep(wait_of(&resp)).await;
                    true
                } else {
                    bucket.update(&resp).await
                };
                if !again {
                    return Ok(resp);
                }
            }
        }"#;
        assert_eq!(check(src), "13");
        // The same loop with a count on the way round is bounded.
        let bounded = src.replace("if !again {", "tries += 1; if !again || tries > 3 {");
        assert_eq!(check(&bounded), "-");
    }
}
