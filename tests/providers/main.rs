//! The provider clients against a real HTTP server on 127.0.0.1 (the testkit's fake provider), and
//! against every recorded real provider response in `../shared/fixtures/provider-recordings/`.
//!
//! One module per concern: each wire format's request shape and answer (`anthropic`, `gemini`,
//! `openai`), what all three share (`wires`), retries and errors (`retry`), the in-flight limit
//! (`limits`), the recorded responses (`recordings`, with their expected fields in `expected`) and a
//! live OpenAI-compatible server (`local`).

use prompt_tester::completion::CompletionRequest;
use prompt_tester::config::{EndpointConfig, RetryConfig, WireFormat};
use prompt_tester::provider::{ProviderClient, ProviderError};
use prompt_tester_testkit::{FakeProvider, Wire};
use std::time::Duration;

mod anthropic;
mod expected;
mod gemini;
mod limits;
mod local;
mod openai;
mod recordings;
mod retry;
mod wires;

#[path = "../prereq/mod.rs"]
mod prereq;

const KEY: &str = "sk-test-SECRET-0123456789abcdef";

fn http() -> reqwest::Client {
    // reqwest is built without a bundled crypto provider; the engine installs ring the same way.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

fn fast_retry(max_attempts: u32) -> RetryConfig {
    RetryConfig {
        max_attempts,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_secs(2),
        request_timeout: Duration::from_secs(5),
        ..RetryConfig::default()
    }
}

fn wire_format(wire: Wire) -> WireFormat {
    match wire {
        Wire::Anthropic => WireFormat::Anthropic,
        Wire::Gemini => WireFormat::Google,
        Wire::OpenAi => WireFormat::OpenAi,
    }
}

fn endpoint_for(fake: &FakeProvider, wire: Wire, max_in_flight: usize) -> EndpointConfig {
    EndpointConfig {
        name: format!("fake-{wire:?}").to_lowercase(),
        wire: wire_format(wire),
        base_url: fake.base_url(wire),
        api_key_env: vec!["PT_TEST_KEY_NEVER_SET".into()],
        max_in_flight,
    }
}

fn client(fake: &FakeProvider, wire: Wire, retry: RetryConfig) -> ProviderClient {
    ProviderClient::with_api_key(
        &endpoint_for(fake, wire, 8),
        &retry,
        http(),
        Some(KEY.into()),
    )
}

const ALL: [Wire; 3] = [Wire::Anthropic, Wire::Gemini, Wire::OpenAi];

fn model_for(wire: Wire) -> &'static str {
    match wire {
        Wire::Anthropic => "claude-haiku-4-5",
        Wire::Gemini => "gemini-2.5-flash",
        Wire::OpenAi => "gpt-4o-mini",
    }
}

fn simple(wire: Wire) -> CompletionRequest {
    CompletionRequest::new(model_for(wire), "What is the capital of France?", 64)
}

/// The error's text names what happened and never the key.
fn assert_clean(error: &ProviderError) -> String {
    let text = error.to_string();
    assert!(!text.contains(KEY), "the key leaked: {text}");
    assert!(
        !format!("{error:?}").contains(KEY),
        "the key leaked: {error:?}"
    );
    assert!(text.starts_with(&format!("{}:", error.provider)), "{text}");
    text
}
