//! The driver: one run of the linter, in order. It plans the run (the walk gives the files,
//! the configuration says which rules and whether the crate pass runs), runs pass one over
//! every file on the worker pool, joins the crates where pass one found a retry site (pass
//! two), then finishes every file (precedence, suppressions, configuration) into the
//! [`Report`] the edge prints. The crate join reads together the files of one unit
//! ([`crate::walk::units`]: the cargo package, else the Bazel or Buck target, the module tree
//! or the directory), one unit at a time, a unit over [`JOIN_BUDGET`] in pieces. It reads
//! files only through the reader it is given (by default [`walk::read`]); arguments, output
//! and the exit code are the edge's (`cli`).
//!
//! Reads and parses per file in a directory run ([`Tally`] counts them; a test holds each to
//! at most one per pass):
//!
//! | pass | reads | parses |
//! |------|-------|--------|
//! | [`Pass::PerFile`]: every file | 1 | 1 of the masked text, or 0 (prefilter, test file) |
//! | [`Pass::Asked`]: files of units whose retry loops ask about a helper they do not define | 1 | 0 |
//! | [`Pass::Helpers`]: of those, files that define an asked name at most [`MAX_DEFINERS`] files define | 1 | 1 whole |
//! | [`Pass::Join`]: files of units with a retry site | 1, hash-checked against pass one's | 1 whole, only files with a crate rule's words, a wrapper's name or an answered helper |
//! | [`Pass::CrateFindings`]: files holding a crate finding | 0 (the join's text is kept until its unit is done) | 1 whole |
//! | finishing | 0 | 0 (suppression comments are read from the text) |
//!
//! Pass two reads again instead of keeping every text from pass one, since holding all texts
//! makes memory grow with the tree; it keeps only the texts of files with findings or
//! suppression comments. The crate-findings step parses again because a syntax tree cannot
//! leave the worker thread that built it and the findings are known only once the whole crate
//! is joined; it is a few files. Each `--fix` round ([`crate::edge::fix`]) parses each changed
//! text once to check the fix kept it parsable, then lints again as a whole run with the
//! changed texts in the [`Overlay`] (overlay files are not read from disk).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::analysis::clients::ClientSummary;
use crate::analysis::index::CrateIndex;
use crate::analysis::wrappers::Wrapper;
use crate::analysis::CrateHelpers;
use crate::base::diagnostic::{Diagnostic, FileError};
use crate::base::source::SourceFile;
use crate::emit::Report;
use crate::lint::{self, Config, FileReport};
use crate::parse::{self, WORKER_STACK};
use crate::walk;
use crate::walk::units::{self, ModFacts, UnitKind, Units};

/// Bytes of source the crate join reads into one join at most: a unit over it (a huge
/// directory of loose files, a monorepo target globbing everything) is joined in pieces of
/// files in path order, each within it, so memory stays set by this, not by the tree. 64 MB
/// is more than any crate of the pinned corpus with a retry site (the largest, `windows`,
/// has none); a split loses links between the pieces and says so on stderr.
pub const JOIN_BUDGET: usize = 64 << 20;

/// A helper name defined in more files of a unit than this is not looked up across the crate
/// ([`unit_helpers`]): by name alone it could be any of them.
pub const MAX_DEFINERS: usize = 4;

/// Files done and to do in the current run, for the progress line the edge draws (`adopt`).
pub(crate) static TOTAL: AtomicUsize = AtomicUsize::new(0);
pub(crate) static DONE: AtomicUsize = AtomicUsize::new(0);

/// Texts that stand for files on disk, by the path the walk gives (`--fix` and `--diff` lint
/// their work in progress through it, with every other file of the crate read as usual).
pub type Overlay = std::collections::HashMap<PathBuf, String>;

/// What a run lints and how, as the edge decided it: `--fix` lints it again with its work in
/// progress ([`Run::lint_with`]), so the fix rounds need no way of their own to re-lint.
pub struct Run<'a> {
    /// The paths given.
    pub paths: &'a [PathBuf],
    /// Exclude globs.
    pub excludes: &'a [String],
    /// The rules and settings.
    pub config: &'a Config,
    /// Worker threads.
    pub threads: usize,
    /// What it reads besides the files it reports, and what is not on disk.
    pub scope: Scope,
    /// Texts that stand for files in every lint of the run (stdin's buffer).
    pub base: Overlay,
    /// The edge's last word on each report (fix applicability from the crate's manifest, which
    /// the edge reads); applied to the fix rounds' reports too.
    pub adjust: Option<fn(&mut Report)>,
}

