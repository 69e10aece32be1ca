//! The unit of cross-file reasoning: which files the crate join reads together. A file belongs
//! to exactly one unit, found in this order:
//!
//! 1. **Cargo**: the nearest ancestor directory holding a `Cargo.toml` (the package, with its
//!    library, binaries, tests and examples), as always.
//! 2. **Bazel / Buck target**: in the nearest Bazel package (`BUILD`, `BUILD.bazel`) or Buck
//!    package (`BUCK`, `TARGETS`) above the file, a `rust_library`, `rust_binary`, `rust_test`,
//!    `rust_proc_macro` or `rust_*_library` target whose `srcs` (strings and `glob([..])`, with
//!    `exclude`) or `crate_root` name the file, or whose crate root reaches it by `mod`.
//! 3. **Module tree**: the files reached by `mod x;` declarations (with `#[path]`, also inside
//!    `cfg_attr`, and inline `mod a { mod b; }`) and `include!("..")` from a root file: a
//!    `lib.rs`, a `main.rs` or a file with a top-level `fn main`.
//! 4. **Directory**: the files of one directory that nothing above claims.
//!
//! Targets or trees that share a file are one unit (a `rust_test` over its library's `srcs`, a
//! module declared from both `lib.rs` and `main.rs`), so "one unit per file" holds without a
//! rule for who wins. Units 2 to 4 apply only to files with no `Cargo.toml` above them, so a
//! cargo tree joins exactly as it did before.
//!
//! Pure but for [`Units::find`], which looks for `Cargo.toml` and build files on disk (the walk
//! is one of the three places that do IO). The module facts come from the text the first pass
//! already read ([`scan`]), a lexical scan with [`crate::base::lex`], so no file is read for
//! them. Deliberately approximate: `mod` items are followed under every `cfg`, build files are
//! read as text (no Starlark evaluation: a `srcs` computed by a variable or `select()` gives
//! the target only its crate root and what that reaches), and a file a macro declares is found
//! only if some other rule above claims it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::base::lex::{token_at, Region};

/// What a file's text says about the files of its module tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModFacts {
    /// Out-of-line `mod x;` items at module level.
    pub decls: Vec<ModDecl>,
    /// `include!("..")` paths, relative to the file's directory.
    pub includes: Vec<String>,
    /// A `fn main` at the file's top level: the root of a binary.
    pub has_main: bool,
}

/// One `mod name;` item.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModDecl {
    /// The directories the enclosing inline modules add (`mod a { mod b; }` gives `["a"]`;
    /// an inline module's own `#[path]` replaces its name).
    pub inline: Vec<String>,
    /// The module's name.
    pub name: String,
    /// Its `#[path = ".."]` values, `cfg_attr`'s included.
    pub paths: Vec<String>,
}

/// An open bracket of the scan: a module body (with the directory it adds) or anything else.
enum Frame {
    Module(String),
    Other,
}

/// The module facts of `text`, lexically: comments, strings and macro bodies hide nothing and
/// invent nothing (`mod` inside a `macro_rules!` body or a function is not a module item).
#[must_use]
pub fn scan(text: &str) -> ModFacts {
    let b = text.as_bytes();
    let mut facts = ModFacts::default();
    // Most files name none of the words the scan looks for: no need to lex them.
    if !text.contains("mod") && !text.contains("main") && !text.contains("include") {
        return facts;
    }
    let mut stack: Vec<Frame> = Vec::new();
    // The `#[path]` values of the attributes before the next item.
    let mut pending: Vec<String> = Vec::new();
    // The last significant tokens (identifiers and punctuation), newest last.
    let mut recent: Vec<Tok> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if let Some((region, end)) = token_at(b, i) {
            if region == Region::Literal {
                // `include!("x.rs")`.
                if let [.., Tok::Word(w), Tok::Punct(b'!'), Tok::Punct(b'(')] = recent.as_slice() {
                    if *w == "include" {
                        facts
                            .includes
                            .extend(text.get(i..end).and_then(string_value));
                    }
                }
                push(&mut recent, Tok::Lit);
            }
            i = end;
            continue;
        }
        if is_word_start(c) {
            let start = i;
            while i < b.len() && is_word(b[i]) {
                i += 1;
            }
            let mut word = &text[start..i];
            // A raw identifier: `r#name`.
            if word == "r"
                && b.get(i) == Some(&b'#')
                && b.get(i + 1).is_some_and(|&c| is_word_start(c))
            {
                let s = i + 1;
                i = s;
                while i < b.len() && is_word(b[i]) {
                    i += 1;
                }
                word = &text[s..i];
            }
            if let [.., Tok::Word(prev)] = recent.as_slice() {
                if *prev == "fn" && word == "main" && stack.is_empty() {
                    facts.has_main = true;
                }
            }
            push(&mut recent, Tok::Word(word));
            continue;
        }
        if c == b'#' {
            // An outer attribute: `#[..]`; an inner one (`#![..]`) is skipped whole.
            let mut j = skip_space(b, i + 1);
            let inner = b.get(j) == Some(&b'!');
            if inner {
                j = skip_space(b, j + 1);
            }
            if b.get(j) == Some(&b'[') {
                let end = bracket_end(b, j);
                if !inner {
                    pending.extend(path_values(inside(text, j, end)));
                }
                i = end;
                continue;
            }
        }
        match c {
            b'{' | b'(' | b'[' => {
                let frame = match (c, recent.as_slice()) {
                    (b'{', [.., Tok::Word(m), Tok::Word(name)])
                        if *m == "mod" && stack.iter().all(|f| matches!(f, Frame::Module(_))) =>
                    {
                        Frame::Module(
                            pending
                                .first()
                                .cloned()
                                .unwrap_or_else(|| (*name).to_string()),
                        )
                    }
                    _ => Frame::Other,
                };
                if c == b'{' {
                    pending.clear();
                }
                stack.push(frame);
            }
            b'}' | b')' | b']' => {
                stack.pop();
                if c == b'}' {
                    pending.clear();
                }
            }
            b';' => {
                if let [.., Tok::Word(m), Tok::Word(name)] = recent.as_slice() {
                    if *m == "mod" && stack.iter().all(|f| matches!(f, Frame::Module(_))) {
                        facts.decls.push(ModDecl {
                            inline: stack
                                .iter()
                                .filter_map(|f| match f {
                                    Frame::Module(d) => Some(d.clone()),
                                    Frame::Other => None,
                                })
                                .collect(),
                            name: (*name).to_string(),
                            paths: std::mem::take(&mut pending),
                        });
                    }
                }
                pending.clear();
            }
            _ => {}
        }
        push(&mut recent, Tok::Punct(c));
        i += 1;
    }
    facts
}

