//! Command line: arguments, the worker pool, output and the exit code. The edge of the program,
//! where IO is allowed.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use clap::{Parser, Subcommand, ValueEnum};

use crate::analysis::clients::ClientSummary;
use crate::analysis::index::CrateIndex;
use crate::diagnostic::FileError;
use crate::emit::{self, Report};
use crate::lint::{self, Config, FileReport};
use crate::parse::WORKER_STACK;
use crate::rules;
use crate::source::SourceFile;
use crate::walk;

/// Finds retry and timeout misconfigurations in Rust code that calls remote services.
#[derive(Debug, Parser)]
#[command(name = "timeoutlint", version, args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Files or directories to lint (a directory named like a subcommand: `./rules`).
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Output format on stdout [default: human].
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// cargo's spelling for editors: `json` is `--format cargo-json`, `short` is `concise`.
    #[arg(long, value_enum, value_name = "FMT", conflicts_with = "format")]
    message_format: Option<MessageFormat>,
    /// Also write FORMAT to PATH, whatever the exit code (repeatable; stdout without `=PATH`),
    /// e.g. `--output sarif=results.sarif --output github`.
    #[arg(long, value_name = "FORMAT[=PATH]", value_parser = parse_output)]
    output: Vec<OutputSpec>,
    /// When to colour human output.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Glob of paths to skip (repeatable), matched like a .gitignore line.
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Run only these rules (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    select: Vec<String>,
    /// Run these rules too, on top of the defaults (e.g. pedantic ones).
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    extend_select: Vec<String>,
    /// Do not run these rules.
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    ignore: Vec<String>,
    /// Skip files larger than this many bytes (reported as errors).
    #[arg(long, value_name = "BYTES", default_value_t = crate::parse::DEFAULT_MAX_FILE_BYTES)]
    max_file_size: u64,
    /// Parse every file, even those that cannot hold a finding (slower; same findings).
    #[arg(long, hide = true)]
    no_prefilter: bool,
    /// Lint every file as its own crate (skip the cross-file index; for measuring its cost).
    #[arg(long, hide = true)]
    no_index: bool,
    /// Exit 0 even when there are findings.
    #[arg(long)]
    exit_zero: bool,
    #[command(flatten)]
    adopt: crate::adopt::AdoptArgs,
    #[command(flatten)]
    fixes: crate::fix_edge::FixArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the rule table.
    Rules,
    /// Print a rule's documentation.
    Rule {
        /// Rule name, e.g. `unbounded-retry`.
        name: String,
    },
    #[command(flatten)]
    Adopt(crate::adopt::AdoptCommand),
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Human,
    Concise,
    Json,
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// cargo's `--message-format=json` lines, for rust-analyzer and rustfix.
    CargoJson,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum MessageFormat {
    Json,
    Short,
    Human,
}

/// One `--output`: a format and a file, or stdout.
#[derive(Debug, Clone)]
struct OutputSpec {
    format: Format,
    path: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Color {
    Auto,
    Always,
    Never,
}

/// Entry point of the binary.
#[must_use]
pub fn main() -> ExitCode {
    main_from(std::env::args_os())
}

/// Entry point with explicit arguments (the first is the program name): `cargo-timeoutlint`
/// calls this after translating cargo's package selection into paths.
pub fn main_from(command_line: impl IntoIterator<Item = std::ffi::OsString>) -> ExitCode {
    let args = match Args::try_parse_from(command_line) {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(&args) {
        Ok(code) => ExitCode::from(code),
        // Output cut short by its reader (`timeoutlint rules | head -1`, `--diff | head`): the
        // reader had what it wanted; exit quietly and successfully, as ripgrep does. The lint
        // output itself keeps the lint's exit code instead (`write_outputs`).
        Err(e) if crate::console::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> anyhow::Result<u8> {
    let mut stdout = std::io::stdout().lock();
    match &args.command {
        Some(Command::Rules) => {
            stdout.write_all(rules_table().as_bytes())?;
            return Ok(0);
        }
        Some(Command::Rule { name }) => {
            if let Some(r) = rules::by_name(name) {
                stdout.write_all(r.doc.as_bytes())?;
                return Ok(0);
            }
            anyhow::bail!(
                "unknown rule `{name}`{}; `timeoutlint rules` lists them",
                did_you_mean(name)
            );
        }
        Some(Command::Adopt(c)) => return crate::adopt::run_command(c, &mut stdout),
        None => {}
    }
    let started = std::time::Instant::now();
    check_output_paths(args)?;
    let selection = crate::config::CliSelection {
        select: args.select.clone(),
        extend_select: args.extend_select.clone(),
        ignore: args.ignore.clone(),
        exclude: args.exclude.clone(),
    };
    let resolved = crate::adopt::resolve(&args.paths, &args.adopt, &selection)?;
    let mut config = resolved.lint_config();
    config.prefilter = !args.no_prefilter;
    config.max_file_bytes = args.max_file_size;
    config.crate_index = !args.no_index;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
        .max(1);
    let mut adopt_run = crate::adopt::Run::start(&args.adopt, started);
    let mut report = lint_paths(&args.paths, &resolved.excludes, &config, threads);
    if args.fixes.active() {
        let mut relint = |overlay: &Overlay| {
            lint_paths_with(&args.paths, &resolved.excludes, &config, threads, overlay)
        };
        match crate::fix_edge::run(&args.fixes, report, threads, &mut stdout, &mut relint)? {
            crate::fix_edge::Outcome::Diff(code) => return Ok(code),
            // What is left is reported as usual, from the files as now written.
            crate::fix_edge::Outcome::Fixed(left) => report = left,
        }
    }
    adopt_run.linted(&args.adopt, &args.paths, &resolved.excludes, &mut report)?;
    if args.adopt.add_ignore {
        return crate::adopt::add_ignore(&report, &config);
    }
    let wrote_all = write_outputs(args, &report, &mut stdout)?;
    let adopt_failed = adopt_run.finish(&args.adopt, &report);
    if !report.errors.is_empty() || !wrote_all {
        return Ok(2);
    }
    Ok(u8::from(
        (report.finding_count() > 0 && !args.exit_zero) || adopt_failed,
    ))
}

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
    crate::adopt::progress_total(files.len());
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
            crate::adopt::progress_tick();
            out
        });
    if config.crate_rules() {
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
                lint::summarize_whole(&src, config).map_err(|e| (e, false))
            });
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

fn did_you_mean(name: &str) -> String {
    rules::ALL
        .iter()
        .map(|r| (strsim_distance(name, r.name), r.name))
        .min()
        .filter(|(d, _)| *d <= 4)
        .map_or(String::new(), |(_, n)| format!(" (did you mean `{n}`?)"))
}

/// Levenshtein distance; rule names are short, so the quadratic table is fine.
pub(crate) fn strsim_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The rule table printed by `timeoutlint rules` (and shown in the README).
#[must_use]
pub fn rules_table() -> String {
    let mut s = String::from("| rule | default | fix | what it finds |\n|---|---|---|---|\n");
    for r in rules::ALL {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} |",
            r.name,
            if r.default_enabled {
                "on"
            } else {
                "off (pedantic)"
            },
            fix_column(r),
            r.summary
        );
    }
    s
}

