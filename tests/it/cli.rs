//! The binary end to end: exit codes, subcommands, hostile inputs, determinism.

use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const BUGGY: &str = "async fn f() {\n    for _attempt in 0..3 {\n        if g().await.is_ok() { return; }\n        std::thread::sleep(std::time::Duration::from_secs(1));\n    }\n}\n";

#[test]
fn exit_codes_clean_findings_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("clean.rs"), "fn main() {}\n").unwrap();
    assert_eq!(run(dir.path(), &[]).status.code(), Some(0));
    std::fs::write(dir.path().join("bug.rs"), BUGGY).unwrap();
    let o = run(dir.path(), &["--format", "concise"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "bug.rs:4:9: blocking-sleep-in-async: `std::thread::sleep` blocks the async executor thread\n");
    assert_eq!(run(dir.path(), &["--exit-zero"]).status.code(), Some(0));
    std::fs::write(dir.path().join("broken.rs"), "fn retry( {").unwrap();
    let o = run(dir.path(), &["--format", "concise"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a file that does not parse is exit 2"
    );
    assert!(
        stdout(&o).contains("bug.rs:4:9"),
        "the other files are still linted"
    );
    assert_eq!(
        run(dir.path(), &["--select", "no-such-rule"]).status.code(),
        Some(2)
    );
    assert_eq!(run(dir.path(), &["--no-such-flag"]).status.code(), Some(2));
}

#[test]
fn rules_subcommands_and_a_directory_named_rules() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(dir.path(), &["rules"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("`unbounded-retry`"));
    let o = run(dir.path(), &["rule", "unbounded-retry"]);
    assert!(stdout(&o).starts_with("# unbounded-retry"));
    let o = run(dir.path(), &["rule", "unbounded-retyr"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did you mean `unbounded-retry`"));
    std::fs::create_dir(dir.path().join("rules")).unwrap();
    std::fs::write(dir.path().join("rules/bug.rs"), BUGGY).unwrap();
    assert_eq!(run(dir.path(), &["./rules"]).status.code(), Some(1));
}

#[test]
fn hostile_inputs_become_per_file_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bug.rs"), BUGGY).unwrap();
    std::fs::write(d.join("latin1.rs"), b"fn f() { let s = \"caf\xe9\"; }").unwrap();
    std::fs::write(
        d.join("binary.rs"),
        [b'r', b'e', 0u8, 159, 146, 150, 0, 1, 2],
    )
    .unwrap();
    std::fs::write(
        d.join("deep.rs"),
        format!(
            "fn retry() {{ let x = {}1{}; }}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("chain.rs"),
        format!("fn retry() -> i32 {{ 1{} }}", " + 1".repeat(200_000)),
    )
    .unwrap();
    std::fs::write(
        d.join("unary.rs"),
        format!("fn retry() -> bool {{ {}true }}", "!".repeat(100_000)),
    )
    .unwrap();
    std::fs::write(d.join("empty.rs"), "").unwrap();
    std::fs::write(d.join("crlf.rs"), "fn f() {\r\n    let x = 1;\r\n}\r\n").unwrap();
    std::fs::write(d.join("bom.rs"), "\u{feff}fn f() {}\n").unwrap();
    std::fs::write(d.join("syntax.rs"), "fn retry() { let = ; }").unwrap();
    std::fs::create_dir(d.join("dir.rs")).unwrap();
    #[cfg(unix)]
    {
        std::fs::create_dir(d.join("loop")).unwrap();
        std::os::unix::fs::symlink(d.join("loop"), d.join("loop/self")).unwrap();
        std::os::unix::fs::symlink("/", d.join("outside")).unwrap();
    }
    let big = "fn f() {}\n".repeat(1_200_000);
    std::fs::write(d.join("big.rs"), big).unwrap();
    let o = run(d, &["--format", "concise"]);
    let out = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("bug.rs:4:9: blocking-sleep-in-async"), "{out}");
    for (file, why) in [
        ("latin1.rs", "not valid UTF-8"),
        ("binary.rs", "not valid UTF-8"),
        ("deep.rs", "nesting deeper"),
        ("chain.rs", "nesting deeper"),
        ("unary.rs", "nesting deeper"),
        ("syntax.rs", "could not parse"),
        ("big.rs", "over the"),
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(file) && l.contains(why)),
            "{file}: {why}\n{out}"
        );
    }
    for quiet in ["empty.rs", "crlf.rs", "bom.rs", "dir.rs", "outside", "loop"] {
        assert!(
            !out.lines().any(|l| l.starts_with(quiet)),
            "{quiet} should be fine\n{out}"
        );
    }
    // With the size limit raised, a 12 MB file is parsed like any other.
    let o = run(
        d,
        &[
            "--format",
            "concise",
            "--max-file-size",
            "100000000",
            "big.rs",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn output_is_identical_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..40 {
        std::fs::write(dir.path().join(format!("f{i:02}.rs")), BUGGY).unwrap();
    }
    std::fs::write(dir.path().join("bad.rs"), "fn retry(").unwrap();
    let outs: Vec<String> = ["1", "2", "8"]
        .iter()
        .map(|t| stdout(&run(dir.path(), &["--threads", t, "--format", "json"])))
        .collect();
    assert_eq!(outs[0], outs[1]);
    assert_eq!(outs[0], outs[2]);
}

#[test]
fn the_runtime_crate_lints_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = run(root, &["--format", "concise", "runtime"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// The prefilter (and item masking) may skip work, never findings: over every crate this
/// workspace depends on (real code nobody here wrote), the findings with and without it are the
/// same.
#[test]
fn prefilter_is_exact_on_the_dependency_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let meta = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        meta.status.success(),
        "{}",
        String::from_utf8_lossy(&meta.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&meta.stdout).unwrap();
    let mut dirs: Vec<String> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !p["source"].is_null())
        .filter_map(|p| {
            Path::new(p["manifest_path"].as_str()?)
                .parent()
                .map(|d| d.to_string_lossy().into_owned())
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    assert!(
        dirs.len() > 50,
        "expected the dependency corpus, got {} crates",
        dirs.len()
    );
    let findings = |extra: &[&str]| {
        let mut args = vec![
            "--isolated",
            "--format",
            "json",
            "--extend-select",
            "all",
            "--no-progress",
        ];
        args.extend_from_slice(extra);
        args.extend(dirs.iter().map(String::as_str));
        let o = run(root, &args);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let errors: Vec<String> = v["errors"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["path"].as_str().map(str::to_string))
            .collect();
        (v["diagnostics"].as_array().unwrap().clone(), errors)
    };
    let (on, _) = findings(&[]);
    let (off, unparsable) = findings(&["--no-prefilter"]);
    // A file syn rejects as a whole has no findings in a full parse; with masking the rejected
    // item may be blanked out and the rest linted: more, not different.
    let on: Vec<_> = on
        .into_iter()
        .filter(|d| !unparsable.iter().any(|p| d["path"].as_str() == Some(p)))
        .collect();
    assert_eq!(on, off);
    eprintln!(
        "prefilter exact over {} crates: {} findings",
        dirs.len(),
        off.len()
    );
}

fn run_stdin(dir: &Path, args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A run that refuses its arguments exits without reading: the pipe may be closed.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    child.wait_with_output().unwrap()
}

/// An editor lints its unsaved buffer: `-` reads stdin, `--stdin-filename` names it for the
/// output and for finding its configuration (the file need not exist).
#[test]
fn stdin_is_linted_under_the_name_given_with_that_paths_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("quiet")).unwrap();
    std::fs::write(
        d.join("quiet/timeoutlint.toml"),
        "ignore = [\"blocking-sleep-in-async\"]\n",
    )
    .unwrap();
    let o = run_stdin(d, &["-", "--format", "concise"], BUGGY);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).starts_with("<stdin>:4:9: blocking-sleep-in-async: "),
        "{}",
        stdout(&o)
    );
    let o = run_stdin(
        d,
        &["-", "--stdin-filename", "src/new.rs", "--format", "concise"],
        BUGGY,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).starts_with("src/new.rs:4:9: blocking-sleep-in-async: "));
    assert!(!d.join("src/new.rs").exists());
    // The configuration beside the named path applies to the buffer.
    let o = run_stdin(d, &["-", "--stdin-filename", "quiet/new.rs"], BUGGY);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // `-` alone, not with paths; `--stdin-filename` only with `-`.
    assert_eq!(run_stdin(d, &["-", "."], BUGGY).status.code(), Some(2));
    let o = run_stdin(d, &["--stdin-filename", "a.rs"], BUGGY);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("pass `-`"));
}

