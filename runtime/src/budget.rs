//! The shared retry budget: retries may add at most a fixed fraction to the load a service sees.
//!
//! TPS-style, as in Finagle and tower's `TpsBudget`: every logical call deposits `ratio` of a
//! retry, every retry withdraws a whole one, and a floor of `min_per_sec` retries per second is
//! always available so a quiet client can still retry. Deposits and withdrawals expire after a
//! sliding `window`, so the budget reflects recent traffic. When many callers fail at once the
//! budget runs dry and retries stop (`BudgetExhausted`), which is what keeps a retry storm from
//! multiplying an outage. Budgets are partitioned (per host, per service) by [`RetryBudgets`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// Number of slots the window is divided into; expiry is accurate to `window / SLOTS`.
const SLOTS: usize = 10;
/// Fixed-point unit: one retry costs `UNIT`, one logical call deposits `ratio * UNIT`.
const UNIT: i64 = 1000; // keep in step with the `1000.0` in `RetryBudget::new`

/// A retry budget shared by every operation that holds the same `Arc`.
///
/// ```
/// use std::time::Duration;
/// use timeoutlint_retry::RetryBudget;
///
/// let budget = RetryBudget::new(0.1, 0, Duration::from_secs(10));
/// for _ in 0..20 {
///     budget.deposit();
/// }
/// assert!(budget.try_withdraw());
/// assert!(budget.try_withdraw());
/// assert!(!budget.try_withdraw(), "20 calls at 10 % buy two retries");
/// ```
#[derive(Debug)]
pub struct RetryBudget {
    deposit: i64,
    reserve: i64,
    slot_width: Duration,
    state: Mutex<Slots>,
}

#[derive(Debug)]
struct Slots {
    origin: Instant,
    // The absolute slot number each entry currently holds; stale entries are reset on use.
    epoch: [u64; SLOTS],
    balance: [i64; SLOTS],
}

impl RetryBudget {
    /// A budget allowing retries up to `ratio` of logical calls, plus `min_per_sec` retries
    /// per second, measured over a sliding `window`.
    #[must_use]
    pub fn new(ratio: f32, min_per_sec: u32, window: Duration) -> Self {
        // Clamp the inputs: a negative ratio or a zero window would make the budget meaningless.
        let ratio = f64::from(ratio.clamp(0.0, 1000.0));
        let window = window.max(Duration::from_millis(SLOTS as u64));
        #[allow(clippy::cast_possible_truncation)]
        // Reason: ratio is clamped to [0, 1000], so ratio * UNIT fits an i64.
        let deposit = (ratio * 1000.0).round() as i64;
        let reserve = i64::from(min_per_sec)
            .saturating_mul(i64::try_from(window.as_secs()).unwrap_or(i64::MAX).max(1))
            .saturating_mul(UNIT);
        Self {
            deposit,
            reserve,
            slot_width: window / u32::try_from(SLOTS).unwrap_or(1),
            state: Mutex::new(Slots {
                origin: Instant::now(),
                epoch: [0; SLOTS],
                balance: [0; SLOTS],
            }),
        }
    }

    /// Records one logical call (a first attempt).
    pub fn deposit(&self) {
        self.add(self.deposit);
    }

    /// Takes one retry from the budget; `false` means the retry must not happen.
    pub fn try_withdraw(&self) -> bool {
        let mut slots = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let now = self.slot_at(&slots, Instant::now());
        if self.reserve + slots.sum(now) < UNIT {
            return false;
        }
        slots.add(now, -UNIT);
        true
    }

    /// How many whole retries the budget would allow right now.
    #[must_use]
    pub fn available(&self) -> u64 {
        let slots = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let now = self.slot_at(&slots, Instant::now());
        u64::try_from((self.reserve + slots.sum(now)) / UNIT).unwrap_or(0)
    }

    fn add(&self, amount: i64) {
        let mut slots = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let now = self.slot_at(&slots, Instant::now());
        slots.add(now, amount);
    }

    fn slot_at(&self, slots: &Slots, now: Instant) -> u64 {
        let elapsed = now.saturating_duration_since(slots.origin);
        u64::try_from(elapsed.as_nanos() / self.slot_width.as_nanos().max(1)).unwrap_or(u64::MAX)
    }
}

impl Default for RetryBudget {
    /// Ratio 0.1, floor 10 retries per second, 10 s window (the defaults of Finagle and tower).
    fn default() -> Self {
        Self::new(0.1, 10, Duration::from_secs(10))
    }
}

impl Slots {
    fn add(&mut self, slot: u64, amount: i64) {
        let index = usize::try_from(slot % SLOTS as u64).unwrap_or(0);
        if self.epoch[index] != slot {
            self.epoch[index] = slot;
            self.balance[index] = 0;
        }
        self.balance[index] += amount;
    }

    fn sum(&self, now: u64) -> i64 {
        let oldest = now.saturating_sub(SLOTS as u64 - 1);
        self.epoch
            .iter()
            .zip(self.balance.iter())
            .filter(|(epoch, _)| **epoch >= oldest && **epoch <= now)
            .map(|(_, balance)| *balance)
            .sum()
    }
}

/// Retry budgets partitioned by key (host, service, tenant): one slow dependency cannot spend
/// the retries of another.
///
/// ```
/// use std::sync::Arc;
/// use timeoutlint_retry::RetryBudgets;
///
/// let budgets = RetryBudgets::default();
/// let a = budgets.get("api.example.com:443");
/// assert!(Arc::ptr_eq(&a, &budgets.get("api.example.com:443")));
/// assert!(!Arc::ptr_eq(&a, &budgets.get("db.example.com:5432")));
/// ```
#[derive(Debug)]
pub struct RetryBudgets {
    ratio: f32,
    min_per_sec: u32,
    window: Duration,
    partitions: Mutex<HashMap<String, Arc<RetryBudget>>>,
}

impl RetryBudgets {
    /// Partitions that each behave like `RetryBudget::new(ratio, min_per_sec, window)`.
    #[must_use]
    pub fn new(ratio: f32, min_per_sec: u32, window: Duration) -> Self {
        Self {
            ratio,
            min_per_sec,
            window,
            partitions: Mutex::new(HashMap::new()),
        }
    }

    /// The budget of `partition`, created on first use.
    pub fn get(&self, partition: &str) -> Arc<RetryBudget> {
        let mut map = self
            .partitions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(budget) = map.get(partition) {
            return Arc::clone(budget);
        }
        let budget = Arc::new(RetryBudget::new(self.ratio, self.min_per_sec, self.window));
        map.insert(partition.to_owned(), Arc::clone(&budget));
        budget
    }
}

impl Default for RetryBudgets {
    fn default() -> Self {
        Self::new(0.1, 10, Duration::from_secs(10))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn deposits_expire_after_the_window() {
        let budget = RetryBudget::new(1.0, 0, Duration::from_secs(10));
        budget.deposit();
        tokio::time::advance(Duration::from_secs(11)).await;
        assert!(!budget.try_withdraw());
        budget.deposit();
        assert!(budget.try_withdraw());
    }

    #[tokio::test(start_paused = true)]
    async fn the_floor_refills_as_the_window_slides() {
        let budget = RetryBudget::new(0.0, 1, Duration::from_secs(10));
        let mut granted = 0;
        while budget.try_withdraw() {
            granted += 1;
        }
        assert_eq!(granted, 10);
        tokio::time::advance(Duration::from_secs(10)).await;
        assert!(budget.try_withdraw());
    }
}
