//! The async flavour: the loop that drives the engine with tokio's clock, and [`Call`].
//!
//! Each attempt is `timeout(min(attempt cap, time left), op(attempt))` raced with the caller's
//! cancellation; each wait is the engine's wait raced with the same cancellation. Every
//! decision (start, reconcile, retry or give up, how long to wait) is the engine's
//! ([`crate::engine`]), which the blocking flavour drives the same way.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;

use tokio::time::Instant;
use tracing::Instrument;

use crate::attempt::Attempt;
use crate::classify::{ByTrait, Classifier, Verdict};
use crate::engine::{duration_ms, Engine, Event, Found, Step};
use crate::error::RetryError;
use crate::options::{option_setters, Options};
use crate::policy::RetryPolicy;
use crate::reconcile::{Observation, Reconcile};

/// A cancellation future, boxed so that setting one keeps the type of the [`Call`].
pub(crate) type BoxCancel<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
/// A reconciliation future.
pub(crate) type BoxObservation<'a, T> = Pin<Box<dyn Future<Output = Observation<T>> + Send + 'a>>;
/// A reconciliation hook, boxed so that setting one keeps the type of the [`Call`].
pub(crate) type BoxReconcile<'a, T, E> =
    Box<dyn FnMut(&Attempt, Option<&E>) -> Option<BoxObservation<'a, T>> + Send + 'a>;

/// One operation's settings on top of its policy: cancellation, classification,
/// idempotency, reconciliation, deadline, key and budget partition. Made by
/// [`RetryPolicy::call`] (or [`RetryPolicy::when`]); finished by [`Call::run`].
///
/// `T` and `E` are the operation's value and error types, inferred from `run`. Every setter
/// but the classifier keeps the type, so a call can be configured conditionally:
///
/// ```
/// use std::time::Duration;
/// use timeoutlint_retry::{Observation, Outcome, RetryPolicy};
/// use tokio_util::sync::CancellationToken;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let policy = RetryPolicy::default();
/// let shutdown = CancellationToken::new();
/// let (charging, graceful) = (true, true);
/// let mut call = policy
///     .call()
///     .classify(|e: &std::io::Error| if e.kind() == std::io::ErrorKind::TimedOut { Outcome::Ambiguous } else { Outcome::Permanent });
/// if graceful {
///     call = call.cancel_on(shutdown.cancelled());
/// }
/// if charging {
///     call = call.idempotent(false).reconcile(|attempt, _err| {
///         let key = attempt.idempotency_key.clone();
///         async move { if key.as_str().is_empty() { Observation::Unknown } else { Observation::Committed(7) } }
///     });
/// }
/// let charged = call
///     .run(|attempt| async move {
///         assert!(attempt.timeout <= Duration::from_secs(10));
///         Err::<u32, _>(std::io::Error::from(std::io::ErrorKind::TimedOut))
///     })
///     .await;
/// assert_eq!(charged.unwrap(), 7, "the reconciliation found the charge");
/// # }
/// ```
#[must_use = "a Call does nothing until `.run(op).await`"]
pub struct Call<'a, T, E, K = ByTrait> {
    policy: &'a RetryPolicy,
    options: Options,
    cancel: Option<BoxCancel<'a>>,
    classifier: K,
    reconcile: Option<BoxReconcile<'a, T, E>>,
}

/// Shared flag an operation clears when it consumed something it cannot rebuild (a streaming
/// body). A retry needed after that ends in `RetryError::NotReplayable` instead of a replay
/// with a missing body; the first attempt is always sent.
#[derive(Clone, Debug)]
pub struct ReplayGuard(Arc<AtomicBool>);

impl ReplayGuard {
    /// A guard that allows replays until [`ReplayGuard::forbid`] is called.
    #[must_use]
    pub fn new() -> Self {
        Self(Arc::new(AtomicBool::new(true)))
    }

    /// Marks the operation as not replayable.
    pub fn forbid(&self) {
        self.0.store(false, Ordering::Release);
    }