/// A significant token of the scan.
#[derive(Debug)]
enum Tok<'a> {
    Word(&'a str),
    Punct(u8),
    Lit,
}

/// Keep the last few tokens only: every pattern the scan matches is three tokens long.
fn push<'a>(recent: &mut Vec<Tok<'a>>, t: Tok<'a>) {
    if recent.len() == 3 {
        recent.remove(0);
    }
    recent.push(t);
}

fn is_word_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

fn skip_space(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The text between the bracket at `open` and the offset `end` after its closing one; an
/// unclosed bracket's text runs to the end (never a slice inside a character).
fn inside(text: &str, open: usize, end: usize) -> &str {
    let b = text.as_bytes();
    let close = if end > open + 1 && matches!(b.get(end - 1), Some(b']' | b')' | b'}')) {
        end - 1
    } else {
        end
    };
    text.get(open + 1..close).unwrap_or("")
}

/// The offset after the bracket closing the one at `open` (literals and comments skipped), or
/// the end of the text.
fn bracket_end(b: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        if let Some((_, end)) = token_at(b, i) {
            i = end;
            continue;
        }
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// The `path = ".."` values in an attribute's text (`path = ".."` or `cfg_attr(.., path = "..")`).
fn path_values(attr: &str) -> Vec<String> {
    let b = attr.as_bytes();
    let mut out = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if let Some((region, end)) = token_at(b, i) {
            if region == Region::Literal {
                let n = words.len();
                if n >= 2 && words[n - 2] == "path" && words[n - 1] == "=" {
                    if let Some(v) = attr.get(i..end).and_then(string_value) {
                        out.push(v);
                    }
                }
            }
            words.push(String::new());
            i = end;
            continue;
        }
        let c = b[i];
        if is_word_start(c) {
            let s = i;
            while i < b.len() && is_word(b[i]) {
                i += 1;
            }
            words.push(attr[s..i].to_string());
            continue;
        }
        if !c.is_ascii_whitespace() {
            words.push(char::from(c).to_string());
        }
        i += 1;
    }
    out
}

/// The value of a plain or raw string literal's text; `None` for other literals.
fn string_value(lit: &str) -> Option<String> {
    if let Some(raw) = lit.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let body = raw.get(hashes..raw.len().checked_sub(hashes)?)?;
        return body
            .strip_prefix('"')?
            .strip_suffix('"')
            .map(str::to_string);
    }
    let body = lit.strip_prefix('"')?.strip_suffix('"')?;
    if !body.contains('\\') {
        return Some(body.to_string());
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next()? {
                '\\' => out.push('\\'),
                '"' => out.push('"'),
                '\'' => out.push('\''),
                // An escape a path would not hold: not followed.
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Which build system a build file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BuildKind {
    /// `BUILD`, `BUILD.bazel`.
    Bazel,
    /// `BUCK`, `TARGETS`.
    Buck,
}

/// The build files a package directory may hold, in the order they are looked for.
pub const BUILD_FILES: &[(&str, BuildKind)] = &[
    ("BUILD.bazel", BuildKind::Bazel),
    ("BUILD", BuildKind::Bazel),
    ("BUCK", BuildKind::Buck),
    ("TARGETS", BuildKind::Buck),
];

/// A Rust target of a build file, as far as its text says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildTarget {
    /// `rust_library`, `rust_binary`, ...
    pub rule: String,
    /// Its `name`.
    pub name: String,
    /// `srcs` strings outside `glob`, relative to the package (a leading `:` dropped).
    pub srcs: Vec<String>,
    /// `glob` include patterns of `srcs`.
    pub globs: Vec<String>,
    /// `glob` exclude patterns.
    pub excludes: Vec<String>,
    /// `crate_root`, when given.
    pub crate_root: Option<String>,
    /// Targets of the same package it shares sources with (`crate = ":lib"`, `rules_rust`'s
    /// tests of a library).
    pub shares: Vec<String>,
}

/// The rules whose targets are Rust crates.
fn is_rust_rule(name: &str) -> bool {
    matches!(
        name,
        "rust_library"
            | "rust_binary"
            | "rust_test"
            | "rust_proc_macro"
            | "rust_shared_library"
            | "rust_static_library"
            | "rust_unittest"
            | "rust_test_suite"
    )
}

/// The Rust targets of a `BUILD` / `BUCK` file's text (Starlark, read as text: a call of a Rust
/// rule and its `name`, `srcs`, `crate_root` and `crate` arguments when they are literals).
#[must_use]
pub fn build_targets(text: &str) -> Vec<BuildTarget> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // Starlark comments are `#` to the end of the line.
        if b[i] == b'#' {
            i = crate::base::lex::line_end(b, i);
            continue;
        }
        if b[i] == b'"' || b[i] == b'\'' {
            i = starlark_string(b, i).1;
            continue;
        }
        if is_word_start(b[i]) && (i == 0 || !is_word(b[i - 1]) && b[i - 1] != b'.') {
            let s = i;
            while i < b.len() && is_word(b[i]) {
                i += 1;
            }
            let word = &text[s..i];
            let open = skip_space(b, i);
            if is_rust_rule(word) && b.get(open) == Some(&b'(') {
                let end = starlark_close(b, open);
                out.push(target_of(word, inside(text, open, end)));
                i = end;
            }
            continue;
        }
        i += 1;
    }
    out
}

