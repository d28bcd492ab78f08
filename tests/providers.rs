//! The provider clients against a real HTTP server on 127.0.0.1 (the testkit's fake provider), and
//! against every recorded real provider response in `../shared/fixtures/provider-recordings/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use prompt_tester::completion::{
    CompletionRequest, CompletionResult, ContentBlock, Message, ResponseSchema, Role, ToolSpec,
};
use prompt_tester::config::{EndpointConfig, RetryConfig, WireFormat};
use prompt_tester::pricing;
use prompt_tester::provider::{self, ProviderClient, ProviderError};
use prompt_tester_testkit::child::Child;
use prompt_tester_testkit::{FakeProvider, Reply, Usage, Wire};
use serde_json::{Value, json};

mod prereq;

const KEY: &str = "sk-test-SECRET-0123456789abcdef";

fn http() -> reqwest::Client {
    // reqwest is built without a bundled crypto provider; the engine installs ring the same way.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

fn fast_retry(max_attempts: u32) -> RetryConfig {
    RetryConfig {
        max_attempts,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_secs(2),
        request_timeout: Duration::from_secs(5),
        ..RetryConfig::default()
    }
}

fn wire_format(wire: Wire) -> WireFormat {
    match wire {
        Wire::Anthropic => WireFormat::Anthropic,
        Wire::Gemini => WireFormat::Google,
        Wire::OpenAi => WireFormat::OpenAi,
    }
}

fn endpoint_for(fake: &FakeProvider, wire: Wire, max_in_flight: usize) -> EndpointConfig {
    EndpointConfig {
        name: format!("fake-{wire:?}").to_lowercase(),
        wire: wire_format(wire),
        base_url: fake.base_url(wire),
        api_key_env: vec!["PT_TEST_KEY_NEVER_SET".into()],
        max_in_flight,
    }
}

fn client(fake: &FakeProvider, wire: Wire, retry: RetryConfig) -> ProviderClient {
    ProviderClient::with_api_key(
        &endpoint_for(fake, wire, 8),
        &retry,
        http(),
        Some(KEY.into()),
    )
}

const ALL: [Wire; 3] = [Wire::Anthropic, Wire::Gemini, Wire::OpenAi];

fn model_for(wire: Wire) -> &'static str {
    match wire {
        Wire::Anthropic => "claude-haiku-4-5",
        Wire::Gemini => "gemini-2.5-flash",
        Wire::OpenAi => "gpt-4o-mini",
    }
}

fn simple(wire: Wire) -> CompletionRequest {
    CompletionRequest::new(model_for(wire), "What is the capital of France?", 64)
}

/// The error's text names what happened and never the key.
fn assert_clean(error: &ProviderError) -> String {
    let text = error.to_string();
    assert!(!text.contains(KEY), "the key leaked: {text}");
    assert!(
        !format!("{error:?}").contains(KEY),
        "the key leaked: {error:?}"
    );
    assert!(text.starts_with(&format!("{}:", error.provider)), "{text}");
    text
}

#[tokio::test]
async fn anthropic_request_shape_and_answer() {
    let fake = FakeProvider::builder()
        .usage(Usage {
            input_tokens: 100,
            output_tokens: 7,
            cached_input_tokens: 60,
            thoughts_tokens: 0,
        })
        .start();
    let mut request = simple(Wire::Anthropic);
    request.system = Some("Answer in one word.".into());
    request.cache_system = true;
    request.temperature = Some(0.3);
    let result = client(&fake, Wire::Anthropic, fast_retry(1))
        .complete(&request)
        .await
        .unwrap();

    let seen = &fake.requests()[0];
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.header("x-api-key"), Some(KEY));
    assert_eq!(seen.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen.header("content-type"), Some("application/json"));
    assert_eq!(seen.header("authorization"), None);
    let body = seen.json.as_ref().unwrap();
    assert_eq!(body["model"], "claude-haiku-4-5");
    assert_eq!(body["max_tokens"], 64);
    assert_eq!(body["temperature"].to_string(), "0.3");
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "Answer in one word.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}])
    );

    assert_eq!(result.text, "echo: What is the capital of France?");
    // The fake sends Anthropic's usage (input_tokens 40 without the 60 cache reads); the client adds
    // them back.
    assert_eq!(
        (
            result.input_tokens,
            result.cached_input_tokens,
            result.output_tokens
        ),
        (100, 60, 7)
    );
    assert_eq!(result.stop_reason.as_deref(), Some("end_turn"));
    assert_eq!(result.model_used.as_deref(), Some("claude-haiku-4-5"));
    assert!(
        result
            .request_id
            .as_deref()
            .unwrap()
            .starts_with("msg_fake_")
    );
    assert_eq!(result.cost_usd, None);
}

#[tokio::test]
async fn gemini_request_shape_and_answer() {
    let fake = FakeProvider::builder()
        .usage(Usage {
            input_tokens: 50,
            output_tokens: 30,
            cached_input_tokens: 0,
            thoughts_tokens: 20,
        })
        .start();
    let mut request = simple(Wire::Gemini);
    request.system = Some("Be brief.".into());
    request.temperature = Some(0.0);
    let result = client(&fake, Wire::Gemini, fast_retry(1))
        .complete(&request)
        .await
        .unwrap();

    let seen = &fake.requests()[0];
    assert_eq!(seen.path, "/v1beta/models/gemini-2.5-flash:generateContent");
    assert!(
        !seen.path.contains("key="),
        "the key must never be in the URL: {}",
        seen.path
    );
    assert_eq!(seen.header("x-goog-api-key"), Some(KEY));
    assert_eq!(seen.header("authorization"), None);
    let body = seen.json.as_ref().unwrap();
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "What is the capital of France?"}]}])
    );
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "Be brief."}]})
    );
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens": 64, "temperature": 0.0})
    );

    assert_eq!(result.text, "echo: What is the capital of France?");
    // candidatesTokenCount 10 + thoughtsTokenCount 20.
    assert_eq!(
        (
            result.input_tokens,
            result.output_tokens,
            result.thoughts_tokens
        ),
        (50, 30, 20)
    );
    assert_eq!(result.stop_reason.as_deref(), Some("STOP"));
    assert_eq!(result.model_version.as_deref(), Some("gemini-2.5-flash"));
    assert!(result.request_id.as_deref().unwrap().starts_with("fake-"));
}

