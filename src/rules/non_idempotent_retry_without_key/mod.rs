//! `non-idempotent-retry-without-key`: a POST or PATCH re-sent by a retry without an
//! idempotency key that stays the same across attempts.
//!
//! Reports what [`crate::analysis::requests`] found, minus writes whose retries are gated on
//! the method or an idempotency flag, or happen only on provable non-delivery (connect errors,
//! 429), and minus writes whose idempotency header is set from a value made outside the site.
//! A key made inside the site gets its own message, pointed at the key. Deliberately absent:
//! gRPC (no method semantics) and protocol-level dedup that is not a header.
//!
//! Fixes, for writes built directly in a retry loop: a key made per attempt is hoisted above
//! the loop (machine-applicable only when that is provably a pure move); a write with no key
//! gets a key made once and an `Idempotency-Key` header, with a placeholder (the server must
//! deduplicate on that header, which the code cannot show). They are built in [`key_fix`].

mod key_fix;

use crate::analysis::requests::{Key, Via};
use crate::base::diagnostic::{Diagnostic, RuleInfo, Severity};
use crate::prefilter::{Trigger, Vocab};
use crate::rules::{Context, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "non-idempotent-retry-without-key",
        summary:
            "POST or PATCH retried without an idempotency key that is the same on every attempt",
        doc: include_str!("../../../rules/non-idempotent-retry-without-key.md"),
        default_enabled: true,
        default_severity: Severity::Warning,
        fixable: true,
    },
    // Every finding needs a retry site or a retrying middleware, whose words wake the prefilter.
    triggers: &[Trigger::vocab(Vocab::RetrySites), Trigger::word("Policy")],
    context: &[Trigger::vocab(Vocab::Requests)],
    kind: Kind::File(check),
};

const HELP: &str = "create the key once, before the first attempt, and send it on every attempt: `timeoutlint_retry`'s `policy.request(..).idempotency_key()` does, or retry only errors that prove the request was not delivered";

const POLICY_HELP: &str = "retry only idempotent methods on ambiguous failures (`req.method().is_idempotent()`), or requests that carry an idempotency key; `timeoutlint_retry`'s tower layer does both";

fn check(cx: &Context) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for w in &cx.facts.requests.writes {
        // Gated retries and a key made once are the correct patterns this rule looks for.
        if w.gated || w.key == Key::Outside {
            continue;
        }
        let mut d = match (w.key, &w.via) {
            (Key::PerAttempt(key), _) => Diagnostic::new(
                &RULE,
                key,
                "idempotency key is generated inside the retry site, so every attempt carries a new key",
            )
            .label("a new value per attempt defeats deduplication")
            .related(w.span, format!("the retried `{}`", w.method)),
            (_, Via::Policy) => Diagnostic::new(
                &RULE,
                w.span,
                "retry policy re-sends every method, POST and PATCH included, after a failure that may have reached the server",
            )
            .label("retried whatever the request's method")
            .help(POLICY_HELP),
            _ => Diagnostic::new(
                &RULE,
                w.span,
                format!("`{}` is retried without an idempotency key: a lost response becomes a duplicate write", w.method),
            )
            .label("re-sent on a retry"),
        };
        match &w.via {
            Via::Helper(call) => d = d.related(*call, "called from the retry site here"),
            Via::Caller(call) => {
                d = match &w.resender {
                    Some(name) => d.related(
                        *call,
                        format!("handed here to `{name}`, which sends it again on every attempt"),
                    ),
                    None => d.related(*call, "handed here to a function that retries it"),
                };
            }
            Via::Client(layer) => {
                d = d.related(*layer, "the client retries every request it sends");
            }
            Via::Site | Via::Policy => {}
        }
        // A resending wrapper's call is the retry site: the label above says so.
        let said =
            w.resender.is_some() && matches!(w.via, Via::Caller(call) if call.contains(w.retry));
        if !matches!(w.via, Via::Client(_)) && !said {
            d = d.related(w.retry, "retry site");
        }
        if let Some(at) = w.handed_in {
            d = d.related(at, format!("the `{}` is handed in here", w.method));
        }
        if w.via != Via::Policy {
            d = d.help(HELP);
        }
        if let Some(fix) = key_fix::fix(cx, w) {
            d = d.fix(fix);
        }
        out.push(d);
    }
    out
}
