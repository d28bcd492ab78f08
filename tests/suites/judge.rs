//! Judge assertions: one judge call per run, a missing judge, a missing verdict asked again.

use prompt_tester_testkit::{FakeProvider, Reply, Wire};
use serde_json::{Value, json};

use super::*;

/// One verdict of the judge's structured answer.
fn verdict(index: u32, answer: &str, reasoning: &str) -> Value {
    json!({"index": index, "question_type": "factual_presence", "reasoning": reasoning, "snippet": null, "answer": answer})
}

#[test]
fn judge_assertions_share_one_judge_call_per_run() {
    let fake = FakeProvider::builder()
        .respond_with(|request| {
            let body = String::from_utf8_lossy(&request.body).into_owned();
            if request.model().as_deref() == Some(JUDGE_MODEL) {
                let polite = !body.contains("coffee") && !body.contains("juice");
                let mut verdicts = vec![if polite {
                    verdict(1, "yes", "It says please.")
                } else {
                    verdict(1, "no", "It barks an order.")
                }];
                if body.contains("Does it mention milk?") {
                    verdicts.push(verdict(2, "yes", "Milk is offered."));
                }
                return Reply::text(
                    Wire::OpenAi,
                    JUDGE_MODEL,
                    &json!({ "verdicts": verdicts }).to_string(),
                    prompt_tester_testkit::Usage::new(100, 10),
                );
            }
            let answer = match request.last_user_text().as_deref() {
                Some("Serve tea") => "Here is your tea with milk, please enjoy.",
                Some("Serve coffee") => "Coffee. Now.",
                _ => "Fresh juice. Take it.",
            };
            Reply::answer(request, answer)
        })
        .start();
    let f = Fixture::calling("judge", &fake, "off");
    f.suite("judged");
    let out = f.run(&[]);
    out.assert_statuses(&[("judged::tea", "ok"), ("judged::coffee", "FAILED")]);
    assert_eq!(
        out.outcome("judged::juice"),
        "ok",
        "the judge's no weighs 1 of 2, the threshold is 0.5"
    );
    out.assert_failure_has(
        "judged",
        "coffee",
        &[r#"judge: expected the judge to confirm "Is it polite?"; saw "no": It barks an order."#],
    );
    // Both questions of `tea` went in one judge call; three judge calls in all.
    let judge_calls: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.model().as_deref() == Some(JUDGE_MODEL))
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert_eq!(judge_calls.len(), 3);
    assert_eq!(
        judge_calls
            .iter()
            .filter(|b| b.contains("Does it mention milk?") && b.contains("Is it polite?"))
            .count(),
        1
    );
    let suite = out.suite("judged");
    assert_eq!(suite["usage"]["judge"]["calls"], 3);
    assert_eq!(suite["usage"]["subject"]["calls"], 3);
    let junit = quick_junit::Report::deserialize_from_str(out.junit.as_deref().unwrap()).unwrap();
    let tea = junit.test_suites[0]
        .test_cases
        .iter()
        .find(|c| c.name.as_str() == "judged::tea")
        .unwrap();
    let judge_calls = tea
        .properties
        .iter()
        .find(|p| p.name.as_str() == "judge_calls")
        .unwrap();
    assert_eq!(judge_calls.value.as_str(), "1");
}

#[test]
fn a_judge_assertion_without_a_configured_judge_fails_with_how_to_configure_one() {
    let fake = FakeProvider::builder().echo_text("Tea. Please.").start();
    let mut f = Fixture::new("nojudge");
    f.mode = "off";
    f.file(
        "prompt-tester.toml",
        &format!("[defaults]\nprovider = \"{PROVIDER}\"\nmodel = \"{MODEL}\"\n[providers.{PROVIDER}]\nbase_url = \"{}\"\n", fake.base_url(Wire::OpenAi)),
    );
    f.file("prompt-tests/j.evals.toml", "prompt = \"Serve tea\"\n[[cases]]\nname = \"a\"\nassert = [{ judge = \"Is it polite?\", weight = 0 }]\nthreshold = 0\n");
    let out = f.run(&[]);
    out.assert_statuses(&[("j::a", "FAILED")]);
    let reason = out.failure("j", "a");
    assert!(reason.starts_with("judge: "), "{reason}");
    assert!(
        reason.contains("[judge]"),
        "the message says how to configure the judge: {reason}"
    );
}

