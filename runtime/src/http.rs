//! reqwest integration (feature `reqwest`): a retrying send that applies the runtime's rules.
//!
//! Per attempt it sets the request timeout to the attempt's timeout (so the time left, not a
//! fixed number, bounds each send), puts the operation's idempotency key in a header, turns
//! `Retry-After` (of a 429 or a 503) into a wait floor, and retries POST/PATCH only on outcomes that were not
//! applied unless the request carries an idempotency key. Bodies are rebuilt per attempt by a
//! factory, or cloned when the request owns a cloneable body; a streaming body is sent once and
//! a retry it would need ends in `RetryError::NotReplayable`.
//!
//! ```no_run
//! use std::time::Duration;
//! use timeoutlint_retry::{http::RequestBuilderExt, RetryPolicy};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let client = reqwest::Client::new();
//! let policy = RetryPolicy::builder().total(Duration::from_secs(10)).build()?;
//!
//! // A cloneable request: the runtime replays it.
//! let response = client.get("http://127.0.0.1:8080/items").retrying(&policy).send().await?;
//!
//! // A body rebuilt per attempt, with an idempotency key so the POST may be retried.
//! let payload = bytes::Bytes::from_static(b"{\"amount\": 5}");
//! let charged = policy
//!     .request(|_attempt| client.post("http://127.0.0.1:8080/charges").body(payload.clone()))
//!     .idempotency_key()
//!     .send()
//!     .await?;
//! # let _ = (response, charged); Ok(()) }
//! ```

use std::fmt;
use std::future::{Future, Pending};

use reqwest::header::{HeaderName, HeaderValue, RETRY_AFTER};
use reqwest::{Client, Method, Request, RequestBuilder, Response, StatusCode};

use crate::attempt::{Attempt, IdempotencyKey};
use crate::classify::{Classify, Outcome};
use crate::deadline::Deadline;
use crate::error::RetryError;
use crate::policy::RetryPolicy;
use crate::run::ReplayGuard;

/// The default header that carries the idempotency key.
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";

/// Why one HTTP attempt failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum HttpError {
    /// The request failed before a response arrived (connect, timeout, reset, builder).
    Transport(reqwest::Error),
    /// The server answered with a status the runtime treats as a failure (429, 5xx, 408);
    /// the response is kept so the caller can read it.
    Status(Response),
    /// A request could not be rebuilt for another attempt (reported inside
    /// `RetryError::NotReplayable`; the runtime normally stops before this is produced).
    NotReplayable,
}

impl HttpError {
    /// The response status, for [`HttpError::Status`].
    #[must_use]
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            HttpError::Status(response) => Some(response.status()),
            HttpError::Transport(error) => error.status(),
            HttpError::NotReplayable => None,
        }
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpError::Transport(error) => write!(f, "{error}"),
            HttpError::Status(response) => write!(f, "HTTP status {}", response.status()),
            HttpError::NotReplayable => f.write_str("the request body cannot be replayed"),
        }
    }
}

impl std::error::Error for HttpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HttpError::Transport(error) => Some(error),
            _ => None,
        }
    }
}

impl Classify for HttpError {
    fn outcome(&self) -> Outcome {
        match self {
            HttpError::Transport(error) => error.outcome(),
            HttpError::Status(response) => {
                Outcome::for_http_status(response.status().as_u16(), retry_after(response))
                    .unwrap_or(Outcome::Permanent)
            }
            HttpError::NotReplayable => Outcome::Permanent,
        }
    }

    fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            HttpError::Status(response) => retry_after(response),
            _ => None,
        }
    }
}

impl Classify for reqwest::Error {
    fn outcome(&self) -> Outcome {
        if self.is_builder() || self.is_redirect() {
            Outcome::Permanent
        } else if self.is_connect() {
            // Includes connect timeouts and DNS failures: nothing was sent.
            Outcome::NotApplied
        } else {
            // A timeout or a reset after the connection was up: the request may have been
            // written and acted on.
            Outcome::Ambiguous
        }
    }
}

