//! A fake model provider on 127.0.0.1 for prompt-tester's own tests and benchmarks.
//!
//! One server speaks the three wire formats prompt-tester calls, told apart by path:
//! Anthropic `POST /v1/messages`, Gemini `POST /v1beta/models/{model}:generateContent` and
//! OpenAI-compatible `POST /v1/chat/completions`. It captures every request (method, path, headers,
//! body), answers from a queue of scripted [`Reply`]s first, then from a responder closure (by default an
//! echo that answers well-formed responses with usage), and can inject every fault a real provider
//! shows: 429 with `retry-after`, 500/503/529, slow answers, dropped connections, bodies cut mid-way,
//! malformed and truncated JSON. Like a real provider's concurrency limit, it can answer 429 to every
//! request that arrives while N others are being answered ([`Builder::reject_beyond`]).
//!
//! It runs its own tokio runtime on a background thread, so synchronous callers (libtest trials,
//! benchmarks) and async tests alike can use it; dropping the [`FakeProvider`] stops it and closes
//! every connection.
//!
//! It knows nothing of prompt-tester: it speaks JSON only, so it tests the wire, not the library's types.
//!
//! ```
//! use prompt_tester_testkit::{FakeProvider, Reply, Wire};
//! use std::time::Duration;
//!
//! let fake = FakeProvider::builder().echo_text("Paris").latency(Duration::from_millis(5)).start();
//! fake.push(Reply::rate_limited(Wire::OpenAi, Duration::from_millis(100)));
//! let base = fake.base_url(Wire::OpenAi); // http://127.0.0.1:PORT/v1
//! assert!(base.ends_with("/v1"));
//! assert_eq!(fake.request_count(), 0);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The three wire formats the fake speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Wire {
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
    /// Google Gemini (`POST /v1beta/models/{model}:generateContent`).
    Gemini,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenAi,
}

impl Wire {
    /// The wire format a request path belongs to.
    pub fn of_path(path: &str) -> Option<Wire> {
        let path = path.split('?').next().unwrap_or(path);
        if path.ends_with("/messages") {
            Some(Wire::Anthropic)
        } else if path.contains(":generateContent") {
            Some(Wire::Gemini)
        } else if path.ends_with("/chat/completions") {
            Some(Wire::OpenAi)
        } else {
            None
        }
    }
}

/// Token counts of a fake answer, in prompt-tester's convention: `input_tokens` includes the cached
/// ones and `output_tokens` includes the thinking ones. Each wire format gets them in its own shape
/// (Anthropic's `input_tokens` excludes cache reads; Gemini's `candidatesTokenCount` excludes thoughts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Every prompt token, cached ones included.
    pub input_tokens: u64,
    /// Every generated token, thinking included.
    pub output_tokens: u64,
    /// Prompt tokens read from the cache.
    pub cached_input_tokens: u64,
    /// Thinking tokens.
    pub thoughts_tokens: u64,
}