#[tokio::test]
async fn openai_request_shape_and_answer() {
    let fake = FakeProvider::builder()
        .usage(Usage {
            input_tokens: 40,
            output_tokens: 12,
            cached_input_tokens: 32,
            thoughts_tokens: 5,
        })
        .start();
    let mut request = simple(Wire::OpenAi);
    request.system = Some("sys".into());
    request.messages.push(Message::assistant("Paris."));
    request.messages.push(Message::user("And Spain?"));
    let result = client(&fake, Wire::OpenAi, fast_retry(1))
        .complete(&request)
        .await
        .unwrap();

    let seen = &fake.requests()[0];
    assert_eq!(seen.path, "/v1/chat/completions");
    assert_eq!(
        seen.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(seen.header("x-api-key"), None);
    let body = seen.json.as_ref().unwrap();
    assert_eq!(body["max_tokens"], 64, "compatible servers get max_tokens");
    assert!(body.get("max_completion_tokens").is_none());
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "What is the capital of France?"},
            {"role": "assistant", "content": "Paris."},
            {"role": "user", "content": "And Spain?"}
        ])
    );

    assert_eq!(result.text, "echo: And Spain?");
    assert_eq!(
        (
            result.input_tokens,
            result.cached_input_tokens,
            result.output_tokens,
            result.thoughts_tokens
        ),
        (40, 32, 12, 5)
    );
    assert_eq!(result.model_version.as_deref(), Some("fp_fake"));
    assert!(
        result
            .request_id
            .as_deref()
            .unwrap()
            .starts_with("chatcmpl-fake-")
    );
}

#[tokio::test]
async fn keyless_endpoints_send_no_auth_header() {
    let fake = FakeProvider::start();
    for wire in ALL {
        let mut endpoint = endpoint_for(&fake, wire, 4);
        endpoint.api_key_env.clear();
        let client = ProviderClient::with_api_key(&endpoint, &fast_retry(1), http(), None);
        assert_eq!(client.missing_key(), None);
        client.complete(&simple(wire)).await.unwrap();
    }
    for seen in fake.requests() {
        for header in ["authorization", "x-api-key", "x-goog-api-key"] {
            assert_eq!(seen.header(header), None, "{header} sent to {}", seen.path);
        }
    }
}

#[tokio::test]
async fn structured_output_and_tool_calls_per_wire() {
    let fake = FakeProvider::start();
    fake.respond_with(|request| {
        Reply::structured(
            request,
            &json!({"passed": true, "reasoning": "Alice is named"}),
        )
    });
    let schema = ResponseSchema {
        name: "verdict".into(),
        schema: json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"passed": {"type": "boolean"}, "reasoning": {"type": "string"}},
            "required": ["passed", "reasoning"]
        }),
    };
    for wire in ALL {
        let mut request = simple(wire);
        request.response_schema = Some(schema.clone());
        let result = client(&fake, wire, fast_retry(1))
            .complete(&request)
            .await
            .unwrap();
        let verdict = match wire {
            Wire::Anthropic => {
                assert_eq!(result.tool_calls[0].name, "verdict");
                result.tool_calls[0].arguments.clone()
            }
            _ => serde_json::from_str(&result.text).unwrap(),
        };
        assert_eq!(
            verdict,
            json!({"passed": true, "reasoning": "Alice is named"}),
            "{wire:?}"
        );
    }
    let bodies: Vec<Value> = fake
        .requests()
        .into_iter()
        .map(|r| r.json.unwrap())
        .collect();
    assert_eq!(
        bodies[0]["tool_choice"],
        json!({"type": "tool", "name": "verdict"})
    );
    assert_eq!(bodies[0]["tools"][0]["input_schema"], schema.schema);
    assert_eq!(
        bodies[1]["generationConfig"]["responseMimeType"],
        "application/json"
    );
    assert!(
        bodies[1]["generationConfig"]["responseSchema"]
            .get("additionalProperties")
            .is_none()
    );
    assert_eq!(
        bodies[1]["generationConfig"]["responseSchema"]["required"],
        json!(["passed", "reasoning"])
    );
    assert_eq!(
        bodies[2]["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema.schema, "strict": true}})
    );

    // A tool call and its result, sent back on the next turn.
    fake.respond_with(|request| {
        Reply::tool_call(
            request.wire().unwrap(),
            "m",
            "lookup",
            &json!({"city": "Oslo"}),
            Usage::new(5, 5),
        )
    });
    for wire in ALL {
        let mut request = simple(wire);
        request.tools = vec![ToolSpec {
            name: "lookup".into(),
            description: "Looks a city up".into(),
            input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        }];
        let result = client(&fake, wire, fast_retry(1))
            .complete(&request)
            .await
            .unwrap();
        assert_eq!(result.tool_calls.len(), 1, "{wire:?}");
        let call = &result.tool_calls[0];
        assert_eq!(
            (call.name.as_str(), &call.arguments),
            ("lookup", &json!({"city": "Oslo"})),
            "{wire:?}"
        );
        assert!(!call.id.is_empty());
        request.messages.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: call.id.clone(),
                name: call.name.clone(),
                input: call.arguments.clone(),
                thought_signature: None,
            }],
        });
        request.messages.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: call.id.clone(),
                name: call.name.clone(),
                content: "sunny".into(),
                is_error: false,
            }],
        });
        client(&fake, wire, fast_retry(1))
            .complete(&request)
            .await
            .unwrap();
        let sent = fake.requests().last().unwrap().json.clone().unwrap();
        let result_part = match wire {
            Wire::Anthropic => sent["messages"][2]["content"][0].clone(),
            Wire::Gemini => sent["contents"][2]["parts"][0].clone(),
            Wire::OpenAi => sent["messages"][2].clone(),
        };
        let expected = match wire {
            Wire::Anthropic => {
                json!({"type": "tool_result", "tool_use_id": call.id, "content": "sunny", "is_error": false})
            }
            Wire::Gemini => {
                json!({"functionResponse": {"name": "lookup", "response": {"content": "sunny"}}})
            }
            Wire::OpenAi => json!({"role": "tool", "tool_call_id": call.id, "content": "sunny"}),
        };
        assert_eq!(result_part, expected, "{wire:?}");
    }
}

