//! Test code is not production code (ARCHITECTURE.md invariant 7): which files and items are
//! tests, so that the analysis never sees them unless configuration asks for it.
//!
//! A test server's retry loop, a `#[tokio::test]` that sleeps with `std::thread::sleep`, or a
//! helper that polls a mock until it answers are deliberate, and reporting them buries the
//! findings that matter (one crate of the pinned corpus had 17 findings, all in its tests).
//!
//! Test code is, by path: a file under a `tests` or `benches` directory, or named `tests.rs`,
//! `*_tests.rs` or `*_test.rs` (the files `#[cfg(test)] mod tests;` points to); by item: an item
//! whose `#[cfg(..)]` can only hold in a test build, and a function with a test attribute
//! (`#[test]`, `#[tokio::test]`, any attribute path ending in `test`, `#[rstest]`,
//! `#[test_case(..)]`, `#[bench]`). A predicate "can only hold in a test build" when it is false
//! once `test` and every feature whose name says test support (`test-util`, `testing`, `mocks`)
//! are false, whatever the other options: `cfg(test)`, `cfg(all(test, unix))`,
//! `cfg(any(test, feature = "test-util"))`, but not `cfg(not(test))` or
//! `cfg(any(test, feature = "tls"))`.
//!
//! Deliberately absent: following `mod` declarations to the file they name (a test module in a
//! file with a production-like name is linted) and examples, which users copy into production.

use quote::ToTokens;
use syn::visit_mut::VisitMut;

use crate::analysis::span_of;
use crate::base::source::{SourceFile, Span};

/// Is the file at `path` (display form, `/`-separated) test code as a whole?
#[must_use]
pub fn is_test_path(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let Some(file) = parts.pop() else {
        return false;
    };
    if parts.iter().any(|d| matches!(*d, "tests" | "benches")) {
        return true;
    }
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    stem == "tests" || stem.ends_with("_tests") || stem.ends_with("_test")
}

/// Remove every test item from `file`, at any depth of modules, impls and traits, and from
/// function bodies; return the byte ranges they covered, sorted. What is left keeps its spans,
/// so every finding still points at the original text.
pub fn strip(file: &mut syn::File, src: &SourceFile) -> Vec<Span> {
    let mut stripper = Stripper {
        src,
        removed: Vec::new(),
    };
    stripper.visit_file_mut(file);
    stripper.removed.sort_unstable();
    stripper.removed
}

/// Is `offset` inside one of the sorted, non-overlapping-or-nested `ranges` that [`strip`]
/// returned?
#[must_use]
pub fn covers(ranges: &[Span], offset: usize) -> bool {
    // Ranges are disjoint (a removed item's inner items are never visited), so the last range
    // starting at or before `offset` is the only candidate.
    let i = ranges.partition_point(|r| r.start <= offset);
    i > 0 && offset < ranges[i - 1].end
}

struct Stripper<'a> {
    src: &'a SourceFile,
    removed: Vec<Span>,
}

impl Stripper<'_> {
    /// Keep `attrs`'s item unless it is test code; record what goes.
    fn keep(&mut self, attrs: &[syn::Attribute], item: &impl ToTokens) -> bool {
        if !is_test_item(attrs) {
            return true;
        }
        let tokens = item.to_token_stream();
        let mut iter = tokens.into_iter();
        if let Some(first) = iter.next() {
            let last = iter.last().unwrap_or_else(|| first.clone());
            let start = span_of(self.src, first.span()).start;
            let end = span_of(self.src, last.span()).end;
            self.removed.push(Span::new(start, end.max(start)));
        }
        false
    }
}

