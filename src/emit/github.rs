//! `--format github`: GitHub Actions workflow commands, so findings show up as annotations on
//! the pull request's changed lines without uploading anything.
//!
//! GitHub shows at most 10 annotations per level per step, so errors come first (file errors,
//! then error findings), and when anything is left out a final notice says how many; the
//! findings left out are still printed as plain log lines. Columns are UTF-16 code units, like
//! SARIF. Deliberately absent: annotations for more than GitHub will show.

use std::fmt::Write as _;

use super::{rule_url, Report};
use crate::base::diagnostic::Severity;

/// How many annotations of one level GitHub shows per step.
pub const PER_LEVEL: usize = 10;

struct Annotation {
    level: &'static str,
    /// `key=value` properties, already escaped.
    properties: Vec<String>,
    message: String,
    /// The same finding as a plain log line, for when it cannot be annotated.
    plain: String,
}

/// Render the workflow commands.
#[must_use]
pub fn render(report: &Report) -> String {
    let mut all = Vec::new();
    for e in &report.errors {
        let mut properties = Vec::new();
        if !e.path.is_empty() {
            properties.push(property("file", &e.path));
        }
        if let Some(line) = e.line {
            properties.push(property("line", &line.to_string()));
            if let Some(col) = e.column {
                properties.push(property("col", &col.to_string()));
            }
        }
        properties.push(property("title", "timeoutlint: file not analysed"));
        all.push(Annotation {
            level: "error",
            properties,
            message: e.message.clone(),
            plain: format!("{}: error: {}", e.path, e.message),
        });
    }
    for (file, d) in report.findings() {
        let (s, end) = (file.position(d.primary.start), file.position(d.primary.end));
        let mut properties = vec![
            property("file", &file.path),
            property("line", &s.line.to_string()),
        ];
        // GitHub only accepts columns on single-line annotations.
        if s.line == end.line {
            properties.push(property("col", &s.col16.to_string()));
        }
        properties.push(property("endLine", &end.line.to_string()));
        if s.line == end.line {
            properties.push(property("endColumn", &end.col16.to_string()));
        }
        properties.push(property("title", d.rule.name));
        let mut message = d.message.clone();
        for n in &d.notes {
            let _ = write!(message, "\nnote: {n}");
        }
        if let Some(h) = &d.help {
            let _ = write!(message, "\nhelp: {h}");
        }
        let _ = write!(message, "\nsee: {}", rule_url(d.rule));
        all.push(Annotation {
            level: match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "notice",
            },
            properties,
            message,
            plain: format!(
                "{}:{}:{}: {}: {}",
                file.path, s.line, s.col, d.rule.name, d.message
            ),
        });
    }
    let rank = |level: &str| match level {
        "error" => 0,
        "warning" => 1,
        _ => 2,
    };
    all.sort_by_key(|a| rank(a.level));
    let count = |level: &str| all.iter().filter(|a| a.level == level).count();
    let overflow = ["error", "warning", "notice"]
        .iter()
        .any(|l| count(l) > PER_LEVEL);
    let mut out = String::new();
    let mut hidden = Vec::new();
    let mut shown = [0usize; 3];
    for a in &all {
        // The final notice takes one of the notice slots.
        let limit = if a.level == "notice" && overflow {
            PER_LEVEL - 1
        } else {
            PER_LEVEL
        };
        let slot = &mut shown[rank(a.level)];
        if *slot < limit {
            *slot += 1;
            let _ = writeln!(
                out,
                "::{} {}::{}",
                a.level,
                a.properties.join(","),
                escape_data(&a.message)
            );
        } else {
            hidden.push(&a.plain);
        }
    }
    if !hidden.is_empty() {
        for line in &hidden {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(
            out,
            "::notice title=timeoutlint::{}",
            escape_data(&format!(
                "{} more finding{} not annotated: GitHub shows {PER_LEVEL} annotations per level per step; they are listed in the log above",
                hidden.len(),
                if hidden.len() == 1 { " is" } else { "s are" },
            ))
        );
    }
    out
}

fn property(key: &str, value: &str) -> String {
    format!("{key}={}", escape_property(value))
}

/// GitHub's escaping for a command's message.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub's escaping for a property value: the message's, plus the separators `:` and `,`.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_github() {
        assert_eq!(escape_data("50% a\r\nb"), "50%25 a%0D%0Ab");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}
