//! The provider APIs the recording endpoint serves, told from the request's path, and what their
//! answers say of tokens, read the way this crate's own clients read them (each wire module's `usage`):
//! from the JSON body, or from a stream's usage events.

// Without the `endpoint` feature no request is routed: only recorded answers are read.
#![cfg_attr(not(feature = "endpoint"), allow(dead_code))]

use serde_json::Value;

pub mod media;

use super::{anthropic, count, gemini, openai};
use crate::cassette::raw::{RawBody, RawRequest, RawResponse};
use crate::completion::CompletionResult;
use crate::config::WireFormat;

/// One API the endpoint serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI-compatible `POST .../chat/completions`.
    ChatCompletions,
    /// OpenAI `POST .../responses`.
    Responses,
    /// OpenAI-compatible `POST .../embeddings`.
    Embeddings,
    /// Anthropic `POST /v1/messages`.
    Messages,
    /// Gemini `models/{m}:generateContent`, or `:streamGenerateContent`.
    GenerateContent,
    /// Gemini `models/{m}:embedContent` or `:batchEmbedContents`.
    EmbedContent,
}

/// What the endpoint serves, as a refusal lists it.
pub const SUPPORTED: &str = "OpenAI-compatible POST /v1/chat/completions, /v1/responses and /v1/embeddings; \
    Anthropic POST /v1/messages; Gemini POST /v1beta/models/{model}:generateContent, \
    :streamGenerateContent, :embedContent and :batchEmbedContents";

impl Api {
    /// The API of a request to `path` (the provider's path: `/v1/chat/completions`,
    /// `/v1beta/models/m:generateContent`), and the model the path names (Gemini's).
    pub fn of_path(path: &str) -> Option<(Api, Option<String>)> {
        let openai = [
            ("/chat/completions", Api::ChatCompletions),
            ("/responses", Api::Responses),
            ("/embeddings", Api::Embeddings),
        ];
        if path == "/v1/messages" {
            return Some((Api::Messages, None));
        }
        if let Some((_, api)) = openai.iter().find(|(end, _)| {
            path.strip_suffix(end)
                .is_some_and(|head| head.is_empty() || head.starts_with('/'))
        }) {
            return Some((*api, None));
        }
        let (_, rest) = path.split_once("/models/")?;
        let (model, method) = rest.rsplit_once(':')?;
        if model.is_empty() || model.contains('/') {
            return None;
        }
        let api = match method {
            "generateContent" | "streamGenerateContent" => Api::GenerateContent,
            "embedContent" | "batchEmbedContents" => Api::EmbedContent,
            _ => return None,
        };
        Some((api, Some(model.to_string())))
    }

    /// The wire format that serves it.
    pub fn wire(self) -> WireFormat {
        match self {
            Api::ChatCompletions | Api::Responses | Api::Embeddings => WireFormat::OpenAi,
            Api::Messages => WireFormat::Anthropic,
            Api::GenerateContent | Api::EmbedContent => WireFormat::Google,
        }
    }

    /// Whether its answers are embeddings (counted as input only).
    pub fn embeds(self) -> bool {
        matches!(self, Api::Embeddings | Api::EmbedContent)
    }

    /// The most output tokens `body` allows, when it says.
    pub fn max_output(self, body: &Value) -> Option<u64> {
        let field = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64);
        match self {
            Api::ChatCompletions => {
                field(body, "max_completion_tokens").or_else(|| field(body, "max_tokens"))
            }
            Api::Responses => field(body, "max_output_tokens"),
            Api::Messages => field(body, "max_tokens"),
            Api::GenerateContent => body
                .get("generationConfig")
                .and_then(|c| field(c, "maxOutputTokens")),
            Api::Embeddings | Api::EmbedContent => Some(0),
        }
    }
}

