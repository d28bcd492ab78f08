//! Cassettes end to end: record against a loopback provider, replay with it stopped, detect a changed
//! prompt, ignore a trial with neither recording nor key (fail it under CI), `live_only`, redact secrets,
//! prune unused entries.

mod support;

use prompt_tester_testkit::FakeProvider;
use support::Scratch;

const SECRET: &str = "sk-fake-0123456789abcdef";

fn scratch_with_fake(name: &str, server: &FakeProvider) -> Scratch {
    let scratch = Scratch::new(name);
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"FAKE_API_KEY\"\n",
        server.base_url(prompt_tester_testkit::Wire::OpenAi)
    ));
    scratch
}

#[test]
fn record_then_replay_offline_then_detect_a_changed_prompt() {
    // The server echoes the key back: it must not reach the cassette.
    let server = FakeProvider::builder()
        .echo_text(format!("Blue, and your key is {SECRET}"))
        .start();
    let scratch = scratch_with_fake("record", &server);
    let key = [("FAKE_API_KEY", SECRET)];

    let record = scratch.run(
        &["fake_recorded", "--exact", "--record", "--nocapture"],
        &key,
    );
    assert_eq!(
        record.code(),
        Some(0),
        "{}\n{}",
        record.stdout(),
        record.stderr()
    );
    assert_eq!(server.request_count(), 2, "one call per run");
    let file = scratch.cassettes().join("fake_recorded.cassette.json");
    let text = std::fs::read_to_string(&file).expect("cassette written");
    assert!(
        !text.contains(SECRET),
        "the key leaked into the cassette:\n{text}"
    );
    assert!(text.contains("[REDACTED:FAKE_API_KEY]"), "{text}");
    assert!(!text.contains("127.0.0.1"), "no base URL in cassettes");
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    let runs: Vec<u64> = body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["run"].as_u64().unwrap())
        .collect();
    assert_eq!(runs, vec![1, 2], "two distinct recorded samples");
    // The captured request carried the key in its header only.
    let request = &server.requests()[0];
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );

    // Replay with the server gone and no key.
    drop(server);
    let replay = scratch.run(&["fake_recorded", "--exact", "--nocapture"], &[]);
    assert_eq!(
        replay.code(),
        Some(0),
        "{}\n{}",
        replay.stdout(),
        replay.stderr()
    );
    assert!(
        replay.stdout().contains("replayed=true"),
        "{}",
        replay.stdout()
    );
    assert!(
        replay.stderr().contains("(2 replayed from cassettes)"),
        "{}",
        replay.stderr()
    );

    // A changed input has no recording: it fails (even without a key) and says how to re-record.
    let changed = scratch.run(&["fake_recorded", "--exact"], &[("FIXTURE_THING", "shape")]);
    assert_eq!(changed.code(), Some(101), "{}", changed.stdout());
    assert!(
        changed.stdout().contains(
            "fake_recorded.cassette.json has 2 recording(s) but none for this call (subject call of run 1/2). \
             The prompt or the case inputs changed since it was recorded. Re-record with: \
             PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- fake_recorded"
        ),
        "{}",
        changed.stdout()
    );

    // Replay-only mode with a missing recording fails too.
    let strict = scratch.run(
        &["fake_recorded", "--exact"],
        &[
            ("FIXTURE_THING", "shape"),
            ("PROMPT_TESTER_CASSETTE", "replay"),
        ],
    );
    assert_eq!(strict.code(), Some(101));
}

#[test]
fn without_recording_or_key_the_trial_is_ignored_locally_and_fails_under_ci() {
    // `nested::fake_colour` calls OpenAI at its public URL, which needs OPENAI_API_KEY.
    let scratch = Scratch::new("nokey");
    let run = scratch.run(&["nested::fake_colour", "--exact"], &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stdout());
    let record = "OPENAI_API_KEY=... PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- nested::fake_colour";
    assert_eq!(
        run.outcome("nested::fake_colour"),
        format!(
            "ignored (no recording in prompt-tests/cassettes/nested.fake_colour.cassette.json and OPENAI_API_KEY \
             is not set; record it with: {record})"
        )
    );

    // Under CI a test nobody recorded fails, with the command that records it.
    let ci = scratch.run(&["nested::fake_colour", "--exact"], &[("CI", "true")]);
    assert_eq!(ci.code(), Some(101), "{}", ci.stdout());
    assert_eq!(ci.outcome("nested::fake_colour"), "FAILED");
    assert!(
        ci.stdout().contains(
            "no recording for this call in prompt-tests/cassettes/nested.fake_colour.cassette.json (subject call \
             of run 1/1). Under CI, auto mode never calls a provider for a missing recording"
        ) && ci.stdout().contains(record),
        "{}",
        ci.stdout()
    );

    // With cassettes off the call is made, and the missing key is a failure, not a silent skip.
    let off = scratch.run(&["nested::fake_colour", "--exact", "--no-cassette"], &[]);
    assert_eq!(off.code(), Some(101));
    assert!(
        off.stdout().contains("OPENAI_API_KEY is not set"),
        "{}",
        off.stdout()
    );
}

