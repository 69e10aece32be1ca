//! `timeoutlint server` driven as an editor drives it: the real binary over stdio, with the
//! protocol's `Content-Length` framing, through open, change, save, a code action and close,
//! then shutdown and exit. Waits are generous (a loaded machine): 60 s per message.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);

/// A language client talking to one server process.
struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Value>,
    /// Messages received while waiting for another, in order.
    backlog: Vec<Value>,
    next_id: i64,
}

// The call sites pass `json!` literals; by value reads best there.
#[allow(clippy::needless_pass_by_value)]
impl Client {
    fn start(dir: &Path) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_timeoutlint"))
            .arg("server")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || loop {
            let mut length = None;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("Content-Length: ") {
                    length = v.parse::<usize>().ok();
                }
            }
            let mut body = vec![0; length.expect("a Content-Length header")];
            if stdout.read_exact(&mut body).is_err() {
                return;
            }
            let value: Value = serde_json::from_slice(&body).expect("the server sends JSON");
            if tx.send(value).is_err() {
                return;
            }
        });
        Client {
            child,
            stdin,
            messages,
            backlog: Vec::new(),
            next_id: 0,
        }
    }

    fn send_raw(&mut self, body: &str) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        let m = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_raw(&m.to_string());
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let m = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(&m.to_string());
        self.wait_for(&format!("the answer to {method}"), |m| m["id"] == id)
    }

    /// The first message `pred` accepts, within [`WAIT`]; the others wait in the backlog.
    fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(i);
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(m) if pred(&m) => return m,
                Ok(m) => self.backlog.push(m),
                Err(e) => panic!(
                    "waiting for {what}: {e} (received meanwhile: {:?})",
                    self.backlog
                ),
            }
        }
    }

    /// The diagnostics published for `uri` at `version`.
    fn diagnostics(&mut self, uri: &str, version: Value) -> Vec<Value> {
        let m = self.wait_for(&format!("diagnostics of {uri} at {version}"), |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"].get("version").cloned().unwrap_or(Value::Null) == version
        });
        m["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn initialize(&mut self, encodings: Value) -> Value {
        let r = self.request(
            "initialize",
            json!({"processId": null, "rootUri": null,
                   "capabilities": {"general": {"positionEncodings": encodings}}}),
        );
        self.notify("initialized", json!({}));
        r
    }

    /// shutdown, exit, and the exit code.
    fn stop(mut self) -> Option<i32> {
        let r = self.request("shutdown", Value::Null);
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        drop(self.stdin);
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A crate whose tokio has `time`, so the sleep fix is `MachineApplicable`; the file on disk
/// holds nothing, so the findings can only come from the buffer.
fn project() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ntokio = { version = \"1\", features = [\"time\", \"rt\"] }\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "// nothing yet\n").unwrap();
    let path = dir.path().join("src/lib.rs").canonicalize().unwrap();
    let uri = format!("file://{}", path.display());
    (dir, uri)
}

/// Two astral characters before the finding on its line: UTF-16 columns, byte columns and
/// character columns all differ there.
const BUFFER: &str = "async fn fetch_all() {\n    let s = \"é😀😀\"; std::thread::sleep(std::time::Duration::from_millis(5));\n    tokio::task::yield_now().await;\n}\n";
const FIXED: &str = "async fn fetch_all() {\n    let s = \"é😀😀\"; tokio::time::sleep(std::time::Duration::from_millis(5)).await;\n    tokio::task::yield_now().await;\n}\n";

/// `text` with LSP `edits` (UTF-16 positions) applied, as an editor applies them.
fn apply(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| -> usize {
        let (line, ch) = (
            p["line"].as_u64().unwrap(),
            p["character"].as_u64().unwrap(),
        );
        let start: usize = text
            .split_inclusive('\n')
            .take(line as usize)
            .map(str::len)
            .sum();
        let mut units = 0;
        for (i, c) in text[start..].char_indices() {
            if units >= ch {
                return start + i;
            }
            units += c.len_utf16() as u64;
        }
        text.len()
    };
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (s, e, with) in spans {
        out.replace_range(s..e, with);
    }
    out
}

#[test]
fn server_publishes_findings_and_fixes_them_through_a_code_action() {
    let (dir, uri) = project();
    let mut client = Client::start(dir.path());

    // Before initialize, a request is refused and the server stays up.
    let early = client.request("textDocument/codeAction", json!({}));
    assert_eq!(early["error"]["code"], -32002, "{early}");
    let init = client.initialize(json!(["utf-16"]));
    assert_eq!(init["result"]["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(
        init["result"]["capabilities"]["textDocumentSync"]["change"],
        1
    );

    // Broken input is answered and passed over: malformed JSON, an unknown method.
    client.send_raw("{not json");
    let parse_error = client.wait_for("the parse error", |m| m["error"]["code"] == -32700);
    assert!(parse_error["id"].is_null(), "{parse_error}");
    let unknown = client.request("timeoutlint/bogus", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");

    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": BUFFER}}),
    );
    let found = client.diagnostics(&uri, json!(1));
    assert_eq!(found.len(), 1, "{found:?}");
    let d = &found[0];
    assert_eq!(d["code"], "blocking-sleep-in-async");
    assert_eq!(d["source"], "timeoutlint");
    assert_eq!(d["severity"], 2);
    assert!(d["codeDescription"]["href"]
        .as_str()
        .unwrap()
        .ends_with("/blocking-sleep-in-async.md"));
    // `    let s = "é😀😀"; ` is 21 UTF-16 units (19 characters, 26 bytes); the call is 55.
    assert_eq!(
        d["range"],
        json!({"start": {"line": 1, "character": 21}, "end": {"line": 1, "character": 76}})
    );
    assert_eq!(d["relatedInformation"][0]["location"]["uri"], uri);

    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": d["range"],
               "context": {"diagnostics": [d]}}),
    );
    let actions = actions["result"].as_array().unwrap().clone();
    let quick: Vec<&Value> = actions.iter().filter(|a| a["kind"] == "quickfix").collect();
    assert_eq!(quick.len(), 1, "{actions:?}");
    assert_eq!(quick[0]["isPreferred"], true, "{:?}", quick[0]);
    let edits = quick[0]["edit"]["changes"][&uri].as_array().unwrap();
    assert_eq!(apply(BUFFER, edits), FIXED);
    // Asked for source actions, it offers every safe fix at once, to the same text.
    let all = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
    );
    let all = &all["result"][0];
    assert_eq!(all["kind"], "source.fixAll.timeoutlint", "{all}");
    assert_eq!(
        apply(BUFFER, all["edit"]["changes"][&uri].as_array().unwrap()),
        FIXED
    );

    // The fix applied in the buffer: the finding is gone.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": FIXED}]}),
    );
    assert_eq!(client.diagnostics(&uri, json!(2)), Vec::<Value>::new());

    // A text that does not parse says where and why, and the server goes on.
    let broken = "async fn f() {\n    std::thread::sleep(\n";
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": broken}]}),
    );
    let errors = client.diagnostics(&uri, json!(3));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["severity"], 1);
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("could not parse"),
        "{errors:?}"
    );

    // Saved: linted again (from the text sent with the save).
    std::fs::write(dir.path().join("src/lib.rs"), BUFFER).unwrap();
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"text": BUFFER}]}),
    );
    assert_eq!(client.diagnostics(&uri, json!(4)).len(), 1);
    client.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}, "text": BUFFER}),
    );
    assert_eq!(client.diagnostics(&uri, json!(4)).len(), 1);

    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(client.diagnostics(&uri, Value::Null), Vec::<Value>::new());

    assert_eq!(client.stop(), Some(0));
}

