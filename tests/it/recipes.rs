//! The install and CI edge as a new user copies it. Each CI recipe in `docs/ci` runs its own
//! shell commands in a throwaway git repository (the install step replaced by the binaries this
//! build made): it must fail on a finding, pass on clean code, pass on a repository with nothing
//! but the recipe, and pass once the opt-in baseline is committed. The pre-commit hooks run
//! through pre-commit itself when it is installed, and the action's install script installs a
//! release archive, refuses a corrupt one, and falls back to `cargo install --git`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::root;

/// Fires `unbounded-retry` once (the `loop`) and nothing else.
const FINDING: &str = "pub async fn connect(addr: &str) -> Conn {\n    loop {\n        match Conn::open(addr).await {\n            Ok(c) => return c,\n            Err(_) => tokio::time::sleep(std::time::Duration::from_secs(1)).await,\n        }\n    }\n}\n";

/// The same call, bounded: no finding.
const CLEAN: &str = "pub async fn connect(addr: &str) -> Option<Conn> {\n    for _attempt in 0..3 {\n        if let Ok(c) = Conn::open(addr).await {\n            return Some(c);\n        }\n    }\n    None\n}\n";

const MANIFEST: &str = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

/// The directory holding this build's `timeoutlint` and `cargo-timeoutlint`, first on PATH.
fn path_with_build() -> std::ffi::OsString {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_timeoutlint"));
    let mut dirs = vec![bin.parent().unwrap().to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", show(&o));
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A committed git repository holding `files`.
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        write(dir.path(), path, text);
    }
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "init"]);
    dir
}

