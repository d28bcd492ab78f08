//! A hostile provider, beyond the faults of `retry`: a body that never ends (fast: past the size cap;
//! slow: past the timeout), bytes that are not UTF-8, counts at `u64::MAX` and beyond, a `retry-after`
//! of a year in every form a wire writes it. Each call ends within its limits, with an error that says
//! what happened, or with an answer whose counts saturate. The same provider through the real harness
//! is `tests/suites/hostile.rs`.

use prompt_tester::config::RetryConfig;
use prompt_tester_testkit::{Reply, Usage, Wire};
use serde_json::json;
use std::time::{Duration, Instant};

use super::*;

/// A year, as a `retry-after` asks for it.
const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);

#[tokio::test]
async fn a_body_that_never_ends_is_cut_by_the_size_cap_or_the_timeout() {
    let fake = FakeProvider::start();
    let retry = RetryConfig {
        max_response_bytes: 64 * 1024,
        request_timeout: Duration::from_millis(400),
        ..fast_retry(2)
    };
    for wire in ALL {
        // Fast: 16 KiB of JSON whitespace every millisecond, a gigabyte in a minute.
        fake.reset();
        fake.push(Reply::endless(
            200,
            "application/json",
            vec![b' '; 16 * 1024],
            Duration::from_millis(1),
        ));
        let started = Instant::now();
        let error = call(&fake, wire, retry.clone()).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "{wire:?}");
        assert_clean(&error, &["longer than 65536 bytes", "max_response_bytes"]);
        assert_eq!(fake.request_count(), 1, "{wire:?}: not retried");

        // Slow: a few bytes every 50 ms, never too long, never done; retried once, then reported.
        fake.reset();
        fake.respond_with(|_| {
            Reply::endless(200, "application/json", *b"  ", Duration::from_millis(50))
        });
        let started = Instant::now();
        let error = call(&fake, wire, retry.clone()).await.unwrap_err();
        let took = started.elapsed();
        assert!(took < Duration::from_secs(3), "{wire:?} took {took:?}");
        assert_eq!(
            (error.error_type.as_deref(), error.attempts),
            (Some("timeout"), 2),
            "{error}"
        );
        assert_clean(&error, &["no complete answer", "within 400ms"]);
    }
}

#[tokio::test]
async fn a_body_that_is_not_utf8_is_quoted_lossily_not_retried() {
    let fake = FakeProvider::start();
    for wire in ALL {
        for (status, body) in [
            (200, b"{\"text\": \"caf\xe9 \xff\xfe\"}".to_vec()),
            (200, b"\xff\xfe\x00<\x00h\x00t\x00m\x00l\x00>".to_vec()),
            (400, b"{\"error\": {\"message\": \"bad \xc3\"}}".to_vec()),
        ] {
            fake.reset();
            fake.push(Reply::raw(status, "application/json", body));
            let error = call(&fake, wire, fast_retry(3)).await.unwrap_err();
            assert_eq!(fake.request_count(), 1, "{wire:?} {status}: not retried");
            let says = if status == 200 {
                "is not JSON"
            } else {
                "is not"
            };
            let text = assert_clean(&error, &[says, "\u{fffd}"]);
            assert_eq!(error.status, Some(status), "{text}");
        }
    }
}

#[tokio::test]
async fn counts_at_u64_max_and_beyond_saturate_or_read_as_unknown() {
    let fake = FakeProvider::start();
    let max = u64::MAX;
    for wire in ALL {
        fake.reset();
        // Every count at u64::MAX: the sums a wire adds (Anthropic's cache counts, Gemini's
        // candidates and thoughts) saturate.
        fake.push(Reply::text(
            wire,
            "m",
            "Paris.",
            Usage::new(max, max).cached(max).thoughts(max),
        ));
        let result = call(&fake, wire, fast_retry(1)).await.unwrap();
        assert_eq!(
            (result.input_tokens, result.output_tokens),
            (max, max),
            "{wire:?}"
        );

        // One beyond: not a count the wire can carry, so none is taken (not a wrapped small one).
        fake.reset();
        let body = String::from_utf8(Reply::text(wire, "m", "Paris.", Usage::new(7, 9)).body)
            .unwrap()
            .replace(":7", ":18446744073709551616")
            .replace(":9", ":1e400");
        fake.push(Reply::raw(200, "application/json", body));
        let error_or_result = call(&fake, wire, fast_retry(1)).await;
        match error_or_result {
            Ok(result) => assert!(result.input_tokens != 7 && result.output_tokens != 9),
            // serde_json refuses 1e400: the body is quoted.
            Err(error) => {
                assert_clean(&error, &["is not JSON", "number out of range"]);
            }
        }
    }
}

#[tokio::test]
async fn a_retry_after_of_a_year_waits_at_most_max_backoff() {
    let fake = FakeProvider::start();
    let retry = RetryConfig {
        max_backoff: Duration::from_millis(200),
        ..fast_retry(2)
    };
    let a_year_on = httpdate::fmt_http_date(std::time::SystemTime::now() + YEAR);
    for wire in ALL {
        // Seconds and milliseconds in the headers, Gemini's RetryInfo in the body: each a year.
        for first in [
            Reply::rate_limited(wire, YEAR),
            Reply::error(wire, 503, "overloaded", "later").with_header("retry-after", &a_year_on),
            Reply::error(wire, 503, "overloaded", "later")
                .with_header("retry-after", "99999999999999999999999"),
        ] {
            fake.reset();
            fake.push(first);
            let started = Instant::now();
            call(&fake, wire, retry.clone()).await.unwrap();
            let waited = started.elapsed();
            assert!(
                waited < Duration::from_secs(1),
                "{wire:?} waited {waited:?}"
            );
            assert_eq!(fake.request_count(), 2, "{wire:?}");
        }
    }
    // Rate limited for a year on every attempt: the rate-limit budget ends the call.
    fake.reset();
    fake.respond_with(|r| Reply::rate_limited(r.wire().unwrap(), YEAR));
    let budget = RetryConfig {
        rate_limit_budget: Duration::from_millis(500),
        ..retry
    };
    let started = Instant::now();
    let error = call(&fake, Wire::OpenAi, budget).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_clean(
        &error,
        &["HTTP 429", "still rate limited", "rate_limit_budget_secs"],
    );
    assert_eq!(json!(error.status), json!(429));
}
