//! The async engine: runs an operation under a policy, one deadline, one cancellation.
//!
//! Each attempt is `timeout(min(attempt cap, time left), op(attempt))` raced with the caller's
//! cancellation; each wait is `min(backoff or Retry-After floor, time left - min attempt time)`
//! raced with the same cancellation. The decisions (retry or give up, and how long to wait) are
//! made by [`Engine`], which the blocking flavour shares, so both flavours behave the same.

use std::future::{poll_fn, Future, Pending};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use tokio::time::Instant;
use tracing::Instrument;

use crate::attempt::{Attempt, IdempotencyKey};
use crate::backoff::Rng;
use crate::budget::RetryBudget;
use crate::classify::{ByTrait, Classifier, Outcome};
use crate::deadline::Deadline;
use crate::error::{AttemptEnd, AttemptRecord, ErrorKind, Failure, RetryError};
use crate::policy::RetryPolicy;
use crate::reconcile::{NoReconcile, Observation, Reconcile};

/// One operation's settings on top of its policy: cancellation, classification,
/// idempotency, reconciliation, deadline, key and budget partition. Made by
/// [`RetryPolicy::call`]; finished by [`Call::run`] (or `run_blocking`).
///
/// ```
/// use std::time::Duration;
/// use timeoutlint_retry::{Observation, Outcome, RetryPolicy};
/// use tokio_util::sync::CancellationToken;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let policy = RetryPolicy::default();
/// let shutdown = CancellationToken::new();
/// let charged = policy
///     .call()
///     .cancel_on(shutdown.cancelled())
///     .idempotent(false)
///     .classify(|e: &std::io::Error| if e.kind() == std::io::ErrorKind::TimedOut { Outcome::Ambiguous } else { Outcome::Permanent })
///     .reconcile(|attempt, _err| {
///         let key = attempt.idempotency_key.clone();
///         async move { if key.as_str().is_empty() { Observation::Unknown } else { Observation::Committed(7) } }
///     })
///     .run(|attempt| async move {
///         assert!(attempt.timeout <= Duration::from_secs(10));
///         Err::<u32, _>(std::io::Error::from(std::io::ErrorKind::TimedOut))
///     })
///     .await;
/// assert_eq!(charged.unwrap(), 7, "the reconciliation found the charge");
/// # }
/// ```
#[must_use = "a Call does nothing until `.run(op).await`"]
pub struct Call<'p, C = Pending<()>, K = ByTrait, R = NoReconcile> {
    pub(crate) policy: &'p RetryPolicy,
    pub(crate) cancel: C,
    pub(crate) classifier: K,
    pub(crate) reconcile: R,
    pub(crate) idempotent: bool,
    pub(crate) deadline: Option<Deadline>,
    pub(crate) key: Option<IdempotencyKey>,
    pub(crate) partition: Option<String>,
    pub(crate) replay: Option<ReplayGuard>,
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
    pub fn call(&self) -> Call<'_> {
        Call {
            policy: self,
            cancel: std::future::pending(),
            classifier: ByTrait,
            reconcile: NoReconcile,
            idempotent: true,
            deadline: None,
            key: None,
            partition: None,
            replay: None,
        }
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
        C: Future<Output = ()>,
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

