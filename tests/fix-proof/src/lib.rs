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

/// The runtime crate is a dependency so that rule docs' `Use instead` code can name it.
pub fn policy() -> Result<timeoutlint_retry::RetryPolicy, timeoutlint_retry::BuildError> {
    timeoutlint_retry::RetryPolicy::builder()
        .max_attempts(3)
        .total(Duration::from_secs(1))
        .build()
}
