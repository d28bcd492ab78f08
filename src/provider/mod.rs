//! Model providers over HTTP: Anthropic Messages, Google Gemini and OpenAI-compatible Chat Completions.
//!
//! CONTRACT (the engine relies on exactly this):
//! - `ProviderClient::new(endpoint, retry, http)` reads the key from the endpoint's env vars.
//! - `missing_key()` names the variable to set when a key is required and absent.
//! - `complete()` sends one request with retries and the endpoint's in-flight limit; `cost_usd` is
//!   left `None` (the engine prices results).
//!
//! Each wire format lives in its own module and maps the provider's answer onto one token convention
//! (see [`crate::completion`]). The request builders and parsers are public ([`request_body`],
//! [`parse_response`], [`parse_error_body`]) so that other code and tests can check shapes without a
//! network.
//!
//! Mapping decisions (details in each wire module):
//! - Anthropic: input = `input_tokens` + cache reads + cache writes; `refusal` stop → safety-filtered;
//!   structured output is a forced tool call, read from `tool_calls[0].arguments`.
//! - Gemini: output = candidates + thoughts; `promptFeedback.blockReason` and the finish reasons
//!   SAFETY, PROHIBITED_CONTENT, BLOCKLIST, SPII, RECITATION (the answer was withheld) and the image
//!   safety reasons → safety-filtered; `thought` parts are not text; function calls without an id get
//!   `call_N`; `model_used` is `modelVersion` without its `models/` prefix.
//! - OpenAI-compatible: `max_completion_tokens` for api.openai.com, `max_tokens` elsewhere; a
//!   `refusal` becomes the text and marks the result safety-filtered, as `content_filter` does;
//!   tool-call arguments that are not valid JSON are kept as a JSON string.
//!
//! Retries: 408, 429, every 5xx (Anthropic's 529 included), connection errors and timeouts are retried
//! with exponential backoff and jitter, honouring `retry-after-ms`, `retry-after` (seconds or an HTTP
//! date) and Gemini's `RetryInfo.retryDelay`, each capped at `max_backoff`. Other 4xx are final. A 2xx
//! body that is not the provider's answer is final too: it means a wrong base URL or a proxy page,
//! which a retry does not fix. A 429 is retried for as long as `rate_limit_budget` allows, not a number
//! of attempts: a provider limiting concurrency answers it as a matter of course, and the endpoint's
//! adaptive in-flight limit ([`limiter`]) is what stops the run from provoking more.

mod anthropic;
mod gemini;
mod limiter;
mod openai;
mod retry;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::completion::{CompletionRequest, CompletionResult};
use crate::config::{EndpointConfig, RetryConfig, WireFormat};
pub use limiter::RateLimitStats;
use limiter::{Limiter, Outcome};

/// How many bytes of an unexpected body an error quotes.
const EXCERPT_BYTES: usize = 200;

/// A provider call that finally failed. Its text never contains the API key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ProviderError {
    /// The provider name.
    pub provider: String,
    /// HTTP status, if a response came.
    pub status: Option<u16>,
    /// The provider's error type (`rate_limit_error`, `RESOURCE_EXHAUSTED`, ...), or `timeout`,
    /// `connection`, `invalid_response` for failures without a provider error body.
    pub error_type: Option<String>,
    /// The provider's message, or what went wrong.
    pub message: String,
    /// The provider's request id.
    pub request_id: Option<String>,
    /// Attempts made.
    pub attempts: u32,
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.provider)?;
        if let Some(status) = self.status {
            write!(f, " HTTP {status}")?;
        }
        if let Some(kind) = &self.error_type {
            write!(f, " {kind}")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(id) = &self.request_id {
            write!(f, " (request id {id})")?;
        }
        match self.attempts {
            0 | 1 => write!(f, " [1 attempt]"),
            n => write!(f, " [{n} attempts]"),
        }
    }
}

