//! What a failure means for a retry: `Outcome`, and how errors are mapped to it.
//!
//! Classification is about the *effect* of the failed attempt on the remote side, because that
//! decides whether replaying it is safe: not applied (safe for any method), transient (safe when
//! the operation is idempotent), ambiguous (maybe applied: needs idempotency or reconciliation),
//! permanent (retrying cannot help). Protocol knowledge (HTTP status codes, gRPC codes) lives
//! here as plain functions over numbers, so the core needs no HTTP or gRPC dependency.

use std::time::Duration;

/// What a failed attempt means for retrying it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The remote side did not act on the request (connect refused, DNS failure, TLS failure,
    /// refused stream, 408). Safe to retry for every method.
    NotApplied,
    /// A transient failure that may or may not have had an effect (503). Retried only when
    /// the operation is idempotent or carries an idempotency key. A server hint still applies
    /// through [`Classify::retry_after`] / [`Classifier::retry_after`].
    Retryable,
    /// The server refused and asked to slow down (429); not applied. `retry_after` is the
    /// server's hint: a floor for the wait, capped by the policy's maximum and by the time
    /// left.
    Throttled {
        /// The server's hint, already converted to a duration.
        retry_after: Option<Duration>,
    },
    /// The request may have been applied (timeout after it was written, reset mid-response,
    /// 500/502/504). Retried only when idempotent; otherwise reconciled or reported as such.
    Ambiguous,
    /// Retrying cannot help (4xx other than 408/429, a malformed request).
    Permanent,
}

impl Outcome {
    /// Whether a replay is safe even for a non-idempotent operation.
    #[must_use]
    pub fn is_not_applied(&self) -> bool {
        matches!(self, Outcome::NotApplied | Outcome::Throttled { .. })
    }

    /// The outcome of an HTTP response status, or `None` when the status is not a failure
    /// (1xx-3xx). `retry_after` is the parsed `Retry-After` header, if any
    /// (see [`crate::retry_after::parse`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timeoutlint_retry::Outcome;
    ///
    /// assert_eq!(Outcome::for_http_status(200, None), None);
    /// assert_eq!(Outcome::for_http_status(404, None), Some(Outcome::Permanent));
    /// assert_eq!(Outcome::for_http_status(502, None), Some(Outcome::Ambiguous));
    /// assert_eq!(
    ///     Outcome::for_http_status(429, Some(Duration::from_secs(1))),
    ///     Some(Outcome::Throttled { retry_after: Some(Duration::from_secs(1)) })
    /// );
    /// ```
    #[must_use]
    pub fn for_http_status(status: u16, retry_after: Option<Duration>) -> Option<Outcome> {
        Some(match status {
            0..=399 => return None,
            // The server gave up waiting for the request: it never processed it.
            408 => Outcome::NotApplied,
            429 => Outcome::Throttled { retry_after },
            // A 503 may come from a proxy after the origin acted, so replaying it needs
            // idempotency; its `Retry-After` is honoured through `Classify::retry_after`.
            503 => Outcome::Retryable,
            500 | 502 | 504 => Outcome::Ambiguous,
            _ => Outcome::Permanent,
        })
    }

    /// The outcome of a gRPC status code (the numeric `tonic::Code`), or `None` for `OK`.
    ///
    /// `UNAVAILABLE` is what gRPC returns when the call never reached the server (and for
    /// refused streams), so it is [`Outcome::NotApplied`]; `DEADLINE_EXCEEDED`, `UNKNOWN`,
    /// `INTERNAL` and `ABORTED` may follow a partial effect.
    #[must_use]
    pub fn for_grpc_code(code: i32) -> Option<Outcome> {
        Some(match code {
            0 => return None,
            14 => Outcome::NotApplied,
            8 => Outcome::Throttled { retry_after: None },
            2 | 4 | 10 | 13 => Outcome::Ambiguous,
            _ => Outcome::Permanent,
        })
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::NotApplied => f.write_str("not applied"),
            Outcome::Retryable => f.write_str("transient failure"),
            Outcome::Throttled {
                retry_after: Some(hint),
            } => write!(f, "throttled (retry after {hint:?})"),
            Outcome::Throttled { retry_after: None } => f.write_str("throttled"),
            Outcome::Ambiguous => f.write_str("outcome unknown"),
            Outcome::Permanent => f.write_str("permanent failure"),
        }
    }
}

/// Errors that know their own [`Outcome`]; used by `RetryPolicy::run` when no classifier is
/// given.
pub trait Classify {
    /// The outcome of this error.
    fn outcome(&self) -> Outcome;

    /// A server's hint for when to retry, for outcomes other than [`Outcome::Throttled`]
    /// (which carries its own); for example the `Retry-After` of a 503.
    fn retry_after(&self) -> Option<Duration> {
        None
    }
}

