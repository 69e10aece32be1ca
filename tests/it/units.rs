//! The unit of cross-file reasoning without a manifest (issue 18): which files the crate join
//! reads together when no `Cargo.toml` says (Bazel and Buck targets, module trees from root
//! files, else the directory), and that the join holds one unit's summaries at a time, or one
//! piece of a unit over its budget, never the tree's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use timeoutlint::driver::{self, Held, Pass, Tally};
use timeoutlint::walk::units::{self, BuildKind, Disk, UnitKind, Units};

use crate::support::config;

/// A tree in memory: its `.rs` files with their texts, its build files and its manifests.
struct Tree {
    files: Vec<(PathBuf, String)>,
    builds: BTreeMap<PathBuf, (BuildKind, String)>,
    manifests: BTreeSet<PathBuf>,
}

impl Disk for Tree {
    fn has_manifest(&self, dir: &Path) -> bool {
        self.manifests.contains(dir)
    }

    fn build_file(&self, dir: &Path) -> Option<(PathBuf, BuildKind, String)> {
        let (kind, text) = self.builds.get(dir)?;
        let name = match kind {
            BuildKind::Bazel => "BUILD.bazel",
            BuildKind::Buck => "TARGETS",
        };
        Some((dir.join(name), *kind, text.clone()))
    }
}

impl Tree {
    fn new(files: &[(&str, &str)]) -> Self {
        let mut files: Vec<(PathBuf, String)> = files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), (*t).to_string()))
            .collect();
        files.sort();
        Tree {
            files,
            builds: BTreeMap::new(),
            manifests: BTreeSet::new(),
        }
    }

    /// Each unit as (kind, root, its files), sorted.
    fn units(&self) -> Vec<(UnitKind, String, Vec<String>)> {
        let paths: Vec<PathBuf> = self.files.iter().map(|f| f.0.clone()).collect();
        let mut ancestry = units::Ancestry::default();
        let cargo: Vec<Option<PathBuf>> = paths.iter().map(|p| ancestry.cargo(self, p)).collect();
        let facts: Vec<Option<units::ModFacts>> = self
            .files
            .iter()
            .zip(&cargo)
            .map(|((_, text), c)| c.is_none().then(|| units::scan(text)))
            .collect();
        let found = Units::find(&paths, &cargo, &facts, self, &mut ancestry);
        let mut seen = BTreeSet::new();
        let mut out: Vec<(UnitKind, String, Vec<String>)> = found
            .units
            .iter()
            .map(|u| {
                let files: Vec<String> = u
                    .files
                    .iter()
                    .map(|&i| {
                        // A file belongs to one unit.
                        assert!(seen.insert(i), "{} in two units", paths[i].display());
                        paths[i].display().to_string()
                    })
                    .collect();
                (u.kind, u.root.display().to_string(), files)
            })
            .collect();
        assert_eq!(seen.len(), paths.len(), "every file is in a unit");
        out.sort();
        out
    }
}

fn unit(kind: UnitKind, root: &str, files: &[&str]) -> (UnitKind, String, Vec<String>) {
    let mut files: Vec<String> = files.iter().map(|f| (*f).to_string()).collect();
    // In the walk's order: by path components (`retry/` before `retry.rs`).
    files.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
    (kind, root.to_string(), files)
}