/// The tokens an answer of `api` counted: from its JSON body, or from its stream (OpenAI's last chunk
/// with `usage`, Anthropic's `message_start` and `message_delta`, Gemini's last `usageMetadata`, the
/// Responses API's `response.completed`). Zero where the answer says nothing.
pub fn tokens(api: Api, response: &RawResponse) -> CompletionResult {
    let mut result = CompletionResult::default();
    match &response.body {
        RawBody::Json(body) => json_tokens(api, body, &mut result),
        RawBody::Events(events) => {
            let mut data = events.iter().map(|e| &e.data);
            match api {
                Api::Messages => {
                    // The input counts come first, the output count grows in each `message_delta`.
                    let mut usage = serde_json::Map::new();
                    for data in data {
                        let found = data
                            .pointer("/message/usage")
                            .or_else(|| data.get("usage"))
                            .and_then(Value::as_object);
                        for (k, v) in found.into_iter().flatten() {
                            usage.insert(k.clone(), v.clone());
                        }
                    }
                    anthropic::usage(&Value::Object(usage), &mut result);
                }
                Api::Responses => {
                    if let Some(usage) = data
                        .filter_map(|d| d.pointer("/response/usage"))
                        .next_back()
                    {
                        responses_usage(usage, &mut result);
                    }
                }
                _ => {
                    if let Some(last) =
                        data.rfind(|d| d.get("usage").or_else(|| d.get("usageMetadata")).is_some())
                    {
                        json_tokens(api, last, &mut result);
                    }
                }
            }
        }
    }
    result
}

/// The tokens of a recorded raw call, its API told from its path (none known: zero).
pub fn tokens_of(request: &RawRequest, response: &RawResponse) -> CompletionResult {
    Api::of_path(&request.path)
        .map_or_else(CompletionResult::default, |(api, _)| tokens(api, response))
}

