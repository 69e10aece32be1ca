//! timeoutlint: finds retry and timeout misconfigurations in Rust code that calls remote
//! services.
//!
//! The pipeline runs in one direction:
//! `walk` -> `prefilter` / `mask` -> `parse` -> `analysis::Facts` -> `rules::*` (file, crate and
//! meta rules, `rules::Kind`) -> `precedence` -> `suppression` / `config` -> `fix` ->
//! `emit::*`, with `config` deciding what runs and `baseline` hiding known findings before
//! output. No module imports one above it (`tests/it/layering.rs`, with the back-edges left).
//! Cross-file rules read a crate index (`analysis::index`) joined in `driver` from small per-file
//! summaries (`analysis::clients`), one crate per nearest `Cargo.toml`; no syntax tree outlives
//! its file's pass. A directory run has two passes (`lint`): every file without the crate rules,
//! then whole-file summaries only for the crates where the first pass found a retry site, joined
//! one crate at a time; suppressions and configuration apply after both.
//!
//! Invariants (each has a test):
//! 1. Only the edge does IO: [`walk`], `cli` and `main`, `config::read_config_files` (finding and
//!    reading the config file), [`bounded`] (the one reader of every file that is not a linted
//!    source: config, baseline, manifests), `adopt` (baseline files, `--add-ignore` edits, progress),
//!    `fix_edge` (`--fix` writes, the git-dirty check, `--diff`) and the
//!    `cargo-timeoutlint` binary (`cargo metadata`). Every other module takes `&str` and returns
//!    data.
//! 2. No input panics the linter: each file's work is isolated on a big-stack worker behind a
//!    nesting-depth guard; a panic or parse failure becomes a [`diagnostic::FileError`], the run
//!    continues and the exit code becomes 2. The fuzz target (`fuzz/`) tries it, and 4, on
//!    arbitrary input.
//! 3. Output is deterministic: sorted by path, line, column, rule, whatever the thread count.
//! 4. The text prefilter never changes findings: it only skips files that contain none of the
//!    words the analysis and rules can match (`rules/apis.toml` plus each rule's triggers;
//!    `unused-suppression`'s trigger `timeoutlint` keeps every file with a suppression).
//! 5. The linter does not depend on the runtime crate; it names runtime APIs only as text.
//! 6. Fixtures are parsed, never compiled. The runtime crate is compiled and tested for real.
//! 7. A fix is a text edit from source slices that never reaches outside its statement; the
//!    fixed file parses again (or the round is rolled back, [`fix`]) and lints clean for that
//!    finding (fixture tests), and `tests/fix-proof` compiles after `--fix --unsafe-fixes`.
//! 8. A closed stdout or stderr never panics the binary: `eprintln!` / `eprint!` are shadowed
//!    crate-wide by [`console`]'s non-panicking writer, and stdout errors are handled in `cli`
//!    (`tests/it/edge.rs`).

/// `eprintln!` for this crate: std's, minus the panic when stderr is closed ([`console`]).
macro_rules! eprintln {
    () => {
        $crate::base::console::stderr(::std::format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::base::console::stderr(::std::format_args!($($arg)*), true)
    };
}

/// `eprint!` for this crate: std's, minus the panic when stderr is closed ([`console`]).
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::base::console::stderr(::std::format_args!($($arg)*), false)
    };
}

// The modules in the order of a run (rustfmt keeps the order of groups split by a comment).
// Shared data, below every stage.
pub mod base;

// The stages of a file's pass.
pub mod walk;

pub mod prefilter;

pub mod parse;

pub mod analysis;

pub mod rules;

pub mod precedence;

pub mod suppression;

pub mod config;

pub mod lint;

pub mod fix;

pub mod emit;

// One run, and the edge around it.
pub mod driver;

pub mod edge;
