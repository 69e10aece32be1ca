//! tower integration (feature `tower`): a `Layer` that retries any `Service` under a policy.
//!
//! Works with tonic clients and any other tower stack. A request is replayed through
//! [`ReplayRequest`] (by `Clone` by default, or a closure that returns `None` for a request it
//! cannot copy, such as a streaming body: that request is sent once and a retry it would need
//! ends in `NotReplayable`). [`ReplayRequest::prepare`] lets each attempt carry its timeout and
//! the idempotency key (a `grpc-timeout` header, an `idempotency-key` metadata entry).
//!
//! With tonic, a channel's `http::Request<tonic::body::Body>` is not `Clone`: give the layer a
//! `replay` closure for requests whose body you can copy, or (simpler for unary calls) run the
//! client call itself through [`RetryPolicy::call`], building the `tonic::Request` from the
//! message per attempt with `set_timeout(attempt.timeout)` and the key in its metadata, and
//! classifying `tonic::Status` with [`crate::Outcome::for_grpc_code`].
//!
//! ```
//! use std::time::Duration;
//! use timeoutlint_retry::{layer::RetryLayer, Outcome, RetryPolicy};
//! use tower::{service_fn, Layer, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let policy = RetryPolicy::builder().backoff_none().build().unwrap();
//! let layer = RetryLayer::new(policy, |_: &&str| Outcome::NotApplied);
//! let flaky = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
//! let svc = layer.layer(service_fn(move |name: String| {
//!     let n = flaky.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
//!     async move { if n == 0 { Err("refused") } else { Ok(format!("hello {name}")) } }
//! }));
//! assert_eq!(svc.oneshot("tonic".to_string()).await.unwrap(), "hello tonic");
//! # }
//! ```

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll};

use tower_layer::Layer;
use tower_service::Service;

use crate::attempt::Attempt;
use crate::classify::Classifier;
use crate::error::{Failure, RetryError};
use crate::policy::RetryPolicy;
use crate::run::ReplayGuard;

/// How a request is copied for the next attempt and adjusted for each attempt.
pub trait ReplayRequest<Req> {
    /// A copy for another attempt, or `None` if the request cannot be replayed.
    fn replay(&self, request: &Req) -> Option<Req>;

    /// Adjusts the request of `attempt` before it is sent (default: nothing).
    fn prepare(&self, _request: &mut Req, _attempt: &Attempt) {}
}

/// Replays requests by `Clone`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CloneRequest;

impl<Req: Clone> ReplayRequest<Req> for CloneRequest {
    fn replay(&self, request: &Req) -> Option<Req> {
        Some(request.clone())
    }
}

impl<Req, F: Fn(&Req) -> Option<Req>> ReplayRequest<Req> for F {
    fn replay(&self, request: &Req) -> Option<Req> {
        self(request)
    }
}

/// The layer; see the module docs.
#[derive(Clone, Debug)]
pub struct RetryLayer<K, R = CloneRequest> {
    policy: RetryPolicy,
    classifier: K,
    replay: R,
}

impl<K> RetryLayer<K, CloneRequest> {
    /// Retries under `policy`, classifying the inner service's errors with `classifier`
    /// (a closure `Fn(&S::Error) -> Outcome` or a [`Classifier`]).
    pub fn new(policy: RetryPolicy, classifier: K) -> Self {
        Self {
            policy,
            classifier,
            replay: CloneRequest,
        }
    }
}

impl<K, R> RetryLayer<K, R> {
    /// Replays requests with `replay` instead of `Clone`.
    pub fn replay<R2>(self, replay: R2) -> RetryLayer<K, R2> {
        RetryLayer {
            policy: self.policy,
            classifier: self.classifier,
            replay,
        }
    }
}

impl<S, K: Clone, R: Clone> Layer<S> for RetryLayer<K, R> {
    type Service = Retry<S, K, R>;

    fn layer(&self, inner: S) -> Self::Service {
        Retry {
            inner,
            policy: self.policy.clone(),
            classifier: self.classifier.clone(),
            replay: self.replay.clone(),
        }
    }
}

/// The service made by [`RetryLayer`].
#[derive(Clone, Debug)]
pub struct Retry<S, K, R> {
    inner: S,
    policy: RetryPolicy,
    classifier: K,
    replay: R,
}

impl<S, Req, K, R> Service<Req> for Retry<S, K, R>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
    Req: Send + 'static,
    K: Classifier<S::Error> + Clone + Send + Sync + 'static,
    R: ReplayRequest<Req> + Clone + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = RetryError<S::Error>;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(|error| {
            RetryError::Permanent(Failure {
                last_error: Some(error),
                history: Vec::new(),
            })
        })
    }

    fn call(&mut self, request: Req) -> Self::Future {
        // The service that `poll_ready` prepared serves the first attempt; retries use clones
        // and wait for their readiness (tower's contract for moving a service into a future).
        let fresh = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, fresh.clone());
        let policy = self.policy.clone();
        let classifier = self.classifier.clone();
        let replay = self.replay.clone();
        Box::pin(async move {
            let guard = ReplayGuard::new();
            let mut ready = Some(ready);
            let mut next = Some(request);
            let replay_guard = guard.clone();
            let op = move |attempt: Attempt| {
                let mut request = next
                    .take()
                    .expect("the replay guard stops retries once a request cannot be replayed");
                // Copy before sending; a request that cannot be copied is sent this once.
                next = replay.replay(&request);
                if next.is_none() {
                    replay_guard.forbid();
                }
                replay.prepare(&mut request, &attempt);
                let first = ready.take();
                let mut service = first.clone().unwrap_or_else(|| fresh.clone());
                let needs_ready = first.is_none();
                async move {
                    if needs_ready {
                        poll_fn(|cx| service.poll_ready(cx)).await?;
                    }
                    service.call(request).await
                }
            };
            policy
                .call()
                .classifier(classifier)
                .replay_guard(guard.clone())
                .run(op)
                .await
        })
    }
}
