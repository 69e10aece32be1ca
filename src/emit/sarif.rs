//! SARIF 2.1.0 for GitHub code scanning and review bots (reviewdog), built to the fields GitHub's
//! ingestion and the SARIF Multitool's `Gh;Sarif` rules check.
//!
//! Regions are in UTF-16 code units (`run.columnKind: utf16CodeUnits`, what GitHub assumes) with
//! an exclusive end column; URIs are relative to `%SRCROOT%` (left undefined so GitHub resolves
//! them against the checkout). Each result carries GitHub's own `primaryLocationLineHash`. Fixes
//! always have `insertedContent` (reviewdog skips a replacement without it). Per-file errors
//! become tool execution notifications, so the upload still succeeds. Deliberately absent:
//! suppressed findings (GitHub would show them as open alerts), `security-severity` (these are
//! reliability findings), and absolute paths to the checkout.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::{encode_path, fingerprint, rule_url, Report};
use crate::base::diagnostic::{Diagnostic, Fix, Severity};
use crate::base::source::{SourceFile, Span};
use crate::rules::Rule;

/// The most results GitHub accepts in one run; the rest are dropped with a notification.
pub const MAX_RESULTS: usize = 25_000;
/// GitHub rejects longer `shortDescription` / `fullDescription` texts.
const MAX_DESCRIPTION: usize = 1024;

/// Render the SARIF log.
#[must_use]
pub fn render(report: &Report) -> String {
    let rules: Vec<Value> = report.rules.iter().map(|r| rule(r)).collect();
    let mut results = Vec::new();
    for (file, diags) in &report.files {
        let hashes = fingerprint::line_hashes(&file.text);
        for d in diags {
            if results.len() == MAX_RESULTS {
                break;
            }
            results.push(result(report, file, d, &hashes));
        }
    }
    let mut notifications: Vec<Value> = report.errors.iter().map(notification).collect();
    let dropped = report.finding_count().saturating_sub(MAX_RESULTS);
    if dropped > 0 {
        notifications.push(json!({
            "level": "warning",
            "message": {"text": format!(
                "{dropped} finding{} left out: GitHub accepts at most {MAX_RESULTS} results per run.",
                if dropped == 1 { " was" } else { "s were" }
            )},
        }));
    }
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

fn rule(r: &Rule) -> Value {
    let full = format!(
        "{} {}",
        section(r.doc, "What it does"),
        section(r.doc, "Why is this bad?")
    );
    json!({
        "id": r.name,
        // The Multitool wants `name` to differ from the opaque `id`: the PascalCase form.
        "name": pascal_case(r.name),
        "shortDescription": {"text": truncate(r.summary, MAX_DESCRIPTION)},
        "fullDescription": {"text": truncate(&full, MAX_DESCRIPTION)},
        "help": {"text": plain_text(r.doc), "markdown": r.doc},
        "helpUri": rule_url(r),
        "defaultConfiguration": {"level": level(r.default_severity)},
        "properties": {
            "tags": ["reliability", "retry", "timeout"],
            // Default rules are tuned for no false positives; opt-in (pedantic) ones are not.
            "precision": if r.default_enabled { "high" } else { "medium" },
            "problem.severity": match r.default_severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "recommendation",
            },
        },
    })
}

fn result(report: &Report, file: &SourceFile, d: &Diagnostic, hashes: &[String]) -> Value {
    let mut text = escape_brackets(&d.message);
    if !d.related.is_empty() {
        // Embedded links make GitHub show the related places inline in the alert.
        let links: Vec<String> = d
            .related
            .iter()
            .enumerate()
            .map(|(i, r)| format!("[{}]({})", escape_brackets(&r.message), i + 1))
            .collect();
        let _ = write!(text, " ({})", links.join(", "));
    }
    for note in &d.notes {
        let _ = write!(text, "\nnote: {}", escape_brackets(note));
    }
    if let Some(help) = &d.help {
        let _ = write!(text, "\nhelp: {}", escape_brackets(help));
    }
    let start_line = file.position(d.primary.start).line;
    let mut out = Map::new();
    out.insert("ruleId".into(), json!(d.rule.name));
    if let Some(i) = report.rules.iter().position(|r| r.name == d.rule.name) {
        out.insert("ruleIndex".into(), json!(i));
    }
    out.insert("level".into(), json!(level(d.severity)));
    out.insert("message".into(), json!({ "text": text }));
    let mut primary = location(file, d.primary);
    primary["physicalLocation"]["region"]["snippet"] = json!({"text": file.slice(d.primary)});
    out.insert("locations".into(), json!([primary]));
    if !d.related.is_empty() {
        let related: Vec<Value> = d
            .related
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut loc = location(file, r.span);
                loc["id"] = json!(i + 1);
                loc["message"] = json!({ "text": r.message });
                loc
            })
            .collect();
        out.insert("relatedLocations".into(), json!(related));
    }
    if let Some(hash) = hashes.get(start_line - 1) {
        out.insert(
            "partialFingerprints".into(),
            json!({ "primaryLocationLineHash": hash }),
        );
    }
    if let Some(fix) = &d.fix {
        out.insert("fixes".into(), json!([self::fix(file, fix)]));
    }
    Value::Object(out)
}

