use super::*;
use crate::cassette::raw::canonical;
use std::io::Write;
use std::path::{Path, PathBuf};

fn request(path: &str, body: Value) -> RawRequest {
    RawRequest {
        method: "POST".into(),
        path: path.into(),
        query: Vec::new(),
        body: canonical(body),
        media: Vec::new(),
    }
}

fn json_answer(body: Value) -> RawResponse {
    RawResponse {
        status: 200,
        content_type: "application/json".into(),
        body: RawBody::Json(canonical(body)),
    }
}

/// A stream of these data, each event named by its data's `type` as Anthropic and the Responses
/// API name them (OpenAI's and Gemini's chunks have none).
fn stream(data: Vec<Value>) -> RawResponse {
    let events = data
        .into_iter()
        .map(|data| StreamEvent {
            event: kind(&data).map(str::to_string),
            data,
        })
        .collect();
    RawResponse {
        status: 200,
        content_type: "text/event-stream".into(),
        body: RawBody::Events(events),
    }
}

/// Each message as the conversation writes it.
fn texts(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| canonical_text(&canonical(m.clone())))
        .collect()
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        thought_signature: None,
    }
}

fn sent(id: Option<&str>, name: &str, content: &str) -> SentBack {
    SentBack {
        id: id.map(str::to_string),
        name: Some(name.into()),
        content: content.into(),
    }
}

/// `request` answered by each of `answers` reads as `expected`.
fn reads_as(request: &RawRequest, answers: &[(&str, RawResponse)], expected: &Read) {
    for (what, answer) in answers {
        assert_eq!(read(request, answer).as_ref(), Some(expected), "{what}");
    }
}

#[test]
fn chat_completions_json_and_stream() {
    let messages = vec![
        json!({"role": "system", "content": "Be brief."}),
        json!({"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"},
            {"type": "text", "text": "And the time?"}]}),
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_a", "type": "function",
            "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_a", "content": "rain"}),
        json!({"role": "assistant", "content": "Now the time.", "tool_calls": [
            {"id": "call_b", "type": "function", "function": {"name": "time", "arguments": "{}"}},
            {"id": "call_c", "type": "function", "function": {"name": "zone", "arguments": "{}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_b", "content": [{"type": "text", "text": "12:00"},
            {"type": "text", "text": "CET"}]}),
        json!({"role": "tool", "tool_call_id": "call_c", "content": "UTC+1"}),
    ];
    let asked = request(
        "/v1/chat/completions",
        json!({"model": "gpt-4o", "messages": messages}),
    );
    let expected = Read {
        conversation: texts(&messages),
        // Only the results after the last model turn: `call_a`'s was sent back before.
        sent_back: vec![
            sent(Some("call_b"), "time", "12:00\nCET"),
            sent(Some("call_c"), "zone", "UTC+1"),
        ],
        requested: vec![
            call("call_d", "forecast", json!({"days": 2})),
            call("call_e", "note", json!("not json")),
        ],
        answer: "Tomorrow?".into(),
        first_user_text: Some("Weather in Oslo?\nAnd the time?".into()),
    };
    let answer = json_answer(json!({"id": "chatcmpl-1", "choices": [{"index": 0,
        "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "Tomorrow?",
        "tool_calls": [
            {"id": "call_d", "type": "function", "function": {"name": "forecast", "arguments": "{\"days\": 2}"}},
            {"id": "call_e", "type": "function", "function": {"name": "note", "arguments": "not json"}}]}}]}));
    let delta = |delta: Value| json!({"choices": [{"index": 0, "delta": delta}]});
    let fragment = |fragment: Value| delta(json!({"tool_calls": [fragment]}));
    let streamed = stream(vec![
        delta(json!({"role": "assistant", "content": "Tomor"})),
        delta(json!({"content": "row?"})),
        fragment(
            json!({"index": 0, "id": "call_d", "type": "function", "function": {"name": "forecast", "arguments": ""}}),
        ),
        fragment(json!({"index": 0, "function": {"arguments": "{\"da"}})),
        fragment(
            json!({"index": 1, "id": "call_e", "type": "function", "function": {"name": "note", "arguments": "not "}}),
        ),
        fragment(json!({"index": 0, "function": {"arguments": "ys\": 2}"}})),
        fragment(json!({"index": 1, "function": {"arguments": "json"}})),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}}),
        json!("[DONE]"),
    ]);
    reads_as(
        &asked,
        &[("json", answer.clone()), ("stream", streamed)],
        &expected,
    );
    let read = read(&asked, &answer).unwrap();
    assert_eq!(
        read.conversation[0],
        r#"{"content":"Be brief.","role":"system"}"#
    );
    // The request before it is where this conversation started.
    let earlier = request(
        "/v1/chat/completions",
        json!({"model": "gpt-4o", "messages": messages[..2]}),
    );
    let earlier = super::read(&earlier, &answer).unwrap();
    assert!(read.conversation.starts_with(&earlier.conversation));
    assert_eq!(earlier.sent_back, []);
}

