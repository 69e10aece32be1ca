//! The shared semantic layer: what a file's code does about retries, computed once per file.
//!
//! One walk over the syntax tree records functions (async or not, and whether they run on a
//! blocking thread), retry sites (explicit loops, known combinators, recursive retries) with
//! their attempt cap, deadline and cancellation, and every sleep with what bounds it. Rules ask
//! these facts questions; they never walk the tree for retry logic themselves.
//!
//! Deliberately absent: type inference and cross-crate resolution. A loop counts as a retry site
//! only with positive evidence (a sleep, or retry words in its names or log messages, plus a
//! failure path that goes round again and an exit), so what cannot be decided gives no finding.
//! Every word this module matches is listed in `rules/apis.toml`, which is what keeps the
//! text prefilter exact.

pub mod clients;
pub mod imports;
pub mod index;
pub mod macros;
pub mod requests;
pub mod words;

mod bodies;
mod collect;
#[cfg(test)]
mod harness;
pub(crate) mod jitter;
mod nested;
mod optional_cap;
pub mod retry_after;
mod rounds;
mod shapes;
pub mod spans;
mod status;
mod strategy;
pub mod test_code;
mod types;
pub mod wrappers;

use std::collections::BTreeSet;

use crate::base::apis::Apis;
use crate::base::source::{SourceFile, Span};
pub use imports::Imports;
pub use rounds::CrateHelpers;

/// Everything the rules may ask about one file.
#[derive(Debug, Default)]
pub struct Facts {
    /// The file's `use` table.
    pub imports: Imports,
    /// Every function-like body, outermost first.
    pub functions: Vec<Function>,
    /// Every retry site.
    pub sites: Vec<RetrySite>,
    /// Every call of a known sleep.
    pub sleeps: Vec<Sleep>,
    /// Requests and bodies the retry sites send again.
    pub requests: requests::Requests,
    /// Sleeps that wait for as long as the server said (`Retry-After` and kin).
    pub server_waits: Vec<ServerWait>,
    /// Retry sites that retry every non-success status.
    pub status_retries: Vec<StatusRetry>,
    /// The sites that test no status themselves, classify nothing and go round on every
    /// error, by index, each with the names of the functions its attempt calls: the crate
    /// index follows those into other files (`status::run`).
    pub silent_sites: Vec<(usize, Vec<String>)>,
    /// Delays between attempts with no random component.
    pub fixed_delays: Vec<FixedDelay>,
    /// Supervisor loops that wait after a failure and try again ([`Reconnect`]).
    pub reconnects: Vec<Reconnect>,
    /// Retry sites around a client that already retries.
    pub nested_retries: Vec<NestedRetry>,
    /// Functions of this file that retry the callable they are given ([`wrappers`]).
    pub wrappers: Vec<wrappers::Wrapper>,
    /// Functions of this file that hand their callable or request parameter on to another call
    /// (a wrapper, perhaps of another file: [`wrappers::close`]).
    pub delegations: Vec<wrappers::Delegation>,
    /// Names whose definition elsewhere in the file could change these facts: helpers a retry
    /// loop asks whether to go on that the parsed text does not define (a helper that decides
    /// on a bound is the loop's gate). A run that parsed a masked text parses the whole file
    /// when the whole file defines one of them (`lint.rs`): the findings are the whole file's.
    pub hidden_callees: BTreeSet<String>,
    /// Names whose other mentions in the file could change these facts: private functions
    /// with a retry site whose callers, all seen bounded or none seen, decide whether the site
    /// is under their deadline. Parsed whole when the whole file mentions one more often.
    pub hidden_callers: BTreeSet<String>,
    /// Names a retry loop of the file asks whether to go on (a `?` on one, a test of its
    /// answer), or a give-up helper of the file decides by, that the file does not define:
    /// another file of the crate may define a checker or an optional cap of that name, which
    /// the driver's crate join ([`CrateHelpers`]) then tells the file about. Only a file with
    /// a retry site asks, and never about a name every library has (`index::too_common_name`).
    pub foreign_callees: BTreeSet<String>,
}