/// Serves tea: the third subject call (whichever run makes it) answers "III"; the judge answers every
/// question yes, except about that answer, where it writes prose with no verdict.
fn tea_server() -> FakeProvider {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let teas = AtomicUsize::new(0);
    FakeProvider::builder()
        .respond_with(move |request| {
            let body = String::from_utf8_lossy(&request.body).into_owned();
            if request.model().as_deref() == Some(JUDGE_MODEL) {
                if body.contains("III") {
                    return Reply::text(
                        Wire::OpenAi,
                        JUDGE_MODEL,
                        "Hard to say.",
                        prompt_tester_testkit::Usage::new(50, 4),
                    );
                }
                return Reply::text(
                    Wire::OpenAi,
                    JUDGE_MODEL,
                    &json!({ "verdicts": [verdict(1, "yes", "Fine.")] }).to_string(),
                    prompt_tester_testkit::Usage::new(100, 10),
                );
            }
            let answer = match request.last_user_text().as_deref() {
                Some("Serve tea") if teas.fetch_add(1, Ordering::SeqCst) == 2 => "Your tea. III",
                Some("Serve tea") => "Your tea, please.",
                Some("Serve water") => "Water, please.",
                _ => "No.",
            };
            Reply::answer(request, answer)
        })
        .start()
}

/// A judge with no verdict is an error, not a weighed failure, and an errored sample fails its case
/// whatever `pass_threshold` and `threshold`: 4/5 runs would pass at 0.8, and the judge's assertion
/// weighs only half the score. Errors are counted apart in the console, the summary and both reports.
#[test]
fn a_judge_without_a_verdict_errors_the_run_whatever_the_thresholds() {
    let fake = tea_server();
    let f = Fixture::calling("errored", &fake, "off");
    f.suite("drinks");
    let out = f.run(&[]);
    out.assert_code(101);
    out.assert_statuses(&[
        ("drinks::tea", "FAILED"),
        ("drinks::coffee", "FAILED"),
        ("drinks::water", "ok"),
    ]);
    let reason = out.failure("drinks", "tea");
    child::assert_contains(
        &reason,
        &[
            "] ERROR: judge: judge returned no verdict: ",
            "Hard to say.",
            "4/5 samples passed, 1 errored (80%, 95% CI 38–96%; need 4, pass threshold 80%)",
        ],
    );
    assert!(!reason.contains("FAILED"), "{reason}");
    out.assert_stderr_has("1 passed, 1 failed, 1 errored, 0 ignored");

    let suite = out.suite("drinks");
    assert_eq!(suite["passed"], 1, "{suite:#}");
    assert_eq!(suite["errors"], 1, "{suite:#}");
    assert_eq!(suite["total"], 3, "an errored case counts in total");
    let status = |case: &str, list: &str| {
        suite[list]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["case_id"] == case)
            .unwrap_or_else(|| panic!("no {case} in {list}: {suite:#}"))["status"]
            .clone()
    };
    assert_eq!(status("tea", "failures"), "errored");
    assert_eq!(status("coffee", "failures"), "failed");
    assert_eq!(status("tea", "cases"), "errored");
    assert_eq!(status("coffee", "cases"), "failed");
    assert_eq!(status("water", "cases"), "passed");
    let report = out.report.as_ref().unwrap();
    assert_eq!(report["totals"]["errors"], 1, "{report:#}");
    assert_eq!(report["totals"]["failed"], 1, "{report:#}");
    assert_eq!(report["totals"]["passed"], 1, "{report:#}");

    let junit = quick_junit::Report::deserialize_from_str(out.junit.as_deref().unwrap()).unwrap();
    let kind_of = |name: &str| {
        let case = junit.test_suites[0]
            .test_cases
            .iter()
            .find(|c| c.name.as_str() == name)
            .unwrap();
        match &case.status {
            quick_junit::TestCaseStatus::NonSuccess { kind, .. } => Some(*kind),
            _ => None,
        }
    };
    assert_eq!(
        kind_of("drinks::tea"),
        Some(quick_junit::NonSuccessKind::Error)
    );
    assert_eq!(
        kind_of("drinks::coffee"),
        Some(quick_junit::NonSuccessKind::Failure)
    );
    assert_eq!(kind_of("drinks::water"), None);
}

