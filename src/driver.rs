//! The driver: one run of the linter, in order. It plans the run (the walk gives the files,
//! the configuration says which rules and whether the crate pass runs), runs pass one over
//! every file on the worker pool, joins the crates where pass one found a retry site (pass
//! two), then finishes every file (precedence, suppressions, configuration) into the
//! [`Report`] the edge prints. It reads files only through the reader it is given (by default
//! [`walk::read`]); arguments, output and the exit code are the edge's (`cli`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::analysis::clients::ClientSummary;
use crate::analysis::index::CrateIndex;
use crate::analysis::wrappers::Wrapper;
use crate::base::diagnostic::FileError;
use crate::base::source::SourceFile;
use crate::emit::Report;
use crate::lint::{self, Config, FileReport};
use crate::parse::WORKER_STACK;
use crate::walk;

/// Files done and to do in the current run, for the progress line the edge draws (`adopt`).
pub(crate) static TOTAL: AtomicUsize = AtomicUsize::new(0);
pub(crate) static DONE: AtomicUsize = AtomicUsize::new(0);

/// Texts that stand for files on disk, by the path the walk gives (`--fix` and `--diff` lint
/// their work in progress through it, with every other file of the crate read as usual).
pub type Overlay = std::collections::HashMap<PathBuf, String>;