#[test]
fn module_trees_follow_mod_and_path_and_the_rest_is_by_directory() {
    let tree = Tree::new(&[
        (
            "m/app/src/lib.rs",
            "pub mod net;\n#[cfg_attr(unix, path = \"sys/unix.rs\")]\nmod sys;\nmod inline { mod deep; }\n// mod commented;\n",
        ),
        ("m/app/src/net/mod.rs", "mod retry;\nmod pool;\n"),
        ("m/app/src/net/retry.rs", "mod backoff;\n"),
        ("m/app/src/net/retry/backoff.rs", ""),
        ("m/app/src/net/pool.rs", ""),
        ("m/app/src/sys/unix.rs", ""),
        ("m/app/src/inline/deep.rs", ""),
        ("m/app/src/commented.rs", "fn f() {}"),
        // A binary beside the library: its own tree (it uses the library by name).
        ("m/app/src/main.rs", "mod cli;\nfn main() {}\n"),
        ("m/app/src/cli.rs", ""),
        // A root found by its `fn main`, and loose files nothing declares.
        ("m/app/tools/gen.rs", "fn main() {}\n"),
        ("m/app/tests/a.rs", "#[test] fn a() {}"),
        ("m/app/tests/b.rs", "#[test] fn b() {}"),
        // Two trees that share a file are one unit.
        ("m/both/a/main.rs", "#[path = \"../shared.rs\"] mod shared;\nfn main() {}"),
        ("m/both/b/main.rs", "#[path = \"../shared.rs\"] mod shared;\nfn main() {}"),
        ("m/both/shared.rs", ""),
    ]);
    assert_eq!(
        tree.units(),
        vec![
            unit(
                UnitKind::ModTree,
                "m/app/src/lib.rs",
                &[
                    "m/app/src/lib.rs",
                    "m/app/src/net/mod.rs",
                    "m/app/src/net/retry.rs",
                    "m/app/src/net/retry/backoff.rs",
                    "m/app/src/net/pool.rs",
                    "m/app/src/sys/unix.rs",
                    "m/app/src/inline/deep.rs",
                ],
            ),
            unit(
                UnitKind::ModTree,
                "m/app/src/main.rs",
                &["m/app/src/cli.rs", "m/app/src/main.rs"],
            ),
            unit(
                UnitKind::ModTree,
                "m/app/tools/gen.rs",
                &["m/app/tools/gen.rs"]
            ),
            unit(
                UnitKind::ModTree,
                "m/both/a/main.rs",
                &["m/both/a/main.rs", "m/both/b/main.rs", "m/both/shared.rs"],
            ),
            unit(
                UnitKind::Directory,
                "m/app/src",
                &["m/app/src/commented.rs"]
            ),
            unit(
                UnitKind::Directory,
                "m/app/tests",
                &["m/app/tests/a.rs", "m/app/tests/b.rs"],
            ),
        ]
    );
}

#[test]
fn bazel_targets_are_units_and_a_test_of_a_library_joins_it() {
    let mut tree = Tree::new(&[
        ("ws/net/src/lib.rs", "mod client;\n"),
        ("ws/net/src/client.rs", ""),
        ("ws/net/src/extra.rs", ""),
        ("ws/net/src/gen/out.rs", ""),
        ("ws/net/tests/it.rs", ""),
        ("ws/net/unit/net_test.rs", ""),
        ("ws/net/bin/tool.rs", "fn run() {}"),
        ("ws/net/bin/helper.rs", ""),
        // A package without Rust targets: its files fall back to module trees.
        ("ws/docs/main.rs", "fn main() {}"),
    ]);
    tree.builds.insert(
        PathBuf::from("ws/net"),
        (
            BuildKind::Bazel,
            r#"
load("@rules_rust//rust:defs.bzl", "rust_binary", "rust_library", "rust_test")
rust_library(
    name = "net",
    srcs = glob(["src/**/*.rs"], exclude = ["src/gen/**"]),
    deps = ["//third_party:reqwest"],
)
rust_test(name = "net_unit", crate = ":net", srcs = ["unit/net_test.rs"])
rust_test(name = "it", srcs = ["tests/it.rs"])
rust_binary(
    name = "tool",
    srcs = ["bin/tool.rs", ":bin/helper.rs"],
    crate_root = "bin/tool.rs",
)
"#
            .to_string(),
        ),
    );
    tree.builds.insert(
        PathBuf::from("ws/docs"),
        (
            BuildKind::Bazel,
            "filegroup(name = \"docs\", srcs = glob([\"*.md\"]))\n".into(),
        ),
    );
    assert_eq!(
        tree.units(),
        vec![
            unit(
                UnitKind::Bazel,
                "ws/net/BUILD.bazel",
                &["ws/net/bin/helper.rs", "ws/net/bin/tool.rs"],
            ),
            unit(
                UnitKind::Bazel,
                "ws/net/BUILD.bazel",
                &[
                    "ws/net/src/client.rs",
                    "ws/net/src/extra.rs",
                    "ws/net/src/lib.rs",
                    "ws/net/unit/net_test.rs",
                ],
            ),
            unit(
                UnitKind::Bazel,
                "ws/net/BUILD.bazel",
                &["ws/net/tests/it.rs"]
            ),
            unit(UnitKind::ModTree, "ws/docs/main.rs", &["ws/docs/main.rs"]),
            unit(
                UnitKind::Directory,
                "ws/net/src/gen",
                &["ws/net/src/gen/out.rs"]
            ),
        ]
    );
}

