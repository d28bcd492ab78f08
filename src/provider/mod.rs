//! Model providers over HTTP: Anthropic Messages, Google Gemini and OpenAI-compatible Chat Completions.
//!
//! CONTRACT (the engine relies on exactly this):
//! - `ProviderClient::new(endpoint, retry)` reads the key from the endpoint's env vars (the engine
//!   passes its shared HTTP client through a crate-private constructor).
//! - `missing_key()` names the variable to set when a key is required and absent.
//! - `complete()` sends one request with retries and the endpoint's in-flight limit; `cost_usd` is
//!   left `None` (the engine prices results).
//!
//! The client (retries, keys, the in-flight limit) is in `client`, the errors in `error`. Each wire
//! format lives in its own module and maps the provider's answer onto one token convention
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
//! adaptive in-flight limit (`limiter`) is what stops the run from provoking more.
//!
//! Its layer and the path of a sample through it: `docs/architecture.md`.

mod anthropic;
mod client;
pub(crate) mod embeddings;
mod error;
mod gemini;
mod limiter;
mod openai;
pub(crate) mod relayed;
mod retry;
mod sent;
pub(crate) mod steps;
pub(crate) mod wire;

use serde_json::Value;

use crate::completion::{CompletionRequest, ContentBlock, Role};
use crate::config::WireFormat;
pub use client::ProviderClient;
#[cfg(feature = "mcp")]
pub(crate) use client::tls_config;
#[cfg(feature = "endpoint")]
pub(crate) use client::{CREDENTIAL_HEADERS, Forwarded};
pub(crate) use client::{LazyHttp, missing_key_for};
pub(crate) use error::ErrorBody;
pub use error::ProviderError;
pub use limiter::RateLimitStats;
pub(crate) use sent::Sent;

pub(crate) use wire::{
    excerpt, parse_error_body, parse_response, parse_value, parse_with, request_body, request_url,
};

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

/// Tool-call arguments as JSON: a string parsed (kept as a JSON string when it is not JSON), anything
/// else as it is, none as an empty object. Read so by the Chat Completions parser and the steps reader.
fn arguments(raw: Option<&Value>) -> Value {
    match raw {
        Some(Value::String(text)) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
        Some(other) => other.clone(),
        None => serde_json::json!({}),
    }
}

/// The first item of `body`'s `key` array (`choices`, `data`: the OpenAI shape of a response), or
/// why there is none, as an answer that is not `response` (the response it should have been).
fn first_item<'a>(body: &'a Value, key: &str, response: &str) -> Result<&'a Value, String> {
    body.get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("it has no `{key}` array of {response}"))?
        .first()
        .ok_or_else(|| format!("its `{key}` array is empty"))
}

/// A request's conversation as the Anthropic and Gemini wires take it: one object a message, with
/// its role (the model's turns named `assistant_role`) and its blocks under `blocks_key`, each
/// written by `block`.
fn turns(
    request: &CompletionRequest,
    assistant_role: &str,
    blocks_key: &str,
    block: fn(&ContentBlock) -> Value,
) -> Vec<Value> {
    request
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => assistant_role,
            };
            let blocks: Vec<Value> = m.content.iter().map(block).collect();
            serde_json::json!({"role": role, blocks_key: blocks})
        })
        .collect()
}

/// Why `request` cannot go to `endpoint` as its wire format takes media (a part it does not take, or
/// more inline bytes than the provider accepts), naming the provider, the part and what it takes;
/// `None` when it can. Checked before any call, so such a sample makes none.
pub(crate) fn unsendable(
    endpoint: &crate::config::EndpointConfig,
    request: &CompletionRequest,
) -> Option<String> {
    use crate::completion::{MediaKind, MediaType};
    const MB: usize = 1024 * 1024;
    let wire = endpoint.wire;
    let takes = match wire {
        WireFormat::Anthropic => {
            "images (PNG, JPEG, GIF, WebP) and documents (PDF, plain text), no audio"
        }
        WireFormat::Google => {
            "images (PNG, JPEG, WebP), documents (PDF, plain text) and audio (WAV, MP3)"
        }
        WireFormat::OpenAi => {
            "images (PNG, JPEG, GIF, WebP), documents (PDF, plain text) and audio (WAV, MP3)"
        }
    };
    let said = |part: &crate::completion::MediaPart, why: String| {
        format!(
            "provider `{}` ({}) cannot take the {} {} ({}): {why}; it takes {takes}",
            endpoint.name,
            wire_name(wire),
            part.kind(),
            part.name(),
            part.media_type(),
        )
    };
    // Inline bytes as sent (base64: 4 for every 3), summed per request as the limits are.
    let inline = |part: &crate::completion::MediaPart| part.bytes().len().div_ceil(3) * 4;
    let (mut images, mut files, mut all) = (0usize, 0usize, 0usize);
    for message in &request.messages {
        for block in &message.content {
            let ContentBlock::Media(part) = block else {
                continue;
            };
            if message.role == Role::Assistant {
                return Some(said(part, "media go in user messages only".into()));
            }
            let refused = match (wire, part.media_type()) {
                (WireFormat::Anthropic, _) if part.kind() == MediaKind::Audio => {
                    Some("the Messages API takes no audio; send it to an OpenAI-compatible or Gemini provider".into())
                }
                (WireFormat::Google, MediaType::Gif) => {
                    Some("Gemini takes no GIF; convert it to PNG".into())
                }
                (WireFormat::Anthropic, _) if part.kind() == MediaKind::Image && inline(part) > 5 * MB => {
                    Some("it is over the Messages API's 5 MB an image; use a smaller file".into())
                }
                _ => None,
            };
            if refused.is_some() {
                return refused.map(|why| said(part, why));
            }
            all += inline(part);
            match part.kind() {
                MediaKind::Image => images += inline(part),
                _ => files += inline(part),
            }
            let over = match wire {
                WireFormat::Google if all > 20 * MB => {
                    Some("Gemini's 20 MB of inline data a request")
                }
                WireFormat::Anthropic if all > 32 * MB => {
                    Some("the Messages API's 32 MB a request")
                }
                WireFormat::OpenAi if images > 50 * MB => {
                    Some("OpenAI's 50 MB of images a request")
                }
                WireFormat::OpenAi if files > 32 * MB => Some("OpenAI's 32 MB of files a request"),
                _ => None,
            };
            if let Some(limit) = over {
                let why =
                    format!("with it the request's media are over {limit}; use smaller files");
                return Some(said(part, why));
            }
        }
    }
    None
}

