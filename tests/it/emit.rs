//! Every output format against the same sample diagnostics (with fixes of each applicability,
//! related places, a multi-line span, a CRLF file with non-ASCII text, and file errors), each
//! proven against its real consumer: the SARIF 2.1.0 JSON schema and Microsoft's SARIF
//! Multitool (`Gh;Sarif` rules), GitHub's own line-hash values, `cargo_metadata` and `rustfix`.
//! Snapshots live in `tests/snapshots/emit__*.snap` with the version and absolute paths
//! redacted.

use std::collections::{BTreeMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use timeoutlint::base::diagnostic::{Applicability, Diagnostic, Edit, FileError, Fix, Severity};
use timeoutlint::base::source::{SourceFile, Span};
use timeoutlint::emit::{self, CrateTarget, Report};
use timeoutlint::rules::{self, Rule};

use crate::support::root;

/// GitHub's golden sample file: the fingerprints of its results are known.
const SAMPLE: &str = include_str!("../data/sarif-fingerprints/sample.rs");
/// CRLF line endings and non-ASCII text before the finding on line 2 (`🚀` is 2 UTF-16 units).
const UNICODE: &str =
    "async fn poll() {\r\n    let s = \"h\u{e9}llo w\u{f6}rld \u{1f680}\"; std::thread::sleep(Duration::from_secs(1));\r\n}\r\n";
/// Where the finding on `UNICODE` line 2 starts: 29 characters, 30 UTF-16 units, 34 bytes in.
const UNICODE_COL: usize = 30;
const UNICODE_COL16: usize = 31;

/// The one place these tests call the emitters.
fn render(format: &str, report: &Report) -> String {
    match format {
        "human" => emit::human::render(report, false),
        "concise" => emit::concise::render(report),
        "json" => emit::json::render(report),
        "sarif" => emit::sarif::render(report),
        "github" => emit::github::render(report),
        "cargo-json" => emit::rustc_json::render(report, &crates()),
        "gitlab" => emit::gitlab::render(report),
        "junit" => emit::junit::render(report),
        "rdjson" => emit::rdjson::render(report),
        _ => unreachable!("{format}"),
    }
}

const FORMATS: [&str; 9] = [
    "human",
    "concise",
    "json",
    "sarif",
    "github",
    "cargo-json",
    "gitlab",
    "junit",
    "rdjson",
];

fn rule(name: &str) -> &'static Rule {
    rules::by_name(name).unwrap()
}

/// The span of the `nth` occurrence of `needle` in `text`.
fn find(text: &str, needle: &str, nth: usize) -> Span {
    let start = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle}"))
        .0;
    Span::new(start, start + needle.len())
}

fn edit(text: &str, needle: &str, replacement: &str) -> Edit {
    Edit {
        span: find(text, needle, 0),
        replacement: replacement.into(),
    }
}

fn insert_before(text: &str, needle: &str, what: &str) -> Edit {
    let at = find(text, needle, 0).start;
    Edit {
        span: Span::new(at, at),
        replacement: what.into(),
    }
}

