//! Pass 2 of the crate index: joins the per-file [`ClientSummary`]s of one crate and answers, for
//! every retry site, "which timeout-carrying clients does this site go through, and is anything
//! bounding the whole site?".
//!
//! Names flow to a fixed point (a seed in `make_client` taints `f:Settings::make_client`, which
//! taints `field:Api.http` where a constructor stores its result, which reaches every site
//! reading `self.http`); arguments reach crate functions through `param:` names and pass through
//! external wrappers (`Arc::new`, `Ok`) only; a site reaches what the crate functions it calls
//! read, a few calls deep. A name whose owner type is unknown (`x.send()`, `state.client`) links
//! to the crate's functions or fields of that name only when there are at most two; one called
//! through a trait (`client: &dyn Transport`, `C: Transport`) links to every implementation of
//! the trait in the crate.
//! A site has an overall deadline when the file's model says so, when it calls a helper that
//! compares elapsed time, or when every call of its function anywhere in the crate runs inside a
//! deadline wrapper. A client the crate already retries under a deadline is not charged to outer
//! loops that reach it only through helpers (that is nested retry, another rule's problem).
//!
//! Deliberately absent: syntax trees (only summaries are held) and inferred types (only the
//! types written on a binding or parameter): what no name links gives no finding.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::clients::{ClientSummary, HelperTimer, SiteUse, Src, StatusGate, TimeoutCall};

/// A method called on a receiver of unknown type links to every crate method of that name when
/// there are at most this many; with more, the name says nothing.
const MAX_CANDIDATES: usize = 2;
/// How many crate functions deep a site's reads are followed.
const CALL_DEPTH: usize = 3;
/// Bound on the taint fixed point (each round follows one more hop).
const ROUNDS: usize = 12;
/// Method names so common in std and every library that linking through them would join
/// unrelated values.
const TOO_COMMON: &[&str] = &[
    "new",
    "default",
    "clone",
    "build",
    "unwrap",
    "expect",
    "into",
    "from",
    "as_ref",
    "borrow",
    "lock",
    "ok",
    "map",
    "map_err",
    "and_then",
    "to_owned",
    "to_string",
    "iter",
    "unwrap_or",
    "unwrap_or_else",
    "ok_or",
    "cloned",
    "take",
    "as_str",
    "len",
    "is_empty",
    "fmt",
    "drop",
    "deref",
    "eq",
    "hash",
];

/// Queries of the standard `Option`, `Result`, `Duration` and smart-pointer types: a crate
/// helper named like one is rare, a call of one is everywhere.
const STD_QUERIES: &[&str] = &[
    "is_some",
    "is_none",
    "is_ok",
    "is_err",
    "is_some_and",
    "is_none_or",
    "is_ok_and",
    "is_err_and",
    "as_mut",
    "as_deref",
    "get",
    "get_mut",
    "contains",
    "contains_key",
    "from_secs",
    "from_millis",
    "from_secs_f64",
    "as_secs",
    "as_millis",
    "collect",
    "into_iter",
    "pin",
    "poll",
    "load",
    "store",
    "filter",
    "filter_map",
    "find",
    "any",
    "all",
];

/// A plain name (`new`, `is_some`, `call`) so common that a call of it says nothing about
/// which of the crate's functions is meant; or a constructor (`Some`, `Err`), which is none.
#[must_use]
pub fn too_common_name(name: &str) -> bool {
    TOO_COMMON.contains(&name)
        || STD_QUERIES.contains(&name)
        || super::wrappers::COMMON_METHODS.contains(&name)
        || name.starts_with(|c: char| c.is_ascii_uppercase())
}

/// A function name too common to link through (`f:Client::new` still links: its type is known).
fn too_common(n: &str) -> bool {
    n.strip_prefix("f:?::")
        .or_else(|| n.strip_prefix("f:").filter(|r| !r.contains("::")))
        .is_some_and(|m| TOO_COMMON.contains(&m))
}

/// A retry site of the crate, by file.
#[derive(Debug, Clone)]
pub struct SiteRef {
    /// Display path of its file.
    pub path: String,
    /// The site.
    pub site: SiteUse,
}

/// A timeout that bounds one attempt of retry sites with no overall deadline.
#[derive(Debug, Clone)]
pub struct ClientFinding {
    /// Display path of the file holding the timeout call.
    pub path: String,
    /// The timeout call.
    pub timeout: TimeoutCall,
    /// Its duration in seconds, when literal or a constant of the crate.
    pub secs: Option<f64>,
    /// Every retry site that goes through the client, ordered by path and position.
    pub sites: Vec<SiteRef>,
}

