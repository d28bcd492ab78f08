//! Media parts as each wire format sends them, against what the providers' official SDKs sent for
//! the same bytes (`media_sdk/`, captured by its `capture.py`): the same keys and values.

use std::path::Path;

use prompt_tester::completion::{
    CompletionRequest, ContentBlock, ImageDetail, Media, MediaPart, Message, Role,
};
use prompt_tester::config::WireFormat;
use prompt_tester::testing::wire::request_body;
use serde_json::{Value, json};

/// The 2x2 PNG the fixtures' prompts place.
const RECEIPT_PNG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/media/receipt.png");

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("providers/media_sdk")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str::<Value>(&text).unwrap()["body"].clone()
}

/// Standard or URL-safe base64 (Gemini's SDK writes the latter), with or without a data-URL prefix.
fn decode(data: &str) -> Vec<u8> {
    let data = data.split_once(";base64,").map_or(data, |(_, b)| b);
    let alphabet = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = data.bytes().filter(|c| *c != b'=').map(alphabet).collect();
    let mut out = Vec::new();
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, d)| n | u32::from(*d) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// The request body `wire` is sent for one user message of `content`.
fn sent(wire: WireFormat, model: &str, content: Vec<ContentBlock>) -> Value {
    let mut request = CompletionRequest::new(model, "", 64);
    request.messages = vec![Message {
        role: Role::User,
        content,
    }];
    let endpoint = prompt_tester::config::EndpointConfig {
        name: "p".into(),
        wire,
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key_env: Vec::new(),
        max_in_flight: 1,
    };
    request_body(&endpoint, &request)
}

fn part(name: &str, bytes: Vec<u8>) -> ContentBlock {
    ContentBlock::Media(MediaPart::new(name, bytes).unwrap())
}

/// An image part read at `detail`.
fn image_at(name: &str, bytes: Vec<u8>, detail: ImageDetail) -> ContentBlock {
    let part = MediaPart::new(name, bytes).unwrap().with_detail(detail);
    ContentBlock::Media(part.unwrap())
}

/// The fixture's user content at `pointer` rebuilt from its text and media parts (`media_at` the
/// media part's JSON pointer below it, `data_at` its bytes' field), sent as `wire`, against the
/// fixture's: equal once the part of `differs` (documented differences) is taken from the fixture.
fn check(
    file: &str,
    wire: WireFormat,
    pointer: &str,
    name: &str,
    data_at: &str,
    differs: &[(&str, Value)],
) {
    let body = fixture(file);
    // A text document's data is the text itself.
    let bytes_of = |data: &str| match file {
        "anthropic_text_document.json" => data.as_bytes().to_vec(),
        _ => decode(data),
    };
    let expected = body
        .pointer(pointer)
        .unwrap_or_else(|| panic!("{file}: no {pointer}"))
        .clone();
    let items = expected.as_array().unwrap();
    let content: Vec<ContentBlock> = items
        .iter()
        .map(|item| {
            let text = item
                .get("text")
                .and_then(Value::as_str)
                .filter(|_| item.get("type").is_none_or(|t| t == "text"));
            match text {
                Some(text) => ContentBlock::Text { text: text.into() },
                None => {
                    let data = item.pointer(data_at).and_then(Value::as_str).unwrap();
                    part(name, bytes_of(data))
                }
            }
        })
        .collect();
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("gemini-2.5-flash");
    let mut actual = sent(wire, model, content).pointer(pointer).unwrap().clone();
    let media = items
        .iter()
        .position(|i| i.pointer(data_at).is_some())
        .unwrap();
    let (ours, theirs) = (&mut actual[media], &expected[media]);
    // Same bytes, whatever the alphabet.
    assert_eq!(
        bytes_of(ours.pointer(data_at).unwrap().as_str().unwrap()),
        bytes_of(theirs.pointer(data_at).unwrap().as_str().unwrap()),
        "{file}: bytes"
    );
    *ours.pointer_mut(data_at).unwrap() = theirs.pointer(data_at).unwrap().clone();
    for (at, value) in differs {
        assert_eq!(ours.pointer(at), Some(value), "{file}: {at}");
        *ours.pointer_mut(at).unwrap() = theirs.pointer(at).unwrap().clone();
    }
    assert_eq!(actual, expected, "{file}");
}

