//! A suite case with `mcp` servers run through the harness: the `mcp_demo_server` example started over
//! stdio really runs the tools of the loop, `tool_called` sees the calls, `max_tool_rounds` ends a
//! model that never stops calling, and the cassette replays it all under `CI` with the provider gone.

use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Usage};
use serde_json::json;

use super::harness::{run_agents, scratch};
use super::*;

/// The fake, in Anthropic's wire: a prompt asking to loop always gets a call of `add`; another
/// request gets `add(2, 40)` until it carries a tool result, then an answer quoting that result (so the
/// answer holds what the MCP server computed, which the fake never does itself).
fn reply(request: &CapturedRequest) -> Reply {
    let model = request.model().unwrap_or_default();
    let json = request.json.clone().unwrap_or_default();
    let results: Vec<String> = (json["messages"].as_array().into_iter().flatten())
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].as_str().unwrap_or_default().to_string())
        .collect();
    let looping = json.to_string().contains("Please loop");
    match results.last() {
        Some(result) if !looping => Reply::text(
            Wire::Anthropic,
            &model,
            &format!("The sum is {result}."),
            Usage::new(20, 5),
        ),
        _ => Reply::tool_call(
            Wire::Anthropic,
            &model,
            "add",
            &json!({"a": 2, "b": 40}),
            Usage::new(10, 5),
        ),
    }
}

/// The tool results a request sends back, as text.
fn sent_back(request: &CapturedRequest) -> Vec<String> {
    let (_, results) = last_exchange(request);
    results.into_iter().map(|r| r.content).collect()
}

#[test]
fn a_suite_case_with_an_mcp_server_runs_the_agent_loop_and_replays_it_under_ci() {
    let fake = FakeProvider::builder().respond_with(reply).start();
    let scratch = scratch("suite-mcp", &fake);
    let demo = example_binary("mcp_demo_server");
    let suites = scratch.path().join("prompt-tests");
    std::fs::create_dir_all(&suites).unwrap();
    std::fs::write(
        suites.join("sums.evals.toml"),
        format!(
            r#"
prompt = "{{question}}"
provider = "fake_anthropic"
model = "{model}"
mcp = [{{ command = "{demo}" }}]
max_tool_rounds = 2

[[cases]]
name = "adds"
inputs = {{ question = "What is 2 + 40?" }}
assert = [{{ tool_called = {{ name = "add", arguments = {{ a = 2, b = 40 }} }} }}, {{ not_tool_called = "lookup_order" }}, {{ contains = "The sum is 42." }}]

[[cases]]
name = "loops"
inputs = {{ question = "Please loop" }}
assert = [{{ tool_called = "add" }}]
"#,
            model = model_for(Wire::Anthropic),
            demo = demo.display(),
        ),
    )
    .unwrap();

    let recorded = run_agents(
        &scratch,
        &["sums::"],
        &[("PROMPT_TESTER_CASSETTE", "record")],
    );
    let stdout = recorded.stdout();
    assert_eq!(
        recorded.outcome("sums::adds"),
        "ok",
        "{}",
        recorded.context()
    );
    // Two rounds of tool calls ran, then the third call still asked for one.
    assert_eq!(recorded.outcome("sums::loops"), "FAILED", "{stdout}");
    assert!(
        stdout.contains(
            r#"the model still called tools after max_tool_rounds = 2 round(s) of tool calls; its last calls (not run): add({"a":2,"b":40})"#
        ),
        "{stdout}"
    );

    let requests = fake.requests();
    let asked = |question: &str| -> Vec<&CapturedRequest> {
        (requests.iter())
            .filter(|r| r.json.as_ref().unwrap().to_string().contains(question))
            .collect()
    };
    let adds = asked("What is 2 + 40?");
    assert_eq!(adds.len(), 2, "a tool call, then the answer");
    // The model is offered the server's tools, as the server declares them.
    let mut declared: Vec<String> = declared_tools(adds[0]).into_iter().map(|t| t.0).collect();
    declared.sort();
    assert_eq!(declared, ["add", "lookup_order"]);
    // The server ran the call: its result is in the next request.
    assert_eq!(sent_back(adds[1]), ["42"]);
    let loops = asked("Please loop");
    assert_eq!(
        loops.len(),
        3,
        "max_tool_rounds = 2: two rounds, then the call that must answer"
    );
    assert_eq!(sent_back(loops[2]), ["42"]);

    // The provider is gone: under CI every model call comes from the cassette, the server still runs.
    fake.shutdown();
    let replayed = run_agents(&scratch, &["sums::"], &[("CI", "1")]);
    let stdout = replayed.stdout();
    assert_eq!(
        replayed.outcome("sums::adds"),
        "ok",
        "{}",
        replayed.context()
    );
    assert_eq!(replayed.outcome("sums::loops"), "FAILED", "{stdout}");
    assert!(
        stdout.contains("max_tool_rounds = 2 round(s) of tool calls"),
        "{stdout}"
    );
}

