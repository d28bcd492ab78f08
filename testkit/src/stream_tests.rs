//! Streamed answers, embeddings of several texts and tool calls, checked on the wire.

use serde_json::{Value, json};

use crate::stream::{json_pieces, pieces};
use crate::tests::post;
use crate::{FakeProvider, Reply, Usage, Wire, fake_embedding};

/// The body of a chunked HTTP/1.1 response, and how many chunks it came in.
fn dechunk(raw: &str) -> (String, usize) {
    let (mut out, mut chunks, mut rest) = (String::new(), 0, raw);
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if size == 0 {
            break;
        }
        out.push_str(&after[..size]);
        chunks += 1;
        rest = &after[size + 2..];
    }
    (out, chunks)
}

/// The `(event name, data)` of each event of a server-sent events body.
fn events(body: &str) -> Vec<(Option<String>, String)> {
    body.replace("\r\n", "\n")
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|event| {
            let mut name = None;
            let mut data = String::new();
            for line in event.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = Some(n.to_string());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push_str(d);
                }
            }
            (name, data)
        })
        .collect()
}

fn streamed(
    fake: &FakeProvider,
    path: &str,
    body: &Value,
) -> (String, Vec<(Option<String>, String)>, usize) {
    let (status, head, raw) = post(fake, path, body, &[]);
    assert_eq!(status, 200, "{head}\n{raw}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    let (body, chunks) = dechunk(&raw);
    (head, events(&body), chunks)
}

#[test]
fn pieces_cut_after_words_and_join_back() {
    assert_eq!(
        pieces("Blue is  a colour."),
        ["Blue", " is", "  a", " colour."]
    );
    assert_eq!(pieces(""), [""]);
    assert_eq!(pieces(" x y "), [" x", " y", " "]);
    assert_eq!(
        json_pieces("{\"city\":\"Paris\"}"),
        ["{\"city\":", "\"Paris\"}"]
    );
    assert_eq!(
        pieces("{\"city\": \"Paris\"}").concat(),
        "{\"city\": \"Paris\"}"
    );
}

#[test]
fn openai_streams_chunks_then_the_usage_then_done() {
    let fake = FakeProvider::builder()
        .echo_text("Blue is a colour.")
        .usage(Usage::new(11, 4).cached(3))
        .start();
    let request = json!({
        "model": "gpt-x", "stream": true, "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "Name a colour."}]
    });
    let (_, events, chunks) = streamed(&fake, "/v1/chat/completions", &request);
    assert_eq!(chunks, events.len(), "one chunk per event");
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|(name, data)| {
            assert_eq!(name, &None);
            serde_json::from_str(data).unwrap()
        })
        .collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk" && c["model"] == "gpt-x")
    );
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "Blue is a colour.");
    assert!(chunks.len() >= 6, "the text comes in pieces: {chunks:#?}");
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        finish["usage"],
        Value::Null,
        "every chunk but the last has a null usage"
    );
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"], json!([]));
    assert_eq!(last["usage"]["prompt_tokens"], 11);
    assert_eq!(last["usage"]["completion_tokens"], 4);
    assert_eq!(last["usage"]["prompt_tokens_details"]["cached_tokens"], 3);

    // Without `include_usage` no chunk carries a usage.
    let request =
        json!({"model": "gpt-x", "stream": true, "messages": [{"role": "user", "content": "Hi"}]});
    let (_, events, _) = streamed(&fake, "/v1/chat/completions", &request);
    assert_eq!(events.last().unwrap().1, "[DONE]");
    assert!(
        events.iter().all(|(_, data)| !data.contains("usage")),
        "{events:?}"
    );
    assert!(fake.requests().iter().all(|r| r.wants_stream()));
}