/// A supervisor `loop` (it never leaves on success: it serves, then reconnects) with failure
/// paths: not a retry site (running forever is its purpose), but a wait on a failure path
/// ([`Reconnect::waits`]) is a backoff a stop request should be able to cut short.
#[derive(Debug, Clone)]
pub struct Reconnect {
    /// The `loop` keyword.
    pub anchor: Span,
    /// The loop checks a stop signal between rounds.
    pub checks_cancel: bool,
    /// Its own failure paths (`Err` arms, `if let Err(..)` branches).
    pub failure_paths: Vec<Span>,
}

impl Reconnect {
    /// Sleep `sleep` waits on one of its failure paths.
    #[must_use]
    pub fn waits(&self, sleep: &Sleep) -> bool {
        self.failure_paths.iter().any(|p| p.contains(sleep.span))
    }
}

/// A retry site whose operation goes through a client that retries by itself.
#[derive(Debug, Clone)]
pub struct NestedRetry {
    /// Index into [`Facts::sites`] (the outer site).
    pub site: usize,
    /// Where the inner retry is configured.
    pub inner: Span,
    /// What makes the client retry (`RetryTransientMiddleware`).
    pub what: String,
    /// Attempts per call of the client, when literal.
    pub inner_attempts: Option<u64>,
}

/// A delay between attempts that every client computes the same way.
#[derive(Debug, Clone)]
pub struct FixedDelay {
    /// The wait call, the backoff function's result, or the backoff builder chain.
    pub span: Span,
    /// The retry site of a wait call.
    pub site: Option<usize>,
}

/// A retry site that tests only for success, so permanent statuses (400, 401, 404) go round.
#[derive(Debug, Clone)]
pub struct StatusRetry {
    /// Index into [`Facts::sites`].
    pub site: usize,
    /// The status test (`!status.is_success()`, `status != 200`, `error_for_status()`).
    pub test: Span,
    /// The test is the site's success exit (`if status.is_success() { break }`): every other
    /// status falls through to the next attempt, so the site itself is the problem.
    pub success_exit: bool,
    /// The site is a reconnect state machine: on the non-success path it schedules the next
    /// attempt here (`state.set(Waiting(delay(d)))`) and yields the error to its caller.
    pub reconnect: Option<Span>,
}

/// A sleep whose duration comes from the server (a `Retry-After` value, a backoff hint).
#[derive(Debug, Clone)]
pub struct ServerWait {
    /// Index into [`Facts::sleeps`], when the wait is a known sleep (not an in-crate wrapper).
    pub sleep: Option<usize>,
    /// The wait call.
    pub wait: Span,
    /// Where the server's value becomes the wait (the binding or `match` arm), or the sleep.
    pub origin: Span,
    /// A `min` / `clamp`, a time-left bound or a comparison limits the value on its way.
    pub capped: bool,
}

/// What kind of body a [`Function`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FnKind {
    /// `fn` item or method.
    Item,
    /// A closure.
    Closure,
    /// An `async { }` block.
    AsyncBlock,
}

/// A function-like body.
// Its flags are independent facts, each read by a different rule: no state machine hides there.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone)]
pub struct Function {
    /// Name of the item (`<closure>` / `<async block>` otherwise).
    pub name: String,
    /// The whole item or expression.
    pub span: Span,
    /// What it is.
    pub kind: FnKind,
    /// Whether its body runs as a future.
    pub is_async: bool,
    /// A closure handed to `spawn_blocking`, `block_in_place` or `thread::spawn`.
    pub blocking_thread: bool,
    /// Enclosing body.
    pub parent: Option<usize>,
    /// Cancellation sources visible in it (parameters, locals, `self` fields).
    pub cancel_sources: Vec<CancelSource>,
    /// The body is one statement that is only a sleep (a deliberate sleep future adapter).
    pub only_sleeps: bool,
    /// It returns `Poll<Option<..>>` (a stream's `poll_next`): a loop in it steps a state
    /// machine that yields each failure to the stream's consumer.
    pub streams: bool,
    /// What each local was bound or assigned to (`let d = backoff.min(left)`).
    pub bindings: std::collections::HashMap<String, Binding>,
}

