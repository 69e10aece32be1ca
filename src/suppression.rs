//! Suppression comments: finding them, deciding which findings they silence, and reporting the
//! ones that silence nothing (`unused-suppression`).
//!
//! Suppressions are comments because `#[allow(timeoutlint::x)]` is a hard error on stable
//! (E0710). The forms, each followed by an optional reason:
//!
//! - `// timeoutlint: ignore[rule, ..] reason`: at the end of a line, that line; alone on a line,
//!   the next line that is not blank or a comment (so several can stack).
//! - `// timeoutlint: disable[rule, ..] reason` .. `// timeoutlint: enable[rule, ..]` (or a bare
//!   `enable` for every rule): the lines in between; without `enable`, to the end of the file.
//! - `// timeoutlint: ignore-file[rule, ..] reason` (also as `//!`): the whole file.
//!
//! The reason ends at a nested `//`. Deliberately absent: a wildcard (a suppression names what
//! it silences, so it can be reported as unused when that finding goes away) and block-comment
//! forms. Pure: text in, data out.

use crate::base::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use crate::base::source::{SourceFile, Span};
use crate::config::FileSettings;
use crate::rules::{self, Rule};

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
    let tokens = lex(text);
    let comment_only_line = |idx: usize| {
        let line = src.slice(src.line_span(idx)).trim_start();
        line.is_empty() || line.starts_with("//")
    };
    // The line each standalone `ignore` applies to, the next one that is not blank or a
    // comment: found from the bottom up once, so a stack of thousands of comments is not
    // walked again for each of them.
    let mut next_code: Option<Vec<usize>> = None;
    let mut out = Vec::new();
    for (span, kind) in &tokens {
        if *kind != Token::LineComment {
            continue;
        }
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
            comment: *span,
            standalone,
            line,
        });
    }
    out
}

