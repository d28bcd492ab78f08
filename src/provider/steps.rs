//! What one model call relayed by the recording endpoint says of an agent's trajectory: the conversation
//! its request holds, the tool results it sends back, and the text and tool calls of its answer, for the
//! four chat APIs, whether the answer came as one JSON body or as a stream.

// Without the `endpoint` feature no request is relayed: only the tests read it.
#![cfg_attr(not(feature = "endpoint"), allow(dead_code))]

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use super::relayed::Api;
use super::{anthropic, gemini, openai, string};
use crate::cassette::raw::{RawBody, RawRequest, RawResponse, StreamEvent};
use crate::completion::{CompletionResult, ToolCall};

/// What one model call through the endpoint says of the trajectory.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Read {
    /// Each message (conversation item) of the request, in order, as canonical JSON text: a later request
    /// whose list starts with this one's list continues this conversation. System/instructions included
    /// as the first entry when present (Anthropic `system`, Gemini `systemInstruction`, Responses
    /// `instructions`), written as a one-key object of that key and its value. A Responses `input` that
    /// is a string is written as the user message it stands for, `{"content":..,"role":"user"}`.
    pub conversation: Vec<String>,
    /// The tool results the request sends back after its last model turn (the results of the tools the
    /// previous answer asked for): the id they answer (`tool_call_id`, Anthropic `tool_use_id`, Responses
    /// `call_id`; Gemini has none: None), the tool's name when the format says it (Gemini functionResponse.name;
    /// for the others look the name up from the matching tool call earlier in the same request), and the
    /// result's content as text (a JSON string's content unquoted; structured content as compact JSON).
    pub sent_back: Vec<SentBack>,
    /// The tool calls the answer asks for, in order: id, name, arguments parsed as JSON (an arguments
    /// string that is not JSON is kept as a JSON string). Gemini's calls get the id the wire gives, else
    /// `call_N` (N: the call's place in the answer), as the crate's Gemini parser names them.
    pub requested: Vec<ToolCall>,
    /// The answer's text (the parts concatenated; empty when it only calls tools).
    pub answer: String,
    /// The first user message's text in the request (for a judge's "task").
    pub first_user_text: Option<String>,
}

/// One tool result a request sends back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SentBack {
    pub id: Option<String>,
    pub name: Option<String>,
    pub content: String,
}

/// `None` for the embedding APIs and paths no API serves.
pub(crate) fn read(request: &RawRequest, response: &RawResponse) -> Option<Read> {
    let (api, _) = Api::of_path(&request.path)?;
    let body = &request.body;
    let asked = match api {
        Api::ChatCompletions => asked(&CHAT, None, array(body, "messages")),
        Api::Responses => {
            let input = match body.get("input") {
                // A string input is the user's message: written as one, a later request that sends
                // it back as an item continues the conversation.
                Some(Value::String(text)) => vec![json!({"content": text, "role": "user"})],
                Some(Value::Array(items)) => items.clone(),
                _ => Vec::new(),
            };
            asked(&RESPONSES, system(body, "instructions"), &input)
        }
        Api::Messages => asked(&MESSAGES, system(body, "system"), array(body, "messages")),
        Api::GenerateContent => asked(
            &CONTENTS,
            system(body, "systemInstruction"),
            array(body, "contents"),
        ),
        Api::Embeddings | Api::EmbedContent => return None,
    };
    let answer = match &response.body {
        RawBody::Json(body) => answer(api, body),
        RawBody::Events(events) => answer(api, &folded(api, events)),
    };
    Some(Read {
        conversation: asked.conversation,
        sent_back: asked.sent_back,
        requested: answer.tool_calls,
        answer: answer.text,
        first_user_text: asked.first_user_text,
    })
}

/// What a request says: its conversation, the results it sends back, its first user text.
struct Asked {
    conversation: Vec<String>,
    sent_back: Vec<SentBack>,
    first_user_text: Option<String>,
}

