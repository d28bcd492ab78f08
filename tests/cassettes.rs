//! Cassettes end to end: record against a loopback provider, replay with it stopped, detect a changed
//! prompt, ignore a trial with neither recording nor key, redact secrets, prune unused entries.

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
fn without_recording_or_key_the_trial_is_ignored_with_the_command_to_record() {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake("nokey", &server);
    let run = scratch.run(&["fake_recorded", "--exact"], &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stdout());
    let line = run
        .stdout()
        .lines()
        .find(|l| l.starts_with("test fake_recorded"))
        .unwrap()
        .to_string();
    assert!(line.contains("ignored (no recording in prompt-tests/cassettes/fake_recorded.cassette.json and FAKE_API_KEY is not set; record it with: FAKE_API_KEY=... PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- fake_recorded"), "{line}");
    assert_eq!(server.request_count(), 0);

    // With cassettes off the call is made, and the missing key is a failure, not a silent skip.
    let off = scratch.run(&["fake_recorded", "--exact", "--no-cassette"], &[]);
    assert_eq!(off.code(), Some(101));
    assert!(
        off.stdout().contains("FAKE_API_KEY is not set"),
        "{}",
        off.stdout()
    );
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
fn auto_mode_records_when_a_key_is_set_but_never_writes_under_ci() {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake("auto", &server);
    let file = scratch.cassettes().join("fake_recorded.cassette.json");
    let ci = scratch.run(
        &["fake_recorded", "--exact"],
        &[("FAKE_API_KEY", SECRET), ("CI", "true")],
    );
    assert_eq!(ci.code(), Some(0), "{}", ci.stdout());
    assert_eq!(server.request_count(), 2);
    assert!(!file.exists(), "auto mode wrote a cassette under CI");
    let local = scratch.run(
        &["fake_recorded", "--exact"],
        &[("FAKE_API_KEY", SECRET), ("CI", "false")],
    );
    assert_eq!(local.code(), Some(0), "{}", local.stdout());
    assert!(file.exists(), "auto mode records when a key is set");
}
