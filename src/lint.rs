//! Linting one file's text: prefilter, parse, analyse, run the enabled rules, apply the
//! precedence table, suppressions and configuration. Pure: the caller reads the file and decides
//! where output goes.
//!
//! Each call is isolated: a panic anywhere below becomes a [`FileError`] for that file, so one
//! hostile input never costs the rest of the run.
//!
//! Two entry points. [`lint_source`] lints one file as its own crate (stdin, `--fix`, editors).
//! A directory run instead runs [`lint_per_file`] on every file, which leaves the crate rules
//! out and reports whether the file has retry sites, then [`summarize_whole`] only on the files
//! of crates that have one, joins those crates, adds [`crate_findings`] and [`finish`]es each
//! file. Crate rules need whole files (their joins read every item), and only a few crates retry
//! at all: parsing whole files just there is what keeps a run below the cost of parsing every
//! file.

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::analysis;
use crate::analysis::clients::ClientSummary;
use crate::analysis::index::CrateIndex;
use crate::analysis::test_code;
use crate::analysis::wrappers::{Delegation, Wrapper};
use crate::analysis::CrateHelpers;
use crate::base::apis::Apis;
use crate::base::diagnostic::{Diagnostic, FileError};
use crate::base::source::{SourceFile, Span};
use crate::parse;
use crate::prefilter::{Groups, Prefilter, Trigger, TriggerSet, Vocab};
use crate::rules::{self, Context, CrateContext, Kind, Rule};

/// The crate join's own trigger set: a directory run joins a crate only when its first pass
/// finds a retry site, so that pass must parse every file that can hold one, whatever file rules
/// run.
pub const JOIN_TRIGGERS: &[Trigger] = &[Trigger::vocab(Vocab::RetrySites)];

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
    /// Every pass's trigger sets: the enabled rules' and, with a crate rule enabled, the join's.
    words: Prefilter,
    /// Join each crate's files for the cross-file rules (`lint_paths` only).
    pub crate_index: bool,
    /// Lint test code too; by default it is stripped before the analysis sees it
    /// ([`analysis::test_code`]).
    pub lint_tests: bool,
}

impl Config {
    /// A configuration running `rules` with `apis`.
    #[must_use]
    pub fn new(rules: Vec<&'static Rule>, apis: Apis) -> Self {
        let mut sets: Vec<TriggerSet> = rules
            .iter()
            .map(|r| TriggerSet {
                groups: if r.is_crate_rule() {
                    Groups::CRATE
                } else {
                    Groups::FILE
                },
                triggers: r.triggers,
                context: r.context,
                whole_file: r.is_crate_rule(),
            })
            .collect();
        // A rule with a crate part reads its crate's files whole where they hold its crate words.
        for r in &rules {
            if let Kind::FileAndCrate { crate_triggers, .. } = r.kind {
                sets.push(TriggerSet {
                    groups: Groups::CRATE,
                    triggers: crate_triggers,
                    context: &[],
                    whole_file: true,
                });
            }
        }
        if rules.iter().any(|r| r.reads_the_crate()) {
            sets.push(TriggerSet {
                groups: Groups::SITES,
                triggers: JOIN_TRIGGERS,
                context: &[],
                whole_file: false,
            });
        }
        let words = Prefilter::new(&sets, &apis);
        Self {
            rules,
            apis,
            prefilter: true,
            max_file_bytes: parse::DEFAULT_MAX_FILE_BYTES,
            settings: crate::config::FileSettings::default(),
            words,
            crate_index: true,
            lint_tests: false,
        }
    }

    /// Is any crate-level rule enabled?
    #[must_use]
    pub fn crate_rules(&self) -> bool {
        self.rules.iter().any(|r| r.reads_the_crate())
    }

    /// Does `text` contain any word the analysis or a rule could match?
    #[must_use]
    pub fn may_match(&self, text: &str) -> bool {
        self.words.may_match(text, Pass::Alone.groups())
    }

