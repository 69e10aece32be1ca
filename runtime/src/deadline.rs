//! `Deadline`: the one point in time that caps every attempt and every wait of an operation.
//!
//! Time comes from tokio's clock (`tokio::time::Instant`), so tests that pause tokio's clock see
//! exact, deterministic deadlines. The blocking flavour reads the same type through
//! [`Deadline::remaining_std`], which uses the standard clock that tokio's clock is built on.

use std::time::Duration;

use tokio::time::Instant;

/// A point in time after which no attempt starts and no wait continues.
///
/// A `Deadline` may also be "never" (no overall time limit); the policy builder only allows that
/// together with an attempt cap.
///
/// ```
/// use std::time::Duration;
/// use timeoutlint_retry::Deadline;
///
/// let deadline = Deadline::after(Duration::from_secs(2));
/// assert!(deadline.remaining() <= Duration::from_secs(2));
/// assert!(Deadline::never().remaining() == Duration::MAX);
/// ```
// No `Ord`: `Option`'s order would put `never` first; `earliest` says what is meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Deadline {
    at: Option<Instant>,
}

impl Deadline {
    /// A deadline `duration` from now on tokio's clock.
    #[must_use]
    pub fn after(duration: Duration) -> Self {
        let now = Instant::now();
        // `checked_add` fails only for absurd durations; treat those as "no deadline".
        Self {
            at: now.checked_add(duration),
        }
    }

    /// A deadline at `instant`.
    #[must_use]
    pub fn at(instant: Instant) -> Self {
        Self { at: Some(instant) }
    }

    /// No deadline at all.
    #[must_use]
    pub const fn never() -> Self {
        Self { at: None }
    }

    /// The instant of the deadline, or `None` for [`Deadline::never`].
    #[must_use]
    pub fn instant(&self) -> Option<Instant> {
        self.at
    }

    /// Whether this deadline is a real point in time (not [`Deadline::never`]).
    #[must_use]
    pub fn is_bounded(&self) -> bool {
        self.at.is_some()
    }

    /// Time left until the deadline (zero once passed, `Duration::MAX` for `never`).
    #[must_use]
    pub fn remaining(&self) -> Duration {
        self.remaining_at(Instant::now())
    }

    /// Time left on the standard clock; what the blocking flavour uses.
    #[must_use]
    pub fn remaining_std(&self) -> Duration {
        self.remaining_at(Instant::from_std(std::time::Instant::now()))
    }

    /// Whether the deadline has passed.
    #[must_use]
    pub fn is_expired(&self) -> bool {
        self.at.is_some() && self.remaining().is_zero()
    }

    /// The earlier of two deadlines (`never` loses to any real deadline).
    #[must_use]
    pub fn earliest(self, other: Deadline) -> Deadline {
        match (self.at, other.at) {
            (Some(a), Some(b)) => Deadline { at: Some(a.min(b)) },
            (Some(_), None) => self,
            (None, _) => other,
        }
    }

    pub(crate) fn remaining_at(&self, now: Instant) -> Duration {
        match self.at {
            Some(at) => at.saturating_duration_since(now),
            None => Duration::MAX,
        }
    }
}
