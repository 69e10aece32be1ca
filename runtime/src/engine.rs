//! The retry engine: one state machine that decides every step of an operation.
//!
//! The engine never reads a clock and never runs anything. A flavour's loop (async in
//! `run.rs`, blocking in `blocking.rs`) tells it what happened ([`Event`]) and when (`now`),
//! and gets back what to do next ([`Step`]): start an attempt, reconcile an ambiguous one, wait,
//! or give up. So the sequence attempt -> classify -> record -> reconcile -> decide -> wait is
//! written once, both flavours behave the same, and tests can drive it with any clock.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tracing::Span;

use crate::attempt::{Attempt, IdempotencyKey};
use crate::backoff::Rng;
use crate::budget::RetryBudget;
use crate::classify::{Outcome, Verdict};
use crate::deadline::Deadline;
use crate::error::{AttemptEnd, AttemptRecord, ErrorKind, Failure, RetryError};
use crate::options::Options;
use crate::policy::RetryPolicy;

/// What happened since the last [`Step`].
#[derive(Debug)]
pub(crate) enum Event {
    /// The operation starts (answered by the first attempt or a give-up).
    Start,
    /// The running attempt returned an error, classified as this.
    Failed(Verdict),
    /// The runtime's attempt timeout cut the running attempt (maybe applied).
    TimedOut,
    /// Reconciliation of an ambiguous attempt ended without a committed result (a committed
    /// result ends the operation in the loop, which owns the value).
    Reconciled(Found),
    /// The wait asked for is over.
    Woke,
    /// The caller canceled (during an attempt, a reconciliation or a wait).
    Canceled,
}

/// What reconciliation found, when it found no committed result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// The attempt was not applied: a retry is safe even for a non-idempotent operation.
    NotApplied,
    /// Unknown, or the hook ran out of time.
    Unknown,
}

/// What the loop does next.
#[derive(Debug)]
pub(crate) enum Step {
    /// Start this attempt now, under its span, with `attempt.timeout` as its limit; answer
    /// with [`Event::Failed`], [`Event::TimedOut`] or [`Event::Canceled`] (or return its value).
    Attempt(Attempt, Span),
    /// Ask the reconciliation hook about this ambiguous attempt, for at most the duration;
    /// answer with [`Event::Reconciled`] (or return the committed value).
    Reconcile(Attempt, Duration),
    /// Wait this long (cancellably), then answer [`Event::Woke`].
    Wait(Duration),
    /// Stop; [`Engine::finish`] makes the error.
    GiveUp(ErrorKind),
}

/// Where the operation is.
enum State {
    /// No attempt yet.
    Ready,
    /// An attempt is running.
    Running(Running),
    /// An ambiguous attempt is being reconciled; the verdict decides once the hook answers.
    Reconciling(Running, Verdict),
    /// Waiting before the next attempt. `cut`: the deadline shortened the wait so that it ends
    /// with exactly the minimum attempt time left.
    Waiting { cut: bool },
    /// Gave up.
    Done,
}

/// The attempt in flight (or just ended).
struct Running {
    attempt: Attempt,
    started: Instant,
    span: Span,
    /// Started after a wait the deadline cut: the last attempt the time left allows, so an
    /// operation that fails at once cannot spin through its remaining attempts unbacked-off.
    last: bool,
}

/// One operation's decisions; see the module docs.
pub(crate) struct Engine<'p> {
    policy: &'p RetryPolicy,
    deadline: Deadline,
    idempotent: bool,
    options: Options,
    key: IdempotencyKey,
    budget: Option<Arc<RetryBudget>>,
    reconciles: bool,
    // Created on the first retry, so a first-attempt success pays no entropy.
    rng: Option<Rng>,
    previous_wait: Duration,
    number: u32,
    history: Vec<AttemptRecord>,
    start: Instant,
    state: State,
}

