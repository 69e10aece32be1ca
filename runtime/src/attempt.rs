//! What one attempt knows about itself (`Attempt`) and the idempotency key shared by all attempts.
//!
//! The key is generated once per operation and handed to every attempt, so a server that
//! deduplicates on it sees one logical request however many times it is sent.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crate::deadline::Deadline;

/// The context of one attempt, passed to the operation by value.
///
/// Use `timeout` as the attempt's own I/O timeout (for example `RequestBuilder::timeout`) so
/// the remote side learns the budget too, and send `idempotency_key` with writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// 1 for the first attempt, 2 for the first retry, and so on.
    pub number: u32,
    /// The attempt cap of the policy, `None` when only the deadline limits attempts.
    pub max_attempts: Option<u32>,
    /// The deadline of the whole operation.
    pub deadline: Deadline,
    /// This attempt's timeout: `min(attempt cap, time left)`; the runtime enforces it as well.
    pub timeout: Duration,
    /// The same key on every attempt of one operation.
    pub idempotency_key: IdempotencyKey,
}

impl Attempt {
    /// Whether this is the first attempt (not a retry).
    #[must_use]
    pub fn is_first(&self) -> bool {
        self.number == 1
    }

    /// Whether the policy allows no attempt after this one.
    #[must_use]
    pub fn is_last(&self) -> bool {
        self.max_attempts.is_some_and(|max| self.number >= max)
    }
}

/// An idempotency key: 128 random bits as 32 lowercase hex characters, or a caller's own key.
///
/// ```
/// use timeoutlint_retry::IdempotencyKey;
///
/// let key = IdempotencyKey::generate();
/// assert_eq!(key.as_str().len(), 32);
/// assert_ne!(key, IdempotencyKey::generate());
/// let mine = IdempotencyKey::from("order-42-payment");
/// assert_eq!(mine.as_str(), "order-42-payment");
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(KeyRepr);

// A generated key stays inline (no allocation on the hot path); a caller's key is a `String`.
#[derive(Clone, PartialEq, Eq, Hash)]
enum KeyRepr {
    Generated([u8; 32]),
    Custom(String),
}

impl IdempotencyKey {
    /// A fresh random key.
    ///
    /// The bits come from a process seed drawn from the OS (through std's `RandomState`) mixed
    /// with a counter by splitmix64: unique per process and unpredictable across processes,
    /// which is what deduplication needs. It is not meant as a secret.
    #[must_use]
    pub fn generate() -> Self {
        static SEED: OnceLock<u64> = OnceLock::new();
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let seed = *SEED.get_or_init(|| {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            hasher.finish()
        });
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut state = seed ^ n.wrapping_mul(0xA076_1D64_78BD_642F);
        let hi = crate::backoff::splitmix64(&mut state);
        let lo = crate::backoff::splitmix64(&mut state);
        let bits = (u128::from(hi) << 64) | u128::from(lo);
        let mut out = [0u8; 32];
        for (i, digit) in out.iter_mut().enumerate() {
            // Nibble i, most significant first; the mask keeps the index below 16.
            let nibble = (bits >> (124 - 4 * i)) & 0xf;
            *digit = HEX[usize::try_from(nibble).unwrap_or(0)];
        }
        Self(KeyRepr::Generated(out))
    }

    /// The key as text, ready for a header value or gRPC metadata.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Only ASCII hex digits are ever written into the array.
            KeyRepr::Generated(bytes) => std::str::from_utf8(bytes).unwrap_or_default(),
            KeyRepr::Custom(s) => s,
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl From<String> for IdempotencyKey {
    fn from(key: String) -> Self {
        Self(KeyRepr::Custom(key))
    }
}

impl From<&str> for IdempotencyKey {
    fn from(key: &str) -> Self {
        Self(KeyRepr::Custom(key.to_owned()))
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IdempotencyKey({:?})", self.as_str())
    }
}