#[test]
fn responses_json_stream_and_completed_stream() {
    let input = vec![
        json!({"role": "user", "content": [{"type": "input_text", "text": "Weather in Oslo?"}]}),
        json!({"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "weather",
            "arguments": "{\"city\":\"Oslo\"}"}),
        json!({"type": "function_call_output", "call_id": "call_a", "output": "rain"}),
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It rains."}]}),
        json!({"role": "user", "content": "And the time?"}),
        json!({"type": "reasoning", "id": "rs_1", "summary": []}),
        json!({"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "time", "arguments": "{}"}),
        json!({"type": "function_call_output", "call_id": "call_b",
            "output": [{"type": "input_text", "text": "12:00"}]}),
    ];
    let asked = request(
        "/v1/responses",
        json!({"model": "gpt-5", "instructions": "Be brief.", "input": input}),
    );
    let mut conversation = vec![r#"{"instructions":"Be brief."}"#.to_string()];
    conversation.extend(texts(&input));
    let expected = Read {
        conversation,
        sent_back: vec![sent(Some("call_b"), "time", "12:00")],
        requested: vec![
            call("call_d", "forecast", json!({"days": 2})),
            call("call_e", "note", json!("not json")),
        ],
        answer: "Tomorrow?".into(),
        first_user_text: Some("Weather in Oslo?".into()),
    };
    let response = json!({"id": "resp_1", "status": "completed", "output": [
        {"type": "reasoning", "id": "rs_2", "summary": []},
        {"type": "message", "id": "msg_1", "role": "assistant",
            "content": [{"type": "output_text", "text": "Tomorrow?", "annotations": []}]},
        {"type": "function_call", "id": "fc_3", "call_id": "call_d", "name": "forecast", "arguments": "{\"days\": 2}"},
        {"type": "function_call", "id": "fc_4", "call_id": "call_e", "name": "note", "arguments": "not json"}]});
    // Items as added, text and arguments as deltas, one delta naming its item only; the message's
    // `done` never comes, nor the completed response.
    let events = vec![
        json!({"type": "response.created", "response": {"id": "resp_1", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_2", "summary": []}}),
        json!({"type": "response.output_item.added", "output_index": 1,
            "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.content_part.added", "output_index": 1, "content_index": 0,
            "part": {"type": "output_text", "text": ""}}),
        json!({"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "Tomor"}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "content_index": 0, "delta": "row?"}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call",
            "id": "fc_3", "call_id": "call_d", "name": "forecast", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "{\"da"}),
        json!({"type": "response.output_item.added", "output_index": 3, "item": {"type": "function_call",
            "id": "fc_4", "call_id": "call_e", "name": "note", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_4", "delta": "not "}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "ys\": 2}"}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 3, "delta": "json"}),
        json!({"type": "response.function_call_arguments.done", "output_index": 2, "arguments": "{\"days\": 2}"}),
    ];
    // The completed response is read rather than the deltas, here cut short.
    let mut completed = events[..8].to_vec();
    completed.push(json!({"type": "response.completed", "response": response}));
    reads_as(
        &asked,
        &[
            ("json", json_answer(response.clone())),
            ("stream", stream(events)),
            ("completed stream", stream(completed)),
        ],
        &expected,
    );
    // A string input is the user's message: the request that sends it back as an item continues it.
    let first = request(
        "/v1/responses",
        json!({"model": "gpt-5", "instructions": "Be brief.", "input": "Weather in Oslo?"}),
    );
    let first = read(&first, &json_answer(response.clone())).unwrap();
    assert_eq!(
        first.conversation,
        [
            r#"{"instructions":"Be brief."}"#,
            r#"{"content":"Weather in Oslo?","role":"user"}"#
        ]
    );
    assert_eq!(first.first_user_text.as_deref(), Some("Weather in Oslo?"));
    let next = request(
        "/v1/responses",
        json!({"model": "gpt-5", "instructions": "Be brief.", "input": [
            {"role": "user", "content": "Weather in Oslo?"}, input[1], input[2]]}),
    );
    let next = read(&next, &json_answer(response)).unwrap();
    assert!(next.conversation.starts_with(&first.conversation));
    assert_eq!(next.sent_back, [sent(Some("call_a"), "weather", "rain")]);
}

#[test]
fn anthropic_messages_json_and_stream() {
    let messages = vec![
        json!({"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]}),
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_a", "name": "weather", "input": {"city": "Oslo"}},
            {"type": "tool_use", "id": "toolu_b", "name": "time", "input": {}},
            {"type": "tool_use", "id": "toolu_c", "name": "map", "input": {}}]}),
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "rain"},
            {"type": "tool_result", "tool_use_id": "toolu_b", "is_error": false,
                "content": [{"type": "text", "text": "12:00"}, {"type": "text", "text": "CET"}]},
            {"type": "tool_result", "tool_use_id": "toolu_c", "content": [{"type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]},
            {"type": "text", "text": "Thanks."}]}),
    ];
    let system =
        json!([{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]);
    let asked = request(
        "/v1/messages",
        json!({"model": "claude-sonnet-4-5", "max_tokens": 64, "system": system, "messages": messages}),
    );
    let mut conversation = vec![
        r#"{"system":[{"cache_control":{"type":"ephemeral"},"text":"Be brief.","type":"text"}]}"#
            .to_string(),
    ];
    conversation.extend(texts(&messages));
    let expected = Read {
        conversation,
        sent_back: vec![
            sent(Some("toolu_a"), "weather", "rain"),
            sent(Some("toolu_b"), "time", "12:00\nCET"),
            sent(
                Some("toolu_c"),
                "map",
                r#"[{"source":{"data":"AAAA","media_type":"image/png","type":"base64"},"type":"image"}]"#,
            ),
        ],
        requested: vec![
            call("toolu_d", "forecast", json!({"days": 2})),
            call("toolu_e", "note", json!({})),
        ],
        answer: "Tomorrow?".into(),
        first_user_text: Some("Weather in Oslo?".into()),
    };
    let answer = json_answer(
        json!({"id": "msg_1", "type": "message", "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "s"},
            {"type": "text", "text": "Tomorrow?"},
            {"type": "tool_use", "id": "toolu_d", "name": "forecast", "input": {"days": 2}},
            {"type": "tool_use", "id": "toolu_e", "name": "note", "input": {}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 9, "output_tokens": 4}}),
    );
    let block = |index: u64, block: Value| json!({"type": "content_block_start", "index": index, "content_block": block});
    let delta = |index: u64, delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
    let json_piece = |index, piece: &str| {
        delta(
            index,
            json!({"type": "input_json_delta", "partial_json": piece}),
        )
    };
    let stop = |index: u64| json!({"type": "content_block_stop", "index": index});
    let streamed = stream(vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "content": [],
            "usage": {"input_tokens": 9, "output_tokens": 1}}}),
        block(0, json!({"type": "thinking", "thinking": ""})),
        delta(0, json!({"type": "thinking_delta", "thinking": "hmm"})),
        stop(0),
        json!({"type": "ping"}),
        block(1, json!({"type": "text", "text": ""})),
        delta(1, json!({"type": "text_delta", "text": "Tomor"})),
        delta(1, json!({"type": "text_delta", "text": "row?"})),
        stop(1),
        block(
            2,
            json!({"type": "tool_use", "id": "toolu_d", "name": "forecast", "input": {}}),
        ),
        json_piece(2, ""),
        json_piece(2, "{\"da"),
        json_piece(2, "ys\": 2}"),
        stop(2),
        // A call without arguments sends no fragment: its input is the start's.
        block(
            3,
            json!({"type": "tool_use", "id": "toolu_e", "name": "note", "input": {}}),
        ),
        stop(3),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 4}}),
        json!({"type": "message_stop"}),
    ]);
    reads_as(&asked, &[("json", answer), ("stream", streamed)], &expected);
}