impl<'a> Run<'a> {
    /// A run of `paths` as they are on disk, with nothing more in its scope.
    #[must_use]
    pub fn new(
        paths: &'a [PathBuf],
        excludes: &'a [String],
        config: &'a Config,
        threads: usize,
    ) -> Self {
        Run {
            paths,
            excludes,
            config,
            threads,
            scope: Scope::default(),
            base: Overlay::new(),
            adjust: None,
        }
    }

    /// The run's report.
    #[must_use]
    pub fn lint(&self) -> Report {
        self.lint_with(&Overlay::new())
    }

    /// The report with the files of `overlay` read from it instead of the disk.
    #[must_use]
    pub fn lint_with(&self, overlay: &Overlay) -> Report {
        let mut all = self.base.clone();
        all.extend(overlay.iter().map(|(k, v)| (k.clone(), v.clone())));
        let mut report = lint_paths_scoped(
            self.paths,
            self.excludes,
            self.config,
            self.threads,
            &all,
            &self.scope,
        );
        if let Some(adjust) = self.adjust {
            adjust(&mut report);
        }
        report
    }
}

/// Lint `paths` with `threads` workers. Output order does not depend on the thread count.
///
/// Pass 1 lints every file alone (crate-level rules left out) and notes which files have retry
/// sites; pass 2 parses whole only the files of units with a site, joins each such unit's
/// summaries and adds the crate-level findings; then every file's findings are finished
/// (suppressions, configuration), so a suppression comment sees cross-file findings too.
#[must_use]
pub fn lint_paths(
    paths: &[PathBuf],
    excludes: &[String],
    config: &Config,
    threads: usize,
) -> Report {
    lint_paths_with(paths, excludes, config, threads, &Overlay::new())
}

/// [`lint_paths`] with the files of `overlay` read from it instead of the disk.
#[must_use]
pub fn lint_paths_with(
    paths: &[PathBuf],
    excludes: &[String],
    config: &Config,
    threads: usize,
    overlay: &Overlay,
) -> Report {
    lint_paths_scoped(paths, excludes, config, threads, overlay, &Scope::default())
}

/// What a run reads besides the files it reports, and what it lints that is not on disk.
#[derive(Debug, Default, Clone)]
pub struct Scope {
    /// Files of the overlay linted though the disk may not hold them (stdin's buffer, named by
    /// `--stdin-filename`): reported like walked files.
    pub virtual_files: Vec<PathBuf>,
    /// Crate roots whose files are read for the crate join only, never reported: a run over
    /// some files of a crate (a pre-commit hook's staged files) then finds in them what a
    /// whole-crate run finds in them. Spelled as lexical ancestors of the named paths (the
    /// empty path for the working directory), so the crate join keys them alike.
    pub context_roots: Vec<PathBuf>,
    /// The exclusions for walking `context_roots`.
    pub context_excludes: Vec<String>,
}

/// [`lint_paths_with`], also linting the scope's virtual files and reading its context.
#[must_use]
pub fn lint_paths_scoped(
    paths: &[PathBuf],
    excludes: &[String],
    config: &Config,
    threads: usize,
    overlay: &Overlay,
    scope: &Scope,
) -> Report {
    let read = |path: &PathBuf| match overlay.get(path) {
        Some(text) => Ok(text.clone()),
        None => walk::read(path, config.max_file_bytes),
    };
    run(paths, excludes, config, threads, &read, None, scope)
}

/// [`lint_paths`] reading each file with `read` (each pass reads again; tests give a reader
/// whose text changes between the passes).
#[must_use]
pub fn lint_paths_reading(
    paths: &[PathBuf],
    excludes: &[String],
    config: &Config,
    threads: usize,
    read: &(dyn Fn(&PathBuf) -> Result<String, String> + Sync),
) -> Report {
    run(
        paths,
        excludes,
        config,
        threads,
        read,
        None,
        &Scope::default(),
    )
}

/// The passes of a directory run, as the [`Tally`] counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pass {
    /// Every file alone, masked.
    PerFile,
    /// The files of a unit whose retry loops ask about helpers they do not define: which of
    /// those names each file's text defines.
    Asked,
    /// The files of such a unit that define an asked name few files define, whole.
    Helpers,
    /// The files of units with a retry site, whole, into the unit's join.
    Join,
    /// The files holding a crate finding, whole, for the fixes that rewrite by syntax.
    CrateFindings,
}

/// What one pass did to one file.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Times the file was read.
    pub reads: usize,
    /// Times a text of it was parsed.
    pub parses: usize,
}

