//! The agent loop against the fake provider in the three wire formats: declared tools, turns, errors,
//! concurrent calls, `max_turns` and Gemini's thought signatures.

use prompt_tester::completion::{CompletionRequest, ContentBlock, Role, ToolSpec};
use prompt_tester::{AgentError, Tool, Toolbox};
use prompt_tester_testkit::{FakeProvider, Reply, Usage, Wire};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;

#[tokio::test]
async fn declared_tools_go_out_in_each_wire_format_and_calls_come_back() {
    let fake = FakeProvider::start();
    for wire in ALL {
        fake.push(Reply::tool_call(
            wire,
            model_for(wire),
            "get_weather",
            &json!({"city": "Paris"}),
            Usage::new(9, 4),
        ));
        let mut request = CompletionRequest::new(model_for(wire), "Weather in Paris?", 64);
        request.tools = vec![ToolSpec::new(
            "get_weather",
            "The current weather in a city",
            weather_schema(),
        )];
        let result = client(&fake, wire).complete(&request).await.unwrap();
        assert_eq!(result.tool_calls.len(), 1, "{wire:?}");
        assert_eq!(
            (
                result.tool_calls[0].name.as_str(),
                &result.tool_calls[0].arguments
            ),
            ("get_weather", &json!({"city": "Paris"}))
        );
        let sent = fake.requests().pop().unwrap();
        assert_eq!(sent.wire(), Some(wire));
        let declared = declared_tools(&sent);
        assert_eq!(declared.len(), 1, "{wire:?}");
        assert_eq!(declared[0].0, "get_weather");
        assert_eq!(
            declared[0].1["properties"]["city"]["type"], "string",
            "{wire:?}"
        );
    }
}

#[tokio::test]
async fn a_two_turn_loop_sends_the_result_back_in_each_wire_format() {
    for wire in ALL {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let toolbox = Toolbox::new().tool(weather_tool(seen.clone()));
        let (fake, outcome) = run_scripted(
            wire,
            &toolbox,
            "What is the weather in Paris?",
            [
                Turn::Call("get_weather", json!({"city": "Paris"}), Usage::new(11, 5)),
                Turn::Say("It is sunny in Paris.", Usage::new(23, 7)),
            ],
        )
        .await;

        assert_eq!(outcome.result.text, "It is sunny in Paris.", "{wire:?}");
        assert_eq!(outcome.turns, 2);
        assert_eq!(*seen.lock().unwrap(), vec![json!({"city": "Paris"})]);
        assert_eq!(outcome.result.tool_calls.len(), 1);
        assert_eq!(outcome.result.tool_calls[0].name, "get_weather");
        // Tokens add up over the turns.
        assert_eq!(
            (outcome.result.input_tokens, outcome.result.output_tokens),
            (34, 12),
            "{wire:?}"
        );
        assert!(!outcome.replayed);
        let roles: Vec<Role> = outcome.transcript.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::User, Role::Assistant]
        );
        assert!(
            matches!(&outcome.transcript[1].content[0], ContentBlock::ToolUse { name, .. } if name == "get_weather")
        );
        assert!(matches!(
            &outcome.transcript[2].content[0],
            ContentBlock::ToolResult { content, is_error: false, .. } if content == "Sunny in Paris"
        ));

        let requests = fake.requests();
        assert_eq!(requests.len(), 2, "{wire:?}");
        // Both turns offer the tool.
        assert!(requests.iter().all(|r| declared_tools(r).len() == 1));
        let (calls, results) = last_exchange(&requests[1]);
        assert_eq!(calls.len(), 1);
        assert_eq!(
            (calls[0].1.as_str(), &calls[0].2),
            ("get_weather", &json!({"city": "Paris"})),
            "{wire:?}"
        );
        assert_eq!(results.len(), 1);
        let Sent {
            call_id,
            name,
            content,
            is_error,
        } = &results[0];
        assert_eq!(
            (content.as_str(), *is_error),
            ("Sunny in Paris", false),
            "{wire:?}"
        );
        match wire {
            // The result answers the call by the provider's id...
            Wire::Anthropic | Wire::OpenAi => {
                assert_eq!(call_id, &calls[0].0);
                assert_eq!(call_id, &Some(outcome.result.tool_calls[0].id.clone()));
            }
            // ...or, for Gemini, by name.
            Wire::Gemini => assert_eq!(name.as_deref(), Some("get_weather")),
        }
    }
}

