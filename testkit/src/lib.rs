//! A fake model provider on 127.0.0.1 for prompt-tester's own tests and benchmarks.
//!
//! One server speaks the three wire formats prompt-tester calls, told apart by path:
//! Anthropic `POST /v1/messages`, Gemini `POST /v1beta/models/{model}:generateContent` and
//! OpenAI-compatible `POST /v1/chat/completions`, and the embeddings calls of the last two (`POST
//! /v1/embeddings`, `:embedContent`, `:batchEmbedContents`, answered with [`fake_embedding`]). A
//! request for a stream (`"stream": true`, Gemini's `:streamGenerateContent`) gets the same answer as
//! the wire's stream events, one chunk per event ([`Reply::streamed_for`]); with
//! [`Builder::call_tools`] the echo calls the tools a request offers. It captures every request (method, path, headers,
//! body), answers from a queue of scripted [`Reply`]s first, then with the builder's fixed answers to a
//! model or a prompt ([`Builder::answer_model`], [`Builder::answer_prompt`]), then from a responder
//! closure (by default an echo that answers well-formed responses with usage), and can inject every
//! fault a real provider shows: 429 with `retry-after`, 500/503/529, slow answers, dropped
//! connections, bodies cut mid-way, malformed and truncated JSON. Like a real provider's concurrency
//! limit, it can answer 429 to every request that arrives while N others are being answered
//! ([`Builder::reject_beyond`]).
//!
//! It runs its own tokio runtime on a background thread, so synchronous callers (libtest trials,
//! benchmarks) and async tests alike can use it; dropping the [`FakeProvider`] stops it and closes
//! every connection.
//!
//! It knows nothing of prompt-tester: it speaks JSON only, so it tests the wire, not the library's types.
//!
//! ```
//! use prompt_tester_testkit::{FakeProvider, Reply, Wire};
//! use std::time::Duration;
//!
//! let fake = FakeProvider::builder().echo_text("Paris").latency(Duration::from_millis(5)).start();
//! fake.push(Reply::rate_limited(Wire::OpenAi, Duration::from_millis(100)));
//! let base = fake.base_url(Wire::OpenAi); // http://127.0.0.1:PORT/v1
//! assert!(base.ends_with("/v1"));
//! assert_eq!(fake.request_count(), 0);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod reply;
mod request;
mod responder;
mod server;
mod stream;
mod wire;

pub mod child;

pub use reply::{Fault, Reply};
pub use request::{CapturedRequest, assert_chat_messages};
pub use responder::{Echo, Responder, judge_cycling};
pub use server::{Builder, FakeProvider, ReplyBody};
pub use wire::{Usage, Wire, fake_embedding};

#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod tests;
