//! One finding per problem (RULES.md, "When two rules could fire on one line"): where two rules
//! could both report one sleep, only the owner does.

use crate::support::lint_text;
use timeoutlint::rules::{by_name, ALL};

#[test]
fn retry_after_wins_over_uncancellable_backoff_on_one_sleep() {
    // A Retry-After wait at a retry site with a cancellation token in scope: both rules could
    // claim the sleep; `retry-after-uncapped` owns it.
    let text =
        std::fs::read_to_string(crate::support::root().join("fixtures/retry-after-uncapped.rs"))
            .unwrap();
    let (src, diags) = lint_text("f.rs", &text, ALL);
    let token_sleep = text
        .lines()
        .position(|l| l.contains("let secs: u64 = resp.headers()[RETRY_AFTER]"))
        .unwrap()
        + 2;
    let on_sleep: Vec<&str> = diags
        .iter()
        .filter(|d| src.position(d.primary.start).line == token_sleep)
        .map(|d| d.rule.name)
        .collect();
    // RULES.md puts the Retry-After finding at the sleep, so the owner is the only one there.
    assert_eq!(on_sleep, ["retry-after-uncapped"], "sleep reported by {on_sleep:?}");
    let uncancellable = by_name("uncancellable-backoff").unwrap();
    assert!(
        diags.iter().all(|d| !std::ptr::eq(d.rule, uncancellable)),
        "uncancellable-backoff fired on a Retry-After wait"
    );
    // The same sleep with a fixed delay instead of the server's is an uncancellable backoff:
    // the precedence is what keeps the Retry-After wait to one finding, not a blind spot.
    let constant_delay = text.replace("resp.headers()[RETRY_AFTER].to_str()?.parse()?", "5");
    // Default rules only: the pedantic `backoff-without-jitter` may also fire on a constant
    // delay, which is a different problem.
    let defaults: Vec<_> = ALL.iter().copied().filter(|r| r.default_enabled).collect();
    let (src, alone) = lint_text("f.rs", &constant_delay, &defaults);
    let reported: Vec<&str> = alone
        .iter()
        .filter(|d| src.position(d.primary.start).line == token_sleep)
        .map(|d| d.rule.name)
        .collect();
    assert_eq!(reported, ["uncancellable-backoff"]);
}
