//! Google Gemini: `POST {base}/v1beta/models/{model}:generateContent`, the key in `x-goog-api-key`
//! only (never in the URL, where logs would keep it).
//!
//! `promptTokenCount` already includes `cachedContentTokenCount`; `thoughtsTokenCount` is apart from
//! `candidatesTokenCount`, so output = candidates + thoughts. A prompt blocked by
//! `promptFeedback.blockReason`, or a candidate finished for SAFETY, PROHIBITED_CONTENT, BLOCKLIST,
//! SPII, RECITATION or an image-safety reason, counts as safety-filtered: RECITATION is included
//! because the provider withheld the answer, which is what a test needs to know. Function calls get
//! `call_N` ids when the API gives none.
//!
//! Structured output uses `responseSchema`, Gemini's OpenAPI subset of JSON Schema: [`to_gemini_schema`]
//! inlines local `$ref`s and drops what the subset rejects (`additionalProperties`, `$schema`, ...).

use serde_json::{Map, Value, json};

use super::retry::parse_proto_duration;
use super::{ErrorBody, count, float, string, turns};
use crate::completion::{CompletionRequest, CompletionResult, ContentBlock, MediaType, ToolCall};

/// Finish reasons that mean the provider withheld the answer.
const BLOCKED: &[&str] = &[
    "SAFETY",
    "PROHIBITED_CONTENT",
    "BLOCKLIST",
    "SPII",
    "RECITATION",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
];

pub(super) fn url(base: &str, model: &str) -> String {
    method_url(base, model, "generateContent")
}

/// The URL of `model`'s `method` (`generateContent`, `embedContent`).
pub(super) fn method_url(base: &str, model: &str, method: &str) -> String {
    let model = model.trim().trim_start_matches("models/");
    let model: String = model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._~@".contains(c) {
                c.to_string()
            } else {
                percent(c)
            }
        })
        .collect();
    if base.ends_with("/v1beta") || base.ends_with("/v1") {
        format!("{base}/models/{model}:{method}")
    } else {
        format!("{base}/v1beta/models/{model}:{method}")
    }
}

fn percent(c: char) -> String {
    let mut buf = [0u8; 4];
    c.encode_utf8(&mut buf)
        .bytes()
        .map(|b| format!("%{b:02X}"))
        .collect()
}

pub(super) fn body(request: &CompletionRequest) -> Value {
    let contents = turns(request, "model", "parts", part);
    let mut body = json!({ "contents": contents });
    if let Some(system) = &request.system {
        body["systemInstruction"] = json!({"parts": [{"text": system}]});
    }
    let mut config = Map::new();
    config.insert("maxOutputTokens".into(), json!(request.max_tokens));
    if let Some(t) = request.temperature {
        config.insert("temperature".into(), float(t));
    }
    if let Some(seed) = request.seed {
        config.insert("seed".into(), json!(seed));
    }
    if let Some(schema) = &request.response_schema {
        config.insert("responseMimeType".into(), json!("application/json"));
        config.insert("responseSchema".into(), to_gemini_schema(&schema.schema));
    }
    body["generationConfig"] = Value::Object(config);
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let mut declaration = json!({"name": t.name, "description": t.description});
                let parameters = to_gemini_schema(&t.input_schema);
                // Gemini rejects an OBJECT schema without properties: a tool without arguments
                // has no `parameters` at all.
                let empty_object = parameters.get("type").and_then(Value::as_str) == Some("object")
                    && parameters
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_none_or(Map::is_empty);
                if !empty_object {
                    declaration["parameters"] = parameters;
                }
                declaration
            })
            .collect();
        body["tools"] = json!([{ "functionDeclarations": declarations }]);
    }
    body
}

fn part(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({"text": text}),
        ContentBlock::ToolUse {
            name,
            input,
            thought_signature,
            ..
        } => {
            // Gemini 3 rejects a function call of the current turn sent back without its signature.
            let mut part = json!({"functionCall": {"name": name, "args": input}});
            if let Some(signature) = thought_signature {
                part["thoughtSignature"] = json!(signature);
            }
            part
        }
        ContentBlock::ToolResult {
            name,
            content,
            is_error,
            ..
        } => {
            let response = if *is_error {
                json!({"error": content})
            } else {
                json!({"content": content})
            };
            json!({"functionResponse": {"name": name, "response": response}})
        }
        // `inlineData` with the blob's fields as the `google-genai` SDK writes them
        // (`tests/providers/media_sdk/`); the API reads either casing.
        ContentBlock::Media(part) => json!({"inlineData": {
            "data": part.base64(),
            "mime_type": gemini_mime(part.media_type()),
        }}),
    }
}

