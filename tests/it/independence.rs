//! Rules are independent: with any one rule disabled, every other rule's findings over the
//! fixtures are unchanged. Two exceptions are declared: a finding the precedence table drops
//! because the disabled rule owned its site comes back (the problem is then reported by the
//! loser instead of by neither), and a meta rule's verdict on the disabled rule goes (a
//! suppression naming a rule that does not run is not judged unused).

use timeoutlint::base::diagnostic::Diagnostic;
use timeoutlint::precedence::{Site, TABLE};
use timeoutlint::rules::{self, Kind, Rule, ALL};

use crate::support::{fixture_dir, fixture_files, lint_crate, lint_text, root};

/// Every fixture's findings with `rules`: `(path, finding)` in output order. A directory
/// fixture is linted as one crate, a file alone.
fn findings(rules: &[&'static Rule]) -> Vec<(String, Diagnostic)> {
    let mut out = Vec::new();
    for fixture in ALL {
        if let Some(dir) = fixture_dir(fixture) {
            for (src, diags) in lint_crate(&dir, rules, true) {
                out.extend(diags.into_iter().map(|d| (src.path.clone(), d)));
            }
            continue;
        }
        for path in fixture_files(fixture) {
            let text = std::fs::read_to_string(&path).unwrap();
            let shown = path.strip_prefix(root()).unwrap().display().to_string();
            let (_, diags) = lint_text(&shown, &text, rules);
            out.extend(diags.into_iter().map(|d| (shown.clone(), d)));
        }
    }
    out
}

fn key((path, d): &(String, Diagnostic)) -> String {
    format!("{path}: {d:?}")
}

/// Did an enabled `winner`'s finding in `all` own the site of `d` (by the table)?
fn owned_by(winner: &Rule, d: &(String, Diagnostic), all: &[(String, Diagnostic)]) -> bool {
    TABLE.iter().any(|p| {
        std::ptr::eq(p.winner, winner)
            && p.loser.is(d.1.rule)
            && all.iter().any(|(path, w)| {
                path == &d.0
                    && winner.is(w.rule)
                    && match p.site {
                        Site::Primary => w.primary == d.1.primary,
                        Site::PrimaryAndRelated => {
                            w.primary == d.1.primary
                                || w.related.iter().any(|r| r.span == d.1.primary)
                        }
                    }
            })
    })
}

#[test]
fn disabling_one_rule_leaves_every_other_rules_findings_alone() {
    let all = findings(ALL);
    assert!(!all.is_empty());
    for &off in ALL {
        let rest: Vec<&'static Rule> = ALL
            .iter()
            .copied()
            .filter(|r| !std::ptr::eq(*r, off))
            .collect();
        let without = findings(&rest);
        assert!(
            without.iter().all(|d| !off.is(d.1.rule)),
            "{} reported while disabled",
            off.name
        );
        let expected: Vec<String> = all.iter().filter(|d| !off.is(d.1.rule)).map(key).collect();
        let got: Vec<String> = without.iter().map(key).collect();
        let judged = |d: &(String, Diagnostic)| {
            // A finding knows its rule's description; its kind is the registry's.
            rules::by_name(d.1.rule.name).is_some_and(|r| matches!(r.kind, Kind::Meta(_)))
                && d.1.message.contains(&format!("`{}`", off.name))
        };
        let lost: Vec<String> = all
            .iter()
            .filter(|d| !off.is(d.1.rule) && !judged(d))
            .map(key)
            .filter(|k| !got.contains(k))
            .collect();
        assert!(lost.is_empty(), "disabling {} lost {lost:#?}", off.name);
        let gained: Vec<String> = without
            .iter()
            .filter(|d| !expected.contains(&key(d)) && !owned_by(off, d, &all))
            .map(key)
            .collect();
        assert!(
            gained.is_empty(),
            "disabling {} added {gained:#?}",
            off.name
        );
    }
}
