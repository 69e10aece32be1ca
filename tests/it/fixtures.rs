//! Every rule against its fixture: findings exactly on the `//~ <rule>` lines, and the human
//! rendering snapshotted in `tests/snapshots/<rule>.snap`.

use crate::support::{
    fixture_dir, fixture_files, human, human_files, lint_crate, lint_text, marked_lines, root,
};
use timeoutlint::rules::ALL;

#[test]
fn fixtures_fire_exactly_on_marked_lines() {
    let mut failures = Vec::new();
    for rule in ALL {
        if let Some(dir) = fixture_dir(rule) {
            // A directory is one crate: its files are linted together.
            for (src, diags) in lint_crate(&dir, &[rule], true) {
                let got: Vec<usize> = diags
                    .iter()
                    .map(|d| src.position(d.primary.start).line)
                    .collect();
                let want = marked_lines(&src.text, rule.name);
                if got != want {
                    failures.push(format!(
                        "{} ({}): fired on {got:?}, marked {want:?}",
                        src.path, rule.name
                    ));
                }
            }
            continue;
        }
        for path in fixture_files(rule) {
            let text = std::fs::read_to_string(&path).unwrap();
            let rel = path
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let (src, diags) = lint_text(&rel, &text, &[rule]);
            let got: Vec<usize> = diags
                .iter()
                .map(|d| src.position(d.primary.start).line)
                .collect();
            let want = marked_lines(&text, rule.name);
            if got != want {
                failures.push(format!(
                    "{rel} ({}): fired on {got:?}, marked {want:?}",
                    rule.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn fixture_snapshots() {
    for rule in ALL {
        let mut out = String::new();
        let dir = fixture_dir(rule);
        if let Some(dir) = &dir {
            out = human_files(lint_crate(dir, &[rule], true), &[rule]);
        }
        for path in fixture_files(rule).into_iter().filter(|_| dir.is_none()) {
            let text = std::fs::read_to_string(&path).unwrap();
            let rel = path
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let (src, diags) = lint_text(&rel, &text, &[rule]);
            out.push_str(&human(src, diags, &[rule]));
        }
        insta::with_settings!({
            snapshot_path => "../snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(rule.name, out);
        });
    }
}

#[test]
fn messages_are_lowercase_without_trailing_period() {
    for rule in ALL {
        for path in fixture_files(rule) {
            let text = std::fs::read_to_string(&path).unwrap();
            let (_, diags) = lint_text("f.rs", &text, &[rule]);
            for d in diags {
                let first = d.message.chars().next().unwrap();
                assert!(!first.is_uppercase(), "{}: {}", rule.name, d.message);
                assert!(!d.message.ends_with('.'), "{}: {}", rule.name, d.message);
            }
        }
    }
}

#[test]
fn prefilter_never_changes_findings_on_fixtures() {
    use timeoutlint::lint::lint_source;
    use timeoutlint::source::SourceFile;
    let on = crate::support::config(&[], true);
    let off = crate::support::config(&[], false);
    for rule in ALL {
        if let Some(dir) = fixture_dir(rule) {
            let render = |p| {
                lint_crate(&dir, &[], p)
                    .iter()
                    .flat_map(|(f, ds)| {
                        ds.iter()
                            .map(move |d| format!("{} {:?} {}", f.path, d.primary, d.rule.name))
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(render(true), render(false), "{}", dir.display());
        }
        for path in fixture_files(rule) {
            let text = std::fs::read_to_string(&path).unwrap();
            let src = SourceFile::new("f.rs", text);
            let a: Vec<String> = lint_source(&src, &on)
                .diagnostics
                .iter()
                .map(|d| format!("{:?} {}", d.primary, d.rule.name))
                .collect();
            let b: Vec<String> = lint_source(&src, &off)
                .diagnostics
                .iter()
                .map(|d| format!("{:?} {}", d.primary, d.rule.name))
                .collect();
            assert_eq!(a, b, "{}", path.display());
        }
    }
}
