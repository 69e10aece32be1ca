//! The error an operation ends with: why the runtime gave up, the last error and the history.
//!
//! Hand-written (no derive macro) so the crate stays dependency-light and each message reads as
//! a sentence. Every variant carries the same [`Failure`], so code that only wants the last
//! error or the attempt history does not have to match.

use std::error::Error;
use std::fmt;
use std::time::Duration;

use crate::classify::Outcome;

/// Why a retried operation failed.
///
/// ```
/// use std::time::Duration;
/// use timeoutlint_retry::{Outcome, RetryError, RetryPolicy};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let policy = RetryPolicy::builder().max_attempts(2).backoff_none().build().unwrap();
/// let err = policy
///     .call()
///     .classify(|_: &&str| Outcome::Retryable)
///     .run(|_attempt| async { Err::<(), _>("busy") })
///     .await
///     .unwrap_err();
/// assert!(matches!(err, RetryError::Unavailable(_)));
/// assert_eq!(err.last_error(), Some(&"busy"));
/// assert_eq!(err.history().len(), 2);
/// # }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum RetryError<E> {
    /// The deadline passed, or too little time was left to start another attempt.
    DeadlineExceeded(Failure<E>),
    /// The caller canceled the operation; the in-flight attempt was dropped.
    Canceled(Failure<E>),
    /// Every allowed attempt failed with a retryable outcome (or a transient failure could not
    /// be retried because the operation is not idempotent).
    Unavailable(Failure<E>),
    /// The shared retry budget refused another retry.
    BudgetExhausted(Failure<E>),
    /// The server asked to come back later than the time left (or later than the policy's
    /// maximum); the runtime failed fast instead of sleeping into certain failure.
    RetryAfterTooLong(Failure<E>),
    /// The last attempt may or may not have been applied, the operation is not idempotent, and
    /// reconciliation (if any) could not tell.
    Ambiguous(Failure<E>),
    /// A retry was needed but the request (for example a streaming body) cannot be replayed.
    NotReplayable(Failure<E>),
    /// The error is permanent; retrying cannot help.
    Permanent(Failure<E>),
}

/// What every [`RetryError`] carries.
#[derive(Debug)]
pub struct Failure<E> {
    /// The last error the operation returned (`None` if no attempt returned one, for example
    /// when every attempt timed out).
    pub last_error: Option<E>,
    /// One record per attempt, in order.
    pub history: Vec<AttemptRecord>,
}

/// What happened in one attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptRecord {
    /// The attempt number, from 1.
    pub number: u32,
    /// When the attempt started, measured from the start of the operation.
    pub started_at: Duration,
    /// How long the attempt ran.
    pub elapsed: Duration,
    /// The timeout the attempt was given.
    pub timeout: Duration,
    /// How it ended.
    pub end: AttemptEnd,
    /// The wait scheduled after it, if the runtime went on to retry.
    pub wait: Option<Duration>,
}

/// How an attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptEnd {
    /// The operation returned an error classified as this outcome.
    Failed(Outcome),
    /// The runtime's attempt timeout fired (treated as [`Outcome::Ambiguous`]).
    TimedOut,
    /// The caller canceled during the attempt.
    Canceled,
}

/// The variant of a [`RetryError`] without its payload, for logging and comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// See [`RetryError::DeadlineExceeded`].
    DeadlineExceeded,
    /// See [`RetryError::Canceled`].
    Canceled,
    /// See [`RetryError::Unavailable`].
    Unavailable,
    /// See [`RetryError::BudgetExhausted`].
    BudgetExhausted,
    /// See [`RetryError::RetryAfterTooLong`].
    RetryAfterTooLong,
    /// See [`RetryError::Ambiguous`].
    Ambiguous,
    /// See [`RetryError::NotReplayable`].
    NotReplayable,
    /// See [`RetryError::Permanent`].
    Permanent,
}

impl ErrorKind {
    fn describe(self) -> &'static str {
        match self {
            ErrorKind::DeadlineExceeded => "deadline exceeded",
            ErrorKind::Canceled => "canceled",
            ErrorKind::Unavailable => "unavailable: attempts exhausted",
            ErrorKind::BudgetExhausted => "retry budget exhausted",
            ErrorKind::RetryAfterTooLong => "server asked to retry later than the time left",
            ErrorKind::Ambiguous => "outcome unknown: the request may have been applied",
            ErrorKind::NotReplayable => "a retry was needed but the request cannot be replayed",
            ErrorKind::Permanent => "permanent error",
        }
    }
}

