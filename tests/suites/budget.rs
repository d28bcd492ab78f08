//! `--budget` and `--estimate` end to end: the calls a budget lets through, counted at the loopback
//! server; the estimate of a recorded suite against what its replay prices it at; the estimate of an
//! unrecorded suite against a live run; an unpriced model named in both.

use prompt_tester_testkit::{FakeProvider, Reply, Usage, Wire};

use super::*;

/// The worst case of a call of "Q n" (3 bytes: 1 token, one message: 8, the request: 16) with
/// `max_tokens = 64`, at $1 / $2 per million tokens.
const INPUT: u64 = 1 + 8 + 16;
const WORST: f64 = (INPUT as f64 + 2.0 * MAX_TOKENS as f64) / 1e6;

/// A suite of five cases, `Q 1` to `Q 5`, each one call.
fn five_cases(f: &Fixture, model: &str) {
    let cases: String = (1..=5)
        .map(|i| format!("[[cases]]\nname = \"c{i}\"\ninputs = {{ q = \"{i}\" }}\n"))
        .collect();
    f.file(
        "prompt-tests/five.evals.toml",
        &format!("prompt = \"Q {{q}}\"\nmodel = \"{model}\"\nassert = [{{ not_contains = \"zzz\" }}]\n{cases}"),
    );
}

/// The last `total cost $…` a text prints, as printed.
fn total_cost(text: &str) -> String {
    let at = text.rfind("total cost $").expect("a total cost") + "total cost ".len();
    text[at..]
        .split([';', '\n', ' '])
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn a_budget_that_allows_three_calls_makes_three_and_errors_the_rest() {
    // The fake bills each call its worst case: three fit, whatever order they run in.
    let fake = FakeProvider::builder()
        .usage(Usage::new(INPUT, u64::from(MAX_TOKENS)))
        .start();
    let mut f = Fixture::calling("budget", &fake, "off");
    five_cases(&f, MODEL);
    let budget = format!("{:.6}", 3.0 * WORST + WORST / 3.0);
    let html = f.root.join("out/report.html");
    let out = f.run(&["--budget", &budget, "--html", html.to_str().unwrap()]);
    out.assert_code(101);
    assert_eq!(fake.request_count(), 3, "{}", out.context());
    let outcomes: Vec<String> = (1..=5)
        .map(|i| out.outcome(&format!("five::c{i}")))
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| *o == "ok").count(),
        3,
        "{outcomes:?}"
    );
    let refused: Vec<String> = (1..=5)
        .map(|i| format!("c{i}"))
        .filter(|c| out.outcome(&format!("five::{c}")) == "FAILED")
        .map(|c| out.failure("five", &c))
        .collect();
    assert_eq!(refused.len(), 2, "{}", out.context());
    let limit = format!("${:.5}", 3.0 * WORST + WORST / 3.0);
    for reason in &refused {
        child::assert_contains(
            reason,
            &[
                &format!("budget of {limit} reached after $"),
                "raise --budget",
            ],
        );
    }
    out.assert_stderr_has(&format!(
        "budget {limit}: spent ${:.5}; 2 calls were not made for it",
        3.0 * WORST
    ));
    // The JSON and HTML reports say the same: spent against the budget, the calls refused.
    let limit_usd: f64 = budget.parse().unwrap();
    let spent = |report: &serde_json::Value| {
        assert_eq!(report["limit_usd"].as_f64(), Some(limit_usd), "{report}");
        let spent = report["spent_usd"].as_f64().expect("spent_usd");
        assert!((spent - 3.0 * WORST).abs() < 1e-12, "{report}");
        assert_eq!(report["refused_calls"], 2, "{report}");
        assert_eq!(report["whole_nextest_run"], false, "{report}");
    };
    spent(&out.report.as_ref().expect("a JSON report")["budget"]);
    let page = std::fs::read_to_string(&html).unwrap();
    let data = prompt_tester::testing::read_html_data(&page).expect("the page's data");
    spent(&data["run"]["budget"]);
    // The same budget from the variable.
    f.env.push(("PROMPT_TESTER_BUDGET", "0"));
    let none = f.run(&[]);
    none.assert_code(101);
    assert_eq!(fake.request_count(), 3, "a budget of 0 makes no call");
    // Without a budget, neither report has one.
    f.env.clear();
    let unbudgeted = f.run(&["five::c1", "--exact", "--html", html.to_str().unwrap()]);
    unbudgeted.assert_success();
    assert!(unbudgeted.report.as_ref().unwrap().get("budget").is_none());
    let page = std::fs::read_to_string(&html).unwrap();
    let data = prompt_tester::testing::read_html_data(&page).unwrap();
    assert!(data["run"].get("budget").is_none(), "{}", data["run"]);
}

