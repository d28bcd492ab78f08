//! The endpoint scenario: the same calls made by the harness itself and by a `run_fn`'s own client
//! through the recording endpoint. (`endpoint_added_ms_per_call`, `endpoint_replay_calls_per_s`,
//! `endpoint_inflight_efficiency`)
//!
//! Two `#[prompt_test]`s of one prompt, each with 1,000 samples (200 in quick mode): `direct_*`, whose
//! calls the harness makes, and `endpoint_*`, whose `run_fn` posts the same request with its own
//! reqwest client to `sample.base_url(...)`. Same trial, same samples; only the path of the call
//! differs. Other scenarios skip these trials ([`TRIALS`]).

use std::sync::OnceLock;
use std::time::Duration;

use prompt_tester::prelude::*;
use prompt_tester_testkit::Wire;
use serde_json::{Value, json};

use crate::Bench;
use crate::common::{PROVIDER, Size, counting_server, expect_passed, expect_requests, ms};
use crate::results::{Figure, Report, Target};

/// What other scenarios skip: every trial of this module.
pub(crate) const TRIALS: &str = "app_calls::";

/// The application's client, shared by its calls as an application shares one.
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        // Its reqwest has no crypto provider of its own (the calls are plain HTTP on 127.0.0.1).
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::new()
    })
}

/// The `run_fn`: the request the harness would send, posted by the application's own client.
async fn through_endpoint(sample: SampleContext) -> anyhow::Result<CompletionResult> {
    let body = json!({
        "model": sample.model(),
        "max_tokens": sample.max_tokens(),
        "messages": [{"role": "user", "content": sample.prompt()}]
    });
    let url = format!("{}/chat/completions", sample.base_url(PROVIDER)?);
    let answer: Value = client()
        .post(url)
        .json(&body)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let text = answer["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_default();
    Ok(CompletionResult::new(text, 0, 0))
}

/// Every sample's answer is the echo of its prompt.
fn echoed(run: &PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(run.output.starts_with("echo: "), "{:?}", run.output);
    Ok(())
}

macro_rules! pair {
    ($direct:ident, $endpoint:ident, $runs:literal) => {
        #[prompt_test(
            target_prompt = "Repeat the customer's message: the parcel for case 17 has not arrived.",
            runs = $runs
        )]
        async fn $direct(run: PromptRun) -> anyhow::Result<()> {
            echoed(&run)
        }

        #[prompt_test(
            target_prompt = "Repeat the customer's message: the parcel for case 17 has not arrived.",
            runs = $runs,
            run_fn = through_endpoint
        )]
        async fn $endpoint(run: PromptRun) -> anyhow::Result<()> {
            echoed(&run)
        }
    };
}

pair!(direct_1000, endpoint_1000, 1000);
pair!(direct_200, endpoint_200, 200);

impl Bench {
    /// The same calls by the harness and through the endpoint at zero latency (the endpoint's cost per
    /// call), replayed through the endpoint with the server stopped, and through the endpoint at the
    /// in-flight scenario's latency.
    pub(crate) fn app_calls(&self) -> Result<Report, String> {
        let o = &self.options;
        let calls = if o.quick { 200 } else { 1000 };
        let direct = format!("{TRIALS}direct_{calls}");
        let endpoint = format!("{TRIALS}endpoint_{calls}");
        eprintln!("[app_calls] {calls} calls by the harness, then through the endpoint");

        let server = counting_server(Duration::ZERO);
        let root = self.root_without_suite("app_calls", &server.base_url(Wire::OpenAi))?;
        let live = |trial: &str| {
            let run = self.run_child(
                "app_calls",
                &root,
                &[],
                &["--no-cassette", "--exact", trial],
            )?;
            expect_passed("app_calls", &run, 1)?;
            run.measured["harness_wall_ms"]
                .as_f64()
                .ok_or_else(|| "app_calls: no harness_wall_ms".to_string())
        };
        let direct_ms = live(&direct)?;
        let endpoint_ms = live(&endpoint)?;
        expect_requests("app_calls", &server, 2 * calls)?;
        let added = (endpoint_ms - direct_ms) / calls as f64;

        // Recorded once, then replayed through the endpoint with the server stopped.
        let recorded = self.run_child(
            "app_calls",
            &root,
            &[("PROMPT_TESTER_CASSETTE", "record")],
            &["--exact", &endpoint],
        )?;
        expect_passed("app_calls", &recorded, 1)?;
        server.shutdown();
        let replay = self.run_child(
            "app_calls",
            &root,
            &[("PROMPT_TESTER_CASSETTE", "replay")],
            &["--exact", &endpoint],
        )?;
        expect_passed("app_calls", &replay, 1)?;
        let per_s = calls as f64 / replay.wall.as_secs_f64();

        // At the in-flight scenario's latency: does the endpoint keep C calls in flight?
        let slow = counting_server(o.latency);
        let slow_root = self.root_without_suite("app_calls_slow", &slow.base_url(Wire::OpenAi))?;
        let run = self.run_child(
            "app_calls",
            &slow_root,
            &[],
            &["--no-cassette", "--exact", &endpoint],
        )?;
        expect_passed("app_calls", &run, 1)?;
        expect_requests("app_calls", &slow, calls)?;
        let concurrency = o.concurrency();
        let ideal = o.latency.mul_f64(calls as f64 / concurrency as f64);
        let efficiency = ideal.as_secs_f64() / run.wall.as_secs_f64();

        let figures = vec![
            Figure::new("endpoint_added_ms_per_call", added, 3)
                .target(Target::Below(1.0))
                .json(3),
            Figure::new("endpoint_replay_calls_per_s", per_s, 0)
                .target(Target::AtLeast(5000.0))
                .json(0),
            Figure::new("endpoint_inflight_efficiency", efficiency, 3)
                .target(Target::AtLeast(0.9))
                .json(3),
        ];
        Ok(Report::new("app_calls", figures).line(format!(
            "app_calls: {calls} calls at zero latency in {direct_ms:.0} ms by the harness, {endpoint_ms:.0} ms \
             through the endpoint (inside the harness); {calls} replayed through it in {:.2} s (process \
             included); at {:.0} ms, C = {concurrency}: ideal {:.2} s, measured {:.2} s, most calls in flight \
             at the server: {}",
            replay.wall.as_secs_f64(),
            ms(o.latency),
            ideal.as_secs_f64(),
            run.wall.as_secs_f64(),
            slow.max_concurrent()
        )))
    }

    /// A scenario's crate root with its configuration and no suite: only the Rust trials run.
    fn root_without_suite(&self, name: &str, url: &str) -> Result<std::path::PathBuf, String> {
        let root = self.crate_root(name, url, Size::new(1, 1))?;
        let suite = root
            .join("prompt-tests")
            .join(format!("{}.evals.toml", crate::common::SUITE));
        std::fs::remove_file(&suite).map_err(|e| format!("{}: {e}", suite.display()))?;
        Ok(root)
    }
}