/// What a local was bound or assigned to, over all its bindings and assignments.
#[derive(Debug, Clone, Default)]
pub struct Binding {
    /// Identifier words and string words of the values (`backoff.min(left)`: `backoff`,
    /// `min`, `left`).
    pub words: BTreeSet<String>,
    /// The identifiers the values read, whole (`max_backoff`): where to follow the local back.
    pub idents: BTreeSet<String>,
    /// Where each binding or assignment starts: a local never assigned inside a loop holds
    /// what it was computed from before the loop ran.
    pub at: Vec<usize>,
}

impl Binding {
    /// Add one value the local is bound or assigned to.
    pub(crate) fn add(&mut self, value: &syn::Expr, at: usize) {
        self.words.extend(words::words_of(value));
        self.idents.extend(Self::idents_of(value));
        self.at.push(at);
    }

    /// The identifiers `value` mentions, whole.
    pub(crate) fn idents_of(value: &syn::Expr) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        words::for_each_ident(quote::ToTokens::to_token_stream(value), &mut |i| {
            out.insert(i.to_string());
        });
        out
    }
}

/// A way round a `loop` that no bound stands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UngatedRound {
    /// The `continue`, or the body's closing brace for the fall-through.
    pub at: Span,
    /// Another path passes an attempt check, deadline or strategy: the loop has a bound, and
    /// this path goes around it.
    pub gated_elsewhere: bool,
}

/// A value that lets the caller give up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelSource {
    /// How it is written (`token`, `self.shutdown`).
    pub name: String,
    /// Where it is declared.
    pub span: Span,
}

/// What shape a retry site has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SiteKind {
    /// `loop { .. }`.
    Loop,
    /// `while cond { .. }` (including `while let`).
    While,
    /// `for x in range { .. }`.
    For,
    /// A known combinator, by its resolved path (`backon::Retryable::retry`).
    Combinator(String),
    /// A function that calls itself on failure.
    Recursion,
    /// The `retry` method of a `tower::retry::Policy` impl: it decides whether to go again and
    /// returns the wait.
    Policy,
    /// A call of one of the crate's own retry wrappers ([`wrappers`]), by how it is named
    /// (`retry::retry`): it repeats its operation; the wrapper's loop holds the waits and the
    /// bounds, and rules about those judge the loop, not each call.
    Wrapper(String),
}

/// The attempt cap of a site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cap {
    /// Nothing bounds the attempts.
    None,
    /// A literal number of attempts.
    Literal(u64),
    /// A bound exists but is not a literal (a counter compared with a variable, a strategy).
    Symbolic,
    /// Could not tell (a strategy built elsewhere).
    Unknown,
    /// The only attempt cap is a configuration option whose `None` switches it off, written
    /// out at the site (`max.is_none() || n < max.unwrap()`, a `None => {}` arm, a
    /// `unwrap_or(u32::MAX)` default): with the option unset the site goes round forever. Holds
    /// the option's name (`max_retries`).
    OffWhenNone(String),
}

/// How a site is bounded in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// The site runs inside `tokio::time::timeout(..)` or a `select!` branch future.
    Outer,
    /// An `Instant` / elapsed / remaining check inside the site.
    Manual,
}

