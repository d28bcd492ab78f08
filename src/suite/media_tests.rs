//! Unit tests of media in suites: inputs placed as parts of the prompt or a user message, refused
//! elsewhere with the file, line and key; dataset media columns; the kind checked against the bytes.

use std::path::Path;
use std::sync::Arc;

use super::assert::Check;
use super::parse::{Suite, parse, report};
use super::{CaseProblem, Item, suite_items};
use crate::completion::{ContentBlock, MediaKind, Message};
use crate::config::Config;
use crate::test_support::{Scratch, assert_contains};

const FILE: &str = "prompt-tests/m.evals.toml";
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
const PDF: &[u8] = b"%PDF-1.4\n%%EOF\n";
const WAV: &[u8] = b"RIFF\x24\0\0\0WAVEfmt ";

/// A folder holding `receipt.png`, `contract.pdf`, `voice.wav` and a PDF named `scan.png`'s twin
/// `scan.pdf`.
fn media_dir() -> Scratch {
    let dir = Scratch::new("suite-media");
    dir.file("receipt.png", PNG);
    dir.file("contract.pdf", PDF);
    dir.file("voice.wav", WAV);
    dir
}

fn parsed(text: &str, dir: &Path) -> Result<Suite, String> {
    parse("m", FILE, dir, text).map_err(|p| report(FILE, text, &p))
}

/// The first request of the first trial of `suite`.
fn first_request(suite: Suite) -> crate::completion::CompletionRequest {
    let config = Config::defaults(Path::new("."));
    let items = suite_items(&config, Arc::new(suite), None);
    let case = items
        .into_iter()
        .find_map(|item| match item {
            Item::Case(case) => Some(case),
            Item::Row(row) => Some(Box::new(Arc::unwrap_or_clone(
                (row.build)().expect("the row builds"),
            ))),
            _ => None,
        })
        .expect("a case");
    case.subject_request("m", 1)
}

