//! The model's unit-test harness: [`check`] turns a snippet into the facts it yields, one line
//! per fact, so a test states what the model must see (and must not) in a snippet of a dozen
//! lines instead of a fixture, a rule and a rendered finding.
//!
//! Every fact kind of [`Facts`] has a line shape: sites, sleeps, server waits, status tests,
//! fixed delays, nested retries, writes and replayed bodies, wrappers, the helpers a file asks
//! its crate about (`asks-crate`). Places are
//! `line:col` (1-based, the column in characters) of the snippet; sites are named by their index
//! (`#0`), as the other facts refer to them.

use std::fmt::Write as _;

use super::{Cap, Deadline, Facts, SiteKind};
use crate::base::apis::Apis;
use crate::base::source::{SourceFile, Span};

/// The facts of `text` (a whole file), one per line, in the order the model holds them.
pub(crate) fn check(text: &str) -> String {
    let src = SourceFile::new("snippet.rs", text);
    let file = syn::parse_file(text).expect("the snippet parses");
    let facts = super::analyze(&file, &src, &Apis::builtin());
    render(&src, &facts)
}

fn render(src: &SourceFile, f: &Facts) -> String {
    let at = |s: Span| {
        let p = src.position(s.start);
        format!("{}:{}", p.line, p.col)
    };
    let site = |i: Option<usize>| i.map_or_else(|| "-".to_string(), |i| format!("#{i}"));
    let mut out = String::new();
    for (i, s) in f.sites.iter().enumerate() {
        let kind = match &s.kind {
            SiteKind::Loop => "loop".to_string(),
            SiteKind::While => "while".to_string(),
            SiteKind::For => "for".to_string(),
            SiteKind::Combinator(name) => format!("combinator {name}"),
            SiteKind::Recursion => "recursion".to_string(),
            SiteKind::Policy => "policy".to_string(),
            SiteKind::Wrapper(name) => format!("wrapper {name}"),
        };
        let cap = match &s.cap {
            Cap::None => "none".to_string(),
            Cap::Literal(n) => n.to_string(),
            Cap::Symbolic => "symbolic".to_string(),
            Cap::Unknown => "unknown".to_string(),
            Cap::OffWhenNone(o) => format!("off-when-none({o})"),
        };
        let deadline = match s.deadline {
            None => "-",
            Some(Deadline::Outer) => "outer",
            Some(Deadline::Manual) => "manual",
        };
        let _ = write!(
            out,
            "site #{i} {} {kind} cap={cap} deadline={deadline}",
            at(s.anchor)
        );
        for (flag, on) in [
            ("cancel", s.checks_cancel),
            ("exits-on-failure", s.exits_on_failure),
            ("refusals-only", s.refusals_only),
            ("status-only", s.status_only),
            ("clock-helper", s.clock_checked),
        ] {
            if on {
                let _ = write!(out, " {flag}");
            }
        }
        if let Some(r) = s.ungated_round {
            let elsewhere = if r.gated_elsewhere {
                " (gated elsewhere)"
            } else {
                ""
            };
            let _ = write!(out, " ungated-round={}{elsewhere}", at(r.at));
        }
        out.push('\n');
    }
    for s in &f.sleeps {
        let _ = write!(
            out,
            "sleep {} {}({}) site={}",
            at(s.span),
            s.path,
            s.duration,
            site(s.site)
        );
        for (flag, on) in [
            ("blocking", s.blocking),
            ("raced", s.raced),
            ("under-deadline", s.under_deadline),
        ] {
            if on {
                let _ = write!(out, " {flag}");
            }
        }
        if let Some(v) = &s.via {
            let _ = write!(out, " via={}", at(v.call));
        }
        out.push('\n');
    }
    for w in &f.server_waits {
        let capped = if w.capped { " capped" } else { "" };
        let _ = writeln!(
            out,
            "server-wait {} from {}{capped}",
            at(w.wait),
            at(w.origin)
        );
    }
    for s in &f.status_retries {
        let exit = if s.success_exit { " success-exit" } else { "" };
        let _ = writeln!(out, "status {} site=#{}{exit}", at(s.test), s.site);
    }
    for d in &f.fixed_delays {
        let _ = writeln!(out, "fixed-delay {} site={}", at(d.span), site(d.site));
    }
    for r in &f.reconnects {
        let paths: Vec<String> = r.failure_paths.iter().map(|s| at(*s)).collect();
        let waits: Vec<String> = f
            .sleeps
            .iter()
            .filter(|s| r.waits(s))
            .map(|s| at(s.span))
            .collect();
        let cancel = if r.checks_cancel { " cancel" } else { "" };
        let _ = writeln!(
            out,
            "reconnect {}{cancel} failure-paths={} waits={}",
            at(r.anchor),
            paths.join(","),
            waits.join(",")
        );
    }
    for n in &f.nested_retries {
        let _ = writeln!(
            out,
            "nested site=#{} inner {} by {}",
            n.site,
            at(n.inner),
            n.what
        );
    }
    for w in &f.requests.writes {
        let key = match w.key {
            super::requests::Key::Missing => "missing".to_string(),
            super::requests::Key::Outside => "outside".to_string(),
            super::requests::Key::PerAttempt(s) => format!("per-attempt {}", at(s)),
        };
        let gated = if w.gated { " gated" } else { "" };
        let _ = writeln!(
            out,
            "write {} {} retried-by {} key={key}{gated}",
            at(w.span),
            w.method,
            at(w.retry)
        );
    }
    for r in &f.requests.replays {
        let _ = writeln!(
            out,
            "replay {} {:?} `{}` retried-by {}",
            at(r.span),
            r.kind,
            r.name,
            at(r.retry)
        );
    }
    for w in &f.wrappers {
        let _ = writeln!(
            out,
            "wrapper {} param={} cap={:?} site={}",
            w.name,
            w.param,
            w.cap,
            w.site.map_or_else(|| "-".to_string(), at)
        );
    }
    for name in &f.foreign_callees {
        let _ = writeln!(out, "asks-crate {name}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn a_counted_loop_its_sleep_and_fixed_delay() {
        insta::assert_snapshot!(check(
            "async fn f() -> Result<(), E> {
    let mut attempt = 0;
    loop {
        match op().await {
            Ok(v) => return Ok(v),
            Err(e) if attempt < 5 => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(100 * 2u64.pow(attempt))).await;
            }
            Err(e) => return Err(e),
        }
    }
}"
        ), @r"
        site #0 3:5 loop cap=6 deadline=- exits-on-failure
        sleep 8:17 tokio::time::sleep(Duration::from_millis(100 * 2u64.pow(attempt))) site=#0
        fixed-delay 8:17 site=#0
        ");
    }

    #[test]
    fn a_loop_that_goes_round_on_every_failure_forever() {
        insta::assert_snapshot!(check(
            "async fn f() {
    loop {
        match client.get(url).send().await {
            Ok(r) => return r,
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
}"
        ), @r"
        site #0 2:5 loop cap=none deadline=- ungated-round=7:5
        sleep 5:23 tokio::time::sleep(Duration::from_secs(1)) site=#0
        fixed-delay 5:23 site=#0
        ");
    }

    /// An answer whose status is a failure is a failure path though its pattern is `Ok`
    /// (RULES: "a retryable status"): the loop retrying 5xx and a listed status forever is a
    /// site. Near miss: a periodic health check that only logs the failing status.
    #[test]
    fn an_ok_answer_with_a_failing_status_goes_round() {
        insta::assert_snapshot!(check(
            "async fn f() {
    loop {
        match client.get(url).send().await {
            Ok(r) if r.status().is_server_error() => tokio::time::sleep(D).await,
            other => return other,
        }
    }
}
async fn g() {
    loop {
        let r = client.get(url).send().await?;
        if RETRY_CODES.contains(&r.status()) { tokio::time::sleep(D).await; continue; }
        return Ok(r);
    }
}
async fn h() {
    loop {
        interval.tick().await;
        match client.get(url).send().await {
            Ok(r) if r.status().is_server_error() => warn!(\"down\"),
            _ => {}
        }
    }
}"
        ), @r"
        site #0 2:5 loop cap=none deadline=- exits-on-failure ungated-round=7:5
        site #1 10:5 loop cap=none deadline=- exits-on-failure ungated-round=12:77
        sleep 4:54 tokio::time::sleep(D) site=#0
        sleep 12:48 tokio::time::sleep(D) site=#1
        fixed-delay 4:54 site=#0
        fixed-delay 12:48 site=#1
        asks-crate is_server_error
        asks-crate status
        ");
    }

    /// A classifying test bound to a local first (`let can_retry = is_retryable(status) && ..;
    /// if !can_retry { return Err(..) }`) decides which statuses go round: no status finding for
    /// the loop (#0). Near miss (#1): a bound success test decides nothing by itself, and the
    /// loop's `!status.is_success()` going round is still the finding.
    #[test]
    fn a_status_test_bound_to_a_local_classifies() {
        insta::assert_snapshot!(check(
            "fn send(c: &Client) -> R {
    let mut n = 0;
    loop {
        let res = c.get(U).send()?;
        let status = res.status();
        if status.is_success() { return Ok(res); }
        let can_retry = is_status_retryable(status) && n < MAX;
        if !can_retry { return Err(E::Status(status)); }
        n += 1;
        std::thread::sleep(D);
    }
}
fn poll(c: &Client) -> R {
    let mut n = 0;
    loop {
        let res = c.get(U).send()?;
        let fine = n > MAX;
        if fine { return Err(E::Gave); }
        if !res.status().is_success() { n += 1; std::thread::sleep(D); continue; }
        return Ok(res);
    }
}"
        ), @r"
        site #0 3:5 loop cap=symbolic deadline=- exits-on-failure
        site #1 15:5 loop cap=symbolic deadline=- exits-on-failure
        sleep 10:9 std::thread::sleep(D) site=#0 blocking
        sleep 19:49 std::thread::sleep(D) site=#1 blocking
        status 19:12 site=#1
        fixed-delay 10:9 site=#0
        fixed-delay 19:49 site=#1
        ");
    }

    /// A heartbeat pings again after a pong and stops at the first error: no failure goes
    /// round, so it is no retry site (pingora's H2 ping loop), and its sleep is at none.
    #[test]
    fn no_failure_goes_round_so_no_site() {
        insta::assert_snapshot!(check(
            "async fn ping_pong(mut conn: Conn, interval: Duration) {
    loop {
        match tokio::time::timeout(Duration::from_secs(5), conn.ping()).await {
            Err(_) => break,
            Ok(r) => match r {
                Ok(_) => {
                    tracing::debug!(\"pong\");
                    tokio::time::sleep(interval).await;
                }
                Err(e) => {
                    tracing::error!(\"ping error: {e}\");
                    break;
                }
            },
        }
    }
}"
        ), @r"
        sleep 8:21 tokio::time::sleep(interval) site=-
        reconnect 2:5 failure-paths=4:23,10:27 waits=
        ");
    }

    /// The same loop with a status test after the pong: the words do not say whether the
    /// attempt failed, so the way round may follow a failure, and the loop stays a site.
    #[test]
    fn an_unclassified_decision_after_a_success_may_be_a_failure() {
        insta::assert_snapshot!(check(
            "async fn f(conn: Conn) {
    loop {
        match conn.ping().await {
            Ok(pong) => {
                if pong.code > 500 {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
                return;
            }
            Err(e) => return,
        }
    }
}"
        ), @r"
        site #0 2:5 loop cap=none deadline=- exits-on-failure
        sleep 6:21 tokio::time::sleep(Duration::from_secs(1)) site=#0
        fixed-delay 6:21 site=#0
        ");
    }

    #[test]
    fn a_server_wait_and_a_status_test() {
        insta::assert_snapshot!(check(
            "async fn f(client: &reqwest::Client) -> reqwest::Result<Response> {
    for _ in 0..3 {
        let resp = client.get(URL).send().await?;
        if !resp.status().is_success() {
            let wait = resp.headers().get(RETRY_AFTER).and_then(parse).unwrap_or(1);
            tokio::time::sleep(Duration::from_secs(wait)).await;
            continue;
        }
        return Ok(resp);
    }
    Err(gave_up())
}"
        ), @r"
        site #0 2:5 for cap=3 deadline=- exits-on-failure
        sleep 6:13 tokio::time::sleep(Duration::from_secs(wait)) site=#0
        server-wait 6:13 from 5:13
        status 4:12 site=#0
        asks-crate is_success
        asks-crate status
        ");
    }

    /// A name is the variable its place reads (riven's requester): the `Some(delay)` of one arm
    /// is the server's, the `let delay` of the other arm and the one slept before the header is
    /// read are the loop's own backoff; only the first sleep waits the server's value.
    #[test]
    fn a_name_bound_from_retry_after_in_one_arm_is_not_the_same_name_elsewhere() {
        insta::assert_snapshot!(check(
            "async fn f(client: &reqwest::Client, retries: u32) -> reqwest::Result<Response> {
    loop {
        let resp = match client.get(URL).send().await {
            Ok(r) => r,
            Err(_) => {
                let delay = Duration::from_secs(2u64.pow(retries));
                sleep(delay).await;
                continue;
            }
        };
        let retry_after = parse(resp.headers().get(RETRY_AFTER));
        match retry_after {
            Some(delay) => sleep(delay).await,
            None => {
                let delay = Duration::from_secs(2 + 2u64.pow(retries));
                sleep(delay).await;
            }
        }
    }
}"
        ), @r"
        sleep 7:17 sleep(delay) site=-
        sleep 13:28 sleep(delay) site=-
        sleep 16:17 sleep(delay) site=-
        server-wait 13:28 from 13:13
        fixed-delay 7:17 site=-
        fixed-delay 16:17 site=-
        reconnect 2:5 failure-paths=5:23 waits=7:17
        ");
    }

    #[test]
    fn a_post_with_a_key_made_per_attempt_and_a_replayed_reader() {
        insta::assert_snapshot!(check(
            "async fn f(client: &reqwest::Client, file: tokio::fs::File) {
    let body = reqwest::Body::wrap_stream(ReaderStream::new(file));
    for _ in 0..3 {
        let key = Uuid::new_v4().to_string();
        let r = client
            .post(URL)
            .header(\"Idempotency-Key\", key)
            .body(body)
            .send()
            .await;
        if r.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}"
        ), @r"
        site #0 3:5 for cap=3 deadline=-
        sleep 14:9 tokio::time::sleep(Duration::from_secs(1)) site=#0
        fixed-delay 14:9 site=#0
        write 6:14 POST retried-by 3:5 key=per-attempt 4:19
        replay 8:19 SharedReader `body` retried-by 3:5
        ");
    }

    #[test]
    fn a_combinator_a_wrapper_and_a_retrying_client() {
        insta::assert_snapshot!(check(
            "use backon::Retryable;
async fn retry_op<F, Fut>(mut op: F) -> Result<(), E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), E>>,
{
    for _ in 0..3 {
        if op().await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Err(E)
}
async fn g() {
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(RetryTransientMiddleware::new_with_policy(policy))
        .build();
    (|| async { client.get(URL).send().await })
        .retry(ExponentialBuilder::default())
        .await;
}"
        ), @r"
        site #0 7:5 for cap=3 deadline=-
        site #1 20:10 combinator backon::retry cap=4 deadline=-
        sleep 11:9 tokio::time::sleep(Duration::from_secs(1)) site=#0
        fixed-delay 11:9 site=#0
        fixed-delay 20:16 site=-
        nested site=#1 inner 16:18 by RetryTransientMiddleware
        wrapper retry_op param=0 cap=Literal(3) site=7:5
        ");
    }

    /// A future bound to a local and handed to a deadline wrapper by name runs under the
    /// deadline (site #0, its sleep under-deadline); the same local awaited on its own while
    /// the wrapper bounds another future does not (site #1).
    #[test]
    fn a_future_bound_to_a_local_and_timed_out_by_name() {
        insta::assert_snapshot!(check(
            "async fn within(c: &Client) -> bool {
    let probe = async {
        loop {
            if c.ping().await.is_ok() { return true; }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), probe).await.unwrap_or(false)
}
async fn eventually(c: &Client) -> bool {
    let probe = async {
        loop {
            if c.ping().await.is_ok() { return true; }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), warm_up()).await;
    probe.await
}"
        ), @r"
        site #0 3:9 loop cap=none deadline=outer ungated-round=6:9
        site #1 12:9 loop cap=none deadline=- ungated-round=15:9
        sleep 5:13 tokio::time::sleep(Duration::from_secs(1)) site=#0 under-deadline
        sleep 14:13 tokio::time::sleep(Duration::from_secs(1)) site=#1
        fixed-delay 5:13 site=#0
        fixed-delay 14:13 site=#1
        asks-crate ping
        ");
    }

    /// A future's `poll` that goes round on a failure retries inside its one result: its way
    /// round is ungated (site #0). A stream's `poll_next` doing the same serves a subscription
    /// its consumer drives (site #1): no way round is judged.
    #[test]
    fn a_future_poll_retries_and_a_stream_poll_next_does_not() {
        insta::assert_snapshot!(check(
            "impl Future for Sending {
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match ready!(Pin::new(&mut self.fut).poll(cx)) {
                Ok(r) => return Poll::Ready(Ok(r)),
                Err(e) => { warn!(\"send failed: {e}; retrying\"); self.fut = self.client.send(); }
            }
        }
    }
}
impl Stream for Events {
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match ready!(Pin::new(&mut self.fut).poll(cx)) {
                Ok(r) => return Poll::Ready(Some(r)),
                Err(e) => { warn!(\"read failed: {e}; retrying\"); self.fut = self.client.send(); }
            }
        }
    }
}"
        ), @r"
        site #0 3:9 loop cap=none deadline=- ungated-round=8:9
        site #1 13:9 loop cap=none deadline=-
        ");
    }

    /// An exit in an `Err` arm gives up whatever value it leaves with: an actor that returns
    /// `Ok(())` there but never leaves on a success is no retry site (a supervisor, with its
    /// failure path kept for the cancellation rule). A loop that leaves from its `Ok` arm too is
    /// one (site #0).
    #[test]
    fn an_ok_value_returned_from_an_err_arm_is_giving_up() {
        insta::assert_snapshot!(check(
            "async fn actor(mut self) -> Result<(), Closed> {
    loop {
        match self.send().await {
            Ok(next) => self.next = next,
            Err(E::HigherVote) => return Ok(()),
            Err(e) => { warn!(\"send failed: {e}; retrying\"); }
        }
        self.drain().await?;
    }
}
async fn lookup(c: &Client) -> Result<Option<V>, E> {
    loop {
        match c.get().await {
            Ok(v) => return Ok(Some(v)),
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => { warn!(\"get failed: {e}; retrying\"); }
        }
    }
}"
        ), @r"
        site #0 12:5 loop cap=none deadline=- exits-on-failure ungated-round=18:5
        reconnect 2:5 failure-paths=5:35,6:23 waits=
        asks-crate is_not_found
        ");
    }

    /// An `Instant` handed by name to a call whose failure leaves the loop is a deadline
    /// checked by hand, whatever the helper is called and wherever it is defined (site #0:
    /// `deadline=manual`). Handed to a call whose result is dropped, it checks nothing (#1);
    /// nor does the moment of the attempt handed on (#3: `coordinator(now)?`). A clock value
    /// computed in the body and compared is a check (#2: `waited > 60`).
    #[test]
    fn an_instant_handed_to_a_failing_call_is_a_deadline_check() {
        insta::assert_snapshot!(check(
            "async fn by(deadline: Instant) -> Result<Conn, E> {
    loop {
        ensure_before(&deadline)?;
        match Conn::open().await { Ok(c) => return Ok(c), Err(_) => tokio::time::sleep(D).await }
    }
}
async fn logged(c: &Client) -> Result<Conn, E> {
    let started = Instant::now();
    loop {
        report(started);
        match Conn::open().await { Ok(c) => return Ok(c), Err(_) => tokio::time::sleep(D).await }
    }
}
async fn polled(c: &Client) -> Result<Conn, E> {
    let sent_at = time::Instant::now();
    loop {
        let waited = (time::Instant::now() - sent_at).as_secs();
        if waited > 60 { return Err(E::Timeout); }
        match Conn::open().await { Ok(c) => return Ok(c), Err(_) => tokio::time::sleep(D).await }
    }
}
async fn stamped(c: &Client) -> Result<Conn, E> {
    loop {
        let now = Instant::now();
        let host = coordinator(c, now)?;
        match host.open().await { Ok(c) => return Ok(c), Err(_) => tokio::time::sleep(D).await }
    }
}"
        ), @r"
        site #0 2:5 loop cap=symbolic deadline=manual exits-on-failure
        site #1 9:5 loop cap=none deadline=- ungated-round=12:5
        site #2 16:5 loop cap=none deadline=manual exits-on-failure ungated-round=20:5
        site #3 23:5 loop cap=none deadline=- exits-on-failure ungated-round=27:5
        sleep 4:69 tokio::time::sleep(D) site=#0
        sleep 11:69 tokio::time::sleep(D) site=#1
        sleep 19:69 tokio::time::sleep(D) site=#2
        sleep 26:68 tokio::time::sleep(D) site=#3
        fixed-delay 4:69 site=#0
        fixed-delay 11:69 site=#1
        fixed-delay 19:69 site=#2
        fixed-delay 26:68 site=#3
        asks-crate coordinator
        ");
    }

    /// A helper of the file whose whole answer is `max.is_none() || n < max.unwrap()` is an
    /// attempt check an unset option escapes: a loop gated on it has `cap=off-when-none`
    /// (site #0). One that falls back to a number (`unwrap_or(3)`) is no such helper: its
    /// loop (site #1) goes round only past the check, with no ungated way round.
    #[test]
    fn a_helper_whose_cap_none_switches_off() {
        insta::assert_snapshot!(check(
            "impl Opts {
    fn allow_retry(&self, n: u32) -> bool { self.max_retries.is_none() || n < self.max_retries.unwrap() }
    fn within(&self, n: u32) -> bool { n < self.max_retries.unwrap_or(3) }
}
async fn a(c: &C, o: &Opts) -> Result<S, E> {
    let mut n = 0;
    loop {
        match c.get().await { Ok(s) => return Ok(s), Err(e) => { if !o.allow_retry(n) { return Err(e); } n += 1; tokio::time::sleep(D).await; } }
    }
}
async fn b(c: &C, o: &Opts) -> Result<S, E> {
    let mut n = 0;
    loop {
        match c.get().await { Ok(s) => return Ok(s), Err(e) => { if !o.within(n) { return Err(e); } n += 1; tokio::time::sleep(D).await; } }
    }
}"
        ), @r"
        site #0 7:5 loop cap=off-when-none(max_retries) deadline=- exits-on-failure
        site #1 13:5 loop cap=none deadline=- exits-on-failure
        sleep 8:114 tokio::time::sleep(D) site=#0
        sleep 14:109 tokio::time::sleep(D) site=#1
        fixed-delay 8:114 site=#0
        fixed-delay 14:109 site=#1
        ");
    }

    /// A function of the file that returns a retrying client is its factory: a loop around
    /// what it makes is nested (site #0, the retry on a timeout). The near miss (site #1): a
    /// loop that goes round only on a refusal variant the client never retries.
    #[test]
    fn a_retrying_client_from_a_factory_and_a_loop_of_another_class() {
        insta::assert_snapshot!(check(
            "fn retrying() -> ClientWithMiddleware {
    ClientBuilder::new(reqwest::Client::new())
        .with(RetryTransientMiddleware::new_with_policy(policy))
        .build()
}
async fn on_timeout() -> Result<String, ApiError> {
    let client = retrying();
    let mut attempts = 0;
    loop {
        match decode(client.get(URL).send().await?).await {
            Ok(b) => return Ok(b),
            Err(ApiError::Timeout) if attempts < 3 => attempts += 1,
            Err(e) => return Err(e),
        }
    }
}
async fn on_leader_change() -> Result<String, ApiError> {
    let client = retrying();
    let mut attempts = 0;
    loop {
        match decode(client.get(URL).send().await?).await {
            Ok(b) => return Ok(b),
            Err(ApiError::LeaderChanged { .. }) if attempts < 3 => attempts += 1,
            Err(e) => return Err(e),
        }
    }
}"
        ), @r"
        site #0 9:5 loop cap=4 deadline=- exits-on-failure
        site #1 20:5 loop cap=4 deadline=- exits-on-failure
        nested site=#0 inner 2:5 by RetryTransientMiddleware
        ");
    }

    /// A failover over nodes inside the retry loop: the inner `for` is the attempt (the exit on
    /// success is inside it), so when every node fails the path that leaves it has failed, and
    /// the wait and the next round stand on no bound. The near misses: the same loop with an
    /// attempt check after the failover, and a loop whose inner `for` handles each item's
    /// failure itself and holds no exit of the outer loop (a drain; its failures stay inside).
    #[test]
    fn a_failover_inside_the_retry_loop_fails_as_a_whole() {
        insta::assert_snapshot!(check(
            "async fn connect_any(nodes: &[Node]) -> Conn {
    loop {
        for node in nodes {
            if let Ok(c) = node.connect().await {
                return c;
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn connect_capped(nodes: &[Node], max: u32) -> Result<Conn, E> {
    let mut attempt = 0;
    loop {
        for node in nodes {
            if let Ok(c) = node.connect().await {
                return Ok(c);
            }
        }
        attempt += 1;
        if attempt >= max {
            return Err(E::Down);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn drain(rx: &mut Rx) {
    loop {
        let Ok(batch) = rx.recv().await else { return };
        for item in batch {
            if let Err(e) = item.retry_send().await {
                continue;
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}"
        ), @r"
        site #0 2:5 loop cap=none deadline=- ungated-round=9:5
        site #1 14:5 loop cap=symbolic deadline=- exits-on-failure
        sleep 8:9 tokio::time::sleep(Duration::from_secs(1)) site=#0
        sleep 24:9 tokio::time::sleep(Duration::from_secs(1)) site=#1
        sleep 36:9 tokio::time::sleep(Duration::from_secs(1)) site=-
        fixed-delay 8:9 site=#0
        fixed-delay 24:9 site=#1
        asks-crate connect
        ");
    }

    /// `continue 'listen` from the reconnect loop inside a listener's loop leaves the reconnect
    /// loop on success, like a `return`, and its wait is in a helper: the reconnect loop is
    /// still a site that goes round forever (cdrs-tokio's control connection).
    #[test]
    fn a_labelled_continue_is_the_success_exit_of_an_inner_reconnect_loop() {
        insta::assert_snapshot!(check(
            "impl C {
    async fn run(&mut self) {
        'listen: loop {
            if let Some(t) = self.current() {
                let _ = t.listen().await;
                continue;
            }
            loop {
                for node in &self.nodes {
                    if let Ok(connection) = node.new_connection().await {
                        self.store(connection);
                        continue 'listen;
                    }
                }
                Self::wait_for_reconnection(&mut self.schedule).await;
            }
        }
    }
}"
        ), @r"
        site #0 8:13 loop cap=none deadline=- ungated-round=16:13
        asks-crate new_connection
        ");
    }

    /// A `?` on a call of the file's own function that decides on a maximum (in a closure, as
    /// nats' `get_servers` filters the servers with reconnects left) is the loop's gate. The
    /// near miss: a helper whose comparison reads data (`delivery_attempt > 0`) bounds nothing.
    #[test]
    fn a_helper_that_gives_up_at_a_maximum_is_a_gate() {
        insta::assert_snapshot!(check(
            "impl Connector {
    fn servers_left(&self) -> io::Result<Vec<Server>> {
        let left: Vec<_> = self.attempts.iter().filter_map(|(s, n)| match self.max_reconnects {
            Some(max) if *n < max => Some(s.clone()),
            Some(_) => None,
            None => Some(s.clone()),
        }).collect();
        if left.is_empty() { Err(no_servers()) } else { Ok(left) }
    }

    fn fresh(&self) -> io::Result<Vec<Server>> {
        Ok(self.all.iter().filter(|s| s.delivery_attempt > 0).cloned().collect())
    }

    fn connect(&mut self) -> io::Result<Stream> {
        loop {
            let servers = self.servers_left()?;
            for server in &servers {
                *self.attempts.get_mut(server).unwrap() += 1;
                if let Ok(s) = self.connect_addr(server) {
                    return Ok(s);
                }
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }

    fn reconnect(&mut self) -> io::Result<Stream> {
        loop {
            let servers = self.fresh()?;
            for server in &servers {
                if let Ok(s) = self.connect_addr(server) {
                    return Ok(s);
                }
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}"
        ), @r"
        site #0 16:9 loop cap=none deadline=- exits-on-failure
        site #1 29:9 loop cap=none deadline=- exits-on-failure ungated-round=37:9
        sleep 24:13 std::thread::sleep(Duration::from_secs(1)) site=#0 blocking
        sleep 36:13 std::thread::sleep(Duration::from_secs(1)) site=#1 blocking
        fixed-delay 24:13 site=#0
        fixed-delay 36:13 site=#1
        asks-crate connect_addr
        asks-crate no_servers
        ");
    }

    /// A budget that counts down is a bound as a maximum is: the helper that fails once its
    /// rounds are spent (`if self.rounds_remaining == 0 { return Err(..) }`) gates the loop that
    /// asks it, and a call handed the budget or the deadline kept across the rounds spends it
    /// and fails when it is gone. The near misses: a helper whose zero test reads data (an empty
    /// batch), and a call handed only the per-attempt `timeout`.
    #[test]
    /// A retry predicate that answers `false` for every error without a response status re-sends
    /// only after the server answered: a timeout is never retried (site #0: a let-else, #1: a
    /// tail `is_some_and`). Near misses: a predicate that also retries timeouts (#2), and one
    /// that answers `true` before it looks at the status (#3).
    fn a_predicate_that_needs_a_status_retries_no_timeout() {
        insta::assert_snapshot!(check(
            "use backon::Retryable;
async fn a(req: Req) -> Result<R, E> {
    req.retry(&policy()).when(|e| {
        let Some(status) = e.status() else { return false; };
        status.is_server_error()
    }).await
}
async fn b(req: Req) -> Result<R, E> {
    req.retry(&policy()).when(|e| e.status().is_some_and(|s| s.is_server_error())).await
}
async fn c(req: Req) -> Result<R, E> {
    req.retry(&policy()).when(|e| e.is_timeout() || e.status().is_some_and(|s| s.is_server_error())).await
}
async fn d(req: Req) -> Result<R, E> {
    req.retry(&policy()).when(|e| {
        if e.is_connect() { return true; }
        let Some(status) = e.status() else { return false; };
        status.is_server_error()
    }).await
}"
        ), @r"
        site #0 3:9 combinator backon::retry cap=unknown deadline=- status-only
        site #1 9:9 combinator backon::retry cap=unknown deadline=- status-only
        site #2 12:9 combinator backon::retry cap=unknown deadline=-
        site #3 15:9 combinator backon::retry cap=unknown deadline=-
        ");
    }

    #[test]
    /// A loop whose every step ends the run on error (`step()?`) sends no failure round: a
    /// state machine stepping to its next state is no retry site, though a sleep and an `Err`
    /// test sit inside it (here in a closure of its own, and in an arm that recovers). One
    /// failure arm that goes round makes it a site, and so does a step passed after a failed
    /// status test (reading the refusal's body is no success).
    fn a_loop_whose_steps_leave_on_error_is_no_retry() {
        insta::assert_snapshot!(check(
            "impl Machine {
    async fn run(&self, mut ctx: Ctx) -> Result<Doc> {
        let mut result = None;
        loop {
            match ctx.state()? {
                State::NeedKeys => {
                    let keys = self.fetch_keys(&ctx).await?;
                    ctx.feed(keys)?;
                }
                State::NeedToken => {
                    let t = match self.token().await {
                        Ok(t) => t,
                        Err(e) if e.is_stale() => match self.refresh().await {
                            Ok(t) => t,
                            Err(_) => return Err(e),
                        },
                        Err(e) => return Err(e),
                    };
                    ctx.feed_token(t)?;
                }
                State::NeedKms => {
                    stream::iter(ctx.kms()).try_for_each(|k| async move {
                        tokio::time::sleep(k.wait()).await;
                        if let Err(e) = k.send().await { return Err(e); }
                        Ok(())
                    }).await?;
                }
                State::Ready => {
                    result = Some(ctx.finish()?);
                }
                State::Done => break,
                s => return Err(unhandled(s)),
            }
        }
        result.ok_or_else(no_result)
    }
    async fn run_retrying(&self, mut ctx: Ctx) -> Result<Doc> {
        loop {
            match ctx.state()? {
                State::NeedKeys => match self.fetch_keys(&ctx).await {
                    Ok(keys) => return Ok(keys),
                    Err(_) => {
                        tokio::time::sleep(BACKOFF).await;
                        continue;
                    }
                },
                State::Ready => return ctx.finish(),
            }
        }
    }
    async fn report(&self) -> Result<String> {
        for _ in 0..3 {
            let resp = self.client.get(URL).send().await?;
            if resp.status() != 429 { return resp.text().await; }
            let why = resp.text().await?;
            tracing::warn!(why);
            tokio::time::sleep(BACKOFF).await;
        }
        Err(gave_up())
    }
}"
        ), @r"
        site #0 38:9 loop cap=none deadline=- exits-on-failure ungated-round=44:25
        site #1 52:9 for cap=3 deadline=- exits-on-failure
        sleep 23:25 tokio::time::sleep(k.wait()) site=-
        sleep 43:25 tokio::time::sleep(BACKOFF) site=#0
        sleep 57:13 tokio::time::sleep(BACKOFF) site=#1
        fixed-delay 43:25 site=#0
        fixed-delay 57:13 site=#1
        asks-crate state
        ");
    }

    #[test]
    fn a_budget_that_counts_down_or_is_handed_on_is_a_gate() {
        insta::assert_snapshot!(check(
            "impl Budget {
    fn before_round(&mut self) -> Result<(), Stop> {
        if self.rounds_remaining == 0 { return Err(Stop::Exhausted); }
        self.rounds_remaining -= 1;
        Ok(())
    }
    fn before_batch(&mut self) -> Result<(), Stop> {
        if self.batch.len() == 0 { return Err(Stop::Empty); }
        Ok(())
    }
}
impl Reader {
    fn reconnect(&mut self, budget: &mut Budget) -> Result<Conn> {
        loop {
            match budget.before_round() { Ok(()) => {} Err(_) => break }
            if let Ok(c) = self.dial() { return Ok(c); }
            std::thread::sleep(BACKOFF);
        }
        Err(gave_up())
    }
    fn drain(&mut self, budget: &mut Budget) -> Result<Conn> {
        loop {
            match budget.before_batch() { Ok(()) => {} Err(_) => break }
            if let Ok(c) = self.dial() { return Ok(c); }
            std::thread::sleep(BACKOFF);
        }
        Err(gave_up())
    }
    fn replay(&mut self) -> Result<()> {
        loop {
            self.reconnect(&mut self.failover_budget)?;
            match self.send_query() { Ok(()) => return Ok(()), Err(_) => continue }
            std::thread::sleep(BACKOFF);
        }
    }
    fn resend(&mut self) -> Result<()> {
        loop {
            self.connect_within(self.timeout)?;
            match self.send_query() { Ok(()) => return Ok(()), Err(_) => continue }
            std::thread::sleep(BACKOFF);
        }
    }
}"
        ), @r"
        site #0 14:9 loop cap=none deadline=- exits-on-failure
        site #1 22:9 loop cap=none deadline=- exits-on-failure ungated-round=26:9
        site #2 30:9 loop cap=none deadline=- exits-on-failure
        site #3 37:9 loop cap=none deadline=- exits-on-failure ungated-round=39:74
        sleep 17:13 std::thread::sleep(BACKOFF) site=#0 blocking
        sleep 25:13 std::thread::sleep(BACKOFF) site=#1 blocking
        sleep 33:13 std::thread::sleep(BACKOFF) site=#2 blocking
        sleep 40:13 std::thread::sleep(BACKOFF) site=#3 blocking
        fixed-delay 17:13 site=#0
        fixed-delay 25:13 site=#1
        fixed-delay 33:13 site=#2
        fixed-delay 40:13 site=#3
        asks-crate connect_within
        asks-crate dial
        ");
    }

    /// A private function whose every call in the file runs under a deadline or raced in
    /// `select!` has its sites under the callers' deadline and its sleeps raced (RULES.md: "the
    /// site, or the function containing it, is the future inside timeout"), through a caller
    /// that is itself so bounded too. The near misses: a `pub` function (callable from
    /// anywhere), one whose other call is bare, and a trait method (callable through the trait).
    #[test]
    fn a_private_function_whose_callers_all_bound_it() {
        insta::assert_snapshot!(check(
            "async fn connect(addr: &str) -> Conn {
    loop {
        match Conn::open(addr).await {
            Ok(c) => return c,
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
}

async fn via(addr: &str) -> Conn {
    connect(addr).await
}

pub async fn start(addr: &str) -> Option<Conn> {
    tokio::time::timeout(Duration::from_secs(30), via(addr)).await.ok()
}

pub async fn open(addr: &str) -> Conn {
    loop {
        match Conn::open(addr).await {
            Ok(c) => return c,
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
}

async fn dial(addr: &str) -> Conn {
    loop {
        match Conn::open(addr).await {
            Ok(c) => return c,
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
}

impl Pool {
    async fn next(&mut self) -> Option<Conn> {
        tokio::select! {
            _ = self.shutdown.cancelled() => None,
            c = dial(&self.addr) => Some(c),
            d = open(&self.addr) => Some(d),
        }
    }

    async fn fill(&mut self) {
        self.conns.push(dial(&self.addr).await);
    }
}

impl Stream for Pool {
    fn poll_next(&mut self) -> Option<Conn> {
        loop {
            match self.try_conn() {
                Ok(c) => return Some(c),
                Err(_) => std::thread::sleep(Duration::from_secs(1)),
            }
        }
    }
}

async fn drive(p: &mut Pool) {
    tokio::time::timeout(Duration::from_secs(5), p.poll_next()).await;
}"
        ), @r"
        site #0 2:5 loop cap=none deadline=outer ungated-round=7:5
        site #1 19:5 loop cap=none deadline=- ungated-round=24:5
        site #2 28:5 loop cap=none deadline=- ungated-round=33:5
        site #3 52:9 loop cap=none deadline=- ungated-round=57:9
        sleep 5:23 tokio::time::sleep(Duration::from_secs(1)) site=#0 raced
        sleep 22:23 tokio::time::sleep(Duration::from_secs(1)) site=#1
        sleep 31:23 tokio::time::sleep(Duration::from_secs(1)) site=#2
        sleep 55:27 std::thread::sleep(Duration::from_secs(1)) site=#3 blocking
        fixed-delay 5:23 site=#0
        fixed-delay 22:23 site=#1
        fixed-delay 31:23 site=#2
        fixed-delay 55:27 site=#3
        ");
    }

    /// `return match decide(..) { .. }` evaluates the match before it leaves: a decision
    /// handed the attempt counter at the top of the round is the gate of the `continue`s in its
    /// arms, and handed the status it classifies (no status finding). Near misses: a decision
    /// handed no status (its `Stop` answer still bounds the loop, the status finding stands),
    /// and a returned match on the attempt itself, whose `continue` arm is an ungated round.
    #[test]
    fn a_returned_match_on_a_decision() {
        insta::assert_snapshot!(check(
            "async fn send(client: &Client, req: Req, policy: &Policy) -> Result<Bytes, E> {
    let mut tries = 0;
    let mut last_status = None;
    let mut last_error = E::Invalid;
    loop {
        return match policy.decide(last_status, tries) {
            Decision::Stop => Err(last_error),
            Decision::Go(wait) => {
                sleep(wait).await;
                let resp = match client.request(req.clone()).await {
                    Ok(r) => r,
                    Err(e) => {
                        last_error = e.into();
                        tries += 1;
                        continue;
                    }
                };
                if !resp.status().is_success() {
                    tries += 1;
                    last_status = Some(resp.status());
                    continue;
                }
                Ok(resp.bytes().await?)
            }
        };
    }
}

async fn send_blind(client: &Client, req: Req, policy: &Policy) -> Result<Bytes, E> {
    loop {
        return match policy.decide() {
            Decision::Stop => Err(E::Invalid),
            Decision::Go(wait) => {
                sleep(wait).await;
                let resp = client.request(req.clone()).await?;
                if !resp.status().is_success() {
                    continue;
                }
                Ok(resp.bytes().await?)
            }
        };
    }
}

async fn fetch_forever(client: &Client) -> Result<Bytes, E> {
    loop {
        return match client.fetch().await {
            Err(_) => {
                sleep(Duration::from_secs(1)).await;
                continue;
            }
            r => r,
        };
    }
}
"
        ), @r"
        site #0 5:5 loop cap=none deadline=- exits-on-failure
        site #1 30:5 loop cap=none deadline=- exits-on-failure
        site #2 46:5 loop cap=none deadline=- ungated-round=50:17
        sleep 9:17 sleep(wait) site=#0
        sleep 34:17 sleep(wait) site=#1
        sleep 49:17 sleep(Duration::from_secs(1)) site=#2
        status 36:20 site=#1
        fixed-delay 49:17 site=#2
        ");
    }

    /// A loop whose body says nothing of retrying is one when its function is named for it
    /// and it goes round on an error (`retry_on_connection_loss`). Near miss: an allocator's
    /// `alloc_retry` loop that falls through to the next free region without failing.
    #[test]
    fn a_function_named_for_its_retry_loop() {
        insta::assert_snapshot!(check(
            "async fn retry_on_loss<T, F>(op: impl Fn() -> F) -> Result<T>
where
    F: Future<Output = Result<T>>,
{
    loop {
        let fut = op();
        return match fut.await {
            Err(Error::ConnectionLoss) => continue,
            r => r,
        };
    }
}

fn alloc_retry(state: &mut State, order: u8) -> Option<Page> {
    loop {
        let Some(region) = state.find_free(order) else {
            return None;
        };
        if let Some(page) = state.region(region).alloc(order) {
            return Some(page);
        }
        state.mark_full(order, region);
    }
}
"
        ), @r"
        site #0 5:5 loop cap=none deadline=- ungated-round=8:43
        wrapper retry_on_loss param=0 cap=None site=5:5
        ");
    }
    #[test]
    fn a_while_whose_condition_is_the_failure_is_a_retry_site() {
        insta::assert_snapshot!(check(
            "async fn up(addr: &str) {
    while let Err(e) = connect(addr).await {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
async fn counted(addr: &str) -> Result<(), Error> {
    let mut n = 0;
    while let Err(e) = connect(addr).await {
        n += 1;
        if n > 3 { return Err(e); }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Ok(())
}
fn sync_up(path: &str) {
    while UnixStream::connect(path).is_err() {
        std::thread::sleep(Duration::from_millis(100));
    }
}
fn drain(rx: &Receiver<Job>) {
    while let Ok(job) = rx.try_recv() {
        std::thread::sleep(Duration::from_millis(10));
    }
}"
        ), @r"
        site #0 2:5 while cap=none deadline=-
        site #1 8:5 while cap=4 deadline=- exits-on-failure
        site #2 16:5 while cap=none deadline=-
        sleep 3:9 tokio::time::sleep(Duration::from_secs(1)) site=#0
        sleep 11:9 tokio::time::sleep(Duration::from_secs(1)) site=#1
        sleep 17:9 std::thread::sleep(Duration::from_millis(100)) site=#2 blocking
        sleep 22:9 std::thread::sleep(Duration::from_millis(10)) site=- blocking
        fixed-delay 3:9 site=#0
        fixed-delay 11:9 site=#1
        fixed-delay 17:9 site=#2
        ");
    }
    #[test]
    fn a_helper_that_returns_the_servers_delay_passes_it_to_its_caller() {
        insta::assert_snapshot!(check(
            "fn wait_of(resp: &Response) -> Option<Duration> {
    let secs = resp.headers().get(RETRY_AFTER)?.to_str().ok()?.parse().ok()?;
    Some(Duration::from_secs(secs))
}
fn capped_wait_of(resp: &Response) -> Duration {
    wait_of(resp).unwrap_or_default().min(MAX_WAIT)
}
async fn get(client: &Client) -> Result<Response> {
    for _ in 0..3 {
        let resp = client.get(URL).send().await?;
        if resp.status() == 429 {
            let d = wait_of(&resp).unwrap_or(Duration::from_secs(1));
            tokio::time::sleep(d).await;
            tokio::time::sleep(capped_wait_of(&resp)).await;
            tokio::time::sleep(parse_retry_after(resp.headers())).await;
            continue;
        }
        return Ok(resp);
    }
    Err(Error::Exhausted)
}"
        ), @r"
        site #0 9:5 for cap=3 deadline=- exits-on-failure
        sleep 13:13 tokio::time::sleep(d) site=#0
        sleep 14:13 tokio::time::sleep(capped_wait_of(&resp)) site=#0
        sleep 15:13 tokio::time::sleep(parse_retry_after(resp.headers())) site=#0
        server-wait 13:13 from 12:13
        server-wait 14:13 from 14:13 capped
        server-wait 15:13 from 15:13
        asks-crate status
        ");
    }
    #[test]
    fn a_helper_that_compares_the_clock_is_a_hand_checked_deadline() {
        insta::assert_snapshot!(check(
            "fn spent(start: Instant, budget: Duration) -> bool {
    start.elapsed() >= budget
}
async fn fetch(c: &Client, budget: Duration) -> Result<(), Error> {
    let start = Instant::now();
    loop {
        match c.call().await {
            Ok(()) => return Ok(()),
            Err(e) if spent(start, budget) => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
}
async fn other(c: &Client) -> Result<(), Error> {
    for _ in 0..3 {
        if Clock::spent(c) { return Ok(()); }
        if c.call().await.is_ok() { return Ok(()); }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Ok(())
}"
        ), @r"
        site #0 6:5 loop cap=symbolic deadline=- exits-on-failure clock-helper
        site #1 15:5 for cap=3 deadline=-
        sleep 10:23 tokio::time::sleep(Duration::from_secs(1)) site=#0
        sleep 18:9 tokio::time::sleep(Duration::from_secs(1)) site=#1
        fixed-delay 10:23 site=#0
        fixed-delay 18:9 site=#1
        ");
    }
    #[test]
    fn a_helper_that_waits_for_its_caller_is_the_callers_wait() {
        // `pause` is called only between the loop's attempts: its sleep is the loop's. `nap` is
        // also called outside any site, and `slices` waits in a loop of its own: neither is.
        insta::assert_snapshot!(check(
            "async fn pause(n: u32) {
    tokio::time::sleep(Duration::from_millis(100 << n)).await;
}
async fn nap() {
    tokio::time::sleep(Duration::from_millis(10)).await;
}
fn slices(d: Duration, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(d.min(Duration::from_millis(50)));
    }
}
async fn fetch(c: &Client) -> Result<(), Error> {
    nap().await;
    for attempt in 0..5 {
        match c.call().await {
            Ok(()) => return Ok(()),
            Err(_) => {
                pause(attempt).await;
                nap().await;
            }
        }
    }
    Err(Error::GaveUp)
}"
        ), @r"
        site #0 14:5 for cap=5 deadline=-
        sleep 2:5 tokio::time::sleep(Duration::from_millis(100 << n)) site=#0 via=18:17
        sleep 5:5 tokio::time::sleep(Duration::from_millis(10)) site=-
        sleep 9:9 std::thread::sleep(d.min(Duration::from_millis(50))) site=- blocking
        fixed-delay 2:5 site=-
        ");
    }

    #[test]
    fn a_supervisor_that_waits_after_a_failure_has_reconnect_waits() {
        insta::assert_snapshot!(check(
            "use tokio::time::sleep;
impl Task {
    async fn run(mut self) {
        loop {
            if self.halt.load(Ordering::SeqCst) {
                return;
            }
            match self.connect().await {
                Err(e) => sleep(self.retry_delay).await,
                Ok(conn) => self.serve(conn).await,
            }
        }
    }
    async fn heartbeat(&self) {
        loop {
            if self.halt.load(Ordering::SeqCst) {
                return;
            }
            sleep(Duration::from_secs(10)).await;
            if let Err(e) = self.ping().await {
                warn!(\"ping failed: {e}\");
            }
        }
    }
    async fn accept_loop(&self, listener: TcpListener) {
        loop {
            if self.halt.load(Ordering::SeqCst) {
                return;
            }
            match listener.accept().await {
                Err(e) => sleep(Duration::from_secs(1)).await,
                Ok((s, _)) => self.serve(s).await,
            }
        }
    }
}"
        ), @r"
        sleep 9:27 tokio::time::sleep(self.retry_delay) site=-
        sleep 19:13 tokio::time::sleep(Duration::from_secs(10)) site=-
        sleep 31:27 tokio::time::sleep(Duration::from_secs(1)) site=-
        reconnect 4:9 cancel failure-paths=9:27 waits=9:27
        reconnect 15:9 cancel failure-paths=20:47 waits=
        ");
    }

    #[test]
    fn a_while_that_tests_only_what_success_sets_has_no_cap() {
        // `while ip.is_none()` ends only when an attempt succeeds: no cap, like a `loop`, and
        // its way round on `NotFound` stands on no bound. `while attempt < 5` is a cap; a flag
        // the body never sets is no outcome; a copy retried in memory (no await, no remote
        // call) is left alone.
        insta::assert_snapshot!(check(
            "async fn until_ready(c: &Client) {
    let mut ip = None;
    while ip.is_none() {
        tokio::time::sleep(Duration::from_secs(1)).await;
        match c.describe().send().await {
            Ok(d) => ip = d.ip(),
            Err(e) => {
                if e.code() != Some(\"NotFound\") {
                    panic!(\"describe failed: {e}\");
                }
            }
        }
    }
}
async fn counted(c: &Client) {
    let mut attempt = 0;
    let mut done = false;
    while !done && attempt < 5 {
        attempt += 1;
        match c.send().await {
            Ok(_) => done = true,
            Err(e) => tracing::warn!(\"retry {attempt}: {e}\"),
        }
    }
}
fn copy_retry(opts: &Options) {
    let mut work = true;
    while work {
        match copy_file(opts) {
            Ok(_) => work = false,
            Err(e) => match ask_user(&e) {
                Decision::Retry => {}
                Decision::Abort => panic!(\"{e}\"),
            },
        }
    }
}
"
        ), @r"
        site #0 3:5 while cap=none deadline=- exits-on-failure ungated-round=13:5
        site #1 18:5 while cap=symbolic deadline=-
        site #2 28:5 while cap=symbolic deadline=- exits-on-failure
        sleep 4:9 tokio::time::sleep(Duration::from_secs(1)) site=#0
        fixed-delay 4:9 site=#0
        asks-crate code
        ");
    }

    #[test]
    fn a_while_that_tests_only_a_stop_signal_is_periodic_work() {
        // The ping loop pings whether or not the last ping failed and ends only when asked to:
        // no retry site. The reader's `else` (the stream ended) is a failure path: its wait
        // before reconnecting is a reconnect wait.
        insta::assert_snapshot!(check(
            "async fn run(stop: Arc<AtomicBool>, mut reader: Reader, w: Writer) {
    while !stop.load(Ordering::Relaxed) {
        if let Err(e) = w.send(ping()).await {
            error!(\"ping failed: {e}\");
        }
        tokio::time::sleep(Duration::from_secs(50)).await;
    }
    while !stop.load(Ordering::Relaxed) {
        if let Some(msg) = reader.next().await {
            handle(msg);
        } else {
            tokio::time::sleep(Duration::from_secs(1)).await;
            match connect().await {
                Ok(r) => reader = r,
                Err(e) => error!(\"reconnect failed: {e}\"),
            }
        }
    }
}
"
        ), @r"
        sleep 6:9 tokio::time::sleep(Duration::from_secs(50)) site=-
        sleep 12:13 tokio::time::sleep(Duration::from_secs(1)) site=-
        reconnect 2:5 cancel failure-paths=3:46 waits=
        reconnect 8:5 cancel failure-paths=11:16,15:27 waits=12:13
        ");
    }

    #[test]
    fn an_sdk_client_retries_by_itself_unless_the_file_turns_it_off() {
        let code = |config: &str| {
            format!(
                "async fn put(bucket: &str) -> Result<(), Error> {{
    let config = aws_config::defaults(BehaviorVersion::latest()){config}.load().await;
    let client = aws_sdk_s3::Client::new(&config);
    for attempt in 0..5 {{
        match client.put_object().bucket(bucket).send().await {{
            Ok(_) => return Ok(()),
            Err(e) => tracing::warn!(\"attempt {{attempt}}: {{e}}\"),
        }}
        tokio::time::sleep(Duration::from_secs(2)).await;
    }}
    Err(Error::GaveUp)
}}
"
            )
        };
        let on = check(&code(""));
        assert!(
            on.contains("nested site=#0 inner 3:18 by aws_sdk_*::Client"),
            "{on}"
        );
        let off = check(&code(".retry_config(RetryConfig::disabled())"));
        assert!(!off.contains("nested"), "{off}");
    }

    /// A way round taken a bounded number of times by itself: its branch tests a local and the
    /// path steps it off the passing value before going round (libsql's redirect `if nr == 0 {
    /// nr += 1; continue }`, dropbox-sdk's `if !retried { retried = true; continue }`). The near
    /// misses stay unbounded: a path of that branch that goes round without the step, a counter
    /// the loop also resets, a flag declared inside the loop, a test of a bound the loop moves.
    #[test]
    fn a_way_round_that_steps_its_test_off_is_bounded() {
        insta::assert_snapshot!(check(
            "async fn redirect(c: &C, max: u32) -> Result<R, E> {
    let mut nr = 0;
    loop {
        let res = c.send(req()).await?;
        if res.status().is_success() {
            return Ok(res);
        }
        if res.is_redirect() && nr == 0 {
            nr += 1;
            continue;
        }
        if nr > max || !res.is_server_error() {
            return Err(e(res));
        }
        sleep(delay(nr)).await;
        nr += 1;
    }
}
async fn auth(c: &C) -> Result<R, E> {
    let mut retried = false;
    loop {
        return match c.send(req()).await {
            Ok(r) => Ok(r),
            Err(e) if !retried => {
                if c.refresh().await? {
                    retried = true;
                    continue;
                }
                Err(e)
            }
            Err(e) => Err(e),
        };
    }
}
async fn skips_the_step(c: &C) -> Result<R, E> {
    let mut retried = false;
    loop {
        match c.send(req()).await {
            Ok(r) => return Ok(r),
            Err(e) if !retried => {
                if c.refresh().await? {
                    retried = true;
                }
                sleep(d).await;
                continue;
            }
            Err(e) => return Err(e),
        }
    }
}
async fn resets(c: &C) -> Result<R, E> {
    let mut n = 0;
    loop {
        match c.send(req()).await {
            Ok(r) => return Ok(r),
            Err(e) if n < 3 => {
                n += 1;
                sleep(d).await;
                continue;
            }
            Err(e) => {
                n = 0;
                sleep(d).await;
            }
        }
    }
}
async fn inner_flag(c: &C) -> Result<R, E> {
    loop {
        let mut retried = false;
        match c.send(req()).await {
            Ok(r) => return Ok(r),
            Err(e) if !retried => {
                retried = true;
                sleep(d).await;
                continue;
            }
            Err(e) => return Err(e),
        }
    }
}"
        ), @r"
        site #0 3:5 loop cap=0 deadline=- exits-on-failure
        site #1 21:5 loop cap=symbolic deadline=- exits-on-failure
        site #2 37:5 loop cap=none deadline=- exits-on-failure ungated-round=45:17 (gated elsewhere)
        site #3 53:5 loop cap=4 deadline=- ungated-round=66:5 (gated elsewhere)
        site #4 69:5 loop cap=none deadline=- exits-on-failure ungated-round=76:17
        sleep 15:9 sleep(delay(nr)) site=#0
        sleep 44:17 sleep(d) site=#2
        sleep 58:17 sleep(d) site=#3
        sleep 63:17 sleep(d) site=#3
        sleep 75:17 sleep(d) site=#4
        fixed-delay 15:15 site=#0
        asks-crate refresh
        ");
    }

    /// An exit decides by the innermost outcome test around it: a poller whose only exit is
    /// the consumer gone (`Ok(s) => if let Err(_) = tx.send(s).await { break }`) never leaves
    /// on success, so it is periodic work, not a retry site. The near miss leaves after the
    /// send whatever it did: that `break` is the success exit, and the loop is a site.
    #[test]
    fn an_exit_under_a_failure_test_inside_a_success_arm_is_no_success_exit() {
        insta::assert_snapshot!(check(
            "async fn poll(tx: Sender<S>) {
    loop {
        match fetch().await {
            Ok(s) => {
                if let Err(_) = tx.send(s).await {
                    break;
                }
            }
            Err(e) => warn!(\"{e}\"),
        }
        sleep(INTERVAL).await;
    }
}
async fn once(tx: Sender<S>) {
    loop {
        match fetch().await {
            Ok(s) => {
                if let Err(_) = tx.send(s).await {
                    warn!(\"gone\");
                }
                break;
            }
            Err(e) => warn!(\"{e}\"),
        }
        sleep(INTERVAL).await;
    }
}"
        ), @r"
        site #0 15:5 loop cap=none deadline=- ungated-round=26:5
        sleep 11:9 sleep(INTERVAL) site=-
        sleep 25:9 sleep(INTERVAL) site=#0
        fixed-delay 25:9 site=#0
        reconnect 2:5 failure-paths=5:50,9:23 waits=
        ");
    }

    /// A strategy asked "stop or go on" that answers with std's `ControlFlow` (instant-acme's
    /// `if let ControlFlow::Break(e) = retrying.wait().await { return Err(e) }`) is the loop's
    /// gate, as a `match` on a `Step::GiveUp` is. The near miss: a `Continue` test that leaves
    /// on the answer to go on is no bound on the failures that go round. (An operation that
    /// answers `Break(r)` on success, rskafka's `Break(r) => break Ok(r)`, is no strategy: the
    /// pinned corpus holds that finding.)
    #[test]
    fn a_control_flow_break_that_leaves_is_a_gate() {
        insta::assert_snapshot!(check(
            "async fn poll(retrying: &mut Retrying, order: &mut Order) -> Result<State, Error> {
    loop {
        if let ControlFlow::Break(err) = retrying.next_step().await {
            return Err(err);
        }
        match order.refresh().await {
            Ok(s) if s.ready() => return Ok(s),
            _ => continue,
        }
    }
}

async fn poll_open(retrying: &mut Retrying, order: &mut Order) -> Result<State, Error> {
    loop {
        if let ControlFlow::Continue(()) = retrying.next_step().await {
            tracing::debug!(\"again\");
        }
        match order.refresh().await {
            Ok(s) if s.ready() => return Ok(s),
            _ => continue,
        }
    }
}"
        ), @r"
        site #0 2:5 loop cap=none deadline=- exits-on-failure
        site #1 14:5 loop cap=none deadline=- ungated-round=20:18
        asks-crate next_step
        asks-crate ready
        ");
    }

    /// A request sent in the `return` of a loop runs once, on the way out, whether the helper
    /// that sends it is called there or the POST is written there; `self.refresh()` in `impl
    /// Order` is `Order::refresh`, not another type's `refresh` of the file. The near misses: the
    /// same POST sent before the test goes round, and `Order::refresh`, which does POST.
    #[test]
    fn a_request_on_the_way_out_is_not_re_sent() {
        insta::assert_snapshot!(check(
            "impl Order {
    async fn poll_certificate(&mut self) -> Result<String, Error> {
        for _ in 0..10 {
            let Ok(state) = self.refresh().await else {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            };
            if state.valid() {
                return self.certificate().await;
            }
            if state.done() {
                return self.http.post(&self.finalize_url).send().await?.text().await;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        Err(Error::Timeout)
    }

    async fn certificate(&mut self) -> Result<String, Error> {
        self.http.post(&self.cert_url).send().await?.text().await
    }

    async fn refresh(&mut self) -> Result<State, Error> {
        self.http.get(&self.url).send().await?.json().await
    }
}

impl Authorization {
    async fn refresh(&mut self) -> Result<State, Error> {
        self.http.post(&self.url).send().await?.json().await
    }
}

impl Batch {
    async fn submit(&mut self) -> Result<(), Error> {
        for _ in 0..3 {
            let sent = self.http.post(&self.url).send().await;
            if sent.is_ok() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        Err(Error::GaveUp)
    }
}"
        ), @r"
        site #0 3:9 for cap=10 deadline=- exits-on-failure
        site #1 36:9 for cap=3 deadline=-
        sleep 5:17 tokio::time::sleep(Duration::from_secs(1)) site=#0
        sleep 14:13 tokio::time::sleep(Duration::from_secs(1)) site=#0
        sleep 41:13 tokio::time::sleep(Duration::from_secs(1)) site=#1
        fixed-delay 5:17 site=#0
        fixed-delay 14:13 site=#0
        fixed-delay 41:13 site=#1
        write 37:34 POST retried-by 36:9 key=missing
        asks-crate done
        asks-crate post
        asks-crate valid
        ");
    }

    /// RULES.md's retry site needs no retry word: a loop that awaits an operation, leaves when
    /// it succeeds and `continue`s from a failure arm goes round because the attempt failed
    /// (kubert's lease claim, mongodb's change-stream resume). The near misses: the same shape
    /// over a receive (a closed channel or an idle timeout is no failed operation, whatever the
    /// receiver), and an interrupted system call (EINTR) repeated in place.
    #[test]
    fn a_failure_arm_that_continues_is_a_retry_without_retry_words() {
        insta::assert_snapshot!(check(
            "impl Lease {
    async fn ensure_claimed(&self, me: &str) -> Result<Claim, Error> {
        loop {
            let claim = match self.acquire(me).await {
                Ok(c) => c,
                Err(e) if Self::is_conflict(&e) => {
                    self.resync().await?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            return Ok(claim);
        }
    }

    async fn next_peer(&self, rx: &mut Peers) -> Result<Peer, Error> {
        loop {
            match timeout(Duration::from_secs(5), rx.next()).await {
                Ok(Some(p)) => return Ok(p),
                Ok(None) => return Err(Error::Closed),
                Err(_) => continue,
            }
        }
    }

    async fn open(path: &Path) -> io::Result<File> {
        loop {
            match Op::open(path).await {
                Ok(f) => return Ok(f),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}"
        ), @r"
        site #0 3:9 loop cap=none deadline=- exits-on-failure ungated-round=8:21
        asks-crate is_conflict
        asks-crate resync
        ");
    }

    /// A wrapper's operation is what it retries, whatever it is called: `retry_future()`
    /// (subxt's `retry`) decides nothing about the bound, so the `continue` on a reconnecting
    /// error is a way round no check stands on. Near miss: a call named like a bound decision
    /// that is not the operation (`should_retry(n)`) still gates its way round.
    #[test]
    fn a_wrappers_operation_named_like_a_retry_is_no_gate() {
        let facts = check(
            "pub async fn retry<F: FnMut() -> T, T>(mut retry_future: F) -> Result<R, E> {
    loop {
        match retry_future().await {
            Ok(v) => return Ok(v),
            Err(e) if e.is_disconnected_will_reconnect() => continue,
            Err(e) => return Err(e),
        }
    }
}
pub async fn gated<F: FnMut() -> T, T>(mut op: F) -> Result<R, E> {
    let mut n = 0;
    loop {
        match op().await {
            Ok(v) => return Ok(v),
            Err(e) if should_retry(n) => n += 1,
            Err(e) => return Err(e),
        }
    }
}",
        );
        assert!(
            facts.contains(
                "site #0 2:5 loop cap=none deadline=- exits-on-failure ungated-round=5:61"
            ),
            "{facts}"
        );
        assert!(
            facts.contains("site #1 12:5 loop") && !facts.contains("ungated-round=15"),
            "{facts}"
        );
    }
}