impl<'p> Engine<'p> {
    /// An engine for one operation starting at `now`. `reconciles`: whether the caller has a
    /// reconciliation hook (only then does the engine ask for [`Step::Reconcile`]).
    pub(crate) fn new(
        policy: &'p RetryPolicy,
        mut options: Options,
        reconciles: bool,
        now: Instant,
    ) -> Self {
        let own = policy
            .total
            .map_or(Deadline::never(), |total| match now.checked_add(total) {
                Some(at) => Deadline::at(at),
                None => Deadline::never(),
            });
        let budget = policy
            .budget
            .as_ref()
            .map(|b| b.resolve(options.partition.as_deref()));
        if let Some(budget) = &budget {
            budget.deposit();
        }
        Self {
            policy,
            deadline: options.deadline.map_or(own, |d| d.earliest(own)),
            idempotent: options.idempotent,
            key: options.key.take().unwrap_or_else(IdempotencyKey::generate),
            options,
            budget,
            reconciles,
            rng: None,
            previous_wait: Duration::ZERO,
            number: 0,
            history: Vec::new(),
            start: now,
            state: State::Ready,
        }
    }

    /// The operation's deadline: the earlier of the caller's and the policy's.
    pub(crate) fn deadline(&self) -> Deadline {
        self.deadline
    }

    /// The next step after `event`, which happened at `now`.
    pub(crate) fn step(&mut self, event: Event, now: Instant) -> Step {
        match (std::mem::replace(&mut self.state, State::Done), event) {
            (State::Ready, Event::Start) => self.start_attempt(now, false),
            (State::Waiting { cut }, Event::Woke) => self.start_attempt(now, cut),
            (State::Running(run), Event::Failed(verdict)) => {
                self.ended(run, AttemptEnd::Failed(verdict.outcome), verdict, now)
            }
            // The request may have been written before the timer fired.
            (State::Running(run), Event::TimedOut) => {
                self.ended(run, AttemptEnd::TimedOut, Outcome::Ambiguous.into(), now)
            }
            (State::Reconciling(run, verdict), Event::Reconciled(found)) => {
                self.decide(&run, verdict, found == Found::NotApplied, now)
            }
            (State::Running(run), Event::Canceled) => {
                run.span
                    .in_scope(|| self.record(&run, now, AttemptEnd::Canceled));
                Step::GiveUp(ErrorKind::Canceled)
            }
            (_, Event::Canceled) => Step::GiveUp(ErrorKind::Canceled),
            (_, event) => unreachable!("the retry loops send {event:?} only when it is expected"),
        }
    }

    /// Starts the next attempt, if the time left allows one.
    fn start_attempt(&mut self, now: Instant, after_cut_wait: bool) -> Step {
        let remaining = self.deadline.remaining_at(now);
        let min = self.policy.min_attempt_time.max(Duration::from_nanos(1));
        // Checked at the moment the attempt would start, after any late wake-up of the
        // executor: a wait that ends late must not start an attempt short of its minimum.
        // A wait cut to end with exactly the minimum left may end a timer tick late; that lag,
        // up to a tenth of the minimum, is forgiven.
        let needed = if after_cut_wait {
            min.saturating_sub(wake_up_allowance(min))
        } else {
            min
        };
        if self.deadline.is_bounded() && remaining < needed {
            tracing::debug!(
                number = self.number + 1,
                remaining_ms = duration_ms(remaining),
                min_attempt_ms = duration_ms(min),
                "too little time left to start an attempt"
            );
            return Step::GiveUp(ErrorKind::DeadlineExceeded);
        }
        self.number += 1;
        let attempt = Attempt {
            number: self.number,
            max_attempts: self.policy.max_attempts,
            deadline: self.deadline,
            timeout: self.policy.attempt_timeout.min(remaining),
            idempotency_key: self.key.clone(),
        };
        let span = tracing::debug_span!(
            "attempt",
            number = self.number,
            timeout_ms = duration_ms(attempt.timeout),
            remaining_ms = duration_ms(remaining),
        );
        self.state = State::Running(Running {
            attempt: attempt.clone(),
            started: now,
            span: span.clone(),
            last: after_cut_wait,
        });
        Step::Attempt(attempt, span)
    }

