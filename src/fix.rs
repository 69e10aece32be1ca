//! The fix engine: choose which findings' fixes to apply, resolve overlaps, apply them, re-parse,
//! and go round again until nothing changes. Pure: text in, text out.
//!
//! Deliberately absent: reading or writing files, the git check and diff printing (the edge,
//! `fix_edge`), and knowledge of any one rule. A rule plugs in by attaching a
//! [`crate::diagnostic::Fix`] to its finding and setting `fixable`; nothing here changes.

use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use crate::lint::{self, Config};
use crate::source::SourceFile;

/// Rounds of lint-and-fix before giving up: a fix can expose another finding (a sleep made
/// cancellable is then checked again), but a rule whose fix re-fires would loop forever.
pub const MAX_ROUNDS: usize = 4;

/// Which fixes may be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// `--fix`: `MachineApplicable` only.
    Safe,
    /// `--fix --unsafe-fixes`: also `MaybeIncorrect`.
    Unsafe,
    /// Every fix with edits, placeholders included: fixture snapshots and tests only.
    All,
}

impl Level {
    /// Whether a fix of `applicability` is applied at this level.
    #[must_use]
    pub fn allows(self, applicability: Applicability) -> bool {
        matches!(
            (self, applicability),
            (_, Applicability::MachineApplicable)
                | (Level::Unsafe | Level::All, Applicability::MaybeIncorrect)
                | (Level::All, Applicability::HasPlaceholders)
        )
    }
}

/// The fixes of `diags` allowed at `level`, then those whose edits do not overlap an earlier
/// one (whole fixes: a half-applied fix is worse than none). Earlier means first in the file;
/// the skipped ones are found again in the next round.
#[must_use]
pub fn select(diags: &[Diagnostic], level: Level) -> Vec<&Fix> {
    let mut fixes: Vec<&Fix> = diags
        .iter()
        .filter_map(|d| d.fix.as_ref())
        .filter(|f| !f.edits.is_empty() && level.allows(f.applicability))
        .collect();
    fixes.sort_by_key(|f| f.edits.iter().map(|e| e.span.start).min());
    let mut taken: Vec<(usize, usize)> = Vec::new();
    let mut out = Vec::new();
    for f in fixes {
        let clashes = f.edits.iter().any(|e| {
            taken
                .iter()
                .any(|&(s, end)| overlaps((s, end), (e.span.start, e.span.end)))
        });
        if clashes {
            continue;
        }
        taken.extend(f.edits.iter().map(|e| (e.span.start, e.span.end)));
        out.push(f);
    }
    out
}

/// Two byte ranges overlap, or are the same insertion point (whose order would be a guess).
fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    (a.0 < b.1 && b.0 < a.1)
        || a == b
        || (a.0 == a.1 && b.0 < a.0 && a.0 < b.1)
        || (b.0 == b.1 && a.0 < b.0 && b.0 < a.1)
}

/// Apply `fixes` (already free of overlaps) to `text`.
#[must_use]
pub fn apply(text: &str, fixes: &[&Fix]) -> String {
    let edits: Vec<Edit> = fixes.iter().flat_map(|f| f.edits.iter().cloned()).collect();
    crate::emit::apply_edits(text, &edits)
}

/// The result of fixing one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixed {
    /// The new text (the input when nothing applied).
    pub text: String,
    /// Fixes applied over all rounds.
    pub applied: usize,
    /// A round's result no longer parsed and was rolled back (a bug in a rule's fix).
    pub rolled_back: bool,
}

/// Does `text` still parse as a Rust file?
#[must_use]
pub fn parses(text: &str) -> bool {
    syn::parse_file(text.strip_prefix('\u{feff}').unwrap_or(text)).is_ok()
}

/// Lint `path`'s `text` with `config` and apply its fixes allowed at `level`, round after round
/// up to [`MAX_ROUNDS`], until no fix applies. A round whose output does not parse is rolled
/// back and ends the loop.
#[must_use]
pub fn fix_text(path: &str, text: &str, config: &Config, level: Level) -> Fixed {
    fix_with(text, level, |cur| {
        let report = lint::lint_source(&SourceFile::new(path, cur), config);
        report.error.is_none().then_some(report.diagnostics)
    })
}

