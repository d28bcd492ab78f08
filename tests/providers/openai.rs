//! The OpenAI-compatible chat completions wire: request shape, answer and the public API's token key.

use prompt_tester::completion::Message;
use prompt_tester::config::{EndpointConfig, WireFormat};
use prompt_tester::testing::wire as provider;
use prompt_tester_testkit::{Usage, Wire, assert_chat_messages};

use super::*;

#[tokio::test]
async fn openai_request_shape_and_answer() {
    let mut request = simple(Wire::OpenAi);
    request.system = Some("sys".into());
    request.messages.push(Message::assistant("Paris."));
    request.messages.push(Message::user("And Spain?"));
    let usage = Usage::new(40, 12).cached(32).thoughts(5);
    let (result, seen) = one_call(Wire::OpenAi, usage, &request).await;
    assert_eq!(seen.path, "/v1/chat/completions");
    assert_eq!(
        seen.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(seen.header("x-api-key"), None);
    let body = seen.json.as_ref().unwrap();
    assert_eq!(body["max_tokens"], 64, "compatible servers get max_tokens");
    assert!(body.get("max_completion_tokens").is_none());
    assert_chat_messages(
        body,
        &[
            ("system", "sys"),
            ("user", "What is the capital of France?"),
            ("assistant", "Paris."),
            ("user", "And Spain?"),
        ],
    );

    assert_eq!(result.text, "echo: And Spain?");
    assert_eq!(tokens_of(&result), usage);
    assert_eq!(result.model_version.as_deref(), Some("fp_fake"));
    assert_request_id(&result, "chatcmpl-fake-");
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