/// `timeout(D, attempt)` at a retry site with no overall deadline.
#[derive(Debug, Clone)]
pub struct AttemptFinding {
    /// Display path.
    pub path: String,
    /// The timer's callee (primary location).
    pub span: super::Span,
    /// Its duration as written.
    pub duration: String,
    /// Its site.
    pub site: SiteUse,
    /// Where the site is when the timer is in a function it calls (display path, and the
    /// function holding the timer): `None` when the timer is written at the site itself.
    pub through: Option<(String, String)>,
    /// Duration in seconds, when known.
    pub secs: Option<f64>,
}

/// A helper's status test that makes every non-success status an error, called by retry sites
/// (in other files, or through other functions) that go round on every error.
#[derive(Debug, Clone)]
pub struct StatusFinding {
    /// Display path of the file holding the test.
    pub path: String,
    /// The test.
    pub gate: StatusGate,
    /// The sites whose attempts reach it, ordered by path and position.
    pub sites: Vec<SiteRef>,
}

/// The crate-level answers.
#[derive(Debug, Default)]
pub struct CrateIndex {
    /// `client-timeout-in-retry` candidates.
    pub clients: Vec<ClientFinding>,
    /// `attempt-timeout-without-budget` candidates.
    pub attempts: Vec<AttemptFinding>,
    /// `retry-non-transient-status` findings whose test is in a helper the site reaches.
    pub statuses: Vec<StatusFinding>,
}

type Seed = (usize, usize);

impl CrateIndex {
    /// Does any finding of the index point into `path`?
    #[must_use]
    pub fn has_findings_in(&self, path: &str) -> bool {
        self.clients.iter().any(|f| f.path == path)
            || self.attempts.iter().any(|a| a.path == path)
            || self.statuses.iter().any(|s| s.path == path)
    }

