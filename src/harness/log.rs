//! The run's log: the spans and events of the call path (the engine's exchange, its cassette lookup
//! and write, the provider's attempts and retries, the judge, the recording endpoint's requests),
//! written to stderr when `PROMPT_TESTER_LOG` or `RUST_LOG` asks (`Settings::log`). libtest writes its
//! result lines to stdout, so the two never interleave. Nothing is installed otherwise, and a
//! subscriber the application installed first is kept. What is logged names tests, providers, models,
//! paths and statuses, never a header, a body or a query (where keys travel). The `log` feature;
//! without it the spans reach only a subscriber the application installs.

/// Whether `directives` is a filter `tracing` reads (`debug`, `prompt_tester=debug,hyper=warn`).
pub(super) fn parses(directives: &str) -> bool {
    tracing_subscriber::EnvFilter::builder()
        .parse(directives)
        .is_ok()
}

/// Writes the events `directives` lets through to stderr, one line each, from now on.
pub(super) fn install(directives: &str) {
    let filter = tracing_subscriber::EnvFilter::builder()
        .parse(directives)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    // Already set: the application's own subscriber gets the events.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
