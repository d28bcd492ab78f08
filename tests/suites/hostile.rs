//! A hostile provider through the real harness: one suite whose every case meets another fault (a
//! redirect carrying the key, a body past the size cap, a body that never ends, bytes that are not
//! UTF-8, counts at `u64::MAX`, a `retry-after` of a year, HTML, a reset connection, an error that
//! echoes the key). The run ends within its timeouts, every trial leaves a record in every report,
//! each errored trial says what happened, and no secret of the run's environment (the key, the base
//! URL's userinfo, `*_KEY` / `*_TOKEN` / `*_SECRET` variables: the guide's redaction rule (Cassettes)) reaches
//! a file the run wrote or its output, though the server sends every one of them back.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use prompt_tester_testkit::{FakeProvider, Reply, Usage, Wire};

use super::*;

/// The endpoint's key (`api_key_env`).
const KEY: &str = "sk-PT-HOSTILE-KEY-7f3a9c41";
/// Another provider's key, set and unused.
const OTHER_KEY: &str = "sk-PT-OPENAI-KEY-4b2d81e0";
/// A `*_TOKEN` and a `*_SECRET` variable of the environment.
const TOKEN: &str = "PT-SESSION-TOKEN-93ac1e57";
const CLIENT_SECRET: &str = "PT-CLIENT-SECRET-c0ffee99";
/// The base URL's userinfo: `pt-user:<password>@`.
const USER: &str = "pt-hostile-user";
const PASSWORD: &str = "PT-USERINFO-PW-5e6f7a8b";

const SECRETS: [&str; 6] = [KEY, OTHER_KEY, TOKEN, CLIENT_SECRET, USER, PASSWORD];

/// The longest the whole run may take: its timeouts add up to a few seconds.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Each case's prompt is its name; the server answers it with its fault.
const CASES: [&str; 9] = [
    "redirect",
    "huge",
    "endless",
    "not_utf8",
    "counts",
    "a_year",
    "html",
    "reset",
    "unauthorized",
];

/// Everything the server can send back: what it was sent (the key headers) and every secret.
fn echo(request: &prompt_tester_testkit::CapturedRequest) -> String {
    let sent: Vec<&str> = ["authorization", "x-api-key", "x-goog-api-key"]
        .iter()
        .filter_map(|h| request.header(h))
        .collect();
    format!("you sent {sent:?}; I know {SECRETS:?}")
}

fn hostile(request: &prompt_tester_testkit::CapturedRequest, other: &str) -> Reply {
    let echo = echo(request);
    let wire = Wire::OpenAi;
    match request.last_user_text().unwrap_or_default().as_str() {
        "redirect" => Reply::raw(307, "text/plain", echo.clone()).with_header(
            "location",
            &format!("http://{USER}:{PASSWORD}@{other}/v1?key={KEY}"),
        ),
        "huge" => Reply::endless(
            200,
            "application/json",
            vec![b' '; 16 * 1024],
            Duration::from_millis(1),
        ),
        "endless" => Reply::endless(200, "application/json", *b"  ", Duration::from_millis(50)),
        "not_utf8" => {
            let mut body = b"{\"text\": \"\xff\xfe ".to_vec();
            body.extend(echo.as_bytes());
            Reply::raw(200, "application/json", body)
        }
        "counts" => Reply::text(wire, "fake-model", &echo, Usage::new(u64::MAX, u64::MAX)),
        "a_year" => Reply::rate_limited(wire, Duration::from_secs(365 * 24 * 3600)),
        "html" => Reply::raw(
            200,
            "text/html",
            format!("<html><body>{echo}</body></html>"),
        ),
        "reset" => Reply::drop_connection(),
        _ => Reply::error(wire, 401, "invalid_api_key", &echo),
    }
}

/// What the hostile run left: its output and reports, how long it took, and every file under its root
/// (read before the fixture is removed), by path relative to the root.
struct Hostile {
    out: Outcome,
    took: Duration,
    files: Vec<(String, Vec<u8>)>,
}