/// How often a run read and parsed each file, per pass: the module's promise (each file read
/// once and parsed at most once per pass that needs it) made checkable; and what the crate
/// join held at once, per unit (or piece of one), for the promise that memory is set by the
/// largest unit, not the tree. Only [`lint_paths_tallied`] keeps one; a plain run pays
/// nothing for it.
#[derive(Debug, Default)]
pub struct Tally {
    counts: Mutex<BTreeMap<(Pass, PathBuf), Counts>>,
    held: Mutex<Vec<Held>>,
    budget: Option<usize>,
}

/// What the crate join held at once while joining one unit, or one piece of a unit over the
/// budget: everything it holds lives only that long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// How the unit was found.
    pub kind: UnitKind,
    /// What names it (package directory, build file, root file, directory).
    pub root: PathBuf,
    /// Which piece this is, from 0, and of how many (1 for a unit within the budget).
    pub piece: (usize, usize),
    /// The piece's files.
    pub files: usize,
    /// The bytes of source of its files (what the budget bounds).
    pub bytes: usize,
    /// Summaries held.
    pub summaries: usize,
    /// Bytes of text held with them (summarised or re-linted files).
    pub text_bytes: usize,
}

impl Tally {
    /// A tally whose run joins pieces of at most `bytes` of source instead of
    /// [`JOIN_BUDGET`]'s, so that a small test tree can show how a unit over it is joined.
    #[must_use]
    pub fn with_join_budget(bytes: usize) -> Self {
        Tally {
            budget: Some(bytes),
            ..Tally::default()
        }
    }

    /// What the join held, per unit or piece, in the order they were joined.
    #[must_use]
    pub fn held(&self) -> Vec<Held> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn hold(tally: Option<&Tally>, held: Held) {
        if let Some(tally) = tally {
            tally
                .held
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(held);
        }
    }

    fn add(tally: Option<&Tally>, pass: Pass, path: &Path, reads: usize, parses: usize) {
        let Some(tally) = tally else { return };
        if reads + parses == 0 {
            return;
        }
        let mut map = tally
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let c = map.entry((pass, path.to_path_buf())).or_default();
        c.reads += reads;
        c.parses += parses;
    }

