//! The provider clients against a real HTTP server on 127.0.0.1 (the testkit's fake provider), and
//! against every recorded real provider response in `../shared/fixtures/provider-recordings/`.
//!
//! One module per concern: each wire format's request shape and answer (`anthropic`, `gemini`,
//! `openai`), a conversation before the prompt in each (`conversation`), what all three share
//! (`wires`), retries and errors (`retry`), a hostile provider
//! (`hostile`: endless bodies, bytes not UTF-8, huge counts and waits), the in-flight limit
//! (`limits`), the recorded responses (`recordings`, with their expected fields in `expected`) and a
//! live OpenAI-compatible server (`local`).

use prompt_tester::completion::{CompletionRequest, CompletionResult};
use prompt_tester::config::{EndpointConfig, RetryConfig};
use prompt_tester::provider::{ProviderClient, ProviderError};
use prompt_tester_testkit::{CapturedRequest, FakeProvider, Usage, Wire};

mod anthropic;
mod conversation;
mod embeddings;
mod expected;
mod gemini;
mod hostile;
mod limits;
mod local;
mod media;
mod openai;
mod recordings;
mod retry;
mod wires;

#[path = "../common/mod.rs"]
mod common;
#[path = "../prereq/mod.rs"]
mod prereq;

use common::{ALL, fast_retry, model_for};

const KEY: &str = "sk-test-SECRET-0123456789abcdef";

fn endpoint_for(fake: &FakeProvider, wire: Wire, max_in_flight: usize) -> EndpointConfig {
    EndpointConfig {
        api_key_env: vec!["PT_TEST_KEY_NEVER_SET".into()],
        ..common::endpoint(
            &format!("fake-{wire:?}").to_lowercase(),
            fake,
            wire,
            max_in_flight,
        )
    }
}

fn client(fake: &FakeProvider, wire: Wire, retry: RetryConfig) -> ProviderClient {
    common::client_of(&endpoint_for(fake, wire, 8), &retry, Some(KEY))
}

/// One call of `request` in `wire` to a fake that reports `usage`: the answer, and the request as the
/// fake received it.
async fn one_call(
    wire: Wire,
    usage: Usage,
    request: &CompletionRequest,
) -> (CompletionResult, CapturedRequest) {
    let fake = FakeProvider::builder().usage(usage).start();
    let result = client(&fake, wire, fast_retry(1))
        .complete(request)
        .await
        .unwrap();
    (result, fake.requests().remove(0))
}

/// The answer's token counts in the fake's terms, to compare with the `Usage` it was told to report.
fn tokens_of(result: &CompletionResult) -> Usage {
    Usage::new(result.input_tokens, result.output_tokens)
        .cached(result.cached_input_tokens)
        .thoughts(result.thoughts_tokens)
}

/// The answer carries a request id the fake made up, which starts with `prefix`.
fn assert_request_id(result: &CompletionResult, prefix: &str) {
    let id = result.request_id.as_deref();
    assert!(
        id.is_some_and(|id| id.starts_with(prefix)),
        "request id {id:?}"
    );
}

fn simple(wire: Wire) -> CompletionRequest {
    CompletionRequest::new(model_for(wire), "What is the capital of France?", 64)
}

/// One call of [`simple`] in `wire` to `fake`, with `retry`.
async fn call(
    fake: &FakeProvider,
    wire: Wire,
    retry: RetryConfig,
) -> Result<CompletionResult, ProviderError> {
    client(fake, wire, retry).complete(&simple(wire)).await
}

/// The error's text names what happened (each of `says`) and never the key.
#[track_caller]
fn assert_clean(error: &ProviderError, says: &[&str]) -> String {
    let text = error.to_string();
    prompt_tester_testkit::child::assert_contains(&text, says);
    assert!(!text.contains(KEY), "the key leaked: {text}");
    assert!(
        !format!("{error:?}").contains(KEY),
        "the key leaked: {error:?}"
    );
    assert!(text.starts_with(&format!("{}:", error.provider)), "{text}");
    text
}