/// A reply that leaves a judge question unanswered is followed by one call asking only that
/// question; both judge calls are recorded and replay offline.
#[test]
fn a_missing_verdict_is_asked_again_and_the_cassette_replays_both_calls() {
    let fake = FakeProvider::builder()
        .respond_with(|request| {
            let user = request.last_user_text().unwrap_or_default();
            if request.model().as_deref() == Some(JUDGE_MODEL) {
                // The first call numbers both questions; the second asks about milk alone.
                let reasoning = if user.contains("2. Does it mention milk?") {
                    "It says please."
                } else {
                    "Milk is offered."
                };
                return Reply::text(
                    Wire::OpenAi,
                    JUDGE_MODEL,
                    &json!({ "verdicts": [verdict(1, "yes", reasoning)] }).to_string(),
                    prompt_tester_testkit::Usage::new(100, 10),
                );
            }
            Reply::answer(request, "Here is your tea with milk, please enjoy.")
        })
        .start();
    let mut f = Fixture::calling("reask", &fake, "auto");
    f.file(
        "prompt-tests/tea.evals.toml",
        "prompt = \"Serve tea\"\n[[cases]]\nname = \"milk\"\nassert = [{ judge = \"Is it polite?\" }, { judge = \"Does it mention milk?\" }]\n",
    );
    let first = f.run(&[]);
    first.assert_statuses(&[("tea::milk", "ok")]);
    let judge_calls: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.model().as_deref() == Some(JUDGE_MODEL))
        .map(|r| r.last_user_text().unwrap_or_default())
        .collect();
    assert_eq!(judge_calls.len(), 2, "{judge_calls:#?}");
    assert!(
        judge_calls[1].contains("1. Does it mention milk?"),
        "{}",
        judge_calls[1]
    );
    assert!(
        !judge_calls[1].contains("Is it polite?"),
        "{}",
        judge_calls[1]
    );
    let recorded = f.recorded("tea");
    let roles: Vec<&str> = recorded
        .iter()
        .map(|e| e["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles.iter().filter(|r| **r == "judge").count(),
        2,
        "{roles:?}"
    );
    drop(fake);

    f.mode = "replay";
    let again = f.run(&[]);
    again.assert_statuses(&[("tea::milk", "ok")]);
    again.assert_stderr_has("(3 replayed from cassettes)");
}

/// The record command names the judge's missing key only for a selection that may call the judge:
/// cases without judge assertions record without it.
#[test]
fn the_record_command_names_the_judge_s_key_only_where_a_case_asks_the_judge() {
    let f = Fixture::new("judge-key-hint");
    // The judge at Anthropic, whose key the child process does not have.
    f.file(
        "prompt-tester.toml",
        &format!(
            "[defaults]\nprovider = \"{PROVIDER}\"\nmodel = \"{MODEL}\"\nmax_tokens = {MAX_TOKENS}\n\n\
             [judge]\nprovider = \"anthropic\"\nmodel = \"claude-haiku-4-5\"\n\n\
             [providers.{PROVIDER}]\nbase_url = \"http://127.0.0.1:9/v1\"\n"
        ),
    );
    f.file(
        "prompt-tests/plain.evals.toml",
        "prompt = \"Serve tea\"\n[[cases]]\nname = \"tea\"\nassert = [{ contains = \"tea\" }]\n",
    );
    f.file(
        "prompt-tests/judged.evals.toml",
        "prompt = \"Serve tea\"\n[[cases]]\nname = \"tea\"\nassert = [{ judge = \"Is it polite?\" }]\n",
    );
    // Replay-only, nothing recorded: each subject call is refused with the command that records it.
    let record = "PROMPT_TESTER_CASSETTE=record cargo test";
    let plain = f.run(&["plain::"]);
    plain.assert_fails_at("plain::tea", &[record]);
    child::assert_lacks(&plain.stdout(), "ANTHROPIC_API_KEY");

    let judged = f.run(&["judged::"]);
    judged.assert_fails_at("judged::tea", &[&format!("ANTHROPIC_API_KEY=... {record}")]);
}
