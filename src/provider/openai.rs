//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions` (the base includes `/v1`), with
//! `Authorization: Bearer KEY` when a key is set. The same code serves api.openai.com, llama-server,
//! Ollama, vLLM and hosted compatible APIs.
//!
//! Choices made here:
//! - The token limit goes as `max_tokens`, which every compatible server accepts, except to
//!   api.openai.com, whose reasoning models (o-series, gpt-5) reject it: there it is
//!   `max_completion_tokens`.
//! - A `refusal` (structured-output refusals) becomes the answer's text, so checks and the judge see
//!   what the model said, and marks the result safety-filtered, like `finish_reason: content_filter`.
//! - Tool-call arguments arrive as a JSON string: parsed, or kept as a JSON string value when invalid.
//! - Extra fields of compatible servers (llama-server `timings`, Ollama `reasoning`) are ignored;
//!   a top-level `usage.cached_tokens` (seen on some compatible hosts) counts as cached input.

use serde_json::{Value, json};

use super::{ErrorBody, arguments, count, first_item, float, string};
use crate::completion::{
    CompletionRequest, CompletionResult, ContentBlock, MediaPart, MediaType, Role, ToolCall,
};

pub(super) fn url(base: &str) -> String {
    format!("{base}/chat/completions")
}

/// Whether `base_url` is OpenAI's own API, which wants `max_completion_tokens`.
pub(super) fn uses_max_completion_tokens(base_url: &str) -> bool {
    let rest = base_url
        .trim()
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    let host = rest.split(['/', ':']).next().unwrap_or("");
    host.eq_ignore_ascii_case("api.openai.com")
}

pub(super) fn body(request: &CompletionRequest, max_completion_tokens: bool) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        let texts = message.texts();
        match message.role {
            Role::User => {
                // Tool results are messages of their own and must directly follow the assistant's
                // tool calls, so they go before any text of the same turn.
                for block in &message.content {
                    if let ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } = block
                    {
                        messages.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
                    }
                }
                let has_media = message
                    .content
                    .iter()
                    .any(|b| matches!(b, ContentBlock::Media(_)));
                if has_media {
                    // Media need content parts, in the message's order.
                    let parts: Vec<Value> = message
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::Text { text } => {
                                Some(json!({"type": "text", "text": text}))
                            }
                            ContentBlock::Media(part) => Some(media_part(part)),
                            _ => None,
                        })
                        .collect();
                    messages.push(json!({"role": "user", "content": parts}));
                } else if !texts.is_empty() {
                    messages.push(json!({"role": "user", "content": text_content(&texts)}));
                }
            }
            Role::Assistant => {
                let calls: Vec<Value> = message
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::ToolUse {
                            id, name, input, ..
                        } => Some(json!({
                            "id": id,
                            "type": "function",
                            "function": {"name": name, "arguments": input.to_string()}
                        })),
                        _ => None,
                    })
                    .collect();
                let mut m = json!({"role": "assistant"});
                // `content` may be left out only when the message carries tool calls.
                if !texts.is_empty() || calls.is_empty() {
                    m["content"] = json!(texts.concat());
                }
                if !calls.is_empty() {
                    m["tool_calls"] = Value::Array(calls);
                }
                messages.push(m);
            }
        }
    }
    let mut body = json!({"model": request.model, "messages": messages});
    let limit = if max_completion_tokens {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[limit] = json!(request.max_tokens);
    if let Some(t) = request.temperature {
        body["temperature"] = float(t);
    }
    if let Some(seed) = request.seed {
        body["seed"] = json!(seed);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}})
            })
            .collect();
    }
    if let Some(schema) = &request.response_schema {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": schema.name, "schema": schema.schema, "strict": true}
        });
    }
    body
}

/// A media part as Chat Completions takes it (the shapes the `openai` SDK sends:
/// `tests/providers/media_sdk/`): images and PDFs as data URLs, audio as bare base64 with its format,
/// a text document as a text part.
pub(super) fn media_part(part: &MediaPart) -> Value {
    match part.media_type() {
        MediaType::Pdf => json!({"type": "file", "file": {
            "filename": part.name(),
            "file_data": format!("data:{};base64,{}", part.media_type(), part.base64()),
        }}),
        MediaType::Text => json!({"type": "text", "text": part.text().unwrap_or_default()}),
        MediaType::Wav | MediaType::Mp3 => json!({"type": "input_audio", "input_audio": {
            "data": part.base64(),
            "format": if part.media_type() == MediaType::Wav { "wav" } else { "mp3" },
        }}),
        _ => json!({"type": "image_url", "image_url": {
            "url": format!("data:{};base64,{}", part.media_type(), part.base64()),
            "detail": part.detail().as_str(),
        }}),
    }
}

/// One text part as a plain string (what every server accepts), several as content parts.
fn text_content(texts: &[&str]) -> Value {
    match texts {
        [one] => json!(one),
        many => Value::Array(
            many.iter()
                .map(|t| json!({"type": "text", "text": t}))
                .collect(),
        ),
    }
}

