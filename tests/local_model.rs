//! End to end against a real model: starts llama-server with SmolLM2-135M (scripts/local-model.sh),
//! runs this crate's example prompt tests against it with cassettes off, and checks that the outcomes,
//! token counts and request metadata came from the server, not from the committed cassettes.
//!
//! Skipped (with a message) when the server is not installed; under CI (`CI=true`) that is a failure.
//! `PROMPT_TESTER_LOCAL_BASE_URL`, when set, names the server to use (`.ci/run` starts one), and
//! `PROMPT_TESTER_LOCAL_EMBEDDINGS_URL` the second server, on the same weights, that serves embeddings.

use std::path::{Path, PathBuf};
use std::process::Command;

use prompt_tester_testkit::child::{self, Child, Scratch};
use serde_json::Value;

fn root() -> PathBuf {
    child::repo_root()
}

fn script() -> Command {
    Command::new(root().join("scripts/local-model.sh"))
}

/// A missing prerequisite: a failure under CI (which installs everything), a visible skip elsewhere.
fn missing(message: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{message} (CI must provide it)"
    );
    eprintln!("skipped: {message}");
}

/// A server this test talks to: the chat server or the embeddings server. One owner starts and stops
/// each: a server named by its variable (`.ci/run` starts both) or already running is used and left
/// alone; only a server this test started itself is stopped when it ends.
struct Server {
    /// The script's command that stops it, when this test started it.
    stop: Option<&'static str>,
}

impl Server {
    /// The chat server.
    fn start() -> Option<(Server, String)> {
        Self::start_one("PROMPT_TESTER_LOCAL_BASE_URL", "url", "start", "stop")
    }

    /// The embeddings server.
    fn start_embeddings() -> Option<(Server, String)> {
        Self::start_one(
            "PROMPT_TESTER_LOCAL_EMBEDDINGS_URL",
            "embeddings-url",
            "start-embeddings",
            "stop-embeddings",
        )
    }