    /// Join the summaries of one crate's files.
    #[must_use]
    pub fn build(files: &[&ClientSummary]) -> Self {
        let statuses = statuses(files);
        let seeds = files.iter().any(|f| !f.timeouts.is_empty());
        if !seeds
            && files
                .iter()
                .all(|f| f.attempt_timers.is_empty() && f.helper_timers.is_empty())
        {
            // Most crates build no client with a timeout: nothing more to join.
            return Self {
                statuses,
                ..Self::default()
            };
        }
        let consts: HashMap<&str, &str> = files
            .iter()
            .flat_map(|f| f.consts.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .collect();
        let mut calls: HashMap<&str, (usize, usize)> = HashMap::new();
        for f in files {
            for (k, (t, u)) in &f.calls {
                let e = calls.entry(k.as_str()).or_insert((0, 0));
                e.0 += t;
                e.1 += u;
            }
        }
        let names = Names::new(files);
        let timed = timed_fns(files);
        let has_deadline = |s: &SiteUse| {
            s.local_deadline
                || s.reads.iter().any(|r| match r {
                    Src::Name(n) => names.resolve(n).iter().any(|n| timed.contains(n)),
                    Src::Seed(_) => false,
                })
                || s.function.as_deref().is_some_and(|f| {
                    calls
                        .get(f)
                        .is_some_and(|&(total, under)| total > 0 && total == under)
                })
        };
        let taint = if seeds {
            taint(files, &names)
        } else {
            HashMap::new()
        };
        let mut bodies: HashMap<&str, Vec<(usize, &Src)>> = HashMap::new();
        for (fi, f) in files.iter().enumerate() {
            for (k, reads) in &f.bodies {
                if too_common(k) {
                    continue;
                }
                bodies
                    .entry(k.as_str())
                    .or_default()
                    .extend(reads.iter().map(|r| (fi, r)));
            }
        }
        let mut by_seed: BTreeMap<Seed, Vec<SiteRef>> = BTreeMap::new();
        let mut out = CrateIndex {
            statuses,
            ..CrateIndex::default()
        };
        // A client the crate already retries under a deadline (a bounded site reads it) is
        // reached by outer loops through that bounded retry: only a site that uses the client
        // itself (not through the crate's helpers) multiplies its timeout.
        let mut bounded: BTreeSet<Seed> = BTreeSet::new();
        let mut unbounded: Vec<(usize, &SiteUse, BTreeMap<Seed, usize>)> = Vec::new();
        for (fi, f) in files.iter().enumerate() {
            // A site that re-sends only after the server answered never retries a timeout.
            for site in f.sites.iter().filter(|s| seeds && !s.status_only) {
                let r = reach(fi, &site.reads, &taint, &bodies, &names);
                if has_deadline(site) {
                    bounded.extend(r.keys().copied());
                } else {
                    unbounded.push((fi, site, r));
                }
            }
        }
        for (fi, site, r) in unbounded {
            for (seed, depth) in r {
                if depth > 0 && bounded.contains(&seed) {
                    continue;
                }
                by_seed.entry(seed).or_default().push(SiteRef {
                    path: files[fi].path.clone(),
                    site: site.clone(),
                });
            }
        }
        for (fi, f) in files.iter().enumerate() {
            for t in &f.attempt_timers {
                let site = &f.sites[t.site];
                // A site under a deadline is bounded as a whole; one that goes round only on
                // statuses ends on failures this timer does not multiply; one with no attempt
                // cap that may still end on an exit this model cannot weigh (a state machine's
                // `engine.step()` giving up) has an unknown bound: no guess. A site that
                // nothing but success ends is also `unbounded-retry`'s, a different problem
                // (RULES.md: both fire), and each of its attempts restarts the timer.
                if has_deadline(site) || site.status_only || (site.uncapped && !site.unbounded) {
                    continue;
                }
                out.attempts.push(AttemptFinding {
                    path: f.path.clone(),
                    span: t.span,
                    duration: t.duration.clone(),
                    site: site.clone(),
                    through: None,
                    secs: secs_of(&t.duration, &consts),
                });
            }
            for (ti, t) in f.timeouts.iter().enumerate() {
                if t.own_retries.is_some() {
                    by_seed.entry((fi, ti)).or_default();
                }
            }
        }
        out.attempts
            .extend(helper_timers(files, &names, &calls, |s| {
                has_deadline(s) || s.status_only || (s.uncapped && !s.unbounded)
            }));
        for ((fi, ti), mut sites) in by_seed {
            let t = &files[fi].timeouts[ti];
            if sites.is_empty() && t.own_retries.is_none() {
                continue;
            }
            sites.sort_by(|a, b| {
                (&a.path, a.site.anchor.start).cmp(&(&b.path, b.site.anchor.start))
            });
            sites.dedup_by(|a, b| a.path == b.path && a.site.anchor == b.site.anchor);
            let secs = t
                .default_secs
                .map(|s| f64::from(u32::try_from(s).unwrap_or(u32::MAX)))
                .or_else(|| secs_of(&t.duration, &consts));
            out.clients.push(ClientFinding {
                path: files[fi].path.clone(),
                timeout: t.clone(),
                secs,
                sites,
            });
        }
        out
    }
}

/// Resolution of names with an unknown owner (`f:?::send`, `field:?.http`): to the one function
/// or field of the crate with that name, or to nothing when several share it.
struct Names {
    /// `f:?::m` / `field:?.f` -> every function or field of the crate with that name.
    unique: HashMap<String, BTreeSet<String>>,
    /// Functions defined in the crate.
    defined: BTreeSet<String>,
    /// Trait -> the crate's types implementing it.
    impls: HashMap<String, BTreeSet<String>>,
}

impl Names {
    fn new(files: &[&ClientSummary]) -> Self {
        let mut unique: HashMap<String, BTreeSet<String>> = HashMap::new();
        let mut add = |known: &str| {
            let unknown = if let Some(rest) = known.strip_prefix("field:") {
                rest.split_once('.').map(|(_, f)| format!("field:?.{f}"))
            } else if let Some((_, m)) = known.strip_prefix("f:").and_then(|r| r.rsplit_once("::"))
            {
                // A method call on an unknown receiver can only be a method, never a free fn.
                Some(format!("f:?::{m}"))
            } else {
                None
            };
            if let Some(u) = unknown {
                unique.entry(u).or_default().insert(known.to_string());
            }
        };
        let mut defined = BTreeSet::new();
        let mut impls: HashMap<String, BTreeSet<String>> = HashMap::new();
        for f in files {
            for (tr, ty) in &f.impls {
                impls.entry(tr.clone()).or_default().insert(ty.clone());
            }
            for k in f.bodies.keys() {
                add(k);
                defined.insert(k.clone());
            }
            for fl in &f.flows {
                if fl.dest.starts_with("field:") {
                    add(&fl.dest);
                }
            }
        }
        Self {
            unique,
            defined,
            impls,
        }
    }

    /// `f:Trait::m` is the trait's own default body and each implementation's `m`: a call
    /// through a trait object or a bounded generic may run any of them.
    fn implementations(&self, n: &str) -> Option<Vec<String>> {
        let (ty, m) = n.strip_prefix("f:")?.rsplit_once("::")?;
        let types = self.impls.get(ty)?;
        let mut out = vec![n.to_string()];
        out.extend(types.iter().map(|t| format!("f:{t}::{m}")));
        Some(out)
    }

