//! `timeoutlint server`: a language server over stdio, for editors.
//!
//! Each open document is linted from its buffer as `timeoutlint --stdin-filename PATH -` lints
//! it ([`cli::Plan`]: the configuration found from the file's path, its crate's other files
//! read for the crate join, fixes capped by its manifest), with the other open buffers
//! standing for their files. Diagnostics are published on open, change (full sync) and save,
//! and cleared on close; fixes are offered as `quickfix` code actions, and every safe fix at
//! once as `source.fixAll.timeoutlint`.
//!
//! The message types are `lsp-server`'s and `lsp-types`'; the framing is read here, not by
//! `lsp-server`'s stdio transport, because that one ends its reader on the first malformed
//! message and allocates whatever `Content-Length` a client claims. Here a bad frame is
//! answered (or logged) and skipped, a message over [`MAX_MESSAGE`] is skipped unread, and
//! nothing a client sends can end the server but `exit` or the end of its input. Positions are
//! UTF-16 (the protocol's default) unless the client offers UTF-8.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::mpsc;

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lsp;

use crate::base::diagnostic::{Applicability, Diagnostic, Fix, Severity};
use crate::edge::cli::{self, Plan, Planned};
use crate::emit::Report;

/// The largest message read (a buffer of the default 10 MiB file limit, JSON-escaped, fits).
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;
/// The longest header line read; a longer one is a broken frame.
const MAX_HEADER_LINE: u64 = 8 * 1024;
/// The diagnostics' `source`.
const SOURCE: &str = "timeoutlint";
/// The code action kind of "apply every safe fix".
const FIX_ALL: &str = "source.fixAll.timeoutlint";

/// Serve the protocol on stdin and stdout until `exit`; the exit code is 0 after a `shutdown`
/// request, 1 otherwise (the protocol's rule).
pub fn run() -> anyhow::Result<u8> {
    let (tx, rx) = mpsc::channel();
    // The reader blocks on stdin; it ends with its input, or with the process.
    std::thread::Builder::new()
        .name("timeoutlint-lsp-reader".into())
        .spawn(move || {
            let mut input = std::io::stdin().lock();
            loop {
                let frame = read_frame(&mut input);
                let end = matches!(frame, Frame::End);
                if tx.send(frame).is_err() || end {
                    break;
                }
            }
        })?;
    let mut server = Server::new(std::io::stdout());
    Ok(server.serve(&rx))
}

/// What one frame of the input holds.
#[derive(Debug)]
pub enum Frame {
    /// A message.
    Message(Message),
    /// A frame that is no message: why, and its request id when one could be read.
    Bad(String, Option<RequestId>),
    /// The end of the input (or a read error: nothing more can be read).
    End,
}

/// Read one frame: headers up to a blank line, then `Content-Length` bytes of JSON.
pub fn read_frame(input: &mut impl BufRead) -> Frame {
    let mut length: Option<usize> = None;
    let mut bad: Option<String> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        match std::io::Read::take(&mut *input, MAX_HEADER_LINE).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return Frame::End,
            Ok(_) => {}
        }
        if line.last() != Some(&b'\n') {
            // Too long: skip the rest of the line, it is no header.
            bad.get_or_insert_with(|| "a header line over 8 KiB".into());
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if length.is_none() && bad.is_none() {
                // Blank lines between frames: tolerated.
                continue;
            }
            break;
        }
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => {
                        bad.get_or_insert_with(|| format!("bad Content-Length `{}`", value.trim()));
                    }
                }
            }
            Some(_) => {}
            None => {
                bad.get_or_insert_with(|| format!("malformed header line `{text}`"));
            }
        }
    }
    let Some(length) = length else {
        return Frame::Bad(
            bad.unwrap_or_else(|| "a frame without Content-Length".into()),
            None,
        );
    };
    if length > MAX_MESSAGE {
        // Skipped unread, so that the next frame is found.
        let skipped = std::io::copy(
            &mut std::io::Read::take(&mut *input, length as u64),
            &mut std::io::sink(),
        );
        if skipped.map_or(true, |n| n < length as u64) {
            return Frame::End;
        }
        return Frame::Bad(
            format!("a message of {length} bytes, over the {MAX_MESSAGE}-byte limit"),
            None,
        );
    }
    let mut body = vec![0; length];
    if std::io::Read::read_exact(input, &mut body).is_err() {
        return Frame::End;
    }
    if let Some(why) = bad {
        return Frame::Bad(why, None);
    }
    match serde_json::from_slice::<Message>(&body) {
        Ok(m) => Frame::Message(m),
        Err(e) => {
            // Valid JSON with a usable id gets its error answered under that id.
            let id = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .and_then(|id| serde_json::from_value::<RequestId>(id).ok());
            Frame::Bad(format!("not a JSON-RPC message: {e}"), id)
        }
    }
}