#[test]
fn an_unpriced_model_is_refused_under_a_budget_and_named_by_the_estimate() {
    let fake = FakeProvider::start();
    let f = Fixture::calling("unpriced", &fake, "off");
    five_cases(&f, "mystery-model");
    let out = f.run(&["--budget", "1", "five::c1", "--exact"]);
    out.assert_code(101);
    assert_eq!(fake.request_count(), 0);
    out.assert_failure_has(
        "five",
        "c1",
        &["fake/mystery-model has no known price, so under a budget its call is refused"],
    );
    let estimate = f.run(&["--estimate", "five::c1", "--exact"]);
    estimate.assert_success();
    estimate.assert_stderr_has("unpriced models (cost unknown, not counted");
    estimate.assert_stderr_has("fake/mystery-model");
    estimate.assert_stderr_has("+ unpriced calls\n");
    assert_eq!(fake.request_count(), 0, "the estimate calls nothing");
}

#[test]
fn the_estimate_of_a_recorded_suite_is_what_its_replay_prices_the_recordings_at() {
    let mut f = Fixture::new("estimate-recorded");
    f.q_suite(
        "priced",
        "",
        &[("once", "1", ""), ("thrice", "2", "runs = 3\n")],
    );
    for run in 1..=3 {
        let request = CompletionRequest::new(MODEL, "Q 2", MAX_TOKENS);
        f.answer_with(
            "priced",
            request,
            run,
            CompletionResult::new("a", 1234 * u64::from(run), 77),
            5,
        );
    }
    let estimate = f.run(&["--estimate"]);
    estimate.assert_success();
    let text = estimate.stderr();
    child::assert_contains(
        &text,
        &[
            "priced::once",
            "priced::thrice",
            "recorded",
            "estimate: 4 model calls",
        ],
    );
    let json = &estimate.report.as_ref().expect("the estimate as JSON")["estimate"];
    assert_eq!(json["subject"]["calls"], 4.0, "{json}");
    assert_eq!(json["subject"]["basis"], "recorded");
    let replay = f.run(&[]);
    replay.assert_success();
    assert_eq!(
        total_cost(&text),
        total_cost(&replay.stderr()),
        "{}",
        replay.context()
    );
    assert_eq!(model_calls(&text), model_calls(&replay.stderr()));
    // A filter selects what is estimated as it selects what runs.
    let one = f.run(&["--estimate", "priced::thrice::run_2", "--exact"]);
    child::assert_contains(&one.stderr(), &["estimate: 1 model calls"]);
    let cost = (1234.0 * 2.0 + 77.0 * 2.0) / 1e6;
    assert_eq!(total_cost(&one.stderr()), format!("${cost:.5}"));
}

/// The calls a run prints (`… 12 model calls …`), as printed.
fn model_calls(text: &str) -> String {
    let at = text.rfind(" model calls").expect("a count of model calls");
    text[..at].rsplit(' ').next().unwrap().to_string()
}

