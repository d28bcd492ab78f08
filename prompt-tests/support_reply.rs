//! Testing the application's own code: a support reply built from a template and the facts the
//! application fetches about an order, sent with the application's own client (async-openai). The
//! test calls that code through `run_fn`; its model call goes to `sample.base_url(...)`, the harness's
//! recording endpoint, so it is recorded once (here from the local model) and replayed offline in CI,
//! like the harness's own calls (the guide's chapter "Testing your application's own calls").

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionRequestSystemMessageArgs, ChatCompletionRequestUserMessageArgs,
    CreateChatCompletionRequestArgs,
};
use prompt_tester::prelude::*;

/// The application's code, as it would sit in its own `src/`: nothing here knows about tests.
pub mod app {
    use super::*;

    /// What the application knows about an order (from its database; a table here).
    pub struct Order {
        pub id: &'static str,
        pub item: &'static str,
        pub shipped: &'static str,
        pub carrier: &'static str,
        pub delivery: &'static str,
    }

    const ORDERS: [Order; 2] = [
        Order {
            id: "A-1042",
            item: "a green two-person tent",
            shipped: "3 June",
            carrier: "DHL, tracking number 7781 2290",
            delivery: "6 June",
        },
        Order {
            id: "B-2210",
            item: "a pair of hiking boots",
            shipped: "10 June",
            carrier: "UPS, tracking number 1Z 999 AA1",
            delivery: "14 June",
        },
    ];

    /// The facts about order `id`, one per line, or `None` for an unknown order.
    pub fn fetch_facts(id: &str) -> Option<String> {
        let order = ORDERS.iter().find(|o| o.id == id)?;
        Some(format!(
            "- Order {}: {}.\n- Status: shipped on {}.\n- Carrier: {}.\n- Expected delivery: {}.",
            order.id, order.item, order.shipped, order.carrier, order.delivery
        ))
    }

    /// The system prompt: the template with the order's facts.
    pub fn system_prompt(facts: &str) -> String {
        format!(
            "You are the support assistant of Acme Outdoor. Answer the customer in one or two \
             sentences, using only these facts about their order:\n{facts}"
        )
    }

    /// The reply to `question` about order `order_id`, from `model` at `client`, and the tokens it
    /// reported (input, output).
    pub async fn support_reply(
        client: &Client<OpenAIConfig>,
        model: &str,
        order_id: &str,
        question: &str,
        max_tokens: u32,
    ) -> anyhow::Result<(String, u64, u64)> {
        let facts = fetch_facts(order_id).ok_or_else(|| anyhow::anyhow!("no order {order_id}"))?;
        let request = CreateChatCompletionRequestArgs::default()
            .model(model)
            .temperature(0.0)
            .max_completion_tokens(max_tokens)
            .messages([
                ChatCompletionRequestSystemMessageArgs::default()
                    .content(system_prompt(&facts))
                    .build()?
                    .into(),
                ChatCompletionRequestUserMessageArgs::default()
                    .content(question)
                    .build()?
                    .into(),
            ])
            .build()?;
        let response = client.chat().create(request).await?;
        let text = response
            .choices
            .first()
            .and_then(|c| c.message.content.clone())
            .unwrap_or_default();
        let (input, output) = response.usage.map_or((0, 0), |u| {
            (u64::from(u.prompt_tokens), u64::from(u.completion_tokens))
        });
        Ok((text, input, output))
    }
}

/// The `run_fn`: the application's client pointed at the sample's recording endpoint (provider
/// `local`, this crate's OpenAI-compatible server); the question is the test's prompt, the order its
/// `order` input.
async fn reply(sample: SampleContext) -> anyhow::Result<CompletionResult> {
    // The local server needs no key (a vendor's would come from `OPENAI_API_KEY`, async-openai's default).
    let client = Client::with_config(
        OpenAIConfig::new()
            .with_api_base(sample.base_url("local")?)
            .with_api_key(""),
    );
    let order = sample
        .vars()
        .get("order")
        .ok_or_else(|| anyhow::anyhow!("the test names no order"))?;
    let (text, input, output) = app::support_reply(
        &client,
        sample.model(),
        order,
        sample.prompt(),
        sample.max_tokens(),
    )
    .await?;
    // The endpoint counts the tokens it saw; these are what the client read, not added again.
    Ok(CompletionResult::new(text, input, output))
}

/// The fetched delivery date reaches the reply. That is what this 135M-parameter model does with
/// these facts; its recorded reply, "The tent arrived at 6 June at 12:30 PM.", also invents an hour
/// and says "arrived": a stronger check (a judge, or "no fact not in the list") would fail it.
#[prompt_test(
    target_prompt = "When will my tent arrive? (order {order})",
    target_prompt_vars(order = "A-1042"),
    runs = 3,
    max_tokens = 60,
    run_fn = crate::support_reply::reply
)]
fn reply_gives_the_delivery_date(run: PromptRun) {
    assert!(
        run.output.contains("6 June"),
        "no delivery date in {:?}",
        run.output
    );
}
