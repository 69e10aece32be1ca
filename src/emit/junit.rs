//! `JUnit` XML, the test report most CI systems show (GitLab's `artifacts:reports:junit`,
//! Jenkins, Azure Pipelines, CircleCI): one failing test case per finding, one erroring case per
//! file that could not be analysed, and one passing case when there is neither, so a clean run
//! shows as passed rather than as "no tests".
//!
//! Each case is named by its rule and place and classed by its file; the failure's `message` is
//! the finding's, its `type` the rule, its text the place, label, notes and help. Text is
//! escaped for XML, and characters XML 1.0 cannot hold at all (control characters from a
//! hostile file name or source line) become U+FFFD.

use std::fmt::Write as _;

use super::Report;

/// Render the `JUnit` report.
#[must_use]
pub fn render(report: &Report) -> String {
    let findings = report.finding_count();
    let errors = report.errors.len();
    let mut cases = String::new();
    for (file, d) in report.findings() {
        let p = file.position(d.primary.start);
        let place = format!("{}:{}:{}", file.path, p.line, p.col);
        let mut body = format!("{place}: {}: {}\n", d.severity.as_str(), d.message);
        if !d.label.is_empty() {
            let _ = writeln!(body, "{}", d.label);
        }
        for n in &d.notes {
            let _ = writeln!(body, "note: {n}");
        }
        if let Some(h) = &d.help {
            let _ = writeln!(body, "help: {h}");
        }
        let _ = writeln!(
            cases,
            "    <testcase name=\"{} at {}\" classname=\"{}\">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
            xml(d.rule.name),
            xml(&place),
            xml(&file.path),
            xml(&d.message),
            xml(d.rule.name),
            xml(&body)
        );
    }
    for e in &report.errors {
        let _ = writeln!(
            cases,
            "    <testcase name=\"{}\" classname=\"{}\">\n      <error message=\"{}\" type=\"could-not-be-analysed\"/>\n    </testcase>",
            xml(&e.path),
            xml(&e.path),
            xml(&e.message)
        );
    }
    let tests = if findings + errors == 0 {
        let _ = writeln!(
            cases,
            "    <testcase name=\"{} files checked\" classname=\"timeoutlint\"/>",
            report.files_checked
        );
        1
    } else {
        findings + errors
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"timeoutlint\" tests=\"{tests}\" failures=\"{findings}\" errors=\"{errors}\">\n  <testsuite name=\"timeoutlint\" tests=\"{tests}\" failures=\"{findings}\" errors=\"{errors}\" skipped=\"0\">\n{cases}  </testsuite>\n</testsuites>\n"
    )
}

/// `text` as XML character data or an attribute value.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Line breaks in an attribute would be normalised to spaces by the parser.
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push('\t'),
            c if (c as u32) < 0x20 || matches!(c, '\u{FFFE}' | '\u{FFFF}') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}
