//! What every wire format shares: keyless endpoints, structured output and tool calls.

use prompt_tester::completion::{ContentBlock, Message, ResponseSchema, Role, ToolSpec};
use prompt_tester_testkit::{FakeProvider, Reply, Usage, Wire};
use serde_json::{Value, json};

use super::*;

#[tokio::test]
async fn keyless_endpoints_send_no_auth_header() {
    let fake = FakeProvider::start();
    for wire in ALL {
        let mut endpoint = endpoint_for(&fake, wire, 4);
        endpoint.api_key_env.clear();
        let client = common::client_of(&endpoint, &fast_retry(1), None);
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

/// A seed goes where each wire takes one (OpenAI-compatible `seed`, Gemini `generationConfig.seed`);
/// the Anthropic Messages API has none, so nothing is sent there. Unset, no wire sends one.
#[tokio::test]
async fn the_seed_is_sent_where_the_wire_takes_one() {
    let fake = FakeProvider::start();
    for wire in ALL {
        let mut request = simple(wire);
        request.seed = Some(43);
        client(&fake, wire, fast_retry(1))
            .complete(&request)
            .await
            .unwrap();
        client(&fake, wire, fast_retry(1))
            .complete(&simple(wire))
            .await
            .unwrap();
    }
    let requests = fake.requests();
    assert_eq!(requests.len(), 2 * ALL.len());
    for pair in requests.chunks(2) {
        let (seeded, plain) = (pair[0].json.clone().unwrap(), pair[1].json.clone().unwrap());
        let wire = pair[0].wire().unwrap();
        let seed_of = |body: &Value| match wire {
            Wire::Gemini => body["generationConfig"].get("seed").cloned(),
            _ => body.get("seed").cloned(),
        };
        let want = match wire {
            Wire::Anthropic => None,
            _ => Some(json!(43)),
        };
        assert_eq!(seed_of(&seeded), want, "{wire:?}: {seeded}");
        assert_eq!(seed_of(&plain), None, "{wire:?}: {plain}");
        // Nowhere else in the body either.
        assert_eq!(
            seeded.to_string().contains("\"seed\""),
            want.is_some(),
            "{seeded}"
        );
    }
}