impl Classify for std::io::Error {
    fn outcome(&self) -> Outcome {
        use std::io::ErrorKind as K;
        match self.kind() {
            // Nothing reached the peer.
            K::ConnectionRefused | K::AddrNotAvailable | K::NotFound => Outcome::NotApplied,
            // The peer may have read (and acted on) what was written before the failure.
            K::TimedOut
            | K::ConnectionReset
            | K::ConnectionAborted
            | K::BrokenPipe
            | K::UnexpectedEof
            | K::Interrupted
            | K::WouldBlock => Outcome::Ambiguous,
            _ => Outcome::Permanent,
        }
    }
}

impl Classify for Outcome {
    fn outcome(&self) -> Outcome {
        *self
    }
}

/// What a classifier says about one error: its [`Outcome`] and, optionally, the server's hint
/// for when to retry (a `Retry-After` of any outcome, not only [`Outcome::Throttled`]).
///
/// A classifier closure may return a `Verdict`, an [`Outcome`], a `bool` (`true`: retryable,
/// `false`: permanent, like backon's `.when(|e| ..)`), or `(Outcome, Option<Duration>)`:
///
/// ```
/// use std::time::Duration;
/// use timeoutlint_retry::{Outcome, Verdict};
///
/// let busy = Outcome::Retryable.with_retry_after(Some(Duration::from_secs(2)));
/// assert_eq!(busy, Verdict { outcome: Outcome::Retryable, retry_after: Some(Duration::from_secs(2)) });
/// assert_eq!(Verdict::from(true).outcome, Outcome::Retryable);
/// assert_eq!(Verdict::from(false).outcome, Outcome::Permanent);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// What the failure means for retrying it.
    pub outcome: Outcome,
    /// The server's hint: a floor for the wait, capped by the policy and by the time left.
    /// For [`Outcome::Throttled`] its own `retry_after` takes precedence.
    pub retry_after: Option<Duration>,
}

impl Verdict {
    /// The hint that applies: the throttled outcome's own, else the verdict's.
    pub(crate) fn hint(&self) -> Option<Duration> {
        match self.outcome {
            Outcome::Throttled {
                retry_after: Some(hint),
            } => Some(hint),
            _ => self.retry_after,
        }
    }
}

impl Outcome {
    /// This outcome with a server's hint for when to retry (for example the parsed
    /// `Retry-After` of a 503).
    #[must_use]
    pub fn with_retry_after(self, retry_after: Option<Duration>) -> Verdict {
        Verdict {
            outcome: self,
            retry_after,
        }
    }
}

impl From<Outcome> for Verdict {
    fn from(outcome: Outcome) -> Self {
        outcome.with_retry_after(None)
    }
}

impl From<(Outcome, Option<Duration>)> for Verdict {
    fn from((outcome, retry_after): (Outcome, Option<Duration>)) -> Self {
        outcome.with_retry_after(retry_after)
    }
}

/// `true` means "worth retrying" ([`Outcome::Retryable`]: replayed when the operation is
/// idempotent), `false` means [`Outcome::Permanent`].
impl From<bool> for Verdict {
    fn from(retry: bool) -> Self {
        if retry {
            Outcome::Retryable.into()
        } else {
            Outcome::Permanent.into()
        }
    }
}

/// Anything that can classify an error: a [`Classify`] error type (through [`ByTrait`]) or a
/// closure `Fn(&E) -> R` where `R` is an [`Outcome`], a [`Verdict`], a `bool` or
/// `(Outcome, Option<Duration>)`.
pub trait Classifier<E> {
    /// The outcome of `error`.
    fn classify(&self, error: &E) -> Outcome;

    /// A server's hint for when to retry after `error` (see [`Classify::retry_after`]).
    fn retry_after(&self, _error: &E) -> Option<Duration> {
        None
    }

    /// Outcome and hint together; what the runtime calls. Override it when computing both at
    /// once is cheaper (closures do: they are called once per error).
    fn verdict(&self, error: &E) -> Verdict {
        self.classify(error)
            .with_retry_after(self.retry_after(error))
    }
}

/// The classifier that asks the error itself through [`Classify`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ByTrait;

impl<E: Classify> Classifier<E> for ByTrait {
    fn classify(&self, error: &E) -> Outcome {
        error.outcome()
    }

    fn retry_after(&self, error: &E) -> Option<Duration> {
        error.retry_after()
    }
}

impl<E, R: Into<Verdict>, F: Fn(&E) -> R> Classifier<E> for F {
    fn classify(&self, error: &E) -> Outcome {
        self(error).into().outcome
    }

    fn retry_after(&self, error: &E) -> Option<Duration> {
        self(error).into().retry_after
    }

    fn verdict(&self, error: &E) -> Verdict {
        self(error).into()
    }
}
