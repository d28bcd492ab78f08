//! The recording endpoint end to end: a `run_fn` that calls the model with its own client (plain
//! `reqwest`) records against a loopback provider, replays under `CI` with the provider stopped and no
//! key, fails with the request's diff when the request changes under `CI`, and goes pending (the
//! cassette untouched) when it changes locally; a 429 goes back to the client, whose retry succeeds.

use prompt_tester_testkit::child::Scratch;
use prompt_tester_testkit::{FakeProvider, Reply, Usage, Wire};

const FIXTURE: &str = "endpoint_fixture";

const SECRET: &str = "sk-fake-endpoint-0123456789";

fn scratch(name: &str, server: &FakeProvider) -> Scratch {
    let scratch = Scratch::new("endpoint", name);
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"FAKE_API_KEY\"\n",
        server.base_url(Wire::OpenAi)
    ));
    scratch
}

/// A provider answering `text` with 11 input and 7 output tokens.
fn fake(text: &str) -> FakeProvider {
    FakeProvider::builder()
        .echo_text(text)
        .usage(Usage {
            input_tokens: 11,
            output_tokens: 7,
            cached_input_tokens: 0,
            thoughts_tokens: 0,
        })
        .start()
}

#[test]
fn a_run_fn_s_own_client_records_replays_offline_and_goes_pending_after_a_change() {
    let server = fake("Blue");
    // The first call is refused with a 429: it goes back to the client, which retries.
    server.push(Reply::rate_limited(
        Wire::OpenAi,
        std::time::Duration::from_millis(1),
    ));
    let scratch = scratch("record", &server);
    let key = [("FAKE_API_KEY", SECRET)];

    let record = scratch.run_example(FIXTURE, &["relayed", "--exact", "--nocapture"], &key);
    assert_eq!(record.code(), Some(0), "{}", record.context());
    // Two samples, two calls each (the run_fn's and the body's), and the 429 retried.
    assert_eq!(server.request_count(), 5, "{}", record.context());
    for request in server.requests() {
        // The endpoint added the configured key: the client sent none.
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {SECRET}").as_str())
        );
    }
    record.assert_stdout_has("output=Blue second=Blue replayed=false input_tokens=11");
    // The endpoint's counts, not the run_fn's million: 4 calls of 11 + 7 tokens, priced.
    record.assert_stderr_has("44/28");
    record.assert_stderr_has("4 model calls (0 replayed from cassettes); total cost $0.00002");
    let file = scratch.cassettes().join("relayed.cassette.json");
    let recorded = std::fs::read_to_string(&file).expect("the cassette is written");
    assert!(
        !recorded.contains(SECRET),
        "a key in the cassette:\n{recorded}"
    );
    assert!(
        !recorded.contains("127.0.0.1"),
        "a URL in the cassette:\n{recorded}"
    );
    let body: serde_json::Value = serde_json::from_str(&recorded).unwrap();
    assert_eq!(
        body["version"],
        prompt_tester::testing::cassette::FORMAT_VERSION
    );
    let entries = body["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 4, "the 429 is not recorded:\n{recorded}");
    for entry in entries {
        assert_eq!(entry["http_request"]["path"], "/v1/chat/completions");
        assert_eq!(entry["http_response"]["status"], 200);
    }
    let runs: Vec<u64> = entries.iter().map(|e| e["run"].as_u64().unwrap()).collect();
    assert_eq!(runs.iter().filter(|r| **r == 1).count(), 2, "{runs:?}");

    // The estimate reads the recordings: four calls at today's prices, nothing called.
    let estimate = scratch.run_example(FIXTURE, &["relayed", "--exact", "--estimate"], &[]);
    assert_eq!(estimate.code(), Some(0), "{}", estimate.context());
    estimate.assert_stderr_has("relayed               2        4     $0.00002");
    estimate.assert_stderr_has("estimate: 4 model calls; total cost $0.00002");

    // Replayed under CI with the provider gone and no key.
    drop(server);
    let replay = scratch.run_example(
        FIXTURE,
        &["relayed", "--exact", "--nocapture"],
        &[("CI", "true")],
    );
    assert_eq!(replay.code(), Some(0), "{}", replay.context());
    replay.assert_stdout_has("replayed=true input_tokens=11");
    replay.assert_stderr_has("(4 replayed from cassettes)");

    // A changed request under CI: no call, the sample errors with what changed and the command.
    let changed = scratch.run_example(
        FIXTURE,
        &["relayed", "--exact"],
        &[("FIXTURE_THING", "shape"), ("CI", "true")],
    );
    assert_eq!(changed.code(), Some(101), "{}", changed.context());
    changed.assert_stdout_has(
        "relayed.cassette.json has 2 recording(s) of this sample but none for this call (subject call of \
         run 1/2). Changed since it was recorded: messages[0].content: \"Name a colour.\" → \"Name a shape.\". \
         Record the new answers as pending with: PROMPT_TESTER_CASSETTE=record cargo test --test \
         endpoint_fixture -- relayed",
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), recorded);

    // Locally, with a provider: the new answers go pending, the cassette stays as accepted.
    let server = fake("Square");
    let scratch_root = scratch.path().to_path_buf();
    std::fs::write(
        scratch_root.join("prompt-tester.toml"),
        format!(
            "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"FAKE_API_KEY\"\n",
            server.base_url(Wire::OpenAi)
        ),
    )
    .unwrap();
    let pending = scratch.run_example(
        FIXTURE,
        &["relayed", "--exact"],
        &[("FIXTURE_THING", "shape"), ("FAKE_API_KEY", SECRET)],
    );
    assert_eq!(pending.code(), Some(0), "{}", pending.context());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), recorded);
    let pending_file = scratch.cassettes().join("relayed.pending.json");
    let text = std::fs::read_to_string(&pending_file).expect("the new answers are pending");
    assert!(
        text.contains("Name a shape.") && text.contains("Square"),
        "{text}"
    );
}