impl<'p, C, K, R> Call<'p, C, K, R> {
    /// Gives up with `Canceled` as soon as `cancel` completes, dropping the in-flight attempt or
    /// cutting the wait short.
    pub fn cancel_on<C2: Future<Output = ()>>(self, cancel: C2) -> Call<'p, C2, K, R> {
        Call {
            policy: self.policy,
            cancel,
            classifier: self.classifier,
            reconcile: self.reconcile,
            idempotent: self.idempotent,
            deadline: self.deadline,
            key: self.key,
            partition: self.partition,
            replay: self.replay,
        }
    }

    /// Classifies errors with `classify` instead of the error's own [`crate::Classify`].
    pub fn classify<E, K2: Fn(&E) -> Outcome>(self, classify: K2) -> Call<'p, C, K2, R> {
        self.classifier(classify)
    }

    /// Classifies errors with any [`Classifier`].
    pub fn classifier<K2>(self, classifier: K2) -> Call<'p, C, K2, R> {
        Call {
            policy: self.policy,
            cancel: self.cancel,
            classifier,
            reconcile: self.reconcile,
            idempotent: self.idempotent,
            deadline: self.deadline,
            key: self.key,
            partition: self.partition,
            replay: self.replay,
        }
    }

    /// Consults `observe` after every ambiguous outcome (see [`Observation`]).
    pub fn reconcile<T, E, R2, Fut>(self, observe: R2) -> Call<'p, C, K, R2>
    where
        R2: FnMut(&Attempt, Option<&E>) -> Fut,
        Fut: Future<Output = Observation<T>>,
    {
        self.reconciler(observe)
    }

    /// Consults any [`Reconcile`] implementation after every ambiguous outcome.
    pub fn reconciler<R2>(self, reconcile: R2) -> Call<'p, C, K, R2> {
        Call {
            policy: self.policy,
            cancel: self.cancel,
            classifier: self.classifier,
            reconcile,
            idempotent: self.idempotent,
            deadline: self.deadline,
            key: self.key,
            partition: self.partition,
            replay: self.replay,
        }
    }

    /// Whether the operation is safe to replay (default `true`). With `false`, only
    /// `NotApplied` and `Throttled` outcomes are retried, or ambiguous ones that reconciliation
    /// proved not applied.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// A caller's deadline (for example propagated from an incoming request); the operation
    /// uses the earlier of this and the policy's `total`.
    pub fn deadline(mut self, deadline: Deadline) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Use this idempotency key instead of a generated one (for example a business key that
    /// must survive process restarts).
    pub fn idempotency_key(mut self, key: IdempotencyKey) -> Self {
        self.key = Some(key);
        self
    }

    /// The budget partition for policies built with `budgets` (host, service, tenant).
    pub fn partition(mut self, partition: impl Into<String>) -> Self {
        self.partition = Some(partition.into());
        self
    }

    /// The replay guard the operation clears when it cannot rebuild its request.
    pub fn replay_guard(mut self, guard: ReplayGuard) -> Self {
        self.replay = Some(guard);
        self
    }

    /// Runs `op` until it succeeds or the runtime gives up.
    ///
    /// # Errors
    ///
    /// The [`RetryError`] that explains why the runtime gave up.
    pub async fn run<T, E, Op, Fut>(self, mut op: Op) -> Result<T, RetryError<E>>
    where
        C: Future<Output = ()>,
        K: Classifier<E>,
        R: Reconcile<T, E>,
        Op: FnMut(Attempt) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let Call {
            policy,
            cancel,
            classifier,
            mut reconcile,
            idempotent,
            deadline,
            key,
            partition,
            replay,
        } = self;
        // One clock read serves the start of the operation and of its first attempt; the
        // attempt's timer is set from it with `timeout_at`, which reads no clock again.
        let start = Instant::now();
        let mut engine = Engine::new(
            policy,
            deadline,
            idempotent,
            key,
            partition.as_deref(),
            start,
        );
        let span = tracing::debug_span!(
            "retry",
            max_attempts = policy.max_attempts,
            total_ms = duration_ms(engine.deadline.remaining()),
            idempotent,
        );
        let mut cancel = pin!(cancel);
        let mut last_error: Option<E> = None;
        async move {
            let mut number = 0u32;
            loop {
                number += 1;
                let started = if number == 1 { start } else { Instant::now() };
                let attempt = match engine.next_attempt(number, started) {
                    Ok(attempt) => attempt,
                    Err(kind) => return Err(engine.give_up(kind, last_error)),
                };
                let attempt_span = tracing::debug_span!(
                    "attempt",
                    number,
                    timeout_ms = duration_ms(attempt.timeout),
                    remaining_ms = duration_ms(engine.deadline.remaining_at(started)),
                );
                let work = match started.checked_add(attempt.timeout) {
                    Some(at) => tokio::time::timeout_at(at, op(attempt.clone())),
                    None => tokio::time::timeout(attempt.timeout, op(attempt.clone())),
                };
                let result = race(cancel.as_mut(), work)
                    .instrument(attempt_span.clone())
                    .await;
                let (end, outcome, hint) = match result {
                    None => {
                        attempt_span.in_scope(|| {
                            engine.record(&attempt, started, Instant::now(), AttemptEnd::Canceled);
                        });
                        return Err(engine.give_up(ErrorKind::Canceled, last_error));
                    }
                    Some(Ok(Ok(value))) => return Ok(value),
                    Some(Ok(Err(error))) => {
                        let outcome = classifier.classify(&error);
                        let hint = classifier.retry_after(&error);
                        last_error = Some(error);
                        (AttemptEnd::Failed(outcome), outcome, hint)
                    }
                    // The request may have been written before the timer fired.
                    Some(Err(_elapsed)) => (AttemptEnd::TimedOut, Outcome::Ambiguous, None),
                };
                attempt_span.in_scope(|| engine.record(&attempt, started, Instant::now(), end));

                let mut proven_not_applied = false;
                if outcome == Outcome::Ambiguous {
                    if let Some(observation) = reconcile.observe(&attempt, last_error.as_ref()) {
                        let limit = engine.deadline.remaining();
                        match race(cancel.as_mut(), tokio::time::timeout(limit, observation)).await
                        {
                            None => return Err(engine.give_up(ErrorKind::Canceled, last_error)),
                            Some(Ok(Observation::Committed(value))) => {
                                tracing::debug!(number, "reconciliation found the attempt applied");
                                return Ok(value);
                            }
                            Some(Ok(Observation::NotApplied)) => {
                                tracing::debug!(
                                    number,
                                    "reconciliation found the attempt not applied"
                                );
                                proven_not_applied = true;
                            }
                            Some(Ok(Observation::Unknown) | Err(_)) => {
                                tracing::debug!(number, "reconciliation could not tell");
                            }
                        }
                    }
                }

                let replayable = replay.as_ref().map_or(true, ReplayGuard::is_replayable);
                let step = attempt_span.in_scope(|| {
                    engine.after_failure(
                        &attempt,
                        outcome,
                        hint,
                        proven_not_applied,
                        replayable,
                        Instant::now(),
                    )
                });
                let wait = match step {
                    Step::Retry(wait) => wait,
                    Step::GiveUp(kind) => return Err(engine.give_up(kind, last_error)),
                };
                if race(cancel.as_mut(), tokio::time::sleep(wait))
                    .await
                    .is_none()
                {
                    return Err(engine.give_up(ErrorKind::Canceled, last_error));
                }
            }
        }
        .instrument(span)
        .await
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

#[allow(clippy::cast_possible_truncation)]
// Reason: a span field in milliseconds; durations beyond u64 milliseconds are clamped first.
pub(crate) fn duration_ms(d: Duration) -> u64 {
    d.as_millis().min(u128::from(u64::MAX)) as u64
}

fn whole_millis(d: Duration) -> Duration {
    Duration::from_millis(duration_ms(d))
}

/// What to do after a failed attempt.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Retry(Duration),
    GiveUp(ErrorKind),
}