    /// The text a directory run's first pass parses for `text` (items that cannot hold a
    /// finding blanked), or `None` when it parses the file whole. The fuzz target checks that
    /// what this keeps of a file that parses still parses.
    #[must_use]
    pub fn masked(&self, text: &str) -> Option<String> {
        let groups = Pass::PerFile.groups();
        if self.words.needs_whole_file(text, groups) {
            return None;
        }
        crate::prefilter::mask::mask(text, &self.words.relevance(groups))
    }
}

/// A run's configuration is built here, where both are known: the configuration layer sits
/// below `lint` and does not know what a pass needs.
impl From<&crate::config::Resolved> for Config {
    fn from(resolved: &crate::config::Resolved) -> Self {
        let mut c = Config::new(resolved.rules.clone(), resolved.apis.clone());
        c.settings = resolved.settings.clone();
        c.lint_tests = resolved.lint_tests;
        c
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
    /// The test items stripped before the analysis ran: a suppression comment there is not
    /// judged either ([`finish`]).
    pub test_code: Vec<Span>,
    /// The retry wrappers the file defines, with their module set ([`analysis::wrappers`]): the
    /// driver lints the crate's files that call one again with them known.
    pub wrappers: Vec<Wrapper>,
    /// Its functions that hand their callable or request parameter on to a call, with their
    /// module set: the driver follows them over the crate's wrappers
    /// ([`analysis::wrappers::close`]).
    pub delegations: Vec<Delegation>,
    /// Helpers the file's retry loops ask about that the file does not define
    /// ([`analysis::Facts::foreign_callees`]): the driver finds what the crate's files that
    /// define them answer, and lints the file again with it when that is anything.
    pub foreign: Vec<String>,
}

impl FileReport {
    /// The report of a file that was parsed and analysed into `facts`.
    fn analysed(
        diagnostics: Vec<Diagnostic>,
        facts: &analysis::Facts,
        test_code: Vec<Span>,
        (wrappers, delegations): (Vec<Wrapper>, Vec<Delegation>),
    ) -> Self {
        // (A name the whole file defines is not foreign: a masked parse that lacked its
        // definition was redone whole, see `lint_parsed`.)
        let foreign = facts.foreign_callees.iter().cloned().collect();
        FileReport {
            diagnostics,
            error: None,
            parsed: true,
            has_sites: !facts.sites.is_empty(),
            test_code,
            wrappers,
            delegations,
            foreign,
        }
    }
}

/// Which pass is running.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// The file is its own crate: every rule, findings finished.
    Alone,
    /// Crate rules left out, findings left unfinished for [`finish`].
    PerFile,
}

impl Pass {
    /// The trigger sets the pass runs.
    fn groups(self) -> Groups {
        match self {
            Pass::Alone => Groups::FILE.and(Groups::CRATE),
            Pass::PerFile => Groups::FILE.and(Groups::SITES),
        }
    }
}

/// Lint one file as its own crate: every enabled rule, findings finished.
#[must_use]
pub fn lint_source(src: &SourceFile, config: &Config) -> FileReport {
    if is_test_file(src, config) || (config.prefilter && !config.may_match(&src.text)) {
        return FileReport::default();
    }
    isolated(src, || lint_parsed(src, config, Pass::Alone))
}

/// Lint one file of a directory run: every enabled rule but the crate-level ones, whose
/// findings come from the join of the crate ([`summarize_whole`]). The findings are not yet
/// [`finish`]ed: suppressions must see the crate's findings too.
#[must_use]
pub fn lint_per_file(src: &SourceFile, config: &Config) -> FileReport {
    if is_test_file(src, config)
        || (config.prefilter && !config.words.may_match(&src.text, Pass::PerFile.groups()))
    {
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
    if is_test_file(src, config) || !config.words.may_match(&src.text, Groups::CRATE) {
        return Ok(None);
    }
    on_whole_tree(src, config, |ast, _| {
        let (_, summary) = analysis::sites_summarized(ast, src, &config.apis);
        Ok((!summary.is_empty()).then_some(summary))
    })
}

/// Parse `src` whole, strip its test code, and run `f` on the tree with the stripped spans;
/// a parse error or a panic becomes the file's error. The tree's spans are released after.
fn on_whole_tree<T>(
    src: &SourceFile,
    config: &Config,
    f: impl FnOnce(&syn::File, Vec<Span>) -> Result<T, FileError>,
) -> Result<T, FileError> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut ast = parse::parse_text(src, &src.text)?;
        let tests = strip_tests(&mut ast, src, config);
        f(&ast, tests)
    }));
    proc_macro2::extra::invalidate_current_thread_spans();
    result.unwrap_or_else(|panic| Err(internal_error(src, &*panic)))
}