/// How one API's request holds its conversation, message by message.
struct Format {
    /// The key of a message's text (`content`, Gemini's `parts`).
    content: &'static str,
    /// Whether a message is the model's turn.
    model_turn: fn(&Value) -> bool,
    /// Whether a message is the user's.
    user: fn(&Value) -> bool,
    /// The `(id, name)` of each tool call a message holds.
    calls: fn(&Value) -> Vec<(String, String)>,
    /// The tool results a message holds, with their name when the message says it.
    results: fn(&Value) -> Vec<SentBack>,
}

const CHAT: Format = Format {
    content: "content",
    model_turn: |m| role(m) == Some("assistant"),
    user: |m| role(m) == Some("user"),
    calls: |m| {
        array(m, "tool_calls")
            .iter()
            .filter_map(|c| Some((string(c, "id")?, string(c.get("function")?, "name")?)))
            .collect()
    },
    results: |m| match role(m) {
        // `function` is the older form of a tool's message, and names its tool.
        Some("tool" | "function") => vec![SentBack {
            id: string(m, "tool_call_id"),
            name: string(m, "name"),
            content: result_text(m.get("content")),
        }],
        _ => Vec::new(),
    },
};

const RESPONSES: Format = Format {
    content: "content",
    // The model's items are its messages and its calls; its reasoning items always precede a call.
    model_turn: |m| role(m) == Some("assistant") || kind(m) == Some("function_call"),
    user: |m| role(m) == Some("user"),
    calls: |m| match kind(m) {
        Some("function_call") => string(m, "call_id")
            .zip(string(m, "name"))
            .into_iter()
            .collect(),
        _ => Vec::new(),
    },
    results: |m| match kind(m) {
        Some("function_call_output") => vec![SentBack {
            id: string(m, "call_id"),
            name: None,
            content: result_text(m.get("output")),
        }],
        _ => Vec::new(),
    },
};

const MESSAGES: Format = Format {
    content: "content",
    model_turn: |m| role(m) == Some("assistant"),
    user: |m| role(m) == Some("user"),
    calls: |m| {
        array(m, "content")
            .iter()
            .filter(|b| kind(b) == Some("tool_use"))
            .filter_map(|b| Some((string(b, "id")?, string(b, "name")?)))
            .collect()
    },
    results: |m| {
        array(m, "content")
            .iter()
            .filter(|b| kind(b) == Some("tool_result"))
            .map(|b| SentBack {
                id: string(b, "tool_use_id"),
                name: None,
                content: result_text(b.get("content")),
            })
            .collect()
    },
};

const CONTENTS: Format = Format {
    content: "parts",
    model_turn: |m| role(m) == Some("model"),
    // Gemini takes a content without a role as the user's.
    user: |m| matches!(role(m), Some("user") | None),
    calls: |m| {
        array(m, "parts")
            .iter()
            .filter_map(|p| p.get("functionCall"))
            .filter_map(|c| Some((string(c, "id")?, string(c, "name")?)))
            .collect()
    },
    // A function response names its function; it carries an id only when the call had one.
    results: |m| {
        array(m, "parts")
            .iter()
            .filter_map(|p| p.get("functionResponse"))
            .map(|r| SentBack {
                id: string(r, "id"),
                name: string(r, "name"),
                content: result_text(r.get("response")),
            })
            .collect()
    },
};

/// The request's conversation in `format`: `system` (a one-key object of its key and value) first, then
/// each message; the results after the last model turn (all of them when there is none), named from
/// the calls they answer when they do not say their tool.
fn asked(format: &Format, system: Option<Value>, messages: &[Value]) -> Asked {
    let mut conversation: Vec<String> = system.iter().map(canonical_text).collect();
    conversation.extend(messages.iter().map(canonical_text));
    let names: HashMap<String, String> = messages.iter().flat_map(format.calls).collect();
    let start = messages
        .iter()
        .rposition(format.model_turn)
        .map_or(0, |last| last + 1);
    let sent_back = messages[start..]
        .iter()
        .flat_map(format.results)
        .map(|mut result| {
            if result.name.is_none() {
                result.name = result.id.as_ref().and_then(|id| names.get(id)).cloned();
            }
            result
        })
        .collect();
    let first_user_text = messages
        .iter()
        .filter(|m| (format.user)(m))
        .find_map(|m| user_text(m.get(format.content)?));
    Asked {
        conversation,
        sent_back,
        first_user_text,
    }
}