fn sample() -> Report {
    let a = SourceFile::new("src/sample.rs", SAMPLE);
    let for_loop = {
        let start = find(SAMPLE, "for attempt", 0).start;
        let end = find(SAMPLE, "        }\n    }\n", 0).end - 1;
        Span::new(start, end)
    };
    let sleep = find(
        SAMPLE,
        "tokio::time::sleep(Duration::from_millis(100 << attempt)).await",
        0,
    );
    let unbounded = Diagnostic::new(
        rule("unbounded-retry"),
        for_loop,
        "retry loop has no overall deadline",
    )
    .label("5 attempts, each up to the client's 30 s timeout")
    .related(
        find(SAMPLE, ".timeout(Duration::from_secs(30))", 0),
        "per-request timeout",
    )
    .note("5 attempts x 30 s + 1.5 s backoff = 151.5 s, no overall deadline")
    .help("bound total time: `timeoutlint_retry::RetryPolicy::builder().total(..)`")
    .fix(Fix {
        title: "add a deadline for the whole operation".into(),
        applicability: Applicability::HasPlaceholders,
        edits: vec![insert_before(
            SAMPLE,
            "for attempt",
            "let deadline = tokio::time::Instant::now() + ${TOTAL};\n    ",
        )],
    });
    let unbounded = Diagnostic {
        severity: Severity::Error,
        ..unbounded
    };
    let backoff = Diagnostic::new(
        rule("uncancellable-backoff"),
        sleep,
        "backoff sleep is not raced against a cancellation signal [sample]",
    )
    .label("cannot be interrupted")
    .related(find(SAMPLE, "for attempt in 0..5", 0), "the retry loop")
    .fix(Fix {
        title: "cap the backoff at 5 s".into(),
        applicability: Applicability::MachineApplicable,
        edits: vec![
            edit(SAMPLE, "100 << attempt", "(100u64 << attempt).min(5_000)"),
            edit(SAMPLE, "0..5", "0..5u32"),
        ],
    });
    let b = SourceFile::new("src/unicode.rs", UNICODE);
    let sleep = find(UNICODE, "std::thread::sleep(Duration::from_secs(1))", 0);
    let blocking = Diagnostic::new(
        rule("blocking-sleep-in-async"),
        sleep,
        "`std::thread::sleep` blocks the async executor thread",
    )
    .label("every task on this worker thread stalls")
    .related(find(UNICODE, "async fn poll() {", 0), "async context")
    .fix(Fix {
        title: "sleep without blocking".into(),
        applicability: Applicability::MaybeIncorrect,
        edits: vec![
            edit(UNICODE, "std::thread::sleep", "tokio::time::sleep"),
            insert_before(UNICODE, ";\r\n}", ".await"),
        ],
    });
    let blocking = Diagnostic {
        severity: Severity::Note,
        ..blocking
    };
    Report {
        files: vec![(a, vec![unbounded, backoff]), (b, vec![blocking])],
        errors: vec![
            FileError {
                path: "src/broken.rs".into(),
                line: Some(3),
                column: Some(7),
                message: "could not parse: expected `;`".into(),
            },
            FileError {
                path: "src/huge file.rs".into(),
                line: None,
                column: None,
                message: "file is over the 10000000-byte limit (--max-file-size); skipped".into(),
            },
        ],
        files_checked: 4,
        files_skipped: 0,
        rules: rules::ALL.to_vec(),
    }
}

/// The sample files' crate, as `walk::crate_targets` would find it under `/home/dev/app`.
fn crates() -> BTreeMap<String, CrateTarget> {
    let manifest: toml::Table =
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\""
            .parse()
            .unwrap();
    let dir = Path::new("/home/dev/app");
    [
        "src/sample.rs",
        "src/unicode.rs",
        "src/broken.rs",
        "src/huge file.rs",
    ]
    .iter()
    .map(|p| {
        let t = timeoutlint::walk::crates::crate_target(
            &dir.join("Cargo.toml"),
            &manifest,
            None,
            &dir.join(p),
            &|f: &Path| f.ends_with("src/lib.rs"),
        )
        .unwrap();
        ((*p).to_string(), t)
    })
    .collect()
}

fn redact(s: &str) -> String {
    let root = root().to_string_lossy().replace('\\', "/");
    s.replace(&format!("\"{}\"", emit::VERSION), "\"[VERSION]\"")
        .replace(&root, "[ROOT]")
        .replace("/home/dev/app", "[ROOT]")
}

#[test]
fn every_format_snapshot() {
    let report = sample();
    for format in FORMATS {
        let mut out = render(format, &report);
        if format == "cargo-json" {
            // One object per line is the wire format; pretty-printed, the snapshot is reviewable.
            out = out
                .lines()
                .map(|l| {
                    serde_json::to_string_pretty(&serde_json::from_str::<Value>(l).unwrap())
                        .unwrap()
                })
                .collect::<Vec<_>>()
                .join("\n");
        }
        let out = redact(&out);
        insta::with_settings!({
            snapshot_path => "../snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("emit__{}", format.replace('-', "_")), out);
        });
    }
}

