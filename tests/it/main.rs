//! The one integration-test binary: every area is a module, every module calls the linter only
//! through its `check` helper.

// Tests build their inputs on disk; the IO guard is for the linter's own modules.
#![allow(clippy::disallowed_methods)]

mod adopt;
mod catalogue;
mod cli;
mod edge;
mod editions;
mod emit;
mod fixes;
mod fixtures;
mod helpers;
mod independence;
mod layering;
mod precedence;
mod recipes;
mod safe_writes;
mod scaling;
mod server;
mod support;
mod test_code;
mod units;
mod wrappers;
