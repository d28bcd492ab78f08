//! What a provider or a judge answers, read as the client and the judge read it: each wire format's
//! answer and error bodies, the embeddings answers, and judge replies. Whatever the bytes, the reader
//! returns; an answer it accepts is one a cassette records and replays unchanged.

use prompt_tester::CompletionResult;
use prompt_tester::ToolCall;
use prompt_tester::config::WireFormat;
use prompt_tester::testing::{readers, wire};
use prompt_tester_testkit::{Reply, Usage, Wire};
use proptest::prelude::*;
use serde_json::json;

use super::inputs::{hostile, hostile_text};
use super::{config, returns};

const WIRES: [(Wire, WireFormat); 3] = [
    (Wire::Anthropic, WireFormat::Anthropic),
    (Wire::Gemini, WireFormat::Google),
    (Wire::OpenAi, WireFormat::OpenAi),
];

/// Well-formed answers and error bodies of every wire (each reader is given all of them: a body of
/// the wrong format is one more hostile input).
fn bodies() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (wire, _) in WIRES {
        let usage = Usage::new(12, 34).cached(5).thoughts(7);
        seeds.push(Reply::text(wire, "m", "Paris is the capital.", usage).body);
        let arguments = json!({"answer": "yes", "n": [1, 2.5, null]});
        seeds.push(Reply::tool_call(wire, "m", "result", &arguments, usage).body);
        seeds.push(Reply::error(wire, 429, "rate_limit_error", "slow down").body);
        seeds.push(Reply::rate_limited(wire, std::time::Duration::from_millis(1500)).body);
        seeds.push(Reply::embedding(wire, "e", &[0.25, -1.0, 3.5e-3], 9).body);
    }
    seeds
}

/// `value` as a cassette writes it and reads it back.
fn recorded<T: serde::Serialize + serde::de::DeserializeOwned>(value: &T) -> Result<T, String> {
    let text = serde_json::to_string(value).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))
}

#[test]
fn an_answer_is_read_or_refused_quoting_it_and_what_is_read_records_and_replays() {
    proptest!(config(), |(bytes in hostile(bodies()), which in 0..3usize)| {
        let format = WIRES[which].1;
        let body = bytes.clone();
        match returns("the answer reader", move || wire::parse_response(format, &body)) {
            Ok(result) => prop_assert_eq!(recorded(&result), Ok(result)),
            Err(e) => prop_assert!(
                e.to_string().contains("the body"),
                "the error quotes the body: {}",
                e
            ),
        }
        let body = bytes;
        returns("the error body reader", move || wire::parse_error_body(format, &body));
    });
}

#[test]
fn an_embedding_is_read_or_refused_and_what_is_read_records_and_replays() {
    proptest!(config(), |(bytes in hostile(bodies()), google in any::<bool>())| {
        let format = if google { WireFormat::Google } else { WireFormat::OpenAi };
        match returns("the embeddings reader", move || readers::embedding(format, &bytes)) {
            Ok(embedding) => prop_assert_eq!(recorded(&embedding), Ok(embedding)),
            Err(e) => prop_assert!(!e.is_empty()),
        }
    });
}

const REPLIES: &[&str] = &[
    r#"{"question_type": "factual_presence", "reasoning": "It names Paris.", "snippet": "Paris", "answer": "yes"}"#,
    r#"{"verdicts": [{"index": 1, "answer": "no", "reasoning": "r"}, {"index": 2, "answer": "Yes."}]}"#,
    "Sure! Here it is:\n```json\n{\"Answer\": \"YES\", \"Reasoning\": \"fine\"}\n```\nAnything else?",
    r##"[{"index": 0, "verdict": true}, {"index": 1, "verdict": "false"}, {"index": "#3", "answer": "no"}]"##,
    "I think the answer is no.",
];

#[test]
fn a_judge_reply_is_read_or_refused_in_text_and_in_tool_calls() {
    proptest!(config(), |(bytes in hostile_text(REPLIES), n in 0..5usize, as_tool in any::<bool>())| {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut reply = CompletionResult::new("", 1, 1);
        if as_tool {
            // A server may send the arguments as JSON, or as a string of JSON.
            let arguments = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
            reply.tool_calls.push(ToolCall {
                id: "t".into(),
                name: "verdict".into(),
                arguments,
                thought_signature: None,
            });
        } else {
            reply.text = text;
        }
        let (one, several) = returns("the judge reply reader", move || readers::judge_reply(&reply, n));
        for error in [one.err(), several.err()].into_iter().flatten() {
            prop_assert!(!error.is_empty());
        }
    });
}

/// Found by the property: a reply of nested brackets took seconds per kilobyte (each bracket one parse
/// to serde's nesting limit); 100 KB of them is read at once now, and a verdict before them still is.
#[test]
fn a_reply_of_nested_brackets_is_read_at_once() {
    let nested = "{\"a\":".repeat(20_000);
    for text in [
        nested.clone(),
        format!("{{\"answer\": \"no\"}} {nested}"),
        "[".repeat(100_000),
    ] {
        let reply = CompletionResult::new(text.clone(), 1, 1);
        let started = std::time::Instant::now();
        let (one, several) = readers::judge_reply(&reply, 2);
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(3), "{took:?}");
        if text.starts_with("{\"answer") {
            assert_eq!((one, several), (Ok(false), Ok(1)));
        } else {
            assert!(one.is_err() && several.is_err());
        }
    }
}
/// Found by the property: a value beyond f32's range became infinity, recorded as `null`, and the
/// cassette holding it no longer read.
#[test]
fn an_embedding_beyond_f32_is_refused_not_recorded_as_null() {
    for (format, body) in [
        (
            WireFormat::OpenAi,
            r#"{"data": [{"embedding": [3.4e39, 1]}]}"#,
        ),
        (
            WireFormat::Google,
            r#"{"embedding": {"values": [1, -1e300]}}"#,
        ),
    ] {
        let error = readers::embedding(format, body.as_bytes()).unwrap_err();
        assert!(error.contains("not a number within f32's range"), "{error}");
    }
    let fine = readers::embedding(
        WireFormat::OpenAi,
        br#"{"data": [{"embedding": [3.4e38, 1e-50]}]}"#,
    )
    .unwrap();
    assert_eq!(recorded(&fine), Ok(fine));
}