#[test]
fn a_named_endpoint_without_its_key_is_called_without_one() {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake("optionalkey", &server);
    let run = scratch.run(&["fake_recorded", "--exact"], &[]);
    assert_eq!(run.code(), Some(0), "{}\n{}", run.stdout(), run.stderr());
    assert_eq!(run.outcome("fake_recorded"), "ok");
    assert_eq!(
        server.request_count(),
        2,
        "auto mode records: one call per run"
    );
    for request in server.requests() {
        assert_eq!(request.header("authorization"), None, "no key is sent");
    }
    assert!(
        scratch
            .cassettes()
            .join("fake_recorded.cassette.json")
            .exists()
    );
}

#[test]
fn the_value_of_a_key_variable_of_any_name_is_redacted() {
    const PASSPHRASE: &str = "correct-horse-battery-staple";
    let server = FakeProvider::builder()
        .echo_text(format!("Blue, and your key is {PASSPHRASE}"))
        .start();
    let scratch = Scratch::new("anyname");
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"FAKE_PASSPHRASE\"\n",
        server.base_url(prompt_tester_testkit::Wire::OpenAi)
    ));
    let report = scratch.0.join("report.json");
    let run = scratch.run(
        &[
            "fake_recorded",
            "--exact",
            "--record",
            "--report",
            report.to_str().unwrap(),
        ],
        &[("FAKE_PASSPHRASE", PASSPHRASE)],
    );
    assert_eq!(run.code(), Some(0), "{}\n{}", run.stdout(), run.stderr());
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {PASSPHRASE}").as_str())
    );
    let cassette =
        std::fs::read_to_string(scratch.cassettes().join("fake_recorded.cassette.json")).unwrap();
    let report = std::fs::read_to_string(&report).unwrap();
    for (what, text) in [("cassette", &cassette), ("report", &report)] {
        assert!(
            !text.contains(PASSPHRASE),
            "the key leaked into the {what}:\n{text}"
        );
        assert!(
            text.contains("[REDACTED:FAKE_PASSPHRASE]"),
            "{what}: {text}"
        );
    }
}

#[test]
fn live_only_without_a_recording_is_ignored_in_ci_too_and_runs_live() {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake("liveonly", &server);
    for ci in ["true", "false"] {
        let run = scratch.run(
            &["fake_live_only", "--exact"],
            &[("FAKE_API_KEY", SECRET), ("CI", ci)],
        );
        assert_eq!(run.code(), Some(0), "CI={ci}: {}", run.stdout());
        let outcome = run.outcome("fake_live_only");
        assert!(
            outcome.starts_with(
                "ignored (live only, not run: no recording in prompt-tests/cassettes/fake_live_only.cassette.json; \
                 run it live with PROMPT_TESTER_CASSETTE=off"
            ),
            "CI={ci}: {outcome}"
        );
        // The summary lists it apart from the ignored trials.
        let stderr = run.stderr();
        assert!(
            stderr.contains("0 passed, 0 failed, 0 ignored, 1 live only;")
                && stderr.contains("live only, not run: fake_live_only"),
            "CI={ci}: {stderr}"
        );
        assert_eq!(server.request_count(), 0, "CI={ci}: no provider call");
    }

    // A live run calls the provider, in CI too.
    let live = scratch.run(
        &["fake_live_only", "--exact", "--no-cassette"],
        &[("CI", "true")],
    );
    assert_eq!(live.code(), Some(0), "{}", live.stdout());
    assert_eq!(live.outcome("fake_live_only"), "ok");
    assert_eq!(server.request_count(), 1);

    // Once recorded, it replays like any other test.
    let record = scratch.run(&["fake_live_only", "--exact", "--record"], &[]);
    assert_eq!(record.code(), Some(0), "{}", record.stdout());
    drop(server);
    let replay = scratch.run(&["fake_live_only", "--exact"], &[("CI", "true")]);
    assert_eq!(replay.outcome("fake_live_only"), "ok");
    assert!(
        replay.stderr().contains("(1 replayed from cassettes)"),
        "{}",
        replay.stderr()
    );
}