/// What a provider's error body says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorBody {
    /// The error type (`overloaded_error`, `NOT_FOUND`, `invalid_request_error`, ...).
    pub error_type: Option<String>,
    /// The message.
    pub message: Option<String>,
    /// The request id the body carries (Anthropic).
    pub request_id: Option<String>,
    /// How long the provider asks to wait (Gemini `RetryInfo.retryDelay`).
    pub retry_delay: Option<Duration>,
}

/// A success body that is not the provider's answer; the message quotes the body's start.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

/// The JSON body `endpoint` is sent for `request`.
pub fn request_body(endpoint: &EndpointConfig, request: &CompletionRequest) -> Value {
    match endpoint.wire {
        WireFormat::Anthropic => anthropic::body(request),
        WireFormat::Google => gemini::body(request),
        WireFormat::OpenAi => openai::body(
            request,
            openai::uses_max_completion_tokens(&endpoint.base_url),
        ),
    }
}

/// The URL `endpoint` is called at for `model`. The key is never part of it.
pub fn request_url(endpoint: &EndpointConfig, model: &str) -> String {
    let base = endpoint.base_url.trim().trim_end_matches('/');
    match endpoint.wire {
        WireFormat::Anthropic => anthropic::url(base),
        WireFormat::Google => gemini::url(base, model),
        WireFormat::OpenAi => openai::url(base),
    }
}

/// Parses a success body of `wire` into a result (`cost_usd` stays `None`).
pub fn parse_response(wire: WireFormat, body: &[u8]) -> Result<CompletionResult, ParseError> {
    let json: Value = serde_json::from_slice(body).map_err(|e| {
        ParseError(format!(
            "the body is not JSON ({e}); it starts: {}",
            excerpt(body)
        ))
    })?;
    let parsed = match wire {
        WireFormat::Anthropic => anthropic::parse(&json),
        WireFormat::Google => gemini::parse(&json),
        WireFormat::OpenAi => openai::parse(&json),
    };
    parsed.map_err(|why| ParseError(format!("{why}; the body starts: {}", excerpt(body))))
}

/// Reads an error body of `wire`; fields it does not carry stay `None`.
pub fn parse_error_body(wire: WireFormat, body: &[u8]) -> ErrorBody {
    let Ok(json) = serde_json::from_slice::<Value>(body) else {
        return ErrorBody::default();
    };
    match wire {
        WireFormat::Anthropic => anthropic::parse_error(&json),
        WireFormat::Google => gemini::parse_error(&json),
        WireFormat::OpenAi => openai::parse_error(&json),
    }
}

/// The first [`EXCERPT_BYTES`] bytes of `body`, quoted, with its length when it was cut.
fn excerpt(body: &[u8]) -> String {
    if body.is_empty() {
        return "(empty body)".to_string();
    }
    let mut end = body.len().min(EXCERPT_BYTES);
    let text = loop {
        // Cut on a character boundary; a body that is not UTF-8 at all is shown lossily.
        match std::str::from_utf8(&body[..end]) {
            Ok(text) => break text.to_string(),
            Err(e) if e.valid_up_to() > 0 && end - e.valid_up_to() < 4 => end = e.valid_up_to(),
            Err(_) => break String::from_utf8_lossy(&body[..end]).into_owned(),
        }
    };
    if end < body.len() {
        format!("{text:?}... ({} bytes in all)", body.len())
    } else {
        format!("{text:?}")
    }
}

