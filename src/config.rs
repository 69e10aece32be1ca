//! Project configuration: finding `timeoutlint.toml` / `.timeoutlint.toml` / the
//! `[package|workspace.metadata.timeoutlint]` table of a `Cargo.toml`, parsing it, and layering it
//! with the command line into the rules to run, their levels, per-file ignores and the library
//! knowledge.
//!
//! A document is read by serde into typed structs (`Doc`, unknown keys denied); what serde
//! cannot check (rule, group and level names, globs) is checked here over values that keep
//! their place. Every error says where: `serde_path_to_error` names the key path, toml's spans
//! the line and column, in the `Cargo.toml` itself for a metadata table.
//!
//! Only [`read_config_files`] touches the file system; everything else is a pure function of
//! text and paths, so precedence and error messages are tested without a disk. Deliberately
//! absent: merging several config files (the nearest one wins, like rustfmt) and an `extend`
//! key; a config file is one place to look.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde_path_to_error::Segment;
use toml::Spanned;

use crate::base::apis::Apis;
use crate::base::diagnostic::{Diagnostic, Severity};
use crate::base::source::SourceFile;
use crate::rules::{self, Rule};

/// File names looked for in each directory, in order; `Cargo.toml` only counts when it has a
/// `timeoutlint` metadata table.
pub const FILE_NAMES: &[&str] = &["timeoutlint.toml", ".timeoutlint.toml", "Cargo.toml"];

/// Rule groups usable wherever a rule name is.
pub const GROUPS: &[&str] = &["all", "default", "pedantic"];

/// A rule's level in `[rules]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Reported with this severity (and enabled).
    On(Severity),
    /// Not run.
    Off,
}

/// Where a value came from, for `timeoutlint config` and error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The built-in default.
    Default,
    /// A configuration file (or `Cargo.toml` metadata table).
    File(PathBuf),
    /// A command-line flag.
    Cli(&'static str),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::Cli(flag) => write!(f, "command line ({flag})"),
        }
    }
}

/// One parsed configuration document (a file or a metadata table).
#[derive(Debug, Clone, Default)]
pub struct FileConfig {
    /// `select`: replaces the default set.
    pub select: Option<Vec<String>>,
    /// `extend-select`.
    pub extend_select: Vec<String>,
    /// `ignore`.
    pub ignore: Vec<String>,
    /// `exclude`: globs like `--exclude`.
    pub exclude: Vec<String>,
    /// `[per-file-ignores]`: glob (relative to the config file's directory) -> rules.
    pub per_file_ignores: Vec<(String, Vec<String>)>,
    /// `[rules]`: rule -> level; a level other than `off` also enables the rule.
    pub levels: Vec<(String, Level)>,
    /// `lint-tests`: lint test code too (`#[cfg(test)]`, `#[test]`, `tests/`), off by default.
    pub lint_tests: Option<bool>,
    /// `[apis]`: library knowledge in the `rules/apis.toml` schema, merged into the built-in.
    pub apis: Option<Apis>,
    /// `[apis]` as written, for `timeoutlint config` (schema-agnostic, so sections added to
    /// `Apis` show up without a change here).
    pub apis_text: Vec<(String, String)>,
}

/// The command-line side of the layering.
#[derive(Debug, Clone, Default)]
pub struct CliSelection {
    /// `--select`.
    pub select: Vec<String>,
    /// `--extend-select`.
    pub extend_select: Vec<String>,
    /// `--ignore`.
    pub ignore: Vec<String>,
    /// `--exclude`.
    pub exclude: Vec<String>,
}

/// A found configuration: where and what.
#[derive(Debug, Clone)]
pub struct Found {
    /// The file.
    pub path: PathBuf,
    /// Its parsed content.
    pub config: FileConfig,
}

