//! Tools the model may call: a [`Tool`] is a [`ToolSpec`] with an async Rust handler, a [`Toolbox`]
//! gathers tools and live MCP servers for the agent loop, and the assertion helpers
//! ([`crate::PromptRun::called`], [`crate::PromptRun::expect_tool_call`], [`json_subset`]) check which tools a run called.
//!
//! ```
//! use prompt_tester::prelude::*;
//! use serde_json::json;
//!
//! fn weather_agent() -> Toolbox {
//!     Toolbox::new()
//!         .tool(Tool::new(
//!             "get_weather",
//!             "The current weather in a city",
//!             json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
//!             |args| async move {
//!                 let city = args["city"].as_str().ok_or("`city` must be a string")?;
//!                 Ok::<_, String>(format!("Sunny, 21 °C in {city}"))
//!             },
//!         ))
//!         .max_turns(4)
//! }
//! # let _ = weather_agent();
//! ```
//!
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::completion::ToolSpec;

pub use crate::mcp::McpError;
#[cfg(feature = "mcp")]
pub use crate::mcp::McpServer;

/// How many model calls an agent loop makes at most, unless [`Toolbox::max_turns`] says.
pub const DEFAULT_MAX_TURNS: u32 = crate::defaults::MAX_TURNS;

/// How long one tool call may take, unless [`Toolbox::tool_timeout`] says.
pub const DEFAULT_TOOL_TIMEOUT: Duration = crate::defaults::TOOL_TIMEOUT;

/// What a tool returns to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// Text, sent as is.
    Text(String),
    /// JSON, sent as its compact text.
    Json(Value),
}

impl ToolOutput {
    /// The text the model receives.
    pub fn into_text(self) -> String {
        match self {
            ToolOutput::Text(text) => text,
            ToolOutput::Json(value) => value.to_string(),
        }
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::Text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::Text(text.to_string())
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        ToolOutput::Json(value)
    }
}

/// A tool call that failed: the message goes back to the model as an error result (`is_error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

/// The future a tool handler returns, boxed.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>;

type Handler = Arc<dyn Fn(Value) -> ToolFuture + Send + Sync>;

/// A tool the model may call: its [`ToolSpec`] and the async handler that runs it.
#[derive(Clone)]
pub struct Tool {
    spec: ToolSpec,
    handler: Handler,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool from its name, description, JSON schema of its input, and a handler receiving the
    /// arguments as JSON. The handler returns text or JSON, or an error (anything `Display`) that the
    /// model sees as a failed call.
    pub fn new<F, Fut, O, E>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, E>> + Send + 'static,
        O: Into<ToolOutput>,
        E: fmt::Display,
    {
        Self::from_spec(ToolSpec::new(name, description, input_schema), handler)
    }

    /// A tool whose handler takes typed arguments: they are deserialised from the model's JSON, and
    /// arguments that do not fit go back to the model as an error result without calling `handler`.
    pub fn typed<A, F, Fut, O, E>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, E>> + Send + 'static,
        O: Into<ToolOutput>,
        E: fmt::Display,
    {
        let handler = Arc::new(handler);
        Self::new(name, description, input_schema, move |args: Value| {
            let handler = handler.clone();
            async move {
                let args: A =
                    serde_json::from_value(args).map_err(|e| format!("invalid arguments: {e}"))?;
                handler(args).await.map_err(|e| e.to_string())
            }
        })
    }

    /// A tool from an existing spec and a handler (see [`Tool::new`]).
    pub fn from_spec<F, Fut, O, E>(spec: ToolSpec, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, E>> + Send + 'static,
        O: Into<ToolOutput>,
        E: fmt::Display,
    {
        let handler: Handler = Arc::new(move |args| {
            let future = handler(args);
            Box::pin(async move {
                future
                    .await
                    .map(Into::into)
                    .map_err(|e| ToolError(e.to_string()))
            })
        });
        Self { spec, handler }
    }

    /// The tool's spec, as the model sees it.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Runs the handler on `arguments`.
    pub fn call(&self, arguments: Value) -> ToolFuture {
        (self.handler)(arguments)
    }
}

impl ToolSpec {
    /// A tool declaration from its name, description and the JSON schema of its input.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema,
        }
    }
}

/// The tools of an agent loop: Rust [`Tool`]s, live MCP servers whose tools are listed at the start of
/// each run, and the loop's limits.
///
/// A test opts in with `#[prompt_test(agent = my_toolbox, ...)]` where `fn my_toolbox() -> Toolbox`
/// (or any expression of type `Toolbox`). The model is then called with every tool; its tool calls are
/// run (concurrently when it makes several at once) and their results sent back until it answers
/// without calling a tool, or [`max_turns`](Toolbox::max_turns) model calls were made, which fails the run.
///
/// Every turn is recorded in the test's cassette under its own request. On replay the tools still run:
/// their results are part of the next turn's request, which is how that turn is found, so a tool whose
/// result changes from run to run (a clock, live data) makes the replay miss, and MCP servers must be
/// reachable on replay too.
#[derive(Debug, Clone)]
pub struct Toolbox {
    pub(crate) tools: Vec<Tool>,
    pub(crate) servers: Vec<crate::mcp::McpServer>,
    pub(crate) max_turns: u32,
    pub(crate) tool_timeout: Duration,
}

impl Default for Toolbox {
    fn default() -> Self {
        Self {
            tools: Vec::new(),
            servers: Vec::new(),
            max_turns: DEFAULT_MAX_TURNS,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
        }
    }
}

