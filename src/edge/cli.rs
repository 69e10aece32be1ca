//! Command line: arguments, output and the exit code. The edge of the program, where IO is
//! allowed; the run itself is the driver's ([`crate::driver`]).

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::driver;
use crate::emit::{self, Report};
use crate::rules;
use crate::walk;

/// Finds retry and timeout misconfigurations in Rust code that calls remote services.
// Each bool is an independent command-line switch; clap flags read best as plain fields.
#[allow(clippy::struct_excessive_bools)]
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
    /// cargo's spellings, for editors: `json` (and `json-diagnostic-rendered-ansi`,
    /// `json-diagnostic-short`) is `--format cargo-json`, `short` is `concise`, `human` and
    /// `json-render-diagnostics` are `human`; comma-separated as cargo takes them.
    #[arg(
        long,
        value_enum,
        value_name = "FMT",
        value_delimiter = ',',
        conflicts_with = "format"
    )]
    message_format: Vec<MessageFormat>,
    /// Also write FORMAT to PATH, whatever the exit code (repeatable; stdout without `=PATH`),
    /// e.g. `--output sarif=results.sarif --output github`.
    #[arg(long, value_name = "FORMAT[=PATH]", value_parser = parse_output)]
    output: Vec<OutputSpec>,
    /// When to colour human output (`auto`: the terminal and the colour variables cargo reads).
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
    /// Print the findings and nothing else: no summary, hints, warnings or progress line.
    #[arg(short, long)]
    quiet: bool,
    /// Apply the exclusions to paths named on the command line too (for pre-commit hooks and
    /// editors, which name files one by one).
    #[arg(long)]
    force_exclude: bool,
    /// Print the files a run would lint (after exclusions), one per line, and lint nothing.
    #[arg(long)]
    show_files: bool,
    /// Lint, then lint again whenever a watched `.rs` file or configuration file
    /// (timeoutlint.toml, .timeoutlint.toml, Cargo.toml) changes, until Ctrl-C.
    #[arg(long, conflicts_with_all = ["fix", "diff", "show_files"])]
    watch: bool,
    /// The path of the text read from stdin (`-`): shown in findings, and where the
    /// configuration, rule selection and (with --force-exclude) exclusions come from.
    #[arg(long, value_name = "PATH")]
    stdin_filename: Option<PathBuf>,
    #[command(flatten)]
    adopt: crate::edge::adopt::AdoptArgs,
    #[command(flatten)]
    fixes: crate::edge::fix::FixArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the rule table.
    Rules {
        /// `table` (Markdown, as in the README) or `json` (one object per rule).
        #[arg(long, value_enum, default_value_t = RulesFormat::Table)]
        format: RulesFormat,
    },
    /// Print a rule's documentation (`explain` is clippy's and ruff's word for it).
    #[command(visible_alias = "explain")]
    Rule {
        /// Rule name, e.g. `unbounded-retry`.
        name: String,
    },
    /// Run the language server for editors (LSP over stdin and stdout).
    ///
    /// Findings as you type (on open, change and save), fixes as code actions, configuration
    /// found from each file's path, as `--stdin-filename PATH -` lints a buffer. Editor set-up
    /// (Neovim, Helix, VS Code): the README's "Editors" section.
    Server,
    #[command(flatten)]
    Adopt(crate::edge::adopt::AdoptCommand),
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
    /// GitLab Code Quality (`artifacts:reports:codequality`).
    Gitlab,
    /// `JUnit` XML, for CI test report views.
    Junit,
    /// reviewdog's diagnostic format (`reviewdog -f=rdjson`).
    Rdjson,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum RulesFormat {
    Table,
    Json,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum MessageFormat {
    Json,
    Short,
    Human,
    JsonDiagnosticRenderedAnsi,
    JsonDiagnosticShort,
    JsonRenderDiagnostics,
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
    let args = match Args::try_parse_from(without_check(command_line.into_iter().collect())) {
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
        Err(e) if crate::base::console::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Subcommand names, which a path right after `check` is not (`check rules` lints `./rules`).
const SUBCOMMANDS: [&str; 7] = [
    "rules", "rule", "explain", "config", "baseline", "check", "server",
];

/// `timeoutlint check [ARGS]` is `timeoutlint [ARGS]` (ruff's and cargo's habit): the word is
/// dropped when it comes first. A directory named `check` is linted as `./check`, as a
/// directory named like any subcommand is.
fn without_check(mut argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if argv.get(1).is_some_and(|a| a == "check") {
        argv.remove(1);
        if let Some(next) = argv.get_mut(1) {
            if SUBCOMMANDS.iter().any(|s| *next == **s) {
                *next = Path::new(".").join(&*next).into_os_string();
            }
        }
    }
    argv
}

fn run(args: &Args) -> anyhow::Result<u8> {
    let mut stdout = std::io::stdout().lock();
    match &args.command {
        Some(Command::Rules { format }) => {
            let text = match format {
                RulesFormat::Table => rules_table(),
                RulesFormat::Json => rules_json(),
            };
            stdout.write_all(text.as_bytes())?;
            return Ok(0);
        }
        Some(Command::Rule { name }) => {
            if let Some(r) = rules::by_name(name) {
                stdout.write_all(r.doc.as_bytes())?;
                return Ok(0);
            }
            anyhow::bail!(
                "unknown rule `{name}`{}; `timeoutlint rules` lists them",
                crate::config::suggest(name, rules::ALL.iter().map(|r| r.name))
            );
        }
        Some(Command::Adopt(c)) => return crate::edge::adopt::run_command(c, &mut stdout),
        Some(Command::Server) => {
            // stdout is the protocol's from here on.
            drop(stdout);
            return crate::edge::server::run();
        }
        None => {}
    }
    drop(stdout);
    if args.watch {
        if args.paths.iter().any(|p| p.as_os_str() == "-") {
            let e = <Args as clap::CommandFactory>::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "--watch re-lints files as they change on disk: it cannot read stdin (`-`)",
            );
            let _ = e.print();
            return Ok(2);
        }
        // The exclusions a walk of the named paths applies, so that a change the run would
        // not lint does not re-lint (the configuration is read again by every run).
        let excludes = match Planned::new(&args.paths, None, false, &options(args))? {
            Planned::Run(plan) => plan.resolved.excludes.clone(),
            Planned::Excluded(_) => Vec::new(),
        };
        return crate::edge::watch::run(&args.paths, &excludes, args.quiet, &|| check(args));
    }
    check(args)
}

/// The options of a lint from the command line.
fn options(args: &Args) -> Options {
    Options {
        selection: crate::config::CliSelection {
            select: args.select.clone(),
            extend_select: args.extend_select.clone(),
            ignore: args.ignore.clone(),
            exclude: args.exclude.clone(),
        },
        config_file: args.adopt.config.clone(),
        isolated: args.adopt.isolated,
        force_exclude: args.force_exclude,
        prefilter: !args.no_prefilter,
        max_file_bytes: args.max_file_size,
        crate_index: !args.no_index,
    }
}

/// One lint of the command line's paths: the report written, the exit code returned.
fn check(args: &Args) -> anyhow::Result<u8> {
    let mut stdout = std::io::stdout().lock();
    let started = std::time::Instant::now();
    check_output_paths(args)?;
    let stdin = read_stdin(args)?;
    let buffer_named = args.stdin_filename.is_some();
    let plan = match Planned::new(&args.paths, stdin, buffer_named, &options(args))? {
        Planned::Run(plan) => plan,
        Planned::Excluded(text) => {
            // An excluded buffer is not linted; under --fix it comes back as it was (ruff).
            if args.fixes.fix {
                stdout.write_all(text.as_bytes())?;
            }
            return Ok(0);
        }
    };
    if args.show_files {
        return show_files(&plan, &mut stdout);
    }
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
        .max(1);
    let (stdin, resolved, config, walked) =
        (&plan.stdin, &plan.resolved, &plan.config, &plan.walked);
    let mut adopt_run = crate::edge::adopt::Run::start(&progress_args(args), started);
    let lint_run = plan.run(threads);
    let mut report = lint_run.lint();
    if let (Some((path, text)), true) = (stdin, args.fixes.fix) {
        return fix_stdin(args, path, text, &|overlay| lint_run.lint_with(overlay));
    }
    if args.fixes.active() {
        match crate::edge::fix::run(&args.fixes, &lint_run, report, &mut stdout)? {
            crate::edge::fix::Outcome::Diff(code) => return Ok(code),
            // What is left is reported as usual, from the files as now written.
            crate::edge::fix::Outcome::Fixed(left) => report = left,
        }
    }
    adopt_run.linted(&args.adopt, walked, &resolved.excludes, &mut report)?;
    if args.adopt.add_ignore {
        return crate::edge::adopt::add_ignore(&report, config);
    }
    let wrote_all = write_outputs(args, &report, &mut stdout)?;
    if report.files_checked + report.files_skipped == 0 && report.errors.is_empty() && !args.quiet {
        eprintln!("warning: no Rust files found under the given paths");
    }
    let adopt_failed = adopt_run.finish(&args.adopt, &report);
    if !report.errors.is_empty() || !wrote_all {
        return Ok(2);
    }
    Ok(u8::from(
        (report.finding_count() > 0 && !args.exit_zero) || adopt_failed,
    ))
}

/// What decides a run's plan besides the paths: the command line's, or the language server's.
// Each bool is a command-line switch, as in `Args`.
#[allow(clippy::struct_excessive_bools)]
pub(crate) struct Options {
    /// `--select`, `--ignore`, `--exclude` and the rest.
    pub selection: crate::config::CliSelection,
    /// `--config`: this configuration file instead of the one found from the paths.
    pub config_file: Option<PathBuf>,
    /// `--isolated`: no configuration file.
    pub isolated: bool,
    /// `--force-exclude`.
    pub force_exclude: bool,
    /// Not `--no-prefilter`.
    pub prefilter: bool,
    /// `--max-file-size`.
    pub max_file_bytes: u64,
    /// Not `--no-index`.
    pub crate_index: bool,
}

/// `--show-files`: the files the run would lint, in the walk's order, as findings would name
/// them (a stdin buffer by its `--stdin-filename`, or `-`); files that cannot be walked are
/// errors on stderr and make the exit code 2, as in a lint.
fn show_files(plan: &Plan, out: &mut impl Write) -> anyhow::Result<u8> {
    let mut text = String::new();
    let mut code = 0;
    if let Some((path, _)) = &plan.stdin {
        text.push_str(&walk::display(path));
        text.push('\n');
    } else {
        let (files, errors) = walk::rust_files(&plan.walked, &plan.resolved.excludes);
        for f in &files {
            text.push_str(&walk::display(f));
            text.push('\n');
        }
        for e in &errors {
            eprintln!("error: {}: {}", e.path, e.message);
            code = 2;
        }
    }
    match out.write_all(text.as_bytes()) {
        // `timeoutlint --show-files | head` closes the pipe: that is not an error.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
        _ => {}
    }
    Ok(code)
}

/// A run decided from the paths and options: what is walked, with which configuration, and
/// the buffer (stdin's, or an editor's) that stands for a file. The command line and the
/// language server ([`crate::edge::server`]) plan alike, so a buffer gets the findings a
/// `--stdin-filename` run gives it.
pub(crate) struct Plan {
    /// What the walk starts from (nothing for a buffer: it is linted from the overlay).
    pub walked: Vec<PathBuf>,
    /// The buffer and the path it stands for, when there is one.
    pub stdin: Option<(PathBuf, String)>,
    /// The layered configuration.
    pub resolved: crate::config::Resolved,
    /// The lint settings from it.
    pub config: crate::lint::Config,
    /// The crate context and the buffer's virtual file.
    pub scope: driver::Scope,
    /// The buffer's text by its path.
    pub base: driver::Overlay,
}

/// A plan, or the buffer given back when `--force-exclude` excludes it.
pub(crate) enum Planned {
    Run(Box<Plan>),
    Excluded(String),
}

impl Planned {
    /// Plan a lint of `paths`, or of `stdin`'s buffer (which then stands for the one path
    /// named); `buffer_named` says that path is the buffer's real place (`--stdin-filename`),
    /// so its crate's other files are read for the crate join.
    pub(crate) fn new(
        paths: &[PathBuf],
        stdin: Option<(PathBuf, String)>,
        buffer_named: bool,
        options: &Options,
    ) -> anyhow::Result<Self> {
        // With stdin the named path is the buffer's (its configuration, its crate), not `-`.
        let named: Vec<PathBuf> = match &stdin {
            Some((path, _)) => vec![path.clone()],
            None => paths.to_vec(),
        };
        let found = crate::config::read_config_files(
            &named,
            options.config_file.as_deref(),
            options.isolated,
        )?;
        let cwd = std::env::current_dir()?;
        let layered = |roots: &[PathBuf]| {
            crate::config::resolve(found.as_ref(), &options.selection, &cwd, roots)
        };
        let resolved = layered(&named)?;
        let named = if options.force_exclude {
            let kept = not_excluded(&named, &resolved, &layered, &cwd)?;
            if let (Some((_, text)), true) = (&stdin, kept.is_empty()) {
                return Ok(Planned::Excluded(text.clone()));
            }
            kept
        } else {
            named
        };
        let stdin = stdin.filter(|(path, _)| named.contains(path));
        let mut config = crate::lint::Config::from(&resolved);
        config.prefilter = options.prefilter;
        config.max_file_bytes = options.max_file_bytes;
        config.crate_index = options.crate_index;
        let mut scope = driver::Scope::default();
        if config.crate_index && config.crate_rules() && (stdin.is_none() || buffer_named) {
            let excludes = |dir: &Path| {
                layered(&[dir.to_path_buf()])
                    .map_or_else(|_| resolved.excludes.clone(), |r| r.excludes)
            };
            let tree = walk::units::RealTree {
                excludes: &excludes,
                max_bytes: options.max_file_bytes,
                cwd: walk::normalize(&cwd),
            };
            scope.context_roots = context_roots(&named, &tree);
            if !scope.context_roots.is_empty() {
                scope.context_excludes = layered(&scope.context_roots)?.excludes;
            }
        }
        let mut walked = named.clone();
        let mut base = driver::Overlay::new();
        if let Some((path, text)) = &stdin {
            // The buffer need not exist on disk (an unsaved file): it is linted from the overlay.
            walked.clear();
            scope.virtual_files.push(path.clone());
            base.insert(path.clone(), text.clone());
        }
        Ok(Planned::Run(Box::new(Plan {
            walked,
            stdin,
            resolved,
            config,
            scope,
            base,
        })))
    }
}

impl Plan {
    /// The driver's run of the plan on `threads` workers, with fixes capped by the manifest.
    pub(crate) fn run(&self, threads: usize) -> driver::Run<'_> {
        driver::Run {
            paths: &self.walked,
            excludes: &self.resolved.excludes,
            config: &self.config,
            threads,
            scope: self.scope.clone(),
            base: self.base.clone(),
            adjust: Some(cap_fixes_by_manifest),
        }
    }
}

/// The text of stdin and the path it stands for, when the path `-` asks for it (editors lint
/// an unsaved buffer so). Bounded like a file by `--max-file-size`.
fn read_stdin(args: &Args) -> anyhow::Result<Option<(PathBuf, String)>> {
    let dash = args.paths.iter().any(|p| p.as_os_str() == "-");
    if !dash {
        if args.stdin_filename.is_some() {
            anyhow::bail!("--stdin-filename names the text read from stdin: pass `-` as the path");
        }
        return Ok(None);
    }
    if args.paths.len() > 1 {
        anyhow::bail!("`-` (read stdin) cannot be combined with other paths");
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(
            std::io::stdin().lock(),
            args.max_file_size.saturating_add(1),
        ),
        &mut bytes,
    )
    .map_err(|e| anyhow::anyhow!("cannot read stdin: {e}"))?;
    if bytes.len() as u64 > args.max_file_size {
        anyhow::bail!(
            "stdin is over the {}-byte limit (--max-file-size)",
            args.max_file_size
        );
    }
    let text = walk::decode(bytes).map_err(|e| anyhow::anyhow!("stdin: {e}"))?;
    let path = args
        .stdin_filename
        .clone()
        .unwrap_or_else(|| PathBuf::from(STDIN_NAME));
    Ok(Some((path, text)))
}

/// `--force-exclude`: the named paths that the exclusions (the configuration's, anchored at
/// its directory, and `--exclude`) leave, a path being excluded when it or a directory above
/// it up to that directory matches, as a walk from there would skip it.
fn not_excluded(
    named: &[PathBuf],
    resolved: &crate::config::Resolved,
    layered: &dyn Fn(&[PathBuf]) -> anyhow::Result<crate::config::Resolved>,
    cwd: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    let anchor = resolved
        .file
        .as_ref()
        .and_then(|f| {
            walk::normalize(&cwd.join(f))
                .parent()
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(|| cwd.to_path_buf());
    let globs = layered(std::slice::from_ref(&anchor))?.excludes;
    let mut ov = ignore::overrides::OverrideBuilder::new(&anchor);
    for g in &globs {
        ov.add(&format!("!{g}"))
            .map_err(|e| anyhow::anyhow!("invalid exclude glob `{g}`: {e}"))?;
    }
    let ov = ov.build()?;
    Ok(named
        .iter()
        .filter(|p| {
            let abs = walk::normalize(&cwd.join(p));
            let Ok(rel) = abs.strip_prefix(&anchor) else {
                // Outside the configuration's tree: only unanchored globs could match, and a
                // walk from the anchor never reaches it. Match its own name.
                return !ov.matched(&abs, abs.is_dir()).is_ignore();
            };
            let mut at = anchor.clone();
            for (i, c) in rel.components().enumerate() {
                at.push(c);
                let is_dir = i + 1 < rel.components().count() || at.is_dir();
                if ov.matched(&at, is_dir).is_ignore() {
                    return false;
                }
            }
            true
        })
        .cloned()
        .collect())
}

/// The units whose other files a lint of `named` reads for the crate join, as directories to
/// walk, spelled as ancestors of the named paths (so the join keys the files alike), none that
/// a named directory covers. For a named path inside a crate, the crate root (the nearest
/// directory above with a `Cargo.toml`); for a named file in no crate, the directory holding
/// its whole unit ([`walk::units::unit_dir`]: its Bazel or Buck package, or its module tree).
/// So a staged subset of a tree (pre-commit) gets the crate-level findings a run over the whole
/// tree gives those files. A named directory in no crate gets none: its files' units would each
/// need the search, and a directory is usually named to lint it whole.
fn context_roots(named: &[PathBuf], tree: &walk::units::RealTree<'_>) -> Vec<PathBuf> {
    let mut roots = walk::CrateRoots::default();
    let dirs: Vec<PathBuf> = named
        .iter()
        .filter(|p| p.is_dir())
        .map(|p| walk::normalize(&tree.cwd.join(p)))
        .collect();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in named {
        let is_dir = p.is_dir();
        let probe = if is_dir { p.join("_.rs") } else { p.clone() };
        let root = match roots.of(&probe) {
            Some(root) => root,
            None if !is_dir => match walk::units::unit_dir(p, tree) {
                Some(root) => root,
                None => continue,
            },
            None => continue,
        };
        let abs = walk::normalize(&tree.cwd.join(&root));
        if dirs.iter().any(|d| abs.starts_with(d)) || out.contains(&root) {
            continue;
        }
        out.push(root);
    }
    // A root inside another is walked with it: walking it again would only cost.
    let abs: Vec<PathBuf> = out
        .iter()
        .map(|r| walk::normalize(&tree.cwd.join(r)))
        .collect();
    let mut kept = Vec::new();
    for (i, r) in out.iter().enumerate() {
        let inside = abs
            .iter()
            .enumerate()
            .any(|(j, a)| j != i && abs[i].starts_with(a) && (abs[i] != *a || j < i));
        if !inside {
            kept.push(r.clone());
        }
    }
    kept
}

/// Fixes that depend on the crate's manifest, capped by it: `tokio::time::sleep` needs tokio's
/// `time` feature. Manifests are read once per directory, only for files with such a fix; a
/// file in no cargo package keeps the rule's own judgement.
fn cap_fixes_by_manifest(report: &mut Report) {
    use crate::rules::blocking_sleep_in_async as sleep;
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut manifests: std::collections::HashMap<PathBuf, Option<toml::Table>> =
        std::collections::HashMap::new();
    let mut load = |dir: &Path| -> Option<toml::Table> {
        manifests
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                walk::bounded::read(&dir.join("Cargo.toml"), walk::bounded::MANIFEST_LIMIT)
                    .ok()
                    .and_then(|t| t.parse::<toml::Table>().ok())
            })
            .clone()
    };
    for (src, diags) in &mut report.files {
        if !diags
            .iter()
            .any(|d| d.rule.name == "blocking-sleep-in-async" && d.fix.is_some())
        {
            continue;
        }
        let file = walk::normalize(&cwd.join(&src.real_path));
        let mut package = None;
        let mut workspace = None;
        for dir in file.ancestors().skip(1) {
            let Some(m) = load(dir) else { continue };
            if package.is_none() && m.contains_key("package") {
                package = Some((dir.to_path_buf(), m.clone()));
            }
            if package.is_some() && m.contains_key("workspace") {
                workspace = Some(m);
                break;
            }
        }
        let Some((root, manifest)) = package else {
            continue;
        };
        // Tests, benches and examples also get the dev-dependencies.
        let dev = file.strip_prefix(&root).is_ok_and(|rel| {
            rel.components().next().is_some_and(|c| {
                ["tests", "benches", "examples"]
                    .iter()
                    .any(|d| c.as_os_str() == *d)
            })
        });
        let tokio = walk::crates::tokio_time(&manifest, workspace.as_ref(), dev);
        for d in diags.iter_mut() {
            sleep::cap_for_manifest(d, tokio);
        }
    }
}

/// How findings in stdin's text are shown without `--stdin-filename`.
const STDIN_NAME: &str = "<stdin>";

/// `--fix` on stdin (ruff's behaviour): the fixed text goes to stdout, nothing is written, and
/// what is left is reported on stderr in the chosen format.
fn fix_stdin(
    args: &Args,
    path: &Path,
    text: &str,
    lint: &dyn Fn(&driver::Overlay) -> Report,
) -> anyhow::Result<u8> {
    let level = if args.fixes.unsafe_fixes {
        crate::fix::Level::Unsafe
    } else {
        crate::fix::Level::Safe
    };
    let at = |cur: &str| driver::Overlay::from([(path.to_path_buf(), cur.to_string())]);
    let fixed = crate::fix::fix_with(text, level, |cur| {
        let r = lint(&at(cur));
        r.errors
            .is_empty()
            .then(|| r.files.into_iter().flat_map(|(_, d)| d).collect())
    });
    if fixed.rolled_back {
        eprintln!(
            "warning: {}: a fix made the text unparsable and was rolled back (a timeoutlint bug; please report it)",
            walk::display(path)
        );
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(fixed.text.as_bytes())?;
    stdout.flush()?;
    let report = lint(&at(&fixed.text));
    let wrote_all = write_outputs(args, &report, &mut std::io::stderr().lock())?;
    if !report.errors.is_empty() || !wrote_all {
        return Ok(2);
    }
    Ok(u8::from(report.finding_count() > 0 && !args.exit_zero))
}

/// What the progress line is started with: `--quiet` hides it too (it reads only that flag).
fn progress_args(args: &Args) -> crate::edge::adopt::AdoptArgs {
    crate::edge::adopt::AdoptArgs {
        no_progress: args.adopt.no_progress || args.quiet,
        ..crate::edge::adopt::AdoptArgs::default()
    }
}

/// `timeoutlint rules --format json`: one object per rule, with the table's columns.
#[must_use]
pub fn rules_json() -> String {
    let rules: Vec<serde_json::Value> = rules::ALL
        .iter()
        .map(|r| {
            serde_json::json!({
                "name": r.name,
                "default": r.default_enabled,
                "fix": fix_column(r),
                "summary": r.summary,
                "url": emit::rule_url(r),
            })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&rules).unwrap_or_default();
    s.push('\n');
    s
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
    let (message_format, rendered) = message_format(&args.message_format);
    let main = args.format.or(message_format);
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
                Color::Auto => auto_color(std::io::stdout().is_terminal()),
            };
        let text = match o.format {
            Format::Human if args.quiet => emit::human::render_findings(report, color),
            Format::Human => emit::human::render(report, color),
            // The summary is for a person at a terminal: scripts and editors read the lines.
            Format::Concise
                if o.path.is_none() && !args.quiet && std::io::stdout().is_terminal() =>
            {
                emit::concise::render(report) + &emit::human::summary(report)
            }
            Format::Concise => emit::concise::render(report),
            Format::Json => emit::json::render(report),
            Format::Sarif => emit::sarif::render(report),
            Format::Github => emit::github::render(report),
            Format::CargoJson => emit::rustc_json::render_with(report, &crates, rendered),
            Format::Gitlab => emit::gitlab::render(report),
            Format::Junit => emit::junit::render(report),
            Format::Rdjson => emit::rdjson::render(report),
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

/// The format cargo's `--message-format` values ask for, and the `rendered` text of its JSON.
fn message_format(values: &[MessageFormat]) -> (Option<Format>, emit::rustc_json::Rendered) {
    use emit::rustc_json::Rendered;
    use MessageFormat as M;
    let has = |m: M| values.contains(&m);
    let rendered = if has(M::JsonDiagnosticShort) {
        Rendered::Short
    } else if has(M::JsonDiagnosticRenderedAnsi) {
        Rendered::Ansi
    } else {
        Rendered::Human
    };
    let format = if has(M::JsonRenderDiagnostics) || (has(M::Human) && values.len() == 1) {
        Some(Format::Human)
    } else if has(M::Json) || has(M::JsonDiagnosticShort) || has(M::JsonDiagnosticRenderedAnsi) {
        Some(Format::CargoJson)
    } else if has(M::Short) {
        Some(Format::Concise)
    } else if has(M::Human) {
        Some(Format::Human)
    } else {
        None
    };
    (format, rendered)
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
    let format = Format::from_str(name, false).map_err(|_| {
        let names: Vec<String> = Format::value_variants()
            .iter()
            .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_string()))
            .collect();
        format!(
            "unknown format `{name}`; the formats are {}",
            names.join(", ")
        )
    })?;
    Ok(OutputSpec { format, path })
}

/// `--color auto`, decided as cargo and clap decide it (anstyle-query reads the variables):
/// `NO_COLOR` wins, then `CLICOLOR_FORCE`, then `CLICOLOR=0`; otherwise colour only at a
/// terminal that can show it (not `TERM=dumb`), or in CI, whose logs render it.
fn auto_color(is_terminal: bool) -> bool {
    if anstyle_query::no_color() {
        return false;
    }
    if anstyle_query::clicolor_force() {
        return true;
    }
    if anstyle_query::clicolor() == Some(false) {
        return false;
    }
    is_terminal
        && (anstyle_query::term_supports_color()
            || anstyle_query::clicolor() == Some(true)
            || anstyle_query::is_ci())
}
