//! Command line: arguments, the worker pool, output and the exit code. The edge of the program,
//! where IO is allowed.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
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
        match crate::fix_edge::run(&args.fixes, &report, &config, &mut stdout)? {
            crate::fix_edge::Outcome::Diff(code) => return Ok(code),
            // What is left is reported as usual, from the files as now written.
            crate::fix_edge::Outcome::Wrote(n) if n > 0 => {
                report = lint_paths(&args.paths, &resolved.excludes, &config, threads);
            }
            crate::fix_edge::Outcome::Wrote(_) => {}
        }
    }
    adopt_run.linted(&args.adopt, &args.paths, &resolved.excludes, &mut report)?;
    if args.adopt.add_ignore {
        return crate::adopt::add_ignore(&report);
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
    let (files, mut errors) = walk::rust_files(paths, excludes);
    crate::adopt::progress_total(files.len());
    let mut results: Vec<(Option<SourceFile>, FileReport)> =
        parallel(files.len(), threads, &mut errors, |i| {
            let path = &files[i];
            let shown = walk::display(path);
            let out = match walk::read(path, config.max_file_bytes) {
                Ok(text) => {
                    let src = SourceFile::new(shown, text);
                    let report = lint::lint_per_file(&src, config);
                    // Only files with findings, or comments that may silence a crate finding or
                    // be reported unused, are finished later: hold no other text.
                    let keep = !report.diagnostics.is_empty() || src.text.contains("timeoutlint:");
                    (keep.then_some(src), report)
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
                ),
            };
            crate::adopt::progress_tick();
            out
        });
    if config.crate_rules() {
        join_crates(&files, &mut results, config, threads, &mut errors);
    }
    let mut out = Vec::new();
    for (src, mut report) in results {
        if let Some(e) = report.error {
            errors.push(e);
        }
        if let Some(src) = src {
            lint::finish(&src, config, &mut report.diagnostics);
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

/// Run `work(0..n)` on `threads` big-stack workers; results in index order.
fn parallel<T: Send>(
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
    results: &mut [(Option<SourceFile>, FileReport)],
    config: &Config,
    threads: usize,
    errors: &mut Vec<FileError>,
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
        let summaries: Vec<Result<Option<ClientSummary>, FileError>> =
            parallel(crate_files.len(), threads, errors, |m| {
                let path = &files[crate_files[m]];
                // Unreadable files were reported by pass 1.
                let Ok(text) = walk::read(path, config.max_file_bytes) else {
                    return Ok(None);
                };
                lint::summarize_whole(&SourceFile::new(walk::display(path), text), config)
            });
        let mut by_file: std::collections::HashMap<usize, ClientSummary> =
            std::collections::HashMap::new();
        for (&i, summary) in crate_files.iter().zip(summaries) {
            match summary {
                Ok(Some(s)) => {
                    by_file.insert(i, s);
                }
                Ok(None) => {}
                // A file masking let pass 1 read may still be rejected whole.
                Err(e) => {
                    if results[i].1.error.is_none() {
                        results[i].1.error = Some(e);
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
            let (src, report) = &mut results[i];
            if src.is_none() {
                match walk::read(&files[i], config.max_file_bytes) {
                    Ok(text) => *src = Some(SourceFile::new(summary.path.clone(), text)),
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
            if r.fixable { "yes" } else { "no" },
            r.summary
        );
    }
    s
}

/// Render every requested output and write it. Report files are written whatever the findings;
/// a file that cannot be written is reported and the others are still written (`false`).
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
            None => {
                stdout.write_all(text.as_bytes())?;
                stdout.flush()?;
            }
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

fn parse_output(s: &str) -> Result<OutputSpec, String> {
    let (name, path) = match s.split_once('=') {
        Some((n, p)) if !p.is_empty() => (n, Some(PathBuf::from(p))),
        Some(_) => return Err("expected FORMAT=PATH, e.g. `sarif=results.sarif`".into()),
        None => (s, None),
    };
    let format = Format::from_str(name, false)?;
    Ok(OutputSpec { format, path })
}