#[test]
fn a_client_s_own_key_goes_upstream_and_is_never_written() {
    // The provider echoes the keys back: neither reaches the cassette.
    let own = "sk-client-own-key-9876543210";
    let server = fake(&format!("Blue ({SECRET}, {own})"));
    let scratch = scratch("own-key", &server);
    let run = scratch.run_example(
        FIXTURE,
        &["relayed", "--exact"],
        &[("FAKE_API_KEY", SECRET), ("FIXTURE_CLIENT_KEY", own)],
    );
    assert_eq!(run.code(), Some(0), "{}", run.context());
    for request in server.requests() {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {own}").as_str())
        );
    }
    let recorded =
        std::fs::read_to_string(scratch.cassettes().join("relayed.cassette.json")).unwrap();
    assert!(
        !recorded.contains(own) && !recorded.contains(SECRET),
        "{recorded}"
    );
    // What the harness writes (the fixture's own `output=` lines print what the provider said).
    let harness: String = run
        .stdout()
        .lines()
        .chain(run.stderr().lines())
        .filter(|l| !l.starts_with("output="))
        .collect();
    assert!(!harness.contains(own), "{}", run.context());
}

#[test]
fn an_unknown_provider_names_the_closest() {
    let server = fake("Blue");
    let scratch = scratch("unknown", &server);
    let run = scratch.run_example(FIXTURE, &["unknown", "--exact"], &[]);
    assert_eq!(run.code(), Some(101), "{}", run.context());
    run.assert_stdout_has("unknown provider \"fakee\" (did you mean \"fake\"?)");
}

#[test]
fn a_call_refused_for_want_of_a_key_or_a_recording_ends_the_sample_whatever_the_run_fn_returns() {
    let server = fake("Blue");
    let scratch = scratch("no-key", &server);
    // Locally: no recording and no key, so the trial is ignored, with the variable to set.
    let local = scratch.run_example(FIXTURE, &["without_key", "--exact"], &[]);
    assert_eq!(local.code(), Some(0), "{}", local.context());
    local.assert_stdout_has("test without_key ... ignored (no recording in");
    local.assert_stdout_has("OPENAI_API_KEY is not set");
    // Under CI: refused, and the sample errors with the record command.
    let ci = scratch.run_example(FIXTURE, &["without_key", "--exact"], &[("CI", "true")]);
    assert_eq!(ci.code(), Some(101), "{}", ci.context());
    ci.assert_stdout_has("Under CI, auto mode never calls a provider for a missing recording");
    assert_eq!(server.request_count(), 0);
    assert!(
        !scratch
            .cassettes()
            .join("without_key.cassette.json")
            .exists()
    );
}