/// `--fix` on stdin prints the fixed text and writes nothing (ruff's behaviour); what is left
/// is reported on stderr, and the exit code says whether anything is left.
#[test]
fn fix_on_stdin_prints_the_fixed_text() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("lib.rs"), BUGGY).unwrap();
    let o = run_stdin(
        d,
        &[
            "-",
            "--stdin-filename",
            "lib.rs",
            "--fix",
            "--unsafe-fixes",
            "--format",
            "concise",
        ],
        BUGGY,
    );
    let fixed = stdout(&o);
    assert!(
        fixed.contains("tokio::time::sleep(std::time::Duration::from_secs(1)).await;"),
        "{fixed}"
    );
    assert_eq!(
        fixed.replace(
            "tokio::time::sleep(std::time::Duration::from_secs(1)).await",
            "std::thread::sleep(std::time::Duration::from_secs(1))"
        ),
        BUGGY
    );
    assert_eq!(std::fs::read_to_string(d.join("lib.rs")).unwrap(), BUGGY);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Nothing to fix: the text comes back as it was.
    let o = run_stdin(d, &["-", "--fix"], "fn main() {}\n");
    assert_eq!(stdout(&o), "fn main() {}\n");
    assert_eq!(o.status.code(), Some(0));
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A pre-commit hook names the staged files only: each file named alone (or a few of them, or
/// a directory below the crate root) gets exactly the findings a run over the whole crate
/// gives it, the crate's other files read for the cross-file rules and not reported.
#[test]
fn a_subset_of_a_crates_files_gets_its_findings_of_the_whole_crate_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("Cargo.toml"),
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/client-timeout-in-retry"),
        &d.join("src"),
    );
    let whole = stdout(&run(d, &["--format", "concise"]));
    let of = |files: &[&str]| -> String {
        whole
            .lines()
            .filter(|l| files.iter().any(|f| l.starts_with(&format!("{f}:"))))
            .flat_map(|l| [l, "\n"])
            .collect()
    };
    let subsets: [&[&str]; 4] = [
        &["src/clients.rs"],
        &["src/net/mod.rs"],
        &["src/same_function.rs", "src/struct_field.rs"],
        &["src/callers.rs"],
    ];
    for files in subsets {
        let mut args = vec!["--format", "concise"];
        args.extend(files);
        assert_eq!(stdout(&run(d, &args)), of(files), "{files:?}");
    }
    // A directory below the crate root is a subset too.
    let net = stdout(&run(d, &["--format", "concise", "src/net"]));
    assert_eq!(net, of(&["src/net/mod.rs", "src/net/retry.rs"]));
    assert!(!net.is_empty());
    // Only the named files count as checked.
    let o = run(d, &["src/clients.rs"]);
    assert!(stdout(&o).contains("in 1 file checked"), "{}", stdout(&o));
}

