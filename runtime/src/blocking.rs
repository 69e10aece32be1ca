//! The blocking flavour: the loop that drives the engine with the standard clock.
//!
//! Waits are `Condvar::wait_timeout` on a [`CancelHandle`], never a bare `thread::sleep`, so
//! another thread (a shutdown handler, a UI) can interrupt a long backoff at once. A blocking
//! attempt cannot be preempted: the runtime hands the attempt its timeout and the operation
//! must apply it to its own I/O (for example `ureq`'s or a socket's timeout).

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::attempt::Attempt;
use crate::classify::{ByTrait, Classifier, Verdict};
use crate::engine::{Engine, Event, Found, Step};
use crate::error::RetryError;
use crate::options::{option_setters, Options};
use crate::policy::RetryPolicy;
use crate::reconcile::{NoReconcile, Observation};

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

/// A blocking reconciliation hook, boxed so that setting one keeps the type of the call.
type BoxReconcileBlocking<'a, T, E> =
    Box<dyn FnMut(&Attempt, Option<&E>) -> Option<Observation<T>> + 'a>;

/// One blocking operation's settings; made by [`RetryPolicy::blocking`]. The same options as
/// [`crate::Call`], and like it every setter but the classifier keeps the type.
#[must_use = "a BlockingCall does nothing until `.run(op)`"]
pub struct BlockingCall<'a, T, E, K = ByTrait> {
    policy: &'a RetryPolicy,
    options: Options,
    cancel: Option<CancelHandle>,
    classifier: K,
    reconcile: Option<BoxReconcileBlocking<'a, T, E>>,
}

impl RetryPolicy {
    /// Starts configuring one blocking operation.
    pub fn blocking<T, E>(&self) -> BlockingCall<'_, T, E> {
        BlockingCall {
            policy: self,
            options: Options::default(),
            cancel: None,
            classifier: ByTrait,
            reconcile: None,
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

impl<'a, T, E, K> BlockingCall<'a, T, E, K> {
    option_setters!();

    /// Waits end early, and no new attempt starts, once `cancel` is canceled.
    pub fn cancel_handle(mut self, cancel: CancelHandle) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// Classifies errors with `classify` (an [`crate::Outcome`], a [`Verdict`], a `bool` or
    /// `(Outcome, Option<Duration>)`, as for [`crate::Call::classify`]).
    pub fn classify<R, K2>(self, classify: K2) -> BlockingCall<'a, T, E, K2>
    where
        R: Into<Verdict>,
        K2: Fn(&E) -> R,
    {
        self.classifier(classify)
    }

    /// Classifies errors with any [`Classifier`].
    pub fn classifier<K2>(self, classifier: K2) -> BlockingCall<'a, T, E, K2> {
        BlockingCall {
            policy: self.policy,
            options: self.options,
            cancel: self.cancel,
            classifier,
            reconcile: self.reconcile,
        }
    }

    /// Consults `observe` after every ambiguous outcome (see [`Observation`]).
    pub fn reconcile<R>(mut self, mut observe: R) -> Self
    where
        R: FnMut(&Attempt, Option<&E>) -> Observation<T> + 'a,
    {
        self.reconcile = Some(Box::new(move |attempt: &Attempt, error: Option<&E>| {
            Some(observe(attempt, error))
        }));
        self
    }

    /// Consults any [`ReconcileBlocking`] implementation after every ambiguous outcome.
    pub fn reconciler<R>(mut self, mut reconcile: R) -> Self
    where
        R: ReconcileBlocking<T, E> + 'a,
    {
        self.reconcile = Some(Box::new(move |attempt: &Attempt, error: Option<&E>| {
            reconcile.observe(attempt, error)
        }));
        self
    }

    /// Runs `op` until it succeeds or the runtime gives up.
    ///
    /// # Errors
    ///
    /// The [`RetryError`] that explains why the runtime gave up.
    pub fn run<Op>(self, mut op: Op) -> Result<T, RetryError<E>>
    where
        K: Classifier<E>,
        Op: FnMut(Attempt) -> Result<T, E>,
    {
        let BlockingCall {
            policy,
            options,
            cancel,
            classifier,
            mut reconcile,
        } = self;
        let span = tracing::debug_span!(
            "retry",
            max_attempts = policy.max_attempts,
            blocking = true,
            idempotent = options.idempotent,
        );
        let _entered = span.enter();
        let mut engine = Engine::new(policy, options, reconcile.is_some(), std_now());
        let mut last_error = None;
        // A handle canceled before the start starts nothing; later cancels end the wait.
        let mut event = if cancel.as_ref().is_some_and(CancelHandle::is_canceled) {
            Event::Canceled
        } else {
            Event::Start
        };
        loop {
            event = match engine.step(event, std_now()) {
                Step::Attempt(attempt, attempt_span) => {
                    let result = attempt_span.in_scope(|| op(attempt));
                    match result {
                        Ok(value) => return Ok(value),
                        Err(error) => {
                            let verdict = classifier.verdict(&error);
                            last_error = Some(error);
                            Event::Failed(verdict)
                        }
                    }
                }
                Step::Reconcile(attempt, _limit) => {
                    match reconcile
                        .as_mut()
                        .and_then(|observe| observe(&attempt, last_error.as_ref()))
                    {
                        Some(Observation::Committed(value)) => return Ok(value),
                        Some(Observation::NotApplied) => Event::Reconciled(Found::NotApplied),
                        Some(Observation::Unknown) | None => Event::Reconciled(Found::Unknown),
                    }
                }
                Step::Wait(wait) => {
                    let interrupted = match &cancel {
                        Some(cancel) => cancel.wait_timeout(wait),
                        // Without a handle nobody can interrupt; a private Condvar still
                        // keeps this a bounded, capped wait rather than a bare sleep.
                        None => CancelHandle::new().wait_timeout(wait),
                    };
                    if interrupted {
                        Event::Canceled
                    } else {
                        Event::Woke
                    }
                }
                Step::GiveUp(kind) => return Err(engine.finish(kind, last_error)),
            };
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
