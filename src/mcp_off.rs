//! The MCP client without the `mcp` feature: no [`McpServer`] can be made, so a toolbox holds none, no
//! session ever opens, and the agent loop runs Rust tools only. The same items as `mcp.rs` offers the
//! agent loop, so that it is written once.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Duration;

use serde_json::Value;

use crate::completion::ToolSpec;

/// The `mcp` build's error, so that `AgentError` is the same in both builds; none happens here.
#[path = "mcp/error.rs"]
mod error;
pub use error::McpError;

/// No server: there is none without the `mcp` feature.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum McpServer {}

/// A session that cannot exist.
pub(crate) struct McpSession {
    pub(crate) tools: Vec<ToolSpec>,
    never: Infallible,
}

impl McpSession {
    pub(crate) async fn call(&self, _tool: &str, _arguments: Value) -> Result<String, String> {
        match self.never {}
    }
}

/// No server, no session.
pub(crate) async fn connect_all(
    servers: &[McpServer],
    _timeout: Duration,
) -> Result<Vec<McpSession>, McpError> {
    match servers.first() {
        None => Ok(Vec::new()),
        Some(server) => match *server {},
    }
}

pub(crate) async fn close_all(_sessions: Vec<McpSession>) {}

/// No session serves a tool.
pub(crate) fn route(
    _local: &[String],
    _sessions: &[McpSession],
) -> Result<BTreeMap<String, usize>, McpError> {
    Ok(BTreeMap::new())
}
