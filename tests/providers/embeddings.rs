//! Embeddings over the provider clients: each wire format's request and answer against the fake, the
//! Anthropic refusal, retries on 429 and 5xx, and errors that never carry the key.

use prompt_tester::embedding::{Embedding, EmbeddingRequest, cosine};
use prompt_tester_testkit::{Reply, fake_embedding};
use serde_json::json;
use std::time::Duration;

use super::*;

const EMBEDDING_WIRES: [Wire; 2] = [Wire::OpenAi, Wire::Gemini];

fn request(wire: Wire) -> EmbeddingRequest {
    let model = match wire {
        Wire::Gemini => "gemini-embedding-001",
        _ => "text-embedding-3-small",
    };
    EmbeddingRequest::new(model, "Paris is the capital of France.")
}

/// One embeddings call of [`request`] in `wire` to `fake`, in at most `attempts` attempts.
async fn embed(fake: &FakeProvider, wire: Wire, attempts: u32) -> Result<Embedding, ProviderError> {
    client(fake, wire, fast_retry(attempts))
        .embed(&request(wire))
        .await
}

#[tokio::test]
async fn each_wire_format_sends_its_request_and_reads_the_vector() {
    for wire in EMBEDDING_WIRES {
        let fake = FakeProvider::start();
        let embedding = embed(&fake, wire, 1).await.unwrap();
        assert_eq!(
            embedding.vector,
            fake_embedding("Paris is the capital of France."),
            "{wire:?}"
        );
        assert_eq!(embedding.input_tokens, Some(6), "{wire:?}");
        let sent = fake.requests().remove(0);
        match wire {
            Wire::OpenAi => {
                assert_eq!(sent.path, "/v1/embeddings");
                assert_eq!(
                    sent.json.clone().unwrap(),
                    json!({"model": "text-embedding-3-small", "input": "Paris is the capital of France."})
                );
                assert_eq!(
                    sent.header("authorization"),
                    Some(format!("Bearer {KEY}").as_str())
                );
                assert_eq!(
                    embedding.model_used.as_deref(),
                    Some("text-embedding-3-small")
                );
            }
            _ => {
                assert_eq!(
                    sent.path,
                    "/v1beta/models/gemini-embedding-001:embedContent"
                );
                assert_eq!(
                    sent.json.clone().unwrap(),
                    json!({"model": "models/gemini-embedding-001",
                        "content": {"parts": [{"text": "Paris is the capital of France."}]}})
                );
                assert_eq!(sent.header("x-goog-api-key"), Some(KEY));
            }
        }
    }
}

#[tokio::test]
async fn anthropic_has_no_embeddings_api_and_no_call_is_made() {
    let fake = FakeProvider::start();
    let err = embed(&fake, Wire::Anthropic, 3).await.unwrap_err();
    assert_clean(
        &err,
        &["Anthropic has no embeddings API", "[embeddings] provider"],
    );
    assert_eq!(fake.request_count(), 0);
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried() {
    for wire in EMBEDDING_WIRES {
        let fake = FakeProvider::start();
        fake.push_all([
            Reply::rate_limited(wire, Duration::from_millis(50)),
            Reply::server_error(wire, 503),
            Reply::server_error(wire, 500),
        ]);
        let embedding = embed(&fake, wire, 3).await.unwrap();
        assert_eq!(embedding.vector.len(), 27, "{wire:?}");
        assert_eq!(fake.request_count(), 4, "{wire:?}");
        // A final error after max_attempts faults, in the provider's words, without the key.
        fake.reset();
        fake.push_all([
            Reply::server_error(wire, 500),
            Reply::server_error(wire, 502),
        ]);
        let err = embed(&fake, wire, 2).await.unwrap_err();
        let text = assert_clean(&err, &[]);
        assert_eq!((err.status, err.attempts), (Some(502), 2), "{text}");
        // A 4xx is final.
        fake.reset();
        fake.push(Reply::error(
            wire,
            400,
            "invalid_request_error",
            "input is too long",
        ));
        let err = embed(&fake, wire, 3).await.unwrap_err();
        assert_clean(&err, &["input is too long"]);
        assert_eq!(fake.request_count(), 1, "{wire:?}");
    }
}

#[tokio::test]
async fn a_body_that_is_not_an_embedding_is_a_final_error_naming_the_format() {
    let fake = FakeProvider::start();
    // A chat answer where an embedding was expected: the base URL points at the wrong thing.
    fake.push(Reply::text(Wire::OpenAi, "m", "hello", Usage::new(1, 1)));
    let err = embed(&fake, Wire::OpenAi, 3).await.unwrap_err();
    assert_clean(
        &err,
        &["the answer is not a valid OpenAI embeddings response: it has no `data` array"],
    );
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn similar_texts_score_higher_than_unrelated_ones() {
    let fake = FakeProvider::start();
    let client = client(&fake, Wire::OpenAi, fast_retry(1));
    let embed = |text: &str| {
        let client = client.clone();
        let request = EmbeddingRequest::new("m", text);
        async move { client.embed(&request).await.unwrap().vector }
    };
    let paris = embed("Paris is the capital of France.").await;
    let same = embed("The capital of France is Paris.").await;
    let other = embed("xyzzy 42").await;
    assert!((cosine(&paris, &same).unwrap() - 1.0).abs() < 1e-9);
    assert!(cosine(&paris, &other).unwrap() < 0.2);
}
