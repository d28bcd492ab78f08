//! `similar` assertions: embeddings from the configured model, recorded and replayed, the message of a
//! failure, and a missing `[embeddings]`.

use prompt_tester::embedding::cosine;
use prompt_tester_testkit::{FakeProvider, fake_embedding};

use super::*;

const EMBEDDING_MODEL: &str = "fake-embedding";
const REFERENCE: &str = "Paris is the capital of France.";

const SUITE: &str = r#"
prompt = "{q}"
assert = [{ similar = "Paris is the capital of France.", threshold = 0.9 }]

[[cases]]
name = "capital"
inputs = { q = "Capital of France?" }

[[cases]]
name = "off_topic"
inputs = { q = "Favourite fruit?" }
"#;

/// Adds `[embeddings]` (the `fake` provider) and a price for the embedding model.
fn with_embeddings(f: &Fixture) {
    let path = f.root.join("prompt-tester.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        path,
        format!(
            "{text}\n[embeddings]\nprovider = \"{PROVIDER}\"\nmodel = \"{EMBEDDING_MODEL}\"\n\n\
             [prices.\"{EMBEDDING_MODEL}\"]\ninput_mtok = 0.5\noutput_mtok = 0.0\n"
        ),
    )
    .unwrap();
}

/// Knows the capital of France and answers anything else with bananas; embeddings calls get the
/// fake embedding of their text (the echo's).
fn answers() -> FakeProvider {
    FakeProvider::builder()
        .answer_prompt("Capital of France?", "The capital of France is Paris.")
        .echo_text("Bananas grow quickly.")
        .start()
}

#[test]
fn similar_compares_meanings_records_the_embeddings_and_replays_them() {
    let fake = answers();
    let mut f = Fixture::calling("similar", &fake, "record");
    with_embeddings(&f);
    f.file("prompt-tests/geo.evals.toml", SUITE);
    let out = f.run(&[]);
    out.assert_statuses(&[("geo::capital", "ok"), ("geo::off_topic", "FAILED")]);
    let score = cosine(
        &fake_embedding("Bananas grow quickly."),
        &fake_embedding(REFERENCE),
    )
    .unwrap();
    assert!(score < 0.9, "{score}");
    let reason = out.failure("geo", "off_topic");
    let expected = format!(
        "similar: expected a cosine similarity of at least 0.9 to the reference \"{REFERENCE}\"; saw {score:.3} \
         for the output \"Bananas grow quickly.\""
    );
    assert!(reason.contains(&expected), "{expected:?} not in {reason}");
    // Each case embeds its output and the reference: 4 embeddings calls counted, 6 tokens each for the
    // reference and 5 and 3 for the outputs, at $0.50 per million.
    let embedding = &out.suite("geo")["usage"]["embedding"];
    assert_eq!(embedding["calls"], 4, "{embedding}");
    assert_eq!(embedding["replayed"], 0, "{embedding}");
    assert_eq!(embedding["input_tokens"], 6 + 6 + 6 + 3, "{embedding}");
    let cost = embedding["cost_usd"].as_f64().unwrap();
    assert!((cost - 21.0 * 0.5 / 1e6).abs() < 1e-12, "{cost}");
    let junit = out.junit.as_ref().expect("a JUnit report was written");
    assert!(
        junit.contains(r#"<property name="embedding_calls" value="2"/>"#),
        "{junit}"
    );
    let embedded: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.is_embedding())
        .filter_map(|r| r.embedding_input())
        .collect();
    assert!(embedded.contains(&REFERENCE.to_string()), "{embedded:?}");
    assert!(
        embedded.contains(&"Bananas grow quickly.".to_string()),
        "{embedded:?}"
    );

    // The cassette holds the embeddings, keyed by their text (the reference once for both cases).
    let entries = f.recorded("geo");
    let embeddings: Vec<&Value> = entries
        .iter()
        .filter(|e| e["role"] == "embedding")
        .collect();
    assert_eq!(embeddings.len(), 3, "{entries:#?}");
    for e in &embeddings {
        assert!(
            e.get("request").is_none() && e.get("response").is_none(),
            "{e}"
        );
        assert_eq!(e["embedding_request"]["model"], EMBEDDING_MODEL);
        assert_eq!(e["embedding"]["vector"].as_array().unwrap().len(), 27);
    }
    let subject = entries.iter().find(|e| e["role"] == "subject").unwrap();
    assert!(subject.get("request").is_some() && subject.get("embedding").is_none());

    // Offline: the same verdicts from the cassette, with no server at all.
    drop(fake);
    f.configure("http://127.0.0.1:9/v1");
    with_embeddings(&f);
    f.mode = "replay";
    let out = f.run(&[]);
    out.assert_statuses(&[("geo::capital", "ok"), ("geo::off_topic", "FAILED")]);
    assert!(out.failure("geo", "off_topic").contains(&expected));
    let embedding = &out.suite("geo")["usage"]["embedding"];
    assert_eq!(
        (embedding["calls"].as_u64(), embedding["replayed"].as_u64()),
        (Some(4), Some(4))
    );
}

#[test]
fn similar_without_an_embedding_model_errors_with_how_to_configure_one() {
    let fake = answers();
    let f = Fixture::calling("similar-unconfigured", &fake, "off");
    f.file("prompt-tests/geo.evals.toml", SUITE);
    let out = f.run(&[]);
    out.assert_statuses(&[("geo::capital", "FAILED")]);
    let reason = out.failure("geo", "capital");
    assert!(
        reason.contains("similar: this test compares meanings"),
        "{reason}"
    );
    assert!(reason.contains("[embeddings]"), "{reason}");
}