#[tokio::test]
async fn rate_limits_wait_as_long_as_retry_after_asks() {
    let fake = FakeProvider::start();
    for wire in ALL {
        fake.reset();
        fake.push(Reply::rate_limited(wire, Duration::from_millis(400)));
        let started = Instant::now();
        let result = client(&fake, wire, fast_retry(3))
            .complete(&simple(wire))
            .await
            .unwrap();
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

#[tokio::test]
async fn retry_after_and_http_dates_are_capped_at_max_backoff() {
    let fake = FakeProvider::start();
    let mut retry = fast_retry(2);
    retry.max_backoff = Duration::from_millis(100);
    fake.push(
        Reply::error(Wire::OpenAi, 429, "requests", "slow down").with_header("retry-after", "3600"),
    );
    let started = Instant::now();
    client(&fake, Wire::OpenAi, retry.clone())
        .complete(&simple(Wire::OpenAi))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );

    // An HTTP date two seconds ahead, capped to 100 ms.
    let at = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(2));
    fake.push(
        Reply::error(Wire::Anthropic, 429, "rate_limit_error", "slow down")
            .with_header("retry-after", &at),
    );
    let started = Instant::now();
    client(&fake, Wire::Anthropic, retry)
        .complete(&simple(Wire::Anthropic))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn overloaded_and_server_errors_are_retried() {
    let fake = FakeProvider::start();
    fake.push_all([
        Reply::overloaded(),
        Reply::server_error(Wire::Anthropic, 503),
        Reply::server_error(Wire::Anthropic, 500),
    ]);
    let result = client(&fake, Wire::Anthropic, fast_retry(4))
        .complete(&simple(Wire::Anthropic))
        .await
        .unwrap();
    assert!(result.text.starts_with("echo:"));
    assert_eq!(fake.request_count(), 4);

    fake.reset();
    for status in [502, 504, 408] {
        fake.push(Reply::server_error(Wire::OpenAi, status));
    }
    client(&fake, Wire::OpenAi, fast_retry(4))
        .complete(&simple(Wire::OpenAi))
        .await
        .unwrap();
    assert_eq!(fake.request_count(), 4);
}

#[tokio::test]
async fn gives_up_after_max_attempts_with_the_provider_error() {
    let fake = FakeProvider::start();
    fake.respond_with(|_| Reply::server_error(Wire::Gemini, 503));
    let error = client(&fake, Wire::Gemini, fast_retry(3))
        .complete(&simple(Wire::Gemini))
        .await
        .unwrap_err();
    assert_eq!(fake.request_count(), 3);
    assert_eq!(error.attempts, 3);
    assert_eq!(error.status, Some(503));
    assert_eq!(error.error_type.as_deref(), Some("UNAVAILABLE"));
    let text = assert_clean(&error);
    assert_eq!(
        text,
        "fake-gemini: HTTP 503 UNAVAILABLE: The model is overloaded. Please try again later. [3 attempts]"
    );

    fake.respond_with(|_| Reply::overloaded());
    let error = client(&fake, Wire::Anthropic, fast_retry(2))
        .complete(&simple(Wire::Anthropic))
        .await
        .unwrap_err();
    let text = assert_clean(&error);
    assert!(
        text.contains("HTTP 529 overloaded_error: Overloaded (request id req_fake_"),
        "{text}"
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
            let error = client(&fake, wire, fast_retry(4))
                .complete(&simple(wire))
                .await
                .unwrap_err();
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
            let text = assert_clean(&error);
            assert!(
                text.contains(&format!("HTTP {status} {kind}: bad request {status}")),
                "{text}"
            );
        }
    }
}

#[tokio::test]
async fn timeouts_are_retried_then_reported() {
    let fake = FakeProvider::start();
    let mut retry = fast_retry(2);
    retry.request_timeout = Duration::from_millis(200);
    fake.push(
        Reply::text(Wire::OpenAi, "m", "too late", Usage::new(1, 1))
            .delayed(Duration::from_secs(3)),
    );
    let started = Instant::now();
    client(&fake, Wire::OpenAi, retry.clone())
        .complete(&simple(Wire::OpenAi))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(fake.request_count(), 2);

    fake.reset();
    fake.respond_with(|r| Reply::answer(r, "late").delayed(Duration::from_secs(3)));
    let error = client(&fake, Wire::Anthropic, retry)
        .complete(&simple(Wire::Anthropic))
        .await
        .unwrap_err();
    assert_eq!(fake.request_count(), 2);
    assert_eq!(
        (error.status, error.error_type.as_deref(), error.attempts),
        (None, Some("timeout"), 2)
    );
    let text = assert_clean(&error);
    assert!(text.contains("within 200ms"), "{text}");
}

#[tokio::test]
async fn dropped_connections_and_cut_bodies_are_retried() {
    let fake = FakeProvider::start();
    for wire in ALL {
        fake.reset();
        fake.push(Reply::drop_connection());
        fake.push(Reply::text(wire, "m", "cut", Usage::new(1, 1)).aborted_mid_body());
        let result = client(&fake, wire, fast_retry(3))
            .complete(&simple(wire))
            .await
            .unwrap();
        assert!(result.text.starts_with("echo:"), "{wire:?}");
        assert_eq!(fake.request_count(), 3, "{wire:?}");
    }
    fake.respond_with(|_| Reply::drop_connection());
    let error = client(&fake, Wire::OpenAi, fast_retry(2))
        .complete(&simple(Wire::OpenAi))
        .await
        .unwrap_err();
    assert_eq!(
        (error.status, error.error_type.as_deref(), error.attempts),
        (None, Some("connection"), 2)
    );
    let text = assert_clean(&error);
    assert!(text.contains(&fake.base_url(Wire::OpenAi)), "{text}");
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
    let client = ProviderClient::with_api_key(&endpoint, &fast_retry(2), http(), Some(KEY.into()));
    let error = client.complete(&simple(Wire::OpenAi)).await.unwrap_err();
    assert_eq!(
        (error.error_type.as_deref(), error.attempts),
        (Some("connection"), 2)
    );
    let text = assert_clean(&error);
    assert!(
        text.contains(&format!(
            "cannot connect to http://127.0.0.1:{port}/v1/chat/completions"
        )),
        "{text}"
    );
}