impl Usage {
    /// Plain input and output counts.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            ..Self::default()
        }
    }
}

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
            return Some(model.to_string());
        }
        let path = self.path.split('?').next()?;
        let start = path.find("/models/")? + "/models/".len();
        let end = path.find(":generateContent")?;
        path.get(start..end).map(str::to_string)
    }

    /// The text of the last user message, whatever the wire format.
    pub fn last_user_text(&self) -> Option<String> {
        let json = self.json.as_ref()?;
        match self.wire()? {
            Wire::Anthropic | Wire::OpenAi => {
                let message = json
                    .get("messages")?
                    .as_array()?
                    .iter()
                    .rev()
                    .find(|m| m["role"] == "user")?;
                Some(text_of(&message["content"]))
            }
            Wire::Gemini => {
                let content = json
                    .get("contents")?
                    .as_array()?
                    .iter()
                    .rev()
                    .find(|m| m["role"] == "user")?;
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

/// A fault that replaces a normal answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Close the socket without writing a response.
    DropConnection,
    /// Send the status, headers and the first half of the body, then close the connection mid-body.
    AbortBody,
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

    /// Sends half the body and then closes the connection (a reset mid-transfer).
    pub fn aborted_mid_body(mut self) -> Self {
        self.fault = Some(Fault::AbortBody);
        self
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
        let id = next_id();
        match wire {
            Wire::Anthropic => Self::json(
                200,
                &json!({
                    "id": format!("msg_fake_{id}"),
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "stop_sequence": null,
                    "usage": anthropic_usage(usage),
                }),
            )
            .with_header("request-id", &format!("req_fake_{id}")),
            Wire::Gemini => Self::json(
                200,
                &json!({
                    "candidates": [{
                        "content": {"parts": [{"text": text}], "role": "model"},
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
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": text, "refusal": null},
                        "finish_reason": "stop"
                    }],
                    "usage": openai_usage(usage),
                }),
            )
            .with_header("x-request-id", &format!("req_fake_{id}")),
        }
    }

    /// A well-formed answer calling tool `name` with `arguments`, in `wire`'s format.
    pub fn tool_call(wire: Wire, model: &str, name: &str, arguments: &Value, usage: Usage) -> Self {
        let id = next_id();
        match wire {
            Wire::Anthropic => Self::json(
                200,
                &json!({
                    "id": format!("msg_fake_{id}"),
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "tool_use", "id": format!("toolu_fake_{id}"), "name": name, "input": arguments}],
                    "stop_reason": "tool_use",
                    "stop_sequence": null,
                    "usage": anthropic_usage(usage),
                }),
            ),
            Wire::Gemini => Self::json(
                200,
                &json!({
                    "candidates": [{
                        "content": {"parts": [{"functionCall": {"name": name, "args": arguments}}], "role": "model"},
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
                    "choices": [{
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": null,
                            "tool_calls": [{
                                "id": format!("call_fake_{id}"),
                                "type": "function",
                                "function": {"name": name, "arguments": arguments.to_string()}
                            }]
                        },
                        "finish_reason": "tool_calls"
                    }],
                    "usage": openai_usage(usage),
                }),
            ),
        }
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
        "totalTokenCount": u.input_tokens + u.output_tokens,
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
        "total_tokens": u.input_tokens + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cached_input_tokens},
        "completion_tokens_details": {"reasoning_tokens": u.thoughts_tokens},
    })
}

/// A deterministic stand-in for a tokenizer: about four bytes of request per prompt token, one token
/// per word of answer.
fn estimate_usage(request: &CapturedRequest, text: &str) -> Usage {
    Usage::new(
        (request.body.len() as u64 / 4).max(1),
        (text.split_whitespace().count() as u64).max(1),
    )
}

/// Decides the reply to a request the scripted queue did not answer.
pub type Responder = Arc<dyn Fn(&CapturedRequest) -> Reply + Send + Sync>;

/// The default responder: answers every request well-formed in its own wire format.
#[derive(Debug, Clone, Default)]
pub struct Echo {
    /// The answer's text; `None` echoes the last user message as `echo: <text>`.
    pub text: Option<String>,
    /// A fixed latency before each answer.
    pub latency: Duration,
    /// Fixed token counts; `None` estimates them from the sizes of the request and the answer.
    pub usage: Option<Usage>,
}

impl Echo {
    /// The reply this echo gives to `request`. A request for structured output gets the JSON object
    /// `{"echo": <text>}` (a forced tool call for Anthropic).
    pub fn reply(&self, request: &CapturedRequest) -> Reply {
        let text = match &self.text {
            Some(text) => text.clone(),
            None => format!("echo: {}", request.last_user_text().unwrap_or_default()),
        };
        let mut reply = if request.wants_structured() {
            Reply::structured(request, &json!({ "echo": text }))
        } else {
            Reply::answer(request, &text)
        };
        if let (Some(usage), Some(wire)) = (self.usage, request.wire()) {
            let model = request.model().unwrap_or_else(|| "fake-model".to_string());
            reply = if request.wants_structured() {
                match wire {
                    Wire::Anthropic => Reply::tool_call(
                        wire,
                        &model,
                        &request.forced_tool().unwrap_or_else(|| "result".into()),
                        &json!({ "echo": text }),
                        usage,
                    ),
                    _ => Reply::text(wire, &model, &json!({ "echo": text }).to_string(), usage),
                }
            } else {
                Reply::text(wire, &model, &text, usage)
            };
        }
        reply.delayed(self.latency)
    }

