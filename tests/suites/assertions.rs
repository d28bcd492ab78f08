//! Every built-in assertion kind passes and fails with its message; custom ones are suggested.

use prompt_tester::{CompletionRequest, CompletionResult};

use super::*;

/// One case of the assertion-kinds suite: its assertions, the canned answer, and what must come out.
pub(crate) struct Kind {
    pub(crate) case: &'static str,
    pub(crate) category: &'static str,
    pub(crate) extra: &'static str,
    pub(crate) assert: &'static str,
    pub(crate) output: &'static str,
    pub(crate) pass: bool,
    pub(crate) says: &'static [&'static str],
}

const fn kind(
    case: &'static str,
    category: &'static str,
    assert: &'static str,
    output: &'static str,
    pass: bool,
    says: &'static [&'static str],
) -> Kind {
    Kind {
        case,
        category,
        extra: "",
        assert,
        output,
        pass,
        says,
    }
}

pub(crate) const KINDS: &[Kind] = &[
    kind(
        "contains_pass",
        "text",
        r#"{ contains = ["Paris", "France"] }"#,
        "Paris is in France.",
        true,
        &[],
    ),
    kind(
        "contains_fail",
        "text",
        r#"{ contains = ["Paris", "Lyon"] }"#,
        "Paris is in France.",
        false,
        &[
            r#"contains: expected the output to contain all of "Paris", "Lyon" (missing "Lyon"); saw "Paris is in France.""#,
        ],
    ),
    kind(
        "not_contains_pass",
        "text",
        r#"{ not_contains = ["banana", "kiwi"] }"#,
        "Paris is in France.",
        true,
        &[],
    ),
    kind(
        "not_contains_fail",
        "text",
        r#"{ not_contains = "France" }"#,
        "Paris is in France.",
        false,
        &[
            r#"not_contains: expected the output not to contain "France"; saw "France" at character 13"#,
        ],
    ),
    kind(
        "icontains_pass",
        "text",
        r#"{ icontains = "PARIS" }"#,
        "paris is lovely",
        true,
        &[],
    ),
    kind(
        "icontains_fail",
        "text",
        r#"{ icontains = "berlin" }"#,
        "paris is lovely",
        false,
        &[r#"icontains: expected the output to contain "berlin" ignoring case (missing "berlin")"#],
    ),
    kind(
        "regex_pass",
        "text",
        r#"{ regex = '^Paris\b' }"#,
        "Intro line\nParis is lovely",
        true,
        &[],
    ),
    kind(
        "regex_fail",
        "text",
        r#"{ regex = '^\d+$' }"#,
        "forty-two",
        false,
        &[r#"regex: expected a match for /^\d+$/; saw "forty-two""#],
    ),
    kind(
        "equals_pass",
        "text",
        r#"{ equals = "42" }"#,
        "  42\n",
        true,
        &[],
    ),
    kind(
        "equals_fail",
        "text",
        r#"{ equals = "41" }"#,
        "42",
        false,
        &[r#"equals: expected exactly "41" (output stripped of surrounding whitespace); saw "42""#],
    ),
    kind(
        "starts_with_pass",
        "text",
        r#"{ starts_with = "Dear" }"#,
        "\n Dear Ann, hello.",
        true,
        &[],
    ),
    kind(
        "starts_with_fail",
        "text",
        r#"{ starts_with = "Dear" }"#,
        "Hi Ann",
        false,
        &[r#"starts_with: expected the output to start with "Dear"; saw "Hi Ann""#],
    ),
    kind(
        "ends_with_pass",
        "text",
        r#"{ ends_with = "Regards." }"#,
        "Thanks. Regards.\n",
        true,
        &[],
    ),
    kind(
        "ends_with_fail",
        "text",
        r#"{ ends_with = "Regards." }"#,
        "Thanks. Bye.",
        false,
        &[r#"ends_with: expected the output to end with "Regards."; saw "Thanks. Bye.""#],
    ),
    kind(
        "is_json_pass",
        "json",
        "{ is_json = true }",
        r#"{"a": 1}"#,
        true,
        &[],
    ),
    kind(
        "is_json_fail",
        "json",
        "{ is_json = true }",
        "```json\n{}\n```",
        false,
        &[
            "is_json: expected the output to be JSON; saw",
            "(the JSON is wrapped in a ``` code fence)",
        ],
    ),
    kind(
        "not_json_pass",
        "json",
        "{ is_json = false }",
        "hello there",
        true,
        &[],
    ),
    kind(
        "not_json_fail",
        "json",
        "{ is_json = false }",
        "[1, 2]",
        false,
        &[r#"is_json: expected output that is not JSON; saw valid JSON: "[1, 2]""#],
    ),
    kind(
        "schema_pass",
        "json",
        r#"{ json_schema = { type = "object", required = ["answer"], properties = { answer = { type = "string" } } } }"#,
        r#"{"answer": "yes"}"#,
        true,
        &[],
    ),
    kind(
        "schema_fail",
        "json",
        r#"{ json_schema = { type = "object", required = ["answer"], properties = { answer = { type = "string" } } } }"#,
        r#"{"answer": 3}"#,
        false,
        &[
            r#"json_schema: expected JSON that follows the schema; saw /answer: 3 is not of type "string""#,
        ],
    ),
    kind(
        "schema_file_pass",
        "json",
        r#"{ json_schema = "schemas/answer.json" }"#,
        r#"{"answer": "yes"}"#,
        true,
        &[],
    ),
    kind(
        "schema_file_fail",
        "json",
        r#"{ json_schema = "schemas/answer.json" }"#,
        "no json",
        false,
        &["json_schema: expected JSON that follows the schema; saw output that is not JSON"],
    ),
    kind(
        "latency_pass",
        "limits",
        "{ max_latency = 2 }",
        "fast",
        true,
        &[],
    ),
    kind(
        "latency_fail",
        "limits",
        "{ max_latency = 0.25 }",
        "slow",
        false,
        &["max_latency: expected at most 0.25s; saw 0.500s (recorded latency)"],
    ),
    // 10 tokens in at $1/M and 20 out at $2/M: $0.00005.
    kind(
        "cost_pass",
        "limits",
        "{ max_cost = 0.001 }",
        "cheap",
        true,
        &[],
    ),
    kind(
        "cost_fail",
        "limits",
        "{ max_cost = 0.00001 }",
        "dear",
        false,
        &["max_cost: expected at most $0.00001; saw $0.000050"],
    ),
    Kind {
        case: "cost_unpriced",
        category: "limits",
        extra: "model = \"unpriced-model\"\n",
        assert: "{ max_cost = 0.00001 }",
        output: "unknown price",
        pass: true,
        says: &[],
    },
    kind(
        "tokens_pass",
        "limits",
        "{ max_tokens = 20 }",
        "twenty tokens",
        true,
        &[],
    ),
    kind(
        "tokens_fail",
        "limits",
        "{ max_tokens = 19 }",
        "twenty tokens",
        false,
        &["max_tokens: expected at most 19 completion tokens; saw 20"],
    ),
    kind(
        "words_pass",
        "limits",
        "{ max_words = 3 }",
        "one two  three\n",
        true,
        &[],
    ),
    kind(
        "words_fail",
        "limits",
        "{ max_words = 2 }",
        "one two three",
        false,
        &[r#"max_words: expected at most 2 words; saw 3 words: "one two three""#],
    ),
    kind(
        "custom_pass",
        "custom",
        "{ min_sentences = 2 }",
        "One. Two!",
        true,
        &[],
    ),
    kind(
        "custom_fail",
        "custom",
        "{ min_sentences = 3 }",
        "One. Two!",
        false,
        &["min_sentences: expected at least 3 sentences, counted 2 (value 3)"],
    ),
    // The deterministic check fails, so the judge (none is configured) is not asked at all.
    kind(
        "judge_not_asked",
        "judge",
        r#"{ contains = "zzz" }, { judge = "The reply is polite." }"#,
        "Hello.",
        false,
        &[
            "2 of 2 assertions failed:",
            "judge: not asked, the case fails anyway",
        ],
    ),
    Kind {
        case: "weights_pass",
        category: "score",
        extra: "threshold = 0.7\n",
        assert: r#"{ contains = "Paris", weight = 3 }, { contains = "Lyon" }"#,
        output: "Paris",
        pass: true,
        says: &[],
    },
    Kind {
        case: "weights_fail",
        category: "score",
        extra: "threshold = 0.8\n",
        assert: r#"{ contains = "Paris", weight = 3 }, { contains = "Lyon" }"#,
        output: "Paris",
        pass: false,
        says: &[
            "score 0.75 is below the score threshold 0.8 (1 of 2 assertions failed; weight 3 of 4 passed):",
            r#"contains: expected the output to contain "Lyon"; saw "Paris""#,
        ],
    },
    Kind {
        case: "zero_weight",
        category: "score",
        extra: "",
        assert: r#"{ contains = "Paris" }, { contains = "Lyon", weight = 0 }"#,
        output: "Paris",
        pass: false,
        says: &["1 of 2 assertions failed:"],
    },
];

const PROMPT: &str = "Answer the question: {question}";

pub(crate) fn kinds_suite(f: &mut Fixture) {
    let mut toml = format!(
        "prompt = {PROMPT:?}\nprompt_id = \"qa\"\nprompt_version = \"v2\"\ndataset_version = 7\n"
    );
    for k in KINDS {
        toml.push_str(&format!(
            "\n[[cases]]\nname = \"{}\"\ncategory = \"{}\"\ninputs = {{ question = \"{}\" }}\n{}assert = [{}]\n",
            k.case, k.category, k.case, k.extra, k.assert
        ));
        let prompt = PROMPT.replace("{question}", k.case);
        let model = if k.extra.contains("unpriced-model") {
            "unpriced-model"
        } else {
            MODEL
        };
        let request = CompletionRequest::new(model, prompt, MAX_TOKENS);
        let latency = if k.case == "latency_fail" { 500 } else { 100 };
        f.answer_with(
            "kinds",
            request,
            1,
            CompletionResult::new(k.output, 10, 20),
            latency,
        );
    }
    toml.push_str("\n[[cases]]\nname = \"later\"\ncategory = \"text\"\nskip = \"waiting on the new policy\"\n");
    f.file("prompt-tests/kinds.evals.toml", &toml);
    f.file(
        "prompt-tests/schemas/answer.json",
        r#"{ "type": "object", "required": ["answer"], "properties": { "answer": { "type": "string" } } }"#,
    );
}

#[test]
fn every_assertion_kind_passes_and_fails_with_its_message() {
    let mut f = Fixture::new("kinds");
    kinds_suite(&mut f);
    let out = f.run(&[]);
    out.assert_code(101);
    for k in KINDS {
        let trial = format!("kinds::{}", k.case);
        let status = out.outcome(&trial);
        if k.pass {
            assert_eq!(status, "ok", "{trial} should pass\n{}", out.context());
        } else {
            assert_eq!(status, "FAILED", "{trial} should fail\n{}", out.context());
            let reason = out.failure("kinds", k.case);
            for says in k.says {
                assert!(reason.contains(says), "{trial}: {says:?} not in {reason:?}");
            }
            // Every failing assertion names the line of the suite where it is written.
            assert!(
                reason.contains("prompt-tests/kinds.evals.toml:"),
                "{reason}"
            );
        }
    }
    assert!(
        out.outcome("kinds::later").starts_with("ignored"),
        "{}",
        out.context()
    );
    out.assert_stderr_has(
        "max_cost passes without a check: the price of unpriced-model is unknown",
    );
    // The stderr summary lists the cases with their cost.
    out.assert_stderr_has("prompt-tester summary");
}

#[test]
fn custom_assertions_are_listed_in_unknown_assertion_messages() {
    let out = run_with_file(
        "custom",
        "c.evals.toml",
        "prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nassert = [{ min_sentence = 1 }]\n",
    );
    let error = out.suite("c")["error"].as_str().unwrap().to_string();
    child::assert_contains(
        &error,
        &["did you mean `min_sentences`?", "custom: min_sentences"],
    );
}
