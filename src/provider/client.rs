//! The client of one endpoint: the key, retries and the endpoint's in-flight limit around one HTTP
//! exchange.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::limiter::{self, Limiter};
use super::{
    ProviderError, RateLimitStats, Sent, embeddings, excerpt, parse_error_body, parse_response,
    parse_with, request_body, request_url, retry, wire_name,
};
use crate::completion::{CompletionRequest, CompletionResult};
use crate::config::{EndpointConfig, RetryConfig, WireFormat};
use crate::embedding::{Embedding, EmbeddingRequest};

/// Whether `endpoint` needs a key: only a built-in one at its public URL does. A named endpoint's
/// `api_key_env` is optional (no key is sent while the variable is unset), and a built-in one pointed
/// away from its public URL (a local llama-server or Ollama behind `OPENAI_BASE_URL`) gets no auth
/// header unless a key happens to be set.
fn key_required(endpoint: &EndpointConfig) -> bool {
    if endpoint.api_key_env.is_empty() {
        return false;
    }
    crate::model::built_in(&endpoint.name)
        .is_some_and(|p| endpoint.base_url.trim().trim_end_matches('/') == p.base_url)
}

/// The variable to set when `endpoint` needs a key and none is set in the environment.
pub fn missing_key_for(endpoint: &EndpointConfig) -> Option<String> {
    let has_key = endpoint
        .api_key_env
        .iter()
        .any(|v| crate::config::env_var(v).is_some());
    (!has_key && key_required(endpoint)).then(|| endpoint.api_key_env[0].clone())
}

#[path = "slot.rs"]
mod slot;

#[cfg(feature = "endpoint")]
#[path = "forward.rs"]
mod forward;
#[cfg(feature = "endpoint")]
pub(crate) use forward::{CREDENTIAL_HEADERS, Forwarded};

/// A client for one endpoint.
#[derive(Clone)]
pub struct ProviderClient {
    endpoint: EndpointConfig,
    api_key: Option<String>,
    key_required: bool,
    retry: RetryConfig,
    http: LazyHttp,
    /// The endpoint's adaptive in-flight limit, shared by the clones of this client.
    limiter: Arc<Limiter>,
}

/// Shows the endpoint and whether a key is held, never the key.
impl std::fmt::Debug for ProviderClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderClient")
            .field("endpoint", &self.endpoint.name)
            .field("wire", &self.endpoint.wire)
            .field("base_url", &crate::redact::redact(&self.endpoint.base_url))
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

/// The HTTP client every provider call is made on. It follows no redirect: a key header (`x-api-key`,
/// `x-goog-api-key`) would go with the request to whatever host the redirect names, and reqwest strips
/// only `Authorization` and cookies across hosts. A 3xx answer is an error that names its `Location`.
fn http_client(max_idle_per_host: usize) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls_config())
        .pool_max_idle_per_host(max_idle_per_host)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("the HTTP client builds")
}

/// The TLS configuration of every HTTP client the harness builds (the providers', an MCP server's):
/// ring, the platform's root certificates and reqwest's ALPN, as reqwest would build them itself.
/// It is given to each client, never installed as the process's default provider: that one is the
/// application's to choose, and `CryptoProvider::install_default` fails once any is installed.
pub(crate) fn tls_config() -> rustls::ClientConfig {
    use rustls_platform_verifier::BuilderVerifierExt as _;
    let ring = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(ring)
        .with_safe_default_protocol_versions()
        .expect("ring supports TLS 1.2 and 1.3")
        .with_platform_verifier()
        .expect("the platform's root certificates load")
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    config
}

/// The key from the first of `endpoint`'s variables that is set.
fn env_key(endpoint: &EndpointConfig) -> Option<String> {
    endpoint
        .api_key_env
        .iter()
        .find_map(|v| crate::config::env_var(v))
}

/// The HTTP client, built on first use: a run that only replays never loads the TLS roots. Its clones
/// share one client (one connection pool).
#[derive(Clone)]
pub(crate) struct LazyHttp {
    max_idle_per_host: usize,
    client: Arc<std::sync::OnceLock<reqwest::Client>>,
}

