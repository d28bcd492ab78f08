//! The errors a provider call ends with, and what a provider's error body says.

use std::fmt;
use std::time::Duration;

/// A provider call that finally failed. Its text never contains the API key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub struct ProviderError {
    /// The provider name.
    pub provider: String,
    /// HTTP status, if a response came.
    pub status: Option<u16>,
    /// The provider's error type (`rate_limit_error`, `RESOURCE_EXHAUSTED`, ...), or `timeout`,
    /// `connection`, `invalid_response` for failures without a provider error body.
    pub error_type: Option<String>,
    /// The provider's message, or what went wrong.
    pub message: String,
    /// The provider's request id.
    pub request_id: Option<String>,
    /// Attempts made.
    pub attempts: u32,
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.provider)?;
        if let Some(status) = self.status {
            write!(f, " HTTP {status}")?;
        }
        if let Some(kind) = &self.error_type {
            write!(f, " {kind}")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(id) = &self.request_id {
            write!(f, " (request id {id})")?;
        }
        match self.attempts {
            0 | 1 => write!(f, " [1 attempt]"),
            n => write!(f, " [{n} attempts]"),
        }
    }
}

/// What a provider's error body says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorBody {
    /// The error type (`overloaded_error`, `NOT_FOUND`, `invalid_request_error`, ...).
    pub error_type: Option<String>,
    /// The message.
    pub message: Option<String>,
    /// The request id the body carries (Anthropic).
    pub request_id: Option<String>,
    /// How long the provider asks to wait (Gemini `RetryInfo.retryDelay`).
    pub retry_delay: Option<Duration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_everything_but_the_key() {
        let error = ProviderError {
            provider: "anthropic".into(),
            status: Some(529),
            error_type: Some("overloaded_error".into()),
            message: "Overloaded".into(),
            request_id: Some("req_1".into()),
            attempts: 4,
        };
        assert_eq!(
            error.to_string(),
            "anthropic: HTTP 529 overloaded_error: Overloaded (request id req_1) [4 attempts]"
        );
    }
}
