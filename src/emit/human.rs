//! The default, rustc-like report through codespan-reporting: the primary span with its label,
//! secondary labelled spans, notes, a help line and the rule's doc pointer, then a summary.
//!
//! The layout is rustc's: codespan-reporting's ASCII character set (its box-drawing default
//! opens a finding with `┌─ path`, which editor problem matchers, terminal link detection and
//! `grep -- '-->'` habits miss), tuned toward rustc's multi-line marks, and the `-->` line
//! shifted to rustc's column (see [`config`] and [`rustc_locus`]).
//!
//! A long source line (minified or generated code, one line of megabytes) is shown as rustc
//! shows it: a window around the finding, cut with `...`. codespan-reporting prints whole
//! lines, so such a finding is rendered from [`Trimmed`], a stand-in file holding only the
//! windows of the lines it shows, with the real line numbers and columns.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use std::ops::Range;

use codespan_reporting::files::{Error as FilesError, Files, SimpleFile, SimpleFiles};
use codespan_reporting::term::termcolor::{Buffer, WriteColor};
use codespan_reporting::term::{self, Chars, Config};

use super::Report;
use crate::base::diagnostic::{Diagnostic, Severity};
use crate::base::source::SourceFile;

/// Render for a terminal; `color` adds ANSI escapes. The findings, the file errors, then the
/// [`summary`].
#[must_use]
pub fn render(report: &Report, color: bool) -> String {
    let mut out = render_findings(report, color);
    out.push_str(&summary(report));
    out
}

