//! What a rule reports: plain data, with no wire format.
//!
//! Each emitter owns its own serialisation (deliberately no `Serialize` here), so changing the
//! SARIF shape can never change the JSON shape by accident.
//!
//! A finding names its rule by the rule's [`RuleInfo`], its static description, and not by the
//! registry's `rules::Rule`, whose kind holds the checks: the data every stage shares stays below
//! the rules. A stage that needs a finding's checks looks the rule up in `rules::ALL` by name.

use crate::base::source::Span;

/// How loudly a finding is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Informational.
    Note,
    /// The default for every rule.
    Warning,
    /// Raised by configuration.
    Error,
}

impl Severity {
    /// The lowercase name used in every output format.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// rustc's applicability levels, shared by `--fix`, SARIF and cargo-JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Applicability {
    /// Safe to apply without review (`--fix`).
    MachineApplicable,
    /// Probably right; needs review (`--unsafe-fixes`).
    MaybeIncorrect,
    /// Contains placeholders the user must fill in.
    HasPlaceholders,
    /// Shown, never applied.
    Unspecified,
}

impl Applicability {
    /// rustc's spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::MachineApplicable => "MachineApplicable",
            Applicability::MaybeIncorrect => "MaybeIncorrect",
            Applicability::HasPlaceholders => "HasPlaceholders",
            Applicability::Unspecified => "Unspecified",
        }
    }
}

/// A rule's static description: what a finding, the docs, SARIF `rules[]` and configuration
/// know of it. The registry's `rules::Rule` adds what it reads (triggers, its check).
pub struct RuleInfo {
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
}

impl RuleInfo {
    /// The rule's snake name, as used in cargo-JSON codes.
    #[must_use]
    pub fn snake_name(&self) -> String {
        self.name.replace('-', "_")
    }
}

impl std::fmt::Debug for RuleInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// One text replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// Bytes replaced.
    pub span: Span,
    /// New text.
    pub replacement: String,
}

/// A suggested change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, imperative ("race the sleep against the token").
    pub title: String,
    /// How safe it is to apply unreviewed.
    pub applicability: Applicability,
    /// Non-overlapping edits within one file.
    pub edits: Vec<Edit>,
}

/// A secondary place with its label ("the retry loop").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related {
    /// Where.
    pub span: Span,
    /// What it is.
    pub message: String,
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// The rule that fired.
    pub rule: &'static RuleInfo,
    /// Effective severity.
    pub severity: Severity,
    /// Where the caret points.
    pub primary: Span,
    /// Label under the caret.
    pub label: String,
    /// One line, lowercase, no trailing period.
    pub message: String,
    /// Extra facts (the worst-case arithmetic).
    pub notes: Vec<String>,
    /// What to do instead, naming the runtime API.
    pub help: Option<String>,
    /// Secondary places.
    pub related: Vec<Related>,
    /// A suggested change, if one is sound.
    pub fix: Option<Fix>,
}

impl Diagnostic {
    /// A warning with a message and the given primary span.
    #[must_use]
    pub fn new(rule: &'static RuleInfo, primary: Span, message: impl Into<String>) -> Self {
        Self {
            rule,
            severity: Severity::Warning,
            primary,
            label: String::new(),
            message: message.into(),
            notes: Vec::new(),
            help: None,
            related: Vec::new(),
            fix: None,
        }
    }

    /// Set the label under the caret.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Add a note.
    #[must_use]
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Set the help line.
    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Add a secondary place.
    #[must_use]
    pub fn related(mut self, span: Span, message: impl Into<String>) -> Self {
        self.related.push(Related {
            span,
            message: message.into(),
        });
        self
    }

    /// Attach a fix.
    #[must_use]
    pub fn fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }
}

/// A file that could not be analysed: reported, and the run goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// Display path.
    pub path: String,
    /// 1-based line and column, when the error has a place.
    pub line: Option<usize>,
    /// 1-based column.
    pub column: Option<usize>,
    /// What went wrong.
    pub message: String,
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
    use crate::base::source::Span;

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
