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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::base::source::SourceFile;
use crate::config::{self, CliSelection, Resolved};
use crate::driver::{DONE, TOTAL};
use crate::edge::baseline::{self, Baseline, Outcome};
use crate::emit::Report;
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
    let found = find(paths, args)?;
    config::resolve(found.as_ref(), cli, &std::env::current_dir()?, paths)
}

/// The configuration file a lint of `paths` uses, read once (the exclusions of other walks of
/// the same run are layered from it with [`config::resolve`]).
pub fn find(paths: &[PathBuf], args: &AdoptArgs) -> anyhow::Result<Option<config::Found>> {
    config::read_config_files(paths, args.config.as_deref(), args.isolated)
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
            let lint_config = crate::lint::Config::from(&resolved);
            let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
            let mut report =
                crate::driver::lint_paths(&p.paths, &resolved.excludes, &lint_config, threads);
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
    let text = crate::walk::bounded::read(path, crate::walk::bounded::BASELINE_LIMIT)
        .map_err(|e| anyhow::anyhow!("cannot read baseline {}: {e}", path.display()))?;
    baseline::parse(&text).map_err(|e| anyhow::anyhow!("baseline {}: {e}", path.display()))
}

/// The display paths of the files a lint of `paths` covers (a second walk: cheap next to the
/// analysis, and it keeps `driver::lint_paths` unchanged).
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
/// `--add-ignore`: write a suppression for each finding where a comment is a comment, check in
/// memory that the edited text has the same tokens and that the comments silence their
/// findings (the run's own suppression pass, and a lint of the new text), and report what was
/// written. A finding no comment can reach is named and not counted.
pub fn add_ignore(report: &Report, config: &crate::lint::Config) -> anyhow::Result<u8> {
    // The checks parse and lint whole files: on the workers' big stack, like the lint itself.
    let plans = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("timeoutlint-add-ignore".into())
            .stack_size(crate::parse::WORKER_STACK)
            .spawn_scoped(scope, || {
                report
                    .files
                    .iter()
                    .map(|(src, diags)| plan_file(src, diags, config))
                    .collect::<Vec<_>>()
            })
            .map(std::thread::ScopedJoinHandle::join)
    })?
    .map_err(|_| anyhow::anyhow!("--add-ignore failed (a timeoutlint bug; please report it)"))?;
    let mut added = 0;
    let mut files = 0;
    let mut skipped = 0;
    let mut unreachable = 0;
    let mut failed = false;
    for ((src, _), plan) in report.files.iter().zip(plans) {
        for m in &plan.messages {
            eprintln!("timeoutlint: {}: {m}", src.path);
        }
        skipped += plan.skipped;
        unreachable += plan.unreachable;
        let Some(text) = plan.text else {
            continue;
        };
        // The real path, never the display one; written whole or not at all.
        if let Err(why) =
            crate::edge::fix::write_fixed(&src.real_path, &src.text, &text, &mut |f, b| {
                f.write_all(b)
            })
        {
            eprintln!("error: {}: suppressions not added: {why}", src.path);
            skipped += plan.silenced;
            failed = true;
            continue;
        }
        added += plan.silenced;
        files += 1;
    }
    eprintln!("timeoutlint: added suppressions for {added} finding(s) in {files} file(s)");
    if skipped > 0 {
        eprintln!("timeoutlint: {skipped} finding(s) on comment lines or in files that would not parse were left alone");
    }
    if unreachable > 0 {
        eprintln!("timeoutlint: {unreachable} finding(s) that no comment could silence were left alone (named above)");
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

/// What `--add-ignore` does to one file.
struct FilePlan {
    /// The new text, when there is anything to write.
    text: Option<String>,
    /// Findings the written comments silence (checked).
    silenced: usize,
    /// Findings on comment lines, or in a file whose edit would not parse.
    skipped: usize,
    /// Findings with no place for a comment, or that a comment would not silence.
    unreachable: usize,
    /// One line per finding left alone, for stderr.
    messages: Vec<String>,
}

fn plan_file(
    src: &SourceFile,
    diags: &[crate::base::diagnostic::Diagnostic],
    config: &crate::lint::Config,
) -> FilePlan {
    let regions = crate::base::regions::regions(&src.text);
    let mut plan = FilePlan {
        text: None,
        silenced: 0,
        skipped: 0,
        unreachable: 0,
        messages: Vec::new(),
    };
    // A finding on a comment (a suppression's own finding) cannot be silenced by a comment
    // above it, which would target the next code line: fix those instead.
    let mut todo: Vec<&crate::base::diagnostic::Diagnostic> = Vec::new();
    for d in diags {
        match crate::base::regions::at(&regions, d.primary.start) {
            Some(
                crate::base::regions::Region::LineComment
                | crate::base::regions::Region::BlockComment,
            ) => {
                plan.skipped += 1;
            }
            _ => todo.push(d),
        }
    }
    let line_of = |d: &crate::base::diagnostic::Diagnostic| src.line_index(d.primary.start);
    // Lines whose comment failed the check in an earlier round.
    let mut failed_lines: Vec<usize> = Vec::new();
    let mut failed_messages: Vec<String> = Vec::new();
    // Twice at most: the lines whose comment fails the check are dropped and the rest checked
    // again (a comment only affects its own line, so the second round passes).
    for _ in 0..2 {
        let edit = with_suppressions(
            src,
            &regions,
            todo.iter()
                .filter(|d| !failed_lines.contains(&line_of(d)))
                .map(|d| (d.primary.start, d.rule.name)),
        );
        plan.messages = edit
            .nowhere
            .iter()
            .map(|(line, rules)| {
                format!(
                    "{}: no place for a suppression comment (the line starts and ends inside a literal or comment); {} left alone",
                    line + 1,
                    quoted(rules)
                )
            })
            .chain(failed_messages.iter().cloned())
            .collect();
        let placed: Vec<&crate::base::diagnostic::Diagnostic> = todo
            .iter()
            .copied()
            .filter(|d| {
                let line = line_of(d);
                !failed_lines.contains(&line) && !edit.nowhere.iter().any(|(l, _)| *l == line)
            })
            .collect();
        plan.unreachable = todo.len() - placed.len();
        if placed.is_empty() {
            return plan;
        }
        let failed = match verify(src, &edit, &placed, config) {
            Ok(failed) => failed,
            Err(why) => {
                plan.messages.push(format!("not edited ({why})"));
                plan.skipped += placed.len();
                return plan;
            }
        };
        if failed.is_empty() {
            plan.silenced = placed.len();
            plan.text = Some(edit.text);
            return plan;
        }
        // Drop every finding of a failed line: its comment is the one that does not work.
        for &i in &failed {
            let line = line_of(placed[i]);
            if !failed_lines.contains(&line) {
                failed_lines.push(line);
            }
        }
        for d in &placed {
            if failed_lines.contains(&line_of(d)) {
                failed_messages.push(format!(
                    "{}: a suppression comment would not silence `{}` there; left alone",
                    line_of(d) + 1,
                    d.rule.name
                ));
            }
        }
    }
    // The second round failed too (which a comment affecting only its own line rules out):
    // leave the file as it is rather than write what was not checked.
    plan.messages
        .push("not edited (the suppression comments could not be checked)".into());
    plan.unreachable = todo.len();
    plan
}

fn quoted(rules: &[&str]) -> String {
    rules
        .iter()
        .map(|r| format!("`{r}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Check an edit in memory. `Err` when the edit must not be written at all (it changes the
/// program or does not parse); else the indices of `placed` findings the comments do not
/// silence: the run's suppression pass over the findings moved to the new text (every finding,
/// crate-level ones included), and a lint of the new text alone.
fn verify(
    src: &SourceFile,
    edit: &Suppressed,
    placed: &[&crate::base::diagnostic::Diagnostic],
    config: &crate::lint::Config,
) -> Result<Vec<usize>, String> {
    match same_tokens(&src.text, &edit.text) {
        Some(true) => {}
        Some(false) => return Err("the comments would change the program's tokens".into()),
        // The tokenizer refuses the original (a shebang it cannot read): the parser decides.
        None => {
            let check = SourceFile::new(src.path.clone(), edit.text.clone());
            if crate::parse::parse(&check).is_err() {
                return Err("the suppressions would not parse".into());
            }
        }
    }
    let new_src = SourceFile::new(src.path.clone(), edit.text.clone());
    let moved: Vec<crate::base::diagnostic::Diagnostic> = placed
        .iter()
        .map(|d| {
            let mut d = (*d).clone();
            d.primary = crate::base::source::Span::new(
                edit.moved(d.primary.start, true),
                edit.moved(d.primary.end, false),
            );
            d
        })
        .collect();
    let mut finished = moved.clone();
    // The moved findings are all outside test code, which the run never reported.
    crate::lint::finish(&new_src, config, &mut finished, &[]);
    let relinted = crate::lint::lint_source(&new_src, config);
    if let Some(e) = relinted.error {
        return Err(format!(
            "the edited file could not be linted again: {}",
            e.message
        ));
    }
    let failed = moved
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            let line = new_src.line_index(m.primary.start);
            finished
                .iter()
                .any(|d| d.rule.name == m.rule.name && d.primary == m.primary)
                || relinted.diagnostics.iter().any(|d| {
                    d.rule.name == m.rule.name && new_src.line_index(d.primary.start) == line
                })
        })
        .map(|(i, _)| i)
        .collect();
    Ok(failed)
}

/// Do `old` and `new` have the same tokens (comments are not tokens, doc comments are)?
/// `None` when the tokenizer refuses `old`.
fn same_tokens(old: &str, new: &str) -> Option<bool> {
    let strip = |t: &str| t.strip_prefix('\u{feff}').unwrap_or(t).to_string();
    let old: proc_macro2::TokenStream = strip(old).parse().ok()?;
    let Ok(new) = strip(new).parse::<proc_macro2::TokenStream>() else {
        return Some(false);
    };
    Some(old.to_string() == new.to_string())
}

/// An edit adding suppression comments.
#[derive(Debug)]
pub struct Suppressed {
    /// The new text.
    pub text: String,
    /// Where text was inserted (offset in the old text, length, and whether it went before
    /// that offset's line, so a finding at the offset moves with it).
    pub inserted: Vec<(usize, usize, bool)>,
    /// Lines (0-based) where no comment can go, with their rules.
    pub nowhere: Vec<(usize, Vec<&'static str>)>,
}

impl Suppressed {
    /// Where offset `at` of the old text is in the new one; `start` for a finding's start
    /// (it moves down with a comment inserted right before it).
    #[must_use]
    pub fn moved(&self, at: usize, start: bool) -> usize {
        at + self
            .inserted
            .iter()
            .filter(|(o, _, above)| *o < at || (*o == at && *above && start))
            .map(|(_, len, _)| len)
            .sum::<usize>()
    }
}

/// The text of `src` with one `// timeoutlint: ignore[..]` comment per flagged line (rules of
/// the same line share one comment): on a line of its own above, indented like the flagged
/// line, when that line starts in code; else at its end, when it ends in code (its start is
/// inside a multi-line literal or comment); else nowhere, and the line is listed. Line breaks
/// follow the file's (CRLF stays CRLF). `regions` are the file's comments and literals.
#[must_use]
pub fn with_suppressions<'a>(
    src: &SourceFile,
    regions: &[(crate::base::source::Span, crate::base::regions::Region)],
    findings: impl Iterator<Item = (usize, &'a str)>,
) -> Suppressed {
    use crate::base::regions::{at, inside, Region};
    let mut by_line: BTreeMap<usize, Vec<&'static str>> = BTreeMap::new();
    for (offset, rule) in findings {
        // Rule names are static; look the name up so the plan does not borrow the findings.
        let Some(rule) = crate::rules::by_name(rule).map(|r| r.name) else {
            continue;
        };
        let names = by_line.entry(src.line_index(offset)).or_default();
        if !names.contains(&rule) {
            names.push(rule);
        }
    }
    let text = &src.text;
    let first_break = text.find('\n');
    let file_crlf = first_break.is_some_and(|i| i > 0 && text.as_bytes()[i - 1] == b'\r');
    let mut out = String::with_capacity(text.len());
    let mut inserted = Vec::new();
    let mut nowhere = Vec::new();
    let mut last = 0;
    for (line, names) in by_line {
        let span = src.line_span(line);
        // A byte-order mark stays the first thing in the file.
        let start = if line == 0 {
            span.start.max(src.bom_len())
        } else {
            span.start
        };
        let comment = format!(
            "// timeoutlint: ignore[{}] {ADDED_REASON}",
            names.join(", ")
        );
        let (offset, insert, above) = if inside(regions, start).is_none() {
            let line_text = &text[start..span.end];
            let indent = &line_text[..line_text.len() - line_text.trim_start().len()];
            let rest = &text[span.end..];
            let eol = if rest.starts_with("\r\n") || (!rest.starts_with('\n') && file_crlf) {
                "\r\n"
            } else {
                "\n"
            };
            (start, format!("{indent}{comment}{eol}"), true)
        } else if inside(regions, span.end).is_none()
            && (span.end == start || at(regions, span.end - 1) != Some(Region::LineComment))
        {
            (span.end, format!(" {comment}"), false)
        } else {
            nowhere.push((line, names));
            continue;
        };
        out.push_str(&text[last..offset]);
        out.push_str(&insert);
        inserted.push((offset, insert.len(), above));
        last = offset;
    }
    out.push_str(&text[last..]);
    Suppressed {
        text: out,
        inserted,
        nowhere,
    }
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
                eprint!("\r\x1b[2Ktimeoutlint: finding files");
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

    fn suppress(text: &str, at: &[(&str, &str)]) -> Suppressed {
        let src = SourceFile::new("a.rs", text);
        let regions = crate::base::regions::regions(text);
        let findings: Vec<(usize, &str)> = at
            .iter()
            .map(|(needle, rule)| (text.find(needle).unwrap(), *rule))
            .collect();
        with_suppressions(&src, &regions, findings.into_iter())
    }

    #[test]
    fn suppressions_are_written_above_with_the_line_indent() {
        let out = suppress(
            "fn f() {\n    loop {}\n}\n",
            &[("loop", "unbounded-retry"), ("loop", "nested-retry")],
        )
        .text;
        insta::assert_snapshot!(out, @r#"
fn f() {
    // timeoutlint: ignore[unbounded-retry, nested-retry] accepted when adopting timeoutlint (added by --add-ignore)
    loop {}
}
"#);
    }

    const R: &str = "unbounded-retry";
    const TAG: &str = "// timeoutlint: ignore[unbounded-retry] accepted when adopting timeoutlint (added by --add-ignore)";

    #[test]
    fn a_line_starting_inside_a_literal_gets_its_comment_at_the_end() {
        // `loop` sits on a line whose start is inside a multi-line string: a comment line
        // above would become part of the string.
        let text = "fn f() {\n    let s = \"a\nb\"; loop {}\n}\n";
        let out = suppress(text, &[("loop", R)]);
        assert_eq!(
            out.text,
            format!("fn f() {{\n    let s = \"a\nb\"; loop {{}} {TAG}\n}}\n")
        );
        assert!(out.nowhere.is_empty());
        // The same with a raw string holding quotes and a block comment.
        let text = "fn f() {\n    let s = r#\"a \"\n\"#; /* x\n */ loop {}\n}\n";
        let out = suppress(text, &[("loop", R)]);
        assert!(
            out.text.contains(&format!("*/ loop {{}} {TAG}\n}}")),
            "{}",
            out.text
        );
        assert!(out.text.contains("r#\"a \"\n\"#"));
    }

    #[test]
    fn a_line_inside_literals_at_both_ends_gets_no_comment() {
        let text = "fn f() {\n    let s = \"a\nb\"; loop {} let t = \"c\nd\";\n}\n";
        let out = suppress(text, &[("loop", R)]);
        assert_eq!(out.text, text);
        assert_eq!(out.nowhere, [(2, vec![R])]);
        // Ending in a line comment leaves no room either (the comment would be part of it).
        let text = "fn f() {\n    let s = \"a\nb\"; loop {} // note\n}\n";
        let out = suppress(text, &[("loop", R)]);
        assert_eq!(out.text, text);
        assert_eq!(out.nowhere.len(), 1);
    }

    #[test]
    fn line_breaks_and_byte_order_marks_are_kept() {
        let text = "fn f() {\r\n    loop {}\r\n}\r\n";
        let out = suppress(text, &[("loop", R)]);
        assert_eq!(
            out.text,
            format!("fn f() {{\r\n    {TAG}\r\n    loop {{}}\r\n}}\r\n")
        );
        // The last line without a line break takes the file's.
        let text = "fn f() {}\r\nfn g() { loop {} }";
        let out = suppress(text, &[("loop", R)]);
        assert_eq!(
            out.text,
            format!("fn f() {{}}\r\n{TAG}\r\nfn g() {{ loop {{}} }}")
        );
        let text = "\u{feff}fn g() { loop {} }\n";
        let out = suppress(text, &[("loop", R)]);
        assert_eq!(out.text, format!("\u{feff}{TAG}\nfn g() {{ loop {{}} }}\n"));
        // Offsets move with the comments before them.
        let at = text.find("loop").unwrap();
        assert_eq!(out.moved(at, true), at + TAG.len() + 1);
        assert_eq!(out.moved(2, true), 2, "the mark stays where it was");
    }

    /// The in-memory check catches what the placement rules are there to avoid: a comment
    /// line inside a multi-line string (the old placement), and a comment that silences
    /// nothing.
    #[test]
    fn the_check_refuses_a_changed_literal_and_a_comment_that_silences_nothing() {
        let config = crate::lint::Config::new(
            crate::rules::ALL.to_vec(),
            crate::base::apis::Apis::builtin(),
        );
        let text = "async fn f() {\n    let q = \"multi\nline\"; std::thread::sleep(std::time::Duration::from_secs(1));\n}\n";
        let src = SourceFile::new("a.rs", text);
        let report = crate::lint::lint_source(&src, &config);
        let placed: Vec<&crate::base::diagnostic::Diagnostic> = report
            .diagnostics
            .iter()
            .filter(|d| d.rule.name == "blocking-sleep-in-async")
            .collect();
        assert_eq!(placed.len(), 1);
        let tag = "// timeoutlint: ignore[blocking-sleep-in-async] r\n";
        let edit = |at: usize| Suppressed {
            text: format!("{}{tag}{}", &text[..at], &text[at..]),
            inserted: vec![(at, tag.len(), true)],
            nowhere: Vec::new(),
        };
        let in_string = edit(src.line_span(2).start);
        assert_eq!(
            verify(&src, &in_string, &placed, &config).unwrap_err(),
            "the comments would change the program's tokens"
        );
        // Above the function: a real comment, but for line 1, not the finding's line 3.
        assert_eq!(verify(&src, &edit(0), &placed, &config).unwrap(), [0]);
    }
}
