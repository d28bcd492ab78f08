//! The rate-limit scenario: a provider that answers 429 beyond 4 calls in flight; the run must slow
//! down to what it allows, not fail. (`ratelimit_slowdown`)

use std::time::Duration;

use prompt_tester_testkit::{FakeProvider, Wire};

use crate::Bench;
use crate::common::expect_requests;

/// The provider's concurrency limit in the rate-limit scenario, its latency and its `retry-after`.
pub(crate) const RATELIMIT_ALLOWED: usize = 4;
pub(crate) const RATELIMIT_LATENCY: Duration = Duration::from_millis(100);
pub(crate) const RATELIMIT_RETRY_AFTER: Duration = Duration::from_millis(500);
pub(crate) const RATELIMIT_CASES: usize = 20;
pub(crate) const RATELIMIT_RUNS: u32 = 5;

pub(crate) struct RateLimit {
    pub(crate) calls: usize,
    pub(crate) wall: Duration,
    pub(crate) rejected: usize,
    /// The summary's `rate limits: ...` line.
    pub(crate) summary: String,
}

impl RateLimit {
    pub(crate) fn ideal(&self) -> Duration {
        RATELIMIT_LATENCY.mul_f64(self.calls as f64 / RATELIMIT_ALLOWED as f64)
    }

    pub(crate) fn slowdown(&self) -> f64 {
        self.wall.as_secs_f64() / self.ideal().as_secs_f64()
    }
}

impl Bench {
    /// A provider that limits concurrency: the run must slow down to what it allows, not fail.
    pub(crate) fn ratelimit(&self) -> Result<RateLimit, String> {
        let calls = RATELIMIT_CASES * RATELIMIT_RUNS as usize;
        eprintln!(
            "[ratelimit] {calls} calls ({RATELIMIT_CASES} cases x {RATELIMIT_RUNS} runs) at {RATELIMIT_LATENCY:?}; \
             429 (retry-after {RATELIMIT_RETRY_AFTER:?}) beyond {RATELIMIT_ALLOWED} in flight"
        );
        let server = FakeProvider::builder()
            .latency(RATELIMIT_LATENCY)
            .reject_beyond(RATELIMIT_ALLOWED, RATELIMIT_RETRY_AFTER)
            .capture(false)
            .start();
        let root = self.crate_root(
            "ratelimit",
            &server.base_url(Wire::OpenAi),
            RATELIMIT_CASES,
            RATELIMIT_RUNS,
        )?;
        let run = self.run_live("ratelimit", &root, RATELIMIT_CASES)?;
        expect_requests("ratelimit", &server, calls + server.rejected())?;
        let stderr = std::fs::read_to_string(root.join("stderr.txt")).unwrap_or_default();
        let summary = stderr
            .lines()
            .find(|l| l.starts_with("rate limits: "))
            .unwrap_or("(no rate-limit line in the summary)")
            .to_string();
        Ok(RateLimit {
            calls,
            wall: run.wall,
            rejected: server.rejected(),
            summary,
        })
    }
}
