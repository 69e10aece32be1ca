//! `--fix`, `--unsafe-fixes`, `--diff` and `--allow-dirty`: the IO around the pure fix engine
//! ([`crate::fix`]): the fix rounds over the run's own findings, the git-dirty check, writing
//! fixed files safely ([`write_fixed`]), printing the unified diff.
//!
//! Deliberately absent: deciding what a fix is or whether it applies (that is `fix` and the
//! rules). This module only moves text between the engine, the disk and stdout.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::base::diagnostic::{Diagnostic, FileError};
use crate::base::source::SourceFile;
use crate::driver::{self, Overlay};
use crate::emit::Report;
use crate::fix::{self, Level};

/// The fix switches, flattened into the command line.
// Each bool is an independent command-line switch; clap flags read best as plain fields.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Default, clap::Args)]
#[command(group(clap::ArgGroup::new("fix_mode").args(["fix", "diff"])))]
pub struct FixArgs {
    /// Apply the machine-applicable fixes, then report what is left.
    #[arg(long)]
    pub fix: bool,
    /// With --fix or --diff, also apply fixes that may be incorrect (review them).
    #[arg(long, requires = "fix_mode")]
    pub unsafe_fixes: bool,
    /// Print the fixes as a unified diff (for `git apply`) and write nothing.
    #[arg(long, conflicts_with = "fix")]
    pub diff: bool,
    /// Let --fix write into files with uncommitted git changes.
    #[arg(long, requires = "fix")]
    pub allow_dirty: bool,
}

impl FixArgs {
    /// Whether any fixing was asked for.
    #[must_use]
    pub fn active(&self) -> bool {
        self.fix || self.diff
    }

    fn level(&self) -> Level {
        if self.unsafe_fixes {
            Level::Unsafe
        } else {
            Level::Safe
        }
    }
}

/// What fixing did.
pub enum Outcome {
    /// `--diff` ran: exit with this code (1 when there was a diff, as `ruff --diff`).
    Diff(u8),
    /// `--fix` ran: the report of what is left, from the files as now written. A file that could
    /// not be written is one of its errors (exit 2), with the reason.
    Fixed(Report),
}

/// One file the fix rounds changed.
struct Changed {
    /// Display path.
    shown: String,
    /// The text read at the start of the run: the file must still hold it to be written.
    original: String,
    /// Fixes applied to it over all rounds.
    applied: usize,
}

/// Fix what `report` found, round after round, and print the result as a diff or write it.
///
/// Only the fixes of findings the run reported are applied: each round takes the fixes of the
/// current report, and the next report comes from the driver linting `lint_run` again with the
/// changed files read from the overlay, so crate-level findings (and the suppressions that
/// silence them) keep their crate in view. Applying and re-parsing run on the big-stack
/// workers, like the lint.
// This module is part of the IO edge (lib.rs invariant 1): it writes the fixed files.
#[allow(clippy::disallowed_methods)]
pub fn run(
    args: &FixArgs,
    lint_run: &driver::Run,
    report: Report,
    stdout: &mut impl Write,
) -> anyhow::Result<Outcome> {
    let threads = lint_run.threads;
    let level = args.level();
    let mut report = report;
    let mut overlay = Overlay::new();
    let mut changed: BTreeMap<PathBuf, Changed> = BTreeMap::new();
    let mut rolled_back: BTreeSet<PathBuf> = BTreeSet::new();
    for _ in 0..fix::MAX_ROUNDS {
        let todo: Vec<&(SourceFile, Vec<Diagnostic>)> = report
            .files
            .iter()
            .filter(|(src, diags)| {
                !rolled_back.contains(&src.real_path) && !fix::select(diags, level).is_empty()
            })
            .collect();
        let mut errors = Vec::new();
        let next: Vec<Option<(String, usize, bool)>> =
            driver::parallel(todo.len(), threads, &mut errors, |i| {
                let (src, diags) = todo[i];
                let chosen = fix::select(diags, level);
                let text = fix::apply(&src.text, &chosen);
                (text != src.text).then(|| {
                    let parses = fix::parses(&text);
                    (text, chosen.len(), parses)
                })
            });
        if let Some(e) = errors.into_iter().next() {
            anyhow::bail!("{}", e.message);
        }
        let mut progressed = false;
        for (&(src, _), next) in todo.iter().zip(next) {
            let Some((text, n, parses)) = next else {
                continue;
            };
            if !parses {
                eprintln!(
                    "warning: {}: a fix made the file unparsable and was rolled back (a timeoutlint bug; please report it)",
                    src.path
                );
                rolled_back.insert(src.real_path.clone());
                continue;
            }
            changed
                .entry(src.real_path.clone())
                .or_insert_with(|| Changed {
                    shown: src.path.clone(),
                    original: src.text.clone(),
                    applied: 0,
                })
                .applied += n;
            overlay.insert(src.real_path.clone(), text);
            progressed = true;
        }
        if !progressed {
            break;
        }
        report = lint_run.lint_with(&overlay);
    }
    if args.diff {
        for (real, c) in &changed {
            stdout.write_all(unified_diff(&c.shown, &c.original, &overlay[real]).as_bytes())?;
        }
        stdout.flush()?;
        return Ok(Outcome::Diff(u8::from(!changed.is_empty())));
    }
    if !args.allow_dirty {
        refuse_dirty(&changed)?;
    }
    let mut fixed = (0, 0);
    let mut failed = Vec::new();
    for (real, c) in &changed {
        match write_fixed(real, &c.original, &overlay[real], &mut |f, bytes| {
            f.write_all(bytes)
        }) {
            Ok(()) => {
                fixed.0 += c.applied;
                fixed.1 += 1;
            }
            Err(why) => failed.push(FileError {
                path: c.shown.clone(),
                line: None,
                column: None,
                message: format!("not fixed ({} fix(es) left unapplied): {why}", c.applied),
            }),
        }
    }
    if fixed.1 > 0 {
        eprintln!(
            "fixed {} finding{} in {} file{}",
            fixed.0,
            if fixed.0 == 1 { "" } else { "s" },
            fixed.1,
            if fixed.1 == 1 { "" } else { "s" }
        );
    }
    if !failed.is_empty() {
        eprintln!(
            "error: {} file{} could not be fixed (listed with the reason); the others were",
            failed.len(),
            if failed.len() == 1 { "" } else { "s" }
        );
        // The last report assumed every fix written: report from the disk instead.
        report = lint_run.lint();
        report.errors.extend(failed);
        report
            .errors
            .sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    }
    Ok(Outcome::Fixed(report))
}

