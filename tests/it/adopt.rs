//! Adopting the linter on an existing codebase, end to end through the binaries: configuration
//! files and their precedence, suppression comments, the baseline, `--add-ignore` and
//! `cargo timeoutlint` on a workspace.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{lint_rule, lint_text};
use timeoutlint::rules;

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .output()
        .unwrap()
}

fn cargo_timeoutlint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-timeoutlint"))
        .arg("timeoutlint")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Exit code, stdout and stderr in one string, for compact assertions and snapshots.
fn show(o: &Output) -> String {
    format!(
        "exit {}\n{}{}",
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Fires `blocking-sleep-in-async` on line 4 and nothing else.
const SLEEPY: &str = "async fn f() {\n    for _attempt in 0..3 {\n        if g().await.is_ok() { return; }\n        std::thread::sleep(std::time::Duration::from_secs(1));\n    }\n}\n";

/// Fires `unbounded-retry` on line 3 (the `loop`).
const FOREVER: &str = "async fn connect() {\n    let mut backoff = 1;\n    loop {\n        match open().await {\n            Ok(c) => return c,\n            Err(e) => { warn!(\"retrying: {e}\"); tokio::time::sleep(d(backoff)).await; backoff *= 2; }\n        }\n    }\n}\n";

#[test]
fn config_files_nearest_wins_and_the_command_line_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "src/a.rs", SLEEPY);
    write(d, "sub/b.rs", SLEEPY);
    let concise = ["--format", "concise"];
    assert_eq!(
        run(d, &concise).status.code(),
        Some(1),
        "no config: findings"
    );

    // The workspace's Cargo.toml metadata table counts when nothing nearer exists.
    write(
        d,
        "Cargo.toml",
        "[workspace]\n[workspace.metadata.timeoutlint]\nignore = [\"blocking-sleep-in-async\"]\n",
    );
    assert_eq!(show(&run(d, &concise)), "exit 0\n");
    // A timeoutlint.toml beats the Cargo.toml of the same directory.
    write(d, "timeoutlint.toml", "select = [\"unbounded-retry\"]\n");
    assert_eq!(show(&run(d, &concise)), "exit 0\n");
    // The nearest file wins: sub/ has its own, which turns the rule back on and makes it an error.
    write(
        d,
        "sub/.timeoutlint.toml",
        "[rules]\nblocking-sleep-in-async = \"error\"\n",
    );
    let o = run(&d.join("sub"), &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(show(&o).contains("\"severity\": \"error\""), "{}", show(&o));
    // --isolated ignores every file; --config names one.
    assert_eq!(
        run(d, &["--isolated", "--format", "concise"]).status.code(),
        Some(1)
    );
    std::fs::write(d.join("other.toml"), "ignore = [\"all\"]\n").unwrap();
    assert_eq!(
        show(&run(
            &d.join("sub"),
            &["--config", "../other.toml", "--format", "concise"]
        )),
        "exit 0\n"
    );
    // The command line's --select replaces the file's selection; its --ignore removes.
    let o = run(
        d,
        &["--select", "blocking-sleep-in-async", "--format", "concise"],
    );
    assert_eq!(o.status.code(), Some(1));
    let o = run(
        &d.join("sub"),
        &["--ignore", "blocking-sleep-in-async", "--format", "concise"],
    );
    assert_eq!(show(&o), "exit 0\n");
    // per-file-ignores are relative to the config file's directory.
    write(
        d,
        "timeoutlint.toml",
        "[per-file-ignores]\n\"src/**\" = [\"blocking-sleep-in-async\"]\n",
    );
    assert_eq!(
        show(&run(d, &concise)),
        "exit 1\nsub/b.rs:4:9: blocking-sleep-in-async: `std::thread::sleep` blocks the async executor thread\n"
    );
    // An `exclude` glob with a slash is anchored at the config file's directory, whichever
    // directory is linted.
    std::fs::remove_file(d.join("sub/.timeoutlint.toml")).unwrap();
    write(d, "timeoutlint.toml", "exclude = [\"sub/b.rs\"]\n");
    assert_eq!(
        show(&run(d, &["sub", "--format", "concise"])),
        "exit 0\nwarning: no Rust files found under the given paths\n"
    );
    assert_eq!(
        show(&run(d, &concise)),
        "exit 1\nsrc/a.rs:4:9: blocking-sleep-in-async: `std::thread::sleep` blocks the async executor thread\n"
    );
}

#[test]
fn config_errors_say_where_and_suggest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "a.rs", SLEEPY);
    let mut out = String::new();
    for config in [
        "exlude = [\"vendor\"]\n",
        "[rules]\nunbounded-retyr = \"error\"\n",
        "[rules]\nunbounded-retry = \"warn\"\n",
        "[apis.sleeps]\nasink = [\"acme::pause\"]\n",
        "select = \"all\"\n",
    ] {
        write(d, "timeoutlint.toml", config);
        let o = run(d, &[]);
        out.push_str(&show(&o).replace(&d.display().to_string(), "[DIR]"));
    }
    insta::assert_snapshot!(out, @r#"
exit 2
error: [DIR]/timeoutlint.toml:1:1: unknown key `exlude` (did you mean `exclude`?); known keys: select, extend-select, ignore, exclude, per-file-ignores, lint-tests, rules, apis
exit 2
error: [DIR]/timeoutlint.toml:2:1: unknown rule `unbounded-retyr` in `rules.unbounded-retyr` (did you mean `unbounded-retry`?); `timeoutlint rules` lists them
exit 2
error: [DIR]/timeoutlint.toml:2:19: unknown level `warn` in `rules.unbounded-retry` (did you mean `warning`?); use one of error, warning, note, off
exit 2
error: [DIR]/timeoutlint.toml:2:1: `apis.sleeps`: unknown field `asink`, expected `async` or `blocking` (did you mean `async`?)
exit 2
error: [DIR]/timeoutlint.toml:1:10: `select` must be an array of strings
"#);
}

