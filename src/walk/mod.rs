//! Finding the files to lint, and reading them. One of the three places that do IO.
//!
//! `ignore`'s parallel walker respects `.gitignore` / `.ignore` (also outside git repositories),
//! skips hidden entries and `target/` directories, and never follows symbolic links, so a link
//! cannot lead out of the tree or into a loop. Paths given explicitly are linted even when an
//! ignore file would skip them, like rustfmt and ruff do.

pub mod bounded;
pub mod crates;
pub mod units;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};

use crate::base::diagnostic::FileError;

/// The `.rs` files under `roots`, sorted, and the entries that could not be walked.
pub fn rust_files(roots: &[PathBuf], excludes: &[String]) -> (Vec<PathBuf>, Vec<FileError>) {
    let files = Mutex::new(Vec::new());
    let errors = Mutex::new(Vec::new());
    // Directories to walk, each with its exclusions (globs are relative to their root).
    let mut dirs: Vec<(&PathBuf, ignore::overrides::Override)> = Vec::new();
    for root in roots {
        // What is wrong with a root that is not a directory to walk, if anything.
        let problem = match std::fs::symlink_metadata(root) {
            Err(e) => Some(format!("cannot read: {e}")),
            Ok(m) if m.is_file() => {
                push(&files, root.clone());
                continue;
            }
            // A link named on the command line is not followed either: its target may lie
            // outside the tree, and `--fix` would write there.
            Ok(m) if m.file_type().is_symlink() => Some(
                "is a symbolic link; links are never followed (name its target instead)".into(),
            ),
            // A FIFO or device named on the command line: the walker would skip it without a
            // word, and reading it could block or never end.
            Ok(m) if !m.is_dir() => Some(crate::walk::bounded::special_file(root).map_or_else(
                || "not a regular file or a directory; not linted".to_string(),
                |k| format!("not a regular file ({k}); not linted"),
            )),
            Ok(_) => None,
        };
        if let Some(message) = problem {
            push(
                &errors,
                FileError {
                    path: display(root),
                    line: None,
                    column: None,
                    message,
                },
            );
            continue;
        }
        // The walker reads the ignore files of the root and of every directory above it.
        if let Some(e) = root_ignore_file_error(root) {
            push(&errors, e);
            continue;
        }
        let mut ov = OverrideBuilder::new(root);
        for g in excludes {
            if let Err(e) = ov.add(&format!("!{g}")) {
                push(
                    &errors,
                    FileError {
                        path: g.clone(),
                        line: None,
                        column: None,
                        message: format!("invalid --exclude glob: {e}"),
                    },
                );
            }
        }
        let overrides = ov
            .build()
            .unwrap_or_else(|_| ignore::overrides::Override::empty());
        dirs.push((root, overrides));
    }
    // Without exclusions one walker takes every directory: a walker per root starts its own
    // threads, which cost more than walking a small crate (1.8 s over 1,274 crates).
    let groups: Vec<Vec<(&PathBuf, ignore::overrides::Override)>> = if excludes.is_empty() {
        vec![dirs]
    } else {
        dirs.into_iter().map(|d| vec![d]).collect()
    };
    // Ignore files the walker would have to read and must not (see `ignore_file_error`).
    let ignore_errors: std::sync::Arc<Mutex<Vec<FileError>>> = std::sync::Arc::default();
    for group in groups {
        let mut group = group.into_iter();
        let Some((first, overrides)) = group.next() else {
            continue;
        };
        let mut builder = WalkBuilder::new(first);
        for (root, _) in group {
            builder.add(root);
        }
        let walker = builder
            .hidden(true)
            .follow_links(false)
            .require_git(false)
            .overrides(overrides)
            .filter_entry({
                let ignore_errors = std::sync::Arc::clone(&ignore_errors);
                move |e| {
                    let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                    if is_dir && e.depth() > 0 {
                        if e.file_name() == "target" {
                            return false;
                        }
                        if let Some(err) = ignore_file_error(e.path(), e.path()) {
                            push(&ignore_errors, err);
                            return false;
                        }
                    }
                    true
                }
            })
            .build_parallel();
        walker.run(|| {
            Box::new(|entry| {
                match entry {
                    Ok(e) => {
                        let is_file = e.file_type().is_some_and(|t| t.is_file());
                        if is_file && e.path().extension().is_some_and(|x| x == "rs") {
                            push(&files, e.into_path());
                        }
                    }
                    Err(err) => push(
                        &errors,
                        FileError {
                            path: err_path(&err).unwrap_or_default(),
                            line: None,
                            column: None,
                            message: format!("cannot walk: {err}"),
                        },
                    ),
                }
                WalkState::Continue
            })
        });
    }
    let mut files = files
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    files.sort();
    files.dedup();
    if roots_overlap(roots) {
        dedupe_same_files(&mut files);
    }
    let mut errors = errors
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    errors.extend(
        ignore_errors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain(..),
    );
    errors.sort_by(|a, b| a.path.cmp(&b.path));
    (files, errors)
}

