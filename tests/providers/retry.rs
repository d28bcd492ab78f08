//! Retries and errors: rate limits and `retry-after`, server errors, timeouts, dropped connections,
//! unreachable servers, malformed bodies, and the key never in an error.

use prompt_tester::config::{EndpointConfig, WireFormat};
use prompt_tester_testkit::{FakeProvider, Reply, Usage, Wire};
use serde_json::json;
use std::time::{Duration, Instant};

use super::*;

#[tokio::test]
async fn rate_limits_wait_as_long_as_retry_after_asks() {
    let fake = FakeProvider::start();
    for wire in ALL {
        fake.reset();
        fake.push(Reply::rate_limited(wire, Duration::from_millis(400)));
        let started = Instant::now();
        let result = call(&fake, wire, fast_retry(3)).await.unwrap();
        let waited = started.elapsed();
        assert!(result.text.starts_with("echo:"));
        assert_eq!(fake.request_count(), 2, "{wire:?}");
        // The backoff alone would be 5 ms at most: the wait came from retry-after (Gemini: RetryInfo).
        assert!(
            waited >= Duration::from_millis(400),
            "{wire:?} retried after {waited:?}"
        );
        assert!(
            waited < Duration::from_millis(1500),
            "{wire:?} waited {waited:?}"
        );
        let requests = fake.requests();
        let gap = requests[1].received_at - requests[0].received_at;
        assert!(
            gap >= Duration::from_millis(395),
            "{wire:?}: the server saw the retry after {gap:?}"
        );
    }
}

/// A first answer that would hold the call long is cut short by the retry settings, and the second
/// attempt answers: `retry-after` (seconds or an HTTP date) is capped at `max_backoff`, a slow answer
/// times out after `request_timeout` and is retried; when every attempt times out, that is the error.
#[tokio::test]
async fn long_waits_are_capped_and_timeouts_are_retried_then_reported() {
    let fake = FakeProvider::start();
    let retry = RetryConfig {
        max_backoff: Duration::from_millis(100),
        request_timeout: Duration::from_millis(200),
        ..fast_retry(2)
    };
    // An HTTP date two seconds ahead, capped to 100 ms.
    let at = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(2));
    let slow = Reply::text(Wire::OpenAi, "m", "too late", Usage::new(1, 1));
    // (the first answer, its wire, the most the call may take)
    for (first, wire, limit) in [
        (
            Reply::error(Wire::OpenAi, 429, "requests", "slow down")
                .with_header("retry-after", "3600"),
            Wire::OpenAi,
            Duration::from_secs(1),
        ),
        (
            Reply::error(Wire::Anthropic, 429, "rate_limit_error", "slow down")
                .with_header("retry-after", &at),
            Wire::Anthropic,
            Duration::from_secs(1),
        ),
        (
            slow.delayed(Duration::from_secs(3)),
            Wire::OpenAi,
            Duration::from_secs(2),
        ),
    ] {
        fake.reset();
        fake.push(first);
        let started = Instant::now();
        call(&fake, wire, retry.clone()).await.unwrap();
        let waited = started.elapsed();
        assert!(waited < limit, "{wire:?} waited {waited:?}");
        assert_eq!(fake.request_count(), 2, "{wire:?}");
    }

    // When every attempt is slow, the call fails with the timeout.
    fake.reset();
    fake.respond_with(|r| Reply::answer(r, "late").delayed(Duration::from_secs(3)));
    let error = call(&fake, Wire::Anthropic, retry).await.unwrap_err();
    assert_eq!(fake.request_count(), 2);
    assert_eq!(
        (error.status, error.error_type.as_deref(), error.attempts),
        (None, Some("timeout"), 2)
    );
    assert_clean(&error, &["within 200ms"]);
}

#[tokio::test]
async fn overloaded_and_server_errors_are_retried() {
    let fake = FakeProvider::start();
    fake.push_all([
        Reply::overloaded(),
        Reply::server_error(Wire::Anthropic, 503),
        Reply::server_error(Wire::Anthropic, 500),
    ]);
    let result = call(&fake, Wire::Anthropic, fast_retry(4)).await.unwrap();
    assert!(result.text.starts_with("echo:"));
    assert_eq!(fake.request_count(), 4);

    fake.reset();
    for status in [502, 504, 408] {
        fake.push(Reply::server_error(Wire::OpenAi, status));
    }
    call(&fake, Wire::OpenAi, fast_retry(4)).await.unwrap();
    assert_eq!(fake.request_count(), 4);
}

