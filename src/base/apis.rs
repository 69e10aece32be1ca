//! Library knowledge: `rules/apis.toml`, embedded at build time, as typed data.
//!
//! Rules and the analysis ask this module "is this resolved path a sleep / a deadline wrapper /
//! a retry combinator?" instead of hard-coding names, so a user's configuration can teach the
//! linter an in-house helper without a code change. Nothing here walks syntax.

use serde::Deserialize;

/// The embedded defaults.
pub const DEFAULT_APIS: &str = include_str!("../../rules/apis.toml");

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
    /// What backoff strategies say about their attempts.
    #[serde(default)]
    pub strategies: Strategies,
    /// Cancellation sources.
    #[serde(default)]
    pub cancellation: Cancellation,
    /// Non-idempotent requests and idempotency keys.
    #[serde(default)]
    pub requests: Requests,
    /// Single-use request bodies.
    #[serde(default)]
    pub bodies: Bodies,
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
    /// Types (resolved paths) of a request not yet sent: a parameter of one of these types is a
    /// request whose own `.timeout(d)` bounds one attempt, like one written in the chain.
    #[serde(default)]
    pub request_types: Vec<String>,
    /// Calls (resolved paths) that wrap a message into a request not yet sent
    /// (`tonic::Request::new(msg)`): a timeout method on the result is that request's own.
    #[serde(default)]
    pub request_constructors: Vec<String>,
    /// Methods that turn a message into a request not yet sent (tonic's `msg.into_request()`).
    #[serde(default)]
    pub request_conversions: Vec<String>,
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
    /// Words of a compared operand that make the comparison one against a bound on attempts,
    /// time or budget (`n < max_reconnects`), not merely one of a count (`delivery_attempt > 0`).
    #[serde(default)]
    pub limit_words: Vec<String>,
    /// Calls that make a loop an in-memory retry (compare-and-swap, spin), never a retry site.
    #[serde(default)]
    pub local_retry_calls: Vec<String>,
    /// Calls that take the next item of a listener or stream: a loop going round after one of
    /// them failed moves on, it does not repeat the operation.
    #[serde(default)]
    pub next_item_calls: Vec<String>,
    /// First words of such calls (`read_body`, `receive_message`, `recv_timeout`), for the ones
    /// a crate names itself.
    #[serde(default)]
    pub next_item_verbs: Vec<String>,
    /// Type names whose presence in a client's construction makes the client retry by itself.
    #[serde(default)]
    pub retrying_clients: Vec<String>,
    /// Crate-name prefixes of SDKs whose clients (`<crate>..::Client::new(..)`) retry by
    /// themselves by default.
    #[serde(default)]
    pub retrying_sdks: Vec<String>,
    /// Text that, anywhere in a file, turns such an SDK's own retries off.
    #[serde(default)]
    pub retrying_sdk_off: Vec<String>,
}

/// A strategy constructor capped by default.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CappedStrategy {
    /// Its last two path segments (`ExponentialBuilder::default`).
    pub name: String,
    /// Retries after the first attempt.
    pub retries: u64,
}

/// `[strategies]`: what a backoff strategy or a combinator's configuration chain says about its
/// attempts.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Strategies {
    /// Methods or fields that set the retries after the first attempt.
    #[serde(default)]
    pub retry_caps: Vec<String>,
    /// Methods or fields that set the attempts, the first one included.
    #[serde(default)]
    pub attempt_caps: Vec<String>,
    /// Methods that switch the attempt cap off.
    #[serde(default)]
    pub uncapped: Vec<String>,
    /// Methods or fields that bound the total time of all attempts.
    #[serde(default)]
    pub totals: Vec<String>,
    /// Constructors of strategies that never stop by themselves.
    #[serde(default)]
    pub endless: Vec<String>,
    /// Constructors of strategies capped by default.
    #[serde(default)]
    pub capped: Vec<CappedStrategy>,
    /// Constructors (and struct types) of strategies bounded by default by the total time.
    #[serde(default)]
    pub timed: Vec<String>,
}

/// `[cancellation]`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Cancellation {
    /// Types that are always a cancellation source.
    #[serde(default)]
    pub types: Vec<String>,
    /// Types that are one only under a cancellation-like name.
    #[serde(default)]
    pub weak_types: Vec<String>,
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

