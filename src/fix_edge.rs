//! `--fix`, `--unsafe-fixes`, `--diff` and `--allow-dirty`: the IO around the pure fix engine
//! ([`crate::fix`]): the git-dirty check, writing fixed files, printing the unified diff.
//!
//! Deliberately absent: deciding what a fix is or whether it applies (that is `fix` and the
//! rules). This module only moves text between the engine, the disk and stdout.

use std::io::Write;
use std::path::Path;

use crate::emit::Report;
use crate::fix::{self, Level};
use crate::lint::Config;

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
#[derive(Debug)]
pub enum Outcome {
    /// `--diff` ran: exit with this code (1 when there was a diff, as `ruff --diff`).
    Diff(u8),
    /// `--fix` wrote this many files; the caller lints again to report what is left.
    Wrote(usize),
}

/// Compute every file's fixes and print them as a diff or write them.
// This module is part of the IO edge (lib.rs invariant 1): it writes the fixed files.
#[allow(clippy::disallowed_methods)]
pub fn run(
    args: &FixArgs,
    report: &Report,
    config: &Config,
    stdout: &mut impl Write,
) -> anyhow::Result<Outcome> {
    let level = args.level();
    let mut changed = Vec::new();
    let mut applied = 0;
    for (src, diags) in &report.files {
        if fix::select(diags, level).is_empty() {
            continue;
        }
        let fixed = fix::fix_text(&src.path, &src.text, config, level);
        if fixed.rolled_back {
            eprintln!(
                "warning: {}: a fix made the file unparsable and was rolled back (a timeoutlint bug; please report it)",
                src.path
            );
        }
        if fixed.text != src.text {
            applied += fixed.applied;
            changed.push((src.path.as_str(), src.text.as_str(), fixed.text));
        }
    }
    if args.diff {
        for (path, old, new) in &changed {
            stdout.write_all(unified_diff(path, old, new).as_bytes())?;
        }
        stdout.flush()?;
        return Ok(Outcome::Diff(u8::from(!changed.is_empty())));
    }
    if !args.allow_dirty {
        let dirty: Vec<&str> = changed
            .iter()
            .map(|c| c.0)
            .filter(|p| is_dirty(Path::new(p)))
            .collect();
        if !dirty.is_empty() {
            anyhow::bail!(
                "refusing to fix files with uncommitted changes ({}); commit or stash them first, or pass --allow-dirty",
                dirty.join(", ")
            );
        }
    }
    for (path, _, new) in &changed {
        std::fs::write(path, new).map_err(|e| anyhow::anyhow!("cannot write {path}: {e}"))?;
    }
    if !changed.is_empty() {
        eprintln!(
            "fixed {applied} finding{} in {} file{}",
            if applied == 1 { "" } else { "s" },
            changed.len(),
            if changed.len() == 1 { "" } else { "s" }
        );
    }
    Ok(Outcome::Wrote(changed.len()))
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

/// The file has uncommitted changes or is untracked in its git work tree. Outside a work tree
/// (or without git) there is nothing to protect it with, and nothing to refuse: as `rustfmt`.
fn is_dirty(path: &Path) -> bool {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Some(name) = path.file_name() else {
        return false;
    };
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["status", "--porcelain", "--"])
        .arg(name)
        .output();
    match out {
        Ok(o) if o.status.success() => !o.stdout.is_empty(),
        _ => false,
    }
}