#[test]
fn config_subcommand_shows_each_value_and_its_origin() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "timeoutlint.toml",
        "extend-select = [\"pedantic\"]\nexclude = [\"vendor\"]\n[rules]\nunbounded-retry = \"error\"\n[per-file-ignores]\n\"tests/**\" = [\"unbounded-retry\"]\n[apis.retry]\ncalls = [{ path = \"acme::with_retries\", strategy = 0 }]\n",
    );
    let o = run(d, &["config", "--ignore", "blocking-sleep-in-async"]);
    // Rules left at their default level are dropped, so adding a rule does not touch this test.
    let shown: String = show(&o)
        .replace(&d.display().to_string(), "[DIR]")
        .lines()
        .filter(|l| !(l.starts_with("rules.") && l.ends_with("# default")))
        .fold(String::new(), |acc, l| acc + l + "\n");
    insta::assert_snapshot!(shown, @r#"
exit 0
# configuration file: [DIR]/timeoutlint.toml
select = ["default"]                                                   # default
extend-select = ["pedantic"]                                           # [DIR]/timeoutlint.toml
ignore = ["blocking-sleep-in-async"]                                   # command line (--ignore)
exclude = ["vendor"]                                                   # [DIR]/timeoutlint.toml
rules.unbounded-retry = "error"                                        # [DIR]/timeoutlint.toml
rules.blocking-sleep-in-async = "off"                                  # command line (--select/--ignore)
rules.backoff-without-jitter = "warning"                               # [DIR]/timeoutlint.toml
rules.suppression-without-reason = "warning"                           # [DIR]/timeoutlint.toml
per-file-ignores."tests/**" = ["unbounded-retry"]                      # [DIR]/timeoutlint.toml
apis.retry.calls += [{ path = "acme::with_retries", strategy = 0 }]    # [DIR]/timeoutlint.toml
"#);
}

