//! Overhead of the runtime on the happy path: a first attempt that succeeds, through
//! `RetryPolicy::run`, versus calling the same async operation bare.
//!
//! Run with `cargo run --release -p timeoutlint-retry --example overhead`. A plain loop rather
//! than a benchmark harness keeps the dependency tree small; each figure is the best of five
//! rounds to damp noise from other processes on the machine.

use std::hint::black_box;
use std::time::{Duration, Instant};

use timeoutlint_retry::{Outcome, RetryPolicy};

const CALLS: u32 = 1_000_000;
const ROUNDS: usize = 5;

// Reason: the benchmark needs an async operation that completes on its first poll.
#[allow(clippy::unused_async)]
async fn operation(n: u32) -> Result<u32, Outcome> {
    Ok(black_box(n))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let policy = RetryPolicy::builder()
        .total(Duration::from_secs(30))
        .build()
        .expect("policy");
    let bare = best_of(|| {
        runtime.block_on(async {
            for n in 0..CALLS {
                black_box(operation(n).await.ok());
            }
        });
    });
    // The reference a careful hand-written call pays anyway: one timeout around the operation.
    let with_timeout = best_of(|| {
        runtime.block_on(async {
            for n in 0..CALLS {
                let timed = tokio::time::timeout(Duration::from_secs(10), operation(n)).await;
                black_box(timed.ok());
            }
        });
    });
    let retried = best_of(|| {
        runtime.block_on(async {
            for n in 0..CALLS {
                black_box(policy.run(|_attempt| operation(n)).await.ok());
            }
        });
    });
    println!("bare call:             {:>7.1} ns/call", per_call(bare));
    println!(
        "bare + tokio timeout:  {:>7.1} ns/call",
        per_call(with_timeout)
    );
    println!("through RetryPolicy:   {:>7.1} ns/call", per_call(retried));
    println!(
        "runtime overhead:      {:>7.1} ns/call",
        per_call(retried) - per_call(bare)
    );
}

fn best_of(mut round: impl FnMut()) -> Duration {
    (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            round();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn per_call(total: Duration) -> f64 {
    total.as_secs_f64() * 1e9 / f64::from(CALLS)
}