#[tokio::test]
async fn malformed_and_truncated_json_are_quoted_not_retried() {
    let fake = FakeProvider::start();
    for wire in ALL {
        fake.reset();
        fake.push(Reply::malformed());
        let error = client(&fake, wire, fast_retry(3))
            .complete(&simple(wire))
            .await
            .unwrap_err();
        assert_eq!(fake.request_count(), 1);
        assert_eq!(
            (error.status, error.error_type.as_deref()),
            (Some(200), Some("invalid_response"))
        );
        let text = assert_clean(&error);
        assert!(text.contains("is not JSON"), "{text}");
        assert!(
            text.contains("<html><body><h1>502 Bad Gateway</h1>"),
            "{text}"
        );

        fake.reset();
        let truncated = Reply::truncated(wire);
        let start = String::from_utf8_lossy(&truncated.body[..20]).into_owned();
        fake.push(truncated);
        let error = client(&fake, wire, fast_retry(3))
            .complete(&simple(wire))
            .await
            .unwrap_err();
        assert_eq!(fake.request_count(), 1);
        let text = assert_clean(&error);
        assert!(
            text.contains(&format!("{start:?}").trim_end_matches('"').to_string()),
            "{text}"
        );
        assert!(text.contains("EOF while parsing"), "{text}");

        // Valid JSON of the wrong shape (a wrong base URL).
        fake.reset();
        fake.push(Reply::json(200, &json!({"status": "ok"})));
        let error = client(&fake, wire, fast_retry(3))
            .complete(&simple(wire))
            .await
            .unwrap_err();
        let text = assert_clean(&error);
        assert!(text.contains("{\\\"status\\\":\\\"ok\\\"}"), "{text}");
    }
    // An error status whose body is not the provider's error JSON.
    fake.reset();
    fake.push(Reply::raw(502, "text/html", "<html>proxy error</html>"));
    let error = client(&fake, Wire::Anthropic, fast_retry(1))
        .complete(&simple(Wire::Anthropic))
        .await
        .unwrap_err();
    let text = assert_clean(&error);
    assert!(text.contains("HTTP 502: the error body is not Anthropic Messages error JSON: \"<html>proxy error</html>\""), "{text}");
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
        let error = client(&fake, wire, fast_retry(2))
            .complete(&simple(wire))
            .await
            .unwrap_err();
        let text = assert_clean(&error);
        assert!(
            text.contains("invalid key: ") && text.contains("[REDACTED]"),
            "{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_flight_limit_is_honoured() {
    let fake = FakeProvider::builder()
        .latency(Duration::from_millis(60))
        .start();
    let endpoint = endpoint_for(&fake, Wire::OpenAi, 3);
    let client = Arc::new(ProviderClient::with_api_key(
        &endpoint,
        &fast_retry(1),
        http(),
        None,
    ));
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
    let fake = FakeProvider::builder()
        .latency(Duration::from_millis(20))
        .start();
    fake.push(Reply::rate_limited(
        Wire::OpenAi,
        Duration::from_millis(600),
    ));
    let endpoint = endpoint_for(&fake, Wire::OpenAi, 1);
    let client = Arc::new(ProviderClient::with_api_key(
        &endpoint,
        &fast_retry(2),
        http(),
        None,
    ));
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
    let client = Arc::new(ProviderClient::with_api_key(
        &endpoint,
        &fast_retry(1),
        http(),
        Some(KEY.into()),
    ));
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

#[tokio::test]
async fn public_openai_gets_max_completion_tokens() {
    let endpoint = EndpointConfig {
        name: "openai".into(),
        wire: WireFormat::OpenAi,
        base_url: "https://api.openai.com/v1".into(),
        api_key_env: vec!["OPENAI_API_KEY".into()],
        max_in_flight: 1,
    };
    let body = provider::request_body(&endpoint, &simple(Wire::OpenAi));
    assert_eq!(body["max_completion_tokens"], 64);
    assert!(body.get("max_tokens").is_none());
}

// ---------------------------------------------------------------------------------------------
// Conformance with real recordings.

fn recordings_dir(test: &str) -> Option<PathBuf> {
    prereq::shared_fixtures(test, "provider-recordings")
}

/// `case -> (HTTP status, URL)` from a folder's README.txt.
fn statuses(readme: &str) -> BTreeMap<String, (u16, String)> {
    readme
        .lines()
        .filter_map(|line| {
            let (case, rest) = line.split_once(": HTTP ")?;
            let mut words = rest.split_whitespace();
            let status = words.next()?.parse().ok()?;
            let url = words.nth(1)?.to_string();
            Some((case.trim().to_string(), (status, url)))
        })
        .collect()
}

/// What a recorded success must parse to. `model` is the id the call was priced under (the
/// request's model, or the URL's for Gemini).
#[derive(Default)]
struct Expect {
    model: &'static str,
    text: &'static str,
    text_is_prefix: bool,
    tokens: (u64, u64, u64, u64, u64),
    stop: Option<&'static str>,
    safety: bool,
    model_used: Option<&'static str>,
    model_version: Option<&'static str>,
    request_id: Option<&'static str>,
    tools: &'static [(&'static str, &'static str, &'static str)],
    cost: Option<f64>,
}