/// A Starlark string literal at `i` (`"`, `'`, triple-quoted): its value and the offset after it.
fn starlark_string(b: &[u8], i: usize) -> (String, usize) {
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    let mut value = Vec::new();
    while j < b.len() {
        if b[j] == b'\\' {
            if let Some(&n) = b.get(j + 1) {
                value.push(n);
            }
            j += 2;
            continue;
        }
        if b[j] == q && (!triple || (b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q))) {
            let end = if triple { j + 3 } else { j + 1 };
            return (String::from_utf8_lossy(&value).into_owned(), end);
        }
        if !triple && b[j] == b'\n' {
            break;
        }
        value.push(b[j]);
        j += 1;
    }
    (String::from_utf8_lossy(&value).into_owned(), j.min(b.len()))
}

/// The offset after the bracket closing the one at `open`, in Starlark text.
fn starlark_close(b: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'#' => {
                i = crate::base::lex::line_end(b, i);
                continue;
            }
            b'"' | b'\'' => {
                i = starlark_string(b, i).1;
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// One call's arguments: `key = value` at the call's top level.
fn keyword_args(args: &str) -> Vec<(String, &str)> {
    let b = args.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut depth = 0usize;
    let mut arg_start = 0;
    while i < b.len() {
        match b[i] {
            b'#' => {
                i = crate::base::lex::line_end(b, i);
                continue;
            }
            b'"' | b'\'' => {
                i = starlark_string(b, i).1;
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                keyword_arg(&args[arg_start..i], &mut out);
                arg_start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    keyword_arg(&args[arg_start..], &mut out);
    out
}

/// `key = value` of one argument's text, when it is one.
fn keyword_arg<'a>(arg: &'a str, out: &mut Vec<(String, &'a str)>) {
    if let Some((k, v)) = arg.trim().split_once('=') {
        let k = k.trim();
        if !k.is_empty() && k.bytes().all(is_word) && !v.starts_with('=') {
            out.push((k.to_string(), v.trim()));
        }
    }
}

/// The string literals of a Starlark expression, each with whether it sits inside a `glob(`
/// call and, there, inside its `exclude` argument.
fn strings_of(expr: &str) -> Vec<(String, bool, bool)> {
    let b = expr.as_bytes();
    let mut out = Vec::new();
    // Bracket depths at which a `glob(` call and its `exclude =` list opened.
    let mut glob_at: Option<usize> = None;
    let mut exclude_at: Option<usize> = None;
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'#' => {
                i = crate::base::lex::line_end(b, i);
                continue;
            }
            b'"' | b'\'' => {
                let (v, end) = starlark_string(b, i);
                out.push((v, glob_at.is_some(), exclude_at.is_some()));
                i = end;
                continue;
            }
            b'(' | b'[' | b'{' => {
                if b[i] == b'(' && expr[..i].trim_end().ends_with("glob") && glob_at.is_none() {
                    glob_at = Some(depth);
                }
                depth += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if glob_at == Some(depth) {
                    glob_at = None;
                    exclude_at = None;
                }
                if exclude_at == Some(depth + 1) && b[i] == b']' {
                    exclude_at = None;
                }
            }
            b'=' if glob_at.is_some() && expr[..i].trim_end().ends_with("exclude") => {
                exclude_at = Some(depth + 1);
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn target_of(rule: &str, args: &str) -> BuildTarget {
    let mut t = BuildTarget {
        rule: rule.to_string(),
        ..BuildTarget::default()
    };
    for (key, value) in keyword_args(args) {
        let strings = strings_of(value);
        match key.as_str() {
            "name" => t.name = strings.into_iter().next().map(|s| s.0).unwrap_or_default(),
            "srcs" => {
                for (s, in_glob, excluded) in strings {
                    match (in_glob, excluded) {
                        (true, true) => t.excludes.push(s),
                        (true, false) => t.globs.push(s),
                        _ => t.srcs.extend(local_label(&s)),
                    }
                }
            }
            "crate_root" => {
                t.crate_root = strings.into_iter().next().and_then(|s| local_label(&s.0));
            }
            "crate" => t.shares.extend(
                strings
                    .into_iter()
                    .filter_map(|s| s.0.strip_prefix(':').map(str::to_string)),
            ),
            _ => {}
        }
    }
    t
}

/// A label or path of the package itself, as a path relative to the package: `x.rs`, `:x.rs`;
/// `None` for a label of another package (`//a:b`, `@repo//..`) or a generated file's target.
fn local_label(s: &str) -> Option<String> {
    if s.starts_with("//") || s.starts_with('@') {
        return None;
    }
    let s = s.strip_prefix(':').unwrap_or(s);
    Path::new(s)
        .extension()
        .is_some_and(|e| e == "rs")
        .then(|| s.to_string())
}

/// What kind of unit a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum UnitKind {
    /// A cargo package (the nearest `Cargo.toml`).
    Cargo,
    /// One or more Bazel targets sharing files.
    Bazel,
    /// One or more Buck targets sharing files.
    Buck,
    /// One or more module trees sharing files, from their root files.
    ModTree,
    /// The unclaimed files of one directory.
    Directory,
    /// One file alone (`--no-index`).
    File,
}

/// One unit: its files, by index into the walk's list, in that list's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// How it was found.
    pub kind: UnitKind,
    /// What names it: the package directory, the build file, the first root file, or the
    /// directory.
    pub root: PathBuf,
    /// Its files.
    pub files: Vec<usize>,
}

/// The files a unit finder may look at on disk: the only IO of the unit finder, so tests can
/// give a tree in memory.
pub trait Disk {
    /// Is there a `Cargo.toml` in `dir`?
    fn has_manifest(&self, dir: &Path) -> bool;
    /// The build file of `dir` and its text, when it has one (`BUILD_FILES` order).
    fn build_file(&self, dir: &Path) -> Option<(PathBuf, BuildKind, String)>;
}

/// The real disk: manifests by `is_file`, build files read through the bounded reader (a build
/// file that cannot be read is as good as none: its files fall back to module trees).
#[derive(Debug, Default, Clone, Copy)]
pub struct RealDisk;

impl Disk for RealDisk {
    fn has_manifest(&self, dir: &Path) -> bool {
        dir.join("Cargo.toml").is_file()
    }

    fn build_file(&self, dir: &Path) -> Option<(PathBuf, BuildKind, String)> {
        for (name, kind) in BUILD_FILES {
            let path = dir.join(name);
            // Not there, a directory named `BUILD` (a `build/` on a case-insensitive disk) or an
            // unreadable file: the package has no build file we can use.
            if let Ok(text) =
                crate::walk::bounded::read(&path, crate::walk::bounded::MANIFEST_LIMIT)
            {
                return Some((path, *kind, text));
            }
        }
        None
    }
}

/// The cargo package of each file: its nearest ancestor directory with a `Cargo.toml`, cached
/// per directory.
#[derive(Debug, Default)]
pub struct Ancestry {
    cargo: HashMap<PathBuf, Option<PathBuf>>,
    build: HashMap<PathBuf, Option<PathBuf>>,
}

impl Ancestry {
    /// The cargo package directory of `file`, or `None` outside any.
    pub fn cargo(&mut self, disk: &dyn Disk, file: &Path) -> Option<PathBuf> {
        let dir = file.parent()?;
        self.cargo_dir(disk, dir)
    }

    fn cargo_dir(&mut self, disk: &dyn Disk, dir: &Path) -> Option<PathBuf> {
        if let Some(r) = self.cargo.get(dir) {
            return r.clone();
        }
        let r = if disk.has_manifest(dir) {
            Some(dir.to_path_buf())
        } else {
            dir.parent().and_then(|p| self.cargo_dir(disk, p))
        };
        self.cargo.insert(dir.to_path_buf(), r.clone());
        r
    }

    /// The nearest package directory (one with a build file) holding `dir`, and remembers
    /// which directories have one in `found`.
    fn package_dir(
        &mut self,
        disk: &dyn Disk,
        dir: &Path,
        found: &mut BTreeMap<PathBuf, (PathBuf, BuildKind, String)>,
    ) -> Option<PathBuf> {
        if let Some(r) = self.build.get(dir) {
            return r.clone();
        }
        let r = if let Some(b) = disk.build_file(dir) {
            found.insert(dir.to_path_buf(), b);
            Some(dir.to_path_buf())
        } else {
            dir.parent().and_then(|p| self.package_dir(disk, p, found))
        };
        self.build.insert(dir.to_path_buf(), r.clone());
        r
    }
}

/// Union-find over file indices.
struct Sets(Vec<usize>);

impl Sets {
    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            // The smaller index names the set, so the result does not depend on the order.
            let (lo, hi) = if a < b { (a, b) } else { (b, a) };
            self.0[hi] = lo;
        }
    }
}

/// The units of a run's files.
#[derive(Debug, Default, Clone)]
pub struct Units {
    /// The units, ordered by their first file.
    pub units: Vec<Unit>,
}

impl Units {
    /// Each file alone (`--no-index`).
    #[must_use]
    pub fn each_alone(files: &[PathBuf]) -> Self {
        Units {
            units: files
                .iter()
                .enumerate()
                .map(|(i, f)| Unit {
                    kind: UnitKind::File,
                    root: f.clone(),
                    files: vec![i],
                })
                .collect(),
        }
    }

    /// The units of `files` (the walk's list); `cargo` is each file's cargo package
    /// ([`Ancestry::cargo`]) and `facts` the module facts of each file outside any (`None`
    /// for a file that could not be read, which then reaches nothing but can be reached).
    #[must_use]
    pub fn find(
        files: &[PathBuf],
        cargo: &[Option<PathBuf>],
        facts: &[Option<ModFacts>],
        disk: &dyn Disk,
        ancestry: &mut Ancestry,
    ) -> Self {
        let n = files.len();
        let mut sets = Sets((0..n).collect());
        // How each non-cargo file's unit was found, once claimed.
        let mut claimed: Vec<Option<(UnitKind, PathBuf)>> = vec![None; n];
        let mut by_path: HashMap<PathBuf, usize> = HashMap::new();
        for (i, f) in files.iter().enumerate() {
            if cargo[i].is_none() {
                by_path.entry(super::normalize(f)).or_insert(i);
            }
        }
        let lookup = |p: &Path| by_path.get(&super::normalize(p)).copied();
        let mut trees = Trees {
            files,
            facts,
            lookup: &lookup,
            seen: HashSet::new(),
        };

        // Bazel and Buck targets.
        let mut builds: BTreeMap<PathBuf, (PathBuf, BuildKind, String)> = BTreeMap::new();
        let mut package_files: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
        for (i, f) in files.iter().enumerate() {
            if cargo[i].is_some() {
                continue;
            }
            let Some(dir) = f.parent() else { continue };
            if let Some(pkg) = ancestry.package_dir(disk, dir, &mut builds) {
                package_files.entry(pkg).or_default().push(i);
            }
        }
        for (pkg, (build_path, kind, text)) in &builds {
            let Some(members) = package_files.get(pkg) else {
                continue;
            };
            let unit_kind = match kind {
                BuildKind::Bazel => UnitKind::Bazel,
                BuildKind::Buck => UnitKind::Buck,
            };
            let targets = build_targets(text);
            // Each target's first file, for `crate = ":lib"`.
            let mut first: HashMap<&str, usize> = HashMap::new();
            for t in &targets {
                let mut claims = target_files(t, pkg, members, files, &lookup);
                let root = t
                    .crate_root
                    .as_ref()
                    .and_then(|r| lookup(&pkg.join(r)))
                    .or_else(|| default_crate_root(t, &claims, files));
                if let Some(r) = root {
                    claims.push(r);
                    claims.extend(trees.reach(r));
                }
                claims.sort_unstable();
                claims.dedup();
                for s in &t.shares {
                    if let (Some(&a), Some(&b)) = (first.get(s.as_str()), claims.first()) {
                        sets.union(a, b);
                    }
                }
                if let Some(&a) = claims.first() {
                    first.insert(t.name.as_str(), a);
                }
                for &c in &claims {
                    sets.union(claims[0], c);
                    if claimed[c].is_none() {
                        claimed[c] = Some((unit_kind, build_path.clone()));
                    }
                }
            }
        }

        // Module trees from root files.
        for i in 0..n {
            if cargo[i].is_some() || !is_root(&files[i], facts[i].as_ref()) {
                continue;
            }
            let reached = trees.reach(i);
            if claimed[i].is_none() {
                claimed[i] = Some((UnitKind::ModTree, files[i].clone()));
            }
            let tag = claimed[i].clone();
            for c in reached {
                sets.union(i, c);
                if claimed[c].is_none() {
                    claimed[c].clone_from(&tag);
                }
            }
        }

        // What nothing claimed: its directory.
        let mut dirs: HashMap<PathBuf, usize> = HashMap::new();
        for i in 0..n {
            if cargo[i].is_some() || claimed[i].is_some() {
                continue;
            }
            let dir = files[i].parent().map(Path::to_path_buf).unwrap_or_default();
            let first = *dirs.entry(dir.clone()).or_insert(i);
            sets.union(first, i);
            claimed[i] = Some((UnitKind::Directory, dir));
        }

        // Cargo packages.
        let mut packages: HashMap<&Path, usize> = HashMap::new();
        for i in 0..n {
            if let Some(pkg) = &cargo[i] {
                let first = *packages.entry(pkg.as_path()).or_insert(i);
                sets.union(first, i);
                claimed[i] = Some((UnitKind::Cargo, pkg.clone()));
            }
        }

        let mut index: HashMap<usize, usize> = HashMap::new();
        let mut units: Vec<Unit> = Vec::new();
        for i in 0..n {
            let set = sets.find(i);
            let u = *index.entry(set).or_insert_with(|| {
                // The set's smallest file is its first: it names the unit.
                let (kind, root) = claimed[set]
                    .clone()
                    .unwrap_or_else(|| (UnitKind::File, files[set].clone()));
                units.push(Unit {
                    kind,
                    root,
                    files: Vec::new(),
                });
                units.len() - 1
            });
            units[u].files.push(i);
        }
        Units { units }
    }
}

/// What [`unit_dir`] looks at: the unit finder's disk, and the Rust files of a directory tree
/// with their text, so tests can give a tree in memory.
pub trait Tree: Disk {
    /// The `.rs` files under `dir`, spelled as a walk from `dir` spells them (the empty path
    /// standing for the working directory gives them without a leading `./`), sorted.
    fn rust_files(&self, dir: &Path) -> Vec<PathBuf>;
    /// A file's text; `None` when it cannot be read (it then reaches nothing).
    fn text(&self, file: &Path) -> Option<String>;
    /// Does the search for a unit stop at `dir`: the top of a repository (it holds `.git`) or
    /// the working directory?
    fn is_boundary(&self, dir: &Path) -> bool;
}

/// The directory whose walk holds the whole unit of `file`, a file in no cargo package, spelled
/// as one of the file's lexical ancestors (the crate join keys files by spelling): the
/// directory of its Bazel or Buck package, or the one holding its whole module tree, widened
/// upwards while the unit has no root (a parent declares the file, a root lies above it) and
/// to the target of every `#[path]` and `include!` that leaves it. Never above the nearest
/// boundary ([`Tree::is_boundary`]); `None` when no ancestor is one (nothing bounds the search,
/// so nothing is read) or the path climbs with `..` (its ancestors are not the directories
/// holding it).
///
/// A root outside the directory found that reaches into a tree already rooted (by `#[path]`)
/// is not looked for: finding it means reading the whole repository for every file.
#[must_use]
pub fn unit_dir(file: &Path, tree: &impl Tree) -> Option<PathBuf> {
    if file
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return None;
    }
    // The candidates, nearest first; the search moves only outwards along them.
    let up: Vec<&Path> = file.ancestors().skip(1).collect();
    let top = up.iter().position(|d| tree.is_boundary(d))?;
    let mut facts: HashMap<PathBuf, Option<ModFacts>> = HashMap::new();
    let mut at = 0;
    loop {
        let (members, rooted, outward) = unit_at(file, up[at], tree, &mut facts);
        let mut next = at;
        for target in &outward {
            // A link out of the repository: a run over the repository does not read it either.
            if let Some(k) = covering(&up, target).filter(|&k| k <= top) {
                next = next.max(k);
            }
        }
        if !rooted && at < top {
            next = next.max(at + 1);
        }
        if next == at {
            // The unit may sit in a smaller directory than the search had to read to know it;
            // the driver reads the root given, so the smallest that gives the same unit.
            let inner = members
                .iter()
                .filter_map(|m| covering(&up, m.parent().unwrap_or(Path::new(""))))
                .max()
                .unwrap_or(0);
            if inner < at && unit_at(file, up[inner], tree, &mut facts).0 == members {
                return Some(up[inner].to_path_buf());
            }
            return Some(up[at].to_path_buf());
        }
        at = next;
    }
}

/// The unit of `file` among the files under `dir`: its files (normalised), whether it is rooted
/// (a build target or a module tree's root file holds it, so nothing above need declare it),
/// and where it points outside `dir` (its build package, `#[path]` and `include!` targets).
fn unit_at(
    file: &Path,
    dir: &Path,
    tree: &impl Tree,
    facts: &mut HashMap<PathBuf, Option<ModFacts>>,
) -> (Vec<PathBuf>, bool, Vec<PathBuf>) {
    let mut files = tree.rust_files(dir);
    // A buffer not yet saved (`--stdin-filename`) is a member all the same.
    if !files
        .iter()
        .any(|f| super::normalize(f) == super::normalize(file))
    {
        files.push(file.to_path_buf());
        files.sort();
    }
    let mut ancestry = Ancestry::default();
    let cargo: Vec<Option<PathBuf>> = files.iter().map(|f| ancestry.cargo(tree, f)).collect();
    let scanned: Vec<Option<ModFacts>> = files
        .iter()
        .zip(&cargo)
        .map(|(f, c)| {
            if c.is_some() {
                return None;
            }
            facts
                .entry(super::normalize(f))
                .or_insert_with(|| tree.text(f).map(|t| scan(&t)))
                .clone()
        })
        .collect();
    let units = Units::find(&files, &cargo, &scanned, tree, &mut ancestry);
    let me = super::normalize(file);
    let Some(unit) = units
        .units
        .iter()
        .find(|u| u.files.iter().any(|&i| super::normalize(&files[i]) == me))
    else {
        return (vec![me], false, Vec::new());
    };
    let mut outward = Vec::new();
    let mut rooted = false;
    if matches!(unit.kind, UnitKind::Bazel | UnitKind::Buck) {
        rooted = true;
        outward.extend(unit.root.parent().map(Path::to_path_buf));
    }
    for &i in &unit.files {
        let f = &files[i];
        rooted |= is_root(f, scanned[i].as_ref());
        let Some(fx) = &scanned[i] else { continue };
        let here = f.parent().unwrap_or(Path::new(""));
        // `#[path]` is relative to the file's directory or below it (inline modules add
        // directories): the directory holding `here/p` holds the target either way.
        let targets = fx
            .decls
            .iter()
            .flat_map(|d| d.paths.iter())
            .chain(&fx.includes);
        outward.extend(targets.filter_map(|p| here.join(p).parent().map(Path::to_path_buf)));
    }
    let mut members: Vec<PathBuf> = unit
        .files
        .iter()
        .map(|&i| super::normalize(&files[i]))
        .collect();
    members.sort();
    (members, rooted, outward)
}

/// The index in `up` (a file's ancestors, nearest first) of the nearest that holds `target`,
/// lexically; `None` when none does (an absolute target of a relative file).
fn covering(up: &[&Path], target: &Path) -> Option<usize> {
    let target = super::normalize(target);
    up.iter()
        .position(|d| target.starts_with(super::normalize(d)))
}

/// The real tree: the walk's files under a directory with the exclusions anchored there, read
/// through the bounded reader; the boundary is a directory holding `.git` (a directory, or a
/// worktree's file) or the working directory.
pub struct RealTree<'a> {
    /// The exclusions of a walk from a directory.
    pub excludes: &'a dyn Fn(&Path) -> Vec<String>,
    /// Files over this many bytes are not read (`--max-file-size`).
    pub max_bytes: u64,
    /// The working directory, absolute.
    pub cwd: PathBuf,
}

impl Disk for RealTree<'_> {
    fn has_manifest(&self, dir: &Path) -> bool {
        RealDisk.has_manifest(dir)
    }

    fn build_file(&self, dir: &Path) -> Option<(PathBuf, BuildKind, String)> {
        RealDisk.build_file(dir)
    }
}

