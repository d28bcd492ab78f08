//! Tool calling and the agent loop against the fake provider on 127.0.0.1, in the three wire formats;
//! MCP servers over stdio (the `mcp_demo_server` example as a child process) and over streamable HTTP
//! (the same server in this process); and agent tests run through the real harness (the
//! `agent_fixture` example), cassettes recorded with the fake up and replayed with it stopped.
//!
//! This file holds what the modules share (a client per wire, the weather tool, what a request
//! declared and answered); the tests are in `agent_loop` (the loop in each wire format), `mcp` (MCP
//! servers), `harness` (agent tests and suite cases through the harness), `mcp_harness` (MCP servers
//! through the harness: their environment, their processes, their secrets), `suite_mcp` (a suite's
//! `mcp` servers in its agent loop), `suite_trajectory` (a suite's assertions on the trajectory) and
//! `local` (the local model).

use prompt_tester::completion::CompletionRequest;
use prompt_tester::config::RetryConfig;
use prompt_tester::provider::ProviderClient;
use prompt_tester::{AgentError, AgentOutcome, Tool, Toolbox};
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
mod mcp_harness;
mod suite_mcp;
mod suite_trajectory;

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
        Wire::Anthropic => items(&json["tools"])
            .map(|t| (text(&t["name"]), t["input_schema"].clone()))
            .collect(),
        Wire::Gemini => items(&json["tools"][0]["functionDeclarations"])
            .map(|t| (text(&t["name"]), t["parameters"].clone()))
            .collect(),
        Wire::OpenAi => items(&json["tools"])
            .map(|t| {
                assert_eq!(t["type"], "function");
                (
                    text(&t["function"]["name"]),
                    t["function"]["parameters"].clone(),
                )
            })
            .collect(),
    }
}

/// A tool result a request sends back. It answers its call by id (Anthropic, OpenAI) or by tool
/// name (Gemini); OpenAI has no error flag, so `is_error` is always false there.
#[derive(Debug)]
struct Sent {
    call_id: Option<String>,
    name: Option<String>,
    content: String,
    is_error: bool,
}

/// The tool results a request sends back, and the tool calls of the assistant message before them,
/// as (id, name, arguments).
type Results = Vec<Sent>;
type Calls = Vec<(Option<String>, String, Value)>;

fn last_exchange(request: &CapturedRequest) -> (Calls, Results) {
    let json = request.json.as_ref().expect("a JSON body");
    match request.wire().expect("a known path") {
        Wire::Anthropic => {
            let (assistant, user) = last_two(&json["messages"], ("assistant", "user"));
            let calls = items(&assistant["content"])
                .filter(|b| b["type"] == "tool_use")
                .map(|b| (Some(text(&b["id"])), text(&b["name"]), b["input"].clone()))
                .collect();
            let results = items(&user["content"])
                .map(|b| {
                    assert_eq!(b["type"], "tool_result", "{b}");
                    Sent {
                        call_id: Some(text(&b["tool_use_id"])),
                        name: None,
                        content: text(&b["content"]),
                        is_error: b["is_error"].as_bool().unwrap(),
                    }
                })
                .collect();
            (calls, results)
        }
        Wire::Gemini => {
            let (model, user) = last_two(&json["contents"], ("model", "user"));
            let calls = items(&model["parts"])
                .filter_map(|p| p.get("functionCall"))
                .map(|c| (None, text(&c["name"]), c["args"].clone()))
                .collect();
            let results = items(&user["parts"])
                .map(|p| {
                    let r = &p["functionResponse"];
                    let (content, is_error) = match r["response"].get("error") {
                        Some(error) => (text(error), true),
                        None => (text(&r["response"]["content"]), false),
                    };
                    Sent {
                        call_id: None,
                        name: Some(text(&r["name"])),
                        content,
                        is_error,
                    }
                })
                .collect();
            (calls, results)
        }
        Wire::OpenAi => {
            let messages = json["messages"].as_array().unwrap();
            let first_tool = messages.iter().rposition(|m| m["role"] != "tool").unwrap();
            let assistant = &messages[first_tool];
            assert_eq!(assistant["role"], "assistant");
            let calls = items(&assistant["tool_calls"])
                .map(|c| {
                    assert_eq!(c["type"], "function");
                    let arguments: Value =
                        serde_json::from_str(c["function"]["arguments"].as_str().unwrap()).unwrap();
                    (
                        Some(text(&c["id"])),
                        text(&c["function"]["name"]),
                        arguments,
                    )
                })
                .collect();
            // OpenAI has no error flag: a failed call is a tool message like any other.
            let results = messages[first_tool + 1..]
                .iter()
                .map(|m| Sent {
                    call_id: Some(text(&m["tool_call_id"])),
                    name: None,
                    content: text(&m["content"]),
                    is_error: false,
                })
                .collect();
            (calls, results)
        }
    }
}

/// The last two entries of the message list `list`, which must have the roles `roles`.
fn last_two<'a>(list: &'a Value, roles: (&str, &str)) -> (&'a Value, &'a Value) {
    let list = list.as_array().expect("a message list");
    let (first, second) = (&list[list.len() - 2], &list[list.len() - 1]);
    assert_eq!(
        (first["role"].as_str(), second["role"].as_str()),
        (Some(roles.0), Some(roles.1))
    );
    (first, second)
}

fn items(array: &Value) -> std::slice::Iter<'_, Value> {
    array
        .as_array()
        .unwrap_or_else(|| panic!("an array: {array}"))
        .iter()
}

fn text(string: &Value) -> String {
    string
        .as_str()
        .unwrap_or_else(|| panic!("a string: {string}"))
        .to_string()
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

/// Runs `toolbox` on `prompt` against a fresh fake in `wire`, the model (`model_for(wire)`) answering
/// with `turns`: the fake (its requests) and the outcome.
async fn run_scripted<'a>(
    wire: Wire,
    toolbox: &Toolbox,
    prompt: &str,
    turns: impl IntoIterator<Item = Turn<'a>>,
) -> (FakeProvider, AgentOutcome) {
    let fake = FakeProvider::start();
    script(&fake, wire, model_for(wire), turns);
    let outcome = run_on(&fake, wire, toolbox, prompt).await.unwrap();
    (fake, outcome)
}

/// Runs `toolbox` on `prompt` against `fake` in `wire`, as `model_for(wire)` with 64 tokens to answer.
async fn run_on(
    fake: &FakeProvider,
    wire: Wire,
    toolbox: &Toolbox,
    prompt: &str,
) -> Result<AgentOutcome, AgentError> {
    let request = CompletionRequest::new(model_for(wire), prompt, 64);
    toolbox.run(&client(fake, wire), request).await
}