/// Every `.rs` file under `d`, relative and `/`-separated, sorted.
fn rs_files(d: &Path, under: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(d.join(under)).unwrap() {
        let e = e.unwrap();
        let rel = under.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            rs_files(d, &rel, out);
        } else if rel.extension().is_some_and(|x| x == "rs") {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    out.sort();
}

/// Each `.rs` file of the tree at `d` named alone gives exactly its lines of a run over the
/// whole tree; and the cross-file rules found something there (else the check proves nothing).
fn each_file_alone_gets_its_lines_of_the_whole_run(d: &Path) {
    let whole = stdout(&run(d, &["--format", "concise"]));
    assert!(whole.contains("client-timeout-in-retry"), "{whole}");
    let mut files = Vec::new();
    rs_files(d, Path::new(""), &mut files);
    let mut differ = Vec::new();
    for f in &files {
        let want: String = whole
            .lines()
            .filter(|l| l.starts_with(&format!("{f}:")))
            .flat_map(|l| [l, "\n"])
            .collect();
        let got = stdout(&run(d, &["--format", "concise", f]));
        if got != want {
            differ.push(format!("{f}:\n  alone:\n{got}  whole:\n{want}"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// The crate-level fixture as a module tree with no `Cargo.toml` anywhere: `src/lib.rs` roots
/// it, and a binary elsewhere reaches a shared client by `#[path]` upwards, so a file's unit
/// is found above it (a parent declares it, its root is above) and beside it (a `#[path]` out
/// of its directory). Each file staged alone gets what the whole tree's run gives it.
#[test]
fn a_file_of_a_module_tree_without_a_manifest_gets_its_findings_of_the_whole_tree_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/client-timeout-in-retry"),
        &d.join("src"),
    );
    std::fs::write(
        d.join("src/lib.rs"),
        "mod callers;\nmod clients;\nmod net;\nmod same_function;\nmod struct_field;\nmod transport;\n",
    )
    .unwrap();
    std::fs::create_dir_all(d.join("tools/fetch")).unwrap();
    std::fs::create_dir_all(d.join("common")).unwrap();
    std::fs::write(
        d.join("tools/fetch/main.rs"),
        "#[path = \"../../common/net.rs\"]\nmod net;\nmod retry;\n\nfn main() {}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("common/net.rs"),
        "use std::time::Duration;\n\npub fn http() -> reqwest::Client {\n    reqwest::Client::builder()\n        .timeout(Duration::from_secs(8))\n        .build()\n        .unwrap()\n}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("tools/fetch/retry.rs"),
        "use crate::net::http;\n\npub async fn fetch(url: &str) -> Result<String, Error> {\n    for attempt in 0..3 {\n        match http().get(url).send().await {\n            Ok(r) => return Ok(r.text().await?),\n            Err(e) => tracing::warn!(\"attempt {attempt}: {e}\"),\n        }\n    }\n    Err(Error::GaveUp)\n}\n",
    )
    .unwrap();
    let whole = stdout(&run(d, &["--format", "concise"]));
    assert!(whole.contains("common/net.rs:5:"), "{whole}");
    each_file_alone_gets_its_lines_of_the_whole_run(d);
}

/// The crate-level fixture as one Bazel target, and as one Buck target, with no `Cargo.toml`
/// and no root file: the target's `srcs` make the unit, so each file staged alone gets what the
/// whole package's run gives it.
#[test]
fn a_file_of_a_bazel_or_buck_target_gets_its_findings_of_the_whole_target_run() {
    for (build, text) in [
        ("BUILD.bazel", "load(\"@rules_rust//rust:defs.bzl\", \"rust_library\")\n\nrust_library(\n    name = \"net\",\n    srcs = glob([\"src/**/*.rs\"]),\n    crate_root = \"src/clients.rs\",\n)\n"),
        ("TARGETS", "rust_library(\n    name = \"net\",\n    srcs = glob([\"src/**/*.rs\"]),\n)\n"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/client-timeout-in-retry"),
            &d.join("src"),
        );
        std::fs::write(d.join(build), text).unwrap();
        each_file_alone_gets_its_lines_of_the_whole_run(d);
    }
}

/// `--force-exclude` applies the configuration's `exclude` to named files and directories
/// (ruff's flag, which its pre-commit hook passes); without it a named file is linted.
#[test]
fn force_exclude_applies_the_exclusions_to_named_paths() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("src/gen")).unwrap();
    std::fs::write(
        d.join("timeoutlint.toml"),
        "exclude = [\"src/gen/**\", \"*.pb.rs\"]\n",
    )
    .unwrap();
    std::fs::write(d.join("src/gen/a.rs"), BUGGY).unwrap();
    std::fs::write(d.join("src/b.pb.rs"), BUGGY).unwrap();
    std::fs::write(d.join("src/c.rs"), BUGGY).unwrap();
    let named = [
        "src/gen/a.rs",
        "src/b.pb.rs",
        "src/c.rs",
        "--format",
        "concise",
    ];
    let o = run(d, &named);
    assert_eq!(stdout(&o).lines().count(), 3, "{}", stdout(&o));
    let mut forced = named.to_vec();
    forced.push("--force-exclude");
    let o = run(d, &forced);
    assert_eq!(
        stdout(&o),
        "src/c.rs:4:9: blocking-sleep-in-async: `std::thread::sleep` blocks the async executor thread\n"
    );
    assert_eq!(
        run(d, &["src/gen", "--force-exclude"]).status.code(),
        Some(0)
    );
    // A buffer named into an excluded path is not linted; under --fix it comes back as is.
    let o = run_stdin(
        d,
        &[
            "-",
            "--stdin-filename",
            "src/gen/new.rs",
            "--force-exclude",
            "--fix",
        ],
        BUGGY,
    );
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), BUGGY));
    let o = run_stdin(d, &["-", "--stdin-filename", "src/gen/new.rs"], BUGGY);
    assert_eq!(o.status.code(), Some(1));
}