fn fix(file: &SourceFile, fix: &Fix) -> Value {
    let replacements: Vec<Value> = fix
        .edits
        .iter()
        .map(|e| {
            json!({
                "deletedRegion": region(file, e.span),
                "insertedContent": {"text": e.replacement},
            })
        })
        .collect();
    json!({
        "description": {"text": fix.title},
        "artifactChanges": [{
            "artifactLocation": artifact(&file.path),
            "replacements": replacements,
        }],
        "properties": {"applicability": fix.applicability.as_str()},
    })
}

fn notification(e: &crate::base::diagnostic::FileError) -> Value {
    let mut n = json!({
        "level": "error",
        "message": {"text": format!("{}: {}", e.path, e.message)},
    });
    if !e.path.is_empty() {
        let mut physical = json!({ "artifactLocation": artifact(&e.path) });
        if let Some(line) = e.line {
            physical["region"] = json!({"startLine": line, "startColumn": e.column.unwrap_or(1)});
        }
        n["locations"] = json!([{ "physicalLocation": physical }]);
    }
    n
}

fn location(file: &SourceFile, span: Span) -> Value {
    json!({"physicalLocation": {
        "artifactLocation": artifact(&file.path),
        "region": region(file, span),
    }})
}

fn region(file: &SourceFile, span: Span) -> Value {
    let (s, e) = (file.position(span.start), file.position(span.end));
    json!({"startLine": s.line, "startColumn": s.col16, "endLine": e.line, "endColumn": e.col16})
}

/// A relative path under `%SRCROOT%`; a path outside the working directory stays absolute.
fn artifact(path: &str) -> Value {
    let absolute = path.starts_with('/') || path.as_bytes().get(1) == Some(&b':');
    if absolute {
        let sep = if path.starts_with('/') { "" } else { "/" };
        json!({ "uri": format!("file://{sep}{}", encode_path(path)) })
    } else {
        json!({"uri": encode_path(path), "uriBaseId": "%SRCROOT%"})
    }
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// SARIF message text treats `[text](n)` as a link; literal brackets are escaped with `\`.
fn escape_brackets(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn pascal_case(kebab: &str) -> String {
    kebab
        .split('-')
        .map(|w| {
            let mut cs = w.chars();
            cs.next().map_or(String::new(), |c| {
                c.to_uppercase().chain(cs).collect::<String>()
            })
        })
        .collect()
}

/// The doc as plain text: heading marks and code fences dropped, code kept indented.
fn plain_text(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut in_code = false;
    for line in doc.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let line = if in_code {
            format!("    {line}")
        } else {
            line.trim_start_matches('#').trim_start().to_string()
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The text of a `## heading` section of a rule doc, on one line.
#[must_use]
pub fn section(doc: &str, heading: &str) -> String {
    let marker = format!("## {heading}");
    let Some(start) = doc.find(&marker) else {
        return String::new();
    };
    let body = &doc[start + marker.len()..];
    // A `###` sub-heading starts the details; the summary is what comes before it.
    let end = [body.find("\n## "), body.find("\n### ")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(body.len());
    body[..end].split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` characters, cut at a word with an ellipsis.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max - 1).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_cut_at_a_word_within_the_limit() {
        let long = "word ".repeat(400);
        let t = truncate(&long, MAX_DESCRIPTION);
        assert!(t.chars().count() <= MAX_DESCRIPTION);
        assert!(t.ends_with("word…"));
        assert_eq!(truncate("short", 10), "short");
    }

    #[test]
    fn uris_are_encoded_and_names_differ_from_ids() {
        assert_eq!(encode_path("src/a b#c.rs"), "src/a%20b%23c.rs");
        assert_eq!(artifact("/tmp/x.rs")["uri"], "file:///tmp/x.rs");
        assert_eq!(artifact("C:/x.rs")["uri"], "file:///C:/x.rs");
        assert_eq!(pascal_case("unbounded-retry"), "UnboundedRetry");
        assert_eq!(escape_brackets("v[0]"), "v\\[0\\]");
    }
}