/// A gated dataset whose rows share the texts they embed (two answer "Paris." to the reference
/// "Paris"; one fails before its embeddings are asked), and a calibration set recorded item by item
/// (under the items' trial names): the estimate counts and prices every call a re-recording run makes
/// of them, as their replay does, to the last printed digit.
#[test]
fn the_estimate_of_shared_embeddings_and_a_set_recorded_by_item_is_what_their_replay_makes() {
    let fake = FakeProvider::builder()
        .respond_with(|request| {
            if request.is_embedding() {
                return Reply::embedding_of(request);
            }
            if request.model().as_deref() == Some(JUDGE_MODEL) {
                let verdict = r#"{"question_type": "factual_presence", "reasoning": "Looked.", "snippet": null, "answer": "yes"}"#;
                return Reply::text(Wire::OpenAi, JUDGE_MODEL, verdict, Usage::new(321, 17));
            }
            let prompt = request.last_user_text().unwrap_or_default();
            let answer = if prompt.contains("Peru") { "Lima, I think." } else if prompt.contains("Chile") { "No idea." } else { "Paris." };
            Reply::answer(request, answer)
        })
        .start();
    let mut f = Fixture::calling("estimate-shared", &fake, "record");
    let config = std::fs::read_to_string(f.root.join("prompt-tester.toml")).unwrap();
    f.file(
        "prompt-tester.toml",
        &format!(
            "{config}
[embeddings]
provider = \"{PROVIDER}\"
model = \"fake-embedding\"

\
             [prices.\"fake-embedding\"]
input_mtok = 700.0
output_mtok = 0.0

\
             [prices.\"{JUDGE_MODEL}\"]
input_mtok = 3.0
output_mtok = 15.0
"
        ),
    );
    f.file(
        "prompt-tests/golden.evals.toml",
        "prompt = \"Capital of {country}?\"
cases_file = \"golden/rows.jsonl\"
threshold = 0.6
\
         assert = [{ icontains = \"{expected}\", weight = 3 }, { similar = \"{expected}\", threshold = 0.1, weight = 1 }]
\
         [gate]
pass_threshold = 0.5
[gate.categories]
europe = 0.5
americas = 0.5
",
    );
    f.file(
        "prompt-tests/golden/rows.jsonl",
        r#"{"id": "france", "category": "europe", "expected": "Paris", "country": "France"}
{"id": "francia", "category": "europe", "expected": "Paris", "country": "Francia"}
{"id": "peru", "category": "americas", "expected": "Lima", "country": "Peru"}
{"id": "chile", "category": "americas", "expected": "Santiago", "country": "Chile"}
"#,
    );
    let items: String = ["alice", "bob", "carol"]
        .iter()
        .map(|n| {
            format!(
                "[[items]]
name = \"{n}\"
response = \"{n} leads.\"
question = \"Is {n} named?\"
expected = \"yes\"
"
            )
        })
        .collect();
    f.file("prompt-tests/named.calibration.toml", &items);
    let recorded = f.run(&["golden"]);
    recorded.assert_success();
    for item in ["alice", "bob", "carol"] {
        let one = f.run(&[&format!("calibration::named::{item}"), "--exact"]);
        one.assert_success();
    }
    // 4 answers; 2 embeddings each for the three rows that can still pass (`chile` fails `icontains`
    // first); one judge call per item.
    let made = fake.request_count();
    assert_eq!(made, 4 + 3 * 2 + 3, "{}", recorded.context());

    f.mode = "replay";
    let estimate = f.run(&["--estimate"]);
    estimate.assert_success();
    let text = estimate.stderr();
    assert_eq!(model_calls(&text), made.to_string(), "{text}");
    assert!(!text.contains("not counted"), "{text}");
    let json = &estimate.report.as_ref().expect("the estimate as JSON")["estimate"];
    assert_eq!(json["embedding"]["calls"], 6.0, "{json}");
    assert_eq!(json["judge"]["calls"], 3.0, "{json}");
    assert_eq!(json["judge"]["basis"], "recorded", "{json}");
    // The printed total, in the JSON report.
    assert_eq!(json["total"]["calls"], made as f64, "{json}");
    let usd = json["total"]["cost_usd"].as_f64().unwrap();
    assert_eq!(format!("${usd:.5}"), total_cost(&text), "{json}");
    let replay = f.run(&[]);
    replay.assert_success();
    let replayed = replay.stderr();
    assert_eq!(model_calls(&replayed), made.to_string(), "{replayed}");
    assert_eq!(
        total_cost(&text),
        total_cost(&replayed),
        "{text}\n{replayed}"
    );
    assert_eq!(
        fake.request_count(),
        made,
        "neither the estimate nor the replay calls"
    );
}

#[test]
fn an_unrecorded_suite_s_estimate_bounds_its_live_run() {
    let fake = FakeProvider::start();
    let f = Fixture::calling("estimate-live", &fake, "off");
    f.file(
        "prompt-tests/fresh.evals.toml",
        "prompt = \"Summarise for a busy reader: {memo}\"\nruns = 2\nassert = [{ not_contains = \"zzz\" }]\n\
         [[cases]]\nname = \"short\"\ninputs = { memo = \"Alice leads Phoenix.\" }\n\
         [[cases]]\nname = \"long\"\ninputs = { memo = \"Alice leads Project Phoenix; the budget is two million and the deadline is the third quarter.\" }\n",
    );
    let estimate = f.run(&["--estimate"]);
    estimate.assert_success();
    assert_eq!(fake.request_count(), 0);
    child::assert_contains(
        &estimate.stderr(),
        &[
            "approximated",
            "estimate (approximated figures are upper bounds",
        ],
    );
    let bound: f64 = total_cost(&estimate.stderr())[1..].parse().unwrap();
    let json = &estimate.report.as_ref().unwrap()["estimate"];
    assert_eq!(json["subject"]["calls"], 4.0);
    let live = f.run(&[]);
    live.assert_success();
    assert_eq!(fake.request_count(), 4);
    let spent: f64 = total_cost(&live.stderr())[1..].parse().unwrap();
    assert!(
        spent > 0.0 && spent <= bound,
        "spent {spent}, bound {bound}"
    );
}

#[test]
fn the_budget_and_estimate_variables_take_only_what_they_mean() {
    let mut f = Fixture::new("knobs");
    f.env.push(("PROMPT_TESTER_BUDGET", "ten dollars"));
    let out = f.run(&[]);
    out.assert_code(2);
    out.assert_stderr_has("PROMPT_TESTER_BUDGET=\"ten dollars\" is not an amount of USD");
    f.env = vec![("PROMPT_TESTER_ESTIMATE", "maybe")];
    let out = f.run(&[]);
    out.assert_code(2);
    out.assert_stderr_has("PROMPT_TESTER_ESTIMATE=\"maybe\" is not a switch");
    let out = f.run(&["--budget", "-1"]);
    out.assert_code(2);
    out.assert_stderr_has("--budget \"-1\" is not an amount of USD");
}

#[test]
fn a_test_s_own_budget_stops_its_samples_with_an_errored_verdict() {
    let fake = FakeProvider::builder()
        .usage(Usage::new(INPUT, u64::from(MAX_TOKENS)))
        .start();
    let f = Fixture::calling("test-budget", &fake, "off");
    let room = format!("{:.6}", 2.5 * WORST);
    f.file(
        "prompt-tests/capped.evals.toml",
        &format!(
            "prompt = \"Q {{q}}\"\nbudget = {room}\nassert = [{{ not_contains = \"zzz\" }}]\n\
             [[cases]]\nname = \"fixed\"\nruns = 5\ninputs = {{ q = \"1\" }}\n\
             [[cases]]\nname = \"adaptive\"\npass_rate = 0.8\ninputs = {{ q = \"2\" }}\n\
             [[cases]]\nname = \"roomy\"\nbudget = 1.0\ninputs = {{ q = \"3\" }}\n"
        ),
    );
    let out = f.run(&[]);
    out.assert_code(101);
    // Two calls each for the capped cases, one for the roomy one.
    assert_eq!(fake.request_count(), 5, "{}", out.context());
    out.assert_statuses(&[
        ("capped::fixed", "FAILED"),
        ("capped::adaptive", "FAILED"),
        ("capped::roomy", "ok"),
    ]);
    for case in ["fixed", "adaptive"] {
        out.assert_failure_has(
            "capped",
            case,
            &[&format!(
                "test `capped::{case}`'s budget of ${:.5} reached after $",
                2.5 * WORST
            )],
        );
    }
    // Adaptive sampling stopped at the budget: errored, not passed.
    let failure = child::entry(&out.suite("capped")["failures"], "case_id", "adaptive");
    assert_eq!(failure["status"], "errored", "{}", out.context());
}
