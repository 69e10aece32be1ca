//! The crate's own retry wrappers across files: a helper in one module that retries the closure
//! it is handed makes each call of it, in any module, a retry site of its own (issue 19: flow
//! across functions), and the rules about what is repeated judge those calls while the rules
//! about how it is repeated judge the helper's loop once.

use crate::support::{default_findings as findings, write_file as write};

const RETRY_RS: &str = r"use std::time::Duration;

pub(crate) async fn retry<F, Fut>(attempts: u32, mut f: F) -> Result<reqwest::Response, reqwest::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<reqwest::Response, reqwest::Error>>,
{
    let mut attempt = 0;
    loop {
        let result = f().await;
        if !transient(&result) || attempt + 1 >= attempts {
            return result;
        }
        attempt += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
";

const API_RS: &str = r#"use crate::retry;

pub struct Api {
    http: reqwest::Client,
}

impl Api {
    pub async fn create(&self, body: String) -> Result<reqwest::Response, reqwest::Error> {
        retry::retry(5, || {
            self.http
                .post("https://api.example.com/items")
                .body(body.clone())
                .send()
        })
        .await
    }

    pub async fn read(&self, id: u64) -> Result<reqwest::Response, reqwest::Error> {
        retry::retry(5, || self.http.get(format!("https://api.example.com/items/{id}")).send()).await
    }

    // Another crate's `retry` of the same name is not the helper.
    pub async fn other(&self) -> Result<reqwest::Response, reqwest::Error> {
        backoff_like::retry(5, || self.http.post("https://api.example.com/x").send()).await
    }
}
"#;

/// A temporary package `w` with its manifest; the test writes its `src/`.
fn package() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "Cargo.toml",
        "[package]\nname = \"w\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    tmp
}

#[test]
fn calls_of_a_wrapper_in_another_module_are_retry_sites() {
    let tmp = package();
    let dir = tmp.path();
    write(dir, "src/lib.rs", "mod api;\nmod retry;\n");
    write(dir, "src/retry.rs", RETRY_RS);
    write(dir, "src/api.rs", API_RS);
    assert_eq!(
        findings(dir),
        vec![(
            "api.rs".to_string(),
            11,
            "non-idempotent-retry-without-key".to_string()
        )]
    );
    // Without the wrapper's file in the crate, nothing links the calls to a loop.
    std::fs::remove_file(dir.join("src/retry.rs")).unwrap();
    assert_eq!(findings(dir), vec![]);
}

#[test]
fn an_unbounded_wrapper_is_reported_once_at_its_loop_and_methods_link_by_name() {
    let tmp = package();
    let dir = tmp.path();
    write(dir, "src/lib.rs", "mod client;\nmod jobs;\n");
    write(
        dir,
        "src/client.rs",
        r#"pub struct Client { http: reqwest::Client }

impl Client {
    pub async fn with_backoff<F, Fut, T>(&self, op: F) -> T
    where
        F: Fn(reqwest::Client) -> Fut,
        Fut: std::future::Future<Output = Result<T, reqwest::Error>>,
    {
        loop {
            match op(self.http.clone()).await {
                Ok(v) => return v,
                Err(e) => {
                    tracing::warn!("retrying: {e}");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
            }
        }
    }
}
"#,
    );
    write(
        dir,
        "src/jobs.rs",
        r#"pub async fn enqueue(client: &crate::client::Client, job: String) {
    client
        .with_backoff(|http| {
            let job = job.clone();
            async move { http.post("https://jobs.example.com/enqueue").body(job).send().await }
        })
        .await;
}
"#,
    );
    assert_eq!(
        findings(dir),
        vec![
            ("client.rs".to_string(), 9, "unbounded-retry".to_string()),
            (
                "jobs.rs".to_string(),
                5,
                "non-idempotent-retry-without-key".to_string()
            ),
        ]
    );
}

const SEND_RS: &str = r#"use reqwest::{RequestBuilder, Response};
use std::time::Duration;

/// Re-sends a copy of the request while the server says it is busy.
pub(crate) async fn send_retrying(req: RequestBuilder, tries: u32) -> reqwest::Result<Response> {
    for _ in 1..tries {
        let copy = req.try_clone().expect("streaming bodies are not used");
        match copy.send().await {
            Ok(r) if r.status().is_server_error() => tokio::time::sleep(Duration::from_secs(1)).await,
            other => return other,
        }
    }
    req.send().await
}

/// Only reads the answer: hands the request on, and the resending happens below.
pub(crate) async fn send_text(req: RequestBuilder) -> reqwest::Result<String> {
    let r = send_retrying(req, 4).await?;
    r.text().await
}

/// Sends once; its loop is over pages of the answer, not attempts.
pub(crate) async fn send_once(req: RequestBuilder, pages: &[u32]) -> reqwest::Result<Response> {
    for _ in pages {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    req.send().await
}
"#;

const ORDERS_RS: &str = r#"use crate::send::{send_once, send_text};

pub struct Orders {
    http: reqwest::Client,
}

impl Orders {
    pub async fn place(&self, order: String) -> reqwest::Result<String> {
        let req = self.http.post("https://shop.example/orders").body(order);
        send_text(req).await
    }

    pub async fn place_keyed(&self, order: String, key: &str) -> reqwest::Result<String> {
        let req = self
            .http
            .post("https://shop.example/orders")
            .header("Idempotency-Key", key)
            .body(order);
        send_text(req).await
    }

    pub async fn list(&self) -> reqwest::Result<String> {
        let req = self.http.get("https://shop.example/orders");
        send_text(req).await
    }

    pub async fn place_once(&self, order: String) -> reqwest::Result<String> {
        let req = self.http.post("https://shop.example/orders").body(order);
        send_once(req, &[1, 2]).await?.text().await
    }
}
"#;

/// A POST built in one module and handed to a helper of another that re-sends whatever request it
/// is given (through a second helper that only reads the answer) is retried without a key: the
/// finding is at the `.post(`. Near misses in the same crate: the keyed POST, the GET, and the
/// POST handed to a helper that sends it once.
#[test]
fn a_post_handed_to_a_resending_helper_of_another_module_is_retried() {
    let tmp = package();
    let dir = tmp.path();
    write(dir, "src/lib.rs", "mod orders;\nmod send;\n");
    write(dir, "src/send.rs", SEND_RS);
    write(dir, "src/orders.rs", ORDERS_RS);
    assert_eq!(
        findings(dir),
        vec![(
            "orders.rs".to_string(),
            9,
            "non-idempotent-retry-without-key".to_string()
        )]
    );
}

const STATUS_RS: &str = r"impl Api {
    async fn with_retry<F: Fn() -> Fut, Fut>(&self, op: F) -> Result<R, E> {
        for n in 0..3 {
            match op().await {
                Ok(r) => return Ok(r),
                Err(e) => tokio::time::sleep(D).await,
            }
        }
        op().await
    }
    async fn get(&self) -> Result<R, E> {
        self.with_retry(|| async {
            let r = self.c.get(U).send().await?;
            self.check(r).await
        })
        .await
    }
    async fn check(&self, r: R) -> Result<R, E> {
        if r.status() == StatusCode::NOT_FOUND { return Err(E::NotFound); }
        if r.status().is_client_error() {
            return Err(E::Client(r.status()));
        }
        Ok(r)
    }
    async fn with_policy<F: Fn() -> Fut, Fut>(&self, op: F) -> Result<R, E> {
        for n in 0..3 {
            match op().await {
                Ok(r) => return Ok(r),
                Err(e) if is_transient(&e) => tokio::time::sleep(D).await,
                Err(e) => return Err(e),
            }
        }
        op().await
    }
    async fn put(&self) -> Result<R, E> {
        self.with_policy(|| async { self.check(self.c.put(U).send().await?).await }).await
    }
}";

/// A helper that turns 4xx into an error (`if status.is_client_error() { return Err(..) }`),
/// called by the operation handed to a wrapper that retries every error, makes that call retry
/// 4xx: the finding is at the helper's class-wide test (line 20, not the 404 test above it).
/// Near miss: `with_policy`, which asks a classifier before going round, retries only what that
/// says, so the same helper under it is no finding.
#[test]
fn a_helper_turning_4xx_into_errors_under_a_wrapper_that_retries_every_error() {
    let rule = timeoutlint::rules::by_name("retry-non-transient-status").unwrap();
    let (src, diags) = crate::support::lint_text("api.rs", STATUS_RS, &[rule]);
    let lines: Vec<usize> = diags
        .iter()
        .map(|d| src.position(d.primary.start).line)
        .collect();
    assert_eq!(lines, vec![20]);
}

const REQUESTER_RS: &str = r#"use reqwest::RequestBuilder;

pub struct Requester;

impl Requester {
    pub async fn execute(&self, tries: u8, request: RequestBuilder) -> Result<reqwest::Response, reqwest::Error> {
        let mut n: u8 = 0;
        loop {
            match request.try_clone().expect("a byte body").send().await {
                Ok(r) => break Ok(r),
                Err(e) if n >= tries => break Err(e),
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_secs(1 << n)).await;
                    n += 1;
                }
            }
        }
    }
}
"#;