impl<E> RetryError<E> {
    pub(crate) fn new(kind: ErrorKind, failure: Failure<E>) -> Self {
        match kind {
            ErrorKind::DeadlineExceeded => RetryError::DeadlineExceeded(failure),
            ErrorKind::Canceled => RetryError::Canceled(failure),
            ErrorKind::Unavailable => RetryError::Unavailable(failure),
            ErrorKind::BudgetExhausted => RetryError::BudgetExhausted(failure),
            ErrorKind::RetryAfterTooLong => RetryError::RetryAfterTooLong(failure),
            ErrorKind::Ambiguous => RetryError::Ambiguous(failure),
            ErrorKind::NotReplayable => RetryError::NotReplayable(failure),
            ErrorKind::Permanent => RetryError::Permanent(failure),
        }
    }

    /// The variant, without payload.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            RetryError::DeadlineExceeded(_) => ErrorKind::DeadlineExceeded,
            RetryError::Canceled(_) => ErrorKind::Canceled,
            RetryError::Unavailable(_) => ErrorKind::Unavailable,
            RetryError::BudgetExhausted(_) => ErrorKind::BudgetExhausted,
            RetryError::RetryAfterTooLong(_) => ErrorKind::RetryAfterTooLong,
            RetryError::Ambiguous(_) => ErrorKind::Ambiguous,
            RetryError::NotReplayable(_) => ErrorKind::NotReplayable,
            RetryError::Permanent(_) => ErrorKind::Permanent,
        }
    }

    /// The payload shared by every variant.
    #[must_use]
    pub fn failure(&self) -> &Failure<E> {
        match self {
            RetryError::DeadlineExceeded(f)
            | RetryError::Canceled(f)
            | RetryError::Unavailable(f)
            | RetryError::BudgetExhausted(f)
            | RetryError::RetryAfterTooLong(f)
            | RetryError::Ambiguous(f)
            | RetryError::NotReplayable(f)
            | RetryError::Permanent(f) => f,
        }
    }

    /// The payload, by value.
    #[must_use]
    pub fn into_failure(self) -> Failure<E> {
        match self {
            RetryError::DeadlineExceeded(f)
            | RetryError::Canceled(f)
            | RetryError::Unavailable(f)
            | RetryError::BudgetExhausted(f)
            | RetryError::RetryAfterTooLong(f)
            | RetryError::Ambiguous(f)
            | RetryError::NotReplayable(f)
            | RetryError::Permanent(f) => f,
        }
    }

    /// The last error the operation returned, if any.
    #[must_use]
    pub fn last_error(&self) -> Option<&E> {
        self.failure().last_error.as_ref()
    }

    /// The last error, by value.
    #[must_use]
    pub fn into_last_error(self) -> Option<E> {
        self.into_failure().last_error
    }

    /// One record per attempt.
    #[must_use]
    pub fn history(&self) -> &[AttemptRecord] {
        &self.failure().history
    }

    /// How many attempts were made.
    #[must_use]
    pub fn attempts(&self) -> usize {
        self.history().len()
    }

    /// Maps the carried error type (for wrapping a low-level error in a caller's own type).
    #[must_use]
    pub fn map_err<F, G: FnOnce(E) -> F>(self, map: G) -> RetryError<F> {
        let kind = self.kind();
        let Failure {
            last_error,
            history,
        } = self.into_failure();
        RetryError::new(
            kind,
            Failure {
                last_error: last_error.map(map),
                history,
            },
        )
    }
}

impl<E: fmt::Display> fmt::Display for RetryError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let attempts = self.attempts();
        write!(
            f,
            "{} after {attempts} attempt{}",
            self.kind().describe(),
            if attempts == 1 { "" } else { "s" }
        )?;
        if let Some(last) = self.last_error() {
            write!(f, "; last error: {last}")?;
        } else if let Some(record) = self.history().last() {
            if record.end == AttemptEnd::TimedOut {
                write!(f, "; last attempt timed out after {:?}", record.timeout)?;
            }
        }
        Ok(())
    }
}

impl<E: Error + 'static> Error for RetryError<E> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.last_error().map(|e| e as &(dyn Error + 'static))
    }
}
