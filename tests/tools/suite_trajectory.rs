//! A suite's assertions on the sample's trajectory (`tool_called` with `min`/`max`, `tool_sequence`,
//! `max_model_calls`, `max_repeats`, `judge_trajectory`), run through the harness against the fake
//! provider: each passes on a trajectory that holds it and fails, printing the trajectory, on one that
//! does not; the judge is sent the trajectory.

use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Usage};
use serde_json::json;

use super::harness::{run_agents, scratch};

/// What the fake's model does: searches for Paris twice, then books it, in one answer; the judge says
/// yes (quoting the first search) unless asked whether the agent asked the user first.
fn agent_reply(request: &CapturedRequest) -> Reply {
    let model = request.model().unwrap_or_default();
    if request.wants_structured() {
        let asked_first = request
            .last_user_text()
            .is_some_and(|t| t.contains("ask the user"));
        let verdict = json!({
            "question_type": "multi_part",
            "reasoning": if asked_first { "It never asked the user." } else { "It searched, then booked." },
            "snippet": "requested search({\"q\":\"Paris\"})",
            "answer": if asked_first { "no" } else { "yes" },
        });
        return Reply::structured(request, &verdict);
    }
    let call = |n: u32, name: &str, arguments: serde_json::Value| {
        json!({
            "id": format!("call_{n}"),
            "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}
        })
    };
    let usage = Usage::new(11, 5);
    Reply::json(
        200,
        &json!({
            "id": "chatcmpl-trip",
            "object": "chat.completion",
            "created": 1_700_000_000u64,
            "model": model,
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [
                        call(1, "search", json!({"q": "Paris"})),
                        call(2, "search", json!({"q": "Paris"})),
                        call(3, "book", json!({"city": "Paris", "nights": 2})),
                    ]
                },
                "finish_reason": "tool_calls"
            }],
            "usage": {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens
            },
        }),
    )
}

#[test]
fn trajectory_assertions_pass_and_fail_printing_the_trajectory() {
    let fake = FakeProvider::builder().respond_with(agent_reply).start();
    let scratch = scratch("suite-trajectory", &fake);
    let config = std::fs::read_to_string(scratch.0.join("prompt-tester.toml")).unwrap();
    scratch.config(&format!(
        "{config}\n[judge]\nprovider = \"fake_openai\"\nmodel = \"gpt-4o-mini\"\n"
    ));
    let suites = scratch.0.join("prompt-tests");
    std::fs::create_dir_all(&suites).unwrap();
    std::fs::write(
        suites.join("trip.evals.toml"),
        r#"
prompt = "Book two nights in {city}."
provider = "fake_openai"
model = "gpt-4o-mini"
tools = [{ name = "search" }, { name = "book" }]

[[cases]]
name = "holds"
inputs = { city = "Paris" }
assert = [
  { tool_called = { name = "search", arguments = { q = "Paris" }, min = 2, max = 2 } },
  { tool_called = { name = "book", max = 1 } },
  { tool_sequence = { tools = ["search", "book"] } },
  { tool_sequence = { tools = ["book", "search", "search"], order = "unordered" } },
  { max_model_calls = 1 },
  { max_repeats = 2 },
  { judge_trajectory = "Did the agent search before booking?" },
]

[[cases]]
name = "broken"
inputs = { city = "Paris" }
assert = [
  { tool_called = { name = "search", max = 1 } },
  { tool_sequence = { tools = ["book", "search"], order = "exact" } },
  { max_repeats = 1 },
]

[[cases]]
name = "judged"
inputs = { city = "Paris" }
assert = [{ judge_trajectory = "Did the agent ask the user for dates first?" }]
"#,
    )
    .unwrap();
    let output = run_agents(
        &scratch,
        &["trip::", "--test-threads", "1"],
        &[("PROMPT_TESTER_CASSETTE", "off")],
    );
    let stdout = output.stdout();
    assert_eq!(output.outcome("trip::holds"), "ok", "{stdout}");
    assert_eq!(output.outcome("trip::broken"), "FAILED", "{stdout}");
    assert_eq!(output.outcome("trip::judged"), "FAILED", "{stdout}");
    let trajectory = "the sample's trajectory:\n  1. fake_openai/gpt-4o-mini requested \
                      search({\"q\":\"Paris\"}), search({\"q\":\"Paris\"}), book({\"city\":\"Paris\",\"nights\":2})";
    for failure in [
        "tool_called: the model requested `search` 2 time(s), expected exactly 1",
        "tool_sequence: expected the tools [book, search] exactly, in this order; the model requested \
         [search, search, book]",
        "max_repeats: the model requested search({\"q\":\"Paris\"}) 2 times in a row, at most 1 allowed: a loop",
    ] {
        let printed = format!("{failure}\n{trajectory}");
        assert!(stdout.contains(&printed), "no {printed:?} in:\n{stdout}");
    }
    assert!(
        stdout.contains(
            "judge_trajectory: expected the judge to confirm \"Did the agent ask the user for dates first?\"; \
             saw \"no\": It never asked the user. (snippet \"requested search({\\\"q\\\":\\\"Paris\\\"})\")"
        ),
        "{stdout}"
    );
    // The judge was asked twice (the broken case fails before it would be), each time about the
    // trajectory: the task, the step, and no final answer.
    let judged: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.wants_structured())
        .map(|r| r.last_user_text().unwrap_or_default())
        .collect();
    assert_eq!(judged.len(), 2, "{judged:#?}");
    for text in &judged {
        prompt_tester_testkit::child::assert_contains(
            text,
            &[
                "Book two nights in Paris.",
                "the agent's TRAJECTORY to judge",
                "STEPS:\n1. fake_openai/gpt-4o-mini requested search({\"q\":\"Paris\"}), search({\"q\":\"Paris\"}), \
                 book({\"city\":\"Paris\",\"nights\":2})\nFINAL ANSWER:\n",
            ],
        );
    }
}
