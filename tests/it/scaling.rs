//! Input shapes that once cost quadratic time (issue 15, item 14): each is linted at a size n
//! and at 4n, and the time must grow less than 8 times; quadratic work grows 16 times. The
//! sizes keep every run well under a second in a debug build; each time is the worker thread's
//! CPU time (on Linux; the wall time elsewhere), the best of three, so a busy machine does not
//! skew one size against the other. Before the fixes, the same
//! sizes grew 9.4x (sleeps), 9.9x (else-if), 12.6x (suppressions) and 11.3x (deep mods, 10 s
//! and 113 s); the many-fns and shallow-mods shapes only show their quadratic term at sizes
//! too slow for a debug build (release, CPU seconds at 8k / 16k / 32k fns: 0.52 / 1.50 / 5.48
//! before, 0.21 / 0.44 / 0.99 after).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::support::lint_as_cli;

/// The best of three runs of the CLI's path on `text`, with its outcome. The cost is the worker
/// thread's CPU time where the platform tells it: a loaded machine (CI shares its cores with
/// builds) stretches wall time by whatever else runs, CPU time hardly at all. Elsewhere the
/// wall time, which the best of three shields from most bursts.
fn cost(text: &str) -> (Duration, (usize, bool)) {
    let mut best = Duration::MAX;
    let mut outcome = (0, false);
    for _ in 0..3 {
        let t = Instant::now();
        let (n, ok, cpu) = lint_as_cli(text);
        best = best.min(cpu.unwrap_or_else(|| t.elapsed()));
        outcome = (n, ok);
    }
    (best, outcome)
}

/// `make(n)` and `make(4 * n)` cost less than 8 times as much as each other; returns the
/// outcomes (findings, analysed) of both for the caller to check the shape did its work.
fn grows_linearly(shape: &str, n: usize, make: impl Fn(usize) -> String) -> [(usize, bool); 2] {
    let (small, a) = cost(&make(n));
    let (big, b) = cost(&make(4 * n));
    let ratio = big.as_secs_f64() / small.as_secs_f64().max(1e-6);
    eprintln!(
        "{shape}: n={n} {small:?}, 4n={} {big:?}, ratio {ratio:.1}",
        4 * n
    );
    assert!(
        ratio < 8.0,
        "{shape}: 4x the input took {ratio:.1}x the time ({small:?} -> {big:?}); linear is 4x"
    );
    [a, b]
}

#[test]
fn many_blocking_sleeps_in_one_async_fn() {
    let out = grows_linearly("sleeps", 300, |n| {
        format!(
            "async fn f() {{\n{}}}\n",
            "    std::thread::sleep(d);\n".repeat(n)
        )
    });
    assert_eq!(out, [(300, true), (1200, true)]);
}

#[test]
fn many_small_async_fns_with_findings() {
    let out = grows_linearly("fns", 250, |n| {
        let mut s = String::new();
        for i in 0..n {
            writeln!(s, "async fn f{i}() {{ x(); std::thread::sleep(d); }}").unwrap();
        }
        s
    });
    assert_eq!(out, [(250, true), (1000, true)]);
}

#[test]
fn a_long_else_if_chain() {
    let out = grows_linearly("else-if", 250, |n| {
        let mut s =
            String::from("async fn f(x: u32) {\n    if x == 0 { std::thread::sleep(d); }\n");
        for i in 1..n {
            writeln!(s, "    else if x == {i} {{ std::thread::sleep(d); }}").unwrap();
        }
        s + "}\n"
    });
    assert_eq!(out, [(250, true), (1000, true)]);
}

#[test]
fn nested_modules() {
    // Below the nesting guard: masked and analysed.
    let nested = |n: usize| {
        format!(
            "{} async fn f() {{ x(); std::thread::sleep(d); }} {}\n",
            "mod m {\n".repeat(n),
            "}\n".repeat(n)
        )
    };
    assert_eq!(grows_linearly("mods", 300, nested), [(1, true), (1, true)]);
    // Past it: refused, as fast as without the prefilter.
    let out = grows_linearly("deep mods", 5000, nested);
    assert_eq!(out, [(0, false), (0, false)]);
}

#[test]
fn many_standalone_suppressions() {
    let out = grows_linearly("suppressions", 300, |n| {
        format!(
            "async fn f() {{\n{}}}\n",
            "    // timeoutlint: ignore[blocking-sleep-in-async] test\n    std::thread::sleep(d);\n"
                .repeat(n)
        )
    });
    assert_eq!(out, [(0, true), (0, true)]);
    // Stacked: every comment of the stack applies to the one line below it.
    let out = grows_linearly("stacked suppressions", 1000, |n| {
        format!(
            "async fn f() {{\n    x();\n{}    std::thread::sleep(d);\n}}\n",
            "    // timeoutlint: ignore[blocking-sleep-in-async] test\n".repeat(n)
        )
    });
    assert_eq!(out, [(0, true), (0, true)]);
    // Ranges: many `disable`s, each covering every finding after it.
    let out = grows_linearly("disables", 250, |n| {
        format!(
            "async fn f() {{\n    x();\n{}}}\n",
            "    // timeoutlint: disable[blocking-sleep-in-async] test\n    std::thread::sleep(d);\n"
                .repeat(n)
        )
    });
    assert_eq!(out, [(0, true), (0, true)]);
}