/// The values of a suite server's `headers` and `env` are shown nowhere: not in the files a run writes,
/// its output, what the model gets, nor the quoted line of an error in the suite file.
#[test]
fn a_suite_s_server_secrets_stay_out_of_every_file_and_message() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    runtime.spawn(mcp_demo_server::serve_http(listener));
    let fake = FakeProvider::builder().respond_with(reply).start();
    let scratch = scratch("suite-mcp-secrets", &fake);
    let suites = scratch.path().join("prompt-tests");
    std::fs::create_dir_all(&suites).unwrap();
    std::fs::write(
        suites.join("over_http.evals.toml"),
        format!(
            r#"prompt = "What is 2 + 40?"
provider = "fake_anthropic"
model = "{model}"
mcp = [{{ url = "http://{addr}/mcp", headers = {{ Authorization = "Bearer tok-suite-header-0123" }} }}]

[[cases]]
name = "adds"
assert = [{{ tool_called = "add" }}, {{ contains = "The sum is 42." }}]
"#,
            model = model_for(Wire::Anthropic),
        ),
    )
    .unwrap();
    // A problem on the line that holds a value: the error quotes the line.
    std::fs::write(
        suites.join("broken.evals.toml"),
        "prompt = \"Hi\"\nmcp = [{ command = \"x\", env = { API_TOKEN = \"env-suite-s3cret-4567\" }, headers = { X = \"y\" } }]\n\
         [[cases]]\nname = \"a\"\n",
    )
    .unwrap();
    let report = scratch.path().join("report.json");
    let run = run_agents(
        &scratch,
        &[
            "--report",
            report.to_str().unwrap(),
            // The fixture's Rust tests, which this fake does not answer.
            "--skip",
            "agent_",
            "--skip",
            "mcp_",
            "--skip",
            "declared_only",
        ],
        &[("PROMPT_TESTER_CASSETTE", "record")],
    );
    let stdout = run.stdout();
    assert_eq!(run.outcome("over_http::adds"), "ok", "{}", run.context());
    assert_eq!(
        run.outcome("broken::suite_file_error"),
        "FAILED",
        "{stdout}"
    );
    assert!(
        stdout.contains("`headers` is for a server at `url`, and this server has `command`")
            && stdout.contains("env = { API_TOKEN = \"[REDACTED:API_TOKEN]\" }"),
        "{stdout}"
    );

    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "a tool call, then the answer");
    assert_eq!(sent_back(&requests[1]), ["42"]);
    let mut written: Vec<(String, String)> = super::mcp_harness::files_under(scratch.path())
        .into_iter()
        .filter(|(path, _)| !path.ends_with(".evals.toml"))
        .collect();
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
    written.push(("stdout".into(), stdout));
    written.push(("stderr".into(), run.stderr()));
    for (i, request) in requests.iter().enumerate() {
        let body = request.json.clone().unwrap_or_default().to_string();
        written.push((format!("request {i} to the model"), body));
    }
    for secret in ["tok-suite-header-0123", "env-suite-s3cret-4567"] {
        for (place, text) in &written {
            assert!(!text.contains(secret), "{secret} in {place}:\n{text}");
        }
    }
    runtime.shutdown_background();
}