/// What a message sends: its text parts, and each media part as `<media name>`.
fn shown(message: &Message) -> String {
    message
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Media(part) => format!("<{} {}>", part.kind(), part.name()),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn media_inputs_are_parts_of_the_prompt_and_of_a_user_message() {
    let dir = media_dir();
    let suite = parsed(
        r#"
prompt = "Compare {receipt} with {contract} for {who}."
provider = "openai"
model = "m"
messages = [
  { role = "system", content = "You read documents." },
  { role = "user", content = "First listen: {voice}" },
  { role = "assistant", content = "Heard it." },
]

[[cases]]
name = "a"
inputs = { receipt = { image = "receipt.png" }, contract = { document = "contract.pdf" }, voice = { audio = "voice.wav" }, who = "Ann" }
assert = [{ judge = "Does the reply use {receipt}?", judge_inputs = true }, { not_contains = "{contract}" }]
"#,
        dir.path(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let case = &suite.cases[0];
    assert_eq!(
        case.media.keys().collect::<Vec<_>>(),
        ["contract", "receipt", "voice"]
    );
    // An assertion's template shows the file's name, not its bytes.
    assert!(
        matches!(&case.asserts[0].check, Check::JudgeWithInputs(q) if q == "Does the reply use receipt.png?"),
        "{:?}",
        case.asserts[0].check
    );
    assert!(
        matches!(&case.asserts[1].check, Check::NotContains(v) if v == &["contract.pdf"]),
        "{:?}",
        case.asserts[1].check
    );
    let request = first_request(suite);
    assert_eq!(request.system.as_deref(), Some("You read documents."));
    let sent: Vec<String> = request.messages.iter().map(shown).collect();
    assert_eq!(
        sent,
        [
            "First listen: <audio voice.wav>",
            "Heard it.",
            "Compare <image receipt.png> with <document contract.pdf> for Ann.",
        ]
    );
}

#[test]
fn media_outside_the_prompt_and_user_messages_is_an_error_at_its_input() {
    let dir = media_dir();
    let system = parsed(
        r#"
prompt = "Read it."
system = "You read {receipt}."

[[cases]]
name = "a"
inputs = { receipt = { image = "receipt.png" } }
"#,
        dir.path(),
    )
    .expect_err("media in the system prompt");
    assert_contains(
        &system,
        &[
            "prompt-tests/m.evals.toml:7",
            "cases[0].inputs.receipt",
            "the image input `receipt` is placed by `system`",
            "place it in `prompt`",
        ],
    );
    let assistant = parsed(
        r#"
prompt = "And now?"

[[cases]]
name = "a"
inputs = { voice = { audio = "voice.wav" } }
messages = [{ role = "user", content = "Hi" }, { role = "assistant", content = "I heard {voice}" }]
"#,
        dir.path(),
    )
    .expect_err("media in an assistant message");
    assert_contains(
        &assistant,
        &[
            ":6",
            "cases[0].inputs.voice",
            "`messages[1]`, an assistant message",
        ],
    );
}

#[test]
fn the_kind_named_is_checked_against_the_bytes_and_the_file_must_be_there() {
    let dir = media_dir();
    let case = |inputs: &str| {
        parsed(
            &format!(
                "prompt = \"Read {{x}}\"\n\n[[cases]]\nname = \"a\"\ninputs = {{ x = {inputs} }}\n"
            ),
            dir.path(),
        )
        .expect_err("a bad media input")
    };
    assert_contains(
        &case(r#"{ image = "contract.pdf" }"#),
        &[
            ":5",
            "cases[0].inputs.x.image",
            "`contract.pdf` is named as an image but its bytes are application/pdf (document)",
            "name it as a document (`document = \"contract.pdf\"`)",
        ],
    );
    assert_contains(
        &case(r#"{ image = "gone.png" }"#),
        &[
            "image file `gone.png` cannot be read",
            "relative to the file that names it",
        ],
    );
    assert_contains(
        &case(r#"{ video = "clip.mp4" }"#),
        &["cases[0].inputs.x.video", "unknown media kind `video`"],
    );
    assert_contains(
        &case(r#"{ image = "receipt.png", audio = "voice.wav" }"#),
        &["one kind and one file"],
    );
    assert_contains(
        &case(r#"{ image = "receipt.png", detail = "tiny" }"#),
        &[
            "cases[0].inputs.x.detail",
            "expected `auto`, `low` or `high`, found `tiny`",
        ],
    );
    assert_contains(
        &case(r#"{ audio = "voice.wav", detail = "low" }"#),
        &[
            "cases[0].inputs.x.detail",
            "`detail` is an image's setting; this input is an audio",
            "or remove it",
        ],
    );
}

#[test]
fn an_image_input_may_say_its_detail_and_the_openai_request_sends_it() {
    let dir = media_dir();
    let suite = parsed(
        "prompt = \"Read {x}\"\n\n[[cases]]\nname = \"a\"\ninputs = { x = { image = \"receipt.png\", \
         detail = \"low\" } }\n",
        dir.path(),
    )
    .unwrap();
    let request = first_request(suite);
    let part = request.messages[0]
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::Media(part) => Some(part.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(part.detail(), crate::completion::ImageDetail::Low);
    // The recorded request names it, so a changed detail is a changed key.
    let recorded = serde_json::to_value(&part).unwrap();
    assert_eq!(recorded["detail"], "low");
    let auto = part
        .clone()
        .with_detail(crate::completion::ImageDetail::Auto)
        .unwrap();
    assert!(serde_json::to_value(&auto).unwrap().get("detail").is_none());
}

#[test]
fn a_dataset_media_column_holds_files_relative_to_the_dataset() {
    let dir = media_dir();
    std::fs::create_dir_all(dir.path().join("golden")).unwrap();
    dir.file("golden/scan.png", PNG);
    dir.file(
        "golden/rows.jsonl",
        "{\"name\": \"ok\", \"scan\": \"scan.png\", \"note\": \"hi\"}\n\
         {\"name\": \"pdf\", \"scan\": \"../contract.pdf\", \"note\": \"hi\"}\n\
         {\"name\": \"gone\", \"scan\": \"nope.png\", \"note\": \"hi\"}\n",
    );
    let text = r#"
prompt = "Read {scan} ({note})"
provider = "openai"
model = "m"
cases_file = "golden/rows.jsonl"
media = { scan = "image" }
assert = [{ contains = "{scan}" }]
"#;
    let suite = parsed(text, dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let rows = suite.rows.as_ref().unwrap();
    assert_eq!(rows.media, [("scan".to_string(), MediaKind::Image)]);
    let ok = rows.case(&rows.dataset.rows[0]).unwrap();
    assert_eq!(ok.media["scan"].name(), "scan.png");
    assert_eq!(ok.inputs, [("note".to_string(), "hi".to_string())]);
    assert!(
        matches!(&ok.asserts[0].check, Check::Contains(v) if v == &["scan.png"]),
        "{:?}",
        ok.asserts[0].check
    );
    let problem =
        |i: usize| CaseProblem::from(rows.case(&rows.dataset.rows[i]).unwrap_err()).to_string();
    assert_contains(
        &problem(1),
        &[
            "prompt-tests/golden/rows.jsonl:2",
            "`scan`",
            "is named as an image but its bytes are application/pdf",
        ],
    );
    assert_contains(
        &problem(2),
        &[
            "prompt-tests/golden/rows.jsonl:3",
            "`scan`",
            "`nope.png` cannot be read",
        ],
    );
    let request = first_request(suite);
    assert_eq!(shown(&request.messages[0]), "Read <image scan.png> (hi)");

    let unknown = parsed(&text.replace("{ scan = ", "{ scans = "), dir.path())
        .expect_err("an unknown column");
    assert_contains(
        &unknown,
        &[
            ":6",
            "media.scans",
            "prompt-tests/golden/rows.jsonl has no column `scans`",
        ],
    );
    let no_dataset = parsed(
        "prompt = \"x\"\nmedia = { scan = \"image\" }\n\n[[cases]]\nname = \"a\"\n",
        dir.path(),
    )
    .expect_err("media without a dataset");
    assert_contains(&no_dataset, &[":2", "media.scan", "the suite has none"]);
}

#[test]
fn judge_inputs_belongs_to_judge() {
    let text = "prompt = \"x\"\n\n[[cases]]\nname = \"a\"\nassert = [{ contains = \"x\", judge_inputs = true }]\n";
    let problems = parsed(text, Path::new("/nonexistent")).expect_err("judge_inputs on contains");
    assert_contains(
        &problems,
        &[
            "cases[0].assert[0].judge_inputs",
            "belongs to `judge`, not to `contains`",
        ],
    );
}

#[cfg(feature = "yaml")]
#[test]
fn a_yaml_suite_takes_media_inputs_too() {
    let dir = media_dir();
    let text = "prompt: \"Read {receipt}\"\nprovider: openai\nmodel: m\ncases:\n  - name: a\n    inputs:\n      receipt: { image: receipt.png }\n";
    let suite = parse("m", "prompt-tests/m.evals.yaml", dir.path(), text)
        .unwrap_or_else(|p| panic!("{}", report("m.evals.yaml", text, &p)));
    let request = first_request(suite);
    assert_eq!(shown(&request.messages[0]), "Read <image receipt.png>");
    let bad = text.replace("image: receipt.png", "audio: receipt.png");
    let problems = parse("m", "prompt-tests/m.evals.yaml", dir.path(), &bad)
        .map_err(|p| report("prompt-tests/m.evals.yaml", &bad, &p))
        .expect_err("a PNG named as audio");
    assert_contains(
        &problems,
        &[
            "prompt-tests/m.evals.yaml:7",
            "is named as an audio",
            "image/png",
        ],
    );
}
