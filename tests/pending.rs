//! Pending recordings end to end, as a user meets them: record a test, change its prompt, run with a
//! key (the call is made, the answer goes pending, the committed cassette stays byte-identical, the
//! summary says what to review, a prune refuses), then accept (the replay passes offline) or reject
//! (the old recording stays and the replay fails as stale, naming what changed). Also: under CI a
//! pending folder takes the new answers, and `--accept` writes them straight into the cassette.

use prompt_tester::_cargo_prompt_tester_support::{Layout, SampleId};
use prompt_tester_testkit::FakeProvider;
use prompt_tester_testkit::child::{Run, Scratch};

const FIXTURE: &str = "harness_fixture";
const TEST: &str = "fake_recorded";

fn scratch(name: &str, server: &FakeProvider) -> Scratch {
    let scratch = Scratch::new("pending", name);
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\n",
        server.base_url(prompt_tester_testkit::Wire::OpenAi)
    ));
    scratch
}

/// Runs the fixture's `fake_recorded` (two samples) with its prompt's input `thing`.
fn run(scratch: &Scratch, thing: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut all = vec![TEST, "--exact"];
    all.extend_from_slice(args);
    let mut vars = vec![("FIXTURE_THING", thing)];
    vars.extend_from_slice(env);
    scratch.run_example(FIXTURE, &all, &vars)
}

fn cassette(scratch: &Scratch) -> std::path::PathBuf {
    scratch.cassettes().join(format!("{TEST}.cassette.json"))
}

fn pending(scratch: &Scratch) -> std::path::PathBuf {
    scratch.cassettes().join(format!("{TEST}.pending.json"))
}

/// Records the test with `colour`, then runs it with `shape` locally: the answers go pending.
fn recorded_then_changed(name: &str, server: &FakeProvider) -> (Scratch, Vec<u8>) {
    let scratch = scratch(name, server);
    run(&scratch, "colour", &[], &[]).assert_success();
    assert!(!pending(&scratch).exists(), "a first recording goes in");
    let accepted = std::fs::read(cassette(&scratch)).unwrap();
    let calls = server.request_count();
    let changed = run(&scratch, "shape", &[], &[]);
    changed.assert_success();
    assert_eq!(
        server.request_count(),
        calls + 2,
        "locally with a key, the stale calls are made"
    );
    assert_eq!(
        std::fs::read(cassette(&scratch)).unwrap(),
        accepted,
        "the committed cassette is byte-identical"
    );
    assert!(pending(&scratch).exists(), "{}", changed.stderr());
    changed.assert_stderr_has(
        "1 test(s) have pending recordings (2 sample(s)): review them with `cargo prompt-tester review`",
    );
    (scratch, accepted)
}

fn layout(scratch: &Scratch) -> Layout {
    Layout::of(scratch.path(), None).unwrap()
}

#[test]
fn a_changed_prompt_goes_pending_and_accepting_it_makes_the_replay_pass_offline() {
    let server = FakeProvider::start();
    let (scratch, accepted) = recorded_then_changed("accept", &server);

    // A prune refuses while answers wait for review, and changes nothing.
    let prune = scratch.run_example(FIXTURE, &["--prune-cassettes"], &[]);
    prune
        .assert_stderr_has("--prune-cassettes refused: recordings are pending review in 1 file(s)");
    assert_eq!(std::fs::read(cassette(&scratch)).unwrap(), accepted);

    // What is pending, as the subcommand reads it: both samples, with the calls they replace.
    let files = layout(&scratch).pending().unwrap();
    assert_eq!(files.len(), 1);
    let ids: Vec<&SampleId> = files[0].samples.iter().map(|s| &s.id).collect();
    assert_eq!(
        ids.iter()
            .map(|s| (s.test.as_str(), s.run))
            .collect::<Vec<_>>(),
        [(TEST, 1), (TEST, 2)]
    );
    assert!(
        files[0]
            .samples
            .iter()
            .all(|s| s.old.len() == 1 && s.new.len() == 1)
    );

    files[0].accept(|_| true).unwrap();
    assert!(!pending(&scratch).exists(), "nothing left to review");
    drop(server);
    let replay = run(&scratch, "shape", &[], &[("CI", "true")]);
    replay.assert_success();
    replay.assert_stderr_has("(2 replayed from cassettes)");
}