#[test]
fn under_nextest_only_trials_that_would_be_ignored_are_flagged_up_front() {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake("nextest", &server);
    let ignored = |ci: &str| {
        let run = scratch.run(
            &["--list", "--ignored"],
            &[("NEXTEST_RUN_ID", "1"), ("CI", ci)],
        );
        run.stdout()
            .lines()
            .map(|l| l.trim_end_matches(": test").to_string())
            .collect::<Vec<_>>()
    };
    let local = ignored("false");
    assert!(local.contains(&"fake_live_only".to_string()), "{local:?}");
    assert!(
        local.contains(&"nested::fake_colour".to_string()),
        "no key: {local:?}"
    );
    // Under CI an unrecorded test must run (and fail); a live-only one is still ignored.
    let ci = ignored("true");
    assert!(ci.contains(&"fake_live_only".to_string()), "{ci:?}");
    assert!(!ci.contains(&"nested::fake_colour".to_string()), "{ci:?}");
}

#[test]
fn prune_removes_recordings_no_test_uses() {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake("prune", &server);
    let key = [("FAKE_API_KEY", SECRET)];
    let first = scratch.run(&["fake_recorded", "--exact", "--record"], &key);
    assert_eq!(first.code(), Some(0), "{}", first.stdout());
    let second = scratch.run(
        &["fake_recorded", "--exact", "--record"],
        &[("FAKE_API_KEY", SECRET), ("FIXTURE_THING", "shape")],
    );
    assert_eq!(second.code(), Some(0));
    let file = scratch.cassettes().join("fake_recorded.cassette.json");
    let count = || {
        let body: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        body["entries"].as_array().unwrap().len()
    };
    assert_eq!(count(), 4, "old and new recordings");
    // A filtered run refuses to prune (it cannot know what the other tests use).
    let filtered = scratch.run(
        &["fake_recorded", "--exact", "--prune-cassettes"],
        &[("FIXTURE_THING", "shape")],
    );
    assert!(
        filtered.stderr().contains("--prune-cassettes ignored"),
        "{}",
        filtered.stderr()
    );
    assert_eq!(count(), 4);
    // A cassette whose test is gone is removed by a full run's prune.
    let stray = scratch.cassettes().join("renamed_away.cassette.json");
    std::fs::write(&stray, "{\"version\": 1, \"entries\": []}").unwrap();
    let pruned = scratch.run(&["--prune-cassettes"], &[("FIXTURE_THING", "shape")]);
    assert!(!stray.exists(), "{}", pruned.stderr());
    assert!(
        pruned
            .stderr()
            .contains("renamed_away.cassette.json (no test uses it)"),
        "{}",
        pruned.stderr()
    );
    assert!(
        pruned.stderr().contains("pruned 2 unused recording(s)"),
        "{}",
        pruned.stderr()
    );
    assert_eq!(count(), 2);
}

#[test]
fn under_ci_auto_mode_fails_a_missing_recording_without_calling_even_with_a_key() {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake("auto", &server);
    let file = scratch.cassettes().join("fake_recorded.cassette.json");
    let ci = scratch.run(
        &["fake_recorded", "--exact"],
        &[("FAKE_API_KEY", SECRET), ("CI", "true")],
    );
    assert_eq!(ci.code(), Some(101), "{}", ci.stdout());
    assert_eq!(ci.outcome("fake_recorded"), "FAILED");
    assert!(
        ci.stdout().contains(
            "record it and commit the cassette: PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- \
             fake_recorded"
        ),
        "{}",
        ci.stdout()
    );
    assert_eq!(server.request_count(), 0, "no provider call under CI");
    assert!(!file.exists(), "auto mode wrote a cassette under CI");
    let local = scratch.run(
        &["fake_recorded", "--exact"],
        &[("FAKE_API_KEY", SECRET), ("CI", "false")],
    );
    assert_eq!(local.code(), Some(0), "{}", local.stdout());
    assert!(file.exists(), "auto mode records when a key is set");
    // Recorded, it replays under CI.
    let replay = scratch.run(&["fake_recorded", "--exact"], &[("CI", "true")]);
    assert_eq!(replay.code(), Some(0), "{}", replay.stdout());
    assert_eq!(server.request_count(), 2);
}