    fn start_one(
        var: &str,
        url: &str,
        start: &str,
        stop: &'static str,
    ) -> Option<(Server, String)> {
        if let Ok(url) = std::env::var(var) {
            return Some((Server { stop: None }, url));
        }
        let installed = script()
            .arg("installed")
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            missing("the local model is not installed: run scripts/local-model.sh install");
            return None;
        }
        if let Ok(out) = script().arg(url).output()
            && out.status.success()
        {
            let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
            return Some((Server { stop: None }, url));
        }
        let out = script().arg(start).output().unwrap();
        assert!(
            out.status.success(),
            "{start} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
        Some((Server { stop: Some(stop) }, url))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop {
            let _ = script().arg(stop).status();
        }
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

/// Runs the `prompts` binary with `args` and a JSON report, calling the chat and embeddings servers at
/// `urls` (closed ports when `None`); returns the report and the output.
fn run_prompts(
    args: &[&str],
    urls: Option<(&str, &str)>,
    report: &Path,
) -> (Value, String, String) {
    let (url, embeddings_url) = urls.unwrap_or(("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"));
    // The hosted examples need Anthropic and Gemini keys; everything else targets the local model.
    // The 200-row golden dataset replays in `cargo test --test prompts`; live it would be 200 calls.
    // The calibration set is 42 judge calls (minutes live on two cores); its replay is checked in
    // tests/suites/calibration.rs. The support agent's tool loop was recorded from a scripted
    // stand-in, not this model (it calls no tools), and the receipt's image input from a loopback
    // stand-in (this model reads no images): their replays run in `cargo test --test prompts`.
    let run = Child::new(child::test_binary("prompts"))
        .root(&child::examples_root())
        .args(child::skipping(&[
            "hosted::",
            "golden::",
            "calibration::",
            "support_agent::",
            "receipt::",
        ]))
        .args(args)
        .args([Path::new("--report"), report])
        .env("PROMPT_TESTER_LOCAL_BASE_URL", url)
        .env("PROMPT_TESTER_LOCAL_EMBEDDINGS_URL", embeddings_url)
        .run();
    let (stdout, stderr) = (run.stdout(), run.stderr());
    assert!(run.success(), "run {args:?} failed:\n{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    (report, stdout, stderr)
}

/// `name -> usage` for every trial of a report (Rust tests and suites alike).
fn usages(report: &Value) -> std::collections::BTreeMap<String, Value> {
    let mut out = std::collections::BTreeMap::new();
    for test in report["tests"].as_array().unwrap() {
        out.insert(
            test["name"].as_str().unwrap().to_string(),
            test["usage"].clone(),
        );
    }
    for suite in report["suites"].as_array().unwrap() {
        out.insert(
            format!("suite {}", suite["suite"].as_str().unwrap()),
            suite["usage"].clone(),
        );
    }
    out
}

#[test]
fn example_prompt_tests_pass_live_against_the_local_model() {
    let Some((_server, url)) = Server::start() else {
        return;
    };
    let Some((_embeddings, embeddings_url)) = Server::start_embeddings() else {
        return;
    };
    let scratch = Scratch::new("local-model", "e2e");

    // Offline from the committed cassettes (the server address given is closed: nothing is called).
    let (replayed, _, replay_err) = run_prompts(&[], None, &scratch.path().join("replay.json"));
    assert!(!replay_err.contains("(0 replayed"), "{replay_err}");
    // Live, cassettes off: every call reaches the server.
    let (live, stdout, stderr) = run_prompts(
        &["--no-cassette"],
        Some((&url, &embeddings_url)),
        &scratch.path().join("live.json"),
    );
    assert!(stdout.contains("test result: ok."), "{stdout}");
    assert!(stderr.contains("(0 replayed from cassettes"), "{stderr}");

    let (replayed, live) = (usages(&replayed), usages(&live));
    assert_eq!(
        replayed.keys().collect::<Vec<_>>(),
        live.keys().collect::<Vec<_>>()
    );
    let mut compared = 0;
    for (name, live_usage) in &live {
        let recorded = &replayed[name];
        let subject = &live_usage["subject"];
        if subject["calls"].as_u64() == Some(0) {
            continue; // a skipped case
        }
        assert_eq!(subject["replayed"], 0, "{name}: a live call was replayed");
        assert_eq!(
            recorded["subject"]["replayed"], recorded["subject"]["calls"],
            "{name}: not replayed offline"
        );
        // The seeded examples (`quick_start::summary_mentions_alice`, `sampling::*`) sample at temperature
        // 0.5 with a seed per run: llama-server reproduces a seeded sample (four identical seeded
        // requests sent at once gave the same text), so their counts are compared like the others, and
        // an adaptive test takes the same number of samples live as recorded.
        // Temperature 0 is deterministic: the server's token counts equal the recorded ones, which
        // shows both the recordings and the live counts came from this model on this server. That
        // holds across machines only because the portable build computes the same kernels everywhere
        // and the server decodes one request at a time with no prompt cache (scripts/local-model.sh).
        // With four slots, five identical judge requests sent at once gave 47/43/43/47/47 output
        // tokens on one AMD machine, and the judge-heavy examples differed from an Intel run; the
        // single-call examples (e.g. `local::french_greeting`, 37/38) matched the Intel figures.
        for field in ["calls", "input_tokens", "output_tokens"] {
            assert_eq!(
                subject[field], recorded["subject"][field],
                "{name}: live vs recorded {field}"
            );
        }
        assert!(
            subject["input_tokens"].as_u64().unwrap() > 0,
            "{name}: no tokens"
        );
        // Embeddings (`similar`, run.similarity) too: the server counted the recorded tokens.
        let embedding = &live_usage["embedding"];
        for field in ["calls", "input_tokens"] {
            assert_eq!(
                embedding[field], recorded["embedding"][field],
                "{name}: live vs recorded embedding {field}"
            );
        }
        compared += 1;
    }
    assert!(compared >= 6, "only {compared} trials compared");

    // Request metadata in the recordings came from llama-server.
    let recorded = cassette_entries(&child::examples_root().join("cassettes"));
    let local = |e: &&Value| e["provider"] == "local";
    for entry in recorded
        .iter()
        .filter(local)
        .filter(|e| e["role"] != "embedding")
    {
        // A call the application made through the recording endpoint keeps the server's own answer.
        let (model, id) = match entry.get("http_response") {
            Some(raw) => (&raw["body"]["json"]["model"], &raw["body"]["json"]["id"]),
            None => (
                &entry["response"]["model_used"],
                &entry["response"]["request_id"],
            ),
        };
        assert_eq!(model, "SmolLM2-135M-Instruct", "{entry}");
        let id = id.as_str().unwrap_or_default();
        assert!(
            id.starts_with("chatcmpl-"),
            "request id from llama-server: {entry}"
        );
    }
}

/// The recorded local-model embeddings are what the embeddings server computes: every text embedded
/// in the committed cassettes is embedded again, live, and the vectors agree (cosine 1 within float
/// rounding), with the same token count and model. So `similar` scores replayed offline are the
/// server's.
#[test]
fn the_recorded_embeddings_are_the_embeddings_servers() {
    let Some((_server, url)) = Server::start_embeddings() else {
        return;
    };
    let recorded = cassette_entries(&child::examples_root().join("cassettes"));
    let embeddings: Vec<&Value> = recorded
        .iter()
        .filter(|e| e["provider"] == "local" && e["role"] == "embedding")
        .collect();
    assert!(
        embeddings.len() >= 5,
        "too few recorded embeddings: {}",
        embeddings.len()
    );
    let endpoint = prompt_tester::config::EndpointConfig {
        name: "local".into(),
        wire: prompt_tester::config::WireFormat::OpenAi,
        base_url: url,
        api_key_env: Vec::new(),
        max_in_flight: 1,
    };
    let client = prompt_tester::provider::ProviderClient::with_api_key(
        &endpoint,
        &prompt_tester::config::RetryConfig::default(),
        None,
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for entry in embeddings {
        let request: prompt_tester::embedding::EmbeddingRequest =
            serde_json::from_value(entry["embedding_request"].clone()).unwrap();
        let recorded: prompt_tester::embedding::Embedding =
            serde_json::from_value(entry["embedding"].clone()).unwrap();
        let live = runtime.block_on(client.embed(&request)).unwrap();
        assert_eq!(live.vector.len(), 576, "SmolLM2-135M's width");
        let agreement = prompt_tester::embedding::cosine(&live.vector, &recorded.vector).unwrap();
        assert!(
            agreement > 0.9999,
            "{:?}: live vs recorded cosine {agreement}",
            request.input
        );
        assert_eq!(
            live.input_tokens, recorded.input_tokens,
            "{:?}",
            request.input
        );
        assert_eq!(live.model_used.as_deref(), Some("SmolLM2-135M-Instruct"));
        assert_eq!(
            recorded.model_used.as_deref(),
            Some("SmolLM2-135M-Instruct")
        );
    }
}

/// The installed llama-server is the portable build: configured with `GGML_NATIVE=OFF` and no
/// AVX-512/AMX options, and its machine code touches no AVX-512 (`zmm`) or AMX (`tmm`) register, so it
/// runs on every x86-64 machine with AVX2 (AMD EPYC and Intel Xeon VMs alike).
#[test]
fn the_installed_server_is_the_portable_build() {
    if !script()
        .arg("installed")
        .status()
        .is_ok_and(|s| s.success())
    {
        missing("the local model is not installed: run scripts/local-model.sh install");
        return;
    }
    let out = script().arg("server-dir").output().unwrap();
    let dir = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let cache = std::fs::read_to_string(dir.join("CMakeCache.txt")).unwrap();
    let option = |name: &str| {
        cache
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:BOOL=")))
            .unwrap_or_else(|| panic!("{name} is not in the CMake cache"))
            .to_string()
    };
    assert_eq!(option("GGML_NATIVE"), "OFF");
    for on in [
        "GGML_AVX",
        "GGML_AVX2",
        "GGML_FMA",
        "GGML_F16C",
        "GGML_BMI2",
    ] {
        assert_eq!(option(on), "ON", "{on}");
    }
    for off in [
        "GGML_AVX512",
        "GGML_AVX512_VNNI",
        "GGML_AMX_TILE",
        "GGML_AMX_INT8",
    ] {
        assert_eq!(option(off), "OFF", "{off}");
    }
    let disassembly = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(dir.join("bin/llama-server"))
        .output()
        .expect("objdump (binutils) runs");
    assert!(disassembly.status.success());
    let text = String::from_utf8_lossy(&disassembly.stdout);
    let wide = text
        .lines()
        .filter(|l| l.contains("%zmm") || l.contains("%tmm"))
        .take(3)
        .collect::<Vec<_>>();
    assert!(wide.is_empty(), "AVX-512/AMX instructions: {wide:?}");
    assert!(
        text.contains("%ymm"),
        "no AVX2 instruction at all: not the build expected"
    );
}

/// A CPU without AVX2 gets a plain message, not a crash.
#[test]
fn a_cpu_without_avx2_is_told_so() {
    let dir = Scratch::new("local-model", "cpuinfo");
    let cpuinfo = dir.path().join("cpuinfo");
    dir.file(
        "cpuinfo",
        "processor\t: 0\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx\n",
    );
    let out = script()
        .arg("check-cpu")
        .env("PROMPT_TESTER_CPUINFO", &cpuinfo)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("lacks avx2 fma f16c bmi2"), "{stderr}");
    dir.file("cpuinfo", "flags\t\t: fpu avx avx2 fma f16c bmi1 bmi2\n");
    let ok = script()
        .arg("check-cpu")
        .env("PROMPT_TESTER_CPUINFO", &cpuinfo)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

/// The build flavour is part of the cache key: a cache holding an older native build (the layout
/// before the portable build) does not count as installed, so `install` rebuilds.
#[test]
fn an_old_native_build_in_the_cache_is_not_used() {
    let cache = Scratch::new("local-model", "cache");
    cache.file("llama-server-11434.0.0/bin/llama-server", "#!/bin/sh\n");
    cache.file("SmolLM2-135M-Instruct.Q4_1.gguf", "weights");
    let status = |cmd: &str| {
        script()
            .arg(cmd)
            .env("PROMPT_TESTER_CACHE", cache.path())
            .output()
            .unwrap()
    };
    assert!(!status("installed").status.success());
    let dir = String::from_utf8(status("server-dir").stdout).unwrap();
    assert!(
        dir.trim()
            .ends_with("llama-server-11434.0.0-x86-64-avx2-portable"),
        "{dir}"
    );
}
