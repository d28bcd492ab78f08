//! Embeddings over the wire: OpenAI-compatible `POST {base}/embeddings` and Gemini
//! `POST {base}/v1beta/models/{model}:embedContent`. Anthropic has no embeddings API: asking it is a
//! final error that says what to configure instead.
//!
//! - OpenAI-compatible (OpenAI, Ollama, vLLM, llama-server `--embeddings`): `{"model", "input"}` with one
//!   string; the answer's `data[0].embedding`, `usage.prompt_tokens` and `model`.
//! - Gemini: `{"model": "models/{model}", "content": {"parts": [{"text"}]}}`; the answer's
//!   `embedding.values`, and `usageMetadata.promptTokenCount` when the API gives it (otherwise the
//!   token count, and so the cost, stay unknown).
//!
//! Errors, retries, keys and the in-flight limit are the client's, shared with completions.

use serde_json::{Value, json};

use super::{count, first_item, string};
use crate::config::{EndpointConfig, WireFormat};
use crate::embedding::{Embedding, EmbeddingRequest};

/// The URL of the embeddings call of `endpoint` for `model`.
pub(super) fn url(endpoint: &EndpointConfig, model: &str) -> String {
    let base = endpoint.base_url.trim().trim_end_matches('/');
    match endpoint.wire {
        WireFormat::Google => super::gemini::method_url(base, model, "embedContent"),
        // Anthropic is refused before a URL is built; its URL would be the OpenAI shape.
        WireFormat::OpenAi | WireFormat::Anthropic => format!("{base}/embeddings"),
    }
}

/// The JSON body of `request` in `wire`'s format.
#[doc(hidden)]
pub fn request_body(wire: WireFormat, request: &EmbeddingRequest) -> Value {
    match wire {
        WireFormat::Google => {
            let model = request.model.trim().trim_start_matches("models/");
            json!({
                "model": format!("models/{model}"),
                "content": {"parts": [{"text": request.input}]}
            })
        }
        WireFormat::OpenAi | WireFormat::Anthropic => {
            json!({"model": request.model, "input": request.input})
        }
    }
}

/// Reads a success body of `wire` (`cost_usd` stays `None`).
pub(crate) fn parse(wire: WireFormat, body: &Value) -> Result<Embedding, String> {
    let (values, input_tokens, model_used) = match wire {
        WireFormat::Google => {
            let values = body
                .get("embedding")
                .and_then(|e| e.get("values"))
                .ok_or("it has no `embedding.values` of an embedContent response")?;
            let tokens = body
                .get("usageMetadata")
                .filter(|u| u.get("promptTokenCount").is_some())
                .map(|u| count(u, "promptTokenCount"));
            (values, tokens, None)
        }
        WireFormat::OpenAi | WireFormat::Anthropic => {
            let values = first_item(body, "data", "an embeddings response")?
                .get("embedding")
                .ok_or("its first `data` item has no `embedding`")?;
            let tokens = body
                .get("usage")
                .filter(|u| u.get("prompt_tokens").is_some())
                .map(|u| count(u, "prompt_tokens"));
            (values, tokens, string(body, "model"))
        }
    };
    let values = values
        .as_array()
        .ok_or("the embedding is not an array of numbers (ask for float encoding, not base64)")?;
    // A value beyond f32's range would be infinite, which a cassette cannot hold (JSON has no
    // infinity): the recording would make the whole file unreadable.
    let vector = values
        .iter()
        .map(|v| v.as_f64().map(|x| x as f32).filter(|x| x.is_finite()))
        .collect::<Option<Vec<f32>>>()
        .ok_or("the embedding holds a value that is not a number within f32's range")?;
    if vector.is_empty() {
        return Err("the embedding is empty".into());
    }
    Ok(Embedding {
        vector,
        input_tokens,
        model_used,
        cost_usd: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::tests::endpoint;

    #[test]
    fn urls_and_bodies_per_wire() {
        let openai = endpoint("local", WireFormat::OpenAi, "http://127.0.0.1:8/v1/", &[]);
        assert_eq!(url(&openai, "m"), "http://127.0.0.1:8/v1/embeddings");
        let google = endpoint("google", WireFormat::Google, "http://127.0.0.1:9", &[]);
        assert_eq!(
            url(&google, "models/gemini-embedding-001"),
            "http://127.0.0.1:9/v1beta/models/gemini-embedding-001:embedContent"
        );
        let request = EmbeddingRequest::new("gemini-embedding-001", "Paris");
        assert_eq!(
            request_body(WireFormat::Google, &request),
            json!({"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "Paris"}]}})
        );
        assert_eq!(
            request_body(WireFormat::OpenAi, &request),
            json!({"model": "gemini-embedding-001", "input": "Paris"})
        );
        assert!(WireFormat::Anthropic.embeddings_unsupported().is_some());
        assert!(WireFormat::OpenAi.embeddings_unsupported().is_none());
    }

    #[test]
    fn answers_per_wire() {
        let e = parse(
            WireFormat::OpenAi,
            &json!({"object": "list", "model": "text-embedding-3-small",
                "data": [{"object": "embedding", "index": 0, "embedding": [0.5, -1]}],
                "usage": {"prompt_tokens": 4, "total_tokens": 4}}),
        )
        .unwrap();
        assert_eq!(e.vector, [0.5, -1.0]);
        assert_eq!(e.input_tokens, Some(4));
        assert_eq!(e.model_used.as_deref(), Some("text-embedding-3-small"));
        let g = parse(
            WireFormat::Google,
            &json!({"embedding": {"values": [0.25, 0.75]}}),
        )
        .unwrap();
        assert_eq!((g.vector.len(), g.input_tokens), (2, None));
        let g = parse(
            WireFormat::Google,
            &json!({"embedding": {"values": [1]}, "usageMetadata": {"promptTokenCount": 7}}),
        )
        .unwrap();
        assert_eq!(g.input_tokens, Some(7));
        for (wire, body, why) in [
            (WireFormat::OpenAi, json!({"data": []}), "empty"),
            (
                WireFormat::OpenAi,
                json!({"data": [{"embedding": "AAAA"}]}),
                "base64",
            ),
            (
                WireFormat::OpenAi,
                json!({"choices": []}),
                "no `data` array",
            ),
            (
                WireFormat::Google,
                json!({"candidates": []}),
                "embedding.values",
            ),
            (
                WireFormat::Google,
                json!({"embedding": {"values": [1, "x"]}}),
                "not a number",
            ),
        ] {
            let err = parse(wire, &body).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }
}
