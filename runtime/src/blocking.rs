//! The blocking flavour: the same decisions as the async engine for synchronous code.
//!
//! Waits are `Condvar::wait_timeout` on a [`CancelHandle`], never a bare `thread::sleep`, so
//! another thread (a shutdown handler, a UI) can interrupt a long backoff at once. A blocking
//! attempt cannot be preempted: the runtime hands the attempt its timeout and the operation
//! must apply it to its own I/O (for example `ureq`'s or a socket's timeout).

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::attempt::{Attempt, IdempotencyKey};
use crate::classify::{ByTrait, Classifier, Outcome};
use crate::deadline::Deadline;
use crate::error::{AttemptEnd, ErrorKind, RetryError};
use crate::policy::RetryPolicy;
use crate::reconcile::{NoReconcile, Observation};
use crate::run::{Engine, ReplayGuard, Step};

/// A cancellation flag that wakes blocked waits. Clone it into whoever may cancel.
///
/// ```
/// use std::time::{Duration, Instant};
/// use timeoutlint_retry::CancelHandle;
///
/// let cancel = CancelHandle::new();
/// let remote = cancel.clone();
/// std::thread::spawn(move || remote.cancel());
/// let start = Instant::now();
/// assert!(cancel.wait_timeout(Duration::from_secs(10)), "woken by the cancel");
/// assert!(start.elapsed() < Duration::from_secs(5));
/// ```
#[derive(Clone, Debug, Default)]
pub struct CancelHandle(Arc<(Mutex<bool>, Condvar)>);

impl CancelHandle {
    /// A handle that is not canceled.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels, waking every wait on this handle.
    pub fn cancel(&self) {
        let (flag, condvar) = &*self.0;
        *flag.lock().unwrap_or_else(PoisonError::into_inner) = true;
        condvar.notify_all();
    }

    /// Whether [`CancelHandle::cancel`] was called.
    #[must_use]
    pub fn is_canceled(&self) -> bool {
        *self.0 .0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits up to `timeout`; `true` if canceled (before or during the wait).
    #[must_use]
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let (flag, condvar) = &*self.0;
        let guard = flag.lock().unwrap_or_else(PoisonError::into_inner);
        // `wait_timeout_while` re-waits after spurious wake-ups for the time still left.
        let (guard, _) = condvar
            .wait_timeout_while(guard, timeout, |canceled| !*canceled)
            .unwrap_or_else(PoisonError::into_inner);
        *guard
    }
}

/// One blocking operation's settings; made by [`RetryPolicy::blocking`].
#[must_use = "a BlockingCall does nothing until `.run(op)`"]
pub struct BlockingCall<'p, K = ByTrait, R = NoReconcile> {
    policy: &'p RetryPolicy,
    cancel: Option<CancelHandle>,
    classifier: K,
    reconcile: R,
    idempotent: bool,
    deadline: Option<Deadline>,
    key: Option<IdempotencyKey>,
    partition: Option<String>,
    replay: Option<ReplayGuard>,
}

impl RetryPolicy {
    /// Starts configuring one blocking operation.
    pub fn blocking(&self) -> BlockingCall<'_> {
        BlockingCall {
            policy: self,
            cancel: None,
            classifier: ByTrait,
            reconcile: NoReconcile,
            idempotent: true,
            deadline: None,
            key: None,
            partition: None,
            replay: None,
        }
    }

    /// Runs an idempotent blocking operation whose error classifies itself.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timeoutlint_retry::{Outcome, RetryPolicy};
    ///
    /// let policy = RetryPolicy::builder().backoff_none().build().unwrap();
    /// let mut calls = 0;
    /// let value = policy.run_blocking(|attempt| {
    ///     calls += 1;
    ///     if attempt.number < 2 { Err(Outcome::NotApplied) } else { Ok("done") }
    /// });
    /// assert_eq!(value.unwrap(), "done");
    /// assert_eq!(calls, 2);
    /// ```
    ///
    /// # Errors
    ///
    /// The [`RetryError`] that explains why the runtime gave up.
    pub fn run_blocking<T, E, Op>(&self, op: Op) -> Result<T, RetryError<E>>
    where
        E: crate::Classify,
        Op: FnMut(Attempt) -> Result<T, E>,
    {
        self.blocking().run(op)
    }
}