/// What a recorded error must read as: type, message start, request id.
struct ExpectError(&'static str, &'static str, Option<&'static str>);

fn expected_successes() -> BTreeMap<&'static str, Expect> {
    let e = |model| Expect {
        model,
        ..Expect::default()
    };
    BTreeMap::from([
        // tokens: (input, output, cached input, cache creation, thoughts); input includes the cache.
        (
            "anthropic/stop_sequence_sonnet45",
            Expect {
                text: "The beautiful city of ",
                tokens: (32, 5, 0, 0, 0),
                stop: Some("stop_sequence"),
                model_used: Some("claude-sonnet-4-5-20250929"),
                request_id: Some("msg_01376yZQxHcw9pER2Ab2SvQb"),
                cost: Some((32.0 * 3.0 + 5.0 * 15.0) / 1e6),
                ..e("claude-sonnet-4-5")
            },
        ),
        (
            "anthropic/text_cache_creation_5m_opus48",
            Expect {
                text: "OK",
                tokens: (2 + 1590, 4, 0, 1590, 0),
                stop: Some("end_turn"),
                model_used: Some("claude-opus-4-8"),
                request_id: Some("msg_011CdZ7H96cYjLa6r1Kjqx2H"),
                // 2 uncached at $5, 1590 written at $6.25, 4 out at $25.
                cost: Some((2.0 * 5.0 + 1590.0 * 6.25 + 4.0 * 25.0) / 1e6),
                ..e("claude-opus-4-8")
            },
        ),
        (
            "anthropic/text_cache_read_opus48",
            Expect {
                text: "OK",
                tokens: (2 + 1590, 4, 1590, 0, 0),
                stop: Some("end_turn"),
                model_used: Some("claude-opus-4-8"),
                request_id: Some("msg_011CdZ7HELdJntMqdQ6ERgau"),
                cost: Some((2.0 * 5.0 + 1590.0 * 0.5 + 4.0 * 25.0) / 1e6),
                ..e("claude-opus-4-8")
            },
        ),
        (
            "anthropic/text_cache_read_sonnet45",
            Expect {
                text: "# What is Python?\n\nPython is a high-level",
                text_is_prefix: true,
                tokens: (3 + 1111, 406, 1111, 0, 0),
                stop: Some("end_turn"),
                model_used: Some("claude-sonnet-4-5-20250929"),
                request_id: Some("msg_01UUPT9QdZnZSRzcQJkjG25U"),
                // 3 uncached at $3, 1111 read at $0.30, 406 out at $15: $0.0064323.
                cost: Some(0.0064323),
                ..e("claude-sonnet-4-5")
            },
        ),
        (
            "anthropic/text_end_turn_claude3opus",
            Expect {
                text: "The capital of France is Paris.",
                tokens: (20, 10, 0, 0, 0),
                stop: Some("end_turn"),
                model_used: Some("claude-3-opus-20240229"),
                request_id: Some("msg_01Fg1JVgvCYUHWsxrj9GkpEv"),
                cost: Some((20.0 * 15.0 + 10.0 * 75.0) / 1e6),
                ..e("claude-3-opus-latest")
            },
        ),
        (
            "anthropic/tool_result_followup_sonnet45",
            Expect {
                tokens: (497, 56, 0, 0, 0),
                stop: Some("tool_use"),
                model_used: Some("claude-sonnet-4-5-20250929"),
                request_id: Some("msg_01K4Fzcf1bhiyLzHpwLdrefj"),
                tools: &[(
                    "toolu_01LZABsgreMefH2Go8D5PQbW",
                    "final_result",
                    r#"{"city":"Mexico City","country":"Mexico"}"#,
                )],
                cost: Some((497.0 * 3.0 + 56.0 * 15.0) / 1e6),
                ..e("claude-sonnet-4-5")
            },
        ),
        (
            "anthropic/tool_use_sonnet45",
            Expect {
                tokens: (445, 23, 0, 0, 0),
                stop: Some("tool_use"),
                model_used: Some("claude-sonnet-4-5-20250929"),
                request_id: Some("msg_012TXW181edhmR5JCsQRsBKx"),
                tools: &[("toolu_01X9wcHKKAZD9tBC711xipPa", "get_user_country", "{}")],
                cost: Some((445.0 * 3.0 + 23.0 * 15.0) / 1e6),
                ..e("claude-sonnet-4-5")
            },
        ),
        (
            "gemini/cached_content_25flash",
            Expect {
                text: "Paris.",
                // promptTokenCount 3520 includes 3512 cached; output = 2 candidates + 42 thoughts.
                tokens: (3520, 44, 3512, 0, 42),
                stop: Some("STOP"),
                model_used: Some("gemini-2.5-flash"),
                model_version: Some("gemini-2.5-flash"),
                request_id: Some("_VQYaqvRGbW6qtsPg4TDoAg"),
                // 8 uncached at $0.30, 3512 cached at $0.03, 44 out at $2.50: $0.00021776.
                cost: Some(0.00021776),
                ..e("gemini-2.5-flash")
            },
        ),
        (
            "gemini/candidate_blocked_safety_15flash",
            Expect {
                tokens: (14, 0, 0, 0, 0),
                stop: Some("SAFETY"),
                safety: true,
                model_used: Some("gemini-1.5-flash"),
                model_version: Some("gemini-1.5-flash"),
                request_id: Some("5lpeaLOIBf__698Pv8HGgAg"),
                cost: Some(14.0 * 0.075 / 1e6),
                ..e("gemini-1.5-flash")
            },
        ),
        (
            "gemini/json_schema_20flash",
            Expect {
                text: "{\n  \"city\": \"Mexico City\",\n  \"country\": \"Mexico\"\n}",
                tokens: (8, 20, 0, 0, 0),
                stop: Some("STOP"),
                model_used: Some("gemini-2.0-flash"),
                model_version: Some("gemini-2.0-flash"),
                request_id: Some("EfsgaZT5JPbXz7IPqtGJkQ8"),
                cost: Some((8.0 * 0.1 + 20.0 * 0.4) / 1e6),
                ..e("gemini-2.0-flash")
            },
        ),
        (
            "gemini/max_tokens_25flash",
            Expect {
                text: "The capital of France is",
                tokens: (15, 5, 0, 0, 0),
                stop: Some("MAX_TOKENS"),
                model_used: Some("gemini-2.5-flash"),
                model_version: Some("gemini-2.5-flash"),
                request_id: Some("R5MoavWNNp_8qtsP2fWD2A0"),
                cost: Some((15.0 * 0.3 + 5.0 * 2.5) / 1e6),
                ..e("gemini-2.5-flash")
            },
        ),
        (
            "gemini/max_tokens_no_parts_25pro",
            Expect {
                tokens: (15, 2, 0, 0, 2),
                stop: Some("MAX_TOKENS"),
                model_used: Some("gemini-2.5-pro"),
                model_version: Some("gemini-2.5-pro"),
                request_id: Some("fH8oaunbEbr9qtsPjYGX4A0"),
                cost: Some((15.0 * 1.25 + 2.0 * 10.0) / 1e6),
                ..e("gemini-2.5-pro")
            },
        ),
        (
            "gemini/prompt_blocked_model_armor_VERTEX",
            Expect {
                stop: Some("MODEL_ARMOR"),
                safety: true,
                model_used: Some("gemini-2.5-flash"),
                model_version: Some("gemini-2.5-flash"),
                request_id: Some("mSEXaseKG-P51PIPwv66qQs"),
                cost: Some(0.0),
                ..e("gemini-2.5-flash")
            },
        ),
        (
            "gemini/text_thoughts_25flash",
            Expect {
                text: "Hello! How can I help you today?",
                tokens: (9, 9 + 34, 0, 0, 34),
                stop: Some("STOP"),
                model_used: Some("gemini-2.5-flash"),
                model_version: Some("gemini-2.5-flash"),
                request_id: Some("bzlXaa_EE_aHqtsPi_zw8Ao"),
                // Thoughts bill at the output rate: 9 in at $0.30, 43 out at $2.50.
                cost: Some((9.0 * 0.3 + 43.0 * 2.5) / 1e6),
                ..e("gemini-2.5-flash")
            },
        ),
        (
            "gemini/thinking_25pro",
            Expect {
                text: "The capital of France is **Paris**.",
                tokens: (15, 8 + 275, 0, 0, 275),
                stop: Some("STOP"),
                model_used: Some("gemini-2.5-pro"),
                model_version: Some("models/gemini-2.5-pro"),
                request_id: Some("1FpeaOWpAs-lkdUP_4eY2QY"),
                cost: Some((15.0 * 1.25 + 283.0 * 10.0) / 1e6),
                ..e("gemini-2.5-pro-preview-03-25")
            },
        ),
        (
            "openai/cached_tokens_gpt56",
            Expect {
                text: "OK",
                tokens: (4020, 4, 4012, 0, 0),
                stop: Some("stop"),
                model_used: Some("gpt-5.6-sol"),
                request_id: Some("chatcmpl-E1mBQt42vYTsKNd5wnyJlT0db7v9S"),
                // 8 uncached at $5, 4012 cached at $0.50, 4 out at $30.
                cost: Some((8.0 * 5.0 + 4012.0 * 0.5 + 4.0 * 30.0) / 1e6),
                ..e("gpt-5.6-sol")
            },
        ),
        (
            "openai/compat_length_hf_together_r1",
            Expect {
                text: "<think>\nHmm, the user just said \"hello\".",
                text_is_prefix: true,
                tokens: (4, 100, 0, 0, 0),
                stop: Some("length"),
                model_used: Some("deepseek-ai/DeepSeek-R1"),
                request_id: Some("oXUyQTv-28Eivz-9ce5a0296c7de93c"),
                ..e("deepseek-ai/DeepSeek-R1")
            },
        ),
        (
            "openai/compat_ollama_local_qwen3",
            Expect {
                text: "{ \"city\": \"Paris\", \"country\": \"France\" }",
                tokens: (136, 15, 0, 0, 0),
                stop: Some("stop"),
                model_used: Some("qwen3:0.6b"),
                model_version: Some("fp_ollama"),
                request_id: Some("chatcmpl-150"),
                ..e("qwen3:0.6b")
            },
        ),
        (
            "openai/json_schema_4o",
            Expect {
                text: "{\"city\":\"Mexico City\",\"country\":\"Mexico\"}",
                tokens: (92, 15, 0, 0, 0),
                stop: Some("stop"),
                model_used: Some("gpt-4o-2024-08-06"),
                model_version: Some("fp_f5bdcc3276"),
                request_id: Some("chatcmpl-BSXjzYGu67dhTy5r8KmjJvQ4HhDVO"),
                cost: Some((92.0 * 2.5 + 15.0 * 10.0) / 1e6),
                ..e("gpt-4o")
            },
        ),
        (
            "openai/reasoning_tokens_o3_mini",
            Expect {
                text: "Hello there! How can I help you today?",
                tokens: (7, 87, 0, 0, 64),
                stop: Some("stop"),
                model_used: Some("o3-mini-2025-01-31"),
                model_version: Some("fp_e89900d9f6"),
                request_id: Some("chatcmpl-Dr3KNfXKBS1oDOrhqYDuLYdjX9PM4"),
                cost: Some((7.0 * 1.1 + 87.0 * 4.4) / 1e6),
                ..e("o3-mini")
            },
        ),
        (
            "openai/text_4o_mini",
            Expect {
                text: "Hello! How can I assist you today?",
                tokens: (8, 9, 0, 0, 0),
                stop: Some("stop"),
                model_used: Some("gpt-4o-mini-2024-07-18"),
                model_version: Some("fp_4f5f0b399a"),
                request_id: Some("chatcmpl-Dr3KONlJHqM2OKkn7IPxwgC3ZIEZw"),
                cost: Some((8.0 * 0.15 + 9.0 * 0.6) / 1e6),
                ..e("gpt-4o-mini")
            },
        ),
        (
            "openai/tool_calls_4o",
            Expect {
                tokens: (71, 12, 0, 0, 0),
                stop: Some("tool_calls"),
                model_used: Some("gpt-4o-2024-08-06"),
                model_version: Some("fp_f5bdcc3276"),
                request_id: Some("chatcmpl-BSXjyBwGuZrtuuSzNCeaWMpGv2MZ3"),
                tools: &[("call_PkRGedQNRFUzJp2R7dO7avWR", "get_user_country", "{}")],
                cost: Some((71.0 * 2.5 + 12.0 * 10.0) / 1e6),
                ..e("gpt-4o")
            },
        ),
    ])
}

