//! The recording endpoint: while the test target runs, the providers' HTTP APIs served on 127.0.0.1
//! as a recording pass-through, so that the application's own client (in a `run_fn`, or in a test
//! body after the run) records and replays like the harness's own calls.
//!
//! A sample asks for a base URL ([`SampleContext::base_url`], `PromptRun::base_url`); the first ask
//! starts the server on the engine's runtime (an ephemeral port, a random secret in every path). The
//! URL names the sample by a token of its own, so a call is attributed to its sample by its URL, never
//! by timing. Each request goes through the engine's one flow (`engine/relay.rs`): the cassette
//! decision, the budget, the recording (a raw exchange, `cassette/raw.rs`) and the usage. `route.rs`
//! splits and builds the URLs (pure), `serve.rs` is the HTTP server (the `endpoint` feature: hyper).
//! Its layer and the path of a sample through it: `docs/architecture.md`.

#[cfg(feature = "endpoint")]
use std::sync::Arc;

#[cfg(feature = "endpoint")]
use crate::engine::RunScope;

#[cfg(feature = "endpoint")]
pub(crate) mod app_env;
mod context;
#[cfg(feature = "endpoint")]
mod route;
#[cfg(feature = "endpoint")]
mod serve;

pub use context::SampleContext;

/// The endpoint, started (on the engine's runtime) if it was not.
#[cfg(feature = "endpoint")]
pub(crate) fn listening(scope: &RunScope) -> &crate::engine::app_calls::Listening {
    scope.engine().listening(serve::start)
}

/// `scope`'s URL standing in for `provider`'s base URL, the endpoint started (on the engine's runtime)
/// if it was not.
#[cfg(feature = "endpoint")]
pub(crate) fn base_url(
    scope: &Arc<RunScope>,
    provider: &str,
) -> Result<String, crate::config::ConfigError> {
    let endpoint = scope.engine().config.endpoint(provider)?;
    scope.state().note_provider(provider);
    let server = listening(scope);
    let token = scope.state().token(|| {
        let token = route::random_hex(12);
        server
            .samples
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token.clone(), Arc::downgrade(scope));
        (token, Arc::downgrade(&server.samples))
    });
    Ok(route::base_url(
        &server.origin,
        &server.secret,
        &token,
        &endpoint.name,
        endpoint.wire,
    ))
}