#[test]
fn suppression_forms_silence_their_findings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let concise = ["--format", "concise"];
    let sleep_line = "        std::thread::sleep(std::time::Duration::from_secs(1));\n";
    let with = |before: &str, trailing: &str| {
        SLEEPY.replace(
            sleep_line,
            &format!(
                "{before}        std::thread::sleep(std::time::Duration::from_secs(1));{trailing}\n"
            ),
        )
    };
    let cases = [
        with(
            "        // timeoutlint: ignore[blocking-sleep-in-async] single-threaded runtime\n",
            "",
        ),
        with(
            "",
            " // timeoutlint: ignore[blocking-sleep-in-async] single-threaded runtime",
        ),
        format!("// timeoutlint: disable[blocking-sleep-in-async] legacy module\n{SLEEPY}// timeoutlint: enable[blocking-sleep-in-async]\n"),
        format!("//! timeoutlint: ignore-file[blocking-sleep-in-async] generated\n{SLEEPY}"),
    ];
    for (i, text) in cases.iter().enumerate() {
        write(d, "a.rs", text);
        assert_eq!(show(&run(d, &concise)), "exit 0\n", "case {i}:\n{text}");
    }
    // Suppressed findings are omitted from SARIF (GitHub shows SARIF `suppressions` as open).
    let sarif = show(&run(d, &["--format", "sarif"]));
    assert!(sarif.contains("\"results\": []"), "{sarif}");
    // After `enable`, the rule reports again.
    write(
        d,
        "a.rs",
        &format!("// timeoutlint: disable[blocking-sleep-in-async] legacy\n// timeoutlint: enable\n{SLEEPY}"),
    );
    assert_eq!(run(d, &concise).status.code(), Some(1));
    // This rule's findings can themselves be silenced for a file.
    write(
        d,
        "a.rs",
        "//! timeoutlint: ignore-file[unused-suppression] cleaning up in #123\n// timeoutlint: ignore[unbounded-retry] stale\nfn a() {}\n",
    );
    assert_eq!(show(&run(d, &concise)), "exit 0\n");
    // A suppression on the wrong line silences nothing and is reported as unused.
    write(
        d,
        "a.rs",
        &format!("// timeoutlint: ignore[blocking-sleep-in-async] wrong line\n{SLEEPY}"),
    );
    insta::assert_snapshot!(show(&run(d, &concise)), @r#"
exit 1
a.rs:1:1: unused-suppression: unused suppression: `blocking-sleep-in-async` reported nothing on its line
a.rs:5:9: blocking-sleep-in-async: `std::thread::sleep` blocks the async executor thread
"#);
}

#[test]
fn a_reasonless_suppression_can_be_made_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "a.rs",
        &SLEEPY.replace(
            "        std::thread::sleep",
            "        // timeoutlint: ignore[blocking-sleep-in-async]\n        std::thread::sleep",
        ),
    );
    assert_eq!(show(&run(d, &["--format", "concise"])), "exit 0\n");
    write(
        d,
        "timeoutlint.toml",
        "[rules]\nsuppression-without-reason = \"error\"\n",
    );
    let o = run(d, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let s = show(&o);
    assert!(
        s.contains("\"rule\": \"suppression-without-reason\""),
        "{s}"
    );
    assert!(s.contains("\"severity\": \"error\""), "{s}");
}

#[test]
fn unused_suppression_fixes_parse_and_leave_no_unused_suppression() {
    let rule = rules::by_name("unused-suppression").unwrap();
    let text =
        std::fs::read_to_string(crate::support::root().join("fixtures/unused-suppression.rs"))
            .unwrap();
    let (_, diags) = lint_rule("f.rs", &text, rule);
    let mut edits: Vec<_> = diags
        .iter()
        .filter_map(|d| d.fix.as_ref())
        .flat_map(|f| f.edits.clone())
        .collect();
    assert_eq!(
        edits.len(),
        4,
        "every finding but the unknown verb has a fix"
    );
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    let mut fixed = text.clone();
    for e in edits {
        fixed.replace_range(e.span.start..e.span.end, &e.replacement);
    }
    assert!(syn::parse_file(&fixed).is_ok());
    let (_, after) = lint_rule("f.rs", &fixed, rule);
    let left: Vec<&str> = after.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        left,
        ["unrecognised suppression `ignroe` (did you mean `ignore`?)"]
    );
    assert!(fixed.contains("// timeoutlint: ignore[blocking-sleep-in-async] legacy poller"));
    assert!(!fixed.contains("was async once"));
    // The used suppressions kept silencing: the only sleep reported is the misspelt one's.
    let (src, all) = lint_text("f.rs", &fixed, &[]);
    let sleeps: Vec<&str> = all
        .iter()
        .filter(|d| d.rule.name == "blocking-sleep-in-async")
        .map(|d| src.slice(src.line_span(src.line_index(d.primary.start))))
        .collect();
    assert_eq!(sleeps.len(), 1, "{sleeps:?}");
}

