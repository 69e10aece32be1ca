//! The shape of the source tree, checked: no module imports one that sits above it in the
//! pipeline, and every file under `src/` is formatted (rustfmt sees the rule files only through
//! plain `mod` lines, so a macro-generated one would slip past `cargo fmt --check`).
//!
//! The layering reads every `src/**/*.rs` with syn, collects the `crate::..` paths each module
//! names (in `use` trees, in code, and in macro arguments; test modules and doc links left out)
//! and checks each against [`LAYERS`]: none may name a layer above its own. There is no list of
//! tolerated exceptions; a back-edge is fixed by moving the shared piece down (as the rule
//! description, the lexer and the suppression-comment reader moved into `base`).

use std::collections::BTreeSet;
use std::path::Path;

use syn::visit::Visit;

use crate::support::root;

/// The pipeline, bottom first: a module may name its own layer and those below it. A node is a
/// module path; a module belongs to the longest node that prefixes its path, so a new module
/// lands in its parent's layer until it is placed here.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "data every stage shares: text and spans, findings, library knowledge, the literal and \
         comment regions of a text, the stderr writer that a closed pipe cannot crash",
        &["base"],
    ),
    (
        "walk: the files and their crates, and the bounded reader of every other file",
        &["walk"],
    ),
    ("prefilter and mask: what is worth parsing", &["prefilter"]),
    ("parse", &["parse"]),
    (
        "analysis: the facts of a file, the crate index",
        &["analysis"],
    ),
    (
        "rules, with the fix builders they use (source slices and syntax, no IO)",
        &[
            "rules",
            "fix::slices",
            "fix::scope",
            "fix::syntax",
            "fix::loop_shape",
            "fix::policy_loop",
        ],
    ),
    ("precedence between rules, after all ran", &["precedence"]),
    (
        "suppression comments and configuration",
        &["suppression", "config"],
    ),
    ("lint: one file's pass through the stages above", &["lint"]),
    ("fix: applying fixes, re-linting", &["fix"]),
    ("emit: output formats", &["emit"]),
    (
        "driver: one run (the walk, pass one, the crate join, finishing) into a report",
        &["driver"],
    ),
    ("the edge: arguments, IO, files written", &["edge"]),
];

fn layer_of(node: &str) -> usize {
    LAYERS
        .iter()
        .position(|(_, nodes)| nodes.contains(&node))
        .unwrap_or_else(|| panic!("{node} has no layer"))
}

/// The declared node `path` belongs to: the longest one that prefixes it.
fn node_of(path: &[String]) -> Option<&'static str> {
    (1..=path.len()).rev().find_map(|n| {
        let joined = path[..n].join("::");
        LAYERS
            .iter()
            .flat_map(|(_, nodes)| nodes.iter().copied())
            .find(|node| *node == joined)
    })
}

/// The `crate::` paths one module names, by the module path they appear in.
struct Refs {
    module: Vec<String>,
    out: Vec<(Vec<String>, Vec<String>)>,
}

impl Refs {
    fn add(&mut self, segs: &[String]) {
        let target = match segs.first().map(String::as_str) {
            Some("crate") => segs[1..].to_vec(),
            Some("super") => {
                let mut base = self.module.clone();
                let mut rest = segs;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                base
            }
            _ => return,
        };
        if !target.is_empty() {
            self.out.push((self.module.clone(), target));
        }
    }
}

fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut p = prefix.clone();
            if n.ident != "self" {
                p.push(n.ident.to_string());
            }
            out.push(p);
        }
        syn::UseTree::Rename(r) => {
            let mut p = prefix.clone();
            p.push(r.ident.to_string());
            out.push(p);
        }
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().split_whitespace().any(|w| w == "test"))
    })
}

impl<'ast> Visit<'ast> for Refs {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if is_test_only(&m.attrs) {
            return;
        }
        self.module.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.module.pop();
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test_only(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut paths);
        for p in paths {
            self.add(&p);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.add(&segs);
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Macro arguments are tokens: `crate :: a :: b` sequences name modules too.
        let tokens: Vec<proc_macro2::TokenTree> = flatten(m.tokens.clone());
        for (i, t) in tokens.iter().enumerate() {
            let proc_macro2::TokenTree::Ident(id) = t else {
                continue;
            };
            if id != "crate" {
                continue;
            }
            let mut segs = vec!["crate".to_string()];
            let mut j = i + 1;
            while let (
                Some(proc_macro2::TokenTree::Punct(a)),
                Some(proc_macro2::TokenTree::Punct(b)),
                Some(proc_macro2::TokenTree::Ident(next)),
            ) = (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
            {
                if a.as_char() != ':' || b.as_char() != ':' {
                    break;
                }
                segs.push(next.to_string());
                j += 3;
            }
            self.add(&segs);
        }
        syn::visit::visit_macro(self, m);
    }
}

fn flatten(ts: proc_macro2::TokenStream) -> Vec<proc_macro2::TokenTree> {
    let mut out = Vec::new();
    for t in ts {
        match t {
            proc_macro2::TokenTree::Group(g) => out.extend(flatten(g.stream())),
            t => out.push(t),
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a library file (`src/fix/policy_loop.rs` is `fix::policy_loop`); `None`
/// for the crate root and the binaries, which sit above everything.
fn module_of(rel: &Path) -> Option<Vec<String>> {
    let parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.as_slice() {
        [one] if one == "lib" || one == "main" => None,
        [first, ..] if first == "bin" => None,
        [.., last] if last == "mod" => Some(parts[..parts.len() - 1].to_vec()),
        _ => Some(parts),
    }
}

/// Every `(module node, named node)` edge of the library.
fn edges() -> BTreeSet<(&'static str, &'static str)> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut edges = BTreeSet::new();
    for f in files {
        let Some(module) = module_of(f.strip_prefix(&src).unwrap()) else {
            continue;
        };
        let ast = syn::parse_file(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let mut refs = Refs {
            module: module.clone(),
            out: Vec::new(),
        };
        refs.visit_file(&ast);
        for (from, to) in refs.out {
            let from_node =
                node_of(&from).unwrap_or_else(|| panic!("{} has no layer", from.join("::")));
            let Some(to_node) = node_of(&to) else {
                panic!(
                    "{} names crate::{}, which has no layer",
                    from.join("::"),
                    to.join("::")
                )
            };
            edges.insert((from_node, to_node));
        }
    }
    edges
}

#[test]
fn no_module_imports_one_above_it_in_the_pipeline() {
    let edges = edges();
    let back: BTreeSet<(&str, &str)> = edges
        .iter()
        .copied()
        .filter(|(from, to)| layer_of(to) > layer_of(from))
        .collect();
    assert!(
        back.is_empty(),
        "modules importing one above them: {back:?}"
    );
}

#[test]
fn the_layering_check_sees_the_edges_it_must() {
    // Guards the scanner: edges the tree certainly has are found (a `use`, a path in code, a
    // macro argument), or an empty scan would pass the test above.
    let edges = edges();
    for e in [
        ("lint", "rules"),
        ("rules", "analysis"),
        ("emit", "base"),
        ("driver", "lint"),
        ("edge", "driver"),
    ] {
        assert!(edges.contains(&e), "edge {e:?} not seen");
    }
}

#[test]
fn every_source_file_is_formatted() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let out = std::process::Command::new("rustfmt")
        .args(["--check", "--edition", "2021"])
        .args(&files)
        .current_dir(root())
        .output()
        .expect("rustfmt runs (rustup component add rustfmt)");
    assert!(
        out.status.success(),
        "rustfmt --check: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
