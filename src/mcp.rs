//! Live MCP servers as tool sources, through the official Rust SDK (`rmcp`): a stdio command
//! ([`McpServer::stdio`]) or a streamable HTTP endpoint ([`McpServer::http`]).
//!
//! Each run of an agent test connects to its servers, lists their tools, calls them as the model asks,
//! and closes the connections when the run ends (a stdio server gets its stdin closed, then SIGTERM,
//! then a kill, and so does what is left of its process group). Connecting per run keeps runs
//! independent, and no process outlives its test. A stdio server gets a minimal environment, not the
//! harness's (which holds the provider keys), and what a server's messages say about it (its label,
//! its errors) never shows its credentials: the label reaches the model, and so the cassettes.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

mod error;
mod label;
mod process;

pub use error::McpError;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock as McpContent};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::completion::ToolSpec;
use label::ServerSecrets;
use process::Group;

/// The HTTP client of a streamable HTTP server, as rmcp's default one is (no idle connection kept,
/// only a same-origin 307 or 308 followed, at most ten) but with the harness's own TLS configuration
/// (`provider::tls_config`: no process-wide crypto provider).
fn http_client() -> reqwest::Client {
    // A 307 or 308 keeps the JSON-RPC body; another origin would get the custom headers (keys).
    let same_origin = reqwest::redirect::Policy::custom(|attempt| {
        let kept = matches!(attempt.status().as_u16(), 307 | 308)
            && (attempt.previous().first())
                .is_some_and(|from| from.origin() == attempt.url().origin());
        if !kept {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .tls_backend_preconfigured(crate::provider::tls_config())
        .pool_max_idle_per_host(0)
        .redirect(same_origin)
        .build()
        .expect("the HTTP client builds")
}

/// How much of a stdio server's stderr is kept to explain a failed connection.
const STDERR_TAIL: usize = 2000;

/// A live MCP server to take tools from.
#[derive(Clone, PartialEq)]
pub struct McpServer {
    transport: Transport,
}

#[derive(Clone, PartialEq)]
enum Transport {
    Stdio(Stdio),
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// A server started as a child process: what [`process::command`] starts.
#[derive(Clone, PartialEq)]
struct Stdio {
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// Variables passed on from the harness's environment.
    inherit: Vec<String>,
    cwd: Option<PathBuf>,
}

// Header values (tokens), environment values (keys), credentials and query values of the URL and
// secret-looking arguments are never shown.
impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.transport {
            Transport::Stdio(stdio) => f
                .debug_struct("McpServer::stdio")
                .field("command", &stdio.command)
                .field("args", &label::shown_args(&stdio.args).0)
                .field("env", &stdio.env.iter().map(|(k, _)| k).collect::<Vec<_>>())
                .field("inherit_env", &stdio.inherit)
                .field("cwd", &stdio.cwd)
                .finish(),
            Transport::Http { url, headers } => f
                .debug_struct("McpServer::http")
                .field("url", &crate::redact::url_for_display(url))
                .field(
                    "headers",
                    &headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                )
                .finish(),
        }
    }
}

/// The label messages and tool results name the server by: ``MCP server `cmd args` `` or
/// `MCP server at URL`, without its secrets.
impl fmt::Display for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&label::label(self))
    }
}

impl McpServer {
    /// A server started as a child process speaking MCP on its stdin and stdout.
    ///
    /// It gets a minimal environment, not the harness's: `PATH`, `HOME`, the locale, the temporary
    /// directory and the like (the guide's "Tools and agents" lists them), the variables named with
    /// [`inherit_env`](Self::inherit_env), and those set with [`env`](Self::env). It runs in a process
    /// group of its own (on Unix), ended with it.
    pub fn stdio(
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            transport: Transport::Stdio(Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: Vec::new(),
                inherit: Vec::new(),
                cwd: None,
            }),
        }
    }

    /// A server reached over streamable HTTP at `url` (e.g. `http://127.0.0.1:8000/mcp`).
    pub fn http(url: impl Into<String>) -> Self {
        Self {
            transport: Transport::Http {
                url: url.into(),
                headers: Vec::new(),
            },
        }
    }

    /// Sets an environment variable of a stdio server (ignored for HTTP).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Stdio(stdio) = &mut self.transport {
            stdio.env.push((name.into(), value.into()));
        }
        self
    }

    /// Passes these variables of the harness's environment on to a stdio server as they are (those
    /// unset are skipped; ignored for HTTP), e.g. `["GITHUB_TOKEN"]` for a server that needs it.
    pub fn inherit_env(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        if let Transport::Stdio(stdio) = &mut self.transport {
            stdio.inherit.extend(names.into_iter().map(Into::into));
        }
        self
    }

    /// Sets the working directory of a stdio server (ignored for HTTP).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Transport::Stdio(stdio) = &mut self.transport {
            stdio.cwd = Some(dir.into());
        }
        self
    }

    /// Adds a header to every HTTP request, e.g. `("authorization", "Bearer ...")` (ignored for stdio).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Http { headers, .. } = &mut self.transport {
            headers.push((name.into(), value.into()));
        }
        self
    }
}

