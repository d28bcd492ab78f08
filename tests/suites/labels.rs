//! Labels of the suite's own outputs, end to end: a recorded suite, `cargo prompt-tester label --random`
//! answering from standard input (the labels written beside the suite file), then a replay whose summary and JSON report correct the pass rate with
//! the labels (the prediction-powered estimate); labels not drawn at random leave it alone; a broken
//! labels file is an error naming its file, line and key.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use prompt_tester_testkit::{FakeProvider, Reply, Wire};

use super::*;

/// Two cases of four samples each, the judge asked one question on each sample.
// Each case asks its own subject call: identical calls are made once per run, and which case's
// samples then hold the recording would depend on timing (and so would the samples a seed draws).
const SUITE: &str = r#"prompt = "Serve tea{how}"
runs = 4
pass_threshold = 0.5

[[cases]]
name = "names_alice"
inputs = { how = "" }
assert = [{ judge = "Is Alice mentioned?" }]

[[cases]]
name = "is_polite"
inputs = { how = ", politely" }
assert = [{ judge = "Is it polite?" }]
"#;

/// The subject serves tea; the judge (`judge-model`) says yes to every question.
fn yes_judge() -> FakeProvider {
    FakeProvider::builder()
        .respond_with(|request| {
            let model = request.model().unwrap_or_default();
            if !model.contains("judge") {
                return Reply::answer(request, "Alice serves your tea.");
            }
            let one = serde_json::json!({"question_type": "factual_presence", "reasoning": "Looked.", "snippet": null, "answer": "yes"});
            Reply::text(
                Wire::OpenAi,
                &model,
                &one.to_string(),
                prompt_tester_testkit::Usage::new(100, 10),
            )
        })
        .start()
}

/// The `cargo-prompt-tester` binary of this checkout, built if need be.
fn subcommand() -> std::path::PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    child::built_binary("cargo-prompt-tester", &workspace)
}

/// Runs `cargo prompt-tester <args>` in `root`, `input` on its standard input.
fn label(root: &Path, args: &[&str], input: &str) -> child::Run {
    let binary = subcommand();
    let mut all = vec!["prompt-tester"];
    all.extend_from_slice(args);
    let mut command = Child::new(binary)
        .root(root)
        .env_remove("CARGO_MANIFEST_DIR")
        .args(&all)
        .command();
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut process = command.spawn().expect("the binary runs");
    process
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child::Run(process.wait_with_output().unwrap())
}

/// The judge's answer on the first sample of `tea::names_alice`, as the run's JSON report gives it.
fn alice_s_judge_answer(out: &Outcome) -> &Value {
    &child::entry(&out.suite("tea")["cases"], "case_id", "names_alice")["samples"][0]["judge"][0]
}

/// `answer` carries a measurement of factual_presence questions from `labels` labels, all right.
fn assert_measured(answer: &Value, labels: u32) {
    let m = &answer["measurement"];
    assert_eq!(
        (
            &m["question_type"],
            &m["accuracy"]["successes"],
            &m["accuracy"]["trials"]
        ),
        (&json!("factual_presence"), &json!(labels), &json!(labels)),
        "{answer}"
    );
}

