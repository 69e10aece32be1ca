//! The fix engine: choose which findings' fixes to apply, resolve overlaps, apply them, re-parse,
//! and go round again until nothing changes. Pure: text in, text out.
//!
//! Deliberately absent: reading or writing files, the git check and diff printing (the edge,
//! `fix_edge`), and knowledge of any one rule. A rule plugs in by attaching a
//! [`crate::base::diagnostic::Fix`] to its finding and setting `fixable`; nothing here changes.

use crate::base::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use crate::base::source::SourceFile;
use crate::lint::{self, Config};

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

/// Apply `fixes` (already free of overlaps) to `text`. The lines a fix inserts take the file's
/// line ending: rules write `\n`, and a CRLF file must not come out with mixed endings.
#[must_use]
pub fn apply(text: &str, fixes: &[&Fix]) -> String {
    let ending = crate::base::source::line_ending_of(text);
    let edits: Vec<Edit> = fixes
        .iter()
        .flat_map(|f| f.edits.iter())
        .map(|e| Edit {
            span: e.span,
            replacement: crate::base::source::with_line_ending(&e.replacement, ending),
        })
        .collect();
    crate::base::diagnostic::apply_edits(text, &edits)
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

/// Lint `path`'s `text` with `config` as its own crate and apply its fixes allowed at `level`,
/// round after round up to [`MAX_ROUNDS`], until no fix applies. A round whose output does not
/// parse is rolled back and ends the loop.
///
/// For a text that is its own crate (the fuzz target, tests). A run over files does not use
/// it: there a file alone is not its crate, and `--fix` applies only the fixes the crate run
/// reported (`fix_edge`).
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

pub mod loop_shape;
pub mod policy_loop;

/// Helpers for rules building fixes from source slices.
pub mod slices {
    use crate::base::source::Span;

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
            src: &'a crate::base::source::SourceFile,
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
        let src = crate::base::source::SourceFile::new("", text);
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

/// Helpers for rules asking what a fix may name at a place: a deadline in scope, whether a std
/// type is imported. Read-only questions over the facts and the text, no edits.
pub mod scope {
    use crate::analysis::Facts;
    use crate::base::source::SourceFile;

    /// The deadline a wait in `function` can be capped by: the innermost local named like a
    /// deadline (`deadline`, `give_up_deadline`) bound from a `now()` expression, or a parameter
    /// named like one whose type is an `Instant`. Returns its name and the path to write for
    /// its `Instant` type (`Instant` when imported, else the full path).
    #[must_use]
    pub fn deadline(
        src: &SourceFile,
        facts: &Facts,
        function: Option<usize>,
    ) -> Option<(String, String)> {
        let (name, ty) = deadline_var(src, facts, function)?;
        let instant = if let Some(ty) = ty {
            ty
        } else if facts.imports.resolve(&["Instant".to_string()])[0] == "Instant" {
            "std::time::Instant".to_string()
        } else {
            "Instant".to_string()
        };
        Some((name, instant))
    }

    /// The path to write for `std::time::Duration`: `Duration` when the file imports it (from
    /// std or tokio, which re-exports it), else the full path.
    #[must_use]
    pub fn duration(facts: &Facts) -> &'static str {
        let candidates = facts.imports.resolve(&["Duration".to_string()]);
        if candidates.iter().any(|c| c.ends_with("time::Duration")) {
            "Duration"
        } else {
            "std::time::Duration"
        }
    }

    fn deadline_var(
        src: &SourceFile,
        facts: &Facts,
        function: Option<usize>,
    ) -> Option<(String, Option<String>)> {
        let mut cur = function;
        while let Some(i) = cur {
            let f = &facts.functions[i];
            let mut names: Vec<&String> = f
                .bindings
                .keys()
                .filter(|n| n.contains("deadline") && f.bindings[*n].words.contains("now"))
                .collect();
            names.sort();
            if let Some(n) = names.first() {
                let tokio = f.bindings[*n].words.contains("tokio");
                return Some(((*n).clone(), tokio.then(|| "tokio::time::Instant".into())));
            }
            if let Some(p) = deadline_param(src.slice(f.span)) {
                return Some(p);
            }
            cur = f.parent;
        }
        None
    }

    /// `deadline: Instant` (or `&tokio::time::Instant`) among the parameters of the function or
    /// method whose whole text (attributes and doc comments included) is `text`.
    fn deadline_param(text: &str) -> Option<(String, Option<String>)> {
        use quote::ToTokens;
        let sig = syn::parse_str::<syn::ItemFn>(text)
            .map(|f| f.sig)
            .or_else(|_| syn::parse_str::<syn::ImplItemFn>(text).map(|f| f.sig))
            .ok()?;
        sig.inputs.iter().find_map(|input| {
            let syn::FnArg::Typed(pt) = input else {
                return None;
            };
            let syn::Pat::Ident(id) = &*pt.pat else {
                return None;
            };
            let name = id.ident.to_string();
            let ty = pt.ty.to_token_stream().to_string().replace(' ', "");
            let ty = ty.trim_start_matches('&').to_string();
            (name.contains("deadline") && ty.ends_with("Instant")).then_some((name, Some(ty)))
        })
    }
}

/// Helpers for rules that move or rewrite whole statements: where a statement sits, what names
/// an expression reads, and the text to put a new statement before another one.
pub mod syntax {
    use std::collections::BTreeSet;

    use syn::spanned::Spanned;
    use syn::visit::Visit;

    use crate::analysis::span_of;
    use crate::base::source::{SourceFile, Span};

    /// The innermost block statement that contains `inner` and lies outside it: where a `let`
    /// hoisted out of `inner` goes, just before.
    #[must_use]
    pub fn enclosing_stmt(src: &SourceFile, ast: &syn::File, inner: Span) -> Option<Span> {
        struct V<'a> {
            src: &'a SourceFile,
            inner: Span,
            found: Option<Span>,
        }
        impl<'ast> Visit<'ast> for V<'_> {
            fn visit_block(&mut self, b: &'ast syn::Block) {
                let block = span_of(self.src, b.span());
                if !block.contains(self.inner) || self.inner.contains(block) {
                    return;
                }
                for stmt in &b.stmts {
                    let s = span_of(self.src, stmt.span());
                    if s.contains(self.inner) {
                        self.found = Some(s);
                    }
                }
                syn::visit::visit_block(self, b);
            }
        }
        let mut v = V {
            src,
            inner,
            found: None,
        };
        v.visit_file(ast);
        v.found
    }

    /// The local names `expr` reads from outside itself: single-segment lowercase paths, plus
    /// identifiers and inline format arguments (`{name}`) inside macro calls. Over-approximates
    /// (a function name counts), which only makes a fix more cautious.
    #[must_use]
    pub fn free_names(expr: &syn::Expr) -> BTreeSet<String> {
        struct V(BTreeSet<String>);
        impl<'ast> Visit<'ast> for V {
            fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
                if p.qself.is_none() && p.path.segments.len() == 1 {
                    let name = p.path.segments[0].ident.to_string();
                    if name.starts_with(|c: char| c.is_lowercase() || c == '_') {
                        self.0.insert(name);
                    }
                }
            }
            fn visit_macro(&mut self, m: &'ast syn::Macro) {
                macro_names(m.tokens.clone(), &mut self.0);
            }
        }
        let mut v = V(BTreeSet::new());
        v.visit_expr(expr);
        // Names the expression binds itself (closure parameters, `let`s in blocks) are not read
        // from outside.
        let own = bound_names(expr);
        v.0.retain(|n| !own.contains(n));
        v.0
    }

    fn macro_names(tokens: proc_macro2::TokenStream, out: &mut BTreeSet<String>) {
        use proc_macro2::TokenTree;
        let tts: Vec<TokenTree> = tokens.into_iter().collect();
        let punct =
            |i: usize, c: char| matches!(tts.get(i), Some(TokenTree::Punct(p)) if p.as_char() == c);
        for (i, tt) in tts.iter().enumerate() {
            match tt {
                TokenTree::Ident(ident) => {
                    let name = ident.to_string();
                    // Not a field (`.id`), a path segment (`a::b`) or a path head (`std::`).
                    let inside_path = i > 0 && (punct(i - 1, '.') || punct(i - 1, ':'));
                    if !inside_path
                        && !punct(i + 1, ':')
                        && !punct(i + 1, '!')
                        && name.starts_with(|c: char| c.is_lowercase() || c == '_')
                    {
                        out.insert(name);
                    }
                }
                TokenTree::Group(g) => macro_names(g.stream(), out),
                TokenTree::Literal(l) => {
                    // `format!("{attempt}")` reads `attempt`.
                    let text = l.to_string();
                    for part in text.split('{').skip(1) {
                        let name: String = part
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if name.starts_with(|c: char| c.is_lowercase() || c == '_') {
                            out.insert(name);
                        }
                    }
                }
                TokenTree::Punct(_) => {}
            }
        }
    }

    /// Every name a pattern inside `expr` binds (`let`, `for`, closure and match-arm patterns).
    #[must_use]
    pub fn bound_names(expr: &syn::Expr) -> BTreeSet<String> {
        struct V(BTreeSet<String>);
        impl<'ast> Visit<'ast> for V {
            fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
                self.0.insert(p.ident.to_string());
                syn::visit::visit_pat_ident(self, p);
            }
        }
        let mut v = V(BTreeSet::new());
        v.visit_expr(expr);
        v.0
    }

    /// The whitespace before `at` on its line, when nothing else precedes it there.
    #[must_use]
    pub fn indent_before(src: &SourceFile, at: usize) -> Option<String> {
        let line = src.line_span(src.line_index(at));
        let before = src.text.get(line.start..at)?;
        before
            .chars()
            .all(char::is_whitespace)
            .then(|| before.to_string())
    }

    /// `stmt` and its whole line (indentation, a trailing `//` comment, the line break) when
    /// nothing else is on it; else just `stmt`. Returns the span to delete and the comment.
    #[must_use]
    pub fn whole_line(src: &SourceFile, stmt: Span) -> (Span, Option<String>) {
        let line = src.line_span(src.line_index(stmt.start));
        let end_line = src.line_span(src.line_index(stmt.end.saturating_sub(1).max(stmt.start)));
        let before = &src.text[line.start..stmt.start];
        let after = &src.text[stmt.end..end_line.end];
        let rest = after.trim();
        if !before.trim().is_empty() || !(rest.is_empty() || rest.starts_with("//")) {
            return (stmt, None);
        }
        // The line break goes too, `\r\n` whole: half of one is a stray blank line.
        let after_line = &src.text[end_line.end..];
        let newline = if after_line.starts_with("\r\n") {
            2
        } else {
            usize::from(after_line.starts_with('\n'))
        };
        let comment = (!rest.is_empty()).then(|| rest.to_string());
        (Span::new(line.start, end_line.end + newline), comment)
    }

    /// Is `word` used as a whole identifier in `text`?
    #[must_use]
    pub fn has_word(text: &str, word: &str) -> bool {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        text.match_indices(word)
            .any(|(i, _)| !text[..i].ends_with(ident) && !text[i + word.len()..].starts_with(ident))
    }

    /// The expression whose span is exactly `span` (a loop, a call), when there is one.
    #[must_use]
    pub fn find_expr(src: &SourceFile, ast: &syn::File, span: Span) -> Option<syn::Expr> {
        struct V<'a> {
            src: &'a SourceFile,
            span: Span,
            found: Option<syn::Expr>,
        }
        impl<'ast> Visit<'ast> for V<'_> {
            fn visit_expr(&mut self, e: &'ast syn::Expr) {
                if self.found.is_some() {
                    return;
                }
                let s = span_of(self.src, e.span());
                if s == self.span {
                    self.found = Some(e.clone());
                    return;
                }
                if s.contains(self.span) {
                    syn::visit::visit_expr(self, e);
                }
            }
        }
        let mut v = V {
            src,
            span,
            found: None,
        };
        v.visit_file(ast);
        v.found
    }

    /// The `let` statement whose initialiser spans exactly `init`.
    #[must_use]
    pub fn let_with_init(src: &SourceFile, ast: &syn::File, init: Span) -> Option<syn::Local> {
        struct V<'a> {
            src: &'a SourceFile,
            init: Span,
            found: Option<syn::Local>,
        }
        impl<'ast> Visit<'ast> for V<'_> {
            fn visit_local(&mut self, l: &'ast syn::Local) {
                if let Some(i) = &l.init {
                    if span_of(self.src, i.expr.span()) == self.init {
                        self.found = Some(l.clone());
                    }
                }
                syn::visit::visit_local(self, l);
            }
        }
        let mut v = V {
            src,
            init,
            found: None,
        };
        v.visit_file(ast);
        v.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::source::Span;

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
