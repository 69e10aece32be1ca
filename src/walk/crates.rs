//! Which cargo package and target a file belongs to, worked out from `Cargo.toml` text the way
//! cargo names them in its `compiler-message` envelope (rust-analyzer matches diagnostics to
//! packages by that id).
//!
//! Pure: the caller (`walk`) reads the manifests and answers "does this file exist?" for target
//! auto-discovery. Deliberately approximate where cargo itself has no answer: a file that is in
//! no target (a fixture, a module not yet declared) is attributed to the package's library, or
//! its first binary. Deliberately absent: running `cargo metadata` (slow, may need the network).

use std::path::{Path, PathBuf};

use toml::{Table, Value};

/// The cargo package and target a file belongs to, as cargo's `compiler-message` names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateTarget {
    /// cargo's package id spec, e.g. `path+file:///work/app#0.1.0`.
    pub package_id: String,
    /// Absolute path of the package's `Cargo.toml`.
    pub manifest_path: String,
    /// `lib`, `bin`, `test`, `example`, `bench` or `custom-build`.
    pub kind: String,
    /// `lib` for libraries, `bin` for everything else.
    pub crate_type: String,
    /// The target's name (`snake_case` for a library).
    pub name: String,
    /// Absolute path of the target's root file.
    pub src_path: String,
    /// The package's edition.
    pub edition: String,
}

/// What a package's manifest says about tokio's `time` feature, which `tokio::time::sleep`
/// needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokioTime {
    /// A tokio dependency enables `time` (or `full`).
    Enabled,
    /// tokio is a dependency without `time` or `full` (opendal's has only `sync` and
    /// `io-util`): the code does not compile with `tokio::time`.
    Missing,
    /// The manifest does not depend on tokio at all.
    NoTokio,
}