/// Which unit `character` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 bytes.
    Utf8,
    /// UTF-16 code units (the protocol's default).
    Utf16,
}

/// Line starts of a text, as the protocol counts lines: ended by `\n`, `\r\n` or `\r`.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
    encoding: Encoding,
}

impl<'a> Lines<'a> {
    /// Index `text`.
    #[must_use]
    pub fn new(text: &'a str, encoding: Encoding) -> Self {
        let b = text.as_bytes();
        let mut starts = vec![0];
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\r' if b.get(i + 1) == Some(&b'\n') => {
                    starts.push(i + 2);
                    i += 1;
                }
                b'\n' | b'\r' => starts.push(i + 1),
                _ => {}
            }
            i += 1;
        }
        Lines {
            text,
            starts,
            encoding,
        }
    }

    /// The position of byte `offset` (clamped to the text and to a character boundary).
    #[must_use]
    pub fn position(&self, offset: usize) -> lsp::Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let before = &self.text[self.starts[line]..offset];
        let character = match self.encoding {
            Encoding::Utf8 => before.len(),
            Encoding::Utf16 => before.encode_utf16().count(),
        };
        lsp::Position::new(to_u32(line), to_u32(character))
    }

    /// The byte offset of `pos`; a line or character past the end is clamped to it, and a
    /// character inside a UTF-16 pair or a UTF-8 sequence to the character's start.
    #[must_use]
    pub fn offset(&self, pos: lsp::Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let end = self.line_end(pos.line as usize);
        let mut units = 0usize;
        for (i, c) in self.text[start..end].char_indices() {
            let width = match self.encoding {
                Encoding::Utf8 => c.len_utf8(),
                Encoding::Utf16 => c.len_utf16(),
            };
            if units + width > pos.character as usize {
                return start + i;
            }
            units += width;
        }
        end
    }

    /// The range of bytes `start..end`.
    #[must_use]
    pub fn range(&self, start: usize, end: usize) -> lsp::Range {
        lsp::Range::new(self.position(start), self.position(end.max(start)))
    }

    /// Where line `line`'s text ends (before its line break; the last line has none).
    fn line_end(&self, line: usize) -> usize {
        let (start, b) = (self.starts[line], self.text.as_bytes());
        match self.starts.get(line + 1) {
            None => self.text.len(),
            Some(&next) if next >= start + 2 && &b[next - 2..next] == b"\r\n" => next - 2,
            Some(&next) => next - 1,
        }
    }

    /// The byte offset of a 1-based line and a 1-based column in characters (a parse error's
    /// place), clamped to the line.
    fn char_place(&self, line: usize, column: usize) -> usize {
        let Some(&start) = self.starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        let end = self.line_end(line.saturating_sub(1));
        self.text[start..end]
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(end, |(i, _)| start + i)
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// An open document.
struct Document {
    text: String,
    version: i32,
    /// The file it is, for a `file:` URI.
    path: Option<PathBuf>,
    /// Its findings, for the text as it is, once linted.
    findings: Option<Vec<Finding>>,
    /// Whether those findings were published (a code action may lint before they are).
    published: bool,
}

/// A finding as published, with its fix.
struct Finding {
    diagnostic: lsp::Diagnostic,
    fix: Option<Fix>,
}

/// The server's state.
struct Server<W: Write> {
    out: W,
    encoding: Encoding,
    initialized: bool,
    shutdown: bool,
    documents: HashMap<lsp::Uri, Document>,
    threads: usize,
}

/// What handling a message asks of the loop.
enum Next {
    Go,
    /// `exit`: end with this code.
    Exit(u8),
}

impl<W: Write> Server<W> {
    fn new(out: W) -> Self {
        Server {
            out,
            encoding: Encoding::Utf16,
            initialized: false,
            shutdown: false,
            documents: HashMap::new(),
            threads: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        }
    }

    /// The message loop. Messages already waiting are handled before any document is linted,
    /// so a burst of changes is linted once, at its last text.
    fn serve(&mut self, rx: &mpsc::Receiver<Frame>) -> u8 {
        while let Ok(first) = rx.recv() {
            let mut batch = vec![first];
            batch.extend(rx.try_iter());
            for frame in batch {
                let next = match frame {
                    Frame::Message(m) => self.handle(m),
                    Frame::Bad(why, id) => {
                        self.bad_frame(&why, id);
                        Next::Go
                    }
                    Frame::End => Next::Exit(u8::from(!self.shutdown)),
                };
                if let Next::Exit(code) = next {
                    return code;
                }
            }
            self.publish_pending();
        }
        u8::from(!self.shutdown)
    }

    fn send(&mut self, message: &Message) {
        // A client that closed its input is gone; the end of our input follows.
        let _ = message.write(&mut self.out);
    }

    fn bad_frame(&mut self, why: &str, id: Option<RequestId>) {
        eprintln!("timeoutlint server: ignored {why}");
        if let Some(id) = id {
            let error = Response::new_err(id, ErrorCode::InvalidRequest as i32, why.to_string());
            self.send(&error.into());
        } else {
            // JSON-RPC's answer to an unreadable message: an error with a null id.
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": ErrorCode::ParseError as i32, "message": why},
            })
            .to_string();
            let _ = write!(self.out, "Content-Length: {}\r\n\r\n{body}", body.len());
            let _ = self.out.flush();
        }
    }

    fn handle(&mut self, message: Message) -> Next {
        match message {
            Message::Request(r) => {
                self.request(&r);
                Next::Go
            }
            Message::Notification(n) if n.method == "exit" => Next::Exit(u8::from(!self.shutdown)),
            Message::Notification(n) => {
                if self.initialized && !self.shutdown {
                    self.notification(&n);
                }
                Next::Go
            }
            // We send no requests, so a response answers nothing.
            Message::Response(_) => Next::Go,
        }
    }

    fn request(&mut self, r: &Request) {
        let reply = |result: Result<serde_json::Value, (ErrorCode, String)>| match result {
            Ok(v) => Response::new_ok(r.id.clone(), v),
            Err((code, message)) => Response::new_err(r.id.clone(), code as i32, message),
        };
        let response = if r.method == "initialize" {
            if self.initialized {
                reply(Err((
                    ErrorCode::InvalidRequest,
                    "initialized already".into(),
                )))
            } else {
                self.initialized = true;
                reply(Ok(self.initialize(&r.params)))
            }
        } else if !self.initialized {
            reply(Err((
                ErrorCode::ServerNotInitialized,
                format!("`{}` before `initialize`", r.method),
            )))
        } else if self.shutdown {
            reply(Err((
                ErrorCode::InvalidRequest,
                format!("`{}` after `shutdown`", r.method),
            )))
        } else {
            match r.method.as_str() {
                "shutdown" => {
                    self.shutdown = true;
                    reply(Ok(serde_json::Value::Null))
                }
                "textDocument/codeAction" => {
                    match serde_json::from_value::<lsp::CodeActionParams>(r.params.clone()) {
                        Ok(p) => reply(Ok(self.code_actions(&p))),
                        Err(e) => reply(Err((ErrorCode::InvalidParams, e.to_string()))),
                    }
                }
                other => reply(Err((
                    ErrorCode::MethodNotFound,
                    format!("timeoutlint does not serve `{other}`"),
                ))),
            }
        };
        self.send(&response.into());
    }

    /// The answer to `initialize`: UTF-8 positions when the client offers them.
    fn initialize(&mut self, params: &serde_json::Value) -> serde_json::Value {
        let offered = params
            .pointer("/capabilities/general/positionEncodings")
            .and_then(serde_json::Value::as_array);
        if offered.is_some_and(|o| o.iter().any(|e| e.as_str() == Some("utf-8"))) {
            self.encoding = Encoding::Utf8;
        }
        let capabilities = lsp::ServerCapabilities {
            position_encoding: Some(match self.encoding {
                Encoding::Utf8 => lsp::PositionEncodingKind::UTF8,
                Encoding::Utf16 => lsp::PositionEncodingKind::UTF16,
            }),
            text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
                lsp::TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(lsp::TextDocumentSyncKind::FULL),
                    save: Some(lsp::TextDocumentSyncSaveOptions::SaveOptions(
                        lsp::SaveOptions {
                            include_text: Some(true),
                        },
                    )),
                    ..lsp::TextDocumentSyncOptions::default()
                },
            )),
            code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
                lsp::CodeActionOptions {
                    code_action_kinds: Some(vec![
                        lsp::CodeActionKind::QUICKFIX,
                        lsp::CodeActionKind::from(FIX_ALL),
                    ]),
                    ..lsp::CodeActionOptions::default()
                },
            )),
            ..lsp::ServerCapabilities::default()
        };
        serde_json::to_value(lsp::InitializeResult {
            capabilities,
            server_info: Some(lsp::ServerInfo {
                name: "timeoutlint".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        })
        .unwrap_or_default()
    }

    fn notification(&mut self, n: &Notification) {
        fn params<T: serde::de::DeserializeOwned>(n: &Notification) -> Option<T> {
            match serde_json::from_value(n.params.clone()) {
                Ok(p) => Some(p),
                Err(e) => {
                    eprintln!("timeoutlint server: ignored `{}`: {e}", n.method);
                    None
                }
            }
        }
        match n.method.as_str() {
            "textDocument/didOpen" => {
                if let Some(p) = params::<lsp::DidOpenTextDocumentParams>(n) {
                    let path = file_path(&p.text_document.uri);
                    // A client may open every file with this server: only Rust is linted.
                    let rust = p.text_document.language_id == "rust"
                        || std::path::Path::new(p.text_document.uri.path().as_str())
                            .extension()
                            .is_some_and(|x| x.eq_ignore_ascii_case("rs"));
                    if !rust {
                        return;
                    }
                    self.documents.insert(
                        p.text_document.uri,
                        Document {
                            text: p.text_document.text,
                            version: p.text_document.version,
                            path,
                            findings: None,
                            published: false,
                        },
                    );
                }
            }
            "textDocument/didChange" => {
                if let Some(p) = params::<lsp::DidChangeTextDocumentParams>(n) {
                    let encoding = self.encoding;
                    if let Some(doc) = self.documents.get_mut(&p.text_document.uri) {
                        for change in p.content_changes {
                            apply_change(&mut doc.text, change, encoding);
                        }
                        doc.version = p.text_document.version;
                        doc.findings = None;
                        doc.published = false;
                    }
                }
            }
            "textDocument/didSave" => {
                if let Some(p) = params::<lsp::DidSaveTextDocumentParams>(n) {
                    if let Some(doc) = self.documents.get_mut(&p.text_document.uri) {
                        if let Some(text) = p.text {
                            doc.text = text;
                        }
                    }
                    // The file on disk changed: every open file of its crate may find otherwise.
                    self.relint_all();
                }
            }
            "textDocument/didClose" => {
                if let Some(p) = params::<lsp::DidCloseTextDocumentParams>(n) {
                    if self.documents.remove(&p.text_document.uri).is_some() {
                        self.publish(p.text_document.uri, Vec::new(), None);
                    }
                }
            }
            // A configuration or a file may have changed: lint again.
            "workspace/didChangeConfiguration" | "workspace/didChangeWatchedFiles" => {
                self.relint_all();
            }
            _ => {}
        }
    }

    fn relint_all(&mut self) {
        for doc in self.documents.values_mut() {
            doc.findings = None;
            doc.published = false;
        }
    }

    /// Lint and publish every document whose findings are not published.
    fn publish_pending(&mut self) {
        let mut pending: Vec<lsp::Uri> = self
            .documents
            .iter()
            .filter(|(_, d)| !d.published)
            .map(|(u, _)| u.clone())
            .collect();
        pending.sort();
        for uri in pending {
            self.ensure_linted(&uri);
            let Some(doc) = self.documents.get(&uri) else {
                continue;
            };
            let diagnostics = doc
                .findings
                .iter()
                .flatten()
                .map(|f| f.diagnostic.clone())
                .collect();
            let version = Some(doc.version);
            if let Some(doc) = self.documents.get_mut(&uri) {
                doc.published = true;
            }
            self.publish(uri, diagnostics, version);
        }
    }

    fn publish(&mut self, uri: lsp::Uri, diagnostics: Vec<lsp::Diagnostic>, version: Option<i32>) {
        let params = lsp::PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(&Notification::new("textDocument/publishDiagnostics".into(), params).into());
    }

    /// Lint `uri`'s document unless its findings are known.
    fn ensure_linted(&mut self, uri: &lsp::Uri) {
        let Some(doc) = self.documents.get(uri) else {
            return;
        };
        if doc.findings.is_some() {
            return;
        }
        let findings = match self.plan(doc) {
            Ok(Some(plan)) => {
                let run = plan.run(self.threads);
                // The linter must not panic; if it does, the editor keeps its server.
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run.lint())) {
                    Ok(report) => findings(&report, uri, &doc.text, self.encoding),
                    Err(_) => vec![problem(
                        &doc.text,
                        self.encoding,
                        None,
                        "timeoutlint failed on this file (a bug; please report it)".into(),
                    )],
                }
            }
            Ok(None) => Vec::new(),
            Err(e) => vec![problem(
                &doc.text,
                self.encoding,
                None,
                format!("timeoutlint cannot lint this file: {e:#}"),
            )],
        };
        if let Some(doc) = self.documents.get_mut(uri) {
            doc.findings = Some(findings);
        }
    }

    /// The plan for `doc`, as `--stdin-filename PATH --force-exclude -` makes it (`None`: the
    /// configuration excludes the file), with the other open files' buffers standing for them.
    fn plan(&self, doc: &Document) -> anyhow::Result<Option<Box<Plan>>> {
        let path = doc
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from("<untitled>"));
        let options = cli::Options {
            selection: crate::config::CliSelection::default(),
            config_file: None,
            isolated: false,
            force_exclude: true,
            prefilter: true,
            max_file_bytes: crate::parse::DEFAULT_MAX_FILE_BYTES,
            crate_index: true,
        };
        let planned = Planned::new(
            std::slice::from_ref(&path),
            Some((path.clone(), doc.text.clone())),
            doc.path.is_some(),
            &options,
        )?;
        let Planned::Run(mut plan) = planned else {
            return Ok(None);
        };
        if plan.stdin.is_none() {
            return Ok(None);
        }
        for other in self.documents.values() {
            if let Some(p) = &other.path {
                if *p != path {
                    plan.base.insert(p.clone(), other.text.clone());
                }
            }
        }
        Ok(Some(plan))
    }

    fn code_actions(&mut self, p: &lsp::CodeActionParams) -> serde_json::Value {
        let uri = &p.text_document.uri;
        self.ensure_linted(uri);
        let Some(doc) = self.documents.get(uri) else {
            return serde_json::Value::Array(Vec::new());
        };
        let wants = |kind: &str| {
            p.context.only.as_ref().map_or(kind == "quickfix", |only| {
                only.iter().any(|k| {
                    let k = k.as_str();
                    kind == k || kind.starts_with(&format!("{k}."))
                })
            })
        };
        let lines = Lines::new(&doc.text, self.encoding);
        let (from, to) = (lines.offset(p.range.start), lines.offset(p.range.end));
        let mut actions = Vec::new();
        if wants("quickfix") {
            for f in doc.findings.iter().flatten() {
                let Some(fix) = &f.fix else { continue };
                let r = f.diagnostic.range;
                let (start, end) = (lines.offset(r.start), lines.offset(r.end));
                // Touching counts: a cursor just after the finding asks for it too.
                if start > to || end < from || fix.edits.is_empty() {
                    continue;
                }
                let label = match fix.applicability {
                    Applicability::MachineApplicable => String::new(),
                    Applicability::MaybeIncorrect => " (unsafe fix: review the change)".into(),
                    Applicability::HasPlaceholders => " (fill in the placeholder)".into(),
                    Applicability::Unspecified => continue,
                };
                let edits = fix
                    .edits
                    .iter()
                    .map(|e| {
                        lsp::TextEdit::new(
                            lines.range(e.span.start, e.span.end),
                            e.replacement.clone(),
                        )
                    })
                    .collect();
                actions.push(lsp::CodeAction {
                    title: format!("{}{label}", fix.title),
                    kind: Some(lsp::CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![f.diagnostic.clone()]),
                    edit: Some(workspace_edit(uri, edits)),
                    is_preferred: Some(fix.applicability == Applicability::MachineApplicable),
                    ..lsp::CodeAction::default()
                });
            }
        }
        if wants(FIX_ALL) {
            if let Some(action) = self.fix_all(uri) {
                actions.push(action);
            }
        }
        serde_json::to_value(actions).unwrap_or_default()
    }

    /// Every safe fix of `uri`'s document, round after round as `--fix` applies them to
    /// stdin: one edit of the whole text, or `None` when nothing changes.
    fn fix_all(&self, uri: &lsp::Uri) -> Option<lsp::CodeAction> {
        let doc = self.documents.get(uri)?;
        let plan = self.plan(doc).ok()??;
        let path = plan.stdin.as_ref()?.0.clone();
        let run = plan.run(self.threads);
        let fixed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::fix::fix_with(&doc.text, crate::fix::Level::Safe, |cur| {
                let overlay = crate::driver::Overlay::from([(path.clone(), cur.to_string())]);
                let r = run.lint_with(&overlay);
                r.errors
                    .is_empty()
                    .then(|| r.files.into_iter().flat_map(|(_, d)| d).collect())
            })
        }))
        .ok()?;
        if fixed.text == doc.text || fixed.rolled_back {
            return None;
        }
        let lines = Lines::new(&doc.text, self.encoding);
        let edit = lsp::TextEdit::new(lines.range(0, doc.text.len()), fixed.text);
        Some(lsp::CodeAction {
            title: "Apply every safe timeoutlint fix".into(),
            kind: Some(lsp::CodeActionKind::from(FIX_ALL)),
            edit: Some(workspace_edit(uri, vec![edit])),
            ..lsp::CodeAction::default()
        })
    }
}

