//! Scripted answers: well-formed replies in each wire format, errors and faults.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::{CapturedRequest, Usage, Wire};

/// A fault that replaces a normal answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Close the socket without writing a response.
    DropConnection,
    /// Send the status, headers and the first half of the body, then close the connection mid-body.
    AbortBody,
    /// Send the body again and again, once per interval, and never end it: a body without end, fast
    /// (beyond any size cap) or slow (beyond any timeout).
    Endless(Duration),
    /// A stream's first event, then a pause, then the other events: a model slow after its first
    /// token.
    PauseAfterFirst(Duration),
}

/// A scripted answer: status, headers, body, an optional delay before answering and an optional fault.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Extra headers (a `content-type` is added for JSON bodies).
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
    /// How long to wait before answering (or before the fault).
    pub delay: Duration,
    /// A fault instead of (or in the middle of) the answer.
    pub fault: Option<Fault>,
}

/// What a well-formed answer says.
#[derive(Clone, Copy)]
enum Said<'a> {
    Text(&'a str),
    Call(&'a str, &'a Value),
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

impl Reply {
    /// A JSON body with `status`.
    pub fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: serde_json::to_vec(body).unwrap_or_default(),
            delay: Duration::ZERO,
            fault: None,
        }
    }

    /// Any bytes with `status` and `content_type`.
    pub fn raw(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
            fault: None,
        }
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers
            .push((name.to_ascii_lowercase(), value.to_string()));
        self
    }

    /// Waits `delay` before answering: a slow provider (beyond the client's timeout if long enough).
    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// A stream whose first event is sent at once and the others after `pause`.
    pub fn paused_after_first(mut self, pause: Duration) -> Self {
        self.fault = Some(Fault::PauseAfterFirst(pause));
        self
    }

    /// Sends half the body and then closes the connection (a reset mid-transfer).
    pub fn aborted_mid_body(mut self) -> Self {
        self.fault = Some(Fault::AbortBody);
        self
    }

    /// A body that never ends: `chunk` sent every `every` (chunked, no length), forever.
    pub fn endless(
        status: u16,
        content_type: &str,
        chunk: impl Into<Vec<u8>>,
        every: Duration,
    ) -> Self {
        Self {
            fault: Some(Fault::Endless(every)),
            ..Self::raw(status, content_type, chunk)
        }
    }

    /// Closes the socket without any response.
    pub fn drop_connection() -> Self {
        Self {
            fault: Some(Fault::DropConnection),
            ..Self::raw(200, "text/plain", Vec::new())
        }
    }

    /// A well-formed text answer in `wire`'s format, from `model`, with `usage`.
    pub fn text(wire: Wire, model: &str, text: &str, usage: Usage) -> Self {
        Self::completion(wire, model, Said::Text(text), usage)
    }

    /// A well-formed answer calling tool `name` with `arguments`, in `wire`'s format.
    pub fn tool_call(wire: Wire, model: &str, name: &str, arguments: &Value, usage: Usage) -> Self {
        Self::completion(wire, model, Said::Call(name, arguments), usage)
    }

    /// A well-formed answer saying `said` in `wire`'s format. Text answers carry a request id header;
    /// tool calls do not (as the fake has always answered).
    fn completion(wire: Wire, model: &str, said: Said<'_>, usage: Usage) -> Self {
        let id = next_id();
        let (block, stop, part, message, finish) = match said {
            Said::Text(text) => (
                json!({"type": "text", "text": text}),
                "end_turn",
                json!({"text": text}),
                json!({"role": "assistant", "content": text, "refusal": null}),
                "stop",
            ),
            Said::Call(name, arguments) => (
                json!({"type": "tool_use", "id": format!("toolu_fake_{id}"), "name": name, "input": arguments}),
                "tool_use",
                json!({"functionCall": {"name": name, "args": arguments}}),
                json!({
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [{
                        "id": format!("call_fake_{id}"),
                        "type": "function",
                        "function": {"name": name, "arguments": arguments.to_string()}
                    }]
                }),
                "tool_calls",
            ),
        };
        let reply = match wire {
            Wire::Anthropic => Self::json(
                200,
                &json!({
                    "id": format!("msg_fake_{id}"),
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [block],
                    "stop_reason": stop,
                    "stop_sequence": null,
                    "usage": anthropic_usage(usage),
                }),
            ),
            Wire::Gemini => Self::json(
                200,
                &json!({
                    "candidates": [{
                        "content": {"parts": [part], "role": "model"},
                        "finishReason": "STOP",
                        "index": 0
                    }],
                    "modelVersion": model,
                    "responseId": format!("fake-{id}"),
                    "usageMetadata": gemini_usage(usage),
                }),
            ),
            Wire::OpenAi => Self::json(
                200,
                &json!({
                    "id": format!("chatcmpl-fake-{id}"),
                    "object": "chat.completion",
                    "created": 1_700_000_000u64,
                    "model": model,
                    "system_fingerprint": "fp_fake",
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": openai_usage(usage),
                }),
            ),
        };
        match (said, wire) {
            (Said::Text(_), Wire::Anthropic) => {
                reply.with_header("request-id", &format!("req_fake_{id}"))
            }
            (Said::Text(_), Wire::OpenAi) => {
                reply.with_header("x-request-id", &format!("req_fake_{id}"))
            }
            _ => reply,
        }
    }

    /// A well-formed embeddings answer in `wire`'s format (OpenAI `/embeddings`, Gemini
    /// `embedContent`), from `model`, with `input_tokens` (Gemini's answer carries it as
    /// `usageMetadata.promptTokenCount`).
    pub fn embedding(wire: Wire, model: &str, vector: &[f32], input_tokens: u64) -> Self {
        match wire {
            Wire::Gemini => Self::json(
                200,
                &json!({
                    "embedding": {"values": vector},
                    "usageMetadata": {"promptTokenCount": input_tokens}
                }),
            ),
            _ => Self::json(
                200,
                &json!({
                    "object": "list",
                    "model": model,
                    "data": [{"object": "embedding", "index": 0, "embedding": vector}],
                    "usage": {"prompt_tokens": input_tokens, "total_tokens": input_tokens}
                }),
            )
            .with_header("x-request-id", &format!("req_fake_{}", next_id())),
        }
    }

    /// A well-formed answer embedding several texts: OpenAI's `data` list (one entry per vector, in
    /// order), Gemini's `batchEmbedContents` answer (`embeddings[].values`).
    pub fn embeddings(wire: Wire, model: &str, vectors: &[Vec<f32>], input_tokens: u64) -> Self {
        match wire {
            Wire::Gemini => Self::json(
                200,
                &json!({"embeddings": vectors.iter().map(|v| json!({"values": v})).collect::<Vec<_>>()}),
            ),
            _ => Self::json(
                200,
                &json!({
                    "object": "list",
                    "model": model,
                    "data": vectors.iter().enumerate().map(|(index, v)| {
                        json!({"object": "embedding", "index": index, "embedding": v})
                    }).collect::<Vec<_>>(),
                    "usage": {"prompt_tokens": input_tokens, "total_tokens": input_tokens}
                }),
            )
            .with_header("x-request-id", &format!("req_fake_{}", next_id())),
        }
    }

    /// The embeddings answer to `request`: [`fake_embedding`](crate::fake_embedding) of each text it
    /// asks to embed (a Gemini batch or an OpenAI list gets one per text), one input token per word.
    /// Unknown paths get a 404.
    pub fn embedding_of(request: &CapturedRequest) -> Self {
        let (Some(wire), texts) = (request.wire(), request.embedding_inputs()) else {
            return Self::not_found(request);
        };
        if texts.is_empty() {
            return Self::not_found(request);
        }
        let model = request
            .model()
            .unwrap_or_else(|| "fake-embedding".to_string());
        let tokens = texts
            .iter()
            .map(|t| (t.split_whitespace().count() as u64).max(1))
            .sum();
        let vectors: Vec<Vec<f32>> = texts.iter().map(|t| crate::fake_embedding(t)).collect();
        let batch = request.path.contains(":batchEmbedContents")
            || request.json.as_ref().is_some_and(|j| j["input"].is_array());
        if batch {
            Self::embeddings(wire, &model, &vectors, tokens)
        } else {
            Self::embedding(wire, &model, &vectors[0], tokens)
        }
    }

    /// This reply as `request` receives it from the fake: a 200 JSON completion to a request that asks
    /// for a stream ([`CapturedRequest::wants_stream`]) becomes that wire's stream of events (Gemini
    /// without `alt=sse`: a JSON array of chunks) with the same content and usage; anything else (an
    /// error, a body already streamed) is unchanged.
    pub fn streamed_for(self, request: &CapturedRequest) -> Self {
        crate::stream::for_request(self, request)
    }

    /// An answer to `request` in its own wire format and model: `text` as plain text, with usage
    /// estimated from the sizes of the request and of `text`. Unknown paths get a 404.
    pub fn answer(request: &CapturedRequest, text: &str) -> Self {
        let Some(wire) = request.wire() else {
            return Self::not_found(request);
        };
        let model = request.model().unwrap_or_else(|| "fake-model".to_string());
        Self::text(wire, &model, text, estimate_usage(request, text))
    }

    /// A structured answer to `request`: for Anthropic a call of the tool the request forces (or of a
    /// tool named `result`), for Gemini and OpenAI the JSON text of `value`.
    pub fn structured(request: &CapturedRequest, value: &Value) -> Self {
        let Some(wire) = request.wire() else {
            return Self::not_found(request);
        };
        let model = request.model().unwrap_or_else(|| "fake-model".to_string());
        let text = value.to_string();
        let usage = estimate_usage(request, &text);
        match wire {
            Wire::Anthropic => {
                let tool = request
                    .forced_tool()
                    .unwrap_or_else(|| "result".to_string());
                Self::tool_call(wire, &model, &tool, value, usage)
            }
            Wire::Gemini | Wire::OpenAi => Self::text(wire, &model, &text, usage),
        }
    }

    fn not_found(request: &CapturedRequest) -> Self {
        Self::json(
            404,
            &json!({"error": {"message": format!("no route for {}", request.path)}}),
        )
    }

    /// An error in `wire`'s error body shape.
    pub fn error(wire: Wire, status: u16, error_type: &str, message: &str) -> Self {
        let id = next_id();
        match wire {
            Wire::Anthropic => Self::json(
                status,
                &json!({"type": "error", "error": {"type": error_type, "message": message}, "request_id": format!("req_fake_{id}")}),
            )
            .with_header("request-id", &format!("req_fake_{id}")),
            Wire::Gemini => Self::json(
                status,
                &json!({"error": {"code": status, "message": message, "status": error_type}}),
            ),
            Wire::OpenAi => Self::json(
                status,
                &json!({"error": {"message": message, "type": error_type, "param": null, "code": null}}),
            )
            .with_header("x-request-id", &format!("req_fake_{id}")),
        }
    }

    /// A 429 asking to retry after `after`: a `retry-after` header in whole seconds (rounded up) and a
    /// `retry-after-ms` header for Anthropic and OpenAI; Gemini carries it as `RetryInfo.retryDelay`
    /// in the body, as the real API does.
    pub fn rate_limited(wire: Wire, after: Duration) -> Self {
        let secs = after.as_millis().div_ceil(1000).to_string();
        let ms = after.as_millis().to_string();
        match wire {
            Wire::Anthropic => Self::error(
                wire,
                429,
                "rate_limit_error",
                "Number of requests has exceeded your rate limit",
            )
            .with_header("retry-after", &secs)
            .with_header("retry-after-ms", &ms),
            Wire::OpenAi => Self::error(wire, 429, "requests", "Rate limit reached for requests")
                .with_header("retry-after", &secs)
                .with_header("retry-after-ms", &ms),
            Wire::Gemini => Self::json(
                429,
                &json!({"error": {
                    "code": 429,
                    "message": "Resource has been exhausted (e.g. check quota).",
                    "status": "RESOURCE_EXHAUSTED",
                    "details": [{
                        "@type": "type.googleapis.com/google.rpc.RetryInfo",
                        "retryDelay": format!("{}s", after.as_secs_f64())
                    }]
                }}),
            ),
        }
    }

    /// A 429 whose `retry-after` header gives `after` in seconds as a decimal (`0.5`), with no
    /// `retry-after-ms`; Gemini carries it as `RetryInfo.retryDelay`.
    pub fn rate_limited_secs(wire: Wire, after: Duration) -> Self {
        let mut reply = Self::rate_limited(wire, after);
        reply
            .headers
            .retain(|(name, _)| name != "retry-after" && name != "retry-after-ms");
        match wire {
            Wire::Gemini => reply,
            _ => reply.with_header("retry-after", &after.as_secs_f64().to_string()),
        }
    }

    /// A server error (`500`, `502`, `503`, `504`, ...) in `wire`'s error shape.
    pub fn server_error(wire: Wire, status: u16) -> Self {
        let (kind, message) = match (wire, status) {
            (Wire::Anthropic, _) => ("api_error", "Internal server error"),
            (Wire::Gemini, 503) => (
                "UNAVAILABLE",
                "The model is overloaded. Please try again later.",
            ),
            (Wire::Gemini, _) => ("INTERNAL", "An internal error has occurred."),
            (Wire::OpenAi, _) => (
                "server_error",
                "The server had an error while processing your request.",
            ),
        };
        Self::error(wire, status, kind, message)
    }

    /// Anthropic's 529 `overloaded_error`.
    pub fn overloaded() -> Self {
        Self::error(Wire::Anthropic, 529, "overloaded_error", "Overloaded")
    }

    /// A 200 whose body is not JSON (an HTML error page from a proxy).
    pub fn malformed() -> Self {
        Self::raw(
            200,
            "text/html",
            "<html><body><h1>502 Bad Gateway</h1><p>upstream sent nonsense</p></body></html>",
        )
    }

    /// A 200 whose JSON body is cut in half (well-formed HTTP, broken JSON).
    pub fn truncated(wire: Wire) -> Self {
        let mut reply = Self::text(
            wire,
            "fake-model",
            "this answer will be cut short",
            Usage::new(10, 6),
        );
        let half = reply.body.len() / 2;
        reply.body.truncate(half);
        reply
    }
}