/// The findings of the enabled crate rules whose primary location is in `src`, from the joined
/// `index` of its crate. The file is parsed again only when it holds one (their fixes rewrite
/// loops by their syntax).
#[must_use]
pub fn crate_findings(index: &CrateIndex, src: &SourceFile, config: &Config) -> Vec<Diagnostic> {
    let ast = if index.has_findings_in(&src.path) {
        parse::parse(src).ok()
    } else {
        None
    };
    let cx = CrateContext {
        index,
        src,
        ast: ast.as_ref(),
    };
    rules::crate_findings(&cx, &config.rules)
}

/// Apply the precedence table (every rule has run), the file's suppression comments, then
/// configuration (per-file ignores, levels), and sort: the last step of every file's findings.
/// `test_code` is what [`FileReport::test_code`] says was stripped: a suppression comment there
/// silenced nothing the analysis could see, and is not reported either.
pub fn finish(
    src: &SourceFile,
    config: &Config,
    diagnostics: &mut Vec<Diagnostic>,
    test_code: &[Span],
) {
    crate::precedence::apply(diagnostics, |r| {
        config.rules.iter().any(|e| std::ptr::eq(*e, r))
            && !config.settings.ignored(&src.path, r.name)
    });
    crate::suppression::apply(src, &config.rules, &config.settings, diagnostics);
    diagnostics.retain(|d| !test_code::covers(test_code, d.primary.start));
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
    let groups = pass.groups();
    // Items that cannot hold a finding are blanked out before parsing (same lines and columns).
    let mut masked = if config.prefilter && !config.words.needs_whole_file(&src.text, groups) {
        crate::prefilter::mask::mask(&src.text, &config.words.relevance(groups))
    } else {
        None
    };
    let mut ast = match parse::parse_text(src, masked.as_deref().unwrap_or(&src.text)) {
        Ok(ast) => ast,
        Err(e) => {
            return FileReport {
                error: Some(e),
                ..FileReport::default()
            }
        }
    };
    let mut tests = strip_tests(&mut ast, src, config);
    // Alone, the file is its own crate: its summary is the crate index.
    let alone_crate = pass == Pass::Alone && config.crate_rules();
    let analyze = |ast: &syn::File, known: &[analysis::wrappers::Wrapper]| {
        let helpers = CrateHelpers::NONE;
        analysis::analyze_summarized(ast, src, &config.apis, known, helpers, alone_crate)
    };
    let (mut facts, mut summary) = analyze(&ast, &[]);
    // The facts read a name the masking may have blanked elsewhere (a helper's definition, a
    // caller): the whole file decides, so it is parsed whole.
    if let Some(text) = &masked {
        // So does a helper a loop asks that the masked text lacks (its decisions may rest on
        // another file's helper, or be one).
        // And so do a wrapper's callers (a function handing its request on to it is one too).
        let hidden = (facts.hidden_callees.iter())
            .chain(&facts.foreign_callees)
            .any(|n| defines(&src.text, n) && !defines(text, n))
            || (facts.hidden_callers.iter())
                .chain(facts.wrappers.iter().map(|w| &w.name))
                .any(|n| mentions(&src.text, n) > mentions(text, n));
        if hidden {
            match parse::parse_text(src, &src.text) {
                Ok(whole) => {
                    ast = whole;
                    tests = strip_tests(&mut ast, src, config);
                    (facts, summary) = analyze(&ast, &[]);
                }
                Err(e) => {
                    return FileReport {
                        error: Some(e),
                        ..FileReport::default()
                    }
                }
            }
            masked = None;
        }
    }
    let (mut wrappers, delegations) = placed(src, &mut facts);
    // Alone, the file is its own crate: its calls of its own wrappers are retry sites. The
    // masking kept only what the rules' words reach, which a wrapper's callers may not be.
    if pass == Pass::Alone && !wrappers.is_empty() {
        analysis::wrappers::close(&mut wrappers, &delegations);
        if masked.is_some() {
            match parse::parse_text(src, &src.text) {
                Ok(whole) => {
                    ast = whole;
                    strip_tests(&mut ast, src, config);
                }
                Err(e) => {
                    return FileReport {
                        error: Some(e),
                        ..FileReport::default()
                    }
                }
            }
        }
        (facts, summary) = analyze(&ast, &wrappers);
    }
    let cx = Context {
        src,
        ast: &ast,
        facts: &facts,
        apis: &config.apis,
    };
    let mut diagnostics = rules::file_findings(&cx, &config.rules);
    // Alone, the file is its own crate; a directory run joins whole crates instead.
    if let Some(summary) = &summary {
        let index = CrateIndex::build(&[summary]);
        let cx = CrateContext {
            index: &index,
            src,
            ast: Some(&ast),
        };
        diagnostics.extend(rules::crate_findings(&cx, &config.rules));
    }
    drop_fixes_in_macros(&ast, src, &mut diagnostics);
    if pass == Pass::Alone {
        finish(src, config, &mut diagnostics, &tests);
    }
    FileReport::analysed(diagnostics, &facts, tests, (wrappers, delegations))
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where `name` occurs in `text` as a whole identifier (comments and literals included:
/// counting too many only parses a file whole that did not need it).
fn occurrences<'t>(text: &'t str, name: &'t str) -> impl Iterator<Item = usize> + 't {
    text.match_indices(name).map(|(i, _)| i).filter(move |&i| {
        !text[..i].chars().next_back().is_some_and(ident_char)
            && !text[i + name.len()..]
                .chars()
                .next()
                .is_some_and(ident_char)
    })
}

/// Does `text` call `name` (`name(`, `.name(`, `name::<`), as far as the text shows?
#[must_use]
pub fn calls(text: &str, name: &str) -> bool {
    occurrences(text, name).any(|i| {
        let rest = text[i + name.len()..].trim_start();
        rest.starts_with('(') || rest.starts_with("::<")
    })
}

/// How often `name` occurs in `text`.
fn mentions(text: &str, name: &str) -> usize {
    occurrences(text, name).count()
}

/// Does `text` hold `fn name`?
#[must_use]
pub fn defines(text: &str, name: &str) -> bool {
    occurrences(text, name).any(|i| {
        let before = &text[..i];
        let keyword = before.trim_end();
        keyword.len() < before.len()
            && keyword
                .strip_suffix("fn")
                .is_some_and(|rest| !rest.chars().next_back().is_some_and(ident_char))
    })
}

/// The wrappers and delegations found in `src` (taken from `facts`), with the module and file
/// that name them.
fn placed(src: &SourceFile, facts: &mut analysis::Facts) -> (Vec<Wrapper>, Vec<Delegation>) {
    let module = analysis::wrappers::module_of_path(&src.path);
    let mut wrappers = std::mem::take(&mut facts.wrappers);
    for w in &mut wrappers {
        w.module = Some(module.clone());
        w.file = Some(src.path.clone());
    }
    let mut delegations = std::mem::take(&mut facts.delegations);
    for d in &mut delegations {
        d.module = Some(module.clone());
        d.file = Some(src.path.clone());
    }
    (wrappers, delegations)
}

/// A file of a crate whose retry wrappers (`known`, from every file's pass one) it may call,
/// or whose loops ask about helpers other files of the crate define (`helpers`), linted again
/// whole with them known: its per-file findings (as [`lint_per_file`]'s, which they replace)
/// and its crate-index summary (as [`summarize_whole`]'s), from one parse.
pub fn relint_with_crate(
    src: &SourceFile,
    config: &Config,
    known: &[Wrapper],
    helpers: &CrateHelpers,
) -> Result<(FileReport, Option<ClientSummary>), FileError> {
    if is_test_file(src, config) {
        return Ok((FileReport::default(), None));
    }
    on_whole_tree(src, config, |ast, tests| {
        let summarize = config.words.may_match(&src.text, Groups::CRATE);
        let (mut facts, summary) =
            analysis::analyze_summarized(ast, src, &config.apis, known, helpers, summarize);
        let placed = placed(src, &mut facts);
        let cx = Context {
            src,
            ast,
            facts: &facts,
            apis: &config.apis,
        };
        let mut diagnostics = rules::file_findings(&cx, &config.rules);
        drop_fixes_in_macros(ast, src, &mut diagnostics);
        let summary = summary.filter(|s| !s.is_empty());
        let report = FileReport::analysed(diagnostics, &facts, tests, placed);
        Ok((report, summary))
    })
}

/// The hand-offs of `src` ([`Delegation`]), from its whole syntax tree: the functions that
/// hand their request or callable parameter on to another call. Pass one records them only for
/// what its (masked) parse kept, which the rules' words decide; a function that only hands a
/// request to another file's wrapper (riven's `execute_raw(req)` to
/// `RegionalRequester::execute`) has none of those words. The join asks this of the files that
/// name a wrapper of their crate ([`crate::driver`]).
pub fn delegations_of(src: &SourceFile, config: &Config) -> Result<Vec<Delegation>, FileError> {
    if is_test_file(src, config) {
        return Ok(Vec::new());
    }
    on_whole_tree(src, config, |ast, _| {
        let (mut facts, _) =
            analysis::analyze_summarized(ast, src, &config.apis, &[], CrateHelpers::NONE, false);
        Ok(placed(src, &mut facts).1)
    })
}

/// What the helpers named `names` that `src` defines answer ([`CrateHelpers`]), from its
/// whole syntax tree (test code left out, as everywhere).
pub fn helpers_of(
    src: &SourceFile,
    config: &Config,
    names: &BTreeSet<String>,
) -> Result<CrateHelpers, FileError> {
    if is_test_file(src, config) {
        return Ok(CrateHelpers::default());
    }
    on_whole_tree(src, config, |ast, _| {
        Ok(CrateHelpers::of_file(ast, &config.apis, names))
    })
}

/// Is the whole file test code that this run leaves alone (`lint-tests` off)?
fn is_test_file(src: &SourceFile, config: &Config) -> bool {
    !config.lint_tests && test_code::is_test_path(&src.path)
}

/// Remove the test items from `ast` unless the run lints tests; the ranges they covered. Then
/// add the bodies of the file's `macro_rules!` definitions as items, so a retry written in a
/// macro is analysed like one written in a function ([`analysis::macros`]). Masking keeps every
/// item a finding or a suppression comment could be in, so the masked and the whole tree lose
/// (and gain) the same items.
fn strip_tests(ast: &mut syn::File, src: &SourceFile, config: &Config) -> Vec<Span> {
    let tests = if config.lint_tests {
        Vec::new()
    } else {
        test_code::strip(ast, src)
    };
    analysis::macros::expose_rules_bodies(ast, src);
    tests
}

/// A fix inside a `macro_rules!` definition would rewrite the macro's text, which every caller
/// pastes with its own arguments: such findings are reported without one.
fn drop_fixes_in_macros(ast: &syn::File, src: &SourceFile, diagnostics: &mut [Diagnostic]) {
    if !diagnostics.iter().any(|d| d.fix.is_some()) {
        return;
    }
    let macros = analysis::macros::rules_spans(ast, src);
    for d in diagnostics {
        if macros.iter().any(|m| m.contains(d.primary)) {
            d.fix = None;
        }
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

#[cfg(test)]
mod tests {
    use super::{defines, mentions};

    #[test]
    fn names_are_whole_identifiers() {
        let text =
            "fn send() {}\nfn resend() { send(); self.send_all(); }\n// pub fn\nfn\n  left() {}";
        assert_eq!(mentions(text, "send"), 2);
        assert!(defines(text, "send") && defines(text, "left"));
        assert!(!defines(text, "send_all") && !defines(text, "resend_x"));
        assert!(!defines("selffn send()", "send"));
    }
}
