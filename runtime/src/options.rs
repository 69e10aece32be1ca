//! The settings one operation adds to its policy, shared by the async and blocking flavours.
//!
//! [`Options`] holds them and the engine reads them; `option_setters!` writes the builder
//! methods once for both [`crate::Call`] and [`crate::BlockingCall`], so the two cannot drift
//! apart. Every setter keeps the builder's type, so a call can be configured conditionally.

use crate::attempt::IdempotencyKey;
use crate::deadline::Deadline;
use crate::run::ReplayGuard;

/// One operation's settings on top of its policy.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// Whether a replay is safe (default `true`).
    pub(crate) idempotent: bool,
    /// A caller's deadline; the earlier of it and the policy's `total` applies.
    pub(crate) deadline: Option<Deadline>,
    /// The caller's idempotency key; generated when `None`.
    pub(crate) key: Option<IdempotencyKey>,
    /// The budget partition for partitioned budgets.
    pub(crate) partition: Option<String>,
    /// Cleared by an operation that consumed what it cannot rebuild.
    pub(crate) replay: Option<ReplayGuard>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            idempotent: true,
            deadline: None,
            key: None,
            partition: None,
            replay: None,
        }
    }
}

impl Options {
    /// Whether the operation may still be replayed.
    pub(crate) fn replayable(&self) -> bool {
        self.replay
            .as_ref()
            .map_or(true, ReplayGuard::is_replayable)
    }
}

/// The setters of [`Options`], for a builder with a field `options: Options`.
macro_rules! option_setters {
    () => {
        /// Whether the operation is safe to replay (default `true`). With `false`, only
        /// `NotApplied` and `Throttled` outcomes are retried, or ambiguous ones that
        /// reconciliation proved not applied.
        pub fn idempotent(mut self, idempotent: bool) -> Self {
            self.options.idempotent = idempotent;
            self
        }

        /// A caller's deadline (for example propagated from an incoming request); the
        /// operation uses the earlier of this and the policy's `total`.
        pub fn deadline(mut self, deadline: $crate::Deadline) -> Self {
            self.options.deadline = Some(deadline);
            self
        }

        /// Use this idempotency key instead of a generated one (for example a business key
        /// that must survive process restarts). Every attempt sees it as
        /// [`Attempt::idempotency_key`](crate::Attempt::idempotency_key). The same spelling
        /// sets the key on `Call`, `BlockingCall` and the HTTP send.
        pub fn with_key(mut self, key: impl Into<$crate::IdempotencyKey>) -> Self {
            self.options.key = Some(key.into());
            self
        }

        /// Former name of `with_key`; on the HTTP send, `idempotency_key()` means "send the
        /// key in a header", so one name had two meanings.
        #[deprecated(note = "one spelling for one idea: use `with_key(key)`")]
        pub fn idempotency_key(self, key: impl Into<$crate::IdempotencyKey>) -> Self {
            self.with_key(key)
        }

        /// The budget partition for policies built with `budgets` (host, service, tenant).
        pub fn partition(mut self, partition: impl Into<String>) -> Self {
            self.options.partition = Some(partition.into());
            self
        }

        /// The replay guard the operation clears when it cannot rebuild its request.
        pub fn replay_guard(mut self, guard: $crate::ReplayGuard) -> Self {
            self.options.replay = Some(guard);
            self
        }
    };
}

pub(crate) use option_setters;
