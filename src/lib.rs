// The README is the crate's documentation, so its Rust examples are compiled by `cargo test` (doctests)
// and cannot drift from the API.
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The documented surface: the prelude, the crate-root items below, and eight modules. What the
// project's own tests and benchmark need beyond it is `#[doc(hidden)]`.
pub mod completion;
pub mod config;
pub mod embedding;
pub mod judge;
pub mod model;
pub mod provider;
pub mod tools;

#[doc(hidden)]
pub mod cassette;
#[doc(hidden)]
pub mod pricing;
#[doc(hidden)]
pub mod render;
#[doc(hidden)]
#[allow(dead_code, unused_imports)] // until the features that use it land (issue 13)
pub mod stats;

/// The sampling plans and the rule that sizes each wave of samples, for the benchmark's simulation.
#[doc(hidden)]
pub mod sampling {
    pub use crate::case::{SamplePlan, Threshold};
    pub use crate::outcome::{SampleOutcome, next_wave};
    pub use crate::stats::sprt::Sprt;
}

mod agent;
mod calibration;
mod case;
mod checks;
mod commands;
mod defaults;
mod engine;
mod harness;
#[cfg(feature = "mcp")]
mod mcp;
/// Without the `mcp` feature a toolbox has no MCP server: the agent loop's MCP steps do nothing.
#[cfg(not(feature = "mcp"))]
#[path = "mcp_off.rs"]
mod mcp;
mod outcome;
mod redact;
mod run;
mod spanned;
mod suite;
mod usage;

pub use agent::{AgentError, AgentOutcome};
pub use cassette::CassetteMode;
pub use completion::{
    CompletionRequest, CompletionResult, ContentBlock, Message, Role, ToolCall, ToolSpec,
};
pub use config::Config;
pub use harness::{Harness, main};
pub use judge::{JudgeError, JudgeVerdict};
pub use model::{Model, Provider};
pub use prompt_tester_macros::prompt_test;
pub use provider::ProviderError;
pub use run::PromptRun;
/// The TOML crate, re-exported for custom suite assertions (`fn(&PromptRun, &toml::Value)`).
pub use toml;
#[cfg(feature = "mcp")]
pub use tools::McpServer;
pub use tools::{Tool, ToolOutput, Toolbox, json_subset};

/// What a prompt test needs: `use prompt_tester::prelude::*;`.
pub mod prelude {
    pub use crate::completion::{CompletionResult, ToolCall, ToolSpec};
    pub use crate::judge::JudgeVerdict;
    pub use crate::model::{Model, Provider};
    pub use crate::prompt_test;
    pub use crate::run::PromptRun;
    #[cfg(feature = "mcp")]
    pub use crate::tools::McpServer;
    pub use crate::tools::{Tool, Toolbox, json_subset};
    pub use serde_json::json;
}

/// Internals for the code `#[prompt_test]` generates. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::case::{CaseInfo, SampleRecord, SampleStatus, SuiteInfo, Written};
    pub use crate::checks::{AssertionRecord, JudgeAnswer};
    pub use crate::config::Defaults;
    pub use crate::config::SamplingKeys;
    pub use crate::engine::{engine, install};
    /// The HTML report, for the benchmark and the browser test.
    pub use crate::harness::html::{Extras, RunInfo, Table, write_html};
    pub use crate::harness::record::{Status, TrialRecord};
    pub use crate::harness::registry::{
        BodyFuture, IntoTestResult, PromptSource, RunFnFuture, RustTest, TestSpec, model_id,
        provider_name, subject_list,
    };
    pub use crate::suite::CustomAssertion;
    /// The built-in suite assertion kinds, for the project's tests of the documentation's examples.
    pub use crate::suite::assert::BUILT_IN as BUILT_IN_ASSERTIONS;
    pub use crate::tools::IntoToolbox;
    pub use inventory;
}