    /// Whether a replay is still possible.
    #[must_use]
    pub fn is_replayable(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

impl Default for ReplayGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl RetryPolicy {
    /// Starts configuring one operation; see [`Call`].
    pub fn call<T, E>(&self) -> Call<'_, T, E> {
        Call {
            policy: self,
            options: Options::default(),
            cancel: None,
            classifier: ByTrait,
            reconcile: None,
        }
    }

    /// Starts configuring one operation whose errors `classify` judges, so the error type
    /// need not implement [`crate::Classify`]: `policy.when(|e| ..).run(op)`. The closure
    /// returns an [`crate::Outcome`], a [`Verdict`] (outcome and `Retry-After` hint), or a
    /// `bool` (`true`: worth retrying). Same as `policy.call().classify(classify)`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timeoutlint_retry::{Outcome, RetryPolicy};
    ///
    /// #[derive(Debug)]
    /// struct Busy { retry_in: Duration }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let policy = RetryPolicy::builder().max_attempts(2).build().unwrap();
    /// let err = policy
    ///     .when(|e: &Busy| Outcome::Retryable.with_retry_after(Some(e.retry_in)))
    ///     .run(|_| async { Err::<(), _>(Busy { retry_in: Duration::from_millis(300) }) })
    ///     .await
    ///     .unwrap_err();
    /// assert_eq!(err.history()[0].wait, Some(Duration::from_millis(300)), "the hint is the wait's floor");
    /// # }
    /// ```
    pub fn when<T, E, R, K>(&self, classify: K) -> Call<'_, T, E, K>
    where
        R: Into<Verdict>,
        K: Fn(&E) -> R,
    {
        self.call().classify(classify)
    }

    /// Runs an idempotent operation whose error type classifies itself ([`crate::Classify`]).
    ///
    /// # Errors
    ///
    /// The [`RetryError`] that explains why the runtime gave up.
    pub async fn run<T, E, Op, Fut>(&self, op: Op) -> Result<T, RetryError<E>>
    where
        E: crate::Classify,
        Op: FnMut(Attempt) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.call().run(op).await
    }

    /// Like [`RetryPolicy::run`], but gives up as soon as `cancel` completes (pass
    /// `token.cancelled()` for a `CancellationToken`, or any other future).
    ///
    /// # Errors
    ///
    /// [`RetryError::Canceled`] on cancellation, or why the runtime gave up.
    pub async fn run_with_cancel<T, E, C, Op, Fut>(
        &self,
        cancel: C,
        op: Op,
    ) -> Result<T, RetryError<E>>
    where
        E: crate::Classify,
        C: Future<Output = ()> + Send,
        Op: FnMut(Attempt) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.call().cancel_on(cancel).run(op).await
    }

    /// Runs an operation that is *not* safe to replay: only outcomes that were not applied
    /// (`NotApplied`, `Throttled`) are retried, ambiguous ones end in `RetryError::Ambiguous`.
    /// Send [`Attempt::idempotency_key`] and use [`RetryPolicy::run`] instead when the server
    /// deduplicates on it.
    ///
    /// # Errors
    ///
    /// The [`RetryError`] that explains why the runtime gave up.
    pub async fn run_non_idempotent<T, E, Op, Fut>(&self, op: Op) -> Result<T, RetryError<E>>
    where
        E: crate::Classify,
        Op: FnMut(Attempt) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.call().idempotent(false).run(op).await
    }
}

impl<'a, T, E, K> Call<'a, T, E, K> {
    option_setters!();

    /// Gives up with `Canceled` as soon as `cancel` completes, dropping the in-flight attempt or
    /// cutting the wait short. The future is boxed (one allocation), which keeps the type of
    /// the call the same with or without cancellation.
    pub fn cancel_on(mut self, cancel: impl Future<Output = ()> + Send + 'a) -> Self {
        self.cancel = Some(Box::pin(cancel));
        self
    }

    /// The integrations' way to hand over what their own builders boxed already.
    #[cfg(feature = "reqwest")]
    pub(crate) fn cancel_boxed(mut self, cancel: Option<BoxCancel<'a>>) -> Self {
        self.cancel = cancel;
        self
    }

    /// See [`Call::cancel_boxed`].
    #[cfg(feature = "reqwest")]
    pub(crate) fn reconcile_boxed(mut self, reconcile: Option<BoxReconcile<'a, T, E>>) -> Self {
        self.reconcile = reconcile;
        self
    }

    /// Classifies errors with `classify` instead of the error's own [`crate::Classify`]. The
    /// closure returns an [`crate::Outcome`], a [`Verdict`] (an outcome with a `Retry-After`
    /// hint), a `bool` (`true`: worth retrying, `false`: permanent) or
    /// `(Outcome, Option<Duration>)`.
    pub fn classify<R, K2>(self, classify: K2) -> Call<'a, T, E, K2>
    where
        R: Into<Verdict>,
        K2: Fn(&E) -> R,
    {
        self.classifier(classify)
    }

