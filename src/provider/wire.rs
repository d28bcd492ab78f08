//! The wire formats, dispatched: the request body and URL of each provider, and its answer and error
//! bodies read.

use serde_json::Value;

use super::error::ErrorBody;
use super::{anthropic, gemini, openai};
use crate::completion::{CompletionRequest, CompletionResult};
use crate::config::{EndpointConfig, WireFormat};

/// How many bytes of an unexpected body an error quotes.
const EXCERPT_BYTES: usize = 200;

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

/// Parses a success body of `wire` into a result (`cost_usd` stays `None`), or says why it is none,
/// quoting the body's start.
pub fn parse_response(wire: WireFormat, body: &[u8]) -> Result<CompletionResult, String> {
    parse_with(body, |json| parse_value(wire, json))
}

/// `body` read as JSON by `parse`, or why not, quoting the body's start.
pub(crate) fn parse_with<T>(
    body: &[u8],
    parse: impl FnOnce(&Value) -> Result<T, String>,
) -> Result<T, String> {
    parse(&parse_json(body)?).map_err(|why| format!("{why}; the body starts: {}", excerpt(body)))
}

/// [`parse_response`] of a body read as JSON already; an error says only why.
pub(crate) fn parse_value(wire: WireFormat, json: &Value) -> Result<CompletionResult, String> {
    match wire {
        WireFormat::Anthropic => anthropic::parse(json),
        WireFormat::Google => gemini::parse(json),
        WireFormat::OpenAi => openai::parse(json),
    }
}

/// The body as JSON, or an error quoting its start.
pub(crate) fn parse_json(body: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(body)
        .map_err(|e| format!("the body is not JSON ({e}); it starts: {}", excerpt(body)))
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
pub(crate) fn excerpt(body: &[u8]) -> String {
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
