//! The fuzz target: arbitrary bytes as the content of one Rust file, through everything the
//! CLI does with a file, so that "no input panics the linter" (`src/lib.rs`, invariant 2) is
//! tested on inputs nobody thought to write.
//!
//! One input goes through: the UTF-8 check of `walk` (its per-file error is a normal outcome),
//! the prefilter and item masking, parsing behind the nesting guard, analysis, every rule
//! (pedantic ones included), suppressions, every emitter, the baseline, and the fix engine.
//! Work runs on a thread with the CLI workers' stack, because the nesting guard is sized for
//! that stack, not for libFuzzer's main thread.
//!
//! Checked beyond "does not panic" (libfuzzer-sys aborts on any panic, so even one that
//! `lint_source` would catch and report is a crash here):
//! - prefilter exactness (invariant 4): a file that parses whole has the same findings with the
//!   prefilter and masking as without, both as a file alone (`lint_source`) and as one file of
//!   a directory run (`lint_per_file`, the CLI's path, which masks files the alone path parses
//!   whole). A file syn rejects as a whole is the documented exclusion: masking may blank out
//!   the item it rejects;
//! - masking never makes a file that parses unparsable, whatever items it keeps: the masked
//!   text of the CLI's words and of pseudo-random choices of items ([`mask::Sample`]) parses;
//! - the JSON formats are valid JSON;
//! - a baseline made from the findings hides all of them and leaves nothing stale;
//! - fixes up to `--unsafe-fixes` of a file that parses leave a file that parses (no round is
//!   rolled back).

#![no_main]

use std::collections::BTreeMap;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use timeoutlint::base::apis::Apis;
use timeoutlint::base::diagnostic::{Applicability, Diagnostic, FileError};
use timeoutlint::base::source::SourceFile;
use timeoutlint::edge::baseline;
use timeoutlint::emit::{self, CrateTarget, Report};
use timeoutlint::fix::{self, Level};
use timeoutlint::lint::{lint_per_file, lint_source, Config, FileReport};
use timeoutlint::parse::{self, WORKER_STACK};
use timeoutlint::prefilter::mask;
use timeoutlint::rules;
use timeoutlint::walk;

/// The display path of the fuzzed file: under `src/` like most real files.
const PATH: &str = "src/fuzzed.rs";

/// Built once: the automata of the prefilter are the costly part of a `Config`.
struct Setup {
    /// The CLI's default: prefilter and masking on.
    filtered: Config,
    /// `--no-prefilter`: every file parsed whole.
    whole: Config,
    /// A cargo target for the fuzzed file, so cargo-JSON renders its full envelope.
    crates: BTreeMap<String, CrateTarget>,
    /// The CLI's default rules: the masking real runs do.
    default_config: Config,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let every_rule = || Config::new(rules::ALL.to_vec(), Apis::builtin());
        let mut whole = every_rule();
        whole.prefilter = false;
        let target = CrateTarget {
            package_id: "path+file:///fuzz#0.1.0".into(),
            manifest_path: "/fuzz/Cargo.toml".into(),
            kind: "lib".into(),
            crate_type: "lib".into(),
            name: "fuzz".into(),
            src_path: "/fuzz/src/lib.rs".into(),
            edition: "2021".into(),
        };
        let defaults: Vec<_> = rules::ALL
            .iter()
            .copied()
            .filter(|r| r.default_enabled)
            .collect();
        let s = Setup {
            filtered: every_rule(),
            whole,
            crates: BTreeMap::from([(PATH.to_string(), target)]),
            default_config: Config::new(defaults, Apis::builtin()),
        };
        let mut every = report(None, Vec::new());
        every.rules = rules::ALL.to_vec();
        emit_all(&every, &s);
        s
    })
}

fuzz_target!(|data: &[u8]| {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(WORKER_STACK)
            .spawn_scoped(scope, || one_file(data))
            .expect("a worker thread starts")
            .join()
            .expect("no panic");
    });
});

fn one_file(data: &[u8]) {
    let s = setup();
    let text = match walk::decode(data.to_vec()) {
        Ok(text) => text,
        Err(message) => {
            let error = FileError {
                path: PATH.into(),
                line: None,
                column: None,
                message,
            };
            emit_all(&report(None, vec![error]), s);
            return;
        }
    };
    let src = SourceFile::new(PATH, text);
    let filtered = lint_source(&src, &s.filtered);
    let whole = lint_source(&src, &s.whole);
    for r in [&filtered, &whole] {
        if let Some(e) = &r.error {
            assert!(
                !e.message.starts_with("internal error"),
                "a caught panic: {e:?}"
            );
        }
    }
    if whole.error.is_none() {
        assert_exact(&filtered, &whole);
        assert_exact(
            &lint_per_file(&src, &s.filtered),
            &lint_per_file(&src, &s.whole),
        );
        check_masks_parse(&src, s);
    }
    // What the user sees: the default run's report; the whole parse's too when it differs.
    let shown = report_of(&src, filtered);
    emit_all(&shown, s);
    check_baseline(&src, &shown);
    let parses_whole = whole.error.is_none();
    if !parses_whole {
        emit_all(&report_of(&src, whole), s);
    }
    if let Some((_, diags)) = shown.files.first() {
        check_fixes(&src, diags, &s.filtered, parses_whole);
    }
}