/// The hostile run, once for the tests of this module.
fn hostile_run() -> &'static Hostile {
    static RUN: OnceLock<Hostile> = OnceLock::new();
    RUN.get_or_init(|| {
        let other = FakeProvider::start();
        let other_host = other.url().trim_start_matches("http://").to_string();
        let fake = FakeProvider::start();
        fake.respond_with(move |r| hostile(r, &other_host));
        let mut f = Fixture::calling("hostile", &fake, "record");
        let base = fake.base_url(Wire::OpenAi).replace("http://", &format!("http://{USER}:{PASSWORD}@"));
        f.file(
            "prompt-tester.toml",
            &format!(
                r#"
[retry]
max_attempts = 2
initial_backoff_ms = 5
max_backoff_ms = 200
timeout_secs = 0.5
rate_limit_budget_secs = 1.0
max_response_bytes = 65536

[defaults]
provider = "{PROVIDER}"
model = "{MODEL}"
max_tokens = {MAX_TOKENS}

[providers.{PROVIDER}]
base_url_env = "PT_HOSTILE_BASE_URL"
api_key_env = "PT_HOSTILE_API_KEY"
"#
            ),
        );
        let mut suite = "prompt = \"{scenario}\"\nassert = [{ not_contains = \"never said\" }]\n".to_string();
        for case in CASES {
            // Twice the counts at u64::MAX: the run's sums saturate.
            let runs = if case == "counts" { 2 } else { 1 };
            suite.push_str(&format!(
                "\n[[cases]]\nname = \"{case}\"\nruns = {runs}\ninputs = {{ scenario = \"{case}\" }}\n"
            ));
        }
        f.file("prompt-tests/hostile.evals.toml", &suite);
        let base: &'static str = Box::leak(base.into_boxed_str());
        f.env.extend([
            ("PT_HOSTILE_BASE_URL", base),
            ("PT_HOSTILE_API_KEY", KEY),
            ("OPENAI_API_KEY", OTHER_KEY),
            ("PT_SESSION_TOKEN", TOKEN),
            ("PT_CLIENT_SECRET", CLIENT_SECRET),
            ("NO_COLOR", "1"),
        ]);
        // Recorded once, then again: what the second run records replaces the first's, so it goes
        // pending (a file the scan reads too).
        f.run(&[]);
        let started = Instant::now();
        let out = f.run(&["--html", "out/report.html"]);
        let took = started.elapsed();
        let mut paths = Vec::new();
        every_file(&f.root, &mut paths);
        let files = paths
            .iter()
            .map(|p| {
                let relative = p.strip_prefix(&f.root).unwrap().display().to_string();
                (relative, std::fs::read(p).unwrap())
            })
            .collect();
        Hostile { out, took, files }
    })
}

#[test]
fn a_hostile_provider_errors_each_trial_clearly_and_the_run_ends_within_its_timeouts() {
    let Hostile { out, took, .. } = hostile_run();
    assert!(
        *took < RUN_LIMIT,
        "the run took {took:?}\n{}",
        out.context()
    );
    out.assert_code(101);
    out.assert_statuses(&[("hostile::counts", "ok")]);
    let errored = |case: &str| format!("hostile::{case}");
    for case in CASES.iter().filter(|c| **c != "counts") {
        assert_eq!(
            out.outcome(&errored(case)),
            "FAILED",
            "{case}\n{}",
            out.context()
        );
    }
    // (case, what its failure says)
    for (case, says) in [
        ("redirect", &["307", "no redirect", "[REDACTED]@"][..]),
        ("huge", &["longer than 65536 bytes", "max_response_bytes"]),
        (
            "endless",
            &["no complete answer", "within 500ms", "[2 attempts]"],
        ),
        ("not_utf8", &["is not JSON", "\u{fffd}"]),
        (
            "a_year",
            &["HTTP 429", "still rate limited", "rate_limit_budget_secs"],
        ),
        ("html", &["is not JSON", "<html><body>"]),
        (
            "reset",
            &[
                "the connection to http://[REDACTED]@127.0.0.1:",
                "[2 attempts]",
            ],
        ),
        ("unauthorized", &["HTTP 401 invalid_api_key", "[REDACTED"]),
    ] {
        out.assert_failure_has("hostile", case, says);
    }
    // Every trial is in every report, the two samples at u64::MAX included.
    let report = out.report.as_ref().expect("a JSON report");
    let suite = child::entry(&report["suites"], "suite", "hostile");
    let cases = suite["cases"].as_array().unwrap();
    assert_eq!(cases.len(), CASES.len(), "{suite}");
    let counts = child::entry(&suite["cases"], "case_id", "counts");
    assert_eq!(counts["runs_total"], 2, "{counts}");
    let junit = out.junit.as_deref().expect("a JUnit report");
    for case in CASES {
        assert!(
            junit.contains(&format!("name=\"hostile::{case}\"")),
            "{case}: {junit}"
        );
    }
}

#[test]
fn no_secret_reaches_a_file_the_run_wrote_or_its_output() {
    let Hostile { out, files, .. } = hostile_run();
    let file = |name: &str| {
        let found = files.iter().find(|(path, _)| path == name);
        String::from_utf8_lossy(&found.unwrap_or_else(|| panic!("{name} was not written")).1)
            .into_owned()
    };
    // The run wrote these (the scan below reads every file under the root, these included).
    let recorded = file("prompt-tests/cassettes/hostile.cassette.json");
    assert!(recorded.contains("[REDACTED"), "{recorded}");
    let pending = file("prompt-tests/cassettes/hostile.pending.json");
    assert!(pending.contains("[REDACTED"), "{pending}");
    for report in ["out/report.json", "out/junit.xml", "out/report.html"] {
        assert!(file(report).contains("redirect"), "{report}");
    }
    let output = [out.stdout(), out.stderr()];
    for secret in SECRETS {
        for (path, bytes) in files {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} is in {path}:\n{}",
                String::from_utf8_lossy(bytes)
            );
        }
        for text in &output {
            assert!(!text.contains(secret), "{secret} is in the output:\n{text}");
        }
    }
}

fn every_file(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            every_file(&path, found);
        } else {
            found.push(path);
        }
    }
}