    /// Records the attempt that just ended, then reconciles or decides.
    fn ended(&mut self, run: Running, end: AttemptEnd, verdict: Verdict, now: Instant) -> Step {
        run.span.in_scope(|| self.record(&run, now, end));
        if verdict.outcome == Outcome::Ambiguous && self.reconciles {
            let limit = self.deadline.remaining_at(now);
            let attempt = run.attempt.clone();
            self.state = State::Reconciling(run, verdict);
            return Step::Reconcile(attempt, limit);
        }
        self.decide(&run, verdict, false, now)
    }

    fn record(&mut self, run: &Running, now: Instant, end: AttemptEnd) {
        let elapsed = now.saturating_duration_since(run.started);
        tracing::debug!(elapsed_ms = duration_ms(elapsed), ?end, "attempt ended");
        self.history.push(AttemptRecord {
            number: run.attempt.number,
            started_at: run.started.saturating_duration_since(self.start),
            elapsed,
            timeout: run.attempt.timeout,
            end,
            wait: None,
        });
    }

    /// Retry (after a wait) or give up, once the failed attempt's verdict is final.
    fn decide(
        &mut self,
        run: &Running,
        verdict: Verdict,
        proven_not_applied: bool,
        now: Instant,
    ) -> Step {
        let _in_attempt = run.span.enter();
        let outcome = verdict.outcome;
        let refusal = self
            .refusal(outcome, proven_not_applied)
            .or_else(|| self.limit(run, now));
        if let Some((kind, why)) = refusal {
            return give_up(run, outcome, kind, why);
        }
        self.schedule(run, verdict, now)
    }

    /// Why the outcome itself forbids a retry, if it does.
    fn refusal(
        &self,
        outcome: Outcome,
        proven_not_applied: bool,
    ) -> Option<(ErrorKind, &'static str)> {
        let safe = self.idempotent || proven_not_applied || outcome.is_not_applied();
        match outcome {
            Outcome::Permanent => Some((ErrorKind::Permanent, "permanent error")),
            Outcome::Ambiguous if !safe => Some((
                ErrorKind::Ambiguous,
                "may have been applied and is not idempotent",
            )),
            Outcome::Retryable if !safe => Some((
                ErrorKind::Unavailable,
                "transient failure, but not idempotent",
            )),
            _ => None,
        }
    }

    /// Why the deadline, the attempt cap or the request forbids another attempt, if one does.
    fn limit(&self, run: &Running, now: Instant) -> Option<(ErrorKind, &'static str)> {
        let remaining = self.deadline.remaining_at(now);
        let min = self.policy.min_attempt_time.max(Duration::from_nanos(1));
        if run.last {
            Some((
                ErrorKind::DeadlineExceeded,
                "the time left allowed one last attempt",
            ))
        } else if self.deadline.is_bounded() && remaining < min {
            Some((
                ErrorKind::DeadlineExceeded,
                "no time left for another attempt",
            ))
        } else if self
            .policy
            .max_attempts
            .is_some_and(|max| run.attempt.number >= max)
        {
            Some((ErrorKind::Unavailable, "attempts exhausted"))
        } else if !self.options.replayable() {
            Some((ErrorKind::NotReplayable, "the request cannot be replayed"))
        } else {
            None
        }
    }

