//! The Anthropic Messages wire: request shape and answer.

use prompt_tester_testkit::{Usage, Wire};
use serde_json::json;

use super::*;

#[tokio::test]
async fn anthropic_request_shape_and_answer() {
    let mut request = simple(Wire::Anthropic);
    request.system = Some("Answer in one word.".into());
    request.cache_system = true;
    request.temperature = Some(0.3);
    let usage = Usage::new(100, 7).cached(60);
    let (result, seen) = one_call(Wire::Anthropic, usage, &request).await;
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
    assert_eq!(tokens_of(&result), usage);
    assert_eq!(result.stop_reason.as_deref(), Some("end_turn"));
    assert_eq!(result.model_used.as_deref(), Some("claude-haiku-4-5"));
    assert_request_id(&result, "msg_fake_");
    assert_eq!(result.cost_usd, None);
}