/// The table's `fix` column: what `--fix` does with the rule's fixes, by the best applicability
/// they reach. `yes`: `--fix` applies some (`MachineApplicable`; other shapes may need
/// `--unsafe-fixes`); `unsafe`: only `--unsafe-fixes` applies them (`MaybeIncorrect`);
/// `placeholder`: shown with a value to choose, never applied (`HasPlaceholders`); `no`: help
/// text only. `Rule` records only whether a rule may fix, so the levels are listed here until
/// it carries them; a catalogue test checks this list against the fixtures' fixes.
fn fix_column(r: &rules::Rule) -> &'static str {
    if !r.fixable {
        return "no";
    }
    match r.name {
        "blocking-sleep-in-async" | "non-idempotent-retry-without-key" | "unused-suppression" => {
            "yes"
        }
        "unbounded-retry" => "placeholder",
        _ => "unsafe",
    }
}

/// Render every requested output and write it. Report files are written whatever the findings;
/// a file that cannot be written is reported and the others are still written (`false`).
/// A stdout closed by its reader (`timeoutlint | head -1`) ends the stdout output quietly and
/// keeps the exit code the findings give: a pipeline under `pipefail` still fails on findings.
fn write_outputs(args: &Args, report: &Report, stdout: &mut impl Write) -> anyhow::Result<bool> {
    let main = args.format.or(match args.message_format {
        Some(MessageFormat::Json) => Some(Format::CargoJson),
        Some(MessageFormat::Short) => Some(Format::Concise),
        Some(MessageFormat::Human) => Some(Format::Human),
        None => None,
    });
    let mut outputs: Vec<OutputSpec> = main
        .map(|format| OutputSpec { format, path: None })
        .into_iter()
        .chain(args.output.iter().cloned())
        .collect();
    if outputs.is_empty() {
        outputs.push(OutputSpec {
            format: Format::Human,
            path: None,
        });
    }
    if outputs.iter().filter(|o| o.path.is_none()).count() > 1 {
        anyhow::bail!(
            "only one output can go to stdout; give the others a path (`--output FORMAT=PATH`)"
        );
    }
    let crates = if outputs.iter().any(|o| o.format == Format::CargoJson) {
        let paths = report.files.iter().map(|(f, _)| f.path.as_str());
        walk::crate_targets(paths.chain(report.errors.iter().map(|e| e.path.as_str())))
    } else {
        std::collections::BTreeMap::new()
    };
    let mut ok = true;
    for o in &outputs {
        let color = o.path.is_none()
            && match args.color {
                Color::Always => true,
                Color::Never => false,
                Color::Auto => {
                    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
                }
            };
        let text = match o.format {
            Format::Human => emit::human::render(report, color),
            Format::Concise => emit::concise::render(report),
            Format::Json => emit::json::render(report),
            Format::Sarif => emit::sarif::render(report),
            Format::Github => emit::github::render(report),
            Format::CargoJson => emit::rustc_json::render(report, &crates),
        };
        match &o.path {
            None => match stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                Err(e) => {
                    eprintln!("error: cannot write to stdout: {e}");
                    ok = false;
                }
            },
            Some(path) => {
                if let Err(e) =
                    std::fs::File::create(path).and_then(|mut f| f.write_all(text.as_bytes()))
                {
                    eprintln!("error: cannot write {}: {e}", path.display());
                    ok = false;
                }
            }
        }
    }
    Ok(ok)
}

