//! The crate's own give-up helpers across files: a retry loop that asks a helper defined in
//! another file whether to go on is bounded the way that helper decides (issue 19: function
//! summaries across the crate). The driver's crate join finds what the defining file answers
//! and lints the asking file again with it known.

use crate::support::{config, default_findings, findings_with, write_file as write};
use timeoutlint::rules;

/// The default rules' findings, checked to be the same with unbounded-retry alone (the crate
/// join must not depend on which rules run) and with the prefilter off (a masked parse must
/// ask what the whole file asks).
fn findings(dir: &std::path::Path) -> Vec<(String, usize, String)> {
    let all = default_findings(dir);
    let unbounded: Vec<_> = (all.iter())
        .filter(|f| f.2 == "unbounded-retry")
        .cloned()
        .collect();
    let rule = rules::ALL
        .iter()
        .copied()
        .find(|r| r.name == "unbounded-retry")
        .unwrap();
    assert_eq!(
        findings_with(dir, &config(&[rule], true)),
        unbounded,
        "alone"
    );
    let defaults: Vec<_> = (rules::ALL.iter().copied())
        .filter(|r| r.default_enabled)
        .collect();
    assert_eq!(
        findings_with(dir, &config(&defaults, false)),
        all,
        "no prefilter"
    );
    all
}

const MANIFEST: &str = "[package]\nname = \"h\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

/// A cap that `None` switches off (`max_retries: None` means "retry forever").
const OPTIONS_RS: &str = r"use std::time::Duration;

pub struct RetryOptions {
    pub delay: Duration,
    pub max_retries: Option<u32>,
}

impl RetryOptions {
    pub fn allow_retry(&self, current: u32) -> bool {
        self.max_retries.is_none() || current < self.max_retries.unwrap()
    }
}
";

/// The same helper with a number to fall back on: a cap either way.
const FALLBACK_RS: &str = r"use std::time::Duration;

pub struct RetryOptions {
    pub delay: Duration,
    pub max_retries: Option<u32>,
}

impl RetryOptions {
    pub fn allow_retry(&self, current: u32) -> bool {
        current < self.max_retries.unwrap_or(3)
    }
}
";

/// The loop gives up through a helper of its own file, which asks the options' helper.
const SUBSCRIBE_RS: &str = r"use crate::options::RetryOptions;

async fn give_up_or_wait(opts: &RetryOptions, current_retries: u32, err: Error) -> Result<(), Error> {
    if !opts.allow_retry(current_retries) {
        return Err(err);
    }
    tokio::time::sleep(opts.delay).await;
    Ok(())
}

pub async fn subscribe(conn: &Conn, opts: &RetryOptions) -> Result<(), Error> {
    let mut current_retries = 0u32;
    loop {
        match conn.subscribe().await {
            Ok(_) => break,
            Err(err) => give_up_or_wait(opts, current_retries, err).await?,
        }
        current_retries += 1;
    }
    Ok(())
}
";

/// A loop of another file that gives up on a limit helper returning a `Result`, whose name no
/// vocabulary knows (`self.checked()?`).
const BUDGET_RS: &str = r"pub struct Budget {
    pub used: u32,
    pub max_reconnects: u32,
}

impl Budget {
    pub fn checked(&mut self) -> Result<(), Exhausted> {
        if self.used >= self.max_reconnects {
            return Err(Exhausted);
        }
        self.used += 1;
        Ok(())
    }
}
";

const RECONNECT_RS: &str = r#"use crate::budget::Budget;