    /// This echo as a [`Responder`].
    pub fn responder(self) -> Responder {
        Arc::new(move |request| self.reply(request))
    }
}

struct State {
    capture: bool,
    requests: Mutex<Vec<CapturedRequest>>,
    queue: Mutex<VecDeque<Reply>>,
    responder: Mutex<Responder>,
    received: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// Requests beyond this many being answered get a 429 asking to retry after the duration.
    reject_beyond: Option<(usize, Duration)>,
    /// Requests being answered (not rejected) now.
    admitted: AtomicUsize,
    max_admitted: AtomicUsize,
    rejected: AtomicUsize,
}

/// A poisoned lock only means a responder panicked in another connection; the data is still usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts a request as in flight until it is answered or its connection is dropped.
struct InFlight(Arc<State>);

impl InFlight {
    fn enter(state: &Arc<State>) -> Self {
        let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        state.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Self(state.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A request admitted under [`Builder::reject_beyond`], until it is answered.
struct Admitted(Arc<State>);

impl Admitted {
    /// Admits the request, or `None` when `limit` others are being answered.
    fn enter(state: &Arc<State>, limit: usize) -> Option<Self> {
        let now = state.admitted.fetch_add(1, Ordering::SeqCst) + 1;
        if now > limit {
            state.admitted.fetch_sub(1, Ordering::SeqCst);
            state.rejected.fetch_add(1, Ordering::SeqCst);
            return None;
        }
        state.max_admitted.fetch_max(now, Ordering::SeqCst);
        Some(Self(state.clone()))
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.admitted.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Configures a [`FakeProvider`] before it starts.
pub struct Builder {
    echo: Echo,
    responder: Option<Responder>,
    capture: bool,
    reject_beyond: Option<(usize, Duration)>,
}

impl Builder {
    /// The echo's fixed answer text.
    pub fn echo_text(mut self, text: impl Into<String>) -> Self {
        self.echo.text = Some(text.into());
        self
    }

    /// The echo's fixed latency.
    pub fn latency(mut self, latency: Duration) -> Self {
        self.echo.latency = latency;
        self
    }

    /// The echo's fixed token counts.
    pub fn usage(mut self, usage: Usage) -> Self {
        self.echo.usage = Some(usage);
        self
    }

    /// Answers with `responder` instead of the echo.
    pub fn respond_with(
        mut self,
        responder: impl Fn(&CapturedRequest) -> Reply + Send + Sync + 'static,
    ) -> Self {
        self.responder = Some(Arc::new(responder));
        self
    }

    /// Whether to keep every request (on by default; a benchmark of many calls may turn it off and
    /// still read [`FakeProvider::request_count`] and [`FakeProvider::max_concurrent`]).
    pub fn capture(mut self, capture: bool) -> Self {
        self.capture = capture;
        self
    }

    /// Answers 429 ([`Reply::rate_limited_secs`], asking to retry after `retry_after`) to every request
    /// that arrives while `limit` others are being answered, as a provider limiting concurrency does.
    pub fn reject_beyond(mut self, limit: usize, retry_after: Duration) -> Self {
        self.reject_beyond = Some((limit, retry_after));
        self
    }

    /// Starts the server on an ephemeral port of 127.0.0.1.
    pub fn try_start(self) -> std::io::Result<FakeProvider> {
        let responder = self.responder.unwrap_or_else(|| self.echo.responder());
        let state = Arc::new(State {
            capture: self.capture,
            requests: Mutex::new(Vec::new()),
            queue: Mutex::new(VecDeque::new()),
            responder: Mutex::new(responder),
            received: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            reject_beyond: self.reject_beyond,
            admitted: AtomicUsize::new(0),
            max_admitted: AtomicUsize::new(0),
            rejected: AtomicUsize::new(0),
        });
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server_state = state.clone();
        let thread = std::thread::Builder::new()
            .name("fake-provider".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = addr_tx.send(Err(e));
                        return;
                    }
                };
                runtime.block_on(serve(server_state, addr_tx, stop_rx));
                // Dropping the runtime here cancels every connection task, which closes their sockets.
            })?;
        let addr = addr_rx.recv().map_err(|_| {
            std::io::Error::other("the fake provider's thread ended before binding")
        })??;
        Ok(FakeProvider {
            addr,
            state,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// Starts the server; panics if 127.0.0.1 cannot be bound (a test fixture, not library code).
    pub fn start(self) -> FakeProvider {
        self.try_start().expect("the fake provider binds 127.0.0.1")
    }
}

async fn serve(
    state: Arc<State>,
    addr_tx: std::sync::mpsc::Sender<std::io::Result<SocketAddr>>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", 0)).await {
        Ok(listener) => listener,
        Err(e) => {
            let _ = addr_tx.send(Err(e));
            return;
        }
    };
    let _ = addr_tx.send(listener.local_addr());
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(serve_connection(stream, state.clone()));
                }
            }
        }
    }
}