/// The body's system prompt under `key`, as the one-key object the conversation starts with.
fn system(body: &Value, key: &str) -> Option<Value> {
    let value = body.get(key).filter(|v| !v.is_null())?;
    Some(Value::Object(Map::from_iter([(
        key.to_string(),
        value.clone(),
    )])))
}

/// A value as canonical JSON text (the bodies' keys are sorted already: `cassette::raw::canonical`).
fn canonical_text(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A user message's text: a string, or its text parts one a line (blocks a person wrote apart);
/// `None` when it has no text (only tool results or images).
fn user_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// A tool result's content as text: a string as it is, text blocks one a line, nothing as empty,
/// anything else (an object, images) as compact JSON.
fn result_text(content: Option<&Value>) -> String {
    let text_part = |p: &Value| {
        p.get("text").is_some_and(Value::is_string)
            && kind(p).is_none_or(|t| matches!(t, "text" | "input_text" | "output_text"))
    };
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) if parts.iter().all(text_part) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => canonical_text(other),
    }
}

/// The text and tool calls of an answer of `api` in its JSON form, read by the crate's own parser of
/// its wire (the Responses API has none here); an answer it cannot read says nothing.
fn answer(api: Api, body: &Value) -> CompletionResult {
    let parsed = match api {
        Api::ChatCompletions => openai::parse(body),
        Api::Messages => anthropic::parse(body),
        Api::GenerateContent => gemini::parse(body),
        Api::Responses => return responses_answer(body),
        Api::Embeddings | Api::EmbedContent => return CompletionResult::default(),
    };
    parsed.unwrap_or_default()
}

/// A Responses API answer: the text of its `message` items, and its `function_call` items, whose
/// `call_id` (not the item's `id`) is what the tool's output answers.
fn responses_answer(body: &Value) -> CompletionResult {
    let mut result = CompletionResult::default();
    for item in array(body, "output") {
        match kind(item) {
            Some("message") => {
                for part in array(item, "content") {
                    let key = match kind(part) {
                        Some("output_text") => "text",
                        // A refusal is what the model said, as the chat parser reads it.
                        Some("refusal") => "refusal",
                        _ => continue,
                    };
                    result
                        .text
                        .push_str(part.get(key).and_then(Value::as_str).unwrap_or(""));
                }
            }
            Some("function_call") => result.tool_calls.push(ToolCall {
                id: string(item, "call_id")
                    .or_else(|| string(item, "id"))
                    .unwrap_or_default(),
                name: string(item, "name").unwrap_or_default(),
                arguments: arguments(item.get("arguments")),
                thought_signature: None,
            }),
            _ => {}
        }
    }
    result
}

/// Tool-call arguments as JSON: a string parsed (kept as a JSON string when it is not JSON), anything
/// else as it is, none as an empty object (as the chat parser reads them).
fn arguments(raw: Option<&Value>) -> Value {
    match raw {
        Some(Value::String(text)) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
        Some(other) => other.clone(),
        None => json!({}),
    }
}

/// A stream of `api` folded into the JSON answer it adds up to, so that both are read by one reader.
fn folded(api: Api, events: &[StreamEvent]) -> Value {
    match api {
        Api::ChatCompletions => chat_folded(events),
        Api::Responses => responses_folded(events),
        Api::Messages => messages_folded(events),
        Api::GenerateContent => contents_folded(events),
        Api::Embeddings | Api::EmbedContent => Value::Null,
    }
}

