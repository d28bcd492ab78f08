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
    let page = scratch.path().join("report.html");
    let page_arg = page.to_string_lossy().into_owned();
    let changed = run(
        &scratch,
        "shape",
        &["--html", &page_arg, "--markdown", "summary.md"],
        &[],
    );
    changed.assert_success();
    // The Markdown summary names the test and its samples waiting for review.
    let summary = std::fs::read_to_string(scratch.path().join("summary.md")).unwrap();
    let at = summary
        .find("### Pending recordings: 1 test(s), 2 sample(s)\n")
        .unwrap_or_else(|| panic!("no pending section:\n{summary}"));
    assert!(
        summary[at..].contains("\n| fake\\_recorded | 2 |\n"),
        "{summary}"
    );
    // The report shows each pending sample's accepted and new answers side by side, with the checks.
    let html = std::fs::read_to_string(&page).unwrap();
    let data = prompt_tester::testing::read_html_data(&html).expect("the page's data");
    let rows = data["pending"]["rows"].as_array().expect("a pending table");
    assert_eq!(rows.len(), 2, "{}", data["pending"]);
    assert_eq!(rows[0][0], TEST);
    assert!(
        rows[0][2].as_str().unwrap().contains("colour"),
        "{}",
        rows[0]
    );
    assert!(
        rows[0][3].as_str().unwrap().contains("shape"),
        "{}",
        rows[0]
    );
    assert!(
        rows[0][5].as_str().unwrap().starts_with("passed"),
        "{}",
        rows[0]
    );
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

/// A suite `stress` of `cases` cases, two runs each; each case's input ends in `version`.
fn stress_suite(scratch: &Scratch, cases: usize, version: &str) {
    let mut text = String::from(
        "prompt = \"Name a {thing}.\"\nprovider = \"fake\"\nmodel = \"fake-model\"\nruns = 2\n",
    );
    for i in 1..=cases {
        text.push_str(&format!(
            "[[cases]]\nname = \"c{i:02}\"\ninputs = {{ thing = \"thing {i} {version}\" }}\n\
             assert = [{{ contains = \"echo: Name a\" }}]\n"
        ));
    }
    scratch.file("prompt-tests/stress.evals.toml", &text);
}

/// The prompts of every entry of a cassette or pending file, sorted.
fn prompts_in(file: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut prompts: Vec<String> = body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let text = &e["request"]["messages"][0]["content"][0]["text"];
            format!(
                "{}#{} {}",
                e["test"].as_str().unwrap(),
                e["run"],
                text.as_str().unwrap()
            )
        })
        .collect();
    prompts.sort();
    prompts
}

#[test]
fn many_processes_writing_pending_answers_while_accept_runs_lose_none() {
    // As nextest runs it: one process per case, each writing its new answers into the suite's one
    // pending file, while `accept` keeps taking what is there into the cassette.
    const CASES: usize = 16;
    let server = FakeProvider::builder()
        .latency(std::time::Duration::from_millis(100))
        .start();
    let scratch = scratch("stress", &server);
    stress_suite(&scratch, CASES, "v1");
    scratch
        .run_example("cassette_fixture", &[], &[])
        .assert_success();
    let cassette = scratch.cassettes().join("stress.cassette.json");
    let pending = scratch.cassettes().join("stress.pending.json");
    stress_suite(&scratch, CASES, "v2");
    let children: Vec<_> = (1..=CASES)
        .map(|i| {
            let trial = format!("stress::c{i:02}");
            scratch
                .command("cassette_fixture", &["--exact", &trial], &[])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("the fixture starts")
        })
        .collect();
    let layout = layout(&scratch);
    let mut accepted_rounds = 0;
    let mut running = children;
    let mut finished = Vec::new();
    while !running.is_empty() {
        for file in layout.pending().unwrap() {
            if !file.accept(|_| true).unwrap().samples.is_empty() {
                accepted_rounds += 1;
            }
        }
        let (done, still) = running.into_iter().partition_map_done();
        finished.extend(done);
        running = still;
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for out in finished {
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for file in layout.pending().unwrap() {
        file.accept(|_| true).unwrap();
    }
    eprintln!("accepted while the run wrote, in {accepted_rounds} round(s)");
    assert!(
        accepted_rounds > 0,
        "accept never ran while the processes wrote: the test proves nothing"
    );
    assert!(!pending.exists(), "everything was accepted");
    let expected: Vec<String> = {
        let mut all: Vec<String> = (1..=CASES)
            .flat_map(|i| {
                (1..=2).map(move |run| format!("stress::c{i:02}#{run} Name a thing {i} v2."))
            })
            .collect();
        all.sort();
        all
    };
    assert_eq!(
        prompts_in(&cassette),
        expected,
        "every new answer is in, no old one is left"
    );
}

/// Children split into the finished (with their output) and the running.
trait PartitionDone {
    fn partition_map_done(self) -> (Vec<std::process::Output>, Vec<std::process::Child>);
}

impl PartitionDone for std::vec::IntoIter<std::process::Child> {
    fn partition_map_done(self) -> (Vec<std::process::Output>, Vec<std::process::Child>) {
        let mut done = Vec::new();
        let mut running = Vec::new();
        for mut child in self {
            match child.try_wait().expect("the child can be waited on") {
                Some(_) => done.push(child.wait_with_output().unwrap()),
                None => running.push(child),
            }
        }
        (done, running)
    }
}
