//! `cargo prompt-tester review` in a real terminal: the binary runs in a tmux session (a private
//! server per test), the test reads the screen with `capture-pane` and types with `send-keys`, and
//! checks the files after each key, since each accept or reject is written at once.
//!
//! tmux is a prerequisite: under CI its absence fails these tests (`.ci/run` installs it); elsewhere
//! they are skipped with a `SKIPPED` line.

use std::path::Path;

use prompt_tester_testkit::child::{assert_contains, assert_lacks};

use super::tmux::Tmux;
use super::{Fixture, binary, keys};

/// The review of the crate at `root` in a tmux session of its own (see `common/tmux.rs`); `None`
/// (after saying so) without tmux.
fn review(test: &str, root: &Path) -> Option<Tmux> {
    Tmux::review(test, root, binary())
}

/// The fixture `name` and its review in tmux, for the test `test`; `None` without tmux.
fn reviewed(test: &str, name: &str) -> Option<(Fixture, Tmux)> {
    let fixture = Fixture::new(name);
    let tmux = review(test, fixture.root())?;
    Some((fixture, tmux))
}

#[test]
fn each_key_does_what_it_says_and_writes_at_once() {
    let test = "each_key_does_what_it_says_and_writes_at_once";
    let Some((fixture, tmux)) = reviewed(test, "keys") else {
        return;
    };
    let first = tmux.wait_for(&["pending 1 of 3: quick::greet (run 1)", "q quit"]);
    assert_contains(
        &first,
        &[
            "cassette prompt-tests/cassettes/quick.cassette.json",
            "pending  prompt-tests/cassettes/quick.pending.json",
            "What changed in the request",
            r#"call 1: prompt: -"Say hi to Alice." +"Say hello to Alice.""#,
            "Answer (accepted → new)",
            "[-Hi-]",
            "{+Hello+}",
            "[-Alice!-]",
            "{+there!+}",
            "Judge (accepted → new)",
            "Is Alice greeted?  yes → no  (changed)",
            "Usage",
            "subject calls   1",
            "judge calls     1",
            // Priced at today's prices, as a run prices them, not as recorded ($0.0001).
            "$0.000008",
            "401 ms",
            "a accept  r reject  s skip  A/R/S all left  d request diff",
        ],
    );
    assert_lacks(&first, "- Say hi to Alice.");

    // d shows the request's full diff, and hides it again.
    tmux.send("d");
    let diff = tmux.wait_for(&["call 1, prompt 1:"]);
    assert_contains(
        &diff,
        &["    - Say hi to Alice.", "    + Say hello to Alice."],
    );
    tmux.send("d");
    tmux.wait_for(&["(d shows the full diff"]);

    // a: accepted into the cassette before the review goes on.
    tmux.send("a");
    tmux.wait_for(&["pending 2 of 3: quick::greet (run 2)"]);
    let quick = keys(&fixture.cassette("quick"));
    assert!(
        quick.contains(&fixture.new[0].key) && quick.contains(&fixture.new[1].key),
        "{quick:?}"
    );
    assert!(!quick.contains(&fixture.old[0].key), "{quick:?}");
    assert_eq!(
        keys(&fixture.pending("quick")),
        [fixture.new[2].key.clone()]
    );

    // r: the cassette keeps run 2's recording; the pending file, now empty, goes.
    tmux.send("r");
    let third = tmux.wait_for(&["pending 3 of 3: suite::case_a (run 1)"]);
    assert_contains(
        &third,
        &[
            "call 1: the same request, answered again",
            "[-Paris-]",
            "{+Paris.+}",
        ],
    );
    assert!(keys(&fixture.cassette("quick")).contains(&fixture.old[2].key));
    assert!(!fixture.pending("quick").exists());

    // s: kept for later; the review ends and says what it did.
    tmux.send("s");
    let end = tmux.wait_for(&["[review exited 0]"]);
    assert_contains(
        &end,
        &[
            "accepted quick::greet (run 1) (prompt-tests/cassettes/quick.cassette.json)",
            "rejected quick::greet (run 2)",
            "skipped suite::case_a (run 1)",
            "accepted 1, rejected 1, skipped 1",
            "1 still pending: `cargo prompt-tester review` shows them again",
        ],
    );
    assert_eq!(
        keys(&fixture.pending("suite")),
        [fixture.new[3].key.clone()]
    );
}