#[test]
fn openai_chat_parts_are_the_sdks() {
    // The capture asked for `detail: low`; prompt-tester sends the API's default, `auto`, unless
    // the part says otherwise (below).
    let detail = [("/image_url/detail", json!("auto"))];
    check(
        "openai_chat_image.json",
        WireFormat::OpenAi,
        "/messages/0/content",
        "receipt.png",
        "/image_url/url",
        &detail,
    );
    check(
        "openai_chat_audio.json",
        WireFormat::OpenAi,
        "/messages/0/content",
        "receipt.wav",
        "/input_audio/data",
        &[],
    );
    check(
        "openai_chat_pdf.json",
        WireFormat::OpenAi,
        "/messages/0/content",
        "receipt.pdf",
        "/file/file_data",
        &[],
    );
    // The data URLs carry the media type.
    let image = fixture("openai_chat_image.json");
    let png = decode(
        image
            .pointer("/messages/0/content/1/image_url/url")
            .unwrap()
            .as_str()
            .unwrap(),
    );
    let body = sent(
        WireFormat::OpenAi,
        "gpt-4o",
        vec![part("r.png", png.clone())],
    );
    let url = body
        .pointer("/messages/0/content/0/image_url/url")
        .unwrap()
        .as_str()
        .unwrap();
    assert!(url.starts_with("data:image/png;base64,iVBOR"), "{url}");
    // A part read at `low` is the SDK's part exactly.
    let body = sent(
        WireFormat::OpenAi,
        "gpt-4o",
        vec![image_at("receipt.png", png.clone(), ImageDetail::Low)],
    );
    assert_eq!(
        body.pointer("/messages/0/content/0"),
        image.pointer("/messages/0/content/1")
    );
    let high = sent(
        WireFormat::OpenAi,
        "gpt-4o",
        vec![image_at("receipt.png", png, ImageDetail::High)],
    );
    assert_eq!(
        high.pointer("/messages/0/content/0/image_url/detail"),
        Some(&json!("high"))
    );
}

#[test]
fn anthropic_blocks_are_the_sdks() {
    check(
        "anthropic_image.json",
        WireFormat::Anthropic,
        "/messages/0/content",
        "receipt.png",
        "/source/data",
        &[],
    );
    check(
        "anthropic_pdf.json",
        WireFormat::Anthropic,
        "/messages/0/content",
        "receipt.pdf",
        "/source/data",
        &[],
    );
    check(
        "anthropic_text_document.json",
        WireFormat::Anthropic,
        "/messages/0/content",
        "receipt.txt",
        "/source/data",
        &[],
    );
}

#[test]
fn gemini_parts_are_the_sdks() {
    for file in [
        "gemini_image.json",
        "gemini_pdf.json",
        "gemini_audio.json",
        "gemini_image_dict_snake_case.json",
    ] {
        let name = match file {
            "gemini_pdf.json" => "receipt.pdf",
            "gemini_audio.json" => "receipt.wav",
            _ => "receipt.png",
        };
        check(
            file,
            WireFormat::Google,
            "/contents/0/parts",
            name,
            "/inlineData/data",
            &[],
        );
    }
}

#[test]
fn a_text_document_is_a_text_part_in_openai_chat() {
    let text = "Receipt\nCoffee 3.50\n";
    let body = sent(
        WireFormat::OpenAi,
        "gpt-4o",
        vec![part("receipt.txt", text.into())],
    );
    assert_eq!(
        body["messages"][0]["content"],
        json!([{"type": "text", "text": text}])
    );
}