/// One retry site.
// Its flags are independent facts, each read by a different rule (or copied from a wrapper's
// loop): no state machine hides there.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone)]
pub struct RetrySite {
    /// Its shape.
    pub kind: SiteKind,
    /// Where findings about the site point: the loop keyword or the combinator call.
    pub anchor: Span,
    /// The whole site.
    pub span: Span,
    /// Enclosing function.
    pub function: Option<usize>,
    /// Attempt cap.
    pub cap: Cap,
    /// Time bound, if any.
    pub deadline: Option<Deadline>,
    /// The site checks a cancellation signal between attempts (or races one in `select!`).
    pub checks_cancel: bool,
    /// Some exit is not plainly a success (`?`, `return Err(..)`, a conditional `break`): the
    /// failure it leaves on may be the bound, so the site is not known to be unbounded.
    pub exits_on_failure: bool,
    /// A `while` whose header tests only flags the body sets on success (`while !done`):
    /// nothing else in the header can end it, so, like a `loop`, it is judged by its ways
    /// round ([`Self::ungated_round`]), not by the absence of a cap.
    pub header_flags: bool,
    /// For a `loop`: the first way round (a `continue`, or the body's closing brace for the
    /// fall-through) that no attempt check, deadline, budget or stop signal stands on, even
    /// when such a check exists elsewhere in the body. An exit on another failure class does
    /// not bound this one.
    pub ungated_round: Option<UngatedRound>,
    /// Indices into [`Facts::sleeps`].
    pub sleeps: Vec<usize>,
    /// Words of every comparison inside the site (to tell whether a wait is capped).
    pub comparison_words: Vec<BTreeSet<String>>,
    /// A wrapper call whose wrapper goes round only after failures where the request was never
    /// applied (a refused connection, 429): re-sending a write there duplicates nothing.
    pub refusals_only: bool,
    /// The site's retry predicate answers `false` for every error without a response status
    /// (a timeout, a refused connection): it re-sends only after the server answered, so a
    /// per-request timeout bounds the whole site once, not once per attempt.
    pub status_only: bool,
    /// A wrapper call whose wrapper decides which errors go round (a classifier it is given, a
    /// status class): what the call's operation fails with is not all retried.
    pub classifies: bool,
    /// The loop calls a function of its file that compares the clock or a deadline (`if
    /// expired(start, budget) { .. }`): it checks a deadline by hand, through the helper. Kept
    /// apart from [`Self::deadline`], which bounds every way round: the helper bounds only the
    /// ways that call it, and the ways round are judged one by one.
    pub clock_checked: bool,
    /// A call of a wrapper that re-sends a request ([`wrappers::Takes::Request`]).
    pub resends: Option<Resend>,
}

/// A call of a crate wrapper that re-sends the request it is handed.
#[derive(Debug, Clone)]
pub struct Resend {
    /// The argument holding the request it sends on every attempt.
    pub arg: Span,
    /// The wrapper's function name (`send_request`), for messages.
    pub wrapper: String,
}

/// One call of a known sleep.
// Independent facts of one call; an enum or bitflags would only rename them.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone)]
pub struct Sleep {
    /// The whole call.
    pub span: Span,
    /// The resolved path (`tokio::time::sleep`).
    pub path: String,
    /// Blocks the thread (`std::thread::sleep`).
    pub blocking: bool,
    /// The duration argument's text.
    pub duration: String,
    /// Words of the duration argument.
    pub duration_words: BTreeSet<String>,
    /// Identifiers of the duration argument, whole (`wait_time`): the locals it reads.
    pub duration_idents: BTreeSet<String>,
    /// Raced against something (`select!` branch future, `timeout_at`).
    pub raced: bool,
    /// Inside a deadline wrapper's future.
    pub under_deadline: bool,
    /// Innermost function.
    pub function: Option<usize>,
    /// Innermost retry site; for a wait in a helper, the one site that calls the helper.
    pub site: Option<usize>,
    /// Inside a loop of its own function (retry site or not).
    pub in_loop: bool,
    /// The call of the helper the wait is in, when the site waits through one.
    pub via: Option<Via>,
}

/// The call through which a retry site waits in a helper of the file (`sleep_for(d).await`).
#[derive(Debug, Clone)]
pub struct Via {
    /// The call.
    pub call: Span,
    /// Words of its arguments: what the duration handed in is made of.
    pub words: BTreeSet<String>,
    /// Identifiers of its arguments, whole: the caller's locals they read.
    pub idents: BTreeSet<String>,
    /// The function the call is written in.
    pub from: Option<usize>,
}

impl Facts {
    /// The item function (not a closure or async block) around `function`: closures and async
    /// blocks run for their item.
    #[must_use]
    pub fn item_of(&self, function: Option<usize>) -> Option<usize> {
        let mut f = function;
        while let Some(i) = f {
            if self.functions[i].kind == FnKind::Item {
                return Some(i);
            }
            f = self.functions[i].parent;
        }
        None
    }

    /// The server-chosen wait of sleep `sleep`, when its value reaches it uncapped.
    #[must_use]
    pub fn uncapped_server_wait(&self, sleep: usize) -> Option<&ServerWait> {
        self.server_waits
            .iter()
            .find(|w| w.sleep == Some(sleep) && !w.capped)
    }

    /// The innermost function's async context: walks out through sync closures that do not run
    /// on a blocking thread, since their bodies still run on the executor.
    #[must_use]
    pub fn runs_on_executor(&self, function: Option<usize>) -> bool {
        let mut cur = function;
        while let Some(i) = cur {
            let f = &self.functions[i];
            if f.blocking_thread {
                return false;
            }
            if f.is_async {
                return true;
            }
            if f.kind == FnKind::Item {
                return false;
            }
            cur = f.parent;
        }
        false
    }

