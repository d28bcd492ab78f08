//! The commands without a terminal: `pending [--json]`, `accept`, `reject`, where they find the
//! files (`prompt-tester.toml`, `--manifest-path`, `--pending-dir`, `PROMPT_TESTER_PENDING_DIR`), and
//! `review`'s refusal without a terminal.

use std::path::Path;

use prompt_tester_testkit::child::{assert_contains, assert_lacks};
use serde_json::Value;

use super::{Fixture, keys};

fn json(run: &prompt_tester_testkit::child::Run) -> Vec<Value> {
    run.assert_success();
    let value: Value = serde_json::from_str(&run.stdout())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", run.context()));
    value.as_array().expect("an array").clone()
}

fn ends_with(value: &Value, path: &str) -> bool {
    Path::new(value.as_str().unwrap_or_default()).ends_with(path)
}

#[test]
fn pending_json_has_an_object_per_test_and_sample() {
    let fixture = Fixture::new("json");
    let rows = json(&fixture.run(&["pending", "--json"]));
    let found: Vec<(String, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["test"].as_str().unwrap().into(),
                r["sample"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("quick::greet".into(), 1),
            ("quick::greet".into(), 2),
            ("suite::case_a".into(), 1)
        ]
    );
    let first = &rows[0];
    assert!(
        ends_with(
            &first["cassette"],
            "prompt-tests/cassettes/quick.cassette.json"
        ),
        "{first}"
    );
    assert!(
        ends_with(
            &first["pending"],
            "prompt-tests/cassettes/quick.pending.json"
        ),
        "{first}"
    );
    assert_eq!(
        (first["calls"].as_u64(), first["accepted_calls"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(
        first["changes"],
        serde_json::json!([
            r#"subject call 1: prompt: -"Say hi to Alice." +"Say hello to Alice.""#
        ])
    );
    assert_eq!(
        rows[2]["changes"],
        serde_json::json!(["subject call 1: the same request, answered again"])
    );
}

#[test]
fn pending_prints_a_line_per_sample_or_says_there_is_none() {
    let fixture = Fixture::new("lines");
    let run = fixture.run(&["pending"]);
    run.assert_success();
    let out = run.stdout();
    assert_contains(
        &out,
        &[
            "quick::greet (run 1): 2 call(s), replacing 2 · cassette prompt-tests/cassettes/quick.cassette.json · pending prompt-tests/cassettes/quick.pending.json",
            "quick::greet (run 2): 1 call(s), replacing 1",
            "suite::case_a (run 1): 1 call(s), replacing 1",
            "3 pending sample(s): review them with `cargo prompt-tester review`",
        ],
    );
    fixture.run(&["reject"]).assert_success();
    fixture.succeeds_saying(
        &["pending"],
        &["no pending recordings (in prompt-tests/cassettes)"],
    );
    assert_eq!(
        json(&fixture.run(&["pending", "--json"])),
        Vec::<Value>::new()
    );
}

#[test]
fn accept_by_filter_replaces_those_samples_and_keeps_the_rest() {
    let fixture = Fixture::new("accept");
    let (quick, suite) = (fixture.cassette("quick"), fixture.cassette("suite"));
    let suite_before = std::fs::read(&suite).unwrap();
    fixture.succeeds_saying(
        &["accept", "greet"],
        &[
            "accepted quick::greet (run 1) into prompt-tests/cassettes/quick.cassette.json",
            "accepted quick::greet (run 2) into prompt-tests/cassettes/quick.cassette.json",
            "accepted 2 sample(s)",
        ],
    );
    let held = keys(&quick);
    for new in &fixture.new[..3] {
        assert!(
            held.contains(&new.key),
            "{} not accepted: {held:?}",
            new.key
        );
    }
    for old in &fixture.old[..3] {
        assert!(
            !held.contains(&old.key),
            "{} not replaced: {held:?}",
            old.key
        );
    }
    assert!(
        held.contains(&fixture.old[3].key),
        "quick::other lost: {held:?}"
    );
    assert_eq!(held.len(), 4, "{held:?}");
    assert!(
        !fixture.pending("quick").exists(),
        "an empty pending file stays"
    );
    assert_eq!(
        std::fs::read(&suite).unwrap(),
        suite_before,
        "another cassette changed"
    );
    assert!(fixture.pending("suite").exists());
}

#[test]
fn exact_takes_the_whole_name_only() {
    let fixture = Fixture::new("exact");
    fixture.succeeds_saying(
        &["accept", "--exact", "quick::gree"],
        &["no pending recordings match \"quick::gree\""],
    );
    assert!(fixture.pending("quick").exists());
    fixture.succeeds_saying(
        &["accept", "suite::case_a", "--exact"],
        &["accepted suite::case_a (run 1)", "accepted 1 sample(s)"],
    );
    assert_eq!(
        keys(&fixture.cassette("suite")),
        [fixture.new[3].key.clone()]
    );
    assert_eq!(
        keys(&fixture.pending("quick")).len(),
        3,
        "quick's pending file changed"
    );
}

#[test]
fn reject_keeps_the_cassette_and_deletes_the_pending_samples() {
    let fixture = Fixture::new("reject");
    let quick = fixture.cassette("quick");
    let before = std::fs::read(&quick).unwrap();
    fixture.succeeds_saying(
        &["reject", "greet"],
        &[
            "rejected quick::greet (run 1) for prompt-tests/cassettes/quick.cassette.json",
            "rejected 2 sample(s)",
        ],
    );
    assert_eq!(
        std::fs::read(&quick).unwrap(),
        before,
        "reject changed the cassette"
    );
    assert!(!fixture.pending("quick").exists());
    assert!(
        fixture.pending("suite").exists(),
        "reject greet rejected another test"
    );
}

#[test]
fn pending_recordings_from_another_folder_by_flag_or_variable() {
    let fixture = Fixture::in_folders("pending-dir", "prompt-tests/cassettes", Some("artifact"));
    // Nothing beside the cassettes.
    assert_contains(
        &fixture.run(&["pending"]).stdout(),
        &["no pending recordings"],
    );
    let rows = json(&fixture.run(&["pending", "--json", "--pending-dir", "artifact"]));
    assert_eq!(rows.len(), 3);
    assert!(
        ends_with(&rows[0]["pending"], "artifact/quick.pending.json"),
        "{}",
        rows[0]
    );
    assert!(ends_with(
        &rows[0]["cassette"],
        "prompt-tests/cassettes/quick.cassette.json"
    ));
    // The variable, as the harness reads it, relative to the crate root.
    let mut command = fixture
        .command(&["prompt-tester", "pending", "--json"])
        .env("PROMPT_TESTER_PENDING_DIR", "artifact")
        .command();
    command.current_dir(fixture.root().join("prompt-tests"));
    let run = prompt_tester_testkit::child::Run(command.output().unwrap());
    assert_eq!(json(&run).len(), 3);
    let run = fixture.run(&["accept", "--pending-dir", "artifact", "case_a"]);
    run.assert_success();
    assert_eq!(
        keys(&fixture.cassette("suite")),
        [fixture.new[3].key.clone()]
    );
    assert!(!fixture.root().join("artifact/suite.pending.json").exists());
}

#[test]
fn the_cassette_dir_of_prompt_tester_toml_and_the_manifest_path() {
    let fixture = Fixture::in_folders("config", "recordings", None);
    fixture.scratch.config("cassette_dir = \"recordings\"\n");
    let rows = json(&fixture.run(&["pending", "--json"]));
    assert_eq!(rows.len(), 3);
    assert!(
        ends_with(&rows[0]["cassette"], "recordings/quick.cassette.json"),
        "{}",
        rows[0]
    );
    // From elsewhere, naming the crate by its manifest.
    let manifest = fixture.root().join("Cargo.toml");
    let mut command = fixture
        .command(&["prompt-tester", "--manifest-path"])
        .args([manifest.as_os_str()])
        .args(["accept", "greet"])
        .command();
    command.current_dir(std::env::temp_dir());
    let run = prompt_tester_testkit::child::Run(command.output().unwrap());
    run.assert_success();
    assert_contains(&run.stdout(), &["accepted 2 sample(s)"]);
    assert!(
        !fixture
            .root()
            .join("recordings/quick.pending.json")
            .exists()
    );
    // A broken configuration is named, and nothing is touched.
    fixture.scratch.config("cassette_dir = 3\n");
    let run = fixture.run(&["reject"]);
    assert_eq!(run.code(), Some(1), "{}", run.context());
    assert_contains(&run.stderr(), &["prompt-tester.toml", "cassette_dir"]);
    assert!(
        fixture
            .root()
            .join("recordings/suite.pending.json")
            .exists()
    );
}

#[test]
fn review_without_a_terminal_refuses_and_names_the_other_commands() {
    let fixture = Fixture::new("no-terminal");
    let before = std::fs::read(fixture.pending("quick")).unwrap();
    let run = fixture.run(&["review"]);
    assert_eq!(run.code(), Some(2), "{}", run.context());
    assert_contains(
        &run.stderr(),
        &[
            "needs a terminal",
            "cargo prompt-tester pending",
            "cargo prompt-tester accept [FILTER]",
            "cargo prompt-tester reject [FILTER]",
        ],
    );
    assert_lacks(&run.stdout(), "pending 1 of");
    assert_eq!(std::fs::read(fixture.pending("quick")).unwrap(), before);
}

#[test]
fn a_broken_pending_file_is_named_with_its_line_and_nothing_is_settled() {
    let fixture = Fixture::new("broken");
    std::fs::write(
        fixture.pending("quick"),
        "{\"version\": 1,\n \"entries\": [\n<<<<<<< HEAD\n",
    )
    .unwrap();
    let cassette = std::fs::read(fixture.cassette("quick")).unwrap();
    for command in [&["pending"][..], &["accept"], &["reject", "greet"]] {
        let run = fixture.run(command);
        assert_eq!(run.code(), Some(1), "{command:?}: {}", run.context());
        assert_contains(
            &run.stderr(),
            &[
                "error: cassette ",
                "prompt-tests/cassettes/quick.pending.json:3 is not valid",
                "merge conflict markers",
            ],
        );
    }
    assert_eq!(std::fs::read(fixture.cassette("quick")).unwrap(), cassette);
    assert!(
        fixture.pending("suite").exists(),
        "accept went on past the broken file"
    );
}
