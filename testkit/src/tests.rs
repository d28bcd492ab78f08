use super::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub(crate) fn post(
    fake: &FakeProvider,
    path: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(fake.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let body = body.to_string();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        fake.addr(),
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (status, head.to_string(), body.to_string())
}

#[test]
fn echoes_each_wire_format_and_captures_requests() {
    let fake = FakeProvider::builder().usage(Usage::new(7, 3)).start();
    let (status, _, body) = post(
        &fake,
        "/v1/messages",
        &json!({"model": "claude-x", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}),
        &[("x-api-key", "k1")],
    );
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["content"][0]["text"], "echo: hi");
    assert_eq!(v["model"], "claude-x");
    assert_eq!(v["usage"]["input_tokens"], 7);

    let (status, _, body) = post(
        &fake,
        "/v1beta/models/gemini-y:generateContent",
        &json!({"contents": [{"role": "user", "parts": [{"text": "yo"}]}]}),
        &[],
    );
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["candidates"][0]["content"]["parts"][0]["text"],
        "echo: yo"
    );
    assert_eq!(v["modelVersion"], "gemini-y");

    let (status, _, body) = post(
        &fake,
        "/v1/chat/completions",
        &json!({"model": "m", "messages": [{"role": "user", "content": "hey"}], "response_format": {"type": "json_schema"}}),
        &[],
    );
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    let content: Value =
        serde_json::from_str(v["choices"][0]["message"]["content"].as_str().unwrap()).unwrap();
    assert_eq!(content, json!({"echo": "echo: hey"}));

    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].header("X-Api-Key"), Some("k1"));
    assert_eq!(requests[1].wire(), Some(Wire::Gemini));
    assert_eq!(requests[1].model().as_deref(), Some("gemini-y"));
    assert_eq!(fake.request_count(), 3);
}

#[test]
fn scripted_replies_come_first_then_the_responder() {
    let fake = FakeProvider::start();
    fake.push(Reply::rate_limited(
        Wire::Anthropic,
        Duration::from_millis(1500),
    ));
    let (status, head, _) = post(&fake, "/v1/messages", &json!({}), &[]);
    assert_eq!(status, 429);
    assert!(head.contains("retry-after: 2"), "{head}");
    assert!(head.contains("retry-after-ms: 1500"), "{head}");
    let (status, _, _) = post(&fake, "/v1/messages", &json!({}), &[]);
    assert_eq!(status, 200);
    fake.respond_with(|_| Reply::overloaded());
    assert_eq!(post(&fake, "/v1/messages", &json!({}), &[]).0, 529);
}

