//! Output formats, one file each. Every emitter takes the same [`Report`] and returns text; the
//! caller decides where it goes (stdout or a report file, several in one run).
//!
//! Shared here: the report itself and the rule-doc URL. The facts about the file's crate that
//! cargo's JSON envelope needs ([`CrateTarget`]) are found by `walk` and passed in as data.
//! Deliberately absent: IO and any wire format.

pub mod concise;
pub mod fingerprint;
pub mod github;
pub mod gitlab;
pub mod human;
pub mod json;
pub mod junit;
pub mod rdjson;
pub mod rustc_json;
pub mod sarif;

use crate::base::diagnostic::{Diagnostic, FileError, RuleInfo};
use crate::base::source::SourceFile;
use crate::rules::Rule;
pub use crate::walk::crates::{encode_path, CrateTarget};

/// Everything a run found, sorted by path.
pub struct Report {
    /// Files with findings, with their findings (sorted).
    pub files: Vec<(SourceFile, Vec<Diagnostic>)>,
    /// Files that could not be analysed.
    pub errors: Vec<FileError>,
    /// How many files were analysed (parsed, or refused with an error).
    pub files_checked: usize,
    /// How many more the prefilter skipped unparsed: nothing in them is what a rule looks for.
    /// Not counted as checked: a file that does not parse may be among them.
    pub files_skipped: usize,
    /// The enabled rules, in registry order.
    pub rules: Vec<&'static Rule>,
}

impl Report {
    /// Total number of findings.
    #[must_use]
    pub fn finding_count(&self) -> usize {
        self.files.iter().map(|(_, d)| d.len()).sum()
    }

    /// How many findings `--fix` applies, and how many more `--fix --unsafe-fixes` does.
    #[must_use]
    pub fn fixable(&self) -> (usize, usize) {
        use crate::fix::Level;
        let mut n = (0, 0);
        for (_, d) in self.findings() {
            let Some(fix) = &d.fix else { continue };
            if Level::Safe.allows(fix.applicability) {
                n.0 += 1;
            } else if Level::Unsafe.allows(fix.applicability) {
                n.1 += 1;
            }
        }
        n
    }

    /// Every finding with its file.
    pub fn findings(&self) -> impl Iterator<Item = (&SourceFile, &Diagnostic)> {
        self.files
            .iter()
            .flat_map(|(f, ds)| ds.iter().map(move |d| (f, d)))
    }
}

/// The version printed in every format.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Where rule docs live online.
pub const DOCS_URL: &str = "https://github.com/timeoutlint/timeoutlint/blob/main/rules";

/// The doc URL of a rule.
#[must_use]
pub fn rule_url(rule: &RuleInfo) -> String {
    format!("{DOCS_URL}/{}.md", rule.name)
}