/// The `Retry-After` of a response, parsed.
#[must_use]
pub fn retry_after(response: &Response) -> Option<std::time::Duration> {
    let value = response.headers().get(RETRY_AFTER)?.to_str().ok()?;
    crate::retry_after::parse(value)
}

/// Whether RFC 9110 calls the method idempotent (safe to replay without a key).
#[must_use]
pub fn is_idempotent_method(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE | Method::PUT | Method::DELETE
    )
}

/// A retrying HTTP send; made by [`RetryPolicy::request`] or [`RequestBuilderExt::retrying`].
#[must_use = "nothing is sent until `.send().await`"]
pub struct HttpRetry<'p, F, C = Pending<()>> {
    policy: &'p RetryPolicy,
    source: Source<F>,
    key_header: Option<HeaderName>,
    key: Option<IdempotencyKey>,
    deadline: Option<Deadline>,
    cancel: C,
}

// Reason: one value per send, moved once; boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
enum Source<F> {
    Factory(F),
    Built(Client, reqwest::Result<Request>),
}

impl RetryPolicy {
    /// A retrying send whose request (and body) is rebuilt by `factory` for every attempt.
    pub fn request<F>(&self, factory: F) -> HttpRetry<'_, F, Pending<()>>
    where
        F: FnMut(&Attempt) -> RequestBuilder,
    {
        HttpRetry {
            policy: self,
            source: Source::Factory(factory),
            key_header: None,
            key: None,
            deadline: None,
            cancel: std::future::pending(),
        }
    }
}

/// The factory type of a request made by [`RequestBuilderExt::retrying`] (never called).
pub type NoFactory = fn(&Attempt) -> RequestBuilder;

/// Adds [`RequestBuilderExt::retrying`] to `reqwest::RequestBuilder`.
pub trait RequestBuilderExt {
    /// A retrying send of this request. Its body is cloned for each attempt when possible;
    /// a streaming body is sent once (a needed retry returns `NotReplayable`).
    fn retrying(self, policy: &RetryPolicy) -> HttpRetry<'_, NoFactory, Pending<()>>;
}

impl RequestBuilderExt for RequestBuilder {
    fn retrying(self, policy: &RetryPolicy) -> HttpRetry<'_, NoFactory, Pending<()>> {
        let (client, request) = self.build_split();
        HttpRetry {
            policy,
            source: Source::Built(client, request),
            key_header: None,
            key: None,
            deadline: None,
            cancel: std::future::pending(),
        }
    }
}

impl<'p, F, C> HttpRetry<'p, F, C> {
    /// Sends the operation's idempotency key in the `Idempotency-Key` header of every attempt,
    /// which makes POST and PATCH retryable.
    pub fn idempotency_key(self) -> Self {
        self.idempotency_key_header(HeaderName::from_static(IDEMPOTENCY_KEY_HEADER))
    }

    /// Like [`HttpRetry::idempotency_key`] with another header name.
    pub fn idempotency_key_header(mut self, header: HeaderName) -> Self {
        self.key_header = Some(header);
        self
    }

    /// Uses `key` instead of a generated key (implies [`HttpRetry::idempotency_key`] unless a
    /// header was chosen).
    pub fn with_key(mut self, key: IdempotencyKey) -> Self {
        self.key = Some(key);
        if self.key_header.is_none() {
            self.key_header = Some(HeaderName::from_static(IDEMPOTENCY_KEY_HEADER));
        }
        self
    }