/// The MIME type Gemini documents for a media type (`audio/mp3`, not `audio/mpeg`).
fn gemini_mime(media_type: MediaType) -> &'static str {
    match media_type {
        MediaType::Mp3 => "audio/mp3",
        other => other.mime(),
    }
}

/// Keys of Gemini's `Schema` object; everything else is dropped.
const SCHEMA_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// Converts a JSON schema to the subset `responseSchema` and function `parameters` accept: local
/// `$ref`s (`#/$defs/..`, `#/definitions/..`) are inlined (to a depth of 16, deeper ones become `{}`),
/// `const` becomes a one-value `enum`, a type list with `"null"` becomes `nullable`, `oneOf` becomes
/// `anyOf`, and unsupported keys are dropped.
pub(crate) fn to_gemini_schema(schema: &Value) -> Value {
    convert(schema, schema, 0)
}

fn convert(node: &Value, root: &Value, depth: usize) -> Value {
    let Some(object) = node.as_object() else {
        return node.clone();
    };
    if depth > 16 {
        return json!({});
    }
    if let Some(target) = object.get("$ref").and_then(Value::as_str) {
        let resolved = target
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .map(|r| convert(r, root, depth + 1))
            .unwrap_or_else(|| json!({}));
        // Sibling keys (a description next to the $ref) refine the referenced schema.
        let mut merged = resolved.as_object().cloned().unwrap_or_default();
        for (key, value) in object {
            if key != "$ref" && SCHEMA_KEYS.contains(&key.as_str()) {
                merged.insert(key.clone(), convert_value(key, value, root, depth));
            }
        }
        return Value::Object(merged);
    }
    let mut out = Map::new();
    for (key, value) in object {
        match key.as_str() {
            "const" => {
                out.insert("enum".into(), json!([value]));
            }
            "oneOf" => {
                out.insert("anyOf".into(), convert_value("anyOf", value, root, depth));
            }
            "type" => match value {
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types
                        .iter()
                        .filter(|t| t.as_str() != Some("null"))
                        .collect();
                    if non_null.len() < types.len() {
                        out.insert("nullable".into(), json!(true));
                    }
                    if let Some(first) = non_null.first() {
                        out.insert("type".into(), (*first).clone());
                    }
                }
                other => {
                    out.insert("type".into(), other.clone());
                }
            },
            k if SCHEMA_KEYS.contains(&k) => {
                out.insert(key.clone(), convert_value(k, value, root, depth));
            }
            _ => {}
        }
    }
    // Gemini writes properties in alphabetical order unless told otherwise; keep the declared order
    // (a judge's `reasoning` must come before its `answer`).
    if let (Some(Value::Object(props)), false) =
        (out.get("properties"), out.contains_key("propertyOrdering"))
    {
        let order: Vec<Value> = props.keys().map(|k| json!(k)).collect();
        out.insert("propertyOrdering".into(), Value::Array(order));
    }
    // Gemini's enum is for strings only.
    if let Some(Value::Array(values)) = out.get("enum") {
        if values.iter().all(Value::is_string) {
            out.entry("type").or_insert_with(|| json!("string"));
        } else {
            out.remove("enum");
        }
    }
    Value::Object(out)
}

fn convert_value(key: &str, value: &Value, root: &Value, depth: usize) -> Value {
    match (key, value) {
        ("properties", Value::Object(props)) => Value::Object(
            props
                .iter()
                .map(|(k, v)| (k.clone(), convert(v, root, depth + 1)))
                .collect(),
        ),
        ("items", v) => convert(v, root, depth + 1),
        ("anyOf", Value::Array(options)) => Value::Array(
            options
                .iter()
                .map(|o| convert(o, root, depth + 1))
                .collect(),
        ),
        _ => value.clone(),
    }
}