fn expected_errors() -> BTreeMap<&'static str, ExpectError> {
    BTreeMap::from([
        (
            "anthropic/error_400_invalid_request",
            ExpectError(
                "invalid_request_error",
                "This model does not support effort level 'xhigh'.",
                Some("req_011Ca7jT9AHpgXgdv8igm4z9"),
            ),
        ),
        (
            "anthropic/error_404_not_found",
            ExpectError(
                "not_found_error",
                "model: claude-sonet-4-5",
                Some("req_011CdufXo8Y2LVfY2veyuQWG"),
            ),
        ),
        (
            "gemini/error_404_not_found",
            ExpectError(
                "NOT_FOUND",
                "models/gemini-3.6-flahs is not found for API version v1beta",
                None,
            ),
        ),
        (
            "openai/error_400_unsupported_value",
            ExpectError(
                "invalid_request_error",
                "Unsupported value: 'messages[0].role' does not support 'system'",
                None,
            ),
        ),
        (
            "openai/error_404_model_not_found",
            ExpectError(
                "invalid_request_error",
                "The model `gpt-5.2-proo` does not exist",
                None,
            ),
        ),
    ])
}

fn check_success(case: &str, result: &CompletionResult, expect: &Expect) {
    if expect.text_is_prefix {
        assert!(
            result.text.starts_with(expect.text),
            "{case}: text {:?}",
            result.text
        );
    } else {
        assert_eq!(result.text, expect.text, "{case}: text");
    }
    let tokens = (
        result.input_tokens,
        result.output_tokens,
        result.cached_input_tokens,
        result.cache_creation_tokens,
        result.thoughts_tokens,
    );
    assert_eq!(
        tokens, expect.tokens,
        "{case}: (input, output, cached, cache creation, thoughts)"
    );
    assert_eq!(
        result.stop_reason.as_deref(),
        expect.stop,
        "{case}: stop reason"
    );
    assert_eq!(
        result.safety_filtered, expect.safety,
        "{case}: safety_filtered"
    );
    assert_eq!(
        result.model_used.as_deref(),
        expect.model_used,
        "{case}: model_used"
    );
    assert_eq!(
        result.model_version.as_deref(),
        expect.model_version,
        "{case}: model_version"
    );
    assert_eq!(
        result.request_id.as_deref(),
        expect.request_id,
        "{case}: request_id"
    );
    let tools: Vec<(String, String, Value)> = result
        .tool_calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
        .collect();
    let expected_tools: Vec<(String, String, Value)> = expect
        .tools
        .iter()
        .map(|(id, name, args)| {
            (
                id.to_string(),
                name.to_string(),
                serde_json::from_str(args).unwrap(),
            )
        })
        .collect();
    assert_eq!(tools, expected_tools, "{case}: tool calls");
    assert_eq!(
        result.cost_usd, None,
        "{case}: the client leaves pricing to the engine"
    );
    let cost = pricing::cost_of(expect.model, result, &BTreeMap::new());
    match (cost, expect.cost) {
        (Some(got), Some(want)) => {
            assert!((got - want).abs() < 1e-12, "{case}: cost {got} != {want}")
        }
        (got, want) => assert_eq!(got, want, "{case}: cost"),
    }
}

