//! A live OpenAI-compatible server (the local model), and its prerequisite rule.

use prompt_tester::completion::{CompletionRequest, Message, ResponseSchema};
use prompt_tester::config::{EndpointConfig, WireFormat};
use prompt_tester::provider::ProviderClient;
use prompt_tester_testkit::child::Child;
use serde_json::{Value, json};
use std::time::Duration;

use super::*;

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
    let retry = RetryConfig {
        request_timeout: Duration::from_secs(60),
        ..fast_retry(2)
    };
    let client = ProviderClient::new(&endpoint, &retry);
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
    assert_request_id(&result, "chatcmpl-");
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
    let ci = run_without_local_server("local::live_openai_compatible_server", "true");
    let stdout = String::from_utf8_lossy(&ci.stdout);
    assert!(!ci.status.success(), "passed under CI:\n{stdout}");
    assert!(
        stdout.contains("PROMPT_TESTER_LOCAL_BASE_URL is not set")
            && stdout.contains("Under CI a missing prerequisite fails the test"),
        "{stdout}"
    );
    let local = run_without_local_server("local::live_openai_compatible_server", "false");
    let stderr = String::from_utf8_lossy(&local.stderr);
    assert!(local.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "SKIPPED live_openai_compatible_server: prerequisite missing: PROMPT_TESTER_LOCAL_BASE_URL is not set"
        ),
        "the skip is not visible:\n{stderr}"
    );
}