/// clippy's and ruff's habits: `check` before the paths, `explain NAME`, `--quiet`, the rule
/// table as JSON, the fixable hint, cargo's other `--message-format` spellings, a run that
/// finds nothing to lint, and the formats listed for a bad `--output`.
#[test]
fn habits_from_clippy_and_ruff() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bug.rs"), BUGGY).unwrap();
    let stderr = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
    // `check` is the default command; `check rules` lints the directory `rules`.
    let plain = run(d, &["--format", "concise", "."]);
    let check = run(d, &["check", "--format", "concise", "."]);
    assert_eq!(
        (check.status.code(), stdout(&check)),
        (Some(1), stdout(&plain))
    );
    std::fs::create_dir(d.join("rules")).unwrap();
    std::fs::write(d.join("rules/r.rs"), BUGGY).unwrap();
    let o = run(d, &["check", "rules", "--format", "concise"]);
    assert!(stdout(&o).starts_with("rules/r.rs:4:9:"), "{}", stdout(&o));
    // `explain` is `rule`, with the same did-you-mean.
    let o = run(d, &["explain", "unbounded-retry"]);
    assert!(stdout(&o).starts_with("# unbounded-retry"));
    let o = run(d, &["explain", "unbounded-retyr"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("did you mean `unbounded-retry`"));
    // The human summary counts what `--fix` and `--unsafe-fixes` would fix.
    let o = run(d, &["bug.rs"]);
    assert!(
        stdout(&o).ends_with(
            "1 finding in 1 file checked\n1 fixable with `--fix --unsafe-fixes` (review them)\n"
        ),
        "{}",
        stdout(&o)
    );
    // `--quiet`: the findings only.
    let o = run(d, &["-q", "bug.rs"]);
    assert!(stdout(&o).starts_with("warning[blocking-sleep-in-async]"));
    assert!(!stdout(&o).contains("checked") && !stdout(&o).contains("fixable"));
    // The rule table as JSON.
    let o = run(d, &["rules", "--format", "json"]);
    let rules: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rules = rules.as_array().unwrap();
    assert_eq!(rules.len(), timeoutlint::rules::ALL.len());
    assert_eq!(rules[0]["name"], "unbounded-retry");
    assert!(rules[0]["default"].is_boolean() && rules[0]["url"].is_string());
    // cargo's spellings: `short` is concise, the JSON ones change only `rendered`.
    let o = run(d, &["bug.rs", "--message-format", "short"]);
    assert_eq!(
        stdout(&o),
        stdout(&run(d, &["bug.rs", "--format", "concise"]))
    );
    let rendered = |fmt: &str| -> String {
        let o = run(d, &["bug.rs", "--message-format", fmt]);
        let line: serde_json::Value =
            serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
        // Outside a cargo package the diagnostic comes bare, without cargo's envelope.
        line["rendered"].as_str().unwrap().to_string()
    };
    assert!(rendered("json").contains(" --> bug.rs:4:9\n"));
    assert_eq!(
        rendered("json-diagnostic-short"),
        "bug.rs:4:9: warning[blocking-sleep-in-async]: `std::thread::sleep` blocks the async executor thread\n"
    );
    let ansi = rendered("json,json-diagnostic-rendered-ansi");
    assert!(
        ansi.contains("\u{1b}[") && ansi.contains("bug.rs:4:9"),
        "{ansi}"
    );
    let o = run(
        d,
        &["bug.rs", "--message-format", "json-render-diagnostics"],
    );
    assert!(stdout(&o).starts_with("warning[blocking-sleep-in-async]"));
    // Nothing to lint is said, and is not a failure.
    std::fs::create_dir(d.join("empty")).unwrap();
    let o = run(d, &["empty"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("no Rust files found"), "{}", stderr(&o));
    assert!(!stderr(&run(d, &["-q", "empty"])).contains("no Rust files"));
    // A bad `--output` lists the formats.
    let o = run(d, &["--output", "bogus=x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown format `bogus`; the formats are human, concise, json"),
        "{}",
        stderr(&o)
    );
}

/// A file the prefilter leaves unparsed is not counted as checked: it may not even parse.
#[test]
fn files_skipped_by_the_prefilter_are_not_counted_as_checked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bug.rs"), BUGGY).unwrap();
    // Nothing here is what a rule looks for, and it does not parse.
    std::fs::write(d.join("broken.rs"), "fn f( {\n").unwrap();
    let o = run(d, &["--isolated"]);
    assert!(
        stdout(&o).contains("1 finding in 1 file checked, 1 more skipped unparsed"),
        "{}",
        stdout(&o)
    );
    let o = run(d, &["--isolated", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["summary"]["files_checked"], 1);
    assert_eq!(doc["summary"]["files_skipped"], 1);
}

/// The `tokio::time::sleep` fix follows the crate's manifest: `MachineApplicable` (and applied
/// by `--fix`) only when the crate's tokio has `time` (or `full`); without it the fix says so,
/// is `MaybeIncorrect`, and `--fix` leaves the file alone.
#[test]
fn the_tokio_sleep_fix_follows_the_crates_tokio_features() {
    const ASYNC: &str = "async fn f() {\n    tokio::task::yield_now().await;\n    std::thread::sleep(std::time::Duration::from_secs(1));\n}\n";
    let fix_of = |features: &str| -> (serde_json::Value, String) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(
            d.join("Cargo.toml"),
            format!("[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[dependencies]\ntokio = {{ version = \"1\", features = [{features}] }}\n"),
        )
        .unwrap();
        std::fs::create_dir(d.join("src")).unwrap();
        std::fs::write(d.join("src/lib.rs"), ASYNC).unwrap();
        let o = run(d, &["--format", "json"]);
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let fix = doc["diagnostics"][0]["fix"].clone();
        run(d, &["--fix", "--allow-dirty"]);
        (fix, std::fs::read_to_string(d.join("src/lib.rs")).unwrap())
    };
    for features in ["\"rt\", \"time\"", "\"full\""] {
        let (fix, after) = fix_of(features);
        assert_eq!(fix["applicability"], "MachineApplicable", "{features}");
        assert!(after.contains("tokio::time::sleep(std::time::Duration::from_secs(1)).await"));
    }
    // opendal's tokio: `sync` and `io-util` only.
    let (fix, after) = fix_of("\"sync\", \"io-util\"");
    assert_eq!(fix["applicability"], "MaybeIncorrect");
    assert!(
        fix["title"].as_str().unwrap().contains("no `time` feature"),
        "{fix}"
    );
    assert_eq!(after, ASYNC, "--fix must not apply it");
}

