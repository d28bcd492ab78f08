//! Streamed answers: a well-formed completion turned into the events its wire format streams.
//!
//! A request asks for a stream with `"stream": true` (OpenAI-compatible, Anthropic) or by its path
//! (Gemini's `:streamGenerateContent`, as server-sent events with `?alt=sse`, else as one JSON array).
//! The fake answers it with the same content the plain answer would have, cut into pieces:
//! - OpenAI: `data: {chat.completion.chunk}` lines (the role first, then the text or each tool call's
//!   name and arguments in pieces, then the finish reason), with `stream_options.include_usage` a last
//!   chunk with no choices and the usage, then `data: [DONE]`;
//! - Anthropic: `message_start` (input usage), `ping`, per content block `content_block_start`,
//!   `content_block_delta`s (`text_delta`, `input_json_delta`, `thinking_delta`) and
//!   `content_block_stop`, then `message_delta` (stop reason, output usage) and `message_stop`;
//! - Gemini: one `GenerateContentResponse` per piece, the last with the finish reason and the whole
//!   `usageMetadata`.

use serde_json::{Value, json};

use crate::{CapturedRequest, Reply, Wire};

/// Stream events, each with its SSE event name (Anthropic names them).
type Events = Vec<(Option<&'static str>, Value)>;

/// How a request asks to be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Streaming {
    /// Server-sent events; `include_usage` is OpenAI's `stream_options.include_usage`.
    Events { include_usage: bool },
    /// Gemini's `:streamGenerateContent` without `alt=sse`: the chunks as one JSON array.
    JsonArray,
}

/// How `request` asks to be streamed, or `None` for a plain answer.
pub(crate) fn streaming(request: &CapturedRequest) -> Option<Streaming> {
    let (path, query) = request
        .path
        .split_once('?')
        .unwrap_or((request.path.as_str(), ""));
    match request.wire()? {
        Wire::Gemini if path.contains(":streamGenerateContent") => {
            Some(if query.split('&').any(|p| p == "alt=sse") {
                Streaming::Events {
                    include_usage: true,
                }
            } else {
                Streaming::JsonArray
            })
        }
        Wire::Gemini => None,
        Wire::Anthropic | Wire::OpenAi => {
            let json = request.json.as_ref()?;
            (json.get("stream") == Some(&Value::Bool(true))).then(|| Streaming::Events {
                include_usage: json["stream_options"]["include_usage"] == true,
            })
        }
    }
}

/// `reply` as `request` receives it: a 200 JSON answer to a request for a stream becomes that stream
/// (`text/event-stream`, or Gemini's JSON array); anything else (an error, a raw or already streamed
/// body, a body that is not a completion) is sent as it is.
pub(crate) fn for_request(reply: Reply, request: &CapturedRequest) -> Reply {
    let (Some(wire), Some(how)) = (request.wire(), streaming(request)) else {
        return reply;
    };
    let is_json = reply
        .headers
        .iter()
        .any(|(name, value)| name == "content-type" && value.starts_with("application/json"));
    if reply.status != 200 || !is_json {
        return reply;
    }
    let Ok(body) = serde_json::from_slice::<Value>(&reply.body) else {
        return reply;
    };
    let Some(chunks) = chunks(wire, &body, how) else {
        return reply;
    };
    let (content_type, bytes) = match how {
        Streaming::JsonArray => (
            "application/json",
            serde_json::to_vec(&Value::Array(
                chunks.into_iter().map(|(_, chunk)| chunk).collect(),
            ))
            .unwrap_or_default(),
        ),
        Streaming::Events { .. } => ("text/event-stream", sse(wire, chunks)),
    };
    let mut streamed = Reply {
        body: bytes,
        ..reply
    };
    for (name, value) in &mut streamed.headers {
        if name == "content-type" {
            *value = content_type.to_string();
        }
    }
    streamed
}