pub(super) fn parse(body: &Value) -> Result<CompletionResult, String> {
    if body.get("error").is_some() && body.get("choices").is_none() {
        let error = parse_error(body);
        return Err(format!(
            "the answer is an error ({})",
            error.message.unwrap_or_default()
        ));
    }
    let choice = first_item(body, "choices", "a Chat Completions response")?;
    let message = choice
        .get("message")
        .ok_or("its first choice has no `message`")?;
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    };
    let mut result = CompletionResult {
        text,
        ..CompletionResult::default()
    };
    if let Some(refusal) = message
        .get("refusal")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
    {
        result.safety_filtered = true;
        if result.text.is_empty() {
            result.text = refusal.to_string();
        }
    }
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let function = call.get("function").unwrap_or(&Value::Null);
        result.tool_calls.push(ToolCall {
            id: string(call, "id").unwrap_or_else(|| format!("call_{}", result.tool_calls.len())),
            name: string(function, "name").unwrap_or_default(),
            arguments: arguments(function.get("arguments")),
            thought_signature: None,
        });
    }
    result.stop_reason = string(choice, "finish_reason");
    result.safety_filtered |= result.stop_reason.as_deref() == Some("content_filter");
    usage(body.get("usage").unwrap_or(&Value::Null), &mut result);
    result.model_used = string(body, "model");
    result.model_version = string(body, "system_fingerprint");
    result.request_id = string(body, "id");
    Ok(result)
}

/// The token counts of a Chat Completions `usage` object (a response's, or a stream's last chunk's).
pub(super) fn usage(usage: &Value, result: &mut CompletionResult) {
    let prompt_details = usage.get("prompt_tokens_details").unwrap_or(&Value::Null);
    result.input_tokens = count(usage, "prompt_tokens");
    result.cached_input_tokens = match prompt_details.get("cached_tokens").and_then(Value::as_u64) {
        Some(n) => n,
        None => count(usage, "cached_tokens"),
    };
    result.cache_creation_tokens = count(prompt_details, "cache_write_tokens");
    result.output_tokens = count(usage, "completion_tokens");
    result.thoughts_tokens = usage
        .get("completion_tokens_details")
        .map_or(0, |d| count(d, "reasoning_tokens"));
}

pub(super) fn parse_error(body: &Value) -> ErrorBody {
    match body.get("error") {
        // Ollama and some proxies answer `{"error": "message"}`.
        Some(Value::String(message)) => ErrorBody {
            message: Some(message.clone()),
            ..ErrorBody::default()
        },
        Some(error) => ErrorBody {
            error_type: string(error, "type").or_else(|| string(error, "code")),
            message: string(error, "message"),
            request_id: None,
            retry_delay: None,
        },
        None => ErrorBody {
            message: string(body, "message"),
            ..ErrorBody::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::{ResponseSchema, ToolSpec};

    #[test]
    fn limit_field_depends_on_the_host() {
        assert!(uses_max_completion_tokens("https://api.openai.com/v1"));
        assert!(!uses_max_completion_tokens("http://127.0.0.1:8080/v1"));
        assert!(!uses_max_completion_tokens(
            "https://api.openai.com.evil.example/v1"
        ));
        let request = CompletionRequest::new("m", "hi", 9);
        assert_eq!(body(&request, true)["max_completion_tokens"], 9);
        assert_eq!(body(&request, false)["max_tokens"], 9);
        assert!(body(&request, false).get("max_completion_tokens").is_none());
    }

    #[test]
    fn conversation_with_tools_and_schema() {
        let mut request = CompletionRequest::new("gpt-4o", "Largest city?", 50);
        request.system = Some("sys".into());
        request.tools = vec![ToolSpec {
            name: "country".into(),
            description: "".into(),
            input_schema: json!({"type": "object"}),
        }];
        request.response_schema = Some(ResponseSchema {
            name: "result".into(),
            schema: json!({"type": "object"}),
        });
        request.push_tool_round(("call_1", "country"), json!({}), ("Mexico", false));
        // The user's text after the tool result, in the same message.
        let answer = request.messages.last_mut().unwrap();
        answer.content.push(ContentBlock::Text {
            text: "thanks".into(),
        });
        let b = body(&request, false);
        let m = b["messages"].as_array().unwrap();
        assert_eq!(m[0], json!({"role": "system", "content": "sys"}));
        assert_eq!(m[1], json!({"role": "user", "content": "Largest city?"}));
        assert!(m[2].get("content").is_none());
        assert_eq!(
            m[2]["tool_calls"][0]["function"],
            json!({"name": "country", "arguments": "{}"})
        );
        assert_eq!(
            m[3],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "Mexico"})
        );
        assert_eq!(m[4], json!({"role": "user", "content": "thanks"}));
        assert_eq!(b["tools"][0]["type"], "function");
        assert_eq!(b["response_format"]["json_schema"]["strict"], true);
    }

    #[test]
    fn refusal_invalid_arguments_and_errors() {
        let r = parse(&json!({
            "id": "c1", "model": "gpt-4o", "system_fingerprint": null,
            "choices": [{"finish_reason": "stop", "message": {"content": null, "refusal": "I can't help with that.",
                "tool_calls": [{"id": "t", "type": "function", "function": {"name": "f", "arguments": "{not json"}}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2}
        }))
        .unwrap();
        assert_eq!(r.text, "I can't help with that.");
        assert!(r.safety_filtered);
        assert_eq!(r.tool_calls[0].arguments, json!("{not json"));
        assert_eq!(r.model_version, None);
        assert!(parse(&json!({"choices": []})).is_err());
        assert_eq!(
            parse_error(&json!({"error": "model not loaded"}))
                .message
                .as_deref(),
            Some("model not loaded")
        );
        let e = parse_error(&json!({"error": {"message": "m", "code": 400}}));
        assert_eq!((e.error_type, e.message.as_deref()), (None, Some("m")));
    }
}