#[test]
fn buck_targets_are_units_and_cargo_packages_win() {
    let mut tree = Tree::new(&[
        ("repo/svc/main.rs", "mod handlers;\nfn main() {}"),
        ("repo/svc/handlers.rs", ""),
        ("repo/svc/lib/util.rs", ""),
        ("repo/svc/lib/fmt.rs", ""),
        // Under a `Cargo.toml`: the package, whatever build file is above or beside it.
        ("repo/svc/vendored/src/lib.rs", "mod a;"),
        ("repo/svc/vendored/src/a.rs", ""),
        ("repo/svc/vendored/tests/t.rs", ""),
    ]);
    tree.builds.insert(
        PathBuf::from("repo/svc"),
        (
            BuildKind::Buck,
            r#"rust_binary(name = "svc", srcs = ["main.rs", "handlers.rs"])
rust_library(
    name = "util",
    srcs = ["lib/util.rs", "lib/fmt.rs"],  # no crate_root, no lib.rs: the one named like it
)
"#
            .to_string(),
        ),
    );
    tree.manifests.insert(PathBuf::from("repo/svc/vendored"));
    assert_eq!(
        tree.units(),
        vec![
            unit(
                UnitKind::Cargo,
                "repo/svc/vendored",
                &[
                    "repo/svc/vendored/src/a.rs",
                    "repo/svc/vendored/src/lib.rs",
                    "repo/svc/vendored/tests/t.rs",
                ]
            ),
            unit(
                UnitKind::Buck,
                "repo/svc/TARGETS",
                &["repo/svc/handlers.rs", "repo/svc/main.rs"]
            ),
            unit(
                UnitKind::Buck,
                "repo/svc/TARGETS",
                &["repo/svc/lib/fmt.rs", "repo/svc/lib/util.rs"]
            ),
        ]
    );
}

/// A client built with a timeout in one file and retried in another: a cross-file finding
/// only when the crate join reads both files together.
const CLIENT: &str = "use std::time::Duration;\n\npub fn http() -> reqwest::Client {\n    reqwest::Client::builder()\n        .timeout(Duration::from_secs(8))\n        .build()\n        .unwrap()\n}\n";
const RETRY: &str = "use crate::net::http;\n\npub async fn fetch(url: &str) -> Result<String, Error> {\n    for attempt in 0..3 {\n        match http().get(url).send().await {\n            Ok(r) => return Ok(r.text().await?),\n            Err(e) => tracing::warn!(\"attempt {attempt}: {e}\"),\n        }\n    }\n    Err(Error::GaveUp)\n}\n";