#[test]
fn server_counts_bytes_when_the_client_offers_utf8() {
    let (dir, uri) = project();
    let mut client = Client::start(dir.path());
    let init = client.initialize(json!(["utf-16", "utf-8"]));
    assert_eq!(init["result"]["capabilities"]["positionEncoding"], "utf-8");
    // Not Rust: never linted (it would not parse). Its diagnostics would come before the Rust
    // file's, which is opened after it.
    let manifest = uri.replace("src/lib.rs", "Cargo.toml");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": manifest, "languageId": "toml", "version": 1, "text": "[package]\n"}}),
    );
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 7, "text": BUFFER}}),
    );
    // Asked before the findings were published (they are linted for the answer): still
    // published after.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 1, "character": 30}, "end": {"line": 1, "character": 30}},
               "context": {"diagnostics": []}}),
    );
    assert_eq!(
        actions["result"].as_array().map(Vec::len),
        Some(1),
        "{actions}"
    );
    let found = client.diagnostics(&uri, json!(7));
    assert!(
        !client
            .backlog
            .iter()
            .any(|m| m["params"]["uri"] == manifest),
        "{:?}",
        client.backlog
    );
    assert_eq!(
        found[0]["range"],
        json!({"start": {"line": 1, "character": 26}, "end": {"line": 1, "character": 81}})
    );
    assert_eq!(client.stop(), Some(0));
}

/// The server is started in one directory and lints buffers of two crates below it: each
/// buffer is linted with the configuration nearest its own path (as `--stdin-filename` would),
/// not the one of the directory the server started in.
#[test]
fn server_reads_the_configuration_nearest_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut uris = Vec::new();
    for (name, config) in [
        ("loud", None),
        ("quiet", Some("ignore = [\"blocking-sleep-in-async\"]\n")),
    ] {
        let root = dir.path().join(name);
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(
            root.join("Cargo.toml"),
            format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        )
        .unwrap();
        if let Some(c) = config {
            std::fs::write(root.join("timeoutlint.toml"), c).unwrap();
        }
        std::fs::write(root.join("src/lib.rs"), "// nothing yet\n").unwrap();
        let path = root.join("src/lib.rs").canonicalize().unwrap();
        uris.push(format!("file://{}", path.display()));
    }
    let mut client = Client::start(dir.path());
    client.initialize(json!(["utf-16"]));
    for uri in &uris {
        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": BUFFER}}),
        );
    }
    let loud = client.diagnostics(&uris[0], json!(1));
    let quiet = client.diagnostics(&uris[1], json!(1));
    assert_eq!(loud.len(), 1, "{loud:?}");
    assert_eq!(loud[0]["code"], "blocking-sleep-in-async", "{loud:?}");
    assert!(quiet.is_empty(), "{quiet:?}");
    assert_eq!(client.stop(), Some(0));
}