impl Tree for RealTree<'_> {
    fn rust_files(&self, dir: &Path) -> Vec<PathBuf> {
        if dir.as_os_str().is_empty() {
            let (files, _) = super::rust_files(&[PathBuf::from(".")], &(self.excludes)(dir));
            return files
                .into_iter()
                .map(|f| f.strip_prefix(".").map(Path::to_path_buf).unwrap_or(f))
                .collect();
        }
        super::rust_files(&[dir.to_path_buf()], &(self.excludes)(dir)).0
    }

    fn text(&self, file: &Path) -> Option<String> {
        super::read(file, self.max_bytes).ok()
    }

    fn is_boundary(&self, dir: &Path) -> bool {
        let probe = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        probe.join(".git").exists() || super::normalize(&self.cwd.join(dir)) == self.cwd
    }
}

/// Is `file` the root of a module tree: `lib.rs`, `main.rs`, or a file with `fn main`?
fn is_root(file: &Path, facts: Option<&ModFacts>) -> bool {
    matches!(
        file.file_name().and_then(|n| n.to_str()),
        Some("lib.rs" | "main.rs")
    ) || facts.is_some_and(|f| f.has_main)
}

/// `rules_rust`'s default crate root: the only source, else `lib.rs` (a library) or `main.rs`
/// (a binary), else a source named like the target.
fn default_crate_root(t: &BuildTarget, claims: &[usize], files: &[PathBuf]) -> Option<usize> {
    if let [only] = claims {
        return Some(*only);
    }
    let named = |want: &str| {
        claims
            .iter()
            .copied()
            .find(|&c| files[c].file_name().and_then(|n| n.to_str()) == Some(want))
    };
    let primary = if t.rule == "rust_binary" {
        "main.rs"
    } else {
        "lib.rs"
    };
    named(primary).or_else(|| named(&format!("{}.rs", t.name)))
}