#[test]
fn columns_on_a_non_ascii_line_are_right_in_every_format() {
    let report = sample();
    let (c, c16) = (UNICODE_COL, UNICODE_COL16);
    let end = c + "std::thread::sleep(Duration::from_secs(1))".len();
    let end16 = c16 + "std::thread::sleep(Duration::from_secs(1))".len();
    let byte = UNICODE.find("std::thread").unwrap();
    assert_eq!(byte, 19 + 34, "the sample is what the constants say");

    assert!(render("human", &report).contains(&format!("src/unicode.rs:2:{c}\n")));
    assert!(render("concise", &report).contains(&format!("src/unicode.rs:2:{c}: ")));

    let json: Value = serde_json::from_str(&render("json", &report)).unwrap();
    let d = &json["diagnostics"][2];
    assert_eq!(d["range"]["start"]["column"], c);
    assert_eq!(d["range"]["end"]["column"], end);
    assert_eq!(d["range"]["start"]["byte"], byte);

    let sarif: Value = serde_json::from_str(&render("sarif", &report)).unwrap();
    assert_eq!(sarif["runs"][0]["columnKind"], "utf16CodeUnits");
    let region = &sarif["runs"][0]["results"][2]["locations"][0]["physicalLocation"]["region"];
    assert_eq!(
        (region["startLine"].clone(), region["startColumn"].clone()),
        (2.into(), c16.into())
    );
    assert_eq!(region["endColumn"], end16);

    assert!(render("github", &report).contains(&format!(
        "file=src/unicode.rs,line=2,col={c16},endLine=2,endColumn={end16},"
    )));

    let cargo = render("cargo-json", &report);
    let line: Value = serde_json::from_str(cargo.lines().nth(2).unwrap()).unwrap();
    let span = &line["message"]["spans"][0];
    assert_eq!(span["column_start"], c);
    assert_eq!(span["column_end"], end);
    assert_eq!(span["byte_start"], byte);
    assert_eq!(span["text"][0]["highlight_start"], c);
    assert_eq!(
        span["text"][0]["text"],
        "    let s = \"h\u{e9}llo w\u{f6}rld \u{1f680}\"; std::thread::sleep(Duration::from_secs(1));"
    );
}

// ---------------------------------------------------------------------------------------------
// SARIF

fn golden(name: &str) -> (String, BTreeMap<usize, String>) {
    let dir = root().join("tests/data/sarif-fingerprints");
    let text = String::from_utf8(std::fs::read(dir.join(name)).unwrap()).unwrap();
    let map: BTreeMap<String, String> =
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap())
            .unwrap();
    let map = map
        .into_iter()
        .map(|(k, v)| (k.parse().unwrap(), v))
        .collect();
    (text, map)
}

#[test]
fn line_hashes_match_githubs_own_values() {
    for name in ["sample.rs", "crlf_unicode.rs"] {
        let (text, want) = golden(name);
        if name == "crlf_unicode.rs" {
            assert!(
                text.contains("\r\n") && !text.is_ascii(),
                "golden file was normalised"
            );
        }
        let got: BTreeMap<usize, String> = emit::fingerprint::line_hashes(&text)
            .into_iter()
            .enumerate()
            .map(|(i, h)| (i + 1, h))
            .collect();
        assert_eq!(got, want, "{name}");
    }
    // Repeated lines are numbered.
    let hashes = emit::fingerprint::line_hashes("x\nx\n");
    assert!(
        hashes[0].ends_with(":1") && hashes[1].ends_with(":1"),
        "{hashes:?}"
    );
    let hashes = emit::fingerprint::line_hashes(&"}\n".repeat(150));
    assert_eq!(
        &hashes[..2],
        [
            format!("{}:1", &hashes[0][..hashes[0].len() - 2]),
            format!("{}:2", &hashes[0][..hashes[0].len() - 2])
        ]
    );
}

#[test]
fn sarif_carries_what_github_and_review_bots_need() {
    let sarif: Value = serde_json::from_str(&render("sarif", &sample())).unwrap();
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), rules::ALL.len());
    for r in rules {
        for key in ["shortDescription", "fullDescription"] {
            let text = r[key]["text"].as_str().unwrap();
            assert!(
                !text.is_empty() && text.chars().count() <= 1024,
                "{key}: {text}"
            );
        }
        assert_ne!(r["name"], r["id"]);
        assert!(r["help"]["markdown"].as_str().unwrap().starts_with("# "));
        assert!(r["properties"]["tags"].is_array());
        assert!(r
            .get("properties")
            .unwrap()
            .get("security-severity")
            .is_none());
    }
    let (_, golden) = golden("sample.rs");
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    for res in &results[..2] {
        let line = res["locations"][0]["physicalLocation"]["region"]["startLine"]
            .as_u64()
            .unwrap() as usize;
        assert_eq!(
            res["partialFingerprints"]["primaryLocationLineHash"], golden[&line],
            "GitHub's value for line {line}"
        );
        let uri = &res["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(
            (uri["uri"].as_str(), uri["uriBaseId"].as_str()),
            (Some("src/sample.rs"), Some("%SRCROOT%"))
        );
    }
    assert!(results[0]["message"]["text"]
        .as_str()
        .unwrap()
        .contains("[per-request timeout](1)"));
    assert!(results[1]["message"]["text"]
        .as_str()
        .unwrap()
        .contains("\\[sample\\]"));
    let mut applicabilities = Vec::new();
    for res in results {
        for fix in res["fixes"].as_array().unwrap() {
            applicabilities.push(fix["properties"]["applicability"].as_str().unwrap());
            for change in fix["artifactChanges"].as_array().unwrap() {
                for rep in change["replacements"].as_array().unwrap() {
                    assert!(rep["insertedContent"]["text"].is_string(), "{rep}");
                    assert!(rep["deletedRegion"]["startLine"].is_u64(), "{rep}");
                }
            }
        }
    }
    assert_eq!(
        applicabilities,
        ["HasPlaceholders", "MachineApplicable", "MaybeIncorrect"]
    );
    let notes = run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    assert_eq!(notes.len(), 2);
    assert_eq!(
        notes[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "src/huge%20file.rs"
    );
    assert_eq!(run["invocations"][0]["executionSuccessful"], false);
}

