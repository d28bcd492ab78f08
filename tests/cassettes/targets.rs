//! Two test targets of one crate sharing its cassette directory, as `prompts` and `agents` do: each
//! prunes only the recordings it made, and two tests of one name keep their recordings apart.

use super::*;

/// The targets: each has a test of its own (`plan_day`, `plan_trip`) and `greet`, the same call in both.
const PROMPTS: &str = "two_targets_prompts";
const AGENTS: &str = "two_targets_agents";

const KEY: (&str, &str) = ("FAKE_API_KEY", SECRET);

/// A scratch root in which both targets recorded every test; its `[defaults]` are the subject their
/// tests call.
fn recorded_targets(name: &str, server: &FakeProvider) -> Scratch {
    let defaults = "[defaults]\nprovider = \"fake\"\nmodel = \"fake-model\"\n";
    let scratch = scratch_with_fake_and(name, server, defaults);
    for target in [PROMPTS, AGENTS] {
        scratch
            .run_example(target, &["--record"], &[KEY])
            .assert_success();
    }
    scratch
}

/// The `target` of every entry of a cassette file, sorted (`-` for none).
fn targets_in(file: &Path) -> Vec<String> {
    let mut targets: Vec<String> = entries(file)
        .iter()
        .map(|e| e["target"].as_str().unwrap_or("-").to_string())
        .collect();
    targets.sort();
    targets
}

/// The example `name` as cargo built it, `examples/<name>-<16 hex digits>` (the hard link without the
/// hash is what the other tests run): a test target runs with such a name.
fn hashed_binary(name: &str) -> PathBuf {
    let dir = prompt_tester_testkit::child::profile_dir().join("examples");
    prompt_tester_testkit::child::newest_hashed(&dir, name)
        .unwrap_or_else(|| panic!("no {name}-<hash> in {}", dir.display()))
}

#[test]
fn a_prune_of_one_target_removes_only_its_own_recordings() {
    let server = FakeProvider::start();
    let scratch = recorded_targets("two-targets", &server);
    let dir = scratch.cassettes();
    let (day, trip, greet) = (
        dir.join("plan_day.cassette.json"),
        dir.join("plan_trip.cassette.json"),
        dir.join("greet.cassette.json"),
    );
    let before = snapshot(&scratch);

    // The reproduction: `prompts` prunes after a full run. `plan_trip` is not its to remove. Run as
    // `cargo test` runs a target, under its hashed name.
    let pruned = scratch
        .child(hashed_binary(PROMPTS))
        .args(["--prune-cassettes"])
        .run();
    pruned.assert_success();
    assert_eq!(
        lines_with(&pruned.stderr(), "cassette.json"),
        Vec::<String>::new()
    );
    assert_eq!(snapshot(&scratch), before, "a prune changed a cassette");
    assert_eq!(targets_in(&trip), [AGENTS]);
    assert_eq!(
        targets_in(&greet),
        [AGENTS, PROMPTS],
        "one call, recorded by each target: kept apart"
    );

    // `plan_day` changes its input and records anew (accepted at once: the sample is replaced as a
    // whole); a recording of a sample it no longer takes is left over, unused, and goes alone.
    let week = ("FIXTURE_THING", "week");
    scratch
        .run_example(PROMPTS, &["plan_day", "--record", "--accept"], &[KEY, week])
        .assert_success();
    assert_eq!(entries(&day).len(), 1);
    let mut body: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&day).unwrap()).unwrap();
    let mut leftover = body["entries"][0].clone();
    leftover["key"] = "000000000000000000000000".into();
    leftover["run"] = 2.into();
    body["entries"].as_array_mut().unwrap().push(leftover);
    std::fs::write(&day, serde_json::to_string_pretty(&body).unwrap()).unwrap();
    assert_eq!(entries(&day).len(), 2);
    // A file of a test that is gone, held by both targets: only `prompts`'s recording goes.
    let gone = dir.join("gone.cassette.json");
    std::fs::copy(&greet, &gone).unwrap();
    let pruned = scratch.run_example(PROMPTS, &["--prune-cassettes"], &[week]);
    pruned.assert_success();
    assert_eq!(
        lines_with(&pruned.stderr(), "cassette.json"),
        [
            "pruned 1 unused recording(s) from prompt-tests/cassettes/plan_day.cassette.json (1 kept)",
            "pruned 1 recording(s) of `two_targets_prompts` from prompt-tests/cassettes/gone.cassette.json: no \
             test of it uses them (1 of other targets kept)",
        ],
        "{}",
        pruned.stderr()
    );
    assert_eq!(targets_in(&gone), [AGENTS]);
    assert_eq!(targets_in(&greet), [AGENTS, PROMPTS]);

    // `agents` replays everything offline and prunes what is its: `gone` now holds its alone.
    drop(server);
    let replay = scratch.run_example(AGENTS, &["--prune-cassettes"], &[]);
    replay.assert_success();
    replay.assert_stderr_has("(2 replayed from cassettes)");
    assert_eq!(
        lines_with(&replay.stderr(), "cassette.json"),
        ["removed prompt-tests/cassettes/gone.cassette.json (1 recording(s); no test uses it)"]
    );
    assert!(day.exists() && trip.exists() && greet.exists());
    let replay = scratch.run_example(PROMPTS, &[], &[week]);
    replay.assert_success();
    replay.assert_stderr_has("(2 replayed from cassettes)");
}
