//! reqwest integration (feature `reqwest`): a retrying send that applies the runtime's rules.
//!
//! Per attempt it bounds the send by the attempt's timeout (so the time left, not a fixed
//! number, bounds each send), puts the operation's idempotency key in a header, turns
//! `Retry-After` (of a 429 or a 503) into a wait floor, and retries POST/PATCH only on outcomes
//! that were not applied unless the request carries an idempotency key (or `.idempotent(..)`
//! says otherwise). Bodies are rebuilt per attempt by a factory, or cloned when the request owns
//! a cloneable body; a streaming body is sent once and a retry it would need ends in
//! `RetryError::NotReplayable`. Classification (`.classify`) and reconciliation (`.reconcile`)
//! can be given here as on [`crate::Call`].
//!
//! **Result model**: `Ok` is a 1xx-3xx response; every failing status, a final 4xx as much as
//! an exhausted 5xx or 429, is an `Err` with the response inside ([`RetryError::response`]).
//!
//! **Timeouts**: the smaller of the attempt timeout, a timeout set on the request and a
//! client-wide `ClientBuilder::timeout` bounds each attempt. A request timeout would replace
//! the client's in reqwest, so with a client-wide timeout the runtime sets none and bounds the
//! attempt with its own timer instead (a debug event says so). reqwest has no getter for that
//! timeout; it is read from the client's `Debug` output, and if a future reqwest hid it there,
//! the attempt timeout would replace the client's: set the number on the policy to be sure.
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
use std::future::Future;

use reqwest::header::{HeaderName, HeaderValue, RETRY_AFTER};
use reqwest::{Client, Method, Request, RequestBuilder, Response, StatusCode};

use crate::attempt::{Attempt, IdempotencyKey};
use crate::classify::{Classifier, Classify, Outcome, Verdict};
use crate::deadline::Deadline;
use crate::error::RetryError;
use crate::policy::RetryPolicy;
use crate::reconcile::Observation;
use crate::run::{BoxCancel, BoxObservation, BoxReconcile, ReplayGuard};

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
///
/// Every setter keeps the type, so a send can be configured conditionally
/// (`if shutting_down { send = send.cancel_on(..) }`).
///
/// **Result model**: `Ok` is a success response (1xx-3xx). Every failing status ends in `Err`:
/// a 4xx that retrying cannot fix as [`RetryError::Permanent`] at once, a 5xx or 429 after the
/// runtime gave up on it (attempts, deadline, budget, method rules). The final response is
/// inside the error ([`RetryError::response`]), so a caller checks one place.
#[must_use = "nothing is sent until `.send().await`"]
pub struct HttpRetry<'a, F = NoFactory> {
    policy: &'a RetryPolicy,
    source: Source<F>,
    key_header: Option<HeaderName>,
    key: Option<IdempotencyKey>,
    idempotent: Option<bool>,
    deadline: Option<Deadline>,
    cancel: Option<BoxCancel<'a>>,
    classifier: Option<BoxClassifier<'a>>,
    reconcile: Option<BoxReconcile<'a, Response, HttpError>>,
}

type BoxClassifier<'a> = Box<dyn Classifier<HttpError> + Send + Sync + 'a>;

// Reason: one value per send, moved once; boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
enum Source<F> {
    Factory(F),
    Built(Client, reqwest::Result<Request>),
}

impl<'a, F> HttpRetry<'a, F> {
    fn new(policy: &'a RetryPolicy, source: Source<F>) -> Self {
        HttpRetry {
            policy,
            source,
            key_header: None,
            key: None,
            idempotent: None,
            deadline: None,
            cancel: None,
            classifier: None,
            reconcile: None,
        }
    }
}

impl RetryPolicy {
    /// A retrying send whose request (and body) is rebuilt by `factory` for every attempt.
    pub fn request<F>(&self, factory: F) -> HttpRetry<'_, F>
    where
        F: FnMut(&Attempt) -> RequestBuilder,
    {
        HttpRetry::new(self, Source::Factory(factory))
    }
}

/// The factory type of a request made by [`RequestBuilderExt::retrying`] (never called).
pub type NoFactory = fn(&Attempt) -> RequestBuilder;

/// Adds [`RequestBuilderExt::retrying`] to `reqwest::RequestBuilder`.
pub trait RequestBuilderExt {
    /// A retrying send of this request. Its body is cloned for each attempt when possible;
    /// a streaming body is sent once (a needed retry returns `NotReplayable`).
    fn retrying(self, policy: &RetryPolicy) -> HttpRetry<'_, NoFactory>;
}

impl RequestBuilderExt for RequestBuilder {
    fn retrying(self, policy: &RetryPolicy) -> HttpRetry<'_, NoFactory> {
        let (client, request) = self.build_split();
        HttpRetry::new(policy, Source::Built(client, request))
    }
}