/// Refuse to fix when a changed file has uncommitted changes or is untracked, or when git
/// cannot say: one `git status` per work tree, however many files it holds. A file in no work
/// tree has nothing to protect it, and nothing to refuse (as `rustfmt`).
fn refuse_dirty(changed: &BTreeMap<PathBuf, Changed>) -> anyhow::Result<()> {
    let mut trees: BTreeMap<PathBuf, Vec<(&Changed, PathBuf)>> = BTreeMap::new();
    let mut roots: HashMap<PathBuf, Option<PathBuf>> = HashMap::new();
    for (real, c) in changed {
        let abs = absolute(real);
        if let Some(root) = abs.parent().and_then(|d| work_tree(d, &mut roots)) {
            trees.entry(root).or_default().push((c, abs));
        }
    }
    let mut dirty = Vec::new();
    for (root, files) in &trees {
        let status = match git_status(root) {
            Ok(s) => s,
            Err(why) => anyhow::bail!(
                "cannot tell whether {} has uncommitted changes ({why}); refusing to fix {}; pass --allow-dirty to fix anyway",
                root.display(),
                files.iter().map(|f| f.0.shown.as_str()).collect::<Vec<_>>().join(", ")
            ),
        };
        dirty.extend(
            files
                .iter()
                .filter(|(_, abs)| abs.strip_prefix(root).is_ok_and(|rel| status.contains(rel)))
                .map(|f| f.0.shown.as_str()),
        );
    }
    if !dirty.is_empty() {
        anyhow::bail!(
            "refusing to fix files with uncommitted changes ({}); commit or stash them first, or pass --allow-dirty",
            dirty.join(", ")
        );
    }
    Ok(())
}

/// `path` made absolute with its directory's links resolved, to compare with git's paths.
fn absolute(path: &Path) -> PathBuf {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    match path.file_name() {
        Some(name) => dir.join(name),
        None => dir,
    }
}

/// The top of the git work tree holding `dir` (the nearest ancestor with a `.git` entry, a
/// directory or a worktree's or submodule's file), cached per directory.
fn work_tree(dir: &Path, cache: &mut HashMap<PathBuf, Option<PathBuf>>) -> Option<PathBuf> {
    if let Some(r) = cache.get(dir) {
        return r.clone();
    }
    let r = if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
        Some(dir.to_path_buf())
    } else {
        dir.parent().and_then(|p| work_tree(p, cache))
    };
    cache.insert(dir.to_path_buf(), r.clone());
    r
}

/// The paths (relative to `root`) that `git status` lists as changed, staged or untracked.
fn git_status(root: &Path) -> Result<BTreeSet<PathBuf>, String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["status", "--porcelain", "-z", "--untracked-files=all"])
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or("").trim();
        return Err(format!("git status failed: {first}"));
    }
    Ok(parse_porcelain(&out.stdout))
}

/// The paths of `git status --porcelain -z`: `XY path`, NUL-terminated; a rename or copy is
/// followed by its source path, which counts as changed too.
fn parse_porcelain(out: &[u8]) -> BTreeSet<PathBuf> {
    let mut paths = BTreeSet::new();
    let mut fields = out.split(|&b| b == 0).filter(|f| !f.is_empty());
    while let Some(entry) = fields.next() {
        let Some(path) = entry.get(3..) else { continue };
        paths.insert(path_of_bytes(path));
        if matches!(entry.first(), Some(b'R' | b'C')) {
            if let Some(from) = fields.next() {
                paths.insert(path_of_bytes(from));
            }
        }
    }
    paths
}

#[cfg(unix)]
fn path_of_bytes(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(not(unix))]
fn path_of_bytes(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).replace('/', "\\"))
}

