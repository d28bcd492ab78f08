//! This crate's example prompt tests: `cargo test --test prompts`.
//!
//! They run offline from the cassettes in `prompt-tests/cassettes/`, recorded from a real small model
//! (SmolLM2-135M-Instruct served by llama.cpp's llama-server on 127.0.0.1; `scripts/local-model.sh`).
//! The `hosted` examples target Anthropic and Gemini and are `live_only`: without a recording they are
//! ignored, listed as "live only, not run", with the commands that run or record them. `support_reply`
//! tests an application's own code, its model call recorded through the harness's endpoint;
//! `support_agent` is the application's own agent loop, its tool calls asserted. TOML suites (`*.evals.toml`) in this folder run here too.

use std::process::ExitCode;

mod few_shot;
mod hosted;
mod local;
mod quick_start;
mod sampling;
mod similarity;
mod support_agent;
mod support_reply;

fn main() -> ExitCode {
    // The application picks rustls's crypto provider (its async-openai is built with
    // `rustls-no-provider`); the harness installs none.
    let _ = rustls::crypto::ring::default_provider().install_default();
    prompt_tester::main()
}