/// Validate against the SARIF 2.1.0 schema that the Multitool package ships (copied into
/// tests/data so this check never needs the network or npm).
fn schema_errors(sarif: &str) -> Vec<String> {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/data/sarif-2.1.0.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    let instance: Value = serde_json::from_str(sarif).unwrap();
    validator
        .iter_errors(&instance)
        .map(|e| format!("{}: {e}", e.instance_path))
        .collect()
}

/// The Multitool binary, or `None` (with a loud message) when it is not installed locally.
/// In CI (`CI=true`) a missing Multitool fails the test instead: `.ci/run` installs it.
fn multitool() -> Option<PathBuf> {
    let path = std::env::var_os("SARIF_MULTITOOL").map_or_else(
        || root().join(".tools/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"),
        PathBuf::from,
    );
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "SARIF Multitool not found at {} (CI installs it in .ci/run)",
        path.display()
    );
    // Straight to the process's stderr: `eprintln!` would be captured and hidden by libtest.
    let _ = writeln!(
        std::io::stderr(),
        "\n======== SKIPPED: SARIF Multitool validation ========\n\
         not found at {}\n\
         install it: npm install --prefix .tools @microsoft/sarif-multitool-linux@5.7.0\n\
         ====================================================\n",
        path.display()
    );
    None
}

/// Errors and warnings the Multitool's `Gh;Sarif` rules report for `sarif`. Its exit code is
/// always 0, so this reads its output log.
fn multitool_problems(tool: &Path, sarif: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.sarif"), sarif).unwrap();
    // SARIF2006 fetches every URI over HTTP; this machine has no network, and reachability of
    // our doc links is not what is being checked.
    std::fs::write(
        dir.path().join("config.xml"),
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Properties>\n  \
         <Properties Key=\"SARIF2006.UrisShouldBeReachable.Options\">\n    \
         <Property Key=\"RuleEnabled\" Value=\"Disabled\" />\n  </Properties>\n</Properties>\n",
    )
    .unwrap();
    let out = Command::new(tool)
        .args([
            "validate",
            "--rule-kind",
            "Gh;Sarif",
            "--level",
            "Error;Warning",
            "--config",
            "config.xml",
            "--log",
            "ForceOverwrite",
            "--output",
            "out.sarif",
            "in.sarif",
        ])
        .current_dir(dir.path())
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .output()
        .unwrap();
    let console = String::from_utf8_lossy(&out.stdout).into_owned();
    let log = std::fs::read_to_string(dir.path().join("out.sarif"))
        .unwrap_or_else(|e| panic!("the Multitool wrote no log ({e}):\n{console}"));
    let log: Value = serde_json::from_str(&log).unwrap();
    let run = &log["runs"][0];
    assert!(run["results"].is_array(), "no results array:\n{console}");
    let mut problems = Vec::new();
    for r in run["results"].as_array().unwrap() {
        // SARIF's default level is warning.
        let level = r["level"].as_str().unwrap_or("warning");
        if level == "error" || level == "warning" {
            problems.push(format!("{level} {}: {}", r["ruleId"], r["message"]));
        }
    }
    for key in [
        "toolExecutionNotifications",
        "toolConfigurationNotifications",
    ] {
        for n in run["invocations"][0][key].as_array().into_iter().flatten() {
            let id = n["descriptor"]["id"].as_str().unwrap_or("");
            let level = n["level"].as_str().unwrap_or("warning");
            if id != "WRN999.RuleExplicitlyDisabled" && (level == "error" || level == "warning") {
                problems.push(format!("{key} {id}: {}", n["message"]));
            }
        }
    }
    problems
}

