//! What one model call relayed by the recording endpoint says of an agent's trajectory: the conversation
//! its request holds, the tool results it sends back, and the text and tool calls of its answer, for the
//! four chat APIs, whether the answer came as one JSON body or as a stream.

// Without the `endpoint` feature no request is relayed: only the tests read it.
#![cfg_attr(not(feature = "endpoint"), allow(dead_code))]

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use super::relayed::Api;
use super::{arguments, parse_value, string};
use crate::cassette::raw::{RawBody, RawRequest, RawResponse, StreamEvent};
use crate::completion::{CompletionResult, ToolCall};
use crate::trajectory::SentBack;

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
    /// The first user message's text in the request (for a judge's "task"), as the endpoint notes it
    /// (`relayed::first_user_text`).
    pub first_user_text: Option<String>,
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
        first_user_text: super::relayed::first_user_text(api, body),
    })
}

/// What a request says: its conversation and the results it sends back.
struct Asked {
    conversation: Vec<String>,
    sent_back: Vec<SentBack>,
}

/// How one API's request holds its conversation, message by message.
struct Format {
    /// Whether a message is the model's turn.
    model_turn: fn(&Value) -> bool,
    /// The `(id, name)` of each tool call a message holds.
    calls: fn(&Value) -> Vec<(String, String)>,
    /// The tool results a message holds, with their name when the message says it.
    results: fn(&Value) -> Vec<SentBack>,
}

const CHAT: Format = Format {
    model_turn: |m| role(m) == Some("assistant"),
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
    // The model's items are its messages and its calls; its reasoning items always precede a call.
    model_turn: |m| role(m) == Some("assistant") || kind(m) == Some("function_call"),
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
    model_turn: |m| role(m) == Some("assistant"),
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
    model_turn: |m| role(m) == Some("model"),
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
    Asked {
        conversation,
        sent_back,
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
    match api {
        Api::Responses => responses_answer(body),
        Api::Embeddings | Api::EmbedContent => CompletionResult::default(),
        _ => parse_value(api.wire(), body).unwrap_or_default(),
    }
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
                sent_back: self.sent_back,
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
mod tests;
