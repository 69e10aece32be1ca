//! The data every stage shares, below the whole pipeline: a file's text and its position
//! arithmetic ([`source`]), what a rule reports and how edits become text ([`diagnostic`]), the
//! library knowledge of `rules/apis.toml` ([`apis`]), the one lexer of Rust text ([`lex`]) and
//! where the comments and literals of a text are ([`regions`]), the `timeoutlint:` comments of
//! a text ([`directive`]), and the stderr writer that a closed pipe cannot crash ([`console`]).
//!
//! Nothing here knows a stage: a module in `base` imports only `base`.

pub mod apis;
pub mod console;
pub mod diagnostic;
pub mod directive;
pub mod lex;
pub mod regions;
pub mod source;