#[test]
fn rejecting_keeps_the_old_recording_and_the_replay_fails_naming_what_changed() {
    let server = FakeProvider::start();
    let (scratch, accepted) = recorded_then_changed("reject", &server);
    let files = layout(&scratch).pending().unwrap();
    files[0].reject(|_| true).unwrap();
    assert!(!pending(&scratch).exists());
    assert_eq!(std::fs::read(cassette(&scratch)).unwrap(), accepted);
    drop(server);
    let stale = run(&scratch, "shape", &[], &[("CI", "true")]);
    assert_eq!(stale.code(), Some(101), "{}", stale.stdout());
    stale.assert_stdout_has(
        "Changed since it was recorded: prompt: -\"Name a colour.\" +\"Name a shape.\"",
    );
    stale.assert_stdout_has("(then review them: cargo prompt-tester review)");
    // The old prompt still replays.
    run(&scratch, "colour", &[], &[("CI", "true")]).assert_success();
}

#[test]
fn under_ci_a_pending_folder_takes_the_new_answers_and_nothing_else_changes() {
    let server = FakeProvider::start();
    let scratch = scratch("ci-folder", &server);
    run(&scratch, "colour", &[], &[]).assert_success();
    let accepted = std::fs::read(cassette(&scratch)).unwrap();
    let folder = scratch.path().join("artifacts");
    let folder_var = folder.to_string_lossy().into_owned();
    // Under CI without a pending folder a stale call fails without calling.
    let calls = server.request_count();
    let refused = run(&scratch, "shape", &[], &[("CI", "true")]);
    assert_eq!(refused.code(), Some(101));
    assert_eq!(server.request_count(), calls, "CI never makes a stale call");
    // With one (and a key: this endpoint needs none), the calls are made and land only there.
    let nightly = run(
        &scratch,
        "shape",
        &[],
        &[("CI", "true"), ("PROMPT_TESTER_PENDING_DIR", &folder_var)],
    );
    nightly.assert_success();
    assert_eq!(server.request_count(), calls + 2);
    assert_eq!(std::fs::read(cassette(&scratch)).unwrap(), accepted);
    assert!(!pending(&scratch).exists());
    assert!(folder.join(format!("{TEST}.pending.json")).exists());
    // Brought to another machine, the folder is read back and accepted.
    let files = Layout::of(scratch.path(), Some(folder.clone()))
        .unwrap()
        .pending()
        .unwrap();
    assert_eq!(files[0].samples.len(), 2);
    files[0].accept(|s| s.run == 1).unwrap();
    assert_eq!(
        Layout::of(scratch.path(), Some(folder))
            .unwrap()
            .pending()
            .unwrap()[0]
            .samples
            .len(),
        1,
        "the other sample is still pending"
    );
}

#[test]
fn accept_and_record_write_the_new_answers_straight_into_the_cassette() {
    let server = FakeProvider::start();
    let scratch = scratch("accept-flag", &server);
    run(&scratch, "colour", &[], &[]).assert_success();
    // `--record` asks again: the same requests, new answers, pending.
    run(&scratch, "colour", &["--record"], &[]).assert_success();
    assert!(
        pending(&scratch).exists(),
        "--record writes replacements pending"
    );
    // With --accept (or PROMPT_TESTER_ACCEPT=1) they go into the cassette, each sample whole.
    run(&scratch, "shape", &["--accept"], &[]).assert_success();
    run(&scratch, "planet", &[], &[("PROMPT_TESTER_ACCEPT", "1")]).assert_success();
    let text = std::fs::read_to_string(cassette(&scratch)).unwrap();
    assert!(
        text.contains("Name a planet.") && !text.contains("Name a shape."),
        "{text}"
    );
    assert!(
        !text.contains("Name a colour."),
        "replaced samples leave nothing behind"
    );
    // An unknown value is an error naming the variable.
    let bad = run(&scratch, "planet", &[], &[("PROMPT_TESTER_ACCEPT", "yes")]);
    assert_eq!(bad.code(), Some(2));
    bad.assert_stderr_has("PROMPT_TESTER_ACCEPT");
}