#[test]
fn openai_tool_calls_stream_their_arguments_and_the_result_is_echoed() {
    let arguments = json!({"city": "Paris", "unit": "celsius"});
    let fake = FakeProvider::builder()
        .call_tools(arguments.clone())
        .start();
    let tools = json!([{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]);
    let ask = json!({"model": "m", "tools": tools, "messages": [{"role": "user", "content": "Weather?"}]});

    // Plain: the first tool is called with the arguments.
    let (status, _, body) = post(&fake, "/v1/chat/completions", &ask, &[]);
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    let call = &answer["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "weather");
    let sent: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(sent, arguments);
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");

    // Streamed: the name first, then the arguments in pieces that join into the same JSON.
    let mut streaming = ask.clone();
    streaming["stream"] = json!(true);
    let (_, events, _) = streamed(&fake, "/v1/chat/completions", &streaming);
    let chunks: Vec<Value> = events
        .iter()
        .filter(|(_, d)| d != "[DONE]")
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    let deltas: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    assert_eq!(deltas[0]["function"]["name"], "weather");
    assert!(deltas[0]["id"].as_str().unwrap().starts_with("call_"));
    assert!(deltas.len() > 2, "{deltas:#?}");
    let joined: String = deltas
        .iter()
        .filter_map(|d| d["function"]["arguments"].as_str())
        .collect();
    assert_eq!(serde_json::from_str::<Value>(&joined).unwrap(), arguments);
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );

    // The request carrying the tool's result gets a text answer echoing it.
    let mut round = ask.clone();
    round["messages"].as_array_mut().unwrap().extend([
        answer["choices"][0]["message"].clone(),
        json!({"role": "tool", "tool_call_id": call["id"], "content": "18 degrees"}),
    ]);
    let (_, _, body) = post(&fake, "/v1/chat/completions", &round, &[]);
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "echo: 18 degrees"
    );
    assert_eq!(
        fake.requests()[2].last_tool_result().as_deref(),
        Some("18 degrees")
    );
}