#[test]
fn fixed_answers_match_a_model_or_a_prompt_before_the_echo() {
    let fake = FakeProvider::builder()
        .answer_model("model-a", "From a.")
        .answer_prompt("Ping?", "Pong.")
        .reply_prompt("Fail?", Reply::server_error(Wire::OpenAi, 503))
        .echo_text("Echoed.")
        .start();
    let ask = |model: &str, text: &str| {
        let body = json!({"model": model, "messages": [{"role": "user", "content": text}]});
        let (status, _, body) = post(&fake, "/v1/chat/completions", &body, &[]);
        let text = serde_json::from_str::<Value>(&body).ok().map(|v| {
            v["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        });
        (status, text.unwrap_or_default())
    };
    // The first rule that matches answers: the model's before the prompt's.
    assert_eq!(ask("model-a", "Ping?"), (200, "From a.".to_string()));
    assert_eq!(ask("model-b", "Ping?"), (200, "Pong.".to_string()));
    assert_eq!(ask("model-b", "Fail?").0, 503);
    assert_eq!(ask("model-b", "Other"), (200, "Echoed.".to_string()));
}

#[test]
fn dropped_connection_gets_no_response_and_aborted_body_is_cut() {
    let fake = FakeProvider::start();
    fake.push(Reply::drop_connection());
    let (status, head, _) = post(&fake, "/v1/messages", &json!({}), &[]);
    assert_eq!((status, head.as_str()), (0, ""));
    fake.push(Reply::text(Wire::OpenAi, "m", "abcdefghij", Usage::new(1, 1)).aborted_mid_body());
    let (status, head, body) = post(&fake, "/v1/chat/completions", &json!({}), &[]);
    assert_eq!(status, 200);
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    // The terminating zero-length chunk never comes.
    assert!(!body.ends_with("0\r\n\r\n"), "{body}");
    assert_eq!(fake.in_flight(), 0);
}

#[test]
fn requests_beyond_the_limit_in_flight_get_429() {
    let fake = FakeProvider::builder()
        .latency(Duration::from_millis(300))
        .reject_beyond(2, Duration::from_millis(500))
        .start();
    let calls: Vec<_> = (0..5)
        .map(|_| {
            let addr = fake.addr();
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(addr).unwrap();
                let body = "{}";
                write!(
                    stream,
                    "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
                let mut out = String::new();
                let _ = stream.read_to_string(&mut out);
                out
            })
        })
        .collect();
    let answers: Vec<String> = calls.into_iter().map(|c| c.join().unwrap()).collect();
    let rejected: Vec<&String> = answers.iter().filter(|a| a.contains(" 429 ")).collect();
    assert_eq!(rejected.len(), 3, "{answers:#?}");
    assert!(rejected.iter().all(|a| a.contains("retry-after: 0.5\r\n")));
    assert_eq!(fake.rejected(), 3);
    assert_eq!(fake.max_admitted(), 2);
    // Once they are answered, the next request is admitted again.
    assert_eq!(post(&fake, "/v1/messages", &json!({}), &[]).0, 200);
}

#[test]
fn shutdown_closes_the_port() {
    let fake = FakeProvider::start();
    let addr = fake.addr();
    fake.shutdown();
    assert!(TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err());
}

#[test]
fn answers_embeddings_calls_of_both_formats_with_the_fake_embedding() {
    let fake = FakeProvider::builder().start();
    let (status, _, body) = post(
        &fake,
        "/v1/embeddings",
        &json!({"model": "text-embedding-3-small", "input": "Paris, 2024"}),
        &[],
    );
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["model"], "text-embedding-3-small");
    assert_eq!(json["usage"]["prompt_tokens"], 2);
    let vector: Vec<f32> = serde_json::from_value(json["data"][0]["embedding"].clone()).unwrap();
    assert_eq!(vector, fake_embedding("Paris, 2024"));
    // "p" once, and four digits.
    assert_eq!((vector[(b'p' - b'a') as usize], vector[26]), (1.0, 4.0));
    let (status, _, body) = post(
        &fake,
        "/v1beta/models/gemini-embedding-001:embedContent",
        &json!({"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "Paris"}]}}),
        &[],
    );
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["usageMetadata"]["promptTokenCount"], 1);
    assert_eq!(json["embedding"]["values"].as_array().unwrap().len(), 27);
    let requests = fake.requests();
    assert!(requests.iter().all(CapturedRequest::is_embedding));
    assert_eq!(requests[1].model().as_deref(), Some("gemini-embedding-001"));
    assert_eq!(requests[1].embedding_input().as_deref(), Some("Paris"));
    assert_eq!(requests[1].wire(), Some(Wire::Gemini));
}

#[test]
fn chat_messages_are_compared_exactly() {
    let body = json!({"messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Hi"},
    ]});
    assert_chat_messages(&body, &[("system", "sys"), ("user", "Hi")]);
    let differs = |expected: &'static [(&'static str, &'static str)]| {
        let body = body.clone();
        std::panic::catch_unwind(move || assert_chat_messages(&body, expected)).is_err()
    };
    assert!(differs(&[("user", "Hi")]), "a message missing");
    assert!(
        differs(&[("user", "Hi"), ("system", "sys")]),
        "another order"
    );
    assert!(
        differs(&[("system", "sys"), ("user", "Hi!")]),
        "another content"
    );
    assert!(
        differs(&[("system", "sys"), ("assistant", "Hi")]),
        "another role"
    );
    // Content as a list of parts (Anthropic's) is not the string the helper expects.
    let parts =
        json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]});
    assert!(std::panic::catch_unwind(|| assert_chat_messages(&parts, &[("user", "Hi")])).is_err());
}