#[test]
fn every_recording_parses_to_the_expected_fields() {
    let Some(root) = recordings_dir("every_recording_parses_to_the_expected_fields") else {
        return;
    };
    let successes = expected_successes();
    let errors = expected_errors();
    let mut seen = Vec::new();
    for (folder, wire) in [
        ("anthropic", WireFormat::Anthropic),
        ("gemini", WireFormat::Google),
        ("openai", WireFormat::OpenAi),
    ] {
        let dir = root.join(folder);
        let readme = std::fs::read_to_string(dir.join("README.txt")).unwrap();
        let statuses = statuses(&readme);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".response.json"))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no recordings in {}", dir.display());
        for file in files {
            let name = file
                .file_name()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches(".response.json")
                .to_string();
            let case = format!("{folder}/{name}");
            let (status, _) = statuses
                .get(&name)
                .unwrap_or_else(|| panic!("{case}: no status in README.txt"));
            let body = std::fs::read(&file).unwrap();
            if (200..300).contains(status) {
                let result = provider::parse_response(wire, &body)
                    .unwrap_or_else(|e| panic!("{case} does not parse: {e}"));
                let expect = successes
                    .get(case.as_str())
                    .unwrap_or_else(|| panic!("{case}: a new recording needs expectations here"));
                check_success(&case, &result, expect);
            } else {
                let error = provider::parse_error_body(wire, &body);
                let ExpectError(kind, message, request_id) =
                    errors.get(case.as_str()).unwrap_or_else(|| {
                        panic!("{case}: a new error recording needs expectations here")
                    });
                assert_eq!(error.error_type.as_deref(), Some(*kind), "{case}");
                assert!(
                    error.message.as_deref().unwrap_or("").starts_with(message),
                    "{case}: {:?}",
                    error.message
                );
                assert_eq!(error.request_id.as_deref(), *request_id, "{case}");
                // An error body is not an answer.
                assert!(
                    provider::parse_response(wire, &body).is_err(),
                    "{case} parsed as an answer"
                );
            }
            seen.push(case);
        }
    }
    let expected: Vec<&str> = successes.keys().chain(errors.keys()).copied().collect();
    let missing: Vec<&&str> = expected
        .iter()
        .filter(|c| !seen.iter().any(|s| s == *c))
        .collect();
    assert!(
        missing.is_empty(),
        "expected recordings not found: {missing:?}"
    );
    println!("checked {} recordings", seen.len());
}

fn recorded_request(root: &Path, case: &str) -> Value {
    let text = std::fs::read_to_string(root.join(format!("{case}.request.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn without(mut value: Value, keys: &[&str]) -> Value {
    for key in keys {
        value.as_object_mut().unwrap().remove(*key);
    }
    value
}

fn endpoint(name: &str, wire: WireFormat, base_url: &str) -> EndpointConfig {
    EndpointConfig {
        name: name.into(),
        wire,
        base_url: base_url.into(),
        api_key_env: vec![],
        max_in_flight: 1,
    }
}

#[test]
fn request_builders_match_recorded_requests() {
    let Some(root) = recordings_dir("request_builders_match_recorded_requests") else {
        return;
    };
    let anthropic = endpoint(
        "anthropic",
        WireFormat::Anthropic,
        "https://api.anthropic.com",
    );
    let google = endpoint(
        "google",
        WireFormat::Google,
        "https://generativelanguage.googleapis.com",
    );
    let openai = endpoint("openai", WireFormat::OpenAi, "https://api.openai.com/v1");
    let compat = endpoint(
        "together",
        WireFormat::OpenAi,
        "https://router.huggingface.co/together/v1",
    );

    // Anthropic: a system prompt and one question. The recorder's `stream: false` is the default.
    let mut request = CompletionRequest::new(
        "claude-3-opus-latest",
        "What is the capital of France?",
        4096,
    );
    request.system = Some("You are a helpful assistant.\n\n".into());
    let recorded = recorded_request(&root, "anthropic/text_end_turn_claude3opus");
    assert_eq!(
        provider::request_body(&anthropic, &request),
        without(recorded, &["stream"])
    );

    // Anthropic: a tool call and its result sent back (`tool_choice: any` has no equivalent here).
    let tools = vec![
        ToolSpec {
            name: "get_user_country".into(),
            description: "".into(),
            input_schema: json!({"additionalProperties": false, "properties": {}, "type": "object"}),
        },
        ToolSpec {
            name: "final_result".into(),
            description: "The final response which ends this conversation".into(),
            input_schema: json!({
                "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
                "required": ["city", "country"], "title": "CityLocation", "type": "object"
            }),
        },
    ];
    let mut request = CompletionRequest::new(
        "claude-sonnet-4-5",
        "What is the largest city in the user country?",
        4096,
    );
    request.tools = tools.clone();
    request.messages.push(Message {
        role: Role::Assistant,
        content: vec![ContentBlock::ToolUse {
            id: "toolu_01X9wcHKKAZD9tBC711xipPa".into(),
            name: "get_user_country".into(),
            input: json!({}),
            thought_signature: None,
        }],
    });
    request.messages.push(Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: "toolu_01X9wcHKKAZD9tBC711xipPa".into(),
            name: "get_user_country".into(),
            content: "Mexico".into(),
            is_error: false,
        }],
    });
    let recorded = recorded_request(&root, "anthropic/tool_result_followup_sonnet45");
    assert_eq!(
        provider::request_body(&anthropic, &request),
        without(recorded, &["stream", "tool_choice"])
    );

    // Gemini: system instruction and a token limit (the recorder also sent responseModalities,
    // thinkingConfig and a `role` in systemInstruction, which the API does not need).
    let mut request =
        CompletionRequest::new("gemini-2.5-flash", "What is the capital of France?", 5);
    request.system = Some("You are a helpful chatbot.".into());
    let body = provider::request_body(&google, &request);
    let recorded = recorded_request(&root, "gemini/max_tokens_25flash");
    assert_eq!(body["contents"], recorded["contents"]);
    assert_eq!(
        body["systemInstruction"]["parts"],
        recorded["systemInstruction"]["parts"]
    );
    assert_eq!(
        body["generationConfig"]["maxOutputTokens"],
        recorded["generationConfig"]["maxOutputTokens"]
    );

    // Gemini structured output: the recorder used the newer `responseJsonSchema`; this schema is
    // inside the `responseSchema` subset, so it goes over unchanged.
    let recorded = recorded_request(&root, "gemini/json_schema_20flash");
    let mut request = CompletionRequest::new(
        "gemini-2.0-flash",
        "What is the largest city in Mexico?",
        100,
    );
    request.response_schema = Some(ResponseSchema {
        name: "CityLocation".into(),
        schema: recorded["generationConfig"]["responseJsonSchema"].clone(),
    });
    let body = provider::request_body(&google, &request);
    assert_eq!(body["contents"], recorded["contents"]);
    assert_eq!(
        body["generationConfig"]["responseMimeType"],
        "application/json"
    );
    // We add `propertyOrdering` (the declared order; Gemini otherwise sorts properties), which the
    // recorded client did not send; the rest must match.
    let mut schema = body["generationConfig"]["responseSchema"].clone();
    assert_eq!(schema["propertyOrdering"], json!(["city", "country"]));
    schema.as_object_mut().unwrap().remove("propertyOrdering");
    assert_eq!(schema, recorded["generationConfig"]["responseJsonSchema"]);

    // OpenAI's own API: `max_completion_tokens`.
    let recorded = recorded_request(&root, "openai/text_4o_mini");
    assert_eq!(
        provider::request_body(
            &openai,
            &CompletionRequest::new("gpt-4o-mini", "hello", 100)
        ),
        without(recorded, &["stream"])
    );
    // A compatible host: `max_tokens` (the recorder's empty `tools` list is left out).
    let recorded = recorded_request(&root, "openai/compat_length_hf_together_r1");
    assert_eq!(
        provider::request_body(
            &compat,
            &CompletionRequest::new("deepseek-ai/DeepSeek-R1", "hello", 100)
        ),
        without(recorded, &["stream", "tools"])
    );
    // System message first.
    let recorded = recorded_request(&root, "openai/error_400_unsupported_value");
    let mut request = CompletionRequest::new("o1-mini", "Hello", 100);
    request.system = Some("You are a helpful assistant.".into());
    assert_eq!(
        provider::request_body(&openai, &request)["messages"],
        recorded["messages"]
    );

    // A tool call, its result and structured output (sent strict here, as the judge wants).
    let recorded = recorded_request(&root, "openai/json_schema_4o");
    let mut request = CompletionRequest::new(
        "gpt-4o",
        "What is the largest city in the user country?",
        100,
    );
    request.tools = tools[..1].to_vec();
    request.response_schema = Some(ResponseSchema {
        name: "result".into(),
        schema: recorded["response_format"]["json_schema"]["schema"].clone(),
    });
    request.messages.push(Message {
        role: Role::Assistant,
        content: vec![ContentBlock::ToolUse {
            id: "call_PkRGedQNRFUzJp2R7dO7avWR".into(),
            name: "get_user_country".into(),
            input: json!({}),
            thought_signature: None,
        }],
    });
    request.messages.push(Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: "call_PkRGedQNRFUzJp2R7dO7avWR".into(),
            name: "get_user_country".into(),
            content: "Mexico".into(),
            is_error: false,
        }],
    });
    let body = provider::request_body(&openai, &request);
    assert_eq!(body["messages"], recorded["messages"]);
    assert_eq!(body["tools"], recorded["tools"]);
    assert_eq!(
        body["response_format"]["type"],
        recorded["response_format"]["type"]
    );
    assert_eq!(
        body["response_format"]["json_schema"]["name"],
        recorded["response_format"]["json_schema"]["name"]
    );
    assert_eq!(
        body["response_format"]["json_schema"]["schema"],
        recorded["response_format"]["json_schema"]["schema"]
    );
}

