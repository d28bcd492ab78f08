//! End to end against a real model: starts llama-server with SmolLM2-135M (scripts/local-model.sh),
//! runs this crate's example prompt tests against it with cassettes off, and checks that the outcomes,
//! token counts and request metadata came from the server, not from the committed cassettes.
//!
//! Skipped (with a message) when the server is not installed; under CI (`CI=true`) that is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The newest `name-<hash>` executable in this test's own directory (`target/<profile>/deps`), where
/// cargo and nextest put every test binary of the package.
fn test_binary(name: &str) -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let prefix = format!("{name}-");
    std::fs::read_dir(&deps)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let file = p.file_name().unwrap().to_string_lossy().into_owned();
            file.strip_prefix(&prefix)
                .is_some_and(|hash| hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()))
        })
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .unwrap_or_else(|| {
            panic!(
                "no {name} test binary in {}: run `cargo test`",
                deps.display()
            )
        })
}

struct Server;

impl Server {
    fn start() -> Option<(Server, String)> {
        let script = root().join("scripts/local-model.sh");
        let installed = Command::new(&script)
            .arg("installed")
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            let message = "the local model is not installed: run scripts/local-model.sh install";
            assert!(
                std::env::var_os("CI").is_none(),
                "{message} (CI must run it)"
            );
            eprintln!("skipped: {message}");
            return None;
        }
        let out = Command::new(&script).arg("start").output().unwrap();
        assert!(
            out.status.success(),
            "start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
        Some((Server, url))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(root().join("scripts/local-model.sh"))
            .arg("stop")
            .status();
    }
}

fn cassette_entries(dir: &Path) -> Vec<Value> {
    let mut entries = Vec::new();
    for file in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        if file.path().to_string_lossy().ends_with(".cassette.json") {
            let body: Value =
                serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
            entries.extend(body["entries"].as_array().unwrap().iter().cloned());
        }
    }
    entries
}

#[test]
fn example_prompt_tests_pass_live_against_the_local_model() {
    let Some((_server, url)) = Server::start() else {
        return;
    };
    let scratch = std::env::temp_dir().join(format!("pt-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let report = scratch.join("report.json");
    let junit = scratch.join("junit.xml");
    let out = Command::new(test_binary("prompts"))
        // The hosted examples need Anthropic and Gemini keys; everything else targets the local model.
        .args(["--skip", "hosted::", "--no-cassette", "--report"])
        .arg(&report)
        .arg("--junit")
        .arg(&junit)
        .env("CARGO_MANIFEST_DIR", root())
        .env("PROMPT_TESTER_LOCAL_BASE_URL", &url)
        .env_remove("PROMPT_TESTER_CASSETTE")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "live run failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("test result: ok."), "{stdout}");
    // Nothing was replayed: every call reached the server.
    assert!(stderr.contains("(0 replayed from cassettes)"), "{stderr}");

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let text = report.to_string();
    assert!(
        text.contains("\"replayed\":0"),
        "report shows replayed calls: {text}"
    );

    // Temperature-0 calls are deterministic: the live token counts equal the recorded ones, which shows
    // the recordings came from this model and the live counts came from the server.
    let recorded = cassette_entries(&root().join("prompt-tests/cassettes"));
    assert!(!recorded.is_empty(), "no committed cassettes");
    let deterministic: Vec<&Value> = recorded
        .iter()
        .filter(|e| e["provider"] == "local" && e["request"]["temperature"].as_f64() == Some(0.0))
        .collect();
    assert!(!deterministic.is_empty());
    for entry in &deterministic {
        assert_eq!(
            entry["response"]["model_used"]
                .as_str()
                .map(|m| m.contains("SmolLM2")),
            Some(true),
            "{entry}"
        );
        let id = entry["response"]["request_id"].as_str().unwrap_or_default();
        assert!(
            id.starts_with("chatcmpl-"),
            "request id from llama-server: {entry}"
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