    /// Cancellation sources visible from `function` (its own and its enclosing bodies').
    #[must_use]
    pub fn cancel_sources(&self, function: Option<usize>) -> Vec<&CancelSource> {
        let mut out = Vec::new();
        let mut cur = function;
        while let Some(i) = cur {
            out.extend(self.functions[i].cancel_sources.iter());
            cur = self.functions[i].parent;
        }
        out
    }
}

impl RetrySite {
    /// Nothing but success ends the site: no time bound, stop signal or wrapper's own loop, and
    /// either a way round that no check stands on or no exit on failure at all. What
    /// `unbounded-retry` reports, and what other rules may call "unbounded attempts".
    #[must_use]
    pub fn known_unbounded(&self) -> bool {
        if !self.unchecked() {
            return false;
        }
        match self.cap {
            Cap::None | Cap::Literal(_) | Cap::Symbolic if self.ungated_round.is_some() => true,
            Cap::None => {
                !self.exits_on_failure && self.kind != SiteKind::Loop && !self.header_flags
            }
            _ => false,
        }
    }

    /// Nothing but the attempt cap can end this site without success: no deadline of any
    /// kind, no cancellation check, and not a call of the crate's own retry wrapper (whose loop
    /// is judged where it is written). Both unbounded-retry shapes start from this.
    #[must_use]
    pub fn unchecked(&self) -> bool {
        self.deadline.is_none() && !self.checks_cancel && !matches!(self.kind, SiteKind::Wrapper(_))
    }
}

impl Sleep {
    /// The wait is bounded by the time left: its duration, or what the locals it reads were
    /// bound to (followed a few steps back), mentions the time left (`deadline - now`,
    /// `remaining`, `budget`), or a comparison in the site involves the duration ("don't start
    /// a wait you cannot finish": `if now + delay > deadline { return }`). A `min` / `clamp`
    /// against a fixed maximum (`delay.min(max_delay)`) is no such cap: RULES.md asks for the
    /// time remaining, and a wait capped at 30 s still overshoots a deadline 1 s away.
    /// For a wait in a helper, what the site hands the helper counts as its duration too.
    #[must_use]
    pub fn capped(&self, facts: &Facts) -> bool {
        Self::capped_by(
            &self.duration_words,
            &self.duration_idents,
            self.function,
            self.site,
            facts,
        ) || self
            .via
            .as_ref()
            .is_some_and(|v| Self::capped_by(&v.words, &v.idents, v.from, self.site, facts))
    }

    fn capped_by(
        duration_words: &BTreeSet<String>,
        duration_idents: &BTreeSet<String>,
        function: Option<usize>,
        site: Option<usize>,
        facts: &Facts,
    ) -> bool {
        const TIME_LEFT_WORDS: &[&str] = &[
            "remaining",
            "deadline",
            "left",
            "until",
            "budget",
            "expiry",
            "elapsed",
        ];
        const GENERIC: &[&str] = &[
            "duration", "from", "secs", "millis", "std", "time", "core", "as", "u64", "mul", "f64",
            "f32", "tokio", "sleep", "self", "await",
        ];
        let mut words = duration_words.clone();
        // A local bound only before the loop holds the time left as it was then
        // (`let max_backoff = time_left(deadline) / 5` before the loop, `backoff.min(max_backoff)`
        // in it): a fixed cap by now, not the time remaining at the wait.
        let site_start = site.map(|s| facts.sites[s].span.start);
        let frozen = |b: &Binding| site_start.is_some_and(|s| b.at.iter().all(|&a| a < s));
        if let Some(f) = function {
            let bindings = &facts.functions[f].bindings;
            // Locals bound from locals (`let d = base * 2; let wait = d.min(left);`): a few
            // steps back, each local once.
            let mut seen: BTreeSet<&str> = BTreeSet::new();
            let mut frontier: Vec<&str> = duration_idents.iter().map(String::as_str).collect();
            for _ in 0..3 {
                let mut next = Vec::new();
                for name in frontier {
                    if !seen.insert(name) {
                        continue;
                    }
                    if let Some(b) = bindings.get(name).filter(|b| !frozen(b)) {
                        words.extend(b.words.iter().cloned());
                        next.extend(b.idents.iter().map(String::as_str));
                    }
                }
                frontier = next;
            }
        }
        if words.iter().any(|w| TIME_LEFT_WORDS.contains(&w.as_str())) {
            return true;
        }
        let own: BTreeSet<&String> = duration_words
            .iter()
            .filter(|w| !GENERIC.contains(&w.as_str()))
            .collect();
        // A local the duration reads, compared whole (`if sleep_duration >= remaining { give up
        // }`), though each of its words is generic.
        let locals = function.map(|f| &facts.functions[f].bindings);
        let compared_whole = |c: &BTreeSet<String>| {
            duration_idents
                .iter()
                .filter(|i| locals.is_some_and(|l| l.contains_key(*i)))
                .any(|i| {
                    let mut w = BTreeSet::new();
                    words::split_ident(i, &mut w);
                    w.len() > 1 && w.is_subset(c)
                })
        };
        site.is_some_and(|s| {
            facts.sites[s]
                .comparison_words
                .iter()
                .any(|c| c.iter().any(|w| own.contains(w)) || compared_whole(c))
        })
    }
}

