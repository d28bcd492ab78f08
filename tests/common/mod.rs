//! prompt-tester's side of the testkit's fake provider, shared by the tests that call it through the
//! library's provider clients: the endpoint of a wire, a model per wire, a client, quick retries.
//! (The testkit itself knows nothing of prompt-tester: it speaks JSON only.)
#![allow(dead_code)]

use std::time::Duration;

use prompt_tester::config::{EndpointConfig, RetryConfig, WireFormat};
use prompt_tester::provider::ProviderClient;
use prompt_tester_testkit::{FakeProvider, Reply, Wire};

/// The three wire formats.
pub const ALL: [Wire; 3] = [Wire::Anthropic, Wire::Gemini, Wire::OpenAi];

/// A real model name of each wire's provider.
pub fn model_for(wire: Wire) -> &'static str {
    match wire {
        Wire::Anthropic => "claude-haiku-4-5",
        Wire::Gemini => "gemini-2.5-flash",
        Wire::OpenAi => "gpt-4o-mini",
    }
}

/// The library's name for the fake's wire.
pub fn wire_format(wire: Wire) -> WireFormat {
    match wire {
        Wire::Anthropic => WireFormat::Anthropic,
        Wire::Gemini => WireFormat::Google,
        Wire::OpenAi => WireFormat::OpenAi,
    }
}

/// The endpoint `name` for `wire` on `fake`, without a key variable.
pub fn endpoint(
    name: &str,
    fake: &FakeProvider,
    wire: Wire,
    max_in_flight: usize,
) -> EndpointConfig {
    EndpointConfig {
        name: name.to_string(),
        wire: wire_format(wire),
        base_url: fake.base_url(wire),
        api_key_env: Vec::new(),
        max_in_flight,
    }
}

/// Retries with short backoffs, so a test that retries stays fast.
pub fn fast_retry(max_attempts: u32) -> RetryConfig {
    RetryConfig {
        max_attempts,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_secs(2),
        request_timeout: Duration::from_secs(5),
        ..RetryConfig::default()
    }
}

/// A client of `endpoint` with `retry` and the key `key`.
pub fn client_of(
    endpoint: &EndpointConfig,
    retry: &RetryConfig,
    key: Option<&str>,
) -> ProviderClient {
    ProviderClient::with_api_key(endpoint, retry, key.map(str::to_string))
}

/// A fake that answers every call after 20 ms, the first with `first` (a rate limit, in the tests of
/// backoff): the later calls overlap the first one's wait.
pub fn answering_first(first: Reply) -> FakeProvider {
    let fake = FakeProvider::with_latency(Duration::from_millis(20));
    fake.push(first);
    fake
}
