//! The volume-attach story: an attach that times out may have happened anyway.
//!
//! A cloud API attaches a volume, but its reply arrives after the caller's attempt timeout. A
//! naive retry sends the attach again, gets "409 already attached" and reports a failure for an
//! attach that succeeded. With the runtime, the attach is declared non-idempotent, the timeout
//! is an ambiguous outcome, and the reconciliation hook lists what is attached: the volume is
//! there, so the operation succeeds without a second attach. An "already attached" answer to
//! an attach is also treated as success, because it is the state the caller wanted.
//!
//! Run with `cargo run -p timeoutlint-retry --example volume_attach`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use timeoutlint_retry::{Observation, Outcome, RetryPolicy};

/// Errors of the fake cloud API.
#[derive(Debug)]
enum CloudError {
    /// The attempt timed out waiting for the reply (the attach may still have happened).
    Timeout,
    /// 409: the volume is attached already.
    AlreadyAttached,
    /// The API is unreachable; nothing was sent.
    Unreachable,
}

/// A cloud whose first attach reply is slow: it applies the attach at once, replies in 1 s.
#[derive(Clone, Default)]
struct Cloud {
    attached: Arc<Mutex<HashSet<(String, String)>>>,
    attach_calls: Arc<Mutex<u32>>,
}

impl Cloud {
    async fn attach(&self, volume: &str, instance: &str) -> Result<(), CloudError> {
        *self.attach_calls.lock().unwrap() += 1;
        let newly = self
            .attached
            .lock()
            .unwrap()
            .insert((volume.to_owned(), instance.to_owned()));
        if !newly {
            return Err(CloudError::AlreadyAttached);
        }
        // The work is done; the reply is slow.
        tokio::time::sleep(Duration::from_secs(1)).await;
        Ok(())
    }

    async fn list_attached(&self, instance: &str) -> Vec<String> {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let attached = self.attached.lock().unwrap();
        attached
            .iter()
            .filter(|(_, i)| i == instance)
            .map(|(v, _)| v.clone())
            .collect()
    }
}

/// What each error means for a retry.
fn classify(error: &CloudError) -> Outcome {
    match error {
        CloudError::Unreachable => Outcome::NotApplied,
        CloudError::Timeout => Outcome::Ambiguous,
        CloudError::AlreadyAttached => Outcome::Permanent,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let policy = RetryPolicy::builder()
        .max_attempts(3)
        .total(Duration::from_secs(5))
        .attempt_timeout(Duration::from_millis(200))
        .build()
        .expect("bounded policy");

    // The naive way: retry the attach on any error.
    let cloud = Cloud::default();
    let mut naive = Err(CloudError::Unreachable);
    for _ in 0..3 {
        naive = match tokio::time::timeout(Duration::from_millis(200), cloud.attach("vol-1", "i-1"))
            .await
        {
            Ok(result) => result,
            Err(_) => Err(CloudError::Timeout),
        };
        if naive.is_ok() || matches!(naive, Err(CloudError::AlreadyAttached)) {
            break;
        }
    }
    println!("naive retry loop: {naive:?} (the volume IS attached)");

    // The runtime: non-idempotent attach, reconciled by listing what is attached.
    let cloud = Cloud::default();
    let result = policy
        .call()
        .idempotent(false)
        .classify(classify)
        .reconcile(|_attempt, _error| {
            let cloud = cloud.clone();
            async move {
                if cloud
                    .list_attached("i-1")
                    .await
                    .iter()
                    .any(|v| v == "vol-1")
                {
                    Observation::Committed("attached (confirmed by listing)")
                } else {
                    Observation::NotApplied
                }
            }
        })
        .run(|attempt| {
            let cloud = cloud.clone();
            async move {
                // The attempt's own timeout is passed down so the call gives up in time.
                match tokio::time::timeout(attempt.timeout, cloud.attach("vol-1", "i-1")).await {
                    Ok(Ok(())) => Ok("attached"),
                    // The desired state already holds: success, not a failure.
                    Ok(Err(CloudError::AlreadyAttached)) => Ok("attached (already)"),
                    Ok(Err(error)) => Err(error),
                    Err(_) => Err(CloudError::Timeout),
                }
            }
        })
        .await;
    println!(
        "timeoutlint-retry: {result:?} after {} attach call(s)",
        cloud.attach_calls.lock().unwrap()
    );
    assert_eq!(result.unwrap(), "attached (confirmed by listing)");
    assert_eq!(*cloud.attach_calls.lock().unwrap(), 1);
}