impl<'a, F> HttpRetry<'a, F> {
    /// Sends the operation's idempotency key in the `Idempotency-Key` header of every
    /// attempt, which makes POST and PATCH retryable. The key is generated once per send
    /// unless [`HttpRetry::with_key`] sets one; every [`Attempt`] carries it too.
    pub fn idempotency_key(self) -> Self {
        self.idempotency_key_header(HeaderName::from_static(IDEMPOTENCY_KEY_HEADER))
    }

    /// Like [`HttpRetry::idempotency_key`] with another header name.
    pub fn idempotency_key_header(mut self, header: HeaderName) -> Self {
        self.key_header = Some(header);
        self
    }

    /// Uses `key` (a business key such as `"order-42"` that must survive restarts) instead of
    /// a generated key, and sends it ([`HttpRetry::idempotency_key`] is implied unless a header
    /// was chosen). The same spelling as [`crate::Call::with_key`].
    pub fn with_key(mut self, key: impl Into<IdempotencyKey>) -> Self {
        self.key = Some(key.into());
        if self.key_header.is_none() {
            self.key_header = Some(HeaderName::from_static(IDEMPOTENCY_KEY_HEADER));
        }
        self
    }

    /// Whether the request is safe to replay, overriding the method rule (GET, HEAD, OPTIONS,
    /// TRACE, PUT and DELETE are; POST and PATCH are only with an idempotency key): `true`
    /// declares a key-less POST safe, `false` a PUT unsafe. Unsafe requests are retried only
    /// on outcomes that were not applied (connect failure, 408, 429) or that reconciliation
    /// proved not applied.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }

    /// A caller's deadline; the earlier of this and the policy's `total` applies.
    pub fn deadline(mut self, deadline: Deadline) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Gives up with `Canceled` as soon as `cancel` completes.
    pub fn cancel_on(mut self, cancel: impl Future<Output = ()> + Send + 'a) -> Self {
        self.cancel = Some(Box::pin(cancel));
        self
    }

    /// Classifies failures with `classify` instead of the status table of
    /// [`Outcome::for_http_status`] and the transport rules. The closure returns an
    /// [`Outcome`], a [`Verdict`] (outcome and `Retry-After` hint; [`retry_after`] parses a
    /// response's header), or a `bool`; `Classify::outcome(error)` is the default to fall
    /// back on.
    ///
    /// ```no_run
    /// use timeoutlint_retry::{http::{retry_after, HttpError, RequestBuilderExt}, Classify, Outcome, RetryPolicy};
    ///
    /// # async fn demo(client: reqwest::Client, policy: RetryPolicy) {
    /// // This API answers 404 until a just-created item is replicated: worth a retry.
    /// let item = client
    ///     .get("http://127.0.0.1:8080/items/7")
    ///     .retrying(&policy)
    ///     .classify(|error: &HttpError| match error {
    ///         HttpError::Status(r) if r.status() == 404 => Outcome::Retryable.with_retry_after(retry_after(r)),
    ///         other => other.outcome().with_retry_after(other.retry_after()),
    ///     })
    ///     .send()
    ///     .await;
    /// # let _ = item; }
    /// ```
    pub fn classify<R, K>(self, classify: K) -> Self
    where
        R: Into<Verdict>,
        K: Fn(&HttpError) -> R + Send + Sync + 'a,
    {
        self.classifier(classify)
    }

    /// Classifies failures with any [`Classifier`] of [`HttpError`].
    pub fn classifier(mut self, classifier: impl Classifier<HttpError> + Send + Sync + 'a) -> Self {
        self.classifier = Some(Box::new(classifier));
        self
    }