pub(crate) fn wire_name(wire: WireFormat) -> &'static str {
    match wire {
        WireFormat::Anthropic => "Anthropic Messages",
        WireFormat::Google => "Gemini generateContent",
        WireFormat::OpenAi => "OpenAI Chat Completions",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::EndpointConfig;

    /// An endpoint for unit tests.
    pub(crate) fn endpoint(
        name: &str,
        wire: WireFormat,
        base_url: &str,
        keys: &[&str],
    ) -> EndpointConfig {
        EndpointConfig {
            name: name.into(),
            wire,
            base_url: base_url.into(),
            api_key_env: keys.iter().map(|k| k.to_string()).collect(),
            max_in_flight: 2,
        }
    }

    #[test]
    fn media_a_wire_does_not_take_are_refused_naming_provider_part_and_what_it_takes() {
        use crate::completion::{ContentBlock, Media};
        let with = |name: &str, bytes: Vec<u8>| {
            let mut request = CompletionRequest::new("m", "Transcribe:", 9);
            let part = Media::bytes(name, bytes).load().unwrap();
            request.messages[0].content.push(ContentBlock::Media(part));
            request
        };
        let wav = with("voice.wav", b"RIFF\x24\0\0\0WAVEfmt ".to_vec());
        let anthropic = endpoint("claude", WireFormat::Anthropic, "http://x", &[]);
        let why = unsendable(&anthropic, &wav).expect("audio refused");
        for said in [
            "`claude`",
            "Anthropic Messages",
            "voice.wav",
            "audio/wav",
            "images (PNG",
        ] {
            assert!(why.contains(said), "{said}: {why}");
        }
        for wire in [WireFormat::OpenAi, WireFormat::Google] {
            assert_eq!(
                unsendable(&endpoint("p", wire, "http://x", &[]), &wav),
                None
            );
        }
        let gif = with("a.gif", b"GIF89a\x01\0".to_vec());
        let gemini = endpoint("gemini", WireFormat::Google, "http://x", &[]);
        assert!(unsendable(&gemini, &gif).unwrap().contains("a.gif"));
        // Over Gemini's 20 MB inline limit (base64 counted), and the limit's name said.
        let mut big = b"%PDF-1.4\n".to_vec();
        big.resize(16 * 1024 * 1024, b' ');
        let big = with("big.pdf", big);
        let why = unsendable(&gemini, &big).unwrap();
        assert!(why.contains("big.pdf") && why.contains("20 MB"), "{why}");
        assert_eq!(unsendable(&anthropic, &big), None);
        let mut assistant = with("a.png", b"\x89PNG\r\n\x1a\n".to_vec());
        assistant.messages[0].role = Role::Assistant;
        assert!(
            unsendable(&gemini, &assistant)
                .unwrap()
                .contains("user messages only")
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
        for (wire, base_url, model, url) in [
            (
                WireFormat::Anthropic,
                "https://api.anthropic.com/",
                "m",
                "https://api.anthropic.com/v1/messages",
            ),
            (
                WireFormat::Google,
                "http://127.0.0.1:9",
                "models/gemini-2.5-flash",
                "http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:generateContent",
            ),
            (
                WireFormat::Google,
                "http://127.0.0.1:9/v1beta/",
                "a b",
                "http://127.0.0.1:9/v1beta/models/a%20b:generateContent",
            ),
            (
                WireFormat::OpenAi,
                "http://127.0.0.1:9/v1",
                "m",
                "http://127.0.0.1:9/v1/chat/completions",
            ),
        ] {
            assert_eq!(request_url(&endpoint("x", wire, base_url, &[]), model), url);
        }
    }
}