/// Remove the findings the comments of `src` silence, and add an `unused-suppression` finding
/// for each comment that silenced nothing it could have (when that rule is among the `enabled`).
pub fn apply(
    src: &SourceFile,
    enabled: &[&'static Rule],
    settings: &FileSettings,
    diags: &mut Vec<Diagnostic>,
) {
    // Most files hold no suppression; skip lexing them.
    if !src.text.contains("timeoutlint:") {
        return;
    }
    let sups = parse(src);
    if sups.is_empty() {
        return;
    }
    let mut used: Vec<Vec<bool>> = sups.iter().map(|s| vec![false; s.rules.len()]).collect();
    silence(src, &sups, &mut used, diags);
    let Some(unused_rule) = rules::by_name("unused-suppression") else {
        return;
    };
    if !enabled.iter().any(|r| std::ptr::eq(*r, unused_rule)) {
        return;
    }
    let runs =
        |name: &str| enabled.iter().any(|r| r.name == name) && !settings.ignored(&src.path, name);
    let mut unused: Vec<Diagnostic> = sups
        .iter()
        .zip(&used)
        .filter_map(|(s, used)| report(src, unused_rule, s, used, &runs))
        .collect();
    // `ignore-file[unused-suppression]` / `disable[unused-suppression]` silence these in turn.
    let mut meta_used = used.clone();
    silence(src, &sups, &mut meta_used, &mut unused);
    diags.extend(unused);
}

/// Remove the findings of `diags` that a suppression covers, marking the names that did.
///
/// Indexed so that the cost grows with findings plus suppressions, not their product: line
/// suppressions by (line, rule), file ones by rule, and per rule the `disable`s and the
/// `enable`s that end them, in file order. Every suppression covering a finding is marked used.
fn silence(
    src: &SourceFile,
    sups: &[Suppression],
    used: &mut [Vec<bool>],
    diags: &mut Vec<Diagnostic>,
) {
    use std::collections::{HashMap, HashSet};
    // The first position of each distinct name in each suppression's list.
    let mut lines: HashMap<(usize, &str), Vec<(usize, usize)>> = HashMap::new();
    let mut files: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    let mut disables: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    let mut named_enables: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut bare_enables: Vec<usize> = Vec::new();
    for (i, s) in sups.iter().enumerate() {
        if s.kind == Kind::Enable && s.rules.is_empty() {
            bare_enables.push(i);
        }
        for (j, (name, _)) in s.rules.iter().enumerate() {
            if s.rules[..j].iter().any(|(n, _)| n == name) {
                continue;
            }
            let name = name.as_str();
            match s.kind {
                Kind::Line(l) => lines.entry((l, name)).or_default().push((i, j)),
                Kind::File => files.entry(name).or_default().push((i, j)),
                Kind::Disable => disables.entry(name).or_default().push((i, j)),
                Kind::Enable => named_enables.entry(name).or_default().push(i),
                Kind::Unknown => {}
            }
        }
    }
    // Groups already marked: marking one again changes nothing.
    let mut marked_lines: HashSet<(usize, &str)> = HashSet::default();
    let mut marked_files: HashSet<&str> = HashSet::default();
    // Per rule, the ranges of its `disable` list that covered a finding, marked at the end.
    let mut covered: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    // The last `enable` of `rule` (named or bare) before `line`, as an index into `sups`.
    let last_enable = |list: &[usize], line: usize| -> Option<usize> {
        let k = list.partition_point(|&e| sups[e].line < line);
        k.checked_sub(1).map(|k| list[k])
    };
    diags.retain(|d| {
        let line = src.line_index(d.primary.start);
        let name = d.rule.name;
        let mut silenced = false;
        if let Some(group) = lines.get(&(line, name)) {
            silenced = true;
            if marked_lines.insert((line, name)) {
                for &(i, j) in group {
                    used[i][j] = true;
                }
            }
        }
        if let Some(group) = files.get(name) {
            silenced = true;
            if marked_files.insert(name) {
                for &(i, j) in group {
                    used[i][j] = true;
                }
            }
        }
        if let Some(list) = disables.get(name) {
            // A disable covers the finding when it comes before its line and no enable of the
            // rule comes between them (before the finding's line).
            let after = [
                named_enables.get(name).and_then(|l| last_enable(l, line)),
                last_enable(&bare_enables, line),
            ]
            .into_iter()
            .flatten()
            .max();
            let from = after.map_or(0, |e| list.partition_point(|&(i, _)| i <= e));
            let to = list.partition_point(|&(i, _)| sups[i].line < line);
            if from < to {
                silenced = true;
                covered.entry(name).or_default().push((from, to));
            }
        }
        !silenced
    });
    for (name, mut ranges) in covered {
        let list = &disables[name];
        ranges.sort_unstable();
        let mut next = 0;
        for (from, to) in ranges {
            for &(i, j) in &list[from.max(next)..to.max(next)] {
                used[i][j] = true;
            }
            next = next.max(to);
        }
    }
}

fn report(
    src: &SourceFile,
    rule: &'static Rule,
    s: &Suppression,
    used: &[bool],
    runs: &dyn Fn(&str) -> bool,
) -> Option<Diagnostic> {
    if s.kind == Kind::Unknown {
        let verb = if s.verb.is_empty() { "(none)" } else { &s.verb };
        return Some(
            Diagnostic::new(
                rule,
                s.comment,
                format!(
                    "unrecognised suppression `{verb}`{}",
                    crate::config::suggest(&s.verb, VERBS.iter().copied())
                ),
            )
            .label("silences nothing")
            .help("write `// timeoutlint: ignore[rule] reason`"),
        );
    }
    if s.kind == Kind::Enable {
        return None;
    }
    if s.rules.is_empty() {
        return Some(
            Diagnostic::new(rule, s.comment, "suppression names no rule")
                .label("silences nothing")
                .help(format!(
                    "name the rules: `// timeoutlint: {}[rule] reason`",
                    s.verb
                )),
        );
    }
    let mut unused = Vec::new();
    let mut notes = Vec::new();
    for ((name, span), used) in s.rules.iter().zip(used) {
        if rules::by_name(name).is_none() {
            unused.push((name, *span));
            notes.push(format!(
                "`{name}` is not a rule{}",
                crate::config::suggest(name, rules::ALL.iter().map(|r| r.name))
            ));
        } else if !used && runs(name) && name != rule.name {
            // Whether a suppression of this rule itself is used is only known after this
            // report; it is never reported unused (a documented blind spot).
            unused.push((name, *span));
        }
    }
    if unused.is_empty() {
        return None;
    }
    let names: Vec<String> = unused.iter().map(|(n, _)| format!("`{n}`")).collect();
    let what = match s.kind {
        Kind::File => "in this file",
        Kind::Disable => "in this range",
        _ => "on its line",
    };
    let message = if notes.len() == unused.len() {
        format!("suppression names an unknown rule: {}", names.join(", "))
    } else {
        format!(
            "unused suppression: {} reported nothing {what}",
            names.join(", ")
        )
    };
    let mut d = Diagnostic::new(rule, s.comment, message)
        .label("silences nothing")
        .fix(Fix {
            title: "remove the unused suppression".into(),
            applicability: Applicability::MachineApplicable,
            edits: removal(
                src,
                s,
                &unused.iter().map(|(_, sp)| *sp).collect::<Vec<_>>(),
            ),
        });
    d.notes = notes;
    Some(d)
}

/// The edits that remove `names` from `s`, or the whole comment when nothing else remains.
fn removal(src: &SourceFile, s: &Suppression, names: &[Span]) -> Vec<Edit> {
    if names.len() < s.rules.len() {
        // Remove each name with the comma that joins it to a kept neighbour.
        let text = &src.text;
        return names
            .iter()
            .map(|sp| {
                let after = &text[sp.end..];
                let span = if let Some(rest) = after.trim_start().strip_prefix(',') {
                    let end = sp.end + (after.len() - rest.len());
                    let end = end + (rest.len() - rest.trim_start().len());
                    Span::new(sp.start, end)
                } else {
                    let before = text[..sp.start].trim_end();
                    let comma = before.len().saturating_sub(1);
                    Span::new(comma, sp.end)
                };
                Edit {
                    span,
                    replacement: String::new(),
                }
            })
            .collect();
    }
    let line = src.line_span(s.line);
    let span = if s.standalone {
        // The whole line with its terminator.
        let next = if s.line + 1 < src.line_count() {
            src.line_span(s.line + 1).start
        } else {
            line.end
        };
        Span::new(line.start, next)
    } else {
        let code_end = src.text[..s.comment.start].trim_end().len();
        Span::new(code_end, s.comment.end)
    };
    vec![Edit {
        span,
        replacement: String::new(),
    }]
}

/// What [`lex`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// `// ..` to the end of the line (terminator excluded).
    LineComment,
    /// `/* .. */`, nested.
    BlockComment,
    /// A string, byte string, raw string or character literal.
    Str,
}

