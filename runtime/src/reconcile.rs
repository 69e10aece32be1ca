//! Reconciliation: after an ambiguous outcome, ask the remote side what actually happened.
//!
//! A write that timed out after it was sent may have been applied. Replaying a non-idempotent
//! write then risks doing it twice; giving up risks reporting a failure for something that
//! succeeded. The hook reads the remote state instead ("list what is attached: if the volume is
//! there, the attach succeeded") and tells the runtime which of the two it was.

use std::future::{Future, Ready};

use crate::attempt::Attempt;

/// What reconciliation found out about an ambiguous attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observation<T> {
    /// The attempt was applied; this is its result. The operation succeeds with it.
    Committed(T),
    /// The attempt was not applied; a retry is safe even for a non-idempotent operation.
    NotApplied,
    /// Still unknown. A non-idempotent operation fails with `RetryError::Ambiguous`.
    Unknown,
}

/// A reconciliation hook. Implemented for closures
/// `FnMut(&Attempt, Option<&E>) -> impl Future<Output = Observation<T>>`; the returned future
/// must own what it needs (copy the key or id out of the attempt before the `async` block).
pub trait Reconcile<T, E> {
    /// The future that performs the observation.
    type Future: Future<Output = Observation<T>>;

    /// Starts observing the effect of `attempt`, which ended in `error` (`None` when the
    /// runtime's timeout cut it). `None` means there is no hook.
    fn observe(&mut self, attempt: &Attempt, error: Option<&E>) -> Option<Self::Future>;
}

/// No reconciliation: ambiguous outcomes of non-idempotent operations are reported as such.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoReconcile;

impl<T, E> Reconcile<T, E> for NoReconcile {
    type Future = Ready<Observation<T>>;

    fn observe(&mut self, _attempt: &Attempt, _error: Option<&E>) -> Option<Self::Future> {
        None
    }
}

impl<T, E, F, Fut> Reconcile<T, E> for F
where
    F: FnMut(&Attempt, Option<&E>) -> Fut,
    Fut: Future<Output = Observation<T>>,
{
    type Future = Fut;

    fn observe(&mut self, attempt: &Attempt, error: Option<&E>) -> Option<Fut> {
        Some(self(attempt, error))
    }
}
