//! The baseline: a file of accepted findings, so a codebase can adopt the linter today and fail
//! only on new findings.
//!
//! An entry is keyed by rule, path, the enclosing function's name and a fingerprint of the
//! flagged line with whitespace and comments removed, never by line number: adding code above a
//! finding, reformatting or editing an unrelated function keeps the entry matching. Identical
//! keys (the same `loop {` twice in one function) are counted, not told apart. Pure: the caller
//! reads and writes the file; deliberately absent is any notion of "who accepted it when".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::diagnostic::Diagnostic;
use crate::base::regions::{regions, Region};
use crate::base::source::{SourceFile, Span};
use crate::emit::Report;

/// The baseline file format's version.
pub const VERSION: u32 = 1;

/// The whole file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// Format version.
    pub version: u32,
    /// Accepted findings, sorted.
    pub findings: Vec<Entry>,
}

/// One accepted finding (or `count` identical ones).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Rule name.
    pub rule: String,
    /// Path relative to the baseline file's directory, `/`-separated, so the file matches from
    /// any working directory.
    pub path: String,
    /// Name of the enclosing function; empty at the top level.
    pub function: String,
    /// Hash of the flagged line's code, whitespace and comments removed.
    pub fingerprint: String,
    /// How many findings share this key.
    pub count: usize,
    /// The message when recorded, for people reading the file; not compared.
    #[serde(default)]
    pub message: String,
}

/// What applying a baseline did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Findings hidden because the baseline lists them.
    pub hidden: usize,
    /// Entries (with the number of findings missing) that match nothing any more.
    pub stale: Vec<Entry>,
}

type Key = (String, String, String, String);

/// Maps a display path to the path stored in the baseline.
pub type PathMap<'a> = &'a dyn Fn(&str) -> String;

fn key_with(src: &SourceFile, path: &str, mask: &[u8], d: &Diagnostic) -> Key {
    let function = enclosing_function(mask, d.primary.start);
    let line = src.line_span(src.line_index(d.primary.start));
    let code: Vec<u8> = mask[line.start..line.end]
        .iter()
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let mut h = Fnv::new();
    h.write(&code);
    h.write(&[0]);
    let flagged: Vec<u8> = src
        .slice(Span::new(d.primary.start, d.primary.end.min(line.end)))
        .bytes()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    h.write(&flagged);
    (
        d.rule.name.to_string(),
        path.to_string(),
        function,
        format!("{:016x}", h.0),
    )
}

/// Record every finding of `report`, with paths as `path` maps them.
#[must_use]
pub fn create(report: &Report, path: PathMap) -> Baseline {
    let mut map: BTreeMap<Key, (usize, String)> = BTreeMap::new();
    for (src, diags) in &report.files {
        let mask = code_mask(&src.text);
        let p = path(&src.path);
        for d in diags {
            let e = map
                .entry(key_with(src, &p, &mask, d))
                .or_insert((0, d.message.clone()));
            e.0 += 1;
        }
    }
    Baseline {
        version: VERSION,
        findings: map
            .into_iter()
            .map(
                |((rule, path, function, fingerprint), (count, message))| Entry {
                    rule,
                    path,
                    function,
                    fingerprint,
                    count,
                    message,
                },
            )
            .collect(),
    }
}

/// Hide the findings `baseline` lists; entries for files in `linted` (baseline paths) that match
/// fewer findings than they count are stale (the finding was fixed, or its code changed).
pub fn apply(
    report: &mut Report,
    baseline: &Baseline,
    path: PathMap,
    linted: &dyn Fn(&str) -> bool,
) -> Outcome {
    let mut left: BTreeMap<Key, usize> = baseline
        .findings
        .iter()
        .map(|e| {
            (
                (
                    e.rule.clone(),
                    e.path.clone(),
                    e.function.clone(),
                    e.fingerprint.clone(),
                ),
                e.count,
            )
        })
        .collect();
    let mut hidden = 0;
    for (src, diags) in &mut report.files {
        let mask = code_mask(&src.text);
        let p = path(&src.path);
        diags.retain(|d| match left.get_mut(&key_with(src, &p, &mask, d)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                hidden += 1;
                false
            }
            _ => true,
        });
    }
    report.files.retain(|(_, d)| !d.is_empty());
    let stale = baseline
        .findings
        .iter()
        .filter_map(|e| {
            let k = (
                e.rule.clone(),
                e.path.clone(),
                e.function.clone(),
                e.fingerprint.clone(),
            );
            let missing = left.get(&k).copied().unwrap_or(0);
            (missing > 0 && linted(&e.path)).then(|| Entry {
                count: missing,
                ..e.clone()
            })
        })
        .collect();
    Outcome { hidden, stale }
}

