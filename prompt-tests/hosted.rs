//! Examples for hosted models (tools, an agent loop, a capable model), marked `live_only`. None has
//! been run here: no provider is reachable from this repository's machines, so they have no cassette
//! and their assertions are what these models are expected to do, not what a recording showed. A
//! replay or CI run does not pass them: libtest counts them ignored and the summary names them under
//! "live only, not run". Run live without the provider's key, each fails naming the variable to set.
//! Run them live, or record them, with a key:
//!
//! ```sh
//! ANTHROPIC_API_KEY=... PROMPT_TESTER_CASSETTE=off cargo test --test prompts -- hosted::haiku_summary
//! ANTHROPIC_API_KEY=... PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- hosted::haiku_summary
//! ```

use prompt_tester::prelude::*;

#[prompt_test(
    target_prompt = "Summarise in one sentence: {text}",
    subject_model = Model::ClaudeHaiku45,
    subject_provider = Provider::Anthropic,
    target_prompt_vars(text = "Alice leads Project Phoenix. Budget: $2M. Deadline: Q3."),
    max_tokens = 200,
    runs = 3,
    pass_threshold = 0.66,
    live_only,
)]
async fn haiku_summary(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(run.output.contains("Alice"), "no Alice in {:?}", run.output);
    anyhow::ensure!(run.cost_usd.is_some(), "claude-haiku-4-5 has a list price");
    Ok(())
}

#[prompt_test(
    target_prompt = "Reply with a JSON object {\"city\": ...} naming the capital of {country}.",
    subject_model = "gemini-2.5-flash",
    subject_provider = "google",
    target_prompt_vars(country = "Japan"),
    max_tokens = 400,
    live_only
)]
async fn gemini_json_capital(run: PromptRun) -> anyhow::Result<()> {
    let text = run
        .output
        .trim()
        .trim_start_matches("```json")
        .trim_end_matches("```");
    let value: serde_json::Value = serde_json::from_str(text.trim())?;
    anyhow::ensure!(value["city"] == "Tokyo", "got {value}");
    Ok(())
}

fn weather_tools() -> Toolbox {
    Toolbox::new()
        .tool(Tool::new(
            "get_weather",
            "The current weather in a city",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            |args| async move {
                let city = args["city"].as_str().ok_or("`city` must be a string")?;
                Ok::<_, String>(format!("Sunny, 21 °C in {city}"))
            },
        ))
        .max_turns(4)
}

/// An agent loop: the model calls `get_weather`, gets the handler's answer, and answers with it.
#[prompt_test(
    target_prompt = "What is the weather in Paris right now?",
    subject_model = Model::ClaudeHaiku45,
    subject_provider = Provider::Anthropic,
    max_tokens = 300,
    agent = weather_tools,
    live_only,
)]
async fn haiku_uses_the_weather_tool(run: PromptRun) -> anyhow::Result<()> {
    run.expect_tool_call("get_weather", json!({"city": "Paris"}))?;
    anyhow::ensure!(
        run.output.contains("21"),
        "the answer ignores the tool result: {}",
        run.output
    );
    Ok(())
}

/// Only the call is checked: declared tools without handlers make one model call.
#[prompt_test(
    target_prompt = "What is the weather in Paris?",
    subject_model = "gemini-2.5-flash",
    subject_provider = "google",
    max_tokens = 300,
    tools = vec![ToolSpec::new(
        "get_weather",
        "The current weather in a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )],
    live_only,
)]
fn gemini_calls_the_weather_tool(run: PromptRun) -> anyhow::Result<()> {
    run.expect_tool_call("get_weather", json!({"city": "Paris"}))?;
    Ok(())
}