    /// The counts so far, by pass and file (files a pass neither read nor parsed left out).
    #[must_use]
    pub fn counts(&self) -> BTreeMap<(Pass, PathBuf), Counts> {
        self.counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// The walk's files, the scope's virtual files and its context files (the files of its
/// context roots not already named), and which of them are reported (not the context).
fn scoped_files(
    paths: &[PathBuf],
    excludes: &[String],
    scope: &Scope,
) -> (Vec<PathBuf>, Vec<bool>, Vec<FileError>) {
    let (mut files, errors) = walk::rust_files(paths, excludes);
    for v in &scope.virtual_files {
        if !files.contains(v) {
            files.push(v.clone());
        }
    }
    let named = files.len();
    if !scope.context_roots.is_empty() {
        let mut seen: std::collections::HashSet<PathBuf> = files.iter().cloned().collect();
        // The walk spells a file under root `.` as `./x`: the empty root is walked as `.` and
        // its files respelled, so they key the same crate as the named `x` does.
        let roots: Vec<PathBuf> = scope
            .context_roots
            .iter()
            .map(|r| {
                if r.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    r.clone()
                }
            })
            .collect();
        // A context file that cannot be walked or read is not reported: a whole-crate run
        // would report it against itself, not against the named files.
        let (more, _) = walk::rust_files(&roots, &scope.context_excludes);
        let empty_root = scope.context_roots.iter().any(|r| r.as_os_str().is_empty());
        for f in more {
            let f = match f.strip_prefix(".") {
                Ok(rest) if empty_root => rest.to_path_buf(),
                _ => f,
            };
            if seen.insert(f.clone()) {
                files.push(f);
            }
        }
    }
    // In path order, as a walk of the whole crate gives them: the crate join reads its files
    // in this order, and the findings must not depend on which were named.
    let mut all: Vec<(PathBuf, bool)> = files
        .into_iter()
        .enumerate()
        .map(|(i, f)| (f, i < named))
        .collect();
    if all.len() > named {
        all.sort();
    }
    let (files, reported) = all.into_iter().unzip();
    (files, reported, errors)
}

/// [`lint_paths_reading`], counting every read and parse into `tally`.
#[must_use]
pub fn lint_paths_tallied(
    paths: &[PathBuf],
    excludes: &[String],
    config: &Config,
    threads: usize,
    read: &(dyn Fn(&PathBuf) -> Result<String, String> + Sync),
    tally: &Tally,
) -> Report {
    run(
        paths,
        excludes,
        config,
        threads,
        read,
        Some(tally),
        &Scope::default(),
    )
}

fn run(
    paths: &[PathBuf],
    excludes: &[String],
    config: &Config,
    threads: usize,
    read: &(dyn Fn(&PathBuf) -> Result<String, String> + Sync),
    tally: Option<&Tally>,
    scope: &Scope,
) -> Report {
    let (files, reported, mut errors) = scoped_files(paths, excludes, scope);
    DONE.store(0, Ordering::Relaxed);
    TOTAL.store(files.len(), Ordering::Relaxed);
    // Each file's cargo package, known before pass one: a file in none has its module items
    // scanned from the text pass one reads, so finding its unit reads nothing again.
    let disk = units::RealDisk;
    let mut ancestry = units::Ancestry::default();
    let cargo: Vec<Option<PathBuf>> = files
        .iter()
        .map(|f| {
            if config.crate_index {
                ancestry.cargo(&disk, f)
            } else {
                None
            }
        })
        .collect();
    let first: Vec<(FirstPass, Option<ModFacts>)> =
        parallel(files.len(), threads, &mut errors, |i| {
            let path = &files[i];
            let shown = walk::display(path);
            let parsed_before = parse::parses_here();
            let out = match read(path) {
                Ok(text) => {
                    // Pass 2 reads the file again (holding every text between the passes would
                    // make memory grow with the tree): this is how it knows it got the same one.
                    let hash = text_hash(&text);
                    let facts =
                        (config.crate_index && cargo[i].is_none()).then(|| units::scan(&text));
                    let len = text.len();
                    let src = SourceFile::new(shown, text).with_real_path(path.clone());
                    let report = lint::lint_per_file(&src, config);
                    // Only files with findings, or comments that may silence a crate finding or
                    // be reported unused, are finished later: hold no other text.
                    let keep = !report.diagnostics.is_empty() || src.text.contains("timeoutlint:");
                    // A context file is read for its crate's join only.
                    let src = (keep && reported[i]).then_some(src);
                    let first = FirstPass {
                        src,
                        report,
                        hash: Some(hash),
                        len,
                    };
                    (first, facts)
                }
                Err(message) => {
                    let report = FileReport {
                        error: Some(FileError {
                            path: shown,
                            line: None,
                            column: None,
                            message,
                        }),
                        ..FileReport::default()
                    };
                    let first = FirstPass {
                        src: None,
                        report,
                        hash: None,
                        len: 0,
                    };
                    (first, None)
                }
            };
            let parses = parse::parses_here() - parsed_before;
            Tally::add(tally, Pass::PerFile, path, 1, parses);
            DONE.fetch_add(1, Ordering::Relaxed);
            out
        });
    let (mut results, facts): (Vec<FirstPass>, Vec<Option<ModFacts>>) = first.into_iter().unzip();
    // The crate join also brings in the crate's own retry wrappers, whatever rules run.
    // So do the answers of the helpers that other files define and a file's loops ask about.
    if config.crate_rules()
        || results
            .iter()
            .any(|r| !r.report.wrappers.is_empty() || !r.report.foreign.is_empty())
    {
        let units = if config.crate_index {
            Units::find(&files, &cargo, &facts, &disk, &mut ancestry)
        } else {
            Units::each_alone(&files)
        };
        drop(facts);
        join_units(
            &files,
            &mut results,
            &units,
            config,
            threads,
            &mut errors,
            read,
            tally,
        );
    } else {
        drop(facts);
    }
    let mut out = Vec::new();
    let mut skipped = 0;
    // Context files are not reported.
    for (first, _) in results.into_iter().zip(&reported).filter(|(_, r)| **r) {
        let FirstPass {
            src, mut report, ..
        } = first;
        // Left unparsed by pass one (the prefilter, or test code): not "checked".
        skipped += usize::from(!report.parsed && report.error.is_none());
        if let Some(e) = report.error {
            errors.push(e);
        }
        if let Some(src) = src {
            lint::finish(&src, config, &mut report.diagnostics, &report.test_code);
            if !report.diagnostics.is_empty() {
                out.push((src, report.diagnostics));
            }
        }
    }
    errors.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    Report {
        files: out,
        errors,
        files_checked: reported.iter().filter(|r| **r).count() - skipped,
        files_skipped: skipped,
        rules: config.rules.clone(),
    }
}

/// A cheap fingerprint of a file's text, to notice that a file changed between the passes: a
/// word at a time, since every file read is hashed. Each step is a bijection of the
/// state, so any one changed word, or a changed length, changes the result; it guards against
/// edits, not adversaries.
fn text_hash(text: &str) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let bytes = text.as_bytes();
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(word))
            .wrapping_mul(K)
            .rotate_left(31);
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    (h ^ u64::from_le_bytes(last)).wrapping_mul(K)
}

