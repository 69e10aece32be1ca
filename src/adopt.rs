//! The adoption workflow's edge: the flags and subcommands that let a big codebase take the linter
//! on (`--config`, `--isolated`, `--baseline`, `--add-ignore`, `--statistics`, `--timings`,
//! `timeoutlint config`, `timeoutlint baseline create|prune`) and the progress line.
//!
//! This module does IO (baseline files, suppression edits, stderr) so that `cli.rs` only gains
//! hooks; the decisions live in the pure `config`, `suppression` and `baseline` modules.
//! Deliberately absent: output formats (the emitters own them) and the exit-code policy beyond
//! "a stale baseline fails under `--strict-baseline`".

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::baseline::{self, Baseline, Outcome};
use crate::config::{self, CliSelection, Resolved};
use crate::emit::Report;
use crate::source::SourceFile;
use crate::walk;

/// Where `baseline create` writes by default.
pub const DEFAULT_BASELINE: &str = "timeoutlint-baseline.json";

/// The reason `--add-ignore` writes, easy to find later.
pub const ADDED_REASON: &str = "accepted when adopting timeoutlint (added by --add-ignore)";

/// Flags of the main command, flattened into `cli::Args`.
// Each bool is an independent command-line switch; clap flags read best as plain fields.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Default, clap::Args)]
pub struct AdoptArgs {
    /// Use this configuration file (`timeoutlint.toml` or a `Cargo.toml`) instead of searching.
    #[arg(long, value_name = "PATH", conflicts_with = "isolated")]
    pub config: Option<PathBuf>,
    /// Ignore every configuration file: built-in defaults plus the command line.
    #[arg(long)]
    pub isolated: bool,
    /// Hide the findings recorded in this baseline (see `timeoutlint baseline create`).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Fail (exit 1) when the baseline lists findings that are gone: prune it.
    #[arg(long, requires = "baseline")]
    pub strict_baseline: bool,
    /// Write a `// timeoutlint: ignore[rule]` comment above every current finding, then exit.
    #[arg(long)]
    pub add_ignore: bool,
    /// Print the number of findings per rule on stderr.
    #[arg(long)]
    pub statistics: bool,
    /// Print how long each phase took on stderr.
    #[arg(long)]
    pub timings: bool,
    /// Never show the progress line (shown on a terminal for runs over half a second).
    #[arg(long)]
    pub no_progress: bool,
}

/// Subcommands, flattened into `cli::Command`.
#[derive(Debug, clap::Subcommand)]
pub enum AdoptCommand {
    /// Print the effective configuration and where each value came from.
    Config(ProjectArgs),
    /// Record today's findings, or drop the entries that no longer match.
    Baseline {
        #[command(subcommand)]
        action: BaselineAction,
    },
}

/// `timeoutlint baseline ..`.
#[derive(Debug, clap::Subcommand)]
pub enum BaselineAction {
    /// Write every current finding to the baseline file.
    Create(BaselineArgs),
    /// Remove entries whose findings are gone (never adds new ones).
    Prune(BaselineArgs),
}