/// The events of `body` (a plain answer in `wire`'s shape), or `None` when `body` is not a completion
/// of that wire.
fn chunks(wire: Wire, body: &Value, how: Streaming) -> Option<Events> {
    match wire {
        Wire::OpenAi => openai(
            body,
            matches!(
                how,
                Streaming::Events {
                    include_usage: true
                }
            ),
        ),
        Wire::Anthropic => anthropic(body),
        Wire::Gemini => gemini(body),
    }
}

/// The SSE body: `event:` lines for Anthropic, `data:` lines, a blank line after each event
/// (Gemini's `\r\n`, as its API sends them); OpenAI's stream ends with `data: [DONE]`.
fn sse(wire: Wire, chunks: Events) -> Vec<u8> {
    let end = if wire == Wire::Gemini {
        "\r\n\r\n"
    } else {
        "\n\n"
    };
    let mut out = String::new();
    for (event, data) in chunks {
        if let Some(event) = event {
            out.push_str(&format!("event: {event}\n"));
        }
        out.push_str(&format!("data: {data}{end}"));
    }
    if wire == Wire::OpenAi {
        out.push_str("data: [DONE]\n\n");
    }
    out.into_bytes()
}

/// A server-sent events body cut after each event (its blank line, `\n\n` or `\r\n\r\n`), so each
/// event goes in its own chunk as a provider streams them.
pub(crate) fn split_events(body: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < body.len() {
        let end = if body[i..].starts_with(b"\r\n\r\n") {
            Some(i + 4)
        } else if body[i..].starts_with(b"\n\n") {
            Some(i + 2)
        } else {
            None
        };
        match end {
            Some(end) => {
                out.push(&body[start..end]);
                start = end;
                i = end;
            }
            None => i += 1,
        }
    }
    if start < body.len() {
        out.push(&body[start..]);
    }
    out
}

/// `text` cut before the spaces that follow a word into pieces whose concatenation is `text` (at least
/// one piece), as a model streams text.
pub(crate) fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut has_word = false;
    for c in text.chars() {
        if !c.is_whitespace() {
            has_word = true;
        } else if has_word {
            out.push(std::mem::take(&mut current));
            has_word = false;
        }
        current.push(c);
    }
    if !current.is_empty() || out.is_empty() {
        out.push(current);
    }
    out
}

/// `json` (a tool call's arguments) cut every eight characters, as providers stream them: the pieces
/// are not JSON on their own.
pub(crate) fn json_pieces(json: &str) -> Vec<String> {
    let chars: Vec<char> = json.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(8).map(|c| c.iter().collect()).collect()
}

