//! [`AppRun`]: one sample of an application test, a `#[prompt_test]` whose body calls the
//! application itself (no prompt of the harness's): the recording endpoint's URL for its client, and
//! the judge on any text (`judge/app.rs`).

use std::sync::Arc;

use crate::engine::RunScope;

/// One sample of an application test: a `#[prompt_test]` whose body takes an `AppRun` calls the
/// application's own code, its client pointed at [`AppRun::base_url`], and asks the judge about any
/// text ([`AppRun::ask`]). The judge is told, as the task, the first user message the recording
/// endpoint saw for this sample.
///
/// ```no_run
/// # use prompt_tester::prelude::*;
/// # async fn answer(base_url: &str, q: &str) -> anyhow::Result<String> { Ok(String::new()) }
/// #[prompt_test(runs = 5, pass_threshold = 0.8)]
/// async fn order_status(run: AppRun) -> anyhow::Result<()> {
///     let answer = answer(&run.base_url("openai")?, "Where is order 42?").await?;
///     run.ask(&answer, "Does the answer give the delivery date?").await?.require()?;
///     Ok(())
/// }
/// ```
#[derive(Clone)]
pub struct AppRun {
    pub(crate) scope: Arc<RunScope>,
}

impl std::fmt::Debug for AppRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppRun")
            .field("test", &self.scope.identity().test)
            .field("run", &self.scope.identity().run_index)
            .finish_non_exhaustive()
    }
}

impl AppRun {
    /// The sample of `scope`.
    pub(crate) fn new(scope: Arc<RunScope>) -> Self {
        Self { scope }
    }

    /// This sample's index, 1-based.
    pub fn run_index(&self) -> u32 {
        self.scope.identity().run_index
    }

    /// How many samples the test takes.
    pub fn runs(&self) -> u32 {
        self.scope.identity().runs
    }

    /// The trial this sample belongs to.
    pub fn test_name(&self) -> &str {
        &self.scope.identity().test
    }

    /// The URL standing in for `provider`'s base URL for this sample (`openai`, `anthropic`,
    /// `google`, or a `[providers.NAME]` of `prompt-tester.toml`), in the shape its clients expect: the
    /// same as [`SampleContext::base_url`](crate::SampleContext::base_url). Calls to it are recorded
    /// and replayed under this sample. The error names the closest known provider.
    #[cfg(feature = "endpoint")]
    pub fn base_url(&self, provider: &str) -> Result<String, crate::config::ConfigError> {
        crate::endpoint::base_url(&self.scope, provider)
    }

    /// The sample's model calls through the endpoint so far, in causal order (a snapshot).
    pub fn trajectory(&self) -> crate::Trajectory {
        self.scope.state().trajectory()
    }

    /// The model calls so far, in causal order (a snapshot).
    pub fn model_calls(&self) -> Vec<crate::ModelCall> {
        self.trajectory().calls().to_vec()
    }

    /// The tool calls the model requested so far, in causal order (a snapshot).
    pub fn tool_calls(&self) -> Vec<crate::ToolCall> {
        self.trajectory().tool_calls()
    }

    /// As [`PromptRun::expect_tool_call`](crate::PromptRun::expect_tool_call).
    pub fn expect_tool_call(
        &self,
        name: &str,
        arguments: serde_json::Value,
    ) -> Result<crate::ToolCall, super::RunError> {
        super::tools::Expect(&self.trajectory()).tool_call(name, &arguments)
    }

    /// As [`PromptRun::expect_no_tool_call`](crate::PromptRun::expect_no_tool_call).
    pub fn expect_no_tool_call(&self, name: &str) -> Result<(), super::RunError> {
        super::tools::Expect(&self.trajectory())
            .tool_calls(name, None, 0..=0)
            .map(drop)
    }

    /// As [`PromptRun::expect_tool_calls`](crate::PromptRun::expect_tool_calls).
    pub fn expect_tool_calls(
        &self,
        name: &str,
        times: impl std::ops::RangeBounds<usize>,
    ) -> Result<usize, super::RunError> {
        super::tools::Expect(&self.trajectory()).tool_calls(name, None, times)
    }

    /// As [`PromptRun::expect_tool_sequence`](crate::PromptRun::expect_tool_sequence).
    pub fn expect_tool_sequence(
        &self,
        tools: &[&str],
        order: crate::ToolOrder,
    ) -> Result<(), super::RunError> {
        super::tools::Expect(&self.trajectory()).tool_sequence(tools, order)
    }

    /// As [`PromptRun::expect_model_calls`](crate::PromptRun::expect_model_calls).
    pub fn expect_model_calls(
        &self,
        times: impl std::ops::RangeBounds<usize>,
    ) -> Result<usize, super::RunError> {
        super::tools::Expect(&self.trajectory()).model_calls(times)
    }

    /// As [`PromptRun::expect_no_loop`](crate::PromptRun::expect_no_loop).
    pub fn expect_no_loop(&self, k: usize) -> Result<(), super::RunError> {
        super::tools::Expect(&self.trajectory()).no_loop(k)
    }
}
