//! `--fix`, `--unsafe-fixes`, `--diff` and `--allow-dirty` end to end, and the compile proof:
//! `tests/fix-proof` (a real crate) still compiles after `--fix --unsafe-fixes`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn git(dir: &Path, args: &[&str]) -> Output {
    let o = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// No tokio in sight: the blocking-sleep fix is only `MaybeIncorrect`.
const NO_TOKIO: &str = "async fn f() {\n    for _attempt in 0..3 {\n        if g().await.is_ok() { return; }\n        std::thread::sleep(std::time::Duration::from_secs(1));\n    }\n}\n";

#[test]
fn fix_applies_maybe_incorrect_only_with_unsafe_fixes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.rs");
    std::fs::write(&file, NO_TOKIO).unwrap();
    let o = run(dir.path(), &["--fix", "--format", "concise"]);
    assert_eq!(o.status.code(), Some(1), "the finding is left");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), NO_TOKIO);
    let o = run(
        dir.path(),
        &["--fix", "--unsafe-fixes", "--format", "concise"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let fixed = std::fs::read_to_string(&file).unwrap();
    assert!(fixed.contains("tokio::time::sleep(std::time::Duration::from_secs(1)).await;"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("fixed 1 finding in 1 file"));
    let o = run(dir.path(), &["--unsafe-fixes"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--unsafe-fixes needs --fix or --diff"
    );
}

#[test]
fn diff_writes_nothing_and_applies_with_git_apply() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("src")).unwrap();
    std::fs::write(d.join("src/a.rs"), NO_TOKIO).unwrap();
    git(d, &["init", "-q"]);
    git(d, &["add", "."]);
    git(d, &["commit", "-qm", "init"]);
    let o = run(d, &["--diff", "--unsafe-fixes"]);
    assert_eq!(o.status.code(), Some(1), "a diff is exit 1");
    assert_eq!(
        std::fs::read_to_string(d.join("src/a.rs")).unwrap(),
        NO_TOKIO
    );
    let patch = String::from_utf8(o.stdout).unwrap();
    assert!(
        patch.starts_with("diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n"),
        "{patch}"
    );
    std::fs::write(d.join("fix.patch"), &patch).unwrap();
    git(d, &["apply", "fix.patch"]);
    std::fs::remove_file(d.join("fix.patch")).unwrap();
    let o = run(d, &["--format", "concise"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = run(d, &["--diff"]);
    assert_eq!(
        (o.status.code(), o.stdout.is_empty()),
        (Some(0), true),
        "nothing left to fix"
    );
}

/// The proof crate's findings (every rule's fix, the loop rewrites and the inserted constant
/// included) as one `--diff`: it applies with `git apply` and leaves nothing to report.
#[test]
fn every_fix_of_the_proof_crate_applies_as_a_diff() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("src")).unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("tests/fix-proof/src/lib.rs")).unwrap();
    std::fs::write(d.join("src/lib.rs"), &lib).unwrap();
    git(d, &["init", "-q"]);
    git(d, &["add", "."]);
    git(d, &["commit", "-qm", "init"]);
    let o = run(d, &["--diff", "--unsafe-fixes"]);
    assert_eq!(o.status.code(), Some(1), "a diff is exit 1");
    std::fs::write(d.join("fix.patch"), &o.stdout).unwrap();
    git(d, &["apply", "fix.patch"]);
    std::fs::remove_file(d.join("fix.patch")).unwrap();
    assert_ne!(std::fs::read_to_string(d.join("src/lib.rs")).unwrap(), lib);
    let o = run(d, &["--format", "concise"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn fix_refuses_a_dirty_git_tree_without_allow_dirty() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.rs"), "fn main() {}\n").unwrap();
    git(d, &["init", "-q"]);
    git(d, &["add", "."]);
    git(d, &["commit", "-qm", "init"]);
    std::fs::write(d.join("a.rs"), NO_TOKIO).unwrap();
    let o = run(d, &["--fix", "--unsafe-fixes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--allow-dirty"));
    assert_eq!(std::fs::read_to_string(d.join("a.rs")).unwrap(), NO_TOKIO);
    let o = run(d, &["--fix", "--unsafe-fixes", "--allow-dirty"]);
    assert_eq!(o.status.code(), Some(0));
    assert_ne!(std::fs::read_to_string(d.join("a.rs")).unwrap(), NO_TOKIO);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_name() == "target" {
            continue;
        }
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

fn cargo_check(dir: &Path, target: &Path) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let check = |offline: bool| {
        let mut c = Command::new(&cargo);
        c.args(["check", "--quiet"])
            .current_dir(dir)
            .env("CARGO_TARGET_DIR", target);
        if offline {
            c.arg("--offline");
        }
        c.output().unwrap()
    };
    let o = check(true);
    // Offline needs every dependency in the local registry cache; otherwise fetch them.
    if o.status.success() {
        o
    } else {
        check(false)
    }
}

/// The copy of `tests/fix-proof` in `tmp`, its manifest pointing at this checkout's runtime, and
/// the shared build directory.
fn proof_crate(tmp: &Path) -> (PathBuf, PathBuf) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), PathBuf::from)
        .join("fix-proof");
    let krate = tmp.join("fix-proof");
    copy_dir(&root.join("tests/fix-proof"), &krate);
    let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).unwrap();
    let runtime = root.join("runtime").to_string_lossy().replace('\\', "/");
    std::fs::write(
        krate.join("Cargo.toml"),
        manifest.replace("\"../../runtime\"", &format!("\"{runtime}\"")),
    )
    .unwrap();
    (krate, target)
}

