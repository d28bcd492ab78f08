//! What the fake captured of one request, and the questions tests ask of it.

use std::time::Instant;

use serde_json::Value;

use crate::Wire;

/// One request the fake received.
#[derive(Debug, Clone)]
pub struct CapturedRequest {
    /// Its position among the requests received, from 0.
    pub index: usize,
    /// The HTTP method.
    pub method: String,
    /// The path and query, as sent (`/v1/messages`, `/v1beta/models/m:generateContent`).
    pub path: String,
    /// The headers, names lower-cased, in the order received.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub body: Vec<u8>,
    /// The body parsed as JSON, when it is JSON.
    pub json: Option<Value>,
    /// When it arrived.
    pub received_at: Instant,
}

impl CapturedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The wire format its path belongs to.
    pub fn wire(&self) -> Option<Wire> {
        Wire::of_path(&self.path)
    }

    /// The model asked for: the body's `model`, or Gemini's path segment.
    pub fn model(&self) -> Option<String> {
        if let Some(model) = self
            .json
            .as_ref()
            .and_then(|j| j.get("model"))
            .and_then(Value::as_str)
        {
            // Gemini's embedContent body names it `models/{model}`.
            return Some(model.trim_start_matches("models/").to_string());
        }
        let path = self.path.split('?').next()?;
        let start = path.find("/models/")? + "/models/".len();
        let end = start + path[start..].find(':')?;
        path.get(start..end).map(str::to_string)
    }

    /// Whether this is an embeddings call (OpenAI `/embeddings`, Gemini `:embedContent`).
    pub fn is_embedding(&self) -> bool {
        Wire::is_embeddings_path(&self.path)
    }

    /// The text an embeddings call asks to embed: OpenAI's `input` (a string, or the first of a list),
    /// Gemini's `content.parts[].text` joined (the first request's of a batch).
    pub fn embedding_input(&self) -> Option<String> {
        self.embedding_inputs().into_iter().next()
    }

    /// Every text an embeddings call asks to embed, in order: OpenAI's `input` (a string or a list of
    /// them), Gemini's `content` (`:embedContent`) or each of its `requests` (`:batchEmbedContents`).
    /// Empty when it is not an embeddings call.
    pub fn embedding_inputs(&self) -> Vec<String> {
        let (true, Some(json), Some(wire)) = (self.is_embedding(), self.json.as_ref(), self.wire())
        else {
            return Vec::new();
        };
        match wire {
            Wire::Gemini => match json.get("requests").and_then(Value::as_array) {
                Some(requests) => requests
                    .iter()
                    .map(|r| text_of(&r["content"]["parts"]))
                    .collect(),
                None => json
                    .get("content")
                    .and_then(|c| c.get("parts"))
                    .map(text_of)
                    .into_iter()
                    .collect(),
            },
            _ => match json.get("input") {
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(items)) => items
                    .iter()
                    .map_while(|i| i.as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            },
        }
    }

    /// Whether the request asks for a streamed answer (`"stream": true`, or Gemini's
    /// `:streamGenerateContent`); the fake then streams its answer in the wire's events.
    pub fn wants_stream(&self) -> bool {
        crate::stream::streaming(self).is_some()
    }

    /// The names of the tools the request offers, in order (OpenAI `tools[].function.name`, Anthropic
    /// `tools[].name`, Gemini `tools[].functionDeclarations[].name`).
    pub fn offered_tools(&self) -> Vec<String> {
        let (Some(json), Some(wire)) = (self.json.as_ref(), self.wire()) else {
            return Vec::new();
        };
        let tools = json["tools"].as_array().cloned().unwrap_or_default();
        let names = |values: &[Value], pointer: &str| -> Vec<String> {
            values
                .iter()
                .filter_map(|t| t.pointer(pointer).and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        };
        match wire {
            Wire::OpenAi => names(&tools, "/function/name"),
            Wire::Anthropic => names(&tools, "/name"),
            Wire::Gemini => tools
                .iter()
                .flat_map(|t| {
                    names(
                        t["functionDeclarations"].as_array().map_or(&[], |d| d),
                        "/name",
                    )
                })
                .collect(),
        }
    }

    /// The result of a tool call when it is the request's last message (OpenAI's `tool` message,
    /// Anthropic's `tool_result` block, Gemini's `functionResponse` part), as text (a JSON result as
    /// its JSON text).
    pub fn last_tool_result(&self) -> Option<String> {
        let json = self.json.as_ref()?;
        match self.wire()? {
            Wire::OpenAi => {
                let last = json.get("messages")?.as_array()?.last()?;
                (last["role"] == "tool").then(|| text_or_json(&last["content"]))
            }
            Wire::Anthropic => {
                let last = json.get("messages")?.as_array()?.last()?;
                let block = last["content"]
                    .as_array()?
                    .iter()
                    .rev()
                    .find(|b| b["type"] == "tool_result")?;
                Some(text_or_json(&block["content"]))
            }
            Wire::Gemini => {
                let last = json.get("contents")?.as_array()?.last()?;
                let part = last["parts"]
                    .as_array()?
                    .iter()
                    .rev()
                    .find_map(|p| p.get("functionResponse"))?;
                Some(part["response"].to_string())
            }
        }
    }

    /// The text of the last user message, whatever the wire format.
    pub fn last_user_text(&self) -> Option<String> {
        let json = self.json.as_ref()?;
        match self.wire()? {
            Wire::Anthropic | Wire::OpenAi => {
                let message = last_user(json.get("messages")?)?;
                Some(text_of(&message["content"]))
            }
            Wire::Gemini => {
                let content = last_user(json.get("contents")?)?;
                let parts = content.get("parts")?.as_array()?;
                Some(
                    parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect(),
                )
            }
        }
    }

    /// The tool an Anthropic request forces (`tool_choice: {"type": "tool", "name": ...}`).
    pub fn forced_tool(&self) -> Option<String> {
        let choice = self.json.as_ref()?.get("tool_choice")?;
        (choice.get("type")? == "tool").then(|| choice.get("name")?.as_str().map(str::to_string))?
    }

    /// Whether the request asks for structured output (a forced Anthropic tool, an OpenAI
    /// `response_format`, or a Gemini `responseMimeType` of JSON).
    pub fn wants_structured(&self) -> bool {
        let Some(json) = self.json.as_ref() else {
            return false;
        };
        match self.wire() {
            Some(Wire::Anthropic) => self.forced_tool().is_some(),
            Some(Wire::OpenAi) => json
                .get("response_format")
                .is_some_and(|f| f["type"] != "text"),
            Some(Wire::Gemini) => {
                json["generationConfig"]["responseMimeType"] == "application/json"
            }
            None => false,
        }
    }
}

/// Panics, showing both, unless the `messages` of the OpenAI-compatible request `body` are exactly
/// `expected`: one `{"role", "content"}` object per `(role, content)`, in order, each content a string.
#[track_caller]
pub fn assert_chat_messages(body: &Value, expected: &[(&str, &str)]) {
    let expected: Vec<Value> = expected
        .iter()
        .map(|(role, content)| serde_json::json!({ "role": role, "content": content }))
        .collect();
    assert_eq!(body["messages"], Value::Array(expected), "{body}");
}

/// A tool result's text: a string as it is, a list of text parts joined, anything else as JSON.
fn text_or_json(content: &Value) -> String {
    match content {
        Value::String(_) | Value::Array(_) => text_of(content),
        other => other.to_string(),
    }
}

/// Text of a message `content` that is either a string or a list of text parts.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// The last message of `messages` (a JSON array) in the user's role.
fn last_user(messages: &Value) -> Option<&Value> {
    messages
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
}
