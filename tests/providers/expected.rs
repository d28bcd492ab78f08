//! What each recorded real provider response must parse to (`../shared/fixtures/provider-recordings/`).

use std::collections::BTreeMap;

/// What a recorded success must parse to. `model` is the id the call was priced under (the
/// request's model, or the URL's for Gemini).
#[derive(Default)]
pub(crate) struct Expect {
    pub(crate) model: &'static str,
    pub(crate) text: &'static str,
    pub(crate) text_is_prefix: bool,
    pub(crate) tokens: (u64, u64, u64, u64, u64),
    pub(crate) stop: Option<&'static str>,
    pub(crate) safety: bool,
    pub(crate) model_used: Option<&'static str>,
    pub(crate) model_version: Option<&'static str>,
    pub(crate) request_id: Option<&'static str>,
    pub(crate) tools: &'static [(&'static str, &'static str, &'static str)],
    pub(crate) cost: Option<f64>,
}

/// What a recorded error must read as: type, message start, request id.
pub(crate) struct ExpectError(
    pub(crate) &'static str,
    pub(crate) &'static str,
    pub(crate) Option<&'static str>,
);

pub(crate) fn expected_successes() -> BTreeMap<&'static str, Expect> {
    let e = |model| Expect {
        model,
        ..Expect::default()
    };
    BTreeMap::from([
        // tokens: (input, output, cached input, cache creation, thoughts); input includes the cache.
        (
            "anthropic/stop_sequence_sonnet45",
            Expect {
                text: "The beautiful city of ",
                tokens: (32, 5, 0, 0, 0),
                stop: Some("stop_sequence"),
                model_used: Some("claude-sonnet-4-5-20250929"),
                request_id: Some("msg_01376yZQxHcw9pER2Ab2SvQb"),
                cost: Some((32.0 * 3.0 + 5.0 * 15.0) / 1e6),
                ..e("claude-sonnet-4-5")
            },
        ),
        (
            "anthropic/text_cache_creation_5m_opus48",
            Expect {
                text: "OK",
                tokens: (2 + 1590, 4, 0, 1590, 0),
                stop: Some("end_turn"),
                model_used: Some("claude-opus-4-8"),
                request_id: Some("msg_011CdZ7H96cYjLa6r1Kjqx2H"),
                // 2 uncached at $5, 1590 written at $6.25, 4 out at $25.
                cost: Some((2.0 * 5.0 + 1590.0 * 6.25 + 4.0 * 25.0) / 1e6),
                ..e("claude-opus-4-8")
            },
        ),
        (
            "anthropic/text_cache_read_opus48",
            Expect {
                text: "OK",
                tokens: (2 + 1590, 4, 1590, 0, 0),
                stop: Some("end_turn"),
                model_used: Some("claude-opus-4-8"),
                request_id: Some("msg_011CdZ7HELdJntMqdQ6ERgau"),
                cost: Some((2.0 * 5.0 + 1590.0 * 0.5 + 4.0 * 25.0) / 1e6),
                ..e("claude-opus-4-8")
            },
        ),
        (
            "anthropic/text_cache_read_sonnet45",
            Expect {
                text: "# What is Python?\n\nPython is a high-level",
                text_is_prefix: true,
                tokens: (3 + 1111, 406, 1111, 0, 0),
                stop: Some("end_turn"),
                model_used: Some("claude-sonnet-4-5-20250929"),
                request_id: Some("msg_01UUPT9QdZnZSRzcQJkjG25U"),
                // 3 uncached at $3, 1111 read at $0.30, 406 out at $15: $0.0064323.
                cost: Some(0.0064323),
                ..e("claude-sonnet-4-5")
            },
        ),
        (
            "anthropic/text_end_turn_claude3opus",
            Expect {
                text: "The capital of France is Paris.",
                tokens: (20, 10, 0, 0, 0),
                stop: Some("end_turn"),
                model_used: Some("claude-3-opus-20240229"),
                request_id: Some("msg_01Fg1JVgvCYUHWsxrj9GkpEv"),
                cost: Some((20.0 * 15.0 + 10.0 * 75.0) / 1e6),
                ..e("claude-3-opus-latest")
            },
        ),
        (
            "anthropic/tool_result_followup_sonnet45",
            Expect {
                tokens: (497, 56, 0, 0, 0),
                stop: Some("tool_use"),
                model_used: Some("claude-sonnet-4-5-20250929"),
                request_id: Some("msg_01K4Fzcf1bhiyLzHpwLdrefj"),
                tools: &[(
                    "toolu_01LZABsgreMefH2Go8D5PQbW",
                    "final_result",
                    r#"{"city":"Mexico City","country":"Mexico"}"#,
                )],
                cost: Some((497.0 * 3.0 + 56.0 * 15.0) / 1e6),
                ..e("claude-sonnet-4-5")
            },
        ),
        (
            "anthropic/tool_use_sonnet45",
            Expect {
                tokens: (445, 23, 0, 0, 0),
                stop: Some("tool_use"),
                model_used: Some("claude-sonnet-4-5-20250929"),
                request_id: Some("msg_012TXW181edhmR5JCsQRsBKx"),
                tools: &[("toolu_01X9wcHKKAZD9tBC711xipPa", "get_user_country", "{}")],
                cost: Some((445.0 * 3.0 + 23.0 * 15.0) / 1e6),
                ..e("claude-sonnet-4-5")
            },
        ),
        (
            "gemini/cached_content_25flash",
            Expect {
                text: "Paris.",
                // promptTokenCount 3520 includes 3512 cached; output = 2 candidates + 42 thoughts.
                tokens: (3520, 44, 3512, 0, 42),
                stop: Some("STOP"),
                model_used: Some("gemini-2.5-flash"),
                model_version: Some("gemini-2.5-flash"),
                request_id: Some("_VQYaqvRGbW6qtsPg4TDoAg"),
                // 8 uncached at $0.30, 3512 cached at $0.03, 44 out at $2.50: $0.00021776.
                cost: Some(0.00021776),
                ..e("gemini-2.5-flash")
            },
        ),
        (
            "gemini/candidate_blocked_safety_15flash",
            Expect {
                tokens: (14, 0, 0, 0, 0),
                stop: Some("SAFETY"),
                safety: true,
                model_used: Some("gemini-1.5-flash"),
                model_version: Some("gemini-1.5-flash"),
                request_id: Some("5lpeaLOIBf__698Pv8HGgAg"),
                cost: Some(14.0 * 0.075 / 1e6),
                ..e("gemini-1.5-flash")
            },
        ),
        (
            "gemini/json_schema_20flash",
            Expect {
                text: "{\n  \"city\": \"Mexico City\",\n  \"country\": \"Mexico\"\n}",
                tokens: (8, 20, 0, 0, 0),
                stop: Some("STOP"),
                model_used: Some("gemini-2.0-flash"),
                model_version: Some("gemini-2.0-flash"),
                request_id: Some("EfsgaZT5JPbXz7IPqtGJkQ8"),
                cost: Some((8.0 * 0.1 + 20.0 * 0.4) / 1e6),
                ..e("gemini-2.0-flash")
            },
        ),
        (
            "gemini/max_tokens_25flash",
            Expect {
                text: "The capital of France is",
                tokens: (15, 5, 0, 0, 0),
                stop: Some("MAX_TOKENS"),
                model_used: Some("gemini-2.5-flash"),
                model_version: Some("gemini-2.5-flash"),
                request_id: Some("R5MoavWNNp_8qtsP2fWD2A0"),
                cost: Some((15.0 * 0.3 + 5.0 * 2.5) / 1e6),
                ..e("gemini-2.5-flash")
            },
        ),
        (
            "gemini/max_tokens_no_parts_25pro",
            Expect {
                tokens: (15, 2, 0, 0, 2),
                stop: Some("MAX_TOKENS"),
                model_used: Some("gemini-2.5-pro"),
                model_version: Some("gemini-2.5-pro"),
                request_id: Some("fH8oaunbEbr9qtsPjYGX4A0"),
                cost: Some((15.0 * 1.25 + 2.0 * 10.0) / 1e6),
                ..e("gemini-2.5-pro")
            },
        ),
        (
            "gemini/prompt_blocked_model_armor_VERTEX",
            Expect {
                stop: Some("MODEL_ARMOR"),
                safety: true,
                model_used: Some("gemini-2.5-flash"),
                model_version: Some("gemini-2.5-flash"),
                request_id: Some("mSEXaseKG-P51PIPwv66qQs"),
                cost: Some(0.0),
                ..e("gemini-2.5-flash")
            },
        ),
        (
            "gemini/text_thoughts_25flash",
            Expect {
                text: "Hello! How can I help you today?",
                tokens: (9, 9 + 34, 0, 0, 34),
                stop: Some("STOP"),
                model_used: Some("gemini-2.5-flash"),
                model_version: Some("gemini-2.5-flash"),
                request_id: Some("bzlXaa_EE_aHqtsPi_zw8Ao"),
                // Thoughts bill at the output rate: 9 in at $0.30, 43 out at $2.50.
                cost: Some((9.0 * 0.3 + 43.0 * 2.5) / 1e6),
                ..e("gemini-2.5-flash")
            },
        ),
        (
            "gemini/thinking_25pro",
            Expect {
                text: "The capital of France is **Paris**.",
                tokens: (15, 8 + 275, 0, 0, 275),
                stop: Some("STOP"),
                model_used: Some("gemini-2.5-pro"),
                model_version: Some("models/gemini-2.5-pro"),
                request_id: Some("1FpeaOWpAs-lkdUP_4eY2QY"),
                cost: Some((15.0 * 1.25 + 283.0 * 10.0) / 1e6),
                ..e("gemini-2.5-pro-preview-03-25")
            },
        ),
        (
            "openai/cached_tokens_gpt56",
            Expect {
                text: "OK",
                tokens: (4020, 4, 4012, 0, 0),
                stop: Some("stop"),
                model_used: Some("gpt-5.6-sol"),
                request_id: Some("chatcmpl-E1mBQt42vYTsKNd5wnyJlT0db7v9S"),
                // 8 uncached at $5, 4012 cached at $0.50, 4 out at $30.
                cost: Some((8.0 * 5.0 + 4012.0 * 0.5 + 4.0 * 30.0) / 1e6),
                ..e("gpt-5.6-sol")
            },
        ),
        (
            "openai/compat_length_hf_together_r1",
            Expect {
                text: "<think>\nHmm, the user just said \"hello\".",
                text_is_prefix: true,
                tokens: (4, 100, 0, 0, 0),
                stop: Some("length"),
                model_used: Some("deepseek-ai/DeepSeek-R1"),
                request_id: Some("oXUyQTv-28Eivz-9ce5a0296c7de93c"),
                ..e("deepseek-ai/DeepSeek-R1")
            },
        ),
        (
            "openai/compat_ollama_local_qwen3",
            Expect {
                text: "{ \"city\": \"Paris\", \"country\": \"France\" }",
                tokens: (136, 15, 0, 0, 0),
                stop: Some("stop"),
                model_used: Some("qwen3:0.6b"),
                model_version: Some("fp_ollama"),
                request_id: Some("chatcmpl-150"),
                ..e("qwen3:0.6b")
            },
        ),
        (
            "openai/json_schema_4o",
            Expect {
                text: "{\"city\":\"Mexico City\",\"country\":\"Mexico\"}",
                tokens: (92, 15, 0, 0, 0),
                stop: Some("stop"),
                model_used: Some("gpt-4o-2024-08-06"),
                model_version: Some("fp_f5bdcc3276"),
                request_id: Some("chatcmpl-BSXjzYGu67dhTy5r8KmjJvQ4HhDVO"),
                cost: Some((92.0 * 2.5 + 15.0 * 10.0) / 1e6),
                ..e("gpt-4o")
            },
        ),
        (
            "openai/reasoning_tokens_o3_mini",
            Expect {
                text: "Hello there! How can I help you today?",
                tokens: (7, 87, 0, 0, 64),
                stop: Some("stop"),
                model_used: Some("o3-mini-2025-01-31"),
                model_version: Some("fp_e89900d9f6"),
                request_id: Some("chatcmpl-Dr3KNfXKBS1oDOrhqYDuLYdjX9PM4"),
                cost: Some((7.0 * 1.1 + 87.0 * 4.4) / 1e6),
                ..e("o3-mini")
            },
        ),
        (
            "openai/text_4o_mini",
            Expect {
                text: "Hello! How can I assist you today?",
                tokens: (8, 9, 0, 0, 0),
                stop: Some("stop"),
                model_used: Some("gpt-4o-mini-2024-07-18"),
                model_version: Some("fp_4f5f0b399a"),
                request_id: Some("chatcmpl-Dr3KONlJHqM2OKkn7IPxwgC3ZIEZw"),
                cost: Some((8.0 * 0.15 + 9.0 * 0.6) / 1e6),
                ..e("gpt-4o-mini")
            },
        ),
        (
            "openai/tool_calls_4o",
            Expect {
                tokens: (71, 12, 0, 0, 0),
                stop: Some("tool_calls"),
                model_used: Some("gpt-4o-2024-08-06"),
                model_version: Some("fp_f5bdcc3276"),
                request_id: Some("chatcmpl-BSXjyBwGuZrtuuSzNCeaWMpGv2MZ3"),
                tools: &[("call_PkRGedQNRFUzJp2R7dO7avWR", "get_user_country", "{}")],
                cost: Some((71.0 * 2.5 + 12.0 * 10.0) / 1e6),
                ..e("gpt-4o")
            },
        ),
    ])
}

pub(crate) fn expected_errors() -> BTreeMap<&'static str, ExpectError> {
    BTreeMap::from([
        (
            "anthropic/error_400_invalid_request",
            ExpectError(
                "invalid_request_error",
                "This model does not support effort level 'xhigh'.",
                Some("req_011Ca7jT9AHpgXgdv8igm4z9"),
            ),
        ),
        (
            "anthropic/error_404_not_found",
            ExpectError(
                "not_found_error",
                "model: claude-sonet-4-5",
                Some("req_011CdufXo8Y2LVfY2veyuQWG"),
            ),
        ),
        (
            "gemini/error_404_not_found",
            ExpectError(
                "NOT_FOUND",
                "models/gemini-3.6-flahs is not found for API version v1beta",
                None,
            ),
        ),
        (
            "openai/error_400_unsupported_value",
            ExpectError(
                "invalid_request_error",
                "Unsupported value: 'messages[0].role' does not support 'system'",
                None,
            ),
        ),
        (
            "openai/error_404_model_not_found",
            ExpectError(
                "invalid_request_error",
                "The model `gpt-5.2-proo` does not exist",
                None,
            ),
        ),
    ])
}
