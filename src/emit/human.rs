//! The default, rustc-like report through codespan-reporting: the primary span with its label,
//! secondary labelled spans, notes, a help line and the rule's doc pointer, then a summary.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::{SimpleFile, SimpleFiles};
use codespan_reporting::term::termcolor::{Buffer, WriteColor};
use codespan_reporting::term::{self, Config};

use super::Report;
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::SourceFile;

/// Render for a terminal; `color` adds ANSI escapes.
#[must_use]
pub fn render(report: &Report, color: bool) -> String {
    let mut buf = if color {
        Buffer::ansi()
    } else {
        Buffer::no_color()
    };
    let mut files = SimpleFiles::new();
    let config = Config::default();
    for (src, diags) in &report.files {
        let id = files.add(src.path.clone(), src.text.clone());
        for d in diags {
            // Writing into an in-memory buffer cannot fail; a missing file id is a bug we would
            // rather render partially than crash on.
            let _ = term::emit(&mut buf, &config, &files, &diagnostic(id, d));
        }
    }
    for e in &report.errors {
        let place = match (e.line, e.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", e.path),
            _ => e.path.clone(),
        };
        let _ = buf.set_color(codespan_reporting::term::termcolor::ColorSpec::new().set_bold(true));
        let _ =
            std::io::Write::write_fmt(&mut buf, format_args!("error: {place}: {}\n", e.message));
        let _ = buf.reset();
    }
    let n = report.finding_count();
    let _ = std::io::Write::write_fmt(
        &mut buf,
        format_args!(
            "{} finding{} in {} file{} checked{}\n",
            n,
            if n == 1 { "" } else { "s" },
            report.files_checked,
            if report.files_checked == 1 { "" } else { "s" },
            if report.errors.is_empty() {
                String::new()
            } else {
                format!(
                    ", {} file{} could not be analysed",
                    report.errors.len(),
                    if report.errors.len() == 1 { "" } else { "s" }
                )
            }
        ),
    );
    String::from_utf8_lossy(buf.as_slice()).into_owned()
}

/// One finding as rustc would print it, without colour (cargo-JSON's `rendered`).
#[must_use]
pub fn render_one(file: &SourceFile, d: &Diagnostic) -> String {
    let mut buf = Buffer::no_color();
    // Borrowed, not copied: this runs once per finding.
    let single = SimpleFile::new(file.path.as_str(), file.text.as_str());
    let _ = term::emit(&mut buf, &Config::default(), &single, &diagnostic((), d));
    String::from_utf8_lossy(buf.as_slice()).into_owned()
}

fn diagnostic<Id: Copy>(id: Id, d: &Diagnostic) -> CsDiagnostic<Id> {
    let severity = match d.severity {
        Severity::Error => CsSeverity::Error,
        Severity::Warning => CsSeverity::Warning,
        Severity::Note => CsSeverity::Note,
    };
    let mut labels =
        vec![Label::primary(id, d.primary.start..d.primary.end).with_message(&d.label)];
    for r in &d.related {
        labels.push(Label::secondary(id, r.span.start..r.span.end).with_message(&r.message));
    }
    let mut notes: Vec<String> = d.notes.iter().map(|n| format!("note: {n}")).collect();
    if let Some(h) = &d.help {
        notes.push(format!("help: {h}"));
    }
    if let Some(fix) = &d.fix {
        notes.push(format!(
            "fix ({}): {}",
            fix.applicability.as_str(),
            fix.title
        ));
    }
    notes.push(format!("see: `timeoutlint rule {}`", d.rule.name));
    CsDiagnostic::new(severity)
        .with_code(d.rule.name)
        .with_message(&d.message)
        .with_labels(labels)
        .with_notes(notes)
}