#[test]
fn gemini_generate_content_json_and_stream() {
    let contents = vec![
        json!({"role": "user", "parts": [{"text": "Weather in Oslo?"}]}),
        json!({"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"city": "Oslo"}},
            "thoughtSignature": "sig0"}]}),
        json!({"role": "user", "parts": [{"functionResponse": {"name": "weather",
            "response": {"content": "rain"}}}]}),
    ];
    let body =
        json!({"systemInstruction": {"parts": [{"text": "Be brief."}]}, "contents": contents});
    let mut conversation =
        vec![r#"{"systemInstruction":{"parts":[{"text":"Be brief."}]}}"#.to_string()];
    conversation.extend(texts(&contents));
    // Gemini's calls carry no id: they are named `call_N`, as the crate's Gemini parser names them.
    let expected = Read {
        conversation,
        sent_back: vec![sent(None, "weather", r#"{"content":"rain"}"#)],
        requested: vec![
            ToolCall {
                thought_signature: Some("sig1".into()),
                ..call("call_0", "forecast", json!({"days": 2}))
            },
            call("call_1", "note", json!({})),
        ],
        answer: "Tomorrow?".into(),
        first_user_text: Some("Weather in Oslo?".into()),
    };
    let parts = [
        json!({"text": "thinking", "thought": true}),
        json!({"text": "Tomor"}),
        json!({"text": "row?"}),
        json!({"functionCall": {"name": "forecast", "args": {"days": 2}}, "thoughtSignature": "sig1"}),
        json!({"functionCall": {"name": "note", "args": {}}}),
    ];
    let chunk = |parts: &[Value]| {
        json!({"candidates": [{"content": {"role": "model", "parts": parts}}],
            "usageMetadata": {"promptTokenCount": 9}})
    };
    let answer = json_answer(chunk(&parts));
    // Each function call comes whole in its chunk.
    let streamed = stream(
        parts
            .iter()
            .map(|p| chunk(std::slice::from_ref(p)))
            .collect(),
    );
    let once = request(
        "/v1beta/models/gemini-2.5-flash:generateContent",
        body.clone(),
    );
    let mut streaming = request(
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        body,
    );
    streaming.query = vec![("alt".into(), "sse".into())];
    reads_as(&once, &[("json", answer)], &expected);
    reads_as(&streaming, &[("stream", streamed)], &expected);
}

#[test]
fn without_a_model_turn_every_result_is_sent_back_and_embeddings_are_no_step() {
    let asked = request(
        "/v1/chat/completions",
        json!({"messages": [{"role": "tool", "tool_call_id": "call_z", "content": {"ok": true}},
            {"role": "user", "content": "go on"}]}),
    );
    let read = read(&asked, &json_answer(json!({}))).unwrap();
    assert_eq!(
        read.sent_back,
        [SentBack {
            id: Some("call_z".into()),
            name: None,
            content: r#"{"ok":true}"#.into()
        }]
    );
    assert_eq!((read.answer.as_str(), read.requested.len()), ("", 0));
    for path in [
        "/v1/embeddings",
        "/v1beta/models/text-embedding-004:embedContent",
        "/v1/models",
    ] {
        assert_eq!(
            super::read(&request(path, json!({})), &json_answer(json!({}))),
            None
        );
    }
}

#[test]
fn odd_input_reads_as_nothing_without_panicking() {
    let paths = [
        "/v1/chat/completions",
        "/v1/responses",
        "/v1/messages",
        "/v1beta/models/m:generateContent",
    ];
    let odd_items = json!([1, "x", null, {"role": 5}, {"role": "user", "content": [1, null, {"text": 2}]},
        {"role": "tool"}, {"role": "assistant", "tool_calls": [{"function": null}, 3]},
        {"type": "function_call_output"}, {"content": [{"type": "tool_result", "content": null}]},
        {"parts": [{"functionResponse": null}, {"functionResponse": {"response": "done"}}]}]);
    let bodies = [
        json!(null),
        json!(42),
        json!({"messages": "x", "input": 7, "contents": {}, "system": null, "instructions": null}),
        json!({"messages": odd_items, "input": odd_items, "contents": odd_items}),
    ];
    let answers = [
        json_answer(json!(null)),
        json_answer(json!([1])),
        json_answer(
            json!({"choices": [{"message": 3}], "content": "x", "output": [1, {"type": "message"}],
            "candidates": [{"content": {"parts": [{"functionCall": 1}]}}]}),
        ),
        stream(vec![
            json!("[DONE]"),
            json!({"choices": "x"}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": u64::MAX, "function": {"arguments": 5}},
                {"id": "x"}, 7]}}]}),
            json!({"type": "content_block_delta", "index": 9, "delta": {"type": "text_delta"}}),
            json!({"type": "content_block_start", "index": 1, "content_block": "x"}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use"}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{"}}),
            json!({"type": "response.output_text.delta", "output_index": u64::MAX, "content_index": u64::MAX, "delta": 5}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": [1]}),
            json!({"type": "response.function_call_arguments.delta", "item_id": "nope"}),
            json!({"type": "response.function_call_arguments.done", "output_index": 0, "arguments": 1}),
            json!({"type": "response.completed", "response": {"output": "x"}}),
            json!({"candidates": [{"content": {"parts": "x"}}, 2]}),
        ]),
    ];
    for path in paths {
        for body in &bodies {
            for answer in &answers {
                let read = read(&request(path, body.clone()), answer);
                assert!(read.is_some(), "{path} {body}");
            }
        }
    }
    // The odd items are kept in the conversation as they came, and give no result without their fields.
    let read = read(
        &request(
            "/v1/messages",
            json!({"messages": [1, {"role": "user", "content": [
            {"type": "tool_result"}]}]}),
        ),
        &json_answer(json!(null)),
    )
    .unwrap();
    assert_eq!(read.conversation[0], "1");
    assert_eq!(
        read.sent_back,
        [SentBack {
            id: None,
            name: None,
            content: String::new()
        }]
    );
    assert_eq!(read.first_user_text, None);
}

