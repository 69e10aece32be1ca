//! Library knowledge: `rules/apis.toml`, embedded at build time, as typed data.
//!
//! Rules and the analysis ask this module "is this resolved path a sleep / a deadline wrapper /
//! a retry combinator?" instead of hard-coding names, so a user's configuration can teach the
//! linter an in-house helper without a code change. Nothing here walks syntax.

use serde::Deserialize;

/// The embedded defaults.
pub const DEFAULT_APIS: &str = include_str!("../rules/apis.toml");

/// All library knowledge.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Apis {
    /// Sleep functions.
    #[serde(default)]
    pub sleeps: Sleeps,
    /// Overall-deadline wrappers.
    #[serde(default)]
    pub deadlines: Deadlines,
    /// Retry combinators and evidence.
    #[serde(default)]
    pub retry: Retry,
    /// Cancellation sources.
    #[serde(default)]
    pub cancellation: Cancellation,
    /// Clients and the timeouts they carry.
    #[serde(default)]
    pub clients: Clients,
}

/// `[clients]`: how clients are built and which of their timeouts bound one attempt.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Clients {
    /// Calls that start building a client.
    #[serde(default)]
    pub builders: Vec<String>,
    /// Methods that start a request on a client.
    #[serde(default)]
    pub requests: Vec<String>,
    /// Methods that set a per-request, header or read timeout.
    #[serde(default)]
    pub timeouts: Vec<String>,
    /// Connection-setup timeouts, never counted.
    #[serde(default)]
    pub connection_only: Vec<String>,
    /// Constructors with a built-in request timeout.
    #[serde(default)]
    pub default_timeouts: Vec<DefaultTimeout>,
    /// Layers that time out each call of the wrapped service.
    #[serde(default)]
    pub timeout_layers: Vec<String>,
    /// Request-configuration methods that make the library retry by itself.
    #[serde(default)]
    pub retry_counts: Vec<String>,
    /// Request-configuration methods that bound all attempts together.
    #[serde(default)]
    pub totals: Vec<String>,
    /// Calls that time out only the future they wrap.
    #[serde(default)]
    pub attempt_timers: Vec<String>,
}

/// A constructor whose client times requests out by default.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultTimeout {
    /// Full path.
    pub path: String,
    /// The default, in seconds.
    pub secs: u64,
}

/// `[sleeps]`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Sleeps {
    /// Async sleeps (cancelled by drop).
    #[serde(default)]
    pub r#async: Vec<String>,
    /// Thread-blocking sleeps.
    #[serde(default)]
    pub blocking: Vec<String>,
}

/// `[deadlines]`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Deadlines {
    /// Wrappers whose last argument runs under one bound.
    #[serde(default)]
    pub wrappers: Vec<String>,
}

/// One function-style combinator.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryCall {
    /// Full path.
    pub path: String,
    /// Index of the backoff-strategy argument, if it has one.
    #[serde(default)]
    pub strategy: Option<usize>,
}

/// One method-style combinator.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryMethod {
    /// Method name.
    pub name: String,
    /// Crate that must be imported in the file for the method to count.
    #[serde(rename = "crate")]
    pub krate: String,
}

/// `[retry]`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Retry {
    /// Function-style combinators.
    #[serde(default)]
    pub calls: Vec<RetryCall>,
    /// Method-style combinators.
    #[serde(default)]
    pub methods: Vec<RetryMethod>,
    /// Words that show retry intent.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// Calls that bound a loop.
    #[serde(default)]
    pub bounding_methods: Vec<String>,
}

/// `[cancellation]`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Cancellation {
    /// Types.
    #[serde(default)]
    pub types: Vec<String>,
    /// Constructors.
    #[serde(default)]
    pub constructors: Vec<String>,
    /// Check methods.
    #[serde(default)]
    pub checks: Vec<String>,
    /// Identifier words.
    #[serde(default)]
    pub names: Vec<String>,
}

impl Apis {
    /// The built-in knowledge.
    #[must_use]
    pub fn builtin() -> Self {
        Self::parse(DEFAULT_APIS).expect("rules/apis.toml is valid (checked by a test)")
    }

    /// Parse a TOML document in the `apis.toml` schema.
    pub fn parse(text: &str) -> Result<Self, toml::de::Error> {
        toml::from_str(text)
    }