/// The baseline file and the project.
#[derive(Debug, clap::Args)]
pub struct BaselineArgs {
    /// The baseline file.
    #[arg(long, value_name = "FILE", default_value = DEFAULT_BASELINE)]
    pub file: PathBuf,
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// What selects the configuration and the files, for subcommands.
#[derive(Debug, clap::Args)]
pub struct ProjectArgs {
    /// Files or directories.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Use this configuration file instead of searching.
    #[arg(long, value_name = "PATH", conflicts_with = "isolated")]
    pub config: Option<PathBuf>,
    /// Ignore every configuration file.
    #[arg(long)]
    pub isolated: bool,
    /// Run only these rules.
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    pub select: Vec<String>,
    /// Run these rules too.
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    pub extend_select: Vec<String>,
    /// Do not run these rules.
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    pub ignore: Vec<String>,
    /// Glob of paths to skip.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
}

impl ProjectArgs {
    fn selection(&self) -> CliSelection {
        CliSelection {
            select: self.select.clone(),
            extend_select: self.extend_select.clone(),
            ignore: self.ignore.clone(),
            exclude: self.exclude.clone(),
        }
    }
}

/// Find, read and layer the configuration for a lint of `paths`.
pub fn resolve(
    paths: &[PathBuf],
    args: &AdoptArgs,
    cli: &CliSelection,
) -> anyhow::Result<Resolved> {
    let found = config::read_config_files(paths, args.config.as_deref(), args.isolated)?;
    config::resolve(found.as_ref(), cli, &std::env::current_dir()?, paths)
}

/// Run a subcommand of this module.
// This module is part of the IO edge (lib.rs invariant 1): it writes the baseline file.
#[allow(clippy::disallowed_methods)]
pub fn run_command(cmd: &AdoptCommand, out: &mut dyn Write) -> anyhow::Result<u8> {
    match cmd {
        AdoptCommand::Config(p) => {
            let found = config::read_config_files(&p.paths, p.config.as_deref(), p.isolated)?;
            let resolved = config::resolve(
                found.as_ref(),
                &p.selection(),
                &std::env::current_dir()?,
                &p.paths,
            )?;
            out.write_all(config::render(&resolved).as_bytes())?;
            Ok(0)
        }
        AdoptCommand::Baseline { action } => {
            let (args, create) = match action {
                BaselineAction::Create(a) => (a, true),
                BaselineAction::Prune(a) => (a, false),
            };
            let p = &args.project;
            let found = config::read_config_files(&p.paths, p.config.as_deref(), p.isolated)?;
            let resolved = config::resolve(
                found.as_ref(),
                &p.selection(),
                &std::env::current_dir()?,
                &p.paths,
            )?;
            let lint_config = resolved.lint_config();
            let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
            let mut report =
                crate::cli::lint_paths(&p.paths, &resolved.excludes, &lint_config, threads);
            if !report.errors.is_empty() {
                for e in &report.errors {
                    eprintln!("error: {}: {}", e.path, e.message);
                }
                anyhow::bail!("some files could not be analysed; the baseline was not written");
            }
            let next = if create {
                baseline::create(&report, &relative_to(&args.file)?)
            } else {
                let old = read_baseline(&args.file)?;
                let rel = relative_to(&args.file)?;
                let linted = linted_set(&p.paths, &resolved.excludes, &rel);
                let outcome =
                    baseline::apply(&mut report, &old, &rel, &|path| linted.contains(path));
                let pruned = baseline::prune(&old, &outcome);
                eprintln!(
                    "timeoutlint: pruned {} stale entr{} from {}",
                    outcome.stale.len(),
                    if outcome.stale.len() == 1 { "y" } else { "ies" },
                    args.file.display()
                );
                pruned
            };
            std::fs::write(&args.file, baseline::render(&next))
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", args.file.display()))?;
            if create {
                let n: usize = next.findings.iter().map(|e| e.count).sum();
                eprintln!(
                    "timeoutlint: recorded {n} finding{} in {}",
                    if n == 1 { "" } else { "s" },
                    args.file.display()
                );
            }
            Ok(0)
        }
    }
}

fn read_baseline(path: &Path) -> anyhow::Result<Baseline> {
    let bytes = std::fs::read(path)
        .map_err(|e| anyhow::anyhow!("cannot read baseline {}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    baseline::parse(&text).map_err(|e| anyhow::anyhow!("baseline {}: {e}", path.display()))
}

/// The display paths of the files a lint of `paths` covers (a second walk: cheap next to the
/// analysis, and it keeps `lint_paths` unchanged).
fn linted_set(
    paths: &[PathBuf],
    excludes: &[String],
    rel: &dyn Fn(&str) -> String,
) -> BTreeSet<String> {
    let (files, _) = walk::rust_files(paths, excludes);
    files.iter().map(|f| rel(&walk::display(f))).collect()
}

/// Display paths (relative to the working directory) to paths relative to the baseline file's
/// directory; a path outside it stays as displayed.
fn relative_to(baseline: &Path) -> anyhow::Result<impl Fn(&str) -> String> {
    let cwd = std::env::current_dir()?;
    let base = config::normalize(&cwd.join(baseline));
    let dir = base.parent().map_or(cwd.clone(), Path::to_path_buf);
    Ok(move |display: &str| {
        let abs = config::normalize(&cwd.join(display));
        abs.strip_prefix(&dir).map_or_else(
            |_| display.to_string(),
            |p| p.to_string_lossy().replace('\\', "/"),
        )
    })
}

/// State carried through one lint run for the reports printed after it.
pub struct Run {
    started: Instant,
    configured: Instant,
    linted: Option<Instant>,
    outcome: Option<Outcome>,
    progress: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

impl Run {
    /// Start the clock once configuration is resolved (`started` is when the run began), and
    /// the progress line when stderr is a terminal.
    #[must_use]
    pub fn start(args: &AdoptArgs, started: Instant) -> Self {
        let show = !args.no_progress
            && std::io::stderr().is_terminal()
            && std::env::var_os("CI").is_none();
        Self {
            started,
            configured: Instant::now(),
            linted: None,
            outcome: None,
            progress: show.then(spawn_progress),
        }
    }

    /// After linting: stop the progress line and apply the baseline.
    pub fn linted(
        &mut self,
        args: &AdoptArgs,
        paths: &[PathBuf],
        excludes: &[String],
        report: &mut Report,
    ) -> anyhow::Result<()> {
        if let Some((stop, handle)) = self.progress.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
        self.linted = Some(Instant::now());
        if let Some(path) = &args.baseline {
            let b = read_baseline(path)?;
            let rel = relative_to(path)?;
            let linted = linted_set(paths, excludes, &rel);
            self.outcome = Some(baseline::apply(report, &b, &rel, &|p| linted.contains(p)));
        }
        Ok(())
    }

    /// After output: statistics, timings, stale baseline entries on stderr. True when the run
    /// must fail for a reason of this module (`--strict-baseline`).
    #[must_use]
    pub fn finish(&self, args: &AdoptArgs, report: &Report) -> bool {
        let mut err = std::io::stderr().lock();
        if args.statistics {
            let _ = err.write_all(statistics(report).as_bytes());
        }
        let mut failed = false;
        if let Some(o) = &self.outcome {
            for e in &o.stale {
                let f = if e.function.is_empty() {
                    String::new()
                } else {
                    format!(" in `{}`", e.function)
                };
                let _ = writeln!(
                    err,
                    "timeoutlint: stale baseline entry: {} {}{f} ({}x) no longer found; run `timeoutlint baseline prune`",
                    e.rule, e.path, e.count
                );
            }
            if o.hidden > 0 {
                let _ = writeln!(
                    err,
                    "timeoutlint: {} finding(s) hidden by the baseline",
                    o.hidden
                );
            }
            failed = args.strict_baseline && !o.stale.is_empty();
        }
        if args.timings {
            let done = Instant::now();
            let linted = self.linted.unwrap_or(done);
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            // A file count far below 2^52: the rate is exact enough.
            #[allow(clippy::cast_precision_loss)]
            let rate =
                report.files_checked as f64 / (linted - self.configured).as_secs_f64().max(1e-9);
            let _ = writeln!(
                err,
                "timings: configuration {:.1} ms, walk + analysis {:.1} ms ({} files, {:.0} files/s), baseline + output {:.1} ms, total {:.1} ms",
                ms(self.configured - self.started),
                ms(linted - self.configured),
                report.files_checked,
                rate,
                ms(done - linted),
                ms(done - self.started),
            );
        }
        failed
    }
}

/// `--statistics`: findings per rule, most first.
#[must_use]
pub fn statistics(report: &Report) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, d) in report.findings() {
        *counts.entry(d.rule.name).or_default() += 1;
    }
    let mut rows: Vec<(&str, usize)> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut s = String::new();
    for (rule, n) in rows {
        let _ = writeln!(s, "{n:>6}  {rule}");
    }
    let _ = writeln!(
        s,
        "{:>6}  total in {} files checked",
        report.finding_count(),
        report.files_checked
    );
    s
}

// This module is part of the IO edge (lib.rs invariant 1): it edits the linted files.
#[allow(clippy::disallowed_methods)]
/// `--add-ignore`: write a suppression above each finding's line, re-check that every edited
/// file still parses (restoring it otherwise) and report what was written.
pub fn add_ignore(report: &Report) -> anyhow::Result<u8> {
    let mut added = 0;
    let mut files = 0;
    let mut skipped = 0;
    let mut failed = false;
    for (src, diags) in &report.files {
        // A finding on a comment line (a suppression's own finding) cannot be silenced by a
        // comment above it, which would target the next code line: fix those instead.
        let on_code = |d: &&crate::diagnostic::Diagnostic| {
            let line = src.slice(src.line_span(src.line_index(d.primary.start)));
            !line.trim_start().starts_with("//")
        };
        let todo: Vec<_> = diags.iter().filter(on_code).collect();
        skipped += diags.len() - todo.len();
        let new_text = with_suppressions(src, todo.iter().map(|d| (d.primary.start, d.rule.name)));
        if new_text == src.text {
            continue;
        }
        let check = SourceFile::new(src.path.clone(), new_text.clone());
        if crate::parse::parse(&check).is_err() {
            eprintln!(
                "timeoutlint: {}: not edited (the suppressions would not parse)",
                src.path
            );
            skipped += todo.len();
            continue;
        }
        // The real path, never the display one; written whole or not at all.
        if let Err(why) =
            crate::fix_edge::write_fixed(&src.real_path, &src.text, &new_text, &mut |f, b| {
                f.write_all(b)
            })
        {
            eprintln!("error: {}: suppressions not added: {why}", src.path);
            skipped += todo.len();
            failed = true;
            continue;
        }
        added += todo.len();
        files += 1;
    }
    eprintln!("timeoutlint: added suppressions for {added} finding(s) in {files} file(s)");
    if skipped > 0 {
        eprintln!("timeoutlint: {skipped} finding(s) on comment lines or in files that would not parse were left alone");
    }
    for e in &report.errors {
        eprintln!("error: {}: {}", e.path, e.message);
    }
    Ok(if report.errors.is_empty() && !failed {
        0
    } else {
        2
    })
}

/// The text of `src` with one `// timeoutlint: ignore[..]` line above each flagged line (rules
/// of the same line share one comment), indented like that line.
#[must_use]
pub fn with_suppressions<'a>(
    src: &SourceFile,
    findings: impl Iterator<Item = (usize, &'a str)>,
) -> String {
    let mut by_line: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for (at, rule) in findings {
        let names = by_line.entry(src.line_index(at)).or_default();
        if !names.contains(&rule) {
            names.push(rule);
        }
    }
    let mut out = String::with_capacity(src.text.len());
    let mut last = 0;
    for (line, names) in by_line {
        let span = src.line_span(line);
        let text = src.slice(span);
        let indent = &text[..text.len() - text.trim_start().len()];
        out.push_str(&src.text[last..span.start]);
        // In the file's own line ending: a CRLF file stays CRLF.
        let _ = write!(
            out,
            "{indent}// timeoutlint: ignore[{}] {ADDED_REASON}{}",
            names.join(", "),
            src.line_ending()
        );
        last = span.start;
    }
    out.push_str(&src.text[last..]);
    out
}

/// Files done and to do, bumped by `cli::lint_paths`; read by the progress thread.
static TOTAL: AtomicUsize = AtomicUsize::new(0);
static DONE: AtomicUsize = AtomicUsize::new(0);

/// Called by `lint_paths` once the walk is done.
pub fn progress_total(n: usize) {
    DONE.store(0, Ordering::Relaxed);
    TOTAL.store(n, Ordering::Relaxed);
}

/// Called by `lint_paths` after each file.
pub fn progress_tick() {
    DONE.fetch_add(1, Ordering::Relaxed);
}

fn spawn_progress() -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    TOTAL.store(0, Ordering::Relaxed);
    DONE.store(0, Ordering::Relaxed);
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = std::thread::spawn(move || {
        let begun = Instant::now();
        let mut shown = None;
        while !flag.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
            // Short runs stay quiet: the line is for runs long enough to wonder about.
            if begun.elapsed() < Duration::from_millis(500) {
                continue;
            }
            let now = (DONE.load(Ordering::Relaxed), TOTAL.load(Ordering::Relaxed));
            if shown == Some(now) {
                continue;
            }
            if now.1 == 0 {
                eprint!("\rtimeoutlint: finding files");
            } else {
                eprint!("\r\x1b[2Ktimeoutlint: {}/{} files", now.0, now.1);
            }
            shown = Some(now);
        }
        if shown.is_some() {
            eprint!("\r\x1b[2K");
        }
    });
    (stop, handle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suppressions_are_written_above_with_the_line_indent() {
        let src = SourceFile::new("a.rs", "fn f() {\n    loop {}\n}\n");
        let at = src.text.find("loop").unwrap();
        let out = with_suppressions(&src, [(at, "unbounded-retry"), (at, "x")].into_iter());
        insta::assert_snapshot!(out, @r#"
fn f() {
    // timeoutlint: ignore[unbounded-retry, x] accepted when adopting timeoutlint (added by --add-ignore)
    loop {}
}
"#);
    }
}
