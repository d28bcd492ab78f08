//! Anthropic Messages: `POST {base}/v1/messages`.
//!
//! Structured output is a forced tool call: the schema becomes a tool of the schema's name and
//! `tool_choice` forces it, so the answer arrives as `tool_calls[0].arguments`.
//! `usage.input_tokens` excludes cache reads and writes, so they are added back to follow the
//! crate's convention; a `refusal` stop counts as safety-filtered.

use serde_json::{Value, json};

use super::{ErrorBody, count, float, string, turns};
use crate::completion::{
    CompletionRequest, CompletionResult, ContentBlock, MediaPart, MediaType, ToolCall,
};

pub(super) fn url(base: &str) -> String {
    if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    }
}

pub(super) fn body(request: &CompletionRequest) -> Value {
    let messages = turns(request, "assistant", "content", block);
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
    });
    if let Some(system) = &request.system {
        body["system"] = if request.cache_system {
            json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}])
        } else {
            json!(system)
        };
    }
    if let Some(t) = request.temperature {
        body["temperature"] = float(t);
    }
    // The Messages API has no seed: `case` warns once that it is not sent.
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    if let Some(schema) = &request.response_schema {
        tools.push(json!({
            "name": schema.name,
            "description": "Give your answer by calling this tool; its input must follow the schema.",
            "input_schema": schema.schema,
        }));
        body["tool_choice"] = json!({"type": "tool", "name": schema.name});
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    body
}

fn block(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::ToolUse {
            id, name, input, ..
        } => {
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
            ..
        } => {
            json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": is_error})
        }
        ContentBlock::Media(part) => media_block(part),
    }
}

/// A media part as the Messages API takes it (the shapes the `anthropic` SDK sends:
/// `tests/providers/media_sdk/`). Audio is refused before the call (`provider::unsendable`); were it
/// built anyway, the API's own error says so.
fn media_block(part: &MediaPart) -> Value {
    match part.media_type() {
        MediaType::Text => json!({"type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": part.text().unwrap_or_default()},
            "title": part.name()}),
        MediaType::Pdf | MediaType::Wav | MediaType::Mp3 => json!({"type": "document",
            "source": {"type": "base64", "media_type": part.media_type().mime(), "data": part.base64()},
            "title": part.name()}),
        _ => json!({"type": "image",
            "source": {"type": "base64", "media_type": part.media_type().mime(), "data": part.base64()}}),
    }
}

pub(super) fn parse(body: &Value) -> Result<CompletionResult, String> {
    if body.get("type").and_then(Value::as_str) == Some("error") {
        let error = parse_error(body);
        return Err(format!(
            "the answer is an error ({}: {})",
            error.error_type.unwrap_or_default(),
            error.message.unwrap_or_default()
        ));
    }
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or("it has no `content` array of a Messages response")?;
    let mut result = CompletionResult::default();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => result
                .text
                .push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => result.tool_calls.push(ToolCall {
                id: string(block, "id").unwrap_or_default(),
                name: string(block, "name").unwrap_or_default(),
                arguments: block.get("input").cloned().unwrap_or(Value::Null),
                thought_signature: None,
            }),
            // Thinking, redacted thinking and server tool blocks are not part of the answer's text.
            _ => {}
        }
    }
    usage(body.get("usage").unwrap_or(&Value::Null), &mut result);
    result.stop_reason = string(body, "stop_reason");
    result.safety_filtered = result.stop_reason.as_deref() == Some("refusal");
    result.model_used = string(body, "model");
    result.request_id = string(body, "id");
    Ok(result)
}

/// The token counts of a Messages `usage` object: input with cache reads and writes added back.
pub(super) fn usage(usage: &Value, result: &mut CompletionResult) {
    let cache_read = count(usage, "cache_read_input_tokens");
    let cache_write = count(usage, "cache_creation_input_tokens");
    result.input_tokens = count(usage, "input_tokens")
        .saturating_add(cache_read)
        .saturating_add(cache_write);
    result.cached_input_tokens = cache_read;
    result.cache_creation_tokens = cache_write;
    result.output_tokens = count(usage, "output_tokens");
    result.thoughts_tokens = usage
        .get("output_tokens_details")
        .map_or(0, |d| count(d, "thinking_tokens"));
}

pub(super) fn parse_error(body: &Value) -> ErrorBody {
    let error = body.get("error").unwrap_or(&Value::Null);
    ErrorBody {
        error_type: string(error, "type"),
        message: string(error, "message"),
        request_id: string(body, "request_id"),
        retry_delay: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::{ResponseSchema, ToolSpec};

    #[test]
    fn token_counts_at_the_largest_number_saturate() {
        let body = serde_json::json!({
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": u64::MAX, "output_tokens": 1,
                      "cache_read_input_tokens": u64::MAX, "cache_creation_input_tokens": 5}
        });
        assert_eq!(parse(&body).unwrap().input_tokens, u64::MAX);
    }

    #[test]
    fn cached_system_tools_and_forced_schema() {
        let mut request = CompletionRequest::new("claude-haiku-4-5", "Is it sunny?", 64);
        request.system = Some("Be brief.".into());
        request.cache_system = true;
        request.temperature = Some(0.2);
        request.tools = vec![ToolSpec {
            name: "weather".into(),
            description: "Looks up weather".into(),
            input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        }];
        request.response_schema = Some(ResponseSchema {
            name: "verdict".into(),
            schema: json!({"type": "object", "properties": {"passed": {"type": "boolean"}}}),
        });
        request.push_tool_round(
            ("toolu_1", "weather"),
            json!({"city": "Oslo"}),
            ("rain", false),
        );
        let body = body(&request);
        assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
        assert_eq!(body["temperature"].to_string(), "0.2");
        assert_eq!(
            body["tools"][0]["input_schema"]["properties"]["city"]["type"],
            "string"
        );
        assert_eq!(body["tools"][1]["name"], "verdict");
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": "verdict"})
        );
        assert_eq!(body["messages"][1]["content"][0]["type"], "tool_use");
        assert_eq!(body["messages"][2]["content"][0]["tool_use_id"], "toolu_1");
        assert_eq!(body["messages"][2]["content"][0]["content"], "rain");
    }

    #[test]
    fn refusal_and_thinking_blocks() {
        let body = json!({
            "id": "msg_1", "model": "claude-x", "stop_reason": "refusal",
            "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "I can't"}, {"type": "text", "text": " help."}],
            "usage": {"input_tokens": 5, "output_tokens": 7, "output_tokens_details": {"thinking_tokens": 3}}
        });
        let r = parse(&body).unwrap();
        assert_eq!(r.text, "I can't help.");
        assert!(r.safety_filtered);
        assert_eq!(
            (r.input_tokens, r.output_tokens, r.thoughts_tokens),
            (5, 7, 3)
        );
        assert!(parse(&json!({"choices": []})).is_err());
        assert!(parse(&json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})).is_err());
    }
}