/// `[requests]`: what makes a request a write a retry can duplicate, and what makes it safe.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Requests {
    /// Builder method names and `Method::` constants (lowercase) of non-idempotent methods.
    #[serde(default)]
    pub methods: Vec<String>,
    /// Resolved paths of free functions that start such a request.
    #[serde(default)]
    pub functions: Vec<String>,
    /// Idempotency header names, lowercase.
    #[serde(default)]
    pub idempotency_headers: Vec<String>,
    /// Methods that set a header (name, value).
    #[serde(default)]
    pub header_setters: Vec<String>,
    /// Tokens of a value that is fresh on every evaluation.
    #[serde(default)]
    pub key_generators: Vec<String>,
    /// Tokens of a method or idempotency gate.
    #[serde(default)]
    pub method_gates: Vec<String>,
    /// Tokens of a failure test proving non-delivery.
    #[serde(default)]
    pub not_delivered: Vec<String>,
    /// Tokens of a failure test that includes ambiguous outcomes.
    #[serde(default)]
    pub ambiguous: Vec<String>,
    /// Calls that turn a response's status into an error (`error_for_status`): without one, an
    /// error that a retry predicate requires to carry a status never happens.
    #[serde(default)]
    pub status_errors: Vec<String>,
    /// Middleware types that retry every request of the client they wrap.
    #[serde(default)]
    pub retrying_middleware: Vec<String>,
    /// Constructors of such middleware that take the crate's own strategy: what it re-sends
    /// is the crate's decision (`new_with_policy_and_strategy(policy, SafeResends { .. })`).
    #[serde(default)]
    pub middleware_strategy_constructors: Vec<String>,
    /// Tokens that mark gRPC code.
    #[serde(default)]
    pub grpc: Vec<String>,
    /// URL words of a POST that exchanges credentials rather than writes.
    #[serde(default)]
    pub credential_exchange: Vec<String>,
}

/// `[bodies]`: what makes a request body single-use.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Bodies {
    /// Constructors of readers, files, cursors and streams (text of a `let` initialiser).
    #[serde(default)]
    pub readers: Vec<String>,
    /// Constructors of streaming bodies.
    #[serde(default)]
    pub streams: Vec<String>,
    /// Calls whose arguments are sent.
    #[serde(default)]
    pub sinks: Vec<String>,
    /// Tokens of an empty replacement body.
    #[serde(default)]
    pub empty: Vec<String>,
    /// Methods that rewind a reader.
    #[serde(default)]
    pub rewinds: Vec<String>,
    /// Identifier words of a request or body receiver of `try_clone()`.
    #[serde(default)]
    pub cloned: Vec<String>,
}

impl Requests {
    fn extend(&mut self, o: Requests) {
        self.methods.extend(o.methods);
        self.functions.extend(o.functions);
        self.idempotency_headers.extend(o.idempotency_headers);
        self.header_setters.extend(o.header_setters);
        self.key_generators.extend(o.key_generators);
        self.method_gates.extend(o.method_gates);
        self.not_delivered.extend(o.not_delivered);
        self.ambiguous.extend(o.ambiguous);
        self.status_errors.extend(o.status_errors);
        self.retrying_middleware.extend(o.retrying_middleware);
        self.middleware_strategy_constructors
            .extend(o.middleware_strategy_constructors);
        self.credential_exchange.extend(o.credential_exchange);
        self.grpc.extend(o.grpc);
    }
}

impl Bodies {
    fn extend(&mut self, o: Bodies) {
        self.readers.extend(o.readers);
        self.streams.extend(o.streams);
        self.sinks.extend(o.sinks);
        self.empty.extend(o.empty);
        self.rewinds.extend(o.rewinds);
        self.cloned.extend(o.cloned);
    }
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
        self.retry.limit_words.extend(other.retry.limit_words);
        self.retry
            .retrying_clients
            .extend(other.retry.retrying_clients);
        self.retry.retrying_sdks.extend(other.retry.retrying_sdks);
        self.retry
            .retrying_sdk_off
            .extend(other.retry.retrying_sdk_off);
        let (st, o) = (&mut self.strategies, other.strategies);
        st.retry_caps.extend(o.retry_caps);
        st.attempt_caps.extend(o.attempt_caps);
        st.uncapped.extend(o.uncapped);
        st.totals.extend(o.totals);
        st.endless.extend(o.endless);
        st.capped.extend(o.capped);
        st.timed.extend(o.timed);
        self.cancellation.types.extend(other.cancellation.types);
        self.cancellation
            .weak_types
            .extend(other.cancellation.weak_types);
        self.cancellation
            .constructors
            .extend(other.cancellation.constructors);
        self.cancellation.checks.extend(other.cancellation.checks);
        self.cancellation.names.extend(other.cancellation.names);
        self.requests.extend(other.requests);
        self.bodies.extend(other.bodies);
        let (c, o) = (&mut self.clients, other.clients);
        c.builders.extend(o.builders);
        c.requests.extend(o.requests);
        c.request_types.extend(o.request_types);
        c.request_constructors.extend(o.request_constructors);
        c.request_conversions.extend(o.request_conversions);
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