fn recipe(name: &str) -> String {
    std::fs::read_to_string(root().join("docs/ci").join(name)).unwrap()
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The lines under a block scalar (`key: |`) that starts after line `at` at `key_indent`,
/// dedented. Ends at the first non-empty line indented no deeper than the key.
fn block(lines: &[&str], at: usize, key_indent: usize) -> (String, usize) {
    let mut end = at + 1;
    while end < lines.len() && (lines[end].trim().is_empty() || indent(lines[end]) > key_indent) {
        end += 1;
    }
    let body = &lines[at + 1..end];
    let strip = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let text = body
        .iter()
        .map(|l| l.get(strip..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    (text, end)
}

/// The `run:` scripts of a GitHub workflow, in order, and the `uses:` actions. The recipes keep
/// to single-line `run:` values and literal `run: |` blocks, so a line reader is exact; anything
/// else fails here rather than being run wrongly.
fn github_steps(yaml: &str) -> (Vec<String>, Vec<String>) {
    let lines: Vec<&str> = yaml.lines().collect();
    let (mut runs, mut uses) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let key = line.trim_start().trim_start_matches("- ");
        let key_indent = line.len() - key.len();
        if let Some(value) = key.strip_prefix("uses:") {
            uses.push(value.trim().to_string());
        } else if let Some(value) = key.strip_prefix("run:") {
            let value = value.trim();
            assert!(
                !value.starts_with('>') && !value.starts_with("|-") && !value.starts_with('"'),
                "recipe line {}: keep `run:` to one line or a `|` block: {line}",
                i + 1
            );
            if value == "|" {
                let (text, end) = block(&lines, i, key_indent);
                runs.push(text);
                i = end;
                continue;
            }
            runs.push(value.to_string());
        }
        i += 1;
    }
    (runs, uses)
}

/// The `script:` commands of a GitLab job: one-line `- ` items.
fn gitlab_script(yaml: &str) -> Vec<String> {
    let lines: Vec<&str> = yaml.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim() == "script:")
        .expect("the GitLab recipe has a `script:`");
    let key_indent = indent(lines[at]);
    let mut out = Vec::new();
    for line in &lines[at + 1..] {
        if line.trim().is_empty() {
            continue;
        }
        if indent(line) <= key_indent {
            break;
        }
        let item = line
            .trim()
            .strip_prefix("- ")
            .unwrap_or_else(|| panic!("keep `script:` items to one line each: {line}"));
        assert!(
            !matches!(item.chars().next(), Some('>' | '|')),
            "keep `script:` items to one line each: {line}"
        );
        out.push(item.to_string());
    }
    out
}

/// Runs the GitHub recipe's `run:` steps as the runner does (`shell: bash`), stopping at the
/// first that fails like the job would. The install step is the repository's action; this
/// build's binaries stand in for it on PATH.
fn run_github(dir: &Path) -> (Option<i32>, String) {
    let (runs, uses) = github_steps(&recipe("github-actions.yml"));
    assert!(
        uses.iter()
            .any(|u| u.starts_with("timeoutlint/timeoutlint@")),
        "the recipe installs through the repository's action: {uses:?}"
    );
    assert!(
        !runs.iter().any(|r| r.contains("cargo install")),
        "the action installs; no step builds the linter itself: {runs:?}"
    );
    let mut log = String::new();
    for script in runs {
        let o = Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
            .current_dir(dir)
            .env("PATH", path_with_build())
            .env_remove("CI")
            .output()
            .unwrap();
        let _ = write!(log, "$ {script}\n{}", show(&o));
        if !o.status.success() {
            return (o.status.code(), log);
        }
    }
    (Some(0), log)
}

/// Runs the GitLab job's script in one shell, as the runner does (`set -eo pipefail`), with the
/// job's `CARGO_HOME`. The install line must build from the repository; it is replaced by a
/// check that this build's binaries are the ones found.
fn run_gitlab(dir: &Path) -> (Option<i32>, String) {
    let yaml = recipe("gitlab-ci.yml");
    assert!(
        yaml.contains("CARGO_HOME: $CI_PROJECT_DIR/.cargo"),
        "{yaml}"
    );
    let mut script = gitlab_script(&yaml);
    let installs: Vec<usize> = (0..script.len())
        .filter(|&i| script[i].contains("cargo install"))
        .collect();
    assert_eq!(installs.len(), 1, "one install line: {script:?}");
    let install = &script[installs[0]];
    assert!(
        install.contains(
            "cargo install --locked --git https://github.com/timeoutlint/timeoutlint timeoutlint"
        ),
        "the install line builds from the repository when there is no release: {install}"
    );
    assert!(
        install.starts_with("command -v timeoutlint ||"),
        "the install line skips a cached binary: {install}"
    );
    script[installs[0]] = "command -v timeoutlint".into();
    let o = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c"])
        .arg(script.join("\n"))
        .current_dir(dir)
        .env("PATH", path_with_build())
        .env("CI_PROJECT_DIR", dir)
        .env("CARGO_HOME", dir.join(".cargo"))
        .env_remove("CI")
        .output()
        .unwrap();
    (o.status.code(), show(&o))
}

#[test]
fn recipe_scripts_are_read_exactly() {
    let (runs, uses) = github_steps(&recipe("github-actions.yml"));
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0].starts_with("baseline=\"\"\nif [ -f timeoutlint-baseline.json ]"));
    assert!(runs[0].ends_with("--output github ."), "{}", runs[0]);
    assert_eq!(uses.len(), 3, "{uses:?}");
    let script = gitlab_script(&recipe("gitlab-ci.yml"));
    assert_eq!(script.len(), 6, "{script:?}");
    assert!(script[5].starts_with("timeoutlint $baseline"), "{script:?}");
}

#[test]
fn github_recipe_fails_on_a_finding_and_passes_otherwise() {
    let r = repo(&[("Cargo.toml", MANIFEST), ("src/lib.rs", FINDING)]);
    let (code, log) = run_github(r.path());
    assert_eq!(code, Some(1), "a finding fails the job:\n{log}");
    assert!(
        log.contains("::warning") && log.contains("unbounded-retry"),
        "{log}"
    );
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(r.path().join("timeoutlint.sarif")).unwrap())
            .unwrap();
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 1);

    // The opt-in second stage: a committed baseline accepts today's finding.
    let o = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(["baseline", "create"])
        .current_dir(r.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    assert!(r.path().join("timeoutlint-baseline.json").is_file());
    let (code, log) = run_github(r.path());
    assert_eq!(code, Some(0), "the baseline's finding passes:\n{log}");

    let r = repo(&[("Cargo.toml", MANIFEST), ("src/lib.rs", CLEAN)]);
    let (code, log) = run_github(r.path());
    assert_eq!(code, Some(0), "clean code passes:\n{log}");
    assert!(r.path().join("timeoutlint.sarif").is_file(), "{log}");

    let r = repo(&[(
        ".github/workflows/timeoutlint.yml",
        &recipe("github-actions.yml"),
    )]);
    let (code, log) = run_github(r.path());
    assert_eq!(
        code,
        Some(0),
        "a repository with only the recipe passes:\n{log}"
    );
}