    /// The names `n` may stand for: itself when its owner is known, else the crate's functions
    /// or fields of that name when there are at most [`MAX_CANDIDATES`] of them.
    fn resolve(&self, n: &str) -> Vec<String> {
        if let Some((callee, _)) = n.strip_prefix("ext:").and_then(|r| r.split_once('@')) {
            // Arguments pass through only external callees; a crate function's parameters
            // carry them instead.
            let defined = if callee.contains('?') {
                self.unique.get(callee).is_some_and(|c| !c.is_empty())
            } else if let Some(all) = self.implementations(callee) {
                all.iter().any(|c| self.defined.contains(c))
            } else {
                self.defined.contains(callee)
            };
            return if defined {
                Vec::new()
            } else {
                vec![n.to_string()]
            };
        }
        if let Some((callee, i)) = n.strip_prefix("param:").and_then(|r| r.rsplit_once('#')) {
            if !n.contains('?') && self.implementations(callee).is_none() {
                return vec![n.to_string()];
            }
            return self
                .resolve(callee)
                .into_iter()
                .map(|c| format!("param:{c}#{i}"))
                .collect();
        }
        if let Some(all) = self.implementations(n) {
            return all;
        }
        if !n.contains('?') {
            return vec![n.to_string()];
        }
        match self.unique.get(n) {
            Some(c) if c.len() <= MAX_CANDIDATES => c.iter().cloned().collect(),
            _ => Vec::new(),
        }
    }
}

/// How many crate calls deep a silent site's attempt is followed to a status test: the helper
/// it calls, and the one that helper calls (`send` -> `check_status`).
const STATUS_DEPTH: usize = 2;

/// The status tests that sites going round on every error reach through the crate functions
/// their attempts call ([`ClientSummary::status_gates`]), one finding per test.
fn statuses(files: &[&ClientSummary]) -> Vec<StatusFinding> {
    let mut gates: HashMap<&str, (usize, &StatusGate)> = HashMap::new();
    for (fi, f) in files.iter().enumerate() {
        for (k, g) in &f.status_gates {
            gates.insert(k.as_str(), (fi, g));
        }
    }
    if gates.is_empty() {
        return Vec::new();
    }
    let names = Names::new(files);
    let bodies = call_graph(files);
    let mut by_gate: BTreeMap<(usize, usize), Vec<SiteRef>> = BTreeMap::new();
    for (fi, f) in files.iter().enumerate() {
        for site in f.sites.iter().filter(|s| !s.status_callees.is_empty()) {
            let callees = site_callees(site).filter(|n| {
                let last = n.rsplit("::").next().unwrap_or(n).trim_start_matches("f:");
                site.status_callees.iter().any(|c| c == last)
            });
            // A status gate decides for what it calls: the walk stops there.
            walk_calls(callees, STATUS_DEPTH, &names, &bodies, |k| {
                let Some(&(gi, g)) = gates.get(k) else {
                    return true;
                };
                by_gate
                    .entry((gi, g.span.start))
                    .or_default()
                    .push(SiteRef {
                        path: files[fi].path.clone(),
                        site: site.clone(),
                    });
                false
            });
        }
    }
    by_gate
        .into_iter()
        .filter_map(|((gi, start), mut sites)| {
            let gate = files[gi]
                .status_gates
                .values()
                .find(|g| g.span.start == start)?;
            sites.sort_by(|a, b| {
                (&a.path, a.site.anchor.start).cmp(&(&b.path, b.site.anchor.start))
            });
            sites.dedup_by(|a, b| a.path == b.path && a.site.anchor == b.site.anchor);
            Some(StatusFinding {
                path: files[gi].path.clone(),
                gate: gate.clone(),
                sites,
            })
        })
        .collect()
}

/// How many crate calls deep a site's attempt is followed to a helper's timer: the helper it
/// calls and the helpers of that one (kubert's `ensure_claimed` -> `renew` -> `patch`). Further,
/// a crawler's retry reaches every timer of its fetch machinery, each a finding of its own.
const TIMER_DEPTH: usize = 2;

/// The crate names a site's attempt calls, as the summary wrote them (`f:?::get`).
fn site_callees(site: &SiteUse) -> impl Iterator<Item = &str> {
    site.reads.iter().filter_map(|r| match r {
        Src::Name(n) if n.starts_with("f:") && !too_common(n.as_str()) => Some(n.as_str()),
        _ => None,
    })
}

/// Breadth-first over the call graph from `from`, `depth` calls deep, each function key once:
/// `visit` sees every key reached and says whether to follow what that function calls.
fn walk_calls<'a>(
    from: impl Iterator<Item = &'a str>,
    depth: usize,
    names: &Names,
    bodies: &HashMap<&'a str, Vec<&'a str>>,
    mut visit: impl FnMut(&str) -> bool,
) {
    let mut frontier: Vec<&str> = from.collect();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for _ in 0..depth {
        let mut next = Vec::new();
        for n in frontier {
            for k in names.resolve(n) {
                if !seen.insert(k.clone()) || !visit(&k) {
                    continue;
                }
                if let Some(called) = bodies.get(k.as_str()) {
                    next.extend(called.iter().copied());
                }
            }
        }
        frontier = next;
    }
}