#[tokio::test]
async fn gives_up_after_max_attempts_with_the_provider_error() {
    let fake = FakeProvider::start();
    fake.respond_with(|_| Reply::server_error(Wire::Gemini, 503));
    let error = call(&fake, Wire::Gemini, fast_retry(3)).await.unwrap_err();
    assert_eq!(fake.request_count(), 3);
    assert_eq!(error.attempts, 3);
    assert_eq!(error.status, Some(503));
    assert_eq!(error.error_type.as_deref(), Some("UNAVAILABLE"));
    let text = assert_clean(&error, &[]);
    assert_eq!(
        text,
        "fake-gemini: HTTP 503 UNAVAILABLE: The model is overloaded. Please try again later. [3 attempts]"
    );

    fake.respond_with(|_| Reply::overloaded());
    let error = call(&fake, Wire::Anthropic, fast_retry(2))
        .await
        .unwrap_err();
    let text = assert_clean(
        &error,
        &["HTTP 529 overloaded_error: Overloaded (request id req_fake_"],
    );
    assert!(text.ends_with("[2 attempts]"), "{text}");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let fake = FakeProvider::start();
    for wire in ALL {
        for (status, kind) in [
            (400, "invalid_request_error"),
            (401, "authentication_error"),
            (404, "not_found_error"),
        ] {
            fake.reset();
            fake.push(Reply::error(
                wire,
                status,
                kind,
                &format!("bad request {status}"),
            ));
            let error = call(&fake, wire, fast_retry(4)).await.unwrap_err();
            assert_eq!(fake.request_count(), 1, "{wire:?} {status} was retried");
            assert_eq!((error.status, error.attempts), (Some(status), 1));
            assert_eq!(error.error_type.as_deref(), Some(kind));
            assert_eq!(error.message, format!("bad request {status}"));
            if wire != Wire::Gemini {
                assert!(
                    error
                        .request_id
                        .as_deref()
                        .is_some_and(|id| id.starts_with("req_fake_")),
                    "{error:?}"
                );
            }
            assert_clean(
                &error,
                &[&format!("HTTP {status} {kind}: bad request {status}")],
            );
        }
    }
}

#[tokio::test]
async fn dropped_connections_and_cut_bodies_are_retried() {
    let fake = FakeProvider::start();
    for wire in ALL {
        fake.reset();
        fake.push_all([
            Reply::drop_connection(),
            Reply::text(wire, "m", "cut", Usage::new(1, 1)).aborted_mid_body(),
        ]);
        let result = call(&fake, wire, fast_retry(3)).await.unwrap();
        assert!(result.text.starts_with("echo:"), "{wire:?}");
        assert_eq!(fake.request_count(), 3, "{wire:?}");
    }
    fake.respond_with(|_| Reply::drop_connection());
    let error = call(&fake, Wire::OpenAi, fast_retry(2)).await.unwrap_err();
    assert_eq!(
        (error.status, error.error_type.as_deref(), error.attempts),
        (None, Some("connection"), 2)
    );
    assert_clean(&error, &[&fake.base_url(Wire::OpenAi)]);
}

#[tokio::test]
async fn unreachable_servers_are_a_connection_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let endpoint = EndpointConfig {
        name: "nowhere".into(),
        wire: WireFormat::OpenAi,
        base_url: format!("http://127.0.0.1:{port}/v1"),
        api_key_env: vec![],
        max_in_flight: 1,
    };
    let client = common::client_of(&endpoint, &fast_retry(2), Some(KEY));
    let error = client.complete(&simple(Wire::OpenAi)).await.unwrap_err();
    assert_eq!(
        (error.error_type.as_deref(), error.attempts),
        (Some("connection"), 2)
    );
    assert_clean(
        &error,
        &[
            &format!("cannot connect to http://127.0.0.1:{port}/v1/chat/completions"),
            "; nothing answers there: start the server, or set `base_url` (or the variable `base_url_env` \
             names) under [providers.nowhere] in prompt-tester.toml to the address it listens on",
        ],
    );
    // A built-in provider names the variable its base URL comes from.
    let openai = EndpointConfig {
        name: "openai".into(),
        ..endpoint
    };
    let client = common::client_of(&openai, &fast_retry(1), Some(KEY));
    let error = client.complete(&simple(Wire::OpenAi)).await.unwrap_err();
    assert_clean(
        &error,
        &[
            "; nothing answers there: start the server, or set OPENAI_BASE_URL (or `base_url` under \
           [providers.openai] in prompt-tester.toml) to the address it listens on",
        ],
    );
}

