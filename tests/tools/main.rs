//! Tool calling and the agent loop against the fake provider on 127.0.0.1, in the three wire formats;
//! MCP servers over stdio (the `mcp_demo_server` example as a child process) and over streamable HTTP
//! (the same server in this process); and agent tests run through the real harness (the
//! `agent_fixture` example), cassettes recorded with the fake up and replayed with it stopped.
//!
//! This file holds what the modules share (a client per wire, the weather tool, what a request
//! declared and answered); the tests are in `agent_loop` (the loop in each wire format), `mcp` (MCP
//! servers), `harness` (agent tests and suite cases through the harness) and `local` (the local model).

use prompt_tester::completion::CompletionRequest;
use prompt_tester::config::RetryConfig;
use prompt_tester::provider::ProviderClient;
use prompt_tester::{AgentOutcome, Tool, Toolbox};
use prompt_tester_testkit::child;
use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Usage, Wire};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod agent_loop;
mod harness;
mod local;
mod mcp;

#[path = "../common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "../../examples/mcp_demo_server.rs"]
mod mcp_demo_server;
#[path = "../prereq/mod.rs"]
mod prereq;

use common::{ALL, model_for};

fn client(fake: &FakeProvider, wire: Wire) -> ProviderClient {
    let endpoint = common::endpoint(&format!("fake-{wire:?}").to_lowercase(), fake, wire, 8);
    let retry = RetryConfig {
        max_backoff: Duration::from_millis(50),
        request_timeout: Duration::from_secs(10),
        ..common::fast_retry(1)
    };
    common::client_of(&endpoint, &retry, Some("sk-test"))
}

fn weather_schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

/// A `get_weather` tool that records the arguments it was called with.
fn weather_tool(seen: Arc<Mutex<Vec<Value>>>) -> Tool {
    Tool::new(
        "get_weather",
        "The current weather in a city",
        weather_schema(),
        move |args| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(args.clone());
                let city = args["city"].as_str().ok_or("`city` must be a string")?;
                Ok::<_, String>(format!("Sunny in {city}"))
            }
        },
    )
}

/// The tools a request declared, as (name, schema) in the wire's own shape.
fn declared_tools(request: &CapturedRequest) -> Vec<(String, Value)> {
    let json = request.json.as_ref().expect("a JSON body");
    match request.wire().expect("a known path") {
        Wire::Anthropic => json["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_string(),
                    t["input_schema"].clone(),
                )
            })
            .collect(),
        Wire::Gemini => json["tools"][0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_string(),
                    t["parameters"].clone(),
                )
            })
            .collect(),
        Wire::OpenAi => json["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                assert_eq!(t["type"], "function");
                (
                    t["function"]["name"].as_str().unwrap().to_string(),
                    t["function"]["parameters"].clone(),
                )
            })
            .collect(),
    }
}

/// The tool results a request sends back, as (call id, name, content, is_error) in the wire's shape,
/// and the tool calls of the assistant message before them, as (id, name, arguments).
type Results = Vec<(Option<String>, Option<String>, String, bool)>;
type Calls = Vec<(Option<String>, String, Value)>;

