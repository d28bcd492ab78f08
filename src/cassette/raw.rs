//! A call the application made itself, through the recording endpoint, as a cassette holds it: the
//! HTTP request (method, path, the JSON body with its keys sorted and its media named by reference)
//! and the answer (status, content type, the JSON body or the server-sent events in order). Never a
//! header, never a key: the path holds no secret and the query keeps only what changes the answer
//! (`alt=sse`).

// Without the `endpoint` feature raw exchanges are read and kept, never made.
#![cfg_attr(not(feature = "endpoint"), allow(dead_code))]

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::completion::MediaPart;

/// A request as the endpoint received it, without what identifies the run, the sample or the caller.
/// Its media (at the places its API carries media, `provider::relayed::media`) are named in the body
/// by a reference, their bytes in the media store beside the cassettes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RawRequest {
    /// `POST`.
    pub method: String,
    /// The provider's path, after the sample's part of the URL (`/v1/chat/completions`,
    /// `/v1beta/models/gemini-2.5-flash:generateContent`).
    pub path: String,
    /// The query parameters that change the answer (`alt=sse`), sorted; a key is never one of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query: Vec<(String, String)>,
    /// The JSON body, its object keys sorted (`canonical`), each media value replaced by its
    /// reference.
    pub body: Value,
    /// The media the body names, with their bytes, for the media store when the request is recorded;
    /// empty once read back from a cassette (the store holds them).
    #[serde(skip)]
    pub media: Vec<MediaPart>,
}

/// Two requests are one when their method, path, query and body are: the body names each media
/// part by its hash.
impl PartialEq for RawRequest {
    fn eq(&self, other: &Self) -> bool {
        (&self.method, &self.path, &self.query, &self.body)
            == (&other.method, &other.path, &other.query, &other.body)
    }
}

/// What the provider answered, as the client read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawResponse {
    /// The HTTP status (a success: error answers are not recorded).
    pub status: u16,
    /// The `Content-Type` it came with.
    pub content_type: String,
    /// The body.
    pub body: RawBody,
}

/// A response body: one JSON document, or a stream of server-sent events in the order they came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RawBody {
    /// `application/json`.
    Json(Value),
    /// `text/event-stream`.
    Events(Vec<StreamEvent>),
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEvent {
    /// Its `event:` name (Anthropic's `message_start`, ...); OpenAI and Gemini send none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// Its data: JSON when it parses as an object or an array (kept readable in a diff), else the text
    /// (`[DONE]`).
    pub data: Value,
}

/// `value` with every object's keys sorted, recursively: two bodies that differ only in key order are
/// one request (the crate's `serde_json` keeps insertion order).
pub fn canonical(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(canonical).collect()),
        other => other,
    }
}

/// The events of a `text/event-stream` body, in order. Comments, `id:` and `retry:` lines are dropped;
/// several `data:` lines of one event are joined with a newline, as the format says.
pub fn parse_events(text: &str) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    let (mut name, mut data): (Option<String>, Option<String>) = (None, None);
    let mut flush = |name: &mut Option<String>, data: &mut Option<String>| {
        if let Some(text) = data.take() {
            events.push(StreamEvent {
                event: name.take(),
                data: event_data(text),
            });
        }
        *name = None;
    };
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            flush(&mut name, &mut data);
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => name = Some(value.to_string()),
            "data" => match &mut data {
                Some(text) => {
                    text.push('\n');
                    text.push_str(value);
                }
                None => data = Some(value.to_string()),
            },
            _ => {}
        }
    }
    flush(&mut name, &mut data);
    events
}

fn event_data(text: String) -> Value {
    match serde_json::from_str::<Value>(&text) {
        Ok(json @ (Value::Object(_) | Value::Array(_))) => json,
        _ => Value::String(text),
    }
}

