//! `cargo timeoutlint`: lints cargo packages instead of paths.
//!
//! cargo runs `cargo-timeoutlint timeoutlint ARGS..`. This binary takes cargo's package
//! selection (`--workspace` / `--all`, `-p` / `--package NAME`, `--manifest-path PATH`), asks
//! `cargo metadata --no-deps` (through `cargo_metadata`) where those packages live, and runs
//! the linter on their directories with every other argument passed through (a nested member
//! that is not selected is excluded). Without a selection it does what cargo does: the package of the
//! current directory, or every member in a virtual workspace's root. Part of the IO edge (a
//! subprocess); deliberately absent: paths as arguments (use `timeoutlint PATH`) and cargo's
//! `--exclude` (ours is a glob).
//!
//! It does not contain the linter: it runs the `timeoutlint` binary installed beside it (where
//! `cargo install` and the release archives put both), else the one on `PATH`, so the linter
//! ships once. From the library it calls only the manifest check and the did-you-mean hint,
//! so the linker leaves the rest out.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Subcommands that take no paths, passed through unchanged.
const NO_PATHS: &[&str] = &["rules", "rule", "help", "--help", "-h", "--version", "-V"];

#[derive(Debug, Default)]
struct Selection {
    workspace: bool,
    packages: Vec<String>,
    manifest_path: Option<PathBuf>,
}

#[derive(Debug, PartialEq)]
struct Package {
    name: String,
    dir: PathBuf,
    member: bool,
}

fn main() -> ExitCode {
    let mut args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "timeoutlint") {
        args.remove(1);
    }
    let (selection, mut rest) = match split_args(&args[1..]) {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    let first = rest.first().and_then(|a| a.to_str()).unwrap_or("");
    if NO_PATHS.contains(&first) {
        if matches!(first, "--help" | "-h") {
            // A closed stdout is not an error worth a panic (`cargo timeoutlint --help | head`).
            let _ = writeln!(
                std::io::stdout(),
                "cargo timeoutlint [--workspace | -p NAME..] [--manifest-path PATH] [OPTIONS]: lints packages; the options are timeoutlint's:\n"
            );
        }
        return run_linter(rest);
    }
    let cwd = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => return fail(&format!("cannot read the current directory: {e}")),
    };
    // cargo would wait forever on a FIFO given as the manifest: refuse what is not a file.
    if let Some(m) = &selection.manifest_path {
        match timeoutlint::walk::bounded::check_regular(m) {
            Ok(_) | Err(timeoutlint::walk::bounded::Error::NotFound) => {}
            Err(e) => return fail(&format!("--manifest-path {}: {e}", m.display())),
        }
    }
    let packages = match workspace_packages(selection.manifest_path.as_deref()) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let here = selection
        .manifest_path
        .as_deref()
        .and_then(Path::parent)
        .map_or(cwd.clone(), |p| cwd.join(p));
    let (dirs, excludes) = match select(&packages, &selection, &here) {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    // `baseline create|prune` and `config` take paths after their own name.
    let insert_at = match first {
        "baseline" => 2.min(rest.len()),
        "config" => 1,
        _ => 0,
    };
    let mut extra: Vec<OsString> = dirs.into_iter().map(OsString::from).collect();
    for e in excludes {
        extra.push("--exclude".into());
        extra.push(e.into());
    }
    rest.splice(insert_at..insert_at, extra);
    run_linter(rest)
}

/// Run the linter with `args`: the `timeoutlint` beside this binary, else the one on `PATH`.
/// On Unix it replaces this process (signals and the exit code are the linter's own); its
/// usage lines say `cargo timeoutlint`.
fn run_linter(args: Vec<OsString>) -> ExitCode {
    let name = format!("timeoutlint{}", std::env::consts::EXE_SUFFIX);
    let program = std::env::current_exe()
        .ok()
        .map(|me| me.with_file_name(&name))
        .filter(|p| p.is_file())
        .map_or_else(|| OsString::from(&name), PathBuf::into_os_string);
    let mut cmd = Command::new(&program);
    cmd.args(args);
    let error = {
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt as _;
            // Returns only when the linter could not be started.
            cmd.arg0("cargo timeoutlint").exec()
        }
        #[cfg(not(unix))]
        match cmd.status() {
            Ok(status) => {
                return ExitCode::from(status.code().map_or(2, |c| u8::try_from(c).unwrap_or(2)))
            }
            Err(e) => e,
        }
    };
    fail(&format!(
        "cannot run `{}` ({error}); install it with `cargo install --locked --git https://github.com/timeoutlint/timeoutlint timeoutlint`",
        Path::new(&program).display()
    ))
}

fn fail(message: &str) -> ExitCode {
    // Never `eprintln!`: it panics when stderr is a closed pipe.
    let _ = writeln!(std::io::stderr(), "error: {message}");
    ExitCode::from(2)
}

