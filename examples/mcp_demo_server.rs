//! A small MCP server for agent tests, written with the official Rust SDK (`rmcp`). It offers two tools:
//! `lookup_order(id)` (a tiny order book; unknown ids are tool errors) and `add(a, b)`.
//!
//! It speaks MCP on stdin/stdout by default, which is what `McpServer::stdio` starts:
//!
//! ```text
//! cargo build --example mcp_demo_server
//! # in a prompt test: Toolbox::new().mcp(McpServer::stdio("target/debug/examples/mcp_demo_server", [] as [&str; 0]))
//! ```
//!
//! With `--http ADDR` it serves streamable HTTP at `http://ADDR/mcp` instead (`McpServer::http`):
//! `cargo run --example mcp_demo_server -- --http 127.0.0.1:8931`.
//!
//! prompt-tester's own tests (`tests/tools/mcp.rs`) start it both ways.

use std::net::SocketAddr;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServiceExt, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::json;

/// The arguments of `lookup_order`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct LookupOrder {
    /// The order id, e.g. `A-1001`.
    pub id: String,
}

/// The arguments of `add`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Add {
    /// The first number.
    pub a: i64,
    /// The second number.
    pub b: i64,
}

/// The demo server: stateless, so every connection gets its own.
#[derive(Debug, Clone, Default)]
pub struct DemoServer;

#[tool_router(server_handler)]
impl DemoServer {
    /// Looks an order up by id.
    #[tool(
        description = "Look up an order by its id (e.g. A-1001): its status and expected delivery date"
    )]
    async fn lookup_order(
        &self,
        Parameters(LookupOrder { id }): Parameters<LookupOrder>,
    ) -> Result<String, String> {
        let order = match id.trim() {
            "A-1001" => {
                json!({"id": "A-1001", "status": "shipped", "eta": "2026-05-02", "items": 2})
            }
            "A-1002" => {
                json!({"id": "A-1002", "status": "processing", "eta": "2026-05-09", "items": 1})
            }
            other => return Err(format!("no order with id {other:?}")),
        };
        Ok(order.to_string())
    }

    /// Adds two integers.
    #[tool(description = "Add two integers")]
    async fn add(&self, Parameters(Add { a, b }): Parameters<Add>) -> Result<String, String> {
        a.checked_add(b)
            .map(|sum| sum.to_string())
            .ok_or_else(|| "the sum overflows".to_string())
    }
}

/// Serves MCP on stdin/stdout until the client closes it.
pub async fn serve_stdio() -> anyhow::Result<()> {
    let service = DemoServer.serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}

/// Serves streamable HTTP at `http://{listener address}/mcp` (any path is served) until the task is
/// dropped or aborted.
pub async fn serve_http(listener: tokio::net::TcpListener) -> anyhow::Result<()> {
    serve_http_of(listener, || DemoServer).await
}

/// Serves the MCP server `server` makes (one a session) over streamable HTTP on `listener`, any path,
/// until the task is dropped or aborted; the tests serve their own servers with it too.
pub async fn serve_http_of<S>(
    listener: tokio::net::TcpListener,
    server: fn() -> S,
) -> anyhow::Result<()>
where
    S: rmcp::ServerHandler + Send + 'static,
{
    let service: StreamableHttpService<S, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(server()),
        Default::default(),
        StreamableHttpServerConfig::default(),
    );
    loop {
        let (stream, _) = listener.accept().await?;
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            // A client that goes away mid-stream is not the server's error.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => serve_stdio().await,
        [flag, addr] if flag == "--http" => {
            let addr: SocketAddr = addr.parse()?;
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("MCP demo server at http://{}/mcp", listener.local_addr()?);
            serve_http(listener).await
        }
        _ => anyhow::bail!("usage: mcp_demo_server [--http ADDR]"),
    }
}
