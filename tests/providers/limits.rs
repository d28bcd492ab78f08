//! The per-endpoint in-flight limit, with and without backoff.

use prompt_tester::completion::CompletionRequest;
use prompt_tester_testkit::{FakeProvider, Reply, Usage, Wire};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_flight_limit_is_honoured() {
    let fake = FakeProvider::with_latency(Duration::from_millis(60));
    let endpoint = endpoint_for(&fake, Wire::OpenAi, 3);
    let client = Arc::new(common::client_of(&endpoint, &fast_retry(1), None));
    let calls: Vec<_> = (0..12)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                let request = CompletionRequest::new("m", format!("call {i}"), 8);
                client.complete(&request).await
            })
        })
        .collect();
    for call in calls {
        call.await.unwrap().unwrap();
    }
    assert_eq!(fake.request_count(), 12);
    assert_eq!(
        fake.max_concurrent(),
        3,
        "the server saw {} calls at once",
        fake.max_concurrent()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backoff_does_not_hold_an_in_flight_slot() {
    let fake = common::answering_first(Reply::rate_limited(
        Wire::OpenAi,
        Duration::from_millis(600),
    ));
    let endpoint = endpoint_for(&fake, Wire::OpenAi, 1);
    let client = Arc::new(common::client_of(&endpoint, &fast_retry(2), None));
    let started = Instant::now();
    let first = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .complete(&CompletionRequest::new("m", "first", 8))
                .await
                .map(|_| started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let second = client
        .complete(&CompletionRequest::new("m", "second", 8))
        .await
        .map(|_| started.elapsed())
        .unwrap();
    let first = first.await.unwrap().unwrap();
    // With the only slot held through the 600 ms backoff, the second call would end after the first.
    assert!(
        second < Duration::from_millis(500),
        "second call ended at {second:?}"
    );
    assert!(
        first >= Duration::from_millis(600),
        "first call ended at {first:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_calls_through_the_fake_stay_within_the_limit() {
    // The volume a benchmark runs: capture off, a fixed latency, many calls in flight.
    let fake = FakeProvider::builder()
        .capture(false)
        .latency(Duration::from_millis(5))
        .usage(Usage::new(10, 2))
        .start();
    let endpoint = endpoint_for(&fake, Wire::Anthropic, 32);
    let client = Arc::new(common::client_of(&endpoint, &fast_retry(1), Some(KEY)));
    let calls: Vec<_> = (0..500)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .complete(&CompletionRequest::new(
                        "claude-haiku-4-5",
                        format!("n{i}"),
                        8,
                    ))
                    .await
            })
        })
        .collect();
    let mut tokens = 0;
    for call in calls {
        tokens += call.await.unwrap().unwrap().input_tokens;
    }
    assert_eq!(tokens, 500 * 10);
    assert_eq!(fake.request_count(), 500);
    assert!(fake.requests().is_empty());
    assert!(
        fake.max_concurrent() <= 32 && fake.max_concurrent() > 1,
        "{}",
        fake.max_concurrent()
    );
}

/// A call's latency is the answering request's own time: with one slot, four calls of 150 ms each take
/// about 600 ms in all, yet each reports about 150 ms, not its wait for the slot. So a `max_latency`
/// check judges the model, not the queue in front of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_leaves_out_the_wait_for_an_in_flight_slot() {
    let fake = FakeProvider::with_latency(Duration::from_millis(150));
    let endpoint = endpoint_for(&fake, Wire::OpenAi, 1);
    let client = Arc::new(common::client_of(&endpoint, &fast_retry(1), None));
    let started = Instant::now();
    let calls: Vec<_> = (0..4)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                let request = CompletionRequest::new("m", format!("call {i}"), 8);
                client.complete_timed(&request).await.map(|(_, l)| l)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for call in calls {
        latencies.push(call.await.unwrap().unwrap());
    }
    let wall = started.elapsed();
    assert!(wall >= Duration::from_millis(600), "four calls in {wall:?}");
    for latency in &latencies {
        assert!(
            *latency >= Duration::from_millis(150) && *latency < Duration::from_millis(400),
            "latencies {latencies:?} (wall {wall:?})"
        );
    }
}