#[test]
fn labels_drawn_at_random_correct_the_pass_rate_of_a_later_run() {
    let fake = yes_judge();
    let mut f = Fixture::calling("labels", &fake, "record");
    f.file(
        "Cargo.toml",
        "[package]\nname = \"tea\"\nversion = \"0.1.0\"\n",
    );
    f.file("prompt-tests/tea.evals.toml", SUITE);
    f.run(&["tea"]).assert_code(0);
    // Beside the suite file (`tea.evals.toml`), not in the cassette folder.
    let labels_file = f.root.join("prompt-tests/tea.labels.toml");

    // A label not drawn at random (the first sample of one case, then quit) does not enter the estimate;
    // a draw that meets its answer labels it again, at random.
    let out = label(&f.root, &["label", "tea::names_alice"], "r\nq\n");
    out.assert_code(0);
    assert!(
        out.stdout()
            .contains("labelled 1 judge answer(s) into prompt-tests/tea.labels.toml"),
        "{}",
        out.stdout()
    );

    // Three samples drawn at random: the first answer is wrong (the judge passed it, it should fail).
    let out = label(
        &f.root,
        &["label", "tea", "--random", "3", "--seed", "7"],
        "w\nmaybe\nr\nr\n",
    );
    out.assert_code(0);
    let said = out.stdout();
    assert!(said.contains("sample 1 of 3: tea::"), "{said}");
    assert!(said.contains("Alice serves your tea."), "{said}");
    assert!(
        said.contains("→ passed. Is that right? [r]ight [w]rong [s]kip [q]uit"),
        "{said}"
    );
    assert!(said.contains("\"maybe\": answer r, w, s or q"), "{said}");
    assert!(
        said.contains(
            "labelled 3 judge answer(s) drawn at random into prompt-tests/tea.labels.toml"
        ),
        "{said}"
    );
    let text = std::fs::read_to_string(&labels_file).unwrap();
    assert_eq!(text.matches("random = true").count(), 3, "{text}");
    assert_eq!(text.matches("label = \"wrong\"").count(), 1, "{text}");

    // The replay: 8 samples the judge passed; 3 labelled at random, one a false pass:
    // theta = 1 + (-1/3) = 2/3.
    f.mode = "replay";
    let out = f.run(&["tea"]);
    out.assert_code(0);
    let c = &out.suite("tea")["label_corrected"];
    assert_eq!(
        (&c["samples"], &c["labelled"], &c["stale"]),
        (&json!(8), &json!(3), &json!(0)),
        "{c}"
    );
    assert!((c["judged"].as_f64().unwrap() - 1.0).abs() < 1e-12, "{c}");
    assert!(
        (c["value"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9,
        "{c}"
    );
    let stderr = out.stderr();
    assert!(
        stderr.contains("label-corrected pass rates (prediction-powered, from labels drawn at random):\n  tea: the judge passed 100% of 8 samples; 3 labelled at random; corrected 67% (95% CI "),
        "{stderr}"
    );

    // A broken labels file: the run names its file, line and key, and fails.
    std::fs::write(&labels_file, "[[labels]]\ntrial = 1\n").unwrap();
    let out = f.run(&["tea"]);
    let stderr = out.stderr();
    assert!(
        stderr.contains("prompt-tests/tea.labels.toml has "),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "tea.labels.toml:2:9: `labels[0].trial`: expected a string, found an integer"
        ),
        "{stderr}"
    );
    assert_ne!(out.code(), Some(0), "{stderr}");

    // Labels not drawn at random measure the judge by question type, as a calibration set's items do:
    // four "right" labels of factual_presence answers by judge-model give every such verdict a measurement
    // of 4/4 (too few to clear min_accuracy 0.7: still advisory), and correct no pass rate.
    std::fs::remove_file(&labels_file).unwrap();
    let out = label(&f.root, &["label", "tea::is_polite"], "r\nr\nr\nr\n");
    out.assert_code(0);
    let text = std::fs::read_to_string(&labels_file).unwrap();
    // Each label names the judge that answered: provider and model, and its settings as the recording
    // kept them (the hash of its instructions, its temperature and max_tokens).
    assert_eq!(
        text.matches(
            "type = \"factual_presence\"\njudge = \"fake/judge-model\"\njudge_instructions = \""
        )
        .count(),
        4,
        "{text}"
    );
    assert_eq!(
        text.matches("\"\njudge_temperature = 0\njudge_max_tokens = 1024\njudge_key = \"")
            .count(),
        4,
        "{text}"
    );
    let out = f.run(&["tea"]);
    out.assert_code(0);
    let answer = alice_s_judge_answer(&out);
    assert_measured(answer, 4);
    assert_eq!(answer["advisory"]["reason"], "below_minimum", "{answer}");
    assert!(out.suite("tea").get("label_corrected").is_none());
    child::assert_lacks(&out.stderr(), "label(s) not drawn at random");

    // Labels of another judge's answers (here: its instructions and temperature were not this run's) do
    // not measure this judge: its verdicts are unmeasured, and the run says so once.
    let sha = text
        .split("judge_instructions = \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_string();
    let another = text
        .replacen(&sha, &"0".repeat(64), 3)
        .replace("judge_temperature = 0\n", "judge_temperature = 0.5\n");
    std::fs::write(&labels_file, &another).unwrap();
    let out = f.run(&["tea"]);
    out.assert_code(0);
    let answer = alice_s_judge_answer(&out);
    assert_eq!(answer["advisory"]["reason"], "unmeasured", "{answer}");
    let stderr = out.stderr();
    let said = "warning: 3 label(s) not drawn at random judge another judge's answers (judge instructions \
                changed, temperature 0.5 → 0): they are not counted in this judge's measurement; label its own \
                answers with `cargo prompt-tester review` or `cargo prompt-tester label`";
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
    assert_eq!(
        stderr
            .matches("warning: 1 label(s) not drawn at random judge another judge's answers (temperature 0.5 → 0)")
            .count(),
        1,
        "{stderr}"
    );
    // The JSON report says the same, in its calibration section.
    assert_eq!(
        out.report.as_ref().unwrap()["calibration"]["labels"],
        json!({"judge_changed": [
            {"labels": 3, "differences": ["judge instructions changed", "temperature 0.5 → 0"]},
            {"labels": 1, "differences": ["temperature 0.5 → 0"]},
        ]})
    );
    // The one label of this judge (its settings as this run's): a measurement of 1/1.
    let one = another.replacen("judge_temperature = 0.5\n", "judge_temperature = 0\n", 1);
    let one = one.replacen(&"0".repeat(64), &sha, 1);
    std::fs::write(&labels_file, &one).unwrap();
    let out = f.run(&["tea"]);
    let answer = alice_s_judge_answer(&out);
    assert_eq!(answer["measurement"]["accuracy"]["trials"], 1, "{answer}");
    // The other three are still another judge's: two with other instructions and temperature.
    let calibration = &out.report.as_ref().unwrap()["calibration"];
    assert_eq!(
        calibration["labels"]["judge_changed"][0]["labels"], 2,
        "{calibration}"
    );

    // Labels written before the judge's settings were kept count for the same provider and model, said
    // once.
    let old: String = text
        .lines()
        .filter(|l| {
            !l.starts_with("judge_instructions")
                && !l.starts_with("judge_temperature")
                && !l.starts_with("judge_max_tokens")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&labels_file, &old).unwrap();
    let out = f.run(&["tea"]);
    let answer = alice_s_judge_answer(&out);
    assert_eq!(answer["measurement"]["accuracy"]["trials"], 4, "{answer}");
    let stderr = out.stderr();
    assert_eq!(
        stderr
            .matches(
                "warning: 4 label(s) not drawn at random were written before the judge's settings were kept: \
                 counted for judge fake/judge-model, its instructions, temperature and max_tokens taken to be \
                 this run's; label again to record them"
            )
            .count(),
        1,
        "{stderr}"
    );
    assert_eq!(
        out.report.as_ref().unwrap()["calibration"]["labels"],
        json!({"unknown_settings": 4})
    );
    std::fs::write(&labels_file, &text).unwrap();

    // A suite's labels are read beside it only: in the cassette folder they are not its own.
    let cassette_folder = f.root.join("prompt-tests/cassettes/tea.labels.toml");
    std::fs::rename(&labels_file, &cassette_folder).unwrap();
    let out = f.run(&["tea"]);
    out.assert_code(0);
    let answer = alice_s_judge_answer(&out);
    assert_eq!(answer["advisory"]["reason"], "unmeasured", "{answer}");
}

/// A label drawn at random judges one answer, named by the key of its judge call: re-recording a case
/// (a new prompt, answered and judged "passed" as before) makes its labels stale, so they are not
/// counted, and `label --random` draws its samples again, before samples never drawn; labels whose key
/// is still the run's count.
#[test]
fn a_random_label_of_an_answer_recorded_again_is_stale_and_its_sample_is_drawn_again() {
    let fake = yes_judge();
    let mut f = Fixture::calling("labels-stale", &fake, "record");
    f.file(
        "Cargo.toml",
        "[package]\nname = \"tea\"\nversion = \"0.1.0\"\n",
    );
    f.file("prompt-tests/tea.evals.toml", SUITE);
    f.run(&["tea"]).assert_code(0);
    let labels_file = f.root.join("prompt-tests/tea.labels.toml");
    // Every sample of is_polite and two of names_alice, drawn at random, all right.
    label(
        &f.root,
        &["label", "tea::is_polite", "--random", "4"],
        "r\nr\nr\nr\n",
    )
    .assert_code(0);
    let out = label(
        &f.root,
        &["label", "tea::names_alice", "--random", "2", "--seed", "5"],
        "r\nr\n",
    );
    out.assert_code(0);
    let text = std::fs::read_to_string(&labels_file).unwrap();
    assert_eq!(text.matches("random = true").count(), 6, "{text}");
    assert_eq!(text.matches("\njudge_key = \"").count(), 6, "{text}");
    let corrected = |f: &Fixture| {
        let out = f.run(&["tea"]);
        out.assert_code(0);
        let c = out.suite("tea")["label_corrected"].clone();
        (
            c["samples"].clone(),
            c["labelled"].clone(),
            c["stale"].clone(),
        )
    };
    f.mode = "replay";
    // Replayed, every key is the run's: the six labels count.
    assert_eq!(corrected(&f), (json!(8), json!(6), json!(0)));

    // is_polite is recorded again with another prompt: the judge passes its new answers as before,
    // but its judge calls are others (another key), so its four labels judge answers the run no
    // longer has.
    f.file(
        "prompt-tests/tea.evals.toml",
        &SUITE.replace(", politely", ", very politely"),
    );
    f.mode = "record";
    f.run(&["tea::is_polite", "--accept"]).assert_code(0);
    f.mode = "replay";
    assert_eq!(corrected(&f), (json!(8), json!(2), json!(4)));

    // The next draw labels the four stale samples first, then one never drawn.
    let out = label(
        &f.root,
        &["label", "tea", "--random", "5", "--seed", "3"],
        "r\nr\nr\nr\nr\n",
    );
    out.assert_code(0);
    let said = out.stdout();
    child::assert_contains(
        &said,
        &[
            "4 sample(s) drawn at random before have stale labels (their judge call was made again): \
             labelling their new answers first",
            "sample 1 of 5: tea::is_polite",
            "sample 4 of 5: tea::is_polite",
            "sample 5 of 5: tea::names_alice",
            "labelled 5 judge answer(s) drawn at random",
        ],
    );
    let text = std::fs::read_to_string(&labels_file).unwrap();
    assert_eq!(text.matches("random = true").count(), 7, "{text}");
    assert_eq!(text.matches("[[labels]]").count(), 7, "{text}");
    assert_eq!(corrected(&f), (json!(8), json!(7), json!(0)));
}

/// A labelled review, end to end: a recorded suite's prompt changes, the run puts the new answers
/// pending, `cargo prompt-tester review` (in a real terminal) labels the new judge answer right (`y`)
/// and accepts the sample (`a`), and the next run's verdicts carry the measurement that label gives
/// the judge on that type of question.
#[test]
fn a_labelled_review_measures_the_judge_of_a_later_run() {
    let test = "a_labelled_review_measures_the_judge_of_a_later_run";
    let fake = yes_judge();
    let mut f = Fixture::calling("labels-review", &fake, "record");
    f.file(
        "Cargo.toml",
        "[package]\nname = \"tea\"\nversion = \"0.1.0\"\n",
    );
    let suite = |how: &str| {
        format!(
            "prompt = \"Serve tea{how}\"\n\n[[cases]]\nname = \"names_alice\"\n\
             assert = [{{ judge = \"Is Alice mentioned?\" }}]\n"
        )
    };
    f.file("prompt-tests/tea.evals.toml", &suite(""));
    f.run(&["tea"]).assert_code(0);
    // The prompt changes: the new answers wait for review.
    f.file("prompt-tests/tea.evals.toml", &suite(", politely"));
    f.mode = "auto";
    f.run(&["tea"])
        .assert_stderr_has("have pending recordings (1 sample(s))");
    let Some(tmux) = super::tmux::Tmux::review(test, &f.root, &subcommand()) else {
        return;
    };
    tmux.wait_for(&[
        "pending 1 of 1: tea::names_alice (run 1)",
        "y/n judge right/wrong",
    ]);
    tmux.send("y");
    tmux.wait_for(&["labelled right"]);
    tmux.send("a");
    tmux.wait_for(&["[review exited 0]"]);
    drop(tmux);
    let text = std::fs::read_to_string(f.root.join("prompt-tests/tea.labels.toml")).unwrap();
    child::assert_contains(
        &text,
        &[
            "trial = \"tea::names_alice\"\nsample = 1\nquestion = \"Is Alice mentioned?\"\n\
             type = \"factual_presence\"\njudge = \"fake/judge-model\"\njudge_instructions = \"",
            "judge_max_tokens = 1024\njudge_key = \"",
            "\"\nverdict = \"passed\"\nlabel = \"right\"\n",
        ],
    );
    child::assert_lacks(&text, "random");

    // Replayed (the review accepted the new answers): the verdict carries the label's measurement.
    f.mode = "replay";
    let out = f.run(&["tea"]);
    out.assert_code(0);
    let answer = alice_s_judge_answer(&out);
    assert_measured(answer, 1);
    child::assert_lacks(&out.stderr(), "label(s) not drawn at random");
}
