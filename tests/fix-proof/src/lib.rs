//! One instance of each problem timeoutlint fixes with `--fix --unsafe-fixes`; compiled for real.
//! Parse-only fixtures live in `fixtures/`; this file is the proof that the fixes compile.

use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

/// A stand-in remote call that fails a few times.
async fn call(attempt: u32) -> Result<(), String> {
    if attempt < 2 {
        Err(format!("attempt {attempt} failed"))
    } else {
        Ok(())
    }
}

/// blocking-sleep-in-async (MachineApplicable: the file uses tokio).
pub async fn warm_up() {
    std::thread::sleep(Duration::from_millis(1));
    let _ = call(2).await;
}

/// uncancellable-backoff with a token in scope (MaybeIncorrect: the race breaks the loop).
pub async fn with_token(token: CancellationToken) -> Result<(), String> {
    let mut last = String::new();
    for attempt in 0..5 {
        match call(attempt).await {
            Ok(()) => return Ok(()),
            Err(e) => {
                last = e;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    Err(last)
}

/// uncancellable-backoff with a hand-checked deadline (MaybeIncorrect: caps the wait).
pub async fn with_deadline(deadline: Instant) -> Result<(), String> {
    let mut backoff = Duration::from_millis(10);
    let mut attempt = 0;
    loop {
        if Instant::now() >= deadline {
            return Err("deadline passed".into());
        }
        match call(attempt).await {
            Ok(()) => return Ok(()),
            Err(_) => {
                attempt += 1;
                tokio::time::sleep(backoff).await;
                backoff *= 2;
            }
        }
    }
}

/// non-idempotent-retry-without-key with the key made per attempt (MachineApplicable: the key's
/// `let` reads nothing the loop binds, so it moves above the loop and is cloned per attempt).
pub async fn send_mail(client: &reqwest::Client) -> Result<(), String> {
    for _attempt in 0..3 {
        let key = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
            .to_string();
        let res = client
            .post("http://127.0.0.1:1/mail")
            .header("Idempotency-Key", key)
            .send()
            .await;
        if res.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err("gave up".into())
}

/// retry-after-uncapped with a deadline in scope (MaybeIncorrect: caps the server's wait at a
/// new `MAX_RETRY_AFTER` and by the time left).
pub async fn report(client: &reqwest::Client, deadline: Instant) -> Result<String, reqwest::Error> {
    for _attempt in 0..3 {
        let resp = client.get("http://127.0.0.1:1/report").send().await?;
        if resp.status() != reqwest::StatusCode::TOO_MANY_REQUESTS {
            return resp.text().await;
        }
        let secs = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(1);
        tokio::time::sleep(Duration::from_secs(secs)).await;
    }
    let _ = deadline;
    Ok(String::new())
}

/// retry-after-uncapped where the wait converts on the way: `.into()` takes the sleep's
/// parameter type, so the cap must not be a method called on it.
pub async fn report_converted(client: &reqwest::Client) -> Result<String, reqwest::Error> {
    for _attempt in 0..3 {
        let resp = client.get("http://127.0.0.1:1/report").send().await?;
        if resp.status() != reqwest::StatusCode::TOO_MANY_REQUESTS {
            return resp.text().await;
        }
        let wait = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(Duration::from_secs(1), Duration::from_secs);
        tokio::time::sleep(wait.into()).await;
    }
    Ok(String::new())
}

/// attempt-timeout-without-budget in the loop shape the fix rewrites (MaybeIncorrect: onto
/// `RetryPolicy`, same attempts, the timer as the attempt cap).
pub async fn timed_call() -> Result<(), String> {
    for attempt in 0..3 {
        match tokio::time::timeout(Duration::from_millis(100), call(2)).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => eprintln!("attempt {attempt} failed: {e}"),
            Err(_) => eprintln!("attempt {attempt} timed out"),
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err("gave up".into())
}

/// client-timeout-in-retry in the loop shape the fix rewrites (MaybeIncorrect: onto
/// `RetryPolicy`, same attempts, the client's timeout as the attempt cap).
pub async fn fetch_report(url: &str) -> Result<String, reqwest::Error> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()?;
    for attempt in 0..4 {
        match client.get(url).send().await {
            Ok(r) => return r.text().await,
            Err(e) => eprintln!("attempt {attempt} failed: {e}"),
        }
    }
    client.get(url).send().await?.text().await
}

// The loop shapes the policy rewrite keeps (client-timeout-in-retry and
// attempt-timeout-without-budget, MaybeIncorrect): counted `loop`s, `while`, `for` over any
// range, `if let`, break values, `?` give-ups, logging that reads the counter and the locals.

const LOOP_ATTEMPTS: u32 = 4;

/// A counted `loop`, the increment first, a give-up that needs no error value.
pub async fn counted_loop(url: &str) -> Result<String, String> {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().map_err(|e| e.to_string())?;
    let label = String::from("status");
    let mut attempt = 0;
    loop {
        attempt += 1;
        match client.get(url).send().await {
            // The success moves the local the logging borrows.
            Ok(r) => return Ok(label + r.status().as_str()),
            Err(_) if attempt >= LOOP_ATTEMPTS => {
                eprintln!("{label}: giving up after {attempt} attempts");
                return Err("gave up".to_string());
            }
            Err(e) => eprintln!("{label}: attempt {attempt} failed: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A counted `loop` used as a value, the increment last, the timer's give-ups apart.
pub async fn value_loop(max: u32) -> Result<(), String> {
    let mut attempt = 0;
    let v = loop {
        match tokio::time::timeout(Duration::from_millis(100), call(2)).await {
            Ok(Ok(v)) => break Ok(v),
            Ok(Err(e)) if attempt >= max => break Err(e),
            Err(_) if attempt >= max => break Err("timed out".to_string()),
            Ok(Err(e)) => eprintln!("attempt {attempt} failed: {e}"),
            Err(_) => eprintln!("attempt {attempt} timed out"),
        }
        attempt += 1;
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    v
}

/// A counted `loop` with `>` and a `?` give-up.
pub async fn strict_loop() -> Result<(), String> {
    let mut tries = 1;
    loop {
        match tokio::time::timeout(Duration::from_millis(100), call(2)).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) if tries > 2 => Err(e)?,
            Err(_) if tries > 2 => return Err("timed out".into()),
            _ => {}
        }
        tries += 1;
    }
}

/// `while c < n`, the count an expression that may be zero.
pub async fn while_loop(n: usize) -> Result<(), String> {
    let mut attempt = 0;
    while attempt < n {
        attempt += 1;
        match tokio::time::timeout(Duration::from_millis(100), call(2)).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => eprintln!("attempt {attempt} failed: {e}"),
            Err(_) => eprintln!("timed out"),
        }
    }
    Err("gave up".into())
}

/// `for` over an inclusive range with a non-literal end.
pub async fn for_inclusive(max_retries: u32) -> Result<(), String> {
    for attempt in 1..=max_retries {
        match tokio::time::timeout(Duration::from_millis(100), call(2)).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => {
                eprintln!("attempt {attempt}: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(_) => {}
        }
    }
    Err("gave up".into())
}

/// `if let` in a `for`, logging after it.
pub async fn for_if_let() -> Result<(), String> {
    for _ in 0..3 {
        if let Ok(Ok(v)) = tokio::time::timeout(Duration::from_millis(100), call(2)).await {
            return Ok(v);
        }
        eprintln!("retrying");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err("gave up".into())
}

/// The runtime crate is a dependency so that rule docs' `Use instead` code can name it.
pub fn policy() -> Result<timeoutlint_retry::RetryPolicy, timeoutlint_retry::BuildError> {
    timeoutlint_retry::RetryPolicy::builder()
        .max_attempts(3)
        .total(Duration::from_secs(1))
        .build()
}