async fn serve_connection(stream: tokio::net::TcpStream, state: Arc<State>) {
    // A handler that must drop the connection signals here; dropping the connection future closes
    // the socket without a response, which axum's own server loop would not allow.
    let kill = Arc::new(Notify::new());
    let service = {
        let kill = kill.clone();
        service_fn(move |request| handle(request, state.clone(), kill.clone()))
    };
    let connection =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = connection => {}
        _ = kill.notified() => {}
    }
}

async fn handle(
    request: Request<Incoming>,
    state: Arc<State>,
    kill: Arc<Notify>,
) -> Result<Response<ReplyBody>, Infallible> {
    let _in_flight = InFlight::enter(&state);
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes().to_vec())
        .unwrap_or_default();
    let captured = CapturedRequest {
        index: state.received.fetch_add(1, Ordering::SeqCst),
        method: parts.method.to_string(),
        path: parts
            .uri
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_else(|| parts.uri.path().to_string()),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        json: serde_json::from_slice(&body).ok(),
        body,
        received_at: Instant::now(),
    };
    if state.capture {
        lock(&state.requests).push(captured.clone());
    }
    let admitted = match state.reject_beyond {
        Some((limit, after)) => match Admitted::enter(&state, limit) {
            Some(admitted) => Some(admitted),
            None => {
                let wire = captured.wire().unwrap_or(Wire::OpenAi);
                return Ok(respond(Reply::rate_limited_secs(wire, after)));
            }
        },
        None => None,
    };
    let scripted = lock(&state.queue).pop_front();
    let reply = match scripted {
        Some(reply) => reply,
        None => {
            let responder = lock(&state.responder).clone();
            responder(&captured)
        }
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    if reply.fault == Some(Fault::DropConnection) {
        kill.notify_one();
        std::future::pending::<()>().await;
    }
    drop(admitted);
    Ok(respond(reply))
}

/// The HTTP response for `reply`.
fn respond(reply: Reply) -> Response<ReplyBody> {
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(name.as_str(), value.as_str());
    }
    let body = match reply.fault {
        Some(Fault::AbortBody) => {
            let half = reply.body.len() / 2;
            ReplyBody {
                data: Some(Bytes::copy_from_slice(&reply.body[..half])),
                abort: true,
                pause: None,
            }
        }
        _ => ReplyBody {
            data: Some(Bytes::from(reply.body)),
            abort: false,
            pause: None,
        },
    };
    response.body(body).unwrap_or_else(|e| {
        Response::builder()
            .status(500)
            .body(ReplyBody {
                data: Some(Bytes::from(format!(
                    "fake provider: bad scripted reply: {e}"
                ))),
                ..ReplyBody::default()
            })
            .unwrap_or_default()
    })
}

/// A response body: the bytes, then (for [`Fault::AbortBody`]) a short pause, so that hyper flushes
/// what it has, and an error that makes hyper close the connection mid-body.
#[derive(Default)]
pub struct ReplyBody {
    data: Option<Bytes>,
    abort: bool,
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Body for ReplyBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(data) = self.data.take() {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        if self.abort {
            let pause = self
                .pause
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(Duration::from_millis(20))));
            if pause.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.abort = false;
            return Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "fake provider aborts the body",
            ))));
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none() && !self.abort
    }

    fn size_hint(&self) -> SizeHint {
        match (&self.data, self.abort) {
            // An aborted body has no known length, so hyper sends it chunked and the cut shows.
            (_, true) => SizeHint::default(),
            (Some(data), false) => SizeHint::with_exact(data.len() as u64),
            (None, false) => SizeHint::with_exact(0),
        }
    }
}