/// Refuse, before anything runs, report files that would overwrite each other or a file being
/// linted (`--output json=src/lib.rs src/lib.rs` used to replace the source with the report).
fn check_output_paths(args: &Args) -> anyhow::Result<()> {
    let mut seen: Vec<(PathBuf, &Path)> = Vec::new();
    let inputs: Vec<(PathBuf, bool)> = args
        .paths
        .iter()
        .map(|p| (resolved_path(p), p.is_dir()))
        .collect();
    for path in args.output.iter().filter_map(|o| o.path.as_deref()) {
        let at = resolved_path(path);
        if let Some((_, first)) = seen.iter().find(|(p, _)| *p == at) {
            anyhow::bail!(
                "two --output options write to the same file ({} and {}); give each its own path",
                first.display(),
                path.display()
            );
        }
        let is_input = inputs.iter().any(|(input, dir)| {
            *input == at
                || (*dir && at.starts_with(input) && at.extension().is_some_and(|x| x == "rs"))
        });
        if is_input {
            anyhow::bail!(
                "--output {} would overwrite a file being linted; write the report elsewhere",
                path.display()
            );
        }
        seen.push((at, path));
    }
    Ok(())
}

/// `path` absolute, with links resolved as far as it exists (a report file is often new).
fn resolved_path(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let abs = std::env::current_dir().unwrap_or_default().join(path);
    match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .unwrap_or_else(|_| dir.to_path_buf())
            .join(name),
        _ => abs,
    }
}

fn parse_output(s: &str) -> Result<OutputSpec, String> {
    let (name, path) = match s.split_once('=') {
        Some((n, p)) if !p.is_empty() => (n, Some(PathBuf::from(p))),
        Some(_) => return Err("expected FORMAT=PATH, e.g. `sarif=results.sarif`".into()),
        None => (s, None),
    };
    let format = Format::from_str(name, false)?;
    Ok(OutputSpec { format, path })
}