/// The error of a file whose text changed between the two passes of a run: its findings would
/// mix two texts, so it has none this run.
fn changed_during_run(path: &Path) -> FileError {
    FileError {
        path: walk::display(path),
        line: None,
        column: None,
        message: "changed while it was being linted; not checked, run again".into(),
    }
}

/// Run `work(0..n)` on `threads` big-stack workers; results in index order.
pub(crate) fn parallel<T: Send>(
    n: usize,
    threads: usize,
    errors: &mut Vec<FileError>,
    work: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(n));
    std::thread::scope(|scope| {
        for _ in 0..threads.min(n).max(1) {
            let builder = std::thread::Builder::new()
                .name("timeoutlint-worker".into())
                .stack_size(WORKER_STACK);
            let spawned = builder.spawn_scoped(scope, || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = work(i);
                results
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push((i, r));
            });
            if let Err(e) = spawned {
                errors.push(FileError {
                    path: String::new(),
                    line: None,
                    column: None,
                    message: format!("cannot start a worker thread: {e}"),
                });
                break;
            }
        }
    });
    let mut results = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    results.sort_by_key(|r| r.0);
    results.into_iter().map(|r| r.1).collect()
}

/// Pass 2's answer for one file: its summary with the text it was made from, or an error saying
/// whether the file changed since pass 1 (`true`).
type Summary = Result<Option<(ClientSummary, SourceFile)>, (FileError, bool)>;

/// What pass one keeps of a file until the run is finished.
struct FirstPass {
    /// The text, for a file with findings or suppression comments.
    src: Option<SourceFile>,
    report: FileReport,
    /// The text's hash, for the join to know it read the same text (`None`: unreadable).
    hash: Option<u64>,
    /// The text's length, for the join's budget.
    len: usize,
}

/// Pass 2: the units ([`crate::walk::units`]: the cargo package, else the Bazel or Buck
/// target, the module tree or the directory; each file alone with `--no-index`) where pass 1
/// found a retry site have their files summarised whole and joined; the crate-level findings
/// are added to their files. A unit without a site cannot hold a crate-level finding, and
/// most have none, so most files are never parsed whole.
///
/// One unit at a time (its files in parallel), and a unit over the budget in pieces: all the
/// join holds (texts, summaries, the index) is one unit's or one piece's, released before the
/// next. Each file is read once here (its hash checked against pass 1's), and the text of a
/// file with a summary is held until its piece is done, so a file holding a crate finding is
/// not read a third time; its tree cannot be held (a syntax tree stays on the worker thread
/// that built it), so that file alone is parsed again, on the workers.
#[allow(clippy::too_many_arguments)]
fn join_units(
    files: &[PathBuf],
    results: &mut [FirstPass],
    units: &Units,
    config: &Config,
    threads: usize,
    errors: &mut Vec<FileError>,
    read: &(dyn Fn(&PathBuf) -> Result<String, String> + Sync),
    tally: Option<&Tally>,
) {
    let budget = tally.and_then(|t| t.budget).unwrap_or(JOIN_BUDGET).max(1);
    for unit in &units.units {
        if !unit.files.iter().any(|&i| results[i].report.has_sites) {
            continue;
        }
        // The unit's retry wrappers, from every piece: a file that names one is linted again
        // with them known (its calls are retry sites), and gives its summary from that parse.
        let mut known: Vec<Wrapper> = unit
            .files
            .iter()
            .flat_map(|&i| results[i].report.wrappers.iter().cloned())
            .collect();
        // With the functions that hand their operation or request on to one, across files.
        let delegations: Vec<_> = unit
            .files
            .iter()
            .flat_map(|&i| results[i].report.delegations.iter().cloned())
            .collect();
        close_across_files(
            files,
            &unit.files,
            &mut known,
            delegations,
            config,
            threads,
            errors,
            read,
        );
        // What the unit's other files answer for the helpers its retry loops call and do not
        // define: a file whose loops asked about one of them is linted again with it known.
        let helpers = unit_helpers(
            files,
            results,
            &unit.files,
            config,
            threads,
            errors,
            read,
            tally,
        );
        let pieces = pieces(&unit.files, |i| results[i].len, budget);
        if pieces.len() > 1 {
            let bytes: usize = unit.files.iter().map(|&i| results[i].len).sum();
            eprintln!(
                "warning: {}: {} files, {} MB of source, over the crate join's {} MB: its cross-file findings are joined in {} pieces, and links between pieces are not followed",
                walk::display(&unit.root),
                unit.files.len(),
                bytes >> 20,
                budget >> 20,
                pieces.len()
            );
        }
        for (n, piece) in pieces.iter().enumerate() {
            let held = join_piece(
                files, results, piece, &known, &helpers, config, threads, errors, read, tally,
            );
            Tally::hold(
                tally,
                Held {
                    kind: unit.kind,
                    root: unit.root.clone(),
                    piece: (n, pieces.len()),
                    files: piece.len(),
                    bytes: piece.iter().map(|&i| results[i].len).sum(),
                    summaries: held.0,
                    text_bytes: held.1,
                },
            );
        }
    }
}