/// Prefilter and masking skip work, never findings.
fn assert_exact(filtered: &FileReport, whole: &FileReport) {
    assert!(
        filtered.error.is_none(),
        "the file parses whole but not masked: {:?}",
        filtered.error
    );
    let show = |r: &FileReport| -> Vec<String> {
        r.diagnostics.iter().map(|d| format!("{d:?}")).collect()
    };
    assert_eq!(
        show(filtered),
        show(whole),
        "findings differ with the prefilter (left) and without (right)"
    );
}

/// Masking blanks whole items, so a file that parses must parse masked whatever the items
/// kept: the words of real runs keep few, pseudo-random choices try the rest.
fn check_masks_parse(src: &SourceFile, s: &Setup) {
    let check = |what: &str, masked: Option<String>| {
        if let Some(m) = masked {
            if let Err(e) = parse::parse_text(src, &m) {
                panic!("masked with {what}, the file no longer parses: {e:?}\n{m}");
            }
        }
    };
    check(
        "the default rules' words",
        s.default_config.masked(&src.text),
    );
    for seed in 0..4 {
        check(
            &format!("sample {seed}"),
            mask::mask(&src.text, &mask::Sample(seed)),
        );
    }
}

fn report_of(src: &SourceFile, r: FileReport) -> Report {
    let files = (!r.diagnostics.is_empty()).then(|| (src.clone(), r.diagnostics));
    report(files, r.error.into_iter().collect())
}

/// A one-file report. Its rules are those of its findings, not every enabled one as in the
/// CLI: what a format prints per rule (SARIF's rule docs) does not depend on the input and
/// would cost most of each run; [`setup`] renders the full list once.
fn report(files: Option<(SourceFile, Vec<Diagnostic>)>, errors: Vec<FileError>) -> Report {
    let rules = rules::ALL
        .iter()
        .copied()
        .filter(|r| files.iter().flat_map(|(_, ds)| ds).any(|d| r.is(d.rule)))
        .collect();
    Report {
        files: files.into_iter().collect(),
        errors,
        files_checked: 1,
        files_skipped: 0,
        rules,
    }
}

/// Every output format, and JSON validity of the JSON ones.
fn emit_all(r: &Report, s: &Setup) {
    let json = |format: &str, text: &str| {
        if let Err(e) = serde_json::from_str::<serde_json::Value>(text) {
            panic!("{format} output is not JSON ({e}):\n{text}");
        }
    };
    let _ = emit::human::render(r, false);
    let _ = emit::human::render(r, true);
    for (src, d) in r.findings() {
        let _ = emit::human::render_one(src, d);
    }
    let _ = emit::concise::render(r);
    let _ = emit::github::render(r);
    json("json", &emit::json::render(r));
    json("sarif", &emit::sarif::render(r));
    // One message per line, with and without the cargo target.
    for crates in [&s.crates, &BTreeMap::new()] {
        for line in emit::rustc_json::render(r, crates).lines() {
            json("cargo-json", line);
        }
    }
}

/// A baseline of the findings, written and read back, hides every one of them.
fn check_baseline(src: &SourceFile, shown: &Report) {
    let same = |p: &str| p.to_string();
    let written = baseline::render(&baseline::create(shown, &same));
    let read = baseline::parse(&written).expect("a written baseline reads back");
    let mut again = report_of(
        src,
        FileReport {
            diagnostics: shown
                .files
                .first()
                .map(|(_, d)| d.clone())
                .unwrap_or_default(),
            ..FileReport::default()
        },
    );
    let outcome = baseline::apply(&mut again, &read, &same, &|_| true);
    assert_eq!(again.finding_count(), 0, "the baseline hides every finding");
    assert!(
        outcome.stale.is_empty(),
        "nothing is stale: {:?}",
        outcome.stale
    );
}

/// `--fix --unsafe-fixes` as the CLI runs it, reusing the findings already made for round one.
/// A file that does not parse whole may still have findings (masking blanked out the item syn
/// rejects); fixing it cannot give a file that parses, so the engine's roll-back is right there.
fn check_fixes(src: &SourceFile, diags: &[Diagnostic], config: &Config, parses_whole: bool) {
    if !diags.iter().any(|d| d.fix.is_some()) {
        return;
    }
    let first = std::cell::Cell::new(true);
    let fixed = fix::fix_with(&src.text, Level::Unsafe, |text| {
        if first.replace(false) {
            return Some(diags.to_vec());
        }
        let r = lint_source(&SourceFile::new(PATH, text), config);
        r.error.is_none().then_some(r.diagnostics)
    });
    assert!(
        !fixed.rolled_back || !parses_whole,
        "a fix left a file that does not parse:\n{}",
        src.text
    );
    if fixed.text != src.text {
        let _ = timeoutlint::edge::fix::unified_diff(PATH, &src.text, &fixed.text);
    }
    // Placeholders too: they may not parse (that round is rolled back) but must not panic.
    let placeholders = diags
        .iter()
        .filter_map(|d| d.fix.as_ref())
        .any(|f| f.applicability == Applicability::HasPlaceholders);
    if placeholders {
        let _ = fix::fix_text(PATH, &src.text, config, Level::All);
    }
}