/// Function key -> the crate functions its body calls (by the names the summaries wrote).
fn call_graph<'a>(files: &[&'a ClientSummary]) -> HashMap<&'a str, Vec<&'a str>> {
    let mut graph: HashMap<&str, Vec<&str>> = HashMap::new();
    for f in files {
        for (k, reads) in &f.bodies {
            let called = reads.iter().filter_map(|r| match r {
                Src::Name(n) if n.starts_with("f:") && !too_common(n) => Some(n.as_str()),
                _ => None,
            });
            graph.entry(k.as_str()).or_default().extend(called);
        }
    }
    graph
}

/// The fixed timers of crate functions ([`ClientSummary::helper_timers`]) that retry sites with
/// no overall deadline reach through the functions their attempts call, a few calls deep: each
/// attempt restarts the helper's timer (kubert's lease loop calling `self.patch(..)`, which is
/// `timeout(API_TIMEOUT, api.patch(..))`), when its duration is a literal or a crate constant of
/// a second or more.
/// One finding per timer, at the first site in path order.
/// `skip` says which sites are bounded (as for the timers written at a site). A helper every call
/// of which (by name) runs under a deadline wrapper is left alone, as a site's function is.
fn helper_timers(
    files: &[&ClientSummary],
    names: &Names,
    calls: &HashMap<&str, (usize, usize)>,
    skip: impl Fn(&SiteUse) -> bool,
) -> Vec<AttemptFinding> {
    // Every file's timers under a key: methods of one name in two files (a trait's
    // implementations, or two types a name cannot tell apart) are all candidates.
    let mut timers: HashMap<&str, Vec<(usize, &HelperTimer)>> = HashMap::new();
    for (fi, f) in files.iter().enumerate() {
        for (k, ts) in &f.helper_timers {
            timers
                .entry(k.as_str())
                .or_default()
                .extend(ts.iter().map(|t| (fi, t)));
        }
    }
    if timers.is_empty() {
        return Vec::new();
    }
    let bodies = call_graph(files);
    let under_deadline = |k: &str| {
        let last = k.rsplit("::").next().unwrap_or(k).trim_start_matches("f:");
        calls
            .get(last)
            .is_some_and(|&(total, under)| total > 0 && total == under)
    };
    let consts: HashMap<&str, &str> = files
        .iter()
        .flat_map(|f| f.consts.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .collect();
    // Timer (file, span start) -> the finding, first site in path order.
    let mut found: BTreeMap<(usize, usize), AttemptFinding> = BTreeMap::new();
    for f in files {
        for site in f.sites.iter().filter(|s| !skip(s)) {
            // A helper every call of which is under a deadline neither counts nor leads on.
            walk_calls(site_callees(site), TIMER_DEPTH, names, &bodies, |k| {
                if under_deadline(k) {
                    return false;
                }
                if let Some(ts) = timers.get(k) {
                    // RULES.md's `timeout(CONST, attempt)`: away from the site only a duration
                    // written with literals or crate constants is surely fixed (a configured
                    // one may be the caller's whole budget). Under a second (a 50 ms drain
                    // before reusing a connection) it adds nothing a caller would notice, as
                    // the sub-second waits uncancellable-backoff leaves alone.
                    let fixed = ts
                        .iter()
                        .filter(|(_, t)| secs_of(&t.duration, &consts).is_some_and(|s| s >= 1.0));
                    for &(ti, t) in fixed {
                        found
                            .entry((ti, t.span.start))
                            .or_insert_with(|| AttemptFinding {
                                path: files[ti].path.clone(),
                                span: t.span,
                                duration: t.duration.clone(),
                                site: site.clone(),
                                through: Some((f.path.clone(), t.function.clone())),
                                secs: secs_of(&t.duration, &consts),
                            });
                    }
                }
                true
            });
        }
    }
    found.into_values().collect()
}

/// Functions that compare elapsed or remaining time: a site that calls one checks a deadline in
/// a helper (`if ctx.exhausted() { return Err(..) }`). Only direct calls count: followed further,
/// any logging of elapsed time deep in a request path would silence real findings.
fn timed_fns(files: &[&ClientSummary]) -> BTreeSet<String> {
    files
        .iter()
        .flat_map(|f| f.time_checks.iter().cloned())
        .collect()
}

/// Name -> the seeds that reach it, to a fixed point.
fn taint(files: &[&ClientSummary], names: &Names) -> HashMap<String, BTreeSet<Seed>> {
    // Resolve every flow's names once; the rounds then only look names up.
    let mut flows: Vec<(Vec<Seed>, Vec<String>, Vec<String>)> = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        for flow in &f.flows {
            if too_common(&flow.dest) {
                continue;
            }
            let mut seeds = Vec::new();
            let mut srcs = Vec::new();
            for s in &flow.srcs {
                match s {
                    Src::Seed(i) => seeds.push((fi, *i)),
                    Src::Name(n) if !too_common(n) => srcs.extend(names.resolve(n)),
                    Src::Name(_) => {}
                }
            }
            let dests = names.resolve(&flow.dest);
            if !dests.is_empty() && (!seeds.is_empty() || !srcs.is_empty()) {
                flows.push((seeds, srcs, dests));
            }
        }
    }
    let mut t: HashMap<String, BTreeSet<Seed>> = HashMap::new();
    for _ in 0..ROUNDS {
        let mut changed = false;
        for (seeds, srcs, dests) in &flows {
            let mut add: BTreeSet<Seed> = seeds.iter().copied().collect();
            for n in srcs {
                if let Some(ss) = t.get(n) {
                    add.extend(ss.iter().copied());
                }
            }
            if add.is_empty() {
                continue;
            }
            for dest in dests {
                let e = t.entry(dest.clone()).or_default();
                let before = e.len();
                e.extend(add.iter().copied());
                changed |= e.len() != before;
            }
        }
        if !changed {
            break;
        }
    }
    t
}