/// The shared recorded provider responses: `PROMPT_TESTER_SHARED_FIXTURES`, else `../shared/fixtures`
/// beside the clone (where the integration tests' `prereq::shared_fixtures` looks). When they are
/// absent the test fails under CI, and is skipped otherwise with one line written straight to
/// stderr, which libtest does not capture (the convention of `tests/prereq`).
fn recordings(test: &str) -> Option<PathBuf> {
    let root = std::env::var_os("PROMPT_TESTER_SHARED_FIXTURES")
        .filter(|v| !v.is_empty())
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures"),
            PathBuf::from,
        );
    let dir = root.join("provider-recordings");
    if dir.is_dir() {
        return Some(dir);
    }
    let line = format!(
        "{test}: prerequisite missing: {} is absent; the recorded provider responses are not part of \
         the repository: put the shared fixtures beside the clone, in ../shared/fixtures, or name them \
         in PROMPT_TESTER_SHARED_FIXTURES",
        dir.display()
    );
    if crate::config::is_ci() {
        panic!("{line}. Under CI a missing prerequisite fails the test.");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED {line}");
    None
}

/// `case -> (HTTP status, URL)` from a recordings folder's README.txt.
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

/// The tool calls a recorded answer holds, read here apart from the module's readers.
fn calls_in(folder: &str, body: &Value) -> Vec<(String, String, Value)> {
    let list = |pointer: &str| {
        body.pointer(pointer)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let parsed = |v: &Value| match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    };
    let text = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_string();
    match folder {
        "openai" if body.get("output").is_some() => list("/output")
            .iter()
            .filter(|i| i["type"] == "function_call")
            .map(|i| (text(i, "call_id"), text(i, "name"), parsed(&i["arguments"])))
            .collect(),
        "openai" => list("/choices/0/message/tool_calls")
            .iter()
            .map(|c| {
                let f = &c["function"];
                (text(c, "id"), text(f, "name"), parsed(&f["arguments"]))
            })
            .collect(),
        "anthropic" => list("/content")
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| (text(b, "id"), text(b, "name"), b["input"].clone()))
            .collect(),
        _ => list("/candidates/0/content/parts")
            .iter()
            .filter_map(|p| p.get("functionCall"))
            .enumerate()
            .map(|(n, c)| {
                let id = c["id"].as_str().map_or(format!("call_{n}"), str::to_string);
                (id, text(c, "name"), c["args"].clone())
            })
            .collect(),
    }
}

