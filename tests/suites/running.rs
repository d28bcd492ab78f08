//! Running suites: missing recordings, `live_only`, an HTTP provider and recording a cassette.

use prompt_tester_testkit::{FakeProvider, Reply, Wire};

use super::*;

#[test]
fn a_missing_recording_fails_its_case_and_the_others_still_run() {
    let mut f = Fixture::new("missing");
    f.q_suite(
        "partial",
        "",
        &[("recorded", "1", ""), ("changed", "2", "")],
    );
    let out = f.run(&[]);
    out.assert_statuses(&[("partial::recorded", "ok")]);
    out.assert_case_failed(
        "partial",
        "changed",
        &[
            // A new case in a recorded suite is a first recording: replay-only mode fails it.
            "model call failed: prompt-tests/cassettes/partial.cassette.json has no recording for this call",
            // The re-record command filters on the suite.
            "-- partial",
        ],
    );
}

#[test]
fn live_only_suites_and_cases_without_recordings_are_ignored_in_ci_while_others_fail() {
    let mut f = Fixture::new("liveonly");
    f.mode = "auto";
    f.env.push(("CI", "true"));
    f.q_suite(
        "live",
        "live_only = true\n",
        &[
            ("recorded", "1", ""),
            ("unrecorded", "2", ""),
            ("not_live", "3", "live_only = false\n"),
        ],
    );
    f.file(
        "prompt-tests/fresh.evals.toml",
        "prompt = \"New {q}\"\n[[cases]]\nname = \"nobody_recorded\"\ninputs = { q = \"1\" }\nassert = [{ contains = \"a\" }]\n",
    );
    let out = f.run(&[]);
    out.assert_code(101);
    // A recorded live-only case replays.
    out.assert_statuses(&[("live::recorded", "ok")]);
    let ignored = out.outcome("live::unrecorded");
    assert!(
        ignored.starts_with(
            "ignored (live only, not run: no recording in prompt-tests/cassettes/live.cassette.json"
        ),
        "{ignored}"
    );
    // A case may opt out of its suite's `live_only`: then, like any case nobody recorded, it fails
    // under CI (the suite's cassette has other recordings: it says the prompt changed).
    out.assert_statuses(&[
        ("live::not_live", "FAILED"),
        ("fresh::nobody_recorded", "FAILED"),
    ]);
    out.assert_failure_has(
        "fresh",
        "nobody_recorded",
        &[
            "Under CI, auto mode never calls a provider for a missing recording",
            "PROMPT_TESTER_CASSETTE=record cargo test --test suites -- fresh",
        ],
    );
    out.assert_stderr_has("live only, not run: live::unrecorded");
    let live = out.suite("live");
    assert_eq!(
        (live["skipped"].as_u64(), live["total"].as_u64()),
        (Some(1), Some(2))
    );
}

/// The suite `geo` in a crate calling a fake that answers the capital of France, refuses Nowhere with
/// a provider error and knows nothing else, run in cassette `mode`.
fn geo_server(name: &str, mode: &'static str) -> (FakeProvider, Fixture) {
    let refusal = Reply::error(
        Wire::OpenAi,
        400,
        "invalid_request_error",
        "no such country: Nowhere",
    );
    let fake = FakeProvider::builder()
        .answer_prompt("Capital of France?", "Paris is the capital.")
        .reply_prompt("Capital of Nowhere?", refusal)
        .echo_text("I do not know.")
        .start();
    let f = Fixture::calling(name, &fake, mode);
    f.suite("geo");
    (fake, f)
}

#[test]
fn suites_call_an_http_provider_and_a_provider_error_fails_only_its_case() {
    let (fake, f) = geo_server("http", "off");
    let out = f.run(&[]);
    out.assert_code(101);
    out.assert_statuses(&[("geo::france", "ok")]);
    out.assert_case_failed(
        "geo",
        "spain",
        &[r#"contains: expected the output to contain "Madrid"; saw "I do not know.""#],
    );
    let reason = out.failure("geo", "nowhere");
    assert!(reason.starts_with("model call failed:"), "{reason}");
    out.assert_failure_has("geo", "nowhere", &["no such country: Nowhere"]);

    // What went over the wire: the rendered prompt, the model and the options of the suite.
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    let france = requests
        .iter()
        .find(|r| r.last_user_text().as_deref() == Some("Capital of France?"))
        .unwrap();
    let body = france.json.as_ref().unwrap();
    assert_eq!(body["model"], MODEL);
    assert_eq!(body["max_tokens"], MAX_TOKENS);
    assert!(
        f.root.join("prompt-tests/cassettes").read_dir().is_err(),
        "cassettes are off: nothing recorded"
    );
    let suite = out.suite("geo");
    assert_eq!(
        (suite["passed"].as_u64(), suite["total"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(
        suite["usage"]["subject"]["calls"], 2,
        "the failed call is not counted as an answer"
    );
}

#[test]
fn a_suite_records_one_cassette_then_replays_it_offline() {
    let (fake, mut f) = geo_server("record", "auto");
    let first = f.run(&["--skip", "geo::nowhere"]);
    assert_eq!(fake.request_count(), 2, "{}", first.context());
    let entries = f.recorded("geo");
    assert_eq!(
        entries.len(),
        2,
        "one cassette per suite, one entry per call"
    );
    assert!(
        entries
            .iter()
            .all(|e| e["provider"] == PROVIDER && e["role"] == "subject")
    );
    drop(fake);

    // The server is gone: replaying needs only the cassette.
    f.mode = "replay";
    let again = f.run(&["--skip", "geo::nowhere"]);
    again.assert_statuses(&[("geo::france", "ok"), ("geo::spain", "FAILED")]);
    again.assert_stderr_has("(2 replayed from cassettes)");
    assert_eq!(again.suite("geo")["usage"]["subject"]["replayed"], 2);
}

#[test]
fn cases_asking_one_call_together_make_it_once_and_replay_it() {
    // Slow answers, so that the cases ask at the same time.
    let fake = FakeProvider::builder()
        .echo_text("a")
        .latency(std::time::Duration::from_millis(300))
        .start();
    let mut f = Fixture::calling("same-call", &fake, "auto");
    let cases = ["one", "two", "three", "four"];
    let mut suite = "prompt = \"Q {q}\"\n".to_string();
    for case in cases {
        suite += &format!(
            "[[cases]]\nname = \"{case}\"\ninputs = {{ q = \"1\" }}\nassert = [{{ contains = \"a\" }}]\n"
        );
    }
    f.file("prompt-tests/same.evals.toml", &suite);
    let first = f.run(&["--test-threads", "4"]);
    let cases = cases.map(|case| format!("same::{case}"));
    let cases = cases.each_ref().map(|case| (case.as_str(), "ok"));
    first.assert_statuses(&cases);
    assert_eq!(fake.request_count(), 1, "{}", first.context());
    first.assert_stderr_has("4 model calls (3 replayed from cassettes");
    assert_eq!(f.recorded("same").len(), 1, "one answer per call");
    drop(fake);

    f.mode = "replay";
    let again = f.run(&[]);
    again.assert_statuses(&cases);
}
