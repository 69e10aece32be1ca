//! The rule catalogue is complete and consistent: every registered rule has its doc, fixture and
//! snapshot; nothing is orphaned; docs follow the skeleton; `Example` fires exactly once and
//! `Use instead` never.

use std::collections::BTreeSet;

use crate::support::{doc_blocks, fixture_files, lint_rule, root};
use timeoutlint::rules::ALL;

fn names(dir: &str, suffix: &str) -> BTreeSet<String> {
    std::fs::read_dir(root().join(dir))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            if e.path().is_dir() {
                return Some(n);
            }
            n.strip_suffix(suffix).map(str::to_string)
        })
        .collect()
}

#[test]
fn every_rule_has_doc_fixture_and_snapshot_and_nothing_is_orphaned() {
    let registered: BTreeSet<String> = ALL.iter().map(|r| r.name.to_string()).collect();
    for r in ALL {
        assert!(!fixture_files(r).is_empty(), "{}: no fixture", r.name);
        assert!(
            root()
                .join(format!("tests/snapshots/{}.snap", r.name))
                .is_file(),
            "{}: no snapshot",
            r.name
        );
    }
    let docs = names("rules", ".md");
    assert_eq!(docs, registered, "rules/*.md vs registry");
    let fixtures = names("fixtures", ".rs");
    assert_eq!(fixtures, registered, "fixtures vs registry");
    let snaps: BTreeSet<String> = names("tests/snapshots", ".snap")
        .into_iter()
        .filter(|n| registered.contains(n) || !n.contains("__"))
        .collect();
    assert_eq!(snaps, registered, "tests/snapshots vs registry");
}

#[test]
fn docs_follow_the_skeleton() {
    for r in ALL {
        let mut want = vec![
            format!("# {}", r.name),
            "## What it does".to_string(),
            "## Why is this bad?".to_string(),
            "## Example".to_string(),
            "## Use instead".to_string(),
        ];
        if r.fixable {
            want.push("## Fix safety".to_string());
        }
        want.push("## Known problems".to_string());
        want.push("## References".to_string());
        let got: Vec<String> = r
            .doc
            .lines()
            .filter(|l| l.starts_with("# ") || l.starts_with("## "))
            .map(str::to_string)
            .collect();
        assert_eq!(got, want, "{}: headings", r.name);
    }
}

#[test]
fn example_fires_once_and_use_instead_never() {
    for r in ALL {
        let examples = doc_blocks(r.doc, "Example");
        assert!(!examples.is_empty(), "{}: no Example block", r.name);
        for code in examples {
            let (_, d) = lint_rule("example.rs", &code, r);
            assert_eq!(d.len(), 1, "{}: Example fires {} times", r.name, d.len());
        }
        let fixed = doc_blocks(r.doc, "Use instead");
        assert!(!fixed.is_empty(), "{}: no Use instead block", r.name);
        for code in fixed {
            let (_, d) = lint_rule("use_instead.rs", &code, r);
            assert!(
                d.is_empty(),
                "{}: Use instead fires: {:?}",
                r.name,
                d.iter().map(|d| &d.message).collect::<Vec<_>>()
            );
        }
    }
}