/// `events` as a `text/event-stream` body, each event as the client first read it.
pub fn write_events(events: &[StreamEvent]) -> String {
    let mut out = String::new();
    for e in events {
        if let Some(name) = &e.event {
            out.push_str("event: ");
            out.push_str(name);
            out.push('\n');
        }
        let data = match &e.data {
            Value::String(text) => text.clone(),
            json => json.to_string(),
        };
        for line in data.split('\n') {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// A chat request with `body`, as the tests of the recordings and of their diff write one.
#[cfg(test)]
pub(crate) fn chat_request(body: Value) -> RawRequest {
    RawRequest {
        method: "POST".into(),
        path: "/v1/chat/completions".into(),
        query: Vec::new(),
        body: canonical(body),
        media: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::chat_request as request;
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_change_the_key_and_the_sample_and_ordinal_do() {
        use super::super::raw_key;
        let a = request(
            serde_json::from_str(r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#)
                .unwrap(),
        );
        let b = request(
            serde_json::from_str(r#"{"messages":[{"content":"hi","role":"user"}],"model":"m"}"#)
                .unwrap(),
        );
        assert_eq!(a, b);
        assert_eq!(raw_key("t", 1, &a, 1), raw_key("t", 1, &b, 1));
        assert_ne!(raw_key("t", 1, &a, 1), raw_key("t", 1, &a, 2));
        assert_ne!(raw_key("t", 1, &a, 1), raw_key("t", 2, &a, 1));
        assert_ne!(raw_key("t", 1, &a, 1), raw_key("u", 1, &a, 1));
        let text = serde_json::to_string(&a.body).unwrap();
        assert_eq!(
            text,
            r#"{"messages":[{"content":"hi","role":"user"}],"model":"m"}"#
        );
    }

    #[test]
    fn events_read_and_written_back_in_order() {
        let anthropic = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n: ping\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let events = parse_events(anthropic);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].event.as_deref(), Some("message_start"));
        assert_eq!(events[1].data, json!({"type": "message_stop"}));
        assert_eq!(write_events(&events), anthropic.replace(": ping\n\n", ""));
        // OpenAI ends with a text, Gemini separates with CRLF.
        let openai = parse_events("data: {\"a\":1}\n\ndata: [DONE]\n\n");
        assert_eq!(openai[1].data, json!("[DONE]"));
        assert_eq!(write_events(&openai), "data: {\"a\":1}\n\ndata: [DONE]\n\n");
        let gemini = parse_events("data: {\"b\":2}\r\n\r\ndata: {\"b\":3}\r\n\r\n");
        assert_eq!(gemini.len(), 2);
        assert_eq!(gemini[1].data, json!({"b": 3}));
        // Two data lines are one event's text.
        let joined = parse_events("data: one\ndata: two\n\n");
        assert_eq!(joined[0].data, json!("one\ntwo"));
        assert_eq!(write_events(&joined), "data: one\ndata: two\n\n");
    }

    #[test]
    fn a_raw_entry_is_written_and_read_back_and_a_mixed_one_is_refused() {
        use super::super::{Entry, Exchange, FileBody};
        let entry = Entry {
            key: "k".into(),
            test: "t".into(),
            target: Some("prompts".into()),
            run: 1,
            role: crate::role::CallRole::Subject,
            provider: "openai".into(),
            model: "m".into(),
            call: Exchange::Raw {
                request: request(json!({"model": "m", "stream": true})),
                response: RawResponse {
                    status: 200,
                    content_type: "text/event-stream".into(),
                    body: RawBody::Events(parse_events("data: {\"a\":1}\n\ndata: [DONE]\n\n")),
                },
            },
            latency_ms: 3,
            recorded_at: "2026-01-01T00:00:00Z".into(),
        };
        let body = FileBody {
            version: super::super::entry::FORMAT_VERSION,
            entries: vec![entry.clone()],
            verdicts: Vec::new(),
        };
        let text = serde_json::to_string_pretty(&body).unwrap();
        assert!(
            text.contains("\"http_request\"") && text.contains("\"events\""),
            "{text}"
        );
        let read: FileBody = serde_json::from_str(&text).unwrap();
        assert_eq!(read.entries, vec![entry]);
        // An entry holding a raw call and a completion's fields is neither.
        let mixed = text.replace(
            "\"http_request\"",
            "\"response\": {\"text\": \"x\"}, \"http_request\"",
        );
        let error = serde_json::from_str::<FileBody>(&mixed)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("holds `http_request` and `http_response`"),
            "{error}"
        );
    }
}
