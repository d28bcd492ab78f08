//! Agent tests (the `agent_fixture`) and suite cases with tools, run through the real harness.

use prompt_tester_testkit::child::{Run, Scratch};
use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Usage, Wire};
use serde_json::{Value, json};

use super::*;

/// The agent fixture's trials that pass.
const AGENTS: [&str; 4] = [
    "agent_anthropic",
    "agent_gemini",
    "agent_openai",
    "declared_only",
];

/// A scratch crate root for one fixture run, configured with the fake's three endpoints.
pub(super) fn scratch(name: &str, fake: &FakeProvider) -> Scratch {
    let scratch = Scratch::new("tools", name);
    scratch.config(&format!(
        "[providers.fake_anthropic]\nkind = \"anthropic\"\nbase_url = \"{}\"\n\n\
         [providers.fake_gemini]\nkind = \"google\"\nbase_url = \"{}\"\n\n\
         [providers.fake_openai]\nkind = \"openai\"\nbase_url = \"{}\"\n",
        fake.base_url(Wire::Anthropic),
        fake.base_url(Wire::Gemini),
        fake.base_url(Wire::OpenAi)
    ));
    scratch
}

/// Runs the agent fixture in `scratch`.
pub(super) fn run_agents(scratch: &Scratch, args: &[&str], env: &[(&str, &str)]) -> Run {
    scratch
        .child(example_binary("agent_fixture"))
        .args(args)
        .envs(env)
        .run()
}