    /// Every word that can make a retry site: evidence words, `sleep` (a loop with a sleep is
    /// evidence too), and the word each combinator must be written with.
    #[must_use]
    pub fn retry_site_words(&self) -> Vec<String> {
        let mut words: Vec<String> = self
            .retry
            .evidence
            .iter()
            .map(|w| w.to_ascii_lowercase())
            .collect();
        words.push("sleep".into());
        words.extend(self.retry.calls.iter().map(|c| written_key(&c.path)));
        words.extend(
            self.retry
                .methods
                .iter()
                .map(|m| m.name.to_ascii_lowercase()),
        );
        // A client wrapped in retrying middleware makes every send through it a retry site.
        words.extend(
            self.requests
                .retrying_middleware
                .iter()
                .map(|w| w.to_ascii_lowercase()),
        );
        words
    }

    /// A word of a stop signal: a cancellation name (`stop`, `shutdown`, `running`) or the
    /// name of a cancellation check (`is_cancelled`).
    #[must_use]
    pub fn is_stop_word(&self, w: &str) -> bool {
        let c = &self.cancellation;
        c.names.iter().chain(&c.checks).any(|n| n == w)
    }

    /// Words a client that retries by itself is built with: the retrying types and the SDK
    /// crate prefixes (`aws_sdk`), for the items the nested-retry analysis reads elsewhere in a
    /// file (the constructor that builds the client a retry loop uses).
    #[must_use]
    pub fn retrying_client_words(&self) -> Vec<String> {
        let mut words: Vec<String> = (self.retry.retrying_clients.iter())
            .chain(&self.retry.retrying_sdks)
            .map(|s| first_ident(s).trim_matches('_').to_string())
            .collect();
        words.retain(|w| !w.is_empty());
        words
    }

    /// Words of the request and body APIs (`post`, `File`, `wrap_stream`, idempotency header
    /// names): items holding them are context for the request rules.
    #[must_use]
    pub fn request_words(&self) -> Vec<String> {
        let ident = |s: &String| first_ident(s);
        let mut words: Vec<String> = self.requests.methods.iter().map(ident).collect();
        words.extend(self.requests.functions.iter().map(|f| written_key(f)));
        words.extend(self.requests.retrying_middleware.iter().map(ident));
        words.extend(self.requests.method_gates.iter().map(ident));
        words.push("idempotency".into());
        // A request whose method is handed in (`self.client.request(method, url)`), and the
        // callers handing it (`self.send(Method::POST, ..)`): the mask keeps the chain whole.
        words.extend(["request", "method", "Method"].map(String::from));
        words.extend(
            self.bodies
                .readers
                .iter()
                .chain(&self.bodies.streams)
                .map(ident),
        );
        words.retain(|w| !w.is_empty());
        words
    }

    /// Words a client timeout is written with: timeout methods, timeout layers, constructors with
    /// a default timeout, per-attempt timers (the crate rules' files and the index's inputs).
    #[must_use]
    pub fn client_words(&self) -> Vec<String> {
        let mut words: Vec<String> = self
            .clients
            .timeouts
            .iter()
            .map(|w| w.to_ascii_lowercase())
            .collect();
        words.extend(self.clients.timeout_layers.iter().map(|p| written_key(p)));
        words.extend(
            self.clients
                .default_timeouts
                .iter()
                .map(|d| written_key(&d.path)),
        );
        words.extend(self.clients.attempt_timers.iter().map(|p| written_key(p)));
        words
    }

    /// The word each known sleep must be written with (`blocking`: only thread sleeps).
    #[must_use]
    pub fn sleep_words(&self, blocking: bool) -> Vec<String> {
        let mut words: Vec<String> = self
            .sleeps
            .blocking
            .iter()
            .map(|p| written_key(p))
            .collect();
        if !blocking {
            words.extend(self.sleeps.r#async.iter().map(|p| written_key(p)));
        }
        words
    }
}

/// The segment of `path` that must appear in the text for the call to be written at all: the
/// type for an associated function (`Timer::after` can only be reached through `Timer` or an
/// alias whose `use` names it), the function name otherwise (a `use` or the call spells it).
#[must_use]
pub fn written_key(path: &str) -> String {
    let segs: Vec<&str> = path.split("::").collect();
    let n = segs.len();
    let seg = if n >= 2 && segs[n - 2].starts_with(|c: char| c.is_ascii_uppercase()) {
        segs[n - 2]
    } else {
        segs[n - 1]
    };
    seg.to_ascii_lowercase()
}

/// The first identifier of an API name, lowercase (`Retry::new` -> `retry`, `aws_sdk_` ->
/// `aws_sdk_`): the word the prefilter matches it by.
fn first_ident(s: &str) -> String {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_ascii_lowercase()
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
        assert!(apis.retry_site_words().contains(&"retry".to_string()));
        assert_eq!(written_key("smol::Timer::after"), "timer");
    }
}
