//! SARIF 2.1.0 for GitHub code scanning and review bots.
//!
//! Regions are in UTF-16 code units (`columnKind: utf16CodeUnits`, what GitHub assumes) with an
//! exclusive end column; URIs are relative to `%SRCROOT%`. Per-file errors become tool execution
//! notifications so the upload still succeeds.

use serde_json::{json, Value};

use super::{rule_url, Report};
use crate::source::{SourceFile, Span};

/// Render the SARIF log.
#[must_use]
pub fn render(report: &Report) -> String {
    let rules: Vec<Value> = report
        .rules
        .iter()
        .map(|r| {
            json!({
                "id": r.name,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": truncate(&section(r.doc, "What it does"), 1024)},
                "help": {"text": r.doc, "markdown": r.doc},
                "helpUri": rule_url(r),
                "defaultConfiguration": {"level": r.default_severity.as_str()},
                "properties": {"tags": ["reliability", "retry"], "precision": "high", "problem.severity": r.default_severity.as_str()},
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings()
        .map(|(f, d)| {
            let index = report.rules.iter().position(|r| r.name == d.rule.name);
            json!({
                "ruleId": d.rule.name,
                "ruleIndex": index,
                "level": d.severity.as_str(),
                "message": {"text": d.message},
                "locations": [location(f, d.primary, None)],
                "relatedLocations": d.related.iter().enumerate().map(|(i, r)| location(f, r.span, Some((i + 1, &r.message)))).collect::<Vec<_>>(),
            })
        })
        .collect();
    let notifications: Vec<Value> = report
        .errors
        .iter()
        .map(|e| {
            let mut region = json!({});
            if let Some(l) = e.line {
                region = json!({"startLine": l, "startColumn": e.column.unwrap_or(1)});
            }
            json!({
                "level": "error",
                "message": {"text": e.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": e.path, "uriBaseId": "%SRCROOT%"},
                    "region": region,
                }}],
            })
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "timeoutlint",
                "version": super::VERSION,
                "semanticVersion": super::VERSION,
                "informationUri": "https://github.com/timeoutlint/timeoutlint",
                "rules": rules,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": "./"}},
            "columnKind": "utf16CodeUnits",
            "results": results,
            "invocations": [{
                "executionSuccessful": report.errors.is_empty(),
                "toolExecutionNotifications": notifications,
            }],
        }],
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

fn location(f: &SourceFile, span: Span, related: Option<(usize, &String)>) -> Value {
    let (s, e) = (f.position(span.start), f.position(span.end));
    let mut loc = json!({"physicalLocation": {
        "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": s.line, "startColumn": s.col16, "endLine": e.line, "endColumn": e.col16},
    }});
    if let Some((id, msg)) = related {
        loc["id"] = json!(id);
        loc["message"] = json!({"text": msg});
    }
    loc
}

/// The text of a `## heading` section of a rule doc.
#[must_use]
pub fn section(doc: &str, heading: &str) -> String {
    let marker = format!("## {heading}");
    let Some(start) = doc.find(&marker) else {
        return String::new();
    };
    let body = &doc[start + marker.len()..];
    let end = body.find("\n## ").unwrap_or(body.len());
    body[..end].trim().replace('\n', " ")
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max - 3;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}