fn workspace_edit(uri: &lsp::Uri, edits: Vec<lsp::TextEdit>) -> lsp::WorkspaceEdit {
    lsp::WorkspaceEdit::new(HashMap::from([(uri.clone(), edits)]))
}

/// Apply one `didChange` change: a whole text, or a range of it replaced.
fn apply_change(
    text: &mut String,
    change: lsp::TextDocumentContentChangeEvent,
    encoding: Encoding,
) {
    match change.range {
        None => *text = change.text,
        Some(range) => {
            let lines = Lines::new(text, encoding);
            let start = lines.offset(range.start);
            let end = lines.offset(range.end).max(start);
            text.replace_range(start..end, &change.text);
        }
    }
}

/// The findings of `report` for the document, and its errors as diagnostics.
fn findings(report: &Report, uri: &lsp::Uri, text: &str, encoding: Encoding) -> Vec<Finding> {
    let lines = Lines::new(text, encoding);
    let mut out: Vec<Finding> = report
        .files
        .iter()
        .flat_map(|(_, ds)| ds)
        .map(|d| Finding {
            diagnostic: diagnostic(d, uri, &lines),
            fix: d.fix.clone(),
        })
        .collect();
    for e in &report.errors {
        let at = e.line.map(|l| lines.char_place(l, e.column.unwrap_or(1)));
        out.push(problem(
            text,
            encoding,
            at,
            format!("timeoutlint could not lint this file: {}", e.message),
        ));
    }
    out
}