fn last_exchange(request: &CapturedRequest) -> (Calls, Results) {
    let json = request.json.as_ref().expect("a JSON body");
    match request.wire().expect("a known path") {
        Wire::Anthropic => {
            let messages = json["messages"].as_array().unwrap();
            let (assistant, user) = (&messages[messages.len() - 2], &messages[messages.len() - 1]);
            assert_eq!(
                (assistant["role"].as_str(), user["role"].as_str()),
                (Some("assistant"), Some("user"))
            );
            let calls = assistant["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| {
                    (
                        Some(b["id"].as_str().unwrap().to_string()),
                        b["name"].as_str().unwrap().to_string(),
                        b["input"].clone(),
                    )
                })
                .collect();
            let results = user["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    assert_eq!(b["type"], "tool_result", "{b}");
                    (
                        Some(b["tool_use_id"].as_str().unwrap().to_string()),
                        None,
                        b["content"].as_str().unwrap().to_string(),
                        b["is_error"].as_bool().unwrap(),
                    )
                })
                .collect();
            (calls, results)
        }
        Wire::Gemini => {
            let contents = json["contents"].as_array().unwrap();
            let (model, user) = (&contents[contents.len() - 2], &contents[contents.len() - 1]);
            assert_eq!(
                (model["role"].as_str(), user["role"].as_str()),
                (Some("model"), Some("user"))
            );
            let calls = model["parts"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p.get("functionCall"))
                .map(|c| {
                    (
                        None,
                        c["name"].as_str().unwrap().to_string(),
                        c["args"].clone(),
                    )
                })
                .collect();
            let results = user["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    let r = &p["functionResponse"];
                    let (content, is_error) = match r["response"].get("error") {
                        Some(error) => (error.as_str().unwrap().to_string(), true),
                        None => (
                            r["response"]["content"].as_str().unwrap().to_string(),
                            false,
                        ),
                    };
                    (
                        None,
                        Some(r["name"].as_str().unwrap().to_string()),
                        content,
                        is_error,
                    )
                })
                .collect();
            (calls, results)
        }
        Wire::OpenAi => {
            let messages = json["messages"].as_array().unwrap();
            let first_tool = messages.iter().rposition(|m| m["role"] != "tool").unwrap();
            let assistant = &messages[first_tool];
            assert_eq!(assistant["role"], "assistant");
            let calls = assistant["tool_calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    assert_eq!(c["type"], "function");
                    let arguments: Value =
                        serde_json::from_str(c["function"]["arguments"].as_str().unwrap()).unwrap();
                    (
                        Some(c["id"].as_str().unwrap().to_string()),
                        c["function"]["name"].as_str().unwrap().to_string(),
                        arguments,
                    )
                })
                .collect();
            // OpenAI has no error flag: a failed call is a tool message like any other.
            let results = messages[first_tool + 1..]
                .iter()
                .map(|m| {
                    (
                        Some(m["tool_call_id"].as_str().unwrap().to_string()),
                        None,
                        m["content"].as_str().unwrap().to_string(),
                        false,
                    )
                })
                .collect();
            (calls, results)
        }
    }
}

/// An example binary of this crate, built fresh (see `child::fresh_example_binary`).
fn example_binary(name: &str) -> PathBuf {
    child::fresh_example_binary(name, Path::new(env!("CARGO_MANIFEST_DIR")))
}

/// One scripted turn of the model: a call of a tool with its arguments, or the final text; with the
/// turn's usage.
enum Turn<'a> {
    Call(&'a str, Value, Usage),
    Say(&'a str, Usage),
}

/// Queues the model's `turns` on `fake`, as `model` answers in `wire`.
fn script<'a>(
    fake: &FakeProvider,
    wire: Wire,
    model: &str,
    turns: impl IntoIterator<Item = Turn<'a>>,
) {
    for turn in turns {
        fake.push(match turn {
            Turn::Call(name, arguments, usage) => {
                Reply::tool_call(wire, model, name, &arguments, usage)
            }
            Turn::Say(text, usage) => Reply::text(wire, model, text, usage),
        });
    }
}

/// Runs `toolbox` on `prompt` against `fake` in `wire`, the model (`model_for(wire)`) answering with
/// `turns`; the fake's earlier requests and replies are forgotten first.
async fn run_scripted<'a>(
    fake: &FakeProvider,
    wire: Wire,
    toolbox: &Toolbox,
    prompt: &str,
    turns: impl IntoIterator<Item = Turn<'a>>,
) -> AgentOutcome {
    fake.reset();
    let model = model_for(wire);
    script(fake, wire, model, turns);
    toolbox
        .run(
            &client(fake, wire),
            CompletionRequest::new(model, prompt, 64),
        )
        .await
        .unwrap()
}
