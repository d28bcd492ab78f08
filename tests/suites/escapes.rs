//! Terminal escapes in what a provider sends (an answer, the judge's reasoning, an error body) or a
//! suite file holds (a skip reason, a case name) never reach the console raw: the harness prints them
//! escaped (`\u{1b}`), whichever line shows them (libtest's failures and ignored reasons, the summary),
//! or refuses them (a name libtest would print). The harness's own colours are off here: stdout and
//! stderr are not terminals.

use prompt_tester_testkit::{FakeProvider, Reply, Wire};
use serde_json::json;

use super::*;

/// Retitles the window and clears the screen.
const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J";

/// A provider whose every text carries [`HOSTILE`]: the subject's answers, the judge's reasoning and
/// snippet, a JSON error body and a plain-text one.
fn hostile() -> FakeProvider {
    FakeProvider::builder()
        .respond_with(|request| {
            if request.model().as_deref() == Some(JUDGE_MODEL) {
                let verdict = json!({"index": 1, "question_type": "factual_presence",
                    "reasoning": format!("No greeting. {HOSTILE}"), "snippet": HOSTILE, "answer": "no"});
                return Reply::text(
                    Wire::OpenAi,
                    JUDGE_MODEL,
                    &json!({ "verdicts": [verdict] }).to_string(),
                    prompt_tester_testkit::Usage::new(100, 10),
                );
            }
            match request.last_user_text().as_deref() {
                Some("Break") => Reply::json(
                    400,
                    &json!({"error": {"message": format!("bad request {HOSTILE}"), "type": HOSTILE}}),
                ),
                Some("Break plainly") => {
                    Reply::raw(500, "text/plain", format!("upstream {HOSTILE} down"))
                }
                _ => Reply::answer(request, &format!("Hi {HOSTILE} there")),
            }
        })
        .start()
}

#[test]
fn escapes_from_a_provider_never_reach_the_console_raw() {
    let fake = hostile();
    let f = Fixture::calling("escapes", &fake, "off");
    let case = |name: &str, prompt: &str, assert: &str| {
        format!(
            "[[cases]]\nname = \"{name}\"\ninputs = {{ p = \"{prompt}\" }}\nassert = [{assert}]\n"
        )
    };
    f.file(
        "prompt-tests/hostile.evals.toml",
        &[
            "prompt = \"{p}\"\n".to_string(),
            case("answer", "Say hi", "{ equals = \"hello\" }"),
            case("judged", "Greet", "{ judge = \"Is it a greeting?\" }"),
            case("error", "Break", "{ contains = \"x\" }"),
            case("plain_error", "Break plainly", "{ contains = \"x\" }"),
            "[[cases]]\nname = \"skipped\"\nskip = \"waiting \\u001b[2J\"\n".to_string(),
        ]
        .concat(),
    );
    // A case name is printed by libtest as it is: one with an escape is refused.
    f.file(
        "prompt-tests/named.evals.toml",
        "prompt = \"Hi\"\n[[cases]]\nname = \"a\\u001b[2J\"\nassert = [{ contains = \"x\" }]\n",
    );
    let out = f.run(&[]);
    out.assert_code(101);
    out.assert_statuses(&[
        ("hostile::answer", "FAILED"),
        ("hostile::judged", "FAILED"),
        ("hostile::error", "FAILED"),
        ("hostile::plain_error", "FAILED"),
        ("named::suite_file_error", "FAILED"),
    ]);
    assert!(out.outcome("hostile::skipped").starts_with("ignored"));
    for (stream, bytes) in [("stdout", &out.0.stdout), ("stderr", &out.0.stderr)] {
        assert!(
            !bytes.contains(&0x1b) && !bytes.contains(&0x07),
            "a raw escape on {stream}:\n{}",
            out.context().escape_debug()
        );
    }
    // Shown escaped, not dropped.
    out.assert_stdout_has("Hi \\u{1b}]0;pwned\\u{7}\\u{1b}[2J there");
    out.assert_stdout_has("No greeting. \\u{1b}]0;pwned");
    out.assert_stdout_has("bad request \\u{1b}]0;pwned");
    out.assert_stdout_has("upstream \\u{1b}]0;pwned");
    out.assert_stdout_has("waiting \\u{1b}[2J");
    out.assert_stdout_has(
        "`cases[0].name`: \"a\\u{1b}[2J\" is not a usable case name: the name contains a control character",
    );
}
