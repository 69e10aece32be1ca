//! Test code is not production code (ARCHITECTURE.md invariant 7): a directory run leaves test
//! items and test files alone unless `lint-tests = true`, across files of a crate too.

use std::path::Path;
use std::process::Command;

/// A production client with a per-request timeout, and retry loops that use it only in tests.
const LIB: &str = r#"use std::time::Duration;

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap()
}

pub async fn prod() {
    let pause = Duration::from_millis(1);
    std::thread::sleep(pause); // a finding: blocking sleep in async
}

#[cfg(test)]
mod tests {
    use super::*;

    // A mock server's retry loop: deliberate, and not production code.
    async fn wait_for_server() {
        // timeoutlint: ignore[unbounded-retry] the mock answers within a second
        loop {
            match client().get("http://127.0.0.1:1/").send().await {
                Ok(_) => return,
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    }

    #[tokio::test]
    async fn blocks_on_purpose() {
        let pause = Duration::from_millis(5);
        std::thread::sleep(pause);
    }
}
"#;

/// An integration test of the same crate, with a retry loop of its own.
const IT: &str = r#"use std::time::Duration;

#[tokio::test]
async fn eventually() {
    let mut n = 0;
    loop {
        match mycrate::client().get("http://127.0.0.1:1/").send().await {
            Ok(_) => return,
            Err(_) => {
                n += 1;
                tokio::time::sleep(Duration::from_millis(10 * n)).await;
            }
        }
    }
}
"#;

fn crate_tree(d: &Path) {
    std::fs::create_dir_all(d.join("src")).unwrap();
    std::fs::create_dir_all(d.join("tests")).unwrap();
    std::fs::write(
        d.join("Cargo.toml"),
        "[package]\nname = \"mycrate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(d.join("src/lib.rs"), LIB).unwrap();
    std::fs::write(d.join("tests/it.rs"), IT).unwrap();
}

/// The concise lines of a run in `d` (rule and place only).
fn findings(d: &Path, extra: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
        .current_dir(d)
        .args(["--format", "concise", "--no-progress"])
        .args(extra)
        .arg(".")
        .output()
        .unwrap();
    // Concise lines read `path:line:col: rule: message`.
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ": ");
            Some(format!("{} {}", parts.next()?, parts.next()?))
        })
        .collect()
}

#[test]
fn test_code_is_left_alone_by_default_and_linted_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate_tree(d);
    // Only the production finding: the test module's loop, its suppression, the test's thread
    // sleep and the integration test's unbounded loop are not production code. The client's
    // timeout is used at retry sites only in tests, so it is no cross-file finding either.
    assert_eq!(findings(d, &[]), ["src/lib.rs:9:5 blocking-sleep-in-async"]);
    // `lint-tests = true` lints all of it, the suppression comment included (it silences the
    // test module's loop, so it is not reported unused).
    std::fs::write(d.join("timeoutlint.toml"), "lint-tests = true\n").unwrap();
    let all = findings(d, &[]);
    assert!(
        all.iter()
            .any(|f| f.starts_with("tests/it.rs:") && f.ends_with("unbounded-retry")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|f| f.starts_with("src/lib.rs:4:") && f.ends_with("client-timeout-in-retry")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|f| f.starts_with("src/lib.rs:30:") && f.ends_with("blocking-sleep-in-async")),
        "{all:?}"
    );
    assert!(
        !all.iter().any(|f| f.ends_with("unused-suppression")),
        "{all:?}"
    );
}

#[test]
fn prefilter_and_whole_parse_agree_on_test_code() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate_tree(d);
    assert_eq!(findings(d, &[]), findings(d, &["--no-prefilter"]));
    std::fs::write(d.join("timeoutlint.toml"), "lint-tests = true\n").unwrap();
    assert_eq!(findings(d, &[]), findings(d, &["--no-prefilter"]));
}
