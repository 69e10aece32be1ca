//! One finding per problem (RULES.md, "When two rules could fire on one line"): where two rules
//! could both report one sleep, only the owner does, and only while the owner is enabled.
//!
//! Every pair RULES.md names has a case here; each case is linted with every rule (the winner
//! alone reports the site) and again with the winner disabled (the loser then reports it, so the
//! problem is never reported by neither).

use crate::support::lint_text;
use timeoutlint::base::diagnostic::Diagnostic;
use timeoutlint::base::source::SourceFile;
use timeoutlint::precedence::TABLE;
use timeoutlint::rules::{by_name, Rule, ALL};

/// RULES.md: "`blocking-sleep-in-async` wins over `uncancellable-backoff` on a
/// `std::thread::sleep` in async code; `retry-after-uncapped` wins over `uncancellable-backoff`
/// on a Retry-After wait. Every other pair may fire together."
const RULES_MD_PAIRS: &[(&str, &str)] = &[
    ("blocking-sleep-in-async", "uncancellable-backoff"),
    ("retry-after-uncapped", "uncancellable-backoff"),
];

/// One case per pair: a text where both rules find the line marked `// SITE`.
fn case(winner: &str, loser: &str) -> &'static str {
    match (winner, loser) {
        ("blocking-sleep-in-async", "uncancellable-backoff") => {
            "use tokio_util::sync::CancellationToken;\n\
             \n\
             async fn fetch(client: &Client, token: CancellationToken) -> Result<Body, Error> {\n\
             \x20   let mut attempt = 0;\n\
             \x20   loop {\n\
             \x20       match client.get(URL).send().await {\n\
             \x20           Ok(resp) => return Ok(resp.body()),\n\
             \x20           Err(e) if attempt < 3 => {\n\
             \x20               attempt += 1;\n\
             \x20               std::thread::sleep(std::time::Duration::from_secs(1 << attempt)); // SITE\n\
             \x20           }\n\
             \x20           Err(e) => return Err(e),\n\
             \x20       }\n\
             \x20   }\n\
             }\n"
        }
        ("retry-after-uncapped", "uncancellable-backoff") => {
            "use tokio_util::sync::CancellationToken;\n\
             use reqwest::header::RETRY_AFTER;\n\
             \n\
             async fn fetch(client: &Client, token: CancellationToken) -> Result<String, Error> {\n\
             \x20   for _attempt in 0..3 {\n\
             \x20       let resp = client.get(\"/report\").send().await?;\n\
             \x20       if resp.status() != 429 {\n\
             \x20           return resp.text().await;\n\
             \x20       }\n\
             \x20       let secs: u64 = resp.headers()[RETRY_AFTER].to_str()?.parse()?;\n\
             \x20       tokio::time::sleep(Duration::from_secs(secs)).await; // SITE\n\
             \x20       continue;\n\
             \x20   }\n\
             \x20   Err(Error::Exhausted)\n\
             }\n"
        }
        _ => panic!("no precedence case for {winner} over {loser}: add one"),
    }
}

fn rule(name: &str) -> &'static Rule {
    by_name(name).unwrap_or_else(|| panic!("no rule {name}"))
}

/// The rules reporting on line `line` (1-based), the sleep's, or on a related span there.
fn at_line(src: &SourceFile, diags: &[Diagnostic], line: usize) -> Vec<&'static str> {
    let mut names: Vec<&str> = diags
        .iter()
        .filter(|d| {
            src.position(d.primary.start).line == line
                || d.related
                    .iter()
                    .any(|r| src.position(r.span.start).line == line)
        })
        .map(|d| d.rule.name)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

#[test]
fn the_table_is_exactly_the_pairs_of_rules_md() {
    let table: Vec<(&str, &str)> = TABLE
        .iter()
        .map(|p| (p.winner.name, p.loser.name))
        .collect();
    assert_eq!(table, RULES_MD_PAIRS);
}

#[test]
fn each_winner_owns_its_site_and_its_loser_reports_it_when_the_winner_is_disabled() {
    for &(winner, loser) in RULES_MD_PAIRS {
        let text = case(winner, loser);
        let line = text.lines().position(|l| l.ends_with("// SITE")).unwrap() + 1;
        let (w, l) = (rule(winner), rule(loser));

        // Both rules on, alone: each finds the site by itself (the case really is a pair).
        for r in [w, l] {
            let (src, diags) = lint_text("f.rs", text, &[r]);
            assert!(
                at_line(&src, &diags, line).contains(&r.name),
                "{} alone does not find the site of {winner} over {loser}",
                r.name
            );
        }

        // Every rule on: the winner reports the site, the loser does not.
        let (src, diags) = lint_text("f.rs", text, ALL);
        let names = at_line(&src, &diags, line);
        assert!(names.contains(&winner), "{winner} missing: {names:?}");
        assert!(
            !names.contains(&loser),
            "{loser} kept beside {winner}: {names:?}"
        );

        // Every rule but the winner: the loser reports it, and nothing else changed.
        let without: Vec<&'static Rule> =
            ALL.iter().copied().filter(|r| r.name != winner).collect();
        let (src, rest) = lint_text("f.rs", text, &without);
        let names = at_line(&src, &rest, line);
        assert!(
            names.contains(&loser),
            "with {winner} disabled, {loser} is lost: {names:?}"
        );
        let others = |ds: &[Diagnostic]| -> Vec<(usize, &str)> {
            ds.iter()
                .filter(|d| d.rule.name != winner && d.rule.name != loser)
                .map(|d| (d.primary.start, d.rule.name))
                .collect()
        };
        assert_eq!(
            others(&diags),
            others(&rest),
            "{winner} disabled changed other rules"
        );
    }
}

#[test]
fn a_winner_ignored_for_the_file_by_configuration_does_not_take_the_loser_with_it() {
    let text = case("retry-after-uncapped", "uncancellable-backoff");
    let line = text.lines().position(|l| l.ends_with("// SITE")).unwrap() + 1;
    let toml = "[per-file-ignores]\n\"f.rs\" = [\"retry-after-uncapped\"]\n";
    let (src, diags) = crate::support::lint_text_with_config("f.rs", text, toml);
    assert_eq!(at_line(&src, &diags, line), ["uncancellable-backoff"]);
}

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
    assert_eq!(
        on_sleep,
        ["retry-after-uncapped"],
        "sleep reported by {on_sleep:?}"
    );
    let uncancellable = by_name("uncancellable-backoff").unwrap();
    assert!(
        diags.iter().all(|d| !uncancellable.is(d.rule)),
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