/// Cargo's selection flags out, everything else (in order) for the linter. By hand, not
/// `clap-cargo`: that needs the whole command line declared to clap, and the rest must reach
/// the linter untouched, to be parsed (and its errors worded) by the linter's own clap.
fn split_args(args: &[OsString]) -> Result<(Selection, Vec<OsString>), String> {
    let mut sel = Selection::default();
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let s = a.to_string_lossy();
        let mut value = |flag: &str| {
            it.next()
                .map(|v| v.to_string_lossy().into_owned())
                .ok_or_else(|| format!("`{flag}` needs a value"))
        };
        match s.as_ref() {
            "--workspace" | "--all" => sel.workspace = true,
            "-p" | "--package" => sel.packages.push(value(&s)?),
            "--manifest-path" => sel.manifest_path = Some(PathBuf::from(value(&s)?)),
            _ => {
                if let Some(v) = s.strip_prefix("--package=") {
                    sel.packages.push(v.to_string());
                } else if let Some(v) = s.strip_prefix("--manifest-path=") {
                    sel.manifest_path = Some(PathBuf::from(v));
                } else if let Some(v) = s.strip_prefix("-p").filter(|v| !v.is_empty()) {
                    sel.packages.push(v.to_string());
                } else {
                    rest.push(a.clone());
                }
            }
        }
    }
    Ok((sel, rest))
}

/// The packages of `cargo metadata --no-deps` (run by the `cargo` that ran us, `$CARGO`):
/// name, directory, workspace membership. Typed by `cargo_metadata`, so a field cargo renames
/// fails here, not as a silent empty selection.
fn workspace_packages(manifest: Option<&Path>) -> Result<Vec<Package>, String> {
    let mut cmd = cargo_metadata::MetadataCommand::new();
    cmd.no_deps();
    if let Some(m) = manifest {
        cmd.manifest_path(m);
    }
    let meta = cmd.exec().map_err(|e| match e {
        cargo_metadata::Error::CargoMetadata { stderr } => {
            format!("`cargo metadata` failed: {}", stderr.trim())
        }
        e => format!("cannot read `cargo metadata`: {e}"),
    })?;
    Ok(meta
        .packages
        .iter()
        .map(|p| Package {
            name: p.name.clone(),
            dir: p
                .manifest_path
                .parent()
                .map_or_else(PathBuf::new, |d| d.as_std_path().to_path_buf()),
            member: meta.workspace_members.contains(&p.id),
        })
        .collect())
}

/// The directories to lint and the exclude globs for nested members that are not selected.
fn select(
    packages: &[Package],
    sel: &Selection,
    here: &Path,
) -> Result<(Vec<PathBuf>, Vec<String>), String> {
    let members: Vec<&Package> = packages.iter().filter(|p| p.member).collect();
    let chosen: Vec<&Package> = if !sel.packages.is_empty() {
        let mut v = Vec::new();
        for name in &sel.packages {
            let p = members.iter().find(|p| &p.name == name).ok_or_else(|| {
                format!(
                    "package `{name}` is not a member of the workspace{}",
                    timeoutlint::config::suggest(name, members.iter().map(|p| p.name.as_str()))
                )
            })?;
            v.push(*p);
        }
        v
    } else if sel.workspace {
        members.clone()
    } else {
        // cargo's default: the package whose directory holds the current one, else (a virtual
        // workspace's root) every member.
        members
            .iter()
            .filter(|p| here.starts_with(&p.dir))
            .max_by_key(|p| p.dir.components().count())
            .map_or_else(|| members.clone(), |p| vec![*p])
    };
    let mut dirs: Vec<PathBuf> = chosen.iter().map(|p| p.dir.clone()).collect();
    dirs.sort();
    dirs.dedup();
    // A selected directory inside another selected one is walked already.
    let outer: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| !dirs.iter().any(|o| o != *d && d.starts_with(o)))
        .cloned()
        .collect();
    let mut excludes = Vec::new();
    for m in &members {
        if chosen.iter().any(|c| c.dir == m.dir) {
            continue;
        }
        for o in &outer {
            if let Ok(rel) = m.dir.strip_prefix(o) {
                if !rel.as_os_str().is_empty() {
                    excludes.push(format!("{}/**", rel.to_string_lossy().replace('\\', "/")));
                }
            }
        }
    }
    Ok((outer, excludes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(sel: &Selection, here: &str) -> String {
        let packages = vec![
            Package {
                name: "root".into(),
                dir: "/w".into(),
                member: true,
            },
            Package {
                name: "rt".into(),
                dir: "/w/runtime".into(),
                member: true,
            },
        ];
        match select(&packages, sel, Path::new(here)) {
            Ok((d, e)) => format!("{d:?} {e:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn selection_follows_cargo() {
        let none = Selection::default();
        assert_eq!(check(&none, "/w"), r#"["/w"] ["runtime/**"]"#);
        assert_eq!(check(&none, "/w/runtime/src"), r#"["/w/runtime"] []"#);
        let all = Selection {
            workspace: true,
            ..Selection::default()
        };
        assert_eq!(check(&all, "/w"), r#"["/w"] []"#);
        let bad = Selection {
            packages: vec!["rtt".into()],
            ..Selection::default()
        };
        assert_eq!(
            check(&bad, "/w"),
            "package `rtt` is not a member of the workspace (did you mean `rt`?)"
        );
    }

    #[test]
    fn cargo_flags_are_taken_out() {
        let args: Vec<OsString> = [
            "-p",
            "a",
            "--format",
            "json",
            "--package=b",
            "-pc",
            "--workspace",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let (sel, rest) = split_args(&args).unwrap();
        assert_eq!(sel.packages, ["a", "b", "c"]);
        assert!(sel.workspace);
        assert_eq!(rest, [OsString::from("--format"), OsString::from("json")]);
    }
}