pub(super) fn parse(body: &Value) -> Result<CompletionResult, String> {
    let candidates = body.get("candidates").and_then(Value::as_array);
    let feedback = body.get("promptFeedback");
    if candidates.is_none() && feedback.is_none() {
        return Err(
            "it has neither `candidates` nor `promptFeedback` of a generateContent response".into(),
        );
    }
    let mut result = CompletionResult::default();
    if let Some(reason) = feedback.and_then(|f| string(f, "blockReason")) {
        result.safety_filtered = true;
        result.stop_reason = Some(reason);
    }
    if let Some(candidate) = candidates.and_then(|c| c.first()) {
        let parts = candidate
            .pointer("/content/parts")
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            if let Some(call) = part.get("functionCall") {
                result.tool_calls.push(ToolCall {
                    id: string(call, "id")
                        .unwrap_or_else(|| format!("call_{}", result.tool_calls.len())),
                    name: string(call, "name").unwrap_or_default(),
                    arguments: call.get("args").cloned().unwrap_or_else(|| json!({})),
                    thought_signature: string(part, "thoughtSignature"),
                });
            } else if part.get("thought").and_then(Value::as_bool) != Some(true)
                && let Some(text) = part.get("text").and_then(Value::as_str)
            {
                result.text.push_str(text);
            }
        }
        if let Some(reason) = string(candidate, "finishReason") {
            result.safety_filtered |= BLOCKED.contains(&reason.as_str());
            result.stop_reason.get_or_insert(reason);
        }
        let rated_blocked = candidate
            .get("safetyRatings")
            .and_then(Value::as_array)
            .is_some_and(|r| {
                r.iter()
                    .any(|r| r.get("blocked").and_then(Value::as_bool) == Some(true))
            });
        result.safety_filtered |= rated_blocked;
    }
    usage(
        body.get("usageMetadata").unwrap_or(&Value::Null),
        &mut result,
    );
    result.model_version = string(body, "modelVersion");
    result.model_used = result
        .model_version
        .as_deref()
        .map(|v| v.trim_start_matches("models/").to_string());
    result.request_id = string(body, "responseId");
    Ok(result)
}

/// The token counts of a `usageMetadata` object: output with the thoughts added.
pub(super) fn usage(usage: &Value, result: &mut CompletionResult) {
    result.input_tokens =
        count(usage, "promptTokenCount").saturating_add(count(usage, "toolUsePromptTokenCount"));
    result.cached_input_tokens = count(usage, "cachedContentTokenCount");
    result.thoughts_tokens = count(usage, "thoughtsTokenCount");
    result.output_tokens =
        count(usage, "candidatesTokenCount").saturating_add(result.thoughts_tokens);
}

