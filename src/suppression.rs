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
//! forms. Reading the comments is [`crate::base::directive`]'s, text only, below the rules (the
//! rule `suppression-without-reason` reads them too); this module judges findings with them.
//! Pure: text in, data out.

use crate::base::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use crate::base::directive::{parse, Kind, Suppression, VERBS};
use crate::base::source::{SourceFile, Span};
use crate::config::FileSettings;
use crate::rules::{self, Rule};

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
