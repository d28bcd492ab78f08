//! The labels files' tests: the format read back, located problems, where each trial's labels live,
//! adding atomically.

use super::*;

fn label(question: &str, judged: bool, right: bool, random: bool) -> Label {
    Label {
        trial: "support::refund".into(),
        sample: 2,
        question: question.into(),
        judged,
        right,
        random,
        question_type: Some("tone_style".into()),
        judge: None,
        judge_settings: None,
        judge_key: format!("key-of-{question}"),
    }
}

#[test]
fn what_is_rendered_reads_back() {
    let labels = vec![
        label("Is it \"polite\"?", true, false, true),
        Label {
            judge: Some("openai/gpt-4o-mini".into()),
            judge_settings: Some(JudgeSettings {
                instructions_sha256: "ab".repeat(32),
                temperature: Some(0.7),
                max_tokens: 1024,
            }),
            ..label("Is it short?", false, true, false)
        },
        Label {
            judge_settings: Some(JudgeSettings {
                instructions_sha256: "cd".repeat(32),
                temperature: None,
                max_tokens: 512,
            }),
            ..label("Is it kind?", true, true, false)
        },
    ];
    let text = render(&labels);
    assert_eq!(parse("x.labels.toml", &text).unwrap(), labels);
    assert!(
        text.contains("judge_temperature = 0.7\njudge_max_tokens = 1024\n"),
        "{text}"
    );
    assert!(!labels[0].truth() && !labels[1].truth());
    assert_eq!(
        path_of(Path::new("c/support.cassette.json")),
        Path::new("c/support.labels.toml")
    );
}