#[test]
fn recorded_answers_give_the_tool_calls_they_hold() {
    let test = "recorded_answers_give_the_tool_calls_they_hold";
    let Some(root) = recordings(test) else {
        return;
    };
    let (mut read_in_all, mut with_tools) = (0, Vec::new());
    for folder in ["openai", "anthropic", "gemini"] {
        let dir = root.join(folder);
        let readme = std::fs::read_to_string(dir.join("README.txt")).unwrap();
        for (case, (status, url)) in statuses(&readme) {
            if !(200..300).contains(&status) {
                continue;
            }
            let file = |part: &str| {
                let path = dir.join(format!("{case}.{part}.json"));
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                serde_json::from_str::<Value>(&text).unwrap()
            };
            let (body, answer) = (file("request"), file("response"));
            let path = match folder {
                "openai" if body.get("input").is_some() && body.get("messages").is_none() => {
                    "/v1/responses".to_string()
                }
                "openai" => "/v1/chat/completions".to_string(),
                "anthropic" => "/v1/messages".to_string(),
                _ => {
                    let model = url
                        .rsplit_once("/models/")
                        .and_then(|(_, rest)| rest.split_once(':'))
                        .map(|(model, _)| model)
                        .unwrap_or_else(|| panic!("{folder}/{case}: no model in {url}"));
                    format!("/v1beta/models/{model}:generateContent")
                }
            };
            let case = format!("{folder}/{case}");
            let got = read(&request(&path, body.clone()), &json_answer(answer.clone()))
                .unwrap_or_else(|| panic!("{case}: no step read from {path}"));
            read_in_all += 1;
            let calls = calls_in(folder, &answer);
            let text = body.to_string();
            let sends_results = [
                "\"tool_result\"",
                "\"role\":\"tool\"",
                "functionResponse",
                "function_call_output",
            ]
            .iter()
            .any(|marker| text.contains(marker));
            let offers_tools = body
                .get("tools")
                .and_then(Value::as_array)
                .is_some_and(|t| !t.is_empty());
            if calls.is_empty() && !sends_results && !offers_tools {
                continue;
            }
            let requested: Vec<(String, String, Value)> = got
                .requested
                .iter()
                .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
                .collect();
            assert_eq!(requested, calls, "{case}: tool calls");
            if sends_results {
                assert!(!got.sent_back.is_empty(), "{case}: no result sent back");
                for result in &got.sent_back {
                    assert!(
                        result.name.is_some() && !result.content.is_empty(),
                        "{case}: {result:?}"
                    );
                }
            }
            assert!(got.first_user_text.is_some(), "{case}: no user text");
            with_tools.push(case);
        }
    }
    assert!(!with_tools.is_empty(), "no recording involves tool use");
    println!(
        "read {read_in_all} recorded answers, {} with tool use: {with_tools:?}",
        with_tools.len()
    );
}