/// A fake provider listening on 127.0.0.1. Dropping it stops the server.
pub struct FakeProvider {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for FakeProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeProvider")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl FakeProvider {
    /// A fake with the default echo responder (no latency, estimated usage).
    pub fn start() -> Self {
        Self::builder().start()
    }

    /// A builder, to set the echo's text, latency and usage, or a responder.
    pub fn builder() -> Builder {
        Builder {
            echo: Echo::default(),
            responder: None,
            capture: true,
            reject_beyond: None,
        }
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The base URL a client of `wire` is configured with: the root for Anthropic and Gemini,
    /// `.../v1` for OpenAI-compatible clients (which append `/chat/completions`).
    pub fn base_url(&self, wire: Wire) -> String {
        match wire {
            Wire::Anthropic | Wire::Gemini => self.url(),
            Wire::OpenAi => format!("{}/v1", self.url()),
        }
    }

    /// Queues a scripted reply; queued replies answer requests in order before the responder does.
    pub fn push(&self, reply: Reply) {
        lock(&self.state.queue).push_back(reply);
    }

    /// Queues several scripted replies.
    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) {
        lock(&self.state.queue).extend(replies);
    }

    /// Scripted replies not yet used.
    pub fn queued(&self) -> usize {
        lock(&self.state.queue).len()
    }

    /// Replaces the responder.
    pub fn respond_with(
        &self,
        responder: impl Fn(&CapturedRequest) -> Reply + Send + Sync + 'static,
    ) {
        *lock(&self.state.responder) = Arc::new(responder);
    }

    /// Replaces the responder with an echo.
    pub fn set_echo(&self, echo: Echo) {
        *lock(&self.state.responder) = echo.responder();
    }

    /// The requests received so far (empty when capture is off).
    pub fn requests(&self) -> Vec<CapturedRequest> {
        lock(&self.state.requests).clone()
    }

    /// How many requests arrived (counted even when capture is off).
    pub fn request_count(&self) -> usize {
        self.state.received.load(Ordering::SeqCst)
    }

    /// The most requests that were being answered at once.
    pub fn max_concurrent(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    /// Requests answered 429 under [`Builder::reject_beyond`].
    pub fn rejected(&self) -> usize {
        self.state.rejected.load(Ordering::SeqCst)
    }

    /// The most requests admitted (answered, not rejected) at once under [`Builder::reject_beyond`].
    pub fn max_admitted(&self) -> usize {
        self.state.max_admitted.load(Ordering::SeqCst)
    }

    /// Requests being answered now.
    pub fn in_flight(&self) -> usize {
        self.state.in_flight.load(Ordering::SeqCst)
    }

    /// Forgets captured requests, counts and queued replies (the responder stays).
    pub fn reset(&self) {
        lock(&self.state.requests).clear();
        lock(&self.state.queue).clear();
        self.state.received.store(0, Ordering::SeqCst);
        self.state.max_in_flight.store(
            self.state.in_flight.load(Ordering::SeqCst),
            Ordering::SeqCst,
        );
    }

    /// Stops the server and waits for its thread (also done on drop).
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn post(
        fake: &FakeProvider,
        path: &str,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> (u16, String, String) {
        let mut stream = TcpStream::connect(fake.addr()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let body = body.to_string();
        let mut head = format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
            fake.addr(),
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body.as_bytes()).unwrap();
        let mut out = Vec::new();
        let _ = stream.read_to_end(&mut out);
        let text = String::from_utf8_lossy(&out).into_owned();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        (status, head.to_string(), body.to_string())
    }

    #[test]
    fn echoes_each_wire_format_and_captures_requests() {
        let fake = FakeProvider::builder().usage(Usage::new(7, 3)).start();
        let (status, _, body) = post(
            &fake,
            "/v1/messages",
            &json!({"model": "claude-x", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}),
            &[("x-api-key", "k1")],
        );
        assert_eq!(status, 200);
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["content"][0]["text"], "echo: hi");
        assert_eq!(v["model"], "claude-x");
        assert_eq!(v["usage"]["input_tokens"], 7);

        let (status, _, body) = post(
            &fake,
            "/v1beta/models/gemini-y:generateContent",
            &json!({"contents": [{"role": "user", "parts": [{"text": "yo"}]}]}),
            &[],
        );
        assert_eq!(status, 200);
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            v["candidates"][0]["content"]["parts"][0]["text"],
            "echo: yo"
        );
        assert_eq!(v["modelVersion"], "gemini-y");

        let (status, _, body) = post(
            &fake,
            "/v1/chat/completions",
            &json!({"model": "m", "messages": [{"role": "user", "content": "hey"}], "response_format": {"type": "json_schema"}}),
            &[],
        );
        assert_eq!(status, 200);
        let v: Value = serde_json::from_str(&body).unwrap();
        let content: Value =
            serde_json::from_str(v["choices"][0]["message"]["content"].as_str().unwrap()).unwrap();
        assert_eq!(content, json!({"echo": "echo: hey"}));

        let requests = fake.requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(requests[0].header("X-Api-Key"), Some("k1"));
        assert_eq!(requests[1].wire(), Some(Wire::Gemini));
        assert_eq!(requests[1].model().as_deref(), Some("gemini-y"));
        assert_eq!(fake.request_count(), 3);
    }