#[test]
fn a_call_the_budget_cannot_cover_is_refused_and_the_sample_says_so() {
    let server = fake("Blue");
    let scratch = scratch("budget", &server);
    let run = scratch.run_example(
        FIXTURE,
        &["relayed", "--exact", "--budget", "0.0000001"],
        &[("FAKE_API_KEY", SECRET)],
    );
    assert_eq!(run.code(), Some(101), "{}", run.context());
    run.assert_stdout_has("ERROR: model call failed: budget of $0.00000 reached after $0.00000: the call could cost up to");
    assert_eq!(server.request_count(), 0, "{}", run.context());
}

/// The keys a hostile provider sends back: the client's own, and the endpoint's configured one.
const CLIENT_KEY: &str = "sk-PT-CLIENT-KEY-d41d8cd98f";

#[test]
fn no_key_the_client_sent_or_the_endpoint_added_reaches_a_file_or_the_output() {
    // Echoes every key header and the query back, in a success and (to "unauthorized") in a 401.
    let server = FakeProvider::builder()
        .respond_with(|request| {
            let sent: Vec<&str> = ["authorization", "x-api-key", "x-goog-api-key"]
                .iter()
                .filter_map(|h| request.header(h))
                .collect();
            let echo = format!("you sent {sent:?} to {}", request.path);
            let wire = request.wire().unwrap_or(Wire::OpenAi);
            match request.last_user_text().as_deref() {
                Some("unauthorized") => Reply::error(wire, 401, "invalid_api_key", &echo),
                _ => Reply::text(wire, "m", &echo, Usage::new(3, 2)),
            }
        })
        .start();
    let scratch = Scratch::new("endpoint", "hostile");
    let (openai, anthropic, google) = (
        server.base_url(Wire::OpenAi),
        server.base_url(Wire::Anthropic),
        server.base_url(Wire::Gemini),
    );
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{openai}\"\napi_key_env = \"FAKE_API_KEY\"\n\
         [providers.fake_anthropic]\nkind = \"anthropic\"\nbase_url = \"{anthropic}\"\n\
         [providers.fake_google]\nkind = \"google\"\nbase_url = \"{google}\"\n"
    ));
    let run = scratch.run_example(
        FIXTURE,
        &[
            "echoed_keys",
            "--exact",
            "--report",
            "out/report.json",
            "--junit",
            "out/junit.xml",
        ],
        &[("FAKE_API_KEY", SECRET), ("FIXTURE_CLIENT_KEY", CLIENT_KEY)],
    );
    // The 401 went back to the client, which returned it as its error: the sample errors.
    assert_eq!(run.code(), Some(101), "{}", run.context());
    run.assert_stdout_has("run_fn failed: HTTP 401 Unauthorized");
    // Each way of sending the key reached the provider.
    let requests = server.requests();
    assert_eq!(requests.len(), 5, "{}", run.context());
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {CLIENT_KEY}").as_str())
    );
    assert_eq!(requests[1].header("x-api-key"), Some(CLIENT_KEY));
    assert_eq!(requests[2].header("x-goog-api-key"), Some(CLIENT_KEY));
    // A key in the query goes upstream as a header, so no URL ever holds it.
    assert_eq!(requests[3].header("x-goog-api-key"), Some(CLIENT_KEY));
    assert!(
        !requests[3].path.contains(CLIENT_KEY),
        "{}",
        requests[3].path
    );
    let mut files = Vec::new();
    every_file(scratch.path(), &mut files);
    let cassette = files
        .iter()
        .find(|(p, _)| p.ends_with("echoed_keys.cassette.json"))
        .map(|(_, text)| text)
        .expect("the calls before the 401 are recorded");
    // The provider's echoes are in it, each key redacted.
    assert!(cassette.contains("REDACTED"), "{cassette}");
    assert!(files.iter().any(|(p, _)| p.ends_with("report.json")));
    for secret in [CLIENT_KEY, SECRET] {
        for (path, text) in &files {
            assert!(!text.contains(secret), "{secret} is in {path}:\n{text}");
        }
        assert!(
            !run.stdout().contains(secret) && !run.stderr().contains(secret),
            "{secret} is in the output:\n{}",
            run.context()
        );
    }
}

fn every_file(dir: &std::path::Path, found: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            every_file(&path, found);
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            found.push((path.display().to_string(), text));
        }
    }
}

