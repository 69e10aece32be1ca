//! Linting one file's text: prefilter, parse, analyse, run the enabled rules. Pure: the caller
//! reads the file and decides where output goes.
//!
//! Each call is isolated: a panic anywhere below becomes a [`FileError`] for that file, so one
//! hostile input never costs the rest of the run.
//!
//! Two entry points. [`lint_source`] lints one file as its own crate (stdin, `--fix`, editors).
//! A directory run ([`crate::cli::lint_paths`]) instead runs [`lint_per_file`] on every file,
//! which leaves the crate-level rules out and reports whether the file has retry sites, then
//! [`summarize_whole`] only on the files of crates that have one, joins those crates and
//! [`finish`]es each file. Crate-level rules need whole files (their joins read every item), and
//! only a few crates retry at all: parsing whole files just there is what keeps a run below the
//! cost of parsing every file.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::analysis;
use crate::analysis::clients::{self, ClientSummary};
use crate::analysis::index::CrateIndex;
use crate::apis::Apis;
use crate::diagnostic::{Diagnostic, FileError};
use crate::parse;
use crate::prefilter::Prefilter;
use crate::rules::{Context, Rule};
use crate::source::SourceFile;

/// What to run.
pub struct Config {
    /// Enabled rules, in registry order.
    pub rules: Vec<&'static Rule>,
    /// Library knowledge.
    pub apis: Apis,
    /// Skip parsing files that cannot hold a finding.
    pub prefilter: bool,
    /// Files larger than this are reported and skipped.
    pub max_file_bytes: u64,
    /// Per-rule levels and per-file ignores from configuration (`config`).
    pub settings: crate::config::FileSettings,
    prefilter_words: Prefilter,
    /// The prefilter of [`lint_per_file`]: the crate rules' words replaced by the retry-site
    /// words, because that pass only has to find the sites of the crates worth joining.
    per_file_words: Prefilter,
    /// The crate rules' own words: which files feed the crate index.
    crate_words: Prefilter,
    /// Join each crate's files for the cross-file rules (`lint_paths` only).
    pub crate_index: bool,
}

/// Stands for the crate rules in the per-file prefilter: their crates are joined only when the
/// per-file pass finds a retry site, so that pass must parse every file that can hold one.
static SITE_FINDER: Rule = Rule {
    name: "retry-sites",
    summary: "",
    doc: "",
    default_enabled: false,
    default_severity: crate::diagnostic::Severity::Warning,
    fixable: false,
    triggers: &["@retry-sites"],
    check: |_| Vec::new(),
};

impl Config {
    /// A configuration running `rules` with `apis`.
    #[must_use]
    pub fn new(rules: Vec<&'static Rule>, apis: Apis) -> Self {
        let prefilter_words = Prefilter::new(&rules, &apis);
        let mut per_file: Vec<&Rule> = rules
            .iter()
            .copied()
            .filter(|r| !is_crate_rule(r))
            .collect();
        if per_file.len() < rules.len() {
            per_file.push(&SITE_FINDER);
        }
        let per_file_words = Prefilter::new(&per_file, &apis);
        let crate_rules: Vec<&Rule> = rules.iter().copied().filter(|r| is_crate_rule(r)).collect();
        let crate_words = Prefilter::new(&crate_rules, &apis);
        Self {
            rules,
            apis,
            prefilter: true,
            max_file_bytes: parse::DEFAULT_MAX_FILE_BYTES,
            settings: crate::config::FileSettings::default(),
            prefilter_words,
            per_file_words,
            crate_words,
            crate_index: true,
        }
    }

    /// Is any crate-level rule enabled?
    #[must_use]
    pub fn crate_rules(&self) -> bool {
        self.rules.iter().any(|r| is_crate_rule(r))
    }

    /// Does `text` contain any word the analysis or a rule could match?
    #[must_use]
    pub fn may_match(&self, text: &str) -> bool {
        self.prefilter_words.may_match(text)
    }
}

/// The outcome for one file.
#[derive(Debug, Default)]
pub struct FileReport {
    /// Findings, sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// Why the file could not be analysed.
    pub error: Option<FileError>,
    /// Whether the file was parsed (false when the prefilter skipped it).
    pub parsed: bool,
    /// The file has a retry site: its crate is worth joining ([`lint_per_file`] only).
    pub has_sites: bool,
}

fn is_crate_rule(r: &Rule) -> bool {
    crate::rules::CRATE_RULES.iter().any(|c| c.name == r.name)
}

/// Which pass is running.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// The file is its own crate: every rule, findings finished.
    Alone,
    /// Crate rules left out, findings left unfinished for [`finish`].
    PerFile,
}