/// A JSON number for an `f32` setting, written the way it was given (`0.7`, not `0.699999988`).
fn float(value: f32) -> Value {
    value
        .to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// A non-negative integer field, 0 when absent.
fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A string field.
fn string(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Whether `endpoint` needs a key: only a built-in one at its public URL does. A named endpoint's
/// `api_key_env` is optional (no key is sent while the variable is unset), and a built-in one pointed
/// away from its public URL (a local llama-server or Ollama behind `OPENAI_BASE_URL`) gets no auth
/// header unless a key happens to be set.
fn key_required(endpoint: &EndpointConfig) -> bool {
    if endpoint.api_key_env.is_empty() {
        return false;
    }
    crate::model::built_in(&endpoint.name)
        .is_some_and(|p| endpoint.base_url.trim().trim_end_matches('/') == p.base_url)
}

/// The variable to set when `endpoint` needs a key and none is set in the environment.
pub fn missing_key_for(endpoint: &EndpointConfig) -> Option<String> {
    let has_key = endpoint
        .api_key_env
        .iter()
        .any(|v| crate::config::env_var(v).is_some());
    (!has_key && key_required(endpoint)).then(|| endpoint.api_key_env[0].clone())
}

/// A client for one endpoint.
#[derive(Debug, Clone)]
pub struct ProviderClient {
    endpoint: EndpointConfig,
    api_key: Option<String>,
    key_required: bool,
    retry: RetryConfig,
    http: reqwest::Client,
    /// The endpoint's adaptive in-flight limit, shared by the clones of this client.
    limiter: Arc<Limiter>,
}

/// One failed attempt, before deciding whether to retry.
#[derive(Debug)]
struct Failure {
    status: Option<u16>,
    error_type: Option<String>,
    message: String,
    request_id: Option<String>,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl ProviderClient {
    /// A client for `endpoint`, with the key from the first of its variables that is set.
    pub fn new(endpoint: &EndpointConfig, retry: &RetryConfig, http: reqwest::Client) -> Self {
        let api_key = endpoint
            .api_key_env
            .iter()
            .find_map(|v| crate::config::env_var(v));
        Self::with_api_key(endpoint, retry, http, api_key)
    }

    /// A client for `endpoint` with an explicit key (`None` for keyless servers), ignoring the
    /// environment: for programs that hold the key themselves, and for tests.
    pub fn with_api_key(
        endpoint: &EndpointConfig,
        retry: &RetryConfig,
        http: reqwest::Client,
        api_key: Option<String>,
    ) -> Self {
        Self {
            endpoint: endpoint.clone(),
            api_key: api_key
                .filter(|k| !k.trim().is_empty())
                .map(|k| k.trim().to_string()),
            key_required: key_required(endpoint),
            retry: retry.clone(),
            http,
            limiter: Arc::new(Limiter::new(endpoint.max_in_flight, retry.max_backoff)),
        }
    }

    /// The endpoint's name.
    pub fn name(&self) -> &str {
        &self.endpoint.name
    }

    /// The endpoint this client calls.
    pub fn endpoint(&self) -> &EndpointConfig {
        &self.endpoint
    }

    /// The rate-limit answers this endpoint gave so far and where its in-flight limit stands.
    pub fn rate_limits(&self) -> RateLimitStats {
        self.limiter.stats()
    }

    /// The variable to set when this endpoint needs a key and none is set.
    pub fn missing_key(&self) -> Option<String> {
        if self.api_key.is_some() || !self.key_required {
            return None;
        }
        self.endpoint.api_key_env.first().cloned()
    }

    /// Sends one request, retrying transient faults: a 429 within `rate_limit_budget` (counted from the
    /// first), others up to `max_attempts`. The endpoint's in-flight limit is held only while an HTTP
    /// attempt is in flight, not while backing off.
    pub async fn complete(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResult, ProviderError> {
        let url = request_url(&self.endpoint, &request.model);
        let body = serde_json::to_vec(&request_body(&self.endpoint, request)).map_err(|e| {
            ProviderError {
                provider: self.endpoint.name.clone(),
                status: None,
                error_type: Some("invalid_request".into()),
                message: format!("the request cannot be encoded as JSON: {e}"),
                request_id: None,
                attempts: 0,
            }
        })?;
        let max_attempts = self.retry.max_attempts.max(1);
        let (mut attempt, mut faults) = (0, 0);
        let mut rate_limited_since = None;
        loop {
            attempt += 1;
            let mut failure = match self.attempt(&url, &body).await {
                Ok(result) => return Ok(result),
                Err(failure) => failure,
            };
            if !failure.retryable {
                return Err(self.give_up(failure, attempt));
            }
            let wait = match failure.retry_after {
                Some(asked) => asked.min(self.retry.max_backoff),
                None => retry::backoff(&self.retry, attempt),
            };
            if failure.status == Some(429) {
                let since = *rate_limited_since.get_or_insert_with(Instant::now);
                if since.elapsed().saturating_add(wait) > self.retry.rate_limit_budget {
                    failure.message = format!(
                        "{} (still rate limited after {:.1} s of retries; \
                         [retry] rate_limit_budget_secs = {} allows longer)",
                        failure.message,
                        since.elapsed().as_secs_f64(),
                        self.retry.rate_limit_budget.as_secs_f64()
                    );
                    return Err(self.give_up(failure, attempt));
                }
            } else {
                faults += 1;
                if faults >= max_attempts {
                    return Err(self.give_up(failure, attempt));
                }
            }
            tokio::time::sleep(wait).await;
        }
    }

    async fn attempt(&self, url: &str, body: &[u8]) -> Result<CompletionResult, Failure> {
        let mut builder = self
            .http
            .post(url)
            .timeout(self.retry.request_timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        for (name, value) in self.auth_headers()? {
            builder = builder.header(name, value);
        }
        let (status, headers, bytes) = {
            // The permit is the endpoint's in-flight limit: it covers the HTTP exchange only. Dropped
            // on a transport error, it tells the limit nothing.
            let permit = self.limiter.acquire().await;
            let response = builder
                .send()
                .await
                .map_err(|e| self.transport_failure(url, &e))?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let bytes = response
                .bytes()
                .await
                .map_err(|e| self.transport_failure(url, &e))?;
            // Paced before the slot is released, so that the waiter it wakes sees the pace.
            if let Some(window) = limiter::window(&headers, SystemTime::now()) {
                self.limiter.pace(window);
            }
            permit.finish(match status {
                200..=299 => Outcome::Success,
                429 | 529 => Outcome::RateLimited,
                _ => Outcome::Neutral,
            });
            (status, headers, bytes)
        };
        let header_id = ["request-id", "x-request-id"].iter().find_map(|h| {
            headers
                .get(*h)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        });
        if (200..300).contains(&status) {
            return match parse_response(self.endpoint.wire, &bytes) {
                Ok(mut result) => {
                    if result.request_id.is_none() {
                        result.request_id = header_id;
                    }
                    Ok(result)
                }
                Err(e) => Err(Failure {
                    status: Some(status),
                    error_type: Some("invalid_response".into()),
                    message: format!(
                        "the answer is not a valid {} response: {e}",
                        wire_name(self.endpoint.wire)
                    ),
                    request_id: header_id,
                    retryable: false,
                    retry_after: None,
                }),
            };
        }
        let parsed = parse_error_body(self.endpoint.wire, &bytes);
        let message = parsed.message.unwrap_or_else(|| {
            format!(
                "the error body is not {} error JSON: {}",
                wire_name(self.endpoint.wire),
                excerpt(&bytes)
            )
        });
        Err(Failure {
            status: Some(status),
            error_type: parsed.error_type,
            message,
            request_id: parsed.request_id.or(header_id),
            retryable: retry::is_retryable_status(status),
            retry_after: retry::retry_after(&headers, SystemTime::now()).or(parsed.retry_delay),
        })
    }

    fn auth_headers(&self) -> Result<Vec<(&'static str, reqwest::header::HeaderValue)>, Failure> {
        let mut headers = Vec::new();
        if self.endpoint.wire == WireFormat::Anthropic {
            headers.push((
                "anthropic-version",
                reqwest::header::HeaderValue::from_static("2023-06-01"),
            ));
        }
        let Some(key) = &self.api_key else {
            return Ok(headers);
        };
        let (name, value) = match self.endpoint.wire {
            WireFormat::Anthropic => ("x-api-key", key.clone()),
            WireFormat::Google => ("x-goog-api-key", key.clone()),
            WireFormat::OpenAi => ("authorization", format!("Bearer {key}")),
        };
        let mut value = reqwest::header::HeaderValue::from_str(&value).map_err(|_| Failure {
            status: None,
            error_type: Some("invalid_key".into()),
            message: format!(
                "the API key (from {}) holds characters an HTTP header cannot carry; check the variable",
                self.endpoint.api_key_env.join(" or ")
            ),
            request_id: None,
            retryable: false,
            retry_after: None,
        })?;
        value.set_sensitive(true);
        headers.push((name, value));
        Ok(headers)
    }

    fn transport_failure(&self, url: &str, error: &reqwest::Error) -> Failure {
        let (kind, what) = if error.is_timeout() {
            (
                "timeout",
                format!(
                    "no complete answer from {url} within {:?}",
                    self.retry.request_timeout
                ),
            )
        } else if error.is_builder() {
            (
                "invalid_request",
                format!("cannot build a request for {url:?}"),
            )
        } else if error.is_connect() {
            ("connection", format!("cannot connect to {url}"))
        } else {
            ("connection", format!("the connection to {url} failed"))
        };
        // reqwest's own text hides the cause ("connection refused", "connection closed before
        // message completed") in its source chain.
        let mut causes = Vec::new();
        let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
        while let Some(cause) = source {
            let text = cause.to_string();
            if !causes.contains(&text) {
                causes.push(text);
            }
            source = cause.source();
        }
        let message = if causes.is_empty() {
            what
        } else {
            format!("{what}: {}", causes.join(": "))
        };
        Failure {
            status: None,
            error_type: Some(kind.into()),
            message,
            request_id: None,
            retryable: !error.is_builder(),
            retry_after: None,
        }
    }

    fn give_up(&self, failure: Failure, attempts: u32) -> ProviderError {
        ProviderError {
            provider: self.endpoint.name.clone(),
            status: failure.status,
            error_type: failure.error_type.map(|t| self.scrub(&t)),
            message: self.scrub(&failure.message),
            request_id: failure.request_id.map(|t| self.scrub(&t)),
            attempts,
        }
    }

    /// Removes the key from text that came from the network (a provider may echo what it was sent).
    fn scrub(&self, text: &str) -> String {
        let text = crate::redact::redact(text).into_owned();
        match &self.api_key {
            Some(key) if key.len() >= 4 && text.contains(key.as_str()) => {
                text.replace(key.as_str(), "[REDACTED]")
            }
            _ => text,
        }
    }
}

fn wire_name(wire: WireFormat) -> &'static str {
    match wire {
        WireFormat::Anthropic => "Anthropic Messages",
        WireFormat::Google => "Gemini generateContent",
        WireFormat::OpenAi => "OpenAI Chat Completions",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(name: &str, wire: WireFormat, base_url: &str, keys: &[&str]) -> EndpointConfig {
        EndpointConfig {
            name: name.into(),
            wire,
            base_url: base_url.into(),
            api_key_env: keys.iter().map(|k| k.to_string()).collect(),
            max_in_flight: 2,
        }
    }

    fn http() -> reqwest::Client {
        // reqwest is built without a bundled crypto provider (the engine installs ring the same way).
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::new()
    }

    fn client(endpoint: &EndpointConfig, key: Option<&str>) -> ProviderClient {
        ProviderClient::with_api_key(
            endpoint,
            &RetryConfig::default(),
            http(),
            key.map(String::from),
        )
    }

    #[test]
    fn keyless_rules() {
        let public = endpoint(
            "openai",
            WireFormat::OpenAi,
            "https://api.openai.com/v1/",
            &["OPENAI_API_KEY"],
        );
        assert_eq!(
            client(&public, None).missing_key().as_deref(),
            Some("OPENAI_API_KEY")
        );
        assert_eq!(client(&public, Some("sk-x")).missing_key(), None);
        let local = endpoint(
            "openai",
            WireFormat::OpenAi,
            "http://127.0.0.1:8080/v1",
            &["OPENAI_API_KEY"],
        );
        assert_eq!(client(&local, None).missing_key(), None);
        let named_keyless = endpoint(
            "ollama",
            WireFormat::OpenAi,
            "http://127.0.0.1:11434/v1",
            &[],
        );
        assert_eq!(client(&named_keyless, None).missing_key(), None);
        // A named endpoint's `api_key_env` is optional: unset, no key is sent and none is missing.
        let named_keyed = endpoint(
            "together",
            WireFormat::OpenAi,
            "http://127.0.0.1:1/v1",
            &["TOGETHER_KEY", "B"],
        );
        assert_eq!(client(&named_keyed, None).missing_key(), None);
        assert_eq!(missing_key_for(&named_keyed), None);
        assert!(
            client(&named_keyed, None)
                .auth_headers()
                .unwrap()
                .is_empty()
        );
        let gemini = endpoint(
            "google",
            WireFormat::Google,
            "https://generativelanguage.googleapis.com",
            &["G"],
        );
        assert_eq!(
            client(&gemini, Some("  ")).missing_key().as_deref(),
            Some("G")
        );
    }

    #[test]
    fn new_takes_the_first_variable_that_is_set() {
        // Reads real variables rather than setting any: setting variables races other tests.
        let Some((name, value)) = std::env::vars().find(|(_, v)| !v.trim().is_empty()) else {
            return;
        };
        let ep = endpoint(
            "x",
            WireFormat::OpenAi,
            "http://127.0.0.1:1/v1",
            &["PT_SURELY_UNSET_VARIABLE_1", &name],
        );
        let client = ProviderClient::new(&ep, &RetryConfig::default(), http());
        assert_eq!(client.api_key.as_deref(), Some(value.trim()));
        assert_eq!(client.missing_key(), None);
    }

    #[test]
    fn display_names_everything_but_the_key() {
        let error = ProviderError {
            provider: "anthropic".into(),
            status: Some(529),
            error_type: Some("overloaded_error".into()),
            message: "Overloaded".into(),
            request_id: Some("req_1".into()),
            attempts: 4,
        };
        assert_eq!(
            error.to_string(),
            "anthropic: HTTP 529 overloaded_error: Overloaded (request id req_1) [4 attempts]"
        );
        let ep = endpoint("openai", WireFormat::OpenAi, "http://x/v1", &["K"]);
        let c = client(&ep, Some("sk-secret-123"));
        assert_eq!(
            c.scrub("bad key sk-secret-123 given"),
            "bad key [REDACTED] given"
        );
    }

    #[test]
    fn excerpt_is_short_quoted_and_char_safe() {
        let long = "é".repeat(300);
        let e = excerpt(long.as_bytes());
        assert!(e.starts_with('"') && e.contains("600 bytes in all"), "{e}");
        assert!(e.chars().filter(|c| *c == 'é').count() <= 100);
        assert_eq!(excerpt(b""), "(empty body)");
        assert_eq!(excerpt(b"{\"a\":"), "\"{\\\"a\\\":\"");
    }

    #[test]
    fn floats_keep_their_decimal_form() {
        assert_eq!(float(0.7).to_string(), "0.7");
        assert_eq!(float(0.0).to_string(), "0.0");
        assert_eq!(float(f32::NAN), Value::Null);
    }

    #[test]
    fn urls_per_wire() {
        let a = endpoint(
            "anthropic",
            WireFormat::Anthropic,
            "https://api.anthropic.com/",
            &[],
        );
        assert_eq!(
            request_url(&a, "m"),
            "https://api.anthropic.com/v1/messages"
        );
        let g = endpoint("google", WireFormat::Google, "http://127.0.0.1:9", &[]);
        assert_eq!(
            request_url(&g, "models/gemini-2.5-flash"),
            "http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:generateContent"
        );
        let g = endpoint(
            "google",
            WireFormat::Google,
            "http://127.0.0.1:9/v1beta/",
            &[],
        );
        assert_eq!(
            request_url(&g, "a b"),
            "http://127.0.0.1:9/v1beta/models/a%20b:generateContent"
        );
        let o = endpoint("openai", WireFormat::OpenAi, "http://127.0.0.1:9/v1", &[]);
        assert_eq!(
            request_url(&o, "m"),
            "http://127.0.0.1:9/v1/chat/completions"
        );
    }
}