impl VisitMut for Stripper<'_> {
    fn visit_file_mut(&mut self, f: &mut syn::File) {
        f.items.retain(|i| self.keep(item_attrs(i), i));
        syn::visit_mut::visit_file_mut(self, f);
    }

    fn visit_item_mod_mut(&mut self, m: &mut syn::ItemMod) {
        if let Some((_, items)) = &mut m.content {
            items.retain(|i| self.keep(item_attrs(i), i));
        }
        syn::visit_mut::visit_item_mod_mut(self, m);
    }

    fn visit_item_impl_mut(&mut self, i: &mut syn::ItemImpl) {
        i.items.retain(|it| self.keep(impl_item_attrs(it), it));
        syn::visit_mut::visit_item_impl_mut(self, i);
    }

    fn visit_item_trait_mut(&mut self, t: &mut syn::ItemTrait) {
        t.items.retain(|it| self.keep(trait_item_attrs(it), it));
        syn::visit_mut::visit_item_trait_mut(self, t);
    }

    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        b.stmts.retain(|s| match s {
            syn::Stmt::Item(i) => self.keep(item_attrs(i), i),
            _ => true,
        });
        syn::visit_mut::visit_block_mut(self, b);
    }

    // Expressions hold no items but those of blocks (visited above); skipping the rest of the
    // walk below statements would be an optimisation, not a change: the visitor is cheap.
}

/// Does an item with these attributes exist only in test builds?
fn is_test_item(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        if path.is_ident("cfg") {
            return a
                .parse_args::<syn::Meta>()
                .is_ok_and(|m| eval(&m) == Some(false));
        }
        path.segments.last().is_some_and(|s| {
            let name = s.ident.to_string();
            matches!(name.as_str(), "test" | "rstest" | "test_case" | "bench")
        })
    })
}

/// A `cfg` predicate with `test` and test-support features false: `Some(false)` when it cannot
/// hold then, `Some(true)` when it must, `None` when it depends on other options.
fn eval(meta: &syn::Meta) -> Option<bool> {
    match meta {
        syn::Meta::Path(p) => p.is_ident("test").then_some(false),
        syn::Meta::NameValue(nv) => {
            if !nv.path.is_ident("feature") {
                return None;
            }
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            else {
                return None;
            };
            is_test_feature(&s.value()).then_some(false)
        }
        syn::Meta::List(list) => {
            let args = list
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                )
                .ok()?;
            let values: Vec<Option<bool>> = args.iter().map(eval).collect();
            if list.path.is_ident("not") {
                return match values.as_slice() {
                    [v] => v.map(|b| !b),
                    _ => None,
                };
            }
            if list.path.is_ident("all") {
                if values.contains(&Some(false)) {
                    return Some(false);
                }
                return values.iter().all(|v| *v == Some(true)).then_some(true);
            }
            if list.path.is_ident("any") {
                if values.contains(&Some(true)) {
                    return Some(true);
                }
                return values.iter().all(|v| *v == Some(false)).then_some(false);
            }
            None
        }
    }
}

/// A feature that only test builds turn on, by the names crates give them.
fn is_test_feature(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
        matches!(
            w,
            "test" | "tests" | "testing" | "testutil" | "testutils" | "mock" | "mocks"
        )
    }) || name.starts_with("test")
}

fn item_attrs(i: &syn::Item) -> &[syn::Attribute] {
    match i {
        syn::Item::Const(x) => &x.attrs,
        syn::Item::Enum(x) => &x.attrs,
        syn::Item::ExternCrate(x) => &x.attrs,
        syn::Item::Fn(x) => &x.attrs,
        syn::Item::ForeignMod(x) => &x.attrs,
        syn::Item::Impl(x) => &x.attrs,
        syn::Item::Macro(x) => &x.attrs,
        syn::Item::Mod(x) => &x.attrs,
        syn::Item::Static(x) => &x.attrs,
        syn::Item::Struct(x) => &x.attrs,
        syn::Item::Trait(x) => &x.attrs,
        syn::Item::TraitAlias(x) => &x.attrs,
        syn::Item::Type(x) => &x.attrs,
        syn::Item::Union(x) => &x.attrs,
        syn::Item::Use(x) => &x.attrs,
        _ => &[],
    }
}