#[test]
fn a_stream_is_recorded_as_its_events_and_replayed_in_order_with_its_content_type() {
    let chunk = |text: &str| {
        format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n")
    };
    let stream = format!(
        "{}{}{}data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":13,\"completion_tokens\":3}}}}\n\ndata: [DONE]\n\n",
        chunk("One, "),
        chunk("two, "),
        chunk("three.")
    );
    let server = FakeProvider::builder()
        .respond_with(move |_| Reply::raw(200, "text/event-stream", stream.clone()))
        .start();
    let scratch = scratch("stream", &server);
    let record = scratch.run_example(FIXTURE, &["streaming", "--exact", "--nocapture"], &[]);
    assert_eq!(record.code(), Some(0), "{}", record.context());
    record.assert_stdout_has("streamed=One, two, three. [DONE] input_tokens=13");
    let recorded =
        std::fs::read_to_string(scratch.cassettes().join("streaming.cassette.json")).unwrap();
    let body: serde_json::Value = serde_json::from_str(&recorded).unwrap();
    let response = &body["entries"][0]["http_response"];
    assert_eq!(response["content_type"], "text/event-stream", "{recorded}");
    assert_eq!(
        response["body"]["events"].as_array().unwrap().len(),
        5,
        "{recorded}"
    );
    assert_eq!(
        response["body"]["events"][4]["data"], "[DONE]",
        "{recorded}"
    );
    drop(server);
    let replay = scratch.run_example(
        FIXTURE,
        &["streaming", "--exact", "--nocapture"],
        &[("CI", "true")],
    );
    assert_eq!(replay.code(), Some(0), "{}", replay.context());
    replay.assert_stdout_has("streamed=One, two, three. [DONE] input_tokens=13");
    replay.assert_stderr_has("13/3");
}

#[test]
fn a_run_fn_s_samples_run_the_configured_number_at_a_time_recording_and_replaying() {
    let server = fake("Plum");
    let scratch = Scratch::new("endpoint", "at-once");
    scratch.config(&format!(
        "concurrency = 3\n\n[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\n\
         api_key_env = \"FAKE_API_KEY\"\n",
        server.base_url(Wire::OpenAi)
    ));
    let peak = |run: &prompt_tester_testkit::child::Run| {
        run.stdout()
            .lines()
            .filter_map(|l| {
                l.strip_prefix("peak=")?
                    .split(' ')
                    .next()?
                    .parse::<u32>()
                    .ok()
            })
            .max()
    };
    let record = scratch.run_example(
        FIXTURE,
        &["at_once", "--exact", "--nocapture"],
        &[("FAKE_API_KEY", SECRET)],
    );
    assert_eq!(record.code(), Some(0), "{}", record.context());
    assert_eq!(peak(&record), Some(3), "{}", record.context());
    assert_eq!(server.request_count(), 9);
    // Replayed, the provider gone: a replay takes no slot of the provider's, yet the samples still
    // run three at a time (before, all nine started at once, each with a connection of its own).
    drop(server);
    let replay = scratch.run_example(
        FIXTURE,
        &["at_once", "--exact", "--nocapture"],
        &[("CI", "true")],
    );
    assert_eq!(replay.code(), Some(0), "{}", replay.context());
    replay.assert_stdout_has("replayed=true");
    assert_eq!(peak(&replay), Some(3), "{}", replay.context());
}