/// Per-file adjustments that [`adjust`] applies after the rules ran.
#[derive(Debug, Clone, Default)]
pub struct FileSettings {
    /// Severity overrides by rule name.
    pub severities: BTreeMap<&'static str, Severity>,
    /// Globs of `per-file-ignores` and the rules each one turns off.
    per_file: Option<(GlobSet, Vec<Vec<&'static str>>)>,
    /// The directory `per-file-ignores` globs are relative to, and the working directory the
    /// display paths are relative to (both absolute).
    base: Option<(PathBuf, PathBuf)>,
}

impl FileSettings {
    /// Is `rule` turned off for the file at display path `path` by `per-file-ignores`?
    #[must_use]
    pub fn ignored(&self, path: &str, rule: &str) -> bool {
        let Some((set, rules)) = &self.per_file else {
            return false;
        };
        let rel = match &self.base {
            Some((dir, cwd)) => {
                let abs = cwd.join(path);
                abs.strip_prefix(dir)
                    .map_or(path.to_string(), |p| p.to_string_lossy().replace('\\', "/"))
            }
            None => path.to_string(),
        };
        set.matches(&rel)
            .into_iter()
            .any(|i| rules[i].contains(&rule))
    }
}

/// The layered result: everything a run needs from configuration.
#[derive(Debug)]
pub struct Resolved {
    /// Enabled rules, in registry order.
    pub rules: Vec<&'static Rule>,
    /// Built-in knowledge plus the config's `[apis]`.
    pub apis: Apis,
    /// Levels and per-file ignores.
    pub settings: FileSettings,
    /// Exclude globs: the config's and the command line's.
    pub excludes: Vec<String>,
    /// Lint test code as production code (`lint-tests`).
    pub lint_tests: bool,
    /// The config file used, if any.
    pub file: Option<PathBuf>,
    /// `timeoutlint config`'s listing: key, value, origin.
    pub provenance: Vec<(String, String, Origin)>,
}

/// Find and read the configuration for `paths`: `explicit` when given, none when `isolated`,
/// else the nearest config file above the paths' common directory (the working directory when
/// no path is given). The one function in this module that does IO.
pub fn read_config_files(
    paths: &[PathBuf],
    explicit: Option<&Path>,
    isolated: bool,
) -> anyhow::Result<Option<Found>> {
    if isolated {
        return Ok(None);
    }
    if let Some(p) = explicit {
        let text = crate::walk::bounded::read(p, crate::walk::bounded::MANIFEST_LIMIT)
            .map_err(|e| anyhow::anyhow!("cannot read config {}: {e}", p.display()))?;
        let is_cargo = p.file_name().is_some_and(|n| n == "Cargo.toml");
        let config = if is_cargo {
            parse_cargo_toml(&text).map(Option::unwrap_or_default)
        } else {
            parse(&text)
        }
        .map_err(|e| anyhow::anyhow!("{}:{e}", p.display()))?;
        return Ok(Some(Found {
            path: p.to_path_buf(),
            config,
        }));
    }
    let cwd = std::env::current_dir()?;
    let start = common_dir(&cwd, paths);
    for dir in start.ancestors() {
        for name in FILE_NAMES {
            let p = dir.join(name);
            let is_cargo = *name == "Cargo.toml";
            let text = match crate::walk::bounded::read(&p, crate::walk::bounded::MANIFEST_LIMIT) {
                Ok(text) => text,
                Err(crate::walk::bounded::Error::NotFound) => continue,
                // A manifest is only looked at for its metadata table: one that cannot be read
                // (often in an unrelated parent directory) must not stop the run.
                Err(e) if is_cargo => {
                    eprintln!(
                        "warning: {}: {e}; looked at only for a `timeoutlint` table, skipped",
                        p.display()
                    );
                    continue;
                }
                Err(e) => anyhow::bail!("cannot read config {}: {e}", p.display()),
            };
            let parsed = if is_cargo {
                match cargo_section(&text) {
                    Ok(Some(section)) => cargo_config(&text, section),
                    Ok(None) => continue,
                    Err(e) => {
                        eprintln!(
                            "warning: {}: not valid TOML ({}); looked at only for a `timeoutlint` table, skipped",
                            p.display(),
                            one_line(&e.to_string())
                        );
                        continue;
                    }
                }
            } else {
                parse(&text)
            };
            match parsed {
                Ok(config) => return Ok(Some(Found { path: p, config })),
                Err(e) => anyhow::bail!("{}:{e}", p.display()),
            }
        }
    }
    Ok(None)
}

/// The deepest directory holding every path (absolute); `cwd` when there are none.
#[must_use]
pub fn common_dir(cwd: &Path, paths: &[PathBuf]) -> PathBuf {
    let mut dirs = paths.iter().map(|p| {
        let abs = normalize(&cwd.join(p));
        // A file's configuration is its directory's; `.rs` is checked by name so no IO is needed.
        if abs.extension().is_some_and(|x| x == "rs") {
            abs.parent().map_or(abs.clone(), Path::to_path_buf)
        } else {
            abs
        }
    });
    let Some(mut common) = dirs.next() else {
        return cwd.to_path_buf();
    };
    for d in dirs {
        while !d.starts_with(&common) {
            if !common.pop() {
                break;
            }
        }
    }
    common
}

// Lexical path normalisation lives with the walk, which needs it below this layer.
pub use crate::walk::normalize;

/// A configuration document as written. Field order is the order `known keys:` lists them in;
/// names and globs keep their place for the checks serde cannot make ([`Doc::check`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Doc {
    select: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    extend_select: Vec<Spanned<String>>,
    #[serde(default)]
    ignore: Vec<Spanned<String>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    per_file_ignores: BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
    lint_tests: Option<bool>,
    #[serde(default)]
    rules: BTreeMap<Spanned<String>, Spanned<String>>,
    apis: Option<Apis>,
}