fn write(root: &Path, files: &[(&str, &str)]) {
    for (p, text) in files {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

fn client_findings(report: &timeoutlint::emit::Report) -> Vec<String> {
    let mut out: Vec<String> = report
        .files
        .iter()
        .flat_map(|(s, ds)| {
            ds.iter()
                .filter(|d| d.rule.name == "client-timeout-in-retry")
                .map(|_| s.path.clone())
        })
        .collect();
    out.sort();
    out
}

fn tallied(dir: &Path, tally: &Tally) -> timeoutlint::emit::Report {
    let c = config(&[], true);
    let read = |p: &PathBuf| timeoutlint::walk::read(p, c.max_file_bytes);
    driver::lint_paths_tallied(&[dir.to_path_buf()], &[], &c, 2, &read, tally)
}

#[test]
fn a_module_tree_is_joined_and_separate_trees_are_not() {
    let dir = tempfile::tempdir().unwrap();
    // One crate: the tree of `lib.rs` holds both files.
    write(
        dir.path(),
        &[
            ("one/src/lib.rs", "mod net;\nmod retry;\n"),
            ("one/src/net.rs", CLIENT),
            ("one/src/retry.rs", RETRY),
            // The same two files in two crates: no tree holds both.
            ("two/a/src/lib.rs", "pub mod net;\n"),
            ("two/a/src/net.rs", CLIENT),
            ("two/b/src/lib.rs", "mod retry;\n"),
            ("two/b/src/retry.rs", RETRY),
        ],
    );
    let tally = Tally::default();
    let report = tallied(dir.path(), &tally);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let found = client_findings(&report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("one/src/net.rs"), "{found:?}");
    // Only units with a retry site are joined: `two/a` has none.
    let held = tally.held();
    let roots: Vec<String> = held
        .iter()
        .map(|h| {
            h.root
                .strip_prefix(dir.path())
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(roots, ["one/src/lib.rs", "two/b/src/lib.rs"], "{held:?}");
}

/// Many units with retry sites and summaries: the join holds one unit's at a time, so the most
/// it holds is the largest unit's, not the tree's; and a unit over the budget is joined in
/// pieces within it, each file still read and joined once.
#[test]
fn the_join_holds_one_unit_or_one_piece_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let units = 6;
    for u in 0..units {
        write(
            &dir.path().join(format!("c{u}")),
            &[
                ("src/lib.rs", "mod net;\nmod retry;\n"),
                ("src/net.rs", CLIENT),
                ("src/retry.rs", RETRY),
            ],
        );
    }
    let tally = Tally::default();
    let report = tallied(dir.path(), &tally);
    assert_eq!(client_findings(&report).len(), units);
    let held = tally.held();
    assert_eq!(held.len(), units, "{held:?}");
    for h in &held {
        assert_eq!(
            (h.kind, h.piece, h.files),
            (UnitKind::ModTree, (0, 1), 3),
            "{h:?}"
        );
        // Both files with a crate rule's words are summarised, and nothing of the other units.
        assert_eq!(h.summaries, 2, "{h:?}");
        assert_eq!(h.text_bytes, CLIENT.len() + RETRY.len(), "{h:?}");
    }

    // One unit (a directory of loose files) over a budget of two files' bytes.
    let big = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, &str)> = Vec::new();
    for n in 0..5 {
        files.push((format!("net{n}.rs"), CLIENT));
        files.push((format!("retry{n}.rs"), RETRY));
    }
    let named: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    write(big.path(), &named);
    let budget = CLIENT.len() + RETRY.len();
    let tally = Tally::with_join_budget(budget);
    let _ = tallied(big.path(), &tally);
    let held: Vec<Held> = tally.held();
    assert!(held.len() >= 5, "{held:?}");
    for h in &held {
        assert_eq!(h.kind, UnitKind::Directory, "{h:?}");
        assert_eq!(h.piece.1, held.len(), "{h:?}");
        assert!(h.bytes <= budget && h.text_bytes <= budget, "{h:?}");
    }
    assert_eq!(held.iter().map(|h| h.files).sum::<usize>(), 10);
    let joined = tally
        .counts()
        .into_iter()
        .filter(|((pass, _), c)| *pass == Pass::Join && c.reads == 1)
        .count();
    assert_eq!(joined, 10, "every file read once by the join");
}

/// The in-memory tree as the context search sees it: the top of its repository is `repo`.
impl units::Tree for Tree {
    fn rust_files(&self, dir: &Path) -> Vec<PathBuf> {
        self.files
            .iter()
            .map(|f| f.0.clone())
            .filter(|f| f.starts_with(dir))
            .collect()
    }

    fn text(&self, file: &Path) -> Option<String> {
        self.files.iter().find(|f| f.0 == file).map(|f| f.1.clone())
    }

    fn is_boundary(&self, dir: &Path) -> bool {
        dir == Path::new("repo")
    }
}

/// The directory a named file's unit is read from (a pre-commit hook names staged files one by
/// one): where its module tree's root lies, widened by `#[path]` either way, its build package,
/// and never above the repository.
#[test]
fn a_named_files_unit_is_read_from_the_directory_holding_it() {
    let mut tree = Tree::new(&[
        ("repo/app/src/lib.rs", "mod net;\n"),
        ("repo/app/src/net/mod.rs", "mod retry;\n"),
        ("repo/app/src/net/retry.rs", ""),
        ("repo/app/src/loose.rs", ""),
        (
            "repo/tool/main.rs",
            "#[path = \"../shared/x.rs\"] mod x;\nfn main() {}\n",
        ),
        ("repo/shared/x.rs", ""),
        (
            "repo/out/main.rs",
            "#[path = \"../../elsewhere.rs\"] mod e;\nfn main() {}\n",
        ),
        ("repo/bzl/src/a/deep.rs", ""),
        ("repo/bzl/src/b.rs", ""),
        ("repo/bzl/gen.rs", ""),
        ("elsewhere.rs", ""),
    ]);
    tree.builds.insert(
        PathBuf::from("repo/bzl"),
        (
            BuildKind::Bazel,
            "rust_library(name = \"b\", srcs = glob([\"**/*.rs\"]))".into(),
        ),
    );
    let dir = |f: &str| units::unit_dir(Path::new(f), &tree).map(|d| d.display().to_string());
    let some = |d: &str| Some(d.to_string());
    // A parent declares it, the root is above: the tree's directory, not the repository.
    assert_eq!(dir("repo/app/src/net/retry.rs"), some("repo/app/src"));
    assert_eq!(dir("repo/app/src/lib.rs"), some("repo/app/src"));
    // A `#[path]` out of the root's directory, followed from either end.
    assert_eq!(dir("repo/tool/main.rs"), some("repo"));
    assert_eq!(dir("repo/shared/x.rs"), some("repo"));
    // A link out of the repository is not followed.
    assert_eq!(dir("repo/out/main.rs"), some("repo/out"));
    // The build package, whatever the depth.
    assert_eq!(dir("repo/bzl/src/a/deep.rs"), some("repo/bzl"));
    // Nothing claims it: the search reads the repository to know, and the directory is enough.
    assert_eq!(dir("repo/app/src/loose.rs"), some("repo/app/src"));
    // Outside any repository, or climbing with `..`: nothing bounds it, nothing is read.
    assert_eq!(dir("elsewhere.rs"), None);
    assert_eq!(dir("repo/app/../app/src/lib.rs"), None);
}