#[test]
fn gitlab_recipe_fails_on_a_finding_and_passes_otherwise() {
    let r = repo(&[("Cargo.toml", MANIFEST), ("src/lib.rs", FINDING)]);
    let (code, log) = run_gitlab(r.path());
    assert_eq!(code, Some(1), "a finding fails the job:\n{log}");
    assert!(log.contains("unbounded-retry"), "{log}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(r.path().join("timeoutlint.json")).unwrap())
            .unwrap();
    assert_eq!(
        json["diagnostics"].as_array().map(Vec::len),
        Some(1),
        "{json}"
    );

    let o = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(["baseline", "create"])
        .current_dir(r.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let (code, log) = run_gitlab(r.path());
    assert_eq!(code, Some(0), "the baseline's finding passes:\n{log}");

    let r = repo(&[("Cargo.toml", MANIFEST), ("src/lib.rs", CLEAN)]);
    let (code, log) = run_gitlab(r.path());
    assert_eq!(code, Some(0), "clean code passes:\n{log}");

    let r = repo(&[(".gitlab-ci.yml", &recipe("gitlab-ci.yml"))]);
    let (code, log) = run_gitlab(r.path());
    assert_eq!(
        code,
        Some(0),
        "a repository with only the recipe passes:\n{log}"
    );
}

/// `pre-commit`, or `None` (loudly) when it is not installed. In CI (`CI=true`) a missing
/// pre-commit fails instead: `.ci/run` installs it.
fn pre_commit() -> Option<&'static str> {
    let found = Command::new("pre-commit")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some("pre-commit");
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "pre-commit is not installed (CI installs it in .ci/run: pip install pre-commit)"
    );
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        b"\n======== SKIPPED: the pre-commit hooks ========\n\
          pre-commit is not installed: pip install pre-commit\n\
          ===============================================\n",
    );
    None
}

/// The hooks as pre-commit reads them from this checkout (`try-repo` includes uncommitted
/// edits to `.pre-commit-hooks.yaml`). `timeoutlint-system` runs this build from PATH; the
/// `language: rust` hook builds the linter for minutes, so only its definition is checked here.
#[test]
fn pre_commit_hook_fails_on_a_finding_and_passes_on_clean_code() {
    let Some(pre_commit) = pre_commit() else {
        return;
    };
    let hooks = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    assert!(
        !hooks.contains("rev: v"),
        "no tag to pin exists yet:\n{hooks}"
    );
    assert!(hooks.contains("- id: timeoutlint\n"), "{hooks}");
    assert!(hooks.contains("language: rust"), "{hooks}");
    if !root().join(".git").exists() {
        // `try-repo` needs a git checkout; CI always lints one, so there a missing one is a
        // broken setup, not a reason to pass.
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but the source tree is not a git checkout: the pre-commit test cannot run"
        );
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"SKIPPED: the pre-commit hooks: this source tree is not a git checkout\n",
        );
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let run = |dir: &Path| {
        Command::new(pre_commit)
            .arg("try-repo")
            .arg(root())
            .args(["timeoutlint-system", "--all-files", "--color", "never"])
            .current_dir(dir)
            .env("PATH", path_with_build())
            .env("PRE_COMMIT_HOME", home.path())
            .env_remove("CI")
            .output()
            .unwrap()
    };
    let r = repo(&[("Cargo.toml", MANIFEST), ("src/lib.rs", FINDING)]);
    let o = run(r.path());
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("unbounded-retry"),
        "{}",
        show(&o)
    );
    let r = repo(&[("Cargo.toml", MANIFEST), ("src/lib.rs", CLEAN)]);
    let o = run(r.path());
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
}

/// The action's install script with the runner's environment faked.
#[cfg(unix)]
mod action {
    use super::{git, gitlab_script, recipe, repo, show, write};
    use crate::support::root;
    use std::path::Path;
    use std::process::{Command, Output};

    const TARGET: &str = "x86_64-unknown-linux-musl";

    fn install(phase: &str, work: &Path, env: &[(&str, &str)]) -> (Output, String, String) {
        let out = work.join("github-output");
        let path = work.join("github-path");
        let mut cmd = Command::new("bash");
        cmd.arg(root().join(".github/action/install.sh"))
            .arg(phase)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("TIMEOUTLINT_ROOT", work.join("root"))
            .env(
                "TIMEOUTLINT_DOWNLOAD_BASE",
                format!("file://{}", work.join("releases").display()),
            )
            .env("GITHUB_OUTPUT", &out)
            .env("GITHUB_PATH", &path);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let o = cmd.output().unwrap();
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        (o, read(&out), read(&path))
    }

