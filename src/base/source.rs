//! One source file's text and the position arithmetic every emitter needs.
//!
//! Byte offsets are the currency of the whole linter (diagnostics, fixes, SARIF regions); this
//! module turns them into 1-based lines and the column kinds our consumers ask for: Unicode
//! scalar values (rustc JSON, human output) and UTF-16 code units (SARIF, GitHub). Nothing here
//! does IO.

/// A file as the rules see it: a display path relative to the project root and its text.
///
/// The display path is for people and report formats only: it may be a lossy spelling of the
/// real name (a non-UTF-8 byte becomes U+FFFD), so everything that opens or writes the file uses
/// [`SourceFile::real_path`] instead.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Relative path with `/` separators, as printed in every format.
    pub path: String,
    /// The path the file was read from, exactly as the file system spells it: the only path
    /// `--fix` and `--add-ignore` may write to.
    pub real_path: std::path::PathBuf,
    /// The full text, including a byte-order mark if the file had one.
    pub text: String,
    line_starts: Vec<usize>,
}

/// A half-open byte range into a [`SourceFile`]'s text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// A 1-based position; `col` counts Unicode scalar values, `col16` UTF-16 code units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column in Unicode scalar values.
    pub col: usize,
    /// 1-based column in UTF-16 code units.
    pub col16: usize,
    /// 0-based byte offset.
    pub byte: usize,
}

impl Span {
    /// The range `start..end`.
    #[must_use]
    pub fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }

    /// True when `other` lies inside `self`.
    #[must_use]
    pub fn contains(self, other: Span) -> bool {
        self.start <= other.start && other.end <= self.end
    }
}

impl SourceFile {
    /// Index `text` for position look-ups; the real path is the display path until
    /// [`SourceFile::with_real_path`] says otherwise (files that never came from disk).
    #[must_use]
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> Self {
        let path = path.into();
        let text = text.into();
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        Self {
            real_path: std::path::PathBuf::from(&path),
            path,
            text,
            line_starts,
        }
    }

    /// The same file, read from `real`.
    #[must_use]
    pub fn with_real_path(mut self, real: impl Into<std::path::PathBuf>) -> Self {
        self.real_path = real.into();
        self
    }

    /// The line ending the file uses: `"\r\n"` when its first line ends so, else `"\n"`.
    /// Text a fix or a suppression inserts is written with it, so a CRLF file stays CRLF.
    #[must_use]
    pub fn line_ending(&self) -> &'static str {
        line_ending_of(&self.text)
    }

    /// Length of a leading byte-order mark (0 or 3); syn never sees it.
    #[must_use]
    pub fn bom_len(&self) -> usize {
        if self.text.starts_with('\u{feff}') {
            3
        } else {
            0
        }
    }

    /// The text of `span`, clamped to the file and to character boundaries.
    #[must_use]
    pub fn slice(&self, span: Span) -> &str {
        let start = floor_char(&self.text, span.start.min(self.text.len()));
        let end = floor_char(&self.text, span.end.min(self.text.len())).max(start);
        &self.text[start..end]
    }

    /// 0-based index of the line holding `byte`.
    #[must_use]
    pub fn line_index(&self, byte: usize) -> usize {
        match self.line_starts.binary_search(&byte) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// Byte range of 0-based line `idx`, without its line terminator.
    #[must_use]
    pub fn line_span(&self, idx: usize) -> Span {
        let start = self
            .line_starts
            .get(idx)
            .copied()
            .unwrap_or(self.text.len());
        let mut end = self
            .line_starts
            .get(idx + 1)
            .map_or(self.text.len(), |n| n - 1);
        if end > start && self.text.as_bytes()[end - 1] == b'\r' {
            end -= 1;
        }
        Span::new(start, end.max(start))
    }

    /// Number of lines (a trailing newline does not start a new one).
    #[must_use]
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Position of `byte`; a BOM on line 1 is not counted as a column.
    #[must_use]
    pub fn position(&self, byte: usize) -> Position {
        let byte = floor_char(&self.text, byte.min(self.text.len()));
        let idx = self.line_index(byte);
        let mut start = self.line_starts[idx];
        if idx == 0 {
            start = start.max(self.bom_len()).min(byte);
        }
        let before = &self.text[start..byte];
        Position {
            line: idx + 1,
            col: before.chars().count() + 1,
            col16: before.encode_utf16().count() + 1,
            byte,
        }
    }

    /// Byte offset of a 1-based line and 0-based character column (proc-macro2's convention).
    #[must_use]
    pub fn offset_of(&self, line: usize, char_col: usize) -> usize {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        let start = if line == 1 {
            start.max(self.bom_len())
        } else {
            start
        };
        let rest = &self.text[start..];
        rest.char_indices()
            .nth(char_col)
            .map_or(self.text.len(), |(i, _)| start + i)
    }
}

/// The line ending of `text`: `"\r\n"` when its first line ends so, else `"\n"`.
#[must_use]
pub fn line_ending_of(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// `text` with every bare `\n` written as `ending` (`\r\n` already there is kept as it is).
#[must_use]
pub fn with_line_ending(text: &str, ending: &str) -> String {
    if ending == "\n" || !text.contains('\n') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut prev = '\0';
    for c in text.chars() {
        if c == '\n' && prev != '\r' {
            out.push_str(ending);
        } else {
            out.push(c);
        }
        prev = c;
    }
    out
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_chars_and_utf16_units() {
        let f = SourceFile::new("a.rs", "ab\r\n\u{e9}\u{1f600}x\n");
        let x = f.text.find('x').unwrap();
        let p = f.position(x);
        assert_eq!((p.line, p.col, p.col16), (2, 3, 4));
        assert_eq!(f.slice(f.line_span(0)), "ab");
        assert_eq!(f.offset_of(2, 2), x);
    }

    #[test]
    fn line_endings_are_detected_and_kept() {
        assert_eq!(line_ending_of("a\r\nb\n"), "\r\n");
        assert_eq!(line_ending_of("a\nb\r\n"), "\n");
        assert_eq!(line_ending_of("no newline"), "\n");
        assert_eq!(with_line_ending("x\ny\r\nz\n", "\r\n"), "x\r\ny\r\nz\r\n");
        assert_eq!(with_line_ending("x\ny", "\n"), "x\ny");
    }

    #[test]
    fn bom_is_not_a_column() {
        let f = SourceFile::new("a.rs", "\u{feff}fn x() {}");
        assert_eq!(f.position(3).col, 1);
        assert_eq!(f.offset_of(1, 0), 3);
    }
}
