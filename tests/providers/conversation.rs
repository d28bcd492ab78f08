//! A conversation before the prompt (`messages`: a system prompt, example turns, then the prompt), as
//! each wire format sends it: the exact body the loopback server received.

use prompt_tester::completion::Message;
use prompt_tester_testkit::{Usage, Wire, assert_chat_messages};
use serde_json::{Value, json};

use super::*;

/// A system prompt, one example exchange and the prompt: what a suite's `messages` becomes.
fn few_shot(wire: Wire) -> CompletionRequest {
    let mut request = CompletionRequest::new(model_for(wire), "Review: Dull.", 16);
    request.system = Some("Label reviews: positive or negative.".into());
    request.messages = vec![
        Message::user("Review: Loved it."),
        Message::assistant("positive"),
        Message::user("Review: Dull."),
    ];
    request
}

async fn body_sent(wire: Wire) -> Value {
    let (result, seen) = one_call(wire, Usage::new(30, 2), &few_shot(wire)).await;
    // The fake echoes the last user turn: the prompt is the turn answered.
    assert_eq!(result.text, "echo: Review: Dull.");
    seen.json.expect("a JSON body")
}

#[tokio::test]
async fn anthropic_sends_the_system_prompt_apart_and_alternating_turns() {
    let body = body_sent(Wire::Anthropic).await;
    assert_eq!(body["system"], "Label reviews: positive or negative.");
    let text = |t: &str| json!([{"type": "text", "text": t}]);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": text("Review: Loved it.")},
            {"role": "assistant", "content": text("positive")},
            {"role": "user", "content": text("Review: Dull.")},
        ])
    );
}

#[tokio::test]
async fn gemini_sends_a_system_instruction_and_model_turns() {
    let body = body_sent(Wire::Gemini).await;
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "Label reviews: positive or negative."}]})
    );
    assert_eq!(
        body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "Review: Loved it."}]},
            {"role": "model", "parts": [{"text": "positive"}]},
            {"role": "user", "parts": [{"text": "Review: Dull."}]},
        ])
    );
    assert!(body.get("system").is_none(), "{body}");
}

#[tokio::test]
async fn openai_sends_one_message_list_with_the_system_message_first() {
    let body = body_sent(Wire::OpenAi).await;
    assert_chat_messages(
        &body,
        &[
            ("system", "Label reviews: positive or negative."),
            ("user", "Review: Loved it."),
            ("assistant", "positive"),
            ("user", "Review: Dull."),
        ],
    );
}