/// [`TokioTime`] of the package `manifest` (its workspace root's manifest `workspace`, for
/// `tokio = { workspace = true }`), for a file of its library and binaries, or with `dev` for
/// one of its tests, benches and examples (which also get the dev-dependencies). Renamed
/// dependencies (`package = "tokio"`) count; a feature turned on only in a
/// `[target.'cfg(..)'.dependencies]` table is not on for every build and does not count; a
/// feature another dependency turns on cannot be seen here (that takes `cargo metadata`).
#[must_use]
pub fn tokio_time(manifest: &Table, workspace: Option<&Table>, dev: bool) -> TokioTime {
    let kinds: &[&str] = if dev {
        &["dependencies", "dev-dependencies"]
    } else {
        &["dependencies"]
    };
    // Each table, and whether it applies on every target: a `[target.'cfg(..)']` table may not
    // apply to the build at hand (opendal-core turns `time` on for wasm32 only).
    let mut tables: Vec<(&Table, bool)> = kinds
        .iter()
        .filter_map(|k| manifest.get(*k).and_then(Value::as_table))
        .map(|t| (t, true))
        .collect();
    if let Some(targets) = manifest.get("target").and_then(Value::as_table) {
        for t in targets.values().filter_map(Value::as_table) {
            tables.extend(
                kinds
                    .iter()
                    .filter_map(|k| t.get(*k).and_then(Value::as_table))
                    .map(|t| (t, false)),
            );
        }
    }
    let inherited = workspace
        .and_then(|w| w.get("workspace"))
        .and_then(|w| w.get("dependencies"))
        .and_then(Value::as_table);
    let features = |v: &Value| -> Vec<String> {
        v.get("features")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut found = TokioTime::NoTokio;
    for (table, everywhere) in tables {
        for (key, dep) in table {
            let package = dep.get("package").and_then(Value::as_str).unwrap_or(key);
            if package != "tokio" {
                continue;
            }
            let mut on = features(dep);
            if dep.get("workspace").and_then(Value::as_bool) == Some(true) {
                if let Some(w) = inherited.and_then(|t| t.get(key)) {
                    on.extend(features(w));
                }
            }
            if everywhere && on.iter().any(|f| f == "time" || f == "full") {
                return TokioTime::Enabled;
            }
            found = TokioTime::Missing;
        }
    }
    found
}

/// A path as the path part of a URI: everything but unreserved characters, `/` and a drive
/// letter's `:` is percent-encoded, like cargo's package ids and what SARIF validators accept.
#[must_use]
pub fn encode_path(path: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(path.len());
    for (i, b) in path.bytes().enumerate() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/')
            || (b == b':' && i == 1);
        if keep {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The target of `file` in the package whose manifest is at `manifest_path` (absolute) with the
/// parsed `manifest`; `workspace` is the workspace root's manifest, for inherited fields.
/// `None` when the manifest has no `[package]` with a name.
#[must_use]
pub fn crate_target(
    manifest_path: &Path,
    manifest: &Table,
    workspace: Option<&Table>,
    file: &Path,
    exists: &dyn Fn(&Path) -> bool,
) -> Option<CrateTarget> {
    let package = manifest.get("package")?.as_table()?;
    let name = package.get("name")?.as_str()?;
    let dir = manifest_path.parent()?;
    let inherited = |key: &str, default: &str| -> String {
        match package.get(key) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Table(t)) if t.get("workspace").and_then(Value::as_bool) == Some(true) => {
                workspace
                    .and_then(|w| w.get("workspace")?.get("package")?.get(key)?.as_str())
                    .unwrap_or(default)
                    .to_string()
            }
            _ => default.to_string(),
        }
    };
    // cargo's default when a package has no version (allowed since 1.75).
    let version = inherited("version", "0.0.0");
    let edition = inherited("edition", "2015");
    let rel = file.strip_prefix(dir).unwrap_or(file);
    let (kind, target_name, src) = target_of(name, manifest, dir, rel, exists);
    Some(CrateTarget {
        package_id: package_id(dir, name, &version),
        manifest_path: slash(manifest_path),
        crate_type: if kind == "lib" { "lib" } else { "bin" }.to_string(),
        kind,
        name: target_name,
        src_path: slash(&dir.join(src)),
        edition,
    })
}

/// cargo's package id spec for a path dependency: `path+file:///dir#name@version`, with the
/// name left out when the directory is named like the package.
#[must_use]
pub fn package_id(dir: &Path, name: &str, version: &str) -> String {
    let path = slash(dir);
    let mut url = String::from("path+file://");
    if !path.starts_with('/') {
        url.push('/');
    }
    url.push_str(&encode_path(&path));
    if dir.file_name().and_then(|n| n.to_str()) == Some(name) {
        format!("{url}#{version}")
    } else {
        format!("{url}#{name}@{version}")
    }
}

/// (kind, name, root file relative to the package) of the target holding `rel`.
fn target_of(
    package: &str,
    manifest: &Table,
    dir: &Path,
    rel: &Path,
    exists: &dyn Fn(&Path) -> bool,
) -> (String, String, PathBuf) {
    let lib_name = manifest
        .get("lib")
        .and_then(|l| l.get("name"))
        .and_then(Value::as_str)
        .map_or_else(|| package.replace('-', "_"), str::to_string);
    let lib_path = manifest
        .get("lib")
        .and_then(|l| l.get("path"))
        .and_then(Value::as_str)
        .map_or_else(|| PathBuf::from("src/lib.rs"), PathBuf::from);
    // Targets declared in the manifest win over cargo's directory conventions.
    for (key, kind, dir_name) in [
        ("bin", "bin", "src/bin"),
        ("test", "test", "tests"),
        ("example", "example", "examples"),
        ("bench", "bench", "benches"),
    ] {
        let declared = manifest.get(key).and_then(Value::as_array);
        for t in declared.into_iter().flatten() {
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                continue;
            };
            let path = t.get("path").and_then(Value::as_str).map_or_else(
                || PathBuf::from(format!("{dir_name}/{name}.rs")),
                PathBuf::from,
            );
            if path == rel {
                return (kind.into(), name.into(), path);
            }
        }
    }
    if rel == lib_path {
        return ("lib".into(), lib_name, lib_path);
    }
    let build = manifest
        .get("package")
        .and_then(|p| p.get("build"))
        .and_then(Value::as_str)
        .unwrap_or("build.rs");
    if rel == Path::new(build) {
        return (
            "custom-build".into(),
            "build-script-build".into(),
            rel.into(),
        );
    }
    for (kind, dir_name) in [
        ("bin", "src/bin"),
        ("test", "tests"),
        ("example", "examples"),
        ("bench", "benches"),
    ] {
        let Ok(inner) = rel.strip_prefix(dir_name) else {
            continue;
        };
        let mut parts = inner.components();
        let Some(first) = parts.next() else { continue };
        let first = Path::new(first.as_os_str());
        let single = parts.next().is_none();
        let name = if single {
            first.file_stem()
        } else {
            first.file_name()
        };
        let name = name.map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let root = if single {
            rel.to_path_buf()
        } else {
            Path::new(dir_name).join(first).join("main.rs")
        };
        return (kind.into(), name, root);
    }
    let main = PathBuf::from("src/main.rs");
    if rel == main {
        return ("bin".into(), package.into(), main);
    }
    if manifest.get("lib").is_some() || exists(&dir.join(&lib_path)) {
        return ("lib".into(), lib_name, lib_path);
    }
    if let Some(bin) = manifest
        .get("bin")
        .and_then(Value::as_array)
        .and_then(|b| b.first())
    {
        let name = bin.get("name").and_then(Value::as_str).unwrap_or(package);
        let path = bin
            .get("path")
            .and_then(Value::as_str)
            .map_or_else(|| main.clone(), PathBuf::from);
        return ("bin".into(), name.into(), path);
    }
    ("bin".into(), package.into(), main)
}

