//! The real local model in a tool loop.

use prompt_tester::completion::CompletionRequest;
use prompt_tester::config::{EndpointConfig, RetryConfig, WireFormat};
use prompt_tester::provider::ProviderClient;
use prompt_tester::{AgentError, Tool, Toolbox};
use std::sync::atomic::{AtomicU32, Ordering};

use super::*;

static LOCAL_TOOL_CALLS: AtomicU32 = AtomicU32::new(0);

/// The real local model (llama-server, OpenAI-compatible) in a tool loop, when
/// `PROMPT_TESTER_LOCAL_BASE_URL` points at it. llama-server accepts the `tools` of the request, but
/// SmolLM2-135M's own chat template leaves them out of the prompt, and even with a tool-aware template
/// the 135M model answers in prose: so the test asserts what holds either way (the request with tools is
/// accepted, a final answer arrives within the turn limit, every call it made was run).
#[tokio::test]
async fn the_local_model_runs_a_tool_loop_when_its_server_handles_tools() {
    let Some(base_url) =
        prereq::local_base_url("the_local_model_runs_a_tool_loop_when_its_server_handles_tools")
    else {
        return;
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let endpoint = EndpointConfig {
        name: "local".into(),
        wire: WireFormat::OpenAi,
        base_url,
        api_key_env: Vec::new(),
        max_in_flight: 2,
    };
    let client = ProviderClient::with_api_key(&endpoint, &RetryConfig::default(), None);
    let tool = Tool::new(
        "get_weather",
        "Get the current weather in a city",
        weather_schema(),
        |args| async move {
            LOCAL_TOOL_CALLS.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(format!(
                "Sunny, 21 C in {}",
                args["city"].as_str().unwrap_or("that city")
            ))
        },
    );
    let mut request = CompletionRequest::new(
        "SmolLM2-135M-Instruct",
        "What is the weather in Paris? Use the get_weather tool.",
        128,
    );
    request.temperature = Some(0.0);
    match Toolbox::new()
        .tool(tool)
        .max_turns(4)
        .run(&client, request)
        .await
    {
        Ok(outcome) => {
            eprintln!(
                "local model: {} turn(s), calls {:?}, answer {:?}",
                outcome.turns, outcome.result.tool_calls, outcome.result.text
            );
            assert!(outcome.turns >= 1 && outcome.turns <= 4);
            assert_eq!(
                LOCAL_TOOL_CALLS.load(Ordering::SeqCst) as usize,
                outcome.result.tool_calls.len()
            );
            assert!(outcome.result.input_tokens > 0);
        }
        // The tiny model may keep calling the tool; the loop must then stop at the limit.
        Err(AgentError::MaxTurns { max_turns, .. }) => assert_eq!(max_turns, 4),
        Err(other) => panic!("the local model's tool loop failed: {other}"),
    }
}
