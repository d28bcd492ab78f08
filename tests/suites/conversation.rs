//! A conversation before the prompt (`messages`) in a suite: every turn reaches the provider in order,
//! placeholders filled; a case's turns replace the suite's; the cassette replays it offline, and a
//! changed earlier turn is a stale recording that names the turn.

use prompt_tester_testkit::FakeProvider;
use serde_json::{Value, json};

use super::*;

const SUITE: &str = "prompt = \"Capital of {country}?\"\n\
    messages = [\n\
      { role = \"system\", content = \"Answer with the city name only.\" },\n\
      { role = \"user\", content = \"Capital of {example}?\" },\n\
      { role = \"assistant\", content = \"Rome\" },\n\
    ]\n\
    [[cases]]\nname = \"suite_turns\"\ninputs = { country = \"France\", example = \"Italy\" }\nassert = [{ equals = \"Paris\" }]\n\
    [[cases]]\nname = \"own_turns\"\ninputs = { country = \"Spain\" }\n\
    messages = [{ role = \"user\", content = \"Hi\" }, { role = \"assistant\", content = \"Hello.\" }]\n\
    assert = [{ equals = \"Madrid\" }]\n";

#[test]
fn the_turns_reach_the_provider_replay_offline_and_a_changed_turn_is_named() {
    let fake = FakeProvider::builder()
        .answer_prompt("Capital of France?", "Paris")
        .answer_prompt("Capital of Spain?", "Madrid")
        .start();
    let mut f = Fixture::calling("conversation", &fake, "auto");
    f.file("prompt-tests/few.evals.toml", SUITE);
    let first = f.run(&[]);
    first.assert_statuses(&[("few::suite_turns", "ok"), ("few::own_turns", "ok")]);
    let mut sent: Vec<Value> = fake
        .requests()
        .into_iter()
        .map(|r| r.json.unwrap()["messages"].clone())
        .collect();
    sent.sort_by_key(|m| m.as_array().unwrap().len());
    assert_eq!(
        sent,
        [
            json!([
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": "Capital of Spain?"},
            ]),
            json!([
                {"role": "system", "content": "Answer with the city name only."},
                {"role": "user", "content": "Capital of Italy?"},
                {"role": "assistant", "content": "Rome"},
                {"role": "user", "content": "Capital of France?"},
            ]),
        ]
    );
    drop(fake);

    // Offline, from the cassette.
    f.mode = "replay";
    let again = f.run(&[]);
    again.assert_statuses(&[("few::suite_turns", "ok"), ("few::own_turns", "ok")]);

    // Only an earlier turn changes: the recording no longer matches, and the failure says which turn.
    f.file(
        "prompt-tests/few.evals.toml",
        &SUITE.replace("content = \"Rome\"", "content = \"Rome.\""),
    );
    let stale = f.run(&[]);
    stale.assert_statuses(&[("few::own_turns", "ok")]);
    stale.assert_case_failed(
        "few",
        "suite_turns",
        &["message 2 (assistant): -\"Rome\" +\"Rome.\""],
    );
}