fn slash(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// A Rust edition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Edition {
    /// 2015: `try`, `async`, `await` and `dyn` are names; trait objects need no `dyn`.
    E2015,
    /// 2018: those four are keywords; a bare trait object is still allowed.
    E2018,
    /// 2021: what syn parses.
    E2021,
    /// 2024 and later.
    E2024,
}

impl Edition {
    /// The edition a manifest's `edition` value names; `None` for one this linter does not know.
    #[must_use]
    pub fn from_manifest(value: &str) -> Option<Edition> {
        match value {
            "2015" => Some(Edition::E2015),
            "2018" => Some(Edition::E2018),
            "2021" => Some(Edition::E2021),
            v if v.parse::<u32>().is_ok_and(|y| y >= 2024) => Some(Edition::E2024),
            _ => None,
        }
    }

    /// The edition as a manifest writes it.
    #[must_use]
    pub fn year(self) -> &'static str {
        match self {
            Edition::E2015 => "2015",
            Edition::E2018 => "2018",
            Edition::E2021 => "2021",
            Edition::E2024 => "2024",
        }
    }
}

/// The edition of the package holding `file`: the nearest `Cargo.toml` with a `[package]`, its
/// `edition` (inherited from the workspace with `edition.workspace = true`), 2015 when it has
/// none (cargo's default); 2015 for a file in no package (rustc's default). `None` when the
/// manifest names an edition this linter does not know. Read only for files syn rejects.
#[must_use]
pub fn edition_of(file: &Path) -> Option<Edition> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let file = crate::walk::normalize(&cwd.join(file));
    let read = |dir: &Path| -> Option<toml::Table> {
        let text = crate::walk::bounded::read(
            &dir.join("Cargo.toml"),
            crate::walk::bounded::MANIFEST_LIMIT,
        )
        .ok()?;
        text.parse::<toml::Table>().ok()
    };
    let mut dirs = file.ancestors().skip(1);
    let (manifest_dir, manifest) = loop {
        let Some(dir) = dirs.next() else {
            return Some(Edition::E2015);
        };
        if let Some(m) = read(dir).filter(|m| m.contains_key("package")) {
            break (dir.to_path_buf(), m);
        }
    };
    let workspace_of = || -> Option<toml::Table> {
        manifest_dir
            .ancestors()
            .find_map(|d| read(d).filter(|m| m.contains_key("workspace")))
    };
    let edition = manifest.get("package")?.get("edition");
    let value = match edition {
        None => return Some(Edition::E2015),
        Some(toml::Value::String(s)) => s.clone(),
        Some(toml::Value::Table(t))
            if t.get("workspace").and_then(toml::Value::as_bool) == Some(true) =>
        {
            let ws = workspace_of()?;
            ws.get("workspace")?
                .get("package")?
                .get("edition")?
                .as_str()?
                .to_string()
        }
        Some(_) => return None,
    };
    Edition::from_manifest(&value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(manifest: &str, file: &str, files: &[&str]) -> CrateTarget {
        let table: Table = manifest.parse().unwrap();
        let exists = |p: &Path| files.iter().any(|f| Path::new("/w/app").join(f) == p);
        crate_target(
            Path::new("/w/app/Cargo.toml"),
            &table,
            Some(&"[workspace.package]\nversion = \"2.0.0\"".parse().unwrap()),
            &Path::new("/w/app").join(file),
            &exists,
        )
        .unwrap()
    }

    #[test]
    fn ids_and_targets_follow_cargo() {
        let m = "[package]\nname = \"my-lib\"\nversion = \"0.3.1\"\nedition = \"2021\"\n";
        let t = target(m, "src/net/retry.rs", &["src/lib.rs", "src/main.rs"]);
        assert_eq!(t.package_id, "path+file:///w/app#my-lib@0.3.1");
        assert_eq!((t.kind.as_str(), t.name.as_str()), ("lib", "my_lib"));
        assert_eq!(t.src_path, "/w/app/src/lib.rs");
        let t = target(m, "src/main.rs", &["src/lib.rs", "src/main.rs"]);
        assert_eq!((t.kind.as_str(), t.name.as_str()), ("bin", "my-lib"));
        let t = target(m, "tests/it/cli.rs", &[]);
        assert_eq!((t.kind.as_str(), t.name.as_str()), ("test", "it"));
        assert_eq!(t.src_path, "/w/app/tests/it/main.rs");
        let t = target(m, "src/util.rs", &["src/main.rs"]);
        assert_eq!((t.kind.as_str(), t.crate_type.as_str()), ("bin", "bin"));
        let inherited = "[package]\nname = \"app\"\nversion.workspace = true\n";
        let t = target(inherited, "build.rs", &[]);
        assert_eq!(
            t.package_id, "path+file:///w/app#2.0.0",
            "dir named like the package"
        );
        assert_eq!(
            (t.kind.as_str(), t.edition.as_str()),
            ("custom-build", "2015")
        );
    }

    #[test]
    fn tokio_time_follows_the_manifest() {
        let t = |m: &str, w: Option<&str>, dev: bool| {
            let m: Table = m.parse().unwrap();
            let w: Option<Table> = w.map(|w| w.parse().unwrap());
            tokio_time(&m, w.as_ref(), dev)
        };
        // opendal's shape: tokio without `time`.
        let opendal =
            "[dependencies]\ntokio = { version = \"1\", features = [\"sync\", \"io-util\"] }\n";
        assert_eq!(t(opendal, None, false), TokioTime::Missing);
        assert_eq!(
            t("[dependencies]\ntokio = \"1\"\n", None, false),
            TokioTime::Missing
        );
        let timed = "[dependencies]\ntokio = { version = \"1\", features = [\"time\"] }\n";
        assert_eq!(t(timed, None, false), TokioTime::Enabled);
        let full = "[dependencies.tokio]\nversion = \"1\"\nfeatures = [\"full\"]\n";
        assert_eq!(t(full, None, false), TokioTime::Enabled);
        assert_eq!(
            t("[dependencies]\nserde = \"1\"\n", None, false),
            TokioTime::NoTokio
        );
        // Dev-dependencies only count for tests, benches and examples.
        let dev = format!(
            "{opendal}[dev-dependencies]\ntokio = {{ version = \"1\", features = [\"full\"] }}\n"
        );
        assert_eq!(t(&dev, None, false), TokioTime::Missing);
        assert_eq!(t(&dev, None, true), TokioTime::Enabled);
        // Renamed, per target, inherited from the workspace.
        let renamed = "[dependencies]\ntk = { package = \"tokio\", version = \"1\", features = [\"rt\", \"time\"] }\n";
        assert_eq!(t(renamed, None, false), TokioTime::Enabled);
        // opendal-core's shape: `time` for wasm32 only is not `time` on every build.
        let wasm = format!("{opendal}[target.'cfg(target_arch = \"wasm32\")'.dependencies]\ntokio = {{ version = \"1\", features = [\"time\"] }}\n");
        assert_eq!(t(&wasm, None, false), TokioTime::Missing);
        let target = "[target.'cfg(unix)'.dependencies]\ntokio = { version = \"1\", features = [\"sync\"] }\n";
        assert_eq!(t(target, None, false), TokioTime::Missing);
        let member = "[dependencies]\ntokio = { workspace = true, features = [\"sync\"] }\n";
        let root = "[workspace.dependencies]\ntokio = { version = \"1\", features = [\"time\"] }\n";
        assert_eq!(t(member, Some(root), false), TokioTime::Enabled);
        assert_eq!(t(member, None, false), TokioTime::Missing);
    }

    #[test]
    // The test writes the manifests it reads.
    #[allow(clippy::disallowed_methods)]
    fn an_inherited_edition_is_read_from_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = "[workspace]\nmembers = [\"m\"]\n[workspace.package]\nedition = \"2015\"\n";
        std::fs::write(dir.path().join("Cargo.toml"), ws).unwrap();
        std::fs::create_dir_all(dir.path().join("m/src")).unwrap();
        let member = "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition.workspace = true\n";
        std::fs::write(dir.path().join("m/Cargo.toml"), member).unwrap();
        assert_eq!(
            edition_of(&dir.path().join("m/src/lib.rs")),
            Some(Edition::E2015)
        );
        std::fs::write(
            dir.path().join("m/Cargo.toml"),
            member.replace("edition.workspace = true", "edition = \"2021\""),
        )
        .unwrap();
        assert_eq!(
            edition_of(&dir.path().join("m/src/lib.rs")),
            Some(Edition::E2021)
        );
    }
}