/// The walked files a target's `srcs` name: its strings, and its globs' matches among the
/// package's files.
fn target_files(
    t: &BuildTarget,
    pkg: &Path,
    members: &[usize],
    files: &[PathBuf],
    lookup: &dyn Fn(&Path) -> Option<usize>,
) -> Vec<usize> {
    let mut out: Vec<usize> = t.srcs.iter().filter_map(|s| lookup(&pkg.join(s))).collect();
    if t.globs.is_empty() {
        return out;
    }
    let set = |patterns: &[String]| {
        let mut b = globset::GlobSetBuilder::new();
        for p in patterns {
            if let Ok(g) = globset::GlobBuilder::new(p).literal_separator(true).build() {
                b.add(g);
            }
        }
        b.build().unwrap_or_else(|_| globset::GlobSet::empty())
    };
    let (include, exclude) = (set(&t.globs), set(&t.excludes));
    for &m in members {
        let Ok(rel) = files[m].strip_prefix(pkg) else {
            continue;
        };
        if include.is_match(rel) && !exclude.is_match(rel) {
            out.push(m);
        }
    }
    out
}

/// The module-tree walk: which files a root reaches by `mod` and `include!`.
struct Trees<'a> {
    files: &'a [PathBuf],
    facts: &'a [Option<ModFacts>],
    lookup: &'a dyn Fn(&Path) -> Option<usize>,
    /// Files already walked, with whether they were walked as a directory owner (`mod.rs`, a
    /// root, a `#[path]` file): a file is walked at most once each way, so overlapping trees
    /// cost no more than one.
    seen: HashSet<(usize, bool)>,
}