/// An error diagnostic at `at` (one character) or at the start of the text.
fn problem(text: &str, encoding: Encoding, at: Option<usize>, message: String) -> Finding {
    let lines = Lines::new(text, encoding);
    let start = at.unwrap_or(0);
    let end = text[start.min(text.len())..]
        .chars()
        .next()
        .filter(|c| *c != '\n' && *c != '\r')
        .map_or(start, |c| start + c.len_utf8());
    Finding {
        diagnostic: lsp::Diagnostic {
            range: lines.range(start, end),
            severity: Some(lsp::DiagnosticSeverity::ERROR),
            source: Some(SOURCE.into()),
            message,
            ..lsp::Diagnostic::default()
        },
        fix: None,
    }
}

/// A finding as the protocol shows it: the rule's name as its code, linked to its doc.
fn diagnostic(d: &Diagnostic, uri: &lsp::Uri, lines: &Lines<'_>) -> lsp::Diagnostic {
    let mut message = d.message.clone();
    for note in &d.notes {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let related: Vec<lsp::DiagnosticRelatedInformation> = d
        .related
        .iter()
        .map(|r| lsp::DiagnosticRelatedInformation {
            location: lsp::Location::new(uri.clone(), lines.range(r.span.start, r.span.end)),
            message: r.message.clone(),
        })
        .collect();
    lsp::Diagnostic {
        range: lines.range(d.primary.start, d.primary.end),
        severity: Some(match d.severity {
            Severity::Error => lsp::DiagnosticSeverity::ERROR,
            Severity::Warning => lsp::DiagnosticSeverity::WARNING,
            Severity::Note => lsp::DiagnosticSeverity::INFORMATION,
        }),
        code: Some(lsp::NumberOrString::String(d.rule.name.into())),
        code_description: crate::emit::rule_url(d.rule)
            .parse()
            .ok()
            .map(|href| lsp::CodeDescription { href }),
        source: Some(SOURCE.into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        // An unused suppression is dead text: editors grey it out.
        tags: (d.rule.name == "unused-suppression").then(|| vec![lsp::DiagnosticTag::UNNECESSARY]),
        data: None,
    }
}

/// The file a `file:` URI names (percent-decoded), or `None` for any other URI.
#[must_use]
pub fn file_path(uri: &lsp::Uri) -> Option<PathBuf> {
    if !uri
        .scheme()
        .is_some_and(|s| s.as_str().eq_ignore_ascii_case("file"))
    {
        return None;
    }
    let host = uri.authority().map_or("", |a| a.host().as_str());
    if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
        return None;
    }
    let bytes = percent_decode(uri.path().as_str());
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
    }
    #[cfg(not(unix))]
    {
        let s = String::from_utf8(bytes).ok()?;
        // `file:///C:/x` is `C:/x`.
        let s = match s.as_bytes() {
            [b'/', d, b':', ..] if d.is_ascii_alphabetic() => s[1..].to_string(),
            _ => s,
        };
        Some(PathBuf::from(s))
    }
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_or_bytes() {
        let text = "a\u{1F600}b\r\nx\ry\n";
        let u16 = Lines::new(text, Encoding::Utf16);
        // `b` after an emoji: 1 + 2 UTF-16 units, 1 + 4 bytes.
        assert_eq!(u16.position(5), lsp::Position::new(0, 3));
        assert_eq!(
            Lines::new(text, Encoding::Utf8).position(5),
            lsp::Position::new(0, 5)
        );
        // `\r\n` and a lone `\r` both end a line.
        assert_eq!(u16.position(8), lsp::Position::new(1, 0));
        assert_eq!(u16.position(10), lsp::Position::new(2, 0));
        for off in [0, 1, 5, 6, 8, 9, 10, 11, 12] {
            assert_eq!(u16.offset(u16.position(off)), off, "{off}");
        }
        // Inside the emoji's pair: its start; past the line's end: the end.
        assert_eq!(u16.offset(lsp::Position::new(0, 2)), 1);
        assert_eq!(u16.offset(lsp::Position::new(0, 99)), 6);
        assert_eq!(u16.offset(lsp::Position::new(99, 0)), text.len());
        // Inside a character: its start.
        assert_eq!(u16.position(2), lsp::Position::new(0, 1));
    }

    #[test]
    fn file_uris_are_decoded() {
        let uri: lsp::Uri = "file:///tmp/a%20b/c%C3%A9.rs".parse().unwrap();
        assert_eq!(file_path(&uri), Some(PathBuf::from("/tmp/a b/cé.rs")));
        let untitled: lsp::Uri = "untitled:Untitled-1".parse().unwrap();
        assert_eq!(file_path(&untitled), None);
        assert_eq!(percent_decode("%zz%4"), b"%zz%4");
    }

    #[test]
    fn broken_frames_are_skipped_and_the_next_one_read() {
        let good = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let input = format!(
            "Content-Length: 5\r\n\r\n{{bad}}Content-Length: x\r\n\r\nno header\r\n\r\nContent-Length: {}\r\n\r\n{good}Content-Length: 999999999999\r\n\r\n{{}}",
            good.len()
        );
        let mut r = std::io::Cursor::new(input.into_bytes());
        let mut kinds = Vec::new();
        loop {
            match read_frame(&mut r) {
                Frame::Message(Message::Notification(n)) => kinds.push(n.method),
                Frame::Message(m) => kinds.push(format!("{m:?}")),
                Frame::Bad(why, _) => kinds.push(why),
                Frame::End => break,
            }
        }
        assert_eq!(kinds.len(), 4, "{kinds:?}");
        assert!(kinds[0].starts_with("not a JSON-RPC message"), "{kinds:?}");
        assert_eq!(kinds[1], "bad Content-Length `x`");
        assert_eq!(kinds[2], "malformed header line `no header`");
        // Read after the broken ones; the huge frame at the end is cut short: the end.
        assert_eq!(kinds[3], "initialized");
    }
}
