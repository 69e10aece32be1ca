//! GitLab Code Quality: the JSON array a job publishes as `artifacts:reports:codequality`, shown
//! in the merge request widget and the diff.
//!
//! Each finding carries the fields GitLab requires: `description`, `check_name`, `fingerprint`
//! (unique per finding, which is how GitLab tells a new finding from a fixed one between the
//! base and the merge request), `severity` (one of GitLab's five) and `location` (`path`
//! relative to the repository root, so run from there, as for SARIF, and `lines.begin`). The
//! fingerprint hashes the rule, the path and GitHub's hash of the finding's line (the same text
//! keeps the same fingerprint when lines above it move), with a count for repeats. File errors
//! are reported as `critical` entries too: GitLab has no other place for them.

use serde_json::{json, Value};

use super::{fingerprint, Report};
use crate::base::diagnostic::Severity;

/// Render the Code Quality report.
#[must_use]
pub fn render(report: &Report) -> String {
    let mut entries: Vec<Value> = Vec::new();
    let mut seen = std::collections::HashMap::<String, usize>::new();
    let mut unique = |key: String| {
        let n = seen.entry(key.clone()).or_default();
        *n += 1;
        hex_hash(&format!("{key}\u{0}{n}"))
    };
    for (file, diags) in &report.files {
        let hashes = fingerprint::line_hashes(&file.text);
        for d in diags {
            let line = file.position(d.primary.start).line;
            let line_hash = hashes.get(line - 1).map_or("", String::as_str);
            entries.push(json!({
                "type": "issue",
                "description": d.message,
                "check_name": d.rule.name,
                "fingerprint": unique(format!("{}\u{0}{}\u{0}{line_hash}", d.rule.name, file.path)),
                "severity": match d.severity {
                    Severity::Error => "critical",
                    Severity::Warning => "major",
                    Severity::Note => "minor",
                },
                "categories": ["Bug Risk"],
                "location": {"path": file.path, "lines": {"begin": line}},
            }));
        }
    }
    for e in &report.errors {
        entries.push(json!({
            "type": "issue",
            "description": format!("could not be analysed: {}", e.message),
            "check_name": "timeoutlint-error",
            "fingerprint": unique(format!("error\u{0}{}\u{0}{}", e.path, e.message)),
            "severity": "critical",
            "categories": ["Bug Risk"],
            "location": {"path": e.path, "lines": {"begin": e.line.unwrap_or(1)}},
        }));
    }
    let mut s = serde_json::to_string_pretty(&entries).unwrap_or_default();
    s.push('\n');
    s
}

/// 32 hex digits (GitLab's own reports use MD5's width): two FNV-1a 64 hashes with different
/// offsets. An identity, not a secret.
fn hex_hash(text: &str) -> String {
    let fnv = |mut h: u64| {
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    };
    format!(
        "{:016x}{:016x}",
        fnv(0xcbf2_9ce4_8422_2325),
        fnv(0x6c62_272e_07bb_0142)
    )
}