#[test]
fn a_changed_request_with_a_large_body_is_refused_within_seconds_under_ci() {
    let server = fake("Seen");
    let scratch = scratch("large-body", &server);
    let blob = |seed: &'static str| [("FIXTURE_BLOB_KIB", "1024"), ("FIXTURE_BLOB_SEED", seed)];
    let [kib, first] = blob("1");
    let record = scratch.run_example(
        FIXTURE,
        &["large_body", "--exact", "--nocapture"],
        &[kib, first, ("FAKE_API_KEY", SECRET)],
    );
    assert_eq!(record.code(), Some(0), "{}", record.context());
    drop(server);

    // The same MiB drawn from another seed, under CI: refused at once (a character diff of the two
    // bodies, as the stale message once ranked recordings, took hours in a debug build).
    let [kib, second] = blob("2");
    let mut child = scratch
        .command(
            FIXTURE,
            &["large_body", "--exact", "--nocapture"],
            &[kib, second, ("CI", "true")],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the fixture runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child
        .try_wait()
        .expect("the child can be waited on")
        .is_none()
    {
        if std::time::Instant::now() > deadline {
            child.kill().expect("the child can be killed");
            let out = child.wait_with_output().unwrap();
            panic!(
                "no answer within 60 s:\n{}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(101), "{stdout}");
    let after_ms: u64 = stdout
        .split("answered=400 after_ms=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("no refusal in:\n{stdout}"));
    assert!(after_ms < 10_000, "refused after {after_ms} ms:\n{stdout}");
    assert!(
        stdout.contains("Changed since it was recorded: messages[0].content: \""),
        "{stdout}"
    );
}

#[test]
fn a_request_the_client_timed_out_and_retried_records_a_cassette_that_replays() {
    let server = fake("Wren");
    // The first attempt is answered after the client's timeout (1 s): the client gives up and retries.
    server.push(
        Reply::text(Wire::OpenAi, "gpt-4o-mini", "Late", Usage::new(11, 7))
            .delayed(std::time::Duration::from_secs(4)),
    );
    let scratch = scratch("retried", &server);
    let record = scratch.run_example(
        FIXTURE,
        &["retried", "--exact", "--nocapture", "--budget", "1"],
        &[("FAKE_API_KEY", SECRET)],
    );
    assert_eq!(record.code(), Some(0), "{}", record.context());
    assert_eq!(server.request_count(), 2, "{}", record.context());
    record.assert_stdout_has("output=Wren replayed=false");
    // The attempt dropped after it was sent may be billed: charged at its worst case, an upper bound.
    record.assert_stderr_has("2 model calls (0 replayed from cassettes); total cost ≤$");
    let recorded =
        std::fs::read_to_string(scratch.cassettes().join("retried.cassette.json")).unwrap();
    let body: serde_json::Value = serde_json::from_str(&recorded).unwrap();
    assert_eq!(body["entries"].as_array().unwrap().len(), 1, "{recorded}");

    // Replayed under CI with the provider gone: nothing times out, and the first request asks for
    // the place the retry was recorded in.
    drop(server);
    let replay = scratch.run_example(
        FIXTURE,
        &["retried", "--exact", "--nocapture"],
        &[("CI", "true")],
    );
    assert_eq!(replay.code(), Some(0), "{}", replay.context());
    replay.assert_stdout_has("output=Wren replayed=true");
}

/// What is said of a client that goes around the endpoint.
const WENT_AROUND: &str = "test gone_around: its run_fn takes the sample (SampleContext) but the \
    recording endpoint received no request of it: its client may have gone around the endpoint";

#[test]
fn a_client_that_goes_around_the_endpoint_is_warned_of_once_and_named_when_it_fails() {
    let server = fake("Oak");
    let scratch = scratch("around", &server);
    let direct = server.base_url(Wire::OpenAi);
    let record = scratch.run_example(
        FIXTURE,
        &["gone_around", "--exact", "--nocapture"],
        &[("FAKE_API_KEY", SECRET), ("FIXTURE_DIRECT_URL", &direct)],
    );
    // The calls went to the provider directly: the run passes, and says so once for its two samples.
    assert_eq!(record.code(), Some(0), "{}", record.context());
    record.assert_stdout_has("output=Oak");
    assert_eq!(
        record.stderr().matches(WENT_AROUND).count(),
        1,
        "{}",
        record.context()
    );
    record.assert_stderr_has("`sample.base_url(\"fake\")`");
    assert!(
        !scratch
            .cassettes()
            .join("gone_around.cassette.json")
            .exists()
    );

    // Under CI the direct call fails (no server there): the failure says why it may have.
    let ci = scratch.run_example(
        FIXTURE,
        &["gone_around", "--exact"],
        &[
            ("CI", "true"),
            ("FIXTURE_DIRECT_URL", "http://127.0.0.1:9/v1"),
        ],
    );
    assert_eq!(ci.code(), Some(101), "{}", ci.context());
    ci.assert_stdout_has("run_fn failed: ");
    ci.assert_stdout_has(WENT_AROUND);
    // A replay run makes no call: no warning.
    assert!(!ci.stderr().contains(WENT_AROUND), "{}", ci.context());

    // A client that calls through the endpoint is not said to go around it, even when it fails.
    let refused = scratch.run_example(FIXTURE, &["without_key", "--exact"], &[("CI", "true")]);
    assert_eq!(refused.code(), Some(101), "{}", refused.context());
    assert!(
        !refused.stdout().contains("gone around") && !refused.stderr().contains("gone around"),
        "{}",
        refused.context()
    );
}

/// An OpenAI stream of "One, two, three." with its usage, as its wire sends it.
fn counting_stream() -> String {
    let chunk = |text: &str| {
        format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n")
    };
    format!(
        "{}{}{}data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":13,\"completion_tokens\":3}}}}\n\ndata: [DONE]\n\n",
        chunk("One, "),
        chunk("two, "),
        chunk("three.")
    )
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

#[test]
fn a_live_stream_reaches_the_client_as_it_comes_and_is_recorded_whole() {
    const PAUSE: std::time::Duration = std::time::Duration::from_secs(2);
    let asked = std::sync::Arc::new(std::sync::Mutex::new(None));
    let noted = asked.clone();
    let server = FakeProvider::builder()
        .respond_with(move |_| {
            noted.lock().unwrap().get_or_insert_with(now_ms);
            Reply::raw(200, "text/event-stream", counting_stream()).paused_after_first(PAUSE)
        })
        .start();
    let scratch = scratch("live", &server);
    let record = scratch.run_example(FIXTURE, &["live_stream", "--exact", "--nocapture"], &[]);
    assert_eq!(record.code(), Some(0), "{}", record.context());
    // The upstream sends its last events no sooner than PAUSE after it was asked: the first event
    // reached the client before them.
    let asked = asked.lock().unwrap().expect("the provider was asked");
    let first: u128 = record
        .stdout()
        .lines()
        .find_map(|l| l.strip_prefix("first_event_at=")?.parse().ok())
        .expect("the client saw an event");
    assert!(
        first < asked + PAUSE.as_millis(),
        "the first event came {} ms after the provider was asked, no sooner than its last\n{}",
        first.saturating_sub(asked),
        record.context()
    );
    record.assert_stderr_has("13/3");
    let recorded =
        std::fs::read_to_string(scratch.cassettes().join("live_stream.cassette.json")).unwrap();
    let body: serde_json::Value = serde_json::from_str(&recorded).unwrap();
    assert_eq!(
        body["entries"][0]["http_response"]["body"]["events"]
            .as_array()
            .map(Vec::len),
        Some(5),
        "{recorded}"
    );
    // Replayed whole, in order, with the provider gone.
    drop(server);
    let replay = scratch.run_example(
        FIXTURE,
        &["live_stream", "--exact", "--nocapture"],
        &[("CI", "true")],
    );
    assert_eq!(replay.code(), Some(0), "{}", replay.context());
    replay.assert_stdout_has("replayed=true");
    replay.assert_stdout_has("three.");
}

#[test]
fn a_stream_not_received_whole_is_not_recorded() {
    // The client goes away after the first event, while the provider still streams.
    let server = FakeProvider::builder()
        .respond_with(|_| {
            Reply::raw(200, "text/event-stream", counting_stream())
                .paused_after_first(std::time::Duration::from_secs(2))
        })
        .start();
    let gone_root = scratch("client-gone", &server);
    let gone = gone_root.run_example(
        FIXTURE,
        &["live_stream", "--exact", "--nocapture"],
        &[("FIXTURE_READ", "first")],
    );
    assert_eq!(gone.code(), Some(0), "{}", gone.context());
    gone.assert_stdout_has("streamed=\"stopped early\"");
    let file = gone_root.cassettes().join("live_stream.cassette.json");
    assert!(
        !file.exists(),
        "{}",
        std::fs::read_to_string(&file).unwrap_or_default()
    );

    // The provider's stream is cut mid-way: the client sees it cut, and nothing is recorded.
    let server = FakeProvider::builder()
        .respond_with(|_| {
            Reply::raw(200, "text/event-stream", counting_stream()).aborted_mid_body()
        })
        .start();
    let cut_root = scratch("cut", &server);
    let cut = cut_root.run_example(FIXTURE, &["live_stream", "--exact"], &[]);
    assert_eq!(cut.code(), Some(101), "{}", cut.context());
    cut.assert_stdout_has("run_fn failed");
    assert!(
        !cut_root
            .cassettes()
            .join("live_stream.cassette.json")
            .exists()
    );
}