    /// The wait before the next attempt: the backoff, raised to the server's hint, cut to
    /// leave the next attempt its minimum time; or why there is none.
    fn schedule(&mut self, run: &Running, verdict: Verdict, now: Instant) -> Step {
        let remaining = self.deadline.remaining_at(now);
        let min = self.policy.min_attempt_time;
        // The longest wait that still leaves the next attempt its minimum time.
        let room = if self.deadline.is_bounded() {
            remaining.saturating_sub(min)
        } else {
            Duration::MAX
        };
        let seed = self.policy.seed;
        let rng = self
            .rng
            .get_or_insert_with(|| seed.map_or_else(Rng::from_entropy, Rng::seeded));
        let backoff = self
            .policy
            .backoff
            .delay(run.attempt.number, self.previous_wait, rng);
        let retry_after = verdict.hint();
        if retry_after.is_some_and(|hint| hint > self.policy.retry_after_cap || hint > room) {
            return give_up(
                run,
                verdict.outcome,
                ErrorKind::RetryAfterTooLong,
                "the server asked to wait longer than allowed",
            );
        }
        let wanted = retry_after.map_or(backoff, |hint| backoff.max(hint));
        let cut = wanted > room;
        // Whole milliseconds: tokio's timer has millisecond resolution, so the recorded wait is
        // exactly the wait that happens.
        let wait = whole_millis(wanted.min(room));
        if self.budget.as_ref().is_some_and(|b| !b.try_withdraw()) {
            return give_up(
                run,
                verdict.outcome,
                ErrorKind::BudgetExhausted,
                "the retry budget is spent",
            );
        }
        if let Some(record) = self.history.last_mut() {
            record.wait = Some(wait);
        }
        self.previous_wait = wait;
        tracing::debug!(
            number = run.attempt.number,
            outcome = ?verdict.outcome,
            wait_ms = duration_ms(wait),
            backoff_ms = duration_ms(backoff),
            retry_after_ms = retry_after.map(duration_ms),
            remaining_ms = duration_ms(remaining),
            "waiting before retry"
        );
        self.state = State::Waiting { cut };
        Step::Wait(wait)
    }

    /// The error the operation ends with, carrying `last_error` and the history.
    pub(crate) fn finish<E>(self, kind: ErrorKind, last_error: Option<E>) -> RetryError<E> {
        tracing::debug!(attempts = self.history.len(), error = ?kind, "retry gave up");
        RetryError::new(
            kind,
            Failure {
                last_error,
                history: self.history,
            },
        )
    }
}

fn give_up(run: &Running, outcome: Outcome, kind: ErrorKind, why: &str) -> Step {
    tracing::debug!(number = run.attempt.number, ?outcome, error = ?kind, "giving up: {why}");
    Step::GiveUp(kind)
}

/// How much late a wake-up after a cut wait may be and still start the attempt: a tenth of
/// the minimum attempt time (5 ms of the default 50 ms), about a timer tick and a scheduling
/// delay on a busy machine. An executor that wakes later than that starts no attempt.
pub(crate) fn wake_up_allowance(min_attempt_time: Duration) -> Duration {
    min_attempt_time / 10
}

#[allow(clippy::cast_possible_truncation)]
// Reason: a span field in milliseconds; durations beyond u64 milliseconds are clamped first.
pub(crate) fn duration_ms(d: Duration) -> u64 {
    d.as_millis().min(u128::from(u64::MAX)) as u64
}