/// An open connection to one server, with its tools.
pub(crate) struct McpSession {
    label: String,
    /// What is taken out of everything the server sends back.
    secrets: ServerSecrets,
    service: RunningService<RoleClient, ()>,
    /// A stdio server's process group.
    group: Option<Group>,
    /// The server's tools as specs.
    pub(crate) tools: Vec<ToolSpec>,
}

impl McpSession {
    /// Connects to `server` and lists its tools, giving up after `timeout`.
    pub(crate) async fn connect(server: &McpServer, timeout: Duration) -> Result<Self, McpError> {
        let label = label::label(server);
        let secrets = ServerSecrets::of(server);
        let connect_error = |message: String| McpError::Connect {
            server: label.clone(),
            message: secrets.message(&message),
        };
        let stderr_tail = Arc::new(Mutex::new(String::new()));
        let mut group = None;
        let service = match &server.transport {
            Transport::Stdio(stdio) => {
                let cmd = process::command(stdio);
                let (transport, stderr) = TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|e| McpError::Spawn {
                        server: label.clone(),
                        message: secrets.message(&e.to_string()),
                    })?;
                group = Group::led_by(transport.id());
                if let Some(mut stderr) = stderr {
                    // Drained all along so a chatty server never blocks on a full pipe; the tail
                    // explains a failed handshake.
                    let tail = stderr_tail.clone();
                    tokio::spawn(async move {
                        let mut buf = [0u8; 1024];
                        while let Ok(n) = stderr.read(&mut buf).await {
                            if n == 0 {
                                break;
                            }
                            let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                            tail.push_str(&String::from_utf8_lossy(&buf[..n]));
                            if tail.len() > STDERR_TAIL {
                                let mut cut = tail.len() - STDERR_TAIL;
                                while !tail.is_char_boundary(cut) {
                                    cut += 1;
                                }
                                tail.drain(..cut);
                            }
                        }
                    });
                }
                tokio::time::timeout(timeout, ().serve(transport)).await
            }
            Transport::Http { url, headers } => {
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    let header = || McpError::Header {
                        server: label.clone(),
                        name: name.clone(),
                    };
                    custom.insert(
                        reqwest::header::HeaderName::try_from(name.as_str())
                            .map_err(|_| header())?,
                        reqwest::header::HeaderValue::try_from(value.as_str())
                            .map_err(|_| header())?,
                    );
                }
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
                let transport = StreamableHttpClientTransport::with_client(http_client(), config);
                tokio::time::timeout(timeout, ().serve(transport)).await
            }
        };
        let with_stderr = |message: String| {
            let tail = stderr_tail.lock().unwrap_or_else(|e| e.into_inner());
            let tail = tail.trim();
            if tail.is_empty() {
                message
            } else {
                format!("{message}; its stderr ends: {tail}")
            }
        };
        let service = match service {
            Ok(Ok(service)) => service,
            Ok(Err(e)) => {
                return Err(connect_error(with_stderr(format!(
                    "MCP handshake failed: {e}"
                ))));
            }
            Err(_) => {
                return Err(connect_error(with_stderr(format!(
                    "no MCP handshake within {timeout:?}"
                ))));
            }
        };
        let listed = match tokio::time::timeout(timeout, service.list_all_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(e)) => {
                stop(service, group).await;
                return Err(connect_error(with_stderr(format!(
                    "listing its tools failed: {e}"
                ))));
            }
            Err(_) => {
                stop(service, group).await;
                return Err(connect_error(format!(
                    "it did not list its tools within {timeout:?}"
                )));
            }
        };
        let tools = listed
            .into_iter()
            .map(|t| ToolSpec {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*t.input_schema).clone()),
            })
            .collect();
        Ok(Self {
            label,
            secrets,
            service,
            group,
            tools,
        })
    }

    /// Calls tool `name`: the text of its result, or the error text the model should see.
    pub(crate) async fn call(&self, name: &str, arguments: Value) -> Result<String, String> {
        let mut params = CallToolRequestParams::new(name.to_string());
        match arguments {
            Value::Object(map) => params = params.with_arguments(map),
            Value::Null => {}
            other => return Err(format!("arguments must be a JSON object, not {other}")),
        }
        match self.service.call_tool(params).await {
            Ok(result) => {
                let is_error = result.is_error == Some(true);
                let text = self.secrets.scrub(&result_text(result));
                if is_error { Err(text) } else { Ok(text) }
            }
            Err(e) => Err(format!(
                "{}: {}",
                self.label,
                self.secrets.message(&e.to_string())
            )),
        }
    }

    /// Closes the connection (and stops a stdio server and its process group).
    pub(crate) async fn close(self) {
        stop(self.service, self.group).await;
    }
}