#[tokio::test]
async fn malformed_and_truncated_json_are_quoted_not_retried() {
    let fake = FakeProvider::start();
    for wire in ALL {
        fake.reset();
        fake.push(Reply::malformed());
        let error = call(&fake, wire, fast_retry(3)).await.unwrap_err();
        assert_eq!(fake.request_count(), 1);
        assert_eq!(
            (error.status, error.error_type.as_deref()),
            (Some(200), Some("invalid_response"))
        );
        assert_clean(
            &error,
            &["is not JSON", "<html><body><h1>502 Bad Gateway</h1>"],
        );

        fake.reset();
        let truncated = Reply::truncated(wire);
        let start = String::from_utf8_lossy(&truncated.body[..20]).into_owned();
        fake.push(truncated);
        let error = call(&fake, wire, fast_retry(3)).await.unwrap_err();
        assert_eq!(fake.request_count(), 1);
        assert_clean(
            &error,
            &[
                format!("{start:?}").trim_end_matches('"'),
                "EOF while parsing",
            ],
        );

        // Valid JSON of the wrong shape (a wrong base URL).
        fake.reset();
        fake.push(Reply::json(200, &json!({"status": "ok"})));
        let error = call(&fake, wire, fast_retry(3)).await.unwrap_err();
        assert_clean(&error, &["{\\\"status\\\":\\\"ok\\\"}"]);
    }
    // An error status whose body is not the provider's error JSON.
    fake.reset();
    fake.push(Reply::raw(502, "text/html", "<html>proxy error</html>"));
    let error = call(&fake, Wire::Anthropic, fast_retry(1))
        .await
        .unwrap_err();
    assert_clean(
        &error,
        &[
            "HTTP 502: the error body is not Anthropic Messages error JSON: \"<html>proxy error</html>\"",
        ],
    );
}

#[tokio::test]
async fn the_key_never_appears_in_errors() {
    let fake = FakeProvider::start();
    // A provider that echoes the key it was sent back into its error message.
    fake.respond_with(|request| {
        let sent = request
            .header("x-api-key")
            .or(request.header("x-goog-api-key"))
            .or(request.header("authorization"))
            .unwrap_or("")
            .to_string();
        Reply::error(
            request.wire().unwrap(),
            401,
            "authentication_error",
            &format!("invalid key: {sent}"),
        )
    });
    for wire in ALL {
        let error = call(&fake, wire, fast_retry(2)).await.unwrap_err();
        assert_clean(&error, &["invalid key: ", "[REDACTED]"]);
    }
}

#[tokio::test]
async fn redirects_are_not_followed_and_the_error_names_the_location_without_the_key() {
    // The host a redirect names would receive the key headers with the request (x-api-key and
    // x-goog-api-key are not stripped across hosts): no provider call follows one.
    let other = FakeProvider::start();
    let fake = FakeProvider::start();
    let port = other.url().rsplit(':').next().unwrap().to_string();
    let location = format!("http://localhost:{port}/v1/messages");
    for wire in ALL {
        fake.reset();
        fake.push(Reply::raw(307, "text/plain", "").with_header("location", &location));
        let error = call(&fake, wire, fast_retry(3)).await.unwrap_err();
        assert_clean(&error, &["307", &location, "no redirect"]);
        assert_eq!(
            fake.request_count(),
            1,
            "{wire:?}: a redirect is not retried"
        );
    }
    assert_eq!(
        other.request_count(),
        0,
        "the redirect's host got a request"
    );
}

#[test]
fn a_client_s_debug_shows_no_key() {
    let fake = FakeProvider::start();
    for wire in ALL {
        let shown = format!("{:?}", client(&fake, wire, fast_retry(1)));
        assert!(!shown.contains(KEY), "{shown}");
        assert!(shown.contains("[REDACTED]"), "{shown}");
    }
}

#[tokio::test]
async fn an_answer_longer_than_the_cap_fails_the_call_without_a_retry() {
    let fake = FakeProvider::start();
    let retry = RetryConfig {
        max_response_bytes: 4096,
        ..fast_retry(3)
    };
    for wire in ALL {
        fake.reset();
        // 64 KiB of JSON whitespace: as long as the server likes, never a real answer.
        fake.push(Reply::raw(200, "application/json", vec![b' '; 64 * 1024]));
        let error = call(&fake, wire, retry.clone()).await.unwrap_err();
        assert_clean(&error, &["longer than 4096 bytes", "max_response_bytes"]);
        assert_eq!(fake.request_count(), 1, "{wire:?}: not retried");
    }
}