/// The model a raw call names: its body's `model`, or Gemini's path.
pub fn model_of(request: &RawRequest) -> String {
    let in_path = Api::of_path(&request.path).and_then(|(_, model)| model);
    in_path
        .or_else(|| {
            request
                .body
                .get("model")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// An answer's text as a person reads it in a review: the answer's text (and tool calls) as this
/// crate's own parser reads it, or a stream's text deltas joined; else the body itself.
pub fn answer_text(request: &RawRequest, response: &RawResponse) -> String {
    let api = Api::of_path(&request.path).map(|(api, _)| api);
    match (&response.body, api) {
        (RawBody::Json(body), Some(api)) if !api.embeds() && api != Api::Responses => {
            match super::parse_value(api.wire(), body) {
                Ok(result) => {
                    let mut text = result.text;
                    for call in result.tool_calls {
                        text.push_str(&format!("\n[tool call {} {}]", call.name, call.arguments));
                    }
                    text
                }
                Err(_) => body.to_string(),
            }
        }
        (RawBody::Json(body), _) => serde_json::to_string_pretty(body).unwrap_or_default(),
        (RawBody::Events(events), _) => {
            let pieces = [
                "/choices/0/delta/content",
                "/delta/text",
                "/candidates/0/content/parts/0/text",
                "/delta",
            ];
            events
                .iter()
                .filter_map(|e| {
                    pieces
                        .iter()
                        .find_map(|p| e.data.pointer(p).and_then(Value::as_str))
                })
                .collect()
        }
    }
}

/// The text of the first user message of a request body of `api`: chat completions' and Anthropic's
/// `messages`, the Responses API's `input` (a string, or a list of messages), Gemini's `contents`. A
/// message's content may be a string or a list of parts; its text parts are joined by newlines. None
/// for embeddings or when no user message holds text.
pub fn first_user_text(api: Api, body: &Value) -> Option<String> {
    let text_of = |content: &Value| -> Option<String> {
        let text = match content {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p.as_str().or_else(|| p.get("text").and_then(Value::as_str)))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => return None,
        };
        (!text.is_empty()).then_some(text)
    };
    let first_user = |messages: &Value, content: &str| {
        messages.as_array()?.iter().find_map(|m| {
            let role = m.get("role").and_then(Value::as_str);
            (role == Some("user"))
                .then(|| m.get(content).and_then(text_of))
                .flatten()
        })
    };
    match api {
        Api::ChatCompletions | Api::Messages => first_user(body.get("messages")?, "content"),
        Api::Responses => match body.get("input")? {
            Value::String(s) => (!s.is_empty()).then(|| s.clone()),
            input => first_user(input, "content"),
        },
        Api::GenerateContent => {
            let contents = body.get("contents")?;
            // A single content without a role is the user's.
            contents.as_array()?.iter().find_map(|c| {
                let role = c.get("role").and_then(Value::as_str).unwrap_or("user");
                (role == "user")
                    .then(|| c.get("parts").and_then(text_of))
                    .flatten()
            })
        }
        Api::Embeddings | Api::EmbedContent => None,
    }
}

fn json_tokens(api: Api, body: &Value, result: &mut CompletionResult) {
    let usage = |key: &str| body.get(key).unwrap_or(&Value::Null);
    match api {
        Api::ChatCompletions => openai::usage(usage("usage"), result),
        Api::Embeddings => result.input_tokens = count(usage("usage"), "prompt_tokens"),
        Api::Responses => responses_usage(usage("usage"), result),
        Api::Messages => anthropic::usage(usage("usage"), result),
        Api::GenerateContent | Api::EmbedContent => gemini::usage(usage("usageMetadata"), result),
    }
}

/// The Responses API's `usage`: input and output tokens, with cached and reasoning details.
fn responses_usage(usage: &Value, result: &mut CompletionResult) {
    result.input_tokens = count(usage, "input_tokens");
    result.output_tokens = count(usage, "output_tokens");
    result.cached_input_tokens = usage
        .get("input_tokens_details")
        .map_or(0, |d| count(d, "cached_tokens"));
    result.thoughts_tokens = usage
        .get("output_tokens_details")
        .map_or(0, |d| count(d, "reasoning_tokens"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::raw::parse_events;
    use serde_json::json;

    fn json(body: Value) -> RawResponse {
        RawResponse {
            status: 200,
            content_type: "application/json".into(),
            body: RawBody::Json(body),
        }
    }

    fn stream(text: &str) -> RawResponse {
        RawResponse {
            status: 200,
            content_type: "text/event-stream".into(),
            body: RawBody::Events(parse_events(text)),
        }
    }

    fn counted(r: &CompletionResult) -> [u64; 4] {
        [
            r.input_tokens,
            r.output_tokens,
            r.cached_input_tokens,
            r.thoughts_tokens,
        ]
    }

    #[test]
    fn paths_name_their_api_and_gemini_s_model() {
        let api = |p: &str| Api::of_path(p);
        assert_eq!(
            api("/v1/chat/completions"),
            Some((Api::ChatCompletions, None))
        );
        assert_eq!(api("/v1/responses"), Some((Api::Responses, None)));
        assert_eq!(api("/v1/embeddings"), Some((Api::Embeddings, None)));
        assert_eq!(api("/v1/messages"), Some((Api::Messages, None)));
        assert_eq!(
            api("/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
            Some((Api::GenerateContent, Some("gemini-2.5-flash".into())))
        );
        assert_eq!(
            api("/v1beta/models/text-embedding-004:batchEmbedContents"),
            Some((Api::EmbedContent, Some("text-embedding-004".into())))
        );
        for refused in [
            "/v1/models",
            "/v1/completions",
            "/v1/chat/completionsx",
            "/v1beta/models/m:countTokens",
            "/v1beta/models/:generateContent",
            "/v1/messages/count_tokens",
        ] {
            assert_eq!(api(refused), None, "{refused}");
        }
        assert_eq!(Api::Messages.wire(), WireFormat::Anthropic);
        assert_eq!(
            Api::GenerateContent.max_output(&json!({"generationConfig": {"maxOutputTokens": 9}})),
            Some(9)
        );
        assert_eq!(
            Api::ChatCompletions.max_output(&json!({"max_completion_tokens": 7, "max_tokens": 3})),
            Some(7)
        );
        assert_eq!(Api::Messages.max_output(&json!({})), None);
    }

    #[test]
    fn the_first_user_message_of_each_api_is_its_task() {
        let chat = json!({"messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Where is order 42?"},
            {"role": "user", "content": "And 43?"}
        ]});
        assert_eq!(
            first_user_text(Api::ChatCompletions, &chat).as_deref(),
            Some("Where is order 42?")
        );
        let parts = json!({"messages": [{"role": "user", "content": [
            {"type": "text", "text": "Look:"}, {"type": "image_url", "image_url": {}},
            {"type": "text", "text": "what is it?"}
        ]}]});
        assert_eq!(
            first_user_text(Api::Messages, &parts).as_deref(),
            Some("Look:\nwhat is it?")
        );
        assert_eq!(
            first_user_text(Api::Responses, &json!({"input": "Hi"})).as_deref(),
            Some("Hi")
        );
        let input = json!({"input": [{"role": "user", "content": [{"type": "input_text", "text": "Hey"}]}]});
        assert_eq!(
            first_user_text(Api::Responses, &input).as_deref(),
            Some("Hey")
        );
        let gemini = json!({"contents": [
            {"role": "user", "parts": [{"text": "Name a bird."}]},
            {"role": "model", "parts": [{"text": "Robin."}]}
        ]});
        assert_eq!(
            first_user_text(Api::GenerateContent, &gemini).as_deref(),
            Some("Name a bird.")
        );
        let no_role = json!({"contents": [{"parts": [{"text": "Hi"}]}]});
        assert_eq!(
            first_user_text(Api::GenerateContent, &no_role).as_deref(),
            Some("Hi")
        );
        for (api, body) in [
            (
                Api::ChatCompletions,
                json!({"messages": [{"role": "system", "content": "x"}]}),
            ),
            (Api::ChatCompletions, json!({"messages": "not a list"})),
            (Api::Embeddings, json!({"input": "text"})),
            (Api::Messages, json!({})),
        ] {
            assert_eq!(first_user_text(api, &body), None, "{body}");
        }
    }

    #[test]
    fn tokens_of_each_json_answer() {
        let chat = json(
            json!({"usage": {"prompt_tokens": 10, "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 4},
            "completion_tokens_details": {"reasoning_tokens": 2}}}),
        );
        assert_eq!(counted(&tokens(Api::ChatCompletions, &chat)), [10, 5, 4, 2]);
        let messages = json(json!({"usage": {"input_tokens": 3, "output_tokens": 8,
            "cache_read_input_tokens": 6}}));
        assert_eq!(counted(&tokens(Api::Messages, &messages)), [9, 8, 6, 0]);
        let gemini = json(json!({"usageMetadata": {"promptTokenCount": 7,
            "candidatesTokenCount": 3, "thoughtsTokenCount": 4, "cachedContentTokenCount": 1}}));
        assert_eq!(
            counted(&tokens(Api::GenerateContent, &gemini)),
            [7, 7, 1, 4]
        );
        let responses = json(json!({"usage": {"input_tokens": 11, "output_tokens": 6,
            "input_tokens_details": {"cached_tokens": 2},
            "output_tokens_details": {"reasoning_tokens": 1}}}));
        assert_eq!(counted(&tokens(Api::Responses, &responses)), [11, 6, 2, 1]);
        let embeddings = json(json!({"usage": {"prompt_tokens": 4, "total_tokens": 4}}));
        assert_eq!(counted(&tokens(Api::Embeddings, &embeddings)), [4, 0, 0, 0]);
        assert_eq!(
            counted(&tokens(Api::EmbedContent, &json(json!({"embedding": {}})))),
            [0; 4]
        );
    }

    #[test]
    fn tokens_of_each_stream_from_its_usage_events() {
        let chat = stream(concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}\n\n",
            "data: [DONE]\n\n"
        ));
        assert_eq!(counted(&tokens(Api::ChatCompletions, &chat)), [12, 3, 0, 0]);
        let messages = stream(concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":20,\"cache_read_input_tokens\":5,\"output_tokens\":1}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"Hi\"}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":9}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
        ));
        assert_eq!(counted(&tokens(Api::Messages, &messages)), [25, 9, 5, 0]);
        let gemini = stream(concat!(
            "data: {\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":8,\"candidatesTokenCount\":1}}\r\n\r\n",
            "data: {\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":8,\"candidatesTokenCount\":6}}\r\n\r\n"
        ));
        assert_eq!(
            counted(&tokens(Api::GenerateContent, &gemini)),
            [8, 6, 0, 0]
        );
        let responses = stream(concat!(
            "event: response.output_text.delta\ndata: {\"delta\":\"Hi\"}\n\n",
            "event: response.completed\ndata: {\"response\":{\"usage\":{\"input_tokens\":4,\"output_tokens\":2}}}\n\n"
        ));
        assert_eq!(counted(&tokens(Api::Responses, &responses)), [4, 2, 0, 0]);
        // A stream that never says its usage counts nothing (the client did not ask for it).
        let silent = stream("data: {\"choices\":[]}\n\ndata: [DONE]\n\n");
        assert_eq!(counted(&tokens(Api::ChatCompletions, &silent)), [0; 4]);
    }
}