/// The ways to a `Cargo.toml`'s table, read from the whole manifest so that an error's line is
/// the manifest's. The rest of the manifest is cargo's business (unknown keys are fine), and
/// only the way taken is typed: to cargo, the other section's `metadata` may be any value.
#[derive(Deserialize)]
struct Package {
    package: Section,
}
#[derive(Deserialize)]
struct Workspace {
    workspace: Section,
}
#[derive(Deserialize)]
struct Section {
    metadata: Metadata,
}
#[derive(Deserialize)]
struct Metadata {
    timeoutlint: Doc,
}

/// Parse a `timeoutlint.toml` document. An error starts with its `line:col: ` (with a space
/// instead when the text has no place for it), so that `path:` before it reads either way.
pub fn parse(text: &str) -> Result<FileConfig, String> {
    typed::<Doc>(text, 0)?.check(text, "")
}

/// Parse a `Cargo.toml` and return its `[package.metadata.timeoutlint]` (preferred: it is
/// nearer to the code) or `[workspace.metadata.timeoutlint]` table, if any.
pub fn parse_cargo_toml(text: &str) -> Result<Option<FileConfig>, String> {
    let section = cargo_section(text).map_err(|e| toml_error(text, &[], &e, 0))?;
    section.map(|s| cargo_config(text, s)).transpose()
}

/// Which `Cargo.toml` table is the configuration, if any. Its error (the text is not TOML) is
/// the manifest's problem, not the configuration's.
fn cargo_section(text: &str) -> Result<Option<&'static str>, toml::de::Error> {
    let manifest: toml::Table = toml::from_str(text)?;
    let table = |s: &&str| manifest.get(*s)?.get("metadata")?.get("timeoutlint");
    Ok(["package", "workspace"]
        .into_iter()
        .find(|s| table(s).is_some()))
}

fn cargo_config(text: &str, section: &str) -> Result<FileConfig, String> {
    let doc = if section == "package" {
        typed::<Package>(text, 3)?.package
    } else {
        typed::<Workspace>(text, 3)?.workspace
    };
    let prefix = format!("{section}.metadata.timeoutlint.");
    doc.metadata.timeoutlint.check(text, &prefix)
}

/// `text` as `T`; `depth` keys lead to the configuration's table.
fn typed<T: serde::de::DeserializeOwned>(text: &str, depth: usize) -> Result<T, String> {
    serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| {
        let path: Vec<String> = (e.path().iter())
            .filter_map(|segment| match segment {
                Segment::Seq { index } => Some(format!("[{index}]")),
                // toml's wrapper that carries a value's place is no key of the user's.
                Segment::Map { key } if key.starts_with("$__serde_spanned") => None,
                Segment::Map { key } | Segment::Enum { variant: key } => Some(key.clone()),
                Segment::Unknown => Some("?".into()),
            })
            .collect();
        toml_error(text, &path, e.inner(), depth)
    })
}

/// serde's error `e` at key `path`, worded for the key it is about and placed.
fn toml_error(text: &str, path: &[String], e: &toml::de::Error, depth: usize) -> String {
    let msg = e.message().trim();
    let join = |keys: &[String]| keys.join(".").replace(".[", "[");
    let unknown = (msg.strip_prefix("unknown field `")).and_then(|rest| rest.split_once('`'));
    let message = match (path.get(depth).map(String::as_str), unknown) {
        // Where the text stops being TOML, there is no key to blame.
        _ if path.is_empty() => format!("not valid TOML: {}", msg.replace('\n', ", ")),
        (None, _) => format!("`{}` must be a table", join(path)),
        // serde's message is the only place that lists a struct's fields.
        (_, Some((field, expected))) => {
            let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
            let hint = suggest(field, known.iter().copied());
            match path.len() - depth {
                1 => format!(
                    "unknown key `{}`{hint}; known keys: {}",
                    join(path),
                    known.join(", ")
                ),
                _ => format!("`{}`: {msg}{hint}", join(&path[..path.len() - 1])),
            }
        }
        (Some("apis"), None) if path.len() > depth + 1 => format!("`{}`: {msg}", join(path)),
        (Some(key), None) => {
            let shape = match key {
                "lint-tests" => "true or false",
                "rules" => "a table of rule = \"level\"",
                "per-file-ignores" => "a table of glob = [rules]",
                "apis" => "a table in the rules/apis.toml schema",
                _ => "an array of strings",
            };
            format!("`{}` must be {shape}", join(&path[..=depth]))
        }
    };
    placed(text, e.span().map(|s| s.start), &message)
}

/// `line:col: message` (1-based; the column in characters) for the byte `at` of `text`.
fn placed(text: &str, at: Option<usize>, message: &str) -> String {
    let Some(at) = at else {
        return format!(" {message}");
    };
    let p = SourceFile::new("", text).position(at);
    format!("{}:{}: {message}", p.line, p.col)
}

