//! Conformance with real recordings: every recorded response parses to the expected fields, with the
//! expected cost, and the request builders produce the recorded requests.

use prompt_tester::completion::{CompletionRequest, CompletionResult, ResponseSchema, ToolSpec};
use prompt_tester::config::{EndpointConfig, WireFormat};
use prompt_tester::testing::pricing;
use prompt_tester::testing::wire as provider;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::expected::{Expect, ExpectError, Expected, expected};
use super::*;

fn recordings_dir(test: &str) -> Option<PathBuf> {
    prereq::shared_fixtures(test, "provider-recordings")
}

/// `case -> (HTTP status, URL)` from a folder's README.txt.
fn statuses(readme: &str) -> BTreeMap<String, (u16, String)> {
    readme
        .lines()
        .filter_map(|line| {
            let (case, rest) = line.split_once(": HTTP ")?;
            let mut words = rest.split_whitespace();
            let status = words.next()?.parse().ok()?;
            let url = words.nth(1)?.to_string();
            Some((case.trim().to_string(), (status, url)))
        })
        .collect()
}

fn check_success(case: &str, result: &CompletionResult, expect: &Expect) {
    if expect.text_is_prefix {
        assert!(
            result.text.starts_with(&expect.text),
            "{case}: text {:?}",
            result.text
        );
    } else {
        assert_eq!(result.text, expect.text, "{case}: text");
    }
    let tokens = (
        result.input_tokens,
        result.output_tokens,
        result.cached_input_tokens,
        result.cache_creation_tokens,
        result.thoughts_tokens,
    );
    assert_eq!(
        tokens, expect.tokens,
        "{case}: (input, output, cached, cache creation, thoughts)"
    );
    assert_eq!(
        result.safety_filtered, expect.safety,
        "{case}: safety_filtered"
    );
    for (field, got, want) in [
        ("stop reason", &result.stop_reason, &expect.stop),
        ("model_used", &result.model_used, &expect.model_used),
        (
            "model_version",
            &result.model_version,
            &expect.model_version,
        ),
        ("request_id", &result.request_id, &expect.request_id),
    ] {
        assert_eq!(got, want, "{case}: {field}");
    }
    let tools: Vec<(String, String, Value)> = result
        .tool_calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
        .collect();
    let expected_tools: Vec<(String, String, Value)> = expect
        .tools
        .iter()
        .map(|(id, name, args)| {
            (
                id.to_string(),
                name.to_string(),
                serde_json::from_str(args).unwrap(),
            )
        })
        .collect();
    assert_eq!(tools, expected_tools, "{case}: tool calls");
    assert_eq!(
        result.cost_usd, None,
        "{case}: the client leaves pricing to the engine"
    );
    let cost = pricing::cost_of(&expect.model, result, &BTreeMap::new());
    match (cost, expect.cost) {
        (Some(got), Some(want)) => {
            assert!((got - want).abs() < 1e-12, "{case}: cost {got} != {want}")
        }
        (got, want) => assert_eq!(got, want, "{case}: cost"),
    }
}

