//! `--fix`, `--diff` and `--add-ignore` never lose a byte and never write where they should not
//! (issue 15): each test runs the binary, or the fix loop itself, in a throwaway git repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn run_os(dir: &Path, args: &[&std::ffi::OsStr]) -> Output {
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

/// A clean git repository holding `files`.
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    commit_all(dir.path());
    dir
}

fn commit_all(d: &Path) {
    if !d.join(".git").exists() {
        git(d, &["init", "-q"]);
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "snapshot", "--allow-empty"]);
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Three fixable findings (the file uses tokio, so the blocking-sleep fix is safe).
const FIXABLE: &str = "async fn f() {\n    for _attempt in 0..3 {\n        if g().await.is_ok() { return; }\n        std::thread::sleep(std::time::Duration::from_secs(1));\n    }\n    std::thread::sleep(std::time::Duration::from_secs(2));\n    std::thread::sleep(std::time::Duration::from_secs(3));\n    tokio::spawn(h());\n}\n";

fn is_fixed(text: &str) -> bool {
    text.contains("tokio::time::sleep(std::time::Duration::from_secs(1)).await")
        && !text.contains("std::thread::sleep")
}

/// Item 1: on Unix `\` is a file-name character; the fix of `sub\x.rs` goes to that file, and
/// the committed `sub/x.rs` is untouched.
#[cfg(unix)]
#[test]
fn a_backslash_in_a_file_name_is_written_to_that_file() {
    let keep = "fn keep() {}\n";
    let r = repo(&[("sub\\x.rs", FIXABLE), ("sub/x.rs", keep)]);
    let d = r.path();
    let o = run(d, &["--format", "concise", "."]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("sub\\x.rs:4:9"),
        "the real name is shown: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = run(d, &["--fix", "--format", "concise", "."]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(d.join("sub/x.rs")).unwrap(), keep);
    assert!(is_fixed(
        &std::fs::read_to_string(d.join("sub\\x.rs")).unwrap()
    ));
    assert!(
        err(&o).contains("fixed 3 findings in 1 file"),
        "{}",
        err(&o)
    );
}

/// Item 2: a non-UTF-8 file name is written under its own bytes, not its lossy spelling (an
/// existing file of that spelling is left alone), and a non-UTF-8 directory name works too.
#[cfg(target_os = "linux")]
#[test]
fn non_utf8_file_and_directory_names_are_written_under_their_own_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let other = "fn other() {}\n";
    let r = repo(&[]);
    let d = r.path();
    let name = std::ffi::OsStr::from_bytes(b"a\xff.rs");
    let lossy = "a\u{fffd}.rs";
    let dir = std::ffi::OsStr::from_bytes(b"d\xff");
    std::fs::write(d.join(name), FIXABLE).unwrap();
    std::fs::write(d.join(lossy), other).unwrap();
    std::fs::create_dir(d.join(dir)).unwrap();
    std::fs::write(d.join(dir).join("b.rs"), FIXABLE).unwrap();
    commit_all(d);
    let o = run(d, &["--fix", "--format", "concise", "."]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        err(&o).contains("fixed 6 findings in 2 files"),
        "{}",
        err(&o)
    );
    assert_eq!(std::fs::read_to_string(d.join(lossy)).unwrap(), other);
    assert!(is_fixed(&std::fs::read_to_string(d.join(name)).unwrap()));
    assert!(is_fixed(
        &std::fs::read_to_string(d.join(dir).join("b.rs")).unwrap()
    ));
    // Named on the command line, the directory is found and fixed through its own bytes too.
    std::fs::write(d.join(dir).join("b.rs"), FIXABLE).unwrap();
    commit_all(d);
    let o = run_os(d, &["--fix".as_ref(), dir]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(is_fixed(
        &std::fs::read_to_string(d.join(dir).join("b.rs")).unwrap()
    ));
}

fn lint_config() -> timeoutlint::lint::Config {
    timeoutlint::lint::Config::new(
        timeoutlint::rules::ALL.to_vec(),
        timeoutlint::base::apis::Apis::builtin(),
    )
}

/// `--fix --allow-dirty`: git would refuse the edited tree anyway; the check at write time must
/// hold on its own (an edit can also land after git was asked).
fn fix_args() -> timeoutlint::edge::fix::FixArgs {
    timeoutlint::edge::fix::FixArgs {
        fix: true,
        allow_dirty: true,
        ..timeoutlint::edge::fix::FixArgs::default()
    }
}

/// Item 3: a file edited while the run works is not overwritten with fixes of the old text, and
/// a file deleted during the run is not re-created; each is reported, the others are fixed.
#[test]
fn fixes_are_not_written_over_an_edit_or_a_deletion_made_during_the_run() {
    use timeoutlint::edge::fix::{run as fix_run, Outcome};
    let r = repo(&[("a.rs", FIXABLE), ("b.rs", FIXABLE), ("c.rs", FIXABLE)]);
    let d = r.path().to_path_buf();
    let config = lint_config();
    let paths = vec![d.clone()];
    let first = timeoutlint::driver::lint_paths(&paths, &[], &config, 2);
    assert_eq!(first.files.len(), 3);
    let edited = "// the user's edit, made while timeoutlint ran\nfn mine() {}\n";
    // The user saves `a.rs` and deletes `b.rs` after the run read them, while the fixes are
    // being worked out: the rounds lint the fixed texts from the overlay.
    std::fs::write(d.join("a.rs"), edited).unwrap();
    std::fs::remove_file(d.join("b.rs")).unwrap();
    let lint_run = timeoutlint::driver::Run::new(&paths, &[], &config, 2);
    let mut out = Vec::new();
    let Ok(Outcome::Fixed(report)) = fix_run(&fix_args(), &lint_run, first, &mut out) else {
        panic!("--fix reports what is left");
    };
    assert_eq!(std::fs::read_to_string(d.join("a.rs")).unwrap(), edited);
    assert!(
        !d.join("b.rs").exists(),
        "a deleted file is never re-created"
    );
    assert!(is_fixed(&std::fs::read_to_string(d.join("c.rs")).unwrap()));
    let messages: Vec<String> = report
        .errors
        .iter()
        .map(|e| format!("{}: {}", e.path, e.message))
        .collect();
    assert!(
        messages.iter().any(|m| m.ends_with("a.rs: not fixed (3 fix(es) left unapplied): changed since it was read; its fixes were not written (run again)")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("b.rs: not fixed")
            && m.contains("deleted since it was read; not re-created")),
        "{messages:?}"
    );
    assert!(
        !d.read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains(".timeoutlint-")),
        "no temporary file is left"
    );
}