impl Doc {
    /// The checks serde cannot make (rule, group and level names, globs), each error at the key
    /// or value it is about; the first in the text is reported. `prefix` leads to this table.
    fn check(self, text: &str, prefix: &str) -> Result<FileConfig, String> {
        let mut errors = Vec::new();
        let select = self.select.as_deref().unwrap_or_default();
        for (key, list) in [("select", select), ("extend-select", &self.extend_select)] {
            errors.extend(unknown_rules(list, &format!("{prefix}{key}")));
        }
        errors.extend(unknown_rules(&self.ignore, &format!("{prefix}ignore")));
        for (glob, list) in &self.per_file_ignores {
            let at = format!("{prefix}per-file-ignores.\"{}\"", glob.as_ref());
            errors.extend(unknown_rules(list, &at));
        }
        let globs = self.exclude.iter().map(|g| (g, "exclude"));
        let keys = self
            .per_file_ignores
            .keys()
            .map(|g| (g, "per-file-ignores"));
        for (g, key) in globs.chain(keys) {
            if let Err(e) = Glob::new(g.as_ref()) {
                let e = format!("`{prefix}{key}`: invalid glob `{}`: {e}", g.as_ref());
                errors.push((g.span().start, e));
            }
        }
        let mut levels = Vec::new();
        for (name, level) in &self.rules {
            let at = format!("{prefix}rules.{}", name.as_ref());
            let e = check_rule_name(name.as_ref(), &at, false).err();
            errors.extend(e.map(|e| (name.span().start, e)));
            match parse_level(level.as_ref(), &at) {
                Ok(l) => levels.push((name.as_ref().clone(), l)),
                Err(e) => errors.push((level.span().start, e)),
            }
        }
        if let Some((at, e)) = errors.into_iter().min_by_key(|(at, _)| *at) {
            return Err(placed(text, Some(at), &e));
        }
        let strings = |v: Vec<Spanned<String>>| v.into_iter().map(Spanned::into_inner).collect();
        Ok(FileConfig {
            select: self.select.map(strings),
            extend_select: strings(self.extend_select),
            ignore: strings(self.ignore),
            exclude: strings(self.exclude),
            per_file_ignores: (self.per_file_ignores.into_iter())
                .map(|(g, names)| (g.into_inner(), strings(names)))
                .collect(),
            levels,
            lint_tests: self.lint_tests,
            apis_text: (self.apis.as_ref()).map_or(Vec::new(), |_| apis_text(text, prefix)),
            apis: self.apis,
        })
    }
}

/// The names in `list` that are neither rules nor groups, each at its place.
fn unknown_rules<'a>(list: &'a [Spanned<String>], at: &'a str) -> Vec<(usize, String)> {
    let unknown = |n: &Spanned<String>| check_rule_name(n.as_ref(), at, true).err();
    (list.iter())
        .filter_map(|n| Some((n.span().start, unknown(n)?)))
        .collect()
}

/// `[apis]` as written, as `key.sub = value` lines: read again untyped, so a section added to
/// `Apis` shows without a change here.
fn apis_text(text: &str, prefix: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let value: Option<toml::Value> = toml::from_str(text).ok();
    let keys = prefix.split_terminator('.').chain(["apis"]);
    if let Some(apis) = keys.fold(value.as_ref(), |v, k| v?.get(k)) {
        flatten(apis, "apis", &mut out);
    }
    out
}

/// A multi-line TOML error (place, excerpt, message) as one line: place and message.
fn one_line(e: &str) -> String {
    let mut lines = e.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    match lines.next_back() {
        Some(last) => format!("{first}: {last}"),
        None => first.to_string(),
    }
}

/// Is `name` a rule (or, when `groups`, a group)? The error names the place and a suggestion.
pub fn check_rule_name(name: &str, at: &str, groups: bool) -> Result<(), String> {
    if rules::by_name(name).is_some() || (groups && GROUPS.contains(&name)) {
        return Ok(());
    }
    let candidates = rules::ALL
        .iter()
        .map(|r| r.name)
        .chain(GROUPS.iter().copied().filter(|_| groups));
    Err(format!(
        "unknown rule `{name}` in `{at}`{}; `timeoutlint rules` lists them",
        suggest(name, candidates)
    ))
}

fn parse_level(s: &str, at: &str) -> Result<Level, String> {
    const LEVELS: &[&str] = &["error", "warning", "note", "off"];
    Ok(match s {
        "error" => Level::On(Severity::Error),
        "warning" => Level::On(Severity::Warning),
        "note" => Level::On(Severity::Note),
        "off" => Level::Off,
        _ => {
            return Err(format!(
                "unknown level `{s}` in `{at}`{}; use one of {}",
                suggest(s, LEVELS.iter().copied()),
                LEVELS.join(", ")
            ))
        }
    })
}

/// `(did you mean `x`?)` for the closest candidate within a small edit distance, else nothing.
#[must_use]
pub fn suggest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    candidates
        .map(|c| (strsim::levenshtein(word, c), c))
        .min()
        .filter(|(d, _)| *d <= 3.max(word.len() / 3))
        .map_or(String::new(), |(_, c)| format!(" (did you mean `{c}`?)"))
}