    #[test]
    fn scripted_replies_come_first_then_the_responder() {
        let fake = FakeProvider::start();
        fake.push(Reply::rate_limited(
            Wire::Anthropic,
            Duration::from_millis(1500),
        ));
        let (status, head, _) = post(&fake, "/v1/messages", &json!({}), &[]);
        assert_eq!(status, 429);
        assert!(head.contains("retry-after: 2"), "{head}");
        assert!(head.contains("retry-after-ms: 1500"), "{head}");
        let (status, _, _) = post(&fake, "/v1/messages", &json!({}), &[]);
        assert_eq!(status, 200);
        fake.respond_with(|_| Reply::overloaded());
        assert_eq!(post(&fake, "/v1/messages", &json!({}), &[]).0, 529);
    }

    #[test]
    fn dropped_connection_gets_no_response_and_aborted_body_is_cut() {
        let fake = FakeProvider::start();
        fake.push(Reply::drop_connection());
        let (status, head, _) = post(&fake, "/v1/messages", &json!({}), &[]);
        assert_eq!((status, head.as_str()), (0, ""));
        fake.push(
            Reply::text(Wire::OpenAi, "m", "abcdefghij", Usage::new(1, 1)).aborted_mid_body(),
        );
        let (status, head, body) = post(&fake, "/v1/chat/completions", &json!({}), &[]);
        assert_eq!(status, 200);
        assert!(head.contains("transfer-encoding: chunked"), "{head}");
        // The terminating zero-length chunk never comes.
        assert!(!body.ends_with("0\r\n\r\n"), "{body}");
        assert_eq!(fake.in_flight(), 0);
    }

    #[test]
    fn requests_beyond_the_limit_in_flight_get_429() {
        let fake = FakeProvider::builder()
            .latency(Duration::from_millis(300))
            .reject_beyond(2, Duration::from_millis(500))
            .start();
        let calls: Vec<_> = (0..5)
            .map(|_| {
                let addr = fake.addr();
                std::thread::spawn(move || {
                    let mut stream = TcpStream::connect(addr).unwrap();
                    let body = "{}";
                    write!(
                        stream,
                        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                    .unwrap();
                    let mut out = String::new();
                    let _ = stream.read_to_string(&mut out);
                    out
                })
            })
            .collect();
        let answers: Vec<String> = calls.into_iter().map(|c| c.join().unwrap()).collect();
        let rejected: Vec<&String> = answers.iter().filter(|a| a.contains(" 429 ")).collect();
        assert_eq!(rejected.len(), 3, "{answers:#?}");
        assert!(rejected.iter().all(|a| a.contains("retry-after: 0.5\r\n")));
        assert_eq!(fake.rejected(), 3);
        assert_eq!(fake.max_admitted(), 2);
        // Once they are answered, the next request is admitted again.
        assert_eq!(post(&fake, "/v1/messages", &json!({}), &[]).0, 200);
    }

    #[test]
    fn shutdown_closes_the_port() {
        let fake = FakeProvider::start();
        let addr = fake.addr();
        fake.shutdown();
        assert!(TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err());
    }
}