#[test]
fn show_files_lists_what_a_run_would_lint_and_lints_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("src/gen")).unwrap();
    std::fs::write(d.join("timeoutlint.toml"), "exclude = [\"src/gen/**\"]\n").unwrap();
    std::fs::write(d.join("src/gen/a.rs"), BUGGY).unwrap();
    std::fs::write(d.join("src/c.rs"), BUGGY).unwrap();
    std::fs::write(d.join("src/b.rs"), "fn main() {}\n").unwrap();
    std::fs::write(d.join("src/notes.txt"), BUGGY).unwrap();
    let o = run(d, &["src", "--show-files"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    // Sorted as the walk yields them; the finding in c.rs is not reported.
    assert_eq!(stdout(&o), "src/b.rs\nsrc/c.rs\n");
    let o = run(d, &["src/gen/a.rs", "--show-files", "--force-exclude"]);
    assert_eq!(stdout(&o), "");
    let o = run(d, &["src/gen/a.rs", "--show-files"]);
    assert_eq!(stdout(&o), "src/gen/a.rs\n");
}

/// A child process killed when the test ends, passed or not.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `--watch` lints, then lints again after a change, with a header line before each re-lint;
/// its own reads of the files are no change (it would re-lint forever).
#[test]
fn watch_relints_after_a_change() {
    use std::io::BufRead;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.rs"), BUGGY).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(["--watch", "--format", "concise", "."])
        .current_dir(d)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let _child = Killed(child);
    let seen = Arc::new(Mutex::new(String::new()));
    std::thread::spawn({
        let seen = Arc::clone(&seen);
        move || {
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let mut s = seen.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        }
    });
    // Generous: a loaded CI machine may take seconds to start the binary and lint.
    let wait_for = |what: &str| {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30) {
            if seen.lock().unwrap().contains(what) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("no `{what}` in 30 s:\n{}", seen.lock().unwrap());
    };
    wait_for("a.rs:4:9: blocking-sleep-in-async");
    assert!(!seen.lock().unwrap().contains("re-linting"));
    std::fs::write(d.join("b.rs"), BUGGY).unwrap();
    wait_for("b.rs:4:9: blocking-sleep-in-async");
    let text = seen.lock().unwrap().clone();
    let (_, second) = text.split_once("re-linting after").unwrap();
    assert!(
        second.contains("a.rs:4:9"),
        "the whole report again:\n{text}"
    );
    // Settled: no re-lint without a change. One second of quiet would show a loop (each run
    // takes milliseconds here) with no bet on how fast the machine is.
    std::thread::sleep(Duration::from_secs(1));
    let text = seen.lock().unwrap().clone();
    let headers = text.matches("re-linting after").count();
    assert!(headers <= 2, "re-linted without changes:\n{text}");
}

/// `--watch` with what writes files or reads stdin is a usage error.
#[test]
fn watch_refuses_fix_diff_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["--watch", "--fix"][..],
        &["--watch", "--diff"],
        &["--watch", "--show-files"],
        &["--watch", "-"],
    ] {
        let o = run(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--watch"), "{args:?}: {err}");
    }
}

/// `--color auto` follows the variables cargo and clap follow: `CLICOLOR_FORCE` colours a
/// pipe (CI logs that render ANSI), `NO_COLOR` wins over it, and a pipe alone is plain.
#[test]
fn color_auto_follows_clicolor_and_no_color() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bug.rs"), BUGGY).unwrap();
    let with = |vars: &[(&str, &str)]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_timeoutlint"));
        c.current_dir(dir.path());
        for v in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "CI"] {
            c.env_remove(v);
        }
        c.envs(vars.iter().copied());
        stdout(&c.output().unwrap()).contains('\u{1b}')
    };
    assert!(!with(&[]), "a pipe gets no colour");
    assert!(
        with(&[("CLICOLOR_FORCE", "1")]),
        "CLICOLOR_FORCE colours a pipe"
    );
    assert!(
        !with(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]),
        "NO_COLOR wins over CLICOLOR_FORCE"
    );
    assert!(
        !with(&[("CLICOLOR_FORCE", "")]),
        "an empty CLICOLOR_FORCE forces nothing"
    );
}
