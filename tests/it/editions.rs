//! Old editions: a 2015 crate (bare `Fn` trait objects, `try` and `async` as names) is linted
//! like any other, with its findings in place; the same code in a 2021 crate is an error that
//! says what to change.

use std::process::Command;

use serde_json::Value;

use crate::support::root;

fn lint_json(dir: &std::path::Path) -> (Option<i32>, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .args(["--format", "json", "."])
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

#[test]
fn a_2015_crate_is_parsed_as_2015_and_its_findings_are_in_place() {
    let (code, report) = lint_json(&root().join("tests/data/edition-2015"));
    assert_eq!(report["errors"], Value::Array(Vec::new()), "{report}");
    assert_eq!(code, Some(1));
    let found = report["diagnostics"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["rule"], "unbounded-retry");
    // The `loop` and the sleep, after lines where `try` and `Fn` were read the 2015 way.
    assert_eq!(found[0]["range"]["start"]["line"], 20);
    assert_eq!(found[0]["range"]["start"]["column"], 5);
    assert_eq!(found[0]["related"][0]["range"]["start"]["line"], 26);
    assert_eq!(found[0]["related"][0]["range"]["start"]["column"], 17);
}

#[test]
fn the_same_code_in_a_2021_crate_says_what_to_change() {
    let dir = tempfile::tempdir().unwrap();
    let data = root().join("tests/data/edition-2015");
    let manifest = std::fs::read_to_string(data.join("Cargo.toml")).unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        manifest.replace("edition = \"2015\"", "edition = \"2021\""),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::copy(data.join("src/lib.rs"), dir.path().join("src/lib.rs")).unwrap();
    let (code, report) = lint_json(dir.path());
    assert_eq!(code, Some(2));
    let errors = report["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{report}");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "a trait object without `dyn`, which the 2021 edition does not allow: write `dyn Fn(..)`"
        ),
        "{message}"
    );
    assert_eq!(
        (errors[0]["line"].as_u64(), errors[0]["column"].as_u64()),
        (Some(9), Some(25)),
        "{report}"
    );
}
