//! `timeoutlint-retry`: the retry runtime that timeoutlint's suggestions point to.
//!
//! One deadline caps every attempt and every wait; each attempt's timeout is derived from the
//! time left; every attempt and wait races the caller's cancellation; the operation is a
//! factory `FnMut(Attempt) -> Future` so bodies are rebuilt per attempt; one idempotency key
//! serves every attempt; `Retry-After` is a floor capped by the time left; classification knows
//! which failures may have been applied; ambiguous writes can be reconciled; a shared budget
//! stops retry storms. The core has no HTTP dependency; `reqwest` and `tower` integrations are
//! behind features of those names.
//!
//! ```
//! use std::time::Duration;
//! use timeoutlint_retry::{Outcome, RetryError, RetryPolicy};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let policy = RetryPolicy::builder()
//!     .max_attempts(3)
//!     .total(Duration::from_secs(2))
//!     .attempt_timeout(Duration::from_millis(500))
//!     .build()
//!     .expect("bounded policy");
//! let result: Result<String, RetryError<std::io::Error>> = policy
//!     .run(|attempt| async move {
//!         // Use `attempt.timeout` for the request and send `attempt.idempotency_key`.
//!         if attempt.number == 1 {
//!             Err(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
//!         } else {
//!             Ok(format!("ok on attempt {}", attempt.number))
//!         }
//!     })
//!     .await;
//! assert_eq!(result.unwrap(), "ok on attempt 2");
//! # }
//! ```
//!
//! Deliberately absent: a global default policy (each dependency deserves its own numbers),
//! unbounded policies (the builder refuses them), and sleeping threads (the blocking flavour
//! waits on a `Condvar` that a [`CancelHandle`] interrupts).
#![deny(missing_docs)]

// The README's examples are compiled (and the core ones run) as doc tests; the first needs the
// reqwest integration.
#[cfg(all(doctest, feature = "reqwest"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod attempt;
mod backoff;
mod blocking;
mod budget;
mod classify;
mod deadline;
mod engine;
mod error;
#[cfg(feature = "reqwest")]
pub mod http;
#[cfg(feature = "tower")]
pub mod layer;
mod options;
mod policy;
mod reconcile;
pub mod retry_after;
mod run;

pub use attempt::{Attempt, IdempotencyKey};
pub use backoff::{Backoff, Jitter};
pub use blocking::{BlockingCall, CancelHandle, ReconcileBlocking};
pub use budget::{RetryBudget, RetryBudgets};
pub use classify::{ByTrait, Classifier, Classify, Outcome, Verdict};
pub use deadline::Deadline;
pub use error::{AttemptEnd, AttemptRecord, ErrorKind, Failure, RetryError};
pub use policy::{
    BuildError, RetryPolicy, RetryPolicyBuilder, DEFAULT_ATTEMPT_TIMEOUT, DEFAULT_BACKOFF_BASE,
    DEFAULT_BACKOFF_MAX, DEFAULT_MAX_ATTEMPTS, DEFAULT_MIN_ATTEMPT_TIME, DEFAULT_RETRY_AFTER_CAP,
    DEFAULT_TOTAL,
};
pub use reconcile::{NoReconcile, Observation, Reconcile};
pub use run::{Call, ReplayGuard};