impl<'p, K, R> BlockingCall<'p, K, R> {
    /// Waits end early, and no new attempt starts, once `cancel` is canceled.
    pub fn cancel_handle(mut self, cancel: CancelHandle) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// Classifies errors with `classify`.
    pub fn classify<E, K2: Fn(&E) -> Outcome>(self, classify: K2) -> BlockingCall<'p, K2, R> {
        BlockingCall {
            policy: self.policy,
            cancel: self.cancel,
            classifier: classify,
            reconcile: self.reconcile,
            idempotent: self.idempotent,
            deadline: self.deadline,
            key: self.key,
            partition: self.partition,
            replay: self.replay,
        }
    }

    /// Consults `observe` after every ambiguous outcome (see [`Observation`]).
    pub fn reconcile<T, E, R2>(self, observe: R2) -> BlockingCall<'p, K, R2>
    where
        R2: FnMut(&Attempt, Option<&E>) -> Observation<T>,
    {
        BlockingCall {
            policy: self.policy,
            cancel: self.cancel,
            classifier: self.classifier,
            reconcile: observe,
            idempotent: self.idempotent,
            deadline: self.deadline,
            key: self.key,
            partition: self.partition,
            replay: self.replay,
        }
    }

    /// Whether the operation is safe to replay (default `true`).
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// A caller's deadline; the earlier of this and the policy's `total` applies.
    pub fn deadline(mut self, deadline: Deadline) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Use this idempotency key instead of a generated one.
    pub fn idempotency_key(mut self, key: IdempotencyKey) -> Self {
        self.key = Some(key);
        self
    }

    /// The budget partition for policies built with `budgets`.
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
    pub fn run<T, E, Op>(mut self, mut op: Op) -> Result<T, RetryError<E>>
    where
        K: Classifier<E>,
        R: ReconcileBlocking<T, E>,
        Op: FnMut(Attempt) -> Result<T, E>,
    {
        let now = std_now();
        let mut engine = Engine::new(
            self.policy,
            self.deadline,
            self.idempotent,
            self.key,
            self.partition.as_deref(),
            now,
        );
        let span = tracing::debug_span!(
            "retry",
            max_attempts = self.policy.max_attempts,
            blocking = true,
            idempotent = self.idempotent,
        );
        let _entered = span.enter();
        let canceled =
            |cancel: &Option<CancelHandle>| cancel.as_ref().is_some_and(CancelHandle::is_canceled);
        let mut last_error = None;
        let mut number = 0;
        loop {
            number += 1;
            if canceled(&self.cancel) {
                return Err(engine.give_up(ErrorKind::Canceled, last_error));
            }
            let started = std_now();
            let attempt = match engine.next_attempt(number, started) {
                Ok(attempt) => attempt,
                Err(kind) => return Err(engine.give_up(kind, last_error)),
            };
            let attempt_span = tracing::debug_span!(
                "attempt",
                number,
                timeout_ms = crate::run::duration_ms(attempt.timeout),
                remaining_ms = crate::run::duration_ms(engine.deadline.remaining_at(started)),
            );
            let in_attempt = attempt_span.enter();
            let result = op(attempt.clone());
            let (outcome, hint) = match result {
                Ok(value) => return Ok(value),
                Err(error) => {
                    let outcome = self.classifier.classify(&error);
                    let hint = self.classifier.retry_after(&error);
                    last_error = Some(error);
                    (outcome, hint)
                }
            };
            engine.record(&attempt, started, std_now(), AttemptEnd::Failed(outcome));
            let mut proven_not_applied = false;
            if outcome == Outcome::Ambiguous {
                match self.reconcile.observe(&attempt, last_error.as_ref()) {
                    Some(Observation::Committed(value)) => return Ok(value),
                    Some(Observation::NotApplied) => proven_not_applied = true,
                    Some(Observation::Unknown) | None => {}
                }
            }
            let replayable = self
                .replay
                .as_ref()
                .map_or(true, ReplayGuard::is_replayable);
            let step = engine.after_failure(
                &attempt,
                outcome,
                hint,
                proven_not_applied,
                replayable,
                std_now(),
            );
            // The wait belongs to the operation, not to the attempt that just ended.
            drop(in_attempt);
            match step {
                Step::Retry(wait) => {
                    let interrupted = match &self.cancel {
                        Some(cancel) => cancel.wait_timeout(wait),
                        // Without a handle nobody can interrupt; a private Condvar still
                        // keeps this a bounded, capped wait rather than a bare sleep.
                        None => CancelHandle::new().wait_timeout(wait),
                    };
                    if interrupted {
                        return Err(engine.give_up(ErrorKind::Canceled, last_error));
                    }
                }
                Step::GiveUp(kind) => return Err(engine.give_up(kind, last_error)),
            }
        }
    }
}

/// A reconciliation hook for the blocking flavour; implemented for closures
/// `FnMut(&Attempt, Option<&E>) -> Observation<T>` and by [`NoReconcile`].
pub trait ReconcileBlocking<T, E> {
    /// What the remote side shows about `attempt`; `None` means there is no hook.
    fn observe(&mut self, attempt: &Attempt, error: Option<&E>) -> Option<Observation<T>>;
}

impl<T, E> ReconcileBlocking<T, E> for NoReconcile {
    fn observe(&mut self, _attempt: &Attempt, _error: Option<&E>) -> Option<Observation<T>> {
        None
    }
}

impl<T, E, F> ReconcileBlocking<T, E> for F
where
    F: FnMut(&Attempt, Option<&E>) -> Observation<T>,
{
    fn observe(&mut self, attempt: &Attempt, error: Option<&E>) -> Option<Observation<T>> {
        Some(self(attempt, error))
    }
}

/// The standard clock, as the engine's instant type.
fn std_now() -> Instant {
    Instant::from_std(std::time::Instant::now())
}
