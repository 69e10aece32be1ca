//! `use` resolution: which full path does a name written in this file stand for?
//!
//! Enough of Rust's name resolution to tell `backoff::retry` from a crate-local `fn retry`:
//! `use` trees (renames, groups, globs, nested modules' imports merged into one table) and
//! `extern crate .. as ..`. What it deliberately does not do: follow re-exports across crates or
//! resolve `crate::`/`super::` paths to items (the crate index does that).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The file's imports.
#[derive(Debug, Default, Clone)]
pub struct Imports {
    names: HashMap<String, String>,
    globs: Vec<String>,
    /// Local items (`fn`, `struct`, ...) that shadow crate names of the same spelling: a set,
    /// asked once per call (a file of 10,000 functions), shared by the copies of
    /// [`Imports::with_block`].
    locals: Arc<HashSet<String>>,
}

impl Imports {
    /// Collect the module-level `use` and `extern crate` items of `file` (inline modules
    /// included, merged into one table). `use` inside function bodies is scoped: see
    /// [`Imports::with_block`].
    #[must_use]
    pub fn collect(file: &syn::File) -> Self {
        let mut out = Self::default();
        out.items(&file.items);
        out
    }

    /// These imports plus the `use` statements directly inside `block`, or `None` when it has
    /// none (the common case: no copy).
    #[must_use]
    pub fn with_block(&self, block: &syn::Block) -> Option<Self> {
        let mut uses = block.stmts.iter().filter_map(|s| match s {
            syn::Stmt::Item(syn::Item::Use(u)) => Some(u),
            _ => None,
        });
        let first = uses.next()?;
        let mut out = self.clone();
        out.tree(&first.tree, String::new());
        for u in uses {
            out.tree(&u.tree, String::new());
        }
        Some(out)
    }

    fn items(&mut self, items: &[syn::Item]) {
        for item in items {
            match item {
                syn::Item::Use(u) => self.tree(&u.tree, String::new()),
                syn::Item::ExternCrate(e) => {
                    let name = e.ident.to_string();
                    let local = e
                        .rename
                        .as_ref()
                        .map_or(name.clone(), |(_, id)| id.to_string());
                    self.names.insert(local, name);
                }
                syn::Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        self.items(items);
                    }
                }
                syn::Item::Fn(f) => {
                    Arc::make_mut(&mut self.locals).insert(f.sig.ident.to_string());
                }
                syn::Item::Struct(s) => {
                    Arc::make_mut(&mut self.locals).insert(s.ident.to_string());
                }
                syn::Item::Enum(e) => {
                    Arc::make_mut(&mut self.locals).insert(e.ident.to_string());
                }
                _ => {}
            }
        }
    }

    fn tree(&mut self, tree: &syn::UseTree, prefix: String) {
        let join = |p: &str, s: &str| {
            if p.is_empty() {
                s.to_string()
            } else {
                format!("{p}::{s}")
            }
        };
        match tree {
            syn::UseTree::Path(p) => self.tree(&p.tree, join(&prefix, &p.ident.to_string())),
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                if name == "self" {
                    if let Some(last) = prefix.rsplit("::").next() {
                        self.names.insert(last.to_string(), prefix.clone());
                    }
                } else {
                    self.names.insert(name.clone(), join(&prefix, &name));
                }
            }
            syn::UseTree::Rename(r) => {
                let name = r.ident.to_string();
                let full = if name == "self" {
                    prefix.clone()
                } else {
                    join(&prefix, &name)
                };
                self.names.insert(r.rename.to_string(), full);
            }
            syn::UseTree::Glob(_) => self.globs.push(prefix),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.tree(t, prefix.clone());
                }
            }
        }
    }

    /// Candidate full paths for `segments` as written. The first is the best guess; a glob import
    /// adds one candidate per glob for a single-segment path.
    #[must_use]
    pub fn resolve(&self, segments: &[String]) -> Vec<String> {
        let Some(first) = segments.first() else {
            return Vec::new();
        };
        let first = first.trim_start_matches("r#");
        let rest = &segments[1..];
        let with_rest = |head: &str| {
            let mut s = head.to_string();
            for r in rest {
                s.push_str("::");
                s.push_str(r);
            }
            s
        };
        if let Some(full) = self.names.get(first) {
            return vec![with_rest(full)];
        }
        let mut out = vec![with_rest(first)];
        if segments.len() == 1 || (segments.len() == 2 && starts_upper(first)) {
            for g in &self.globs {
                out.push(format!("{g}::{}", with_rest(first)));
            }
        }
        out
    }

    /// Is a crate (its first path segment) imported anywhere in the file?
    #[must_use]
    pub fn mentions_crate(&self, krate: &str) -> bool {
        self.names
            .values()
            .chain(self.globs.iter())
            .any(|p| p.split("::").next() == Some(krate))
    }

    /// Is `name` defined by an item in this file (so it is not an imported function)?
    #[must_use]
    pub fn is_local(&self, name: &str) -> bool {
        self.locals.contains(name) && !self.names.contains_key(name)
    }
}

fn starts_upper(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase())
}

/// The segments of a path as strings (generic arguments dropped).
#[must_use]
pub fn path_segments(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// The name a call's function path gives when it can only mean a function of the file or crate
/// itself: a bare name (`expired(..)`) or `Self::expired(..)`, never a path through another
/// type or module (`TcpStream::connect(..)` beside a `fn connect` of the file) nor a qualified
/// self (`<T as Tr>::f`).
#[must_use]
pub fn own_fn_name(func: &syn::Expr) -> Option<String> {
    let syn::Expr::Path(p) = func else {
        return None;
    };
    let segs = &p.path.segments;
    let own = segs.len() == 1 || segs.len() == 2 && segs[0].ident == "Self";
    (p.qself.is_none() && own).then(|| segs.last().map(|s| s.ident.to_string()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(src: &str, path: &str) -> Vec<String> {
        let file = syn::parse_file(src).unwrap();
        let segs: Vec<String> = path.split("::").map(str::to_string).collect();
        Imports::collect(&file).resolve(&segs)
    }

    #[test]
    fn renames_groups_and_globs() {
        assert_eq!(
            resolve("use tokio::time::{sleep as nap, Duration};", "nap"),
            ["tokio::time::sleep"]
        );
        assert_eq!(
            resolve("use std::thread;", "thread::sleep"),
            ["std::thread::sleep"]
        );
        assert_eq!(
            resolve("use tokio_retry::Retry;", "Retry::spawn"),
            ["tokio_retry::Retry::spawn"]
        );
        assert_eq!(
            resolve("use tokio::time::*;", "sleep"),
            ["sleep", "tokio::time::sleep"]
        );
        assert_eq!(
            resolve("use backoff::{self};", "backoff::retry"),
            ["backoff::retry"]
        );
        assert_eq!(resolve("", "std::thread::sleep"), ["std::thread::sleep"]);
    }
}