#[test]
fn media_files_are_read_and_checked() {
    let dir = std::env::temp_dir().join(format!("pt-media-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pdf = dir.join("contract.png");
    std::fs::write(&pdf, b"%PDF-1.4\n%%EOF\n").unwrap();
    let error = Media::file(&pdf).load().unwrap_err().to_string();
    assert!(
        error.contains("contract.png")
            && error.contains("application/pdf")
            && error.contains(".pdf"),
        "{error}"
    );
    let missing = Media::file(dir.join("gone.wav"))
        .load()
        .unwrap_err()
        .to_string();
    assert!(missing.contains("gone.wav"), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `media_fixture` against the fake: the image of `target_prompt_vars` goes in each wire's own shape at
/// the placeholder's place, the Anthropic audio and the missing file fail their samples with no call.
#[test]
fn a_prompt_test_places_media_in_each_wire_and_refuses_what_a_wire_does_not_take() {
    use prompt_tester_testkit::child::{Scratch, entry};
    use prompt_tester_testkit::{FakeProvider, Wire};

    let fake = FakeProvider::start();
    let scratch = Scratch::new("media", "wires");
    let wav = fixture("gemini_audio.json");
    let wav = decode(
        wav.pointer("/contents/0/parts/1/inlineData/data")
            .unwrap()
            .as_str()
            .unwrap(),
    );
    std::fs::write(scratch.path().join("voice.wav"), &wav).unwrap();
    let run = scratch
        .example("media_fixture")
        .args(["--no-cassette", "--report", "report.json"])
        .args(["--skip", "audio_openai"])
        .base_urls(&fake)
        .run();
    let context = run.context();
    assert_eq!(run.code(), Some(101), "{context}");
    run.assert_outcomes(&["image_openai", "image_anthropic", "image_gemini"], "ok");
    run.assert_outcomes(&["audio_anthropic", "missing_file"], "FAILED");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(scratch.path().join("report.json")).unwrap())
            .unwrap();
    // The refused call errors its sample; an unreadable file fails the trial before any sample, as
    // a placeholder without a value does.
    let message = |trial: &str, status: &str| {
        let e = entry(&report["tests"], "name", trial);
        assert_eq!(e["status"], status, "{trial}: {e:#}");
        e["message"].as_str().unwrap_or_default().to_string()
    };
    let audio = message("audio_anthropic", "errored");
    for said in [
        "`anthropic`",
        "Anthropic Messages",
        "voice.wav",
        "audio/wav",
        "it takes images",
    ] {
        assert!(audio.contains(said), "{said}: {audio}");
    }
    let missing = message("missing_file", "failed");
    assert!(
        missing.contains("gone.png") && missing.contains("cannot read"),
        "{missing}"
    );

    // Three calls, the images'; none for the refused samples.
    let png =
        fixture("anthropic_image.json")["messages"][0]["content"][0]["source"]["data"].clone();
    let png = png.as_str().unwrap();
    let requests = fake.requests();
    assert_eq!(
        requests.len(),
        3,
        "{:?}",
        requests.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    for request in &requests {
        let body = request.json.clone().unwrap();
        let (content, image) = match request.wire().unwrap() {
            Wire::OpenAi => (
                &body["messages"][0]["content"],
                json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{png}"), "detail": "auto"}}),
            ),
            Wire::Anthropic => (
                &body["messages"][0]["content"],
                json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}),
            ),
            Wire::Gemini => (
                &body["contents"][0]["parts"],
                json!({"inlineData": {"data": png, "mime_type": "image/png"}}),
            ),
        };
        let text = |t: &str| match request.wire().unwrap() {
            Wire::Gemini => json!({"text": t}),
            _ => json!({"type": "text", "text": t}),
        };
        // The text before and after the placeholder stays text, around the image.
        assert_eq!(
            content,
            &json!([text("Read "), image, text(" and give the total.")]),
            "{}",
            request.path
        );
    }
}

/// A short real WAV: 16-bit mono PCM at 8 kHz, a tenth of a second of a 440 Hz tone.
fn wav() -> Vec<u8> {
    let samples: Vec<i16> = (0..800)
        .map(|i| ((i as f64 * 440.0 * std::f64::consts::TAU / 8000.0).sin() * 8000.0) as i16)
        .collect();
    let data_len = (samples.len() * 2) as u32;
    let mut out = Vec::new();
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&8000u32.to_le_bytes());
    out.extend_from_slice(&16000u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    samples
        .iter()
        .for_each(|s| out.extend_from_slice(&s.to_le_bytes()));
    out
}

/// A minimal one-page PDF saying "Total 7.50" (its cross-reference offsets computed).
fn pdf() -> Vec<u8> {
    let content = "BT /F1 12 Tf 20 50 Td (Total 7.50) Tj ET";
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_string(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    let mut out = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out += &format!("{} 0 obj\n{object}\nendobj\n", i + 1);
    }
    let xref = out.len();
    out += &format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        out += &format!("{offset:010} 00000 n \n");
    }
    out += &format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    );
    out.into_bytes()
}

