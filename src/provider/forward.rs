//! One request of the application's own client forwarded to the endpoint, as the recording endpoint
//! makes it: sent once (the client retries what it wants to), under the endpoint's in-flight limit,
//! with the client's credentials, else the endpoint's configured key.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::ProviderClient;
use crate::provider::ProviderError;

/// The provider's answer, as it came.
#[derive(Debug)]
pub(crate) struct Forwarded {
    /// Its status.
    pub status: u16,
    /// Its headers.
    pub headers: HeaderMap,
    /// Its body, read whole.
    pub body: Vec<u8>,
    /// From sending the request to the body's end.
    pub latency: Duration,
}

/// The request headers that carry a credential.
pub(crate) const CREDENTIAL_HEADERS: [&str; 3] = ["authorization", "x-api-key", "x-goog-api-key"];

impl ProviderClient {
    /// Sends `body` to `url` with `headers` (the client's, hop-by-hop ones left out by the caller).
    /// When the client sent no credential, the endpoint's key goes in its wire's header.
    pub(crate) async fn forward(
        &self,
        url: &str,
        headers: Vec<(HeaderName, HeaderValue)>,
        body: Vec<u8>,
        sent: &super::Sent,
    ) -> Result<Forwarded, ProviderError> {
        let sends_key = headers
            .iter()
            .any(|(name, _)| CREDENTIAL_HEADERS.contains(&name.as_str()));
        let mut builder = self
            .http
            .post(url)
            .timeout(self.retry.request_timeout)
            .body(body);
        let named: Vec<HeaderName> = headers.iter().map(|(n, _)| n.clone()).collect();
        for (name, value) in headers {
            builder = builder.header(name, value);
        }
        for (name, value) in self.auth_headers().map_err(|f| self.give_up(f, 1))? {
            let credential = CREDENTIAL_HEADERS.contains(&name);
            if (credential && !sends_key) || (!credential && !named.iter().any(|n| n == name)) {
                builder = builder.header(name, value);
            }
        }
        let (status, headers, body, latency) = self
            .in_slot(builder, url, sent)
            .await
            .map_err(|f| self.give_up(f, 1))?;
        Ok(Forwarded {
            status,
            headers,
            body,
            latency,
        })
    }
}
