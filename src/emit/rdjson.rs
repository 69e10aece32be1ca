//! reviewdog's Diagnostic Format as one JSON document (`rdjson`, the `DiagnosticResult`
//! message), for `reviewdog -f=rdjson`: review comments on a pull request, with suggested
//! changes.
//!
//! Positions are what the format defines: 1-based lines and 1-based columns counted in UTF-8
//! bytes, the end exclusive. A fix without a placeholder to fill in becomes one suggestion: the
//! text from its first edit to its last with every edit applied (several suggestions, accepted
//! one at a time, would leave the code broken in between). File errors are `ERROR` diagnostics
//! without a range.

use serde_json::{json, Value};

use super::{rule_url, Report};
use crate::base::diagnostic::{Applicability, Fix, Severity};
use crate::base::source::{SourceFile, Span};

/// Render the `DiagnosticResult`.
#[must_use]
pub fn render(report: &Report) -> String {
    let mut diagnostics: Vec<Value> = Vec::new();
    for (file, d) in report.findings() {
        let mut v = json!({
            "message": d.message,
            "location": {"path": file.path, "range": range(file, d.primary)},
            "severity": severity(d.severity),
            "code": {"value": d.rule.name, "url": rule_url(d.rule)},
        });
        if let Some(fix) = d
            .fix
            .as_ref()
            .filter(|f| f.applicability != Applicability::HasPlaceholders)
        {
            if let Some((span, text)) = suggestion(file, fix) {
                v["suggestions"] = json!([{"range": range(file, span), "text": text}]);
            }
        }
        diagnostics.push(v);
    }
    for e in &report.errors {
        let mut location = json!({"path": e.path});
        if let Some(line) = e.line {
            location["range"] = json!({"start": {"line": line}});
        }
        diagnostics.push(json!({
            "message": format!("could not be analysed: {}", e.message),
            "location": location,
            "severity": "ERROR",
        }));
    }
    let doc = json!({
        "source": {"name": "timeoutlint", "url": "https://github.com/timeoutlint/timeoutlint"},
        "diagnostics": diagnostics,
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// The fix as one replacement: the span from its first edit to its last, and that text with
/// the edits applied. `None` for a fix without edits or with edits out of the file.
fn suggestion(file: &SourceFile, fix: &Fix) -> Option<(Span, String)> {
    let mut edits: Vec<_> = fix.edits.iter().collect();
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    let start = edits.first()?.span.start;
    let end = edits.iter().map(|e| e.span.end).max()?;
    let mut text = String::new();
    let mut at = start;
    for e in edits {
        text.push_str(file.text.get(at..e.span.start)?);
        text.push_str(&e.replacement);
        at = e.span.end;
    }
    text.push_str(file.text.get(at..end)?);
    Some((Span::new(start, end), text))
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "ERROR",
        Severity::Warning => "WARNING",
        Severity::Note => "INFO",
    }
}

/// A range in reviewdog's units: byte columns from 1, end exclusive.
fn range(file: &SourceFile, span: Span) -> Value {
    let at = |byte: usize| {
        let p = file.position(byte);
        let line_start = file.line_span(p.line - 1).start;
        json!({"line": p.line, "column": p.byte - line_start + 1})
    };
    json!({"start": at(span.start), "end": at(span.end)})
}