/// The ignore files `ignore`'s walker reads in a directory (it has no size limit and would
/// block on a FIFO or read `/dev/zero` without end), and `.git`, which it may read as a file.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".git", ".git/info/exclude"];

/// An error when one of `dir`'s ignore files is a FIFO, device or socket: `walked` (`dir` or a
/// root below it) is not walked, rather than the walk hanging.
fn ignore_file_error(dir: &Path, walked: &Path) -> Option<FileError> {
    IGNORE_FILES.iter().find_map(|name| {
        let p = dir.join(name);
        let kind = crate::walk::bounded::special_file(&p)?;
        Some(FileError {
            path: display(&p),
            line: None,
            column: None,
            message: format!(
                "not a regular file ({kind}); not read, so {} is not walked",
                display(walked)
            ),
        })
    })
}

/// [`ignore_file_error`] for a root directory and every directory above it.
fn root_ignore_file_error(root: &Path) -> Option<FileError> {
    let abs = std::env::current_dir().map_or_else(|_| root.to_path_buf(), |c| c.join(root));
    normalize(&abs)
        .ancestors()
        .find_map(|dir| ignore_file_error(dir, root))
}

/// Whether one root, resolved, is or holds another: only then can the walk list a file twice
/// (it follows no link), so disjoint roots (one per crate, as the benchmark gives) pay nothing.
fn roots_overlap(roots: &[PathBuf]) -> bool {
    if roots.len() < 2 {
        return false;
    }
    let mut resolved: Vec<PathBuf> = roots
        .iter()
        .map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.clone()))
        .collect();
    // Component order puts a directory right before everything under it.
    resolved.sort();
    resolved.windows(2).any(|w| w[1].starts_with(&w[0]))
}

/// Drop every later spelling of a file already listed (`a/` and `./a/b.rs`, an absolute and a
/// relative path): one file is linted, reported and fixed once.
fn dedupe_same_files(files: &mut Vec<PathBuf>) {
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| {
        // A file that cannot be resolved is kept: reading it reports why.
        let key = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
        seen.insert(key)
    });
}

fn push<T>(m: &Mutex<Vec<T>>, v: T) {
    m.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(v);
}

fn err_path(err: &ignore::Error) -> Option<String> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(display(path)),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            err_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(display(child)),
        _ => None,
    }
}

/// How a path is printed: relative to the working directory when under it, `/`-separated.
#[must_use]
pub fn display(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    let rel = cwd
        .as_deref()
        .and_then(|c| path.strip_prefix(c).ok())
        .unwrap_or(path);
    let s = rel.to_string_lossy();
    // `\\` separates components only on Windows; elsewhere it is part of a file name and
    // printing it as `/` would name another file.
    let s = if cfg!(windows) {
        s.replace('\\', "/")
    } else {
        s.into_owned()
    };
    let s = s.trim_start_matches("./").to_string();
    if s.is_empty() {
        ".".into()
    } else {
        s
    }
}

