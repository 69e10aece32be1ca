//! Every rule against its fixture: findings exactly on the `//~ <rule>` lines, and the human
//! rendering snapshotted in `tests/snapshots/<rule>.snap`.

use crate::support::{
    fixture_dir, fixture_files, human, human_files, lint_crate, lint_rule, marked_lines, root,
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
            let (src, diags) = lint_rule(&rel, &text, rule);
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
            let files = lint_crate(dir, &[rule], true);
            // A fix is made where the whole crate is known: show each fixed file after the
            // report, as for single-file fixtures.
            let fixed: Vec<(String, String)> = files
                .iter()
                .filter(|(_, d)| rule.fixable && d.iter().any(|d| d.fix.is_some()))
                .map(|(src, d)| (src.path.clone(), fixed_text(&src.text, d)))
                .collect();
            out = human_files(files, &[rule]);
            for (path, text) in fixed {
                out.push_str("\n----- ");
                out.push_str(&path);
                out.push_str(" with every fix of this rule applied -----\n");
                out.push_str(&text);
            }
        }
        for path in fixture_files(rule).into_iter().filter(|_| dir.is_none()) {
            let text = std::fs::read_to_string(&path).unwrap();
            let rel = path
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let (src, diags) = lint_rule(&rel, &text, rule);
            let fixed = rule.fixable.then(|| fixed_text(&text, &diags));
            out.push_str(&human(src, diags, &[rule]));
            if let Some(fixed) = fixed {
                out.push_str("\n----- ");
                out.push_str(&rel);
                out.push_str(" with every fix of this rule applied -----\n");
                out.push_str(&fixed);
            }
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

/// `text` with every fix in `diags` applied, placeholders included (one round).
fn fixed_text(text: &str, diags: &[timeoutlint::base::diagnostic::Diagnostic]) -> String {
    use timeoutlint::fix::{apply, select, Level};
    apply(text, &select(diags, Level::All))
}

/// Invariant 7: every fixture, fixed, parses again, and each applied fix clears its finding.
#[test]
fn fixes_parse_and_clear_their_findings() {
    use timeoutlint::fix::{parses, select, Level};
    let mut failures = Vec::new();
    for rule in ALL.iter().filter(|r| r.fixable) {
        let mut total = 0;
        for path in fixture_files(rule) {
            let text = std::fs::read_to_string(&path).unwrap();
            let (_, before) = lint_rule("f.rs", &text, rule);
            let applied = select(&before, Level::All).len();
            total += applied;
            let fixed = fixed_text(&text, &before);
            if !parses(&fixed) {
                failures.push(format!("{}: fixed text does not parse", path.display()));
                continue;
            }
            let (_, after) = lint_rule("f.rs", &fixed, rule);
            if after.len() != before.len() - applied {
                failures.push(format!(
                    "{} ({}): {} findings, {applied} fixed, {} left",
                    path.display(),
                    rule.name,
                    before.len(),
                    after.len()
                ));
            }
        }
        if total == 0 {
            failures.push(format!(
                "{}: fixable, but no fixture finding has a fix",
                rule.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn messages_are_lowercase_without_trailing_period() {
    for rule in ALL {
        for path in fixture_files(rule) {
            let text = std::fs::read_to_string(&path).unwrap();
            let (_, diags) = lint_rule("f.rs", &text, rule);
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
    use timeoutlint::base::source::SourceFile;
    use timeoutlint::lint::lint_source;
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

/// A backon builder chain can sit in a file with no retry word at all (backon's own tests): the
/// prefilter must still let it through, or `backoff-without-jitter` depends on other rules'
/// words (it did: such files were found only when a crate rule happened to parse them whole).
#[test]
fn prefilter_lets_a_bare_backon_builder_through() {
    use timeoutlint::base::source::SourceFile;
    use timeoutlint::lint::lint_source;
    let rule = timeoutlint::rules::by_name("backoff-without-jitter").unwrap();
    let text = "use backon::ConstantBuilder;\n\
                fn schedule() -> impl Iterator<Item = std::time::Duration> {\n    \
                    ConstantBuilder::default().build()\n}\n";
    let src = SourceFile::new("f.rs", text);
    let found = |prefilter| {
        lint_source(&src, &crate::support::config(&[rule], prefilter))
            .diagnostics
            .len()
    };
    assert_eq!(found(false), 1);
    assert_eq!(found(true), 1);
}

/// A directory run lints a file in two passes (the crate rules apart, then finished with the
/// crate's findings); for a file alone that must give what linting it alone gives, fixes and
/// suppressions included.
#[test]
fn a_directory_run_of_one_file_equals_linting_it_alone() {
    use timeoutlint::base::source::SourceFile;
    use timeoutlint::lint::lint_source;
    let config = crate::support::config(&[], true);
    for rule in ALL {
        if fixture_dir(rule).is_some() {
            continue;
        }
        for path in fixture_files(rule) {
            let rel = path.strip_prefix(crate::support::root()).unwrap();
            let shown = rel.to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(&path).unwrap();
            let alone = lint_source(&SourceFile::new(shown.clone(), text), &config).diagnostics;
            let run = timeoutlint::driver::lint_paths(&[rel.to_path_buf()], &[], &config, 2);
            assert!(run.errors.is_empty(), "{:?}", run.errors);
            let dir: Vec<_> = run.files.into_iter().flat_map(|(_, d)| d).collect();
            let show = |ds: &[timeoutlint::base::diagnostic::Diagnostic]| -> Vec<String> {
                ds.iter().map(|d| format!("{d:?}")).collect()
            };
            assert_eq!(show(&dir), show(&alone), "{shown}");
        }
    }
}
