//! `PromptRun::follow_up` in a `#[prompt_test]` (`harness_fixture`'s `fake_follow_up`): the follow-up
//! is sent with the conversation so far, recorded beside the first call, replayed offline, counted in
//! the sample's usage and judged.

use prompt_tester_testkit::{Reply, Usage, Wire, assert_chat_messages};
use serde_json::{Value, json};

use super::*;

/// A fake that names a colour, says it in French when asked, and judges yes.
fn colour_server() -> FakeProvider {
    FakeProvider::builder()
        .respond_with(|request| {
            let model = request.model().unwrap_or_default();
            if model == "judge-model" {
                let verdict = json!({"index": 1, "question_type": "factual_presence", "reasoning": "French.",
                    "snippet": null, "answer": "yes"});
                let body = json!({ "verdicts": [verdict] }).to_string();
                return Reply::text(Wire::OpenAi, &model, &body, Usage::new(100, 10));
            }
            let answer = match request.last_user_text().as_deref() {
                Some("Now say Blue in French.") => "Bleu",
                _ => "Blue",
            };
            Reply::text(Wire::OpenAi, &model, answer, Usage::new(10, 3))
        })
        .start()
}

#[test]
fn a_follow_up_continues_the_conversation_is_recorded_replayed_and_counted() {
    let server = colour_server();
    let judge = "[judge]\nprovider = \"fake\"\nmodel = \"judge-model\"\n";
    let scratch = scratch_with_fake_and("follow-up", &server, judge);
    let key = [("FAKE_API_KEY", SECRET)];
    let args = [
        "fake_follow_up",
        "--exact",
        "--nocapture",
        "--report",
        "report.json",
    ];
    let record = scratch.run_example(FIXTURE, &[&args[..], &["--record"]].concat(), &key);
    record.assert_success();
    // Both subject calls counted in the sample's usage; the run of the follow-up has its own tokens.
    record.assert_stdout_has(
        "replayed=false false subject calls=2 tokens=20+6 follow-up tokens=10+3",
    );

    // The follow-up went with the conversation: the prompt, the answer, then the new turn.
    let requests = server.requests();
    let bodies: Vec<&Value> = requests.iter().filter_map(|r| r.json.as_ref()).collect();
    assert_eq!(bodies.len(), 3, "the first call, the follow-up, the judge");
    let follow_up = bodies
        .iter()
        .find(|b| b["model"] == "fake-model" && b["messages"].as_array().unwrap().len() == 3)
        .expect("the follow-up request");
    assert_chat_messages(
        follow_up,
        &[
            ("user", "Name a colour."),
            ("assistant", "Blue"),
            ("user", "Now say Blue in French."),
        ],
    );
    let file = scratch.cassettes().join("fake_follow_up.cassette.json");
    let mut roles: Vec<String> = entries(&file)
        .iter()
        .map(|e| format!("{} run {}", e["role"].as_str().unwrap(), e["run"]))
        .collect();
    roles.sort();
    assert_eq!(roles, ["judge run 1", "subject run 1", "subject run 1"]);
    // The report's sample shows the whole conversation, and the trial's usage both calls.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(scratch.path().join("report.json")).unwrap())
            .unwrap();
    let test = prompt_tester_testkit::child::entry(&report["tests"], "name", "fake_follow_up");
    assert_eq!(
        test["samples"][0]["transcript"].as_array().unwrap().len(),
        4,
        "{test:#}"
    );
    assert_eq!(test["usage"]["subject"]["calls"], 2, "{test:#}");

    // Replay with the server gone and no key: all three calls come from the cassette.
    drop(server);
    let replay = scratch.run_example(FIXTURE, &args, &[]);
    replay.assert_success();
    replay.assert_stdout_has("replayed=true true subject calls=2 tokens=20+6");
    replay.assert_stderr_has("(3 replayed from cassettes)");
}
