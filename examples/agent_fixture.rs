//! A prompt-test binary of agent tests for `tests/tools.rs`: it runs them through the real harness
//! against a fake provider (named `fake_anthropic`, `fake_gemini` and `fake_openai` in the
//! `prompt-tester.toml` the test writes), records cassettes, and replays them with the provider gone.
//!
//! The fake answers a request that carries a tool result with a final text, and any other request
//! with a call of `get_weather` for Paris; a prompt asking to "loop" always gets another tool call.
//! With `FIXTURE_EXPECT_REPLAYED=1` the bodies also check that every turn came from the cassette.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, Ordering};

use prompt_tester::prelude::*;

static WEATHER_CALLS: AtomicU32 = AtomicU32::new(0);

fn weather_agent() -> Toolbox {
    Toolbox::new().tool(Tool::new(
        "get_weather",
        "The current weather in a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        |args| async move {
            WEATHER_CALLS.fetch_add(1, Ordering::SeqCst);
            let city = args["city"].as_str().ok_or("`city` must be a string")?;
            Ok::<_, String>(format!("Sunny, 21 C in {city}"))
        },
    ))
}

/// What every agent test of this fixture checks on its run.
fn check(run: &PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(
        run.output == "It is sunny in Paris.",
        "output: {:?}",
        run.output
    );
    run.expect_tool_call("get_weather", json!({"city": "Paris"}))?;
    run.expect_no_tool_call("delete_everything")?;
    anyhow::ensure!(run.tool_calls.len() == 1, "calls: {:?}", run.tool_calls);
    // The fake's usage: 11 in / 5 out for the tool call, 23 in / 7 out for the answer.
    anyhow::ensure!(
        (run.input_tokens, run.output_tokens) == (34, 12),
        "tokens: {} in, {} out",
        run.input_tokens,
        run.output_tokens
    );
    // user prompt, assistant tool call, tool result, final answer
    anyhow::ensure!(
        run.transcript.len() == 4,
        "transcript: {:?}",
        run.transcript
    );
    let result = serde_json::to_value(&run.transcript[2])?;
    anyhow::ensure!(
        result["content"][0]["content"] == "Sunny, 21 C in Paris",
        "tool result: {result}"
    );
    if std::env::var("FIXTURE_EXPECT_REPLAYED").as_deref() == Ok("1") {
        anyhow::ensure!(
            run.replayed,
            "expected every turn replayed from the cassette"
        );
    }
    anyhow::ensure!(
        WEATHER_CALLS.load(Ordering::SeqCst) >= 1,
        "the handler never ran"
    );
    Ok(())
}

#[prompt_test(target_prompt = "What is the weather in Paris?", subject_provider = "fake_anthropic", subject_model = "claude-haiku-4-5", agent = weather_agent)]
fn agent_anthropic(run: PromptRun) -> anyhow::Result<()> {
    check(&run)
}

#[prompt_test(target_prompt = "What is the weather in Paris?", subject_provider = "fake_gemini", subject_model = "gemini-2.5-flash", agent = weather_agent)]
fn agent_gemini(run: PromptRun) -> anyhow::Result<()> {
    check(&run)
}

#[prompt_test(target_prompt = "What is the weather in Paris?", subject_provider = "fake_openai", subject_model = "gpt-4o-mini", agent = weather_agent(), runs = 2)]
fn agent_openai(run: PromptRun) -> anyhow::Result<()> {
    check(&run)
}

#[prompt_test(target_prompt = "Please loop: what is the weather in Paris?", subject_provider = "fake_openai", subject_model = "gpt-4o-mini", agent = weather_agent().max_turns(3))]
fn agent_loops(_run: PromptRun) {}

// Declared tools without handlers: one call, the tool calls are there to assert on.
#[prompt_test(
    target_prompt = "What is the weather in Paris?",
    subject_provider = "fake_openai",
    subject_model = "gpt-4o-mini",
    tools = vec![ToolSpec::new("get_weather", "The current weather in a city", json!({"type": "object"}))],
)]
fn declared_only(run: PromptRun) -> anyhow::Result<()> {
    run.expect_tool_call("get_weather", json!({"city": "Paris"}))?;
    anyhow::ensure!(
        run.output.is_empty() && run.transcript.len() == 2,
        "{:?}",
        run.transcript
    );
    Ok(())
}

fn main() -> ExitCode {
    prompt_tester::main()
}