/// Every cassette file of `scratch`, with its entries, by file name.
fn cassettes(scratch: &Scratch) -> Vec<(String, Vec<Value>)> {
    let dir = scratch.cassettes();
    let mut files: Vec<(String, Vec<Value>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        // Not `.prompt-tester/`, the writers' lock and temporary files.
        .filter(|p| p.to_string_lossy().ends_with(".cassette.json"))
        .map(|p| {
            let file: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let entries = file["entries"].as_array().cloned().unwrap_or_default();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                entries,
            )
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

/// The fake's policy for the fixture: a request carrying a tool result gets the final answer, others a
/// `get_weather` call; a prompt asking to loop always gets a call.
fn fixture_reply(request: &CapturedRequest) -> Reply {
    let wire = request.wire().expect("a known path");
    let model = request.model().unwrap_or_default();
    let body = request.json.clone().unwrap_or_default().to_string();
    let answered = match wire {
        Wire::Anthropic => body.contains("\"tool_result\""),
        Wire::Gemini => body.contains("\"functionResponse\""),
        Wire::OpenAi => body.contains("\"role\":\"tool\""),
    };
    if answered && !body.contains("Please loop") {
        Reply::text(wire, &model, "It is sunny in Paris.", Usage::new(23, 7))
    } else {
        Reply::tool_call(
            wire,
            &model,
            "get_weather",
            &json!({"city": "Paris"}),
            Usage::new(11, 5),
        )
    }
}

#[test]
fn agent_tests_run_through_the_harness_and_replay_every_turn_from_cassettes() {
    let fake = FakeProvider::builder().respond_with(fixture_reply).start();
    let scratch = scratch("agent", &fake);

    let recorded = run_agents(
        &scratch,
        // The MCP tests need servers (`mcp_harness`).
        &["--test-threads", "2", "--skip", "mcp_"],
        &[("PROMPT_TESTER_CASSETTE", "record")],
    );
    let stdout = recorded.stdout();
    let _stderr = recorded.stderr();
    recorded.assert_outcomes(&AGENTS, "ok");
    assert_eq!(recorded.outcome("agent_loops"), "FAILED");
    assert!(
        stdout.contains(
            r#"agent loop reached max_turns = 3 without a final answer; last tool calls: get_weather({"city":"Paris"})"#
        ),
        "{stdout}"
    );
    // Two turns per agent run (agent_openai has two runs), three for the loop, one for declared tools.
    assert_eq!(fake.request_count(), 2 + 2 + 2 * 2 + 3 + 1);

    // Every turn is in the cassette, under its own request.
    let cassettes = cassettes(&scratch);
    let turns = |name: &str| -> usize {
        cassettes
            .iter()
            .filter(|(file, _)| file.starts_with(name))
            .map(|(_, entries)| entries.len())
            .sum()
    };
    assert_eq!(turns("agent_anthropic"), 2, "{cassettes:?}");
    assert_eq!(turns("agent_gemini"), 2);
    assert_eq!(turns("agent_openai"), 4);

    // The provider is gone: replay only, every turn from the cassette, the tools still run.
    let requests_before = fake.request_count();
    fake.shutdown();
    let replayed = run_agents(
        &scratch,
        &["--skip", "agent_loops", "--skip", "mcp_"],
        &[
            ("PROMPT_TESTER_CASSETTE", "replay"),
            ("FIXTURE_EXPECT_REPLAYED", "1"),
        ],
    );
    let _stdout = replayed.stdout();
    replayed.assert_outcomes(&AGENTS, "ok");
    assert!(requests_before > 0);
}

#[test]
fn suite_cases_declare_tools_and_assert_the_calls() {
    let fake = FakeProvider::builder().respond_with(fixture_reply).start();
    let scratch = scratch("suite", &fake);
    let suites = scratch.0.join("prompt-tests");
    std::fs::create_dir_all(&suites).unwrap();
    std::fs::write(
        suites.join("weather.evals.toml"),
        r#"
prompt = "What is the weather in {city}?"
provider = "fake_openai"
model = "gpt-4o-mini"
tools = [{ name = "get_weather", description = "The current weather in a city", input_schema = { type = "object", properties = { city = { type = "string" } }, required = ["city"] } }]
assert = [{ not_tool_called = "delete_account" }]

[[cases]]
name = "paris"
inputs = { city = "Paris" }
assert = [{ tool_called = { name = "get_weather", arguments = { city = "Paris" } } }]

[[cases]]
name = "london"
inputs = { city = "London" }
assert = [{ tool_called = { name = "get_weather", arguments = { city = "London" } } }]
"#,
    )
    .unwrap();
    let output = run_agents(
        &scratch,
        &["weather::"],
        &[("PROMPT_TESTER_CASSETTE", "off")],
    );
    let stdout = output.stdout();
    assert_eq!(output.outcome("weather::paris"), "ok", "{stdout}");
    // The fake always asks for Paris.
    assert_eq!(output.outcome("weather::london"), "FAILED");
    assert!(
        stdout.contains(
            r#"tool_called: the model requested `get_weather` with arguments containing {"city":"London"} 0 time(s), expected at least 1 ($.city is "Paris", expected "London")"#
        ),
        "{stdout}"
    );
    let requests = fake.requests();
    assert_eq!(
        requests.len(),
        2,
        "one call per case: declared tools have no handlers"
    );
    for request in &requests {
        let declared = declared_tools(request);
        assert_eq!(declared.len(), 1);
        assert_eq!(declared[0].1["required"], json!(["city"]));
    }
}

#[test]
fn a_tool_loop_s_steps_are_in_the_json_report_and_the_page_and_a_plain_call_has_none() {
    let fake = FakeProvider::builder()
        .respond_with(|request| {
            let body = request.json.clone().unwrap_or_default().to_string();
            if body.contains("Say hello") {
                let model = request.model().unwrap_or_default();
                return Reply::text(Wire::OpenAi, &model, "Hello!", Usage::new(3, 2));
            }
            fixture_reply(request)
        })
        .start();
    let scratch = scratch("steps", &fake);
    let suites = scratch.0.join("prompt-tests");
    std::fs::create_dir_all(&suites).unwrap();
    std::fs::write(
        suites.join("plain.evals.toml"),
        "prompt = \"Say hello\"\nprovider = \"fake_openai\"\nmodel = \"gpt-4o-mini\"\n\n\
         [[cases]]\nname = \"hello\"\nassert = [{ contains = \"Hello\" }]\n",
    )
    .unwrap();
    let (report, page) = (
        scratch.path().join("report.json"),
        scratch.path().join("report.html"),
    );
    let output = run_agents(
        &scratch,
        &[
            "agent_openai",
            "plain::",
            "--report",
            &report.display().to_string(),
            "--html",
            &page.display().to_string(),
        ],
        &[("PROMPT_TESTER_CASSETTE", "off")],
    );
    let stdout = output.stdout();
    assert_eq!(output.outcome("agent_openai"), "ok", "{stdout}");
    assert_eq!(output.outcome("plain::hello"), "ok", "{stdout}");

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    let data = prompt_tester::testing::read_html_data(&html).expect("the page's data");
    let agent = prompt_tester_testkit::child::entry(&report["tests"], "name", "agent_openai");
    let on_page = prompt_tester_testkit::child::entry(&data["records"], "name", "agent_openai");
    for sample in agent["samples"].as_array().unwrap() {
        // The loop: a call asking for the tool, then one sent its result that answers.
        let steps = &sample["steps"];
        assert_eq!(steps.as_array().map(Vec::len), Some(2), "{sample:#}");
        assert_eq!(steps[0]["provider"], "fake_openai");
        assert_eq!(steps[0]["model"], "gpt-4o-mini");
        assert_eq!(steps[0]["requested"][0]["name"], "get_weather");
        assert_eq!(
            steps[0]["requested"][0]["arguments"],
            json!({"city": "Paris"})
        );
        assert_eq!(steps[0]["sent_back"], json!([]));
        assert_eq!(
            (&steps[0]["input_tokens"], &steps[0]["output_tokens"]),
            (&json!(11), &json!(5))
        );
        assert_eq!(steps[1]["requested"], json!([]));
        assert_eq!(steps[1]["sent_back"][0]["name"], "get_weather");
        assert_eq!(steps[1]["sent_back"][0]["content"], "Sunny, 21 C in Paris");
        assert_eq!(steps[1]["answer"], "It is sunny in Paris.");
        assert_eq!(
            (&steps[1]["input_tokens"], &steps[1]["output_tokens"]),
            (&json!(23), &json!(7))
        );
        assert!(steps[1]["latency_ms"].is_u64(), "{steps:#}");
        let run = sample["run"].as_u64().unwrap();
        let shown = on_page["samples"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["run"] == run)
            .expect("the sample on the page");
        assert_eq!(&shown["steps"], steps, "the page shows the report's steps");
    }
    // A single call without tools: its prompt and output say it all, as before.
    let plain = prompt_tester_testkit::child::entry(&report["suites"], "suite", "plain");
    let sample = &plain["cases"][0]["samples"][0];
    assert_eq!(sample["output"], "Hello!", "{sample:#}");
    assert!(sample.get("steps").is_none(), "{sample:#}");
    let on_page = prompt_tester_testkit::child::entry(&data["records"], "name", "plain::hello");
    assert!(on_page["samples"][0].get("steps").is_none(), "{on_page:#}");
}