fn whole_millis(d: Duration) -> Duration {
    Duration::from_millis(duration_ms(d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backoff::{Backoff, Jitter};

    fn policy() -> RetryPolicy {
        RetryPolicy::builder()
            .max_attempts(3)
            .total(Duration::from_secs(1))
            .backoff(Backoff::constant(Duration::from_secs(5)).jitter(Jitter::None))
            .build()
            .unwrap()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn attempt_timeout(step: &Step) -> Option<Duration> {
        match step {
            Step::Attempt(attempt, _) => Some(attempt.timeout),
            _ => None,
        }
    }

    fn failed(outcome: Outcome) -> Event {
        Event::Failed(outcome.into())
    }

    /// The engine reads no clock: the same events at other times give other steps. A wait cut
    /// to leave the minimum, noticed 40 ms late, starts nothing; noticed on time, it starts the
    /// last attempt, after which the engine gives up rather than spin.
    #[test]
    fn the_engine_is_told_the_time() {
        let policy = policy();
        let t0 = Instant::now();
        let mut engine = Engine::new(&policy, Options::default(), false, t0);
        assert_eq!(
            attempt_timeout(&engine.step(Event::Start, t0)),
            Some(ms(1000))
        );
        assert!(matches!(
            engine.step(failed(Outcome::NotApplied), t0),
            Step::Wait(wait) if wait == ms(950)
        ));
        assert!(matches!(
            engine.step(Event::Woke, t0 + ms(990)),
            Step::GiveUp(ErrorKind::DeadlineExceeded)
        ));
        assert_eq!(
            engine
                .finish::<()>(ErrorKind::DeadlineExceeded, None)
                .attempts(),
            1
        );

        let mut engine = Engine::new(&policy, Options::default(), false, t0);
        engine.step(Event::Start, t0);
        engine.step(failed(Outcome::NotApplied), t0);
        assert_eq!(
            attempt_timeout(&engine.step(Event::Woke, t0 + ms(950))),
            Some(ms(50))
        );
        assert!(matches!(
            engine.step(failed(Outcome::NotApplied), t0 + ms(950)),
            Step::GiveUp(ErrorKind::DeadlineExceeded)
        ));
    }

    /// An ambiguous outcome with a hook asks for reconciliation with the time left; what it
    /// finds decides for a non-idempotent operation.
    #[test]
    fn ambiguous_outcomes_are_reconciled_before_deciding() {
        let policy = policy();
        let t0 = Instant::now();
        let options = || Options {
            idempotent: false,
            ..Options::default()
        };
        for (found, retried) in [(Found::NotApplied, true), (Found::Unknown, false)] {
            let mut engine = Engine::new(&policy, options(), true, t0);
            engine.step(Event::Start, t0);
            assert!(matches!(
                engine.step(Event::TimedOut, t0 + ms(300)),
                Step::Reconcile(attempt, limit) if attempt.number == 1 && limit == ms(700)
            ));
            let step = engine.step(Event::Reconciled(found), t0 + ms(310));
            if retried {
                assert!(matches!(step, Step::Wait(_)), "{step:?}");
            } else {
                assert!(
                    matches!(step, Step::GiveUp(ErrorKind::Ambiguous)),
                    "{step:?}"
                );
            }
        }
        // Without a hook there is nothing to ask.
        let mut engine = Engine::new(&policy, options(), false, t0);
        engine.step(Event::Start, t0);
        assert!(matches!(
            engine.step(failed(Outcome::Ambiguous), t0),
            Step::GiveUp(ErrorKind::Ambiguous)
        ));
    }

    /// A cancel during an attempt is recorded on it; one during a wait adds no record.
    #[test]
    fn cancellation_ends_every_state() {
        let policy = policy();
        let t0 = Instant::now();
        let mut engine = Engine::new(&policy, Options::default(), false, t0);
        engine.step(Event::Start, t0);
        assert!(matches!(
            engine.step(Event::Canceled, t0 + ms(5)),
            Step::GiveUp(ErrorKind::Canceled)
        ));
        let err = engine.finish::<()>(ErrorKind::Canceled, None);
        assert_eq!(err.history()[0].end, AttemptEnd::Canceled);
        assert_eq!(err.history()[0].elapsed, ms(5));

        let mut engine = Engine::new(&policy, Options::default(), false, t0);
        engine.step(Event::Start, t0);
        engine.step(failed(Outcome::NotApplied), t0);
        assert!(matches!(
            engine.step(Event::Canceled, t0 + ms(20)),
            Step::GiveUp(ErrorKind::Canceled)
        ));
        assert_eq!(engine.finish::<()>(ErrorKind::Canceled, None).attempts(), 1);
    }
}