impl Toolbox {
    /// An empty toolbox with the default limits (8 turns, 60 s per tool call).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds several tools.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Adds a live MCP server: its tools are listed and offered to the model in every run.
    #[cfg(feature = "mcp")]
    pub fn mcp(mut self, server: McpServer) -> Self {
        self.servers.push(server);
        self
    }

    /// The most model calls of one run (at least 1; default 8). A model still calling tools on the
    /// last one fails the run.
    pub fn max_turns(mut self, max_turns: u32) -> Self {
        self.max_turns = max_turns.max(1);
        self
    }

    /// How long one tool call may take before the model gets an error result instead (default 60 s).
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = timeout;
        self
    }

    /// The Rust tools.
    pub fn rust_tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The MCP servers.
    #[cfg(feature = "mcp")]
    pub fn servers(&self) -> &[McpServer] {
        &self.servers
    }

    /// The turn limit.
    pub fn turn_limit(&self) -> u32 {
        self.max_turns
    }
}

/// What `#[prompt_test(agent = ...)]` accepts: a [`Toolbox`], or a function returning one.
#[diagnostic::on_unimplemented(
    message = "`agent` expects a `Toolbox` or a `fn() -> Toolbox`, not `{Self}`",
    label = "not a toolbox",
    note = "e.g. `agent = my_agent` with `fn my_agent() -> Toolbox {{ Toolbox::new().tool(...) }}`"
)]
pub trait IntoToolbox {
    /// The toolbox.
    fn into_toolbox(self) -> Toolbox;
}

impl IntoToolbox for Toolbox {
    fn into_toolbox(self) -> Toolbox {
        self
    }
}

impl<F: FnOnce() -> Toolbox> IntoToolbox for F {
    fn into_toolbox(self) -> Toolbox {
        self()
    }
}

/// Whether `actual` contains `expected`: every key of an expected object is in the actual object
/// with a matching value (other keys are ignored), arrays match element by element with the same
/// length, numbers match by value (`1` matches `1.0`), everything else by equality.
pub fn json_subset(expected: &Value, actual: &Value) -> bool {
    json_mismatch(expected, actual).is_none()
}

/// Where `actual` does not contain `expected` (see [`json_subset`]), as a readable sentence naming the
/// JSON path; `None` when it does.
pub fn json_mismatch(expected: &Value, actual: &Value) -> Option<String> {
    mismatch_at("$", expected, actual)
}

fn mismatch_at(path: &str, expected: &Value, actual: &Value) -> Option<String> {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => {
            want.iter().find_map(|(key, want)| match got.get(key) {
                Some(got) => mismatch_at(&format!("{path}.{key}"), want, got),
                None => Some(format!("{path}.{key} is missing (expected {want})")),
            })
        }
        (Value::Array(want), Value::Array(got)) => {
            if want.len() != got.len() {
                return Some(format!(
                    "{path} has {} elements, expected {}: {actual}",
                    got.len(),
                    want.len()
                ));
            }
            want.iter()
                .zip(got)
                .enumerate()
                .find_map(|(i, (w, g))| mismatch_at(&format!("{path}[{i}]"), w, g))
        }
        (Value::Number(want), Value::Number(got)) if want.as_f64() == got.as_f64() => None,
        _ if expected == actual => None,
        _ => Some(format!("{path} is {actual}, expected {expected}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subset_matching() {
        let actual = json!({"city": "Paris", "units": "metric", "days": [1, 2], "n": 3});
        assert!(json_subset(&json!({}), &actual));
        assert!(json_subset(&json!({"city": "Paris"}), &actual));
        assert!(json_subset(&json!({"n": 3.0}), &actual));
        assert!(json_subset(&json!({"days": [1, 2]}), &actual));
        assert!(!json_subset(&json!({"days": [1]}), &actual));
        assert!(!json_subset(&json!({"city": "paris"}), &actual));
        assert!(!json_subset(&json!({"country": "FR"}), &actual));
        assert!(!json_subset(&json!({"city": "Paris"}), &json!("Paris")));
        assert_eq!(
            json_mismatch(&json!({"a": {"b": 1}}), &json!({"a": {"b": 2}})).as_deref(),
            Some("$.a.b is 2, expected 1")
        );
        assert_eq!(
            json_mismatch(&json!({"x": 1}), &json!({})).as_deref(),
            Some("$.x is missing (expected 1)")
        );
    }

    #[tokio::test]
    async fn handlers_return_text_json_or_errors() {
        let echo = Tool::new("echo", "d", json!({}), |args| async move {
            Ok::<_, String>(args)
        });
        assert_eq!(
            echo.call(json!({"a": 1})).await,
            Ok(ToolOutput::Json(json!({"a": 1})))
        );
        let failing = Tool::new("f", "d", json!({}), |_| async {
            Err::<String, _>("no such order")
        });
        assert_eq!(
            failing.call(json!({})).await,
            Err(ToolError("no such order".into()))
        );

        #[derive(serde::Deserialize)]
        struct Add {
            a: i64,
            b: i64,
        }
        let add = Tool::typed("add", "d", json!({}), |Add { a, b }| async move {
            Ok::<_, String>((a + b).to_string())
        });
        assert_eq!(
            add.call(json!({"a": 2, "b": 3})).await,
            Ok(ToolOutput::Text("5".into()))
        );
        let err = add.call(json!({"a": "x"})).await.unwrap_err().0;
        assert!(err.starts_with("invalid arguments: "), "{err}");
        assert_eq!(
            ToolOutput::Json(json!({"ok": true})).into_text(),
            r#"{"ok":true}"#
        );
    }
}