/// The code blocks under `## Use instead` in a rule doc.
fn use_instead_blocks(doc: &str) -> Vec<String> {
    let Some(start) = doc.find("\n## Use instead\n") else {
        return Vec::new();
    };
    let section = &doc[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut out = Vec::new();
    let mut rest = section;
    while let Some(open) = rest.find("```rust\n") {
        let body = &rest[open + 8..];
        let Some(close) = body.find("```") else { break };
        out.push(body[..close].to_string());
        rest = &body[close + 3..];
    }
    out
}

/// Every `Use instead` block of every rule doc compiles against the runtime crate, tokio and
/// tokio-util (each in its own module of the proof crate, with the stand-ins of
/// `tests/fix-proof/doc-stubs.rs`).
#[test]
fn rule_docs_use_instead_blocks_compile() {
    use std::fmt::Write as _;
    let tmp = tempfile::tempdir().unwrap();
    let (krate, target) = proof_crate(tmp.path());
    let mut lib = String::from("#![allow(dead_code, unused)]\npub mod stubs {\n");
    lib.push_str(&std::fs::read_to_string(krate.join("doc-stubs.rs")).unwrap());
    lib.push_str("}\n");
    let mut blocks = 0;
    for rule in timeoutlint::rules::ALL {
        for (i, block) in use_instead_blocks(rule.doc).iter().enumerate() {
            blocks += 1;
            let _ = writeln!(
                lib,
                "// rules/{}.md, Use instead block {}\nmod {}_{i} {{\nuse crate::stubs::*;\n{block}}}",
                rule.name,
                i + 1,
                rule.snake_name()
            );
        }
    }
    assert!(blocks >= timeoutlint::rules::ALL.len(), "{blocks} blocks");
    std::fs::write(krate.join("src/lib.rs"), &lib).unwrap();
    let o = cargo_check(&krate, &target);
    assert!(
        o.status.success(),
        "a `Use instead` block does not compile:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Item 4 of the issue: the fixes compile. `tests/fix-proof` holds one instance of each problem
/// `--fix --unsafe-fixes` fixes and compiles as it is; a copy is fixed, compiled and linted again.
/// Its build directory is shared under the test target dir, so only the first run is slow.
#[test]
fn fixed_proof_crate_compiles_and_lints_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let (krate, target) = proof_crate(tmp.path());
    let before = std::fs::read_to_string(krate.join("src/lib.rs")).unwrap();
    let o = cargo_check(&krate, &target);
    assert!(
        o.status.success(),
        "the proof crate must compile before fixing: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&krate, &["--format", "concise"]);
    let found = String::from_utf8_lossy(&o.stdout).into_owned();
    for rule in [
        "blocking-sleep-in-async",
        "uncancellable-backoff",
        "non-idempotent-retry-without-key",
        "retry-after-uncapped",
        "attempt-timeout-without-budget",
        "client-timeout-in-retry",
    ] {
        assert!(
            found.contains(rule),
            "the proof crate has no {rule} finding:\n{found}"
        );
    }
    let o = run(&krate, &["--fix", "--unsafe-fixes", "--format", "concise"]);
    let after = std::fs::read_to_string(krate.join("src/lib.rs")).unwrap();
    assert_ne!(before, after);
    assert_eq!(
        o.status.code(),
        Some(0),
        "findings left after fixing:\n{}\n{after}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("fixed 14 findings in 1 file"));
    let o = cargo_check(&krate, &target);
    assert!(
        o.status.success(),
        "the fixed crate does not compile:\n{after}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&krate, &["--format", "concise"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}
