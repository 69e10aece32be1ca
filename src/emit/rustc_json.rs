//! `--message-format=json`: one JSON object per line, as `cargo check --message-format=json`
//! prints them, so rust-analyzer shows findings and quick fixes next to rustc's and clippy's.
//!
//! Each finding is a rustc diagnostic in cargo's `compiler-message` envelope, with the real
//! package id and target of the file's crate: with bare diagnostics rust-analyzer would clear
//! the rest of the workspace's diagnostics when it runs us together with `cargo check`. Spans
//! carry 0-based byte offsets into the file as it is on disk, 1-based columns in Unicode scalar
//! values, and the mandatory `text` lines (rust-analyzer silently drops a diagnostic without
//! them). A fix is a `help` child whose spans carry `suggested_replacement` and rustc's
//! applicability, which is what rustfix and rust-analyzer's quick fixes read. Files outside any
//! cargo package get bare diagnostics, which is what rustc itself prints. Deliberately absent:
//! cargo's `build-finished` line (the real cargo run prints its own).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{human, rule_url, CrateTarget, Report};
use crate::base::diagnostic::{Diagnostic, Edit, Fix};
use crate::base::source::{SourceFile, Span};

/// What a diagnostic's `rendered` field holds, as cargo's `--message-format` spellings pick it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rendered {
    /// rustc's human text (`json`).
    #[default]
    Human,
    /// The same with ANSI colours (`json-diagnostic-rendered-ansi`, rust-analyzer's setting).
    Ansi,
    /// One line, `path:line:col: level[code]: message` (`json-diagnostic-short`).
    Short,
}

/// Render one line per finding, then one per file error. `crates` maps a display path to the
/// target it belongs to.
#[must_use]
pub fn render(report: &Report, crates: &BTreeMap<String, CrateTarget>) -> String {
    render_with(report, crates, Rendered::Human)
}

/// [`render`] with the `rendered` text of each finding in the given form.
#[must_use]
pub fn render_with(
    report: &Report,
    crates: &BTreeMap<String, CrateTarget>,
    rendered: Rendered,
) -> String {
    let mut out = String::new();
    for (file, d) in report.findings() {
        let text = match rendered {
            Rendered::Human => human::render_one(file, d),
            Rendered::Ansi => human::render_one_in(file, d, true),
            Rendered::Short => {
                let p = file.position(d.primary.start);
                format!(
                    "{}:{}:{}: {}[{}]: {}\n",
                    file.path,
                    p.line,
                    p.col,
                    d.severity.as_str(),
                    d.rule.name,
                    d.message
                )
            }
        };
        push_line(&mut out, crates.get(&file.path), diagnostic(file, d, &text));
    }
    for e in &report.errors {
        let place = match (e.line, e.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", e.path),
            _ => e.path.clone(),
        };
        let message = json!({
            "$message_type": "diagnostic",
            "message": format!("{place}: {}", e.message),
            "code": null,
            "level": "error",
            "spans": [],
            "children": [],
            "rendered": format!("error: {place}: {}\n", e.message),
        });
        push_line(&mut out, crates.get(&e.path), message);
    }
    out
}

fn push_line(out: &mut String, target: Option<&CrateTarget>, message: Value) {
    let line = match target {
        Some(t) => json!({
            "reason": "compiler-message",
            "package_id": t.package_id,
            "manifest_path": t.manifest_path,
            "target": {
                "kind": [t.kind],
                "crate_types": [t.crate_type],
                "name": t.name,
                "src_path": t.src_path,
                "edition": t.edition,
            },
            "message": message,
        }),
        None => message,
    };
    out.push_str(&line.to_string());
    out.push('\n');
}

fn diagnostic(file: &SourceFile, d: &Diagnostic, rendered: &str) -> Value {
    let mut spans = vec![span(file, d.primary, true, Some(&d.label))];
    for r in &d.related {
        spans.push(span(file, r.span, false, Some(&r.message)));
    }
    let mut children: Vec<Value> = d.notes.iter().map(|n| child("note", n, &[])).collect();
    if let Some(h) = &d.help {
        children.push(child("help", h, &[]));
    }
    if let Some(fix) = &d.fix {
        children.push(fix_child(file, fix));
    }
    // rust-analyzer links docs only for rustc and clippy codes, so the URL goes in the text.
    children.push(child(
        "help",
        &format!("for further information visit {}", rule_url(d.rule)),
        &[],
    ));
    json!({
        "$message_type": "diagnostic",
        "message": d.message,
        "code": {"code": format!("timeoutlint::{}", d.rule.snake_name()), "explanation": null},
        "level": d.severity.as_str(),
        "spans": spans,
        "children": children,
        "rendered": rendered,
    })
}

fn child(level: &str, message: &str, spans: &[Value]) -> Value {
    json!({
        "message": message,
        "code": null,
        "level": level,
        "spans": spans,
        "children": [],
        "rendered": null,
    })
}

fn fix_child(file: &SourceFile, fix: &Fix) -> Value {
    let spans: Vec<Value> = fix
        .edits
        .iter()
        .map(
            |Edit {
                 span: s,
                 replacement,
             }| {
                let mut v = span(file, *s, true, None);
                v["suggested_replacement"] = json!(replacement);
                v["suggestion_applicability"] = json!(fix.applicability.as_str());
                v
            },
        )
        .collect();
    child("help", &fix.title, &spans)
}

fn span(file: &SourceFile, span: Span, primary: bool, label: Option<&String>) -> Value {
    let (s, e) = (file.position(span.start), file.position(span.end));
    let mut text = Vec::new();
    for idx in s.line - 1..e.line {
        let mut line = file.line_span(idx);
        if idx == 0 {
            // rustc does not show a byte-order mark as part of line 1.
            line.start = (line.start + file.bom_len()).min(line.end);
        }
        let line_text = file.slice(line);
        let start = if idx == s.line - 1 { s.col } else { 1 };
        let end = if idx == e.line - 1 {
            e.col
        } else {
            line_text.chars().count() + 1
        };
        text.push(json!({"text": line_text, "highlight_start": start, "highlight_end": end}));
    }
    json!({
        "file_name": file.path,
        "byte_start": s.byte,
        "byte_end": e.byte,
        "line_start": s.line,
        "line_end": e.line,
        "column_start": s.col,
        "column_end": e.col,
        "is_primary": primary,
        "text": text,
        "label": label.filter(|l| !l.is_empty()),
        "suggested_replacement": null,
        "suggestion_applicability": null,
        "expansion": null,
    })
}
