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
    ) -> Result<Forwarding<'_>, ProviderError> {
        let sends_key = headers
            .iter()
            .any(|(name, _)| CREDENTIAL_HEADERS.contains(&name.as_str()));
        let mut builder = self
            .http
            .get()
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
        let answering = self
            .send_in_slot(builder, url, sent)
            .await
            .map_err(|f| self.give_up(f, 1))?;
        Ok(Forwarding {
            client: self,
            url: url.to_string(),
            read: 0,
            answering,
        })
    }
}

/// The provider's answer as its head comes, its body still to read (in its in-flight slot).
pub(crate) struct Forwarding<'a> {
    client: &'a ProviderClient,
    url: String,
    read: u64,
    answering: super::slot::Answering<'a>,
}

impl Forwarding<'_> {
    /// Its status.
    pub(crate) fn status(&self) -> u16 {
        self.answering.response.status().as_u16()
    }

    /// Its headers.
    pub(crate) fn headers(&self) -> &HeaderMap {
        self.answering.response.headers()
    }

    /// The body's next piece as it comes (`None` at its end), the body held to `[retry]
    /// max_response_bytes` as a whole one is.
    pub(crate) async fn chunk(&mut self) -> Result<Option<hyper::body::Bytes>, ProviderError> {
        let client = self.client;
        let limit = client.retry.max_response_bytes;
        let chunk = self
            .answering
            .response
            .chunk()
            .await
            .map_err(|e| client.give_up(client.transport_failure(&self.url, &e), 1))?;
        if let Some(chunk) = &chunk {
            self.read += chunk.len() as u64;
            if self.read > limit {
                return Err(ProviderError {
                    provider: client.name().to_string(),
                    status: None,
                    error_type: Some("response_too_large".into()),
                    message: format!(
                        "the answer's body is longer than {limit} bytes; raise `[retry] \
                         max_response_bytes` in prompt-tester.toml if a real answer is this long"
                    ),
                    request_id: None,
                    attempts: 1,
                });
            }
        }
        Ok(chunk)
    }

    /// The body read whole.
    pub(crate) async fn whole(mut self) -> Result<Forwarded, ProviderError> {
        let client = self.client;
        let body = client
            .body_of(&self.url, &mut self.answering.response)
            .await
            .map_err(|f| client.give_up(f, 1))?;
        let (status, headers) = (self.status(), self.headers().clone());
        Ok(Forwarded {
            status,
            headers,
            body,
            latency: self.end(),
        })
    }

    /// The body's end: the slot given back, and the latency from sending to here.
    pub(crate) fn end(self) -> Duration {
        self.answering.end()
    }
}
