//! MCP servers in agent tests run through the harness (the `agent_fixture`'s `mcp_*` tests): what a
//! stdio server gets of the harness's environment, what it leaves running, and what a server's
//! credentials leave in the files a run writes.

use std::path::Path;

use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Usage};
use serde_json::json;

use super::harness::{run_agents, scratch};
use super::*;

/// The fake, in Anthropic's wire: a request carrying a tool result gets "42", any other a call of
/// `add(2, 40)`.
fn add_reply(request: &CapturedRequest) -> Reply {
    let model = request.model().unwrap_or_default();
    let body = request.json.clone().unwrap_or_default().to_string();
    if body.contains("\"tool_result\"") {
        return Reply::text(Wire::Anthropic, &model, "42", Usage::new(20, 2));
    }
    let arguments = json!({"a": 2, "b": 40});
    Reply::tool_call(
        Wire::Anthropic,
        &model,
        "add",
        &arguments,
        Usage::new(10, 5),
    )
}

/// An MCP server whose one tool fails in the protocol: a JSON-RPC error, not a tool's error result.
#[derive(Debug, Clone, Default)]
struct Broken;

#[rmcp::tool_router(server_handler)]
impl Broken {
    #[rmcp::tool(description = "Add two integers")]
    async fn add(&self) -> Result<String, rmcp::ErrorData> {
        Err(rmcp::ErrorData::internal_error("the backend is down", None))
    }
}

/// Every file under `dir`, with its text.
pub(super) fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            found.push((path.display().to_string(), text));
        }
    }
    found
}

/// Whether process `pid` has ended (a zombie waiting to be reaped has).
fn ended(pid: &str) -> bool {
    let ps = std::process::Command::new("ps")
        .args(["-o", "stat=", "-p", pid])
        .output()
        .expect("ps runs");
    let state = String::from_utf8_lossy(&ps.stdout);
    state.trim().is_empty() || state.trim_start().starts_with('Z')
}

#[test]
fn a_stdio_mcp_server_gets_no_provider_key_and_leaves_no_process_behind() {
    let fake = FakeProvider::builder().respond_with(add_reply).start();
    let scratch = scratch("mcp-stdio", &fake);
    let probe = scratch.path().join("probe");
    std::fs::create_dir_all(&probe).unwrap();
    let demo = example_binary("mcp_demo_server");
    let run = run_agents(
        &scratch,
        &["mcp_stdio"],
        &[
            ("PROMPT_TESTER_CASSETTE", "off"),
            ("ANTHROPIC_API_KEY", "sk-test-secret"),
            ("FIXTURE_MCP_DEMO", demo.to_str().unwrap()),
            ("FIXTURE_MCP_PROBE", probe.to_str().unwrap()),
            ("FIXTURE_MCP_PASSED", "passed-on"),
            ("FIXTURE_MCP_WITHHELD", "kept-back"),
        ],
    );
    let grandchild = std::fs::read_to_string(probe.join("grandchild.pid")).unwrap_or_default();
    let grandchild = grandchild.trim();
    let left_running = !grandchild.is_empty() && !ended(grandchild);
    if left_running {
        // Not left for the next test run either.
        let _ = std::process::Command::new("kill").arg(grandchild).status();
    }
    assert_eq!(run.outcome("mcp_stdio"), "ok", "{}", run.context());

    // What the server saw: the documented minimal set, what the toolbox passed on or set; not the
    // harness's key, nor anything else of its environment.
    let env = std::fs::read_to_string(probe.join("env.txt")).unwrap();
    let names: Vec<&str> = env
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect();
    assert!(!env.contains("sk-test-secret"), "{env}");
    for withheld in [
        "ANTHROPIC_API_KEY",
        "FIXTURE_MCP_WITHHELD",
        "FIXTURE_MCP_PROBE",
        "CARGO_MANIFEST_DIR",
        "NO_COLOR",
    ] {
        assert!(
            !names.contains(&withheld),
            "{withheld} reached the server:\n{env}"
        );
    }
    for given in [
        "FIXTURE_MCP_PASSED=passed-on",
        &format!("PROBE_DIR={}", probe.display()),
        &format!("PATH={}", std::env::var("PATH").unwrap()),
    ] {
        assert!(env.lines().any(|line| line == given), "no {given}:\n{env}");
    }

    assert!(!grandchild.is_empty(), "the server wrote no grandchild pid");
    assert!(
        !left_running,
        "the server's grandchild {grandchild} outlived the run"
    );
}

#[test]
fn a_failing_mcp_call_leaves_no_credential_of_the_server_in_cassettes_or_reports() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    runtime.spawn(mcp_demo_server::serve_http_of(listener, || Broken));
    let url = format!("http://mcpuser:hunter2pw@{addr}/mcp?token=tok-s3cret-123&team=blue");

    let fake = FakeProvider::builder().respond_with(add_reply).start();
    let scratch = scratch("mcp-http", &fake);
    let report = scratch.path().join("report.json");
    let run = run_agents(
        &scratch,
        &["mcp_http", "--report", report.to_str().unwrap()],
        &[
            ("PROMPT_TESTER_CASSETTE", "record"),
            ("FIXTURE_MCP_URL", &url),
        ],
    );
    assert_eq!(run.outcome("mcp_http"), "ok", "{}", run.context());

    // The call failed, the model heard so, and the next request was recorded with the answer: the
    // server's credentials are in none of the files the run wrote, its output, or what the model got.
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let mut written = files_under(scratch.path());
    assert!(
        written
            .iter()
            .any(|(path, _)| path.ends_with(".cassette.json")),
        "{written:?}"
    );
    assert!(
        written
            .iter()
            .any(|(path, _)| path.ends_with("report.json"))
    );
    written.push(("stdout".into(), run.stdout()));
    written.push(("stderr".into(), run.stderr()));
    for (i, request) in requests.iter().enumerate() {
        let body = request.json.clone().unwrap_or_default().to_string();
        written.push((format!("request {i} to the model"), body));
    }
    for secret in ["tok-s3cret-123", "hunter2pw", "mcpuser"] {
        for (place, text) in &written {
            assert!(!text.contains(secret), "{secret} in {place}:\n{text}");
        }
    }

    // What the model got instead: the server's label, which still says which server failed.
    let (_, results) = last_exchange(&requests[1]);
    let shown =
        format!("MCP server at http://[REDACTED]@{addr}/mcp?token=[REDACTED]&team=[REDACTED]: ");
    assert!(
        results[0].is_error && results[0].content.starts_with(&shown),
        "{results:?}"
    );
    for file in ["cassette.json", "report.json"] {
        assert!(
            written
                .iter()
                .any(|(path, text)| path.ends_with(file) && text.contains(&shown)),
            "the failed call is not in the {file}"
        );
    }
    runtime.shutdown_background();
}