impl LazyHttp {
    /// A client keeping at most `max_idle_per_host` idle connections to a host, once built.
    pub(crate) fn new(max_idle_per_host: usize) -> Self {
        Self {
            max_idle_per_host,
            client: Arc::default(),
        }
    }

    fn get(&self) -> &reqwest::Client {
        (self.client).get_or_init(|| http_client(self.max_idle_per_host))
    }
}

/// An HTTP client of its own, for a client built outside the engine.
fn own_http() -> LazyHttp {
    LazyHttp::new(usize::MAX)
}

/// One failed attempt, before deciding whether to retry.
#[derive(Debug)]
struct Failure {
    status: Option<u16>,
    error_type: Option<String>,
    message: String,
    request_id: Option<String>,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl ProviderClient {
    /// One HTTP exchange in one of the endpoint's in-flight slots (the limit covers the exchange
    /// only), `sent` marked as it goes: its status, headers, body and latency. The slot is given back
    /// paced by what the answer says of the provider's limits, before it wakes a waiter; dropped on a
    /// transport error, it tells the limit nothing.
    async fn in_slot(
        &self,
        builder: reqwest::RequestBuilder,
        url: &str,
        sent: &Sent,
    ) -> Result<(u16, reqwest::header::HeaderMap, Vec<u8>, Duration), Failure> {
        let mut answering = self.send_in_slot(builder, url, sent).await?;
        let status = answering.response.status().as_u16();
        let headers = answering.response.headers().clone();
        let body = self.body_of(url, &mut answering.response).await?;
        Ok((status, headers, body, answering.end()))
    }

    /// A client for `endpoint`, with the key from the first of its variables that is set.
    pub fn new(endpoint: &EndpointConfig, retry: &RetryConfig) -> Self {
        Self::with_http(endpoint, retry, own_http(), env_key(endpoint))
    }

    /// A client for `endpoint` with an explicit key (`None` for keyless servers), ignoring the
    /// environment: for programs that hold the key themselves, and for tests.
    pub fn with_api_key(
        endpoint: &EndpointConfig,
        retry: &RetryConfig,
        api_key: Option<String>,
    ) -> Self {
        Self::with_http(endpoint, retry, own_http(), api_key)
    }

    /// Like [`ProviderClient::new`], on the engine's shared HTTP client (one connection pool).
    pub(crate) fn shared(endpoint: &EndpointConfig, retry: &RetryConfig, http: LazyHttp) -> Self {
        Self::with_http(endpoint, retry, http, env_key(endpoint))
    }

    fn with_http(
        endpoint: &EndpointConfig,
        retry: &RetryConfig,
        http: LazyHttp,
        api_key: Option<String>,
    ) -> Self {
        Self {
            endpoint: endpoint.clone(),
            api_key: api_key
                .filter(|k| !k.trim().is_empty())
                .map(|k| k.trim().to_string()),
            key_required: key_required(endpoint),
            retry: retry.clone(),
            http,
            limiter: Arc::new(Limiter::new(endpoint.max_in_flight, retry.max_backoff)),
        }
    }

    /// The endpoint's name.
    pub fn name(&self) -> &str {
        &self.endpoint.name
    }

    /// The endpoint this client calls.
    pub fn endpoint(&self) -> &EndpointConfig {
        &self.endpoint
    }

    /// The rate-limit answers this endpoint gave so far and where its in-flight limit stands.
    pub fn rate_limits(&self) -> RateLimitStats {
        self.limiter.stats()
    }

    /// The variable to set when this endpoint needs a key and none is set.
    pub fn missing_key(&self) -> Option<String> {
        if self.api_key.is_some() || !self.key_required {
            return None;
        }
        self.endpoint.api_key_env.first().cloned()
    }

    /// Sends one request, retrying transient faults: a 429 within `rate_limit_budget` (counted from the
    /// first), others up to `max_attempts`. The endpoint's in-flight limit is held only while an HTTP
    /// attempt is in flight, not while backing off.
    pub async fn complete(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResult, ProviderError> {
        self.complete_timed(request).await.map(|(result, _)| result)
    }

    /// [`Self::complete`], with the latency of the request that answered: from sending it to its last
    /// byte. Waiting for an in-flight slot and earlier attempts (retries, backoff) are not counted, so
    /// a call queued behind others is not reported as a slow model.
    pub async fn complete_timed(
        &self,
        request: &CompletionRequest,
    ) -> Result<(CompletionResult, Duration), ProviderError> {
        self.complete_sent(request, &Sent::default()).await
    }

    /// [`Self::complete_timed`], telling `sent` how far its request got.
    pub(crate) async fn complete_sent(
        &self,
        request: &CompletionRequest,
        sent: &Sent,
    ) -> Result<(CompletionResult, Duration), ProviderError> {
        let url = request_url(&self.endpoint, &request.model);
        let wire = self.endpoint.wire;
        let (mut result, header_id, latency) = self
            .send(
                &url,
                &request_body(&self.endpoint, request),
                wire_name(wire),
                |b| parse_response(wire, b),
                sent,
            )
            .await?;
        if result.request_id.is_none() {
            result.request_id = header_id;
        }
        Ok((result, latency))
    }

    /// Embeds one text, with the same retries, in-flight limit and errors as [`Self::complete`].
    /// Anthropic has no embeddings API: a final error without a call.
    pub async fn embed(&self, request: &EmbeddingRequest) -> Result<Embedding, ProviderError> {
        self.embed_timed(request)
            .await
            .map(|(embedding, _)| embedding)
    }

    /// [`Self::embed`], with the latency of the request that answered (as [`Self::complete_timed`]).
    pub async fn embed_timed(
        &self,
        request: &EmbeddingRequest,
    ) -> Result<(Embedding, Duration), ProviderError> {
        self.embed_sent(request, &Sent::default()).await
    }

    /// [`Self::embed_timed`], telling `sent` how far its request got.
    pub(crate) async fn embed_sent(
        &self,
        request: &EmbeddingRequest,
        sent: &Sent,
    ) -> Result<(Embedding, Duration), ProviderError> {
        let wire = self.endpoint.wire;
        if let Some(why) = wire.embeddings_unsupported() {
            return Err(self.unsent("unsupported", why.to_string()));
        }
        let url = embeddings::url(&self.endpoint, &request.model);
        let what = match wire {
            WireFormat::Google => "Gemini embedContent",
            _ => "OpenAI embeddings",
        };
        let (embedding, _, latency) = self
            .send(
                &url,
                &embeddings::request_body(wire, request),
                what,
                |b| parse_with(b, |json| embeddings::parse(wire, json)),
                sent,
            )
            .await?;
        Ok((embedding, latency))
    }

    /// Posts `body` to `url` with retries; `parse` reads a success body (`what` names its format in
    /// errors). Returns the answer, the request id from the headers and the answering request's time;
    /// `sent` hears how far each attempt got.
    async fn send<T>(
        &self,
        url: &str,
        body: &serde_json::Value,
        what: &str,
        parse: impl Fn(&[u8]) -> Result<T, String>,
        sent: &Sent,
    ) -> Result<(T, Option<String>, Duration), ProviderError> {
        let body = serde_json::to_vec(body).map_err(|e| {
            self.unsent(
                "invalid_request",
                format!("the request cannot be encoded as JSON: {e}"),
            )
        })?;
        let max_attempts = self.retry.max_attempts.max(1);
        let (mut attempt, mut faults) = (0, 0);
        let mut rate_limited_since = None;
        loop {
            attempt += 1;
            let mut failure = match self.attempt(url, &body, what, &parse, sent).await {
                Ok(answer) => return Ok(answer),
                Err(failure) => failure,
            };
            if !failure.retryable {
                return Err(self.give_up(failure, attempt));
            }
            let wait = match failure.retry_after {
                Some(asked) => asked.min(self.retry.max_backoff),
                None => retry::backoff(&self.retry, attempt),
            };
            if failure.status == Some(429) {
                let since = *rate_limited_since.get_or_insert_with(Instant::now);
                if since.elapsed().saturating_add(wait) > self.retry.rate_limit_budget {
                    failure.message = format!(
                        "{} (still rate limited after {:.1} s of retries; \
                         [retry] rate_limit_budget_secs = {} allows longer)",
                        failure.message,
                        since.elapsed().as_secs_f64(),
                        self.retry.rate_limit_budget.as_secs_f64()
                    );
                    return Err(self.give_up(failure, attempt));
                }
            } else {
                faults += 1;
                if faults >= max_attempts {
                    return Err(self.give_up(failure, attempt));
                }
            }
            tracing::debug!(
                provider = %self.endpoint.name,
                attempt,
                status = failure.status,
                wait_ms = wait.as_millis() as u64,
                error = %crate::redact::redact(&failure.message),
                "retrying"
            );
            tokio::time::sleep(wait).await;
        }
    }

    async fn attempt<T>(
        &self,
        url: &str,
        body: &[u8],
        what: &str,
        parse: &impl Fn(&[u8]) -> Result<T, String>,
        sent: &Sent,
    ) -> Result<(T, Option<String>, Duration), Failure> {
        let mut builder = self
            .http
            .get()
            .post(url)
            .timeout(self.retry.request_timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        for (name, value) in self.auth_headers()? {
            builder = builder.header(name, value);
        }
        let (status, headers, bytes, latency) = self.in_slot(builder, url, sent).await?;
        let header_id = ["request-id", "x-request-id"].iter().find_map(|h| {
            headers
                .get(*h)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        });
        if (200..300).contains(&status) {
            return match parse(&bytes) {
                Ok(answer) => Ok((answer, header_id, latency)),
                Err(e) => Err(Failure {
                    status: Some(status),
                    error_type: Some("invalid_response".into()),
                    message: format!("the answer is not a valid {what} response: {e}"),
                    request_id: header_id,
                    retryable: false,
                    retry_after: None,
                }),
            };
        }
        if (300..400).contains(&status) {
            let location = headers
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("(no Location header)");
            return Err(Failure {
                status: Some(status),
                error_type: Some("redirect".into()),
                message: format!(
                    "the endpoint answered {status} and redirects to {}; provider calls follow no redirect \
                     (the key would go with it): set the endpoint's base URL to where it should go",
                    crate::redact::redact(location)
                ),
                request_id: header_id,
                retryable: false,
                retry_after: None,
            });
        }
        let parsed = parse_error_body(self.endpoint.wire, &bytes);
        let message = parsed.message.unwrap_or_else(|| {
            format!(
                "the error body is not {} error JSON: {}",
                wire_name(self.endpoint.wire),
                excerpt(&bytes)
            )
        });
        Err(Failure {
            status: Some(status),
            error_type: parsed.error_type,
            message,
            request_id: parsed.request_id.or(header_id),
            retryable: retry::is_retryable_status(status),
            retry_after: retry::retry_after(&headers, SystemTime::now()).or(parsed.retry_delay),
        })
    }

    /// The answer's body, read up to `[retry] max_response_bytes`: a longer one fails the call, so a
    /// broken server cannot exhaust memory with calls in flight.
    async fn body_of(
        &self,
        url: &str,
        response: &mut reqwest::Response,
    ) -> Result<Vec<u8>, Failure> {
        let limit = self.retry.max_response_bytes;
        let status = response.status().as_u16();
        let too_long = |read: u64| Failure {
            status: Some(status),
            error_type: Some("response_too_large".into()),
            message: format!(
                "the answer's body is longer than {limit} bytes (read {read}); raise `[retry] \
                 max_response_bytes` in prompt-tester.toml if a real answer is this long"
            ),
            request_id: None,
            retryable: false,
            retry_after: None,
        };
        if response.content_length().is_some_and(|n| n > limit) {
            return Err(too_long(response.content_length().unwrap_or(0)));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_failure(url, &e))?
        {
            if body.len() as u64 + chunk.len() as u64 > limit {
                return Err(too_long(body.len() as u64 + chunk.len() as u64));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    fn auth_headers(&self) -> Result<Vec<(&'static str, reqwest::header::HeaderValue)>, Failure> {
        let mut headers = Vec::new();
        if self.endpoint.wire == WireFormat::Anthropic {
            headers.push((
                "anthropic-version",
                reqwest::header::HeaderValue::from_static("2023-06-01"),
            ));
        }
        let Some(key) = &self.api_key else {
            return Ok(headers);
        };
        let (name, value) = match self.endpoint.wire {
            WireFormat::Anthropic => ("x-api-key", key.clone()),
            WireFormat::Google => ("x-goog-api-key", key.clone()),
            WireFormat::OpenAi => ("authorization", format!("Bearer {key}")),
        };
        let mut value = reqwest::header::HeaderValue::from_str(&value).map_err(|_| Failure {
            status: None,
            error_type: Some("invalid_key".into()),
            message: format!(
                "the API key (from {}) holds characters an HTTP header cannot carry; check the variable",
                self.endpoint.api_key_env.join(" or ")
            ),
            request_id: None,
            retryable: false,
            retry_after: None,
        })?;
        value.set_sensitive(true);
        headers.push((name, value));
        Ok(headers)
    }

    /// What to do when nothing listens at the endpoint's URL: start the server, or point the endpoint
    /// where it listens (the variable a built-in provider's base URL comes from, else its table).
    fn where_to_start(&self) -> String {
        let name = &self.endpoint.name;
        let set = match crate::model::built_in(name) {
            Some(p) => format!(
                "set {} (or `base_url` under [providers.{name}] in {})",
                p.base_url_env,
                crate::config::CONFIG_FILE
            ),
            None => format!(
                "set `base_url` (or the variable `base_url_env` names) under [providers.{name}] in {}",
                crate::config::CONFIG_FILE
            ),
        };
        format!("nothing answers there: start the server, or {set} to the address it listens on")
    }

    fn transport_failure(&self, url: &str, error: &reqwest::Error) -> Failure {
        let (kind, what) = if error.is_timeout() {
            (
                "timeout",
                format!(
                    "no complete answer from {url} within {:?}",
                    self.retry.request_timeout
                ),
            )
        } else if error.is_builder() {
            (
                "invalid_request",
                format!("cannot build a request for {url:?}"),
            )
        } else if error.is_connect() {
            ("connection", format!("cannot connect to {url}"))
        } else {
            ("connection", format!("the connection to {url} failed"))
        };
        // reqwest's own text hides the cause ("connection refused", "connection closed before
        // message completed") in its source chain.
        let mut causes = Vec::new();
        let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
        while let Some(cause) = source {
            let text = cause.to_string();
            if !causes.contains(&text) {
                causes.push(text);
            }
            source = cause.source();
        }
        let mut message = if causes.is_empty() {
            what
        } else {
            format!("{what}: {}", causes.join(": "))
        };
        if error.is_connect() {
            message.push_str(&format!("; {}", self.where_to_start()));
        }
        Failure {
            status: None,
            error_type: Some(kind.into()),
            message,
            request_id: None,
            retryable: !error.is_builder(),
            retry_after: None,
        }
    }

    /// The error of a call given up before any attempt: `error_type` and `message` say why.
    fn unsent(&self, error_type: &str, message: String) -> ProviderError {
        ProviderError {
            provider: self.endpoint.name.clone(),
            status: None,
            error_type: Some(error_type.into()),
            message,
            request_id: None,
            attempts: 0,
        }
    }

    fn give_up(&self, failure: Failure, attempts: u32) -> ProviderError {
        ProviderError {
            provider: self.endpoint.name.clone(),
            status: failure.status,
            error_type: failure.error_type.map(|t| self.scrub(&t)),
            message: self.scrub(&failure.message),
            request_id: failure.request_id.map(|t| self.scrub(&t)),
            attempts,
        }
    }

    /// Removes the key from text that came from the network (a provider may echo what it was sent).
    fn scrub(&self, text: &str) -> String {
        let text = crate::redact::redact(text).into_owned();
        match &self.api_key {
            Some(key) if key.len() >= 4 && text.contains(key.as_str()) => {
                text.replace(key.as_str(), "[REDACTED]")
            }
            _ => text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::tests::endpoint;

    fn client(endpoint: &EndpointConfig, key: Option<&str>) -> ProviderClient {
        ProviderClient::with_api_key(endpoint, &RetryConfig::default(), key.map(String::from))
    }

    /// A client is built for every call, a replayed one too: it must not build the HTTP client (and
    /// read the TLS roots) before a request is sent. Its clones then share the one it builds.
    #[test]
    fn the_http_client_is_built_on_the_first_request_and_shared_by_clones() {
        let lazy = LazyHttp::new(4);
        let local = endpoint("openai", WireFormat::OpenAi, "http://127.0.0.1:9/v1", &[]);
        let provider = ProviderClient::shared(&local, &RetryConfig::default(), lazy.clone());
        let clone = provider.clone();
        assert!(lazy.client.get().is_none(), "built before any request");
        let built: *const reqwest::Client = provider.http.get();
        assert!(lazy.client.get().is_some());
        assert!(
            std::ptr::eq(built, clone.http.get()),
            "a clone built its own"
        );
    }

    #[test]
    fn keyless_rules() {
        let public = endpoint(
            "openai",
            WireFormat::OpenAi,
            "https://api.openai.com/v1/",
            &["OPENAI_API_KEY"],
        );
        assert_eq!(
            client(&public, None).missing_key().as_deref(),
            Some("OPENAI_API_KEY")
        );
        assert_eq!(client(&public, Some("sk-x")).missing_key(), None);
        let local = endpoint(
            "openai",
            WireFormat::OpenAi,
            "http://127.0.0.1:8080/v1",
            &["OPENAI_API_KEY"],
        );
        assert_eq!(client(&local, None).missing_key(), None);
        let named_keyless = endpoint(
            "ollama",
            WireFormat::OpenAi,
            "http://127.0.0.1:11434/v1",
            &[],
        );
        assert_eq!(client(&named_keyless, None).missing_key(), None);
        // A named endpoint's `api_key_env` is optional: unset, no key is sent and none is missing.
        let named_keyed = endpoint(
            "together",
            WireFormat::OpenAi,
            "http://127.0.0.1:1/v1",
            &["TOGETHER_KEY", "B"],
        );
        assert_eq!(client(&named_keyed, None).missing_key(), None);
        assert_eq!(missing_key_for(&named_keyed), None);
        assert!(
            client(&named_keyed, None)
                .auth_headers()
                .unwrap()
                .is_empty()
        );
        let gemini = endpoint(
            "google",
            WireFormat::Google,
            "https://generativelanguage.googleapis.com",
            &["G"],
        );
        assert_eq!(
            client(&gemini, Some("  ")).missing_key().as_deref(),
            Some("G")
        );
    }

    #[test]
    fn new_takes_the_first_variable_that_is_set() {
        // Reads real variables rather than setting any: setting variables races other tests.
        let Some((name, value)) = std::env::vars().find(|(_, v)| !v.trim().is_empty()) else {
            return;
        };
        let ep = endpoint(
            "x",
            WireFormat::OpenAi,
            "http://127.0.0.1:1/v1",
            &["PT_SURELY_UNSET_VARIABLE_1", &name],
        );
        let client = ProviderClient::new(&ep, &RetryConfig::default());
        assert_eq!(client.api_key.as_deref(), Some(value.trim()));
        assert_eq!(client.missing_key(), None);
    }

    #[test]
    fn scrub_removes_the_key() {
        let ep = endpoint("openai", WireFormat::OpenAi, "http://x/v1", &["K"]);
        let c = client(&ep, Some("sk-secret-123"));
        assert_eq!(
            c.scrub("bad key sk-secret-123 given"),
            "bad key [REDACTED] given"
        );
    }
}