/// Replace `path`'s text `original` by `new` without ever losing either: the new text goes to a
/// temporary file beside it (same permissions, and owner where allowed), is flushed to disk and
/// renamed over the file, so a full disk or a crash leaves the old file whole. Refused, with the
/// reason, when the file is no longer `original` (edited or deleted during the run: never
/// re-created), is a link or not a regular file, or has no write permission bit (checked on the
/// bits, so root is refused too). `write` puts the bytes in the temporary file (a parameter so
/// tests can make it fail).
#[allow(clippy::disallowed_methods)]
pub fn write_fixed(
    path: &Path,
    original: &str,
    new: &str,
    write: &mut dyn FnMut(&mut std::fs::File, &[u8]) -> std::io::Result<()>,
) -> Result<(), String> {
    let meta = unchanged(path, original)?;
    if meta.permissions().readonly() {
        return Err("the file is read-only (no write permission); left as it is".into());
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().ok_or("not a file name")?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(
        ".timeoutlint-{}-{}.tmp",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let tmp = dir.join(tmp_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(&tmp)
        .map_err(|e| format!("cannot create a temporary file beside it: {e}; left as it is"))?;
    let result = (|| {
        write(&mut file, new.as_bytes())?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            // Only root may give a file away; anyone else keeps the file's group if a member.
            let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
        }
        file.set_permissions(meta.permissions())?;
        file.sync_all()
    })();
    drop(file);
    let result = result
        .map_err(|e| format!("cannot write the fixed text: {e}; left as it is"))
        // The last moment to notice an edit made while the new text was written.
        .and_then(|()| unchanged(path, original).map(|_| ()))
        .and_then(|()| {
            std::fs::rename(&tmp, path)
                .map_err(|e| format!("cannot replace it: {e}; left as it is"))
        });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    // The rename itself is durable once the directory is flushed (best effort: not every
    // platform can open a directory).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Makes the temporary names of one process distinct (several files are fixed per directory).
static TMP_COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `path` is still the regular file holding `original`: its metadata.
fn unchanged(path: &Path, original: &str) -> Result<std::fs::Metadata, String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("deleted since it was read; not re-created".into())
        }
        Err(e) => return Err(format!("cannot read it again: {e}")),
    };
    if meta.file_type().is_symlink() {
        return Err("is now a symbolic link; links are never followed".into());
    }
    if !meta.is_file() {
        return Err("is no longer a regular file".into());
    }
    let now = std::fs::read(path).map_err(|e| format!("cannot read it again: {e}"))?;
    if now != original.as_bytes() {
        return Err("changed since it was read; its fixes were not written (run again)".into());
    }
    Ok(meta)
}

/// A `git apply`-able unified diff of one file (`a/` and `b/` prefixes, paths as displayed; an
/// absolute path loses its leading `/`, so the patch applies from the root).
#[must_use]
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let path = path.trim_start_matches('/');
    let mut out = format!("diff --git a/{path} b/{path}\n");
    out.push_str(
        &similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{path}"), &format!("b/{path}"))
            .to_string(),
    );
    out
}

#[cfg(test)]
// The tests build files on disk to write over.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    /// A full disk in the middle of the new text: the file keeps every byte of its old text and
    /// no temporary file is left.
    #[test]
    fn a_failed_write_leaves_the_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.rs");
        let old = "fn a() {}\nfn last() {}\n";
        std::fs::write(&file, old).unwrap();
        let full = |f: &mut std::fs::File, bytes: &[u8]| {
            f.write_all(&bytes[..bytes.len() / 2])?;
            Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "No space left on device",
            ))
        };
        let why = write_fixed(&file, old, "fn b() {}\nfn last() {}\n", &mut { full }).unwrap_err();
        assert!(why.contains("No space left on device"), "{why}");
        assert!(why.ends_with("left as it is"), "{why}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), old);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.rs"]);
        write_fixed(&file, old, "fn b() {}\n", &mut |f, b| f.write_all(b)).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "fn b() {}\n");
    }

    #[test]
    fn a_stale_or_deleted_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.rs");
        std::fs::write(&file, "fn edited() {}\n").unwrap();
        let why = write_fixed(&file, "fn a() {}\n", "fn b() {}\n", &mut |f, b| {
            f.write_all(b)
        });
        assert!(why.unwrap_err().starts_with("changed since it was read"));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "fn edited() {}\n");
        let gone = dir.path().join("gone.rs");
        let why = write_fixed(&gone, "fn a() {}\n", "fn b() {}\n", &mut |f, b| {
            f.write_all(b)
        });
        assert!(why.unwrap_err().contains("not re-created"));
        assert!(!gone.exists());
    }

    #[test]
    fn porcelain_paths_with_renames_and_odd_bytes() {
        let out = b" M src/a.rs\0R  new.rs\0old.rs\0?? sub\\x.rs\0";
        let paths = parse_porcelain(out);
        let want: BTreeSet<PathBuf> = ["src/a.rs", "new.rs", "old.rs", "sub\\x.rs"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(paths, want);
    }
}