/// Close the unit's wrappers over its hand-offs ([`crate::analysis::wrappers::close`]), with
/// the hand-offs pass one could not see. Pass one records a file's hand-offs from what its
/// masked parse kept, and a function that only hands its request to another file's wrapper
/// (`fn execute_raw(&self, req) { self.requester(r).execute(cfg, req) }`) holds none of the
/// words that keep it. So each file of the unit that calls a wrapper by name, and can hold a
/// parameter to hand on (it names a request type, or a closure trait), is parsed whole once
/// and says its hand-offs; the wrappers they make are asked about in turn, as deep as
/// [`CHAIN`](crate::analysis::wrappers::CHAIN). A crate without wrappers reads nothing here.
#[allow(clippy::too_many_arguments)]
fn close_across_files(
    files: &[PathBuf],
    unit_files: &[usize],
    known: &mut Vec<Wrapper>,
    mut delegations: Vec<crate::analysis::wrappers::Delegation>,
    config: &Config,
    threads: usize,
    errors: &mut Vec<FileError>,
    read: &(dyn Fn(&PathBuf) -> Result<String, String> + Sync),
) {
    use crate::analysis::wrappers::{close, CHAIN};
    close(known, &delegations);
    let handed_types: Vec<&str> = config
        .apis
        .clients
        .request_types
        .iter()
        .filter_map(|t| t.rsplit("::").next())
        .collect();
    let mut asked = vec![false; unit_files.len()];
    let mut names: BTreeSet<String> = known.iter().map(|w| w.name.clone()).collect();
    for _ in 0..CHAIN {
        if names.is_empty() {
            return;
        }
        let todo: Vec<usize> = (0..unit_files.len()).filter(|&m| !asked[m]).collect();
        let found = parallel(todo.len(), threads, errors, |k| {
            let path = &files[unit_files[todo[k]]];
            let Ok(text) = read(path) else {
                return (false, Vec::new());
            };
            let calls = names.iter().any(|n| lint::calls(&text, n));
            if !calls || !(text.contains("Fn") || handed_types.iter().any(|t| text.contains(t))) {
                return (false, Vec::new());
            }
            let src = SourceFile::new(walk::display(path), text).with_real_path(path.clone());
            (true, lint::delegations_of(&src, config).unwrap_or_default())
        });
        let before = known.len();
        for (k, (parsed, found)) in found.into_iter().enumerate() {
            asked[todo[k]] = parsed;
            for d in found {
                if !delegations.contains(&d) {
                    delegations.push(d);
                }
            }
        }
        close(known, &delegations);
        names = known[before..].iter().map(|w| w.name.clone()).collect();
    }
}

/// The answers of the unit's files ([`CrateHelpers`]) for the names its files with a retry
/// site asked about and do not define ([`FileReport::foreign`]): each file of the unit is read
/// again to see which of them its text defines, and the files defining a name that at most
/// [`MAX_DEFINERS`] files define are read once more and parsed whole. A file that cannot be read
/// or parsed answers nothing (pass one or the join reports it); one that changed since pass
/// one is read as it is now, and the join reports the change.
#[allow(clippy::too_many_arguments)]
fn unit_helpers(
    files: &[PathBuf],
    results: &[FirstPass],
    unit: &[usize],
    config: &Config,
    threads: usize,
    errors: &mut Vec<FileError>,
    read: &(dyn Fn(&PathBuf) -> Result<String, String> + Sync),
    tally: Option<&Tally>,
) -> CrateHelpers {
    let asked: std::collections::BTreeSet<String> = unit
        .iter()
        .filter(|&&i| results[i].report.has_sites)
        .flat_map(|&i| results[i].report.foreign.iter().cloned())
        .collect();
    if asked.is_empty() {
        return CrateHelpers::default();
    }
    // Which asked names each file defines, by its text: a name many files define (`handle`
    // in every module of a framework) cannot be told apart by name, so it is not looked up,
    // and a crate's run does not parse its modules whole for it.
    let defined: Vec<Vec<&String>> = parallel(unit.len(), threads, errors, |m| {
        let path = &files[unit[m]];
        let names = match read(path) {
            Ok(text) => asked.iter().filter(|n| lint::defines(&text, n)).collect(),
            Err(_) => Vec::new(),
        };
        Tally::add(tally, Pass::Asked, path, 1, 0);
        names
    });
    let mut definers: std::collections::BTreeMap<&String, usize> =
        std::collections::BTreeMap::new();
    for names in &defined {
        for n in names {
            *definers.entry(*n).or_default() += 1;
        }
    }
    let kept: std::collections::BTreeSet<String> = (definers.into_iter())
        .filter(|&(_, files)| files <= MAX_DEFINERS)
        .map(|(n, _)| n.clone())
        .collect();
    let todo: Vec<usize> = (0..unit.len())
        .filter(|&m| defined[m].iter().any(|n| kept.contains(*n)))
        .collect();
    let answers = parallel(todo.len(), threads, errors, |k| {
        let path = &files[unit[todo[k]]];
        let parsed_before = parse::parses_here();
        let answer = read(path).ok().and_then(|text| {
            let src = SourceFile::new(walk::display(path), text).with_real_path(path.clone());
            lint::helpers_of(&src, config, &kept).ok()
        });
        let parses = parse::parses_here() - parsed_before;
        Tally::add(tally, Pass::Helpers, path, 1, parses);
        answer
    });
    CrateHelpers::join(answers.into_iter().flatten())
}

