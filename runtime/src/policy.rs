//! `RetryPolicy` and its builder: the limits of an operation, checked once when built.
//!
//! The builder refuses a policy that could retry forever (no attempt cap and no deadline) and
//! policies whose numbers contradict each other, so every policy in a program is bounded.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::backoff::Backoff;
use crate::budget::{RetryBudget, RetryBudgets};

/// Default attempt cap: one try and two retries. More rarely helps: a dependency that failed
/// three times in a row is down, and further retries only add load.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// Default deadline for the whole operation, attempts and waits together.
pub const DEFAULT_TOTAL: Duration = Duration::from_secs(30);
/// Default cap on one attempt; each attempt gets `min(cap, time left)`.
pub const DEFAULT_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default first backoff (before jitter).
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(100);
/// Default backoff ceiling.
pub const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(5);
/// Default ceiling on a server's `Retry-After` hint.
pub const DEFAULT_RETRY_AFTER_CAP: Duration = Duration::from_secs(60);
/// Default minimum time an attempt must be able to get; with less left, no attempt starts.
/// 50 ms is about one cross-region round trip: an attempt with less is almost surely doomed.
pub const DEFAULT_MIN_ATTEMPT_TIME: Duration = Duration::from_millis(50);

/// The limits and schedule of retried operations. Cheap to clone; share one per dependency.
///
/// ```
/// use std::time::Duration;
/// use timeoutlint_retry::{Backoff, Jitter, RetryPolicy};
///
/// let policy = RetryPolicy::builder()
///     .max_attempts(4)
///     .total(Duration::from_secs(5))
///     .attempt_timeout(Duration::from_secs(2))
///     .backoff(Backoff::exponential(Duration::from_millis(50), Duration::from_secs(1)).jitter(Jitter::Equal))
///     .build()
///     .expect("bounded policy");
/// assert_eq!(policy.max_attempts(), Some(4));
///
/// // Neither an attempt cap nor a deadline: refused.
/// assert!(RetryPolicy::builder().unlimited_attempts().no_total().build().is_err());
/// ```
#[derive(Clone, Debug)]
pub struct RetryPolicy {
    pub(crate) max_attempts: Option<u32>,
    pub(crate) total: Option<Duration>,
    pub(crate) attempt_timeout: Duration,
    pub(crate) backoff: Backoff,
    pub(crate) retry_after_cap: Duration,
    pub(crate) min_attempt_time: Duration,
    pub(crate) seed: Option<u64>,
    pub(crate) budget: Option<BudgetSource>,
}

#[derive(Clone, Debug)]
pub(crate) enum BudgetSource {
    One(Arc<RetryBudget>),
    Partitioned(Arc<RetryBudgets>),
}

impl BudgetSource {
    pub(crate) fn resolve(&self, partition: Option<&str>) -> Arc<RetryBudget> {
        match self {
            BudgetSource::One(budget) => Arc::clone(budget),
            BudgetSource::Partitioned(budgets) => budgets.get(partition.unwrap_or("")),
        }
    }
}

impl Default for RetryPolicy {
    /// The defaults listed in the crate README: 3 attempts, 30 s total, 10 s per attempt, full
    /// jitter from 100 ms to 5 s, `Retry-After` capped at 60 s, no budget.
    fn default() -> Self {
        Self {
            max_attempts: Some(DEFAULT_MAX_ATTEMPTS),
            total: Some(DEFAULT_TOTAL),
            attempt_timeout: DEFAULT_ATTEMPT_TIMEOUT,
            backoff: Backoff::exponential(DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_MAX),
            retry_after_cap: DEFAULT_RETRY_AFTER_CAP,
            min_attempt_time: DEFAULT_MIN_ATTEMPT_TIME,
            seed: None,
            budget: None,
        }
    }
}

impl RetryPolicy {
    /// A builder starting from the defaults.
    pub fn builder() -> RetryPolicyBuilder {
        RetryPolicyBuilder {
            policy: RetryPolicy::default(),
        }
    }

    /// The attempt cap (`None`: only the deadline limits attempts).
    #[must_use]
    pub fn max_attempts(&self) -> Option<u32> {
        self.max_attempts
    }

    /// The deadline of each operation, measured from its start.
    #[must_use]
    pub fn total(&self) -> Option<Duration> {
        self.total
    }

    /// The cap on one attempt.
    #[must_use]
    pub fn attempt_timeout(&self) -> Duration {
        self.attempt_timeout
    }

    /// The backoff schedule.
    #[must_use]
    pub fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// The ceiling on a `Retry-After` hint.
    #[must_use]
    pub fn retry_after_cap(&self) -> Duration {
        self.retry_after_cap
    }