#[tokio::test]
async fn handler_errors_and_unknown_tools_are_error_results_the_model_sees() {
    for wire in ALL {
        let toolbox = Toolbox::new().tool(Tool::new(
            "lookup_order",
            "Look an order up",
            json!({"type": "object"}),
            |args| async move { Err::<String, _>(format!("no order with id {}", args["id"])) },
        ));
        let (fake, outcome) = run_scripted(
            wire,
            &toolbox,
            "Where is Z-9?",
            [
                Turn::Call("lookup_order", json!({"id": "Z-9"}), Usage::new(5, 2)),
                Turn::Call("cancel_order", json!({"id": "Z-9"}), Usage::new(6, 2)),
                Turn::Say("I could not find that order.", Usage::new(7, 3)),
            ],
        )
        .await;
        assert_eq!(outcome.result.text, "I could not find that order.");
        assert_eq!(outcome.turns, 3);
        assert_eq!(
            (outcome.result.input_tokens, outcome.result.output_tokens),
            (18, 7)
        );
        let calls: Vec<&str> = outcome
            .result
            .tool_calls
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(calls, ["lookup_order", "cancel_order"]);

        let requests = fake.requests();
        let (_, failed) = last_exchange(&requests[1]);
        assert_eq!(failed[0].content, "no order with id \"Z-9\"", "{wire:?}");
        let (_, unknown) = last_exchange(&requests[2]);
        assert_eq!(
            unknown[0].content, "unknown tool `cancel_order`; the tools are: `lookup_order`",
            "{wire:?}"
        );
        if wire != Wire::OpenAi {
            assert!(
                failed[0].is_error && unknown[0].is_error,
                "{wire:?}: is_error on both"
            );
        }
        // The transcript keeps the flag whatever the wire can carry.
        assert!(matches!(
            &outcome.transcript[2].content[0],
            ContentBlock::ToolResult { is_error: true, .. }
        ));
        assert!(matches!(
            &outcome.transcript[4].content[0],
            ContentBlock::ToolResult { is_error: true, .. }
        ));
    }
}

#[tokio::test]
async fn several_calls_in_one_turn_run_concurrently_and_answer_in_order() {
    let fake = FakeProvider::start();
    let body = json!({
        "id": "msg_par", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [
            {"type": "text", "text": "Checking both."},
            {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "toolu_b", "name": "get_weather", "input": {"city": "Oslo"}}
        ],
        "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 10}
    });
    fake.push(Reply::json(200, &body));
    fake.push(Reply::text(
        Wire::Anthropic,
        "claude-haiku-4-5",
        "Paris and Oslo are fine.",
        Usage::new(30, 6),
    ));
    // Each call waits for the other: run one after the other, both would time out.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let tool = Tool::new("get_weather", "Weather", weather_schema(), move |args| {
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            Ok::<_, String>(format!("Mild in {}", args["city"].as_str().unwrap_or("?")))
        }
    });
    let toolbox = Toolbox::new()
        .tool(tool)
        .tool_timeout(Duration::from_secs(5));
    let outcome = run_on(&fake, Wire::Anthropic, &toolbox, "Paris and Oslo?")
        .await
        .unwrap();
    assert_eq!(outcome.result.text, "Paris and Oslo are fine.");
    let (calls, results) = last_exchange(&fake.requests()[1]);
    let ids: Vec<_> = calls.iter().map(|c| c.0.clone().unwrap()).collect();
    assert_eq!(ids, ["toolu_a", "toolu_b"]);
    let answered: Vec<_> = results
        .iter()
        .map(|r| (r.call_id.clone().unwrap(), r.content.clone(), r.is_error))
        .collect();
    assert_eq!(
        answered,
        [
            ("toolu_a".to_string(), "Mild in Paris".to_string(), false),
            ("toolu_b".to_string(), "Mild in Oslo".to_string(), false)
        ]
    );
    // The assistant's text goes back with its calls.
    let sent = fake.requests()[1].json.clone().unwrap();
    assert_eq!(
        sent["messages"][1]["content"][0],
        json!({"type": "text", "text": "Checking both."})
    );
}

#[tokio::test]
async fn a_model_that_keeps_calling_tools_fails_at_max_turns() {
    let fake = FakeProvider::start();
    for _ in 0..5 {
        fake.push(Reply::tool_call(
            Wire::OpenAi,
            "gpt-4o-mini",
            "get_weather",
            &json!({"city": "Paris"}),
            Usage::new(3, 1),
        ));
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let toolbox = Toolbox::new().tool(weather_tool(seen.clone())).max_turns(3);
    let error = run_on(&fake, Wire::OpenAi, &toolbox, "Weather?")
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"agent loop reached max_turns = 3 without a final answer; last tool calls: get_weather({"city":"Paris"})"#
    );
    assert!(matches!(error, AgentError::MaxTurns { max_turns: 3, .. }));
    // Three model calls; the calls of the last turn are not run.
    assert_eq!(fake.request_count(), 3);
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn gemini_thought_signatures_go_back_with_their_calls() {
    let fake = FakeProvider::start();
    fake.push(Reply::json(
        200,
        &json!({
            "candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2lnLWFiYw=="}
            ]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 3, "thoughtsTokenCount": 4},
            "modelVersion": "gemini-3.1-flash-lite"
        }),
    ));
    fake.push(Reply::text(
        Wire::Gemini,
        "gemini-3.1-flash-lite",
        "Sunny.",
        Usage::new(20, 2),
    ));
    let toolbox = Toolbox::new().tool(weather_tool(Arc::default()));
    let outcome = run_on(&fake, Wire::Gemini, &toolbox, "Weather in Paris?")
        .await
        .unwrap();
    assert_eq!(
        outcome.result.tool_calls[0].thought_signature.as_deref(),
        Some("c2lnLWFiYw==")
    );
    assert_eq!(
        (outcome.result.output_tokens, outcome.result.thoughts_tokens),
        (9, 4)
    );
    let sent = fake.requests()[1].json.clone().unwrap();
    assert_eq!(
        sent["contents"][1]["parts"][0]["thoughtSignature"],
        "c2lnLWFiYw=="
    );
    assert_eq!(
        sent["contents"][1]["parts"][0]["functionCall"]["name"],
        "get_weather"
    );
}