    /// Consults `observe` after every ambiguous outcome (a timeout after the request was
    /// written, a 500/502/504): [`Observation::Committed`] with a response ends the send with
    /// it, [`Observation::NotApplied`] allows a retry even for an unsafe request,
    /// [`Observation::Unknown`] ends an unsafe request in `RetryError::Ambiguous`. Typically
    /// a GET of the resource by the attempt's idempotency key.
    pub fn reconcile<R, Fut>(mut self, mut observe: R) -> Self
    where
        R: FnMut(&Attempt, Option<&HttpError>) -> Fut + Send + 'a,
        Fut: Future<Output = Observation<Response>> + Send + 'a,
    {
        self.reconcile = Some(Box::new(
            move |attempt: &Attempt, error: Option<&HttpError>| {
                Some(Box::pin(observe(attempt, error)) as BoxObservation<'a, Response>)
            },
        ));
        self
    }

    /// Sends until a success response (1xx-3xx) or until the runtime gives up; see the
    /// result model on [`HttpRetry`].
    ///
    /// Each attempt's request timeout is `min(a timeout set on the request, the attempt's
    /// timeout)`. When the client was built with `ClientBuilder::timeout`, the runtime leaves
    /// the request's timeout unset so reqwest keeps the client's, and bounds the attempt with
    /// its own timer around it: the smaller of the two wins (see the crate README).
    ///
    /// # Errors
    ///
    /// The [`RetryError`]; a failing status is in `last_error` as [`HttpError::Status`].
    pub async fn send(self) -> Result<Response, RetryError<HttpError>>
    where
        F: FnMut(&Attempt) -> RequestBuilder,
    {
        let HttpRetry {
            policy,
            source,
            key_header,
            key,
            idempotent,
            deadline,
            cancel,
            classifier,
            reconcile,
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
        let client_timeout = client_sets_timeout(&client);
        if client_timeout {
            tracing::debug!(
                attempt_timeout_ms = crate::engine::duration_ms(preview.timeout),
                "the client has a ClientBuilder::timeout: kept; the attempt timeout bounds \
                 each attempt around it, so the smaller of the two applies"
            );
        }
        let guard = ReplayGuard::new();
        let (safe, partition) = match &first {
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
                prepare(&mut request, &attempt, key_header.as_ref(), client_timeout);
                request
            });
            let client = client.clone();
            Box::pin(async move {
                let response = client
                    .execute(prepared.map_err(HttpError::Transport)?)
                    .await
                    .map_err(HttpError::Transport)?;
                // One result model: success statuses are `Ok`, every failing one an error
                // the classifier judges (a 4xx is permanent unless it says otherwise).
                if Outcome::for_http_status(response.status().as_u16(), None).is_none() {
                    Ok(response)
                } else {
                    Err(HttpError::Status(response))
                }
            })
        };
        policy
            .call()
            .cancel_boxed(cancel)
            .deadline(deadline)
            .with_key(key)
            .idempotent(idempotent.unwrap_or(safe))
            .partition(partition)
            .replay_guard(guard.clone())
            .reconcile_boxed(reconcile)
            .classifier(HttpClassifier(classifier))
            .run(op)
            .await
    }
}

/// The caller's classifier, or the default ([`Classify`] of [`HttpError`]).
struct HttpClassifier<'a>(Option<BoxClassifier<'a>>);

impl Classifier<HttpError> for HttpClassifier<'_> {
    fn classify(&self, error: &HttpError) -> Outcome {
        self.verdict(error).outcome
    }

    fn retry_after(&self, error: &HttpError) -> Option<std::time::Duration> {
        self.verdict(error).retry_after
    }

    fn verdict(&self, error: &HttpError) -> Verdict {
        match &self.0 {
            Some(classifier) => classifier.verdict(error),
            None => error
                .outcome()
                .with_retry_after(Classify::retry_after(error)),
        }
    }
}

impl RetryError<HttpError> {
    /// The final response, when the runtime gave up on a failing status (a permanent 4xx, an
    /// exhausted 5xx or 429).
    #[must_use]
    pub fn response(&self) -> Option<&Response> {
        match self.last_error() {
            Some(HttpError::Status(response)) => Some(response),
            _ => None,
        }
    }

    /// The final response, by value.
    #[must_use]
    pub fn into_response(self) -> Option<Response> {
        match self.into_last_error() {
            Some(HttpError::Status(response)) => Some(response),
            _ => None,
        }
    }
}

/// Whether the client was built with `ClientBuilder::timeout`. reqwest has no getter for it,
/// but its `Debug` output names the client-wide total timeout (`TotalTimeout`) when, and only
/// when, one is set; `client_timeout_is_detected` in the tests pins this for the reqwest in
/// use. Were a future reqwest to print it differently, this reads `false` and the attempt
/// timeout replaces the client's, which the README warns about.
fn client_sets_timeout(client: &Client) -> bool {
    format!("{client:?}").contains("TotalTimeout")
}

/// Per-attempt rewrite: the attempt's timeout (never longer than one the caller set on the
/// request; left unset when the client has its own, which a request timeout would replace)
/// and the idempotency key header (never overwriting one the caller set).
fn prepare(
    request: &mut Request,
    attempt: &Attempt,
    key_header: Option<&HeaderName>,
    client_timeout: bool,
) {
    match request.timeout().copied() {
        Some(own) => *request.timeout_mut() = Some(own.min(attempt.timeout)),
        // reqwest applies the client's timeout; the runtime's timer caps the attempt.
        None if client_timeout => {}
        None => *request.timeout_mut() = Some(attempt.timeout),
    }
    if let Some(header) = key_header {
        if !request.headers().contains_key(header) {
            if let Ok(value) = HeaderValue::from_str(attempt.idempotency_key.as_str()) {
                request.headers_mut().insert(header.clone(), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The detection `send` relies on to keep a client-wide timeout.
    #[test]
    fn client_timeout_is_detected() {
        assert!(!client_sets_timeout(&Client::new()));
        let with = Client::builder()
            .timeout(std::time::Duration::from_millis(200))
            .build()
            .unwrap();
        assert!(client_sets_timeout(&with));
        let read_only = Client::builder()
            .read_timeout(std::time::Duration::from_millis(200))
            .build()
            .unwrap();
        assert!(
            !client_sets_timeout(&read_only),
            "a read timeout is not a total timeout"
        );
    }
}