/// A real OpenAI-compatible server (e.g. `scripts/local-model.sh start`) at
/// `PROMPT_TESTER_LOCAL_BASE_URL`: required under CI, skipped visibly otherwise (see `tests/prereq`).
#[tokio::test]
async fn live_openai_compatible_server() {
    let Some(base_url) = prereq::local_base_url("live_openai_compatible_server") else {
        return;
    };
    let endpoint = EndpointConfig {
        name: "local".into(),
        wire: WireFormat::OpenAi,
        base_url,
        api_key_env: vec![],
        max_in_flight: 2,
    };
    let mut retry = fast_retry(2);
    retry.request_timeout = Duration::from_secs(60);
    let client = ProviderClient::new(&endpoint, &retry, http());
    assert_eq!(client.missing_key(), None);
    let mut request = CompletionRequest::new(
        "local",
        "Summarise in one sentence: Alice leads Project Phoenix.",
        40,
    );
    request.system = Some("You are a concise assistant.".into());
    request.temperature = Some(0.0);
    let result = client.complete(&request).await.unwrap();
    assert!(!result.text.trim().is_empty());
    assert!(
        result.input_tokens > 0 && result.output_tokens > 0,
        "{result:?}"
    );
    assert!(
        result
            .request_id
            .as_deref()
            .is_some_and(|id| id.starts_with("chatcmpl-")),
        "{result:?}"
    );
    assert!(result.model_used.is_some(), "{result:?}");

    // Structured output is enforced by the server's grammar.
    request.response_schema = Some(ResponseSchema {
        name: "verdict".into(),
        schema: json!({
            "type": "object",
            "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
            "required": ["answer"],
            "additionalProperties": false
        }),
    });
    request.messages = vec![Message::user(
        "Is Alice mentioned in: 'Alice leads Project Phoenix'? Answer yes or no.",
    )];
    let result = client.complete(&request).await.unwrap();
    let verdict: Value =
        serde_json::from_str(&result.text).unwrap_or_else(|e| panic!("{e}: {:?}", result.text));
    assert!(
        verdict["answer"] == "yes" || verdict["answer"] == "no",
        "{verdict}"
    );
}

/// Runs `test` of this binary alone in a child process, with the local server unset (the clean
/// environment drops every `PROMPT_TESTER_*`) and `CI` as given.
fn run_without_local_server(test: &str, ci: &str) -> std::process::Output {
    Child::this_test(test).env("CI", ci).run().0
}

/// The live test cannot pass by skipping: under CI its missing server fails it, with what to set; outside
/// CI the skip is said on stderr, which libtest does not capture.
#[test]
fn a_missing_local_server_fails_under_ci_and_shows_otherwise() {
    let ci = run_without_local_server("live_openai_compatible_server", "true");
    let stdout = String::from_utf8_lossy(&ci.stdout);
    assert!(!ci.status.success(), "passed under CI:\n{stdout}");
    assert!(
        stdout.contains("PROMPT_TESTER_LOCAL_BASE_URL is not set")
            && stdout.contains("Under CI a missing prerequisite fails the test"),
        "{stdout}"
    );
    let local = run_without_local_server("live_openai_compatible_server", "false");
    let stderr = String::from_utf8_lossy(&local.stderr);
    assert!(local.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "SKIPPED live_openai_compatible_server: prerequisite missing: PROMPT_TESTER_LOCAL_BASE_URL is not set"
        ),
        "the skip is not visible:\n{stderr}"
    );
}