fn openai(body: &Value, include_usage: bool) -> Option<Events> {
    let choice = body.get("choices")?.get(0)?;
    let message = choice.get("message")?;
    let head = |delta: Value, finish: Value| {
        let mut chunk = json!({
            "id": body["id"],
            "object": "chat.completion.chunk",
            "created": body["created"],
            "model": body["model"],
            "system_fingerprint": body["system_fingerprint"],
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if include_usage {
            chunk["usage"] = Value::Null;
        }
        (None, chunk)
    };
    let mut events = Vec::new();
    match message.get("tool_calls").and_then(Value::as_array) {
        Some(calls) if !calls.is_empty() => {
            events.push(head(
                json!({"role": "assistant", "content": null, "refusal": null}),
                Value::Null,
            ));
            for (index, call) in calls.iter().enumerate() {
                let function = &call["function"];
                events.push(head(
                    json!({"tool_calls": [{
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": function["name"], "arguments": ""}
                    }]}),
                    Value::Null,
                ));
                for piece in json_pieces(function["arguments"].as_str().unwrap_or_default()) {
                    events.push(head(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                        Value::Null,
                    ));
                }
            }
        }
        _ => {
            events.push(head(
                json!({"role": "assistant", "content": "", "refusal": null}),
                Value::Null,
            ));
            for piece in pieces(message["content"].as_str().unwrap_or_default()) {
                events.push(head(json!({"content": piece}), Value::Null));
            }
        }
    }
    events.push(head(json!({}), choice["finish_reason"].clone()));
    if include_usage {
        let (_, mut last) = head(json!({}), Value::Null);
        last["choices"] = json!([]);
        last["usage"] = body["usage"].clone();
        events.push((None, last));
    }
    Some(events)
}

fn anthropic(body: &Value) -> Option<Events> {
    let blocks = body.get("content")?.as_array()?;
    let usage = body.get("usage")?;
    let mut start_usage = usage.clone();
    start_usage["output_tokens"] = json!(1);
    let mut message = body.clone();
    message["content"] = json!([]);
    message["stop_reason"] = Value::Null;
    message["stop_sequence"] = Value::Null;
    message["usage"] = start_usage;
    let mut events = vec![
        (
            Some("message_start"),
            json!({"type": "message_start", "message": message}),
        ),
        (Some("ping"), json!({"type": "ping"})),
    ];
    for (index, block) in blocks.iter().enumerate() {
        let (start, deltas) = match block["type"].as_str()? {
            "text" => (
                json!({"type": "text", "text": ""}),
                pieces(block["text"].as_str().unwrap_or_default())
                    .into_iter()
                    .map(|text| json!({"type": "text_delta", "text": text}))
                    .collect::<Vec<_>>(),
            ),
            "tool_use" => (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                json_pieces(&block["input"].to_string())
                    .into_iter()
                    .map(|json| json!({"type": "input_json_delta", "partial_json": json}))
                    .collect(),
            ),
            "thinking" => (
                json!({"type": "thinking", "thinking": ""}),
                pieces(block["thinking"].as_str().unwrap_or_default())
                    .into_iter()
                    .map(|text| json!({"type": "thinking_delta", "thinking": text}))
                    .chain(
                        block
                            .get("signature")
                            .map(|s| json!({"type": "signature_delta", "signature": s})),
                    )
                    .collect(),
            ),
            _ => return None,
        };
        events.push((
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            events.push((
                Some("content_block_delta"),
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push((
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        Some("message_delta"),
        json!({
            "type": "message_delta",
            "delta": {"stop_reason": body["stop_reason"], "stop_sequence": body["stop_sequence"]},
            "usage": {"output_tokens": usage["output_tokens"]}
        }),
    ));
    events.push((Some("message_stop"), json!({"type": "message_stop"})));
    Some(events)
}

fn gemini(body: &Value) -> Option<Events> {
    let candidate = body.get("candidates")?.get(0)?;
    let parts = candidate.get("content")?.get("parts")?.as_array()?;
    let usage = body.get("usageMetadata")?;
    // Before the last chunk Gemini reports the prompt's tokens only.
    let partial_usage = json!({
        "promptTokenCount": usage["promptTokenCount"],
        "totalTokenCount": usage["promptTokenCount"],
    });
    let chunk = |part: Value, last: bool| {
        let mut candidate = json!({"content": {"parts": [part], "role": "model"}, "index": 0});
        let mut chunk = json!({
            "candidates": [],
            "usageMetadata": if last { usage.clone() } else { partial_usage.clone() },
            "modelVersion": body["modelVersion"],
            "responseId": body["responseId"],
        });
        if last {
            candidate["finishReason"] = candidate_field(body, "finishReason");
        }
        chunk["candidates"] = json!([candidate]);
        (None, chunk)
    };
    let mut split = Vec::new();
    for part in parts {
        match part.get("text").and_then(Value::as_str) {
            Some(text) => {
                let thought = part.get("thought").cloned();
                split.extend(pieces(text).into_iter().map(|piece| {
                    let mut part = json!({ "text": piece });
                    if let Some(thought) = &thought {
                        part["thought"] = thought.clone();
                    }
                    part
                }))
            }
            // A function call (or any other part) comes whole, in one chunk.
            None => split.push(part.clone()),
        }
    }
    if split.is_empty() {
        return None;
    }
    let count = split.len();
    Some(
        split
            .into_iter()
            .enumerate()
            .map(|(i, part)| chunk(part, i + 1 == count))
            .collect(),
    )
}

fn candidate_field(body: &Value, field: &str) -> Value {
    body["candidates"][0][field].clone()
}