#[test]
fn every_recording_parses_to_the_expected_fields() {
    let Some(root) = recordings_dir("every_recording_parses_to_the_expected_fields") else {
        return;
    };
    let Expected {
        success: successes,
        error: errors,
    } = expected();
    let mut seen = Vec::new();
    for (folder, wire) in [
        ("anthropic", WireFormat::Anthropic),
        ("gemini", WireFormat::Google),
        ("openai", WireFormat::OpenAi),
    ] {
        let dir = root.join(folder);
        let readme = std::fs::read_to_string(dir.join("README.txt")).unwrap();
        let statuses = statuses(&readme);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".response.json"))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no recordings in {}", dir.display());
        for file in files {
            let name = file
                .file_name()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches(".response.json")
                .to_string();
            let case = format!("{folder}/{name}");
            let (status, _) = statuses
                .get(&name)
                .unwrap_or_else(|| panic!("{case}: no status in README.txt"));
            let body = std::fs::read(&file).unwrap();
            if (200..300).contains(status) {
                let result = provider::parse_response(wire, &body)
                    .unwrap_or_else(|e| panic!("{case} does not parse: {e}"));
                let expect = successes
                    .get(case.as_str())
                    .unwrap_or_else(|| panic!("{case}: a new recording needs expectations here"));
                check_success(&case, &result, expect);
            } else {
                let error = provider::parse_error_body(wire, &body);
                let ExpectError {
                    kind,
                    message,
                    request_id,
                } = errors.get(case.as_str()).unwrap_or_else(|| {
                    panic!("{case}: a new error recording needs expectations here")
                });
                assert_eq!(error.error_type.as_deref(), Some(kind.as_str()), "{case}");
                assert!(
                    error
                        .message
                        .as_deref()
                        .unwrap_or("")
                        .starts_with(message.as_str()),
                    "{case}: {:?}",
                    error.message
                );
                assert_eq!(error.request_id, *request_id, "{case}");
                // An error body is not an answer.
                assert!(
                    provider::parse_response(wire, &body).is_err(),
                    "{case} parsed as an answer"
                );
            }
            seen.push(case);
        }
    }
    let expected: Vec<&str> = successes
        .keys()
        .chain(errors.keys())
        .map(String::as_str)
        .collect();
    let missing: Vec<&&str> = expected
        .iter()
        .filter(|c| !seen.iter().any(|s| s == *c))
        .collect();
    assert!(
        missing.is_empty(),
        "expected recordings not found: {missing:?}"
    );
    println!("checked {} recordings", seen.len());
}

