//! Model providers over HTTP: Anthropic Messages, Google Gemini and OpenAI-compatible Chat Completions.
//!
//! CONTRACT (implemented by the providers work; the engine relies on exactly this):
//! - `ProviderClient::new(endpoint, retry, http)` reads the key from the endpoint's env vars.
//! - `missing_key()` names the variable to set when a key is required and absent.
//! - `complete()` sends one request with retries and the endpoint's in-flight limit; `cost_usd` is
//!   left `None` (the engine prices results).

use std::sync::Arc;

use crate::completion::{CompletionRequest, CompletionResult};
use crate::config::{EndpointConfig, RetryConfig};

/// A provider call that finally failed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{provider}: {message}")]
pub struct ProviderError {
    /// The provider name.
    pub provider: String,
    /// HTTP status, if a response came.
    pub status: Option<u16>,
    /// The provider's error type (`rate_limit_error`, `RESOURCE_EXHAUSTED`, ...).
    pub error_type: Option<String>,
    /// The provider's message, or what went wrong.
    pub message: String,
    /// The provider's request id.
    pub request_id: Option<String>,
    /// Attempts made.
    pub attempts: u32,
}

/// A client for one endpoint.
#[derive(Debug, Clone)]
pub struct ProviderClient {
    endpoint: EndpointConfig,
    api_key: Option<String>,
    #[allow(dead_code)]
    retry: RetryConfig,
    #[allow(dead_code)]
    http: reqwest::Client,
    #[allow(dead_code)]
    in_flight: Arc<tokio::sync::Semaphore>,
}

impl ProviderClient {
    /// A client for `endpoint`.
    pub fn new(endpoint: &EndpointConfig, retry: &RetryConfig, http: reqwest::Client) -> Self {
        let api_key = endpoint.api_key_env.iter().find_map(|v| crate::config::env_var(v));
        Self {
            endpoint: endpoint.clone(),
            api_key,
            retry: retry.clone(),
            http,
            in_flight: Arc::new(tokio::sync::Semaphore::new(endpoint.max_in_flight)),
        }
    }

    /// The endpoint's name.
    pub fn name(&self) -> &str {
        &self.endpoint.name
    }

    /// The variable to set when this endpoint needs a key and none is set.
    pub fn missing_key(&self) -> Option<String> {
        if self.api_key.is_some() || self.endpoint.api_key_env.is_empty() {
            return None;
        }
        Some(self.endpoint.api_key_env[0].clone())
    }

    /// Sends one request.
    pub async fn complete(&self, _request: &CompletionRequest) -> Result<CompletionResult, ProviderError> {
        todo!("providers work")
    }
}
