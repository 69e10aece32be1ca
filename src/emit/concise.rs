//! `path:line:col: rule-name: message`, one finding per line, then per-file errors.

use std::fmt::Write;

use super::Report;

/// Render the concise format.
#[must_use]
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for (file, d) in report.findings() {
        let p = file.position(d.primary.start);
        let _ = writeln!(
            out,
            "{}:{}:{}: {}: {}",
            file.path, p.line, p.col, d.rule.name, d.message
        );
    }
    for e in &report.errors {
        let _ = writeln!(
            out,
            "{}:{}:{}: error: {}",
            e.path,
            e.line.unwrap_or(1),
            e.column.unwrap_or(1),
            e.message
        );
    }
    out
}
