//! How long to wait between attempts: exponential backoff with explicit jitter.
//!
//! Jitter is never implicit: the policy says which kind (full by default), and the random source
//! is a seedable splitmix64 so tests can pin the exact delays. The cap on the wait by the time
//! left is applied by the engine, not here: this module knows nothing of deadlines.

use std::time::Duration;

/// How the computed backoff is randomised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Jitter {
    /// Uniform in `[0, backoff]`: spreads synchronized clients the most (the default).
    #[default]
    Full,
    /// `backoff / 2` plus uniform in `[0, backoff / 2]`: never waits less than half.
    Equal,
    /// `min(max, uniform[base, previous * 3])`, the "decorrelated" variant from the AWS
    /// architecture blog; each delay depends on the one before.
    Decorrelated,
    /// Exactly the computed backoff. Synchronised clients stay synchronised; use with care.
    None,
}

/// The backoff schedule: `base * 2^(retry - 1)` capped at `max`, then jittered.
///
/// ```
/// use std::time::Duration;
/// use timeoutlint_retry::{Backoff, Jitter};
///
/// let backoff = Backoff::exponential(Duration::from_millis(100), Duration::from_secs(5))
///     .jitter(Jitter::None);
/// assert_eq!(backoff.nominal(1), Duration::from_millis(100));
/// assert_eq!(backoff.nominal(3), Duration::from_millis(400));
/// assert_eq!(backoff.nominal(30), Duration::from_secs(5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    base: Duration,
    max: Duration,
    factor: u32,
    jitter: Jitter,
}

impl Backoff {
    /// Doubling backoff from `base`, never more than `max`, full jitter.
    #[must_use]
    pub fn exponential(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max: max.max(base),
            factor: 2,
            jitter: Jitter::Full,
        }
    }

    /// The same delay before every retry, full jitter unless changed.
    #[must_use]
    pub fn constant(delay: Duration) -> Self {
        Self {
            base: delay,
            max: delay,
            factor: 1,
            jitter: Jitter::Full,
        }
    }

    /// No wait between attempts (still capped and still cancellable, but zero).
    #[must_use]
    pub fn none() -> Self {
        Self {
            base: Duration::ZERO,
            max: Duration::ZERO,
            factor: 1,
            jitter: Jitter::None,
        }
    }

    /// Sets the jitter.
    #[must_use]
    pub fn jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// Sets the growth factor (2 by default for `exponential`).
    #[must_use]
    pub fn factor(mut self, factor: u32) -> Self {
        self.factor = factor.max(1);
        self
    }

    /// The jitter in use.
    #[must_use]
    pub fn jitter_kind(&self) -> Jitter {
        self.jitter
    }

    /// The un-jittered delay before retry number `retry` (1 = the first retry).
    #[must_use]
    pub fn nominal(&self, retry: u32) -> Duration {
        let exponent = retry.saturating_sub(1).min(63);
        let multiplier = u64::from(self.factor).saturating_pow(exponent);
        let nanos = u64::try_from(self.base.as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_mul(multiplier);
        Duration::from_nanos(nanos).min(self.max)
    }

    /// The jittered delay before retry number `retry`; `previous` is the last delay (used by
    /// decorrelated jitter).
    pub(crate) fn delay(&self, retry: u32, previous: Duration, rng: &mut Rng) -> Duration {
        let nominal = self.nominal(retry);
        match self.jitter {
            Jitter::None => nominal,
            Jitter::Full => rng.between(Duration::ZERO, nominal),
            Jitter::Equal => nominal / 2 + rng.between(Duration::ZERO, nominal / 2),
            Jitter::Decorrelated => {
                let previous = if previous.is_zero() {
                    self.base
                } else {
                    previous
                };
                rng.between(self.base, previous.saturating_mul(3))
                    .min(self.max)
            }
        }
    }
}

/// One step of splitmix64 (Steele, Lea, Flood 2014): tiny, fast, good enough for jitter.
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seedable random source for jitter.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn seeded(seed: u64) -> Self {
        Self(seed)
    }

    /// A seed that differs between calls and processes, for policies without a fixed seed.
    pub(crate) fn from_entropy() -> Self {
        let key = crate::attempt::IdempotencyKey::generate();
        let mut seed = 0u64;
        for byte in key.as_str().bytes().take(16) {
            seed = seed.rotate_left(4) ^ u64::from(byte);
        }
        let mut rng = Self(seed);
        let _ = rng.next_u64();
        rng
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }

    /// Uniform in `[low, high]` at nanosecond resolution.
    pub(crate) fn between(&mut self, low: Duration, high: Duration) -> Duration {
        if high <= low {
            return low;
        }
        let span = u64::try_from(high.saturating_sub(low).as_nanos()).unwrap_or(u64::MAX);
        let offset = if span == u64::MAX {
            self.next_u64()
        } else {
            self.next_u64() % (span + 1)
        };
        low + Duration::from_nanos(offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jittered_delays_stay_in_their_ranges() {
        let base = Duration::from_millis(100);
        let max = Duration::from_secs(5);
        let mut rng = Rng::seeded(7);
        for retry in 1..10 {
            let nominal = Backoff::exponential(base, max).nominal(retry);
            let full = Backoff::exponential(base, max).delay(retry, Duration::ZERO, &mut rng);
            assert!(full <= nominal);
            let equal = Backoff::exponential(base, max).jitter(Jitter::Equal).delay(
                retry,
                Duration::ZERO,
                &mut rng,
            );
            assert!(equal >= nominal / 2 && equal <= nominal);
            let decorrelated = Backoff::exponential(base, max)
                .jitter(Jitter::Decorrelated)
                .delay(retry, nominal, &mut rng);
            assert!(decorrelated >= base && decorrelated <= max);
        }
    }

    #[test]
    fn same_seed_same_delays() {
        let backoff = Backoff::exponential(Duration::from_millis(10), Duration::from_secs(1));
        let run = |seed| {
            let mut rng = Rng::seeded(seed);
            (1..6)
                .map(|r| backoff.delay(r, Duration::ZERO, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(42), run(42));
        assert_ne!(run(42), run(43));
    }
}
