//! Testing the application as it runs: the support assistant of `support_reply.rs` as an agent that
//! looks the order up and tracks the parcel with its own tools, in its own loop, through its own client
//! (async-openai). The test is an `AppRun`: no prompt, no adapter; it calls the application and asserts
//! on the answer and on what the agent did (the trajectory the recording endpoint observed: each model
//! call, the tools it asked for with their arguments, the results sent back).
//!
//! Recorded from a scripted stand-in, not a model: the local model (SmolLM2-135M under llama-server,
//! with and without `--jinja` and `tool_choice = "required"`) answers in text when offered tools, so it
//! cannot record a tool loop. The stand-in (`tests/fixtures/scripted_support_agent.rs`, provider
//! `scripted` in `prompt-tester.toml`) runs the loop a capable model would; to record again:
//!
//! ```text
//! cargo run -p prompt-tester-tests --example scripted_support_agent   # prints its URL
//! PROMPT_TESTER_SCRIPTED_BASE_URL=<that URL> PROMPT_TESTER_CASSETTE=record \
//!     cargo test --test prompts -- support_agent
//! ```

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, ChatCompletionRequestAssistantMessageArgs,
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessageArgs,
    ChatCompletionRequestToolMessageArgs, ChatCompletionRequestUserMessageArgs, ChatCompletionTool,
    ChatCompletionTools, CreateChatCompletionRequestArgs, FunctionObjectArgs,
};
use prompt_tester::prelude::*;
use serde_json::{Value, json};

/// The application's agent, as it would sit in its own `src/`: nothing here knows about tests.
pub mod app {
    use super::*;
    use crate::support_reply::app::fetch_facts;

    /// Tool rounds before the agent gives up: a model that keeps calling tools never answers.
    const MAX_ROUNDS: usize = 4;

    /// Where a parcel is, by tracking number (the carrier's API; a table here).
    fn track_parcel(tracking_number: &str) -> String {
        match tracking_number {
            "7781 2290" => "In transit: left the DHL hub in Leipzig on 5 June, delivery on 6 June.",
            "1Z 999 AA1" => "Label created: UPS has not received the parcel yet.",
            _ => "Unknown tracking number.",
        }
        .to_string()
    }

    /// Runs tool `name` with `arguments` (the JSON the model wrote), as the application does.
    fn run_tool(name: &str, arguments: &str) -> String {
        let arguments: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let text = |key: &str| arguments[key].as_str().unwrap_or_default().to_string();
        match name {
            "lookup_order" => fetch_facts(&text("order_id"))
                .unwrap_or_else(|| format!("No order {}.", text("order_id"))),
            "track_parcel" => track_parcel(&text("tracking_number")),
            other => format!("No tool {other}."),
        }
    }

    fn tool(name: &str, description: &str, parameter: &str) -> anyhow::Result<ChatCompletionTools> {
        Ok(ChatCompletionTools::Function(ChatCompletionTool {
            function: FunctionObjectArgs::default()
                .name(name)
                .description(description)
                .parameters(json!({
                    "type": "object",
                    "properties": { parameter: { "type": "string" } },
                    "required": [parameter]
                }))
                .build()?,
        }))
    }

    /// The answer to the customer's `question`, from `model` at `client`, after as many tool rounds
    /// as the model asks for (at most `MAX_ROUNDS`).
    pub async fn answer(
        client: &Client<OpenAIConfig>,
        model: &str,
        question: &str,
    ) -> anyhow::Result<String> {
        let tools = vec![
            tool(
                "lookup_order",
                "The facts about an order: item, shipping date, carrier and tracking number",
                "order_id",
            )?,
            tool(
                "track_parcel",
                "Where a parcel is now, by its tracking number",
                "tracking_number",
            )?,
        ];
        let mut messages: Vec<ChatCompletionRequestMessage> = vec![
            ChatCompletionRequestSystemMessageArgs::default()
                .content(
                    "You are the support assistant of Acme Outdoor. Look the order up and track \
                     its parcel before you answer, in one or two sentences.",
                )
                .build()?
                .into(),
            ChatCompletionRequestUserMessageArgs::default()
                .content(question)
                .build()?
                .into(),
        ];
        for _ in 0..MAX_ROUNDS {
            let request = CreateChatCompletionRequestArgs::default()
                .model(model)
                .temperature(0.0)
                .tools(tools.clone())
                .messages(messages.clone())
                .build()?;
            let response = client.chat().create(request).await?;
            let message = response
                .choices
                .into_iter()
                .next()
                .ok_or_else(|| anyhow::anyhow!("the model returned no choice"))?
                .message;
            let calls = message.tool_calls.unwrap_or_default();
            if calls.is_empty() {
                return Ok(message.content.unwrap_or_default());
            }
            messages.push(
                ChatCompletionRequestAssistantMessageArgs::default()
                    .tool_calls(calls.clone())
                    .build()?
                    .into(),
            );
            for call in calls {
                if let ChatCompletionMessageToolCalls::Function(call) = call {
                    let result = run_tool(&call.function.name, &call.function.arguments);
                    messages.push(
                        ChatCompletionRequestToolMessageArgs::default()
                            .tool_call_id(call.id)
                            .content(result)
                            .build()?
                            .into(),
                    );
                }
            }
        }
        anyhow::bail!("no answer after {MAX_ROUNDS} tool rounds")
    }
}

/// The application's client, pointed at the sample's recording endpoint for provider `scripted`.
fn client(run: &AppRun) -> anyhow::Result<Client<OpenAIConfig>> {
    let config = OpenAIConfig::new()
        .with_api_base(run.base_url("scripted")?)
        .with_api_key("");
    Ok(Client::with_config(config))
}

/// The agent looks the order up, then tracks its parcel, with the right arguments, once each, and the
/// answer carries the delivery date the carrier gave.
#[prompt_test]
async fn support_agent_tracks_the_parcel(run: AppRun) -> anyhow::Result<()> {
    let answer = app::answer(
        &client(&run)?,
        "support-agent",
        "Where is my tent? The order is A-1042.",
    )
    .await?;
    run.expect_tool_sequence(&["lookup_order", "track_parcel"], ToolOrder::Exact)?;
    run.expect_tool_call("lookup_order", json!({ "order_id": "A-1042" }))?;
    run.expect_tool_call("track_parcel", json!({ "tracking_number": "7781 2290" }))?;
    run.expect_model_calls(..=3)?;
    run.expect_no_loop(1)?;
    anyhow::ensure!(answer.contains("6 June"), "no delivery date in {answer:?}");
    Ok(())
}

/// Without an order number the agent asks for it and calls no tool.
#[prompt_test]
async fn support_agent_asks_for_the_order(run: AppRun) -> anyhow::Result<()> {
    let answer = app::answer(&client(&run)?, "support-agent", "Where is my tent?").await?;
    run.expect_no_tool_call("lookup_order")?;
    run.expect_model_calls(1..=1)?;
    // It asks: a question about the order, not an answer.
    anyhow::ensure!(
        answer.contains("order") && answer.contains('?'),
        "not a question about the order: {answer:?}"
    );
    Ok(())
}
