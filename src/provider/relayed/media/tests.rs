use std::path::Path;

use serde_json::{Value, json};

use super::*;

/// The inputs `capture.py` sent (`tests/providers/media_sdk/README.md`, "The inputs"): the PNG is
/// `tests/fixtures/media/receipt.png`; the PDF's and the WAV's sha256 are the README's.
const PDF_SHA256: &str = "2c6a5fc6c608a533c6b48ec05943475236060a8658bbd7f56c339cce61375fbf";
const WAV_SHA256: &str = "c726d333dd159a31423f3480dbb1c5c4a9dfcd30efe1f7e12ade390dc92e8908";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A capture's API (from its path, as the endpoint routes it) and its body.
fn capture(file: &str) -> (Api, Value) {
    let path = root().join("tests/providers/media_sdk").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let capture: Value = serde_json::from_str(&text).unwrap();
    let (api, _) = Api::of_path(capture["path"].as_str().unwrap()).unwrap();
    (api, capture["body"].clone())
}

fn png() -> Vec<u8> {
    std::fs::read(root().join("tests/fixtures/media/receipt.png")).unwrap()
}

fn sha256(bytes: &[u8]) -> String {
    crate::text::sha256_hex(&[bytes], 32)
}

/// Every value of `body` that is a string, with its pointer.
fn strings(value: &Value, at: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => out.push((at, s.clone())),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                strings(v, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                strings(v, format!("{at}/{k}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_sdk_capture_s_media_is_found_with_the_source_file_s_bytes() {
    let png = png();
    let png_sha = sha256(&png);
    for (file, at, media_type, sha) in [
        (
            "openai_chat_image.json",
            "/messages/0/content/1/image_url/url",
            "image/png",
            png_sha.as_str(),
        ),
        (
            "openai_chat_audio.json",
            "/messages/0/content/1/input_audio/data",
            "audio/wav",
            WAV_SHA256,
        ),
        (
            "openai_chat_pdf.json",
            "/messages/0/content/1/file/file_data",
            "application/pdf",
            PDF_SHA256,
        ),
        (
            "openai_responses_image.json",
            "/input/0/content/1/image_url",
            "image/png",
            &png_sha,
        ),
        (
            "openai_responses_pdf.json",
            "/input/0/content/1/file_data",
            "application/pdf",
            PDF_SHA256,
        ),
        (
            "anthropic_image.json",
            "/messages/0/content/0/source/data",
            "image/png",
            &png_sha,
        ),
        (
            "anthropic_pdf.json",
            "/messages/0/content/0/source/data",
            "application/pdf",
            PDF_SHA256,
        ),
        (
            "gemini_image.json",
            "/contents/0/parts/1/inlineData/data",
            "image/png",
            &png_sha,
        ),
        (
            "gemini_image_dict_snake_case.json",
            "/contents/0/parts/1/inlineData/data",
            "image/png",
            &png_sha,
        ),
        (
            "gemini_pdf.json",
            "/contents/0/parts/1/inlineData/data",
            "application/pdf",
            PDF_SHA256,
        ),
        (
            "gemini_audio.json",
            "/contents/0/parts/1/inlineData/data",
            "audio/wav",
            WAV_SHA256,
        ),
    ] {
        let (api, body) = capture(file);
        let found = find(api, &body);
        assert_eq!(found.len(), 1, "{file}: {found:?}");
        let media = &found[0];
        assert_eq!(
            (media.at.as_str(), media.media_type.as_str()),
            (at, media_type),
            "{file}"
        );
        assert_eq!(sha256(media.part.bytes()), sha, "{file}");
        assert_eq!(media.part.sha256(), sha, "{file}");
        if sha == png_sha {
            assert_eq!(media.part.bytes(), png, "{file}");
        }

        // Stored: the reference in its place, the rest of the body as it was, no base64 of it left.
        let original = body.pointer(at).unwrap().as_str().unwrap().to_string();
        let data = original.rsplit(',').next().unwrap();
        let stored = referenced(body.clone(), &found);
        let text = stored.to_string();
        assert!(!text.contains(data), "{file}: {text}");
        let extension = match media_type {
            "image/png" => "png",
            "application/pdf" => "pdf",
            _ => "wav",
        };
        let reference = json!({"media": format!("{sha}.{extension}"), "media_type": media_type,
            "size": media.part.bytes().len()});
        assert_eq!(stored.pointer(at), Some(&reference), "{file}");
        let mut back = stored;
        *back.pointer_mut(at).unwrap() = Value::String(original);
        assert_eq!(back, body, "{file}");
    }
}

#[test]
fn a_text_document_is_text_not_media() {
    let (api, body) = capture("anthropic_text_document.json");
    assert_eq!(find(api, &body), Vec::new());
}

#[test]
fn the_same_media_is_one_reference_and_a_changed_one_another() {
    let png = png();
    let encoded = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let image = |bytes: &[u8]| json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", encoded(bytes))}});
    let mut changed = png.clone();
    *changed.last_mut().unwrap() ^= 1;
    let body = json!({"messages": [{"role": "user", "content": [image(&png), image(&png), image(&changed)]}]});
    let found = find(Api::ChatCompletions, &body);
    let references: Vec<Value> = found.iter().map(RelayedMedia::reference).collect();
    assert_eq!(references.len(), 3);
    assert_eq!(references[0], references[1]);
    assert_ne!(references[0], references[2]);
    // Either alphabet, padded or not, is the same bytes (Gemini's SDK writes URL-safe base64).
    let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&png);
    let gemini = json!({"contents": [{"parts": [{"inline_data": {"mime_type": "image/png", "data": url_safe}}]}]});
    let found = find(Api::GenerateContent, &gemini);
    assert_eq!(found[0].reference(), references[0]);
    assert_eq!(found[0].at, "/contents/0/parts/0/inline_data/data");
}

/// A body of `api` with media of its own, and `must_stay` beside it: base64 at positions that do not
/// carry media. Only the media is found; every other string is kept byte for byte.
fn only_the_media_is_taken(api: Api, body: Value, media_at: &[&str]) {
    let found = find(api, &body);
    let at: Vec<&str> = found.iter().map(|m| m.at.as_str()).collect();
    assert_eq!(at, media_at, "{body:#}");
    let stored = referenced(body.clone(), &found);
    let (mut before, mut after) = (Vec::new(), Vec::new());
    strings(&body, String::new(), &mut before);
    strings(&stored, String::new(), &mut after);
    for (pointer, text) in before {
        if media_at.contains(&pointer.as_str()) {
            continue;
        }
        assert_eq!(
            stored.pointer(&pointer),
            Some(&Value::String(text)),
            "{pointer}"
        );
    }
    assert!(after.len() >= media_at.len());
}

#[test]
fn base64_outside_the_media_positions_stays() {
    let png = png();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    let url = format!("data:image/png;base64,{b64}");
    only_the_media_is_taken(
        Api::ChatCompletions,
        json!({"model": "gpt-4o", "messages": [
            {"role": "system", "content": url},
            {"role": "user", "content": [
                {"type": "text", "text": url},
                {"type": "image_url", "image_url": {"url": "https://example.com/receipt.png"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,not base64!"}},
                {"type": "image_url", "image_url": {"url": url, "detail": "low"}}
            ]},
            {"role": "assistant", "content": b64, "audio": {"id": b64}},
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": b64}]}
        ]}),
        &["/messages/1/content/3/image_url/url"],
    );
    only_the_media_is_taken(
        Api::Responses,
        json!({"model": "o4-mini", "include": ["reasoning.encrypted_content"], "input": [
            {"type": "reasoning", "id": "rs_1", "encrypted_content": b64, "summary": []},
            {"role": "user", "content": [
                {"type": "input_text", "text": url},
                {"type": "input_image", "image_url": "https://example.com/r.png"},
                {"type": "input_image", "file_id": "file-1"},
                {"type": "input_image", "image_url": url}
            ]},
            {"type": "function_call_output", "call_id": "c1", "output": [
                {"type": "input_image", "image_url": url}
            ]},
            {"type": "function_call_output", "call_id": "c2", "output": b64}
        ]}),
        &[
            "/input/1/content/3/image_url",
            "/input/2/output/0/image_url",
        ],
    );
    only_the_media_is_taken(
        Api::Messages,
        json!({"model": "claude", "system": [{"type": "text", "text": url}], "messages": [
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "…", "signature": b64},
                {"type": "redacted_thinking", "data": b64},
                {"type": "text", "text": url}
            ]},
            {"role": "user", "content": [
                {"type": "image", "source": {"type": "url", "url": "https://example.com/r.png"}},
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": b64}},
                {"type": "tool_result", "tool_use_id": "t1", "content": [
                    {"type": "text", "text": b64},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}}
                ]},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}}
            ]}
        ]}),
        &[
            "/messages/1/content/2/content/1/source/data",
            "/messages/1/content/3/source/data",
        ],
    );
    only_the_media_is_taken(
        Api::GenerateContent,
        json!({"systemInstruction": {"parts": [{"text": url}]}, "contents": [
            {"role": "model", "parts": [{"text": "ok", "thoughtSignature": b64},
                {"functionCall": {"name": "f", "args": {"blob": b64}}}]},
            {"role": "user", "parts": [
                {"text": url},
                {"fileData": {"fileUri": "gs://b/r.png", "mimeType": "image/png"}},
                {"inlineData": {"mimeType": "image/png", "data": b64}}
            ]}
        ]}),
        &["/contents/1/parts/2/inlineData/data"],
    );
    only_the_media_is_taken(
        Api::Embeddings,
        json!({"model": "e", "input": url, "encoding_format": "base64"}),
        &[],
    );
}

#[test]
fn a_type_the_request_does_not_declare_is_read_from_the_bytes_and_an_unknown_one_stays() {
    let b64 = base64::engine::general_purpose::STANDARD.encode(png());
    let body = json!({"input": [{"role": "user", "content": [
        {"type": "input_file", "filename": "r.png", "file_data": b64}
    ]}]});
    let found = find(Api::Responses, &body);
    assert_eq!(found[0].media_type, "image/png");
    // Bytes the store does not take (here three bytes of no type) stay where they are.
    let unknown = json!({"contents": [{"parts": [{"inlineData": {"mimeType": "video/mp4", "data": "AAEC"}}]}]});
    assert_eq!(find(Api::GenerateContent, &unknown), Vec::new());
    // A declared type is kept as declared, the file named by the bytes' type.
    let declared = json!({"contents": [{"parts": [{"inlineData": {"mimeType": "image/x-png", "data": b64}}]}]});
    let found = find(Api::GenerateContent, &declared);
    assert_eq!(found[0].reference()["media_type"], "image/x-png");
    assert!(
        found[0].reference()["media"]
            .as_str()
            .unwrap()
            .ends_with(".png")
    );
    assert!(!format!("{:?}", found[0]).contains(&b64[..12]));
}
