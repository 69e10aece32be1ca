//! What a rule reports: plain data, with no wire format.
//!
//! Each emitter owns its own serialisation (deliberately no `Serialize` here), so changing the
//! SARIF shape can never change the JSON shape by accident.

use crate::rules::Rule;
use crate::source::Span;

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
    pub rule: &'static Rule,
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
    pub fn new(rule: &'static Rule, primary: Span, message: impl Into<String>) -> Self {
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
