//! MCP servers in the loop: the `mcp_demo_server` example over stdio, the same server over streamable
//! HTTP in this process, and servers that cannot be used.

use prompt_tester::{McpServer, Tool, Toolbox};
use prompt_tester_testkit::{FakeProvider, Usage, Wire};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

use super::*;

fn demo_stdio() -> McpServer {
    McpServer::stdio(
        example_binary("mcp_demo_server").display().to_string(),
        [] as [&str; 0],
    )
}

#[tokio::test]
async fn an_mcp_server_over_stdio_lists_its_tools_and_runs_them_in_the_loop() {
    let fake = FakeProvider::start();
    script(
        &fake,
        Wire::Anthropic,
        "claude-haiku-4-5",
        [
            Turn::Call("lookup_order", json!({"id": "A-1001"}), Usage::new(40, 9)),
            Turn::Call("lookup_order", json!({"id": "B-7"}), Usage::new(60, 9)),
            Turn::Say(
                "A-1001 has shipped; B-7 does not exist.",
                Usage::new(80, 12),
            ),
        ],
    );
    let toolbox = Toolbox::new()
        .mcp(demo_stdio())
        .tool(weather_tool(Arc::default()));
    let outcome = run_on(
        &fake,
        Wire::Anthropic,
        &toolbox,
        "Where are A-1001 and B-7?",
    )
    .await
    .unwrap();
    assert_eq!(
        outcome.result.text,
        "A-1001 has shipped; B-7 does not exist."
    );
    assert_eq!(
        (outcome.result.input_tokens, outcome.result.output_tokens),
        (180, 30)
    );

    let requests = fake.requests();
    // Rust tools first, then the server's, with the schemas it published.
    let declared = declared_tools(&requests[0]);
    let mut names: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.remove(0), "get_weather");
    names.sort();
    assert_eq!(names, ["add", "lookup_order"]);
    let lookup = &declared
        .iter()
        .find(|(n, _)| n == "lookup_order")
        .unwrap()
        .1;
    assert_eq!(lookup["properties"]["id"]["type"], "string");
    assert_eq!(lookup["required"], json!(["id"]));

    let (_, found) = last_exchange(&requests[1]);
    let order: Value = serde_json::from_str(&found[0].content).unwrap();
    assert_eq!(
        (order["status"].as_str(), found[0].is_error),
        (Some("shipped"), false)
    );
    let (_, missing) = last_exchange(&requests[2]);
    assert_eq!(
        (missing[0].content.as_str(), missing[0].is_error),
        ("no order with id \"B-7\"", true)
    );
}

#[tokio::test]
async fn an_mcp_server_over_streamable_http_runs_in_the_loop() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(mcp_demo_server::serve_http(listener));

    for wire in ALL {
        let toolbox = Toolbox::new().mcp(McpServer::http(&url).header("x-demo", "1"));
        let (fake, outcome) = run_scripted(
            wire,
            &toolbox,
            "What is 2 + 40?",
            [
                Turn::Call("add", json!({"a": 2, "b": 40}), Usage::new(12, 4)),
                Turn::Say("2 + 40 = 42", Usage::new(15, 5)),
            ],
        )
        .await;
        assert_eq!(outcome.result.text, "2 + 40 = 42");
        assert_eq!(
            outcome.result.tool_calls[0].arguments,
            json!({"a": 2, "b": 40})
        );
        let (_, results) = last_exchange(&fake.requests()[1]);
        assert_eq!(
            (results[0].content.as_str(), results[0].is_error),
            ("42", false),
            "{wire:?}"
        );
    }
    server.abort();
}

#[tokio::test]
async fn unusable_mcp_servers_and_duplicate_tool_names_fail_clearly() {
    let fake = FakeProvider::start();

    let missing = Toolbox::new().mcp(McpServer::stdio("/nonexistent/mcp-server", ["--stdio"]));
    let error = run_on(&fake, Wire::OpenAi, &missing, "Hi")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("cannot start MCP server `/nonexistent/mcp-server --stdio`: "),
        "{error}"
    );

    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let unreachable = Toolbox::new()
        .mcp(McpServer::http(format!("http://{closed}/mcp")))
        .tool_timeout(Duration::from_secs(5));
    let error = run_on(&fake, Wire::OpenAi, &unreachable, "Hi")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(&format!("MCP server at http://{closed}/mcp: ")),
        "{error}"
    );

    // Not an MCP server at all: the handshake fails and says what the process printed.
    let not_mcp = Toolbox::new().mcp(McpServer::stdio(
        "sh",
        ["-c", "echo not-mcp-at-all >&2; exit 3"],
    ));
    let error = run_on(&fake, Wire::OpenAi, &not_mcp, "Hi")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("MCP handshake failed") || error.contains("no MCP handshake"),
        "{error}"
    );

    let add = Tool::new("add", "Adds", json!({"type": "object"}), |_| async {
        Ok::<_, String>("0")
    });
    let twice = Toolbox::new().tool(add).mcp(demo_stdio());
    let error = run_on(&fake, Wire::OpenAi, &twice, "Hi").await.unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("tool `add` is offered twice: by the Rust tools and by MCP server `"),
        "{error}"
    );
    // No model call was made for any of them.
    assert_eq!(fake.request_count(), 0);
}
