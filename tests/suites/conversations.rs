//! Scripted turns (`turns = [...]`): each user turn sent with the conversation so far, each its own
//! recorded call, replayed offline; `turn = N` checks an earlier reply; the reports carry the transcript.

use prompt_tester_testkit::{FakeProvider, Reply, Usage, Wire};
use serde_json::{Value, json};

use super::*;

/// A chat suite (every case has `turns`, so no `prompt`), with a system prompt.
const CHAT: &str = r#"
system = "Be brief."

[[cases]]
name = "remembers"
inputs = { name = "Alice" }
turns = ["My name is {name}.", "What is my name?", "Say it in French."]
assert = [
  { contains = "Hello", turn = 1 },
  { contains = "Your name is {name}", turn = 2 },
  { judge = "The reply is in French.", turn = 3 },
  { contains = "Bonjour" },
]

[[cases]]
name = "first_reply_checked"
turns = ["My name is Bob.", "What is my name?"]
assert = [{ contains = "Bob", turn = 2 }, { contains = "Goodbye", turn = 1 }]
"#;

/// A fake that answers each user turn by its text, and judges yes.
fn chat_server() -> FakeProvider {
    FakeProvider::builder()
        .respond_with(|request| {
            if request.model().as_deref() == Some(JUDGE_MODEL) {
                let verdict = json!({"index": 1, "question_type": "factual_presence", "reasoning": "French.",
                    "snippet": null, "answer": "yes"});
                let body = json!({ "verdicts": [verdict] }).to_string();
                return Reply::text(Wire::OpenAi, JUDGE_MODEL, &body, Usage::new(100, 10));
            }
            let said = request.last_user_text().unwrap_or_default();
            let name = if said.contains("Bob") || request_mentions(request, "Bob") {
                "Bob"
            } else {
                "Alice"
            };
            let answer = match said.as_str() {
                "What is my name?" => format!("Your name is {name}."),
                "Say it in French." => format!("Bonjour, tu t'appelles {name}."),
                _ => format!("Hello {name}!"),
            };
            Reply::text(Wire::OpenAi, MODEL, &answer, Usage::new(10, 5))
        })
        .start()
}

/// Whether any message of `request` says `text`.
fn request_mentions(request: &prompt_tester_testkit::CapturedRequest, text: &str) -> bool {
    String::from_utf8_lossy(&request.body).contains(text)
}

/// A crate holding `CHAT` against `fake` (a `chat_server`), run once in `auto` mode: every turn is
/// recorded, and `remembers` passes.
fn recorded_chat(name: &str, fake: &FakeProvider) -> (Fixture, Outcome) {
    let f = Fixture::calling(name, fake, "auto");
    f.file("prompt-tests/chat.evals.toml", CHAT);
    let first = f.run(&[]);
    first.assert_statuses(&[("chat::remembers", "ok")]);
    (f, first)
}

/// The `(role, content)` of each message of an OpenAI-compatible request body.
fn messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn scripted_turns_send_the_growing_conversation_record_each_turn_and_replay_offline() {
    let fake = chat_server();
    let (mut f, first) = recorded_chat("turns", &fake);
    // `turn = N` checks that reply, and the failure says which.
    first.assert_case_failed(
        "chat",
        "first_reply_checked",
        &[
            "1 of 2 assertions failed:",
            r#"turn 1: contains: expected the output to contain "Goodbye"; saw "Hello Bob!""#,
        ],
    );

    // What went over the wire: each turn with the system prompt and the conversation so far.
    let subject: Vec<Value> = fake
        .requests()
        .iter()
        .filter(|r| r.model().as_deref() == Some(MODEL))
        .map(|r| r.json.clone().unwrap())
        .collect();
    assert_eq!(subject.len(), 5, "one call per turn");
    let third = subject
        .iter()
        .find(|b| messages(b).len() == 6)
        .expect("the third turn of `remembers`");
    let said = |role: &str, text: &str| (role.to_string(), text.to_string());
    assert_eq!(
        messages(third),
        [
            said("system", "Be brief."),
            said("user", "My name is Alice."),
            said("assistant", "Hello Alice!"),
            said("user", "What is my name?"),
            said("assistant", "Your name is Alice."),
            said("user", "Say it in French."),
        ]
    );

    // Each turn is its own entry of the suite's cassette, all of run 1 of the case.
    let recorded = f.recorded("chat");
    let remembers: Vec<&Value> = recorded
        .iter()
        .filter(|e| e["test"] == "chat::remembers")
        .collect();
    let mut roles: Vec<&str> = remembers
        .iter()
        .map(|e| e["role"].as_str().unwrap())
        .collect();
    roles.sort();
    assert_eq!(roles, ["judge", "subject", "subject", "subject"]);
    assert!(remembers.iter().all(|e| e["run"] == 1));

    // The report's sample holds the transcript: every user turn and every reply, and the last reply as
    // its output; the case's usage counts every turn.
    let case = child::entry(&first.suite("chat")["cases"], "case_id", "remembers");
    let sample = &case["samples"][0];
    assert_eq!(sample["output"], "Bonjour, tu t'appelles Alice.");
    let transcript: Vec<(&str, &str)> = sample["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap(),
                m["content"][0]["text"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        transcript,
        [
            ("user", "My name is Alice."),
            ("assistant", "Hello Alice!"),
            ("user", "What is my name?"),
            ("assistant", "Your name is Alice."),
            ("user", "Say it in French."),
            ("assistant", "Bonjour, tu t'appelles Alice."),
        ]
    );
    let usage = &first.suite("chat")["usage"];
    assert_eq!(usage["subject"]["calls"], 5, "{usage:#}");
    assert_eq!(usage["subject"]["input_tokens"], 50, "{usage:#}");
    let calls = fake.request_count();
    drop(fake);

    // The server is gone: every turn replays from the cassette.
    f.mode = "replay";
    let again = f.run(&[]);
    again.assert_statuses(&[("chat::remembers", "ok")]);
    assert_eq!(again.outcome("chat::first_reply_checked"), "FAILED");
    again.assert_stderr_has(&format!("({calls} replayed from cassettes)"));
    assert_eq!(again.suite("chat")["usage"]["subject"]["replayed"], 5);
}

#[test]
fn a_changed_later_turn_has_no_recording_and_names_its_turn() {
    let fake = chat_server();
    let (mut f, _) = recorded_chat("turns-changed", &fake);
    drop(fake);
    f.mode = "replay";
    f.file(
        "prompt-tests/chat.evals.toml",
        &CHAT.replace("\"Say it in French.\"", "\"Say it in German.\""),
    );
    let out = f.run(&[]);
    out.assert_case_failed(
        "chat",
        "remembers",
        &["turn 3 of 3: follow-up call failed: ", "chat.cassette.json"],
    );
}
