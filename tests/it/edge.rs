//! The binary against hostile surroundings: special files where a configuration, manifest,
//! baseline or source is expected, broken manifests in unrelated parents, closed pipes, and
//! `--add-ignore` next to string literals. Every run has a deadline, so a regression that hangs
//! fails the test instead of stalling the suite.

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BUGGY: &str = "async fn f() {\n    for _attempt in 0..3 {\n        if g().await.is_ok() { return; }\n        std::thread::sleep(std::time::Duration::from_secs(1));\n    }\n}\n";

/// Long enough for a loaded machine, short enough that a hang is a failure, not a stall.
const DEADLINE: Duration = Duration::from_secs(120);

/// Run `bin` in `dir`, killing it (and failing) after [`DEADLINE`].
fn run_bin(bin: &str, dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain both pipes on threads so a large output cannot block the child.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{bin} {args:?} still running after {DEADLINE:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
    }
}

fn run(dir: &Path, args: &[&str]) -> Output {
    run_bin(env!("CARGO_BIN_EXE_timeoutlint"), dir, args)
}

/// Exit code, stdout and stderr in one string.
fn show(o: &Output) -> String {
    format!(
        "exit {}\n{}{}",
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Make a FIFO at `path` with the system's `mkfifo`; false (with a message) where there is none.
fn mkfifo(path: &Path) -> bool {
    match Command::new("mkfifo").arg(path).status() {
        Ok(s) => {
            assert!(s.success(), "mkfifo {} failed", path.display());
            true
        }
        Err(e) => {
            eprintln!("skipped: no `mkfifo` on this system ({e})");
            false
        }
    }
}

#[cfg(unix)]
fn link_dev_zero(path: &Path) {
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

#[cfg(unix)]
#[test]
fn configuration_lookup_never_reads_special_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bug.rs"), BUGGY).unwrap();
    if !mkfifo(&d.join("timeoutlint.toml")) {
        return;
    }
    let o = run(d, &["--format", "concise"]);
    let s = show(&o);
    assert_eq!(o.status.code(), Some(2), "{s}");
    assert!(
        s.contains("timeoutlint.toml: not a regular file (a FIFO); not read"),
        "{s}"
    );
    // The same file named explicitly, and as a baseline.
    let o = run(d, &["--config", "timeoutlint.toml"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(show(&o).contains("cannot read config timeoutlint.toml: not a regular file (a FIFO)"));
    let o = run(d, &["--isolated", "--baseline", "timeoutlint.toml"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(show(&o).contains("cannot read baseline timeoutlint.toml: not a regular file (a FIFO)"));

    // A link to /dev/zero would be read without end.
    std::fs::remove_file(d.join("timeoutlint.toml")).unwrap();
    link_dev_zero(&d.join("timeoutlint.toml"));
    let o = run(d, &["--format", "concise"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        show(&o).contains("not a regular file (a character device)"),
        "{}",
        show(&o)
    );

    // A config over the size limit is refused by size, not read whole.
    std::fs::remove_file(d.join("timeoutlint.toml")).unwrap();
    let big = format!("# {}\n", "x".repeat(2 * 1024 * 1024));
    std::fs::write(d.join("timeoutlint.toml"), big).unwrap();
    let o = run(d, &["--format", "concise"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        show(&o).contains("larger than 1048576 bytes"),
        "{}",
        show(&o)
    );
}

/// `Cargo.toml` is read for its metadata table (configuration lookup) and for the cargo
/// target of `--format cargo-json`: a FIFO there is a warning, and the run goes on.
#[cfg(unix)]
#[test]
fn a_special_cargo_manifest_is_a_warning_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("src")).unwrap();
    std::fs::write(d.join("src/lib.rs"), BUGGY).unwrap();
    if !mkfifo(&d.join("Cargo.toml")) {
        return;
    }
    let o = run(d, &["--format", "cargo-json"]);
    let s = show(&o);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert!(s.contains("blocking-sleep-in-async"), "{s}");
    assert!(
        s.contains("Cargo.toml: not a regular file (a FIFO); not read; looked at only for a `timeoutlint` table, skipped"),
        "{s}"
    );
    assert!(
        s.contains(
            "Cargo.toml: not a regular file (a FIFO); not read; no cargo target for its files"
        ),
        "{s}"
    );
    std::fs::remove_file(d.join("Cargo.toml")).unwrap();
    link_dev_zero(&d.join("Cargo.toml"));
    let o = run(d, &["--format", "cargo-json"]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    // cargo would wait on the FIFO itself: the cargo subcommand refuses it first.
    std::fs::remove_file(d.join("Cargo.toml")).unwrap();
    assert!(mkfifo(&d.join("Cargo.toml")));
    let o = run_bin(
        env!("CARGO_BIN_EXE_cargo-timeoutlint"),
        d,
        &["timeoutlint", "--manifest-path", "Cargo.toml"],
    );
    assert_eq!(
        show(&o),
        "exit 2\nerror: --manifest-path Cargo.toml: not a regular file (a FIFO); not read\n"
    );
}

/// A broken manifest in a parent directory that has nothing to do with the linted crate (a
/// home directory's scratch `Cargo.toml`) must not stop the run.
#[test]
fn a_broken_manifest_in_a_parent_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("Cargo.toml"), "[package\nname = ").unwrap();
    let krate = d.join("work/app");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::write(krate.join("src/lib.rs"), BUGGY).unwrap();
    let o = run(&krate, &["--format", "concise"]);
    let s = show(&o);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert!(s.contains("src/lib.rs:4:9: blocking-sleep-in-async"), "{s}");
    let warning = s
        .lines()
        .find(|l| l.starts_with("warning:"))
        .unwrap_or_else(|| panic!("no warning: {s}"));
    assert!(
        warning.contains("Cargo.toml: not valid TOML (TOML parse error at line 1, column 9: ")
            && warning.ends_with("looked at only for a `timeoutlint` table, skipped"),
        "{warning}"
    );
    // The crate's own manifest with a broken `timeoutlint` table is a configuration error.
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"app\"\n[package.metadata.timeoutlint]\nselct = []\n",
    )
    .unwrap();
    let o = run(&krate, &["--format", "concise"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    // The place is the manifest's line, not the table's.
    assert!(show(&o).contains("Cargo.toml:4:1: unknown key `package.metadata.timeoutlint.selct`"));
}

/// A configuration that is not UTF-8, or nests arrays past any sensible depth, is an error
/// (exit 2) that says what and where, never a crash.
#[test]
fn a_hostile_configuration_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bug.rs"), BUGGY).unwrap();
    std::fs::write(d.join("timeoutlint.toml"), b"select = [\"\xff\"]\n").unwrap();
    let o = run(d, &["--format", "concise"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        show(&o).contains("timeoutlint.toml: not UTF-8"),
        "{}",
        show(&o)
    );
    let deep = format!("select = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    std::fs::write(d.join("timeoutlint.toml"), deep).unwrap();
    let o = run(d, &["--format", "concise"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        show(&o).contains("timeoutlint.toml:1:") && show(&o).contains("not valid TOML"),
        "{}",
        show(&o)
    );
}

/// A FIFO or a link to `/dev/zero` named on the command line is a per-file error (exit 2),
/// not "0 files checked" and exit 0.
#[cfg(unix)]
#[test]
fn special_files_named_on_the_command_line_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("ok.rs"), "fn main() {}\n").unwrap();
    link_dev_zero(&d.join("zero.rs"));
    let o = run(
        d,
        &["--format", "concise", "--isolated", "zero.rs", "ok.rs"],
    );
    // A link named on the command line is never followed (its target may lie outside the
    // tree), whatever it points to; the device itself, named directly, is not a source.
    assert_eq!(
        show(&o),
        "exit 2\nzero.rs:1:1: error: is a symbolic link; links are never followed (name its target instead)\n"
    );
    let o = run(d, &["--format", "concise", "--isolated", "/dev/zero"]);
    assert_eq!(
        show(&o),
        "exit 2\n/dev/zero:1:1: error: not a regular file (a character device); not linted\n"
    );
    if !mkfifo(&d.join("pipe.rs")) {
        return;
    }
    let o = run(d, &["--format", "concise", "--isolated", "pipe.rs"]);
    assert_eq!(
        show(&o),
        "exit 2\npipe.rs:1:1: error: not a regular file (a FIFO); not linted\n"
    );
    // Inside a walked directory, special files are not sources and are passed over quietly.
    let o = run(d, &["--format", "concise", "--isolated", "."]);
    assert_eq!(show(&o), "exit 0\n");
}

/// Many files with findings: the human output is far larger than a pipe's buffer (64 KiB), so
/// a reader that stops early is certain to make the writer meet a closed pipe.
fn many_findings(d: &Path, n: usize) {
    for i in 0..n {
        std::fs::write(d.join(format!("f{i:04}.rs")), BUGGY).unwrap();
    }
}

/// `timeoutlint . 2>&1 | head -1` panicked ("failed printing to stderr", exit 101). A closed
/// pipe now ends the output quietly and the exit code is still the lint's (1: findings).
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = d.join("src");
    std::fs::create_dir(&src).unwrap();
    many_findings(&src, 300);
    // The reproduction from the issue, through a shell: stdout and stderr are one pipe.
    let o = Command::new("sh")
        .arg("-c")
        .arg(r#"{ "$0" --no-progress src; echo $? > code; } 2>&1 | head -n 1"#)
        .arg(env!("CARGO_BIN_EXE_timeoutlint"))
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
    let code = std::fs::read_to_string(d.join("code")).unwrap();
    assert_eq!(code.trim(), "1", "exit code of the cut run");

    // stdout closed before anything is read; stderr stays readable and must stay empty.
    let mut child = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(["--no-progress", "src"])
        .current_dir(d)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(1));
    assert_eq!(err, "", "a closed stdout is not an error to report");

    // stderr closed, with far more than a pipe's buffer to say there (one line per file that
    // does not parse): the messages are dropped, the run finishes with its own exit code.
    let broken = d.join("broken");
    std::fs::create_dir(&broken).unwrap();
    for i in 0..2000 {
        std::fs::write(broken.join(format!("b{i:04}.rs")), "fn retry( {").unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(["--no-progress", "--add-ignore", "broken"])
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(2), "not 101 (a panic)");
}

/// `--add-ignore` put its comment line inside a multi-line string: the program's data changed
/// and the finding stayed. Now the comment goes where a comment is a comment (here the end of
/// the line), the literals are byte for byte what they were, and the finding is gone; a line
/// with no such place is named and not counted.
#[test]
fn add_ignore_never_writes_inside_a_literal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tag = "// timeoutlint: ignore[blocking-sleep-in-async] accepted when adopting timeoutlint (added by --add-ignore)";
    let string = "async fn f() {\n    let q = \"multi\nline\"; std::thread::sleep(std::time::Duration::from_secs(1));\n}\n";
    let raw = "async fn g() {\n    let q = r#\"a \"quoted\"\n\"#; std::thread::sleep(std::time::Duration::from_secs(1));\n}\n";
    let crlf = BUGGY.replace('\n', "\r\n");
    let nowhere = "async fn k() {\n    let q = \"a\nb\"; std::thread::sleep(std::time::Duration::from_secs(1)); let r = \"c\nd\";\n}\n";
    for (name, text) in [
        ("string.rs", string),
        ("raw.rs", raw),
        ("crlf.rs", &crlf),
        ("nowhere.rs", nowhere),
    ] {
        std::fs::write(d.join(name), text).unwrap();
    }
    let o = run(d, &["--isolated", "--add-ignore"]);
    assert_eq!(
        show(&o),
        "exit 0\n\
         timeoutlint: nowhere.rs: 3: no place for a suppression comment (the line starts and ends inside a literal or comment); `blocking-sleep-in-async` left alone\n\
         timeoutlint: added suppressions for 3 finding(s) in 3 file(s)\n\
         timeoutlint: 1 finding(s) that no comment could silence were left alone (named above)\n"
    );
    let read = |n: &str| std::fs::read_to_string(d.join(n)).unwrap();
    assert_eq!(
        read("string.rs"),
        string.replace("from_secs(1));\n", &format!("from_secs(1)); {tag}\n"))
    );
    assert_eq!(
        read("raw.rs"),
        raw.replace("from_secs(1));\n", &format!("from_secs(1)); {tag}\n"))
    );
    assert_eq!(
        read("crlf.rs"),
        crlf.replace(
            "        std::thread",
            &format!("        {tag}\r\n        std::thread")
        )
    );
    assert_eq!(read("nowhere.rs"), nowhere, "left as it was");
    // What the tool said it silenced is silenced: only the named finding is left.
    let o = run(d, &["--isolated", "--format", "concise"]);
    assert_eq!(
        show(&o),
        "exit 1\nnowhere.rs:3:5: blocking-sleep-in-async: `std::thread::sleep` blocks the async executor thread\n"
    );
}

/// The walker reads `.gitignore`, `.ignore` and `.git/info/exclude` itself, with no limit: a
/// FIFO there hung the run and a link to `/dev/zero` grew without end. Such a directory is now
/// reported and not walked; the rest of the tree is linted.
#[cfg(unix)]
#[test]
fn special_ignore_files_stop_their_directory_not_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bug.rs"), BUGGY).unwrap();
    std::fs::create_dir_all(d.join("sub/deep")).unwrap();
    std::fs::write(d.join("sub/deep/bug.rs"), BUGGY).unwrap();
    if !mkfifo(&d.join("sub/.gitignore")) {
        return;
    }
    let o = run(d, &["--isolated", "--format", "concise"]);
    assert_eq!(
        show(&o),
        "exit 2\n\
         bug.rs:4:9: blocking-sleep-in-async: `std::thread::sleep` blocks the async executor thread\n\
         sub/.gitignore:1:1: error: not a regular file (a FIFO); not read, so sub is not walked\n"
    );
    // Named as the root, or below a directory with such a file: the same, by the root's name.
    let o = run(d, &["--isolated", "--format", "concise", "sub/deep"]);
    assert_eq!(
        show(&o),
        "exit 2\nsub/.gitignore:1:1: error: not a regular file (a FIFO); not read, so sub/deep is not walked\n"
    );
    std::fs::remove_file(d.join("sub/.gitignore")).unwrap();
    link_dev_zero(&d.join(".ignore"));
    let o = run(d, &["--isolated", "--format", "concise"]);
    assert_eq!(
        show(&o),
        "exit 2\n.ignore:1:1: error: not a regular file (a character device); not read, so . is not walked\n"
    );
}
