//! Why an MCP server could not be used. One definition for both builds (`mcp_off.rs` includes this file),
//! so that [`AgentError::Mcp`](crate::AgentError::Mcp) and a `match` on it are the same with the `mcp`
//! feature or without it (then it never happens).

/// Why an MCP server could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// The stdio command could not be started.
    #[error("cannot start {server}: {message}")]
    Spawn {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// The MCP handshake or the tool listing failed.
    #[error("{server}: {message}")]
    Connect {
        /// The server.
        server: String,
        /// Why, with the end of a stdio server's stderr.
        message: String,
    },
    /// A header name or value is not valid HTTP.
    #[error("{server}: invalid header `{name}`")]
    Header {
        /// The server.
        server: String,
        /// The header's name.
        name: String,
    },
    /// Two sources offer a tool of the same name.
    #[error("tool `{name}` is offered twice: by {first} and by {second}")]
    DuplicateTool {
        /// The tool's name.
        name: String,
        /// Where it came from first.
        first: String,
        /// Where it came again.
        second: String,
    },
}