/// Lint `paths` with `threads` workers. Output order does not depend on the thread count.
///
/// Pass 1 lints every file alone (crate-level rules left out) and notes which files have retry
/// sites; pass 2 parses whole only the files of crates with a site, joins each such crate's
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
    let read = |path: &PathBuf| match overlay.get(path) {
        Some(text) => Ok(text.clone()),
        None => walk::read(path, config.max_file_bytes),
    };
    lint_paths_reading(paths, excludes, config, threads, &read)
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
    let (files, mut errors) = walk::rust_files(paths, excludes);
    DONE.store(0, Ordering::Relaxed);
    TOTAL.store(files.len(), Ordering::Relaxed);
    let mut results: Vec<(Option<SourceFile>, FileReport, Option<u64>)> =
        parallel(files.len(), threads, &mut errors, |i| {
            let path = &files[i];
            let shown = walk::display(path);
            let out = match read(path) {
                Ok(text) => {
                    // Pass 2 reads the file again (holding every text between the passes would
                    // make memory grow with the tree): this is how it knows it got the same one.
                    let hash = text_hash(&text);
                    let src = SourceFile::new(shown, text).with_real_path(path.clone());
                    let report = lint::lint_per_file(&src, config);
                    // Only files with findings, or comments that may silence a crate finding or
                    // be reported unused, are finished later: hold no other text.
                    let keep = !report.diagnostics.is_empty() || src.text.contains("timeoutlint:");
                    (keep.then_some(src), report, Some(hash))
                }
                Err(message) => (
                    None,
                    FileReport {
                        error: Some(FileError {
                            path: shown,
                            line: None,
                            column: None,
                            message,
                        }),
                        ..FileReport::default()
                    },
                    None,
                ),
            };
            DONE.fetch_add(1, Ordering::Relaxed);
            out
        });
    // The crate join also brings in the crate's own retry wrappers, whatever rules run.
    if config.crate_rules() || results.iter().any(|r| !r.1.wrappers.is_empty()) {
        join_crates(&files, &mut results, config, threads, &mut errors, read);
    }
    let mut out = Vec::new();
    for (src, mut report, _) in results {
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
        files_checked: files.len(),
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

/// Pass 2: the crates (nearest `Cargo.toml`; each file alone with `--no-index`) where pass 1
/// found a retry site have their files summarised whole and joined; the crate-level findings
/// are added to their files. A crate without a site cannot hold a crate-level finding, and
/// most crates have none, so most files are never parsed whole.
fn join_crates(
    files: &[PathBuf],
    results: &mut [(Option<SourceFile>, FileReport, Option<u64>)],
    config: &Config,
    threads: usize,
    errors: &mut Vec<FileError>,
    read: &(dyn Fn(&PathBuf) -> Result<String, String> + Sync),
) {
    let mut roots = walk::CrateRoots::default();
    let mut key = |i: usize| {
        if config.crate_index {
            roots.of(&files[i])
        } else {
            Some(files[i].clone())
        }
    };
    let retrying: std::collections::BTreeSet<Option<PathBuf>> = (0..files.len())
        .filter(|&i| results[i].1.has_sites)
        .map(&mut key)
        .collect();
    if retrying.is_empty() {
        return;
    }
    let mut crates: std::collections::BTreeMap<Option<PathBuf>, Vec<usize>> =
        std::collections::BTreeMap::new();
    for i in 0..files.len() {
        let k = key(i);
        if retrying.contains(&k) {
            crates.entry(k).or_default().push(i);
        }
    }
    // One crate at a time, its files in parallel: only one crate's summaries are ever held.
    for crate_files in crates.values() {
        let hashes: Vec<Option<u64>> = crate_files.iter().map(|&i| results[i].2).collect();
        // The crate's retry wrappers: a file that names one is linted again with them known
        // (its calls are retry sites), and gives its summary from that same parse.
        let known: Vec<Wrapper> = crate_files
            .iter()
            .flat_map(|&i| results[i].1.wrappers.iter().cloned())
            .collect();
        let relinted: Mutex<Vec<(usize, SourceFile, FileReport)>> = Mutex::new(Vec::new());
        // An error says whether the file changed since pass 1 (`true`).
        let summaries: Vec<Result<Option<ClientSummary>, (FileError, bool)>> =
            parallel(crate_files.len(), threads, errors, |m| {
                let path = &files[crate_files[m]];
                // Unreadable files were reported by pass 1.
                let (Ok(text), Some(hash)) = (read(path), hashes[m]) else {
                    return Ok(None);
                };
                if text_hash(&text) != hash {
                    return Err((changed_during_run(path), true));
                }
                let src = SourceFile::new(walk::display(path), text).with_real_path(path.clone());
                if known.iter().any(|w| src.text.contains(w.name.as_str())) {
                    let (report, summary) =
                        lint::relint_with_wrappers(&src, config, &known).map_err(|e| (e, false))?;
                    relinted
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push((crate_files[m], src, report));
                    return Ok(summary.filter(|_| config.crate_rules()));
                }
                if !config.crate_rules() {
                    return Ok(None);
                }
                lint::summarize_whole(&src, config).map_err(|e| (e, false))
            });
        // The new findings replace pass one's (the same rules over the whole text, plus the
        // wrapper calls' sites).
        for (i, src, report) in relinted
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
        {
            let (held, old, _) = &mut results[i];
            old.diagnostics = report.diagnostics;
            old.has_sites = report.has_sites;
            if held.is_none() && !old.diagnostics.is_empty() {
                *held = Some(src);
            }
        }
        if !config.crate_rules() {
            continue;
        }
        let mut by_file: std::collections::HashMap<usize, ClientSummary> =
            std::collections::HashMap::new();
        for (&i, summary) in crate_files.iter().zip(summaries) {
            match summary {
                Ok(Some(s)) => {
                    by_file.insert(i, s);
                }
                Ok(None) => {}
                // A file masking let pass 1 read may still be rejected whole; a file that
                // changed since pass 1 loses its pass-1 findings too (they are of the old text).
                Err((e, changed)) => {
                    let (src, report, _) = &mut results[i];
                    if changed {
                        *src = None;
                        report.diagnostics.clear();
                        report.error = Some(e);
                    } else if report.error.is_none() {
                        report.error = Some(e);
                    }
                }
            }
        }
        let joined: Vec<&ClientSummary> =
            crate_files.iter().filter_map(|i| by_file.get(i)).collect();
        let index = CrateIndex::build(&joined);
        for &i in crate_files {
            let Some(summary) = by_file.get(&i) else {
                continue;
            };
            if !index.has_findings_in(&summary.path) {
                continue;
            }
            let (src, report, hash) = &mut results[i];
            if src.is_none() {
                match read(&files[i]) {
                    Ok(text) if Some(text_hash(&text)) == *hash => {
                        *src = Some(
                            SourceFile::new(summary.path.clone(), text)
                                .with_real_path(files[i].clone()),
                        );
                    }
                    Ok(_) => {
                        report.diagnostics.clear();
                        report.error = Some(changed_during_run(&files[i]));
                        continue;
                    }
                    Err(_) => continue,
                }
            }
            if let Some(src) = src {
                report
                    .diagnostics
                    .extend(lint::crate_findings(&index, src, config));
            }
        }
    }
}