    /// The least time an attempt must be able to get before it is started.
    #[must_use]
    pub fn min_attempt_time(&self) -> Duration {
        self.min_attempt_time
    }
}

/// Builds a [`RetryPolicy`]; see [`RetryPolicy::builder`].
#[derive(Clone, Debug)]
#[must_use]
pub struct RetryPolicyBuilder {
    policy: RetryPolicy,
}

impl RetryPolicyBuilder {
    /// At most `attempts` attempts in total (first try included).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.policy.max_attempts = Some(attempts);
        self
    }

    /// No attempt cap; the deadline alone bounds the operation.
    pub fn unlimited_attempts(mut self) -> Self {
        self.policy.max_attempts = None;
        self
    }

    /// The deadline of the whole operation: attempts, waits and reconciliation together.
    pub fn total(mut self, total: Duration) -> Self {
        self.policy.total = Some(total);
        self
    }

    /// No overall deadline; the attempt cap alone bounds the operation.
    pub fn no_total(mut self) -> Self {
        self.policy.total = None;
        self
    }

    /// The cap on one attempt; the attempt gets `min(cap, time left)`.
    pub fn attempt_timeout(mut self, timeout: Duration) -> Self {
        self.policy.attempt_timeout = timeout;
        self
    }

    /// The backoff schedule and jitter.
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.policy.backoff = backoff;
        self
    }

    /// Retry immediately (the wait is still cancellable and capped by the deadline).
    pub fn backoff_none(mut self) -> Self {
        self.policy.backoff = Backoff::none();
        self
    }

    /// A server hint longer than this fails the operation with `RetryAfterTooLong`.
    pub fn retry_after_cap(mut self, cap: Duration) -> Self {
        self.policy.retry_after_cap = cap;
        self
    }

    /// With less time than this left, no new attempt is started (`DeadlineExceeded`). The time
    /// left is checked when the attempt would start, after the wait: an executor that wakes
    /// late starts nothing short. Only after a wait the deadline cut to end at exactly this
    /// minimum is a tenth of it forgiven, for the timer's own lag.
    pub fn min_attempt_time(mut self, min: Duration) -> Self {
        self.policy.min_attempt_time = min;
        self
    }

    /// A fixed jitter seed, for reproducible schedules in tests.
    pub fn seed(mut self, seed: u64) -> Self {
        self.policy.seed = Some(seed);
        self
    }

    /// Share one retry budget between every operation run with this policy.
    pub fn budget(mut self, budget: Arc<RetryBudget>) -> Self {
        self.policy.budget = Some(BudgetSource::One(budget));
        self
    }

    /// Partitioned budgets; each operation picks its partition with `Call::partition` (the
    /// reqwest integration uses the request's host and port).
    pub fn budgets(mut self, budgets: Arc<RetryBudgets>) -> Self {
        self.policy.budget = Some(BudgetSource::Partitioned(budgets));
        self
    }

    /// Checks the policy.
    ///
    /// # Errors
    ///
    /// [`BuildError`] when the policy is unbounded or self-contradictory.
    pub fn build(self) -> Result<RetryPolicy, BuildError> {
        let p = self.policy;
        if p.max_attempts.is_none() && p.total.is_none() {
            return Err(BuildError::Unbounded);
        }
        if p.max_attempts == Some(0) {
            return Err(BuildError::ZeroAttempts);
        }
        if p.attempt_timeout.is_zero() || p.total.is_some_and(|t| t.is_zero()) {
            return Err(BuildError::ZeroTimeout);
        }
        if p.total.is_some_and(|t| t < p.min_attempt_time) {
            return Err(BuildError::TotalBelowMinAttemptTime);
        }
        Ok(p)
    }
}

/// Why a policy was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// Neither an attempt cap nor a deadline: the policy could retry forever.
    Unbounded,
    /// `max_attempts(0)`: the operation would never run.
    ZeroAttempts,
    /// A zero attempt timeout or a zero deadline: every attempt would fail at once.
    ZeroTimeout,
    /// The deadline is shorter than the minimum attempt time: no attempt could start.
    TotalBelowMinAttemptTime,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BuildError::Unbounded => {
                "retry policy has neither an attempt cap nor a deadline and could retry forever"
            }
            BuildError::ZeroAttempts => "retry policy allows zero attempts",
            BuildError::ZeroTimeout => "retry policy has a zero attempt timeout or deadline",
            BuildError::TotalBelowMinAttemptTime => {
                "retry policy deadline is shorter than its minimum attempt time"
            }
        })
    }
}

impl std::error::Error for BuildError {}