/// The seeds a site reaches: through what it reads, and what the crate functions it calls read.
fn reach(
    fi: usize,
    reads: &BTreeSet<Src>,
    taint: &HashMap<String, BTreeSet<Seed>>,
    bodies: &HashMap<&str, Vec<(usize, &Src)>>,
    names: &Names,
) -> BTreeMap<Seed, usize> {
    // Seed -> how many crate calls deep the site reaches it (0: the site reads it itself).
    let mut out: BTreeMap<Seed, usize> = BTreeMap::new();
    let mut frontier: Vec<(usize, &Src)> = reads.iter().map(|r| (fi, r)).collect();
    let mut seen_fns: BTreeSet<&str> = BTreeSet::new();
    for depth in 0..=CALL_DEPTH {
        let mut next = Vec::new();
        for (f, s) in frontier {
            match s {
                Src::Seed(i) => {
                    out.entry((f, *i)).or_insert(depth);
                }
                // A crate function's parameter holds what its callers pass, all of them: past
                // the site's own function only the arguments of this call path count, and the
                // site's reads already carry those (`client.merge(req)` linked by name to another
                // type's `merge(options)` must not taint every caller of that method).
                Src::Name(n) if depth > 0 && n.starts_with("param:") => {}
                Src::Name(n) => {
                    for n in names.resolve(n) {
                        if too_common(&n) {
                            continue;
                        }
                        for &seed in taint.get(&n).into_iter().flatten() {
                            out.entry(seed).or_insert(depth);
                        }
                        if let Some((k, b)) = bodies.get_key_value(n.as_str()) {
                            if seen_fns.insert(k) {
                                next.extend(b.iter().copied());
                            }
                        }
                    }
                }
            }
        }
        frontier = next;
    }
    out
}

/// Seconds of a duration expression written with literals or crate constants.
fn secs_of(text: &str, consts: &HashMap<&str, &str>) -> Option<f64> {
    secs_depth(text, consts, 0)
}

