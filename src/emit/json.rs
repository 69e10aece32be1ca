//! `--format json`: a versioned document for scripts and bots, documented in `docs/json.md`.
//!
//! Version 1: `{"version": 1, "tool": {name, version}, "diagnostics": [...], "errors": [...],
//! "summary": {...}}`. Positions are 1-based lines and Unicode-scalar columns with 0-based byte
//! offsets; paths are relative with `/` separators. Adding a field keeps version 1; renaming or
//! removing one, or changing a meaning, bumps it. Deliberately absent: SARIF's UTF-16 columns.

use serde_json::{json, Value};

use super::Report;
use crate::base::source::{SourceFile, Span};

/// Render the JSON document.
#[must_use]
pub fn render(report: &Report) -> String {
    let diagnostics: Vec<Value> = report
        .findings()
        .map(|(f, d)| {
            json!({
                "rule": d.rule.name,
                "url": super::rule_url(d.rule),
                "severity": d.severity.as_str(),
                "path": f.path,
                "range": range(f, d.primary),
                "message": d.message,
                "label": d.label,
                "notes": d.notes,
                "help": d.help,
                "related": d.related.iter().map(|r| json!({
                    "range": range(f, r.span),
                    "message": r.message,
                })).collect::<Vec<_>>(),
                "fix": d.fix.as_ref().map(|fx| json!({
                    "title": fx.title,
                    "applicability": fx.applicability.as_str(),
                    "edits": fx.edits.iter().map(|e| json!({
                        "range": range(f, e.span),
                        "replacement": e.replacement,
                    })).collect::<Vec<_>>(),
                })),
            })
        })
        .collect();
    let errors: Vec<Value> = report
        .errors
        .iter()
        .map(|e| json!({"path": e.path, "line": e.line, "column": e.column, "message": e.message}))
        .collect();
    let doc = json!({
        "version": 1,
        "tool": {"name": "timeoutlint", "version": super::VERSION},
        "diagnostics": diagnostics,
        "errors": errors,
        "summary": {
            "files_checked": report.files_checked,
            "files_skipped": report.files_skipped,
            "findings": report.finding_count(),
            "errors": report.errors.len(),
        },
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// A JSON range: start and end positions.
#[must_use]
pub fn range(f: &SourceFile, span: Span) -> Value {
    let (s, e) = (f.position(span.start), f.position(span.end));
    json!({
        "start": {"line": s.line, "column": s.col, "byte": s.byte},
        "end": {"line": e.line, "column": e.col, "byte": e.byte},
    })
}