const API_BASE_RS: &str = r#"use reqwest::{Method, RequestBuilder};
use crate::requester::Requester;

pub struct Base { client: reqwest::Client, requester: Requester, log: Log }

impl Base {
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, path)
    }
    pub async fn execute_val(&self, request: RequestBuilder) -> Result<String, reqwest::Error> {
        self.execute_raw(request).await?.text().await
    }
    // Sent once: `Log::execute` is not the requester's.
    pub async fn execute_once(&self, request: RequestBuilder) -> Result<(), reqwest::Error> {
        self.log.execute(request).await
    }
    async fn execute_raw(&self, request: RequestBuilder) -> Result<reqwest::Response, reqwest::Error> {
        self.requester_for("eu").execute(3, request).await
    }
    fn requester_for(&self, region: &str) -> &Requester {
        &self.requester
    }
}

pub struct Log;

impl Log {
    pub async fn execute(&self, request: RequestBuilder) -> Result<(), reqwest::Error> {
        request.send().await.map(drop)
    }
}
"#;

const ENDPOINTS_RS: &str = r#"use reqwest::Method;
use crate::base::Base;

pub struct Decks<'a> { pub base: &'a Base }

impl<'a> Decks<'a> {
    pub async fn create(&self, body: Vec<u8>) -> Result<String, reqwest::Error> {
        let request = self.base.request(Method::POST, "/decks").body(body);
        self.base.execute_val(request).await
    }
    pub async fn list(&self) -> Result<String, reqwest::Error> {
        let request = self.base.request(Method::GET, "/decks");
        self.base.execute_val(request).await
    }
    pub async fn audit(&self, body: Vec<u8>) -> Result<(), reqwest::Error> {
        let request = self.base.request(Method::POST, "/audit").body(body);
        self.base.execute_once(request).await
    }
}
"#;

/// riven's shape: the endpoint builds a POST from a method it hands to the crate's request
/// factory, and hands the request through two helpers of another file to a requester of a third
/// that re-sends it. The helper that reaches the requester says nothing of retrying (no word
/// of the rules' vocabulary), and calls a method named like many (`execute`): the receiver's
/// declared type (`&Requester`, the return type of `requester_for`) names the one that
/// retries. Near misses: the GET through the same chain, and the POST handed to `Log::execute`,
/// which sends it once.
#[test]
fn a_post_handed_through_helpers_of_other_files_to_a_requester_that_resends_it() {
    let tmp = package();
    let dir = tmp.path();
    write(
        dir,
        "src/lib.rs",
        "mod base;\nmod endpoints;\nmod requester;\n",
    );
    write(dir, "src/requester.rs", REQUESTER_RS);
    write(dir, "src/base.rs", API_BASE_RS);
    write(dir, "src/endpoints.rs", ENDPOINTS_RS);
    assert_eq!(
        findings(dir),
        vec![(
            "endpoints.rs".to_string(),
            8,
            "non-idempotent-retry-without-key".to_string()
        )]
    );
}