/// The crate each file belongs to: the nearest ancestor directory holding a `Cargo.toml`,
/// cached per directory.
#[derive(Debug, Default)]
pub struct CrateRoots {
    cache: std::collections::HashMap<PathBuf, Option<PathBuf>>,
}

impl CrateRoots {
    /// The crate root of `file`, or `None` outside any crate.
    pub fn of(&mut self, file: &Path) -> Option<PathBuf> {
        let dir = file.parent()?.to_path_buf();
        self.dir(&dir)
    }

    fn dir(&mut self, dir: &Path) -> Option<PathBuf> {
        if let Some(r) = self.cache.get(dir) {
            return r.clone();
        }
        let r = if dir.join("Cargo.toml").is_file() {
            Some(dir.to_path_buf())
        } else {
            dir.parent().and_then(|p| self.dir(p))
        };
        self.cache.insert(dir.to_path_buf(), r.clone());
        r
    }
}

/// Read a file as UTF-8, refusing files over `max_bytes`.
pub fn read(path: &Path, max_bytes: u64) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if meta.is_dir() {
        return Err("is a directory".into());
    }
    if let Some(kind) = crate::walk::bounded::special_kind(meta.file_type()) {
        return Err(format!("not a regular file ({kind}); not linted"));
    }
    if meta.len() > max_bytes {
        return Err(format!(
            "file is {} bytes, over the {max_bytes}-byte limit (--max-file-size); skipped",
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    decode(bytes)
}

/// A file's bytes as its text, or the per-file error for non-UTF-8 content. Separate from
/// [`read`] so the fuzz target (`fuzz/`) feeds arbitrary bytes through the very check the CLI
/// makes.
pub fn decode(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not valid UTF-8 (first bad byte at offset {}); Rust source must be UTF-8",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The cargo target each of `paths` (display paths, as in diagnostics) belongs to, for the
/// `compiler-message` envelope of `--message-format=json`. Paths in no cargo package are left
/// out. Manifests are read once per directory.
#[must_use]
pub fn crate_targets<'a>(
    paths: impl IntoIterator<Item = &'a str>,
) -> std::collections::BTreeMap<String, crate::walk::crates::CrateTarget> {
    use std::collections::HashMap;
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut manifests: HashMap<PathBuf, Option<toml::Table>> = HashMap::new();
    let mut load = |dir: &Path| -> Option<toml::Table> {
        manifests
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                let path = dir.join("Cargo.toml");
                // The envelope is an extra: a manifest that cannot be read leaves its files
                // without a target, with a warning, and never stops the output.
                let text =
                    match crate::walk::bounded::read(&path, crate::walk::bounded::MANIFEST_LIMIT) {
                        Ok(t) => t,
                        Err(crate::walk::bounded::Error::NotFound) => return None,
                        Err(e) => {
                            eprintln!(
                                "warning: {}: {e}; no cargo target for its files",
                                path.display()
                            );
                            return None;
                        }
                    };
                let table = text.parse::<toml::Table>().ok();
                if table.is_none() {
                    eprintln!(
                        "warning: {}: not valid TOML; no cargo target for its files",
                        path.display()
                    );
                }
                table
            })
            .clone()
    };
    let mut out = std::collections::BTreeMap::new();
    for shown in paths {
        let file = cwd.join(shown);
        let mut package = None;
        let mut workspace = None;
        for dir in file.ancestors().skip(1) {
            let Some(m) = load(dir) else { continue };
            if package.is_none() && m.contains_key("package") {
                package = Some((dir.join("Cargo.toml"), m.clone()));
            }
            if package.is_some() && m.contains_key("workspace") {
                workspace = Some(m);
                break;
            }
        }
        let Some((manifest_path, manifest)) = package else {
            continue;
        };
        let exists = |p: &Path| p.is_file();
        if let Some(t) = crates::crate_target(
            &manifest_path,
            &manifest,
            workspace.as_ref(),
            &file,
            &exists,
        ) {
            out.insert(shown.to_string(), t);
        }
    }
    out
}

/// Remove `.` and resolve `..` lexically (no symlink resolution, no IO).
#[must_use]
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
