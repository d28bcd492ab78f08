//! What a run's model asked of its tools: [`PromptRun::called`], [`PromptRun::expect_tool_call`] and
//! the rest, read from the run's tool calls (the checks themselves are `tools`').

use serde_json::Value;

use super::{PromptRun, RunError};
use crate::completion::ToolCall;
use crate::tools::{check_not_tool_called, check_tool_called};

impl PromptRun {
    /// Whether the model called tool `name` (in any turn).
    pub fn called(&self, name: &str) -> bool {
        self.tool_calls.iter().any(|c| c.name == name)
    }

    /// The first call of tool `name`.
    pub fn tool_call(&self, name: &str) -> Option<&ToolCall> {
        self.tool_calls.iter().find(|c| c.name == name)
    }

    /// Every call of tool `name`, in order.
    pub fn tool_calls_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'a ToolCall> + 'a {
        self.tool_calls.iter().filter(move |c| c.name == name)
    }

    /// The first call of `name` whose arguments contain `arguments` (see [`crate::json_subset`]); the error
    /// lists the calls the model made. `run.expect_tool_call("get_weather", json!({"city": "Paris"}))?`
    pub fn expect_tool_call(&self, name: &str, arguments: Value) -> Result<&ToolCall, RunError> {
        check_tool_called(&self.tool_calls, name, Some(&arguments))
            .map_err(RunError::ToolCallMismatch)
    }

    /// Fails when the model called `name`.
    pub fn expect_no_tool_call(&self, name: &str) -> Result<(), RunError> {
        check_not_tool_called(&self.tool_calls, name).map_err(RunError::ToolCallMismatch)
    }
}
