//! timeoutlint: finds retry and timeout misconfigurations in Rust code that calls remote
//! services.
//!
//! A run, in the order of the modules below (and of `ls src`); no module imports one above it
//! (`tests/it/layering.rs`, which allows no exception):
//!
//! 1. [`base`]: the data every stage shares: a file's text and positions ([`base::source`]),
//!    findings and a rule's static description ([`base::diagnostic`]), the library knowledge
//!    of `rules/apis.toml` ([`base::apis`]), the one lexer of Rust text ([`base::lex`]) with
//!    the comment and literal regions it finds ([`base::regions`]), the `timeoutlint:` comments
//!    ([`base::directive`]) and the stderr writer ([`base::console`]).
//! 2. [`walk`]: the files to lint and their crates ([`walk::crates`]), and the bounded reader of
//!    every file that is not a linted source ([`walk::bounded`]).
//! 3. [`prefilter`]: whether a file can hold a finding at all, and [`prefilter::mask`], which
//!    blanks the items that cannot.
//! 4. [`parse`]: syn behind a nesting-depth guard.
//! 5. [`analysis`]: a file's facts ([`analysis::Facts`]: retry sites, sleeps, functions) and the
//!    crate index ([`analysis::index`]) joined from small per-file summaries
//!    ([`analysis::clients`]).
//! 6. [`rules`]: one folder per rule, one registry; a rule's kind ([`rules::Kind`]) says whether
//!    it checks a file, the crate index's answers, both, or the other rules' findings.
//! 7. [`precedence`]: where two rules report one problem, the owner's finding is kept, among the
//!    rules that ran.
//! 8. [`suppression`] and [`config`]: suppression comments silence findings; configuration says
//!    what runs, at which level, and where it is ignored.
//! 9. [`lint`]: one file's pass through the stages above.
//! 10. [`fix`]: the pure fix engine (applying fixes, the loop fixes' builders).
//! 11. [`emit`]: the output formats.
//! 12. [`driver`]: one run: the walk, pass one over every file (masked, crate rules left out),
//!     pass two joining only the crates where pass one found a retry site, one crate at a time
//!     (no syntax tree outlives its file's pass), then finishing every file; the per-pass reads
//!     and parses are listed there.
//! 13. [`edge`]: arguments, output and the exit code ([`edge::cli`]), the adoption workflow
//!     ([`edge::adopt`], [`edge::baseline`]), `--fix` writes ([`edge::fix`]), the language
//!     server ([`edge::server`]: one buffer linted as `--stdin-filename` lints it) and `--watch`
//!     ([`edge::watch`]: the ordinary run again after each change).
//!
//! Invariants (each has a test):
//! 1. Only the edge does IO: [`walk`] (the files it lints, and [`walk::bounded`] for config,
//!    baseline and manifests), [`config::read_config_files`] (finding and reading the config
//!    file), [`edge`] ([`edge::cli`] with `main`, [`edge::adopt`]: baseline files,
//!    `--add-ignore` edits and progress; [`edge::fix`]: `--fix` writes, the git-dirty check,
//!    `--diff`; [`edge::server`]: stdio; [`edge::watch`]: file events), [`walk::crates::edition_of`] (the crate's edition,
//!    which [`parse`] asks only for a file syn rejected: 2015/2018 code is parsed again), and the
//!    `cargo-timeoutlint` binary (`cargo metadata`, then it runs `timeoutlint`). Every other module takes
//!    `&str` and returns data (`.clippy.toml` bans the file-writing calls elsewhere).
//! 2. No input panics the linter: each file's work is isolated on a big-stack worker
//!    ([`driver`]) behind [`parse`]'s nesting-depth guard; a panic or parse failure becomes a
//!    [`base::diagnostic::FileError`], the run continues and the exit code becomes 2. The fuzz
//!    target (`fuzz/`) tries it, and 4, on arbitrary input.
//! 3. Output is deterministic: sorted by path, line, column, rule, whatever the thread count.
//! 4. The [`prefilter`] never changes findings: it only skips files, or with [`prefilter::mask`]
//!    items, that contain none of the words the analysis and rules can match (`rules/apis.toml`
//!    plus each rule's triggers; `unused-suppression`'s trigger `timeoutlint:` keeps every file
//!    with a suppression).
//! 5. The linter does not depend on the runtime crate; it names runtime APIs only as text.
//! 6. Fixtures are parsed, never compiled. The runtime crate is compiled and tested for real.
//! 7. A fix is a text edit from source slices that never reaches outside its statement; the
//!    fixed file parses again (or the round is rolled back, [`edge::fix`]) and lints clean for
//!    that finding (fixture tests), and `tests/fix-proof` compiles after `--fix --unsafe-fixes`.
//! 8. A closed stdout or stderr never panics the binary: `eprintln!` / `eprint!` are shadowed
//!    crate-wide by [`base::console`]'s non-panicking writer, and stdout errors are handled in
//!    [`edge::cli`] (`tests/it/edge.rs`).

/// `eprintln!` for this crate: std's, minus the panic when stderr is closed ([`base::console`]).
macro_rules! eprintln {
    () => {
        $crate::base::console::stderr(::std::format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::base::console::stderr(::std::format_args!($($arg)*), true)
    };
}

/// `eprint!` for this crate: std's, minus the panic when stderr is closed ([`base::console`]).
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