/// Closes `service` (the SDK stops a stdio server: stdin closed, SIGTERM, a kill), then ends what is
/// left of its process group: a grandchild the server started would outlive it otherwise.
async fn stop(service: RunningService<RoleClient, ()>, group: Option<Group>) {
    let _ = service.cancel().await;
    if let Some(group) = group {
        group.end().await;
    }
}

/// The text a tool result shows the model: its text blocks, a description of other blocks, or its
/// structured content when it has no content blocks.
fn result_text(result: CallToolResult) -> String {
    let parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            McpContent::Text(text) => text.text.clone(),
            McpContent::Image(image) => format!("[image {}]", image.mime_type),
            McpContent::Audio(audio) => format!("[audio {}]", audio.mime_type),
            McpContent::Resource(resource) => resource.get_text(),
            McpContent::ResourceLink(link) => format!("[resource {}]", link.uri),
            _ => "[content of an unsupported kind]".to_string(),
        })
        .collect();
    if parts.is_empty() {
        return result
            .structured_content
            .map(|v| v.to_string())
            .unwrap_or_default();
    }
    parts.join("\n")
}

/// Connects to every server at once; on any failure the ones already open are closed.
pub(crate) async fn connect_all(
    servers: &[McpServer],
    timeout: Duration,
) -> Result<Vec<McpSession>, McpError> {
    let outcomes =
        futures::future::join_all(servers.iter().map(|s| McpSession::connect(s, timeout))).await;
    let mut sessions = Vec::new();
    let mut failure = None;
    for outcome in outcomes {
        match outcome {
            Ok(session) => sessions.push(session),
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    match failure {
        None => Ok(sessions),
        Some(e) => {
            close_all(sessions).await;
            Err(e)
        }
    }
}

/// Closes every session.
pub(crate) async fn close_all(sessions: Vec<McpSession>) {
    futures::future::join_all(sessions.into_iter().map(McpSession::close)).await;
}

/// Which session serves each tool name (after checking that no name comes twice).
pub(crate) fn route(
    local: &[String],
    sessions: &[McpSession],
) -> Result<BTreeMap<String, usize>, McpError> {
    let mut origin: BTreeMap<String, String> = local
        .iter()
        .map(|n| (n.clone(), "the Rust tools".to_string()))
        .collect();
    let mut routes = BTreeMap::new();
    for (i, session) in sessions.iter().enumerate() {
        for tool in &session.tools {
            if let Some(first) = origin.insert(tool.name.clone(), session.label.clone()) {
                return Err(McpError::DuplicateTool {
                    name: tool.name.clone(),
                    first,
                    second: session.label.clone(),
                });
            }
            routes.insert(tool.name.clone(), i);
        }
    }
    Ok(routes)
}