#[test]
fn a_suite_s_labels_live_beside_it_and_a_rust_test_s_beside_its_cassette() {
    let dir = crate::test_support::Scratch::new("labels-places");
    let root = dir.path();
    let cassettes = root.join("prompt-tests/cassettes");
    std::fs::create_dir_all(cassettes.join("x")).unwrap();
    // The defaults: suites under prompt-tests/, cassettes in prompt-tests/cassettes/.
    let config = crate::config::Config::defaults(root);
    for suite in [
        "tea.evals.toml",
        "support.evals.yaml",
        "support/refund.evals.yml",
    ] {
        let path = root.join("prompt-tests").join(suite);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    let places = Places::of(&config, &crate::suite::Walked::of(&config));
    let cassette = cassettes.join("shared.cassette.json");
    let at = |trial: &str| places.for_trial(trial, &cassette);
    assert_eq!(at("tea::polite"), root.join("prompt-tests/tea.labels.toml"));
    assert_eq!(
        at("tea::polite[gpt-4o]"),
        root.join("prompt-tests/tea.labels.toml")
    );
    assert_eq!(
        at("support::greets"),
        root.join("prompt-tests/support.labels.toml")
    );
    // A nested suite's trials start with its folder's suite name too: the longest name decides.
    assert_eq!(
        at("support::refund::late"),
        root.join("prompt-tests/support/refund.labels.toml")
    );
    // A `#[prompt_test]` (no suite of that name): beside its cassette.
    assert_eq!(at("teapot::brews"), cassettes.join("shared.labels.toml"));
    assert_eq!(
        at("quick_start::summary"),
        cassettes.join("shared.labels.toml")
    );

    // Read: the suite's file, then the cassette directory's labels of trials of no suite (a suite's
    // labels there are not its own).
    let mut mine = label("q", true, true, false);
    mine.trial = "tea::polite".into();
    add(&at("tea::polite"), "tea.labels.toml", &[mine.clone()]).unwrap();
    let misplaced = Label {
        right: false,
        ..mine.clone()
    };
    let brews = Label {
        trial: "teapot::brews".into(),
        ..misplaced.clone()
    };
    add(
        &cassettes.join("shared.labels.toml"),
        "c/shared.labels.toml",
        &[misplaced, brews.clone()],
    )
    .unwrap();
    let folder = crate::cassette::folder::Folder::list(&cassettes).unwrap();
    let (labels, errors) = places.read(root, &folder);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(labels, [mine, brews]);
    std::fs::write(
        root.join("prompt-tests/support.labels.toml"),
        "labels = 1\n",
    )
    .unwrap();
    let (labels, errors) = places.read(root, &folder);
    assert_eq!(labels.len(), 2);
    assert!(
        errors[0].contains("prompt-tests/support.labels.toml:1:10: `labels`"),
        "{errors:?}"
    );
}

#[test]
fn bad_labels_name_the_file_line_and_key() {
    let text = "[[labels]]\ntrial = \"t\"\nsample = 0\nquestion = \"q\"\njudge_key = \"k\"\nverdict = \"maybe\"\nlabel = \"right\"\nrandom = 1\nwho = \"me\"\n\n[[labels]]\ntrial = \"t\"\nsample = 1\nverdict = \"passed\"\nlabel = \"right\"\n";
    let problems = parse("c/x.labels.toml", text).unwrap_err();
    let shown =
        FileError::invalid("c/x.labels.toml", FileKind::Labels, text, &problems).to_string();
    crate::test_support::assert_contains(
        &shown,
        &[
            "c/x.labels.toml has 6 problems; its labels were not used:",
            "c/x.labels.toml:3:10: `labels[0].sample`: 0 is out of range",
            "c/x.labels.toml:6:11: `labels[0].verdict`: unknown verdict `maybe`",
            "write `verdict = \"passed\"` or `verdict = \"failed\"`",
            "c/x.labels.toml:8:10: `labels[0].random`: expected true or false, found an integer",
            "c/x.labels.toml:9:1: `labels[0].who`: unknown key `who`",
            "`labels[1].question`: the label has no `question`",
            // A label without the key of the judge call it judged names no answer: it is refused.
            "`labels[1].judge_key`: the label has no `judge_key`: nothing says which answer it judged",
            "label the answer again with `cargo prompt-tester label` or `review`",
        ],
    );
    // A judge's settings are whole or absent.
    let text = "[[labels]]\ntrial = \"t\"\nsample = 1\nquestion = \"q\"\njudge_key = \"k\"\nverdict = \"passed\"\nlabel = \"right\"\njudge_temperature = -1\njudge_max_tokens = 512\n";
    let problems = parse("c/x.labels.toml", text).unwrap_err();
    let shown =
        FileError::invalid("c/x.labels.toml", FileKind::Labels, text, &problems).to_string();
    crate::test_support::assert_contains(
        &shown,
        &[
            "c/x.labels.toml:8:21: `labels[0].judge_temperature`: -1 is out of range",
            "`labels[0].judge_instructions`: the label has `judge_max_tokens` but no `judge_instructions`",
            "or leave all of them out",
        ],
    );
    let syntax = parse("x.labels.toml", "[[labels]\n").unwrap_err();
    assert!(
        syntax[0].message.starts_with("TOML syntax error"),
        "{syntax:?}"
    );
}

#[test]
fn adding_replaces_the_label_of_the_same_question_and_keeps_a_broken_file() {
    let dir = crate::test_support::Scratch::new("labels-add");
    let path = dir.path().join("s.labels.toml");
    add(&path, "s.labels.toml", &[label("q", true, true, false)]).unwrap();
    add(
        &path,
        "s.labels.toml",
        &[
            label("q", true, false, true),
            label("r", false, true, false),
        ],
    )
    .unwrap();
    let read_back = read(&path, "s.labels.toml").unwrap();
    assert_eq!(
        read_back,
        [
            label("q", true, false, true),
            label("r", false, true, false)
        ]
    );
    // A label of the same question's new answer (another judge call key) replaces the stale one; the
    // sample stays drawn at random.
    let new_answer = Label {
        judge_key: "a later key".into(),
        ..label("q", false, true, false)
    };
    add(&path, "s.labels.toml", std::slice::from_ref(&new_answer)).unwrap();
    assert_eq!(
        read(&path, "s.labels.toml").unwrap(),
        [
            label("r", false, true, false),
            Label {
                random: true,
                ..new_answer
            }
        ]
    );
    std::fs::write(&path, "labels = 3\n").unwrap();
    let err = add(&path, "s.labels.toml", &[label("q", true, true, false)]).unwrap_err();
    assert!(
        err.to_string()
            .contains("s.labels.toml:1:10: `labels`: expected an array of tables"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "labels = 3\n");
}