/// [`fix_text`] over any linter: `lint` returns a text's findings, `None` when it cannot.
pub fn fix_with(text: &str, level: Level, lint: impl Fn(&str) -> Option<Vec<Diagnostic>>) -> Fixed {
    let mut cur = text.to_string();
    let mut applied = 0;
    for _ in 0..MAX_ROUNDS {
        let Some(diags) = lint(&cur) else { break };
        let chosen = select(&diags, level);
        if chosen.is_empty() {
            break;
        }
        let next = apply(&cur, &chosen);
        if next == cur {
            break;
        }
        if !parses(&next) {
            return Fixed {
                text: cur,
                applied,
                rolled_back: true,
            };
        }
        applied += chosen.len();
        cur = next;
    }
    Fixed {
        text: cur,
        applied,
        rolled_back: false,
    }
}

/// Helpers for rules building fixes from source slices.
pub mod slices {
    use crate::source::Span;

    /// `call` followed by `.await` (whitespace allowed): the span of both, or `None` when the
    /// future is not awaited right there (stored, joined, returned).
    #[must_use]
    pub fn awaited(text: &str, call: Span) -> Option<Span> {
        let rest = text.get(call.end..)?;
        let trimmed = rest.trim_start();
        let after_dot = trimmed.strip_prefix('.')?.trim_start();
        let tail = after_dot.strip_prefix("await")?;
        if tail.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            return None;
        }
        Some(Span::new(call.start, text.len() - tail.len()))
    }

    /// The argument list of a call `path(args)`, parentheses included: from the first `(` to
    /// the call's end, which must be `)`.
    #[must_use]
    pub fn call_args(text: &str, call: Span) -> Option<Span> {
        let s = text.get(call.start..call.end)?;
        let open = s.find('(')?;
        s.ends_with(')')
            .then(|| Span::new(call.start + open, call.end))
    }

    /// Does the loop expression `text` contain a `break` with a value (so it is used as a value
    /// and cannot become a `for`, nor gain a bare `break`)? Unparsable text counts as yes.
    #[must_use]
    pub fn breaks_with_value(text: &str) -> bool {
        struct V(bool);
        impl<'ast> syn::visit::Visit<'ast> for V {
            fn visit_expr_break(&mut self, b: &'ast syn::ExprBreak) {
                self.0 |= b.expr.is_some();
                syn::visit::visit_expr_break(self, b);
            }
        }
        let Ok(expr) = syn::parse_str::<syn::Expr>(text) else {
            return true;
        };
        let mut v = V(false);
        syn::visit::Visit::visit_expr(&mut v, &expr);
        v.0
    }

    /// Is byte `at` of the loop expression `text` inside a loop nested in it (where a bare
    /// `break` would leave the inner loop, not this one)? Unparsable text counts as yes.
    #[must_use]
    pub fn in_inner_loop(text: &str, at: usize) -> bool {
        use syn::spanned::Spanned;
        struct V<'a> {
            src: &'a crate::source::SourceFile,
            at: usize,
            depth: usize,
            hit: bool,
        }
        impl V<'_> {
            fn check(&mut self, span: proc_macro2::Span) {
                let s = crate::analysis::span_of(self.src, span);
                self.hit |= self.depth > 0 && s.start <= self.at && self.at < s.end;
                self.depth += 1;
            }
        }
        impl<'ast> syn::visit::Visit<'ast> for V<'_> {
            fn visit_expr_loop(&mut self, e: &'ast syn::ExprLoop) {
                self.check(e.span());
                syn::visit::visit_expr_loop(self, e);
                self.depth -= 1;
            }
            fn visit_expr_while(&mut self, e: &'ast syn::ExprWhile) {
                self.check(e.span());
                syn::visit::visit_expr_while(self, e);
                self.depth -= 1;
            }
            fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
                self.check(e.span());
                syn::visit::visit_expr_for_loop(self, e);
                self.depth -= 1;
            }
        }
        let Ok(expr) = syn::parse_str::<syn::Expr>(text) else {
            return true;
        };
        let src = crate::source::SourceFile::new("", text);
        let mut v = V {
            src: &src,
            at,
            depth: 0,
            hit: false,
        };
        syn::visit::Visit::visit_expr(&mut v, &expr);
        v.hit
    }

    /// `text` wrapped in parentheses unless it is a path or call that a method can follow.
    #[must_use]
    pub fn receiver(text: &str) -> String {
        let t = text.trim();
        let simple = t
            .chars()
            .all(|c| c.is_alphanumeric() || "_:.()&".contains(c))
            && !t.starts_with('&');
        if simple {
            t.to_string()
        } else {
            format!("({t})")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    fn fix(a: Applicability, edits: &[(usize, usize, &str)]) -> Fix {
        Fix {
            title: "t".into(),
            applicability: a,
            edits: edits
                .iter()
                .map(|&(s, e, r)| Edit {
                    span: Span::new(s, e),
                    replacement: r.into(),
                })
                .collect(),
        }
    }

    #[test]
    fn levels() {
        assert!(Level::Safe.allows(Applicability::MachineApplicable));
        assert!(!Level::Safe.allows(Applicability::MaybeIncorrect));
        assert!(Level::Unsafe.allows(Applicability::MaybeIncorrect));
        assert!(!Level::Unsafe.allows(Applicability::HasPlaceholders));
        assert!(Level::All.allows(Applicability::HasPlaceholders));
        assert!(!Level::All.allows(Applicability::Unspecified));
    }

    #[test]
    fn overlapping_fixes_keep_the_first_whole() {
        let rule = crate::rules::ALL[0];
        let diag = |f: Fix| Diagnostic::new(rule, Span::new(0, 0), "m").fix(f);
        let diags = [
            diag(fix(Applicability::MachineApplicable, &[(5, 6, "w")])),
            diag(fix(Applicability::MachineApplicable, &[(2, 5, "z")])),
            diag(fix(
                Applicability::MachineApplicable,
                &[(0, 3, "x"), (10, 12, "y")],
            )),
            diag(fix(Applicability::MaybeIncorrect, &[(13, 14, "q")])),
        ];
        let chosen = select(&diags, Level::Safe);
        assert_eq!(
            chosen.len(),
            2,
            "the clashing one and the unsafe one are left"
        );
        assert_eq!(apply("abcdefghijklmn", &chosen), "xdewghijymn");
        assert!(overlaps((4, 4), (4, 4)));
        assert!(overlaps((2, 6), (4, 4)));
        assert!(!overlaps((0, 3), (3, 5)));
    }

    #[test]
    fn slice_helpers() {
        let t = "x(sleep(d) . await);";
        assert_eq!(slices::awaited(t, Span::new(2, 10)), Some(Span::new(2, 18)));
        assert_eq!(slices::awaited("sleep(d).awaiting", Span::new(0, 8)), None);
        assert_eq!(
            slices::call_args("a::b(c(1))", Span::new(0, 10)),
            Some(Span::new(4, 10))
        );
        assert!(slices::breaks_with_value("loop { break 3; }"));
        assert!(!slices::breaks_with_value("loop { break; }"));
        let l = "loop { a(); for x in y { b(); } c(); }";
        assert!(slices::in_inner_loop(l, l.find("b()").unwrap()));
        assert!(!slices::in_inner_loop(l, l.find("c()").unwrap()));
        assert_eq!(slices::receiver("base * 2"), "(base * 2)");
        assert_eq!(
            slices::receiver("Duration::from_millis(5)"),
            "Duration::from_millis(5)"
        );
    }

    /// A fake rule that renames `a` to `b`, then `b` to `c`: two rounds to the fixed point; and
    /// one whose fix breaks the file: rolled back.
    #[test]
    fn rounds_and_rollback() {
        let rule = crate::rules::ALL[0];
        let rename = |text: &str| {
            let at = text.find("let a").or_else(|| text.find("let b"))? + 4;
            let to = if &text[at..=at] == "a" { "b" } else { "c" };
            Some(vec![Diagnostic::new(rule, Span::new(at, at + 1), "m").fix(
                fix(Applicability::MachineApplicable, &[(at, at + 1, to)]),
            )])
        };
        let out = fix_with("fn f() { let a = 1; }", Level::Safe, |t| {
            Some(rename(t).unwrap_or_default())
        });
        assert_eq!(out.text, "fn f() { let c = 1; }");
        assert_eq!((out.applied, out.rolled_back), (2, false));
        let broken = fix_with("fn f() {}", Level::Safe, |_| {
            Some(vec![Diagnostic::new(rule, Span::new(0, 0), "m")
                .fix(fix(Applicability::MachineApplicable, &[(8, 9, "")]))])
        });
        assert_eq!(broken.text, "fn f() {}");
        assert!(broken.rolled_back);
        let endless = fix_with("fn f() {}", Level::Safe, |_| {
            Some(vec![Diagnostic::new(rule, Span::new(0, 0), "m")
                .fix(fix(Applicability::MachineApplicable, &[(0, 0, "\n")]))])
        });
        assert_eq!(
            endless.applied, MAX_ROUNDS,
            "the bound stops a fix that re-fires"
        );
    }

    #[test]
    fn parse_check() {
        assert!(parses("fn f() {}"));
        assert!(!parses("fn f() {"));
    }
}