#[test]
fn add_ignore_silences_every_current_finding() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "a.rs", SLEEPY);
    write(d, "b.rs", FOREVER);
    assert_eq!(run(d, &[]).status.code(), Some(1));
    let o = run(d, &["--add-ignore"]);
    assert_eq!(
        show(&o),
        "exit 0\ntimeoutlint: added suppressions for 2 finding(s) in 2 file(s)\n"
    );
    assert_eq!(show(&run(d, &["--format", "concise"])), "exit 0\n");
    assert_eq!(
        show(&run(d, &["--add-ignore"])),
        "exit 0\ntimeoutlint: added suppressions for 0 finding(s) in 0 file(s)\n",
        "idempotent"
    );
    // A stale suppression is a finding on a comment line: fixed, never suppressed.
    write(
        d,
        "c.rs",
        "// timeoutlint: ignore[unbounded-retry] stale\nfn c() {}\n",
    );
    assert_eq!(
        show(&run(d, &["--add-ignore"])),
        "exit 0\ntimeoutlint: added suppressions for 0 finding(s) in 0 file(s)\ntimeoutlint: 1 finding(s) on comment lines or in files that would not parse were left alone\n"
    );
    let b = std::fs::read_to_string(d.join("b.rs")).unwrap();
    assert!(b.contains("    // timeoutlint: ignore[unbounded-retry] accepted when adopting timeoutlint (added by --add-ignore)\n    loop {"), "{b}");
}

#[test]
fn adoption_path_with_a_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "src/net.rs", FOREVER);
    // Day 0: record today's findings; the baselined run is clean.
    let o = run(d, &["baseline", "create"]);
    assert_eq!(
        show(&o),
        "exit 0\ntimeoutlint: recorded 1 finding in timeoutlint-baseline.json\n"
    );
    let baseline = [
        "--baseline",
        "timeoutlint-baseline.json",
        "--format",
        "concise",
    ];
    assert_eq!(
        show(&run(d, &baseline)),
        "exit 0\ntimeoutlint: 1 finding(s) hidden by the baseline\n"
    );
    // An unrelated edit above the finding moves it down; the entry still matches.
    write(
        d,
        "src/net.rs",
        &format!(
            "use std::time::Duration;\n\n/// Connects.\n{}",
            FOREVER.replace(
                "let mut backoff = 1;",
                "let mut  backoff = 1; // start small"
            )
        ),
    );
    assert_eq!(run(d, &baseline).status.code(), Some(0));
    // A new finding fails the run, and only it is reported.
    write(d, "src/worker.rs", SLEEPY);
    assert_eq!(
        show(&run(d, &baseline)),
        "exit 1\nsrc/worker.rs:4:9: blocking-sleep-in-async: `std::thread::sleep` blocks the async executor thread\ntimeoutlint: 1 finding(s) hidden by the baseline\n"
    );
    std::fs::remove_file(d.join("src/worker.rs")).unwrap();
    // The old finding is fixed: its entry is stale, reported, and fails only when strict.
    write(d, "src/net.rs", "async fn connect() { open().await }\n");
    let o = run(d, &baseline);
    assert_eq!(
        show(&o),
        "exit 0\ntimeoutlint: stale baseline entry: unbounded-retry src/net.rs in `connect` (1x) no longer found; run `timeoutlint baseline prune`\n"
    );
    let strict = run(
        d,
        &[
            "--baseline",
            "timeoutlint-baseline.json",
            "--strict-baseline",
        ],
    );
    assert_eq!(strict.status.code(), Some(1));
    // Linting another directory does not call entries of unlinted files stale.
    write(d, "other/x.rs", "fn x() {}\n");
    let o = run(
        d,
        &[
            "other",
            "--baseline",
            "timeoutlint-baseline.json",
            "--strict-baseline",
            "--format",
            "concise",
        ],
    );
    assert_eq!(show(&o), "exit 0\n");
    // Prune drops the entry; strict passes again.
    let o = run(d, &["baseline", "prune"]);
    assert_eq!(
        show(&o),
        "exit 0\ntimeoutlint: pruned 1 stale entry from timeoutlint-baseline.json\n"
    );
    assert_eq!(
        run(
            d,
            &[
                "--baseline",
                "timeoutlint-baseline.json",
                "--strict-baseline"
            ]
        )
        .status
        .code(),
        Some(0)
    );
}