/// Names of the functions and methods `e` calls (the last path segment, the method), outside
/// closures and nested items, which run elsewhere. With `handled_only`, a call whose error
/// leaves through `?` (`helper()?`, `helper().await?`) is left out, though what its arguments
/// call still counts: its error never reaches the code around it.
pub(super) fn callee_names(e: &syn::Expr, handled_only: bool) -> Vec<String> {
    use syn::visit::Visit;
    use syn::Expr;
    struct V(Vec<String>, bool);
    impl<'ast> Visit<'ast> for V {
        fn visit_item(&mut self, _: &'ast syn::Item) {}
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
            if !self.1 {
                return syn::visit::visit_expr_try(self, t);
            }
            let mut inner = &*t.expr;
            while let Expr::Await(a) = inner {
                inner = &a.base;
            }
            match inner {
                Expr::Call(c) => c.args.iter().for_each(|a| self.visit_expr(a)),
                Expr::MethodCall(m) => m.args.iter().for_each(|a| self.visit_expr(a)),
                other => self.visit_expr(other),
            }
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let Expr::Path(p) = &*c.func {
                if let Some(last) = p.path.segments.last() {
                    self.0.push(last.ident.to_string());
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            self.0.push(m.method.to_string());
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut v = V(Vec::new(), handled_only);
    v.visit_expr(e);
    v.0
}

/// Visit the arguments of a deadline wrapper (`tokio::time::timeout(d, fut)`): the bounded future
/// (the last argument) with `depth` raised, so the visitor knows it runs under a deadline, and
/// the others as usual.
pub(crate) fn visit_bounded<'ast, V: syn::visit::Visit<'ast>>(
    v: &mut V,
    args: &'ast syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
    depth: fn(&mut V) -> &mut usize,
) {
    let mut all: Vec<&syn::Expr> = args.iter().collect();
    let fut = all.pop();
    for a in all {
        v.visit_expr(a);
    }
    if let Some(fut) = fut {
        *depth(v) += 1;
        v.visit_expr(fut);
        *depth(v) -= 1;
    }
}

/// Compute the facts of one parsed file.
#[must_use]
pub fn analyze(file: &syn::File, src: &SourceFile, apis: &Apis) -> Facts {
    analyze_with(file, src, apis, &[], CrateHelpers::NONE)
}

/// [`analyze`], with the crate's retry wrappers known ([`wrappers`]): their calls are sites;
/// and what the crate's other files answer for the helpers the file calls ([`CrateHelpers`]).
#[must_use]
pub fn analyze_with(
    file: &syn::File,
    src: &SourceFile,
    apis: &Apis,
    known: &[wrappers::Wrapper],
    helpers: &CrateHelpers,
) -> Facts {
    analyze_summarized(file, src, apis, known, helpers, false).0
}

/// [`analyze_with`], and with `summarize` the file's crate-index summary
/// ([`clients::summarize`]), both read from the one index of the file.
#[must_use]
pub fn analyze_summarized(
    file: &syn::File,
    src: &SourceFile,
    apis: &Apis,
    known: &[wrappers::Wrapper],
    helpers: &CrateHelpers,
    summarize: bool,
) -> (Facts, Option<clients::ClientSummary>) {
    let expansions = bodies::Expansions::new();
    let bodies = bodies::Bodies::of(file, &expansions);
    let mut facts = collect::run(file, &bodies, src, apis, known, helpers);
    let site_spans: Vec<Span> = facts.sites.iter().map(|s| s.span).collect();
    let site_nodes = bodies.site_nodes(src, &site_spans);
    facts.requests = requests::run(file, &bodies, src, apis, &facts);
    // A request sending the method its function is handed sends what the callers hand.
    let takers = facts.requests.method_takers.clone();
    facts.hidden_callers.extend(takers);
    // And a function handed a retrying client stores it where requests are sent from.
    let takers = facts.requests.client_takers.clone();
    facts.hidden_callees.extend(takers);
    for w in &mut facts.wrappers {
        w.refusals_only = w
            .site
            .is_some_and(|s| facts.requests.refusal_only_sites.contains(&s));
    }
    facts.server_waits = retry_after::run(&bodies, src, &facts);
    let (retries, silent) = status::run(&bodies, &site_nodes, src, &facts);
    facts.status_retries = retries;
    facts.silent_sites = silent;
    // A wrapper whose own loop is not silent about what it retries decides for its callers.
    for w in &mut facts.wrappers {
        w.classifies = w.site.is_some_and(|at| {
            facts
                .sites
                .iter()
                .enumerate()
                .any(|(i, s)| s.span == at && !facts.silent_sites.iter().any(|(j, _)| *j == i))
        });
    }
    facts.fixed_delays = jitter::run(&bodies, &site_nodes, src, &facts);
    facts.nested_retries = nested::run(&bodies, &site_nodes, src, &facts, apis);
    let summary = summarize.then(|| clients::of_index(&bodies, src, apis, &facts));
    (facts, summary)
}

/// Only the retry-site model (sites, sleeps, functions, imports, the sites silent about what
/// they retry): all the crate index reads.
#[must_use]
pub fn sites(file: &syn::File, src: &SourceFile, apis: &Apis) -> Facts {
    sites_with(file, src, apis, &[])
}

/// [`sites`], with the crate's retry wrappers known.
#[must_use]
pub fn sites_with(
    file: &syn::File,
    src: &SourceFile,
    apis: &Apis,
    known: &[wrappers::Wrapper],
) -> Facts {
    let expansions = bodies::Expansions::new();
    let bodies = bodies::Bodies::of(file, &expansions);
    sites_of(file, &bodies, src, apis, known)
}

/// [`sites`] and the file's crate-index summary ([`clients::summarize`]), read from the one
/// index of the file.
#[must_use]
pub fn sites_summarized(
    file: &syn::File,
    src: &SourceFile,
    apis: &Apis,
) -> (Facts, clients::ClientSummary) {
    let expansions = bodies::Expansions::new();
    let bodies = bodies::Bodies::of(file, &expansions);
    let facts = sites_of(file, &bodies, src, apis, &[]);
    let summary = clients::of_index(&bodies, src, apis, &facts);
    (facts, summary)
}

fn sites_of(
    file: &syn::File,
    bodies: &bodies::Bodies<'_>,
    src: &SourceFile,
    apis: &Apis,
    known: &[wrappers::Wrapper],
) -> Facts {
    let mut facts = collect::run(file, bodies, src, apis, known, CrateHelpers::NONE);
    // The crate index follows the calls of the sites that do not classify what they retry.
    let site_spans: Vec<Span> = facts.sites.iter().map(|s| s.span).collect();
    let site_nodes = bodies.site_nodes(src, &site_spans);
    facts.silent_sites = status::run(bodies, &site_nodes, src, &facts).1;
    facts
}

/// Convert a proc-macro2 span into a byte range of `src`.
#[must_use]
pub fn span_of(src: &SourceFile, span: proc_macro2::Span) -> Span {
    let (s, e) = (span.start(), span.end());
    let start = src.offset_of(s.line, s.column);
    let end = src.offset_of(e.line, e.column);
    Span::new(start, end.max(start))
}
