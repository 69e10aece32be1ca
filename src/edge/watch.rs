//! `--watch`: lint, then lint again each time a watched Rust file or configuration file
//! changes, until the process is stopped (Ctrl-C). Only the waiting lives here: each run is the
//! command line's ordinary one, so a re-lint prints what a fresh `timeoutlint PATHS` would.
//!
//! Deliberately absent: clearing the screen (a scrolling log keeps the previous report to
//! compare), fixes (`--fix` and `--diff` would write the very files being watched) and stdin.
//! Only content changes count: creations, writes, removals and renames. Access events are
//! ignored, since the lint's own reads raise them (an earlier attempt that counted them
//! re-linted forever), and so are metadata changes and paths a walk never lints (`target/`,
//! `.git/`, hidden entries, the run's exclusions).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use notify::event::ModifyKind;
use notify::{EventKind, RecursiveMode, Watcher};

/// How long the tree must be quiet before a re-lint: an editor's save (write, rename, chmod) or
/// a `git checkout` arrives as a burst, which should cost one run, not one per event.
const DEBOUNCE: Duration = Duration::from_millis(200);

/// The configuration files whose change re-lints: ours, and the manifest (crate roots,
/// features that cap fixes).
const CONFIG_FILES: &[&str] = &["timeoutlint.toml", ".timeoutlint.toml", "Cargo.toml"];

/// What is watched: the named directories (recursively) and the named files.
struct Watched {
    /// Named directories, absolute.
    dirs: Vec<PathBuf>,
    /// Named files, absolute.
    files: Vec<PathBuf>,
    /// The exclusions of a walk of each named directory (`--exclude`, the configuration's).
    excludes: Vec<ignore::overrides::Override>,
}

/// Lint with `lint`, then again after every relevant change under `paths`; returns only on an
/// error of the watcher itself (the process is normally ended by Ctrl-C). `excludes` are the
/// run's exclusion globs; `quiet` keeps the "watching" notice off stderr.
pub fn run(
    paths: &[PathBuf],
    excludes: &[String],
    quiet: bool,
    lint: &dyn Fn() -> anyhow::Result<u8>,
) -> anyhow::Result<u8> {
    let cwd = std::env::current_dir()?;
    let mut watched = Watched {
        dirs: Vec::new(),
        files: Vec::new(),
        excludes: Vec::new(),
    };
    let (tx, rx) = mpsc::channel();
    // The callback runs on notify's thread: it only forwards; a closed channel means the loop
    // below has ended, and nothing is left to tell.
    let mut notifier = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    })?;
    for p in paths {
        let abs = crate::walk::normalize(&cwd.join(p));
        if abs.is_dir() {
            notifier
                .watch(&abs, RecursiveMode::Recursive)
                .map_err(|e| anyhow::anyhow!("cannot watch {}: {e}", p.display()))?;
            let mut ov = ignore::overrides::OverrideBuilder::new(&abs);
            for g in excludes {
                ov.add(&format!("!{g}"))
                    .map_err(|e| anyhow::anyhow!("invalid exclude glob `{g}`: {e}"))?;
            }
            watched.excludes.push(ov.build()?);
            watched.dirs.push(abs);
        } else {
            // The file's directory, not the file: an editor that saves by renaming a new file
            // over the old one would end a watch on the file itself.
            let dir = abs.parent().map_or_else(|| abs.clone(), Path::to_path_buf);
            notifier
                .watch(&dir, RecursiveMode::NonRecursive)
                .map_err(|e| anyhow::anyhow!("cannot watch {}: {e}", p.display()))?;
            watched.files.push(abs);
        }
    }
    // The configuration found above the named paths (a workspace's timeoutlint.toml).
    let mut above: BTreeSet<PathBuf> = BTreeSet::new();
    for root in watched.dirs.iter().chain(&watched.files) {
        for dir in root.ancestors().skip(1) {
            for name in CONFIG_FILES {
                let f = dir.join(name);
                if f.is_file() && above.insert(f.clone()) {
                    // A configuration file that cannot be watched only misses its re-lints.
                    let _ = notifier.watch(&f, RecursiveMode::NonRecursive);
                }
            }
        }
    }
    let _ = report(lint);
    if !quiet {
        eprintln!("watching for changes (Ctrl-C to stop)");
    }
    loop {
        // Wait for the first relevant change, then for the burst to end.
        let mut changed: BTreeSet<PathBuf> = BTreeSet::new();
        while changed.is_empty() {
            let Ok(event) = rx.recv() else {
                return Ok(2);
            };
            collect(event, &watched, &above, &mut changed);
        }
        loop {
            match rx.recv_timeout(DEBOUNCE) {
                Ok(event) => collect(event, &watched, &above, &mut changed),
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(2),
            }
        }
        let n = changed.len();
        let s = if n == 1 { "" } else { "s" };
        println!("\n--- timeoutlint: re-linting after {n} changed file{s} ---\n");
        let _ = report(lint);
        if !quiet {
            eprintln!("watching for changes (Ctrl-C to stop)");
        }
    }
}

/// One lint; an error of the run is shown and the watch goes on (a configuration file being
/// edited may not parse for a while).
fn report(lint: &dyn Fn() -> anyhow::Result<u8>) -> u8 {
    match lint() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    }
}

/// Add the paths of `event` that a re-lint should see to `changed`. A watcher error (an
/// overflowed event queue) counts as a change of everything: a re-lint is the safe answer.
fn collect(
    event: notify::Result<notify::Event>,
    watched: &Watched,
    above: &BTreeSet<PathBuf>,
    changed: &mut BTreeSet<PathBuf>,
) {
    let event = match event {
        Ok(e) => e,
        Err(e) => {
            eprintln!("warning: file watcher: {e}");
            changed.insert(PathBuf::new());
            return;
        }
    };
    let counts = match event.kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(kind) => !matches!(kind, ModifyKind::Metadata(_)),
        EventKind::Access(_) | EventKind::Any | EventKind::Other => false,
    };
    if !counts {
        return;
    }
    for p in event.paths {
        if above.contains(&p) || relevant(&p, watched) {
            changed.insert(p);
        }
    }
}

/// Is `path` a file whose change a lint of the watched paths would see: a named file, a `.rs`
/// file the walk of a named directory lints, or a configuration file beside them?
fn relevant(path: &Path, watched: &Watched) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let is_config = CONFIG_FILES.contains(&name);
    if watched.files.iter().any(|f| f == path) {
        return true;
    }
    if is_config && watched.files.iter().any(|f| f.parent() == path.parent()) {
        return true;
    }
    let is_rs = Path::new(name).extension().is_some_and(|e| e == "rs");
    if !is_rs && !is_config {
        return false;
    }
    watched.dirs.iter().zip(&watched.excludes).any(|(dir, ov)| {
        let Ok(rel) = path.strip_prefix(dir) else {
            return false;
        };
        // The walk skips `target/` and hidden entries (`.git/` among them); a configuration
        // file is hidden by its own name only (`.timeoutlint.toml`).
        let mut parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        parts.pop();
        if parts.iter().any(|c| *c == "target" || c.starts_with('.')) {
            return false;
        }
        if is_config {
            return true;
        }
        if name.starts_with('.') {
            return false;
        }
        // Excluded when the file or a directory above it up to the named one matches, as a
        // walk from there would skip it.
        let mut at = dir.clone();
        let last = rel.components().count();
        for (i, c) in rel.components().enumerate() {
            at.push(c);
            if ov.matched(&at, i + 1 < last).is_ignore() {
                return false;
            }
        }
        true
    })
}