/// `baseline` without what `outcome` found stale: `baseline prune`.
#[must_use]
pub fn prune(baseline: &Baseline, outcome: &Outcome) -> Baseline {
    let findings = baseline
        .findings
        .iter()
        .filter_map(|e| {
            let gone = outcome
                .stale
                .iter()
                .find(|s| {
                    (&s.rule, &s.path, &s.function, &s.fingerprint)
                        == (&e.rule, &e.path, &e.function, &e.fingerprint)
                })
                .map_or(0, |s| s.count);
            (e.count > gone).then(|| Entry {
                count: e.count - gone,
                ..e.clone()
            })
        })
        .collect();
    Baseline {
        version: VERSION,
        findings,
    }
}

/// The file's text.
#[must_use]
pub fn render(b: &Baseline) -> String {
    let mut s = serde_json::to_string_pretty(b).expect("a baseline serialises");
    s.push('\n');
    s
}

/// Read a baseline file's text.
pub fn parse(text: &str) -> Result<Baseline, String> {
    let b: Baseline = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if b.version != VERSION {
        return Err(format!(
            "baseline version {} is not supported (expected {VERSION}); recreate it with `timeoutlint baseline create`",
            b.version
        ));
    }
    Ok(b)
}

/// The text with comments and literals blanked (same length), so braces and `fn` are code.
fn code_mask(text: &str) -> Vec<u8> {
    let mut mask = text.as_bytes().to_vec();
    for (span, region) in regions(text) {
        let keep_quotes = region == Region::Literal;
        for (i, b) in mask[span.start..span.end].iter_mut().enumerate() {
            if *b != b'\n' && !(keep_quotes && i == 0) {
                *b = b' ';
            }
        }
    }
    mask
}

/// The name of the innermost `fn` whose body holds `at`, by brace matching backwards over code.
fn enclosing_function(mask: &[u8], at: usize) -> String {
    let mut depth = 0usize;
    let mut j = at.min(mask.len());
    while j > 0 {
        j -= 1;
        match mask[j] {
            b'}' => depth += 1,
            b'{' if depth > 0 => depth -= 1,
            b'{' => {
                let header_start = mask[..j]
                    .iter()
                    .rposition(|c| matches!(c, b'{' | b'}' | b';'))
                    .map_or(0, |p| p + 1);
                if let Some(name) = fn_name(&mask[header_start..j]) {
                    return name;
                }
            }
            _ => {}
        }
    }
    String::new()
}

/// `name` in a header like `pub async fn name<T>(..) -> R where ..`.
fn fn_name(header: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(header);
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let i = words.iter().position(|w| *w == "fn")?;
    words.get(i + 1).map(|w| (*w).to_string())
}

/// FNV-1a, 64 bit: stable across Rust versions and platforms, unlike `DefaultHasher`.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, needle: &str) -> String {
        let mask = code_mask(text);
        enclosing_function(&mask, text.find(needle).unwrap())
    }

    #[test]
    fn finds_the_enclosing_function_past_blocks_strings_and_comments() {
        let text = "impl A {\n    pub async fn outer<T>(x: T) -> R where T: B {\n        let s = \"}\"; // {\n        fn inner() {}\n        loop { if x { HERE } }\n    }\n}\n";
        assert_eq!(check(text, "HERE"), "outer");
        assert_eq!(check("static X: u8 = 1; HERE", "HERE"), "");
    }
}
