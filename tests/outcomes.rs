//! How a sample ends when a model call gives no answer, end to end: the `outcome_fixture` binary run in
//! child processes against the loopback fake provider. A failed call errors the sample and an
//! unavailable one ignores the trial, whatever the body did with the error (issue 37).

use prompt_tester_testkit::child::{self, Run, Scratch};
use prompt_tester_testkit::{FakeProvider, Reply, Wire};

const FIXTURE: &str = "outcome_fixture";

/// Retries quick: a failed call is retried once.
const RETRY: &str = "[retry]\nmax_attempts = 2\ninitial_backoff_ms = 1\nmax_backoff_ms = 5\n";

/// The JSON report of a run (`--report report.json`).
fn report(scratch: &Scratch) -> serde_json::Value {
    let json = std::fs::read_to_string(scratch.path().join("report.json")).expect("a JSON report");
    serde_json::from_str(&json).expect("the report is JSON")
}

/// The status (`passed`, `failed`, `errored`, `ignored`, `live_only`) and message of `trial` in
/// `report`.
fn status(report: &serde_json::Value, trial: &str) -> (String, String) {
    let entry = child::entry(&report["tests"], "name", trial);
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    (text(&entry["status"]), text(&entry["message"]))
}

/// A server that answers a subject's first call and fails every other call (the judge's, the
/// embeddings, a follow-up) with HTTP 500.
fn failing_all_but_the_subject() -> FakeProvider {
    FakeProvider::builder()
        .respond_with(|request| {
            let turns = request
                .json
                .as_ref()
                .and_then(|j| j["messages"].as_array())
                .map_or(0, Vec::len);
            let subject = request.model().as_deref() == Some("subject-model") && turns == 1;
            if subject && !request.is_embedding() {
                Reply::answer(request, "Blue.")
            } else {
                Reply::server_error(Wire::OpenAi, 500)
            }
        })
        .start()
}

/// The four bodies of each kind of call, and the trial names they make.
fn table() -> Vec<String> {
    let mut trials = Vec::new();
    for call in ["judge", "similarity", "follow_up"] {
        for body in ["returned", "unwrapped", "own_error", "swallowed"] {
            trials.push(format!("{call}::{body}"));
        }
    }
    trials
}

/// Judge, similarity and follow-up x `?`, `.unwrap()`, own error, swallowed x provider error,
/// unavailable: a call that failed errors every trial (libtest `FAILED`, reported `errored`); a call
/// that was neither made nor replayed ignores every trial.
#[test]
fn a_call_without_an_answer_decides_the_sample_whatever_the_body_did_with_it() {
    let scratch = Scratch::new("outcomes", "table");
    scratch.config(&format!(
        "[judge]\nprovider = \"openai\"\nmodel = \"judge-model\"\n\n[embeddings]\nprovider = \
         \"openai\"\nmodel = \"embed-model\"\n\n{RETRY}"
    ));
    let server = failing_all_but_the_subject();
    let url = server.base_url(Wire::OpenAi);
    let args = ["--skip", "plain::", "--report", "report.json"];

    // Provider error: recording, the subject answers and the other call gets a 500 twice.
    let run = scratch.run_example(
        FIXTURE,
        &args,
        &[
            ("OPENAI_BASE_URL", &url),
            ("PROMPT_TESTER_CASSETTE", "record"),
        ],
    );
    let context = run.context();
    assert_eq!(run.code(), Some(101), "{context}");
    let errored = report(&scratch);
    for trial in table() {
        assert_eq!(run.outcome(&trial), "FAILED", "{trial}: {context}");
        let (status, message) = status(&errored, &trial);
        assert_eq!(status, "errored", "{trial}: {message}");
        assert!(
            message.contains("HTTP 500") && message.contains("[2 attempts]"),
            "{trial}: {message}"
        );
    }
    // What the body did is said after the failed call.
    let (_, own) = status(&errored, "judge::own_error");
    assert!(
        own.ends_with("; then: the check could not be made"),
        "{own}"
    );
    let (_, swallowed) = status(&errored, "similarity::swallowed");
    assert!(
        swallowed.starts_with("embeddings call failed: openai: HTTP 500")
            && swallowed.ends_with("(the test went on without its answer)"),
        "{swallowed}"
    );

    // Unavailable: auto mode, the subjects replayed, the other calls never recorded (live only).
    let run = scratch.run_example(FIXTURE, &args, &[]);
    let context = run.context();
    assert_eq!(run.code(), Some(0), "{context}");
    let ignored = report(&scratch);
    for trial in table() {
        assert!(
            run.outcome(&trial).starts_with("ignored"),
            "{trial}: {context}"
        );
        let (status, message) = status(&ignored, &trial);
        assert_eq!(status, "live_only", "{trial}: {message}");
    }
}