fn recorded_request(root: &Path, case: &str) -> Value {
    let text = std::fs::read_to_string(root.join(format!("{case}.request.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn without(mut value: Value, keys: &[&str]) -> Value {
    for key in keys {
        value.as_object_mut().unwrap().remove(*key);
    }
    value
}

fn endpoint(name: &str, wire: WireFormat, base_url: &str) -> EndpointConfig {
    EndpointConfig {
        name: name.into(),
        wire,
        base_url: base_url.into(),
        api_key_env: vec![],
        max_in_flight: 1,
    }
}

#[test]
fn request_builders_match_recorded_requests() {
    let Some(root) = recordings_dir("request_builders_match_recorded_requests") else {
        return;
    };
    let anthropic = endpoint(
        "anthropic",
        WireFormat::Anthropic,
        "https://api.anthropic.com",
    );
    let google = endpoint(
        "google",
        WireFormat::Google,
        "https://generativelanguage.googleapis.com",
    );
    let openai = endpoint("openai", WireFormat::OpenAi, "https://api.openai.com/v1");
    let compat = endpoint(
        "together",
        WireFormat::OpenAi,
        "https://router.huggingface.co/together/v1",
    );

    // Anthropic: a system prompt and one question. The recorder's `stream: false` is the default.
    let mut request = CompletionRequest::new(
        "claude-3-opus-latest",
        "What is the capital of France?",
        4096,
    );
    request.system = Some("You are a helpful assistant.\n\n".into());
    let recorded = recorded_request(&root, "anthropic/text_end_turn_claude3opus");
    assert_eq!(
        provider::request_body(&anthropic, &request),
        without(recorded, &["stream"])
    );

    // Anthropic: a tool call and its result sent back (`tool_choice: any` has no equivalent here).
    let tools = vec![
        ToolSpec {
            name: "get_user_country".into(),
            description: "".into(),
            input_schema: json!({"additionalProperties": false, "properties": {}, "type": "object"}),
        },
        ToolSpec {
            name: "final_result".into(),
            description: "The final response which ends this conversation".into(),
            input_schema: json!({
                "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
                "required": ["city", "country"], "title": "CityLocation", "type": "object"
            }),
        },
    ];
    let mut request = CompletionRequest::new(
        "claude-sonnet-4-5",
        "What is the largest city in the user country?",
        4096,
    );
    request.tools = tools.clone();
    answered_call(
        &mut request,
        "toolu_01X9wcHKKAZD9tBC711xipPa",
        "get_user_country",
        "Mexico",
    );
    let recorded = recorded_request(&root, "anthropic/tool_result_followup_sonnet45");
    assert_eq!(
        provider::request_body(&anthropic, &request),
        without(recorded, &["stream", "tool_choice"])
    );

    // Gemini: system instruction and a token limit (the recorder also sent responseModalities,
    // thinkingConfig and a `role` in systemInstruction, which the API does not need).
    let mut request =
        CompletionRequest::new("gemini-2.5-flash", "What is the capital of France?", 5);
    request.system = Some("You are a helpful chatbot.".into());
    let body = provider::request_body(&google, &request);
    let recorded = recorded_request(&root, "gemini/max_tokens_25flash");
    assert_eq!(body["contents"], recorded["contents"]);
    assert_eq!(
        body["systemInstruction"]["parts"],
        recorded["systemInstruction"]["parts"]
    );
    assert_eq!(
        body["generationConfig"]["maxOutputTokens"],
        recorded["generationConfig"]["maxOutputTokens"]
    );

    // Gemini structured output: the recorder used the newer `responseJsonSchema`; this schema is
    // inside the `responseSchema` subset, so it goes over unchanged.
    let recorded = recorded_request(&root, "gemini/json_schema_20flash");
    let mut request = CompletionRequest::new(
        "gemini-2.0-flash",
        "What is the largest city in Mexico?",
        100,
    );
    request.response_schema = Some(ResponseSchema {
        name: "CityLocation".into(),
        schema: recorded["generationConfig"]["responseJsonSchema"].clone(),
    });
    let body = provider::request_body(&google, &request);
    assert_eq!(body["contents"], recorded["contents"]);
    assert_eq!(
        body["generationConfig"]["responseMimeType"],
        "application/json"
    );
    // We add `propertyOrdering` (the declared order; Gemini otherwise sorts properties), which the
    // recorded client did not send; the rest must match.
    let mut schema = body["generationConfig"]["responseSchema"].clone();
    assert_eq!(schema["propertyOrdering"], json!(["city", "country"]));
    schema.as_object_mut().unwrap().remove("propertyOrdering");
    assert_eq!(schema, recorded["generationConfig"]["responseJsonSchema"]);

    // OpenAI's own API: `max_completion_tokens`.
    let recorded = recorded_request(&root, "openai/text_4o_mini");
    assert_eq!(
        provider::request_body(
            &openai,
            &CompletionRequest::new("gpt-4o-mini", "hello", 100)
        ),
        without(recorded, &["stream"])
    );
    // A compatible host: `max_tokens` (the recorder's empty `tools` list is left out).
    let recorded = recorded_request(&root, "openai/compat_length_hf_together_r1");
    assert_eq!(
        provider::request_body(
            &compat,
            &CompletionRequest::new("deepseek-ai/DeepSeek-R1", "hello", 100)
        ),
        without(recorded, &["stream", "tools"])
    );
    // System message first.
    let recorded = recorded_request(&root, "openai/error_400_unsupported_value");
    let mut request = CompletionRequest::new("o1-mini", "Hello", 100);
    request.system = Some("You are a helpful assistant.".into());
    assert_eq!(
        provider::request_body(&openai, &request)["messages"],
        recorded["messages"]
    );

    // A tool call, its result and structured output (sent strict here, as the judge wants).
    let recorded = recorded_request(&root, "openai/json_schema_4o");
    let mut request = CompletionRequest::new(
        "gpt-4o",
        "What is the largest city in the user country?",
        100,
    );
    request.tools = tools[..1].to_vec();
    request.response_schema = Some(ResponseSchema {
        name: "result".into(),
        schema: recorded["response_format"]["json_schema"]["schema"].clone(),
    });
    answered_call(
        &mut request,
        "call_PkRGedQNRFUzJp2R7dO7avWR",
        "get_user_country",
        "Mexico",
    );
    let body = provider::request_body(&openai, &request);
    assert_eq!(body["messages"], recorded["messages"]);
    assert_eq!(body["tools"], recorded["tools"]);
    assert_eq!(
        body["response_format"]["type"],
        recorded["response_format"]["type"]
    );
    assert_eq!(
        body["response_format"]["json_schema"]["name"],
        recorded["response_format"]["json_schema"]["name"]
    );
    assert_eq!(
        body["response_format"]["json_schema"]["schema"],
        recorded["response_format"]["json_schema"]["schema"]
    );
}

/// Appends to `request` the model's call `id` of tool `name` (no arguments) and its result `content`.
fn answered_call(request: &mut CompletionRequest, id: &str, name: &str, content: &str) {
    request.push_tool_round((id, name), json!({}), (content, false));
}