fn secs_depth(text: &str, consts: &HashMap<&str, &str>, depth: usize) -> Option<f64> {
    if depth > 4 {
        return None;
    }
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let t = t
        .trim_start_matches("Some(")
        .trim_end_matches(')')
        .to_string();
    let t = t.rsplit("Duration::").next().unwrap_or(&t).to_string();
    let t = t.trim_start_matches("Some(").to_string();
    let (unit, rest) = [
        ("from_secs_f64(", 1.0),
        ("from_secs_f32(", 1.0),
        ("from_secs(", 1.0),
        ("from_millis(", 1e-3),
        ("from_mins(", 60.0),
        ("new(", 1.0),
    ]
    .iter()
    .find_map(|(p, u)| t.strip_prefix(p).map(|r| (*u, r.to_string())))
    .unwrap_or((0.0, String::new()));
    if unit == 0.0 {
        // A constant of Duration type.
        let name = t.trim_start_matches("Self::").trim_start_matches("crate::");
        let name = name.rsplit("::").next().unwrap_or(name);
        if name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            && !name.is_empty()
        {
            return consts
                .get(name)
                .and_then(|v| secs_depth(v, consts, depth + 1));
        }
        return None;
    }
    let arg = rest.split([',', ')']).next().unwrap_or("");
    let arg = arg
        .trim_end_matches("u64")
        .trim_end_matches("_u64")
        .replace('_', "");
    let n = if let Ok(n) = arg.parse::<f64>() {
        n
    } else {
        let name = arg.rsplit("::").next().unwrap_or(&arg);
        let v = consts.get(name)?;
        let v: String = v
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        v.parse::<f64>().ok()?
    };
    Some(n * unit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::apis::Apis;
    use crate::base::source::SourceFile;

    /// The index of a crate made of `files` (path, text).
    fn index_of(files: &[(&str, &str)]) -> CrateIndex {
        let apis = Apis::builtin();
        let sums: Vec<ClientSummary> = files
            .iter()
            .map(|(path, text)| {
                let src = SourceFile::new(*path, *text);
                let ast = syn::parse_file(text).expect("the snippet parses");
                let facts = crate::analysis::analyze(&ast, &src, &apis);
                crate::analysis::clients::summarize(&ast, &src, &apis, &facts)
            })
            .collect();
        let refs: Vec<&ClientSummary> = sums.iter().collect();
        CrateIndex::build(&refs)
    }

    /// The lines of the client findings of a crate made of `files` (path, text): each timeout
    /// with the lines of the sites charged with it.
    fn client_findings(files: &[(&str, &str)]) -> Vec<String> {
        index_of(files)
            .clients
            .iter()
            .map(|f| {
                let sites: Vec<String> = f
                    .sites
                    .iter()
                    .map(|s| format!("{}:{}", s.path, s.site.line))
                    .collect();
                format!("{}:{} <- {}", f.path, f.timeout.line, sites.join(" "))
            })
            .collect()
    }

    #[test]
    fn a_built_library_client_does_not_link_by_name_to_a_crate_method() {
        // `client.get(url)` on a reqwest client is reqwest's `get`, not the cache's `get`: before,
        // the name joined them, the cache's expiry test read as a deadline checked in a helper,
        // and the retry was excused.
        let cache = "impl Cache {
    fn get(&self, key: &str) -> Option<&Entry> {
        let e = self.map.get(key)?;
        if e.stored.elapsed() > self.ttl {
            return None;
        }
        Some(e)
    }
}
";
        let fetch = r#"async fn fetch(url: &str) -> Result<(), Error> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()?;
    for attempt in 0..3 {
        match client.get(url).send().await {
            Ok(_) => return Ok(()),
            Err(e) => tracing::warn!("attempt {attempt}: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(Error::GaveUp)
}
"#;
        assert_eq!(
            client_findings(&[("cache.rs", cache), ("fetch.rs", fetch)]),
            ["fetch.rs:3 <- fetch.rs:5"]
        );
    }

    #[test]
    fn a_parameter_past_the_sites_function_holds_only_what_this_path_passes() {
        // `label` is handed a timed request by `once` and plain options by the retry loop: what
        // other callers pass into a helper's parameter is not what the loop sends (a generated
        // `client.merge(req)` linked by name to a `merge(options)` of another type charged
        // eventstore's `req.set_timeout(..)` to an unrelated discovery loop).
        let helpers = "fn new_request(opts: &Opts) -> tonic::Request<()> {
    let mut req = tonic::Request::new(());
    req.set_timeout(Duration::from_secs(10));
    req
}
fn label(opts: &Opts) {
    opts.describe();
}
async fn once(opts: &Opts) {
    let req = new_request(opts);
    label(&req);
}
";
        let poll = r#"async fn poll(c: &Client, o: &Opts) {
    loop {
        if c.get("y").send().await.is_ok() {
            return;
        }
        label(o);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
"#;
        assert_eq!(
            client_findings(&[("helpers.rs", helpers), ("poll.rs", poll)]),
            Vec::<String>::new()
        );
        // The site's own function's parameter is what its callers pass: still followed.
        let caller = "async fn start() {
    let req = new_request(&Opts::default());
    send_until_ok(req).await;
}
async fn send_until_ok(req: tonic::Request<()>) {
    loop {
        if grpc.call(req.clone()).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
";
        assert_eq!(
            client_findings(&[("helpers.rs", helpers), ("caller.rs", caller)]),
            ["helpers.rs:3 <- caller.rs:6"]
        );
    }

    #[test]
    fn a_retrying_middleware_retries_the_client_it_is_layered_on() {
        // reqwest-retry's canonical set-up: the inner client's 60 s bounds each attempt the
        // middleware makes. The near miss: the same middleware over a client with only a
        // connect timeout.
        let built = "use reqwest_retry::RetryTransientMiddleware;

pub fn timed(policy: ExponentialBackoff) -> Result<ClientWithMiddleware, Error> {
    let client = reqwest::ClientBuilder::new()
        .timeout(Duration::from_secs(60))
        .build()?;
    Ok(reqwest_middleware::ClientBuilder::new(client.clone())
        .with(RetryTransientMiddleware::new_with_policy(policy))
        .build())
}

pub fn connect_only(policy: ExponentialBackoff) -> Result<ClientWithMiddleware, Error> {
    let client = reqwest::ClientBuilder::new()
        .connect_timeout(Duration::from_secs(5))
        .build()?;
    Ok(reqwest_middleware::ClientBuilder::new(client)
        .with(RetryTransientMiddleware::new_with_policy(policy))
        .build())
}
";
        assert_eq!(
            client_findings(&[("client.rs", built)]),
            ["client.rs:5 <- client.rs:8"]
        );
    }

    /// The lines of the attempt-timer findings of a crate made of `files`: each timer with its
    /// site and, for a timer in a helper, the helper's name.
    fn attempt_findings(files: &[(&str, &str)]) -> Vec<String> {
        let line = |path: &str, at: usize| {
            let text = files.iter().find(|(p, _)| *p == path).map_or("", |f| f.1);
            SourceFile::new(path, text).position(at).line
        };
        index_of(files)
            .attempts
            .iter()
            .map(|a| {
                let (site_path, via) = a
                    .through
                    .clone()
                    .map_or((a.path.clone(), String::new()), |(p, f)| {
                        (p, format!(" via {f}"))
                    });
                format!(
                    "{}:{} <- {site_path}:{}{via}",
                    a.path,
                    line(&a.path, a.span.start),
                    a.site.line
                )
            })
            .collect()
    }

    /// A retry loop whose attempt calls a crate helper that wraps its request in a fixed timer
    /// restarts that timer on every attempt, two calls deep and across files (kubert's lease
    /// loop, `renew` -> `patch` -> `timeout(API_TIMEOUT, ..)`); `probe` too, though `health`
    /// also runs it under a deadline: this loop does not. The near misses: a helper handed its
    /// duration (a runtime's `timeout(d, f)` wrapper: the caller's choice), a configured
    /// duration (`self.timeout`: perhaps the caller's whole budget), a 50 ms drain (nothing a
    /// caller would notice), `health`'s timer, which no retry calls, and the same loop under an
    /// overall `timeout`.
    #[test]
    fn a_fixed_timer_in_a_helper_restarts_on_every_attempt() {
        let api = "use tokio::time;

const API_TIMEOUT: Duration = Duration::from_secs(10);

impl Lease {
    async fn patch(&self, p: &Patch) -> Result<Lease, Error> {
        time::timeout(API_TIMEOUT, self.api.patch(p)).await.map_err(|_| Error::Timeout)?
    }
    async fn renew(&self, p: &Patch) -> Result<Lease, Error> {
        self.patch(p).await
    }
    async fn fetch(&self) -> Result<Lease, Error> {
        time::timeout(self.timeout, self.api.get()).await.map_err(|_| Error::Timeout)?
    }
    async fn probe(&self) -> Result<Lease, Error> {
        time::timeout(Duration::from_secs(3), self.api.get()).await.map_err(|_| Error::Timeout)?
    }
    async fn drain(&self) {
        let _ = time::timeout(Duration::from_millis(50), self.api.drain()).await;
    }
    pub async fn health(&self) -> Result<Lease, Error> {
        time::timeout(Duration::from_secs(30), self.probe()).await.map_err(|_| Error::Timeout)?
    }
}

pub async fn with_timeout<F: Future>(d: Duration, f: F) -> Result<F::Output, Error> {
    time::timeout(d, f).await.map_err(|_| Error::Timeout)
}
";
        let lp = "use tokio::time;

impl Lease {
    pub async fn claim(&self, p: &Patch) -> Result<Lease, Error> {
        for attempt in 0..5 {
            match self.renew(p).await {
                Ok(l) => return Ok(l),
                Err(e) => tracing::warn!(\"attempt {attempt}: {e}\"),
            }
            let _ = self.fetch().await;
            let _ = self.probe().await;
            self.drain().await;
            let _ = with_timeout(Duration::from_secs(5), self.api.get()).await;
        }
        Err(Error::GaveUp)
    }

    pub async fn claim_within(&self, p: &Patch) -> Result<Lease, Error> {
        time::timeout(Duration::from_secs(60), async {
            for attempt in 0..5 {
                if let Ok(l) = self.renew(p).await {
                    return Ok(l);
                }
                tracing::warn!(\"attempt {attempt} failed\");
            }
            Err(Error::GaveUp)
        })
        .await
        .map_err(|_| Error::Timeout)?
    }
}
";
        assert_eq!(
            attempt_findings(&[("api.rs", api), ("claim.rs", lp)]),
            [
                "api.rs:7 <- claim.rs:5 via patch",
                "api.rs:16 <- claim.rs:5 via probe"
            ]
        );
    }

    #[test]
    fn durations_from_literals_and_constants() {
        let consts: HashMap<&str, &str> = [("T", "Duration :: from_secs (30)"), ("N", "10")].into();
        assert_eq!(secs_of("Duration::from_secs(5)", &consts), Some(5.0));
        assert_eq!(secs_of("Duration::from_millis(1500)", &consts), Some(1.5));
        assert_eq!(secs_of("T", &consts), Some(30.0));
        assert_eq!(secs_of("Duration::from_secs(N)", &consts), Some(10.0));
        assert_eq!(secs_of("Some(Duration::from_secs(2))", &consts), Some(2.0));
        assert_eq!(secs_of("self.timeout", &consts), None);
    }
}