    /// Classifies errors with any [`Classifier`].
    pub fn classifier<K2>(self, classifier: K2) -> Call<'a, T, E, K2> {
        Call {
            policy: self.policy,
            options: self.options,
            cancel: self.cancel,
            classifier,
            reconcile: self.reconcile,
        }
    }

    /// Consults `observe` after every ambiguous outcome (see [`Observation`]). The returned
    /// future must own what it needs (copy the key or id out of the attempt first).
    pub fn reconcile<R, Fut>(mut self, mut observe: R) -> Self
    where
        R: FnMut(&Attempt, Option<&E>) -> Fut + Send + 'a,
        Fut: Future<Output = Observation<T>> + Send + 'a,
    {
        self.reconcile = Some(Box::new(move |attempt: &Attempt, error: Option<&E>| {
            Some(Box::pin(observe(attempt, error)) as BoxObservation<'a, T>)
        }));
        self
    }

    /// Consults any [`Reconcile`] implementation after every ambiguous outcome.
    pub fn reconciler<R>(mut self, mut reconcile: R) -> Self
    where
        R: Reconcile<T, E> + Send + 'a,
        R::Future: Send + 'a,
    {
        self.reconcile = Some(Box::new(move |attempt: &Attempt, error: Option<&E>| {
            reconcile
                .observe(attempt, error)
                .map(|future| Box::pin(future) as BoxObservation<'a, T>)
        }));
        self
    }

    /// Runs `op` until it succeeds or the runtime gives up.
    ///
    /// # Errors
    ///
    /// The [`RetryError`] that explains why the runtime gave up.
    pub async fn run<Op, Fut>(self, mut op: Op) -> Result<T, RetryError<E>>
    where
        K: Classifier<E>,
        Op: FnMut(Attempt) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let Call {
            policy,
            options,
            cancel,
            classifier,
            mut reconcile,
        } = self;
        let idempotent = options.idempotent;
        // One clock read serves the start of the operation and of its first attempt.
        let mut now = Instant::now();
        let mut engine = Engine::new(policy, options, reconcile.is_some(), now);
        let span = tracing::debug_span!(
            "retry",
            max_attempts = policy.max_attempts,
            total_ms = duration_ms(engine.deadline().remaining_at(now)),
            idempotent,
        );
        let mut cancel = pin!(cancel.map_or(Cancel::Never, Cancel::On));
        let mut last_error: Option<E> = None;
        let mut event = Event::Start;
        async move {
            loop {
                event = match engine.step(event, now) {
                    Step::Attempt(attempt, attempt_span) => {
                        // The timer is set from the engine's `now` with `timeout_at`, which
                        // reads no clock again.
                        let work = match now.checked_add(attempt.timeout) {
                            Some(at) => tokio::time::timeout_at(at, op(attempt)),
                            None => tokio::time::timeout(attempt.timeout, op(attempt)),
                        };
                        match race(cancel.as_mut(), work).instrument(attempt_span).await {
                            None => Event::Canceled,
                            Some(Ok(Ok(value))) => return Ok(value),
                            Some(Ok(Err(error))) => {
                                let verdict = classifier.verdict(&error);
                                last_error = Some(error);
                                Event::Failed(verdict)
                            }
                            Some(Err(_elapsed)) => Event::TimedOut,
                        }
                    }
                    Step::Reconcile(attempt, limit) => {
                        let observation = reconcile
                            .as_mut()
                            .and_then(|observe| observe(&attempt, last_error.as_ref()));
                        match observation {
                            None => Event::Reconciled(Found::Unknown),
                            Some(observation) => {
                                let bounded = tokio::time::timeout(limit, observation);
                                match race(cancel.as_mut(), bounded).await {
                                    None => Event::Canceled,
                                    Some(Ok(Observation::Committed(value))) => {
                                        tracing::debug!(
                                            number = attempt.number,
                                            "reconciliation found the attempt applied"
                                        );
                                        return Ok(value);
                                    }
                                    Some(found) => {
                                        Event::Reconciled(found_of(attempt.number, &found))
                                    }
                                }
                            }
                        }
                    }
                    Step::Wait(wait) => match race(cancel.as_mut(), tokio::time::sleep(wait)).await
                    {
                        None => Event::Canceled,
                        Some(()) => Event::Woke,
                    },
                    Step::GiveUp(kind) => return Err(engine.finish(kind, last_error)),
                };
                now = Instant::now();
            }
        }
        .instrument(span)
        .await
    }
}

/// What a reconciliation that committed nothing found (a hook that ran out of time is
/// unknown).
fn found_of<T, Timeout>(number: u32, result: &Result<Observation<T>, Timeout>) -> Found {
    if let Ok(Observation::NotApplied) = result {
        tracing::debug!(number, "reconciliation found the attempt not applied");
        Found::NotApplied
    } else {
        tracing::debug!(number, "reconciliation could not tell");
        Found::Unknown
    }
}

/// The caller's cancellation, or none: an unboxed `Never` keeps a call without cancellation
/// free of the allocation and of the dynamic poll.
enum Cancel<'a> {
    Never,
    On(BoxCancel<'a>),
}

impl Future for Cancel<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        match self.get_mut() {
            Cancel::Never => Poll::Pending,
            Cancel::On(cancel) => cancel.as_mut().poll(cx),
        }
    }
}

/// Polls `cancel` first, then `work`: `None` if the caller canceled, else the work's output.
/// Hand-rolled instead of `tokio::select!` to keep the `macros` feature out of the dependency
/// tree; polling cancel first makes a cancel that is already done win deterministically.
async fn race<W: Future>(
    mut cancel: Pin<&mut impl Future<Output = ()>>,
    work: W,
) -> Option<W::Output> {
    let mut work = pin!(work);
    poll_fn(|cx| {
        if cancel.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        work.as_mut().poll(cx).map(Some)
    })
    .await
}
