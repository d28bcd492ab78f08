//! The rate-limit scenario: a provider that answers 429 beyond 4 calls in flight; the run must slow
//! down to what it allows, not fail. (`ratelimit_slowdown`)

use std::time::Duration;

use prompt_tester_testkit::{FakeProvider, Wire};

use crate::Bench;
use crate::common::{Size, expect_requests, ms};
use crate::results::{Figure, Report, Target};

/// The provider's concurrency limit in the rate-limit scenario, its latency and its `retry-after`.
const RATELIMIT_ALLOWED: usize = 4;
const RATELIMIT_LATENCY: Duration = Duration::from_millis(100);
const RATELIMIT_RETRY_AFTER: Duration = Duration::from_millis(500);
const RATELIMIT_SIZE: Size = Size::new(20, 5);

impl Bench {
    /// A provider that limits concurrency: the run must slow down to what it allows, not fail.
    pub(crate) fn ratelimit(&self) -> Result<Report, String> {
        let calls = RATELIMIT_SIZE.calls();
        eprintln!(
            "[ratelimit] {calls} calls ({RATELIMIT_SIZE}) at {RATELIMIT_LATENCY:?}; \
             429 (retry-after {RATELIMIT_RETRY_AFTER:?}) beyond {RATELIMIT_ALLOWED} in flight"
        );
        let server = FakeProvider::builder()
            .latency(RATELIMIT_LATENCY)
            .reject_beyond(RATELIMIT_ALLOWED, RATELIMIT_RETRY_AFTER)
            .capture(false)
            .start();
        let root = self.crate_root("ratelimit", &server.base_url(Wire::OpenAi), RATELIMIT_SIZE)?;
        let run = self.run_live("ratelimit", &root, RATELIMIT_SIZE.cases)?;
        expect_requests("ratelimit", &server, calls + server.rejected())?;
        let stderr = std::fs::read_to_string(root.join("stderr.txt")).unwrap_or_default();
        // The summary's `rate limits: ...` line.
        let summary = stderr
            .lines()
            .find(|l| l.starts_with("rate limits: "))
            .unwrap_or("(no rate-limit line in the summary)");
        let ideal = RATELIMIT_LATENCY.mul_f64(calls as f64 / RATELIMIT_ALLOWED as f64);
        let slowdown = run.wall.as_secs_f64() / ideal.as_secs_f64();
        let figure = Figure::new("ratelimit_slowdown", slowdown, 2)
            .target(Target::AtMost(1.5))
            .json(3);
        Ok(Report::new("ratelimit", vec![figure]).line(format!(
            "ratelimit: {calls} calls at {:.0} ms, {RATELIMIT_ALLOWED} allowed in flight: ideal {:.2} s, \
             measured {:.2} s ({slowdown:.2}x), 0 failed; the provider answered {} requests 429; {summary}",
            ms(RATELIMIT_LATENCY),
            ideal.as_secs_f64(),
            run.wall.as_secs_f64(),
            server.rejected(),
        )))
    }
}