#[test]
fn anthropic_streams_its_named_events_with_usage_at_start_and_end() {
    let fake = FakeProvider::builder()
        .echo_text("Blue it is.")
        .usage(Usage::new(20, 5).cached(8))
        .start();
    let request = json!({
        "model": "claude-x", "max_tokens": 50, "stream": true,
        "messages": [{"role": "user", "content": "Name a colour."}]
    });
    let (_, events, _) = streamed(&fake, "/v1/messages", &request);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_deref().unwrap()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let data: Vec<Value> = events
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    for ((name, _), value) in events.iter().zip(&data) {
        assert_eq!(
            value["type"],
            name.as_deref().unwrap(),
            "data.type names the event"
        );
    }
    let start = &data[0]["message"];
    assert_eq!(
        (start["model"].as_str(), start["content"].clone()),
        (Some("claude-x"), json!([]))
    );
    assert_eq!(
        start["usage"]["input_tokens"], 12,
        "cache reads apart, as in the plain answer"
    );
    assert_eq!(start["usage"]["cache_read_input_tokens"], 8);
    let text: String = data
        .iter()
        .filter(|d| d["type"] == "content_block_delta")
        .map(|d| d["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Blue it is.");
    assert_eq!(data[7]["delta"]["stop_reason"], "end_turn");
    assert_eq!(data[7]["usage"]["output_tokens"], 5);
}

#[test]
fn anthropic_streams_a_tool_call_as_partial_json() {
    let fake = FakeProvider::builder()
        .call_tools(json!({"q": "tea"}))
        .start();
    let request = json!({
        "model": "claude-x", "max_tokens": 50, "stream": true,
        "tools": [{"name": "search", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "Find tea."}]
    });
    let (_, events, _) = streamed(&fake, "/v1/messages", &request);
    let data: Vec<Value> = events
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    let start = data
        .iter()
        .find(|d| d["type"] == "content_block_start")
        .unwrap();
    assert_eq!(start["content_block"]["type"], "tool_use");
    assert_eq!(start["content_block"]["name"], "search");
    let json: String = data
        .iter()
        .filter_map(|d| d["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&json).unwrap(),
        json!({"q": "tea"})
    );
    let delta = data.iter().find(|d| d["type"] == "message_delta").unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
}

#[test]
fn gemini_streams_responses_as_sse_with_alt_sse_and_as_an_array_without() {
    let fake = FakeProvider::builder()
        .echo_text("Blue and green.")
        .usage(Usage::new(9, 6).thoughts(2))
        .start();
    let request = json!({"contents": [{"role": "user", "parts": [{"text": "Colours?"}]}]});
    let path = "/v1beta/models/gemini-x:streamGenerateContent?alt=sse";
    let (status, _, raw) = post(&fake, path, &request, &[]);
    assert_eq!(status, 200);
    let (body, _) = dechunk(&raw);
    assert!(
        body.contains("\r\n\r\n"),
        "Gemini ends each event with CRLF CRLF: {body:?}"
    );
    let (_, events, _) = streamed(&fake, path, &request);
    let chunks: Vec<Value> = events
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(chunks.len(), 3, "{chunks:#?}");
    let text: String = chunks
        .iter()
        .map(|c| {
            c["candidates"][0]["content"]["parts"][0]["text"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(text, "Blue and green.");
    assert!(
        chunks[..2]
            .iter()
            .all(|c| c["candidates"][0].get("finishReason").is_none())
    );
    let last = &chunks[2];
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["modelVersion"], "gemini-x");
    assert_eq!(last["usageMetadata"]["promptTokenCount"], 9);
    assert_eq!(last["usageMetadata"]["candidatesTokenCount"], 4);
    assert_eq!(last["usageMetadata"]["thoughtsTokenCount"], 2);
    assert_eq!(
        chunks[0]["usageMetadata"]["candidatesTokenCount"],
        Value::Null
    );

    let (status, head, raw) = post(
        &fake,
        "/v1beta/models/gemini-x:streamGenerateContent",
        &request,
        &[],
    );
    assert_eq!(status, 200);
    assert!(head.contains("content-type: application/json"), "{head}");
    let array: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(array.as_array().unwrap().len(), 3);
    assert_eq!(array[2]["candidates"][0]["finishReason"], "STOP");
}

#[test]
fn errors_to_a_stream_request_come_as_json() {
    let fake = FakeProvider::start();
    fake.push(Reply::server_error(Wire::OpenAi, 503));
    let request =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "Hi"}]});
    let (status, head, body) = post(&fake, "/v1/chat/completions", &request, &[]);
    assert_eq!(status, 503);
    assert!(head.contains("content-type: application/json"), "{head}");
    assert!(serde_json::from_str::<Value>(&body).is_ok(), "{body}");
}

#[test]
fn embeds_several_texts_in_one_call_in_both_formats() {
    let fake = FakeProvider::start();
    let (status, _, body) = post(
        &fake,
        "/v1/embeddings",
        &json!({"model": "e", "input": ["red apple", "blue sky now"]}),
        &[],
    );
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["data"].as_array().unwrap().len(), 2);
    assert_eq!(json["data"][1]["index"], 1);
    assert_eq!(
        json["data"][1]["embedding"],
        json!(fake_embedding("blue sky now"))
    );
    assert_eq!(json["usage"]["prompt_tokens"], 5);

    let batch = json!({"requests": [
        {"model": "models/g", "content": {"parts": [{"text": "red"}]}},
        {"model": "models/g", "content": {"parts": [{"text": "blue"}]}},
    ]});
    let (status, _, body) = post(&fake, "/v1beta/models/g:batchEmbedContents", &batch, &[]);
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        json["embeddings"][0]["values"],
        json!(fake_embedding("red"))
    );
    assert_eq!(
        json["embeddings"][1]["values"],
        json!(fake_embedding("blue"))
    );
    let request = &fake.requests()[1];
    assert!(request.is_embedding());
    assert_eq!(request.wire(), Some(Wire::Gemini));
    assert_eq!(request.embedding_inputs(), ["red", "blue"]);
}