    /// A release directory laid out as `release.yml` builds it. The binaries are small stand-ins
    /// that print a version: the archive's layout and checksum are under test, and packing two
    /// debug builds would take most of a minute.
    fn release(work: &Path, at: &str) {
        let name = format!("timeoutlint-{TARGET}");
        let stage = work.join("stage").join(&name);
        std::fs::create_dir_all(&stage).unwrap();
        for exe in ["timeoutlint", "cargo-timeoutlint"] {
            write(&stage, exe, &format!("#!/bin/sh\necho '{exe} 0.3.1'\n"));
            let o = Command::new("chmod")
                .arg("+x")
                .arg(stage.join(exe))
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", show(&o));
        }
        for doc in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
            std::fs::copy(root().join(doc), stage.join(doc)).unwrap();
        }
        let dir = work.join("releases").join(at);
        std::fs::create_dir_all(&dir).unwrap();
        let archive = format!("{name}.tar.gz");
        let o = Command::new("tar")
            .arg("-czf")
            .arg(dir.join(&archive))
            .arg("-C")
            .arg(work.join("stage"))
            .arg(&name)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", show(&o));
        let o = Command::new("sha256sum")
            .arg(&archive)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", show(&o));
        std::fs::write(dir.join(format!("{archive}.sha256")), o.stdout).unwrap();
    }

    #[test]
    fn installs_the_release_archive_and_refuses_a_corrupt_one() {
        let work = tempfile::tempdir().unwrap();
        let w = work.path();
        release(w, "latest/download");
        let (o, out, path) = install("download", w, &[]);
        assert!(o.status.success(), "{}", show(&o));
        assert!(out.contains("installed=true"), "{out}");
        assert_eq!(path.trim(), w.join("root/bin").display().to_string());
        for exe in ["timeoutlint", "cargo-timeoutlint"] {
            assert!(w.join("root/bin").join(exe).is_file(), "{exe}");
        }
        assert_eq!(String::from_utf8_lossy(&o.stdout), "timeoutlint 0.3.1\n");

        // A pinned version reads that release's directory, with or without the `v`.
        release(w, "download/v0.3.1");
        std::fs::remove_dir_all(w.join("root")).unwrap();
        let (o, out, _) = install("download", w, &[("TIMEOUTLINT_VERSION", "0.3.1")]);
        assert!(o.status.success(), "{}", show(&o));
        assert!(
            out.contains("installed=true") && out.contains("rev=v0.3.1"),
            "{out}"
        );

        let sum = w.join(format!(
            "releases/latest/download/timeoutlint-{TARGET}.tar.gz.sha256"
        ));
        let text = std::fs::read_to_string(&sum).unwrap();
        std::fs::write(&sum, format!("{}{}", "0".repeat(64), &text[64..])).unwrap();
        let (o, _, _) = install("download", w, &[]);
        assert_eq!(o.status.code(), Some(1), "{}", show(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("checksum mismatch"));
    }

    #[test]
    fn without_a_release_it_builds_from_git_at_the_right_revision() {
        let work = tempfile::tempdir().unwrap();
        let w = work.path();
        // A stand-in `cargo` that records its arguments and "installs" a script.
        write(
            w,
            "fake/cargo",
            "#!/bin/sh\necho \"$@\" >> \"$FAKE_LOG\"\nwhile [ \"$1\" != --root ]; do shift; done\nmkdir -p \"$2/bin\"\nprintf '#!/bin/sh\\necho timeoutlint 0.0.0\\n' > \"$2/bin/timeoutlint\"\nchmod +x \"$2/bin/timeoutlint\"\n",
        );
        let o = Command::new("chmod")
            .arg("+x")
            .arg(w.join("fake/cargo"))
            .output()
            .unwrap();
        assert!(o.status.success());
        let path = format!(
            "{}:{}",
            w.join("fake").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let log = w.join("cargo-args");
        let log_s = log.display().to_string();
        let root_s = w.join("root").display().to_string();
        let upstream = repo(&[("README.md", "upstream\n")]);
        let url = format!("file://{}", upstream.path().display());
        git(upstream.path(), &["branch", "-M", "main"]);
        let head = String::from_utf8(
            Command::new("git")
                .args(["rev-parse", "HEAD"])
                .current_dir(upstream.path())
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
        .trim()
        .to_string();
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let cases: [(&[(&str, &str)], String); 3] = [
            (
                &[("TIMEOUTLINT_VERSION", "v0.2.0")],
                "--tag v0.2.0".to_string(),
            ),
            (&[("TIMEOUTLINT_REF", sha)], format!("--rev {sha}")),
            // A branch is resolved to its commit, so the cache key moves with it.
            (&[("TIMEOUTLINT_REF", "main")], format!("--rev {head}")),
        ];
        for (env, how) in cases {
            let _ = std::fs::remove_dir_all(w.join("root"));
            let _ = std::fs::remove_file(&log);
            let _ = std::fs::remove_file(w.join("github-output"));
            let _ = std::fs::remove_file(w.join("github-path"));
            let mut env = env.to_vec();
            env.extend([
                ("PATH", path.as_str()),
                ("FAKE_LOG", log_s.as_str()),
                ("TIMEOUTLINT_GIT_URL", url.as_str()),
            ]);
            let (o, out, _) = install("download", w, &env);
            assert!(o.status.success(), "{}", show(&o));
            assert!(out.contains("installed=false"), "{out}");
            let rev = out
                .lines()
                .find_map(|l| l.strip_prefix("rev="))
                .unwrap()
                .to_string();
            env.push(("TIMEOUTLINT_REV", &rev));
            let (o, _, gh_path) = install("build", w, &env);
            assert!(o.status.success(), "{}", show(&o));
            assert_eq!(
                std::fs::read_to_string(&log).unwrap().trim(),
                format!("install --locked --git {url} {how} --root {root_s} timeoutlint")
            );
            assert_eq!(gh_path.trim(), format!("{root_s}/bin"));
            // A restored cache skips the build.
            std::fs::remove_file(&log).unwrap();
            let (o, _, _) = install("build", w, &env);
            assert!(o.status.success(), "{}", show(&o));
            assert!(!log.exists(), "built again over a cached install");
        }
    }

    /// The GitLab job's install line on a runner with an empty cache: the release's static
    /// binary when there is one (its archive layout as `release.yml` builds it), else
    /// `cargo install --git`.
    #[test]
    fn gitlab_install_line_downloads_the_release_or_builds_from_git() {
        let script = gitlab_script(&recipe("gitlab-ci.yml"));
        let line = script.iter().find(|l| l.contains("cargo install")).unwrap();
        let releases = "https://github.com/timeoutlint/timeoutlint/releases";
        assert!(line.contains(&format!(
            "{releases}/latest/download/timeoutlint-{TARGET}.tar.gz"
        )));
        let work = tempfile::tempdir().unwrap();
        let w = work.path();
        let local = line.replace(
            releases,
            &format!("file://{}", w.join("releases").display()),
        );
        write(
            w,
            "fake/cargo",
            "#!/bin/sh\necho \"$@\" > \"$CARGO_HOME/cargo-args\"\n",
        );
        let o = Command::new("chmod")
            .arg("+x")
            .arg(w.join("fake/cargo"))
            .output()
            .unwrap();
        assert!(o.status.success());
        // PATH without this build's binaries, so `command -v timeoutlint` finds none.
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", w.join("fake").display());
        let run = || {
            let home = w.join("home");
            let _ = std::fs::remove_dir_all(&home);
            std::fs::create_dir_all(home.join("bin")).unwrap();
            let o = Command::new("bash")
                .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &local])
                .env("PATH", &path)
                .env("CARGO_HOME", &home)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", show(&o));
            home
        };
        // No release yet: the download fails and the build from git runs.
        let home = run();
        assert_eq!(
            std::fs::read_to_string(home.join("cargo-args"))
                .unwrap()
                .trim(),
            "install --locked --git https://github.com/timeoutlint/timeoutlint timeoutlint"
        );
        release(w, "latest/download");
        let home = run();
        assert!(!home.join("cargo-args").exists(), "built despite a release");
        for exe in ["timeoutlint", "cargo-timeoutlint"] {
            assert!(home.join("bin").join(exe).is_file(), "{exe} not installed");
        }
        assert!(
            !home.join("bin/README.md").exists(),
            "only the binaries go to bin"
        );
    }
}