#[test]
fn q_quits_and_the_capitals_settle_every_sample_left() {
    let test = "q_quits_and_the_capitals_settle_every_sample_left";
    let fixture = Fixture::new("capitals");
    let pending = |stem: &str| std::fs::read(fixture.pending(stem)).ok();
    let before = (pending("quick"), pending("suite"));

    // Each review in a tmux server of its own, ended before the next starts.
    let Some(tmux) = review(test, fixture.root()) else {
        return;
    };
    let end = tmux.type_until_the_end(&["q"]);
    drop(tmux);
    assert_contains(
        &end,
        &["accepted 0, rejected 0, skipped 0", "3 still pending"],
    );
    let files = (pending("quick"), pending("suite"));
    assert_eq!(files, before, "q changed a file");

    // s once, then S skips the rest.
    let again = || review(test, fixture.root()).unwrap();
    let end = again().type_until_the_end(&["s", "S"]);
    assert_contains(&end, &["skipped 3", "3 still pending"]);
    let files = (pending("quick"), pending("suite"));
    assert_eq!(files, before, "S changed a file");

    // a once, then R rejects the rest.
    let end = again().type_until_the_end(&["a", "R"]);
    assert_contains(&end, &["accepted 1, rejected 2, skipped 0"]);
    assert_lacks(&end, "still pending");
    assert_eq!(
        keys(&fixture.cassette("suite")),
        [fixture.old[4].key.clone()]
    );
    assert!(!fixture.pending("quick").exists() && !fixture.pending("suite").exists());

    // With nothing pending, the review says so and ends.
    let end = again().type_until_the_end(&[]);
    assert_contains(&end, &["no pending recordings"]);
}

#[test]
fn capital_a_accepts_every_sample_left() {
    let test = "capital_a_accepts_every_sample_left";
    let Some((fixture, tmux)) = reviewed(test, "accept-all") else {
        return;
    };
    let end = tmux.type_until_the_end(&["A"]);
    assert_contains(&end, &["accepted 3, rejected 0, skipped 0"]);
    let quick = keys(&fixture.cassette("quick"));
    for new in &fixture.new[..3] {
        assert!(quick.contains(&new.key), "{quick:?}");
    }
    assert!(
        quick.contains(&fixture.old[3].key),
        "quick::other lost: {quick:?}"
    );
    assert_eq!(
        keys(&fixture.cassette("suite")),
        [fixture.new[3].key.clone()]
    );
    assert!(!fixture.pending("quick").exists() && !fixture.pending("suite").exists());
}

