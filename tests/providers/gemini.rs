//! The Gemini generateContent wire: request shape and answer.

use prompt_tester_testkit::{Usage, Wire};
use serde_json::json;

use super::*;

#[tokio::test]
async fn gemini_request_shape_and_answer() {
    let mut request = simple(Wire::Gemini);
    request.system = Some("Be brief.".into());
    request.temperature = Some(0.0);
    let usage = Usage::new(50, 30).thoughts(20);
    let (result, seen) = one_call(Wire::Gemini, usage, &request).await;
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
    assert_eq!(tokens_of(&result), usage);
    assert_eq!(result.stop_reason.as_deref(), Some("STOP"));
    assert_eq!(result.model_version.as_deref(), Some("gemini-2.5-flash"));
    assert_request_id(&result, "fake-");
}