#[test]
fn cargo_subcommand_lints_a_workspace_with_in_house_knowledge() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "Cargo.toml",
        concat!(
            "[workspace]\nmembers = [\"crates/billing\", \"crates/orders\", \"crates/poller\"]\nresolver = \"2\"\n\n",
            "[workspace.metadata.timeoutlint]\n",
            "# The in-house retry helper, sleep and shutdown type, in the rules/apis.toml schema.\n",
            "[workspace.metadata.timeoutlint.apis.retry]\n",
            "calls = [{ path = \"acme_retry::with_backoff\", strategy = 0 }]\n",
            "[workspace.metadata.timeoutlint.apis.sleeps]\n",
            "async = [\"acme_rt::pause\"]\n",
            "[workspace.metadata.timeoutlint.apis.cancellation]\n",
            "types = [\"Halt\"]\n",
            "# The in-house HTTP client wrapper: its builder's `.timeout(..)` bounds each request.\n",
            "[workspace.metadata.timeoutlint.apis.clients]\n",
            "builders = [\"acme_http::HttpClient::builder\"]\n",
        ),
    );
    // The in-house client retried through the in-house helper: both are known only from the
    // configuration, and the finding needs both.
    write(
        d,
        "crates/billing/src/lib.rs",
        "use acme_http::HttpClient;\nuse acme_retry::with_backoff;\nuse std::time::Duration;\n\npub async fn charge() -> Result<(), Error> {\n    let client = HttpClient::builder().timeout(Duration::from_secs(30)).build()?;\n    with_backoff(FixedInterval::from_millis(500).take(5), || client.get(\"/charge\").send()).await\n}\n",
    );
    for name in ["billing", "orders", "poller"] {
        write(
            d,
            &format!("crates/{name}/Cargo.toml"),
            &format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        );
    }
    write(
        d,
        "crates/orders/src/lib.rs",
        "use acme_retry::with_backoff;\n\npub async fn submit(client: &Client) -> Result<(), Error> {\n    with_backoff(FixedInterval::from_millis(500), || client.submit()).await\n}\n",
    );
    write(
        d,
        "crates/poller/src/lib.rs",
        "use acme_rt::{pause, Halt};\n\npub async fn poll(halt: Halt) {\n    let mut attempt = 0;\n    while attempt < 10 {\n        match fetch().await {\n            Ok(()) => break,\n            Err(_) => {\n                attempt += 1;\n                pause(std::time::Duration::from_secs(30)).await;\n            }\n        }\n    }\n}\n",
    );
    let o = cargo_timeoutlint(d, &["--workspace", "--format", "concise"]);
    insta::assert_snapshot!(show(&o), @r#"
exit 1
crates/billing/src/lib.rs:6:40: client-timeout-in-retry: `.timeout(..)` bounds each attempt: 30s per attempt x 6 attempts = 180s worst case, with no overall deadline
crates/orders/src/lib.rs:4:5: unbounded-retry: `acme_retry::with_backoff` retries with a strategy that has no attempt cap and no deadline
crates/poller/src/lib.rs:10:17: uncancellable-backoff: backoff sleep is not raced against `halt`
"#);
    // Without the configuration the in-house names mean nothing.
    let o = cargo_timeoutlint(d, &["--workspace", "--isolated", "--format", "concise"]);
    assert_eq!(show(&o), "exit 0\n");
    // -p selects one package; inside a package, that package is the default.
    let o = cargo_timeoutlint(d, &["-p", "poller", "--format", "concise"]);
    assert!(
        show(&o).starts_with("exit 1\ncrates/poller/src/lib.rs:10:17"),
        "{}",
        show(&o)
    );
    assert!(!show(&o).contains("orders"));
    let o = cargo_timeoutlint(&d.join("crates/orders"), &["--format", "concise"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!show(&o).contains("poller"), "{}", show(&o));
    let manifest = d.join("Cargo.toml").display().to_string();
    let elsewhere = tempfile::tempdir().unwrap();
    let o = cargo_timeoutlint(
        elsewhere.path(),
        &[
            "--manifest-path",
            &manifest,
            "-p",
            "orders",
            "--format",
            "concise",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        show(&o).contains("crates/orders/src/lib.rs:4:5: unbounded-retry"),
        "{}",
        show(&o)
    );
    let o = cargo_timeoutlint(d, &["-p", "poler"]);
    assert_eq!(
        show(&o),
        "exit 2\nerror: package `poler` is not a member of the workspace (did you mean `poller`?)\n"
    );
    // Subcommands get the packages' directories too.
    let o = cargo_timeoutlint(d, &["baseline", "create", "--workspace"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let o = cargo_timeoutlint(
        d,
        &["--workspace", "--baseline", "timeoutlint-baseline.json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    // Baseline paths are relative to the baseline file: it matches from a member's directory.
    let o = cargo_timeoutlint(
        &d.join("crates/orders"),
        &[
            "--baseline",
            "../../timeoutlint-baseline.json",
            "--strict-baseline",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let json = std::fs::read_to_string(d.join("timeoutlint-baseline.json")).unwrap();
    assert!(
        json.contains("\"path\": \"crates/orders/src/lib.rs\""),
        "{json}"
    );
}

#[test]
fn statistics_count_findings_per_rule() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "a.rs", SLEEPY);
    write(d, "b.rs", FOREVER);
    write(d, "c.rs", SLEEPY);
    let o = run(d, &["--format", "concise", "--statistics", "--exit-zero"]);
    let err = String::from_utf8_lossy(&o.stderr);
    insta::assert_snapshot!(err, @r#"
2  blocking-sleep-in-async
1  unbounded-retry
3  total in 3 files checked
"#);
    let o = run(d, &["--timings", "--exit-zero"]);
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("timings: configuration "));
}

/// A client with a timeout in `src/net.rs`, retried in `src/retry.rs`: a cross-file
/// `client-timeout-in-retry` finding on line 4 of `src/net.rs`, and nothing else.
const NET: &str = "use std::time::Duration;\npub fn http() -> reqwest::Client {\n    reqwest::Client::builder()\n        .timeout(Duration::from_secs(8))\n        .build()\n        .unwrap()\n}\n";
const RETRY: &str = "use crate::net::http;\npub async fn fetch(url: &str) -> Option<String> {\n    for attempt in 0..3 {\n        match http().get(url).send().await {\n            Ok(r) => return r.text().await.ok(),\n            Err(e) => eprintln!(\"attempt {attempt}: {e}\"),\n        }\n    }\n    None\n}\n";

/// Crate-level findings are made after the per-file pass, so they must still go through the
/// file's suppression comments and the configuration, and a comment that silences one is used.
#[test]
fn cross_file_findings_obey_suppressions_and_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "Cargo.toml",
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
    );
    write(d, "src/lib.rs", "pub mod net;\npub mod retry;\n");
    write(d, "src/retry.rs", RETRY);
    write(d, "src/net.rs", NET);
    let concise = ["--format", "concise", "--extend-select", "all"];
    let o = show(&run(d, &concise));
    assert!(o.starts_with("exit 1\n"), "{o}");
    assert!(o.contains("src/net.rs:4:"), "{o}");
    assert_eq!(o.matches("client-timeout-in-retry").count(), 1, "{o}");

    // A suppression comment on the line silences it, and counts as used.
    let silenced = NET.replace(
        ".timeout(Duration::from_secs(8))",
        ".timeout(Duration::from_secs(8)) // timeoutlint: ignore[client-timeout-in-retry] callers bound it",
    );
    write(d, "src/net.rs", &silenced);
    assert_eq!(show(&run(d, &concise)), "exit 0\n");

    // Configuration raises its level like any other finding's.
    write(d, "src/net.rs", NET);
    write(
        d,
        "timeoutlint.toml",
        "[rules]\nclient-timeout-in-retry = \"error\"\n",
    );
    let o = run(d, &["--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let levels: Vec<&str> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["severity"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["error"], "{}", show(&o));
}