fn anthropic_usage(u: Usage) -> Value {
    json!({
        "input_tokens": u.input_tokens.saturating_sub(u.cached_input_tokens),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": u.cached_input_tokens,
        "output_tokens": u.output_tokens,
    })
}

fn gemini_usage(u: Usage) -> Value {
    let mut usage = json!({
        "promptTokenCount": u.input_tokens,
        "candidatesTokenCount": u.output_tokens.saturating_sub(u.thoughts_tokens),
        "totalTokenCount": u.input_tokens.saturating_add(u.output_tokens),
    });
    if u.cached_input_tokens > 0 {
        usage["cachedContentTokenCount"] = json!(u.cached_input_tokens);
    }
    if u.thoughts_tokens > 0 {
        usage["thoughtsTokenCount"] = json!(u.thoughts_tokens);
    }
    usage
}

fn openai_usage(u: Usage) -> Value {
    json!({
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens.saturating_add(u.output_tokens),
        "prompt_tokens_details": {"cached_tokens": u.cached_input_tokens},
        "completion_tokens_details": {"reasoning_tokens": u.thoughts_tokens},
    })
}

/// A deterministic stand-in for a tokenizer: about four bytes of request per prompt token, one token
/// per word of answer.
pub(crate) fn estimate_usage(request: &CapturedRequest, text: &str) -> Usage {
    Usage::new(
        (request.body.len() as u64 / 4).max(1),
        (text.split_whitespace().count() as u64).max(1),
    )
}