/// The comments and literals of Rust source text: enough lexing to tell a `//` in code from one
/// in a string, and a brace in code from one in a comment (the baseline's function finder).
#[must_use]
pub fn lex(text: &str) -> Vec<(Span, Token)> {
    let b = text.as_bytes();
    let n = b.len();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(n, |e| i + e);
                let end = if end > i && b[end - 1] == b'\r' {
                    end - 1
                } else {
                    end
                };
                out.push((Span::new(i, end), Token::LineComment));
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 1;
                let mut j = i + 2;
                while j < n && depth > 0 {
                    if b[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if b[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                out.push((Span::new(i, j.min(n)), Token::BlockComment));
                i = j;
            }
            b'"' => {
                let mut j = i + 1;
                while j < n {
                    match b[j] {
                        b'\\' => j += 2,
                        b'"' => {
                            j += 1;
                            break;
                        }
                        _ => j += 1,
                    }
                }
                out.push((Span::new(i, j.min(n)), Token::Str));
                i = j;
            }
            b'\'' => {
                if b.get(i + 1) == Some(&b'\\') {
                    // An escape is at most `\u{10FFFF}`: look no further for the closing quote,
                    // so that a stray `'\` does not scan the rest of the file each time.
                    let window = &b[i + 2..n.min(i + 14)];
                    let end = window
                        .iter()
                        .skip(1)
                        .position(|&c| c == b'\'')
                        .map_or(n.min(i + 14), |e| i + 3 + e + 1);
                    out.push((Span::new(i, end), Token::Str));
                    i = end;
                } else {
                    let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    if b.get(i + 1 + len) == Some(&b'\'') {
                        out.push((Span::new(i, i + 2 + len), Token::Str));
                        i += 2 + len;
                    } else {
                        i += 1; // a lifetime or label
                    }
                }
            }
            c if ident(c) => {
                let start = i;
                while i < n && ident(b[i]) {
                    i += 1;
                }
                let word = &text[start..i];
                if matches!(word, "r" | "br" | "cr") {
                    let hashes = b[i..].iter().take_while(|c| **c == b'#').count();
                    if b.get(i + hashes) == Some(&b'"') {
                        let close: String = std::iter::once('"')
                            .chain("#".repeat(hashes).chars())
                            .collect();
                        let body = i + hashes + 1;
                        let end = text[body..]
                            .find(&close)
                            .map_or(n, |e| body + e + close.len());
                        out.push((Span::new(start, end), Token::Str));
                        i = end;
                    }
                }
            }
            _ => i += 1,
        }
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