/// The decisions shared by the async and blocking flavours. It never reads a clock itself:
/// callers pass `now`, so each flavour uses its own clock and tests can pin time.
pub(crate) struct Engine<'p> {
    policy: &'p RetryPolicy,
    pub(crate) deadline: Deadline,
    idempotent: bool,
    key: IdempotencyKey,
    budget: Option<Arc<RetryBudget>>,
    // Created on the first retry, so a first-attempt success pays no entropy.
    rng: Option<Rng>,
    previous_wait: Duration,
    retry_granted: bool,
    // Set when the deadline shortened a wait: the attempt after it is the last one, so an
    // operation that fails fast cannot spin through its remaining attempts with no backoff.
    last_chance: bool,
    history: Vec<AttemptRecord>,
    start: Instant,
}

impl<'p> Engine<'p> {
    pub(crate) fn new(
        policy: &'p RetryPolicy,
        deadline: Option<Deadline>,
        idempotent: bool,
        key: Option<IdempotencyKey>,
        partition: Option<&str>,
        now: Instant,
    ) -> Self {
        let own = policy
            .total
            .map_or(Deadline::never(), |total| match now.checked_add(total) {
                Some(at) => Deadline::at(at),
                None => Deadline::never(),
            });
        let budget = policy.budget.as_ref().map(|b| b.resolve(partition));
        if let Some(budget) = &budget {
            budget.deposit();
        }
        Self {
            policy,
            deadline: deadline.map_or(own, |d| d.earliest(own)),
            idempotent,
            key: key.unwrap_or_else(IdempotencyKey::generate),
            budget,
            rng: None,
            previous_wait: Duration::ZERO,
            retry_granted: false,
            last_chance: false,
            history: Vec::new(),
            start: now,
        }
    }

    /// The next attempt, or why none may start.
    pub(crate) fn next_attempt(&mut self, number: u32, now: Instant) -> Result<Attempt, ErrorKind> {
        let remaining = self.deadline.remaining_at(now);
        // A retry granted by `after_failure` was sized to leave the minimum attempt time; the
        // wait's own scheduling lag must not turn that decision into a give-up, so a granted
        // attempt only needs the deadline not to have passed.
        let needed = if std::mem::take(&mut self.retry_granted) {
            Duration::from_nanos(1)
        } else {
            self.policy.min_attempt_time.max(Duration::from_nanos(1))
        };
        if self.deadline.is_bounded() && remaining < needed {
            tracing::debug!(
                number,
                remaining_ms = duration_ms(remaining),
                "too little time left to start an attempt"
            );
            return Err(ErrorKind::DeadlineExceeded);
        }
        Ok(Attempt {
            number,
            max_attempts: self.policy.max_attempts,
            deadline: self.deadline,
            timeout: self.policy.attempt_timeout.min(remaining),
            idempotency_key: self.key.clone(),
        })
    }

