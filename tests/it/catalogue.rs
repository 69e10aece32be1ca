//! The rule catalogue is complete and consistent: every registered rule has its folder, doc,
//! fixture and snapshot; nothing is orphaned; docs follow the skeleton; `Example` fires exactly
//! once and `Use instead` never; the rules table says what `--fix` does with each rule and the
//! README shows that table.

use std::collections::BTreeSet;

use crate::support::{doc_blocks, fixture_dir, fixture_files, lint_crate, lint_rule, root};
use timeoutlint::base::diagnostic::Applicability;
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

/// A rule is a folder, `src/rules/<snake>/mod.rs`, with what only it needs beside it; the only
/// file directly in `src/rules/` is the registry, so a rule written as a flat file fails here.
#[test]
fn every_rule_is_a_folder_and_src_rules_holds_only_the_registry() {
    let dir = root().join("src/rules");
    let snakes: BTreeSet<String> = ALL.iter().map(|r| r.name.replace('-', "_")).collect();
    for snake in &snakes {
        assert!(
            dir.join(snake).join("mod.rs").is_file(),
            "{snake}: no src/rules/{snake}/mod.rs"
        );
    }
    let mut folders = BTreeSet::new();
    let mut files = BTreeSet::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().to_string();
        if e.path().is_dir() {
            folders.insert(n);
        } else {
            files.insert(n);
        }
    }
    assert_eq!(folders, snakes, "src/rules/*/ vs registry");
    assert_eq!(
        files,
        BTreeSet::from(["mod.rs".to_string()]),
        "src/rules/ holds the registry and the rules' folders only"
    );
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

/// The `fix` column of `timeoutlint rules` says what `--fix` does with the rule's fixes: the best
/// applicability its fixtures reach (they hold every shape a rule fixes). `unbounded-retry`
/// once said "yes" for a fix that only ever carries a placeholder.
#[test]
fn the_fix_column_says_what_fix_applies() {
    let table = timeoutlint::edge::cli::rules_table();
    for r in ALL {
        let diags: Vec<_> = if let Some(dir) = fixture_dir(r) {
            lint_crate(&dir, &[r], true)
                .into_iter()
                .flat_map(|(_, d)| d)
                .collect()
        } else {
            let path = &fixture_files(r)[0];
            let rel = path.strip_prefix(root()).unwrap().to_string_lossy();
            lint_rule(&rel, &std::fs::read_to_string(path).unwrap(), r).1
        };
        let best = diags
            .iter()
            .filter_map(|d| d.fix.as_ref().map(|f| f.applicability))
            .min();
        let want = match best {
            Some(Applicability::MachineApplicable) => "yes",
            Some(Applicability::MaybeIncorrect) => "unsafe",
            Some(Applicability::HasPlaceholders) => "placeholder",
            Some(Applicability::Unspecified) | None => "no",
        };
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("| `{}` |", r.name)))
            .unwrap_or_else(|| panic!("{}: not in the table", r.name));
        let column = row.split(" | ").nth(2).unwrap();
        assert_eq!(column, want, "{}: fix column, best fix {best:?}", r.name);
    }
}

/// The README's rules table is the one `timeoutlint rules` prints.
#[test]
fn readme_shows_the_rules_table() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let table = timeoutlint::edge::cli::rules_table();
    assert!(
        readme.contains(&table),
        "README.md's rules table differs from `timeoutlint rules`:\n{table}"
    );
}
