//! The rule registry: one line per rule, in the order of the docs and SARIF `rules[]`.
//!
//! A rule is a `static RULE: Rule` in its own file with a `check` function over the shared
//! [`Facts`]; it never prints, touches the file system, or calls another rule. Adding a rule is
//! its file, its doc, its fixture, its snapshot and one line in `registry!` below.

use crate::analysis::index::CrateIndex;
use crate::analysis::Facts;
use crate::apis::Apis;
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::SourceFile;

/// Everything a rule may look at for one file.
pub struct Context<'a> {
    /// The file's text and positions.
    pub src: &'a SourceFile,
    /// The parsed file.
    pub ast: &'a syn::File,
    /// The shared semantic facts (retry sites, sleeps, functions).
    pub facts: &'a Facts,
    /// Library knowledge from `rules/apis.toml` plus configuration.
    pub apis: &'a Apis,
    /// Cross-file answers for the file's crate (just this file when it is linted alone).
    pub krate: &'a CrateIndex,
}

/// A rule's static description.
pub struct Rule {
    /// Kebab-case name: the SARIF `ruleId` and the key in configuration.
    pub name: &'static str,
    /// One sentence: SARIF `shortDescription`, the `rules` table.
    pub summary: &'static str,
    /// The user doc, `rules/<name>.md`.
    pub doc: &'static str,
    /// Runs without being selected.
    pub default_enabled: bool,
    /// Level before configuration.
    pub default_severity: Severity,
    /// Whether the rule may attach a fix.
    pub fixable: bool,
    /// Words one of which (ASCII case-insensitive) every file that can hold a finding contains;
    /// the prefilter skips parsing files with none of any enabled rule's words.
    pub triggers: &'static [&'static str],
    /// The check.
    pub check: fn(&Context) -> Vec<Diagnostic>,
}

impl Rule {
    /// The rule's snake name, as used in cargo-JSON codes.
    #[must_use]
    pub fn snake_name(&self) -> String {
        self.name.replace('-', "_")
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

macro_rules! registry {
    ($($module:ident),* $(,)?) => {
        $(mod $module;)*
        /// Every rule, in registry order.
        pub static ALL: &[&Rule] = &[$(&$module::RULE),*];
    };
}

registry! {
    unbounded_retry,
    uncancellable_backoff,
    blocking_sleep_in_async,
    client_timeout_in_retry,
    attempt_timeout_without_budget,
    body_reused_across_attempts,
    non_idempotent_retry_without_key,
    retry_after_uncapped,
    retry_non_transient_status,
    nested_retry,
    backoff_without_jitter,
    unused_suppression,
    suppression_without_reason,
}

/// Rules whose findings come from the crate index: when a whole crate is linted, their per-file
/// findings are replaced by [`crate_findings`] once every file of the crate is summarised.
pub static CRATE_RULES: &[&Rule] = &[
    &client_timeout_in_retry::RULE,
    &attempt_timeout_without_budget::RULE,
];

/// The findings of the enabled crate-level rules whose primary location is in `src`. The file
/// is parsed again only when it holds one (its fixes rewrite loops by their syntax).
#[must_use]
pub fn crate_findings(index: &CrateIndex, src: &SourceFile, enabled: &[&Rule]) -> Vec<Diagnostic> {
    let on = |r: &Rule| enabled.iter().any(|e| e.name == r.name);
    let ast = if index.has_findings_in(&src.path) {
        crate::parse::parse(src).ok()
    } else {
        None
    };
    let mut out = Vec::new();
    if on(&client_timeout_in_retry::RULE) {
        out.extend(client_timeout_in_retry::from_index(
            index,
            src,
            ast.as_ref(),
        ));
    }
    if on(&attempt_timeout_without_budget::RULE) {
        out.extend(attempt_timeout_without_budget::from_index(
            index,
            src,
            ast.as_ref(),
        ));
    }
    out
}

/// A duration for a message: whole seconds as `30s`, other seconds to a tenth (`1.5s`), and
/// below a second in milliseconds (`50ms`, which a tenth of a second would round to `0.1s`).
pub(crate) fn duration_text(secs: f64) -> String {
    let whole = |x: f64| (x - x.round()).abs() < 1e-6;
    if secs < 1.0 {
        let ms = secs * 1000.0;
        if whole(ms) {
            format!("{ms:.0}ms")
        } else {
            format!("{ms:.1}ms")
        }
    } else if whole(secs) {
        format!("{secs:.0}s")
    } else {
        format!("{secs:.1}s")
    }
}

/// Look a rule up by its kebab name.
#[must_use]
pub fn by_name(name: &str) -> Option<&'static Rule> {
    ALL.iter().copied().find(|r| r.name == name)
}

#[cfg(test)]
mod tests {
    use super::duration_text;

    #[test]
    fn durations_read_as_written() {
        assert_eq!(duration_text(30.0), "30s");
        assert_eq!(duration_text(1.5), "1.5s");
        assert_eq!(duration_text(0.05), "50ms");
        assert_eq!(duration_text(0.0125), "12.5ms");
        assert_eq!(duration_text(150.0), "150s");
    }
}
