//! `body-reused-across-attempts`: a single-use request body sent again by a retry site.
//!
//! Reports what [`crate::analysis::requests`] found: a reader, file, cursor or stream created
//! once and sent on every attempt; `File::try_clone` inside the site (a new handle on the same
//! cursor); a request or body `try_clone()` whose `None` is unwrapped (a panic on a streaming
//! body) or replaced by an empty body. Deliberately absent: owned bytes (`Bytes`, `Vec<u8>`,
//! `String`, `.json(&x)`), which replay fine, and anything rebuilt or rewound per attempt.

use crate::analysis::requests::ReplayKind;
use crate::base::diagnostic::{Diagnostic, RuleInfo, Severity};
use crate::prefilter::{Trigger, Vocab};
use crate::rules::{Context, Kind, Rule};

pub(crate) static RULE: Rule = Rule {
    info: RuleInfo {
        name: "body-reused-across-attempts",
        summary: "request body that the first attempt consumes is sent again by the retry",
        doc: include_str!("../../../rules/body-reused-across-attempts.md"),
        default_enabled: true,
        default_severity: Severity::Warning,
        fixable: false,
    },
    // Every finding needs a retry site, whose words already wake the prefilter.
    triggers: &[Trigger::vocab(Vocab::RetrySites), Trigger::word("Policy")],
    context: &[Trigger::vocab(Vocab::Requests)],
    kind: Kind::File(check),
};

const CLONE_HELP: &str = "treat `None` as \"cannot retry\" (send once, or return `timeoutlint_retry::RetryError::NotReplayable`), or rebuild the body from its source per attempt with `timeoutlint_retry`'s body factory";
const HELP: &str = "build the body inside the attempt (reopen the file, re-slice the bytes), e.g. with `timeoutlint_retry`'s body factory: `policy.request(|attempt| client.put(url).body(load(&path)))`";

fn check(cx: &Context) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for r in &cx.facts.requests.replays {
        let (message, label) = match r.kind {
            ReplayKind::SharedReader => (
                format!("`{}` is read by the first attempt and sent again, empty or truncated, by the next", r.name),
                "consumed by the first attempt",
            ),
            ReplayKind::SharedCursor => (
                format!("`{}.try_clone()` shares the file cursor, so the next attempt sends only what the first left unread", r.name),
                "same cursor as the original",
            ),
            ReplayKind::CloneUnwrapped => (
                "`try_clone()` returns `None` for a streaming body, so the retry panics instead of re-sending".to_string(),
                "panics when the body is a stream",
            ),
            ReplayKind::CloneEmptied => (
                "`try_clone()` falls back to an empty body, so a streaming request is retried without its body".to_string(),
                "`None` means a stream, not an empty body",
            ),
        };
        let mut d = Diagnostic::new(&RULE, r.span, message).label(label);
        if let Some(origin) = r.origin {
            d = d.related(origin, "created once, outside the retry site");
        }
        d = d.related(r.retry, "retry site");
        let help = match r.kind {
            ReplayKind::CloneUnwrapped | ReplayKind::CloneEmptied => CLONE_HELP,
            ReplayKind::SharedReader | ReplayKind::SharedCursor => HELP,
        };
        out.push(d.help(help));
    }
    out
}