/// Chat chunks: the first choice's content deltas joined, and each tool call's fragments (keyed by
/// their `index`; the id and name come in the first) joined into one call.
fn chat_folded(events: &[StreamEvent]) -> Value {
    let (mut text, mut refusal) = (String::new(), String::new());
    let mut calls: BTreeMap<u64, (String, String, String)> = BTreeMap::new();
    for event in events {
        // With `n` > 1 the choices interleave; the first is the answer, as in a JSON body.
        let Some(delta) = array(&event.data, "choices")
            .iter()
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            .and_then(|c| c.get("delta"))
        else {
            continue;
        };
        text.push_str(delta.get("content").and_then(Value::as_str).unwrap_or(""));
        refusal.push_str(delta.get("refusal").and_then(Value::as_str).unwrap_or(""));
        for fragment in array(delta, "tool_calls") {
            let last = calls.keys().next_back().copied();
            let index = match fragment.get("index").and_then(Value::as_u64) {
                Some(index) => index,
                // A server that numbers none: an id starts a call, a fragment without one continues.
                None if fragment.get("id").is_some() => last.map_or(0, |l| l.saturating_add(1)),
                None => last.unwrap_or(0),
            };
            let (id, name, args) = calls.entry(index).or_default();
            let function = fragment.get("function").unwrap_or(&Value::Null);
            // Some servers repeat the id and name in every fragment: the first says them.
            if id.is_empty() {
                *id = string(fragment, "id").unwrap_or_default();
            }
            if name.is_empty() {
                *name = string(function, "name").unwrap_or_default();
            }
            args.push_str(
                function
                    .get("arguments")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            );
        }
    }
    let tool_calls: Vec<Value> = calls
        .into_values()
        .map(|(id, name, args)| {
            let mut call =
                json!({"type": "function", "function": {"name": name, "arguments": args}});
            // Without an id the parser names the call as it does in a JSON answer.
            if !id.is_empty() {
                call["id"] = json!(id);
            }
            call
        })
        .collect();
    let mut message = json!({"content": text, "tool_calls": tool_calls});
    if !refusal.is_empty() {
        message["refusal"] = json!(refusal);
    }
    json!({"choices": [{"message": message}]})
}

/// Responses API events: the whole response of the last terminal event when the stream got that far;
/// else its output items as added and done, function-call arguments from their deltas, and text from
/// the text deltas of a message whose `done` never came.
fn responses_folded(events: &[StreamEvent]) -> Value {
    let terminal = events.iter().rev().find_map(|e| {
        matches!(
            event_kind(e),
            Some("response.completed" | "response.incomplete" | "response.failed")
        )
        .then(|| e.data.get("response"))
        .flatten()
        .filter(|r| r.get("output").is_some_and(Value::is_array))
    });
    if let Some(response) = terminal {
        return response.clone();
    }
    let mut items: BTreeMap<u64, Value> = BTreeMap::new();
    let mut texts: BTreeMap<u64, String> = BTreeMap::new();
    for event in events {
        let data = &event.data;
        let key = data
            .get("output_index")
            .and_then(Value::as_u64)
            .or_else(|| {
                // An event without its index names its item.
                let id = data.get("item_id")?;
                items
                    .iter()
                    .find(|(_, item)| item.get("id") == Some(id))
                    .map(|(key, _)| *key)
            });
        let Some(key) = key else { continue };
        let piece = || data.get("delta").and_then(Value::as_str).unwrap_or("");
        match event_kind(event) {
            Some("response.output_item.added" | "response.output_item.done") => {
                if let Some(item) = data.get("item").filter(|i| i.is_object()) {
                    items.insert(key, item.clone());
                }
            }
            Some("response.function_call_arguments.delta") => {
                if let Some(item) = items.get_mut(&key) {
                    append(item, "arguments", piece());
                }
            }
            Some("response.function_call_arguments.done") => {
                if let (Some(item), Some(whole)) = (
                    items.get_mut(&key).and_then(Value::as_object_mut),
                    data.get("arguments").filter(|a| a.is_string()),
                ) {
                    item.insert("arguments".into(), whole.clone());
                }
            }
            Some("response.output_text.delta") => texts.entry(key).or_default().push_str(piece()),
            _ => {}
        }
    }
    for (key, text) in texts {
        let item = items
            .entry(key)
            .or_insert_with(|| json!({"type": "message", "role": "assistant", "content": []}));
        let has_text = array(item, "content")
            .iter()
            .any(|p| kind(p) == Some("output_text"));
        if let (false, Some(item)) = (has_text, item.as_object_mut()) {
            item.insert(
                "content".into(),
                json!([{"type": "output_text", "text": text}]),
            );
        }
    }
    json!({"output": items.into_values().collect::<Vec<_>>()})
}