/// Lint one file as its own crate: every enabled rule, findings finished.
#[must_use]
pub fn lint_source(src: &SourceFile, config: &Config) -> FileReport {
    if config.prefilter && !config.may_match(&src.text) {
        return FileReport::default();
    }
    isolated(src, || lint_parsed(src, config, Pass::Alone))
}

/// Lint one file of a directory run: every enabled rule but the crate-level ones, whose
/// findings come from the join of the crate ([`summarize_whole`]). The findings are not yet
/// [`finish`]ed: suppressions must see the crate's findings too.
#[must_use]
pub fn lint_per_file(src: &SourceFile, config: &Config) -> FileReport {
    if config.prefilter && !config.per_file_words.may_match(&src.text) {
        return FileReport::default();
    }
    isolated(src, || lint_parsed(src, config, Pass::PerFile))
}

/// The crate-index summary of one file, parsed whole; `None` when the file cannot take part in a
/// cross-file finding. Only a file holding a crate rule's words feeds the index, with the
/// prefilter on or off and whatever other rules run, so cross-file findings depend on neither.
pub fn summarize_whole(
    src: &SourceFile,
    config: &Config,
) -> Result<Option<ClientSummary>, FileError> {
    if !config.crate_words.may_match(&src.text) {
        return Ok(None);
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        let ast = parse::parse_text(src, &src.text)?;
        let facts = analysis::sites(&ast, src, &config.apis);
        let summary = clients::summarize(&ast, src, &config.apis, &facts);
        Ok((!summary.is_empty()).then_some(summary))
    }));
    proc_macro2::extra::invalidate_current_thread_spans();
    result.unwrap_or_else(|panic| Err(internal_error(src, &*panic)))
}

/// Apply the file's suppression comments, then configuration (per-file ignores, levels), and sort:
/// the last step of every file's findings.
pub fn finish(src: &SourceFile, config: &Config, diagnostics: &mut Vec<Diagnostic>) {
    crate::suppression::apply(src, config, diagnostics);
    crate::config::adjust(src, &config.settings, diagnostics);
    sort(diagnostics);
}

/// Run `lint` so that a panic becomes a per-file error.
fn isolated(src: &SourceFile, lint: impl FnOnce() -> FileReport) -> FileReport {
    let result = catch_unwind(AssertUnwindSafe(lint));
    // Spans of the tree just dropped stay cached per thread unless released (1.3 GiB instead of
    // 650 MiB peak over 800 MB of source).
    proc_macro2::extra::invalidate_current_thread_spans();
    result.unwrap_or_else(|panic| FileReport {
        error: Some(internal_error(src, &*panic)),
        parsed: true,
        ..FileReport::default()
    })
}

fn internal_error(src: &SourceFile, panic: &(dyn std::any::Any + Send)) -> FileError {
    let what = panic
        .downcast_ref::<&str>()
        .map(ToString::to_string)
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    FileError {
        path: src.path.clone(),
        line: None,
        column: None,
        message: format!("internal error while analysing this file: {what}"),
    }
}

fn lint_parsed(src: &SourceFile, config: &Config, pass: Pass) -> FileReport {
    let words = match pass {
        Pass::Alone => &config.prefilter_words,
        Pass::PerFile => &config.per_file_words,
    };
    // Items that cannot hold a finding are blanked out before parsing (same lines and columns).
    let masked = if config.prefilter && !words.needs_whole_file(&src.text) {
        crate::mask::mask(&src.text, words)
    } else {
        None
    };
    let ast = match parse::parse_text(src, masked.as_deref().unwrap_or(&src.text)) {
        Ok(ast) => ast,
        Err(e) => {
            return FileReport {
                error: Some(e),
                ..FileReport::default()
            }
        }
    };
    let facts = analysis::analyze(&ast, src, &config.apis);
    // Alone, the file is its own crate; a directory run joins whole crates instead.
    let krate = if pass == Pass::Alone && config.crate_rules() {
        CrateIndex::build(&[&clients::summarize(&ast, src, &config.apis, &facts)])
    } else {
        CrateIndex::default()
    };
    let cx = Context {
        src,
        ast: &ast,
        facts: &facts,
        apis: &config.apis,
        krate: &krate,
    };
    let mut diagnostics: Vec<Diagnostic> = config
        .rules
        .iter()
        .filter(|r| pass == Pass::Alone || !is_crate_rule(r))
        .flat_map(|r| (r.check)(&cx))
        .collect();
    if pass == Pass::Alone {
        finish(src, config, &mut diagnostics);
    }
    FileReport {
        diagnostics,
        error: None,
        parsed: true,
        has_sites: !facts.sites.is_empty(),
    }
}

/// Sort findings by place, then rule: the order every format prints.
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by(|a, b| {
        (a.primary.start, a.primary.end, a.rule.name).cmp(&(
            b.primary.start,
            b.primary.end,
            b.rule.name,
        ))
    });
}