/// Layer the defaults, the config file and the command line (in that order; a layer's `select`
/// replaces everything before it, `extend-select` adds, `ignore` removes, ruff's model) for a
/// lint of `roots` (relative to `cwd`).
pub fn resolve(
    found: Option<&Found>,
    cli: &CliSelection,
    cwd: &Path,
    roots: &[PathBuf],
) -> anyhow::Result<Resolved> {
    let at = |flag: &str| format!("--{flag}");
    for (flag, names) in [
        ("select", &cli.select),
        ("extend-select", &cli.extend_select),
        ("ignore", &cli.ignore),
    ] {
        for n in names {
            check_rule_name(n, &at(flag), true).map_err(anyhow::Error::msg)?;
        }
    }
    let file_origin = found.map_or(Origin::Default, |f| Origin::File(f.path.clone()));
    let empty = FileConfig::default();
    let fc = found.map_or(&empty, |f| &f.config);
    let mut prov = Vec::new();
    let show = |v: &[String]| format!("{v:?}");

    let mut on: Vec<&'static Rule> = expand("default");
    let after_default = on.clone();
    let mut select_origin = Origin::Default;
    let mut select_value = vec!["default".to_string()];
    // The file layer: `[rules]` levels other than `off` act as extend-select, `off` as ignore.
    let mut file_extend = fc.extend_select.clone();
    let mut file_ignore = fc.ignore.clone();
    for (name, level) in &fc.levels {
        match level {
            Level::On(_) => file_extend.push(name.clone()),
            Level::Off => file_ignore.push(name.clone()),
        }
    }
    if let Some(sel) = &fc.select {
        on = sel.iter().flat_map(|s| expand(s)).collect();
        select_origin = file_origin.clone();
        select_value.clone_from(sel);
    }
    add(&mut on, &file_extend);
    remove(&mut on, &file_ignore);
    let after_file = on.clone();
    if !cli.select.is_empty() {
        on = cli.select.iter().flat_map(|s| expand(s)).collect();
        select_origin = Origin::Cli("--select");
        select_value.clone_from(&cli.select);
    }
    add(&mut on, &cli.extend_select);
    remove(&mut on, &cli.ignore);
    let rules: Vec<&'static Rule> = rules::ALL
        .iter()
        .copied()
        .filter(|r| on.iter().any(|o| std::ptr::eq(*o, *r)))
        .collect();

    prov.push(("select".into(), show(&select_value), select_origin));
    for (key, file, cli_v, flag) in [
        (
            "extend-select",
            &fc.extend_select,
            &cli.extend_select,
            "--extend-select",
        ),
        ("ignore", &fc.ignore, &cli.ignore, "--ignore"),
        ("exclude", &fc.exclude, &cli.exclude, "--exclude"),
    ] {
        if file.is_empty() && cli_v.is_empty() {
            prov.push((key.into(), "[]".into(), Origin::Default));
        }
        if !file.is_empty() {
            prov.push((key.into(), show(file), file_origin.clone()));
        }
        if !cli_v.is_empty() {
            prov.push((key.into(), show(cli_v), Origin::Cli(flag)));
        }
    }

    let mut severities = BTreeMap::new();
    for r in rules::ALL {
        let configured = fc.levels.iter().rev().find(|(n, _)| n == r.name);
        let enabled = rules.iter().any(|e| std::ptr::eq(*e, *r));
        let (level, origin) = match configured {
            Some((_, Level::On(s))) => {
                severities.insert(r.name, *s);
                (s.as_str(), file_origin.clone())
            }
            Some((_, Level::Off)) => ("off", file_origin.clone()),
            None => (r.default_severity.as_str(), Origin::Default),
        };
        let shown = if enabled { level } else { "off" };
        // Whether it runs was decided by the last layer that changed it.
        let has = |v: &[&'static Rule]| v.iter().any(|x| std::ptr::eq(*x, *r));
        let origin = if has(&after_file) != enabled {
            Origin::Cli(if enabled {
                "--select/--extend-select"
            } else {
                "--select/--ignore"
            })
        } else if configured.is_some() || has(&after_default) != has(&after_file) {
            file_origin.clone()
        } else {
            origin
        };
        prov.push((format!("rules.{}", r.name), format!("{shown:?}"), origin));
    }

    let mut per_file = None;
    if !fc.per_file_ignores.is_empty() {
        let mut b = GlobSetBuilder::new();
        let mut lists = Vec::new();
        for (glob, names) in &fc.per_file_ignores {
            b.add(Glob::new(glob)?);
            lists.push(
                names
                    .iter()
                    .flat_map(|n| expand(n))
                    .map(|r| r.name)
                    .collect(),
            );
            prov.push((
                format!("per-file-ignores.{glob:?}"),
                show(names),
                file_origin.clone(),
            ));
        }
        per_file = Some((b.build()?, lists));
    }
    let base = found.and_then(|f| {
        let abs = normalize(&cwd.join(&f.path));
        abs.parent().map(|d| (d.to_path_buf(), cwd.to_path_buf()))
    });

    let mut apis = Apis::builtin();
    if let Some(extra) = &fc.apis {
        for (k, v) in &fc.apis_text {
            prov.push((k.clone(), format!("+= {v}"), file_origin.clone()));
        }
        apis.extend(extra.clone());
    }
    let mut excludes = match &base {
        Some((dir, _)) => anchor_excludes(&fc.exclude, dir, cwd, roots),
        None => fc.exclude.clone(),
    };
    excludes.extend(cli.exclude.iter().cloned());
    let lint_tests = fc.lint_tests.unwrap_or(false);
    if let Some(v) = fc.lint_tests {
        prov.push(("lint-tests".into(), v.to_string(), file_origin.clone()));
    }
    Ok(Resolved {
        rules,
        apis,
        settings: FileSettings {
            severities,
            per_file,
            base,
        },
        excludes,
        lint_tests,
        file: found.map(|f| f.path.clone()),
        provenance: prov,
    })
}

/// The config's `exclude` globs rewritten for the walker, which matches them relative to each
/// linted root: a glob with a slash is anchored at the config file's directory (like a
/// `.gitignore` line), so `crates/a/gen/**` becomes `/gen/**` when `crates/a` is linted and
/// does not apply to other roots; a glob without one (`vendor`, `*.pb.rs`) matches at any depth
/// and is kept.
#[must_use]
pub fn anchor_excludes(
    globs: &[String],
    config_dir: &Path,
    cwd: &Path,
    roots: &[PathBuf],
) -> Vec<String> {
    let roots: Vec<PathBuf> = if roots.is_empty() {
        vec![cwd.to_path_buf()]
    } else {
        roots.iter().map(|r| normalize(&cwd.join(r))).collect()
    };
    let mut out = Vec::new();
    for g in globs {
        let body = g.strip_prefix('/').unwrap_or(g);
        let anchored = g.starts_with('/') || body.trim_end_matches('/').contains('/');
        if !anchored || body.starts_with("**/") {
            out.push(g.clone());
            continue;
        }
        for root in &roots {
            if let Ok(rel) = root.strip_prefix(config_dir) {
                let rel = rel.to_string_lossy().replace('\\', "/");
                if rel.is_empty() {
                    out.push(format!("/{body}"));
                } else if let Some(rest) = body.strip_prefix(&format!("{rel}/")) {
                    out.push(format!("/{rest}"));
                }
            } else if let Ok(up) = config_dir.strip_prefix(root) {
                let up = up.to_string_lossy().replace('\\', "/");
                out.push(format!("/{up}/{body}"));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `key.sub = value` lines of a TOML value, leaves only.
fn flatten(value: &toml::Value, prefix: &str, out: &mut Vec<(String, String)>) {
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                flatten(v, &format!("{prefix}.{k}"), out);
            }
        }
        leaf => out.push((prefix.to_string(), leaf.to_string())),
    }
}

fn expand(name: &str) -> Vec<&'static Rule> {
    match name {
        "all" => rules::ALL.to_vec(),
        "default" => rules::ALL
            .iter()
            .copied()
            .filter(|r| r.default_enabled)
            .collect(),
        "pedantic" => rules::ALL
            .iter()
            .copied()
            .filter(|r| !r.default_enabled)
            .collect(),
        _ => rules::by_name(name).into_iter().collect(),
    }
}

fn add(on: &mut Vec<&'static Rule>, names: &[String]) {
    on.extend(names.iter().flat_map(|n| expand(n)));
}

fn remove(on: &mut Vec<&'static Rule>, names: &[String]) {
    let off: Vec<&'static Rule> = names.iter().flat_map(|n| expand(n)).collect();
    on.retain(|r| !off.iter().any(|o| std::ptr::eq(*o, *r)));
}

/// `timeoutlint config`: the effective configuration as TOML-ish lines, each with its origin.
#[must_use]
pub fn render(resolved: &Resolved) -> String {
    let mut s = String::new();
    match &resolved.file {
        Some(p) => {
            let _ = writeln!(s, "# configuration file: {}", p.display());
        }
        None => s.push_str("# no configuration file (built-in defaults)\n"),
    }
    let width = resolved
        .provenance
        .iter()
        .map(|(k, v, _)| k.len() + v.len() + 3)
        .max()
        .unwrap_or(0);
    for (k, v, origin) in &resolved.provenance {
        // Library knowledge is added to the built-in, which `+=` says.
        let line = if v.starts_with("+= ") {
            format!("{k} {v}")
        } else {
            format!("{k} = {v}")
        };
        let _ = writeln!(s, "{line:<width$}  # {origin}");
    }
    s
}

/// Drop findings of rules turned off for their file by `per-file-ignores` and apply configured
/// severities. Runs after suppression, so it also covers `unused-suppression`'s findings.
pub fn adjust(src: &SourceFile, settings: &FileSettings, diags: &mut Vec<Diagnostic>) {
    diags.retain(|d| !settings.ignored(&src.path, d.rule.name));
    for d in diags {
        if let Some(s) = settings.severities.get(d.rule.name) {
            d.severity = *s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, cli: &CliSelection) -> String {
        let found = match parse(text) {
            Ok(config) => Found {
                path: PathBuf::from("timeoutlint.toml"),
                config,
            },
            Err(e) => return format!("error: {e}"),
        };
        match resolve(Some(&found), cli, Path::new("/p"), &[]) {
            Ok(r) => r.rules.iter().map(|r| r.name).collect::<Vec<_>>().join(" "),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn layering_and_errors() {
        let none = CliSelection::default();
        let sel = |s: &str| CliSelection {
            select: vec![s.into()],
            ..CliSelection::default()
        };
        let default = check("", &none);
        assert!(default.contains("unbounded-retry"));
        assert_eq!(
            check("select = [\"unbounded-retry\"]", &none),
            "unbounded-retry"
        );
        assert_eq!(
            check(
                "select = [\"unbounded-retry\"]",
                &sel("blocking-sleep-in-async")
            ),
            "blocking-sleep-in-async",
            "the command line's select replaces the file's"
        );
        assert!(!check("[rules]\nunbounded-retry = \"off\"", &none).contains("unbounded-retry"));
        assert!(
            check("[rules]\nsuppression-without-reason = \"error\"", &none)
                .contains("suppression-without-reason")
        );
        insta::assert_snapshot!(check("selct = []", &none), @"error: 1:1: unknown key `selct` (did you mean `select`?); known keys: select, extend-select, ignore, exclude, per-file-ignores, lint-tests, rules, apis");
        insta::assert_snapshot!(check("ignore = [\"unbounded-retyr\"]", &none), @"error: 1:11: unknown rule `unbounded-retyr` in `ignore` (did you mean `unbounded-retry`?); `timeoutlint rules` lists them");
        insta::assert_snapshot!(check("[rules]\nunbounded-retry = \"eror\"", &none), @"error: 2:19: unknown level `eror` in `rules.unbounded-retry` (did you mean `error`?); use one of error, warning, note, off");
        // The list of expected fields grows with apis.toml; the message's shape is what matters.
        let typo = check("[apis.retry]\ncals = []", &none);
        assert!(
            typo.starts_with(
                "error: 2:1: `apis.retry`: unknown field `cals`, expected one of `calls`"
            ) && typo.ends_with("(did you mean `calls`?)"),
            "{typo}"
        );
        insta::assert_snapshot!(check("", &sel("pedantc")), @"error: unknown rule `pedantc` in `--select` (did you mean `pedantic`?); `timeoutlint rules` lists them");
    }

    #[test]
    fn cargo_metadata_tables() {
        let pkg = "[package]\nname='a'\n[package.metadata.timeoutlint]\nignore=['unbounded-retry']\n[workspace.metadata.timeoutlint]\nselect=['all']\n";
        let c = parse_cargo_toml(pkg).unwrap().unwrap();
        assert_eq!(c.ignore, vec!["unbounded-retry"]);
        assert!(parse_cargo_toml("[package]\nname='a'\n").unwrap().is_none());
        let e = parse_cargo_toml("[workspace.metadata.timeoutlint]\nexlude=[]\n").unwrap_err();
        assert!(e.contains("`workspace.metadata.timeoutlint.exlude` (did you mean `exclude`?)"));
    }

    /// Every kind of error names the line and column (in characters) of the key it is about
    /// (an unknown key, a `[rules]` name, a `per-file-ignores` glob) or else of the value; each
    /// case puts it on line 3 and at a column of its own.
    #[test]
    fn errors_carry_the_line_and_column_of_what_is_wrong() {
        let doc = |text: &str| parse(text).err();
        let cargo = |text: &str| parse_cargo_toml(text).err();
        let cases = [
            doc("select = []\n\nexlude = []\n"),
            doc("# c\n\nselect = \"all\"\n"),
            doc("\n\nignore = [\"unbounded-retry\", 3]\n"),
            doc("\n\nextend-select = [\"pedantic\", \"unbounded-retyr\"]\n"),
            doc("\n\nignore = [\"é\", 3]\n"),
            doc("\n\nlint-tests = \"yes\"\n"),
            doc("[rules]\nunbounded-retry = \"off\"\n  unbounded-retyr = \"error\"\n"),
            doc("[rules]\n\nunbounded-retry = \"eror\"\n"),
            doc("[rules]\n\nunbounded-retry = 2\n"),
            doc("[per-file-ignores]\n\"ok/**\" = []\n\"a/{b\" = [\"all\"]\n"),
            doc("[per-file-ignores]\n\n\"t/**\" = [\"unbounded-retyr\"]\n"),
            doc("exclude = [\n  \"ok\",\n  \"a/{b\",\n]\n"),
            doc("[apis.sleeps]\n\nasink = []\n"),
            doc("[apis.sleeps]\n\nasync = [1]\n"),
            doc("[apis.retry]\n\ncalls = [{ strategy = 0 }]\n"),
            doc("select = []\n\n[rules\n"),
            cargo("[package]\nname = 'a'\n[package.metadata.timeoutlint]\nselect = []\n  selct = []\n"),
            cargo("[workspace]\n[workspace.metadata.timeoutlint.rules]\nunbounded-retry = 'eror'\n"),
            cargo("[package]\nname = 'a'\nmetadata.timeoutlint = 5\n"),
        ];
        let shown: Vec<String> = cases.into_iter().map(Option::unwrap_or_default).collect();
        insta::assert_snapshot!(shown.join("\n"), @r#"
3:1: unknown key `exlude` (did you mean `exclude`?); known keys: select, extend-select, ignore, exclude, per-file-ignores, lint-tests, rules, apis
3:10: `select` must be an array of strings
3:30: `ignore` must be an array of strings
3:30: unknown rule `unbounded-retyr` in `extend-select` (did you mean `unbounded-retry`?); `timeoutlint rules` lists them
3:16: `ignore` must be an array of strings
3:14: `lint-tests` must be true or false
3:3: unknown rule `unbounded-retyr` in `rules.unbounded-retyr` (did you mean `unbounded-retry`?); `timeoutlint rules` lists them
3:19: unknown level `eror` in `rules.unbounded-retry` (did you mean `error`?); use one of error, warning, note, off
3:19: `rules` must be a table of rule = "level"
3:1: `per-file-ignores`: invalid glob `a/{b`: error parsing glob 'a/{b': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)
3:11: unknown rule `unbounded-retyr` in `per-file-ignores."t/**"` (did you mean `unbounded-retry`?); `timeoutlint rules` lists them
3:3: `exclude`: invalid glob `a/{b`: error parsing glob 'a/{b': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)
3:1: `apis.sleeps`: unknown field `asink`, expected `async` or `blocking` (did you mean `async`?)
3:10: `apis.sleeps.async[0]`: invalid type: integer `1`, expected a string
3:10: `apis.retry.calls[0]`: missing field `path`
3:7: not valid TOML: invalid table header, expected `.`, `]`
5:3: unknown key `package.metadata.timeoutlint.selct` (did you mean `select`?); known keys: select, extend-select, ignore, exclude, per-file-ignores, lint-tests, rules, apis
3:19: unknown level `eror` in `workspace.metadata.timeoutlint.rules.unbounded-retry` (did you mean `error`?); use one of error, warning, note, off
3:24: `package.metadata.timeoutlint` must be a table
"#);
    }

    /// Input that is hostile rather than mistaken is an error too, never a panic or a stack
    /// overflow.
    #[test]
    fn hostile_input_is_an_error() {
        let deep = format!("select = {}{}", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse(&deep).unwrap_err();
        assert!(e.contains("not valid TOML"), "{e}");
        let cargo = format!(
            "[package.metadata.timeoutlint]\nselect = {}",
            "[".repeat(100_000)
        );
        assert!(parse_cargo_toml(&cargo).is_err());
        let huge = format!("ignore = [{}]", "\"unbounded-retry\",".repeat(50_000));
        assert_eq!(parse(&huge).unwrap().ignore.len(), 50_000);
        let e = parse(&format!("{}x = 1", "\n".repeat(100_000))).unwrap_err();
        assert!(e.starts_with("100001:1: unknown key `x`"), "{e}");
    }

    #[test]
    fn excludes_are_anchored_at_the_config_directory() {
        let globs: Vec<String> = ["vendor", "crates/a/gen/**", "/build.rs", "**/x/*.rs"]
            .iter()
            .map(ToString::to_string)
            .collect();
        let check = |roots: &[&str]| {
            let roots: Vec<PathBuf> = roots.iter().map(PathBuf::from).collect();
            anchor_excludes(&globs, Path::new("/w"), Path::new("/w"), &roots).join(" ")
        };
        assert_eq!(check(&[]), "**/x/*.rs /build.rs /crates/a/gen/** vendor");
        assert_eq!(check(&["crates/a"]), "**/x/*.rs /gen/** vendor");
        assert_eq!(check(&["crates/b"]), "**/x/*.rs vendor");
    }

    #[test]
    fn common_dir_of_paths() {
        let cwd = Path::new("/w");
        assert_eq!(common_dir(cwd, &[]), PathBuf::from("/w"));
        assert_eq!(
            common_dir(cwd, &["a/b".into(), "a/c/x.rs".into()]),
            PathBuf::from("/w/a")
        );
        assert_eq!(common_dir(cwd, &[".".into()]), PathBuf::from("/w"));
    }
}