pub async fn reconnect(addr: &str, budget: &mut Budget) -> Result<Conn, Error> {
    loop {
        match Conn::open(addr).await {
            Ok(c) => return Ok(c),
            Err(e) => {
                budget.checked()?;
                tracing::warn!("connect failed: {e}; retrying");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
        }
    }
}
"#;

fn crate_with(dir: &std::path::Path, files: &[(&str, &str)]) {
    write(dir, "Cargo.toml", MANIFEST);
    let mods: Vec<String> = files
        .iter()
        .map(|(name, _)| format!("mod {name};"))
        .collect();
    write(dir, "src/lib.rs", &mods.join("\n"));
    for (name, text) in files {
        write(dir, &format!("src/{name}.rs"), text);
    }
}

/// The findings of a crate of `files` ([`findings`]).
fn lint(files: &[(&str, &str)]) -> Vec<(String, usize, String)> {
    let tmp = tempfile::tempdir().unwrap();
    crate_with(tmp.path(), files);
    findings(tmp.path())
}

fn unbounded(file: &str, line: usize) -> (String, usize, String) {
    (file.to_string(), line, "unbounded-retry".to_string())
}

#[test]
fn an_optional_cap_defined_in_another_file_is_followed_through_a_helper() {
    assert_eq!(
        lint(&[("options", OPTIONS_RS), ("subscribe", SUBSCRIBE_RS)]),
        vec![unbounded("subscribe.rs", 13)]
    );
}

#[test]
fn a_helper_with_a_fallback_cap_in_another_file_bounds_the_loop() {
    assert_eq!(
        lint(&[("options", FALLBACK_RS), ("subscribe", SUBSCRIBE_RS)]),
        vec![]
    );
}

#[test]
fn a_helper_two_files_define_differently_says_nothing() {
    // Which `allow_retry` the loop calls is not known by name alone: neither answer is taken,
    // and the name, a bound by its words, stays the loop's gate.
    assert_eq!(
        lint(&[
            ("options", OPTIONS_RS),
            ("legacy", FALLBACK_RS),
            ("subscribe", SUBSCRIBE_RS),
        ]),
        vec![]
    );
}

#[test]
fn a_limit_helper_in_another_file_is_the_loops_gate() {
    assert_eq!(
        lint(&[("budget", BUDGET_RS), ("reconnect", RECONNECT_RS)]),
        vec![]
    );
    // Without the helper's file, nothing says `checked` can give up: the loop retries forever.
    assert_eq!(
        lint(&[("reconnect", RECONNECT_RS)]),
        vec![unbounded("reconnect.rs", 4)]
    );
}

/// A gate helper of the asking file that reaches the other file's optional cap through a
/// second helper of its own.
const CHAIN_RS: &str = r"use crate::options::RetryOptions;

fn may_go_on(opts: &RetryOptions, n: u32) -> Result<(), Error> {
    if !opts.allow_retry(n) {
        return Err(Error::GaveUp);
    }
    Ok(())
}

async fn check_budget(opts: &RetryOptions, n: u32) -> Result<(), Error> {
    may_go_on(opts, n)?;
    tokio::time::sleep(opts.delay).await;
    Ok(())
}

pub async fn subscribe(conn: &Conn, opts: &RetryOptions) -> Result<(), Error> {
    let mut current_retries = 0u32;
    loop {
        if conn.subscribe().await.is_ok() {
            return Ok(());
        }
        check_budget(opts, current_retries).await?;
        current_retries += 1;
    }
}
";

/// The helper asks the optional cap, then a fixed cap of its own file: a cap either way.
const TWO_CAPS_RS: &str = r"use crate::options::RetryOptions;

fn hard_cap(n: u32, max_attempts: u32) -> Result<(), Error> {
    if n >= max_attempts {
        return Err(Error::GaveUp);
    }
    Ok(())
}

async fn give_up_or_wait(opts: &RetryOptions, current_retries: u32) -> Result<(), Error> {
    if !opts.allow_retry(current_retries) {
        return Err(Error::GaveUp);
    }
    hard_cap(current_retries, 10)?;
    tokio::time::sleep(opts.delay).await;
    Ok(())
}

pub async fn subscribe(conn: &Conn, opts: &RetryOptions) -> Result<(), Error> {
    let mut current_retries = 0u32;
    loop {
        match conn.subscribe().await {
            Ok(_) => return Ok(()),
            Err(_) => give_up_or_wait(opts, current_retries).await?,
        }
        current_retries += 1;
    }
}
";

#[test]
fn a_chain_of_the_files_own_helpers_reaches_the_other_files_cap() {
    assert_eq!(
        lint(&[("options", OPTIONS_RS), ("subscribe", CHAIN_RS)]),
        vec![unbounded("subscribe.rs", 18)]
    );
}

#[test]
fn a_helper_with_a_second_fixed_cap_bounds_the_loop() {
    // The helper looks like the optional cap until its other cap is known: the answer is
    // withdrawn, not kept from the first look.
    assert_eq!(
        lint(&[("options", OPTIONS_RS), ("subscribe", TWO_CAPS_RS)]),
        vec![]
    );
}

#[test]
fn a_helper_name_many_files_define_is_not_looked_up() {
    // Two files agree on what `checked` decides: the loop's gate. Five files define it: by
    // name alone it could be any of them, and none is parsed for it.
    let names: Vec<String> = (1..=5).map(|i| format!("budget{i}")).collect();
    let reconnect = RECONNECT_RS.replace("crate::budget::", "crate::budget1::");
    let with = |n: usize| -> Vec<(&str, &str)> {
        let mut files: Vec<(&str, &str)> =
            names[..n].iter().map(|m| (m.as_str(), BUDGET_RS)).collect();
        files.push(("reconnect", &reconnect));
        files
    };
    assert_eq!(lint(&with(2)), vec![]);
    assert_eq!(lint(&with(5)), vec![unbounded("reconnect.rs", 4)]);
}

/// A helper that races the future it is handed against a stop signal.
const STOPPER_RS: &str = r#"pub async fn with_stopper(stop: tokio::sync::oneshot::Receiver<()>, op: impl std::future::Future) {
    tokio::select! {
        _ = stop => log::info!("stopped"),
        _ = op => log::info!("finished"),
    }
}
"#;

/// The same name, awaiting what it is handed with nothing beside it.
const PLAIN_RUNNER_RS: &str = r"pub async fn with_stopper(stop: tokio::sync::oneshot::Receiver<()>, op: impl std::future::Future) {
    op.await;
    drop(stop);
}
";

/// A supervisor that reconnects forever, started under the stopper of another file.
const SUPERVISOR_RS: &str = r#"use crate::stopper::with_stopper;

async fn supervise(addr: String) {
    loop {
        match connect(&addr).await {
            Ok(conn) => return conn.serve().await,
            Err(e) => {
                log::warn!("connect failed: {e}");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
        }
    }
}

pub fn start(addr: String, stop: tokio::sync::oneshot::Receiver<()>) {
    tokio::spawn(async move {
        with_stopper(stop, supervise(addr)).await;
    });
}
"#;

#[test]
fn a_future_handed_to_a_racing_helper_of_another_file_runs_under_its_stop() {
    assert_eq!(
        lint(&[("stopper", STOPPER_RS), ("supervisor", SUPERVISOR_RS)]),
        vec![]
    );
    // A helper of that name that only awaits its future bounds nothing: the loop retries forever.
    assert_eq!(
        lint(&[("stopper", PLAIN_RUNNER_RS), ("supervisor", SUPERVISOR_RS)]),
        vec![unbounded("supervisor.rs", 4)]
    );
}