    /// Add another document's entries to these.
    pub fn extend(&mut self, other: Apis) {
        self.sleeps.r#async.extend(other.sleeps.r#async);
        self.sleeps.blocking.extend(other.sleeps.blocking);
        self.deadlines.wrappers.extend(other.deadlines.wrappers);
        self.retry.calls.extend(other.retry.calls);
        self.retry.methods.extend(other.retry.methods);
        self.retry.evidence.extend(other.retry.evidence);
        self.retry
            .bounding_methods
            .extend(other.retry.bounding_methods);
        self.cancellation.types.extend(other.cancellation.types);
        self.cancellation
            .constructors
            .extend(other.cancellation.constructors);
        self.cancellation.checks.extend(other.cancellation.checks);
        self.cancellation.names.extend(other.cancellation.names);
        let (c, o) = (&mut self.clients, other.clients);
        c.builders.extend(o.builders);
        c.requests.extend(o.requests);
        c.timeouts.extend(o.timeouts);
        c.connection_only.extend(o.connection_only);
        c.default_timeouts.extend(o.default_timeouts);
        c.timeout_layers.extend(o.timeout_layers);
        c.retry_counts.extend(o.retry_counts);
        c.totals.extend(o.totals);
        c.attempt_timers.extend(o.attempt_timers);
    }

    /// Is `path` (resolved) a known async or blocking sleep? Returns `Some(true)` for blocking.
    #[must_use]
    pub fn sleep_kind(&self, path: &str) -> Option<bool> {
        if self.sleeps.blocking.iter().any(|p| p == path) {
            Some(true)
        } else if self.sleeps.r#async.iter().any(|p| p == path) {
            Some(false)
        } else {
            None
        }
    }

    /// Is `path` an overall-deadline wrapper?
    #[must_use]
    pub fn is_deadline_wrapper(&self, path: &str) -> bool {
        self.deadlines.wrappers.iter().any(|p| p == path)
    }

    /// The function-style combinator at `path`.
    #[must_use]
    pub fn retry_call(&self, path: &str) -> Option<&RetryCall> {
        self.retry.calls.iter().find(|c| c.path == path)
    }

    /// Is `word` (lowercase) retry evidence?
    #[must_use]
    pub fn is_evidence(&self, word: &str) -> bool {
        self.retry.evidence.iter().any(|w| w == word)
    }

    /// Words the prefilter must look for: for every path this knowledge can match, the segment
    /// that must appear in the text for the call to be written at all. That is the type for an
    /// associated function (`Timer::after` can only be reached through `Timer` or an alias whose
    /// `use` names it) and the function name otherwise (a `use` or the call spells it).
    #[must_use]
    pub fn trigger_words(&self) -> Vec<String> {
        let mut words: Vec<String> = Vec::new();
        let key = |p: &String| {
            let segs: Vec<&str> = p.split("::").collect();
            let n = segs.len();
            let seg = if n >= 2 && segs[n - 2].starts_with(|c: char| c.is_ascii_uppercase()) {
                segs[n - 2]
            } else {
                segs[n - 1]
            };
            seg.to_ascii_lowercase()
        };
        words.extend(self.sleeps.r#async.iter().map(key));
        words.extend(self.sleeps.blocking.iter().map(key));
        words.extend(self.retry.calls.iter().map(|c| key(&c.path)));
        words.extend(
            self.retry
                .methods
                .iter()
                .map(|m| m.name.to_ascii_lowercase()),
        );
        words.extend(self.retry.evidence.iter().map(|w| w.to_ascii_lowercase()));
        // A client timeout is only ever set through one of these method names.
        words.extend(self.clients.timeouts.iter().map(|w| w.to_ascii_lowercase()));
        words.extend(self.clients.timeout_layers.iter().map(key));
        words.extend(self.clients.default_timeouts.iter().map(|d| key(&d.path)));
        words.extend(self.clients.attempt_timers.iter().map(key));
        words.sort();
        words.dedup();
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_parses_and_knows_tokio() {
        let apis = Apis::builtin();
        assert_eq!(apis.sleep_kind("tokio::time::sleep"), Some(false));
        assert_eq!(apis.sleep_kind("std::thread::sleep"), Some(true));
        assert!(apis.is_deadline_wrapper("tokio::time::timeout"));
        assert!(apis.trigger_words().contains(&"retry".to_string()));
    }
}