pub(super) fn parse_error(body: &Value) -> ErrorBody {
    let error = body.get("error").unwrap_or(&Value::Null);
    let retry_delay = error
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|d| {
            d.get("retryDelay")
                .and_then(Value::as_str)
                .and_then(parse_proto_duration)
        });
    ErrorBody {
        error_type: string(error, "status"),
        message: string(error, "message"),
        request_id: None,
        retry_delay,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::{ResponseSchema, ToolSpec};
    use std::time::Duration;

    #[test]
    fn token_counts_at_the_largest_number_saturate() {
        let body = serde_json::json!({
            "candidates": [{"content": {"parts": [{"text": "hi"}], "role": "model"}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": u64::MAX, "toolUsePromptTokenCount": 3,
                              "candidatesTokenCount": u64::MAX, "thoughtsTokenCount": 7}
        });
        let result = parse(&body).unwrap();
        assert_eq!(
            (result.input_tokens, result.output_tokens),
            (u64::MAX, u64::MAX)
        );
    }

    #[test]
    fn schema_conversion() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "passed": {"type": "boolean", "description": "verdict"},
                "reasoning": {"type": ["string", "null"]},
                "kind": {"const": "verdict"},
                "score": {"$ref": "#/$defs/Score", "description": "how sure"},
                "tags": {"type": "array", "items": {"type": "string", "additionalProperties": false}},
                "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "numbers": {"enum": [1, 2]}
            },
            "required": ["passed"],
            "$defs": {"Score": {"type": "number", "minimum": 0, "maximum": 1, "exclusiveMaximum": 2}}
        });
        let out = to_gemini_schema(&schema);
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "passed": {"type": "boolean", "description": "verdict"},
                    "reasoning": {"nullable": true, "type": "string"},
                    "kind": {"enum": ["verdict"], "type": "string"},
                    "score": {"type": "number", "minimum": 0, "maximum": 1, "description": "how sure"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                    "numbers": {}
                },
                "propertyOrdering": ["passed", "reasoning", "kind", "score", "tags", "either", "numbers"],
                "required": ["passed"]
            })
        );
        // A self-referencing schema ends instead of recursing forever.
        let recursive = json!({"$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}, "$ref": "#/$defs/N"});
        assert!(to_gemini_schema(&recursive).to_string().len() < 10_000);
    }

    #[test]
    fn request_shape() {
        let mut request = CompletionRequest::new("gemini-2.5-flash", "Hi", 100);
        request.system = Some("Be brief.".into());
        request.temperature = Some(0.5);
        request.response_schema = Some(ResponseSchema {
            name: "v".into(),
            schema: json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        });
        request.tools = vec![
            ToolSpec {
                name: "none".into(),
                description: "no args".into(),
                input_schema: json!({"type": "object", "properties": {}}),
            },
            ToolSpec {
                name: "city".into(),
                description: "d".into(),
                input_schema: json!({"type": "object", "properties": {"c": {"type": "string"}}, "additionalProperties": false}),
            },
        ];
        request.push_tool_round(("call_0", "city"), json!({"c": "x"}), ("Oslo", true));
        let b = body(&request);
        assert_eq!(
            b["systemInstruction"],
            json!({"parts": [{"text": "Be brief."}]})
        );
        assert_eq!(b["generationConfig"]["maxOutputTokens"], 100);
        assert_eq!(b["generationConfig"]["temperature"].to_string(), "0.5");
        assert_eq!(
            b["generationConfig"]["responseMimeType"],
            "application/json"
        );
        assert_eq!(
            b["generationConfig"]["responseSchema"]["properties"]["a"]["type"],
            "string"
        );
        let decls = &b["tools"][0]["functionDeclarations"];
        assert!(decls[0].get("parameters").is_none());
        assert_eq!(
            decls[1]["parameters"],
            json!({"type": "object", "properties": {"c": {"type": "string"}}, "propertyOrdering": ["c"]})
        );
        assert_eq!(b["contents"][1]["role"], "model");
        assert_eq!(
            b["contents"][1]["parts"][0]["functionCall"]["args"]["c"],
            "x"
        );
        assert_eq!(
            b["contents"][2]["parts"][0]["functionResponse"],
            json!({"name": "city", "response": {"error": "Oslo"}})
        );
    }

    #[test]
    fn thoughts_function_calls_and_retry_info() {
        let body = json!({
            "candidates": [{"content": {"parts": [
                {"text": "thinking...", "thought": true},
                {"text": "Hello"},
                {"functionCall": {"name": "f", "args": {"x": 1}}},
                {"functionCall": {"name": "g", "args": {}, "id": "given"}}
            ]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 4, "thoughtsTokenCount": 6, "toolUsePromptTokenCount": 2},
            "modelVersion": "models/gemini-2.5-pro", "responseId": "r1"
        });
        let r = parse(&body).unwrap();
        assert_eq!(r.text, "Hello");
        assert_eq!(r.tool_calls[0].id, "call_0");
        assert_eq!(r.tool_calls[1].id, "given");
        assert_eq!(
            (r.input_tokens, r.output_tokens, r.thoughts_tokens),
            (12, 10, 6)
        );
        assert_eq!(r.model_used.as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(r.model_version.as_deref(), Some("models/gemini-2.5-pro"));
        let error = parse_error(
            &json!({"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure"},
                        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}]}}),
        );
        assert_eq!(error.retry_delay, Some(Duration::from_millis(1500)));
        assert_eq!(error.error_type.as_deref(), Some("RESOURCE_EXHAUSTED"));
        assert!(parse(&json!({"error": {}})).is_err());
    }
}