impl Trees<'_> {
    /// The files `root` reaches (not itself), walked as a root.
    fn reach(&mut self, root: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut todo = vec![(root, true)];
        while let Some((f, owner)) = todo.pop() {
            if !self.seen.insert((f, owner)) {
                // Walked before, from another root or the other way: its tree is already
                // joined with it, so joining this one file joins the trees.
                if f != root {
                    out.push(f);
                }
                continue;
            }
            if f != root {
                out.push(f);
            }
            let Some(facts) = &self.facts[f] else {
                continue;
            };
            let path = &self.files[f];
            let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
            // Where `mod x;` looks: beside a directory owner, in `foo/` for `foo.rs`.
            let base = if owner || path.file_name().and_then(|n| n.to_str()) == Some("mod.rs") {
                dir.clone()
            } else {
                dir.join(path.file_stem().unwrap_or_default())
            };
            for d in &facts.decls {
                let mut at = base.clone();
                for seg in &d.inline {
                    at.push(seg);
                }
                for p in &d.paths {
                    // `#[path]` outside inline modules is relative to the file's directory.
                    let target = if d.inline.is_empty() {
                        dir.join(p)
                    } else {
                        at.join(p)
                    };
                    if let Some(t) = (self.lookup)(&target) {
                        todo.push((t, true));
                    }
                }
                for candidate in [
                    at.join(format!("{}.rs", d.name)),
                    at.join(&d.name).join("mod.rs"),
                ] {
                    if let Some(t) = (self.lookup)(&candidate) {
                        todo.push((t, false));
                    }
                }
            }
            for inc in &facts.includes {
                if let Some(t) = (self.lookup)(&dir.join(inc)) {
                    todo.push((t, true));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_finds_module_items_only() {
        let f = scan(
            r#"//! mod not_a_module;
            pub(crate) mod net;
            #[cfg_attr(unix, path = "sys/unix.rs")]
            #[cfg_attr(windows, path = r"sys/windows.rs")]
            mod sys;
            mod inline { #[path = "other.rs"] mod inner; mod deep; }
            #[path = "dir"] mod renamed { mod child; }
            fn helper() { let s = "mod fake;"; }
            macro_rules! m { () => { mod in_macro; } }
            mod r#type;
            include!("generated.rs");
            /* mod hidden; */
            fn main() {}
            "#,
        );
        let names: Vec<(&[String], &str, &[String])> = f
            .decls
            .iter()
            .map(|d| (d.inline.as_slice(), d.name.as_str(), d.paths.as_slice()))
            .collect();
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_string()).collect::<Vec<_>>();
        assert_eq!(
            names,
            vec![
                (&s(&[])[..], "net", &s(&[])[..]),
                (
                    &s(&[])[..],
                    "sys",
                    &s(&["sys/unix.rs", "sys/windows.rs"])[..]
                ),
                (&s(&["inline"])[..], "inner", &s(&["other.rs"])[..]),
                (&s(&["inline"])[..], "deep", &s(&[])[..]),
                (&s(&["dir"])[..], "child", &s(&[])[..]),
                (&s(&[])[..], "type", &s(&[])[..]),
            ]
        );
        assert_eq!(f.includes, vec!["generated.rs".to_string()]);
        assert!(f.has_main);
        assert!(!scan("mod a { fn main() {} }").has_main);
        assert!(!scan("impl X { fn main() {} }").has_main);
    }

    #[test]
    fn scan_takes_any_text() {
        for text in [
            "mod",
            "mod x",
            "#[",
            "#[path = \"",
            "}}}mod a;",
            "r#",
            "mod a {{ mod b;",
            "\u{feff}mod é;",
            "#[é",
            "#[path = \"é\"] mod é",
        ] {
            let _ = scan(text);
        }
        assert_eq!(scan("}}} mod a;").decls.len(), 1);
    }

    #[test]
    fn build_files_give_their_rust_targets() {
        let t = build_targets(
            r#"
load("@rules_rust//rust:defs.bzl", "rust_library", "rust_test")
# rust_binary(name = "commented")
rust_library(
    name = "net",
    srcs = glob(["src/**/*.rs"], exclude = ["src/gen/**"]) + [":extra.rs", "//other:x.rs"],
    crate_root = "src/lib.rs",
    deps = ["//third_party:tokio"],
)
rust_test(name = "net_test", crate = ":net")
genrule(name = "g", srcs = ["a.rs"])
"#,
        );
        assert_eq!(t.len(), 2, "{t:?}");
        assert_eq!(t[0].name, "net");
        assert_eq!(t[0].globs, vec!["src/**/*.rs"]);
        assert_eq!(t[0].excludes, vec!["src/gen/**"]);
        assert_eq!(t[0].srcs, vec!["extra.rs"]);
        assert_eq!(t[0].crate_root.as_deref(), Some("src/lib.rs"));
        assert_eq!(
            (t[1].rule.as_str(), t[1].shares.as_slice()),
            ("rust_test", &["net".to_string()][..])
        );
        for text in [
            "rust_library(",
            "rust_library(name = \"",
            "rust_binary(srcs = glob([",
            "x = )]}",
            "rust_library(é",
            "rust_test(name = \"é\", srcs = glob([\"é",
        ] {
            let _ = build_targets(text);
        }
    }
}