fn assert_valid_sarif(sarif: &str) {
    let errors = schema_errors(sarif);
    assert!(errors.is_empty(), "schema:\n{}", errors.join("\n"));
    if let Some(tool) = multitool() {
        let problems = multitool_problems(&tool, sarif);
        assert!(problems.is_empty(), "Multitool:\n{}", problems.join("\n"));
    }
}

#[test]
fn sarif_of_the_sample_is_valid() {
    assert_valid_sarif(&render("sarif", &sample()));
}

#[test]
fn sarif_of_a_run_over_all_fixtures_is_valid_and_written_despite_findings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fixtures.sarif");
    let out = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .arg("--output")
        .arg(format!("sarif={}", path.display()))
        .args(["--format", "concise", "fixtures"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "the fixtures have findings");
    let sarif = std::fs::read_to_string(&path).unwrap();
    let log: Value = serde_json::from_str(&sarif).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        String::from_utf8_lossy(&out.stdout).lines().count(),
        "the same findings as on stdout"
    );
    assert_valid_sarif(&sarif);
}

#[test]
fn the_validators_catch_bad_sarif() {
    let good = render("sarif", &sample());
    let bad = good.replacen("\"version\": \"2.1.0\"", "\"version\": \"2.0.0\"", 1);
    assert!(
        !schema_errors(&bad).is_empty(),
        "schema accepted a wrong version"
    );
    if let Some(tool) = multitool() {
        // The rule `name` must differ from its `id` (SARIF1001): a warning we fixed once.
        let bad = good.replace("\"UnboundedRetry\"", "\"unbounded-retry\"");
        let problems = multitool_problems(&tool, &bad);
        assert!(
            problems.iter().any(|p| p.contains("SARIF1001")),
            "{problems:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// cargo / rustc JSON

/// The raw `message` of every line, after checking the line deserialises with `cargo_metadata`
/// as a `compiler-message`.
fn compiler_messages(stream: &str) -> Vec<(cargo_metadata::CompilerMessage, Value)> {
    stream
        .lines()
        .map(|line| {
            let msg: cargo_metadata::Message = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("cargo_metadata cannot read {line}: {e}"));
            let cargo_metadata::Message::CompilerMessage(msg) = msg else {
                panic!("not a compiler-message: {line}");
            };
            let raw: Value = serde_json::from_str(line).unwrap();
            (msg, raw["message"].clone())
        })
        .collect()
}

#[test]
fn cargo_json_fixes_through_rustfix_equal_applying_the_edits() {
    let report = sample();
    let messages = compiler_messages(&render("cargo-json", &report));
    assert_eq!(messages.len(), 5, "three findings and two file errors");
    for (msg, _) in &messages[..3] {
        assert_eq!(msg.package_id.repr, "path+file:///home/dev/app#0.1.0");
        assert_eq!(msg.target.name, "app");
        assert!(msg.message.spans.iter().all(|s| !s.text.is_empty()));
        let code = msg.message.code.as_ref().unwrap();
        assert!(code.code.starts_with("timeoutlint::"), "{}", code.code);
        assert!(msg.message.children.iter().any(|c| c
            .message
            .starts_with("for further information visit https://")));
    }
    for (file, diags) in &report.files {
        let lines = messages
            .iter()
            .filter(|(m, _)| {
                m.message
                    .spans
                    .first()
                    .is_some_and(|s| s.file_name == file.path)
            })
            .map(|(_, raw)| raw.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        for (filter, levels) in [
            (
                rustfix::Filter::MachineApplicableOnly,
                &[Applicability::MachineApplicable][..],
            ),
            (
                rustfix::Filter::Everything,
                &[
                    Applicability::MachineApplicable,
                    Applicability::MaybeIncorrect,
                    Applicability::HasPlaceholders,
                ][..],
            ),
        ] {
            let suggestions =
                rustfix::get_suggestions_from_json(&lines, &HashSet::new(), filter).unwrap();
            let by_rustfix = rustfix::apply_suggestions(&file.text, &suggestions).unwrap();
            let edits: Vec<Edit> = diags
                .iter()
                .filter_map(|d| d.fix.as_ref())
                .filter(|f| levels.contains(&f.applicability))
                .flat_map(|f| f.edits.clone())
                .collect();
            assert_eq!(
                by_rustfix,
                timeoutlint::base::diagnostic::apply_edits(&file.text, &edits),
                "{}",
                file.path
            );
        }
    }
    // Outside any cargo package the lines are bare rustc diagnostics, as rustc prints them.
    let bare = emit::rustc_json::render(&report, &BTreeMap::new());
    for line in bare.lines() {
        let d: cargo_metadata::diagnostic::Diagnostic = serde_json::from_str(line).unwrap();
        assert!(d.rendered.is_some());
    }
    let fixed = timeoutlint::base::diagnostic::apply_edits(
        SAMPLE,
        &report.files[0].1[1].fix.as_ref().unwrap().edits,
    );
    assert!(fixed.contains("for attempt in 0..5u32 {") && fixed.contains(".min(5_000)"));
}

#[test]
fn cargo_json_of_the_fixtures_names_the_real_package() {
    let out = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(["--message-format=json", "fixtures"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let metadata = cargo_metadata::MetadataCommand::new()
        .manifest_path(root().join("Cargo.toml"))
        .no_deps()
        .exec()
        .unwrap();
    let package = metadata.root_package().unwrap();
    let messages = compiler_messages(&String::from_utf8(out.stdout).unwrap());
    assert!(!messages.is_empty());
    for (msg, _) in messages {
        assert_eq!(msg.package_id, package.id);
        assert_eq!(msg.target.name, "timeoutlint");
        assert_eq!(msg.target.src_path, package.targets[0].src_path);
    }
}

// ---------------------------------------------------------------------------------------------
// GitHub annotations

#[test]
fn github_annotations_put_errors_first_and_say_what_was_left_out() {
    let text = "fn f() {}\n".repeat(40);
    let file = SourceFile::new("src/many.rs", text);
    let mut diags = Vec::new();
    for (i, severity) in std::iter::repeat_n(Severity::Note, 11)
        .chain(std::iter::repeat_n(Severity::Warning, 3))
        .chain(std::iter::repeat_n(Severity::Error, 12))
        .enumerate()
    {
        let d = Diagnostic::new(
            rule("unbounded-retry"),
            Span::new(i * 10, i * 10 + 2),
            "m, 100%: x",
        );
        diags.push(Diagnostic { severity, ..d });
    }
    let report = Report {
        files: vec![(file, diags)],
        errors: Vec::new(),
        files_checked: 1,
        files_skipped: 0,
        rules: rules::ALL.to_vec(),
    };
    let out = render("github", &report);
    let levels: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("::"))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    let mut want = vec!["error"; 10];
    want.extend(["warning"; 3]);
    want.extend(["notice"; 10]);
    assert_eq!(levels, want, "{out}");
    assert!(out.contains("::error file=src/many.rs,line=15,col=1,endLine=15,endColumn=3,title=unbounded-retry::m, 100%25: x%0Asee: "));
    assert!(out
        .lines()
        .last()
        .unwrap()
        .starts_with("::notice title=timeoutlint::4 more findings are not annotated"));
    assert_eq!(out.lines().filter(|l| !l.starts_with("::")).count(), 4);
}

// ---------------------------------------------------------------------------------------------
// Several outputs in one run

#[test]
fn one_run_writes_every_requested_output_whatever_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("bug.rs"),
        "async fn f() {\n    for _attempt in 0..3 {\n        if g().await.is_ok() { return; }\n        std::thread::sleep(std::time::Duration::from_secs(1));\n    }\n}\n",
    )
    .unwrap();
    std::fs::write(d.join("broken.rs"), "fn retry(").unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
            .args(args)
            .current_dir(d)
            .output()
            .unwrap()
    };
    let out = run(&[
        "--output",
        "sarif=out/report.sarif",
        "--output",
        "json=report.json",
        "--output",
        "github",
    ]);
    assert_eq!(out.status.code(), Some(2), "a file that does not parse");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("::error file=broken.rs"), "{stdout}");
    assert!(
        stdout.contains("::warning file=bug.rs,line=4,col=9,"),
        "{stdout}"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["diagnostics"][0]["path"], "bug.rs");
    assert_eq!(json["errors"][0]["path"], "broken.rs");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write out/report.sarif"));
    // With the directory there, every report is written even though the exit code is 2.
    std::fs::create_dir(d.join("out")).unwrap();
    let out = run(&["--format", "concise", "--output", "sarif=out/report.sarif"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(std::fs::read_to_string(d.join("out/report.sarif"))
        .unwrap()
        .contains("\"2.1.0\""));
    let out = run(&["--output", "json", "--output", "sarif"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only one output can go to stdout"));
    let out = run(&["--output", "xml=a.xml"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["--message-format=json", "--exit-zero", "bug.rs"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let d: cargo_metadata::diagnostic::Diagnostic =
        serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(
        d.spans[0].column_start, 9,
        "a bare diagnostic outside any cargo package"
    );
}

#[test]
fn sarif_stops_at_githubs_result_limit_and_says_so() {
    let file = SourceFile::new("src/many.rs", "fn f() {}\n");
    let diags: Vec<Diagnostic> = (0..=emit::sarif::MAX_RESULTS)
        .map(|_| Diagnostic::new(rule("unbounded-retry"), Span::new(0, 2), "m"))
        .collect();
    let report = Report {
        files: vec![(file, diags)],
        errors: Vec::new(),
        files_checked: 1,
        files_skipped: 0,
        rules: rules::ALL.to_vec(),
    };
    let sarif: Value = serde_json::from_str(&render("sarif", &report)).unwrap();
    let run = &sarif["runs"][0];
    assert_eq!(
        run["results"].as_array().unwrap().len(),
        emit::sarif::MAX_RESULTS
    );
    let note = &run["invocations"][0]["toolExecutionNotifications"][0];
    assert_eq!(note["level"], "warning");
    assert!(note["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("1 finding was left out"));
}

// ---------------------------------------------------------------------------------------------
// GitLab Code Quality, JUnit, reviewdog

/// GitLab drops an entry without `description`, `check_name`, `fingerprint`, `severity` (one of
/// its five) or `location.path` and `location.lines.begin`, and merges entries with the same
/// fingerprint: each must be unique, and must not move when lines are added above.
#[test]
fn gitlab_code_quality_has_the_fields_gitlab_requires() {
    let report = sample();
    let doc: Value = serde_json::from_str(&render("gitlab", &report)).unwrap();
    let entries = doc.as_array().unwrap();
    assert_eq!(entries.len(), report.finding_count() + report.errors.len());
    let mut prints = HashSet::new();
    for e in entries {
        assert!(
            e["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{e}"
        );
        assert!(e["check_name"].is_string(), "{e}");
        assert!(
            ["info", "minor", "major", "critical", "blocker"]
                .contains(&e["severity"].as_str().unwrap()),
            "{e}"
        );
        assert!(e["location"]["path"].is_string());
        assert!(e["location"]["lines"]["begin"].as_u64().unwrap() >= 1);
        assert!(prints.insert(e["fingerprint"].as_str().unwrap().to_string()));
    }
    let unicode = entries
        .iter()
        .find(|e| e["location"]["path"] == "src/unicode.rs")
        .unwrap();
    assert_eq!(unicode["location"]["lines"]["begin"], 2);
    assert_eq!(unicode["check_name"], "blocking-sleep-in-async");
    // Lines added above a finding change its line, not its fingerprint.
    let mut moved = sample();
    for (file, diags) in &mut moved.files {
        let shift = "// a comment above\n";
        *file = SourceFile::new(file.path.clone(), format!("{shift}{}", file.text));
        for d in diags {
            d.primary = Span::new(d.primary.start + shift.len(), d.primary.end + shift.len());
        }
    }
    let after: Value = serde_json::from_str(&render("gitlab", &moved)).unwrap();
    for (a, b) in entries.iter().zip(after.as_array().unwrap()) {
        assert_eq!(a["fingerprint"], b["fingerprint"]);
    }
}

/// `JUnit`: well-formed XML (parsed by a real parser) with the counts CI views read, one failing
/// case per finding, one erroring case per file error, and one passing case for a clean run.
#[test]
fn junit_is_well_formed_with_a_case_per_finding() {
    use quick_xml::events::Event;
    fn parse(xml: &str) -> Vec<(String, BTreeMap<String, String>)> {
        let mut reader = quick_xml::Reader::from_str(xml);
        let mut out = Vec::new();
        loop {
            match reader.read_event().unwrap() {
                Event::Start(e) | Event::Empty(e) => {
                    let attrs = e
                        .attributes()
                        .map(|a| {
                            let a = a.unwrap();
                            (
                                String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                                a.unescape_value().unwrap().into_owned(),
                            )
                        })
                        .collect();
                    out.push((
                        String::from_utf8(e.name().as_ref().to_vec()).unwrap(),
                        attrs,
                    ));
                }
                Event::Eof => break,
                _ => {}
            }
        }
        out
    }
    let mut report = sample();
    // A control character (a hostile file name) must not make the XML invalid.
    report.errors[0].message.push_str(" \u{1}<&>\"'");
    let xml = render("junit", &report);
    let elements = parse(&xml);
    let count = |name: &str| elements.iter().filter(|(n, _)| n == name).count();
    assert_eq!(
        count("testcase"),
        report.finding_count() + report.errors.len()
    );
    assert_eq!(count("failure"), report.finding_count());
    assert_eq!(count("error"), report.errors.len());
    let suite = &elements.iter().find(|(n, _)| n == "testsuite").unwrap().1;
    assert_eq!(
        suite["tests"],
        (report.finding_count() + report.errors.len()).to_string()
    );
    assert_eq!(suite["failures"], report.finding_count().to_string());
    let failure = &elements.iter().find(|(n, _)| n == "failure").unwrap().1;
    assert_eq!(failure["message"], report.files[0].1[0].message);
    assert_eq!(failure["type"], report.files[0].1[0].rule.name);
    let error = &elements.iter().find(|(n, _)| n == "error").unwrap().1;
    assert!(
        error["message"].ends_with(" \u{fffd}<&>\"'"),
        "{}",
        error["message"]
    );
    // A clean run is one passing case.
    let clean = Report {
        files: Vec::new(),
        errors: Vec::new(),
        files_checked: 3,
        files_skipped: 0,
        rules: rules::ALL.to_vec(),
    };
    let elements = parse(&render("junit", &clean));
    assert_eq!(elements.iter().filter(|(n, _)| n == "testcase").count(), 1);
    assert!(!elements.iter().any(|(n, _)| n == "failure" || n == "error"));
}

/// reviewdog: `diagnostics` with a message, a path and a range in its units (1-based columns
/// counted in UTF-8 bytes, the end exclusive), the rule as `code`, and each fix without
/// placeholders as one suggestion that makes the text the fix makes.
#[test]
fn rdjson_has_reviewdogs_positions_and_suggestions() {
    let report = sample();
    let doc: Value = serde_json::from_str(&render("rdjson", &report)).unwrap();
    assert_eq!(doc["source"]["name"], "timeoutlint");
    let diags = doc["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), report.finding_count() + report.errors.len());
    for d in diags {
        assert!(d["message"].is_string() && d["location"]["path"].is_string());
        assert!(["ERROR", "WARNING", "INFO"].contains(&d["severity"].as_str().unwrap()));
    }
    let unicode = diags
        .iter()
        .find(|d| d["location"]["path"] == "src/unicode.rs")
        .unwrap();
    let byte_col = UNICODE.find("std::thread").unwrap() - UNICODE.find("    let").unwrap() + 1;
    let len = "std::thread::sleep(Duration::from_secs(1))".len();
    assert_eq!(
        unicode["location"]["range"]["start"],
        serde_json::json!({"line": 2, "column": byte_col})
    );
    assert_eq!(
        unicode["location"]["range"]["end"],
        serde_json::json!({"line": 2, "column": byte_col + len})
    );
    assert_eq!(unicode["code"]["value"], "blocking-sleep-in-async");
    // Every suggestion, applied at its range, makes the text the fix makes.
    let mut suggested = 0;
    for ((file, d), v) in report.findings().zip(diags) {
        let fix = d.fix.as_ref().unwrap();
        let Some(s) = v["suggestions"].as_array() else {
            assert_eq!(fix.applicability, Applicability::HasPlaceholders);
            continue;
        };
        let at = |p: &Value| {
            let line = usize::try_from(p["line"].as_u64().unwrap()).unwrap();
            let col = usize::try_from(p["column"].as_u64().unwrap()).unwrap();
            file.line_span(line - 1).start + col - 1
        };
        let r = &s[0]["range"];
        let mut text = file.text.clone();
        text.replace_range(
            at(&r["start"])..at(&r["end"]),
            s[0]["text"].as_str().unwrap(),
        );
        assert_eq!(text, timeoutlint::fix::apply(&file.text, &[fix]));
        suggested += 1;
    }
    assert_eq!(suggested, 2, "the sample's two fixes without placeholders");
}
