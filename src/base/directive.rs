//! The `timeoutlint:` comments of a text, read: which verb, which rules, what reason, where.
//! Text only, below the rules: `suppression` decides which findings they silence, and the rule
//! `suppression-without-reason` judges their reasons. A comment is a comment by
//! [`regions`](crate::base::regions) (the one lexer's view), so a `// timeoutlint:` inside a
//! string is none. Pure: text in, data out.

use crate::base::regions::{regions, Region};
use crate::base::source::{SourceFile, Span};

/// The directive verbs.
pub const VERBS: &[&str] = &["ignore", "disable", "enable", "ignore-file"];

/// What a suppression covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One line (0-based index).
    Line(usize),
    /// From the line after the comment on.
    Disable,
    /// Ends earlier `disable`s.
    Enable,
    /// The whole file.
    File,
    /// Not a known verb: reported, silences nothing.
    Unknown,
}

/// One suppression comment.
#[derive(Debug, Clone)]
pub struct Suppression {
    /// What it covers.
    pub kind: Kind,
    /// The verb as written.
    pub verb: String,
    /// Rule names as written, each with its span (for removing one name).
    pub rules: Vec<(String, Span)>,
    /// The text after the rule list, if any.
    pub reason: Option<String>,
    /// The whole comment, `//` included.
    pub comment: Span,
    /// Whether nothing but whitespace precedes the comment on its line.
    pub standalone: bool,
    /// 0-based line of the comment.
    pub line: usize,
}

/// Every `timeoutlint:` comment of `src`, in order.
#[must_use]
pub fn parse(src: &SourceFile) -> Vec<Suppression> {
    let text = &src.text;
    let tokens = regions(text);
    let comment_only_line = |idx: usize| {
        let line = src.slice(src.line_span(idx)).trim_start();
        line.is_empty() || line.starts_with("//")
    };
    // The line each standalone `ignore` applies to, the next one that is not blank or a
    // comment: found from the bottom up once, so a stack of thousands of comments is not
    // walked again for each of them.
    let mut next_code: Option<Vec<usize>> = None;
    let mut out = Vec::new();
    for (span, kind) in tokens {
        if kind != Region::LineComment {
            continue;
        }
        // The comment without its line's `\r`.
        let span = if text[..span.end].ends_with('\r') {
            Span::new(span.start, span.end - 1)
        } else {
            span
        };
        let body = &text[span.start + 2..span.end];
        let body = body.strip_prefix('!').unwrap_or(body);
        let lead = body.len() - body.trim_start().len();
        let Some(rest) = body.trim_start().strip_prefix("timeoutlint:") else {
            continue;
        };
        let mut offset = span.end - body.len() + lead + "timeoutlint:".len();
        let trimmed = rest.trim_start();
        offset += rest.len() - trimmed.len();
        let verb_len = trimmed
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(trimmed.len());
        let verb = &trimmed[..verb_len];
        let mut after = &trimmed[verb_len..];
        // Prose that starts with the tool's name ("timeoutlint: finds ..") is not a directive;
        // a misspelt verb still is, when a rule list follows it.
        if !VERBS.contains(&verb) && !after.starts_with('[') {
            continue;
        }
        offset += verb_len;
        let mut names = Vec::new();
        if let Some(list) = after.strip_prefix('[') {
            if let Some(close) = list.find(']') {
                let mut at = offset + 1;
                for part in list[..close].split(',') {
                    let name = part.trim();
                    if !name.is_empty() {
                        let start = at + (part.len() - part.trim_start().len());
                        names.push((name.to_string(), Span::new(start, start + name.len())));
                    }
                    at += part.len() + 1;
                }
                after = &list[close + 1..];
            }
        }
        // A nested `//` starts another remark (a test marker, a note), not the reason.
        let after = after.split("//").next().unwrap_or("");
        let reason = after
            .trim()
            .trim_start_matches(['-', ':', '\u{2014}'])
            .trim();
        let line = src.line_index(span.start);
        let line_start = src.line_span(line).start;
        let standalone = text[line_start..span.start].trim().is_empty();
        let kind = match verb {
            "ignore" if standalone => {
                let next = next_code.get_or_insert_with(|| {
                    let n = src.line_count();
                    let mut next = vec![n; n + 1];
                    for l in (0..n).rev() {
                        next[l] = if comment_only_line(l) { next[l + 1] } else { l };
                    }
                    next
                });
                Kind::Line(next[line + 1])
            }
            "ignore" => Kind::Line(line),
            "disable" => Kind::Disable,
            "enable" => Kind::Enable,
            "ignore-file" => Kind::File,
            _ => Kind::Unknown,
        };
        out.push(Suppression {
            kind,
            verb: verb.to_string(),
            rules: names,
            reason: (!reason.is_empty()).then(|| reason.to_string()),
            comment: span,
            standalone,
            line,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> String {
        let src = SourceFile::new("a.rs", text);
        parse(&src)
            .iter()
            .map(|s| {
                let names: Vec<&str> = s.rules.iter().map(|(n, _)| n.as_str()).collect();
                format!("{:?} {names:?} {:?}", s.kind, s.reason)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn forms_and_strings() {
        insta::assert_snapshot!(check(concat!(
            "let s = \"// timeoutlint: ignore[a] not a comment\";\n",
            "let r = r#\"// timeoutlint: ignore[a]\"#; let c = '\"';\n",
            "x(); // timeoutlint: ignore[unbounded-retry] - polled elsewhere\n",
            "// timeoutlint: ignore[a, b]\n",
            "// another comment\n",
            "\n",
            "loop {}\n",
            "// timeoutlint: disable[a] legacy\n",
            "// timeoutlint: enable\n",
            "//! timeoutlint: ignore-file[a] generated\n",
            "/* // timeoutlint: ignore[a] */ fn f<'a>() {}\n",
            "// timeoutlint: ignroe[a]\n",
            "//! timeoutlint: finds retry bugs\n",
        )), @r#"
Line(2) ["unbounded-retry"] Some("polled elsewhere")
Line(6) ["a", "b"] None
Disable ["a"] Some("legacy")
Enable [] None
File ["a"] Some("generated")
Unknown ["a"] None
"#);
    }
}