    pub(crate) fn record(
        &mut self,
        attempt: &Attempt,
        started: Instant,
        now: Instant,
        end: AttemptEnd,
    ) {
        let elapsed = now.saturating_duration_since(started);
        tracing::debug!(elapsed_ms = duration_ms(elapsed), ?end, "attempt ended");
        self.history.push(AttemptRecord {
            number: attempt.number,
            started_at: started.saturating_duration_since(self.start),
            elapsed: now.saturating_duration_since(started),
            timeout: attempt.timeout,
            end,
            wait: None,
        });
    }

    /// Retry (after how long) or give up (why), after `attempt` ended in `outcome`.
    pub(crate) fn after_failure(
        &mut self,
        attempt: &Attempt,
        outcome: Outcome,
        hint: Option<Duration>,
        proven_not_applied: bool,
        replayable: bool,
        now: Instant,
    ) -> Step {
        let safe = self.idempotent || proven_not_applied || outcome.is_not_applied();
        let give_up = |kind: ErrorKind, why: &str| {
            tracing::debug!(number = attempt.number, ?outcome, error = ?kind, "giving up: {why}");
            Step::GiveUp(kind)
        };
        match outcome {
            Outcome::Permanent => return give_up(ErrorKind::Permanent, "permanent error"),
            Outcome::Ambiguous if !safe => {
                return give_up(
                    ErrorKind::Ambiguous,
                    "may have been applied and is not idempotent",
                )
            }
            Outcome::Retryable if !safe => {
                return give_up(
                    ErrorKind::Unavailable,
                    "transient failure, but not idempotent",
                )
            }
            _ => {}
        }
        let remaining = self.deadline.remaining_at(now);
        let min = self.policy.min_attempt_time;
        if self.last_chance {
            return give_up(
                ErrorKind::DeadlineExceeded,
                "the time left allowed one last attempt",
            );
        }
        if self.deadline.is_bounded() && remaining < min.max(Duration::from_nanos(1)) {
            return give_up(
                ErrorKind::DeadlineExceeded,
                "no time left for another attempt",
            );
        }
        if self
            .policy
            .max_attempts
            .is_some_and(|max| attempt.number >= max)
        {
            return give_up(ErrorKind::Unavailable, "attempts exhausted");
        }
        if !replayable {
            return give_up(ErrorKind::NotReplayable, "the request cannot be replayed");
        }
        // The longest wait that still leaves the next attempt its minimum time.
        let room = if self.deadline.is_bounded() {
            remaining.saturating_sub(min)
        } else {
            Duration::MAX
        };
        let seed = self.policy.seed;
        let rng = self
            .rng
            .get_or_insert_with(|| seed.map_or_else(Rng::from_entropy, Rng::seeded));
        let backoff = self
            .policy
            .backoff
            .delay(attempt.number, self.previous_wait, rng);
        let mut wait = backoff;
        let retry_after = match outcome {
            Outcome::Throttled { retry_after } => retry_after,
            _ => hint,
        };
        if let Some(hint) = retry_after {
            if hint > self.policy.retry_after_cap || hint > room {
                return give_up(
                    ErrorKind::RetryAfterTooLong,
                    "the server asked to wait longer than allowed",
                );
            }
            wait = wait.max(hint);
        }
        // Whole milliseconds: tokio's timer has millisecond resolution, so the recorded wait is
        // exactly the wait that happens.
        self.last_chance = wait > room;
        let wait = whole_millis(wait.min(room));
        if let Some(budget) = &self.budget {
            if !budget.try_withdraw() {
                return give_up(ErrorKind::BudgetExhausted, "the retry budget is spent");
            }
        }
        if let Some(record) = self.history.last_mut() {
            record.wait = Some(wait);
        }
        self.previous_wait = wait;
        self.retry_granted = true;
        tracing::debug!(
            number = attempt.number,
            ?outcome,
            wait_ms = duration_ms(wait),
            backoff_ms = duration_ms(backoff),
            retry_after_ms = retry_after.map(duration_ms),
            remaining_ms = duration_ms(remaining),
            "waiting before retry"
        );
        Step::Retry(wait)
    }

    pub(crate) fn give_up<E>(self, kind: ErrorKind, last_error: Option<E>) -> RetryError<E> {
        tracing::debug!(attempts = self.history.len(), error = ?kind, "retry gave up");
        RetryError::new(
            kind,
            Failure {
                last_error,
                history: self.history,
            },
        )
    }
}
