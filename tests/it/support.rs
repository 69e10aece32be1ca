//! Shared helpers: the only place the tests call the linter's API.

use std::path::{Path, PathBuf};

use timeoutlint::base::apis::Apis;
use timeoutlint::base::diagnostic::Diagnostic;
use timeoutlint::base::source::SourceFile;
use timeoutlint::emit::{self, Report};
use timeoutlint::lint::{lint_source, Config};
use timeoutlint::rules::{self, Rule};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A config running `rules` (every rule when empty), prefilter as given.
pub fn config(only: &[&'static Rule], prefilter: bool) -> Config {
    let rules = if only.is_empty() {
        rules::ALL.to_vec()
    } else {
        only.to_vec()
    };
    let mut c = Config::new(rules, Apis::builtin());
    c.prefilter = prefilter;
    c
}

/// Lint one text as `path` with `rules`.
pub fn lint_text(path: &str, text: &str, only: &[&'static Rule]) -> (SourceFile, Vec<Diagnostic>) {
    let src = SourceFile::new(path, text);
    let report = lint_source(&src, &config(only, true));
    assert!(report.error.is_none(), "{path}: {:?}", report.error);
    (src, report.diagnostics)
}

/// Lint one text as `path` (relative to the config file's directory) with every default rule
/// and the configuration `toml`, the way a run would.
pub fn lint_text_with_config(path: &str, text: &str, toml: &str) -> (SourceFile, Vec<Diagnostic>) {
    let dir = Path::new("/project");
    let found = timeoutlint::config::Found {
        path: dir.join("timeoutlint.toml"),
        config: timeoutlint::config::parse(toml).unwrap(),
    };
    let resolved = timeoutlint::config::resolve(
        Some(&found),
        &timeoutlint::config::CliSelection::default(),
        dir,
        &[PathBuf::from(path)],
    )
    .unwrap();
    let src = SourceFile::new(path, text);
    let report = lint_source(&src, &Config::from(&resolved));
    assert!(report.error.is_none(), "{path}: {:?}", report.error);
    (src, report.diagnostics)
}

/// Lint one text with `rule` alone and return its findings. A meta rule (`unused-suppression`)
/// judges the other rules' findings, so it runs with every rule and only its own findings are
/// kept: alone it could never see a suppression that silences something.
pub fn lint_rule(path: &str, text: &str, rule: &'static Rule) -> (SourceFile, Vec<Diagnostic>) {
    if rule.name != "unused-suppression" {
        return lint_text(path, text, &[rule]);
    }
    let (src, diags) = lint_text(path, text, &[]);
    let own = diags.into_iter().filter(|d| rule.is(d.rule)).collect();
    (src, own)
}

/// Lint a fixture directory as one crate (the cross-file index joins its files), with the
/// prefilter as given. Returns every `.rs` file under `dir` with its findings, sorted by path.
pub fn lint_crate(
    dir: &Path,
    only: &[&'static Rule],
    prefilter: bool,
) -> Vec<(SourceFile, Vec<Diagnostic>)> {
    let c = config(only, prefilter);
    let rel = dir.strip_prefix(root()).unwrap_or(dir).to_path_buf();
    let saved = std::env::current_dir().unwrap();
    assert_eq!(saved, root(), "integration tests run from the package root");
    let report = timeoutlint::driver::lint_paths(&[rel], &[], &c, 2);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let mut out: Vec<(SourceFile, Vec<Diagnostic>)> = report.files;
    let mut all = Vec::new();
    collect(dir, &mut all);
    for p in all {
        let shown = p
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if !out.iter().any(|(f, _)| f.path == shown) {
            let text = std::fs::read_to_string(&p).unwrap();
            out.push((SourceFile::new(shown, text), Vec::new()));
        }
    }
    out.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    out
}

/// The fixture directory of `rule`, when its fixture is a directory (linted as one crate).
pub fn fixture_dir(rule: &Rule) -> Option<PathBuf> {
    let d = root().join("fixtures").join(rule.name);
    d.is_dir().then_some(d)
}

/// The human rendering of several files' findings (no colour).
pub fn human_files(files: Vec<(SourceFile, Vec<Diagnostic>)>, rules: &[&'static Rule]) -> String {
    let n = files.len();
    let report = Report {
        files: files.into_iter().filter(|(_, d)| !d.is_empty()).collect(),
        errors: Vec::new(),
        files_checked: n,
        files_skipped: 0,
        rules: rules.to_vec(),
    };
    emit::human::render(&report, false)
}

/// The human rendering (no colour) of `diags`.
pub fn human(src: SourceFile, diags: Vec<Diagnostic>, rules: &[&'static Rule]) -> String {
    let report = Report {
        files: vec![(src, diags)],
        errors: Vec::new(),
        files_checked: 1,
        files_skipped: 0,
        rules: rules.to_vec(),
    };
    emit::human::render(&report, false)
}

/// The fixture of `rule`: `fixtures/<name>.rs` or every file under `fixtures/<name>/`.
pub fn fixture_files(rule: &Rule) -> Vec<PathBuf> {
    let base = root().join("fixtures");
    let file = base.join(format!("{}.rs", rule.name));
    if file.is_file() {
        return vec![file];
    }
    let mut out = Vec::new();
    collect(&base.join(rule.name), &mut out);
    out.sort();
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Lines (1-based) carrying `//~ <name>` markers.
pub fn marked_lines(text: &str, name: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            l.split("//~")
                .skip(1)
                .any(|m| m.split_whitespace().next() == Some(name))
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// The Rust code blocks under a `## heading` of a rule doc.
pub fn doc_blocks(doc: &str, heading: &str) -> Vec<String> {
    let marker = format!("## {heading}\n");
    let Some(start) = doc.find(&marker) else {
        return Vec::new();
    };
    let body = &doc[start + marker.len()..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find("```rust\n") {
        let after = &rest[i + 8..];
        let end = after.find("```").unwrap_or(after.len());
        out.push(after[..end].to_string());
        rest = &after[end..];
        rest = rest.get(3..).unwrap_or("");
    }
    out
}

/// One file through what a directory run does with it: the per-file pass (prefilter and
/// masking on, every rule), suppressions and configuration, then the human rendering of its
/// findings. Runs on a thread with the CLI workers' stack, as the CLI does. Returns the number
/// of findings, whether the file could be analysed, and the CPU time the worker thread spent
/// (where the platform tells it, see [`thread_cpu_time`]).
pub fn lint_as_cli(text: &str) -> (usize, bool, Option<std::time::Duration>) {
    let text = text.to_string();
    std::thread::Builder::new()
        .stack_size(timeoutlint::parse::WORKER_STACK)
        .spawn(move || {
            let before = thread_cpu_time();
            let c = config(&[], true);
            let src = SourceFile::new("src/big.rs", text);
            let mut r = timeoutlint::lint::lint_per_file(&src, &c);
            timeoutlint::lint::finish(&src, &c, &mut r.diagnostics, &r.test_code);
            let n = r.diagnostics.len();
            let ok = r.error.is_none();
            let _ = human(src, r.diagnostics, rules::ALL);
            let cpu = before
                .zip(thread_cpu_time())
                .map(|(a, b)| b.saturating_sub(a));
            (n, ok, cpu)
        })
        .expect("a worker thread starts")
        .join()
        .expect("no panic")
}

/// The CPU time the calling thread has run, from the platform's per-thread CPU clock
/// (`CLOCK_THREAD_CPUTIME_ID`, Windows' thread times, through `cpu-time`); `None` where there
/// is none. Unlike the wall clock, it does not grow while other processes hold the cores.
/// (Linux's `/proc/thread-self/schedstat` was used first, but some kernels only bring it up to
/// date at a context switch, so a run shorter than a time slice read as 0 ns.)
pub fn thread_cpu_time() -> Option<std::time::Duration> {
    cpu_time::ThreadTime::try_now()
        .ok()
        .map(|t| t.as_duration())
}

/// Write `text` to `rel` under `dir`, making its directories.
pub fn write_file(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// `(file name, line, rule)` of every finding of a directory run over `dir` with the default
/// rules, crate join included.
pub fn default_findings(dir: &Path) -> Vec<(String, usize, String)> {
    let defaults: Vec<&'static Rule> = rules::ALL
        .iter()
        .copied()
        .filter(|r| r.default_enabled)
        .collect();
    findings_with(dir, &config(&defaults, true))
}

/// `(file name, line, rule)` of every finding of a directory run over `dir` with `config`.
pub fn findings_with(dir: &Path, config: &Config) -> Vec<(String, usize, String)> {
    let report = timeoutlint::driver::lint_paths(&[PathBuf::from(dir)], &[], config, 2);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let mut out: Vec<(String, usize, String)> = report
        .findings()
        .map(|(f, d)| {
            let name = Path::new(&f.path)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (
                name,
                f.position(d.primary.start).line,
                d.rule.name.to_string(),
            )
        })
        .collect();
    out.sort();
    out
}
