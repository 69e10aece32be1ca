//! Reading the files that are not linted sources (configuration, baselines, `Cargo.toml`
//! manifests): regular files only, opened so that nothing can block, and never more than a size
//! limit. Every such read in the program goes through [`read`].
//!
//! Why: `std::fs::read` on a FIFO waits for a writer forever, and on `/dev/zero` (or a link to
//! it) grows without end. The type is checked twice: on the path before opening (a FIFO must not
//! be opened for reading, as that blocks) and on the opened handle (the path may have been
//! swapped in between); the open itself is non-blocking on Unix, so a swapped-in FIFO cannot
//! hang it either. Part of the IO edge (`lib.rs`, invariant 1).

use std::io::Read as _;
use std::path::Path;

/// Limit for configuration files and `Cargo.toml` manifests: far above any real one.
pub const MANIFEST_LIMIT: u64 = 1024 * 1024;

/// Limit for baseline files, which list every accepted finding of a codebase.
pub const BASELINE_LIMIT: u64 = 256 * 1024 * 1024;

/// Why a file could not be read.
#[derive(Debug)]
pub enum Error {
    /// Nothing at the path (or a dangling link): for lookups, simply "not there".
    NotFound,
    /// A directory, FIFO, socket or device: never read.
    NotRegular(&'static str),
    /// Bigger than the limit.
    TooBig(u64),
    /// Not UTF-8.
    NotUtf8,
    /// Any other IO error (permissions, ..).
    Io(std::io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NotFound => f.write_str("no such file"),
            Error::NotRegular(kind) => write!(f, "not a regular file ({kind}); not read"),
            Error::TooBig(limit) => write!(f, "larger than {limit} bytes; not read"),
            Error::NotUtf8 => f.write_str("not UTF-8"),
            Error::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

/// What kind of non-regular file `t` is, in words; `None` for a regular file.
#[must_use]
pub fn special_kind(t: std::fs::FileType) -> Option<&'static str> {
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return Some("a FIFO");
        }
        if t.is_socket() {
            return Some("a socket");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
    }
    Some("a special file")
}

/// Is `path` (links followed) something other than a regular file or directory? The words for
/// it when so: the check for paths named on the command line, which are walked when they are
/// directories and read when they are files.
#[must_use]
pub fn special_file(path: &Path) -> Option<&'static str> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_dir() {
        return None;
    }
    special_kind(meta.file_type())
}

/// Is `path` (links followed) a regular file? Errors say what it is instead.
pub fn check_regular(path: &Path) -> Result<std::fs::Metadata, Error> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound,
        _ => Error::Io(e),
    })?;
    match special_kind(meta.file_type()) {
        Some(kind) => Err(Error::NotRegular(kind)),
        None => Ok(meta),
    }
}

/// The text of the regular file at `path`, at most `limit` bytes.
pub fn read(path: &Path, limit: u64) -> Result<String, Error> {
    let meta = check_regular(path)?;
    if meta.len() > limit {
        return Err(Error::TooBig(limit));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        // No effect on a regular file; makes opening a FIFO swapped in since the check return
        // at once instead of waiting for a writer.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound,
        _ => Error::Io(e),
    })?;
    let opened = file.metadata().map_err(Error::Io)?;
    if let Some(kind) = special_kind(opened.file_type()) {
        return Err(Error::NotRegular(kind));
    }
    // The length can change after the check (or lie, as in /proc): read one byte past the
    // limit to tell "exactly the limit" from "more".
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Error::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Error::TooBig(limit));
    }
    String::from_utf8(bytes).map_err(|_| Error::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.toml");
        std::fs::File::create(&p)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"0123456789"))
            .unwrap();
        assert_eq!(read(&p, 10).unwrap(), "0123456789");
        assert!(matches!(read(&p, 9), Err(Error::TooBig(9))));
        assert!(matches!(
            read(&dir.path().join("none"), 10),
            Err(Error::NotFound)
        ));
        assert!(matches!(
            read(dir.path(), 10),
            Err(Error::NotRegular("a directory"))
        ));
        assert_eq!(special_file(dir.path()), None);
        assert_eq!(special_file(&p), None);
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("timeoutlint.toml");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = read(&link, MANIFEST_LIMIT).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not a regular file (a character device); not read"
        );
        assert_eq!(special_file(&link), Some("a character device"));
    }
}