fn impl_item_attrs(i: &syn::ImplItem) -> &[syn::Attribute] {
    match i {
        syn::ImplItem::Const(x) => &x.attrs,
        syn::ImplItem::Fn(x) => &x.attrs,
        syn::ImplItem::Type(x) => &x.attrs,
        syn::ImplItem::Macro(x) => &x.attrs,
        _ => &[],
    }
}

fn trait_item_attrs(i: &syn::TraitItem) -> &[syn::Attribute] {
    match i {
        syn::TraitItem::Const(x) => &x.attrs,
        syn::TraitItem::Fn(x) => &x.attrs,
        syn::TraitItem::Type(x) => &x.attrs,
        syn::TraitItem::Macro(x) => &x.attrs,
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a snippet keeps: the names of the functions left after stripping, and the first
    /// line of each removed range.
    fn check(text: &str) -> String {
        let src = SourceFile::new("x.rs", text);
        let mut file = syn::parse_file(text).expect("snippet parses");
        let removed = strip(&mut file, &src);
        let mut kept = Vec::new();
        collect_fns(&file.items, &mut kept);
        let lines: Vec<String> = removed
            .iter()
            .map(|r| src.position(r.start).line.to_string())
            .collect();
        format!(
            "kept: {}; removed at lines: {}",
            kept.join(" "),
            lines.join(" ")
        )
    }

    fn collect_fns(items: &[syn::Item], out: &mut Vec<String>) {
        for i in items {
            match i {
                syn::Item::Fn(f) => out.push(f.sig.ident.to_string()),
                syn::Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        collect_fns(items, out);
                    }
                }
                syn::Item::Impl(im) => {
                    for it in &im.items {
                        if let syn::ImplItem::Fn(f) = it {
                            out.push(f.sig.ident.to_string());
                        }
                    }
                }
                _ => {}
            }
        }
    }

    #[test]
    fn test_items_go_production_items_stay() {
        let text = "fn prod() {}\n\
                    #[cfg(test)]\nmod tests {\n  fn helper() {}\n  #[test]\n  fn t() {}\n}\n\
                    #[tokio::test]\nasync fn it() {}\n\
                    #[cfg(not(test))]\nfn not_test() {}\n\
                    #[cfg(any(test, feature = \"test-util\"))]\nfn support() {}\n\
                    #[cfg(any(test, feature = \"tls\"))]\nfn tls_or_test() {}\n\
                    #[cfg(all(test, unix))]\nfn unix_test() {}\n\
                    struct S;\nimpl S {\n  fn method() {}\n  #[test]\n  fn in_impl() {}\n}\n\
                    #[rstest]\nfn case() {}\n";
        assert_eq!(
            check(text),
            "kept: prod not_test tls_or_test method; removed at lines: 2 8 12 16 21 24"
        );
    }

    #[test]
    fn items_inside_function_bodies() {
        let text = "fn outer() {\n    #[test]\n    fn inner() {}\n    let x = 1;\n}\n";
        assert_eq!(check(text), "kept: outer; removed at lines: 2");
    }

    #[test]
    fn covers_finds_offsets_in_removed_ranges_only() {
        let ranges = [Span::new(10, 20), Span::new(30, 40)];
        let hits: Vec<usize> = [0, 9, 10, 19, 20, 29, 30, 39, 40]
            .into_iter()
            .filter(|o| covers(&ranges, *o))
            .collect();
        assert_eq!(hits, vec![10, 19, 30, 39]);
    }

    #[test]
    fn test_paths() {
        for p in [
            "tests/it.rs",
            "crate/tests/support/mod.rs",
            "src/tests/mod.rs",
            "benches/b.rs",
            "src/client/tests.rs",
            "src/client_tests.rs",
            "src/pool_test.rs",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in [
            "src/lib.rs",
            "examples/retry.rs",
            "src/testing_backoff.rs",
            "src/attest.rs",
            "tests.rs.orig/lib.rs",
            "src/contests/mod.rs",
        ] {
            assert!(!is_test_path(p), "{p}");
        }
    }
}
