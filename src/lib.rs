// The README is the crate's front page, so its Rust examples are compiled by `cargo test` (doctests)
// and cannot drift from the API. Its links are reference links to the guide's files (right on GitHub and
// crates.io); `guide/links.md` defines the same labels first, as intra-doc links, and the first
// definition of a label wins, so on docs.rs they lead to the guide's modules.
#![doc = include_str!("guide/links.md")]
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The documented surface: the prelude, the crate-root items below, and these seven modules. What the
// project's own tests and benchmark need beyond it is in the hidden `testing` module.
pub mod completion;
pub mod config;
pub mod embedding;
pub mod judge;
pub mod model;
pub mod provider;
pub mod tools;

// The guide: every chapter of the manual, from the first test to CI (text only, no API; its docs start
// with link definitions, which no outer doc comment may precede).
#[path = "guide/mod.rs"]
pub mod _guide;

mod agent;
mod budget;
mod calibration;
mod case;
mod cassette;
mod checks;
mod commands;
mod conversation;
mod defaults;
mod endpoint;
mod engine;
mod estimate;
mod gate;
mod harness;
#[cfg(feature = "mcp")]
mod mcp;
/// Without the `mcp` feature a toolbox has no MCP server: the agent loop's MCP steps do nothing.
#[cfg(not(feature = "mcp"))]
#[path = "mcp_off.rs"]
mod mcp;
mod outcome;
mod plan;
mod pricing;
mod record;
mod redact;
mod render;
mod report;
mod role;
mod run;
mod shared;
mod spanned;
mod stats;
mod suite;
#[cfg(test)]
mod test_support;
mod text;
mod trajectory;
mod trial_name;
mod usage;
mod utc;

pub use agent::{AgentError, AgentOutcome};
pub use cassette::CassetteMode;
pub use completion::{
    CompletionRequest, CompletionResult, ContentBlock, Message, Role, ToolCall, ToolSpec, Turn,
    TurnRole,
};
pub use config::Config;
pub use endpoint::SampleContext;
pub use engine::{CallError, CallErrorKind};
pub use harness::{Harness, main};
pub use judge::JudgeVerdict;
pub use model::{Model, Provider};
pub use prompt_tester_macros::prompt_test;
pub use provider::ProviderError;
pub use run::{AppRun, PromptRun, RunError};
/// The TOML crate, re-exported for custom suite assertions (`fn(&PromptRun, &toml::Value)`).
pub use toml;
#[cfg(feature = "mcp")]
pub use tools::McpServer;
pub use tools::{Tool, ToolOutput, Toolbox, json_subset};
pub use trajectory::{ModelCall, SentBack, ToolOrder, Trajectory, TrajectoryProblem};

/// What a prompt test needs: `use prompt_tester::prelude::*;`.
pub mod prelude {
    pub use crate::completion::{
        CompletionRequest, CompletionResult, ImageDetail, Media, ToolCall, ToolSpec, Turn,
    };
    pub use crate::endpoint::SampleContext;
    pub use crate::judge::JudgeVerdict;
    pub use crate::model::{Model, Provider};
    pub use crate::prompt_test;
    pub use crate::run::{AppRun, PromptRun};
    #[cfg(feature = "mcp")]
    pub use crate::tools::McpServer;
    pub use crate::tools::{Tool, Toolbox, json_subset};
    pub use crate::trajectory::{ModelCall, ToolOrder};
    pub use serde_json::json;
}

/// Internals for the code `#[prompt_test]` and `register_assertion!` generate. Not a public API: it
/// changes without notice.
#[doc(hidden)]
pub mod __private {
    #[doc(hidden)]
    pub use crate::__app_test_needs_endpoint as app_test_needs_endpoint;
    pub use crate::case::Written;
    pub use crate::completion::{CompletionRequest, Turn};
    pub use crate::config::{Defaults, SamplingKeys};
    pub use crate::endpoint::SampleContext;
    pub use crate::harness::registry::{
        Body, BodyFuture, IntoPromptVar, IntoTestResult, PromptModelMaxTokens, PromptSource,
        RunFnForm, RunFnFuture, RustTest, TestSpec, WholeRequest, WholeSample, model_id,
        provider_name, subject_list, turn_list,
    };
    pub use crate::suite::CustomAssertion;
    pub use crate::tools::IntoToolbox;
    pub use inventory;
}

/// An application test (its body takes an `AppRun`) calls through the recording endpoint: without the
/// `endpoint` feature it cannot, and the attribute's expansion says so.
#[doc(hidden)]
#[macro_export]
#[cfg(not(feature = "endpoint"))]
macro_rules! __app_test_needs_endpoint {
    () => {
        ::core::compile_error!(
            "a #[prompt_test] taking `AppRun` needs prompt-tester's `endpoint` feature (its application \
             calls go through the recording endpoint): enable it, e.g. `prompt-tester = { version = \
             \"...\", features = [\"endpoint\"] }`"
        );
    };
}

/// An application test (its body takes an `AppRun`) calls through the recording endpoint: with the
/// `endpoint` feature nothing is said.
#[doc(hidden)]
#[macro_export]
#[cfg(feature = "endpoint")]
macro_rules! __app_test_needs_endpoint {
    () => {};
}

/// What the project's own tests and benchmark reach beyond the public API. Not a public API: it
/// changes without notice (as insta's `_cargo_insta_support`).
#[doc(hidden)]
pub mod testing;

/// What the `cargo prompt-tester` subcommand reaches: the crate's cassettes and pending recordings,
/// accepting and rejecting. Not a public API (as insta's `_cargo_insta_support`).
#[doc(hidden)]
#[path = "review_support.rs"]
pub mod _cargo_prompt_tester_support;