/// Item 4 end to end: a fixed file keeps its permission bits, and no temporary file is left
/// beside it (the injected full-disk error is a unit test of `fix_edge::write_fixed`).
#[cfg(unix)]
#[test]
fn a_fixed_file_keeps_its_permissions_and_no_temporary_file_is_left() {
    use std::os::unix::fs::PermissionsExt;
    let r = repo(&[("src/a.rs", FIXABLE)]);
    let d = r.path();
    let file = d.join("src/a.rs");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let o = run(d, &["--fix"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(is_fixed(&std::fs::read_to_string(&file).unwrap()));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    let names: Vec<_> = std::fs::read_dir(d.join("src"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["a.rs"]);
}

/// Item 5: the crate run suppresses `attempt-timeout-without-budget` (the caller, in another
/// file, bounds the whole retry with `tokio::time::timeout`), so `--fix` rewrites nothing; the
/// same file linted alone has the finding and the rewrite, so the test can fail.
#[test]
fn fix_applies_only_what_the_crate_run_reports() {
    let fetch = "use std::time::Duration;\n\npub async fn fetch(client: &Client) -> Result<Reply, Error> {\n    for attempt in 0..5 {\n        match tokio::time::timeout(Duration::from_secs(10), client.call()).await {\n            Ok(Ok(r)) => return Ok(r),\n            Ok(Err(e)) => tracing::warn!(\"attempt {attempt} failed: {e}\"),\n            Err(_) => tracing::warn!(\"attempt {attempt} timed out\"),\n        }\n    }\n    Err(Error::GaveUp)\n}\n";
    let main = "mod fetch;\nuse std::time::Duration;\n\nasync fn run(client: &Client) {\n    let _ = tokio::time::timeout(Duration::from_secs(90), fetch::fetch(client)).await;\n}\n";
    let manifest = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let r = repo(&[
        ("Cargo.toml", manifest),
        ("src/fetch.rs", fetch),
        ("src/main.rs", main),
    ]);
    let d = r.path();
    for args in [
        &["--fix", "--unsafe-fixes", "--format", "concise", "."][..],
        &["--diff", "--unsafe-fixes", "."][..],
    ] {
        let o = run(d, args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", err(&o));
        assert!(
            o.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(!err(&o).contains("fixed"), "{}", err(&o));
        assert_eq!(
            std::fs::read_to_string(d.join("src/fetch.rs")).unwrap(),
            fetch
        );
    }
    // Named alone, the file still gets its crate's findings (the crate's other files are read
    // for context): nothing to fix either.
    let o = run(d, &["--diff", "--unsafe-fixes", "src/fetch.rs"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // As its own crate (`--no-index`), the finding and its rewrite are real.
    let o = run(
        d,
        &["--diff", "--unsafe-fixes", "--no-index", "src/fetch.rs"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("RetryPolicy"));
}

/// Item 7: a link named on the command line, to a file or a directory outside the tree, is not
/// followed by the lint nor written through by `--fix`: it is reported.
#[cfg(unix)]
#[test]
fn a_link_named_on_the_command_line_is_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("a.rs"), FIXABLE).unwrap();
    let r = repo(&[("keep.rs", "fn main() {}\n")]);
    let d = r.path();
    std::os::unix::fs::symlink(outside.path().join("a.rs"), d.join("link.rs")).unwrap();
    std::os::unix::fs::symlink(outside.path(), d.join("dirlink")).unwrap();
    commit_all(d);
    for target in ["link.rs", "dirlink"] {
        for args in [
            &["--format", "concise"][..],
            &["--fix", "--format", "concise"][..],
        ] {
            let mut all = args.to_vec();
            all.push(target);
            let o = run(d, &all);
            assert_eq!(o.status.code(), Some(2), "{all:?}");
            assert!(
                String::from_utf8_lossy(&o.stdout).contains(&format!(
                    "{target}:1:1: error: is a symbolic link; links are never followed"
                )),
                "{}",
                String::from_utf8_lossy(&o.stdout)
            );
            assert_eq!(
                std::fs::read_to_string(outside.path().join("a.rs")).unwrap(),
                FIXABLE
            );
        }
    }
    // In a directory walk a link is skipped, as the README says.
    let o = run(d, &["--fix", "."]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(outside.path().join("a.rs")).unwrap(),
        FIXABLE
    );
}

/// Item 8: when git cannot say whether the tree is clean (a broken `.git`, or no git at all
/// while a `.git` exists), `--fix` refuses without `--allow-dirty`.
#[test]
fn fix_refuses_when_git_cannot_confirm_the_tree_is_clean() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.rs"), FIXABLE).unwrap();
    // A worktree link to a repository that does not exist: every git command fails here.
    std::fs::write(d.join(".git"), "gitdir: /nonexistent/timeoutlint-test\n").unwrap();
    let o = run(d, &["--fix"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("cannot tell whether"), "{}", err(&o));
    assert!(err(&o).contains("--allow-dirty"), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(d.join("a.rs")).unwrap(), FIXABLE);
    // git missing altogether, with a real `.git` directory.
    let r = repo(&[("a.rs", FIXABLE)]);
    let o = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .arg("--fix")
        .current_dir(r.path())
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("cannot run git"), "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(r.path().join("a.rs")).unwrap(),
        FIXABLE
    );
    let o = run(d, &["--fix", "--allow-dirty"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(is_fixed(&std::fs::read_to_string(d.join("a.rs")).unwrap()));
}

/// Item 8: one `git status` per work tree, however many files are fixed; a dirty one among
/// them is still found.
#[cfg(unix)]
#[test]
fn one_git_status_per_work_tree() {
    use std::os::unix::fs::PermissionsExt;
    let r = repo(&[
        ("a.rs", FIXABLE),
        ("src/b.rs", FIXABLE),
        ("src/deep/c.rs", FIXABLE),
    ]);
    let d = r.path();
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("calls.log");
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let shim = bin.path().join("git");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.trim()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let with_shim = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
            .args(args)
            .current_dir(d)
            .env("PATH", bin.path())
            .output()
            .unwrap()
    };
    std::fs::write(d.join("src/deep/c.rs"), format!("{FIXABLE}// edited\n")).unwrap();
    let o = with_shim(&["--fix"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("uncommitted changes (src/deep/c.rs)"),
        "{}",
        err(&o)
    );
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(calls.lines().count(), 1, "{calls}");
    commit_all(d);
    std::fs::remove_file(&log).unwrap();
    let o = with_shim(&["--fix"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).contains("in 3 files"), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
}

/// Item 9: a CRLF file keeps CRLF through every fix (the key hoist, the new `MAX_RETRY_AFTER`
/// constant, the policy-loop rewrites) and through `--add-ignore`; the fixed CRLF text is the
/// fixed LF text with CRLF endings, so the hoist leaves no stray blank line either.
#[test]
fn crlf_files_stay_crlf() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let lf = std::fs::read_to_string(root.join("tests/fix-proof/src/lib.rs")).unwrap();
    let crlf = lf.replace('\n', "\r\n");
    let r = repo(&[("lf/src/lib.rs", &lf), ("crlf/src/lib.rs", &crlf)]);
    let d = r.path();
    let o = run(d, &["--fix", "--unsafe-fixes", "."]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let fixed_lf = std::fs::read_to_string(d.join("lf/src/lib.rs")).unwrap();
    let fixed_crlf = std::fs::read_to_string(d.join("crlf/src/lib.rs")).unwrap();
    for needle in [
        "let key = ",
        "const MAX_RETRY_AFTER",
        "RetryPolicy::builder()",
    ] {
        assert!(fixed_lf.contains(needle), "{needle}");
    }
    assert_eq!(fixed_crlf, fixed_lf.replace('\n', "\r\n"));
    let ignore = repo(&[("a.rs", &FIXABLE.replace('\n', "\r\n"))]);
    let o = run(ignore.path(), &["--add-ignore"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = std::fs::read_to_string(ignore.path().join("a.rs")).unwrap();
    assert!(text.contains("// timeoutlint: ignore["));
    assert_eq!(
        text.matches('\n').count(),
        text.matches("\r\n").count(),
        "{text:?}"
    );
}

/// Item 10: files the lint accepts but whose syntax nests deep are fixed and diffed on the
/// big-stack workers, like the lint: no stack overflow on the main thread.
#[test]
fn fix_and_diff_of_deeply_nested_files_do_not_overflow() {
    let deep = [
        format!(
            "fn p() {{ let _ = {}1{}; }}\n",
            "(".repeat(3_000),
            ")".repeat(3_000)
        ),
        format!("fn c() {{ let _ = 1{}; }}\n", " as u8".repeat(10_000)),
        format!("fn i() {{ let _ = a{}; }}\n", "[0]".repeat(200_000)),
    ];
    let files: Vec<(String, String)> = deep
        .iter()
        .enumerate()
        .map(|(i, body)| (format!("f{i}.rs"), format!("{FIXABLE}{body}")))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let r = repo(&refs);
    let d = r.path();
    let o = run(d, &["--format", "concise"]);
    let accepted = String::from_utf8_lossy(&o.stdout).into_owned();
    let o = run(d, &["--diff"]);
    assert!(
        matches!(o.status.code(), Some(1 | 2)),
        "{:?} {}",
        o.status,
        err(&o)
    );
    let o = run(d, &["--fix"]);
    assert!(
        matches!(o.status.code(), Some(0 | 2)),
        "{:?} {}",
        o.status,
        err(&o)
    );
    // Every file the lint accepted (it reported its findings) got its fixes.
    for (name, _) in &files {
        if accepted.contains(&format!("{name}:4:9")) {
            assert!(
                is_fixed(&std::fs::read_to_string(d.join(name)).unwrap()),
                "{name}"
            );
        }
    }
    assert!(accepted.contains("f0.rs:4:9"), "{accepted}");
}

/// Item 16: one file named several ways is linted, reported and fixed once.
#[test]
fn a_file_named_twice_is_linted_once() {
    let r = repo(&[("a/b.rs", FIXABLE)]);
    let d = r.path();
    let abs = d.join("a/b.rs");
    let abs = abs.to_str().unwrap();
    let o = run(d, &["--format", "concise", "a/", "./a/b.rs", abs]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("blocking-sleep-in-async").count(), 3, "{out}");
    let o = run(d, &["--diff", "a/", "./a/b.rs", abs]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout)
            .matches("diff --git")
            .count(),
        1
    );
    let o = run(d, &["--fix", "a/", "./a/b.rs", abs]);
    assert!(
        err(&o).contains("fixed 3 findings in 1 file"),
        "{}",
        err(&o)
    );
}

/// Items 17 and 20: a file that cannot be written (read-only: refused on the permission bits,
/// also as root) does not stop `--fix`: the others are fixed, it is reported with the reason,
/// exit 2, and the report shows its findings as still there.
#[cfg(unix)]
#[test]
fn one_unwritable_file_does_not_stop_fix() {
    use std::os::unix::fs::PermissionsExt;
    let r = repo(&[("a.rs", FIXABLE), ("b.rs", FIXABLE), ("c.rs", FIXABLE)]);
    let d = r.path();
    std::fs::set_permissions(d.join("b.rs"), std::fs::Permissions::from_mode(0o444)).unwrap();
    let o = run(d, &["--fix", "--format", "concise"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(d.join("b.rs")).unwrap(), FIXABLE);
    assert!(is_fixed(&std::fs::read_to_string(d.join("a.rs")).unwrap()));
    assert!(is_fixed(&std::fs::read_to_string(d.join("c.rs")).unwrap()));
    assert!(
        err(&o).contains("fixed 6 findings in 2 files"),
        "{}",
        err(&o)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "b.rs:1:1: error: not fixed (3 fix(es) left unapplied): the file is read-only"
        ),
        "{out}"
    );
    assert!(out.contains("b.rs:4:9: blocking-sleep-in-async"), "{out}");
}

/// Item 18: a file whose text changes between the two passes of a directory run gets a clear
/// error, never findings of one text shown at the positions of the other.
#[test]
fn a_file_changed_between_the_passes_is_an_error_not_a_mix() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("fixtures/client-timeout-in-retry");
    let callers = dir.join("clients.rs");
    let config = lint_config();
    let paths = vec![dir.clone()];
    let plain = timeoutlint::driver::lint_paths(&paths, &[], &config, 1);
    assert!(
        plain.files.iter().any(|(f, _)| f.real_path == callers),
        "the fixture has findings in clients.rs"
    );
    let reads = AtomicUsize::new(0);
    let read = |p: &PathBuf| {
        let text = timeoutlint::walk::read(p, u64::MAX)?;
        // The second read of clients.rs (pass 2) sees a new text, shifted by two lines.
        if *p == callers && reads.fetch_add(1, Ordering::SeqCst) > 0 {
            return Ok(format!("// saved\n// again\n{text}"));
        }
        Ok(text)
    };
    let report = timeoutlint::driver::lint_paths_reading(&paths, &[], &config, 1, &read);
    assert!(
        reads.load(Ordering::SeqCst) >= 2,
        "pass 2 read the file again"
    );
    assert!(report.files.iter().all(|(f, _)| f.real_path != callers));
    let e = report
        .errors
        .iter()
        .find(|e| e.path.ends_with("clients.rs"))
        .expect("an error for the changed file");
    assert!(
        e.message.contains("changed while it was being linted"),
        "{}",
        e.message
    );
    // Every other file's findings are of the one text it has.
    for (f, diags) in &report.files {
        let (g, before) = plain.files.iter().find(|(g, _)| g.path == f.path).unwrap();
        assert_eq!(f.text, g.text);
        assert!(diags
            .iter()
            .all(|d| before.iter().any(|b| b.primary == d.primary)));
    }
}

/// Item 19: two report files to one path, or a report over a linted file, are refused before
/// anything runs.
#[test]
fn output_paths_that_clash_are_refused() {
    let r = repo(&[("x.rs", FIXABLE)]);
    let d = r.path();
    let o = run(
        d,
        &[
            "--output",
            "json=r.json",
            "--output",
            "sarif=./r.json",
            "x.rs",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("two --output options write to the same file"),
        "{}",
        err(&o)
    );
    assert!(!d.join("r.json").exists());
    for args in [
        &["--output", "json=x.rs", "x.rs"][..],
        &["--output", "json=x.rs", "."][..],
    ] {
        let o = run(d, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            err(&o).contains("would overwrite a file being linted"),
            "{}",
            err(&o)
        );
        assert_eq!(std::fs::read_to_string(d.join("x.rs")).unwrap(), FIXABLE);
    }
    let o = run(d, &["--output", "json=r.json", "x.rs"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(d.join("r.json").is_file());
}