/// Anthropic events: each content block as `content_block_start` began it, its text deltas joined, a
/// tool call's `partial_json` fragments joined into its `input` (the start's input when none came).
fn messages_folded(events: &[StreamEvent]) -> Value {
    let mut blocks: BTreeMap<u64, (Value, String)> = BTreeMap::new();
    for event in events {
        let data = &event.data;
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match event_kind(event) {
            Some("content_block_start") => {
                if let Some(block) = data.get("content_block").filter(|b| b.is_object()) {
                    blocks.insert(index, (block.clone(), String::new()));
                }
            }
            Some("content_block_delta") => {
                let Some((block, json)) = blocks.get_mut(&index) else {
                    continue;
                };
                let delta = data.get("delta").unwrap_or(&Value::Null);
                let piece = |key| delta.get(key).and_then(Value::as_str).unwrap_or("");
                match kind(delta) {
                    Some("text_delta") => append(block, "text", piece("text")),
                    Some("input_json_delta") => json.push_str(piece("partial_json")),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let content: Vec<Value> = blocks
        .into_values()
        .map(|(mut block, json)| {
            if let (false, Some(fields)) = (json.trim().is_empty(), block.as_object_mut()) {
                fields.insert("input".into(), arguments(Some(&Value::String(json))));
            }
            block
        })
        .collect();
    json!({"content": content})
}

/// Gemini chunks: the parts of each chunk's first candidate, in order, as one candidate's (each
/// function call comes whole in one chunk).
fn contents_folded(events: &[StreamEvent]) -> Value {
    let parts: Vec<Value> = events
        .iter()
        .filter_map(|e| {
            array(&e.data, "candidates")
                .iter()
                .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        })
        .flat_map(|c| array(c.get("content").unwrap_or(&Value::Null), "parts"))
        .cloned()
        .collect();
    json!({"candidates": [{"content": {"parts": parts}}]})
}

/// `piece` added to the string under `key` of `object` (made when absent; nothing when `object` is
/// not an object), in place: a long stream is not copied once a delta.
fn append(object: &mut Value, key: &str, piece: &str) {
    let Some(fields) = object.as_object_mut() else {
        return;
    };
    match fields.get_mut(key) {
        Some(Value::String(text)) => text.push_str(piece),
        _ => {
            fields.insert(key.to_string(), Value::String(piece.to_string()));
        }
    }
}

/// The array under `key`, empty when there is none.
fn array<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn role(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

fn kind(value: &Value) -> Option<&str> {
    value.get("type").and_then(Value::as_str)
}

/// An event's type: its data's `type`, else its `event:` name.
fn event_kind(event: &StreamEvent) -> Option<&str> {
    kind(&event.data).or(event.event.as_deref())
}

impl Read {
    /// The model call it makes in the sample's trajectory: to `provider`'s `model`, its tokens counted
    /// in `tokens`.
    pub(crate) fn noted(
        self,
        provider: &str,
        model: &str,
        tokens: &crate::completion::CompletionResult,
        latency: std::time::Duration,
        replayed: bool,
    ) -> crate::trajectory::NotedCall {
        crate::trajectory::NotedCall {
            call: crate::trajectory::ModelCall {
                provider: provider.to_string(),
                model: model.to_string(),
                requested: self.requested,
                sent_back: self
                    .sent_back
                    .into_iter()
                    .map(|s| crate::trajectory::SentBack {
                        id: s.id,
                        name: s.name,
                        content: s.content,
                    })
                    .collect(),
                answer: self.answer,
                input_tokens: tokens.input_tokens,
                output_tokens: tokens.output_tokens,
                latency_ms: u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
                replayed,
            },
            conversation: self.conversation,
        }
    }
}

#[cfg(test)]
mod tests {
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
}