/// `run.similarity` ends a sample as `run.ask` does: with no recording and no key the trial is
/// ignored; under CI with no recording it errors (it failed before). Under CI a judge call the
/// sample's recordings never held is said not recorded, not changed.
#[test]
fn similarity_is_classified_like_the_judge_and_a_never_recorded_judge_call_is_said_so() {
    let scratch = Scratch::new("outcomes", "similarity");
    // Both at their providers' own URLs, whose keys the child process does not have.
    scratch.config(&format!(
        "[judge]\nprovider = \"anthropic\"\nmodel = \"claude-haiku-4-5\"\n\n[embeddings]\nprovider = \
         \"google\"\nmodel = \"text-embedding-004\"\n\n{RETRY}"
    ));
    let server = failing_all_but_the_subject();
    let url = server.base_url(Wire::OpenAi);
    let args = [
        "plain::",
        "--skip",
        "plain::edited",
        "--report",
        "report.json",
    ];
    let run = scratch.run_example(FIXTURE, &args, &[("OPENAI_BASE_URL", &url)]);
    let context = run.context();
    assert_eq!(run.code(), Some(0), "{context}");
    let report_1 = report(&scratch);
    for (trial, var) in [
        ("plain::similarity", "GOOGLE_API_KEY"),
        ("plain::judge", "ANTHROPIC_API_KEY"),
    ] {
        assert!(
            run.outcome(trial).starts_with("ignored"),
            "{trial}: {context}"
        );
        let (status, message) = status(&report_1, trial);
        assert_eq!(status, "ignored", "{trial}: {message}");
        assert!(message.contains(var), "{trial}: {message}");
    }

    // Under CI: the subjects replay, the other calls were never recorded.
    let run = scratch.run_example(FIXTURE, &args, &[("OPENAI_BASE_URL", &url), ("CI", "1")]);
    let context = run.context();
    assert_eq!(run.code(), Some(101), "{context}");
    let report_2 = report(&scratch);
    let (status_s, similarity) = status(&report_2, "plain::similarity");
    assert_eq!(status_s, "errored", "{similarity}");
    assert!(
        similarity.contains("no recording for this call in")
            && similarity.contains("Under CI, auto mode never calls a provider"),
        "{similarity}"
    );
    let (status_j, judge) = status(&report_2, "plain::judge");
    assert_eq!(status_j, "errored", "{judge}");
    assert!(
        judge.contains("It was never recorded: the sample's recordings hold no judge call."),
        "{judge}"
    );
    child::assert_lacks(&judge, "changed since it was recorded");
    assert_eq!(run.outcome("plain::judge"), "FAILED", "{context}");
}

/// An edited prompt, offline, in auto mode: the call fails to connect, and the error says the
/// recording is stale with the same changes and record command as under CI (it said only "cannot
/// connect" before).
#[test]
fn offline_after_an_edit_the_stale_recording_is_named_as_under_ci() {
    let scratch = Scratch::new("outcomes", "offline");
    scratch.config(RETRY);
    let server = failing_all_but_the_subject();
    let url = server.base_url(Wire::OpenAi);
    let args = ["--exact", "plain::edited", "--report", "report.json"];
    let run = scratch.run_example(FIXTURE, &args, &[("OPENAI_BASE_URL", &url)]);
    run.assert_success();
    server.shutdown();

    let edited = |env: &[(&str, &str)]| -> (Run, String) {
        let mut vars = vec![
            ("OPENAI_BASE_URL", url.as_str()),
            ("FIXTURE_THING", "shape"),
        ];
        vars.extend_from_slice(env);
        let run = scratch.run_example(FIXTURE, &args, &vars);
        let (status, message) = status(&report(&scratch), "plain::edited");
        assert_eq!(status, "errored", "{message}\n{}", run.context());
        (run, message)
    };
    let (_, offline) = edited(&[]);
    let (_, under_ci) = edited(&[("CI", "1")]);
    let stale = under_ci
        .strip_prefix("model call failed: ")
        .unwrap_or_else(|| panic!("{under_ci}"));
    assert!(
        stale.contains("has 1 recording(s) of this sample but none for this call")
            && stale.contains("Changed since it was recorded: ")
            && stale.contains("colour")
            && stale.contains("Record the new answers as pending with: "),
        "{stale}"
    );
    assert!(
        offline.starts_with("model call failed: openai: "),
        "{offline}"
    );
    assert!(
        offline.ends_with(&format!(". {stale}")),
        "{offline}\n{stale}"
    );
}