#[test]
fn y_and_n_label_the_judge_s_answers_beside_the_cassette() {
    let test = "y_and_n_label_the_judge_s_answers_beside_the_cassette";
    let Some((fixture, tmux)) = reviewed(test, "labels") else {
        return;
    };
    let first = tmux.wait_for(&[
        "pending 1 of 3: quick::greet (run 1)",
        "y/n judge right/wrong",
    ]);
    assert_contains(
        &first,
        &[
            "Your labels of the new judge answers",
            "  Is Alice greeted? → FAILED: not labelled",
        ],
    );
    // n: the new "no" is wrong, written at once; a second n finds no other answer to label.
    tmux.send("n");
    tmux.wait_for(&["  Is Alice greeted? → FAILED: labelled wrong"]);
    let path = fixture
        .root()
        .join("prompt-tests/cassettes/quick.labels.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_contains(
        &text,
        &[
            // The key of the judge call it judges, read from the recorded call (no verdict kept it).
            "trial = \"quick::greet\"\nsample = 1\nquestion = \"Is Alice greeted?\"\njudge = \"openai/gpt-4o-mini\"\njudge_key = \"",
            "\"\nverdict = \"failed\"\nlabel = \"wrong\"\n",
        ],
    );
    assert_lacks(&text, "random");
    tmux.send("n");
    tmux.send("q");
    let end = tmux.wait_for(&["[review exited 0]"]);
    assert_contains(
        &end,
        &[
            "labelled the judge wrong on \"Is Alice greeted?\" of quick::greet (run 1) (prompt-tests/cassettes/quick.labels.toml)",
        ],
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

/// A suite's labels go beside its suite file, and each names the judge that answered as the recording
/// kept it (provider, model, the hash of its instructions, its temperature and `max_tokens`), so that
/// it measures only that judge.
#[test]
fn a_suite_s_labels_go_beside_it_with_the_judge_s_settings() {
    let test = "a_suite_s_labels_go_beside_it_with_the_judge_s_settings";
    let fixture = Fixture::new("labels-suite");
    // `quick` is a suite; its pending sample keeps its checks' verdict and the judge's settings.
    let root = fixture.root().to_path_buf();
    std::fs::write(
        root.join("prompt-tests/quick.evals.toml"),
        "prompt = \"Say hello to Alice.\"\n\n[[cases]]\nname = \"greet\"\nassert = [{ judge = \"Is Alice greeted?\" }]\n",
    )
    .unwrap();
    let pending = fixture.pending("quick");
    let mut body: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&pending).unwrap()).unwrap();
    body["verdicts"] = serde_json::json!([{
        "target": "prompts",
        "test": "quick::greet",
        "run": 1,
        "status": "failed",
        "checks": [{"check": "judge: Is Alice greeted?", "passed": false, "question_type": "factual_presence"}],
        "judge_settings": {"instructions_sha256": "ab".repeat(32), "temperature": 0.0, "max_tokens": 1024},
    }]);
    std::fs::write(&pending, serde_json::to_string_pretty(&body).unwrap()).unwrap();
    let Some(tmux) = review(test, &root) else {
        return;
    };
    tmux.wait_for(&[
        "pending 1 of 3: quick::greet (run 1)",
        "y/n judge right/wrong",
    ]);
    tmux.send("y");
    tmux.wait_for(&["  Is Alice greeted? → FAILED: labelled right"]);
    let path = root.join("prompt-tests/quick.labels.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), tmux.wait_for(&["pending"])));
    assert_contains(
        &text,
        &[
            &format!(
                "trial = \"quick::greet\"\nsample = 1\nquestion = \"Is Alice greeted?\"\ntype = \"factual_presence\"\n\
             judge = \"openai/gpt-4o-mini\"\njudge_instructions = \"{}\"\njudge_temperature = 0\n\
             judge_max_tokens = 1024\njudge_key = \"",
                "ab".repeat(32)
            ),
            "\"\nverdict = \"failed\"\nlabel = \"right\"\n",
        ],
    );
    assert!(
        !fixture.cassettes.join("quick.labels.toml").exists(),
        "not beside the cassette"
    );
    tmux.send("q");
    tmux.wait_for(&["[review exited 0]"]);
}

/// A call through the recording endpoint: an OpenAI chat after one tool round trip (its call's id
/// `id`, in the call and its result), a system message ending in `tone`, answered with 1000 input and
/// 500 output tokens and nothing priced.
fn relayed(id: &str, tone: &str, answer: &str) -> prompt_tester::testing::cassette::Entry {
    use prompt_tester::_cargo_prompt_tester_support::{RawBody, RawRequest, RawResponse};
    use prompt_tester::testing::cassette::{CallRole, Entry, Exchange};
    let body = serde_json::json!({"messages": [
        {"content": format!("Answer in one or two sentences, cite the policy section you rely on, and keep a {tone} tone."), "role": "system"},
        {"content": "Weather?", "role": "user"},
        {"role": "assistant", "tool_calls": [{"function": {"arguments": "{}", "name": "weather"}, "id": id, "type": "function"}]},
        {"content": "sunny", "role": "tool", "tool_call_id": id},
    ], "model": "house-model"});
    Entry {
        key: format!("{id}{tone}"),
        target: Some("prompts".into()),
        test: "app::reply".into(),
        run: 1,
        role: CallRole::Subject,
        provider: "openai".into(),
        model: "house-model".into(),
        call: Exchange::Raw {
            request: RawRequest {
                method: "POST".into(),
                path: "/v1/chat/completions".into(),
                query: Vec::new(),
                body,
                media: Vec::new(),
            },
            response: RawResponse {
                status: 200,
                content_type: "application/json".into(),
                body: RawBody::Json(
                    serde_json::json!({"choices": [{"message": {"content": answer, "role": "assistant"}}],
                    "usage": {"prompt_tokens": 1000, "completion_tokens": 500}}),
                ),
            },
        },
        latency_ms: 300,
        recorded_at: "2026-01-01T00:00:00Z".into(),
    }
}

#[test]
fn an_application_s_call_is_priced_and_its_changes_are_json_paths_without_fresh_ids() {
    let test = "an_application_s_call_is_priced_and_its_changes_are_json_paths_without_fresh_ids";
    let scratch = prompt_tester_testkit::child::Scratch::new("review", "relayed");
    scratch.file(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
    );
    scratch.file(
        "prompt-tester.toml",
        "[prices.\"house-model\"]\ninput_mtok = 1.0\noutput_mtok = 2.0\n",
    );
    let cassettes = scratch.path().join("prompt-tests/cassettes");
    let write = |name: &str, entry| {
        std::fs::create_dir_all(&cassettes).unwrap();
        let body = serde_json::json!({"version": prompt_tester::testing::cassette::FORMAT_VERSION, "entries": [entry]});
        std::fs::write(
            cassettes.join(name),
            serde_json::to_string_pretty(&body).unwrap(),
        )
        .unwrap();
    };
    write(
        "app.cassette.json",
        relayed("call_abc123", "plain", "Sunny."),
    );
    write("app.pending.json", relayed("call_xyz789", "warm", "Sunny!"));
    let Some(tmux) = review(test, scratch.path()) else {
        return;
    };
    let screen = tmux.wait_for(&["pending 1 of 1: app::reply (run 1)", "q quit"]);
    assert_contains(
        &screen,
        &[
            r#"call 1: messages[0].content: "…you rely on, and keep a plain tone." → "…you rely on, and keep a warm tone.""#,
            // 1000 tokens in at $1 and 500 out at $2 a million, on each side.
            "$0.002000                    $0.002000",
        ],
    );
    assert_lacks(&screen, "prompt:");
    assert_lacks(&screen, "call_");
    assert_lacks(&screen, "unpriced");
    tmux.send("d");
    let diff = tmux.wait_for(&["call 1, messages[0].content:"]);
    assert_contains(
        &diff,
        &[
            "    - Answer in one or two sentences, cite the policy section you rely on, and keep a plain tone.",
            "    + Answer in one or two sentences, cite the policy section you rely on, and keep a warm tone.",
        ],
    );
    assert_lacks(&diff, "call_");
}

/// Step `step` (1 or 2) of an application's support agent through the recording endpoint, an OpenAI
/// chat: it asks for `lookup_order` of order `order` (its call's id `id`), then, sent back "shipped",
/// answers.
fn support_step(step: u8, order: &str, id: &str) -> prompt_tester::testing::cassette::Entry {
    use prompt_tester::_cargo_prompt_tester_support::{RawBody, RawRequest, RawResponse};
    use prompt_tester::testing::cassette::{CallRole, Entry, Exchange};
    let asked = serde_json::json!({"content": "Where is my order?", "role": "user"});
    let call = serde_json::json!({"function": {"arguments": format!(r#"{{"order_id":"{order}"}}"#),
        "name": "lookup_order"}, "id": id, "type": "function"});
    let (messages, answer) = if step == 1 {
        (
            serde_json::json!([asked]),
            serde_json::json!({"role": "assistant", "content": null, "tool_calls": [call]}),
        )
    } else {
        (
            serde_json::json!([asked, {"role": "assistant", "tool_calls": [call]},
                {"content": "shipped", "role": "tool", "tool_call_id": id}]),
            serde_json::json!({"role": "assistant", "content": "It ships Monday."}),
        )
    };
    Entry {
        key: format!("{id}-{step}"),
        target: Some("prompts".into()),
        test: "app::support".into(),
        run: 1,
        role: CallRole::Subject,
        provider: "openai".into(),
        model: "house-model".into(),
        call: Exchange::Raw {
            request: RawRequest {
                method: "POST".into(),
                path: "/v1/chat/completions".into(),
                query: Vec::new(),
                body: serde_json::json!({"messages": messages, "model": "house-model"}),
                media: Vec::new(),
            },
            response: RawResponse {
                status: 200,
                content_type: "application/json".into(),
                body: RawBody::Json(serde_json::json!({"choices": [{"message": answer}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10}})),
            },
        },
        latency_ms: 300,
        recorded_at: "2026-01-01T00:00:00Z".into(),
    }
}

#[test]
fn a_changed_tool_loop_shows_its_steps_and_the_first_that_changed() {
    let test = "a_changed_tool_loop_shows_its_steps_and_the_first_that_changed";
    let scratch = prompt_tester_testkit::child::Scratch::new("review", "steps");
    scratch.file(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
    );
    let cassettes = scratch.path().join("prompt-tests/cassettes");
    std::fs::create_dir_all(&cassettes).unwrap();
    let write = |name: &str, entries: Vec<prompt_tester::testing::cassette::Entry>| {
        let body = serde_json::json!({"version": prompt_tester::testing::cassette::FORMAT_VERSION, "entries": entries});
        std::fs::write(
            cassettes.join(name),
            serde_json::to_string_pretty(&body).unwrap(),
        )
        .unwrap();
    };
    // Recorded in another order than their cause: the steps follow the conversation.
    write(
        "app.cassette.json",
        vec![
            support_step(2, "42", "call_abc"),
            support_step(1, "42", "call_abc"),
        ],
    );
    write(
        "app.pending.json",
        vec![
            support_step(1, "43", "call_xyz"),
            support_step(2, "43", "call_xyz"),
        ],
    );
    let Some(tmux) = review(test, scratch.path()) else {
        return;
    };
    let screen = tmux.wait_for(&[
        "pending 1 of 1: app::support (run 1)",
        "Steps (accepted → new)",
    ]);
    assert_contains(
        &screen,
        &[
            r#"  first change at step 1: lookup_order({"order_id":"42"}) → lookup_order({"order_id":"43"})"#,
            "  accepted:",
            r#"    1. openai/house-model requested lookup_order({"order_id":"42"})"#,
            r#"    2. openai/house-model (sent back: lookup_order = "shipped") answered "It ships Monday.""#,
            "  new:",
            r#"    1. openai/house-model requested lookup_order({"order_id":"43"})"#,
        ],
    );
    // The calls' fresh ids are no change, and are not shown.
    assert_lacks(&screen, "call_");
    tmux.send("q");
    tmux.wait_for(&["[review exited 0]"]);
}