/// `files` in order, cut into runs of at most `budget` bytes (`len` of each); a file over it
/// alone is a run of its own.
fn pieces(files: &[usize], len: impl Fn(usize) -> usize, budget: usize) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut bytes = 0;
    for &i in files {
        let l = len(i);
        match out.last_mut() {
            Some(last) if bytes + l <= budget => {
                last.push(i);
                bytes += l;
            }
            _ => {
                out.push(vec![i]);
                bytes = l;
            }
        }
    }
    out
}

/// Join one unit, or one piece of one, with the unit's `known` wrappers and `helpers`:
/// summaries, index, crate findings. Returns what it held at once: (summaries, bytes of text).
#[allow(clippy::too_many_arguments)]
fn join_piece(
    files: &[PathBuf],
    results: &mut [FirstPass],
    crate_files: &[usize],
    known: &[Wrapper],
    helpers: &CrateHelpers,
    config: &Config,
    threads: usize,
    errors: &mut Vec<FileError>,
    read: &(dyn Fn(&PathBuf) -> Result<String, String> + Sync),
    tally: Option<&Tally>,
) -> (usize, usize) {
    let hashes: Vec<Option<u64>> = crate_files.iter().map(|&i| results[i].hash).collect();
    // Files whose loops asked about a helper another file answers for.
    let answered: Vec<bool> = crate_files
        .iter()
        .map(|&i| helpers.answers_any(results[i].report.foreign.iter()))
        .collect();
    let relinted: Mutex<Vec<(usize, SourceFile, FileReport)>> = Mutex::new(Vec::new());
    let summaries: Vec<Summary> = parallel(crate_files.len(), threads, errors, |m| {
        let path = &files[crate_files[m]];
        let parsed_before = parse::parses_here();
        let text = read(path);
        // Unreadable files were reported by pass 1.
        let summary = match (text, hashes[m]) {
            (Ok(text), Some(hash)) if text_hash(&text) == hash => {
                let src = SourceFile::new(walk::display(path), text).with_real_path(path.clone());
                if answered[m] || known.iter().any(|w| src.text.contains(w.name.as_str())) {
                    match lint::relint_with_crate(&src, config, known, helpers) {
                        Ok((report, summary)) => {
                            relinted
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .push((crate_files[m], src.clone(), report));
                            Ok(summary.filter(|_| config.crate_rules()).map(|s| (s, src)))
                        }
                        Err(e) => Err((e, false)),
                    }
                } else if config.crate_rules() {
                    lint::summarize_whole(&src, config)
                        .map(|s| s.map(|s| (s, src)))
                        .map_err(|e| (e, false))
                } else {
                    Ok(None)
                }
            }
            (Ok(_), Some(_)) => Err((changed_during_run(path), true)),
            _ => Ok(None),
        };
        let parses = parse::parses_here() - parsed_before;
        Tally::add(tally, Pass::Join, path, 1, parses);
        summary
    });
    let relinted = relinted
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // What is held now, all at once: the summaries with their texts, and the re-linted texts.
    let held = (
        summaries
            .iter()
            .filter(|s| matches!(s, Ok(Some(_))))
            .count(),
        summaries
            .iter()
            .filter_map(|s| s.as_ref().ok()?.as_ref().map(|(_, src)| src.text.len()))
            .sum::<usize>()
            + relinted.iter().map(|r| r.1.text.len()).sum::<usize>(),
    );
    // The new findings replace pass one's (the same rules over the whole text, plus the
    // wrapper calls' sites).
    for (i, src, report) in relinted {
        let r = &mut results[i];
        r.report.diagnostics = report.diagnostics;
        r.report.has_sites = report.has_sites;
        if r.src.is_none() && !r.report.diagnostics.is_empty() {
            r.src = Some(src);
        }
    }
    if !config.crate_rules() {
        return held;
    }
    let mut by_file: std::collections::HashMap<usize, ClientSummary> =
        std::collections::HashMap::new();
    // The texts of the files with a summary, the only ones that can hold a crate finding.
    let mut texts: std::collections::HashMap<usize, SourceFile> = std::collections::HashMap::new();
    for (&i, summary) in crate_files.iter().zip(summaries) {
        match summary {
            Ok(Some((s, src))) => {
                by_file.insert(i, s);
                // Pass 1 may hold the text already.
                if results[i].src.is_none() {
                    texts.insert(i, src);
                }
            }
            Ok(None) => {}
            // A file masking let pass 1 read may still be rejected whole; a file that
            // changed since pass 1 loses its pass-1 findings too (they are of the old text).
            Err((e, changed)) => {
                let r = &mut results[i];
                if changed {
                    r.src = None;
                    r.report.diagnostics.clear();
                    r.report.error = Some(e);
                } else if r.report.error.is_none() {
                    r.report.error = Some(e);
                }
            }
        }
    }
    let joined: Vec<&ClientSummary> = crate_files.iter().filter_map(|i| by_file.get(i)).collect();
    let index = CrateIndex::build(&joined);
    let holding: Vec<usize> = crate_files
        .iter()
        .copied()
        .filter(|i| {
            by_file
                .get(i)
                .is_some_and(|s| index.has_findings_in(&s.path))
        })
        .collect();
    let shared: &[FirstPass] = results;
    let found: Vec<Vec<Diagnostic>> = parallel(holding.len(), threads, errors, |m| {
        let i = holding[m];
        let Some(src) = shared[i].src.as_ref().or_else(|| texts.get(&i)) else {
            return Vec::new();
        };
        let parsed_before = parse::parses_here();
        let found = lint::crate_findings(&index, src, config);
        Tally::add(
            tally,
            Pass::CrateFindings,
            &files[i],
            0,
            parse::parses_here() - parsed_before,
        );
        found
    });
    for (i, found) in holding.into_iter().zip(found) {
        let r = &mut results[i];
        if r.src.is_none() {
            r.src = texts.remove(&i);
        }
        r.report.diagnostics.extend(found);
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::apis::Apis;

    /// A crate fixture with cross-file findings, linted with every rule: each pass reads each
    /// file at most once and parses it at most once, the join reads no file pass one could not
    /// read, and the crate-findings step reads nothing (it reuses the join's text).
    #[test]
    fn each_pass_reads_and_parses_a_file_at_most_once() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/client-timeout-in-retry");
        let config = Config::new(crate::rules::ALL.to_vec(), Apis::builtin());
        let tally = Tally::default();
        let read = |p: &PathBuf| walk::read(p, config.max_file_bytes);
        let report = lint_paths_tallied(std::slice::from_ref(&dir), &[], &config, 2, &read, &tally);
        let counts = tally.counts();
        for ((pass, path), c) in &counts {
            assert!(
                c.reads <= 1 && c.parses <= 1,
                "{pass:?} {}: {c:?}",
                path.display()
            );
            if *pass == Pass::CrateFindings {
                assert_eq!(c.reads, 0, "{}", path.display());
            }
        }
        let in_pass = |p: Pass| counts.keys().filter(|(q, _)| *q == p).count();
        // The fixture exercises every pass, or the bounds above would hold vacuously.
        assert!(in_pass(Pass::PerFile) >= 5, "{counts:?}");
        assert!(in_pass(Pass::Join) >= 1, "{counts:?}");
        assert!(in_pass(Pass::CrateFindings) >= 1, "{counts:?}");
        assert!(report
            .files
            .iter()
            .flat_map(|(_, ds)| ds)
            .any(|d| d.rule.name == "client-timeout-in-retry"));
        // The tally changes nothing: the same findings as a plain run.
        let plain = lint_paths(&[dir], &[], &config, 2);
        let keys = |r: &Report| -> Vec<(String, usize, &'static str)> {
            r.files
                .iter()
                .flat_map(|(s, ds)| {
                    ds.iter()
                        .map(|d| (s.path.clone(), d.primary.start, d.rule.name))
                })
                .collect()
        };
        assert_eq!(keys(&report), keys(&plain));
    }
}