/// The suite the scratch crate of the round trip holds: the Rust test's media, from the suite's
/// folder, in its prompt and a user message, judged with them.
const MEDIA_SUITE: &str = r#"
prompt = "Summarise {receipt} and {contract}."
models = ["openai/gpt-4o-mini", "anthropic/claude-haiku-4-5", "google/gemini-2.5-flash"]
messages = [{ role = "user", content = "A voice note first: {voice}" }, { role = "assistant", content = "Noted." }]

[[cases]]
name = "receipt"
inputs = { receipt = { image = "media/receipt.png" }, contract = { document = "media/contract.pdf" }, voice = { audio = "media/voice.wav" } }
assert = [{ contains = "7.50" }, { judge = "Is the total of {receipt} the one in the reply?", judge_inputs = true }]
"#;

/// The media parts of a request body, as `kind name-or-type` in order, in whichever wire it is.
fn media_sent(body: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let contents = body
        .get("messages")
        .or_else(|| body.get("contents"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for message in contents {
        let parts = message
            .get("content")
            .or_else(|| message.get("parts"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for part in parts {
            if let Some(url) = part.pointer("/image_url/url").and_then(Value::as_str) {
                found.push(url.split(';').next().unwrap().to_string());
            } else if let Some(format) = part.pointer("/input_audio/format").and_then(Value::as_str)
            {
                found.push(format!("audio {format}"));
            } else if let Some(data) = part.pointer("/file/file_data").and_then(Value::as_str) {
                found.push(data.split(';').next().unwrap().to_string());
            } else if let Some(mime) = part
                .pointer("/inlineData/mime_type")
                .or_else(|| part.pointer("/inlineData/mimeType"))
                .and_then(Value::as_str)
            {
                found.push(mime.to_string());
            } else if let Some(mime) = part.pointer("/source/media_type").and_then(Value::as_str) {
                found.push(mime.to_string());
            }
        }
    }
    found
}

/// The issue's "done when": a Rust test and a suite, each with an image, a PDF and an audio clip, run
/// against each provider's shape (audio refused by the Anthropic format before any call), their judge
/// sent the media too; recorded, replayed under `CI` with no call, and stale once a file changes.
#[test]
fn a_test_and_a_suite_with_an_image_a_pdf_and_audio_record_replay_and_go_stale() {
    use prompt_tester_testkit::child::{Scratch, entry};
    use prompt_tester_testkit::{FakeProvider, Reply, judge_cycling};

    let judge = judge_cycling(&["yes"]);
    let fake = FakeProvider::builder()
        .respond_with(move |request| match request.model().as_deref() {
            Some("judge-model") => judge(request),
            _ => Reply::answer(request, "The total is 7.50."),
        })
        .start();
    let scratch = Scratch::new("media", "roundtrip");
    let png =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/media/receipt.png"))
            .unwrap();
    let media = scratch.path().join("prompt-tests/media");
    std::fs::create_dir_all(&media).unwrap();
    std::fs::write(media.join("receipt.png"), &png).unwrap();
    std::fs::write(media.join("contract.pdf"), pdf()).unwrap();
    std::fs::write(media.join("voice.wav"), wav()).unwrap();
    scratch.file("prompt-tests/media.evals.toml", MEDIA_SUITE);
    scratch.config("[judge]\nprovider = \"openai\"\nmodel = \"judge-model\"\n");
    let trials = |kind: &str| -> Vec<String> {
        [
            "openai/gpt-4o-mini",
            "anthropic/claude-haiku-4-5",
            "google/gemini-2.5-flash",
        ]
        .iter()
        .map(|m| match kind {
            "rust" => format!("receipt[{m}]"),
            _ => format!("media::receipt[{m}]"),
        })
        .collect()
    };
    let (rust, suite) = (trials("rust"), trials("suite"));
    let run = |ci: bool| {
        let mut child = scratch
            .example("media_suite_fixture")
            .args(["--report", "report.json"])
            .base_urls(&fake);
        child = match ci {
            true => child.env("CI", "true"),
            false => child.env("PROMPT_TESTER_CASSETTE", "record"),
        };
        let run = child.run();
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(scratch.path().join("report.json")).unwrap(),
        )
        .unwrap();
        (run, report)
    };

    // What a failed trial said: a test's in the JSON report, a suite case's in the console.
    let said = |run: &prompt_tester_testkit::child::Run, report: &Value, trial: &str| {
        if trial.contains("::") {
            let out = run.stdout();
            let at = out
                .find(&format!("---- {trial} "))
                .unwrap_or_else(|| panic!("no failure of {trial}: {}", run.context()));
            let block = &out[at + 5..];
            let end = block.find("\n---- ").unwrap_or(block.len());
            block[..end].to_string()
        } else {
            let e = entry(&report["tests"], "name", trial);
            e["message"].as_str().unwrap_or_default().to_string()
        }
    };
    let (recorded, report) = run(false);
    let context = recorded.context();
    assert_eq!(recorded.code(), Some(101), "{context}");
    for trials in [&rust, &suite] {
        recorded.assert_outcomes(&[&trials[0], &trials[2]], "ok");
        recorded.assert_outcomes(&[&trials[1]], "FAILED");
        let message = said(&recorded, &report, &trials[1]);
        for said in ["`anthropic`", "voice.wav", "audio/wav", "it takes images"] {
            assert!(message.contains(said), "{said}: {message}");
        }
    }
    // Four subject calls (OpenAI and Gemini, a test and a suite each) and four judge calls; none
    // for Anthropic. Each carries the three parts in its wire's shape, the judge's too.
    let requests = fake.requests();
    let sent: Vec<(String, Vec<String>)> = requests
        .iter()
        .map(|r| (r.model().unwrap(), media_sent(r.json.as_ref().unwrap())))
        .collect();
    assert_eq!(requests.len(), 8, "{sent:?}");
    for (model, media) in &sent {
        let expected: &[&str] = match model.as_str() {
            "gemini-2.5-flash" => &["audio/wav", "image/png", "application/pdf"],
            // The judge is sent them in name order, ahead of its text.
            "judge-model" => &["data:application/pdf", "data:image/png", "audio wav"],
            _ => &["audio wav", "data:image/png", "data:application/pdf"],
        };
        assert_eq!(media, expected, "{model}");
    }
    assert!(sent.iter().all(|(model, _)| !model.starts_with("claude")));

    // The recordings name each part by its hash; its bytes are stored once, beside the cassettes
    // (the test's, the suite's and every judge call's parts: three files).
    let cassettes = scratch.cassettes();
    let store: Vec<String> = std::fs::read_dir(cassettes.join("media"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let png_part = MediaPart::new("receipt.png", png.clone()).unwrap();
    assert_eq!(store.len(), 3, "{store:?}");
    assert!(
        store.contains(&format!("{}.png", png_part.sha256())),
        "{store:?}"
    );
    for cassette in ["receipt.cassette.json", "media.cassette.json"] {
        let text = std::fs::read_to_string(cassettes.join(cassette)).unwrap();
        assert!(text.contains(png_part.sha256()), "{cassette}");
        assert!(
            !text.contains(&png_part.base64()),
            "{cassette}: base64 inline"
        );
    }

    // Replayed under CI: the same outcomes, no call.
    let (replayed, _) = run(true);
    assert_eq!(replayed.code(), Some(101), "{}", replayed.context());
    for trials in [&rust, &suite] {
        replayed.assert_outcomes(&[&trials[0], &trials[2]], "ok");
    }
    assert_eq!(fake.requests().len(), 8, "a replay makes no call");

    // The image changes: every trial that sends it is stale under CI, and makes no call.
    let mut changed = png.clone();
    changed.extend_from_slice(b"\0changed");
    std::fs::write(media.join("receipt.png"), &changed).unwrap();
    let (stale, report) = run(true);
    assert_eq!(stale.code(), Some(101), "{}", stale.context());
    for trial in [&rust[0], &rust[2], &suite[0], &suite[2]] {
        stale.assert_outcomes(&[trial], "FAILED");
        let message = said(&stale, &report, trial);
        // Said with the file, both hashes and both sizes (never the bytes).
        let sha = |bytes: &[u8]| {
            MediaPart::new("r.png", bytes.to_vec())
                .unwrap()
                .sha256()
                .to_string()
        };
        let wording = format!(
            "image receipt.png changed (sha {}… -> {}…, {} B -> {} B)",
            &sha(&png)[..4],
            &sha(&changed)[..4],
            png.len(),
            changed.len()
        );
        assert!(message.contains(&wording), "{trial}: {wording}: {message}");
    }
    assert_eq!(
        fake.requests().len(),
        8,
        "a stale call under CI is not made"
    );

    // A judge whose format takes no audio is refused before its call, as a subject would be.
    std::fs::write(media.join("receipt.png"), &png).unwrap();
    scratch.config("[judge]\nprovider = \"anthropic\"\nmodel = \"claude-haiku-4-5\"\n");
    let refused = scratch
        .example("media_suite_fixture")
        .args([rust[0].as_str(), "--exact", "--report", "report.json"])
        .base_urls(&fake)
        .env("PROMPT_TESTER_CASSETTE", "off")
        .run();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(scratch.path().join("report.json")).unwrap())
            .unwrap();
    refused.assert_outcomes(&[&rust[0]], "FAILED");
    let message = said(&refused, &report, &rust[0]);
    for part in ["judge", "`anthropic`", "voice.wav", "audio/wav"] {
        assert!(message.contains(part), "{part}: {message}");
    }
    let requests = fake.requests();
    assert_eq!(requests.len(), 9, "the subject's call alone");
    assert_eq!(requests[8].model().as_deref(), Some("gpt-4o-mini"));
}

/// `media_fixture --estimate`: each image counted by its provider's rule from its header (the 2x2
/// receipt: OpenAI 255 tokens, Anthropic 1, Gemini 258), OpenAI chat audio unpriced and named; under
/// `--budget` that audio call is refused before any call, as an unpriced model's is.
#[test]
fn estimate_counts_media_by_each_providers_rule_and_a_budget_refuses_audio_it_cannot_price() {
    use prompt_tester_testkit::FakeProvider;
    use prompt_tester_testkit::child::{Scratch, entry};

    let scratch = Scratch::new("media", "estimate");
    // $1 a million input tokens, output free: a row's cost in millionths is its input tokens.
    scratch.config(
        &["gpt-4o-mini", "claude-haiku-4-5", "gemini-2.5-flash"]
            .map(|m| format!("[prices.\"{m}\"]\ninput_mtok = 1.0\noutput_mtok = 0.0\n"))
            .concat(),
    );
    let run = scratch
        .example("media_fixture")
        .args(["--estimate", "--report", "estimate.json"])
        .run();
    run.assert_success();
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(scratch.path().join("estimate.json")).unwrap(),
    )
    .unwrap();
    let tokens = |trial: &str| {
        let e = entry(&report["estimate"]["trials"], "trial", trial);
        (e["subject"]["cost_usd"].as_f64().unwrap() * 1e6).round() as i64
    };
    let text = tokens("image_anthropic") - 1;
    assert!(text > 0, "{report:#}");
    assert_eq!(
        [tokens("image_openai"), tokens("image_gemini")],
        [text + 255, text + 258],
        "{report:#}"
    );
    let printed = run.stdout() + &run.stderr();
    prompt_tester_testkit::child::assert_contains(
        &printed,
        &[
            "audio_openai: unpriced: the audio silence-1.5s.wav (audio/wav): no published token \
             rate for audio in the OpenAI Chat Completions format",
            "+ unpriced calls",
        ],
    );
    // A media file that cannot be read: the estimate names it, as the run would.
    let gone = scratch
        .example("media_fixture")
        .args(["--estimate", "image_openai", "--exact"])
        .env("MEDIA_FIXTURE_RECEIPT", scratch.path().join("gone.png"))
        .run();
    gone.assert_success();
    let printed = gone.stdout() + &gone.stderr();
    prompt_tester_testkit::child::assert_contains(
        &printed,
        &["image_openai: the subject: ", "gone.png", "cannot read it"],
    );
    assert!(!printed.contains("not set"), "{printed}");

    let fake = FakeProvider::start();
    let run = scratch
        .example("media_fixture")
        .args(["--no-cassette", "--budget", "10", "audio_openai"])
        .base_urls(&fake)
        .run();
    assert_eq!(run.code(), Some(101), "{}", run.context());
    run.assert_outcomes(&["audio_openai"], "FAILED");
    prompt_tester_testkit::child::assert_contains(
        &(run.stdout() + &run.stderr()),
        &[
            "openai/gpt-4o-mini: the audio silence-1.5s.wav (audio/wav): no published token rate \
             for audio in the OpenAI Chat Completions format, so its input tokens have no count and \
             under a budget its call is refused",
        ],
    );
    assert_eq!(fake.request_count(), 0, "{}", run.context());
}

/// `media_fixture`'s `image_openai` recorded through the fake: the cassette names the image by its
/// hash (no base64) and the store beside it holds the bytes once; it replays under `CI` with no call;
/// the image changed, the replay fails saying which image changed, its hashes and sizes.
#[test]
fn an_image_is_recorded_into_the_media_store_replays_under_ci_and_goes_stale_when_changed() {
    use prompt_tester::testing::cassette::reference;
    use prompt_tester_testkit::FakeProvider;
    use prompt_tester_testkit::child::Scratch;

    let fake = FakeProvider::start();
    let scratch = Scratch::new("media", "store");
    let receipt = scratch.path().join("receipt.png");
    let original =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/media/receipt.png"))
            .unwrap();
    std::fs::write(&receipt, &original).unwrap();
    let run = |env: &[(&str, &str)]| {
        scratch
            .example("media_fixture")
            .args(["image_openai", "--exact"])
            .env("MEDIA_FIXTURE_RECEIPT", &receipt)
            .envs(env)
            .base_urls(&fake)
            .run()
    };
    let recorded = run(&[("OPENAI_API_KEY", "sk-media-store-test-key")]);
    recorded.assert_success();
    assert_eq!(fake.request_count(), 1, "{}", recorded.context());

    let part = Media::bytes("receipt.png", original.clone())
        .load()
        .unwrap();
    let cassette = scratch.cassettes().join("image_openai.cassette.json");
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(
        text.contains(&format!("\"sha256\": \"{}\"", part.sha256()))
            && text.contains(&format!("\"size\": {}", original.len()))
            && text.contains("\"name\": \"receipt.png\""),
        "{text}"
    );
    assert!(
        !text.contains(&part.base64()[..40]) && !text.contains("base64"),
        "no bytes in the cassette: {text}"
    );
    let stored = scratch.cassettes().join("media").join(reference(&part));
    assert_eq!(std::fs::read(&stored).unwrap(), original);

    // Replayed under CI, offline: the fake is not called again.
    let replayed = run(&[("CI", "true")]);
    replayed.assert_success();
    assert_eq!(fake.request_count(), 1, "{}", replayed.context());

    // The image changed: the call is stale, and the message says what changed, not the bytes.
    let changed =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/media/red-37x23.png"))
            .unwrap();
    std::fs::write(&receipt, &changed).unwrap();
    let stale = run(&[("CI", "true")]);
    assert_eq!(stale.code(), Some(101), "{}", stale.context());
    assert_eq!(fake.request_count(), 1, "{}", stale.context());
    let new = Media::bytes("receipt.png", changed.clone()).load().unwrap();
    let said = stale.stdout() + &stale.stderr();
    let kb = |n: usize| match n {
        0..1_000 => format!("{n} B"),
        _ => format!("{} KB", (n + 500) / 1_000),
    };
    prompt_tester_testkit::child::assert_contains(
        &said,
        &[
            "Changed since it was recorded: image receipt.png changed (sha ",
            &format!("{}… -> {}…", &part.sha256()[..4], &new.sha256()[..4]),
            &format!("{} -> {}", kb(original.len()), kb(changed.len())),
        ],
    );
    assert!(!said.contains(&new.base64()[..40]), "{said}");
}

/// The reports of `media_fixture`: the JSON report names each part (placeholder, name, type, size,
/// sha256, pixels or seconds) and holds no bytes; the HTML report previews the image once and names
/// it; JUnit gives a property per part; the Markdown summary names the media of a failed trial.
#[test]
fn reports_name_media_and_only_the_html_report_shows_an_image() {
    use prompt_tester_testkit::FakeProvider;
    use prompt_tester_testkit::child::{Scratch, entry};

    let fake = FakeProvider::start();
    let scratch = Scratch::new("media", "reports");
    let wav = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/media/silence-1.5s.wav"
    ))
    .unwrap();
    std::fs::write(scratch.path().join("voice.wav"), &wav).unwrap();
    let run = scratch
        .example("media_fixture")
        .args([
            "--no-cassette",
            "--skip",
            "audio_openai",
            "--skip",
            "missing_file",
        ])
        .args(["--report", "r.json", "--html", "r.html", "--junit", "j.xml"])
        .args(["--markdown", "s.md"])
        .base_urls(&fake)
        .run();
    assert_eq!(run.code(), Some(101), "{}", run.context());
    let read = |name: &str| std::fs::read_to_string(scratch.path().join(name)).unwrap();
    let receipt = Media::file(RECEIPT_PNG).load().unwrap();
    let (png, png64, sha) = (receipt.bytes(), receipt.base64(), receipt.sha256());

    let json = read("r.json");
    assert!(!json.contains(&png64), "no bytes in the JSON report");
    let report: Value = serde_json::from_str(&json).unwrap();
    let image = &entry(&report["tests"], "name", "image_openai")["media"];
    assert_eq!(
        image,
        &json!([{
            "var": "receipt", "kind": "image", "name": "receipt.png", "media_type": "image/png",
            "bytes": png.len(), "sha256": sha, "extent": {"pixels": {"width": 2, "height": 2}},
        }]),
        "{report:#}"
    );
    let audio = &entry(&report["tests"], "name", "audio_anthropic")["media"][0];
    assert_eq!(
        (&audio["kind"], &audio["extent"]),
        (&json!("audio"), &json!({"seconds": 1.5}))
    );

    // The image once, as a data URL, whatever the three trials that show it.
    let html = read("r.html");
    assert_eq!(html.matches(&png64).count(), 1, "one preview");
    assert!(html.contains("img.src=p"), "the page's media view");
    assert!(html.contains(&format!(
        "image receipt.png (image/png, 2x2, {} B)",
        png.len()
    )));
    assert!(html.contains("audio voice.wav (audio/wav, 1.5 s, 23 KB)"));

    let junit = read("j.xml");
    assert!(
        junit.contains(&format!(
            r#"<property name="media.receipt" value="image receipt.png (image/png, 2x2, {} B)"/>"#,
            png.len()
        )),
        "{junit}"
    );
    assert!(!junit.contains(&png64));

    let markdown = read("s.md");
    assert!(
        markdown.contains(
            "**audio\\_anthropic**\n\n- {voice}: audio voice.wav (audio/wav, 1.5 s, 23 KB)"
        ),
        "{markdown}"
    );
}

/// A report merged from results fragments (`cargo prompt-tester report`, what a nextest run takes)
/// previews an image the run recorded: its bytes read from the media store, as the in-process
/// report has them; the fragment itself holds none.
#[test]
fn a_merged_report_previews_a_recorded_image_from_the_media_store() {
    use prompt_tester_testkit::FakeProvider;
    use prompt_tester_testkit::child::{self, Child, Scratch};

    let fake = FakeProvider::start();
    let scratch = Scratch::new("media", "merged_preview");
    let recorded = scratch
        .example("media_fixture")
        .args(["image_openai", "--exact"])
        .env("PROMPT_TESTER_RESULTS", scratch.path().join("results"))
        .base_urls(&fake)
        .run();
    recorded.assert_success();
    let png64 = Media::file(RECEIPT_PNG).load().unwrap().base64();
    let fragments: Vec<String> = walk(&scratch.path().join("results"))
        .iter()
        .map(|file| std::fs::read_to_string(file).unwrap())
        .collect();
    assert!(
        !fragments.is_empty() && fragments.iter().all(|text| !text.contains(&png64)),
        "no bytes in the results fragments"
    );

    // `cargo prompt-tester` finds the crate by its manifest.
    scratch.file(
        "Cargo.toml",
        "[package]\nname = \"pt-media\"\nversion = \"0.0.0\"\nedition = \"2021\"\n",
    );
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let report = |html: &str| {
        Child::new(child::built_binary("cargo-prompt-tester", &workspace))
            .root(scratch.path())
            .args([
                "prompt-tester",
                "report",
                "--from",
                "results",
                "--html",
                html,
            ])
            .run()
    };
    report("merged.html").assert_success();
    let html = std::fs::read_to_string(scratch.path().join("merged.html")).unwrap();
    assert_eq!(html.matches(&png64).count(), 1, "one preview");

    // A stored file that is not the bytes the trial sent is not shown as them.
    let media = scratch.cassettes().join("media");
    for entry in std::fs::read_dir(&media).unwrap() {
        std::fs::write(entry.unwrap().path(), b"\x89PNG\r\n\x1a\nother").unwrap();
    }
    report("edited.html").assert_success();
    let html = std::fs::read_to_string(scratch.path().join("edited.html")).unwrap();
    assert!(
        !html.contains("data:image/png;base64"),
        "named, not previewed"
    );
}

/// The files under `dir`, at any depth.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