    /// A caller's deadline; the earlier of this and the policy's `total` applies.
    pub fn deadline(mut self, deadline: Deadline) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Gives up with `Canceled` as soon as `cancel` completes.
    pub fn cancel_on<C2: Future<Output = ()>>(self, cancel: C2) -> HttpRetry<'p, F, C2> {
        HttpRetry {
            policy: self.policy,
            source: self.source,
            key_header: self.key_header,
            key: self.key,
            deadline: self.deadline,
            cancel,
        }
    }

    /// Sends until a final response (2xx, 3xx, or a 4xx that retrying cannot fix, returned as
    /// `Ok` like `reqwest` does) or until the runtime gives up.
    ///
    /// # Errors
    ///
    /// The [`RetryError`]; a failing status is in `last_error` as [`HttpError::Status`].
    pub async fn send(self) -> Result<Response, RetryError<HttpError>>
    where
        F: FnMut(&Attempt) -> RequestBuilder,
        C: Future<Output = ()>,
    {
        let HttpRetry {
            policy,
            source,
            key_header,
            key,
            deadline,
            cancel,
        } = self;
        // Fix the deadline and key now, so the first request can be built (and its method,
        // host and headers inspected) before the engine starts with the same values.
        let own = policy.total.map_or(Deadline::never(), Deadline::after);
        let deadline = deadline.map_or(own, |d| d.earliest(own));
        let key = key.unwrap_or_else(IdempotencyKey::generate);
        let preview = Attempt {
            number: 1,
            max_attempts: policy.max_attempts,
            deadline,
            timeout: policy.attempt_timeout.min(deadline.remaining()),
            idempotency_key: key.clone(),
        };
        let (mut factory, client, first) = match source {
            Source::Factory(mut factory) => {
                let (client, request) = factory(&preview).build_split();
                (Some(factory), client, request)
            }
            Source::Built(client, request) => (None, client, request),
        };
        let guard = ReplayGuard::new();
        let (idempotent, partition) = match &first {
            Ok(request) => {
                // A key the caller set on the request counts as much as one the runtime sets.
                let keyed =
                    key_header.is_some() || request.headers().contains_key(IDEMPOTENCY_KEY_HEADER);
                let url = request.url();
                let partition = format!(
                    "{}:{}",
                    url.host_str().unwrap_or(""),
                    url.port_or_known_default().unwrap_or(0)
                );
                (is_idempotent_method(request.method()) || keyed, partition)
            }
            Err(_) => (true, String::new()),
        };
        let mut first = Some(first);
        // For a request built once (no factory) later attempts replay clones of it.
        let mut template: Option<Request> = None;
        let op = |attempt: Attempt| {
            let request = if let Some(first) = first.take() {
                first.inspect(|request| {
                    if factory.is_none() {
                        match request.try_clone() {
                            Some(copy) => template = Some(copy),
                            None => guard.forbid(),
                        }
                    }
                })
            } else if let Some(factory) = factory.as_mut() {
                factory(&attempt).build_split().1
            } else if let Some(request) = template.as_ref().and_then(Request::try_clone) {
                Ok(request)
            } else {
                let result: Result<Response, HttpError> = Err(HttpError::NotReplayable);
                return Box::pin(async move { result })
                    as std::pin::Pin<Box<dyn Future<Output = _> + Send>>;
            };
            let prepared = request.map(|mut request| {
                prepare(&mut request, &attempt, key_header.as_ref());
                request
            });
            let client = client.clone();
            Box::pin(async move {
                let response = client
                    .execute(prepared.map_err(HttpError::Transport)?)
                    .await
                    .map_err(HttpError::Transport)?;
                match Outcome::for_http_status(response.status().as_u16(), None) {
                    // Final responses, including 4xx that retrying cannot fix, go back as Ok.
                    None | Some(Outcome::Permanent) => Ok(response),
                    Some(_) => Err(HttpError::Status(response)),
                }
            })
        };
        policy
            .call()
            .cancel_on(cancel)
            .deadline(deadline)
            .idempotency_key(key)
            .idempotent(idempotent)
            .partition(partition)
            .replay_guard(guard.clone())
            .run(op)
            .await
    }
}

/// Per-attempt rewrite: the attempt's timeout (never longer than one the caller set) and the
/// idempotency key header (never overwriting one the caller set).
fn prepare(request: &mut Request, attempt: &Attempt, key_header: Option<&HeaderName>) {
    let timeout = request
        .timeout()
        .map_or(attempt.timeout, |own| (*own).min(attempt.timeout));
    *request.timeout_mut() = Some(timeout);
    if let Some(header) = key_header {
        if !request.headers().contains_key(header) {
            if let Ok(value) = HeaderValue::from_str(attempt.idempotency_key.as_str()) {
                request.headers_mut().insert(header.clone(), value);
            }
        }
    }
}