/// [`render`] without the summary (`--quiet`).
#[must_use]
pub fn render_findings(report: &Report, color: bool) -> String {
    let mut buf = if color {
        Buffer::ansi()
    } else {
        Buffer::no_color()
    };
    let mut files = SimpleFiles::new();
    let config = config();
    for (src, diags) in &report.files {
        let id = files.add(src.path.clone(), src.text.as_str());
        for d in diags {
            // Writing into an in-memory buffer cannot fail; a missing file id is a bug we would
            // rather render partially than crash on.
            if let Some(t) = Trimmed::new(src, d) {
                let _ = term::emit(&mut buf, &config, &t, &t.diagnostic(d));
            } else {
                let _ = term::emit(&mut buf, &config, &files, &diagnostic(id, d));
            }
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
    rustc_locus(&String::from_utf8_lossy(buf.as_slice()))
}

/// The run in a line, then how many findings the fix modes would fix (as ruff says it), e.g.
/// "3 findings in 4 files checked" and "2 fixable with `--fix` (1 more with `--fix
/// --unsafe-fixes`)".
#[must_use]
pub fn summary(report: &Report) -> String {
    use std::fmt::Write as _;
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut s = format!(
        "{} in {} checked",
        plural(report.finding_count(), "finding", "findings"),
        plural(report.files_checked, "file", "files")
    );
    if report.files_skipped > 0 {
        let _ = write!(
            s,
            ", {} more skipped unparsed (nothing a rule looks for)",
            report.files_skipped
        );
    }
    if !report.errors.is_empty() {
        let _ = write!(
            s,
            ", {} could not be analysed",
            plural(report.errors.len(), "file", "files")
        );
    }
    s.push('\n');
    let _ = match report.fixable() {
        (0, 0) => Ok(()),
        (0, n) => writeln!(s, "{n} fixable with `--fix --unsafe-fixes` (review them)"),
        (n, 0) => writeln!(s, "{n} fixable with `--fix`"),
        (n, m) => writeln!(
            s,
            "{n} fixable with `--fix` ({m} more with `--fix --unsafe-fixes`)"
        ),
    };
    s
}

/// One finding as rustc would print it, without colour (cargo-JSON's `rendered`).
#[must_use]
pub fn render_one(file: &SourceFile, d: &Diagnostic) -> String {
    render_one_in(file, d, false)
}

/// [`render_one`], with ANSI colours when `color` (cargo's `json-diagnostic-rendered-ansi`).
#[must_use]
pub fn render_one_in(file: &SourceFile, d: &Diagnostic, color: bool) -> String {
    let mut buf = if color {
        Buffer::ansi()
    } else {
        Buffer::no_color()
    };
    let config = config();
    if let Some(t) = Trimmed::new(file, d) {
        let _ = term::emit(&mut buf, &config, &t, &t.diagnostic(d));
    } else {
        // Borrowed, not copied: this runs once per finding.
        let single = SimpleFile::new(file.path.as_str(), file.text.as_str());
        let _ = term::emit(&mut buf, &config, &single, &diagnostic((), d));
    }
    rustc_locus(&String::from_utf8_lossy(buf.as_slice()))
}

/// codespan-reporting set toward rustc. `Chars::ascii()` already gives rustc's `-->`, `|`
/// borders, `^`/`-` underlines and `=` notes; rustc draws a multi-line span with `_` runs and
/// closes it with `|_^` (codespan's ASCII set: `-` runs closed by `\-^`), and ends a secondary
/// multi-line span with `-` (codespan: `'`). The one rustc mark no character can give is the
/// top of a span that starts mid-line (rustc ` ____^`, here ` /___^`): codespan draws that
/// corner with the same character as the `/` of a span starting at the line's start, which is
/// rustc's there.
fn config() -> Config {
    let mut chars = Chars::ascii();
    chars.multi_top = '_';
    chars.multi_bottom = '_';
    chars.multi_bottom_left = '|';
    chars.multi_secondary_caret_start = '-';
    chars.multi_secondary_caret_end = '-';
    Config {
        chars,
        ..Config::default()
    }
}

/// codespan pads the locus line one column more than rustc (`  --> a.rs:1:1` over `1 |`; rustc
/// puts `-->` one column left of the `|`): drop that space, so the line is rustc's byte for
/// byte. Only a line of spaces then `-->` (after colour escapes when coloured) is the locus:
/// source lines start with their number, notes with `=`.
fn rustc_locus(rendered: &str) -> String {
    let mut out = String::with_capacity(rendered.len());
    for line in rendered.split_inclusive('\n') {
        let rest = line.trim_start_matches(' ');
        let mut after_escape = rest;
        while let Some((_, r)) = after_escape
            .strip_prefix("\x1b[")
            .and_then(|r| r.split_once('m'))
        {
            after_escape = r;
        }
        if rest.len() < line.len() && after_escape.starts_with("-->") {
            out.push_str(&line[1..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

fn diagnostic<Id: Copy>(id: Id, d: &Diagnostic) -> CsDiagnostic<Id> {
    labelled(id, d, |s, e| s..e)
}

/// The codespan diagnostic of `d`, its spans placed by `at` (real start and end to the range in
/// the file codespan reads).
fn labelled<Id: Copy>(
    id: Id,
    d: &Diagnostic,
    at: impl Fn(usize, usize) -> Range<usize>,
) -> CsDiagnostic<Id> {
    let severity = match d.severity {
        Severity::Error => CsSeverity::Error,
        Severity::Warning => CsSeverity::Warning,
        Severity::Note => CsSeverity::Note,
    };
    let mut labels =
        vec![Label::primary(id, at(d.primary.start, d.primary.end)).with_message(&d.label)];
    for r in &d.related {
        labels.push(Label::secondary(id, at(r.span.start, r.span.end)).with_message(&r.message));
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

/// Lines longer than this many bytes are shown as a window.
const LONG_LINE: usize = 160;
/// Characters of a long line shown before the place the window is cut around.
const BEFORE: usize = 40;
/// Characters of a long line shown in all.
const WIDTH: usize = 120;
/// Marks where a long line was cut.
const CUT: &str = "...";

/// One shown line of a [`Trimmed`] file.
struct Window {
    /// 0-based line index in the real file.
    line: usize,
    /// The bytes of the real text shown.
    real: Range<usize>,
    /// Where the line starts in the stand-in text.
    start: usize,
    /// Its length there, cut marks included.
    len: usize,
    /// Whether a cut mark precedes the shown text.
    lead: bool,
}

/// A stand-in for the file of one finding whose lines include a long one: only the lines
/// codespan reads for it, each long one cut to a window, one line per [`Window`].
struct Trimmed<'a> {
    src: &'a SourceFile,
    text: String,
    windows: Vec<Window>,
}

impl<'a> Trimmed<'a> {
    /// `None` when every line the finding shows is short (the whole file is rendered as is).
    fn new(src: &'a SourceFile, d: &Diagnostic) -> Option<Self> {
        let spans: Vec<(usize, usize)> = std::iter::once(&d.primary)
            .chain(d.related.iter().map(|r| &r.span))
            .map(|s| {
                let end = s.end.min(src.text.len());
                (s.start.min(end), end)
            })
            .collect();
        // The lines codespan reads: each span's lines, and a line alone between two of them
        // (shown rather than a break).
        let mut lines: Vec<usize> = Vec::new();
        for &(s, e) in &spans {
            lines.extend(src.line_index(s)..=src.line_index(e));
        }
        lines.sort_unstable();
        lines.dedup();
        let gaps: Vec<usize> = lines
            .windows(2)
            .filter(|w| w[1] - w[0] == 2)
            .map(|w| w[0] + 1)
            .collect();
        lines.extend(gaps);
        lines.sort_unstable();
        let long = |l: usize| {
            let r = src.line_span(l);
            r.end - r.start > LONG_LINE
        };
        if !lines.iter().any(|&l| long(l)) {
            return None;
        }
        let primary_line = src.line_index(spans[0].0);
        let mut text = String::new();
        let mut windows = Vec::with_capacity(lines.len());
        for l in lines {
            let span = src.line_span(l);
            let full = span.start..span.end;
            let real = if long(l) {
                // Cut around the primary span's start on its line; elsewhere around the first
                // span that starts (or else ends) on the line.
                let within = |p: usize| full.contains(&p) || p == full.end;
                let anchor = if l == primary_line {
                    spans[0].0
                } else {
                    spans
                        .iter()
                        .map(|s| s.0)
                        .filter(|&p| within(p))
                        .min()
                        .or_else(|| spans.iter().map(|s| s.1).filter(|&p| within(p)).min())
                        .unwrap_or(full.start)
                };
                window(&src.text, full.clone(), anchor)
            } else {
                full.clone()
            };
            let lead = real.start > full.start;
            let start = text.len();
            if lead {
                text.push_str(CUT);
            }
            text.push_str(&src.text[real.clone()]);
            if real.end < full.end {
                text.push_str(CUT);
            }
            let len = text.len() - start;
            text.push('\n');
            windows.push(Window {
                line: l,
                real,
                start,
                len,
                lead,
            });
        }
        Some(Self { src, text, windows })
    }

    fn by_line(&self, line: usize) -> Option<&Window> {
        self.windows
            .binary_search_by_key(&line, |w| w.line)
            .ok()
            .map(|i| &self.windows[i])
    }

    fn by_offset(&self, at: usize) -> &Window {
        let i = self.windows.partition_point(|w| w.start <= at);
        &self.windows[i.saturating_sub(1)]
    }

    /// Where the real offset `real` shows: clamped to its line's window (a span cut off
    /// begins at the leading `...` or ends after the trailing one).
    fn place(&self, real: usize) -> usize {
        let Some(w) = self.by_line(self.src.line_index(real)) else {
            return 0;
        };
        let lead = if w.lead { CUT.len() } else { 0 };
        if real < w.real.start {
            w.start
        } else if real > w.real.end {
            w.start + w.len
        } else {
            w.start + lead + (real - w.real.start)
        }
    }

    fn diagnostic(&self, d: &Diagnostic) -> CsDiagnostic<()> {
        labelled((), d, |s, e| {
            let (s, e) = (s.min(self.src.text.len()), e.min(self.src.text.len()));
            let start = self.place(s);
            start..self.place(e).max(start)
        })
    }
}

/// The bytes of `line` shown around `anchor`: [`BEFORE`] characters before it, [`WIDTH`] in
/// all, on character boundaries.
fn window(text: &str, line: Range<usize>, anchor: usize) -> Range<usize> {
    let anchor = anchor.clamp(line.start, line.end);
    let anchor = (line.start..=anchor)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(line.start);
    let before = text[line.start..anchor]
        .char_indices()
        .rev()
        .take(BEFORE)
        .last()
        .map_or(anchor, |(i, _)| line.start + i);
    let end = text[before..line.end]
        .char_indices()
        .nth(WIDTH)
        .map_or(line.end, |(i, _)| before + i);
    before..end
}

impl<'a> Files<'a> for Trimmed<'_> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, FilesError> {
        Ok(&self.src.path)
    }

    fn source(&'a self, (): ()) -> Result<&'a str, FilesError> {
        Ok(&self.text)
    }

    fn line_index(&'a self, (): (), byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.by_offset(byte_index).line)
    }

    fn line_range(&'a self, (): (), line_index: usize) -> Result<Range<usize>, FilesError> {
        self.by_line(line_index)
            .map(|w| w.start..w.start + w.len)
            .ok_or(FilesError::LineTooLarge {
                given: line_index,
                max: self.windows.last().map_or(0, |w| w.line),
            })
    }

    /// The real column: what the window leaves out before it counts.
    fn column_number(
        &'a self,
        (): (),
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, FilesError> {
        let w = self.by_offset(byte_index);
        let lead = if w.lead { CUT.len() } else { 0 };
        let real = (w.real.start + byte_index.saturating_sub(w.start + lead)).min(w.real.end);
        let line = self.src.line_span(line_index);
        let real = real.max(line.start);
        Ok(self.src.position(real).col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::{lint_source, Config};

    fn findings(text: &str) -> (SourceFile, Vec<Diagnostic>) {
        let src = SourceFile::new("src/long.rs", text);
        let config = Config::new(
            crate::rules::ALL.to_vec(),
            crate::base::apis::Apis::builtin(),
        );
        let r = lint_source(&src, &config);
        assert!(r.error.is_none(), "{:?}", r.error);
        (src, r.diagnostics)
    }

    #[test]
    fn a_long_line_is_shown_as_a_window_with_real_columns() {
        let text = format!(
            "async fn f() {{ {}std::thread::sleep(d); {}}}\n",
            "a(); ".repeat(60),
            "b(); ".repeat(60)
        );
        let (src, diags) = findings(&text);
        assert_eq!(diags.len(), 1);
        insta::assert_snapshot!(render_one(&src, &diags[0]), @r"
        warning[blocking-sleep-in-async]: `std::thread::sleep` blocks the async executor thread
         --> src/long.rs:1:316
          |
        1 | ...a(); a(); a(); a(); a(); a(); a(); a(); std::thread::sleep(d); b(); b(); b(); b(); b(); b(); b(); b(); b(); b(); b(); b(...
          | -------------------------------------------^^^^^^^^^^^^^^^^^^^^^--------------------------------------------------------------
          | |                                          |
          | |                                          every task on this worker thread stalls for the whole wait
          | async context
          |
          = help: use `tokio::time::sleep(d).await`; between retries, `timeoutlint_retry::RetryPolicy` waits without blocking
          = fix (MaybeIncorrect): wait with `tokio::time::sleep(..).await`
          = see: `timeoutlint rule blocking-sleep-in-async`
        ");
    }

    /// The locus line sits where rustc puts it, coloured or not: `-->` one column left of the
    /// `|` border, and two-digit line numbers widen both alike.
    #[test]
    fn the_locus_line_is_in_rustcs_column_with_and_without_colour() {
        let text = format!(
            "{}async fn f() {{ x();\n    std::thread::sleep(d);\n}}\n",
            "\n".repeat(9)
        );
        let (src, diags) = findings(&text);
        let report = Report {
            files: vec![(src, diags)],
            errors: Vec::new(),
            files_checked: 1,
            files_skipped: 0,
            rules: crate::rules::ALL.to_vec(),
        };
        for color in [false, true] {
            let out = render(&report, color);
            let plain: String = strip_escapes(&out);
            let lines: Vec<&str> = plain.lines().collect();
            assert!(lines.len() > 2, "{out:?}");
            assert_eq!(lines[1], "  --> src/long.rs:11:5", "{out:?}");
            assert_eq!(lines[2], "   |", "{plain}");
        }
    }

    fn strip_escapes(s: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find('\x1b') {
            out.push_str(&rest[..i]);
            rest = rest[i..].split_once('m').map_or("", |(_, r)| r);
        }
        out.push_str(rest);
        out
    }

    #[test]
    fn output_for_a_huge_line_is_bounded_per_finding() {
        // One line of about 400 KB with 100 findings: each shows a window, not the line. (The
        // gaps are comments: turning a span into a column costs time linear in the column.)
        let gap = format!("/* {} */ ", "a".repeat(4000));
        let body = format!("{gap}std::thread::sleep(d); ").repeat(100);
        let text = format!("async fn f() {{ x(); {body}}}\n");
        let (src, diags) = findings(&text);
        assert_eq!(diags.len(), 100);
        let report = Report {
            files: vec![(src.clone(), diags.clone())],
            errors: Vec::new(),
            files_checked: 1,
            files_skipped: 0,
            rules: crate::rules::ALL.to_vec(),
        };
        let out = render(&report, false);
        assert!(out.len() < 100 * 1500, "{} bytes", out.len());
        for d in &diags {
            let one = render_one(&src, d);
            assert!(
                one.len() < 1500 && one.contains("std::thread::sleep(d)"),
                "{one}"
            );
        }
        // Short lines render whole, as before.
        let (src, diags) = findings("async fn f() {\n    x();\n    std::thread::sleep(d);\n}\n");
        assert!(!render_one(&src, &diags[0]).contains(CUT));
    }
}
