//! Output formats, one file each. Every emitter takes the same [`Report`] and returns text; the
//! caller decides where it goes (stdout or a report file, several in one run).
//!
//! Shared here: the report itself, the facts about the file's crate that cargo's JSON envelope
//! needs ([`CrateTarget`], found by `walk` and passed in as data), and [`apply_edits`], the one
//! pure way to turn edits into text. Deliberately absent: IO and any wire format.

pub mod concise;
pub mod crates;
pub mod fingerprint;
pub mod github;
pub mod human;
pub mod json;
pub mod rustc_json;
pub mod sarif;

use crate::diagnostic::{Diagnostic, Edit, FileError};
use crate::rules::Rule;
use crate::source::SourceFile;

/// Everything a run found, sorted by path.
pub struct Report {
    /// Files with findings, with their findings (sorted).
    pub files: Vec<(SourceFile, Vec<Diagnostic>)>,
    /// Files that could not be analysed.
    pub errors: Vec<FileError>,
    /// How many files were looked at.
    pub files_checked: usize,
    /// The enabled rules, in registry order.
    pub rules: Vec<&'static Rule>,
}

impl Report {
    /// Total number of findings.
    #[must_use]
    pub fn finding_count(&self) -> usize {
        self.files.iter().map(|(_, d)| d.len()).sum()
    }

    /// Every finding with its file.
    pub fn findings(&self) -> impl Iterator<Item = (&SourceFile, &Diagnostic)> {
        self.files
            .iter()
            .flat_map(|(f, ds)| ds.iter().map(move |d| (f, d)))
    }
}

/// The cargo package and target a file belongs to, as cargo's `compiler-message` names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateTarget {
    /// cargo's package id spec, e.g. `path+file:///work/app#0.1.0`.
    pub package_id: String,
    /// Absolute path of the package's `Cargo.toml`.
    pub manifest_path: String,
    /// `lib`, `bin`, `test`, `example`, `bench` or `custom-build`.
    pub kind: String,
    /// `lib` for libraries, `bin` for everything else.
    pub crate_type: String,
    /// The target's name (`snake_case` for a library).
    pub name: String,
    /// Absolute path of the target's root file.
    pub src_path: String,
    /// The package's edition.
    pub edition: String,
}

/// The version printed in every format.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Where rule docs live online.
pub const DOCS_URL: &str = "https://github.com/timeoutlint/timeoutlint/blob/main/rules";

/// The doc URL of a rule.
#[must_use]
pub fn rule_url(rule: &Rule) -> String {
    format!("{DOCS_URL}/{}.md", rule.name)
}

/// A path as the path part of a URI: everything but unreserved characters, `/` and a drive
/// letter's `:` is percent-encoded, like cargo's package ids and what SARIF validators accept.
#[must_use]
pub fn encode_path(path: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(path.len());
    for (i, b) in path.bytes().enumerate() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/')
            || (b == b':' && i == 1);
        if keep {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// `text` with `edits` applied. Edits are taken in order of position; one that overlaps an
/// edit already taken, or that does not fall on character boundaries inside the text, is
/// skipped (rustfix does the same with conflicting suggestions), so the result is always valid
/// UTF-8 and never depends on the order the edits were given in.
#[must_use]
pub fn apply_edits(text: &str, edits: &[Edit]) -> String {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    // Stable: two insertions at one point keep their given order.
    sorted.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for e in sorted {
        let (start, end) = (e.span.start, e.span.end);
        let valid = start <= end
            && end <= text.len()
            && text.is_char_boundary(start)
            && text.is_char_boundary(end);
        if !valid || start < done {
            continue;
        }
        out.push_str(&text[done..start]);
        out.push_str(&e.replacement);
        done = end;
    }
    out.push_str(&text[done..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    fn edit(start: usize, end: usize, with: &str) -> Edit {
        Edit {
            span: Span::new(start, end),
            replacement: with.into(),
        }
    }

    #[test]
    fn edits_apply_in_position_order_and_overlaps_are_skipped() {
        let text = "let x = a + b;";
        let edits = [edit(12, 13, "c"), edit(8, 9, "(a)"), edit(8, 13, "zzz")];
        assert_eq!(apply_edits(text, &edits), "let x = (a) + c;");
        assert_eq!(
            apply_edits(text, &[edit(0, 0, "// hi\n")]),
            "// hi\nlet x = a + b;"
        );
        assert_eq!(
            apply_edits("é", &[edit(1, 2, "e")]),
            "é",
            "not a char boundary"
        );
        assert_eq!(apply_edits("ab", &[edit(1, 9, "")]), "ab", "out of bounds");
    }
}
